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


AWS_H100 = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8}


def test_burnin_verdict():
    result = burnin_verdict.burnin_verdict_filter(
        fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"),
        facts=dict(AWS_H100, nodes="2", mnnvl=False),
        job={"outcome": "Complete"},
        judging={"workload": "nccl-all-reduce", "collective": "all_reduce"},
    )
    assert result["verdict"] == "pass" and result["workload"] == "nccl-all-reduce" and result["facts"]["nodes"] == 2
    assert "attribution" not in result
    stricter = burnin_verdict.burnin_verdict_filter(
        fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"),
        facts=AWS_H100,
        job={"pods": []},
        judging={"collective": "all_reduce", "overrides": [{"platform": "aws", "collective": "all_reduce", "metric": "peak", "pass": 450}]},
    )
    assert stricter["verdict"] == "fail" and stricter["failed_nodes"] == [] and stricter["nodes"] == []
    missing = burnin_verdict.burnin_verdict_filter(
        fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"),
        facts={"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 5},
        judging={"collective": "all_reduce", "on_missing": "fail"},
    )
    assert missing["verdict"] == "fail"
    unmatched = burnin_verdict.burnin_verdict_filter(
        fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"), facts=dict(AWS_H100, gpus_per_node=5), judging={"collective": "all_reduce"}
    )
    assert unmatched["verdict"] == "warn"
    broken = burnin_verdict.burnin_verdict_filter(fixture("v2.16-all-reduce-malformed.log"), judging={"collective": "all_reduce"})
    assert broken["verdict"] == "error" and "line 40" in broken["reason"]
    strict = burnin_verdict.burnin_verdict_filter(fixture("v2.16-all-reduce-malformed.log"), judging={"collective": "all_reduce", "allow_partial": False})
    assert strict != broken
    smoke = burnin_verdict.burnin_verdict_filter(None, job={"outcome": "Failed", "reason": "exit 1"}, judging={"workload": "torch-smoke"})
    assert smoke["verdict"] == "fail" and smoke["reason"] == "TrainJob Failed: exit 1"
    # Empty strings are unset, as the role passes them for a workload without a collective.
    unset = burnin_verdict.burnin_verdict_filter(None, facts={"platform": "", "nodes": ""}, job={"outcome": "Complete"}, judging={"collective": ""})
    assert unset["verdict"] == "pass" and unset["facts"]["nodes"] is None


def test_burnin_verdict_core_arguments_are_verdict_fors_keywords():
    """Every sub-option reaches verdict_for under its name there: the mappings are the one parameter list."""
    import inspect

    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for

    arguments = burnin_verdict.core_arguments()
    keywords = set(inspect.signature(verdict_for).parameters) - {"output"}
    assert set(arguments) == keywords
    assert sorted(arguments["facts"]) == sorted(burnin_verdict.options()["facts"])
    documented = sum(len(group) for group in burnin_verdict.options().values())
    assert documented == sum(len(arguments[group]) for group in arguments) == 19
    judging = arguments["judging"]
    assert judging["on_missing"] == "warn" and judging["allow_partial"] is True and judging["overrides"] is None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"facts": {"nodes": "two"}}, "facts.nodes: must be an integer"),
        ({"facts": {"nodes": True}}, "facts.nodes: must be an integer"),
        ({"facts": {"mnnvl": "yes"}}, "facts.mnnvl: must be true or false"),
        ({"facts": {"platform": 3}}, "facts.platform: must be a string, got int"),
        ({"facts": {"gpu": "h100"}}, "facts: unknown key gpu; allowed: gpu_architecture, gpus_per_node, instance_type, mnnvl, nodes, platform$"),
        ({"job": {"state": "x", "logs": 1}}, "job: unknown keys logs, state; allowed: outcome, pod_logs, pods, reason$"),
        ({"judging": {"pass": 1}}, "judging: unknown key pass; allowed: allow_partial, collective, expected_transport, on_missing, overrides, results, "),
        ({"facts": ["aws"]}, "facts: must be a mapping of gpu_architecture, gpus_per_node, instance_type, mnnvl, nodes, platform, got list"),
        ({"judging": {"overrides": {"pass": 1}}}, "judging.overrides: must be a list"),
        ({"judging": {"overrides": ["peak"]}}, "judging.overrides: must be a list of dicts"),
        ({"judging": {"thresholds": []}}, "judging.thresholds: must be a dict"),
        ({"job": {"pods": "p"}}, "job.pods: must be a list"),
        ({"judging": {"overrides": [{"collective": "all_reduce"}]}}, r"overrides.thresholds\[0\]: needs 'pass'"),
        ({"judging": {"on_missing": "skip"}}, "judging.on_missing: must be one of pass, warn, fail, got 'skip'"),
        ({"judging": {"allow_partial": "no"}}, "judging.allow_partial: must be true or false"),
        ({"judging": {"sibling_percent": "ten"}}, "judging.sibling_percent: must be a number, got 'ten'"),
        ({"judging": {"sibling_percent": True}}, "judging.sibling_percent: must be a number, got True"),
        ({"job": {"pod_logs": "x", "pods": []}}, "pod_logs: must be the results"),
        # 0.2.0's keyword arguments name where they went.
        ({"platform": "aws"}, r"platform: not an argument; burnin_verdict takes facts, job and judging \(use facts.platform\)$"),
        ({"job_outcome": "Complete"}, r"job_outcome: not an argument; burnin_verdict takes facts, job and judging \(use job.outcome\)$"),
        ({"pods": []}, r"pods: not an argument; .* \(use job.pods\)$"),
        ({"on_missing": "warn"}, r"on_missing: not an argument; .* \(use judging.on_missing\)$"),
        ({"colour": "red"}, "colour: not an argument; burnin_verdict takes facts, job and judging$"),
    ],
)
def test_burnin_verdict_errors_name_the_field(kwargs, message):
    with pytest.raises(AnsibleFilterError, match="^gpufleet.burnin.burnin_verdict: %s" % message):
        burnin_verdict.burnin_verdict_filter(fixture("v2.16-all-reduce-2x8-h100.json"), **kwargs)


def test_burnin_verdict_passes_the_gpu_burn_sibling_percent():
    prefix = "# gpufleet-burnin gpu-burn on n0:"
    figures = [795.0] * 7 + [739.4]  # 7 % below the median: passes the default 10 %, fails 5 %
    text = "\n".join(["%s gpu %d uuid GPU-%d tflops %.1f gbps 2500.0 errors 0" % (prefix, index, index, value) for index, value in enumerate(figures)])
    facts = {"platform": "aws", "gpu_architecture": "h100", "nodes": 1, "gpus_per_node": 8}
    assert burnin_verdict.burnin_verdict_filter(text, facts=facts, judging={"results": "gpu-burn"})["verdict"] == "pass"
    for value in (5, "5", 5.0):
        assert burnin_verdict.burnin_verdict_filter(text, facts=facts, judging={"results": "gpu-burn", "sibling_percent": value})["verdict"] == "fail"
    with pytest.raises(AnsibleFilterError, match="^gpufleet.burnin.burnin_verdict: sibling_percent: must be a number above 0 and below 100, got 100.0"):
        burnin_verdict.burnin_verdict_filter(text, facts=facts, judging={"results": "gpu-burn", "sibling_percent": 100})


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
    result = burnin_verdict.burnin_verdict_filter(text, facts=dict(AWS_H100, mnnvl=False, instance_type="p5.48xlarge"), judging={"collective": "all_reduce"})
    assert result["verdict"] == "fail" and result["transport"]["expected"] == "efa" and result["transport"]["seen"] == "socket"
    assert "shapes.p5.48xlarge, the instance type" in result["transport"]["expected_source"]
    given = burnin_verdict.burnin_verdict_filter(
        text, facts={"platform": "aws", "gpu_architecture": "h100", "nodes": 2}, judging={"collective": "all_reduce", "expected_transport": "socket"}
    )
    assert given["transport"]["verdict"] == "pass"
    with pytest.raises(AnsibleFilterError, match="expected_transport"):
        burnin_verdict.burnin_verdict_filter(text, judging={"collective": "all_reduce", "expected_transport": "pigeon"})
