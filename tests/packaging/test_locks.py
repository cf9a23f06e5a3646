# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""What a new user installs is what the tests passed on: every venv the project builds comes from a lock with hashes.

The locks (tests/locks/*.txt) are compiled by `make lock` (scripts/lock.sh) from their .in files; scripts/setup.sh
installs them with `pip --require-hashes --no-deps` and rebuilds a venv whose lock changed or that no longer holds it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import subprocess
import sys

import pytest
import yaml

from conftest import REPO

LOCKS = REPO / "tests" / "locks"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def pins(path):
    """name -> version for the lock's pins without an environment marker."""
    found = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line)
        if match and ";" not in line:
            found[match.group(1).lower()] = match.group(2)
    return found


@pytest.mark.parametrize("name", ["core2.21", "core2.19", "mutation", "tools"])
def test_every_lock_is_compiled_from_its_input_with_a_hash_for_every_pin(name):
    lock = (LOCKS / (name + ".txt")).read_text()
    assert (LOCKS / (name + ".in")).is_file()
    assert "%s.in -o %s.txt" % (name, name) in lock, "tests/locks/%s.txt is not compiled from %s.in: run make lock" % (name, name)
    # Each pin is followed by its hashes: a block is "name==version \" then "--hash=..." lines.
    blocks = re.split(r"\n(?=[A-Za-z0-9])", lock)
    pinned = [b for b in blocks if PIN.match(b)]
    assert pinned
    unhashed = [b.split()[0] for b in pinned if "--hash=sha256:" not in b]
    assert not unhashed, "pins without hashes in %s.txt: %s" % (name, unhashed)


def test_the_execution_environment_installs_the_locked_versions():
    locked = pins(LOCKS / "core2.21.txt")
    ee = yaml.safe_load((REPO / "examples" / "execution-environment" / "execution-environment.yml").read_text())
    deps = ee["dependencies"]
    assert deps["ansible_core"]["package_pip"] == "ansible-core==" + locked["ansible-core"]
    assert deps["ansible_runner"]["package_pip"] == "ansible-runner==" + locked["ansible-runner"]
    ee_pins = pins(REPO / "examples" / "execution-environment" / deps["python"])
    for dist in ("kubernetes", "jsonpatch", "jinja2", "pyyaml", "prometheus-client", "requests-oauthlib"):
        assert ee_pins[dist] == locked[dist], dist
    assert {k: v for k, v in ee_pins.items() if k in locked and locked[k] != v} == {}


def test_the_venv_running_the_tests_holds_its_lock():
    """The 2.21 venv (this interpreter) is exactly tests/locks/core2.21.txt: setup.sh installed nothing else."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "venv_matches_lock.py"), str(LOCKS / "core2.21.txt")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_lock_check_names_a_difference(tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text("pytest==0.0.1 \\\n    --hash=sha256:00\nnot-installed-anywhere==1.0 ; python_version < '3'\n")
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "venv_matches_lock.py"), str(lock)], stdout=subprocess.PIPE, universal_newlines=True, check=False
    )
    assert proc.returncode == 1
    assert proc.stdout.startswith("pytest: lock 0.0.1, installed ")
    assert "not-installed-anywhere" not in proc.stdout


def test_units_constraints_pin_what_ansible_test_installs():
    """ansible-test applies tests/unit/constraints.txt to tests/unit/requirements.txt and its own units requirements."""
    constraints = (REPO / "tests" / "unit" / "constraints.txt").read_text()
    assert "units.in -o ../unit/constraints.txt" in constraints
    pinned = set(m.group(1).lower() for m in map(PIN.match, constraints.splitlines()) if m)
    wanted = set()
    for line in (REPO / "tests" / "unit" / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            wanted.add(re.split(r"[<>=!~;\[ ]", line, maxsplit=1)[0].lower())
    assert wanted and wanted <= pinned, wanted - pinned
