# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Canary runs on the test fleet: playbooks/burnin.yml with burnin_serial and burnin_max_fail_percentage.

The inventory lists the mismatching cluster and a good one, then a third. With serial [2, 100%] the first batch is
the canary pair, one of which fails (50%):
- max_fail_percentage 0: the play stops after the canary batch, the third cluster is never touched;
- max_fail_percentage 100 (the default): the third cluster still runs.
(Ansible ends a play whose whole batch failed whatever max_fail_percentage says, so a canary of one failing cluster
always stops the run.)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import uuid

import pytest
import yaml

from kubernetes.dynamic.exceptions import NotFoundError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CANARY, GOOD, LATE = "aws-use1-h100-mismatch", "gcp-usc1-h100-a", "aws-use1-h100-a"
TRAINER = "trainer.kubeflow.org/v1alpha1"


def fleet_hosts(inventory):
    """{host: vars} of the fleet inventory, group vars folded in."""
    hosts = {}
    for group in yaml.safe_load(open(inventory))["all"]["children"].values():
        for name, host_vars in (group.get("hosts") or {}).items():
            hosts[name] = dict(group.get("vars") or {}, **(host_vars or {}))
    return hosts


@pytest.fixture(scope="module")
def canary_inventory(fleet, tmp_path_factory):
    hosts = fleet_hosts(fleet.inventory)
    path = tmp_path_factory.mktemp("canary") / "hosts.yml"
    # A YAML inventory keeps the order it lists hosts in: the canary first.
    path.write_text(yaml.safe_dump({"all": {"hosts": {name: hosts[name] for name in (CANARY, GOOD, LATE)}}}, sort_keys=False))
    return str(path)


def run_canary(canary_inventory, namespace, max_fail_percentage, tmp_path):
    run_id = "canary-" + uuid.uuid4().hex[:6]
    extra = {
        "burnin_serial": [2, "100%"],
        "burnin_max_fail_percentage": max_fail_percentage,
        "burnin_namespace": namespace,
        "burnin_run_id": run_id,
        "burnin_wait": False,
        "burnin_collect_logs": False,
        "burnin_report_dir": str(tmp_path),
    }
    command = ["ansible-playbook", os.path.join(REPO, "playbooks", "burnin.yml"), "-i", canary_inventory, "-e", json.dumps(extra)]
    proc = subprocess.run(
        command, env=dict(os.environ, ANSIBLE_NOCOLOR="1"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=900
    )
    return proc, run_id


def trainjobs(fleet, cluster, namespace):
    resource = fleet.dynamic(cluster).resources.get(api_version=TRAINER, kind="TrainJob")
    try:
        return [item.metadata.name for item in resource.get(namespace=namespace).items]
    except NotFoundError:
        return []


def cleanup(fleet, cluster, namespace):
    try:
        fleet.dynamic(cluster).resources.get(api_version="v1", kind="Namespace").delete(name=namespace)
    except NotFoundError:
        pass


@pytest.mark.parametrize("max_fail_percentage, late_runs", [(0, False), (100, True)], ids=["stop-after-canary", "go-on"])
def test_canary_batch_and_max_fail_percentage(fleet, canary_inventory, tmp_path, max_fail_percentage, late_runs):
    namespace = "canary-%d-%s" % (max_fail_percentage, uuid.uuid4().hex[:6])
    try:
        proc, run_id = run_canary(canary_inventory, namespace, max_fail_percentage, tmp_path)
        output = proc.stdout
        assert proc.returncode != 0, output[-3000:]  # the canary failed either way
        assert "%s: Mismatch" % CANARY in output, output[-3000:]
        recap = output[output.rindex("PLAY RECAP") :]
        assert GOOD in recap and (LATE in recap) is late_runs, recap
        assert any(run_id in name for name in trainjobs(fleet, GOOD, namespace))  # the canary batch's good cluster
        jobs = trainjobs(fleet, LATE, namespace)
        assert bool(jobs) is late_runs, (jobs, output[-3000:])
        assert trainjobs(fleet, CANARY, namespace) == []  # a mismatching cluster gets nothing
    finally:
        for cluster in (CANARY, GOOD, LATE):
            cleanup(fleet, cluster, namespace)
