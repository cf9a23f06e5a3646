# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Isolation of the bad node, on a fleet of its own: aws-usw2-h100-nodes (4 AWS H100 nodes, the agent's slow NIC on
aws-usw2-h100-nodes-gpu-2: every MPI job with a worker there prints far-below busbw) and a good cluster.

- one run of playbooks/burnin.yml: the 4-node run fails, the isolation names exactly gpu-2 as the bad node with
  fewer pair jobs than all 6 pairs, each finding's evidence lists its pair results, the pair TrainJobs are gone
  afterwards, and the good cluster is not isolated;
- a budget of 1 job: the result says the budget ran out and what is known;
- a bad budget is refused before any cluster is touched, naming the variable;
- check mode: gpufleet.burnin.burnin_isolate plans the first round and applies nothing.

GPUFLEET_ISOLATION_FLEET_DIR reuses a fleet started by hand from the same clusters.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOKS = REPO / "playbooks"
CLUSTER, GOOD = "aws-usw2-h100-nodes", "gcp-usc1-h100-a"
BAD_NODE = "aws-usw2-h100-nodes-gpu-2"
NODES = ["%s-gpu-%d" % (CLUSTER, i) for i in range(4)]
NAMESPACE = "gpufleet-burnin"
# Run ids of this session: a reused fleet (GPUFLEET_ISOLATION_FLEET_DIR) keeps the TrainJobs of earlier sessions.
SESSION = "%x" % (int(time.time()) % 0xFFFFFF)


def run_id(n):
    return "iso%s-%d" % (SESSION, n)


SPEC = {
    "restricted_namespace": "burnin-restricted",
    "clusters": [
        {
            "name": CLUSTER,
            "platform": "aws",
            "gpu_architecture": "h100",
            "kubernetes_version": "1.37",
            "nodes": 4,
            "node_naming": "indexed",
            "slow_nodes": [BAD_NODE],
            "inventory_vars": {"burnin_nodes": 4},
            "trainjob_outcome": "Complete",
            "nccl_log": "good",
        },
        {"name": GOOD, "platform": "gcp", "gpu_architecture": "h100", "kubernetes_version": "1.37", "nodes": 2, "nccl_log": "good"},
    ],
}


@pytest.fixture(scope="module")
def iso_fleet(own_fleet):
    return own_fleet("isolation", SPEC, "GPUFLEET_ISOLATION_FLEET_DIR")


def run(state, work, playbook, run_id, *options):
    """ansible-playbook PLAYBOOK over the fleet: (the process, the run's summary.json or None)."""
    reports = work / "reports"
    proc = subprocess.run(
        ["ansible-playbook", str(playbook), "-i", state["inventory"], "-e", "burnin_run_id=%s" % run_id, "-e", "burnin_report_dir=%s" % reports, *options],
        env=dict(os.environ, ANSIBLE_NOCOLOR="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        timeout=900,
        check=False,
    )
    summary = reports / run_id / "summary.json"
    return proc, (json.loads(summary.read_text()) if summary.is_file() else None)


def trainjobs(state, cluster):
    from kubernetes import config
    from kubernetes.dynamic import DynamicClient

    dyn = DynamicClient(config.new_client_from_config(config_file=state["kubeconfig"], context=cluster))
    found = dyn.resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainJob").get(namespace=NAMESPACE).to_dict()["items"]
    return [item["metadata"]["name"] for item in found]


@pytest.fixture(scope="module")
def isolated(iso_fleet):
    state, work = iso_fleet
    proc, summary = run(state, work, PLAYBOOKS / "burnin.yml", run_id(1))
    assert summary is not None, proc.stdout[-4000:]
    return state, proc, summary


def test_the_isolation_names_exactly_the_slow_node_with_fewer_jobs_than_all_pairs(isolated):
    state, proc, summary = isolated
    result = summary[CLUSTER]
    assert result["verdict"]["verdict"] == "fail", proc.stdout[-3000:]
    isolation = result["isolation"]
    assert isolation["outcome"] == "found", isolation
    assert isolation["culprits"] == [BAD_NODE]
    assert isolation["good"] == sorted(set(NODES) - {BAD_NODE})
    assert isolation["jobs"] < isolation["all_pairs"] == 6
    assert sum(len(r["pairs"]) for r in isolation["rounds"]) == isolation["jobs"]
    # Each round's pairs are disjoint and ran pinned where planned.
    for entry in isolation["rounds"]:
        used = [node for pair in entry["pairs"] for node in pair]
        assert len(used) == len(set(used))
        assert [r["nodes"] for r in entry["results"]] == entry["pairs"]
        assert all(name.startswith("nccl-burnin-%s-iso-%d-" % (run_id(1), entry["round"])) for name in entry["trainjobs"])
    # The node findings: fail for the culprit with its pair results as evidence, pass for the others.
    verdicts = result["node_verdicts"]
    assert verdicts[BAD_NODE]["verdict"] == "fail"
    assert all(verdicts[node]["verdict"] == "pass" for node in NODES if node != BAD_NODE)
    (culprit,) = [f for f in result["node_findings"] if f["stage"] == "isolation" and f["verdict"] == "fail"]
    pairs = culprit["evidence"]["pairs"]
    assert pairs and all(BAD_NODE in p["nodes"] for p in pairs)
    assert all(p["verdict"] == "fail" and p["busbw"] < 250 and p["trainjob"] for p in pairs)
    assert culprit["evidence"]["busbw"] < 250 and culprit["evidence"]["size"] > 0
    assert "isolation: bad node(s) %s" % BAD_NODE in result["reason"]
    assert "isolation found: %s" % BAD_NODE in proc.stdout
    # The pair jobs are deleted once read; the run's own TrainJob stays for the cleanup.
    names = trainjobs(state, CLUSTER)
    assert "nccl-burnin-%s" % run_id(1) in names and not [name for name in names if name.startswith("nccl-burnin-%s-iso-" % run_id(1))]


def test_a_passing_cluster_is_not_isolated(isolated):
    state, proc, summary = isolated
    assert summary[GOOD]["verdict"]["verdict"] == "pass"
    assert "isolation" not in summary[GOOD]
    assert proc.returncode == 2  # the failed cluster fails its host


def test_a_budget_of_one_job_says_it_ran_out_and_what_is_known(iso_fleet):
    state, work = iso_fleet
    proc, summary = run(state, work, PLAYBOOKS / "burnin.yml", run_id(2), "--limit", CLUSTER, "-e", "burnin_isolation_max_jobs=1")
    assert summary is not None, proc.stdout[-4000:]
    isolation = summary[CLUSTER]["isolation"]
    assert isolation["outcome"] == "budget_exhausted" and isolation["jobs"] == 1
    assert isolation["culprits"] == []
    assert isolation["good"] == NODES[:2] and isolation["unknown"] == NODES[2:]
    assert "ran out (1 job(s) of 1)" in isolation["reason"] and "not cleared: %s" % ", ".join(NODES[2:]) in isolation["reason"]


def test_a_bad_budget_is_refused_before_the_cluster_is_touched(iso_fleet):
    state, work = iso_fleet
    proc, summary = run(state, work, PLAYBOOKS / "burnin.yml", run_id(3), "--limit", CLUSTER, "-e", "burnin_isolation_max_jobs=0")
    assert proc.returncode != 0
    assert "burnin_isolation_max_jobs" in proc.stdout and "must be an integer from 1 to 1000" in proc.stdout
    assert "nccl-burnin-%s" % run_id(3) not in trainjobs(state, CLUSTER)


def test_check_mode_plans_the_first_round_and_applies_nothing(iso_fleet):
    state, work = iso_fleet
    playbook = work / "check.yml"
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "nccl-burnin-%s" % run_id(4), "namespace": NAMESPACE, "labels": {"gpufleet.burnin/run-id": run_id(4)}},
        "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "nccl-burnin-runtime"}, "trainer": {"numNodes": 4}},
    }
    result = {"verdict": {"verdict": "fail", "nodes": NODES}, "platform": "aws", "gpu_architecture": "h100", "gpus_per_node": 8}
    play = [
        {
            "hosts": CLUSTER,
            "gather_facts": False,
            "tasks": [
                {
                    "name": "Plan the isolation",
                    "gpufleet.burnin.burnin_isolate": {
                        "result": result,
                        "objects": [trainjob],
                        "kubeconfig": "{{ burnin_kubeconfig }}",
                        "context": "{{ burnin_context }}",
                    },
                    "register": "planned",
                },
                {"ansible.builtin.copy": {"content": "{{ planned | to_json }}", "dest": str(work / "planned.json")}, "check_mode": False},
            ],
        }
    ]
    playbook.write_text(yaml.safe_dump(play))
    proc, dummy = run(state, work, playbook, run_id(4), "--check")
    assert proc.returncode == 0, proc.stdout[-3000:]
    planned = json.loads((work / "planned.json").read_text())
    assert planned["changed"] is False and planned["conclusion"] is None
    (first,) = planned["rounds"]
    assert first["planned"] is True and first["pairs"] == [NODES[:2], NODES[2:]]
    assert first["trainjobs"] == ["nccl-burnin-%s-iso-1-0" % run_id(4), "nccl-burnin-%s-iso-1-1" % run_id(4)]
    assert not [name for name in trainjobs(state, CLUSTER) if name.startswith("nccl-burnin-%s" % run_id(4))]
