# shellcheck shell=bash
# Environment for working on gpufleet.burnin. Source it, do not execute it:
#
#     source scripts/env.sh
#
# It only computes paths and exports variables; it installs nothing. Run
# scripts/setup.sh (or `make setup`) once first to create what it points at.
# Safe to source repeatedly: PATH and PYTHONPATH entries are not duplicated.
#
# Exports:
#   GPUFLEET_REPO              absolute, symlink-free path of this checkout
#   GPUFLEET_CACHE             cache root (default ~/.cache/gpufleet-burnin)
#   GPUFLEET_VENV              venv with ansible-core 2.21 (Python 3.12+), first on PATH
#   GPUFLEET_VENV_219          venv with ansible-core 2.19 (Python 3.11)
#   GPUFLEET_COLLECTIONS_ROOT  per-checkout tree: ansible_collections/{gpufleet/burnin -> repo, kubernetes/core}
#   GPUFLEET_COLLECTION_DIR    <root>/ansible_collections/gpufleet/burnin
#   GPUFLEET_ANSIBLE_TEST_ROOT <root>/ansible-test, where scripts/ansible-test.sh runs ansible-test
#   GPUFLEET_KCORE_VERSION     kubernetes.core version taken from the ansible bundle wheel
#   GPUFLEET_KCORE_TARBALL     Galaxy-installable kubernetes-core-<ver>.tar.gz rebuilt by setup.sh
#   ANSIBLE_COLLECTIONS_PATH   the per-checkout root, so both collections are found
#   ANSIBLE_PYTHON_INTERPRETER the 2.21 venv python (pyenv shims break interpreter discovery)
#   PYTHONPATH                 the per-checkout root first, so `import ansible_collections.gpufleet.burnin` works

if [ -n "${BASH_VERSION:-}" ]; then
    _gpufleet_env_src="${BASH_SOURCE[0]}"
elif [ -n "${ZSH_VERSION:-}" ]; then
    eval '_gpufleet_env_src="${(%):-%x}"'
else
    _gpufleet_env_src=""
fi
if [ -n "$_gpufleet_env_src" ] && [ -f "$_gpufleet_env_src" ]; then
    GPUFLEET_REPO="$(cd -P "$(dirname "$_gpufleet_env_src")/.." && pwd -P)"
else
    GPUFLEET_REPO="$(git rev-parse --show-toplevel 2>/dev/null || pwd -P)"
fi
unset _gpufleet_env_src
export GPUFLEET_REPO

export GPUFLEET_CACHE="${GPUFLEET_CACHE:-$HOME/.cache/gpufleet-burnin}"
export GPUFLEET_VENV="$GPUFLEET_CACHE/venv-core2.21"
export GPUFLEET_VENV_219="$GPUFLEET_CACHE/venv-core2.19"

# kubernetes.core comes out of the `ansible` community bundle wheel (no Galaxy here).
export GPUFLEET_ANSIBLE_BUNDLE_VERSION="${GPUFLEET_ANSIBLE_BUNDLE_VERSION:-14.5.0}"
export GPUFLEET_KCORE_VERSION="${GPUFLEET_KCORE_VERSION:-6.6.0}"
export GPUFLEET_KCORE_TARBALL="$GPUFLEET_CACHE/dist/kubernetes-core-$GPUFLEET_KCORE_VERSION.tar.gz"
# The oldest kubernetes.core the in-process plugins are tested with: the ansible 12 bundle's (ansible-core 2.19).
export GPUFLEET_ANSIBLE_BUNDLE_VERSION_219="${GPUFLEET_ANSIBLE_BUNDLE_VERSION_219:-12.3.0}"
export GPUFLEET_KCORE_VERSION_219="${GPUFLEET_KCORE_VERSION_219:-6.2.0}"

# One ansible-test tree per checkout, keyed by the checkout's absolute path,
# so that two clones never point the same symlink at different places.
_gpufleet_key="$(printf '%s' "$GPUFLEET_REPO" | sha256sum | cut -c1-12)"
export GPUFLEET_COLLECTIONS_ROOT="$GPUFLEET_CACHE/trees/$_gpufleet_key"
export GPUFLEET_COLLECTION_DIR="$GPUFLEET_COLLECTIONS_ROOT/ansible_collections/gpufleet/burnin"
# The same collection beside the ansible 12 bundle's kubernetes.core (test step e2e-2.19).
export GPUFLEET_COLLECTIONS_ROOT_219="$GPUFLEET_COLLECTIONS_ROOT/kcore-$GPUFLEET_KCORE_VERSION_219"
# ansible-test needs a physical directory instead of the symlink: see scripts/ansible-test.sh.
export GPUFLEET_ANSIBLE_TEST_ROOT="$GPUFLEET_COLLECTIONS_ROOT/ansible-test"
unset _gpufleet_key

export ANSIBLE_COLLECTIONS_PATH="$GPUFLEET_COLLECTIONS_ROOT"
export ANSIBLE_PYTHON_INTERPRETER="$GPUFLEET_VENV/bin/python"

case ":${PATH:-}:" in
    *":$GPUFLEET_VENV/bin:"*) ;;
    *) export PATH="$GPUFLEET_VENV/bin${PATH:+:$PATH}" ;;
esac
# This checkout's tree first; a tree another checkout put there (its env.sh sourced earlier in this shell, whatever its
# GPUFLEET_CACHE: CI=true makes one of its own) is dropped, or Ansible would find that checkout's collections too.
_gpufleet_rest="${PYTHONPATH:-}"
_gpufleet_kept=""
while [ -n "$_gpufleet_rest" ]; do
    _gpufleet_entry="${_gpufleet_rest%%:*}"
    case "$_gpufleet_rest" in
        *:*) _gpufleet_rest="${_gpufleet_rest#*:}" ;;
        *) _gpufleet_rest="" ;;
    esac
    case "$_gpufleet_entry" in
        "" | "$GPUFLEET_CACHE/trees/"*) ;;
        *)
            if [ ! -e "$_gpufleet_entry/ansible_collections/gpufleet/burnin" ]; then
                _gpufleet_kept="${_gpufleet_kept:+$_gpufleet_kept:}$_gpufleet_entry"
            fi
            ;;
    esac
done
export PYTHONPATH="$GPUFLEET_COLLECTIONS_ROOT${_gpufleet_kept:+:$_gpufleet_kept}"
unset _gpufleet_rest _gpufleet_kept _gpufleet_entry

if [ -z "${GPUFLEET_ENV_QUIET:-}" ] && { [ ! -x "$GPUFLEET_VENV/bin/ansible" ] || [ ! -L "$GPUFLEET_COLLECTION_DIR" ]; }; then
    echo "gpufleet env: $GPUFLEET_VENV or $GPUFLEET_COLLECTION_DIR is missing; run scripts/setup.sh (make setup)" >&2
fi
