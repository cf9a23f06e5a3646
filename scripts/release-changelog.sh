#!/usr/bin/env bash
# Release the changelog: turn changelogs/fragments/*.yaml into a release of changelogs/changelog.yaml and
# CHANGELOG.rst, for the version in galaxy.yml (or the one given). Run once per release, after every fragment of
# the release is in, then build the tarball (docs/packaging.md):
#
#   scripts/release-changelog.sh            # version from galaxy.yml
#   scripts/release-changelog.sh 0.2.0      # another version (also set it in galaxy.yml)
#
# The command it runs (after `source scripts/env.sh`, so that ansible-doc finds kubernetes.core for the foreign doc
# fragments) is:
#   antsibull-changelog release --version <version> --use-ansible-doc
# keep_fragments is false in changelogs/config.yaml: the release removes the fragments it used.
set -euo pipefail

HERE="$(cd -P "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
REPO="$(cd -P "$HERE/.." && pwd -P)"
GPUFLEET_ENV_QUIET=1
# shellcheck source=scripts/env.sh
source "$HERE/env.sh"
unset GPUFLEET_ENV_QUIET

version="${1:-$("$GPUFLEET_VENV/bin/python" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["version"])' "$REPO/galaxy.yml")}"
cd "$REPO"
antsibull-changelog lint
antsibull-changelog release --version "$version" --use-ansible-doc
echo "released changelog $version: changelogs/changelog.yaml, CHANGELOG.rst (commit them with the removed fragments)"
