#!/usr/bin/env bash
# The whole test suite of gpufleet.burnin (`make test` runs this).
#
#   scripts/test.sh                          # everything
#   TEST_ONLY=sanity,units scripts/test.sh   # a subset
#   KEEP_GOING=1 scripts/test.sh             # run every step, report all failures at the end
#
# Steps (always in this order; setup always runs, it is cheap when warm):
#   setup        scripts/setup.sh (venvs, kubernetes.core, ansible-test tree, get-pip stand-ins)
#   fleet        tests/fleet/build.sh, if it exists (the test fleet's components from their Go modules, once per
#                machine, into the cache);
#                selected by default and whenever e2e is selected
#   sanity-2.21  ansible-test sanity --venv --python 3.13 (ansible-core 2.21)
#   sanity-2.19  ansible-test sanity --venv --python 3.11 (ansible-core 2.19)
#   units-2.21   ansible-test units --venv --python 3.13 (first tests/fleet/build.sh --manifests-only: the CRDs of
#                the CRD-schema tests, also without the fleet step)
#   units-2.19   ansible-test units --venv --python 3.11
#   lint         ansible-lint --profile production
#   doc          ansible-doc of every module, filter/test, action plugin (through its module stub) and role;
#                antsibull-docs lint-collection-docs --plugin-docs; antsibull-changelog lint
#   packaging    pytest tests/packaging: Galaxy tarball contents, install and render from the install,
#                the example execution environment (ansible-builder create), the AWX examples
#   e2e          pytest tests/e2e with the ansible-core 2.21 venv, scripts/env.sh sourced
#   e2e-2.19     the e2e tests that run the collection's cluster-facing code (k8s_apply, the role in a canary run,
#                the plugin playbook) again with ansible-core 2.19 (Python 3.11) as the controller
# TEST_ONLY takes step names or the groups sanity, units (both cores), 2.21, 2.19.
#
# Exit status: 0 when every selected step passed, otherwise 1 (the failed
# steps are named at the end). A pytest run that collects no test (exit 5)
# is a failure unless E2E_ALLOW_EMPTY=1.
set -euo pipefail

HERE="$(cd -P "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
REPO="$(cd -P "$HERE/.." && pwd -P)"

ALL_STEPS="setup fleet sanity-2.21 sanity-2.19 units-2.21 units-2.19 lint doc packaging e2e e2e-2.19"

# --- step selection -----------------------------------------------------------
selected=""
if [ -z "${TEST_ONLY:-}" ] || [ "${TEST_ONLY}" = all ]; then
    selected="$ALL_STEPS"
else
    for word in ${TEST_ONLY//,/ }; do
        case "$word" in
            sanity) selected="$selected sanity-2.21 sanity-2.19" ;;
            units | unit) selected="$selected units-2.21 units-2.19" ;;
            2.21) selected="$selected sanity-2.21 units-2.21" ;;
            2.19) selected="$selected sanity-2.19 units-2.19" ;;
            e2e) selected="$selected fleet e2e" ;;
            e2e-2.19) selected="$selected fleet e2e-2.19" ;;
            setup | fleet | sanity-2.21 | sanity-2.19 | units-2.21 | units-2.19 | lint | doc | packaging) selected="$selected $word" ;;
            *)
                echo "test.sh: unknown step '$word' in TEST_ONLY; known: $ALL_STEPS sanity units 2.21 2.19" >&2
                exit 2
                ;;
        esac
    done
fi
is_selected() { case " $selected " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# --- bookkeeping ----------------------------------------------------------------
declare -a summary=()
failed=()
t_start=$SECONDS

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

print_summary() {
    echo
    echo "==================== test.sh summary ===================="
    local line
    for line in "${summary[@]}"; do
        echo "$line"
    done
    printf '%-12s %-8s %s\n' "total" "" "$(fmt_time $((SECONDS - t_start)))"
    if [ "${#failed[@]}" -gt 0 ]; then
        echo "FAILED steps: ${failed[*]}"
    fi
    echo "=========================================================="
}

# run_step NAME FUNCTION: run FUNCTION, time it, record the result, stop on failure unless KEEP_GOING.
run_step() {
    local name="$1" fn="$2" t0 rc
    echo
    echo "==> [$name] starting ($(date -u +%H:%M:%S) UTC)"
    t0=$SECONDS
    set +e
    (set -e; "$fn")
    rc=$?
    set -e
    local dt=$((SECONDS - t0))
    if [ "$rc" = 0 ]; then
        summary+=("$(printf '%-12s %-8s %s' "$name" "ok" "$(fmt_time "$dt")")")
        echo "==> [$name] ok in $(fmt_time "$dt")"
    elif [ "$rc" = 77 ]; then
        summary+=("$(printf '%-12s %-8s %s' "$name" "skipped" "$(fmt_time "$dt")")")
        echo "==> [$name] skipped"
    else
        summary+=("$(printf '%-12s %-8s %s' "$name" "FAILED" "$(fmt_time "$dt") (exit $rc)")")
        failed+=("$name")
        echo "==> [$name] FAILED (exit $rc) after $(fmt_time "$dt")" >&2
        if [ -z "${KEEP_GOING:-}" ]; then
            print_summary
            echo "test.sh: step '$name' failed; stopping (KEEP_GOING=1 runs the remaining steps)" >&2
            exit 1
        fi
    fi
}

# ansible-test prints a docker probe warning (the client exists, no daemon) with
# a large JSON blob, twice per run; drop just those lines.
filter_docker_noise() {
    grep --line-buffered -v -E \
        -e 'Command "docker info' \
        -e 'Cannot connect to the Docker daemon' \
        -e '^>>> Standard (Error|Output)$' \
        -e '^\{"ID":"","Containers"' \
        -e "^WARNING: Location 'file://" || true
}

# ansible_test CORE ARGS...: ansible-test from the per-checkout tree, no stdin, noise filtered.
ansible_test() {
    "$HERE/ansible-test.sh" --core "$@" </dev/null 2>&1 | filter_docker_noise
    return "${PIPESTATUS[0]}"
}

# --- steps ----------------------------------------------------------------------
step_setup() { "$HERE/setup.sh"; }

step_fleet() {
    if [ ! -f "$REPO/tests/fleet/build.sh" ]; then
        echo "tests/fleet/build.sh does not exist; nothing to build"
        return 77
    fi
    bash "$REPO/tests/fleet/build.sh" </dev/null
}

sanity_for() {
    local core="$1" py="$2" stale=0 rc=0
    # Every module needs its missing-gplv3-license line in each ignore file;
    # say so plainly (validate-modules/ignores report it less clearly).
    "$HERE/update-sanity-ignores.sh" --check || stale=1
    ansible_test "$core" sanity --venv --python "$py" --color no || rc=$?
    if [ "$stale" = 1 ]; then
        echo "!!! tests/sanity/ignore-*.txt do not match plugins/modules/: run scripts/update-sanity-ignores.sh (make sanity-ignores)" >&2
        [ "$rc" = 0 ] && rc=1
    fi
    return "$rc"
}
step_sanity_221() { sanity_for 2.21 3.13; }
step_sanity_219() { sanity_for 2.19 3.11; }

units_for() {
    local core="$1" py="$2"
    if [ -z "$(find "$REPO/tests/unit" -name 'test_*.py' -print -quit 2>/dev/null)" ]; then
        echo "no tests/unit/**/test_*.py; nothing to run"
        return 77
    fi
    # The CRD-schema tests (tests/unit/plugins/module_utils/test_crd_schemas.py) read the test bed's upstream CRDs:
    # the fleet step copies them, and without it (TEST_ONLY=units) the manifests alone are fetched (seconds; a no-op
    # when they are there), so that no units step skips them.
    if [ -f "$REPO/tests/fleet/build.sh" ]; then
        bash "$REPO/tests/fleet/build.sh" --manifests-only </dev/null
    fi
    ansible_test "$core" units --venv --python "$py" --color no
}
step_units_221() { units_for 2.21 3.13; }
step_units_219() { units_for 2.19 3.11; }

step_lint() {
    cd "$REPO"
    local out rc
    # The formatter's style (pyproject.toml): `make fmt` applies it.
    black --check --quiet . || { echo "black: the files above are not formatted; run make fmt" >&2; return 1; }
    out="$(mktemp)"
    set +e
    ansible-lint --profile production --nocolor </dev/null 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" != 0 ] && grep -qiE 'no (lintable )?files? (were |was )?found|nothing to lint' "$out" \
        && ! grep -qE '^[^ ]+:[0-9]+' "$out"; then
        echo "ansible-lint found nothing to lint (exit $rc); not a failure"
        rc=0
    fi
    rm -f "$out"
    return "$rc"
}

step_doc() {
    local rc=0
    "$GPUFLEET_VENV/bin/python" "$HERE/check_docs.py" "$REPO" || rc=1
    # antsibull-docs needs the collection inside an ansible_collections/ tree: the per-checkout one.
    echo "antsibull-docs lint-collection-docs --plugin-docs"
    (cd "$GPUFLEET_COLLECTION_DIR" && "$GPUFLEET_VENV/bin/antsibull-docs" lint-collection-docs --plugin-docs .) || rc=1
    echo "antsibull-changelog lint"
    (cd "$REPO" && "$GPUFLEET_VENV/bin/antsibull-changelog" lint) || rc=1
    return "$rc"
}

step_packaging() {
    cd "$REPO"
    local rc
    set +e
    "$GPUFLEET_VENV/bin/python" -m pytest -p no:cacheprovider tests/packaging </dev/null
    rc=$?
    set -e
    [ "$rc" = 5 ] && echo "!!! pytest collected NO TESTS in tests/packaging (pytest exit 5)" >&2
    return "$rc"
}

step_e2e() {
    if [ ! -d "$REPO/tests/e2e" ]; then
        echo "tests/e2e does not exist; nothing to run"
        return 77
    fi
    cd "$REPO"
    local rc
    set +e
    # The slowest tests are named at the end: where the 90 minutes of CI go.
    "$GPUFLEET_VENV/bin/python" -m pytest -p no:cacheprovider --durations=20 tests/e2e </dev/null
    rc=$?
    set -e
    if [ "$rc" = 5 ]; then
        echo "!!! pytest collected NO TESTS in tests/e2e (pytest exit 5)" >&2
        if [ -n "${E2E_ALLOW_EMPTY:-}" ]; then
            echo "!!! E2E_ALLOW_EMPTY is set: not counted as a failure, but nothing was tested" >&2
            return 0
        fi
    fi
    return "$rc"
}

E2E_219_TESTS="tests/e2e/test_kubernetes_core_version.py tests/e2e/test_k8s_apply.py tests/e2e/test_canary.py tests/e2e/test_plugins.py"

step_e2e_219() {
    cd "$REPO"
    # shellcheck disable=SC2086 # a list of paths
    # ansible 12's pair: ansible-core 2.19 with its bundle's kubernetes.core (GPUFLEET_KCORE_VERSION_219).
    PATH="$GPUFLEET_VENV_219/bin:$PATH" ANSIBLE_PYTHON_INTERPRETER="$GPUFLEET_VENV_219/bin/python" \
        ANSIBLE_COLLECTIONS_PATH="$GPUFLEET_COLLECTIONS_ROOT_219" PYTHONPATH="$GPUFLEET_COLLECTIONS_ROOT_219" \
        GPUFLEET_EXPECT_KCORE="$GPUFLEET_KCORE_VERSION_219" \
        "$GPUFLEET_VENV_219/bin/python" -m pytest -p no:cacheprovider $E2E_219_TESTS </dev/null
}

# --- run ------------------------------------------------------------------------
echo "test.sh: checkout $REPO; steps:$(for s in $ALL_STEPS; do is_selected "$s" && printf ' %s' "$s"; done)"

# setup always runs: every other step needs what it prepares.
run_step setup step_setup
GPUFLEET_ENV_QUIET=1
# shellcheck source=scripts/env.sh
source "$HERE/env.sh"
unset GPUFLEET_ENV_QUIET

is_selected fleet && run_step fleet step_fleet
is_selected sanity-2.21 && run_step sanity-2.21 step_sanity_221
is_selected sanity-2.19 && run_step sanity-2.19 step_sanity_219
is_selected units-2.21 && run_step units-2.21 step_units_221
is_selected units-2.19 && run_step units-2.19 step_units_219
is_selected lint && run_step lint step_lint
is_selected doc && run_step doc step_doc
is_selected packaging && run_step packaging step_packaging
is_selected e2e && run_step e2e step_e2e
is_selected e2e-2.19 && run_step e2e-2.19 step_e2e_219

print_summary
[ "${#failed[@]}" = 0 ]
