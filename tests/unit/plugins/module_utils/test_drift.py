# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Configuration drift (plugins/module_utils/judging/drift.py): Node objects through detection into the report."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import recorded_detection
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import detect
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report as rp

GENERATED = "2026-01-01T00:00:00Z"


def node(name, driver=("570", "148", "08"), kernel="6.8.0-1015-aws", full=None):
    labels = {
        "kubernetes.io/hostname": name,
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "nvidia.com/cuda.driver.major": driver[0],
        "nvidia.com/cuda.driver.minor": driver[1],
        "nvidia.com/cuda.driver.rev": driver[2],
        "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/cuda.runtime.minor": "8",
    }
    if full:
        labels["nvidia.com/cuda.driver-version.full"] = full
    info = {"kubeletVersion": "v1.33.5-eks-1", "kernelVersion": kernel, "osImage": "Amazon Linux 2023", "containerRuntimeVersion": "containerd://1.7.27"}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"providerID": "aws:///us-east-1a/" + name},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "nodeInfo": dict(info, bootID="x", machineID="y")},
    }


def cluster(nodes):
    # What the role records of detection (cluster_detect keeps node_evidence of each Node).
    detection = detect.check_cluster([detect.node_evidence(item) for item in nodes], "aws", "h100")
    return dict(recorded_detection(detection), outcome="Succeeded", stages=[])


def fleet(skewed="b-1"):
    results = {}
    for name in ("a", "b"):
        nodes = [node("%s-%d" % (name, index)) for index in range(3)]
        results[name] = cluster([node(item["metadata"]["name"], driver=("570", "124", "06")) if item["metadata"]["name"] == skewed else item for item in nodes])
    return results


def test_node_config_reads_gfd_labels_and_node_info():
    assert drift.node_config(node("n")) == {
        "driver": "570.148.08",
        "cuda": "12.8",
        "kubelet": "v1.33.5-eks-1",
        "kernel": "6.8.0-1015-aws",
        "os_image": "Amazon Linux 2023",
        "container_runtime": "containerd://1.7.27",
    }
    # Newer GFD's full version label wins over the parts.
    assert drift.node_config(node("n", full="575.51.03"))["driver"] == "575.51.03"
    assert drift.node_config({"metadata": {"labels": "x"}, "status": {"nodeInfo": []}}) == {}


def test_a_driver_skew_is_named_against_the_sku_majority_across_clusters():
    judged = drift.judge(fleet())
    (row,) = judged["nodes"]
    assert (row["cluster"], row["node"], row["key"], row["value"], row["majority"], row["verdict"]) == (
        "b",
        "b-1",
        "driver",
        "570.124.06",
        "570.148.08",
        "warn",
    )
    assert "differs from the majority 570.148.08 of SKU aws/h100/p5.48xlarge (5 of 6 nodes)" in row["why"]
    driver = [item for item in judged["skus"] if item["key"] == "driver"][0]
    assert driver["counts"] == {"570.148.08": 5, "570.124.06": 1} and driver["nodes"] == 6


def test_the_golden_file_names_a_version_it_does_not_allow(tmp_path):
    golden = tmp_path / "golden.yml"
    golden.write_text("aws/h100:\n  driver: ['570.148.*']\n'*':\n  kubelet: ['v1.33.*']\n")
    judged = drift.judge(fleet(), golden=drift.load_golden(str(golden)), fail_keys=["driver"])
    (row,) = judged["nodes"]
    assert row["node"] == "b-1" and row["verdict"] == "fail" and "is not in the golden versions 570.148.* for SKU aws/h100/p5.48xlarge" in row["why"]
    assert "differs from the majority" in row["why"]
    # A golden file alone names every node of a SKU that runs a version it does not allow, with no majority needed.
    judged = drift.judge(fleet(skewed=""), golden={"aws": {"kernel": ["6.9.*"]}})
    assert len(judged["nodes"]) == 6 and all("is not in the golden versions 6.9.*" in row["why"] for row in judged["nodes"])


def test_the_report_shows_drift_per_cluster_and_fleet_wide():
    report = rp.build_report(fleet(), generated=GENERATED)
    b = [item for item in report["clusters"] if item["cluster"] == "b"][0]
    case = [case for case in b["testcases"] if case["workload"] == "drift"][0]
    assert case["verdict"] == "warn" and "b-1: driver 570.124.06 differs" in case["reason"]
    assert b["verdict"] == "warn" and b["action_rule"] == "config_drift_warn" and b["action"] == "retest"
    row = [row for row in b["nodes"] if row["node"] == "b-1"][0]
    assert row["verdict"] == "warn" and "drift" in row["stages"] and row["action_rule"] == "config_drift_warn"
    a = [item for item in report["clusters"] if item["cluster"] == "a"][0]
    assert [case["verdict"] for case in a["testcases"] if case["workload"] == "drift"] == ["pass"]
    assert [row["node"] for row in report["drift"]["nodes"]] == ["b-1"]
    schema = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "docs", "verdict-schema.json")))
    import jsonschema

    jsonschema.validate(json.loads(rp.render_json(report)), schema)


@pytest.mark.parametrize(
    "value, field",
    [
        ({"aws": {"firmware": ["1"]}}, "burnin_golden.aws.firmware"),
        ({"aws": {"driver": []}}, "burnin_golden.aws.driver"),
        ({"aws": "570"}, "burnin_golden.aws"),
        (["570"], "burnin_golden"),
    ],
)
def test_a_bad_golden_file_names_the_field(value, field):
    with pytest.raises(ConfigError) as caught:
        drift.check_golden(value)
    assert caught.value.args[0] == field or field in str(caught.value)


def test_a_golden_path_that_cannot_be_read_names_the_variable(tmp_path):
    with pytest.raises(ConfigError) as caught:
        drift.load_golden(str(tmp_path / "missing.yml"))
    assert "burnin_golden" in str(caught.value)
    with pytest.raises(ConfigError):
        drift.check_fail_keys(["firmware"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["570.148.08", "570.124.06", "575.51.03"]), min_size=1, max_size=15))
def test_only_nodes_unlike_a_strict_majority_drift(drivers):
    nodes = [node("n%02d" % index, driver=tuple(value.split("."))) for index, value in enumerate(drivers)]
    judged = drift.judge({"a": cluster(nodes)})
    counts = dict((value, drivers.count(value)) for value in drivers)
    top, many = max(counts.items(), key=lambda item: item[1])
    named = sorted(row["node"] for row in judged["nodes"] if row["key"] == "driver")
    if many * 2 > len(drivers):
        assert named == sorted("n%02d" % index for index, value in enumerate(drivers) if value != top)
    else:
        assert named == []
