#!/usr/bin/env bash
# Run ansible-test on this checkout.
#
#   scripts/ansible-test.sh [--core 2.21|2.19] <ansible-test arguments...>
#   scripts/ansible-test.sh --core 2.19 sanity --venv --python 3.11
#   scripts/ansible-test.sh units --venv --python 3.13 tests/unit/plugins/filter
#
# ansible-test needs the collection to sit *physically* at
# .../ansible_collections/gpufleet/burnin/. The symlink tree of scripts/setup.sh
# ($GPUFLEET_COLLECTIONS_ROOT/ansible_collections/gpufleet/burnin -> checkout)
# is enough for ansible-playbook, ansible-doc, ansible-lint and pytest, but
# not for ansible-test: every process it starts (the --venv delegation, pytest)
# gets the kernel-resolved working directory, i.e. the checkout path outside
# ansible_collections/, and fails with "The current working directory must be
# within the source tree being tested" or "File ... not found in collection
# path". So ansible-test runs in $GPUFLEET_ANSIBLE_TEST_ROOT, a second tree
# with a real directory for the collection, filled in one of two ways:
#
#   bind (default when possible): in a private mount namespace (unshare -m, so
#         nothing is visible outside this command and nothing is left behind)
#         the checkout is bind-mounted on that directory. Results land in the
#         checkout's tests/output/ as usual. Needs root (CI and these machines).
#   copy: the files git knows (tracked + untracked, not ignored) are copied
#         there and tests/output/ is copied back afterwards. For non-root use.
#
# GPUFLEET_ANSIBLE_TEST_MODE=bind|copy forces one.
set -euo pipefail

core=2.21
if [ "${1:-}" = "--core" ]; then
    core="${2:?--core needs 2.21 or 2.19}"
    shift 2
fi

GPUFLEET_ENV_QUIET=1
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

case "$core" in
    2.21) venv="$GPUFLEET_VENV" ;;
    2.19) venv="$GPUFLEET_VENV_219" ;;
    *) echo "ansible-test.sh: unknown core '$core' (2.21 or 2.19)" >&2; exit 2 ;;
esac
target="$GPUFLEET_ANSIBLE_TEST_ROOT/ansible_collections/gpufleet/burnin"
[ -x "$venv/bin/ansible-test" ] || { echo "ansible-test.sh: $venv/bin/ansible-test missing; run scripts/setup.sh" >&2; exit 2; }
[ -d "$target" ] || { echo "ansible-test.sh: $target missing; run scripts/setup.sh" >&2; exit 2; }

# The venv of the selected core first on PATH: ansible-test takes the
# `--python X.Y` interpreter from PATH, and pyenv shims of versions that are
# not selected would fail there.
export PATH="$venv/bin:$PATH"
# ansible-test finds dependency collections (kubernetes.core) beside the
# collection under test; the variables of env.sh must not point elsewhere.
unset ANSIBLE_COLLECTIONS_PATH ANSIBLE_TEST_CONTENT_ROOT PYTHONPATH

mode="${GPUFLEET_ANSIBLE_TEST_MODE:-auto}"
if [ "$mode" = auto ]; then
    if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
        mode=bind
    else
        mode=copy
    fi
fi

case "$mode" in
    bind)
        # shellcheck disable=SC2016
        exec unshare -m --propagation private bash -c '
            set -e
            mount --bind "$1" "$2"
            cd "$2"
            shift 2
            exec "$@"
        ' ansible-test-bind "$GPUFLEET_REPO" "$target" "$venv/bin/ansible-test" "$@"
        ;;
    copy)
        # One copy per checkout: serialise runs of this checkout.
        exec 8>"$GPUFLEET_ANSIBLE_TEST_ROOT/.copy.lock"
        flock 8
        find "$target" -mindepth 1 -maxdepth 1 ! -name tests -exec rm -rf {} +
        [ -d "$target/tests" ] && find "$target/tests" -mindepth 1 -maxdepth 1 ! -name output -exec rm -rf {} +
        (cd "$GPUFLEET_REPO" && git ls-files -z --cached --others --exclude-standard) |
            (cd "$GPUFLEET_REPO" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) |
            tar -xf - -C "$target"
        rc=0
        (cd "$target" && "$venv/bin/ansible-test" "$@") || rc=$?
        if [ -d "$target/tests/output" ]; then
            mkdir -p "$GPUFLEET_REPO/tests/output"
            rsync -a --exclude .tmp "$target/tests/output/" "$GPUFLEET_REPO/tests/output/" 2>/dev/null ||
                cp -a "$target/tests/output/." "$GPUFLEET_REPO/tests/output/"
        fi
        exit "$rc"
        ;;
    *)
        echo "ansible-test.sh: GPUFLEET_ANSIBLE_TEST_MODE must be bind or copy, not '$mode'" >&2
        exit 2
        ;;
esac
