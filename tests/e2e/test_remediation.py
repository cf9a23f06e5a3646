# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Remediation after the verdict (burnin_label_verified, burnin_quarantine) on a fleet of its own, whose real API
servers store the KWOK nodes' labels, taints and cordons:

- gcp-rem-a passes: both GPU nodes get gpufleet.burnin/verified=<run id>;
- azure-rem-b's TrainJob fails (nccl-tests output cut short, the killed rank's node named): that node's verdict is
  fail and it is tainted gpufleet.burnin/bad=<run id>:NoSchedule; the other node took part in a failing job only and
  is not judged, so it is untouched.

An admin's own label, taint and cordon are there before the run and after every step. Then, through the action with
the node verdicts given: check mode changes nothing and says what would change, diff mode shows each node before and
after, a cordon records who cordoned (an admin's cordon is left alone), a second run changes nothing. The cleanup
playbook for the first run removes that run's marks only; with burnin_cleanup_all_runs every mark of the collection.

GPUFLEET_REMEDIATION_FLEET_DIR reuses a fleet started by hand with the SPEC below (left running).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from pathlib import Path

import pytest

from conftest import Nodes, ansible_playbook, pass_and_fail_spec

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOKS = REPO / "playbooks"
REMEDIATE = Path(__file__).resolve().parent / "playbooks" / "remediate.yml"
GOOD, BAD = "gcp-rem-a", "azure-rem-b"
RUN, RUN2 = "rem-e2e-1", "rem-e2e-2"
NAMESPACE = "remediation"
SPEC = pass_and_fail_spec(GOOD, BAD)
VERIFIED, BAD_TAINT = "gpufleet.burnin/verified", "gpufleet.burnin/bad"
ADMIN_LABEL = ("admin.example.com/keep", "yes")
# PreferNoSchedule: the burn-in's pods still land on the node.
ADMIN_TAINT = {"key": "admin.example.com/maintenance", "value": "later", "effect": "PreferNoSchedule"}


@pytest.fixture(scope="module")
def rem_fleet(own_fleet):
    return own_fleet("remediation", SPEC, "GPUFLEET_REMEDIATION_FLEET_DIR")


def run(work, playbook, state, *options, check=True):
    return ansible_playbook(playbook, "-i", state["inventory"], *options, check=check)


def remediate(state, work, name, target, verdicts, *options, **params):
    """The remediate playbook on TARGET with VERDICTS and PARAMS: (its output, the task's result). The record ConfigMap
    is the burn-in's, in NAMESPACE, unless PARAMS name another record_namespace."""
    params.setdefault("record_namespace", NAMESPACE)
    out = work / ("%s.json" % name)
    extra = work / ("%s-vars.json" % name)
    extra.write_text(json.dumps(dict(params, target=target, node_verdicts=verdicts, out=str(out))))
    proc = run(work, REMEDIATE, state, "-e", "@%s" % extra, *options)
    return proc.stdout, json.loads(out.read_text())


@pytest.fixture(scope="module")
def marked(rem_fleet):
    """The admin's own marks: a label and a taint on a GPU node of each cluster, a cordon on azure's system node."""
    state, work = rem_fleet
    nodes = {GOOD: Nodes(state, GOOD), BAD: Nodes(state, BAD)}
    admin = {}
    for cluster, api in nodes.items():
        name = api.gpu()[0]
        before = api.read(name)
        api.patch(name, {"metadata": {"labels": dict([ADMIN_LABEL])}, "spec": {"taints": before["taints"] + [ADMIN_TAINT]}})
        admin[cluster] = name
    cordoned = nodes[BAD].system()[0]
    nodes[BAD].patch(cordoned, {"spec": {"unschedulable": True}})
    try:
        yield {"state": state, "work": work, "nodes": nodes, "admin": admin, "cordoned": cordoned}
    finally:
        for cluster, name in admin.items():
            taints = [t for t in nodes[cluster].read(name)["taints"] if t["key"] != ADMIN_TAINT["key"]]
            nodes[cluster].patch(name, {"metadata": {"labels": {ADMIN_LABEL[0]: None}}, "spec": {"taints": taints or None}})
        nodes[BAD].patch(cordoned, {"spec": {"unschedulable": None}})


def assert_admin_marks_kept(marked):
    for cluster, name in marked["admin"].items():
        node = marked["nodes"][cluster].read(name)
        assert node["labels"].get(ADMIN_LABEL[0]) == ADMIN_LABEL[1], (cluster, name, node)
        assert ADMIN_TAINT in node["taints"], (cluster, name, node)
    system = marked["nodes"][BAD].read(marked["cordoned"])
    assert system["unschedulable"] and "gpufleet.burnin/cordoned-by" not in system["annotations"], system


@pytest.fixture(scope="module")
def burned_in(marked):
    """One role-level run of playbooks/burnin.yml with remediation on (labels and taints)."""
    state, work = marked["state"], marked["work"]
    proc = run(
        work,
        PLAYBOOKS / "burnin.yml",
        state,
        "-e",
        "burnin_run_id=%s" % RUN,
        "-e",
        "burnin_namespace=%s" % NAMESPACE,
        "-e",
        "burnin_report_dir=%s" % (work / "reports"),
        "-e",
        "burnin_poll_interval=2",
        "-e",
        "burnin_label_verified=true",
        "-e",
        "burnin_quarantine=taint",
        # The fleet stage alone: the stand-in ends every TrainJob of azure-rem-b Failed, a node stage's too, which
        # would fail both its nodes; here the killed rank's node is the one to taint.
        "-e",
        json.dumps({"burnin_stages": ["fleet"]}),
        check=False,
    )
    results = json.loads((work / "reports" / RUN / "summary.json").read_text())
    report = json.loads((work / "reports" / RUN / "burnin-report.json").read_text())
    html = (work / "reports" / RUN / "burnin-report.html").read_text()
    return dict(marked, proc=proc, results=results, report=report, html=html)


def test_the_role_labels_the_passing_nodes_and_taints_the_failed_one(burned_in):
    results, nodes = burned_in["results"], burned_in["nodes"]
    assert results[GOOD]["verdict"]["verdict"] == "pass" and results[BAD]["verdict"]["verdict"] == "fail", burned_in["proc"].stdout[-3000:]
    for name in nodes[GOOD].gpu():
        node = nodes[GOOD].read(name)
        assert node["labels"][VERIFIED] == RUN and not [t for t in node["taints"] if t["key"] == BAD_TAINT], (name, node)
    failed = [name for name, entry in results[BAD]["node_verdicts"].items() if entry["verdict"] == "fail"]
    assert len(failed) == 1, results[BAD]["node_verdicts"]
    for name in nodes[BAD].gpu():
        node = nodes[BAD].read(name)
        ours = [t for t in node["taints"] if t["key"] == BAD_TAINT]
        if name in failed:
            assert ours == [{"key": BAD_TAINT, "value": RUN, "effect": "NoSchedule"}], node
            assert node["annotations"]["gpufleet.burnin/quarantine-taint"] == "gpufleet.burnin/bad:NoSchedule"
        else:  # in the failing job only: not judged, untouched
            assert ours == [] and VERIFIED not in node["labels"], (name, node)
        assert not node["unschedulable"]
    assert_admin_marks_kept(burned_in)


def test_the_result_and_the_reports_say_what_changed(burned_in):
    results, report, html = burned_in["results"], burned_in["report"], burned_in["html"]
    good = results[GOOD]["remediation"]
    assert sorted(c["node"] for c in good["changes"]) == burned_in["nodes"][GOOD].gpu()
    assert set((c["what"], c["key"], c["before"], c["after"]) for c in good["changes"]) == {("label", VERIFIED, None, RUN)}
    bad = results[BAD]["remediation"]
    assert [(c["what"], c["after"]) for c in bad["changes"]] == [("taint", "%s=%s:NoSchedule" % (BAD_TAINT, RUN))]
    clusters = dict((c["cluster"], c) for c in report["clusters"])
    assert clusters[BAD]["remediation"]["changes"] == bad["changes"]
    assert "remediation (apply, run %s): changed 1 node(s)" % RUN in html
    assert "%s: taint %s:NoSchedule: - -&gt; %s=%s:NoSchedule" % (bad["nodes"][0], BAD_TAINT, BAD_TAINT, RUN) in html


@pytest.fixture(scope="module")
def cordoned(burned_in):
    """Through the action: the failed node and the admin-cordoned system node, failed by RUN2 with quarantine=cordon:
    in check mode with --diff, then for real, then again."""
    state, work = burned_in["state"], burned_in["work"]
    failed = sorted(name for name, entry in burned_in["results"][BAD]["node_verdicts"].items() if entry["verdict"] == "fail")[0]
    verdicts = {failed: {"verdict": "fail"}, burned_in["cordoned"]: {"verdict": "fail"}, "no-such-node": {"verdict": "fail"}}
    params = dict(run_id=RUN2, quarantine="cordon")
    before = burned_in["nodes"][BAD].read(failed)
    checked = remediate(state, work, "check", BAD, verdicts, "--check", "--diff", **params)
    after_check = burned_in["nodes"][BAD].read(failed)
    applied = remediate(state, work, "apply", BAD, verdicts, **params)
    after_apply = burned_in["nodes"][BAD].read(failed)
    again = remediate(state, work, "again", BAD, verdicts, **params)
    verified = dict((name, {"verdict": "pass"}) for name in burned_in["nodes"][GOOD].gpu())
    relabel = remediate(state, work, "relabel", GOOD, verified, run_id=RUN, label_verified=True, quarantine="taint")
    return dict(
        burned_in,
        failed=failed,
        before=before,
        checked=checked,
        after_check=after_check,
        applied=applied,
        after_apply=after_apply,
        again=again,
        relabel=relabel,
    )


def test_check_mode_changes_nothing_and_says_what_would_change(cordoned):
    output, result = cordoned["checked"]
    assert cordoned["after_check"] == cordoned["before"]
    assert result["changed"] and result["msg"].startswith("would remediate 1 node(s): %s" % cordoned["failed"]), result["msg"]
    assert "not found: no-such-node" in result["msg"] and result["remediation"]["check_mode"]
    assert [(c["node"], c["what"], c["before"], c["after"]) for c in result["remediation"]["changes"]] == [(cordoned["failed"], "unschedulable", False, True)]
    # --diff: the node before and after.
    assert "--- before: Node/%s" % cordoned["failed"] in output and "+++ after: Node/%s" % cordoned["failed"] in output
    assert '-    "unschedulable": false' in output and '+    "unschedulable": true' in output
    assert '"gpufleet.burnin/cordoned-by": "%s"' % RUN2 in output


def test_a_cordon_records_who_cordoned_and_an_admins_cordon_is_left_alone(cordoned):
    _output, result = cordoned["applied"]
    assert result["changed"] and cordoned["after_apply"]["unschedulable"]
    assert cordoned["after_apply"]["annotations"]["gpufleet.burnin/cordoned-by"] == RUN2
    assert cordoned["after_apply"]["taints"] == cordoned["before"]["taints"], "the first run's taint stays"
    assert cordoned["cordoned"] not in result["remediation"]["nodes"]
    assert_admin_marks_kept(cordoned)


def test_a_second_run_changes_nothing(cordoned):
    for key in ("again", "relabel"):
        _output, result = cordoned[key]
        assert result["changed"] is False and result["changes"] == [], (key, result)


@pytest.fixture(scope="module")
def cleaned(cordoned):
    state, work = cordoned["state"], cordoned["work"]
    common = ("-e", "burnin_namespace=%s" % NAMESPACE, "-e", "burnin_report_dir=%s" % (work / "reports"))
    one = run(work, PLAYBOOKS / "cleanup.yml", state, "-e", "burnin_run_id=%s" % RUN, *common)
    after_one = dict((cluster, dict((name, api.read(name)) for name in api.gpu())) for cluster, api in cordoned["nodes"].items())
    every = run(work, PLAYBOOKS / "cleanup.yml", state, "-e", "burnin_run_id=%s" % RUN2, "-e", "burnin_cleanup_all_runs=true", *common)
    after_all = dict((cluster, dict((name, api.read(name)) for name in api.gpu())) for cluster, api in cordoned["nodes"].items())
    return dict(cordoned, one=one, after_one=after_one, every=every, after_all=after_all)


def test_cleanup_of_a_run_removes_that_runs_marks_only(cleaned):
    for cluster in (GOOD, BAD):
        for name, node in cleaned["after_one"][cluster].items():
            assert VERIFIED not in node["labels"] and not [t for t in node["taints"] if t["key"] == BAD_TAINT], (name, node)
            assert "gpufleet.burnin/verified-label" not in node["annotations"] and "gpufleet.burnin/quarantine-taint" not in node["annotations"]
    # RUN2's cordon is another run's: it stays.
    failed = cleaned["after_one"][BAD][cleaned["failed"]]
    assert failed["unschedulable"] and failed["annotations"]["gpufleet.burnin/cordoned-by"] == RUN2


def test_cleanup_of_all_runs_removes_every_mark_of_the_collection_and_nothing_else(cleaned):
    for cluster in (GOOD, BAD):
        for name, node in cleaned["after_all"][cluster].items():
            assert not node["unschedulable"] and not [key for key in node["annotations"] if key.startswith("gpufleet.burnin/")], (name, node)
    # The failed node's other taints (the admin's) are what they were before the run.
    assert cleaned["after_all"][BAD][cleaned["failed"]]["taints"] == [t for t in cleaned["before"]["taints"] if t["key"] != BAD_TAINT]
    assert_admin_marks_kept(cleaned)


def test_an_identity_without_node_rights_fails_remediation_and_cleanup_only_notes_it(rem_fleet):
    """The fleet's restricted token (the manifest's namespaced Role only): remediation names the refused verb and the
    manifest; the undo, which the cleanup playbook always runs, says it checked no node instead of failing (it may not
    read the record ConfigMap in the burn-in namespace; with the record in its own namespace, the node is refused)."""
    state, work = rem_fleet
    restricted = ("-e", "burnin_kubeconfig=%s" % state["restricted_kubeconfig"])
    _out, undone = remediate(state, work, "forbidden-undo", GOOD, {}, *restricted, mode="undo", run_id=RUN)
    assert not undone.get("failed") and undone["changed"] is False, undone
    assert "nodes not checked" in undone["msg"] and "may not get configmaps" in undone["msg"], undone["msg"]
    node = Nodes(state, GOOD).gpu()[0]
    _out, refused = remediate(
        state,
        work,
        "forbidden-apply",
        GOOD,
        {node: {"verdict": "pass"}},
        *restricted,
        run_id=RUN,
        label_verified=True,
        may_fail=True,
        record_namespace=state["restricted_namespace"],
    )
    assert refused["failed"] and refused["error"]["category"] == "Forbidden", refused
    assert "may not get nodes" in refused["msg"] and "extras/rbac/burnin-rbac.yaml" in refused["msg"], refused["msg"]
