# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The README's user path end to end: `ansible-galaxy collection build`, install the tarball with kubernetes.core's into
an empty path, and run a fleet burn-in with the installed playbook (`gpufleet.burnin.burnin`, by FQCN, from outside the
checkout) on a cluster of the test fleet. docs/scenarios/laptop.md steps 1 and 4."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from kubernetes.dynamic.exceptions import NotFoundError

REPO = Path(__file__).resolve().parent.parent.parent
CLUSTER = "gcp-usc1-h100-a"  # its launcher log passes the thresholds (tests/fleet/default-fleet.yml)


def run(command, env, cwd):
    return subprocess.run(
        command,
        env=env,
        cwd=str(cwd),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        stdin=subprocess.DEVNULL,
        check=False,
        timeout=900,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(collections path, env): the collection built from this checkout and installed with kubernetes.core."""
    work = tmp_path_factory.mktemp("installed")
    path = work / "collections"
    env = dict(
        os.environ, ANSIBLE_COLLECTIONS_PATH=str(path), ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="False", ANSIBLE_NOCOLOR="1", ANSIBLE_GALAXY_DISABLE_GPG_VERIFY="1"
    )
    env.pop("PYTHONPATH", None)  # scripts/env.sh's points at the checkout's tree
    build = run(["ansible-galaxy", "collection", "build", "--force", "--output-path", str(work), str(REPO)], env, work)
    assert build.returncode == 0, build.stdout
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    kcore = os.environ.get("GPUFLEET_KCORE_TARBALL", "")
    assert Path(kcore).is_file(), "GPUFLEET_KCORE_TARBALL is missing: run scripts/setup.sh and source scripts/env.sh"
    install = run(["ansible-galaxy", "collection", "install", "-p", str(path), kcore, str(work / ("gpufleet-burnin-%s.tar.gz" % version))], env, work)
    assert install.returncode == 0, install.stdout
    return path, env, work


def test_installed_collection_burns_in_a_cluster(fleet, installed):
    path, env, work = installed
    namespace = "installed-" + uuid.uuid4().hex[:6]
    reports = work / "reports"
    extra = {"burnin_namespace": namespace, "burnin_run_id": "installed", "burnin_report_dir": str(reports), "burnin_poll_interval": 1, "burnin_timeout": 120}
    try:
        proc = run(["ansible-playbook", "-i", fleet.inventory, "gpufleet.burnin.burnin", "--limit", CLUSTER, "-e", json.dumps(extra)], env, work)
        assert proc.returncode == 0, proc.stdout[-4000:]
        assert str(REPO) not in proc.stdout  # nothing came from the checkout
        assert (
            str(path / "ansible_collections" / "gpufleet" / "burnin")
            in run(["ansible-doc", "-t", "role", "gpufleet.burnin.burnin"], dict(env, PAGER="cat"), work).stdout
        )
        summary = json.loads((reports / "installed" / "summary.json").read_text())
        result = summary[CLUSTER]
        assert (result["outcome"], result["verdict"]["verdict"]) == ("Complete", "pass"), result
        trainjobs = fleet.dynamic(CLUSTER).resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainJob")
        # The default stages: the node stage's TrainJob, then the fleet stage's.
        names = sorted(item.metadata.name for item in trainjobs.get(namespace=namespace).items)
        assert names == ["nccl-burnin-installed", "nccl-burnin-installed-node"], names
    finally:
        try:
            fleet.dynamic(CLUSTER).resources.get(api_version="v1", kind="Namespace").delete(name=namespace)
        except NotFoundError:
            pass
