# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Records a node cannot forge (issue 43, part 1; cluster/node_records.py), on a fleet of its own.

The fleet's API servers run as kubeadm and the managed clouds run theirs: the Node authorizer and the NodeRestriction
admission plugin (tests/fleet/fleet.py). The forger is a real node identity: a client certificate of the fleet's CA
with CN=system:node:<node> and O=system:nodes (fleet.issue_node_client), the certificate a kubelet's TLS bootstrap
gets. First the test shows what that identity may do: write its own Node's annotations; not another node's, not a
taint, not a node-restriction.kubernetes.io/ label, and not the record ConfigMap. Then, with it, each forgery of issue
43 is tried and changes nothing:

(a) a node-marks record with marked_at far in the future does not make playbooks/expire_marks.yml strip the other
    nodes' valid marks;
(b) a quarantine-taint record naming an administrator's NoExecute taint does not make the cleanup
    (playbooks/cleanup.yml, burnin_cleanup_all_runs) remove it, while the cleanup does remove the collection's marks;
(c) a verified-label record naming an administrator's node-restriction.kubernetes.io/ label does not make the
    remediation with label_verified delete it. The remediation is the role's (gpufleet.burnin.burnin_remediate's core,
    which the batch runs after the stages) run through tests/e2e/playbooks/remediate.yml with the node verdicts given, not a
    whole burn-in: the TrainJob and judging add nothing to what is tested here.

GPUFLEET_RECORDS_FLEET_DIR reuses a fleet started by hand with the SPEC below (left running).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import sys
import time
from pathlib import Path

import pytest

from conftest import ansible_playbook


def _load_fleetlib():
    """tests/fleet/fleet.py under the name conftest.py gives it (one module for both)."""
    name = "gpufleet_test_fleet"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent.parent / "fleet" / "fleet.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


fleetlib = _load_fleetlib()

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOKS = REPO / "playbooks"
REMEDIATE = Path(__file__).resolve().parent / "playbooks" / "remediate.yml"
CLUSTER = "gcp-records-a"
NAMESPACE = "records"
SPEC = {
    "restricted_namespace": "burnin-restricted",
    "clusters": [{"name": CLUSTER, "platform": "gcp", "gpu_architecture": "h100", "kubernetes_version": "1.37", "nodes": 3, "trainjob_outcome": "Complete"}],
}
RECORD_NAME = "gpufleet-burnin-node-records"
RUN, RUN2 = "rec-e2e-1", "rec-e2e-2"
RESULT, MARKS = "gpufleet.burnin/result", "gpufleet.burnin/node-marks"
ADMIN_TAINT = {"key": "admin.example.com/drain", "value": "rack7", "effect": "NoExecute"}
ADMIN_LABEL = ("node-restriction.kubernetes.io/pool", "a100")


@pytest.fixture(scope="module")
def records_fleet(own_fleet):
    return own_fleet("node-records", SPEC, "GPUFLEET_RECORDS_FLEET_DIR")


def run(playbook, state, *options):
    return ansible_playbook(playbook, "-i", state["inventory"], "--limit", CLUSTER, *options, check=True)


def remediate(state, work, name, verdicts, **params):
    out = work / ("%s.json" % name)
    extra = work / ("%s-vars.json" % name)
    extra.write_text(json.dumps(dict(params, target=CLUSTER, node_verdicts=verdicts, out=str(out), record_namespace=NAMESPACE)))
    run(REMEDIATE, state, "-e", "@%s" % extra)
    return json.loads(out.read_text())


class Api:
    """One identity's requests to the cluster (fleet.Rest): the admin's token, or a node's client certificate."""

    def __init__(self, rest):
        self.rest = rest

    def node(self, name):
        return self.rest.must("GET", "/api/v1/nodes/%s" % name)

    def patch_node(self, name, body):
        return self.rest.request("PATCH", "/api/v1/nodes/%s" % name, body, content_type="application/merge-patch+json")

    def record(self):
        status, found = self.rest.request("GET", "/api/v1/namespaces/%s/configmaps/%s" % (NAMESPACE, RECORD_NAME))
        return found if status == 200 else None


def view(node):
    metadata = node["metadata"]
    return {
        "labels": dict(metadata.get("labels") or {}),
        "annotations": dict(metadata.get("annotations") or {}),
        "taints": [dict(t) for t in node["spec"].get("taints") or []],
    }


@pytest.fixture(scope="module")
def setting(records_fleet):
    """The namespace of the burn-in (made by the admin), the three GPU nodes marked by RUN, and the forger: the first
    GPU node's own identity."""
    state, work = records_fleet
    cluster = state["clusters"][CLUSTER]
    ca = Path(state["dir"]) / "pki" / "ca.crt"
    admin = Api(fleetlib.Rest(cluster["server"], cluster["admin_token"], ca))
    admin.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    nodes = admin.rest.must("GET", "/api/v1/nodes?labelSelector=gpufleet.test/fake-node")["items"]
    gpu = sorted(n["metadata"]["name"] for n in nodes if "system" not in n["metadata"]["name"])
    assert len(gpu) >= 3, gpu
    forger_name, others = gpu[0], gpu[1:3]
    cert = fleetlib.issue_node_client(Path(state["dir"]) / "pki", forger_name)
    forger = Api(fleetlib.Rest(cluster["server"], None, ca, client_cert=cert))
    marked = remediate(state, work, "mark", dict((name, {"verdict": "pass"}) for name in gpu[:3]), run_id=RUN, node_marks=True, mark_ttl_hours=24)
    assert marked["changed"] and sorted(marked["remediation"]["nodes"]) == sorted(gpu[:3]), marked
    return dict(state=state, work=work, admin=admin, forger=forger, forger_name=forger_name, others=others)


def test_the_node_identity_has_exactly_noderestrictions_rights(setting):
    """Who the forger is: its own annotations it may write; another node, a taint, a restricted label and the record
    it may not (the Node authorizer and NodeRestriction in force)."""
    forger, name, other = setting["forger"], setting["forger_name"], setting["others"][0]
    status, _body = forger.patch_node(name, {"metadata": {"annotations": {"example.com/probe": "1"}}})
    assert status == 200, _body
    status, _body = forger.patch_node(other, {"metadata": {"annotations": {"example.com/probe": "1"}}})
    assert status == 403, (status, _body)
    status, _body = forger.patch_node(name, {"spec": {"taints": [{"key": "example.com/x", "effect": "NoSchedule"}]}})
    assert status == 403, (status, _body)
    status, _body = forger.patch_node(name, {"metadata": {"labels": {ADMIN_LABEL[0]: "forged"}}})
    assert status == 403, (status, _body)
    path = "/api/v1/namespaces/%s/configmaps/%s" % (NAMESPACE, RECORD_NAME)
    status, _body = forger.rest.request("PATCH", path, {"data": {name: "{}"}}, content_type="application/merge-patch+json")
    assert status == 403, (status, _body)
    assert setting["admin"].record()["data"].keys() >= set([name] + setting["others"])
    setting["forger"].patch_node(name, {"metadata": {"annotations": {"example.com/probe": None}}})


@pytest.fixture(scope="module")
def expired(setting):
    """(a) The forger writes a node-marks record of a run marked far in the future, then expire_marks.yml runs."""
    state, admin, forger, name = setting["state"], setting["admin"], setting["forger"], setting["forger_name"]
    future = int(time.time()) + 10**8
    forged = json.dumps({"run_id": "forged", "marked_at": future, "expires": future + 10**8, "condition": ""})
    status, body = forger.patch_node(name, {"metadata": {"annotations": {MARKS: forged}}})
    assert status == 200, body
    proc = run(PLAYBOOKS / "expire_marks.yml", state, "-e", "burnin_namespace=%s" % NAMESPACE, "-v")
    return dict(setting, proc=proc, after=dict((n, view(admin.node(n))) for n in setting["others"] + [name]))


def test_a_forged_mark_from_the_future_does_not_strip_the_other_nodes_valid_marks(expired):
    for name in expired["others"]:
        node = expired["after"][name]
        assert node["labels"].get(RESULT) == "pass" and node["labels"].get("gpufleet.burnin/run-id") == RUN, (name, node)
        assert json.loads(node["annotations"][MARKS])["run_id"] == RUN
    assert "removed the expired and superseded marks of 0 node(s)" in expired["proc"].stdout, expired["proc"].stdout[-3000:]
    # The forgery is named, and the forger's own mark is what the record says (RUN's, verified).
    assert "not trusted" in expired["proc"].stdout and "%s on %s" % (MARKS, expired["forger_name"]) in expired["proc"].stdout
    assert "%s verified" % expired["forger_name"] in expired["proc"].stdout


@pytest.fixture(scope="module")
def relabelled(expired):
    """(c) The admin labels the forger's node node-restriction.kubernetes.io/pool; the forger records that label as the
    collection's verified label; the remediation of RUN2 verifies the node."""
    admin, forger, name = expired["admin"], expired["forger"], expired["forger_name"]
    status, body = admin.patch_node(name, {"metadata": {"labels": dict([ADMIN_LABEL])}})
    assert status == 200, body
    status, body = forger.patch_node(name, {"metadata": {"annotations": {"gpufleet.burnin/verified-label": ADMIN_LABEL[0]}}})
    assert status == 200, body
    result = remediate(expired["state"], expired["work"], "relabel", {name: {"verdict": "pass"}}, run_id=RUN2, label_verified=True)
    return dict(expired, result=result, node=view(admin.node(name)))


def test_a_forged_verified_label_record_does_not_delete_an_admins_restricted_label(relabelled):
    labels = relabelled["node"]["labels"]
    assert labels.get(ADMIN_LABEL[0]) == ADMIN_LABEL[1], labels
    assert labels.get("gpufleet.burnin/verified") == RUN2
    result = relabelled["result"]
    # Named as not trusted (with (a)'s forged node-marks record, still on the node).
    assert "gpufleet.burnin/verified-label" in result["ignored"]["annotations"].get(relabelled["forger_name"], []), result
    assert not [c for c in result["changes"] if c["what"] == "label" and c["key"] == ADMIN_LABEL[0]]
    # The copy on the node is the record's again.
    assert relabelled["node"]["annotations"]["gpufleet.burnin/verified-label"] == "gpufleet.burnin/verified"


@pytest.fixture(scope="module")
def cleaned(relabelled):
    """(b) The admin taints the forger's node NoExecute; the forger records that taint as the collection's quarantine;
    the cleanup of every run follows."""
    state, work, admin, forger, name = relabelled["state"], relabelled["work"], relabelled["admin"], relabelled["forger"], relabelled["forger_name"]
    taints = view(admin.node(name))["taints"] + [ADMIN_TAINT]
    status, body = admin.patch_node(name, {"spec": {"taints": taints}})
    assert status == 200, body
    forged = "%s:%s" % (ADMIN_TAINT["key"], ADMIN_TAINT["effect"])
    status, body = forger.patch_node(name, {"metadata": {"annotations": {"gpufleet.burnin/quarantine-taint": forged}}})
    assert status == 200, body
    proc = run(
        PLAYBOOKS / "cleanup.yml",
        state,
        "-e",
        "burnin_namespace=%s" % NAMESPACE,
        "-e",
        "burnin_cleanup_all_runs=true",
        "-e",
        "burnin_report_dir=%s" % (work / "reports"),
        "-v",
    )
    try:
        yield dict(relabelled, proc=proc, after=dict((n, view(admin.node(n))) for n in relabelled["others"] + [name]), record=admin.record())
    finally:
        left = [t for t in view(admin.node(name))["taints"] if t["key"] != ADMIN_TAINT["key"]]
        admin.patch_node(name, {"metadata": {"labels": {ADMIN_LABEL[0]: None}}, "spec": {"taints": left or None}})


def test_a_forged_quarantine_record_does_not_make_the_cleanup_remove_an_admins_noexecute_taint(cleaned):
    forger = cleaned["after"][cleaned["forger_name"]]
    assert ADMIN_TAINT in forger["taints"], forger
    assert forger["labels"].get(ADMIN_LABEL[0]) == ADMIN_LABEL[1]
    # What the record says the collection added is gone from every node: the cleanup did run.
    for name, node in cleaned["after"].items():
        assert not [key for key in node["labels"] if key.startswith("gpufleet.burnin/")], (name, node)
    assert not (cleaned["record"] or {}).get("data"), cleaned["record"]
    assert "%s on %s" % ("gpufleet.burnin/quarantine-taint", cleaned["forger_name"]) in cleaned["proc"].stdout, cleaned["proc"].stdout[-3000:]
