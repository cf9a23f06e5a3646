# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The remediation core (cluster/remediation.py): which marks each verdict puts on a node, and that undoing removes
only the collection's."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks, remediation as rem
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

ADMIN_TAINT = {"key": "admin/maintenance", "value": "disk", "effect": "NoSchedule"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def options(label=True, quarantine="taint", **taint):
    return rem.check_options(label, "gpufleet.burnin/verified", quarantine, taint or None)


def node(name="n1", labels=None, annotations=None, taints=None, unschedulable=False, version="7"):
    spec = {"taints": list(taints)} if taints is not None else {}
    if unschedulable:
        spec["unschedulable"] = True
    return rem.node_state(
        {"metadata": {"name": name, "resourceVersion": version, "labels": dict(labels or {"team": "ml"}), "annotations": dict(annotations or {})}, "spec": spec}
    )


def test_a_passing_node_gets_the_verified_label_with_the_run_id_and_its_record():
    before = node()
    after = rem.plan_apply(before, "pass", "run-1", options())
    assert after["labels"] == {"team": "ml", "gpufleet.burnin/verified": "run-1"}
    assert after["annotations"] == {rem.LABEL_RECORD: "gpufleet.burnin/verified"}
    assert after["taints"] == [] and not after["unschedulable"]
    assert before["labels"] == {"team": "ml"}, "the state read is not changed"
    assert rem.merge_patch(before, after) == {
        "metadata": {"resourceVersion": "7", "labels": {"gpufleet.burnin/verified": "run-1"}, "annotations": {rem.LABEL_RECORD: "gpufleet.burnin/verified"}}
    }


def test_a_failing_node_is_tainted_and_the_other_taints_are_kept():
    before = node(taints=[GPU_TAINT, ADMIN_TAINT])
    after = rem.plan_apply(before, "fail", "run-1", options())
    assert after["taints"] == [GPU_TAINT, ADMIN_TAINT, {"key": "gpufleet.burnin/bad", "value": "run-1", "effect": "NoSchedule"}]
    patch = rem.merge_patch(before, after)
    # The whole list goes back (taints are atomic for every patch type), guarded by the resourceVersion read.
    assert patch["spec"] == {"taints": after["taints"]} and patch["metadata"]["resourceVersion"] == "7"
    assert "labels" not in patch["metadata"]
    assert [(c["what"], c["before"], c["after"]) for c in rem.changes(before, after) if c["what"] != "annotation"] == [
        ("taint", None, "gpufleet.burnin/bad=run-1:NoSchedule")
    ]


def test_a_failing_node_loses_the_verified_label_of_an_earlier_run():
    before = node(labels={"gpufleet.burnin/verified": "run-0"}, annotations={rem.LABEL_RECORD: "gpufleet.burnin/verified"})
    after = rem.plan_apply(before, "fail", "run-1", options(quarantine="none"))
    assert after["labels"] == {} and after["annotations"] == {}
    assert rem.merge_patch(before, after)["metadata"]["labels"] == {"gpufleet.burnin/verified": None}


def test_the_taint_key_and_effect_are_options():
    after = rem.plan_apply(node(), "fail", "r", options(key="example.com/quarantine", effect="NoExecute"))
    assert after["taints"] == [{"key": "example.com/quarantine", "value": "r", "effect": "NoExecute"}]
    assert after["annotations"][rem.TAINT_RECORD] == "example.com/quarantine:NoExecute"


def test_cordon_records_who_cordoned_and_keeps_an_admins_cordon():
    after = rem.plan_apply(node(), "fail", "run-1", options(quarantine="cordon"))
    assert after["unschedulable"] is True and after["annotations"][rem.CORDON_RECORD] == "run-1"
    assert rem.merge_patch(node(), after)["spec"] == {"unschedulable": True}
    admins = node(unschedulable=True)
    assert rem.merge_patch(admins, rem.plan_apply(admins, "fail", "run-1", options(quarantine="cordon", label=False))) is None


def test_warn_and_unjudged_nodes_are_untouched():
    before = node(taints=[ADMIN_TAINT])
    for verdict in ("warn", None):
        assert rem.merge_patch(before, rem.plan_apply(before, verdict, "run-1", options(quarantine="cordon"))) is None
    assert not rem.touches("warn", options()) and rem.touches("fail", options()) and rem.touches("pass", options())
    assert not rem.touches("pass", options(label=False)) and not rem.touches("fail", options(label=False, quarantine="none"))


def test_a_second_run_changes_nothing():
    opts = options()
    for verdict in ("pass", "fail"):
        once = rem.plan_apply(node(), verdict, "run-1", opts)
        assert rem.merge_patch(once, rem.plan_apply(once, verdict, "run-1", opts)) is None


def test_a_later_run_takes_over_the_collections_taint_but_not_a_foreign_one():
    tainted = rem.plan_apply(node(), "fail", "run-1", options())
    again = rem.plan_apply(tainted, "fail", "run-2", options())
    assert [t["value"] for t in again["taints"]] == ["run-2"]
    foreign = node(taints=[{"key": "gpufleet.burnin/bad", "value": "by-hand", "effect": "NoSchedule"}])
    assert rem.merge_patch(foreign, rem.plan_apply(foreign, "fail", "run-2", options())) is None


def test_undo_removes_only_what_the_run_set():
    marked = node(taints=[ADMIN_TAINT], labels={"team": "ml", "admin/verified": "yes"})
    marked = rem.plan_apply(marked, "fail", "run-1", options(quarantine="taint"))
    marked["annotations"]["admin/note"] = "keep"
    undone = rem.plan_undo(marked, "run-1")
    assert undone["taints"] == [ADMIN_TAINT]
    assert undone["labels"] == {"team": "ml", "admin/verified": "yes"}
    assert undone["annotations"] == {"admin/note": "keep"}
    assert rem.merge_patch(marked, undone)["spec"] == {"taints": [ADMIN_TAINT]}
    # Only the collection's taint: the list becomes empty, the field goes.
    alone = rem.plan_apply(node(), "fail", "run-1", options())
    assert rem.merge_patch(alone, rem.plan_undo(alone, "run-1"))["spec"] == {"taints": None}


def test_undo_of_another_run_keeps_the_marks_of_a_newer_one_and_all_runs_removes_them():
    labelled = rem.plan_apply(node(), "pass", "run-2", options())
    assert rem.merge_patch(labelled, rem.plan_undo(labelled, "run-1")) is None
    assert rem.plan_undo(labelled, None)["labels"] == {"team": "ml"}
    assert rem.plan_undo(labelled, "run-2")["annotations"] == {}


def test_undo_uncordons_only_what_the_collection_cordoned():
    cordoned = rem.plan_apply(node(), "fail", "run-1", options(quarantine="cordon"))
    undone = rem.plan_undo(cordoned, "run-1")
    assert undone["unschedulable"] is False and rem.CORDON_RECORD not in undone["annotations"]
    assert rem.merge_patch(cordoned, undone)["spec"] == {"unschedulable": None}
    admins = node(unschedulable=True, taints=[ADMIN_TAINT], labels={"admin/own": "x"})
    assert not rem.is_marked(admins)
    assert rem.merge_patch(admins, rem.plan_undo(admins, None)) is None


def test_the_diff_view_shows_labels_taints_unschedulable_and_the_records():
    after = rem.plan_apply(node(taints=[GPU_TAINT]), "fail", "r1", options(quarantine="taint"))
    view = rem.diff_view(dict(after, annotations=dict(after["annotations"], other="x")))
    assert view == {
        "labels": {"team": "ml"},
        "taints": ["nvidia.com/gpu=present:NoSchedule", "gpufleet.burnin/bad=r1:NoSchedule"],
        "unschedulable": False,
        "annotations": {rem.TAINT_RECORD: "gpufleet.burnin/bad:NoSchedule"},
    }


def test_the_record_leaves_out_the_bookkeeping_annotations():
    before = node()
    after = rem.plan_apply(before, "pass", "r1", options())
    done = rem.record("apply", "r1", rem.changes(before, after))
    assert done["changes"] == [{"node": "n1", "what": "label", "key": "gpufleet.burnin/verified", "before": None, "after": "r1"}]
    assert done["nodes"] == ["n1"] and done["mode"] == "apply" and not done["check_mode"]


@pytest.mark.parametrize(
    "args, field, words",
    [
        ((True, "Bad Key", "none", None), "verified_label", "qualified name"),
        ((True, "ok", "drain", None), "quarantine", "none, taint, cordon"),
        ((True, "ok", "taint", {"key": "x", "effect": "NoWay"}), "quarantine_taint.effect", "NoSchedule"),
        ((True, "ok", "taint", {"key": "-x-"}), "quarantine_taint.key", "qualified name"),
        ((True, "ok", "taint", {"value": "v"}), "quarantine_taint", "allowed: key, effect"),
        (("yes", "ok", "none", None), "label_verified", "true or false"),
    ],
)
def test_bad_options_name_the_option(args, field, words):
    with pytest.raises(ConfigError) as raised:
        rem.check_options(*args)
    assert raised.value.field == field and words in str(raised.value)


def test_node_verdicts_and_run_ids_are_checked():
    assert rem.check_node_verdicts("node_verdicts", {"b": {"verdict": "fail", "reasons": []}, "a": {"verdict": "pass"}}) == {"a": "pass", "b": "fail"}
    with pytest.raises(ConfigError, match=r"node_verdicts\.a\.verdict: must be one of pass, warn, fail"):
        rem.check_node_verdicts("node_verdicts", {"a": {"verdict": "error"}})
    with pytest.raises(ConfigError, match="run_id: must be a label value"):
        rem.check_run_id("run_id", "not a label value")
    with pytest.raises(ConfigError, match="run_id: must be a non-empty string"):
        rem.check_run_id("run_id", "")
    assert rem.check_run_id("run_id", "", allow_empty=True) == ""


def test_the_role_checks_its_remediation_variables():
    checked = check_role_vars(
        {
            "burnin_label_verified": "yes",
            "burnin_verified_label": "example.com/ok",
            "burnin_quarantine": "cordon",
            "burnin_quarantine_taint": '{"effect": "NoExecute"}',
        }
    )
    assert checked["burnin_label_verified"] is True and checked["burnin_quarantine"] == "cordon"
    assert checked["burnin_quarantine_taint"] == {"key": "gpufleet.burnin/bad", "effect": "NoExecute"}
    with pytest.raises(ConfigError) as raised:
        check_role_vars({"burnin_verified_label": "has space"})
    assert raised.value.field == "burnin_verified_label" and "qualified name" in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        check_role_vars({"burnin_quarantine": "evict"})
    assert raised.value.field == "burnin_quarantine" and "none, taint, cordon" in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        check_role_vars({"burnin_quarantine_taint": {"key": "ok", "effect": "Never"}})
    assert raised.value.field == "burnin_quarantine_taint.effect"


# --- what the mutation run of cluster/remediation.py (issue 47) found untested ---------------------------------------
def from_json(state):
    """STATE as the action has it: read back from the API server's JSON, its strings new objects."""
    return json.loads(json.dumps(state))


def test_a_taint_key_that_is_no_string_is_refused_under_its_field():
    with pytest.raises(ConfigError) as raised:
        rem.check_options(True, "ok", "taint", {"key": 5})
    assert raised.value.field == "quarantine_taint.key"


@pytest.mark.parametrize("older, newer", [("run-1", "run-2"), ("a", "b"), ("20261206-1", "20261207-1")])
def test_undo_of_a_later_run_keeps_every_mark_of_an_earlier_one(older, newer):
    # the run ids compared by equality only: an earlier run's id sorting before the undone one's is not the same run
    marks = json.dumps({"run_id": older, "marked_at": 1764770000, "expires": 1764773600, "condition": ""})
    state = rem.plan_apply(node(annotations={node_marks.MARKS_RECORD: marks}), "fail", older, options(quarantine="cordon"))
    state["labels"][node_marks.RUN_LABEL] = older
    assert rem.plan_undo(state, newer) == state
    undone = rem.plan_undo(state, older)
    assert not undone["unschedulable"] and undone["annotations"] == {} and node_marks.RUN_LABEL not in undone["labels"]


def test_undo_for_all_runs_uncordons_what_the_collection_cordoned():
    cordoned = rem.plan_apply(node(), "fail", "run-1", options(quarantine="cordon"))
    undone = rem.plan_undo(cordoned, None)
    assert undone["unschedulable"] is False and undone["annotations"] == {}


def test_undo_compares_the_taints_run_id_by_value():
    # the taint and the run id come from the cluster's JSON and the task's arguments: equal strings, other objects
    tainted = from_json(rem.plan_apply(node(), "fail", "run-1", options()))
    run_id = "".join(["run", "-1"])
    assert tainted["taints"][0]["value"] is not run_id
    assert rem.plan_undo(tainted, run_id)["taints"] == [] and rem.TAINT_RECORD not in rem.plan_undo(tainted, run_id)["annotations"]


def test_a_cordon_and_an_uncordon_are_both_changes():
    cordoned = rem.plan_apply(node(), "fail", "run-1", options(quarantine="cordon"))
    for before, after in ((node(), cordoned), (cordoned, rem.plan_undo(cordoned, "run-1"))):
        shown = [(c["what"], c["key"], c["before"], c["after"]) for c in rem.changes(before, after) if c["what"] != "annotation"]
        assert shown == [("unschedulable", "spec.unschedulable", before["unschedulable"], after["unschedulable"])]


@pytest.mark.parametrize(
    "mode, nodes, missing, check_mode, text",
    [
        ("apply", ["n1", "n2"], (), False, "remediated 2 node(s): n1, n2"),
        ("apply", [], (), False, "remediated 0 node(s)"),
        ("undo", ["n1"], ["n9"], False, "undid the remediation of 1 node(s): n1; not found: n9"),
        ("expire", [], ["n8", "n9"], True, "would remove the expired and superseded marks of 0 node(s); not found: n8, n9"),
        ("apply", ["n1"], (), True, "would remediate 1 node(s): n1"),
        ("undo", [], (), True, "would undo the remediation of 0 node(s)"),
    ],
)
def test_the_summary_names_the_nodes_changed_and_those_not_found(mode, nodes, missing, check_mode, text):
    assert rem.summary(mode, nodes, missing, check_mode) == text


def test_the_cordon_and_the_marks_run_id_are_compared_by_value():
    marks = json.dumps({"run_id": "run-1", "marked_at": 1764770000, "expires": 1764773600, "condition": ""})
    state = from_json(rem.plan_apply(node(annotations={node_marks.MARKS_RECORD: marks}), "fail", "run-1", options(quarantine="cordon")))
    undone = rem.plan_undo(state, "".join(["run", "-1"]))
    assert not undone["unschedulable"] and undone["annotations"] == {}


def test_a_verdict_read_from_json_is_compared_by_value():
    passed = json.loads('{"verdict": "pass"}')["verdict"]
    assert rem.touches(passed, options(quarantine="none")) and not rem.touches(passed, options(label=False, quarantine="none"))


def test_undo_of_another_run_keeps_its_taint_and_a_taint_removed_by_hand_loses_its_record():
    tainted = rem.plan_apply(node(taints=[ADMIN_TAINT]), "fail", "run-2", options())
    assert rem.plan_undo(tainted, "run-1") == tainted
    by_hand = dict(tainted, taints=[ADMIN_TAINT])
    for run_id in ("run-2", "run-1", None):
        undone = rem.plan_undo(by_hand, run_id)
        assert undone["taints"] == [ADMIN_TAINT] and rem.TAINT_RECORD not in undone["annotations"]


def test_no_node_verdicts_are_none_to_act_on():
    assert rem.check_node_verdicts("node_verdicts", None) == {} and rem.check_node_verdicts("node_verdicts", {}) == {}


def test_the_verified_labels_run_id_is_compared_by_value():
    labelled = from_json(rem.plan_apply(node(), "pass", "run-1", options()))
    undone = rem.plan_undo(labelled, "".join(["run", "-1"]))
    assert undone["labels"] == {"team": "ml"} and undone["annotations"] == {}


@pytest.mark.parametrize("older, newer", [("run-1", "run-2"), ("a", "b")])
def test_undo_of_a_later_run_keeps_the_taint_and_the_label_of_an_earlier_one(older, newer):
    for verdict in ("fail", "pass"):
        state = rem.plan_apply(node(), verdict, older, options(quarantine="taint"))
        assert rem.plan_undo(state, newer) == state
        assert rem.plan_undo(state, older)["annotations"] == {}


def test_a_taint_of_the_same_key_with_another_effect_is_no_quarantine():
    # a taint is its key and its effect: an admin's gpufleet.burnin/bad:NoExecute (sorting before NoSchedule) is not ours
    other = {"key": "gpufleet.burnin/bad", "value": "admin", "effect": "NoExecute"}
    after = rem.plan_apply(node(taints=[other]), "fail", "run-1", options())
    assert after["taints"] == [other, {"key": "gpufleet.burnin/bad", "value": "run-1", "effect": "NoSchedule"}]
    assert after["annotations"][rem.TAINT_RECORD] == "gpufleet.burnin/bad:NoSchedule"
    assert rem.plan_undo(after, "run-1")["taints"] == [other]


@pytest.mark.parametrize("earlier", ["example.com/verified", "old.example.com/verified", "gpufleet.burnin/ok"])
def test_the_collections_label_under_any_earlier_key_is_moved_to_the_new_one(earlier):
    state = node(labels={earlier: "run-1"}, annotations={rem.LABEL_RECORD: earlier})
    after = rem.plan_apply(state, "pass", "run-2", options())
    assert after["labels"] == {"gpufleet.burnin/verified": "run-2"}
    assert after["annotations"] == {rem.LABEL_RECORD: "gpufleet.burnin/verified"}


@pytest.mark.parametrize("quarantine, wanted", [("none", False), ("taint", True), ("cordon", True)])
def test_any_quarantine_but_none_is_a_remediation(quarantine, wanted):
    assert rem.wanted(options(label=False, quarantine=quarantine)) is wanted
    assert rem.touches("fail", options(label=False, quarantine=quarantine)) is wanted


def test_a_taint_taken_over_or_removed_is_a_change_with_both_sides():
    first = rem.plan_apply(node(taints=[ADMIN_TAINT]), "fail", "run-1", options())
    second = rem.plan_apply(first, "fail", "run-2", options())
    undone = rem.plan_undo(second, "run-2")
    shown = [[(c["key"], c["before"], c["after"]) for c in rem.changes(b, a) if c["what"] == "taint"] for b, a in ((first, second), (second, undone))]
    assert shown == [
        [("gpufleet.burnin/bad:NoSchedule", "gpufleet.burnin/bad=run-1:NoSchedule", "gpufleet.burnin/bad=run-2:NoSchedule")],
        [("gpufleet.burnin/bad:NoSchedule", "gpufleet.burnin/bad=run-2:NoSchedule", None)],
    ]


def test_a_quarantine_mode_given_at_run_time_is_compared_by_value():
    cordon = "".join(["cor", "don"])
    after = rem.plan_apply(node(), "fail", "run-1", options(quarantine=cordon))
    assert after["unschedulable"] is True and after["annotations"] == {rem.CORDON_RECORD: "run-1"}


def test_verdicts_and_modes_given_at_run_time_are_compared_by_value():
    # the node verdicts come from the cluster result's JSON and the options from the task's arguments
    verdicts = json.loads('["pass", "fail"]')
    taint, none = "".join(["ta", "int"]), "".join(["no", "ne"])
    assert rem.plan_apply(node(), verdicts[0], "run-1", options())["labels"] == {"team": "ml", "gpufleet.burnin/verified": "run-1"}
    failed = rem.plan_apply(node(), verdicts[1], "run-1", options(quarantine=taint))
    assert failed["taints"] == [{"key": "gpufleet.burnin/bad", "value": "run-1", "effect": "NoSchedule"}]
    assert not rem.wanted(options(label=False, quarantine=none)) and rem.wanted(options(label=True, quarantine=none))


def test_a_second_run_on_a_node_read_back_changes_nothing():
    # the node read from the cluster holds the run id of the first pass as a new string; the same run again is no change
    for verdict, opts in (("pass", options()), ("fail", options(quarantine="cordon")), ("fail", options())):
        once = from_json(rem.plan_apply(node(), verdict, "run-1", opts))
        again = rem.plan_apply(once, verdict, "".join(["run", "-1"]), opts)
        assert rem.changes(once, again) == [] and rem.merge_patch(once, again) is None


def test_a_label_whose_value_changes_is_a_change_and_in_the_patch():
    first = rem.plan_apply(node(), "pass", "run-1", options())
    second = rem.plan_apply(first, "pass", "run-2", options())
    assert rem.changes(first, second) == [{"node": "n1", "what": "label", "key": "gpufleet.burnin/verified", "before": "run-1", "after": "run-2"}]
    assert rem.merge_patch(first, second) == {"metadata": {"resourceVersion": "7", "labels": {"gpufleet.burnin/verified": "run-2"}}}


def test_an_unchanged_condition_is_no_change():
    condition = {"type": "GpuBurninPassed", "status": "True", "reason": "BurninPass", "message": "m", "lastHeartbeatTime": "t", "lastTransitionTime": "t"}
    state = rem.node_state({"metadata": {"name": "n1", "labels": {}, "annotations": {}}, "spec": {}, "status": {"conditions": [condition]}})
    assert state["condition"] == condition
    assert rem.changes(state, rem.plan_apply(state, "warn", "run-1", options())) == []


def test_undo_of_an_earlier_run_keeps_a_later_runs_cordon():
    cordoned = rem.plan_apply(node(), "fail", "run-2", options(quarantine="cordon"))
    assert rem.plan_undo(cordoned, "run-1") == cordoned


def test_a_taint_of_our_key_with_an_effect_sorting_after_ours_is_no_quarantine_either():
    other = {"key": "gpufleet.burnin/bad", "value": "admin", "effect": "PreferNoSchedule"}
    after = rem.plan_apply(node(taints=[other]), "fail", "run-1", options())
    assert after["taints"] == [other, {"key": "gpufleet.burnin/bad", "value": "run-1", "effect": "NoSchedule"}]


def test_the_summary_is_of_a_real_run_by_default_and_the_record_keeps_the_run_id():
    assert rem.summary("apply", ["n1"]) == "remediated 1 node(s): n1"
    assert rem.record("undo", "run-7", [])["run_id"] == "run-7" and rem.record("expire", None, [])["run_id"] == ""


# --- issue 47, seventh round: the survivors of cluster/remediation.py's whole run ------------------------------------
@pytest.mark.parametrize(
    "verdict, label, quarantine, marks, touched",
    [
        ("fail", False, "taint", False, True),
        ("fail", False, "cordon", False, True),
        ("fail", True, "none", False, True),  # a failing node loses the collection's verified label
        ("fail", False, "none", False, False),  # nothing wanted at all
        ("pass", True, "none", False, True),
        ("pass", False, "taint", False, False),  # a passing node is never quarantined
        ("warn", True, "taint", False, False),
        (None, True, "taint", False, False),
        ("warn", False, "none", True, True),  # node marks: every judged node
        ("pass", False, "none", True, True),
    ],
)
def test_which_node_can_change_under_the_options_with_verdicts_read_from_json(verdict, label, quarantine, marks, touched):
    # the node verdicts come from the cluster result's JSON: new strings, compared by value
    given = json.loads(json.dumps(verdict))
    opts = dict(options(label=label, quarantine=quarantine), node_marks=marks)
    assert rem.touches(given, opts) is touched
