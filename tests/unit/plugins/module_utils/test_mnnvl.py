# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""MNNVL readiness before an MNNVL job (plugins/module_utils/cluster/mnnvl.py): GPU feature discovery's clique label
per node, on the test fleet's own Node objects (tests/fleet/fleet_nodes.py), and the stage runner reporting the
nodes instead of running the job (burnin/stage_run.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import sys

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.stage_run import run_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import isolation_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import mnnvl

HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location("stage_fakes", os.path.join(HERE, "stage_fakes.py"))
fakes = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fakes)
sys.path.insert(0, os.path.join(fakes.TESTS, "fleet"))
import fleet_nodes  # noqa: E402 pylint: disable=wrong-import-position


def nodes(gpu="gb200", count=4, unregistered=()):
    built = fleet_nodes.build_nodes("aws-gb", "aws", gpu, count, naming="indexed", unregistered=unregistered)
    return [dict(obj, status=status) for obj, status in built]


def names(objects):
    return [obj["metadata"]["name"] for obj in objects]


UUID = "6e7f5e5d-1b2c-4d5e-8f90-a1b2c3d4e5f6"


@pytest.mark.parametrize(
    "value, why",
    [
        (None, "no nvidia.com/gpu.clique label: GPU feature discovery has not seen the node's NVLink fabric registered"),
        ("00000000-0000-0000-0000-000000000000.1", "the fabric's cluster UUID is zero (not registered)"),
        (UUID + ".0", "clique id 0 (not registered)"),
        ("rack-1", "is not <cluster UUID>.<clique id>"),
        ("x" * 5000, "is not <cluster UUID>.<clique id>"),
    ],
)
def test_a_node_without_a_registered_fabric_says_why(value, why):
    labels = {} if value is None else {"nvidia.com/gpu.clique": value}
    domain, reason = mnnvl.node_fabric(labels)
    assert domain is None and why in reason and len(reason) < 300


def test_registered_nodes_are_grouped_by_nvlink_domain():
    assert mnnvl.node_fabric({"nvidia.com/gpu.clique": UUID + ".7"}) == (UUID + ".7", "")
    fleet = nodes(count=20)
    ready = mnnvl.readiness(fleet)
    assert ready["not_ready"] == [] and ready["ready"] == names(fleet)
    # 18 trays per NVL72 rack: two domains
    assert sorted(len(members) for members in ready["domains"].values()) == [2, 18]


def test_the_unregistered_node_is_named_and_cpu_nodes_are_not_judged():
    fleet = nodes(unregistered=["aws-gb-gpu-2"])
    cpu = {"metadata": {"name": "system-0", "labels": {}}, "status": {"capacity": {"cpu": "8"}}}
    ready = mnnvl.readiness(fleet + [cpu])
    assert ready["ready"] == ["aws-gb-gpu-0", "aws-gb-gpu-1", "aws-gb-gpu-3"]
    assert [item["node"] for item in ready["not_ready"]] == ["aws-gb-gpu-2"]
    verdict = mnnvl.readiness_verdict(ready)
    assert verdict["verdict"] == "fail" and verdict["failed_nodes"] == ["aws-gb-gpu-2"]
    assert verdict["reason"].startswith("MNNVL not ready, the job was not run (it would fall back to the network or hang): node aws-gb-gpu-2: no ")
    assert [(f["node"], f["stage"], f["verdict"]) for f in verdict["findings"]] == [("aws-gb-gpu-2", "fleet", "fail")]


def fleet_run(cluster_nodes, mnnvl_on=True, gpu="gb200"):
    variables = fakes.checked(burnin_gpu_architecture=gpu, burnin_enable_mnnvl=mnnvl_on, burnin_image="registry.example.com/nccl-tests:arm64")
    cluster = fakes.FakeCluster(lambda trainjob, objects: ("Complete",) + fakes.fleet_pods(trainjob, objects, "good"))
    settings = {
        "namespace": fakes.NAMESPACE,
        "timeout": 600,
        "nodes": 2,
        "mnnvl": mnnvl_on,
        "cluster_nodes": cluster_nodes,
        "cluster": "aws-gb",
        "thresholds": variables["burnin_thresholds"],
    }
    return cluster, run_stage(cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings=settings)


def test_an_mnnvl_fleet_stage_with_an_unregistered_node_reports_it_and_runs_no_job():
    cluster, out = fleet_run(nodes(unregistered=["aws-gb-gpu-2"]))
    assert [call[0] for call in cluster.calls] == []  # nothing applied, nothing waited for
    record = out["record"]
    assert record["verdict"]["verdict"] == "fail" and "node aws-gb-gpu-2: no nvidia.com/gpu.clique label" in record["reason"]
    assert record["node_verdicts"]["aws-gb-gpu-2"]["verdict"] == "fail"
    assert record["stages"][-1]["attempts"][-1]["outcome"] == "NotRun"
    # the isolation does not chase the fabric of a job that never ran
    assert "MNNVL was not ready" in isolation_stage.needed(record, {"wait": True, "collect_logs": True})


def test_registered_nodes_or_no_mnnvl_run_the_job():
    for cluster_nodes, on in ((nodes(), True), (nodes(unregistered=["aws-gb-gpu-2"]), False)):
        cluster, out = fleet_run(cluster_nodes, mnnvl_on=on)
        assert [call[0] for call in cluster.calls][:2] == ["apply", "wait"], cluster.calls


# What the mutation run of cluster/mnnvl.py (issue 47) found untested.


def not_ready(count):
    return {"ready": [], "not_ready": [{"node": "gb-%d" % i, "reason": "why-%d" % i} for i in range(count)], "domains": {}}


@pytest.mark.parametrize("count, named, more", [(1, 1, None), (15, 15, None), (16, 16, None), (17, 16, 1), (40, 16, 24)])
def test_the_reason_names_at_most_sixteen_nodes_and_counts_the_others(count, named, more):
    verdict = mnnvl.readiness_verdict(not_ready(count))
    reason = verdict["reason"]
    parts = reason.split("hang): ", 1)[1].split("; ")
    assert [part for part in parts if part.startswith("node ")] == ["node gb-%d: why-%d" % (i, i) for i in range(named)]
    if more is None:
        assert " more" not in reason
    else:
        assert reason.endswith("; and %d more" % more)
    # every node is still a finding and a failed node, named or not
    assert verdict["failed_nodes"] == ["gb-%d" % i for i in range(count)] and len(verdict["findings"]) == count


def test_a_readiness_verdict_counts_the_nodes_and_no_nccl_warnings():
    ready = {"ready": ["a", "b"], "not_ready": [{"node": "c", "reason": "no label"}], "domains": {UUID + ".1": ["a", "b"]}}
    verdict = mnnvl.readiness_verdict(ready, stage="isolation", workload="nccl")
    assert verdict["warnings"] == 0 and verdict["problems"] == [] and verdict["errors"] == []
    assert verdict["metrics"] == {"nodes_ready": 2, "nodes_not_ready": 1, "nvlink_domains": 1}
    assert verdict["checks"] == [{"name": "mnnvl", "verdict": "fail", "node": "c", "reason": "node c: no label"}]
    assert verdict["workload"] == "nccl" and verdict["findings"][0]["stage"] == "isolation"


def test_a_long_label_value_is_quoted_in_its_first_hundred_characters():
    _domain, reason = mnnvl.node_fabric({"nvidia.com/gpu.clique": "y" * 99 + "z" + "w" * 10})
    assert ("=%r is" % ("y" * 99 + "z")) in reason and "w" not in reason
    _domain, reason = mnnvl.node_fabric({"nvidia.com/gpu.clique": "y" * 98 + "z"})
    assert ("=%r is" % ("y" * 98 + "z")) in reason


def test_cpu_nodes_before_the_gpu_nodes_do_not_end_the_read():
    cpu = {"metadata": {"name": "system-0", "labels": {}}, "status": {"capacity": {"cpu": "8"}}}
    fleet = nodes(count=3)
    ready = mnnvl.readiness([cpu, cpu] + fleet + [cpu])
    assert ready["ready"] == names(fleet)


def test_a_gpu_node_without_a_name_is_named_by_its_index():
    fleet = nodes(count=2, unregistered=["aws-gb-gpu-1"])
    for obj in fleet:
        del obj["metadata"]["name"]
    ready = mnnvl.readiness(fleet)
    assert ready["ready"] == ["node-0"] and [item["node"] for item in ready["not_ready"]] == ["node-1"]


def test_at_most_4096_nodes_are_read():
    gpu = {"metadata": {"labels": {"nvidia.com/gpu.product": "NVIDIA-GB200", "nvidia.com/gpu.clique": UUID + ".1"}}}
    for count, read in ((4095, 4095), (4096, 4096), (4097, 4096)):
        fleet = [dict(gpu, metadata=dict(gpu["metadata"], name="n%d" % i)) for i in range(count)]
        ready = mnnvl.readiness(fleet)
        assert len(ready["ready"]) == read and ready["ready"][-1] == "n%d" % (read - 1)
        assert ready["domains"] == {UUID + ".1": ["n%d" % i for i in range(read)]}
