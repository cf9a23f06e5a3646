# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""module_utils/burnin/remediation_run.py against a fake cluster of its node protocol: what it reads and patches, in
which order, again on a conflict, and what it records (the action's end-to-end cases are in
tests/unit/plugins/action/test_action_plugins.py and tests/e2e/test_remediation.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import remediation_run
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_records
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError

NOW = 1_800_000_000


def args(**given):
    base = {
        "mode": "apply",
        "run_id": "r1",
        "all_runs": False,
        "node_verdicts": {"bad": {"verdict": "fail"}, "good": {"verdict": "pass"}},
        "cluster_result": {"cluster": "c1"},
        "label_verified": True,
        "verified_label": "gpufleet.burnin/verified",
        "quarantine": "taint",
        "quarantine_taint": {},
        "node_marks": False,
        "mark_ttl_hours": 24,
        "mark_condition": False,
        "now": NOW,
        "record_namespace": "burnin",
    }
    base.update(given)
    return base


class Nodes(object):
    """The node protocol over nodes in memory; CONFLICTS: how many patches of a node are refused first."""

    def __init__(self, names, conflicts=None, record=None, namespace=True, forbidden=False, read_error="Forbidden"):
        self.nodes = dict((name, {"metadata": {"name": name, "resourceVersion": "1", "labels": {}, "annotations": {}}, "spec": {}}) for name in names)
        self.conflicts, self.record, self.namespace, self.forbidden = dict(conflicts or {}), record, namespace, forbidden
        self.read_error = made_at_run_time(read_error)
        self.calls = []

    def read_node(self, name):
        self.calls.append(("read", name))
        return copy.deepcopy(self.nodes.get(name))

    def patch_node(self, name, patch):
        self.calls.append(("patch", name))
        if self.conflicts.get(name):
            self.conflicts[name] -= 1
            return False
        node = self.nodes[name]
        for part in ("metadata", "spec"):
            for key, value in (patch.get(part) or {}).items():
                if isinstance(value, dict):
                    merged = dict(node[part].get(key) or {})
                    merged.update(value)
                    node[part][key] = dict((k, v) for k, v in merged.items() if v is not None)
                else:
                    node[part][key] = value
        return True

    def patch_node_status(self, name, patch):
        self.calls.append(("status", name))

    def read_configmap(self, name, namespace):
        self.calls.append(("read-record", namespace))
        if self.forbidden:
            raise ClusterCallFailed(
                "reading ConfigMap/%s in %s" % (name, namespace), {"category": self.read_error, "status": 403, "detail": "", "message": "no"}
            )
        return copy.deepcopy(self.record)

    def merge_configmap(self, name, namespace, patch, created):
        self.calls.append(("write-record", namespace))
        if not self.namespace:
            return False
        record = self.record or {"data": {}}
        data = dict(record.get("data") or {})
        for key, value in (patch.get("data") or {}).items():
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value
        self.record = dict(created if self.record is None else record, data=data)
        return True


def made_at_run_time(text):
    """TEXT as a new string, not a literal the interpreter interns: as a mode or a category arrives from a task's
    arguments or an API answer (compared by value, never by identity)."""
    return "".join(list(text))


def run(cluster, check_mode=False, **given):
    given = args(**given)
    return remediation_run.run_remediation(cluster, given, remediation_run.checked(given), check_mode=check_mode)


def test_apply_records_first_then_marks_each_node_and_undo_takes_back_its_own():
    cluster = Nodes(["bad", "good"])
    out = run(cluster)
    # the record is made before any node changes (a missing namespace fails there), each node's entry after it
    assert cluster.calls[:2] == [("read-record", "burnin"), ("write-record", "burnin")]
    assert out["changed"] and sorted(set(change["node"] for change in out["changes"])) == ["bad", "good"]
    assert [diff["before_header"] for diff in out["diffs"]] == ["Node/bad", "Node/good"]
    assert sorted(node_records.parse(cluster.record)[0]) == ["bad", "good"] and out["records_left"] == 2
    undone = run(cluster, mode="undo")
    assert undone["msg"] == "undid the remediation of 2 node(s): bad, good" and undone["records_left"] == 0
    assert not node_records.parse(cluster.record)[0]


@pytest.mark.parametrize("conflicts, fails", [(remediation_run.ATTEMPTS - 1, False), (remediation_run.ATTEMPTS, True)])
def test_a_node_that_changes_under_every_attempt_fails_after_the_last(conflicts, fails):
    cluster = Nodes(["bad"], conflicts={"bad": conflicts})
    if not fails:
        assert run(cluster, node_verdicts={"bad": {"verdict": "fail"}})["changed"]
        assert cluster.calls.count(("read", "bad")) == conflicts + 1
        return
    with pytest.raises(ClusterCallFailed) as failed:
        run(cluster, node_verdicts={"bad": {"verdict": "fail"}})
    assert failed.value.error["category"] == "Conflict" and failed.value.error["status"] == 409 and failed.value.partial == {"changes": []}
    assert cluster.calls.count(("patch", "bad")) == remediation_run.ATTEMPTS


def test_check_mode_patches_nothing_and_says_what_would_change():
    cluster = Nodes(["bad", "good"])
    out = run(cluster, check_mode=True)
    assert out["changes"] and not [call for call in cluster.calls if call[0] in ("patch", "status", "write-record")]
    assert cluster.nodes["bad"]["spec"] == {}


def test_a_missing_namespace_is_named_with_the_option_that_sets_it():
    with pytest.raises(ClusterCallFailed) as failed:
        run(Nodes(["bad"], namespace=False))
    assert failed.value.error["category"] == "NotFound" and failed.value.error["status"] == 404 and "record_namespace" in failed.value.error["message"]


@pytest.mark.parametrize("mode, fails", [("undo", False), ("expire", False), ("apply", True)])
def test_a_record_that_may_not_be_read_stops_a_remediation_but_not_an_undo(mode, fails):
    cluster = Nodes(["bad"], forbidden=True)
    if fails:
        with pytest.raises(ClusterCallFailed):
            run(cluster, mode=made_at_run_time(mode))
        return
    out = run(cluster, mode=made_at_run_time(mode), run_id="" if mode == "expire" else "r1")
    assert not out["changed"] and "nodes not checked for the collection's labels, taints and cordons: no" in out["msg"]


def test_an_undo_of_a_node_that_is_gone_drops_its_entry():
    cluster = Nodes(["bad", "good"])
    run(cluster)
    del cluster.nodes["good"]
    out = run(cluster, mode="undo")
    assert out["msg"] == "undid the remediation of 1 node(s): bad" and not node_records.parse(cluster.record)[0]


def test_options_are_checked_before_anything_connects():
    with pytest.raises(BurninError):
        remediation_run.checked(args(quarantine="explode"))
    with pytest.raises(BurninError):
        remediation_run.checked(args(run_id=""))
    assert remediation_run.checked(args(mode="expire", run_id=""))["verdicts"] == {}


@pytest.mark.parametrize("category", ["Error", "Conflict", "Unauthorized", "Unreachable"])
def test_a_record_that_cannot_be_read_for_another_reason_stops_an_undo_too(category):
    # Only Forbidden means "this identity cannot have remediated": any other failure to read the record is a failure.
    with pytest.raises(ClusterCallFailed):
        run(Nodes(["bad"], forbidden=True, read_error=category), mode=made_at_run_time("undo"))


def test_the_modes_are_told_apart_by_value():
    cluster = Nodes(["bad", "good"])
    assert run(cluster, mode=made_at_run_time("apply"))["msg"].startswith("remediated 2 node(s)")
    assert run(cluster, mode=made_at_run_time("expire"), run_id="")["marks"] == {}
    assert run(cluster, mode=made_at_run_time("undo"))["msg"] == "undid the remediation of 2 node(s): bad, good"


def test_a_node_already_as_planned_is_not_patched_and_shows_no_diff():
    cluster = Nodes(["bad", "good"])
    run(cluster)
    calls = len(cluster.calls)
    again = run(cluster)
    assert (again["changed"], again["changes"], again["diffs"]) == (False, [], [])
    assert not [call for call in cluster.calls[calls:] if call[0] in ("patch", "status", "write-record")]


def test_a_remediation_patches_unless_check_mode_is_asked():
    cluster = Nodes(["bad"])
    given = args(node_verdicts={"bad": {"verdict": "fail"}})
    assert remediation_run.run_remediation(cluster, given, remediation_run.checked(given))["changed"]
    assert ("patch", "bad") in cluster.calls


def test_node_marks_take_the_reports_node_entries_only_when_asked():
    with_marks = remediation_run.checked(args(node_marks=True))
    assert sorted(with_marks["entries"]) == ["bad", "good"] and with_marks["entries"]["bad"]["verdict"] == "fail"
    assert remediation_run.checked(args(node_marks=False))["entries"] == {}


def test_a_node_without_a_report_entry_is_marked_with_its_verdict():
    cluster = Nodes(["bad"])
    given = args(node_marks=True, node_verdicts={"bad": {"verdict": "fail"}})
    settings = dict(remediation_run.checked(given), entries={})
    out = remediation_run.run_remediation(cluster, given, settings)
    assert out["changed"]
    assert any("fail" in str(value) for value in cluster.nodes["bad"]["metadata"]["annotations"].values()), cluster.nodes["bad"]


def test_a_remediation_that_asks_for_nothing_reads_no_record():
    cluster = Nodes(["bad"])
    out = run(cluster, mode=made_at_run_time("apply"), label_verified=False, quarantine="none")
    assert not out["changed"] and cluster.calls == []


def test_a_lost_record_is_written_again_though_the_node_is_as_planned():
    # The verified label is still on the node (nothing to patch); its entry in the record is written again.
    cluster = Nodes(["good"])
    given = {"node_verdicts": {"good": {"verdict": "pass"}}}
    run(cluster, **given)
    cluster.record = None
    calls = len(cluster.calls)
    again = run(cluster, **given)
    assert sorted(node_records.parse(cluster.record)[0]) == ["good"] and again["records_left"] == 1
    assert ("patch", "good") not in cluster.calls[calls:]


def test_a_mark_taken_off_by_hand_is_put_back_from_the_record():
    cluster = Nodes(["good"])
    given = {"node_verdicts": {"good": {"verdict": "pass"}}}
    run(cluster, **given)
    label = args()["verified_label"]
    assert label in cluster.nodes["good"]["metadata"]["labels"]
    del cluster.nodes["good"]["metadata"]["labels"][label]
    again = run(cluster, **given)
    assert again["changed"] and label in cluster.nodes["good"]["metadata"]["labels"]
