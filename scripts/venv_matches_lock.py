"""Check that the running interpreter's environment holds exactly what a lock file pins.

    venv/bin/python scripts/venv_matches_lock.py tests/locks/core2.21.txt

Every `name==version` line of the lock whose environment marker applies to this interpreter must be installed at that
version (names compared as PEP 503 normalises them). Exit 0 when it does, 1 with one line per difference otherwise;
scripts/setup.sh rebuilds the venv then. Packages the venv has beyond the lock (pip itself) are not differences.
"""

import re
import sys
from importlib import metadata

from packaging.markers import Marker
from packaging.utils import canonicalize_name

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?\s*$")


def pins(lock_text):
    """(name, version) for each pin of the lock that applies here."""
    for line in lock_text.splitlines():
        match = PIN.match(line)
        if not match:
            continue
        name, version, marker = match.groups()
        if marker and not Marker(marker).evaluate():
            continue
        yield canonicalize_name(name), version


def main(lock_path):
    with open(lock_path, encoding="utf-8") as handle:
        wanted = dict(pins(handle.read()))
    if not wanted:
        print("%s: no pins found" % lock_path)
        return 1
    installed = {canonicalize_name(dist.metadata["Name"]): dist.version for dist in metadata.distributions()}
    differences = [
        "%s: lock %s, installed %s" % (name, version, installed.get(name, "nothing"))
        for name, version in sorted(wanted.items())
        if installed.get(name) != version
    ]
    for line in differences:
        print(line)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
