# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Node marks with an expiry (burnin_node_marks, burnin_mark_condition) on a fleet of its own, whose real API servers
and kube-schedulers store and select on the KWOK nodes' labels and conditions:

- gcp-mark-a passes: both GPU nodes get result=pass, the run id, an expiry an hour on, the verdict annotation (the JSON
  report's own entry of the node) and the condition GpuBurninPassed=True, the kubelet's conditions kept;
- azure-mark-b's TrainJob fails with the killed rank's node named: that node is marked fail.

A label selector and a pod's nodeAffinity (In pass, expires Gt now) select exactly the verified nodes; the same
affinity at a time past the expiry selects none (the pod stays Pending). The same verdict again changes nothing. The
entry point playbooks/expire_marks.yml in check mode changes nothing; then it removes a superseded mark (a later run
marked another node of the cluster) and, with a fake clock past the expiry, every mark, leaving an admin's labels,
and a label with the collection's key that the collection did not record, alone.

GPUFLEET_MARKS_FLEET_DIR reuses a fleet started by hand with the SPEC below (left running).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time
from pathlib import Path

import pytest

from conftest import Nodes, ansible_playbook, pass_and_fail_spec

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOKS = REPO / "playbooks"
REMEDIATE = Path(__file__).resolve().parent / "playbooks" / "remediate.yml"
SCHEMA = REPO / "docs" / "verdict-schema.json"
GOOD, BAD = "gcp-mark-a", "azure-mark-b"
RUN, RUN2 = "marks-e2e-1", "marks-e2e-2"
NAMESPACE = "marks"
SPEC = pass_and_fail_spec(GOOD, BAD)
RESULT, RUN_LABEL, EXPIRES = "gpufleet.burnin/result", "gpufleet.burnin/run-id", "gpufleet.burnin/expires"
VERDICT, RECORD, CONDITION = "gpufleet.burnin/verdict", "gpufleet.burnin/node-marks", "GpuBurninPassed"
ADMIN_LABEL = ("admin.example.com/keep", "yes")
TTL_HOURS = 1


@pytest.fixture(scope="module")
def marks_fleet(own_fleet):
    return own_fleet("node-marks", SPEC, "GPUFLEET_MARKS_FLEET_DIR")


def run(playbook, state, *options, check=True):
    return ansible_playbook(playbook, "-i", state["inventory"], *options, check=check)


def remediate(state, work, name, target, verdicts, **params):
    params.setdefault("record_namespace", NAMESPACE)  # the burn-in's record ConfigMap (cluster/node_records.py)
    out = work / ("%s.json" % name)
    extra = work / ("%s-vars.json" % name)
    extra.write_text(json.dumps(dict(params, target=target, node_verdicts=verdicts, out=str(out))))
    run(REMEDIATE, state, "-e", "@%s" % extra)
    return json.loads(out.read_text())


def ours(node):
    return dict((key, value) for key, value in node["labels"].items() if key in (RESULT, RUN_LABEL, EXPIRES))


@pytest.fixture(scope="module")
def marked(marks_fleet):
    """An admin's label on a GPU node of each cluster, and on a system node a label with the collection's result key
    that the collection did not write; then one role-level run with node marks and their condition."""
    state, work = marks_fleet
    nodes = {GOOD: Nodes(state, GOOD), BAD: Nodes(state, BAD)}
    admin = dict((cluster, api.gpu()[0]) for cluster, api in nodes.items())
    for cluster, name in admin.items():
        nodes[cluster].patch(name, {"metadata": {"labels": dict([ADMIN_LABEL])}})
    foreign = nodes[GOOD].system()[0]
    nodes[GOOD].patch(foreign, {"metadata": {"labels": {RESULT: "pass"}}})
    started = int(time.time())
    proc = run(
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
        "burnin_node_marks=true",
        "-e",
        "burnin_mark_condition=true",
        "-e",
        "burnin_mark_ttl_hours=%d" % TTL_HOURS,
        # The fleet stage alone, as in test_remediation.py: azure-mark-b's killed rank's node is the failed one.
        "-e",
        json.dumps({"burnin_stages": ["fleet"]}),
        check=False,
    )
    finished = int(time.time())
    results = json.loads((work / "reports" / RUN / "summary.json").read_text())
    report = json.loads((work / "reports" / RUN / "burnin-report.json").read_text())
    try:
        yield dict(
            state=state, work=work, nodes=nodes, admin=admin, foreign=foreign, proc=proc, results=results, report=report, started=started, finished=finished
        )
    finally:
        for cluster, name in admin.items():
            nodes[cluster].patch(name, {"metadata": {"labels": {ADMIN_LABEL[0]: None}}})
        nodes[GOOD].patch(foreign, {"metadata": {"labels": {RESULT: None}}})


def test_the_run_marks_its_nodes_with_result_run_expiry_verdict_and_condition(marked):
    results, nodes, report = marked["results"], marked["nodes"], marked["report"]
    assert results[GOOD]["verdict"]["verdict"] == "pass" and results[BAD]["verdict"]["verdict"] == "fail", marked["proc"].stdout[-3000:]
    entries = dict(((cluster["cluster"], row["node"]), row) for cluster in report["clusters"] for row in cluster["nodes"])
    failed = [name for name, entry in results[BAD]["node_verdicts"].items() if entry["verdict"] == "fail"]
    assert len(failed) == 1, results[BAD]["node_verdicts"]
    judged = [(GOOD, name, "pass") for name in nodes[GOOD].gpu()] + [(BAD, failed[0], "fail")]
    for cluster, name, result in judged:
        node = nodes[cluster].read(name)
        assert node["labels"][RESULT] == result and node["labels"][RUN_LABEL] == RUN, (name, node)
        expires = int(node["labels"][EXPIRES])
        assert marked["started"] + TTL_HOURS * 3600 <= expires <= marked["finished"] + TTL_HOURS * 3600, (expires, marked["started"])
        # The annotation is the report's own entry of the node.
        assert json.loads(node["annotations"][VERDICT]) == entries[(cluster, name)], name
        assert json.loads(node["annotations"][RECORD])["run_id"] == RUN
        # The condition beside the kubelet's (KWOK's) own, which stay.
        assert node["conditions"][CONDITION] == ("True" if result == "pass" else "False") and node["conditions"].get("Ready") == "True", node
    unjudged = [name for name in nodes[BAD].gpu() if name not in failed]
    for name in unjudged + nodes[BAD].system():
        node = nodes[BAD].read(name)
        assert not ours(node) and CONDITION not in node["conditions"], (name, node)
    assert nodes[GOOD].read(marked["foreign"])["labels"][RESULT] == "pass" and RECORD not in nodes[GOOD].read(marked["foreign"])["annotations"]


def test_the_verdict_annotation_validates_against_the_schemas_node_entry(marked):
    """docs/verdict-schema.json's $defs/node is the shape of the annotation."""
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    node_schema = dict(schema["$defs"]["node"], **{"$defs": schema["$defs"]})
    for name in marked["nodes"][GOOD].gpu():
        jsonschema.validate(json.loads(marked["nodes"][GOOD].read(name)["annotations"][VERDICT]), node_schema)


def test_a_label_selector_selects_the_verified_unexpired_nodes(marked):
    api, now = marked["nodes"][GOOD], int(time.time())
    verified = api.gpu()
    assert api.selected("%s=pass,%s>%d" % (RESULT, EXPIRES, now)) == verified
    # Past the expiry nothing is selected, and the label without the expiry selects the foreign label too.
    assert api.selected("%s=pass,%s>%d" % (RESULT, EXPIRES, now + TTL_HOURS * 3600 + 60)) == []
    assert api.selected(RESULT + "=pass") == sorted(verified + [marked["foreign"]])
    assert marked["nodes"][BAD].selected("%s=pass,%s>%d" % (RESULT, EXPIRES, now)) == []


def _affinity_pod(name, now):
    """docs/remediation.md's example: result In [pass] and the expiry Gt the time the pod is made."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": RESULT, "operator": "In", "values": ["pass"]},
                                    {"key": EXPIRES, "operator": "Gt", "values": [str(now)]},
                                ]
                            }
                        ]
                    }
                }
            },
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10"}],
        },
    }


def test_a_node_affinity_places_a_pod_on_a_verified_node_only_and_not_past_the_expiry(marked):
    api, now = marked["nodes"][GOOD], int(time.time())
    names = ("marks-probe-now", "marks-probe-later")
    try:
        api.api.create_namespaced_pod("default", _affinity_pod(names[0], now))
        api.api.create_namespaced_pod("default", _affinity_pod(names[1], now + TTL_HOURS * 3600 + 60))
        deadline, placed, later, reasons = time.monotonic() + 60, None, None, []
        while time.monotonic() < deadline:
            placed = api.api.read_namespaced_pod(names[0], "default").spec.node_name
            later = api.api.read_namespaced_pod(names[1], "default")
            reasons = [c.reason for c in later.status.conditions or [] if c.type == "PodScheduled"]
            if placed and reasons:
                break
            time.sleep(1)
        assert placed in api.gpu(), placed
        # The scheduler tried the later pod and found no node: every mark expires before that time.
        assert not later.spec.node_name and reasons == ["Unschedulable"], later.status
    finally:
        for name in names:
            api.api.delete_namespaced_pod(name, "default", grace_period_seconds=0)


@pytest.fixture(scope="module")
def again(marked):
    """The same verdicts through the action a minute later: nothing changes."""
    verdicts = marked["results"][GOOD]["node_verdicts"]
    before = dict((name, marked["nodes"][GOOD].read(name)) for name in marked["nodes"][GOOD].gpu())
    result = remediate(
        marked["state"],
        marked["work"],
        "again",
        GOOD,
        verdicts,
        run_id=RUN,
        cluster_result=marked["results"][GOOD],
        node_marks=True,
        mark_condition=True,
        mark_ttl_hours=TTL_HOURS,
        fake_now=int(time.time()) + 60,
    )
    after = dict((name, marked["nodes"][GOOD].read(name)) for name in marked["nodes"][GOOD].gpu())
    return dict(marked, again=result, before=before, after=after)


def test_the_same_verdict_again_changes_nothing(again):
    assert again["again"]["changed"] is False and again["again"]["changes"] == [], again["again"]
    assert again["after"] == again["before"]


@pytest.fixture(scope="module")
def expired(again):
    """RUN2 marks one GPU node of gcp-mark-a; then expire_marks.yml in check mode, now, and an hour past the expiry."""
    state, work, nodes = again["state"], again["work"], again["nodes"]
    first, second = nodes[GOOD].gpu()
    remediate(state, work, "run2", GOOD, {second: {"verdict": "pass"}}, run_id=RUN2, node_marks=True, mark_ttl_hours=TTL_HOURS)

    def snapshot():
        return dict((cluster, dict((name, api.read(name)) for name in api.all())) for cluster, api in nodes.items())

    before = snapshot()
    checked = run(PLAYBOOKS / "expire_marks.yml", state, "-e", "burnin_namespace=%s" % NAMESPACE, "--check", "--diff")
    after_check = snapshot()
    now = run(PLAYBOOKS / "expire_marks.yml", state, "-e", "burnin_namespace=%s" % NAMESPACE)
    after_now = snapshot()
    late = run(
        PLAYBOOKS / "expire_marks.yml",
        state,
        "-e",
        "burnin_namespace=%s" % NAMESPACE,
        "-e",
        "burnin_marks_now=%d" % (int(time.time()) + (TTL_HOURS + 1) * 3600),
    )
    after_late = snapshot()
    return dict(
        again,
        first=first,
        second=second,
        before=before,
        checked=checked,
        after_check=after_check,
        now=now,
        after_now=after_now,
        late=late,
        after_late=after_late,
    )


def test_expire_marks_in_check_mode_changes_nothing(expired):
    assert expired["after_check"] == expired["before"]
    assert "would remove the expired and superseded marks of 1 node(s): %s" % expired["first"] in expired["checked"].stdout, expired["checked"].stdout[-3000:]
    assert '-        "gpufleet.burnin/result": "pass"' in expired["checked"].stdout


def test_expire_marks_removes_the_superseded_mark_and_keeps_the_valid_ones(expired):
    good, bad = expired["after_now"][GOOD], expired["after_now"][BAD]
    assert not ours(good[expired["first"]]) and RECORD not in good[expired["first"]]["annotations"]
    assert CONDITION not in good[expired["first"]]["conditions"] and good[expired["first"]]["conditions"].get("Ready") == "True"
    assert ours(good[expired["second"]])[RUN_LABEL] == RUN2
    # azure-mark-b's latest marking run is RUN: its fail mark is neither superseded nor expired.
    assert [name for name, node in bad.items() if ours(node)] and all(ours(node)[RUN_LABEL] == RUN for node in bad.values() if ours(node))
    assert "%s verified" % expired["second"] in expired["now"].stdout, expired["now"].stdout[-3000:]


def test_expire_marks_past_the_expiry_removes_every_mark_and_leaves_foreign_labels(expired):
    for cluster, nodes in expired["after_late"].items():
        for name, node in nodes.items():
            assert not [key for key in node["annotations"] if key in (VERDICT, RECORD)] and CONDITION not in node["conditions"], (name, node)
            if name != expired["foreign"]:
                assert not ours(node), (name, node)
        assert nodes[expired["admin"][cluster]]["labels"][ADMIN_LABEL[0]] == ADMIN_LABEL[1]
    assert expired["after_late"][GOOD][expired["foreign"]]["labels"][RESULT] == "pass", "a label the collection did not record stays"
    assert "%s expired" % expired["second"] in expired["late"].stdout, expired["late"].stdout[-3000:]
