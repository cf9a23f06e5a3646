# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The records of the cluster protocol (plugins/module_utils/cluster/trainjobs.py), called directly: a TrainJob's
terminal conditions, a preempted pod, the outcome of a wait and the first wait the cluster could not answer; each rule
on both sides, and the objects read from JSON as the API server gives them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import trainjobs


def from_json(value):
    return json.loads(json.dumps(value))


def cond(kind, status="True", **more):
    return dict({"type": kind, "status": status}, **more)


@pytest.mark.parametrize(
    "conditions, kept",
    [
        ([cond("Complete")], ["Complete"]),
        ([cond("Failed")], ["Failed"]),
        # Not True, or not terminal: none.
        ([cond("Complete", "False"), cond("Failed", "Unknown")], []),
        ([cond("Created"), cond("Suspended"), cond("JobsCreationFailed")], []),
        ([cond("Created"), cond("Failed"), cond("Complete")], ["Failed", "Complete"]),
    ],
)
def test_the_terminal_conditions_are_the_true_complete_and_failed_ones(conditions, kept):
    assert [c["type"] for c in trainjobs.terminal_conditions(from_json({"status": {"conditions": conditions}}))] == kept


def test_a_trainjob_without_status_or_conditions_has_no_terminal_condition():
    for trainjob in (None, {}, {"status": None}, {"status": {}}, {"status": {"conditions": None}}):
        assert trainjobs.terminal_conditions(trainjob) == []


def preempted(name="a-node-0", node="n1", message="Preempted by pod 1234 on node n1"):
    condition = {"type": "DisruptionTarget", "status": "True", "reason": trainjobs.PREEMPTION_REASON, "message": message}
    return {"metadata": {"name": name}, "spec": {"nodeName": node}, "status": {"phase": "Running", "conditions": [condition]}}


def running(name="a-node-1", node="n2", phase="Running"):
    return {"metadata": {"name": name}, "spec": {"nodeName": node}, "status": {"phase": phase}}


def test_a_preemption_is_the_schedulers_disruption_target_only():
    pod = from_json(preempted())
    assert trainjobs.preemption_of(pod)["reason"] == "PreemptionByScheduler"
    # the kubelet's and the taint manager's DisruptionTarget reasons sort after and before the scheduler's
    others = ("EvictionByEvictionAPI", "DeletionByTaintManager", "TerminationByKubelet", None)
    # the scheduler's reason on another pod condition, of a type sorting after DisruptionTarget and before it
    for kind, reason in [("DisruptionTarget", other) for other in others] + [("Ready", "PreemptionByScheduler"), ("ContainersReady", "PreemptionByScheduler")]:
        other = from_json(dict(pod, status={"conditions": [{"type": kind, "reason": reason}]}))
        assert trainjobs.preemption_of(other) is None, (kind, reason)
    # a condition that is no mapping is skipped, the next one read
    mixed = from_json(dict(pod, status={"conditions": ["x", None, {"type": "Ready"}] + pod["status"]["conditions"]}))
    assert trainjobs.preemption_of(mixed)["message"] == "Preempted by pod 1234 on node n1"
    for nothing in (None, {}, {"status": None}, {"status": {"conditions": None}}):
        assert trainjobs.preemption_of(nothing) is None


@pytest.mark.parametrize(
    "others, settled",
    [
        ([], True),
        # Another pod bound and running, or pending (Pending is no ended phase): the wait goes on.
        ([running()], False),
        ([running(phase="Pending")], False),
        ([running(phase="Unknown")], False),
        # Ended, not bound, or being deleted: nothing else to wait for.
        ([running(phase="Succeeded")], True),
        ([running(phase="Failed")], True),
        ([running(node=None)], True),
        ([dict(running(), metadata={"name": "a-node-1", "deletionTimestamp": "2026-12-07T00:00:00Z"})], True),
        # one running pod after one that ended still holds the wait
        ([running(name="a-node-1", phase="Succeeded"), running(name="a-node-2")], False),
    ],
)
def test_a_preemption_settles_the_wait_once_no_other_pod_runs(others, settled):
    got = trainjobs.settled_by_preemption(from_json([preempted()] + others))
    assert (got == {"pod": "a-node-0", "node": "n1", "message": "Preempted by pod 1234 on node n1"}) is settled
    assert (got is None) is not settled


def test_of_several_preempted_pods_the_first_by_name_is_named():
    pods = from_json([preempted("a-node-2", "n3"), preempted("a-node-0", "n1"), preempted("a-node-1", "n2")])
    assert trainjobs.settled_by_preemption(pods)["pod"] == "a-node-0"
    assert trainjobs.settled_by_preemption(pods[::-1])["pod"] == "a-node-0"


def test_a_preempted_pods_message_is_cut_at_512_characters_and_its_missing_fields_are_empty():
    assert len(trainjobs.settled_by_preemption([preempted(message="m" * 512)])["message"]) == 512
    assert trainjobs.settled_by_preemption([preempted(message="m" * 513)])["message"] == "m" * 512
    bare = {"status": preempted()["status"]}
    assert trainjobs.settled_by_preemption([bare]) == {"pod": "", "node": "", "message": "Preempted by pod 1234 on node n1"}
    assert trainjobs.settled_by_preemption([preempted(message=None)])["message"] == ""
    assert trainjobs.settled_by_preemption(None) is None and trainjobs.settled_by_preemption([]) is None


def polled(state, conditions=(), **more):
    return from_json(dict({"state": state, "value": {"status": {"conditions": list(conditions)}}, "polls": 3}, **more))


def test_a_done_wait_is_its_terminal_conditions_outcome_and_reason():
    out = trainjobs.outcome_of(polled("done", [cond("Created"), cond("Failed", reason="JobFailed", message="pod a failed")]), "a", 60)
    assert out == {
        "conditions": [{"type": "Created", "status": "True"}, {"type": "Failed", "status": "True", "reason": "JobFailed", "message": "pod a failed"}],
        "polls": 3,
        "outcome": "Failed",
        "reason": "JobFailed: pod a failed",
    }
    # the first True terminal condition, past a False one; the reason alone or the message alone
    out = trainjobs.outcome_of(polled("done", [cond("Failed", "False"), cond("Complete", reason="JobsCompleted")]), "a", 60)
    assert (out["outcome"], out["reason"]) == ("Complete", "JobsCompleted")
    # past an Unknown one (which sorts after True), and the first of two True ones
    out = trainjobs.outcome_of(polled("done", [cond("Complete", "Unknown"), cond("Failed", reason="JobFailed")]), "a", 60)
    assert (out["outcome"], out["reason"]) == ("Failed", "JobFailed")
    out = trainjobs.outcome_of(polled("done", [cond("Failed", reason="JobFailed"), cond("Complete", reason="JobsCompleted")]), "a", 60)
    assert (out["outcome"], out["reason"]) == ("Failed", "JobFailed")
    assert trainjobs.outcome_of(polled("done", [cond("Complete", message="all done")]), "a", 60)["reason"] == "all done"
    assert trainjobs.outcome_of(polled("done", [cond("Complete")]), "a", 60)["reason"] == ""
    # only the kept keys of a condition
    extra = cond("Complete", lastTransitionTime="t", observedGeneration=1)
    assert trainjobs.outcome_of(polled("done", [extra]), "a", 60)["conditions"] == [{"type": "Complete", "status": "True"}]


def test_a_preempted_wait_names_the_pod_and_node_and_the_schedulers_message():
    victim = {"pod": "a-node-0", "node": "n1", "message": "Preempted by pod 1234 on node n1"}
    out = trainjobs.outcome_of(polled("preempted", preempted=victim), "a", 60)
    assert out["outcome"] == "Preempted"
    assert out["reason"] == (
        "the scheduler preempted pod a-node-0 on node n1 (Preempted by pod 1234 on node n1); its replacement cannot start there, the wait ended"
    )
    bare = trainjobs.outcome_of(polled("preempted", preempted={"pod": "p", "node": "", "message": ""}), "a", 60)
    assert "pod p on node ? (PreemptionByScheduler)" in bare["reason"]


def test_a_timed_out_wait_names_the_conditions_it_saw():
    out = trainjobs.outcome_of(polled("timeout", [cond("Created"), cond("Suspended", "False")]), "a", 600)
    assert (out["outcome"], out["reason"]) == ("Timeout", "no Complete or Failed condition after 600 s (conditions: Created, Suspended)")
    assert trainjobs.outcome_of(polled("timeout"), "a", 60)["reason"] == "no Complete or Failed condition after 60 s (conditions: none)"
    assert "error" not in out


def test_an_unreachable_or_failed_wait_keeps_its_error():
    error = {"category": "Unreachable", "message": "connection refused."}
    out = trainjobs.outcome_of(polled("unreachable", error=error, unreachable_seconds=120.5), "a", 600)
    assert out["outcome"] == "Unreachable" and out["error"] == error
    assert out["reason"] == "connection refused. Gave up waiting for TrainJob a after 120.5 s without an answer."
    forbidden = {"category": "Forbidden", "message": "trainjobs is forbidden"}
    out = trainjobs.outcome_of(polled("error", error=forbidden), "a", 600)
    assert (out["outcome"], out["reason"], out["error"]) == ("Error", "reading TrainJob a: trainjobs is forbidden", forbidden)


def test_the_first_unread_wait_by_name():
    waited = from_json({"c": {"outcome": "Error"}, "b": {"outcome": "Unreachable"}, "a": {"outcome": "Complete"}, "d": {"outcome": "Timeout"}})
    assert trainjobs.unread(waited) == ("b", {"outcome": "Unreachable"})
    assert trainjobs.unread(dict(waited, b={"outcome": "Failed"})) == ("c", {"outcome": "Error"})
    for outcome in ("Complete", "Failed", "Preempted", "Timeout"):
        assert trainjobs.unread({"a": {"outcome": outcome}}) is None
    assert trainjobs.unread({}) is None


def test_a_failed_call_names_what_was_done_and_the_error():
    failed = trainjobs.ClusterCallFailed("applying", {"message": "forbidden"})
    assert str(failed) == "applying: forbidden" and failed.what == "applying" and failed.error == {"message": "forbidden"} and failed.outcome == {}
    assert trainjobs.ClusterCallFailed("applying", {"message": "x"}, {"changed": False}).outcome == {"changed": False}
