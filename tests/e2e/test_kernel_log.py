# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The kernel-log Xid reader end to end, on a fleet of its own: playbooks/burnin.yml with the dcgm-diag workload and
``kernel_log: true`` (privileged), remediation ``burnin_quarantine=cordon``.

Every GPU passes DCGM's diagnostic; the stand-in (tests/fleet/agent.py, dcgm_logs.kernel_section) prints, for the
second node only, the driver's kernel line of an injected fault: ``NVRM: Xid (PCI:...): 45, ... caused by previous Xid
149`` on GPU 2 (the form of NVIDIA/open-gpu-kernel-modules#1150). The verdict must read it from the pod's kernel
section, put it on that node and that GPU by the node's own nvidia-smi PCI map, give the catalog's action (drain:
NVLink5), fail the node and the cluster, and remediation must take the node out (cordoned); the other node passes
and stays schedulable.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from pathlib import Path

import pytest

from conftest import ansible_playbook

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOKS = REPO / "playbooks"
CLUSTER = "aws-kmsg-a"
RUN = "kmsg-e2e-1"
NAMESPACE = "kmsg"
SPEC = {
    "restricted_namespace": "burnin-restricted",
    "clusters": [
        {
            "name": CLUSTER,
            "platform": "aws",
            "gpu_architecture": "h100",
            "kubernetes_version": "1.37",
            "nodes": 2,
            "trainjob_outcome": "Complete",
            "kernel_xids": {"%s-gpu-1" % CLUSTER: [[2, 45, 149]]},
        }
    ],
}


@pytest.fixture(scope="module")
def burned_in(own_fleet):
    state, work = own_fleet("kmsg", SPEC, "GPUFLEET_KMSG_FLEET_DIR")
    params = {"burnin_workload_params": {"kernel_log": True, "privileged": True}, "burnin_stages": ["fleet"]}
    proc = ansible_playbook(
        PLAYBOOKS / "burnin.yml",
        "-i",
        state["inventory"],
        "--limit",
        CLUSTER,
        "-e",
        "burnin_run_id=%s" % RUN,
        "-e",
        "burnin_namespace=%s" % NAMESPACE,
        "-e",
        "burnin_report_dir=%s" % (work / "reports"),
        "-e",
        "burnin_poll_interval=2",
        "-e",
        "burnin_workload=dcgm-diag",
        "-e",
        "burnin_nodes=2",
        "-e",
        "burnin_quarantine=cordon",
        "-e",
        json.dumps(params),
    )
    summary = work / "reports" / RUN / "summary.json"
    assert summary.exists(), proc.stdout[-4000:]
    from kubernetes import client, config

    api = client.CoreV1Api(config.new_client_from_config(config_file=state["kubeconfig"], context=CLUSTER))
    nodes = dict((node.metadata.name, node) for node in api.list_node().items if (node.metadata.labels or {}).get("nvidia.com/gpu.present") == "true")
    return {"proc": proc, "results": json.loads(summary.read_text()), "nodes": nodes, "api": api}


def test_the_node_whose_kernel_logged_the_xid_is_drained_and_the_other_passes(burned_in):
    result = burned_in["results"][CLUSTER]
    out = burned_in["proc"].stdout[-4000:]
    assert result["verdict"]["verdict"] == "fail", out
    failed = [name for name, entry in result["node_verdicts"].items() if entry["verdict"] == "fail"]
    assert len(failed) == 1, result["node_verdicts"]
    entry = result["node_verdicts"][failed[0]]
    assert entry["action"] == "drain", entry
    assert "GPU 2: kernel Xid 45 caused by Xid 149 (critical: drain)" in result["verdict"]["reason"], result["verdict"]["reason"]
    for name, node in burned_in["nodes"].items():
        node = burned_in["api"].read_node(name)
        if name in failed:
            assert node.spec.unschedulable, name
        else:
            assert not node.spec.unschedulable and result["node_verdicts"][name]["verdict"] == "pass", (name, result["node_verdicts"])
