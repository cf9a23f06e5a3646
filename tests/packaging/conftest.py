# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Fixtures of the packaging tests (scripts/test.sh step "packaging"; run with scripts/env.sh sourced).

collection_tarball   gpufleet-burnin-<ver>.tar.gz built by `ansible-galaxy collection build` from a copy of the
                     checkout into which developer leftovers were planted (PLANTED): caches, venvs, output, fleet
                     state, credentials. Built once per session.
kcore_tarball        the Galaxy-installable kubernetes.core tarball scripts/setup.sh rebuilds ($GPUFLEET_KCORE_TARBALL)
isolated_env(path)   the environment for ansible commands that must see only the collections under PATH: no
                     PYTHONPATH (scripts/env.sh's points at the checkout's tree), no system collections
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent.parent

# Files a developer's checkout may hold that must never reach the tarball (path -> content).
PLANTED = {
    "tests/output/junit/python3.13-units.xml": "<testsuite/>\n",
    "tests/output/.tmp/sanity/x.txt": "x\n",
    ".pytest_cache/v/cache/lastfailed": "{}\n",
    "plugins/filter/__pycache__/merge_env.cpython-313.pyc": "",
    "plugins/module_utils/nccl.pyc": "",
    ".venv/bin/python": "",
    ".ansible/collections/README": "x\n",
    "rendered/aws-use1-h100-a/manifests.yaml": "kind: TrainJob\n",
    "reports/20261130-070000/summary.json": "{}\n",
    "dist/gpufleet-burnin-0.0.1.tar.gz": "",
    "gpufleet-burnin-0.0.9.tar.gz": "",
    "examples/execution-environment/context/Dockerfile": "FROM x\n",
    "examples/execution-environment/collections/kubernetes-core-6.6.0.tar.gz": "",
    ".fleet/state.json": "{}\n",
    ".fleet/pki/ca.key": "-----BEGIN PRIVATE KEY-----\n",
    "fleet/clusters/aws/tokens.csv": "token,user,uid\n",
    "kubeconfig": "apiVersion: v1\nkind: Config\n",
    "examples/inventory/restricted.kubeconfig": "apiVersion: v1\nkind: Config\n",
    "examples/inventory/host_vars/kubeconfig": "apiVersion: v1\nkind: Config\n",
    "examples/inventory/client.key": "-----BEGIN PRIVATE KEY-----\n",
    "examples/inventory/client.crt": "-----BEGIN CERTIFICATE-----\n",
    "examples/inventory/ca.pem": "-----BEGIN CERTIFICATE-----\n",
    ".vault_pass.txt": "secret\n",
    "examples/inventory/.vault_pass": "secret\n",
    ".env": "TOKEN=x\n",
}


def tracked_files():
    """The checkout's files as git sees them (tracked, plus new files not ignored); every file without git."""
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True
        ).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(REPO)) for p in REPO.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [n for n in names if (REPO / n).is_file()]


def isolated_env(collections_path):
    env = dict(
        os.environ,
        ANSIBLE_COLLECTIONS_PATH=str(collections_path),
        ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="False",
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_GALAXY_DISABLE_GPG_VERIFY="1",
    )
    env.pop("PYTHONPATH", None)
    return env


def run(command, **kw):
    """The command's output, both streams in order, for assertions on what a person would read."""
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, stdin=subprocess.DEVNULL, check=False, **kw)
    return proc


def run_streams(command, **kw):
    """The command with stdout and stderr apart, asserted to succeed."""
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, stdin=subprocess.DEVNULL, check=False, **kw)
    assert proc.returncode == 0, "%s exited %d\n%s\n%s" % (command, proc.returncode, proc.stdout, proc.stderr)
    return proc


def run_json(command, object_hook=None, **kw):
    """The JSON the command prints on stdout, read apart from stderr: a dependency's warning there (cryptography's
    deprecations, for one) is no part of the document."""
    return json.loads(run_streams(command, **kw).stdout, object_hook=object_hook)


def galaxy_version():
    return yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]


@pytest.fixture(scope="session")
def collection_tarball(tmp_path_factory):
    if not shutil.which("ansible-galaxy"):
        pytest.fail("ansible-galaxy is not on PATH: run scripts/setup.sh and source scripts/env.sh")
    work = tmp_path_factory.mktemp("build")
    src = work / "src" / "ansible_collections" / "gpufleet" / "burnin"
    for name in tracked_files():
        dest = src / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(str(REPO / name), str(dest))
    for name, content in PLANTED.items():
        dest = src / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(content)
    out = work / "dist"
    proc = run(["ansible-galaxy", "collection", "build", "--force", "--output-path", str(out), str(src)])
    assert proc.returncode == 0, proc.stdout
    tarball = out / ("gpufleet-burnin-%s.tar.gz" % galaxy_version())
    assert tarball.is_file(), proc.stdout
    return tarball


@pytest.fixture(scope="session")
def kcore_tarball():
    path = Path(os.environ.get("GPUFLEET_KCORE_TARBALL", ""))
    if not path.is_file():
        pytest.fail("GPUFLEET_KCORE_TARBALL (%s) is missing: run scripts/setup.sh and source scripts/env.sh" % path)
    return path


def _skip_guard():
    """tests/skip_guard.py: under CI=true an unexpected skip fails the run (tests/expected-skips.yml)."""
    name = "gpufleet_skip_guard"
    if name not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "skip_guard.py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def pytest_configure(config):
    _skip_guard().register(config)
