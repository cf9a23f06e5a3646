# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""extras/rbac/burnin-rbac.yaml on a real API server: installed through tests/fleet/fleet_rbac.py exactly as the test
fleet installs its restricted token, then asked with SubjectAccessReviews what the bound user may do.

The unit test (tests/unit/test_rbac_manifest.py) ties the manifest to the role's tasks; this one checks that the API
server accepts the objects and that RBAC grants, with them, each verb the role uses and refuses the rest, and that the
manifest's admission policy, in the per-run variant (patch/delete on every namespace by RBAC), refuses the burn-in
identity deleting or patching a namespace it did not label (requests sent as that user by impersonation).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import sys
import time
import uuid
from pathlib import Path

import pytest

FLEET_TOOLS = Path(__file__).resolve().parent.parent / "fleet"


def _load(name, filename):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, FLEET_TOOLS / filename)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


fleet_rbac = _load("gpufleet_test_fleet_rbac", "fleet_rbac.py")
fleetlib = _load("gpufleet_test_fleet", "fleet.py")

# (group, resource, subresource, verb) the role uses in its namespace, from the manifest's Role.
ROLE_USES = [
    (g, r.split("/")[0], r.split("/")[1] if "/" in r else "", v)
    for rule in fleet_rbac.role_rules()
    for g in rule["apiGroups"]
    for r in rule["resources"]
    for v in rule["verbs"]
]


@pytest.fixture(scope="module")
def bound(fleet):
    """Two users on the first cluster: one with the whole manifest, one with its namespaced part only (as the fleet's
    restricted token), each in a namespace of its own."""
    cluster = fleet.clusters[0]
    record = fleet.cluster(cluster)
    rest = fleetlib.Rest(record["server"], record["admin_token"], fleet.ca_file)
    suffix = uuid.uuid4().hex[:6]
    users = {"full": ("rbac-full-%s" % suffix, True), "namespaced": ("rbac-ns-%s" % suffix, False), "remediation": ("rbac-rem-%s" % suffix, True)}
    made, namespaces = [], []
    try:
        for key, (user, cluster_wide) in users.items():
            namespace = "%s-ns" % user
            rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
            namespaces.append(namespace)
            made += fleet_rbac.install(rest, namespace, user, cluster_reader=cluster_wide, namespaces=cluster_wide, remediation=key == "remediation")
        yield rest, dict((key, (user, "%s-ns" % user)) for key, (user, _wide) in users.items())
    finally:
        for obj in made:
            if obj["kind"].startswith("Cluster"):
                rest.request("DELETE", "%s/%s" % (fleet_rbac.api_path(obj), obj["metadata"]["name"]))
        for namespace in namespaces:
            rest.request("DELETE", "/api/v1/namespaces/%s" % namespace)


def allowed(rest, user, verb, group="", resource="", subresource="", namespace=None, path=None, name=None):
    attrs = (
        {"nonResourceAttributes": {"path": path, "verb": verb}}
        if path
        else {
            "resourceAttributes": dict(
                (k, v)
                for k, v in (("group", group), ("resource", resource), ("subresource", subresource), ("verb", verb), ("namespace", namespace), ("name", name))
                if v
            )
        }
    )
    review = rest.must(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": dict(attrs, user=user, groups=["system:authenticated"])},
    )
    return bool(review["status"].get("allowed"))


def test_the_api_server_accepts_the_manifest_objects(bound):
    rest, users = bound
    user, namespace = users["full"]
    role = rest.must("GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles/gpufleet-burnin" % namespace)
    assert role["rules"] == fleet_rbac.role_rules()
    reader = rest.must("GET", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/gpufleet-burnin-cluster-reader-%s" % user)
    assert reader["subjects"][0]["name"] == user


@pytest.mark.parametrize("who", ["full", "namespaced"])
def test_every_verb_the_role_uses_is_granted_in_its_namespace_only(bound, who):
    rest, users = bound
    user, namespace = users[who]
    for group, resource, sub, verb in ROLE_USES:
        assert allowed(rest, user, verb, group, resource, sub, namespace), (who, group, resource, sub, verb)
        assert not allowed(rest, user, verb, group, resource, sub, "default"), (who, "default", resource, verb)
    for group, resource, verb in (
        ("", "secrets", "get"),
        ("", "secrets", "list"),
        ("trainer.kubeflow.org", "trainjobs", "update"),
        ("trainer.kubeflow.org", "trainjobs", "deletecollection"),
        ("", "pods", "create"),
        ("", "pods", "delete"),
        ("", "pods", "exec"),
        ("", "events", "list"),
        ("rbac.authorization.k8s.io", "roles", "create"),
    ):
        assert not allowed(rest, user, verb, group, resource, "", namespace), (who, resource, verb)
    assert not allowed(rest, user, "create", "", "pods", "exec", namespace)


def test_cluster_rules_only_with_the_cluster_roles(bound):
    rest, users = bound
    full, full_ns = users["full"]
    namespaced, own = users["namespaced"]
    assert allowed(rest, full, "list", "", "nodes") and not allowed(rest, namespaced, "list", "", "nodes")
    for verb in ("get", "list", "create"):
        assert allowed(rest, full, verb, "", "namespaces") and not allowed(rest, namespaced, verb, "", "namespaces")
    # Patch and delete only the burn-in's own namespace: not kube-system, not another one, not any by a blank name.
    for verb in ("patch", "delete"):
        assert allowed(rest, full, verb, "", "namespaces", name=full_ns), verb
        assert not allowed(rest, full, verb, "", "namespaces", name="kube-system"), verb
        assert not allowed(rest, full, verb, "", "namespaces", name=own), verb
        assert not allowed(rest, full, verb, "", "namespaces"), verb
        assert not allowed(rest, namespaced, verb, "", "namespaces", name=own), verb
    assert not allowed(rest, full, "patch", "", "nodes") and not allowed(rest, full, "update", "", "namespaces")
    assert allowed(rest, full, "get", path="/version") and allowed(rest, full, "get", path="/apis/trainer.kubeflow.org/v1alpha1")
    # What the fleet's restricted-token test expects of a namespace-confined token holds for the namespaced part.
    assert allowed(rest, namespaced, "create", "", "configmaps", "", own) and allowed(rest, namespaced, "list", "", "configmaps", "", own)
    assert not allowed(rest, namespaced, "list", "", "configmaps") and not allowed(rest, namespaced, "delete", "", "namespaces")
    assert not allowed(rest, namespaced, "list", "trainer.kubeflow.org", "trainingruntimes", "", "kube-system")


def test_node_patches_only_with_the_remediation_cluster_role(bound):
    rest, users = bound
    full, _ns = users["full"]
    remediating, _own = users["remediation"]
    assert allowed(rest, remediating, "get", "", "nodes") and allowed(rest, remediating, "patch", "", "nodes")
    assert not allowed(rest, full, "get", "", "nodes") and not allowed(rest, full, "patch", "", "nodes")
    for verb in ("update", "delete", "create"):
        assert not allowed(rest, remediating, verb, "", "nodes"), verb
    assert not allowed(rest, remediating, "patch", "", "nodes", "status")


MANAGED = ("app.kubernetes.io/managed-by", "gpufleet.burnin")  # the label plugins/module_utils/rendering/plan.py sets


@pytest.fixture(scope="module")
def per_run(fleet):
    """A user bound as docs/rbac.md's per-run variant (namespaces patched and deleted by any name, the admission policy
    bound for it), a namespace it did not create, and a client acting as that user."""
    cluster = fleet.cluster(fleet.clusters[0])
    admin = fleetlib.Rest(cluster["server"], cluster["admin_token"], fleet.ca_file)
    suffix = uuid.uuid4().hex[:6]
    user, own, foreign = "rbac-pr-%s" % suffix, "rbac-pr-%s-ns" % suffix, "rbac-foreign-%s" % suffix
    made, namespaces = [], [own, foreign]
    try:
        for name in namespaces:
            admin.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        made = fleet_rbac.install(admin, own, user, namespaces=True, per_run=True, admission=True)
        as_user = fleetlib.Rest(cluster["server"], cluster["admin_token"], fleet.ca_file, impersonate=user)
        yield admin, as_user, user, foreign
    finally:
        for obj in reversed(made):
            if not obj["kind"].startswith("Role"):
                admin.request("DELETE", "%s/%s" % (fleet_rbac.api_path(obj), obj["metadata"]["name"]))
        for name in namespaces:
            admin.request("DELETE", "/api/v1/namespaces/%s" % name)


def _policy_in_force(as_user, namespace, timeout=60):
    """Wait until the API server enforces the new policy (its informer picks it up within seconds), asking with a
    dry-run delete, which goes through admission and deletes nothing."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = as_user.request("DELETE", "/api/v1/namespaces/%s?dryRun=All" % namespace)
        if status == 403 and "ValidatingAdmissionPolicy" in str(body):
            return
        assert time.monotonic() < deadline, "the admission policy was not enforced within %d s: HTTP %s %s" % (timeout, status, str(body)[:300])
        time.sleep(1)


def test_the_admission_policy_refuses_deleting_a_namespace_the_burnin_did_not_label(per_run):
    admin, as_user, user, foreign = per_run
    # RBAC alone grants it in this variant: what refuses below is the policy.
    assert allowed(admin, user, "delete", "", "namespaces", name=foreign) and allowed(admin, user, "delete", "", "namespaces", name="kube-system")
    _policy_in_force(as_user, foreign)
    status, body = as_user.request("DELETE", "/api/v1/namespaces/%s" % foreign)
    assert status == 403, (status, body)
    assert "gpufleet-burnin-namespaces-%s" % user in body["message"] and "%s is not one of them" % foreign in body["message"], body
    assert not admin.must("GET", "/api/v1/namespaces/%s" % foreign)["metadata"].get("deletionTimestamp")
    # kube-system and default: the API server's NamespaceLifecycle admission refuses their deletion before the policy.
    for name in ("kube-system", "default"):
        assert as_user.request("DELETE", "/api/v1/namespaces/%s" % name)[0] == 403, name
    # Nor may it adopt a namespace by giving it the collection's label, or lift its pod-security level (kube-system
    # included: only deleting it is refused by the API server itself).
    for name in (foreign, "kube-system"):
        for labels in ({MANAGED[0]: MANAGED[1]}, {"pod-security.kubernetes.io/enforce": "privileged"}):
            status, body = as_user.request(
                "PATCH", "/api/v1/namespaces/%s" % name, {"metadata": {"labels": labels}}, content_type="application/merge-patch+json"
            )
            assert status == 403 and "%s is not one of them" % name in body["message"], (name, labels, status, body)
            assert not set(labels) & set(admin.must("GET", "/api/v1/namespaces/%s" % name)["metadata"].get("labels") or {}), (name, labels)
    assert MANAGED[0] not in (admin.must("GET", "/api/v1/namespaces/%s" % foreign)["metadata"].get("labels") or {})
    # The policy matches the burn-in identity only: the admin is not refused (a dry run, so nothing goes).
    assert admin.request("DELETE", "/api/v1/namespaces/%s?dryRun=All" % foreign)[0] == 200


def test_the_admission_policy_lets_the_burnin_delete_a_per_run_namespace_it_labelled(per_run):
    admin, as_user, _user, foreign = per_run
    _policy_in_force(as_user, foreign)
    name = "%s-run1" % foreign
    labels = {MANAGED[0]: MANAGED[1], "gpufleet.burnin/run-id": "run1"}
    try:
        as_user.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
        path = "/api/v1/namespaces/%s" % name
        merge = "application/merge-patch+json"
        # A patch that keeps the label passes; one that drops it does not (it would make the namespace foreign).
        assert as_user.request("PATCH", path, {"metadata": {"annotations": {"gpufleet.burnin/note": "x"}}}, content_type=merge)[0] == 200
        status, body = as_user.request("PATCH", path, {"metadata": {"labels": {MANAGED[0]: None}}}, content_type=merge)
        assert status == 403 and "ValidatingAdmissionPolicy" in body["message"], (status, body)
        status, body = as_user.request("DELETE", path)
        assert status in (200, 202), (status, body)
        status, live = admin.request("GET", path)
        assert status == 404 or live["metadata"].get("deletionTimestamp"), (status, live)
    finally:
        admin.request("DELETE", "/api/v1/namespaces/%s" % name)
