#!/usr/bin/env bash
# Keep the `validate-modules:missing-gplv3-license` lines of
# tests/sanity/ignore-2.19.txt and ignore-2.21.txt in step with
# plugins/modules/*.py and plugins/inventory/*.py (the collection is Apache-2.0, so every one needs
# one per ansible-core version). Other lines are kept as they are.
#
#   scripts/update-sanity-ignores.sh          # rewrite the files
#   scripts/update-sanity-ignores.sh --check  # exit 1 and show the diff if they are out of date
set -euo pipefail

repo="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
check=""
[ "${1:-}" = "--check" ] && check=1
rule="validate-modules:missing-gplv3-license"
rc=0

for version in 2.19 2.21; do
    file="$repo/tests/sanity/ignore-$version.txt"
    new="$(mktemp)"
    {
        if [ -f "$file" ]; then grep -v " $rule\$" "$file" || true; fi
        # validate-modules reads the modules and the inventory plugins.
        for module in "$repo"/plugins/modules/*.py "$repo"/plugins/inventory/*.py; do
            [ -e "$module" ] || continue
            [ "$(basename "$module")" = "__init__.py" ] && continue
            echo "${module#"$repo"/} $rule"
        done
    } | LC_ALL=C sort -u >"$new"
    if cmp -s "$new" "$file"; then
        rm -f "$new"
        continue
    fi
    if [ -n "$check" ]; then
        echo "tests/sanity/ignore-$version.txt is out of date (run scripts/update-sanity-ignores.sh):" >&2
        diff -u "$file" "$new" >&2 || true
        rm -f "$new"
        rc=1
    else
        mv "$new" "$file"
        echo "updated tests/sanity/ignore-$version.txt"
    fi
done
exit "$rc"
