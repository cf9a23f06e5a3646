#!/usr/bin/env python
"""Offline stand-in for ansible-test's get-pip script.

ansible-test (``--venv`` and the ``--requirements`` bootstrap) downloads
``https://ci-files.testing.ansible.com/ansible-test/get-pip-<ver>.py`` to
``~/.ansible/test/cache/get_pip_<ver with _>.py`` unless that file already
exists. That host is unreachable from the project's machines, so
scripts/setup.sh copies this file to those cache names.

What it does, like the real get-pip.py:

1. bootstrap the pip bundled with the running Python (``ensurepip``);
2. ``python -m pip install <arguments>``, without get-pip's own
   ``--no-setuptools``/``--no-wheel`` switches (the caller names the exact
   pip/setuptools/wheel versions it wants as arguments).

Gotcha: ``ensurepip`` deletes every ``PIP_*`` variable and sets
``PIP_CONFIG_FILE=/dev/null`` in the environment of the process that runs it.
pip 23.2.1 (bundled with Python 3.11) then ignores the global pip
configuration's ``cert=`` and fails TLS through the intercepting proxy. So
ensurepip runs in a child process and the pip environment of this process is
also snapshotted and restored before the second step.
"""

import os
import subprocess
import sys

GET_PIP_ONLY_SWITCHES = ("--no-setuptools", "--no-wheel")


def main():
    saved = dict((key, value) for key, value in os.environ.items() if key.startswith("PIP_"))

    subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade", "--default-pip"])

    for key in [key for key in os.environ if key.startswith("PIP_")]:
        del os.environ[key]
    os.environ.update(saved)

    args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_SWITCHES]
    if args:
        subprocess.check_call([sys.executable, "-m", "pip", "install"] + args)


if __name__ == "__main__":
    main()
