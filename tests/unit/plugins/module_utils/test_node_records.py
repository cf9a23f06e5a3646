# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The record no node can write (cluster/node_records.py): planning acts on the record ConfigMap's entry, never on a
node's own annotations, and a record from the future is ignored. Each rule both ways, and the three forgeries of
issue 43 planned as the remediation plans them (plugins/module_utils/burnin/remediation_run.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks, node_records, remediation as rem
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError

NOW = 1_800_000_000
ADMIN_NOEXECUTE = {"key": "admin.example.com/drain", "value": "rack7", "effect": "NoExecute"}
ADMIN_LABEL = "node-restriction.kubernetes.io/pool"
MARK_OPTIONS = dict(node_marks=True, mark_ttl_hours=1, mark_condition=False)


def node(name="n1", labels=None, annotations=None, taints=None):
    return rem.node_state(
        {
            "metadata": {"name": name, "resourceVersion": "3", "labels": dict(labels or {}), "annotations": dict(annotations or {})},
            "spec": {"taints": taints or []},
        }
    )


def options(label=True, quarantine="taint"):
    return dict(rem.check_options(label, "gpufleet.burnin/verified", quarantine, None), **MARK_OPTIONS)


def marks_text(run_id, marked_at, ttl=3600):
    return json.dumps({"run_id": run_id, "marked_at": marked_at, "expires": marked_at + ttl, "condition": ""})


def configmap(**entries):
    return {"data": dict((name, node_records.entry_text(entry)) for name, entry in entries.items())}


def planned(state, entry, plan):
    """What the action does for one node: plan on the trusted state; (after, merge patch, new entry)."""
    after = plan(node_records.trusted_state(state, entry))
    return after, rem.merge_patch(state, after), node_records.entry_for(after, "run-2", NOW, entry)


# --- reading the ConfigMap --------------------------------------------------------------------------------------------
def test_parse_reads_the_entries_the_collection_wrote():
    entry = {"records": {rem.LABEL_RECORD: "gpufleet.burnin/verified"}, "run_id": "run-1", "at": NOW}
    entries, unreadable = node_records.parse(configmap(n1=entry))
    assert entries == {"n1": entry} and unreadable == []


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        json.dumps({"records": {}, "run_id": "r", "at": NOW}),  # no record
        json.dumps({"records": {"team": "x"}, "run_id": "r", "at": NOW}),  # not one of the collection's keys
        json.dumps({"records": {rem.CORDON_RECORD: 1}, "run_id": "r", "at": NOW}),
        json.dumps({"records": {rem.CORDON_RECORD: "r"}, "run_id": "r", "at": True}),
        json.dumps({"records": {rem.CORDON_RECORD: "r"}, "run_id": 5, "at": NOW}),
        json.dumps({"records": {rem.CORDON_RECORD: "r" * 3000}, "run_id": "r", "at": NOW}),  # past the bound
    ],
)
def test_parse_names_an_entry_it_cannot_read_and_keeps_nothing_of_it(text):
    entries, unreadable = node_records.parse({"data": {"n1": text}})
    assert entries == {} and unreadable == ["n1"]


def test_no_configmap_is_no_record():
    assert node_records.parse(None) == ({}, [])
    assert node_records.parse({"data": None}) == ({}, [])


def test_the_namespace_is_checked_by_name():
    assert node_records.check_namespace("record_namespace", "gpufleet-burnin") == "gpufleet-burnin"
    with pytest.raises(BurninError, match="record_namespace"):
        node_records.check_namespace("record_namespace", "Bad_NS")


# --- the clock -------------------------------------------------------------------------------------------------------
def test_an_entry_written_within_the_clock_skew_is_used_and_one_beyond_it_is_ignored():
    near = {"records": {rem.CORDON_RECORD: "r"}, "run_id": "r", "at": NOW + node_records.CLOCK_SKEW}
    far = dict(near, at=NOW + node_records.CLOCK_SKEW + 1)
    assert not node_records.from_the_future(near, NOW)
    assert node_records.from_the_future(far, NOW)
    assert node_records.usable({"a": near, "b": far}, NOW) == ({"a": near}, ["b"])


def test_marks_made_in_the_future_make_the_entry_from_the_future_though_it_was_written_now():
    ok = {"records": {node_marks.MARKS_RECORD: marks_text("r", NOW - 60)}, "run_id": "r", "at": NOW}
    ahead = {"records": {node_marks.MARKS_RECORD: marks_text("r", NOW + 10**6)}, "run_id": "r", "at": NOW}
    assert not node_records.from_the_future(ok, NOW)
    assert node_records.from_the_future(ahead, NOW)


def test_plan_expire_never_lets_a_mark_from_the_future_supersede_the_others():
    valid = [node(name, annotations={node_marks.MARKS_RECORD: marks_text("run-a", NOW - 60)}) for name in ("n1", "n2")]
    later = node("n3", annotations={node_marks.MARKS_RECORD: marks_text("run-b", NOW - 30)})
    forged = node("n3", annotations={node_marks.MARKS_RECORD: marks_text("run-b", NOW + 10**8, ttl=10**9)})
    # A later run within the clock does supersede (the rule stands) ...
    assert node_marks.plan_expire(valid + [later], NOW) == {"n1": "superseded by run run-b", "n2": "superseded by run run-b"}
    # ... a mark from the future does not.
    assert node_marks.plan_expire(valid + [forged], NOW) == {}


# --- the trusted state -----------------------------------------------------------------------------------------------
def test_the_trusted_state_has_the_entrys_records_and_none_of_the_nodes_own():
    state = node(annotations={rem.TAINT_RECORD: "admin.example.com/drain:NoExecute", "team": "ml"})
    entry = {"records": {rem.CORDON_RECORD: "run-1"}, "run_id": "run-1", "at": NOW}
    assert node_records.trusted_state(state, entry)["annotations"] == {rem.CORDON_RECORD: "run-1", "team": "ml"}
    assert node_records.trusted_state(state, None)["annotations"] == {"team": "ml"}
    assert state["annotations"][rem.TAINT_RECORD], "the state read is not changed"


def test_untrusted_names_the_annotation_records_that_differ_from_the_entry():
    entry = {"records": {rem.CORDON_RECORD: "run-1"}, "run_id": "run-1", "at": NOW}
    assert node_records.untrusted(node(annotations={rem.CORDON_RECORD: "run-1"}), entry) == []
    assert node_records.untrusted(node(annotations={rem.CORDON_RECORD: "run-1", rem.TAINT_RECORD: "k:NoExecute"}), entry) == [rem.TAINT_RECORD]
    assert node_records.untrusted(node(), entry) == [rem.CORDON_RECORD]


# --- the entry written -----------------------------------------------------------------------------------------------
def test_entry_for_keeps_the_entry_when_nothing_changed_and_writes_a_new_one_when_it_did():
    before = {"records": {rem.CORDON_RECORD: "run-1"}, "run_id": "run-1", "at": NOW - 100}
    same = node(annotations={rem.CORDON_RECORD: "run-1"})
    assert node_records.entry_for(same, "run-2", NOW, before) is before
    assert node_records.data_patch("n1", before, before) is None
    changed = node(annotations={rem.CORDON_RECORD: "run-2"})
    entry = node_records.entry_for(changed, "run-2", NOW, before)
    assert entry == {"records": {rem.CORDON_RECORD: "run-2"}, "run_id": "run-2", "at": NOW}
    assert node_records.data_patch("n1", before, entry) == {"data": {"n1": node_records.entry_text(entry)}}


def test_no_record_left_removes_the_nodes_key_only():
    before = {"records": {rem.CORDON_RECORD: "run-1"}, "run_id": "run-1", "at": NOW}
    assert node_records.entry_for(node(), "run-1", NOW, before) is None
    assert node_records.data_patch("n1", before, None) == {"data": {"n1": None}}


def test_an_expiry_keeps_the_entrys_run_id():
    before = {"records": {rem.CORDON_RECORD: "run-1", node_marks.MARKS_RECORD: marks_text("run-1", NOW)}, "run_id": "run-1", "at": NOW}
    assert node_records.entry_for(node(annotations={rem.CORDON_RECORD: "run-1"}), "", NOW, before)["run_id"] == "run-1"


def test_the_configmap_made_holds_the_patchs_entries_and_the_collections_label():
    made = node_records.configmap("gpufleet-burnin", {"data": {"n1": "x", "n2": None}})
    assert made["metadata"] == {"name": node_records.RECORD_NAME, "namespace": "gpufleet-burnin", "labels": {"app.kubernetes.io/managed-by": "gpufleet.burnin"}}
    assert made["data"] == {"n1": "x"}


def test_an_entry_written_reads_back_the_same():
    state = rem.plan_apply(node(), "fail", "run-1", options())
    entry = node_records.entry_for(state, "run-1", NOW)
    assert node_records.parse({"data": {"n1": node_records.entry_text(entry)}})[0] == {"n1": entry}


# --- the three forgeries of issue 43, and what the record still allows ----------------------------------------------
def test_a_forged_quarantine_record_does_not_remove_an_admins_noexecute_taint():
    forged = node(taints=[dict(ADMIN_NOEXECUTE)], annotations={rem.TAINT_RECORD: "admin.example.com/drain:NoExecute"})
    # What the annotation alone would do (the old behaviour): the taint goes.
    assert rem.plan_undo(forged, None)["taints"] == []
    after, patch, entry = planned(forged, None, lambda state: rem.plan_undo(state, None))
    assert after["taints"] == [ADMIN_NOEXECUTE]
    assert "spec" not in patch, "the taints are not written"
    assert patch["metadata"]["annotations"] == {rem.TAINT_RECORD: None}, "the annotation becomes a true copy: none"
    assert entry is None


def test_the_recorded_quarantine_taint_is_removed_by_the_cleanup():
    ours = {"key": "gpufleet.burnin/bad", "value": "run-1", "effect": "NoSchedule"}
    state = node(taints=[dict(ADMIN_NOEXECUTE), ours], annotations={rem.TAINT_RECORD: "gpufleet.burnin/bad:NoSchedule"})
    entry = {"records": {rem.TAINT_RECORD: "gpufleet.burnin/bad:NoSchedule"}, "run_id": "run-1", "at": NOW}
    after, patch, new_entry = planned(state, entry, lambda s: rem.plan_undo(s, None))
    assert after["taints"] == [ADMIN_NOEXECUTE] and patch["spec"]["taints"] == [ADMIN_NOEXECUTE]
    assert new_entry is None


def test_a_forged_verified_label_record_does_not_remove_an_admins_restricted_label():
    forged = node(labels={ADMIN_LABEL: "a100"}, annotations={rem.LABEL_RECORD: ADMIN_LABEL})
    assert ADMIN_LABEL not in rem.plan_apply(forged, "pass", "run-2", options())["labels"], "the old behaviour"
    after, patch, entry = planned(forged, None, lambda state: rem.plan_apply(state, "pass", "run-2", options()))
    assert after["labels"] == {ADMIN_LABEL: "a100", "gpufleet.burnin/verified": "run-2"}
    assert ADMIN_LABEL not in patch["metadata"]["labels"]
    assert entry["records"] == {rem.LABEL_RECORD: "gpufleet.burnin/verified"}


def test_a_recorded_verified_label_under_an_earlier_key_is_removed():
    state = node(labels={"old.example.com/verified": "run-1"}, annotations={rem.LABEL_RECORD: "old.example.com/verified"})
    entry = {"records": {rem.LABEL_RECORD: "old.example.com/verified"}, "run_id": "run-1", "at": NOW}
    after, _patch, _entry = planned(state, entry, lambda s: rem.plan_apply(s, "pass", "run-2", options()))
    assert after["labels"] == {"gpufleet.burnin/verified": "run-2"}


def test_a_forged_mark_from_the_future_does_not_strip_the_other_nodes_valid_marks():
    valid = dict((name, {"records": {node_marks.MARKS_RECORD: marks_text("run-a", NOW - 60)}, "run_id": "run-a", "at": NOW - 60}) for name in ("n1", "n2"))
    states = [node(name, annotations=entry["records"]) for name, entry in valid.items()]
    # A forged mark a second later than theirs: read from the annotations (the old behaviour), it supersedes them.
    forged = node("n3", annotations={node_marks.MARKS_RECORD: marks_text("evil", NOW - 1)})
    assert sorted(node_marks.plan_expire(states + [forged], NOW)) == ["n1", "n2"]
    forged = node("n3", annotations={node_marks.MARKS_RECORD: marks_text("evil", NOW + 10**8, ttl=10**9)})
    # Read from the record, n3 has no entry: nothing is superseded.
    trusted = [node_records.trusted_state(state, valid.get(state["name"])) for state in states + [forged]]
    trusted = [state for state in trusted if node_marks.read_record(state) is not None]
    assert node_marks.plan_expire(trusted, NOW) == {}
    # The same forgery written into the record itself (by anyone who may write it) is ignored as from the future.
    entries = dict(valid, n3={"records": dict(forged["annotations"]), "run_id": "evil", "at": NOW})
    kept, future = node_records.usable(entries, NOW)
    assert future == ["n3"] and sorted(kept) == ["n1", "n2"]


def test_the_note_names_what_was_ignored_and_is_empty_otherwise():
    assert node_records.note([], [], {}) == ""
    text = node_records.note(["n3"], ["n4"], {"n5": [rem.TAINT_RECORD]})
    assert "n3" in text and "future" in text and "n4" in text and rem.TAINT_RECORD + " on n5" in text


# --- what the mutation run of cluster/node_records.py (issue 47) found untested ------------------------------------
@pytest.mark.parametrize("now", [NOW, NOW + 100, NOW + 4095, 1_700_000_123])
def test_the_clock_skew_is_added_to_any_now(now):
    # the skew's bits overlap those of most clocks (`now + skew` -> `now ^ skew` agreed on NOW alone)
    skew = node_records.CLOCK_SKEW
    near = {"records": {rem.CORDON_RECORD: "r"}, "run_id": "r", "at": now + skew}
    assert not node_records.from_the_future(near, now)
    assert node_records.from_the_future(dict(near, at=now + skew + 1), now)


def entry_of_length(size):
    base = {"records": {rem.CORDON_RECORD: ""}, "run_id": "r", "at": NOW}
    pad = size - len(json.dumps(base))
    text = json.dumps(dict(base, records={rem.CORDON_RECORD: "r" * pad}))
    assert len(text) == size
    return text


@pytest.mark.parametrize("size, readable", [(2047, True), (2048, True), (2049, False)])
def test_an_entry_of_at_most_2048_characters_is_read(size, readable):
    entries, unreadable = node_records.parse({"data": {"n1": entry_of_length(size)}})
    assert (sorted(entries), unreadable) == ((["n1"], []) if readable else ([], ["n1"]))


def test_an_entry_read_back_equal_to_the_new_one_is_no_change():
    # the entries compared come from two JSON reads: equal, never the same object
    entry = {"records": {rem.CORDON_RECORD: "run-1"}, "run_id": "run-1", "at": NOW}
    before = node_records.parse(configmap(n1=entry))[0]["n1"]
    after = json.loads(node_records.entry_text(entry))
    assert before is not after and node_records.data_patch("n1", before, after) is None


def test_the_entry_text_is_compact_json_with_sorted_keys():
    # the same entry is written as the same text whatever the order its keys were made in
    entry = {"run_id": "run-1", "records": {rem.TAINT_RECORD: "k:NoSchedule", rem.CORDON_RECORD: "run-1"}, "at": NOW}
    assert node_records.entry_text(entry) == (
        '{"at":%d,"records":{"%s":"run-1","%s":"k:NoSchedule"},"run_id":"run-1"}' % (NOW, rem.CORDON_RECORD, rem.TAINT_RECORD)
    )


def test_the_note_says_each_thing_ignored_in_its_own_words():
    assert node_records.note(["n3", "n6"], [], {}) == "ignored the record of n3, n6: written at a time from the future"
    assert node_records.note([], ["n4"], {}) == "ignored the unreadable record of n4"
    assert node_records.note([], [], {"n5": [rem.TAINT_RECORD, rem.CORDON_RECORD], "n1": [rem.LABEL_RECORD]}) == (
        "not trusted, as not in %s: the annotations %s on n1; %s, %s on n5" % (node_records.RECORD_NAME, rem.LABEL_RECORD, rem.TAINT_RECORD, rem.CORDON_RECORD)
    )
    assert node_records.note(["n3"], ["n4"], {}) == "ignored the record of n3: written at a time from the future; ignored the unreadable record of n4"
