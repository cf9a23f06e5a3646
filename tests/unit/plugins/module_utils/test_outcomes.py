# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The one pass/fail rule and the fleet summary built on it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import applied_record, apply_results, failure_of, judged_record
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import dcgm, gpu, nccl_judge, verdict
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import SEVERITY, VERDICTS, cluster_passed, fleet_summary, verdict_of, worst


def result(cluster, outcome, verdict=None, reason="", trainjob=True):
    out = {"cluster": cluster, "outcome": outcome, "reason": reason, "platform": "aws", "gpu_architecture": "h100"}
    if trainjob:
        out.update(namespace="burnin", trainjob="nccl-1")
    if verdict:
        out["verdict"] = {"verdict": verdict, "reason": "busbw %s" % verdict}
    return out


@pytest.mark.parametrize(
    "outcome, verdict, passed",
    [
        ("Complete", None, True),
        ("Complete", "pass", True),
        ("Complete", "warn", True),
        ("Complete", "fail", False),
        ("Complete", "error", False),
        # Succeeded was missing from the role's list while the reports had it: one list now.
        ("Succeeded", None, True),
        ("Checked", None, True),
        ("Applied", None, True),
        ("Cleaned", None, True),
        ("Failed", None, False),
        ("Mismatch", None, False),
        ("Timeout", "error", False),
        ("Unreachable", None, False),
        ("Pending", None, False),
        ("Error", None, False),
    ],
)
def test_the_rule(outcome, verdict, passed):
    assert cluster_passed(result("c", outcome, verdict)) is passed


def test_the_summary_names_failed_and_warned_clusters_and_the_reports():
    summary = fleet_summary(
        {
            "b": result("b", "Complete", "warn"),
            "a": result("a", "Complete", "pass"),
            "c": dict(result("c", "Failed", "fail", reason="verdict fail: busbw 3 GB/s"), action="drain"),
            "d": result("d", "Pending", reason="in a later serial batch", trainjob=False),
            "e": result("e", "Unreachable", reason="Unreachable: Cannot reach https://x", trainjob=False),
        },
        "burn-in",
        "r1",
        reports="/tmp/reports/r1",
    )
    assert summary["header"] == ("burn-in r1: 2 of 5 clusters passed, 2 failed: c, e; 1 with warnings: b; " "reports in /tmp/reports/r1")
    assert [line.split()[0] for line in summary["lines"]] == ["ok", "ok", "FAIL", "..", "FAIL"]
    assert summary["lines"][0] == "%-4s %-28s %-16s %-11s %-5s %-9s %s" % ("ok", "a", "aws/h100", "Complete", "pass", "-", "burnin/nccl-1: busbw pass")
    # What to do now, beside why: the cluster's recommended action (judging/actions.py), "-" when there is none.
    assert summary["lines"][2].endswith("Failed      fail  drain     verdict fail: busbw 3 GB/s")
    assert summary["passed"] == ["a", "b"] and summary["failed"] == ["c", "e"] and summary["warned"] == ["b"]


def test_the_summary_names_the_baseline_and_the_regressed_clusters():
    results = {"a": result("a", "Complete", "pass"), "b": result("b", "Complete", "pass")}
    header = fleet_summary(results, "burn-in", "r2", baseline={"run_id": "r1", "regressed_clusters": ["b"]})["header"]
    assert header == "burn-in r2: 2 of 2 clusters passed, 0 failed; vs baseline run r1: 1 regressed (warn): b"
    assert fleet_summary(results, "burn-in", "r2", baseline={"run_id": "r1", "regressed_clusters": []})["header"].endswith("r1: no regression")
    assert fleet_summary(results, "burn-in", "r2", baseline={"run_id": None, "note": "none"})["header"].endswith("0 failed")


def test_the_summary_compares_strings_by_value_not_identity():
    # The results reach the summary through Ansible's facts (JSON): their strings are not the interned literals of
    # the module, so an `is "warn"` or `is PENDING` would miss them.
    results = json.loads(
        json.dumps(
            {"b": result("b", "Complete", "warn"), "d": result("d", "Pending", reason="later batch", trainjob=False), "e": result("e", "Failed", "fail")}
        )
    )
    summary = fleet_summary(results, "burn-in", "r1")
    assert summary["warned"] == ["b"] and summary["failed"] == ["e"]
    assert [line.split()[0] for line in summary["lines"]] == ["ok", "..", "FAIL"]


@pytest.mark.parametrize("nodes, text", [(["a/n1"], "1 node regressed: a/n1"), (["a/n1", "a/n2"], "2 nodes regressed: a/n1, a/n2")])
def test_the_regressed_nodes_are_counted_in_the_header(nodes, text):
    results = {"a": result("a", "Complete", "pass")}
    header = fleet_summary(results, "burn-in", "r2", baseline={"run_id": "r1", "regressed_clusters": ["a"], "regressed_nodes": nodes})["header"]
    assert header.endswith("; " + text)


def test_a_stage_without_a_verdict_yet_decides_nothing():
    running = dict(
        result("a", "Complete", "pass"), stages=[{"stage": "node", "verdict": None}, {"stage": "dcgm"}, "garbage", {"stage": "fleet", "verdict": "warn"}]
    )
    assert verdict_of(running) == "warn" and cluster_passed(running) is True
    assert verdict_of(dict(result("a", "Complete"), stages=[{"stage": "node", "verdict": "running"}])) is None


def test_a_dry_run_and_an_apply_without_verdicts():
    summary = fleet_summary(
        {"a": result("a", "Checked", reason="check mode"), "z": dict(result("z", "Applied"), platform="")}, "burn-in", "r2", check_mode=True
    )
    assert summary["header"] == "burn-in r2 (check mode): 2 of 2 clusters passed, 0 failed"
    assert summary["lines"][0].endswith("burnin/nccl-1: check mode") and summary["lines"][1].endswith(" burnin/nccl-1")
    assert "?/h100" in summary["lines"][1]


def test_a_failure_set_on_purpose_keeps_its_outcome():
    result = {"outcome": "Mismatch", "reason": "platform mismatch: nodes say gcp", "error_class": ""}
    assert failure_of(result, {"name": "Stop"}, {"msg": "platform mismatch"})["record"] == {
        "outcome": "Mismatch",
        "reason": "platform mismatch: nodes say gcp",
        "error_class": "",
        # A fault of the inventory, not of the nodes (_lib/actions.yaml mismatch).
        "severity": "warning",
        "action": "retest",
        "action_rule": "mismatch",
        "action_why": "Mismatch: the group's platform or GPU contradicts the nodes, a fault of the inventory; fix it and run again",
    }


def test_a_kubernetes_core_failure_is_classified_and_names_the_task():
    refused = (
        "HTTPSConnectionPool(host='127.0.0.1', port=6443): Max retries exceeded with url: /version "
        "(Caused by NewConnectionError(': Failed to establish a new connection: [Errno 111] Connection refused'))"
    )
    failure = failure_of({"outcome": "Pending", "reason": ""}, {"name": "List the nodes"}, {"msg": refused})
    assert failure["record"]["outcome"] == "Unreachable" and failure["record"]["error_class"] == "Unreachable"
    assert failure["record"]["reason"].startswith("List the nodes: Unreachable: Cannot reach https://127.0.0.1:6443")
    assert "Errno 111" in failure["detail"] and "Errno 111" not in failure["record"]["reason"]


def test_a_classified_error_of_the_collections_plugins_is_taken_as_it_is():
    error = {"category": "Forbidden", "status": 403, "message": "Forbidden: user x may not delete ...", "detail": "raw"}
    failure = failure_of(
        {"outcome": "Pending"}, {"name": "Delete the run's objects"}, {"msg": "deleting TrainJob/e-r1: Forbidden: user x may not delete ...", "error": error}
    )
    assert dict((key, failure["record"][key]) for key in ("outcome", "error_class", "reason", "severity", "action")) == {
        "outcome": "Error",
        "error_class": "Forbidden",
        "reason": "Delete the run's objects: deleting TrainJob/e-r1: Forbidden: user x may not delete ...",
        "severity": "warning",
        "action": "retest",
    }
    assert failure["detail"] == "raw"


def test_a_loop_is_explained_by_its_first_failed_item():
    looped = {"msg": "One or more items failed", "results": [{"failed": False}, {"failed": True, "msg": "boom (409)\nReason: Conflict"}]}
    record = failure_of({}, {"name": "Apply"}, looped)["record"]
    assert record["outcome"] == "Error" and "One or more" not in record["reason"]


def obj(kind, name):
    return {"kind": kind, "metadata": {"name": name}}


def test_the_apply_record_counts_only_real_changes():
    objects = [obj("Namespace", "ns"), obj("TrainingRuntime", "rt"), obj("TrainJob", "job")]
    # A no-op apply whose diff only moved managedFields (hidden: empty before/after) is no change.
    apply = {"result": {"results": [{"changed": True}, {"changed": True, "diff": {"before": {}, "after": {}}}, {"changed": False}]}}
    record = applied_record(apply_results(apply), objects, "ns", True, False, True)
    assert record["applied"] == ["Namespace/ns", "TrainingRuntime/rt", "TrainJob/job"] and record["changed_objects"] == ["Namespace/ns"]
    assert record["outcome"] == "Pending" and record["namespace_created"] and record["reason"] == ""
    assert applied_record(apply_results({"changed": True}), objects[:1], "ns", False, False, False)["outcome"] == "Applied"


def test_the_check_mode_record_says_what_would_be_created():
    record = applied_record([{}], [obj("Namespace", "ns")], "ns", True, True, True, planned=["TrainJob/job"])
    assert record["outcome"] == "Checked" and not record["namespace_created"]
    assert record["reason"] == "namespace ns does not exist yet: only it was dry-run; would create TrainJob/job"


def test_a_failing_verdict_is_the_clusters_failure_naming_its_nodes():
    verdict = {"verdict": "fail", "reason": "busbw 3.1 GB/s below 270", "nodes": ["a", "b"], "succeeded_nodes": ["a"], "failed_nodes": ["b"]}
    judged = judged_record({"cluster": "aws-a", "stage": "logs", "reason": "Complete"}, verdict)
    assert judged["record"]["stage"] == "verdict" and judged["record"]["reason"] == "verdict fail: busbw 3.1 GB/s below 270 (failed nodes: b)"
    assert judged["line"] == "aws-a: fail - busbw 3.1 GB/s below 270; nodes 1 succeeded, failed: b"
    passed = judged_record({"cluster": "aws-a", "stage": "logs", "reason": "Complete"}, dict(verdict, verdict="warn", failed_nodes=[]))
    assert passed["record"]["stage"] == "logs" and passed["record"]["reason"] == "Complete"


# What the mutation run of burnin/cluster_result.py (docs/mutation.md) found untested.


def test_a_later_stage_adds_its_objects_after_the_earlier_ones_once():
    objects = [obj("TrainingRuntime", "rt"), obj("TrainJob", "job-2")]
    previous = {"applied": ["TrainingRuntime/rt", "TrainJob/job-1"], "changed_objects": ["TrainJob/job-1"]}
    record = applied_record([{"changed": False}, {"changed": True}], objects, "ns", False, False, True, previous=previous)
    assert record["applied"] == ["TrainingRuntime/rt", "TrainJob/job-1", "TrainJob/job-2"]
    assert record["changed_objects"] == ["TrainJob/job-1", "TrainJob/job-2"]


def test_an_earlier_stage_that_changed_nothing_still_keeps_its_applied_objects():
    previous = {"applied": ["TrainJob/job-1"]}
    record = applied_record([{"changed": True}], [obj("TrainJob", "job-2")], "ns", False, False, True, previous=previous)
    assert record["applied"] == ["TrainJob/job-1", "TrainJob/job-2"] and record["changed_objects"] == ["TrainJob/job-2"]


def test_a_dry_run_in_an_existing_namespace_passed_whatever_was_planned():
    record = applied_record([{}], [obj("TrainJob", "job")], "ns", False, True, True, planned=["TrainJob/job"])
    assert record["reason"] == "dry run passed" and record["outcome"] == "Checked"


def test_a_loop_is_explained_by_its_first_failed_item_not_a_later_or_a_passed_one():
    looped = {
        "msg": "One or more items failed",
        "results": [
            {"failed": False, "msg": "All items completed"},
            {"failed": True, "msg": "first (409)\nReason: Conflict"},
            {"failed": True, "msg": "second"},
        ],
    }
    record = failure_of({}, {"name": "Apply"}, looped)["record"]
    assert "first" in record["reason"] and "second" not in record["reason"] and "All items" not in record["reason"], record


def test_a_classified_error_without_a_msg_gives_its_own_message():
    error = {"category": "Forbidden", "status": 403, "message": "user x may not list nodes"}
    record = failure_of({"outcome": "Pending"}, {"name": "List the nodes"}, {"msg": "", "error": error})["record"]
    assert record["reason"] == "List the nodes: Forbidden: user x may not list nodes", record


@pytest.mark.parametrize("verdicts, expected", [([], "pass"), (["warn", "pass"], "warn"), (["fail", "warn"], "fail"), (["pass", "error", "fail"], "error")])
def test_worst_is_the_most_severe_and_pass_for_none(verdicts, expected):
    assert worst(iter(verdicts)) == expected


def test_the_order_of_severity_is_the_verdicts_order_and_a_typo_is_refused():
    assert sorted(SEVERITY, key=SEVERITY.get) == list(VERDICTS)
    with pytest.raises(KeyError):
        worst(["pass", "failed"])


def test_the_judging_modules_share_the_one_order():
    # nccl_judge.worst is the same function, and neither gpu nor dcgm keeps an order of its own (judging/outcomes.py).
    assert nccl_judge.worst is worst and gpu.worst is worst and dcgm.SEVERITY is SEVERITY
    assert not hasattr(gpu, "_SEVERITY") and not hasattr(dcgm, "_SEVERITY") and not hasattr(verdict, "_SEVERITY")
