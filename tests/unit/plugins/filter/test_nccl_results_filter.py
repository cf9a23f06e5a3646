# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Filters nccl_results, burnin_verdict and burnin_workload."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.filter import burnin_verdict, burnin_workload, nccl_results

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "nccl")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def test_each_file_exports_exactly_its_filter():
    assert list(nccl_results.FilterModule().filters()) == ["nccl_results"]
    assert list(burnin_verdict.FilterModule().filters()) == ["burnin_verdict"]
    assert list(burnin_workload.FilterModule().filters()) == ["burnin_workload"]


def test_nccl_results():
    result = nccl_results.nccl_results_filter(fixture("v2.16-all-gather-2x8-h200-nccl2.27.log"))
    assert result["collective"] == "all_gather" and result["peak_busbw"] == 328.92 and result["complete"] is True
    two = nccl_results.nccl_results_filter(fixture("v2.16-two-tests-4x4-gb200.log"), "all_gather")
    assert two["collective"] == "all_gather"
    partial = nccl_results.nccl_results_filter(fixture("v2.16-all-reduce-truncated-no-footer.log"), allow_partial=True)
    assert partial["complete"] is False and len(partial["rows"]) == 20


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        (("v2.16-all-reduce-truncated-mid-row.log",), {}, r"^gpufleet.burnin.nccl_results: nccl-tests output line 65: truncated"),
        (("v2.16-all-reduce-malformed.log",), {}, r"^gpufleet.burnin.nccl_results: nccl-tests output line 40: column 'busbw'"),
        (("v2.16-two-tests-4x4-gb200.log",), {}, r"^gpufleet.burnin.nccl_results: collective: the output holds 2 tests"),
        (("v2.16-all-reduce-truncated.json",), {}, r"^gpufleet.burnin.nccl_results: nccl-tests output \(JSON\) line 1: not valid JSON"),
        (("v2.16-all-gather-2x8-h200-nccl2.27.log",), {"allow_partial": "yes"}, r"^gpufleet.burnin.nccl_results: allow_partial: "),
        (("v2.16-all-gather-2x8-h200-nccl2.27.log",), {"collective": 5}, r"^gpufleet.burnin.nccl_results: collective: "),
    ],
)
def test_nccl_results_errors_name_the_field_or_line(args, kwargs, message):
    with pytest.raises(AnsibleFilterError, match=message):
        nccl_results.nccl_results_filter(fixture(args[0]), **kwargs)
    with pytest.raises(AnsibleFilterError, match=r"^gpufleet.burnin.nccl_results: output: "):
        nccl_results.nccl_results_filter(None)


def test_burnin_verdict():
    result = burnin_verdict.burnin_verdict_filter(
        fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"),
        workload="nccl-all-reduce",
        collective="all_reduce",
        platform="aws",
        gpu_architecture="h100",
        nodes="2",
        gpus_per_node=8,
        mnnvl=False,
        job_outcome="Complete",
    )
    assert result["verdict"] == "pass" and result["workload"] == "nccl-all-reduce" and result["facts"]["nodes"] == 2
    assert "attribution" not in result
    stricter = burnin_verdict.burnin_verdict_filter(
        fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"),
        collective="all_reduce",
        platform="aws",
        gpu_architecture="h100",
        nodes=2,
        gpus_per_node=8,
        overrides=[{"platform": "aws", "collective": "all_reduce", "metric": "peak", "pass": 450}],
        pods=[],
    )
    assert stricter["verdict"] == "fail" and stricter["failed_nodes"] == [] and stricter["nodes"] == []
    broken = burnin_verdict.burnin_verdict_filter(fixture("v2.16-all-reduce-malformed.log"), collective="all_reduce")
    assert broken["verdict"] == "error" and "line 40" in broken["reason"]
    smoke = burnin_verdict.burnin_verdict_filter(None, workload="torch-smoke", job_outcome="Failed", job_reason="exit 1")
    assert smoke["verdict"] == "fail" and smoke["reason"] == "TrainJob Failed: exit 1"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"nodes": "two"}, "nodes: must be an integer"),
        ({"mnnvl": "yes"}, "mnnvl: must be true or false"),
        ({"overrides": {"pass": 1}}, "overrides: must be a list"),
        ({"thresholds": []}, "thresholds: must be a dict"),
        ({"pods": "p"}, "pods: must be a list"),
        ({"overrides": [{"collective": "all_reduce"}]}, r"overrides.thresholds\[0\]: needs 'pass'"),
        ({"on_missing": "skip"}, "on_missing: must be pass, warn or fail"),
        ({"pod_logs": "x", "pods": []}, "pod_logs: must be the results"),
    ],
)
def test_burnin_verdict_errors_name_the_field(kwargs, message):
    with pytest.raises(AnsibleFilterError, match="^gpufleet.burnin.burnin_verdict: %s" % message):
        burnin_verdict.burnin_verdict_filter(fixture("v2.16-all-reduce-2x8-h100.json"), **kwargs)


def test_burnin_workload():
    rendered = burnin_workload.burnin_workload_filter("nccl-all-reduce", "2", 8, "aws", "h100", params={"max_bytes": "8G"})
    assert rendered["workload"] == "nccl-all-reduce" and "8G" in rendered["trainer"]["args"]
    with pytest.raises(AnsibleFilterError, match="^gpufleet.burnin.burnin_workload: workload: unknown workload 'x'; available: dcgm-diag, exec-example"):
        burnin_workload.burnin_workload_filter("x", 2, 8)
    with pytest.raises(AnsibleFilterError, match="^gpufleet.burnin.burnin_workload: params: must be a mapping"):
        burnin_workload.burnin_workload_filter("exec-example", 2, 8, params=[])
    with pytest.raises(AnsibleFilterError, match="^gpufleet.burnin.burnin_workload: gpus_per_node: must be an integer"):
        burnin_workload.burnin_workload_filter("exec-example", 2, "eight")
    with pytest.raises(AnsibleFilterError, match="^gpufleet.burnin.burnin_workload: data.image: "):
        burnin_workload.burnin_workload_filter("nccl-all-gather", 2, 4, "gcp", "gb200")


def test_burnin_verdict_transport_proof():
    with open(os.path.join(FIXTURES, "transport", "aws-h100-socket-fallback.log")) as handle:
        text = handle.read()
    result = burnin_verdict.burnin_verdict_filter(
        text, collective="all_reduce", platform="aws", gpu_architecture="h100", nodes=2, gpus_per_node=8, mnnvl=False, instance_type="p5.48xlarge"
    )
    assert result["verdict"] == "fail" and result["transport"]["expected"] == "efa" and result["transport"]["seen"] == "socket"
    assert "shapes.p5.48xlarge, the instance type" in result["transport"]["expected_source"]
    given = burnin_verdict.burnin_verdict_filter(text, collective="all_reduce", platform="aws", gpu_architecture="h100", nodes=2, expected_transport="socket")
    assert given["transport"]["verdict"] == "pass"
    with pytest.raises(AnsibleFilterError, match="expected_transport"):
        burnin_verdict.burnin_verdict_filter(text, collective="all_reduce", expected_transport="pigeon")
