#!/usr/bin/env bash
# Prepare everything the tests and developers need, from a fresh clone, offline
# from Galaxy. Idempotent: every step checks a stamp and is skipped when its
# inputs did not change, so re-running costs a few seconds.
#
#   1. $GPUFLEET_CACHE/venv-core2.21  Python 3.13 (or 3.12+), exactly tests/locks/core2.21.txt
#      $GPUFLEET_CACHE/venv-core2.19  Python 3.11,           exactly tests/locks/core2.19.txt
#      installed from the locks with their hashes (`make lock` updates them: docs/testing.md); rebuilt when a lock
#      changes or what a venv holds differs from its lock (scripts/venv_matches_lock.py).
#   2. kubernetes.core, extracted from the `ansible` bundle wheel on PyPI into
#      $GPUFLEET_CACHE/collections/ansible_collections/kubernetes/core
#   3. a Galaxy-installable $GPUFLEET_CACHE/dist/kubernetes-core-<ver>.tar.gz
#   4. the per-checkout collections tree $GPUFLEET_COLLECTIONS_ROOT:
#        ansible_collections/gpufleet/burnin -> this checkout (symlink)
#        ansible_collections/kubernetes/core    (copy of 2.)
#      and beside it ansible-test/ansible_collections/{gpufleet/burnin (empty
#      mount point), kubernetes/core} for scripts/ansible-test.sh
#   5. ansible-test's get-pip stand-ins in ~/.ansible/test/cache
#
# Environment: GPUFLEET_CACHE (default ~/.cache/gpufleet-burnin),
# GPUFLEET_PYTHON_221 / GPUFLEET_PYTHON_219 to force interpreters,
# GPUFLEET_FORCE_REBUILD=1 to rebuild the venvs.
set -euo pipefail

GPUFLEET_ENV_QUIET=1
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
unset GPUFLEET_ENV_QUIET


log() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

mkdir -p "$GPUFLEET_CACHE"/{downloads,collections,dist,trees}

# Two checkouts (or a developer and CI) may run setup at the same time: they
# share the venvs and caches, so serialise the whole script.
exec 9>"$GPUFLEET_CACHE/.setup.lock"
if ! flock -n 9; then
    log "waiting for another setup.sh holding $GPUFLEET_CACHE/.setup.lock"
    flock 9
fi

PYENV_ROOT_DIR="$( (command -v pyenv >/dev/null && pyenv root) 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")"

# py_ok PYTHON MIN_MINOR MAX_MINOR: true when PYTHON runs and is 3.MIN..3.MAX.
py_ok() {
    [ -n "$1" ] && [ -x "$1" ] || return 1
    "$1" -c "import sys; sys.exit(not ((3, $2) <= sys.version_info[:2] <= (3, $3)))" >/dev/null 2>&1
}

# find_python MIN MAX CANDIDATES...: first runnable candidate within 3.MIN..3.MAX.
# Only real interpreters: pyenv shims of a non-selected version exit non-zero.
find_python() {
    local min="$1" max="$2" cand
    shift 2
    for cand in "$@"; do
        case "$cand" in
            /*) ;;
            *) cand="$(command -v "$cand" 2>/dev/null || true)" ;;
        esac
        if py_ok "$cand" "$min" "$max"; then
            # Resolve shims/symlinks to the real binary so venvs do not depend on pyenv state.
            "$cand" -c 'import os, sys; print(os.path.realpath(sys.executable))'
            return 0
        fi
    done
    return 1
}

PY221="${GPUFLEET_PYTHON_221:-}"
if [ -z "$PY221" ]; then
    # shellcheck disable=SC2046
    PY221="$(find_python 12 99 \
        "$PYENV_ROOT_DIR/versions/3.13.0/bin/python3.13" \
        $(printf '%s\n' "$PYENV_ROOT_DIR"/versions/3.1[2-9]*/bin/python3 | sort -rV) \
        python3.14 python3.13 python3.12 python3)" \
        || die "no Python >= 3.12 found (wanted $PYENV_ROOT_DIR/versions/3.13.0/bin/python3.13); ansible-core 2.21 needs it"
fi
PY219="${GPUFLEET_PYTHON_219:-}"
if [ -z "$PY219" ]; then
    # shellcheck disable=SC2046
    PY219="$(find_python 11 11 \
        $(printf '%s\n' "$PYENV_ROOT_DIR"/versions/3.11*/bin/python3.11 | sort -rV) \
        python3.11 python3)" \
        || die "no Python 3.11 found; the ansible-core 2.19 venv needs it"
fi

# build_venv DIR PYTHON LOCK: (re)create DIR with exactly LOCK unless it already holds LOCK with that PYTHON.
build_venv() {
    local dir="$1" py="$2" lock="$GPUFLEET_REPO/$3" pyver
    pyver="$("$py" -c 'import sys; print(sys.version.split()[0])')"
    # Up to date: the same interpreter, holding what the lock pins (checked package by package, so that a venv built
    # by another checkout's setup with the same versions is kept, not rebuilt back and forth).
    if [ -z "${GPUFLEET_FORCE_REBUILD:-}" ] \
        && [ "$("$dir/bin/python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || true)" = "$pyver" ] \
        && "$dir/bin/python" "$GPUFLEET_REPO/scripts/venv_matches_lock.py" "$lock" >/dev/null 2>&1; then
        log "$(basename "$dir"): up to date with $3 (python $pyver, ansible-core $("$dir/bin/python" -c 'import ansible.release as r; print(r.__version__)'))"
        return 0
    fi
    log "$(basename "$dir"): building with $py ($pyver) from $3 ..."
    local t0=$SECONDS
    rm -rf "$dir"
    local plog
    plog="$GPUFLEET_CACHE/logs/pip-$(basename "$dir").log"
    mkdir -p "$GPUFLEET_CACHE/logs"
    "$py" -m venv "$dir"
    # --require-hashes and --no-deps: nothing that the lock does not name, and nothing but the files it hashed.
    if ! "$dir/bin/python" -m pip install --disable-pip-version-check --no-input --require-hashes --no-deps \
        -r "$lock" >"$plog" 2>&1; then
        grep -v "^WARNING: Location 'file://" "$plog" | tail -n 40 >&2
        die "pip install -r $3 into $dir failed; full log: $plog"
    fi
    "$dir/bin/python" "$GPUFLEET_REPO/scripts/venv_matches_lock.py" "$lock" >&2 \
        || die "$dir does not hold what $3 pins (above)"
    log "$(basename "$dir"): built in $((SECONDS - t0)) s, ansible-core $("$dir/bin/python" -c 'import ansible.release as r; print(r.__version__)')"
}

# The two venvs are independent: build them side by side (pip is mostly
# waiting on the network and unpacking; this roughly halves a cold setup).
build_venv "$GPUFLEET_VENV" "$PY221" tests/locks/core2.21.txt &
pid221=$!
build_venv "$GPUFLEET_VENV_219" "$PY219" tests/locks/core2.19.txt &
pid219=$!
venv_rc=0
wait "$pid221" || venv_rc=1
wait "$pid219" || venv_rc=1
[ "$venv_rc" = 0 ] || die "building the venvs failed (see the messages above)"

# --- kubernetes.core from the `ansible` bundle wheel (no Galaxy: the wheel ships it)
KCORE_SHARED_ROOT="$GPUFLEET_CACHE/collections"
KCORE_SHARED="$KCORE_SHARED_ROOT/ansible_collections/kubernetes/core"

# manifest_version DIR: version in DIR/MANIFEST.json, or nothing.
manifest_version() {
    "$GPUFLEET_VENV/bin/python" -c '
import json, sys
try:
    print(json.load(open(sys.argv[1] + "/MANIFEST.json"))["collection_info"]["version"])
except Exception:
    pass' "$1"
}

# extract_kcore BUNDLE KCORE DEST: kubernetes.core KCORE, taken out of the `ansible` BUNDLE wheel, at DEST (kept when
# DEST already holds that version).
extract_kcore() {
    local bundle="$1" kcore="$2" dest="$3" wheel tmp got
    [ "$(manifest_version "$dest")" = "$kcore" ] && return 0
    wheel="$GPUFLEET_CACHE/downloads/ansible-$bundle-py3-none-any.whl"
    if [ ! -s "$wheel" ]; then
        log "downloading ansible==$bundle wheel (no deps) for kubernetes.core"
        "$GPUFLEET_VENV/bin/python" -m pip download -q --disable-pip-version-check --no-input --no-deps \
            --only-binary :all: -d "$GPUFLEET_CACHE/downloads" "ansible==$bundle"
        [ -s "$wheel" ] || die "pip download did not produce $wheel"
    fi
    log "extracting ansible_collections/kubernetes/core/ from $(basename "$wheel")"
    mkdir -p "$(dirname "$dest")"
    tmp="$(mktemp -d "$(dirname "$dest")/.extract.XXXXXX")"
    "$GPUFLEET_VENV/bin/python" - "$wheel" "$tmp" <<'EOF2'
import sys, zipfile
wheel, dest = sys.argv[1:]
prefix = "ansible_collections/kubernetes/core/"
with zipfile.ZipFile(wheel) as zf:
    members = [m for m in zf.namelist() if m.startswith(prefix)]
    if not members:
        sys.exit(f"{wheel} has no {prefix}")
    zf.extractall(dest, members)
print(f"{len(members)} files", file=sys.stderr)
EOF2
    got="$(manifest_version "$tmp/ansible_collections/kubernetes/core")"
    [ "$got" = "$kcore" ] || { rm -rf "$tmp"; die "ansible $bundle carries kubernetes.core '$got', expected $kcore"; }
    rm -rf "$dest"
    mv "$tmp/ansible_collections/kubernetes/core" "$dest"
    rm -rf "$tmp"
}

if [ "$(manifest_version "$KCORE_SHARED")" != "$GPUFLEET_KCORE_VERSION" ]; then
    extract_kcore "$GPUFLEET_ANSIBLE_BUNDLE_VERSION" "$GPUFLEET_KCORE_VERSION" "$KCORE_SHARED"
    rm -f "$GPUFLEET_KCORE_TARBALL"
fi
# The oldest supported kubernetes.core, the one of the ansible 12 bundle (with ansible-core 2.19): e2e-2.19 runs
# the in-process plugins on it (docs/kubernetes-core.md).
extract_kcore "$GPUFLEET_ANSIBLE_BUNDLE_VERSION_219" "$GPUFLEET_KCORE_VERSION_219" \
    "$GPUFLEET_CACHE/collections-$GPUFLEET_KCORE_VERSION_219/ansible_collections/kubernetes/core"
log "kubernetes.core $GPUFLEET_KCORE_VERSION: $KCORE_SHARED"

# --- Galaxy-installable tarball ---------------------------
if [ ! -s "$GPUFLEET_KCORE_TARBALL" ]; then
    log "rebuilding $(basename "$GPUFLEET_KCORE_TARBALL")"
    tmp="$(mktemp -d "$GPUFLEET_CACHE/dist/.build.XXXXXX")"
    cp -a "$KCORE_SHARED" "$tmp/core"
    "$GPUFLEET_VENV/bin/python" - "$tmp/core" <<'EOF'
import json, os, sys, yaml
root = sys.argv[1]
info = json.load(open(os.path.join(root, "MANIFEST.json")))["collection_info"]
keys = ("namespace", "name", "version", "readme", "authors", "description", "license", "license_file",
        "tags", "dependencies", "repository", "documentation", "homepage", "issues")
galaxy = {k: info[k] for k in keys if info.get(k) not in (None, "", [], {})}
if galaxy.get("license"):
    galaxy.pop("license_file", None)
with open(os.path.join(root, "galaxy.yml"), "w") as fh:
    yaml.safe_dump(galaxy, fh, sort_keys=False)
for name in ("MANIFEST.json", "FILES.json"):
    os.remove(os.path.join(root, name))
EOF
    (cd "$tmp/core" && "$GPUFLEET_VENV/bin/ansible-galaxy" collection build --force --output-path "$tmp" >/dev/null)
    mv "$tmp/$(basename "$GPUFLEET_KCORE_TARBALL")" "$GPUFLEET_KCORE_TARBALL"
    rm -rf "$tmp"
fi
log "kubernetes.core tarball: $GPUFLEET_KCORE_TARBALL"

# --- per-checkout ansible-test tree ------------------------
mkdir -p "$GPUFLEET_COLLECTIONS_ROOT/ansible_collections/gpufleet" "$GPUFLEET_COLLECTIONS_ROOT/ansible_collections/kubernetes"
link="$GPUFLEET_COLLECTION_DIR"
if [ -e "$link" ] && [ ! -L "$link" ]; then
    die "$link exists and is not a symlink; remove it"
fi
if [ "$(readlink "$link" 2>/dev/null || true)" != "$GPUFLEET_REPO" ]; then
    ln -sfn "$GPUFLEET_REPO" "$link"
fi
tree_kcore="$GPUFLEET_COLLECTIONS_ROOT/ansible_collections/kubernetes/core"
if ! cmp -s "$KCORE_SHARED/MANIFEST.json" "$tree_kcore/MANIFEST.json" 2>/dev/null; then
    rm -rf "$tree_kcore"
    cp -a "$KCORE_SHARED" "$tree_kcore"
fi
# The same with the ansible 12 bundle's kubernetes.core, for e2e-2.19.
mkdir -p "$GPUFLEET_COLLECTIONS_ROOT_219/ansible_collections/gpufleet" "$GPUFLEET_COLLECTIONS_ROOT_219/ansible_collections/kubernetes"
ln -sfn "$GPUFLEET_REPO" "$GPUFLEET_COLLECTIONS_ROOT_219/ansible_collections/gpufleet/burnin"
ln -sfn "$GPUFLEET_CACHE/collections-$GPUFLEET_KCORE_VERSION_219/ansible_collections/kubernetes/core" \
    "$GPUFLEET_COLLECTIONS_ROOT_219/ansible_collections/kubernetes/core"
printf '%s\n' "$GPUFLEET_REPO" >"$GPUFLEET_COLLECTIONS_ROOT/.checkout"
# Trees of checkouts that no longer exist (old CI clones) are dead weight.
for tree in "$GPUFLEET_CACHE"/trees/*/; do
    owner="$(cat "$tree/.checkout" 2>/dev/null || true)"
    if [ -n "$owner" ] && [ ! -d "$owner" ]; then
        rm -rf "$tree"
    fi
done
log "collections tree: $GPUFLEET_COLLECTION_DIR -> $GPUFLEET_REPO"

# ansible-test itself needs the collection as a real directory (a symlink is
# resolved by the kernel and ansible-test's child processes then see the path
# outside ansible_collections/). scripts/ansible-test.sh bind-mounts (or copies)
# the checkout onto this empty directory for the duration of one run.
at_coll="$GPUFLEET_ANSIBLE_TEST_ROOT/ansible_collections"
mkdir -p "$at_coll/gpufleet/burnin" "$at_coll/kubernetes"
if ! cmp -s "$KCORE_SHARED/MANIFEST.json" "$at_coll/kubernetes/core/MANIFEST.json" 2>/dev/null; then
    rm -rf "$at_coll/kubernetes/core"
    cp -a "$KCORE_SHARED" "$at_coll/kubernetes/core"
fi
# The CRD-schema unit test reads the test bed's upstream manifests (tests/fleet/build.sh copies them out of the Go
# module cache) at <collection>/../testbed-manifests in the ansible-test tree, where the cache is out of reach.
[ "$(readlink "$at_coll/gpufleet/testbed-manifests" 2>/dev/null || true)" = "$GPUFLEET_CACHE/components/manifests" ] \
    || ln -sfn "$GPUFLEET_CACHE/components/manifests" "$at_coll/gpufleet/testbed-manifests"
rm -f "$at_coll/gpufleet/shared"
log "ansible-test tree: $at_coll/gpufleet/burnin (checkout mounted there by scripts/ansible-test.sh)"

# --- shellcheck for ansible-test's shellcheck sanity test -----------------
# Without it that test is skipped with only a warning. Debian packages it.
apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}
if ! command -v shellcheck >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing Debian's shellcheck (for the shellcheck sanity test)"
        apt_install shellcheck || { apt-get update -qq >/dev/null 2>&1 && apt_install shellcheck; } ||
            log "WARNING: could not install shellcheck; the shellcheck sanity test will be skipped"
    else
        log "WARNING: shellcheck not installed (apt-get install shellcheck); the shellcheck sanity test will be skipped"
    fi
fi

# --- Open MPI and OpenSSH server for the MPI launch test ------------------------
# tests/e2e/test_mpi_launch.py runs the rendered mpirun line over real sshd workers (Debian's openmpi-bin,
# openssh-server); apt-get update first, since a fresh container's package lists are empty.
if [ ! -x /usr/bin/mpirun ] || [ ! -x /usr/sbin/sshd ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing Debian's openmpi-bin and openssh-server (for the MPI launch test)"
        { apt-get update -qq >/dev/null 2>&1 && apt_install openmpi-bin openssh-server; } ||
            log "WARNING: could not install openmpi-bin/openssh-server; the MPI launch test fails under CI=true"
    else
        log "WARNING: openmpi-bin/openssh-server not installed (apt-get install openmpi-bin openssh-server); the MPI launch test needs them"
    fi
fi

# --- chromium for the HTML report test ------------------------------------------
# tests/e2e/test_report_html.py opens the burn-in report in headless Chromium (Debian package chromium).
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing Debian's chromium (headless, for the HTML report test)"
        apt_install chromium || { apt-get update -qq >/dev/null 2>&1 && apt_install chromium; } ||
            log "WARNING: could not install chromium; the HTML report test will try again or be skipped"
    else
        log "WARNING: chromium not installed (apt-get install chromium); the HTML report test needs it"
    fi
fi

# --- get-pip stand-ins for ansible-test --venv ------------
# The file name carries the pip version that the installed ansible-test wants;
# read it from each core so a core update cannot silently bring the download back.
ATC="$HOME/.ansible/test/cache"
mkdir -p "$ATC"
want_names=(get_pip_25_2.py get_pip_24_2.py)
for venv in "$GPUFLEET_VENV" "$GPUFLEET_VENV_219"; do
    v="$("$venv/bin/python" - <<'EOF' || true
import re, pathlib, ansible_test
src = pathlib.Path(ansible_test.__file__).parent / "_internal" / "python_requirements.py"
m = re.search(r"""pip=['"]([0-9.]+)['"]""", src.read_text())
print(m.group(1).replace(".", "_") if m else "")
EOF
)"
    if [ -n "$v" ]; then want_names+=("get_pip_$v.py"); fi
done
for name in $(printf '%s\n' "${want_names[@]}" | sort -u); do
    if ! cmp -s "$GPUFLEET_REPO/scripts/get_pip_standin.py" "$ATC/$name"; then
        cp "$GPUFLEET_REPO/scripts/get_pip_standin.py" "$ATC/$name"
    fi
done
log "get-pip stand-ins in $ATC: $(printf '%s\n' "${want_names[@]}" | sort -u | tr '\n' ' ')"
log "done; use: source scripts/env.sh"
