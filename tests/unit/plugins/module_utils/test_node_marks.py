# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Node marks with an expiry (cluster/node_marks.py), with a fake clock: which marks a verdict writes, the expiry
arithmetic, which marks the cleanup removes, and that only the collection's marks are touched."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks as nm
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import remediation as rem
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report

NOW = 1764770000  # 2025-12-03T13:53:20Z, the fake clock
HOUR = 3600


def options(ttl=24, condition=False, **more):
    out = rem.check_options(more.pop("label", False), "gpufleet.burnin/verified", more.pop("quarantine", "none"), None)
    out.update(nm.check_options(True, ttl, condition))
    return out


def node(name="n1", labels=None, annotations=None, conditions=None):
    return rem.node_state(
        {
            "metadata": {"name": name, "resourceVersion": "3", "labels": dict(labels or {"team": "ml"}), "annotations": dict(annotations or {})},
            "spec": {},
            "status": {"conditions": list(conditions or [{"type": "Ready", "status": "True"}])},
        }
    )


def entry(name="n1", verdict="pass", reasons=()):
    """The JSON report's entry of the node, made by the report itself."""
    return report.cluster_node_entries("c1", {"node_verdicts": {name: {"verdict": verdict, "reasons": list(reasons), "stages": ["node"]}}})[0]


def marked(state, verdict="pass", run="run-1", now=NOW, **opts):
    return nm.plan_mark(state, entry(state["name"], verdict), run, now, options(**opts))


def test_a_verdict_writes_result_run_and_expiry_labels_the_verdict_annotation_and_the_record():
    before = node()
    after = marked(before, "fail", ttl=24)
    assert after["labels"] == {"team": "ml", nm.RESULT_LABEL: "fail", nm.RUN_LABEL: "run-1", nm.EXPIRES_LABEL: str(NOW + 24 * HOUR)}
    # The report's own entry of the node, whatever fields the report gives it.
    shown = json.loads(after["annotations"][nm.VERDICT_ANNOTATION])
    assert shown == entry("n1", "fail") and (shown["node"], shown["verdict"], shown["stages"]) == ("n1", "fail", ["node"])
    assert json.loads(after["annotations"][nm.MARKS_RECORD]) == {"run_id": "run-1", "marked_at": NOW, "expires": NOW + 24 * HOUR, "condition": ""}
    assert before["labels"] == {"team": "ml"} and after.get("condition") is None
    patch = rem.merge_patch(before, after)
    assert set(patch["metadata"]["labels"]) == set(nm.LABELS) and set(patch["metadata"]["annotations"]) == set(nm.ANNOTATIONS)
    assert nm.status_patch(before, after) is None


@pytest.mark.parametrize("verdict, status", [("pass", "True"), ("warn", "False"), ("fail", "False")])
def test_the_condition_is_true_for_a_pass_only_and_patched_by_its_type(verdict, status):
    before = node()
    after = marked(before, verdict, condition=True)
    assert after["condition"]["type"] == "GpuBurninPassed" and after["condition"]["status"] == status
    assert (
        after["condition"]["reason"] == "Burnin" + verdict.capitalize()
        and "run run-1: %s; expires 2025-12-04T13:53:20Z" % verdict in after["condition"]["message"]
    )
    assert nm.status_patch(before, after) == {"status": {"conditions": [after["condition"]]}}
    assert [c["what"] for c in rem.changes(before, after)].count("condition") == 1


def test_the_same_run_again_changes_nothing_even_later():
    first = marked(node(), "pass", condition=True)
    again = marked(first, "pass", now=NOW + 5 * HOUR, condition=True)
    assert again == first and rem.merge_patch(first, again) is None and nm.status_patch(first, again) is None


def test_a_new_run_moves_the_expiry_and_keeps_the_conditions_transition_time_while_the_status_stays():
    first = marked(node(), "pass", condition=True)
    second = marked(first, "pass", run="run-2", now=NOW + 2 * HOUR, ttl=6, condition=True)
    assert second["labels"][nm.EXPIRES_LABEL] == str(NOW + 8 * HOUR) and second["labels"][nm.RUN_LABEL] == "run-2"
    assert second["condition"]["lastTransitionTime"] == first["condition"]["lastTransitionTime"] == nm.iso(NOW)
    assert second["condition"]["lastHeartbeatTime"] == nm.iso(NOW + 2 * HOUR)
    third = marked(second, "fail", run="run-3", now=NOW + 3 * HOUR, condition=True)
    assert third["condition"]["lastTransitionTime"] == nm.iso(NOW + 3 * HOUR)
    # The condition no longer asked for: the collection's own condition goes.
    fourth = marked(third, "pass", run="run-4", now=NOW + 4 * HOUR)
    assert fourth["condition"] is None and nm.status_patch(third, fourth) == {"status": {"conditions": [{"type": "GpuBurninPassed", "$patch": "delete"}]}}


@pytest.mark.parametrize(
    "now, verdict, state",
    [
        (NOW + 24 * HOUR - 1, "pass", "verified"),
        (NOW + 24 * HOUR, "pass", "expired"),
        (NOW + 30 * HOUR, "fail", "expired"),
        (NOW + HOUR, "warn", "warn"),
        (NOW + HOUR, "fail", "fail"),
    ],
)
def test_a_mark_past_its_expiry_counts_as_unverified(now, verdict, state):
    shown = nm.status(marked(node(), verdict), now)
    assert shown == {"state": state, "result": verdict, "run_id": "run-1", "expires": NOW + 24 * HOUR}


def test_labels_without_the_record_are_not_the_collections():
    foreign = node(labels={nm.RESULT_LABEL: "pass", nm.EXPIRES_LABEL: "1", "team": "ml"})
    assert nm.status(foreign, NOW)["state"] == "unmarked"
    assert nm.plan_unmark(foreign) == foreign and nm.plan_expire([foreign], NOW + 100 * HOUR) == {}
    assert rem.plan_undo(foreign) == foreign


def test_the_cleanup_removes_expired_and_superseded_marks_only():
    old = marked(node("old"), "pass", run="run-1", now=NOW)
    new = marked(node("new"), "pass", run="run-2", now=NOW + HOUR)
    expired = marked(node("gone"), "fail", run="run-2", now=NOW + HOUR, ttl=1)
    plain = node("plain", labels={"team": "ml", "admin.example.com/keep": "yes"})
    assert nm.plan_expire([old, new, expired, plain], NOW + 2 * HOUR) == {"old": "superseded by run run-2", "gone": "expired"}
    # Before run-2's expiry-1h mark ran out, only the superseded one goes; past 25 hours every mark.
    assert nm.plan_expire([old, new, expired], NOW + HOUR + 1) == {"old": "superseded by run run-2"}
    assert nm.plan_expire([old, new], NOW + 25 * HOUR) == {"old": "expired", "new": "expired"}


def test_unmarking_removes_the_collections_keys_and_its_condition_and_nothing_else():
    before = node(
        labels={"team": "ml", "gpufleet.burnin/verified": "run-1"},
        annotations={"admin.example.com/note": "x", rem.LABEL_RECORD: "gpufleet.burnin/verified"},
        conditions=[{"type": "Ready", "status": "True"}, {"type": "KernelDeadlock", "status": "False"}],
    )
    mark = marked(before, "pass", condition=True)
    after = nm.plan_unmark(mark)
    assert after["labels"] == before["labels"] and after["annotations"] == before["annotations"] and after["condition"] is None
    assert nm.status_patch(mark, after) == {"status": {"conditions": [{"type": "GpuBurninPassed", "$patch": "delete"}]}}


def test_undo_by_run_removes_that_runs_marks_and_keeps_a_later_runs():
    mark = marked(node(), "pass", run="run-2")
    assert rem.plan_undo(mark, "run-1") == mark
    assert rem.plan_undo(mark, "run-2")["labels"] == {"team": "ml"} and rem.plan_undo(mark)["annotations"] == {}
    assert rem.is_marked(mark)


def test_with_node_marks_every_judged_node_is_touched():
    opts = options()
    assert rem.wanted(opts) and all(rem.touches(verdict, opts) for verdict in ("pass", "warn", "fail"))


def test_the_verdict_annotation_is_bounded_and_keeps_the_report_shape():
    many = ["reason %d: %s" % (index, "x" * 500) for index in range(200)]
    big = dict(entry(verdict="fail", reasons=many), evidence=[{"id": "e%d" % index, "lines": ["y" * 3000] * 3} for index in range(20)])
    text = nm.bounded_entry(big)
    shown = json.loads(text)
    assert len(text.encode("utf-8")) <= nm.VERDICT_MAX_BYTES and set(shown) == set(big)
    assert shown["verdict"] == "fail" and shown["reasons"][0].startswith("reason 0: x") and len(shown["reasons"][0]) == nm.TEXT_MAX_CHARS
    assert shown["reasons"] == [reason[:297] + "..." for reason in many[: len(shown["reasons"])]] and shown["evidence"][0]["id"] == "e0"
    small = entry(reasons=["ok"])
    assert json.loads(nm.bounded_entry(small)) == small


def test_an_unreadable_record_is_dropped_alone():
    state = node(labels={"team": "ml", nm.RESULT_LABEL: "pass"}, annotations={nm.MARKS_RECORD: "{not json"})
    after = nm.plan_unmark(state)
    assert after["labels"] == state["labels"] and after["annotations"] == {}


@pytest.mark.parametrize(
    "given, field, words",
    [
        ({"burnin_node_marks": "maybe"}, "burnin_node_marks", "true or false"),
        ({"burnin_mark_ttl_hours": 0}, "burnin_mark_ttl_hours", "integer from 1 to 8784"),
        ({"burnin_mark_ttl_hours": "a day"}, "burnin_mark_ttl_hours", "integer from 1 to 8784"),
        ({"burnin_mark_condition": [True]}, "burnin_mark_condition", "true or false"),
    ],
)
def test_the_role_refuses_bad_mark_variables_naming_them(given, field, words):
    with pytest.raises(ConfigError) as raised:
        check_role_vars(given)
    assert raised.value.field == field and words in str(raised.value), str(raised.value)


def test_the_role_takes_mark_variables_as_text():
    checked = check_role_vars({"burnin_node_marks": "yes", "burnin_mark_ttl_hours": "6", "burnin_mark_condition": "false"})
    assert checked["burnin_node_marks"] is True and checked["burnin_mark_ttl_hours"] == 6 and checked["burnin_mark_condition"] is False


# What the mutation run of cluster/node_marks.py whole (issue 47, fifth round) left.


def test_the_record_is_written_with_sorted_keys():
    after = marked(node(), "pass", ttl=2)
    assert after["annotations"][nm.MARKS_RECORD] == '{"condition":"","expires":%d,"marked_at":%d,"run_id":"run-1"}' % (NOW + 2 * HOUR, NOW)


def test_the_latest_runs_marks_of_different_times_are_none_superseded():
    # Each record is read from its own node's JSON: one run's id on two nodes is two equal strings, not one object.
    early = marked(node("early"), "pass", run="run-2", now=NOW)
    late = marked(node("late"), "pass", run="run-2", now=NOW + 60)
    older = marked(node("older"), "pass", run="run-1", now=NOW - 60)
    assert nm.plan_expire([early, late, older], NOW + HOUR) == {"older": "superseded by run run-2"}


@pytest.mark.parametrize("now, ok", [(0, True), (nm.NOW_MAX, True), (str(nm.NOW_MAX), True), (4102444800, True), (4102444801, False), (-1, False)])
def test_the_role_takes_a_given_clock_up_to_2100(now, ok):
    if ok:
        assert check_role_vars({"burnin_marks_now": now})["burnin_marks_now"] == int(now)
    else:
        with pytest.raises(ConfigError) as raised:
            check_role_vars({"burnin_marks_now": now})
        assert raised.value.field == "burnin_marks_now"


def test_a_verdict_annotation_over_the_bound_loses_half_of_its_longest_list_at_a_time():
    evidence = [{"id": "e%d" % index, "lines": ["y" * 280] * 3} for index in range(16)]
    big = dict(entry(verdict="fail"), evidence=evidence)
    assert len(json.dumps(big)) > nm.VERDICT_MAX_BYTES and len(json.dumps(dict(big, evidence=evidence[:8]))) < nm.VERDICT_MAX_BYTES
    shown = json.loads(nm.bounded_entry(big))
    assert shown["evidence"] == evidence[:8] and shown["reasons"] == big["reasons"]


def test_the_conditions_transition_time_is_kept_for_a_status_read_back_from_json():
    before = json.loads(json.dumps({"type": nm.CONDITION_TYPE, "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}))
    kept = nm.condition_for("pass", "run-2", NOW + HOUR, [], NOW, before=before)
    assert kept["lastTransitionTime"] == "2025-01-01T00:00:00Z" and kept["lastHeartbeatTime"] == nm.iso(NOW)
    moved = nm.condition_for("fail", "run-2", NOW + HOUR, [], NOW, before=before)
    assert moved["lastTransitionTime"] == nm.iso(NOW) and moved["status"] == "False"


def test_the_collections_condition_is_found_among_a_nodes_conditions():
    ours = {"type": nm.CONDITION_TYPE, "status": "True", "reason": "BurninPass", "message": "m", "lastHeartbeatTime": "a", "lastTransitionTime": "b"}
    obj = {"status": {"conditions": ["not a condition", {"type": "Ready", "status": "True"}, dict(ours, extra="dropped")]}}
    assert nm.condition_of(obj) == ours
    assert nm.condition_of({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}) is None
    assert nm.condition_of({}) is None


# --- issue 47, seventh round: the survivor of cluster/node_marks.py's resumed run -------------------------------------
@pytest.mark.parametrize(
    "now, verdict, state",
    [
        (NOW + 24 * HOUR - 1, "pass", "verified"),
        (NOW + 24 * HOUR, "pass", "expired"),
        (NOW + HOUR, "warn", "warn"),
        (NOW + HOUR, "fail", "fail"),
    ],
)
def test_a_mark_read_back_from_the_cluster_is_judged_by_value(now, verdict, state):
    # the node is read from the API server's JSON: its result label is a new string, not this module's literal
    read_back = json.loads(json.dumps(marked(node(), verdict)))
    assert nm.status(read_back, now) == {"state": state, "result": verdict, "run_id": "run-1", "expires": NOW + 24 * HOUR}


def test_a_verdict_annotation_just_over_the_bound_is_halved_not_cut_to_fit():
    # ten items just over the bound: half of them (5), though eight would fit (docstring of bounded_entry: halving)
    evidence = [{"id": "e%d" % index, "lines": ["y" * 280] * 3} for index in range(10)]
    big = dict(entry(verdict="fail"), evidence=evidence)
    assert len(json.dumps(big)) > nm.VERDICT_MAX_BYTES and len(json.dumps(dict(big, evidence=evidence[:8]))) < nm.VERDICT_MAX_BYTES
    assert json.loads(nm.bounded_entry(big))["evidence"] == evidence[:5]


@pytest.mark.parametrize(
    "marked_at, expires, read",
    [
        (NOW, NOW + HOUR, True),
        (0, 0, True),
        (True, NOW + HOUR, False),  # a JSON true is no time
        (NOW, False, False),
        (NOW, str(NOW + HOUR), False),
        (str(NOW), NOW + HOUR, False),
        (NOW, float(NOW + HOUR), False),
        (None, NOW + HOUR, False),
    ],
)
def test_a_record_is_the_collections_only_with_integer_times(marked_at, expires, read):
    text = json.dumps({"run_id": "run-1", "marked_at": marked_at, "expires": expires, "condition": ""})
    record = nm.read_record(node(annotations={nm.MARKS_RECORD: text}))
    assert (record == {"run_id": "run-1", "marked_at": marked_at, "expires": expires, "condition": ""}) if read else record is None


@pytest.mark.parametrize("reasons, message", [(["nccl: busbw 300 below 350"], "; nccl: busbw 300 below 350"), ([], ""), (None, "")])
def test_the_condition_names_the_first_reason_of_the_verdict_when_it_has_one(reasons, message):
    given = dict(entry(verdict="fail"), reasons=reasons)
    after = nm.plan_mark(node(), given, "run-1", NOW, options(condition=True))
    assert after["condition"]["message"] == "run run-1: fail; expires %s%s" % (nm.iso(NOW + 24 * HOUR), message)


def test_a_text_of_the_bound_is_kept_and_one_past_it_cut():
    evidence = [{"id": "e%d" % index, "lines": ["y" * 280] * 3} for index in range(16)]
    big = dict(entry(verdict="fail"), reasons=["a" * nm.TEXT_MAX_CHARS, "b" * (nm.TEXT_MAX_CHARS + 1)], evidence=evidence)
    shown = json.loads(nm.bounded_entry(big))
    assert shown["reasons"] == ["a" * nm.TEXT_MAX_CHARS, "b" * (nm.TEXT_MAX_CHARS - 3) + "..."] and shown["evidence"] == evidence[:8]


@pytest.mark.parametrize("now", [NOW, NOW + 4])
@pytest.mark.parametrize("ahead, superseded", [(nm.FUTURE_SKEW, True), (nm.FUTURE_SKEW + 1, False)])
def test_a_mark_from_the_future_within_the_skew_is_the_latest_run_and_one_past_it_ignored(now, ahead, superseded):
    # the clock of the run that marked may be ahead of this one by up to FUTURE_SKEW seconds; NOW + 4 as now keeps
    # `now + skew` apart from `now | skew` (NOW's low bits are 0)
    older = marked(node("older"), "pass", run="run-1", now=NOW - 60)
    ahead_mark = marked(node("ahead"), "pass", run="run-3", now=now + ahead)
    assert nm.plan_expire([older, ahead_mark], now) == ({"older": "superseded by run run-3"} if superseded else {})


def test_the_cleanup_looks_past_a_node_without_the_collections_record():
    # an unmarked node listed first: the marked nodes after it are still judged
    plain = node("plain", labels={"team": "ml"})
    old = marked(node("old"), "pass", run="run-1", now=NOW)
    new = marked(node("new"), "pass", run="run-2", now=NOW + HOUR)
    assert nm.plan_expire([plain, old, new], NOW + 2 * HOUR) == {"old": "superseded by run run-2"}


def test_the_default_ttl_is_the_modules_and_the_roles_default():
    # TTL_HOURS_DEFAULT is the default that plugins/modules/burnin_remediate.py documents for mark_ttl_hours and
    # roles/burnin/defaults/main.yml gives burnin_mark_ttl_hours (docs/remediation.md: 24)
    yaml = pytest.importorskip("yaml")
    from ansible_collections.gpufleet.burnin.plugins.modules import burnin_remediate
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import COLLECTION_ROOT, read_yaml_file

    documented = yaml.safe_load(burnin_remediate.DOCUMENTATION)["options"]["mark_ttl_hours"]["default"]
    role_default = read_yaml_file(COLLECTION_ROOT + "/roles/burnin/defaults/main.yml", "defaults")["burnin_mark_ttl_hours"]
    assert nm.TTL_HOURS_DEFAULT == documented == role_default


@pytest.mark.parametrize(
    "before, result, since",
    [
        ("True", "pass", "kept"),
        ("False", "pass", "new"),
        ("True", "fail", "new"),
        ("False", "fail", "kept"),
        ("False", "warn", "kept"),
        (None, "pass", "new"),
    ],
)
def test_the_condition_keeps_its_transition_time_only_while_its_status_stays(before, result, since):
    earlier = {"status": before, "lastTransitionTime": "2025-01-01T00:00:00Z"} if before else None
    condition = nm.condition_for(result, "run-2", NOW + HOUR, [], NOW, earlier)
    assert condition["lastTransitionTime"] == ("2025-01-01T00:00:00Z" if since == "kept" else nm.iso(NOW))
    assert condition["lastHeartbeatTime"] == nm.iso(NOW)


@pytest.mark.parametrize("first", ["DiskPressure", "Ready", "GpuBurninPasse", "GpuBurninPassed0"])
def test_the_collections_condition_is_found_by_its_type_read_from_json(first):
    # the node as the API server returns it: JSON, so the types are new strings; another condition listed first,
    # sorting before or after the collection's type
    ours = {"type": "GpuBurninPassed", "status": "False", "reason": "BurninFail", "message": "m", "lastHeartbeatTime": "t", "lastTransitionTime": "u"}
    given = json.loads(json.dumps({"status": {"conditions": [{"type": first, "status": "True"}, ours]}}))
    assert nm.condition_of(given) == ours
    alone = json.loads(json.dumps({"status": {"conditions": [{"type": first, "status": "True"}]}}))
    assert nm.condition_of(alone) is None


@pytest.mark.parametrize("condition, removed", [("GpuBurninPassed", True), ("", False)])
def test_unmarking_removes_the_condition_only_when_the_record_says_the_collection_wrote_it(condition, removed):
    ours = {"type": nm.CONDITION_TYPE, "status": "True", "reason": "BurninPass", "message": "m", "lastHeartbeatTime": "t", "lastTransitionTime": "t"}
    record = json.dumps({"run_id": "run-1", "marked_at": NOW, "expires": NOW + HOUR, "condition": condition})
    state = node(annotations={nm.MARKS_RECORD: record}, conditions=[{"type": "Ready", "status": "True"}, ours])
    assert state["condition"]["type"] == nm.CONDITION_TYPE
    after = nm.plan_unmark(state)
    assert after["condition"] == (None if removed else state["condition"])
    assert nm.MARKS_RECORD not in after["annotations"]


@pytest.mark.parametrize("run_id", [None, 5, True, ["run-1"], "missing"])
def test_a_record_whose_run_id_is_no_string_is_none_of_the_collections(run_id):
    record = {"marked_at": NOW, "expires": NOW + HOUR, "condition": ""}
    if run_id != "missing":
        record["run_id"] = run_id
    assert nm.read_record(node(annotations={nm.MARKS_RECORD: json.dumps(record)})) is None
    assert nm.read_record(node(annotations={nm.MARKS_RECORD: json.dumps(dict(record, run_id=""))}))["run_id"] == ""


@pytest.mark.parametrize("label, run_id", [("run-9", "run-9"), ("", "run-1"), (None, "run-1")])
def test_a_marks_run_is_its_label_else_the_records(label, run_id):
    # the run-id label, as the node shows it, first; the record's run without it
    record = json.dumps({"run_id": "run-1", "marked_at": NOW, "expires": NOW + HOUR, "condition": ""})
    labels = {nm.RESULT_LABEL: "pass", nm.EXPIRES_LABEL: str(NOW + HOUR)}
    if label is not None:
        labels[nm.RUN_LABEL] = label
    found = nm.status(node(labels=labels, annotations={nm.MARKS_RECORD: record}), NOW)
    assert (found["state"], found["run_id"]) == ("verified", run_id)
