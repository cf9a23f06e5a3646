# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding, from_verdict, nodes_with, summarize, with_findings


def test_a_node_is_the_worst_of_its_findings_and_says_why():
    summary = summarize(
        [
            finding("n1", "node", "pass", "all_reduce 480 GB/s"),
            finding("n1", "isolation", "fail", "pair n1+n3 at 12 GB/s"),
            finding("n2", "node", "warn", "all_reduce 410 GB/s, in the warning band"),
        ]
    )
    assert dict((key, summary["n1"][key]) for key in ("verdict", "reasons", "stages", "severity", "action")) == {
        "verdict": "fail",
        "reasons": ["isolation: pair n1+n3 at 12 GB/s"],
        "stages": ["isolation", "node"],
        # The isolation's culprit: judging/actions.py, _lib/actions.yaml isolation_culprit.
        "severity": "critical",
        "action": "drain",
    }
    assert summary["n2"]["verdict"] == "warn" and nodes_with(summary, "fail") == ["n1"]


def test_a_verdict_names_failed_nodes_and_judges_the_others_only_when_it_did_not_fail():
    verdict = {
        "verdict": "fail",
        "reason": "busbw below",
        "failed_nodes": ["b"],
        "succeeded_nodes": ["a"],
        "pods": [{"name": "job-node-0-1", "node": "b", "status": "failed", "reasons": ["exited on signal 9"]}],
    }
    found = from_verdict(verdict)
    assert [(item["node"], item["verdict"]) for item in found] == [("b", "fail")]
    assert found[0]["reason"] == "job-node-0-1: exited on signal 9"
    passed = from_verdict(dict(verdict, verdict="warn", failed_nodes=[], pods=[]))
    assert [(item["node"], item["verdict"]) for item in passed] == [("a", "warn")]


def test_a_stage_reporting_again_replaces_its_earlier_findings():
    first = with_findings({}, [finding("a", "fleet", "fail", "slow")])
    again = with_findings(dict(first), [finding("a", "fleet", "pass", "fast")])
    assert [item["verdict"] for item in again["node_findings"]] == ["pass"] and again["node_verdicts"]["a"]["verdict"] == "pass"


@pytest.mark.parametrize("verdict", ["error", "ok", None])
def test_a_finding_is_pass_warn_or_fail(verdict):
    with pytest.raises(ConfigError, match="pass, warn, fail"):
        finding("a", "node", verdict, "why")


# What the mutation run of judging/node_findings.py (docs/mutation.md) found untested.


def runtime(text):
    # a string built at run time, as from Ansible's facts: equal to the module's literal, not the same object
    return "".join(list(text))


def test_the_evidence_is_the_peak_check_and_not_the_checks_before_it():
    verdict = {
        "verdict": "pass",
        "succeeded_nodes": ["a"],
        "checks": [
            {"name": "range", "value": 10.0, "size": 1024},  # sorts after "peak"
            {"name": "avg", "value": 20.0, "size": 2048},  # sorts before "peak"
            {"name": runtime("peak"), "value": 480, "size": 8589934592},
        ],
    }
    assert from_verdict(verdict)[0]["evidence"] == {"busbw": 480.0, "size": 8589934592}


def test_a_peak_check_without_a_positive_size_is_no_evidence():
    for size in (0, -1, None, "8G"):
        verdict = {"verdict": "pass", "succeeded_nodes": ["a"], "checks": [{"name": "peak", "value": 480.0, "size": size}]}
        assert from_verdict(verdict)[0]["evidence"] == {}, size
    verdict = {"verdict": "pass", "succeeded_nodes": ["a"], "checks": [{"name": "peak", "value": True, "size": 1024}]}
    assert from_verdict(verdict)[0]["evidence"] == {}


def test_only_the_failed_pods_of_a_failed_node_give_its_reasons():
    verdict = {
        "verdict": "fail",
        "failed_nodes": ["b"],
        "pods": [
            {"name": "job-node-0-0", "node": "b", "status": "succeeded", "reasons": ["ran to the end"]},
            {"name": "job-node-0-1", "node": "b", "status": "running", "reasons": ["still running"]},
            {"name": "job-node-0-2", "node": "b", "status": "failed", "reasons": ["exited on signal 9"]},
        ],
    }
    found = from_verdict(verdict)
    assert found[0]["reason"] == "job-node-0-2: exited on signal 9"
    assert found[0]["evidence"] == {"pods": ["job-node-0-2: exited on signal 9"]}


def test_the_reasons_put_the_worst_finding_first_whatever_the_order_they_came_in():
    summary = summarize(
        [
            finding("n1", "node", "warn", "all_reduce 410 GB/s"),
            finding("n1", "dcgm", "pass", "diag passed"),
            finding("n1", "isolation", "fail", "pair n1+n3 at 12 GB/s"),
        ]
    )
    assert summary["n1"]["reasons"] == ["isolation: pair n1+n3 at 12 GB/s", "node: all_reduce 410 GB/s"]


def test_a_pass_finding_gives_no_reason_even_as_a_string_built_at_run_time():
    summary = summarize([finding("n1", "node", runtime("pass"), "all_reduce 480 GB/s"), finding("n1", "dcgm", "warn", "a GPU warned")])
    assert summary["n1"]["reasons"] == ["dcgm: a GPU warned"]


def test_nodes_with_a_verdict_are_exactly_those_of_that_verdict():
    summary = summarize([finding("a", "node", "fail", "x"), finding("b", "node", "warn", "y"), finding("c", "node", "pass", "z")])
    assert nodes_with(summary, "pass") == ["c"]
    assert nodes_with(summary, "warn") == ["b"]
    assert nodes_with(summary, "fail") == ["a"]
