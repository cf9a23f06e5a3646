# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""burnin/cluster_result.py, each builder of a cluster's result called directly: what the whole run of its mutants
(docs/mutation.md, issue 47's sixth round) found pinned only through the role's other modules, or not at all."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import detect
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import (
    applied_record,
    apply_results,
    failure_of,
    final_record,
    recorded_detection,
    isolation_record,
    planned_record,
    recorded_attempt,
    stage_index,
    started_record,
)


def test_the_first_record_takes_the_declared_platform_gpu_workload_and_framework():
    variables = {"burnin_platform": "aws", "burnin_gpu_architecture": "h100", "burnin_workload": "nccl-all-reduce", "burnin_framework": "torch"}
    record = started_record(variables, "c1", "r1", "burnin", "nccl-r1", "main", started="2026-12-07T00:00:00Z")
    assert dict((key, record[key]) for key in ("platform", "gpu_architecture", "declared", "workload", "framework", "nodes", "started")) == {
        "platform": "aws",
        "gpu_architecture": "h100",
        "declared": {"platform": "aws", "gpu_architecture": "h100"},
        "workload": "nccl-all-reduce",
        "framework": "torch",
        "nodes": 2,
        "started": "2026-12-07T00:00:00Z",
    }
    assert record["check_mode"] is False and started_record(variables, "c1", "r1", "burnin", "nccl-r1", "main", check_mode=1)["check_mode"] is True
    assert started_record(variables, "c1", "r1", "burnin", "nccl-r1", "main")["started"].endswith("Z")
    empty = started_record({"burnin_platform": None}, "c1", "r1", "burnin", "nccl-r1", "main", started="x")
    assert (empty["platform"], empty["gpu_architecture"], empty["workload"], empty["framework"]) == ("", "", "", "")


def test_detection_adds_the_unchecked_warning_only_when_the_nodes_were_not_checked():
    detection = {"platform": "aws", "gpu_architecture": "h100", "warnings": ["w"], "ok": True, "detected_platform": "aws", "nodes": 3}
    recorded = recorded_detection(detection)
    assert recorded["warnings"] == ["w"] and "outcome" not in recorded
    assert recorded["detected"]["platform"] == "aws" and recorded["detected"]["nodes"] == 3 and recorded["detected"]["gpus"] is None
    assert recorded_detection(detection, check_nodes=False)["warnings"] == ["w", detect.NOT_CHECKED]
    mismatch = recorded_detection(dict(detection, ok=False, message="platform mismatch"))
    assert (mismatch["outcome"], mismatch["reason"], mismatch["action_rule"]) == ("Mismatch", "platform mismatch", "mismatch")


def test_a_plan_keeps_its_platform_data_but_the_platform_variables():
    # Read back from JSON, as a plan arrives through the role's variables: its keys are new strings.
    plan = json.loads(
        '{"matched": ["aws"], "platform_data": {"platform_vars": {"efa": 4}, "nccl_env": {"A": "1"}, "nics": 4, "rdma": "r"}, '
        '"topology_key": "k", "instance_type": "p5.48xlarge"}'
    )
    workload = dict((key, key) for key in ("workload", "framework", "image", "collective", "results", "gpus_per_node", "mlnx_per_node"))
    record = planned_record("fleet", "nccl-r1", workload, plan, ["TrainJob/nccl-r1"], ["launcher"])
    # The keys sort on both sides of platform_vars.
    assert record["platform_data"] == {"nccl_env": {"A": "1"}, "nics": 4, "rdma": "r"}
    assert (record["matched_overrides"], record["topology_key"], record["instance_type"]) == (["aws"], "k", "p5.48xlarge")
    bare = planned_record("fleet", "nccl-r1", workload, {"matched": []}, [], [])
    assert (bare["platform_data"], bare["topology_key"], bare["instance_type"]) == ({}, "", "")
    assert planned_record("node", "nccl-node-r1", workload, plan, [], []) == {"stage": "plan"}


@pytest.mark.parametrize(
    "apply, results",
    [
        (None, [{}]),
        ({"changed": True}, [{"changed": True}]),
        ({"result": {"results": [{"changed": True}, {"changed": False}]}}, [{"changed": True}, {"changed": False}]),
        ({"result": {"kind": "TrainJob"}, "changed": False}, [{"result": {"kind": "TrainJob"}, "changed": False}]),
    ],
)
def test_apply_results_are_one_per_object(apply, results):
    assert apply_results(apply) == results


def obj(kind, name):
    return {"kind": kind, "metadata": {"name": name}}


@pytest.mark.parametrize(
    "result, changed",
    [
        ({"changed": True}, True),
        ({"changed": True, "diff": {"before": {}, "after": {"kind": "TrainJob"}}}, True),
        ({"changed": True, "diff": {"before": {"kind": "TrainJob"}, "after": {}}}, True),
        # Only hidden fields (managedFields) differed: no change.
        ({"changed": True, "diff": {"before": {}, "after": {}}}, False),
        ({"changed": True, "diff": {}}, False),
        ({"changed": False, "diff": {"before": {}, "after": {"kind": "TrainJob"}}}, False),
    ],
)
def test_an_object_changed_when_its_diff_shows_a_side(result, changed):
    record = applied_record([result], [obj("TrainJob", "job")], "ns", False, False, True)
    assert record["changed_objects"] == (["TrainJob/job"] if changed else [])


@pytest.mark.parametrize(
    "namespace_missing, check_mode, previous_created, created",
    [
        (False, False, False, False),
        (True, False, False, True),
        (False, False, True, True),
        (False, True, True, False),
        (True, True, False, False),
    ],
)
def test_the_namespace_is_created_only_when_missing_now_or_by_the_earlier_stage_and_not_in_check_mode(namespace_missing, check_mode, previous_created, created):
    previous = {"applied": ["Namespace/ns"], "namespace_created": previous_created}
    record = applied_record([{"changed": False}], [obj("TrainJob", "job")], "ns", namespace_missing, check_mode, True, previous=previous)
    assert record["namespace_created"] is created


@pytest.mark.parametrize(
    "result, kept",
    [
        ({"outcome": "Mismatch", "reason": "platform mismatch"}, True),
        ({"outcome": "Error", "reason": "no GPU nodes"}, True),
        ({"outcome": "Unreachable", "reason": "gone", "error_class": "Unreachable"}, True),
        ({"outcome": "Mismatch", "reason": ""}, False),
        # A reason an earlier stage wrote does not make a Pending cluster's failure deliberate.
        ({"outcome": "Pending", "reason": "an earlier stage's reason"}, False),
        ({"outcome": "Complete", "reason": "verdict pass"}, False),
    ],
)
def test_only_a_deliberate_outcome_with_its_reason_is_kept(result, kept):
    record = failure_of(result, {"name": "Apply"}, {"msg": "boom"})["record"]
    if kept:
        assert (record["outcome"], record["reason"], record["error_class"]) == (result["outcome"], result["reason"], result.get("error_class", ""))
    else:
        assert (record["outcome"], record["reason"]) == ("Error", "Apply: boom.")


def test_a_failure_names_the_server_and_the_context_given():
    record = failure_of({"outcome": "Pending"}, {"name": "List"}, {"msg": "Unauthorized"}, server="https://api.x:6443")["record"]
    assert "The API server https://api.x:6443 refused the credential" in record["reason"]
    record = failure_of({"outcome": "Pending"}, {"name": "List"}, {"msg": "Unauthorized"}, context="ctx")["record"]
    assert "The API server (context ctx) refused the credential" in record["reason"]


@pytest.mark.parametrize(
    "category, message, reason",
    [
        # The class leads the reason unless it is the plain Error or the message names it already.
        ("Error", "boom", "Apply: boom"),
        ("Conflict", "boom", "Apply: Conflict: boom"),
        ("Conflict", "Conflict: boom", "Apply: Conflict: boom"),
        ("Forbidden", "boom", "Apply: Forbidden: boom"),
        ("ServerError", "boom", "Apply: ServerError: boom"),
    ],
)
def test_a_classified_error_names_its_class_once(category, message, reason):
    # Read back from JSON, as a plugin's classified error arrives: the category is a new string.
    error = json.loads(json.dumps({"category": category, "message": message}))
    record = failure_of({"outcome": "Pending"}, {"name": "Apply"}, {"error": error})["record"]
    assert (record["error_class"], record["reason"]) == (category, reason)


def test_an_attempt_is_graded_with_the_clusters_own_outcome():
    fields = recorded_attempt({"outcome": "Mismatch"}, "node", "nccl-node-r1", {"verdict": "pass", "reason": "ok"})
    assert (fields["severity"], fields["action_rule"]) == ("warning", "mismatch")
    assert fields["stages"][0]["action_rule"] == "pass"


@pytest.mark.parametrize(
    "outcome, cluster_outcome, recorded",
    [("Complete", "Pending", "Complete"), (None, "Pending", "Pending"), (None, None, ""), ("Failed", None, "Failed")],
)
def test_an_attempts_outcome_is_the_one_given_else_the_clusters(outcome, cluster_outcome, recorded):
    fields = recorded_attempt({"outcome": cluster_outcome}, "fleet", "nccl-r1", {"verdict": "pass"}, outcome=outcome)
    assert fields["stages"][0]["attempts"][0]["outcome"] == recorded


def test_an_attempt_lists_its_nodes_and_note_only_when_it_has_them():
    plain = recorded_attempt({}, "fleet", "nccl-r1", {"verdict": "pass", "reason": "ok"})["stages"][0]
    assert "nodes" not in plain["attempts"][0] and "note" not in plain and "judged" not in plain
    rows = [{"node": "n1", "pod": "p1", "verdict": "pass", "busbw": 400.0, "size": "16G", "reason": "ok", "extra": 1}]
    node = recorded_attempt({}, "node", "nccl-node-r1", {"verdict": "pass", "node_results": rows}, note="rerun")["stages"][0]
    assert node["attempts"][0]["nodes"] == [{"node": "n1", "pod": "p1", "verdict": "pass", "busbw": 400.0, "size": "16G", "reason": "ok"}]
    assert node["note"] == "rerun" and node["judged"]["verdict"] == "pass"
    empty = recorded_attempt({}, "node", "nccl-node-r1", {"verdict": "pass", "node_results": []})["stages"][0]
    assert empty["attempts"][0]["nodes"] == []


def test_a_stage_is_found_by_its_name_only():
    # Read back from JSON: the names are new strings, not the literals.
    stages = json.loads('[{"stage": "fleet"}, {"stage": "node"}, {"stage": "isolation"}]')
    assert [stage_index(stages, name) for name in ("fleet", "node", "isolation", "gpu")] == [0, 1, 2, None]
    assert stage_index([], "node") is None


def test_the_isolation_counts_its_node_and_part_jobs_and_keeps_its_parts():
    parts = [{"level": "links", "conclusion": "ok", "node": "n1"}]
    outcome = {
        "results": [{}, {}, {}],
        "part_results": [{}, {}],
        "nodes": ["n1", "n2", "n3"],
        "conclusion": {"outcome": "not_reproduced", "reason": "r", "minutes": 3, "unknown": ["n3"], "good": ["n1"]},
        "parts": parts,
        "rounds": [{"round": 1}],
        "pending": [{"node": "n3"}],
    }
    isolation = isolation_record({"reason": "fleet fail"}, outcome)["isolation"]
    assert (isolation["jobs"], isolation["node_jobs"], isolation["node_minutes"]) == (5, 3, 3)
    assert (isolation["parts"], isolation["rounds"], isolation["unknown"], isolation["good"]) == (parts, [{"round": 1}], ["n3"], ["n1"])
    assert isolation["pending"] == [{"node": "n3"}]
    assert isolation_record({}, dict(outcome, part_results=None))["isolation"]["jobs"] == 3


@pytest.mark.parametrize(
    "stages, reason",
    [
        ([], None),
        ([{"stage": "fleet", "verdict": "fail", "reason": "slow"}], None),
        ([{"stage": "node", "verdict": "pass"}], None),
        ([{"stage": "node", "verdict": "fail", "reason": "n1 slow"}], "node stage fail: n1 slow"),
        ([{"stage": "pairs", "verdict": "error", "reason": "x"}, {"stage": "fleet", "verdict": "fail"}], "fleet reason; pairs stage error: x"),
        # A record whose name is no stage (scope None) counts as another stage, and not as the fleet stage.
        ([{"stage": "drift", "verdict": "fail", "reason": "d"}], "drift stage fail: d"),
        ([{"stage": "drift", "verdict": "fail", "reason": "d"}, {"stage": "fleet", "verdict": "fail"}], "fleet reason; drift stage fail: d"),
    ],
)
def test_the_last_record_names_every_failed_stage_but_the_fleet_stage(stages, reason):
    record = final_record({"reason": "fleet reason", "stages": stages})
    assert record == ({} if reason is None else {"reason": reason, "stage": "verdict"})
