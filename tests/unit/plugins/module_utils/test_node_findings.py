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
    assert summary["n1"] == {"verdict": "fail", "reasons": ["isolation: pair n1+n3 at 12 GB/s"], "stages": ["isolation", "node"]}
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
