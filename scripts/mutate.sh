#!/usr/bin/env bash
# Mutation testing of the pure core with cosmic-ray (`make mutate`; docs/mutation.md). Not part of `make test`:
# every mutant is one run of its module's unit tests, so a folder takes tens of minutes on 2 cores.
#
#   scripts/mutate.sh                                   # the whole core: judging/ validation/ rendering/ cluster/ burnin/ validate.py
#   MUTATE_FILES="judging/thresholds.py validation" scripts/mutate.sh
#   CHANGED=1 scripts/mutate.sh                         # only the functions a change touched (make mutate CHANGED=1)
#
# CHANGED=1      mutate only the modules of MUTATE_FILES (default: the whole core) that changed since the merge base
#                of HEAD and MUTATE_BASE (default origin/main, else main), committed, uncommitted or untracked, and
#                in them only the mutants inside a function holding a changed line (and changed lines outside any
#                function); its sessions are kept apart from the full run's (<module>__changed)
# MUTATE_FILES   files or folders under plugins/module_utils/ (a plugins/module_utils/ prefix is accepted)
# MUTATE_FRESH=1 forget earlier results: by default a module whose source, test files and test command did not
#                change keeps its session, and an interrupted run resumes where it stopped
# MUTATE_RECHECK=1 after adding tests: a module whose source did not change keeps its killed mutants and runs only
#                the survivors again (a full run is the default whenever its test files or command changed)
# MUTATE_BUDGET=600 stop a module after that many seconds (its kill rate is then that of the random sample that
#                ran, with its 95 % interval; the next call goes on where it stopped); 0: start no new mutant
# MUTATE_FAIL_UNDER=90  exit 1 when a folder's (or the total) kill rate is below that percentage
# MUTATE_OUT     where sessions, configs and the report go (default $GPUFLEET_CACHE/mutation/<checkout key>)
#
# What it does:
#   1. scripts/setup.sh (the unit-test venv), then cosmic-ray (tests/locks/mutation.txt, with hashes) in a venv of its
#      own, $GPUFLEET_CACHE/venv-mutation;
#   2. copies the checkout (tracked and untracked, not ignored, files) to $MUTATE_OUT/tree/ansible_collections/
#      gpufleet/burnin, a real directory: cosmic-ray writes each mutant into the file in place, so the checkout is
#      never touched, and the copy is imported as ansible_collections.gpufleet.burnin without the symlink of the
#      per-checkout tree (checked before the first mutant);
#   3. per module: the unit test files of tests/mutation/targets.txt, run once unmutated (must pass; the timeout of a
#      mutant is ten times that run, at least 60 s), a cosmic-ray config and session, `cosmic-ray exec`;
#   4. $MUTATE_OUT/report.txt: every surviving mutant with its diff; the kill rate per file, per folder, in total.
set -euo pipefail

GPUFLEET_ENV_QUIET=1
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
unset GPUFLEET_ENV_QUIET

log() { printf '[mutate] %s\n' "$*" >&2; }
die() { printf '[mutate] ERROR: %s\n' "$*" >&2; exit 1; }

REPO="$GPUFLEET_REPO"
REQS="$REPO/tests/locks/mutation.txt"
MU="plugins/module_utils"
DEFAULT_FILES="judging validation rendering cluster burnin validate.py"
key="$(printf '%s' "$REPO" | sha256sum | cut -c1-12)"
OUT="${MUTATE_OUT:-$GPUFLEET_CACHE/mutation/$key}"
MVENV="$GPUFLEET_CACHE/venv-mutation"

command -v git >/dev/null || die "git is needed (the checkout's files are listed with git ls-files)"
git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1 || die "$REPO is not a git checkout"

# --- 1. venvs ---------------------------------------------------------------------------------------------------
if [ -z "${MUTATE_SKIP_SETUP:-}" ]; then
    bash "$REPO/scripts/setup.sh"
fi
PY="$GPUFLEET_VENV/bin/python"
"$PY" -c 'import pytest' 2>/dev/null || die "$GPUFLEET_VENV has no pytest; run scripts/setup.sh"

mkdir -p "$GPUFLEET_CACHE" "$OUT"
exec 9>"$GPUFLEET_CACHE/.mutation-venv.lock"
flock 9
want="$(sha256sum <"$REQS" | cut -c1-16)"
if [ "$(cat "$MVENV/.gpufleet-stamp" 2>/dev/null || true)" != "$want" ] || ! "$MVENV/bin/python" -c 'import cosmic_ray' 2>/dev/null; then
    log "building $MVENV from tests/locks/mutation.txt"
    rm -rf "$MVENV"
    "$PY" -m venv "$MVENV"
    plog="$GPUFLEET_CACHE/logs/pip-venv-mutation.log"
    mkdir -p "$GPUFLEET_CACHE/logs"
    "$MVENV/bin/python" -m pip install --disable-pip-version-check --no-input --require-hashes --no-deps -r "$REQS" >"$plog" 2>&1 \
        || { tail -n 20 "$plog" >&2; die "pip install -r $REQS failed; full log: $plog"; }
    echo "$want" >"$MVENV/.gpufleet-stamp"
fi
exec 9>&-
CR="$MVENV/bin/cosmic-ray"
HELPER=("$MVENV/bin/python" "$REPO/scripts/mutation_report.py")
log "cosmic-ray $("$MVENV/bin/python" -c 'from importlib.metadata import version; print(version("cosmic-ray"))') in $MVENV"

# One run per checkout at a time: they share the copy.
exec 8>"$OUT/.lock"
flock -n 8 || die "another scripts/mutate.sh is running on $OUT"

# --- 2. the copy ------------------------------------------------------------------------------------------------
TREE="$OUT/tree"
COPY="$TREE/ansible_collections/gpufleet/burnin"
# read from the copy, so that the targets and the test files are of the same moment
TARGETS="$COPY/tests/mutation/targets.txt"
rm -rf "$TREE"
mkdir -p "$COPY" "$TREE/ansible_collections/kubernetes"
(
    cd "$REPO"
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
        # a tracked file deleted in the work tree is not copied
        if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
    done | tar --null -T - -cf -
) | tar -C "$COPY" -xf -
ln -s "$GPUFLEET_CACHE/collections/ansible_collections/kubernetes/core" "$TREE/ansible_collections/kubernetes/core"
export PYTHONPATH="$TREE"
export ANSIBLE_COLLECTIONS_PATH="$TREE"
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"

# --- 3. the modules ---------------------------------------------------------------------------------------------
# tests_for MODULE: its test files from targets.txt, else test_<name>.py
tests_for() {
    local mod="$1" line
    line="$(awk -v m="$mod" '$1 == m { $1 = ""; print; exit }' "$TARGETS")"
    if [ -n "$line" ]; then
        echo "$line"
    elif [ -f "$REPO/tests/unit/$MU/test_$(basename "$mod")" ]; then
        echo "$MU/test_$(basename "$mod")"
    fi
}

files=()
for sel in ${MUTATE_FILES:-$DEFAULT_FILES}; do
    sel="${sel#"$MU"/}"
    sel="${sel%/}"
    if [ -d "$REPO/$MU/$sel" ]; then
        while IFS= read -r f; do
            files+=("${f#"$REPO/$MU/"}")
        done < <(find "$REPO/$MU/$sel" -name '*.py' ! -name '__init__.py' -size +0 | sort)
    elif [ -f "$REPO/$MU/$sel" ]; then
        files+=("$sel")
    else
        die "MUTATE_FILES: '$sel' is neither a file nor a folder under $MU/ (e.g. judging, judging/thresholds.py)"
    fi
done
[ "${#files[@]}" -gt 0 ] || die "MUTATE_FILES selects no module"

# CHANGED=1: the modules a change touched since the merge base, and the line ranges of their touched functions
declare -A spans_of=()
changed_mode=""
if [ -n "${CHANGED:-}" ] && [ "${CHANGED}" != 0 ]; then
    changed_mode=1
    base_ref="${MUTATE_BASE:-}"
    if [ -z "$base_ref" ]; then
        for ref in origin/main main; do
            if git -C "$REPO" rev-parse --verify -q "$ref^{commit}" >/dev/null; then
                base_ref="$ref"
                break
            fi
        done
    fi
    [ -n "$base_ref" ] || die "CHANGED=1: no origin/main or main to compare with; set MUTATE_BASE (a commit, branch or tag)"
    base="$(git -C "$REPO" merge-base HEAD "$base_ref")" \
        || die "CHANGED=1: no merge base of HEAD and $base_ref (a shallow clone? git fetch --unshallow, or set MUTATE_BASE)"
    while read -r mod spans; do
        [ -n "$mod" ] && spans_of["$mod"]="$spans"
    done < <("${HELPER[@]}" changed "$REPO" "$base" "${files[@]}")
    log "CHANGED=1: ${#spans_of[@]} module(s) changed since $base_ref ($(git -C "$REPO" rev-parse --short "$base")): ${!spans_of[*]}"
    kept=()
    for mod in "${files[@]}"; do
        if [ -n "${spans_of[$mod]:-}" ]; then kept+=("$mod"); fi
    done
    if [ "${#kept[@]}" = 0 ]; then
        log "CHANGED=1: no module of MUTATE_FILES changed since $base_ref: nothing to mutate"
        exit 0
    fi
    files=("${kept[@]}")
fi

entries=()
t_all=$SECONDS
pid=""
# cosmic-ray runs in the background (for the progress lines): do not leave it running when this script is stopped
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi' EXIT
for mod in "${files[@]}"; do
    slug="${mod//\//__}"
    slug="${slug%.py}"
    if [ -n "$changed_mode" ]; then slug="${slug}__changed"; fi
    read -r -a tests <<<"$(tests_for "$mod")"
    [ "${#tests[@]}" -gt 0 ] || die "$mod: no line in tests/mutation/targets.txt and no tests/unit/$MU/test_$(basename "$mod"); add one"
    for t in "${tests[@]}"; do
        [ -f "$COPY/tests/unit/$t" ] || die "$mod: tests/unit/$t (tests/mutation/targets.txt) does not exist"
    done
    cmd=("$PY" -m pytest -q -x -p no:cacheprovider "${tests[@]/#/tests/unit/}")

    # The module must be imported from the copy, not from the checkout (PYTHONPATH and .pth files could differ).
    dotted="ansible_collections.gpufleet.burnin.${MU//\//.}.${mod//\//.}"
    dotted="${dotted%.py}"
    got="$(cd "$COPY" && "$PY" -c "import os, sys, importlib; print(os.path.realpath(importlib.import_module(sys.argv[1]).__file__))" "$dotted")" \
        || die "$mod: cannot import $dotted from the copy $TREE"
    [ "$got" = "$(realpath "$COPY/$MU/$mod")" ] || die "$mod: $dotted is imported from $got, not from the copy $COPY/$MU/$mod"

    # A session is kept while the module and cosmic-ray (mstamp) and its test command and files (tstamp) are
    # unchanged; MUTATE_RECHECK=1 keeps it when only the tests changed and runs the mutants that survived again.
    mstamp="$(
        {
            grep -v "^#" "$REQS"
            cat "$COPY/$MU/$mod"
            if [ -n "$changed_mode" ]; then echo "spans=${spans_of[$mod]}"; fi
        } | sha256sum | cut -c1-16
    )"
    tstamp="$(
        {
            echo "cmd=${cmd[*]}"
            for t in "${tests[@]}"; do cat "$COPY/tests/unit/$t"; done
        } | sha256sum | cut -c1-16
    )"
    session="$OUT/$slug.sqlite"
    config="$OUT/$slug.toml"
    recheck=""
    old="$(cat "$OUT/$slug.stamp" 2>/dev/null || true)"
    if [ -z "${MUTATE_FRESH:-}" ] && [ -s "$session" ] && [ "$old" = "$mstamp $tstamp" ]; then
        log "$mod: unchanged since the last run, its session is kept (MUTATE_FRESH=1 to run it again)"
    elif [ -z "${MUTATE_FRESH:-}" ] && [ -s "$session" ] && [ "${old% *}" = "$mstamp" ] && [ -n "${MUTATE_RECHECK:-}" ]; then
        log "$mod: test files changed, MUTATE_RECHECK=1: the surviving mutants run again, the killed ones stay killed"
        recheck=1
    else
        rm -f "$session" "$OUT/$slug.stamp" "$OUT/$slug.seconds"
    fi

    t0=$SECONDS
    if (cd "$COPY" && PYTHONDONTWRITEBYTECODE=1 "${cmd[@]}" >"$OUT/$slug.baseline.log" 2>&1); then :; else
        tail -n 30 "$OUT/$slug.baseline.log" >&2
        die "$mod: its unit tests fail without any mutant (${cmd[*]}); log: $OUT/$slug.baseline.log"
    fi
    base=$((SECONDS - t0))
    timeout=$((base * 10 > 60 ? base * 10 : 60))
    "${HELPER[@]}" config "$config" "$COPY/$MU/$mod" "$timeout" "$COPY" -- "${cmd[@]}"

    if [ ! -s "$session" ]; then
        "$CR" init "$config" "$session" --force >"$OUT/$slug.init.log" 2>&1 || { cat "$OUT/$slug.init.log" >&2; die "$mod: cosmic-ray init failed"; }
        echo "$mstamp $tstamp" >"$OUT/$slug.stamp"
        log "$mod: $("${HELPER[@]}" skip-format "$session" "$COPY/$MU/$mod")"
        if [ -n "$changed_mode" ]; then
            log "$mod: lines ${spans_of[$mod]}: $("${HELPER[@]}" skip-outside "$session" "${spans_of[$mod]}")"
        fi
    fi
    log "$mod: $("${HELPER[@]}" progress "$session") so far; tests: ${tests[*]} (unmutated ${base} s, timeout ${timeout} s)"

    cp "$COPY/$MU/$mod" "$OUT/$slug.orig.py"
    t0=$SECONDS
    if [ -n "$recheck" ]; then
        log "$mod: $("${HELPER[@]}" recheck "$session" "$config")"
        cp "$OUT/$slug.orig.py" "$COPY/$MU/$mod"
        echo "$mstamp $tstamp" >"$OUT/$slug.stamp"
    fi
    stopped=""
    if [ "${MUTATE_BUDGET:-}" = 0 ]; then
        # MUTATE_BUDGET=0: no mutant not run yet is started (with MUTATE_RECHECK=1: the survivors only)
        sleep 0 &
    else
        "$CR" exec "$config" "$session" >"$OUT/$slug.exec.log" 2>&1 &
    fi
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        for _ in $(seq 60); do
            kill -0 "$pid" 2>/dev/null || break
            if [ -n "${MUTATE_BUDGET:-}" ] && [ $((SECONDS - t0)) -ge "$MUTATE_BUDGET" ]; then
                # SIGINT: cosmic-ray's KeyboardInterrupt puts the unmutated file back (restored again below)
                kill -INT "$pid" 2>/dev/null || true
                stopped=1
                break 2
            fi
            sleep 1
        done
        kill -0 "$pid" 2>/dev/null && log "$mod: $("${HELPER[@]}" progress "$session")"
    done
    rc=0
    wait "$pid" || rc=$?
    pid=""
    # whatever happened to cosmic-ray, the next module's tests must see this one unmutated
    cp "$OUT/$slug.orig.py" "$COPY/$MU/$mod"
    if [ -n "$stopped" ]; then
        rc=0
        if [ "$("${HELPER[@]}" pending "$session")" != 0 ]; then
            log "$mod: MUTATE_BUDGET=$MUTATE_BUDGET s spent, stopped; the rest runs on the next call (the rate below is that of a random sample)"
        fi
    fi
    [ "$rc" = 0 ] || { tail -n 30 "$OUT/$slug.exec.log" >&2; die "$mod: cosmic-ray exec failed; log: $OUT/$slug.exec.log"; }
    spent=$(($(cat "$OUT/$slug.seconds" 2>/dev/null || echo 0) + SECONDS - t0))
    echo "$spent" >"$OUT/$slug.seconds"
    log "$mod: $("${HELPER[@]}" progress "$session") in ${spent} s"
    entries+=("$mod=$session=$spent")
done

# --- 4. the report ----------------------------------------------------------------------------------------------
report_file="$OUT/report${changed_mode:+-changed}.txt"
report=("${HELPER[@]}" report "$report_file")
if [ -n "${MUTATE_FAIL_UNDER:-}" ]; then report+=(--fail-under "$MUTATE_FAIL_UNDER"); fi
rc=0
"${report[@]}" "${entries[@]}" || rc=$?
log "surviving mutants with their diffs: $report_file ($((SECONDS - t_all)) s this run)"
exit "$rc"
