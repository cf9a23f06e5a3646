#!/usr/bin/env bash
# `make lock`: re-resolve every lock of tests/locks/ to the newest versions their .in files allow, on purpose.
#
#   tests/locks/core2.21.txt   the ansible-core 2.21 venv (Python 3.12+), with hashes
#   tests/locks/core2.19.txt   the ansible-core 2.19 venv (Python 3.11), with hashes
#   tests/locks/mutation.txt   cosmic-ray's venv (scripts/mutate.sh), with hashes
#   tests/unit/constraints.txt what ansible-test's units venvs hold (it applies the file to tests/unit/requirements.txt)
#   examples/execution-environment/requirements.txt, and the EE's ansible-core and ansible-runner pins: the 2.21 lock's
#
# scripts/setup.sh installs only from the locks (pip --require-hashes --no-deps) and rebuilds a venv whose lock changed.
# An update is one commit with the whole suite (`make test`) run on it: docs/testing.md. LOCK_ARGS adds uv options
# (LOCK_ARGS="--upgrade-package kubernetes" moves one package, LOCK_ARGS= none; unset, everything moves: --upgrade).
set -euo pipefail

GPUFLEET_ENV_QUIET=1
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
unset GPUFLEET_ENV_QUIET

log() { printf '[lock] %s\n' "$*" >&2; }

tools="$GPUFLEET_CACHE/venv-lock"
uv_pin="$(sed -n 's/^uv==\([^ ]*\).*/\1/p' "$GPUFLEET_REPO/tests/locks/tools.txt")"
if [ "$("$tools/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" != "$uv_pin" ]; then
    log "building $tools with uv $uv_pin from tests/locks/tools.txt"
    rm -rf "$tools"
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install -q --disable-pip-version-check --no-input --require-hashes --no-deps \
        -r "$GPUFLEET_REPO/tests/locks/tools.txt"
fi

cd "$GPUFLEET_REPO/tests/locks"
# shellcheck disable=SC2086 # LOCK_ARGS is a list of options
compile() { "$tools/bin/uv" pip compile --quiet --universal ${LOCK_ARGS---upgrade} "$@"; }
compile --generate-hashes --python-version 3.12 core2.21.in -o core2.21.txt
compile --generate-hashes --python-version 3.11 core2.19.in -o core2.19.txt
compile --generate-hashes --python-version 3.12 mutation.in -o mutation.txt
compile --no-annotate --python-version 3.11 units.in -o ../unit/constraints.txt
compile --no-annotate --python-version 3.12 -c core2.21.txt ../../requirements.txt \
    -o ../../examples/execution-environment/requirements.txt

# The EE's ansible-core and ansible-runner: the 2.21 venv's.
pinned() { sed -n "s/^$1==\([^ ;]*\).*/\1/p" core2.21.txt | head -n 1; }
core="$(pinned ansible-core)"
runner="$(pinned ansible-runner)"
sed -i -e "s/package_pip: ansible-core==.*/package_pip: ansible-core==$core/" \
    -e "s/package_pip: ansible-runner==.*/package_pip: ansible-runner==$runner/" \
    ../../examples/execution-environment/execution-environment.yml
log "locked: ansible-core $core (2.21 line), $(sed -n 's/^ansible-core==\([^ ;]*\).*/\1/p' core2.19.txt) (2.19 line), ansible-runner $runner"
log "now run the whole suite (make test) and commit the locks in one commit"
