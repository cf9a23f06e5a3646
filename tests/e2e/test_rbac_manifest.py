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
import json
import os
import subprocess
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
    # The node marks' condition (burnin_mark_condition): patch on the status subresource, nothing else of it.
    assert allowed(rest, remediating, "patch", "", "nodes", "status") and not allowed(rest, full, "patch", "", "nodes", "status")
    for verb in ("update", "get"):
        assert not allowed(rest, remediating, verb, "", "nodes", "status"), verb


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


# --- The rights a burn-in uses, derived from the API calls it makes ----------------------------------------------------

REPO = FLEET_TOOLS.parent.parent
RECORDER = FLEET_TOOLS / "api_recorder"
DERIVE_CLUSTER = "gcp-usc1-h100-a"  # passes its run: detection, the node and fleet stages, the verdict, remediation
# The rights the manifest grants on the dependency kinds the plans of other platforms apply: this run's cleanup lists
# them (so list is used), but nothing of theirs is applied or deleted.
# Rights of the manifest that this run cannot use, each with why; tests/unit/test_rbac_manifest.py covers them from
# the role's tasks and the plan matrix (every platform, GPU and MNNVL setting). Anything else granted and not used, or
# used and not granted, fails.
NOT_EXERCISED = {
    ("resource.nvidia.com", "computedomains", "get"): "ComputeDomain: multi-node NVLink platforms only (not gcp h100)",
    ("resource.nvidia.com", "computedomains", "create"): "as above",
    ("resource.nvidia.com", "computedomains", "patch"): "as above",
    ("resource.nvidia.com", "computedomains", "delete"): "as above",
    ("resource.k8s.io", "resourceclaimtemplates", "get"): "ResourceClaimTemplate: IMEX, RoCE and RDMA claims, not on gcp h100",
    ("resource.k8s.io", "resourceclaimtemplates", "create"): "as above",
    ("resource.k8s.io", "resourceclaimtemplates", "patch"): "as above",
    ("resource.k8s.io", "resourceclaimtemplates", "delete"): "as above",
    # get, create and patch: the record ConfigMap of the remediation (cluster/node_records.py), used by this run.
    ("", "configmaps", "delete"): "ConfigMap: OCI's sshd port only (the record ConfigMap is never deleted alone)",
    # The sweep (playbooks/sweep.yml, tests/e2e/test_sweep.py) is not part of this recorded burn-in and cleanup.
    ("", "events", "list"): "the sweep's record of preempted pods only",
    ("scheduling.k8s.io", "priorityclasses", "create"): "the sweep's PriorityClass only",
    ("scheduling.k8s.io", "priorityclasses", "get"): "as above",
    ("scheduling.k8s.io", "priorityclasses", "patch"): "as above",
}


def _rbac_attributes(method, url, status, request_body_kind=None):
    """What the API server authorizes for one request (its RequestInfo): (group, resource[/subresource], verb), or
    (None, path, verb) for a non-resource URL. Server-side apply that creates (201) needs create besides patch."""
    path, _sep, query = url.partition("?")
    path = "/" + path.split("://", 1)[-1].split("/", 1)[-1]
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return [(None, path, "get" if method == "GET" else method.lower())]
    if not rest:
        return [(None, path, "get")]
    namespaced = len(rest) >= 2 and rest[0] == "namespaces" and len(rest) >= 3
    if namespaced:
        rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else None
    if len(rest) > 2:
        resource += "/" + rest[2]
    verb = {
        # The kubernetes Python client sends watch=True.
        "GET": ("watch" if "watch=true" in query.lower() or "watch=1" in query else ("get" if name else "list")),
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete" if name else "deletecollection",
    }[method]
    out = [(group, resource, verb)]
    if method == "PATCH" and status == 201:
        out.append((group, resource, "create"))
    return out


def _granted_by_manifest():
    have, urls = set(), set()
    for doc in fleet_rbac.load_manifest():
        if doc["kind"] not in ("Role", "ClusterRole"):
            continue
        for rule in doc["rules"]:
            urls.update(rule.get("nonResourceURLs", []))
            for group in rule.get("apiGroups", []):
                for resource in rule.get("resources", []):
                    have.update((group, resource, verb) for verb in rule["verbs"])
    return have, urls


def _url_granted(path, patterns):
    return any(path == p or (p.endswith("*") and path.startswith(p[:-1])) for p in patterns)


@pytest.fixture(scope="module")
def recorded_run(fleet, tmp_path_factory):
    """Two burn-ins of DERIVE_CLUSTER (a namespace per run, then a fixed one; nodes labelled as verified), each with its
    cleanup, as a service
    account bound with the whole manifest (docs/rbac.md's per-run variant: the Role's rules cluster-wide), every API
    call of the playbooks' processes recorded by tests/fleet/api_recorder."""
    work = tmp_path_factory.mktemp("rbac-derive")
    cluster = fleet.cluster(DERIVE_CLUSTER)
    admin = fleetlib.Rest(cluster["server"], cluster["admin_token"], fleet.ca_file)
    suffix = uuid.uuid4().hex[:6]
    home, account = "rbac-derive-%s" % suffix, "burnin"
    user = "system:serviceaccount:%s:%s" % (home, account)
    made = []
    try:
        admin.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": home}})
        admin.must("POST", "/api/v1/namespaces/%s/serviceaccounts" % home, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}})
        made = fleet_rbac.install(admin, home, user, cluster_reader=True, namespaces=True, remediation=True, per_run=True, admission=True, suffix=home)
        # The Role's rules cluster-wide: the per-run namespaces do not exist before the run.
        rules = {"apiVersion": fleet_rbac.RBAC_API, "kind": "ClusterRole", "metadata": {"name": "%s-role" % home}, "rules": fleet_rbac.role_rules()}
        binding = {
            "apiVersion": fleet_rbac.RBAC_API,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "%s-role" % home},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": rules["metadata"]["name"]},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        }
        for obj in (rules, binding):
            admin.must("POST", fleet_rbac.api_path(obj), obj)
            made.append(obj)
        token = admin.must(
            "POST",
            "/api/v1/namespaces/%s/serviceaccounts/%s/token" % (home, account),
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
        )["status"]["token"]
        kubeconfig = work / "kubeconfig"
        kubeconfig.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": DERIVE_CLUSTER, "cluster": {"server": cluster["server"], "certificate-authority": str(fleet.ca_file)}}],
                    "users": [{"name": account, "user": {"token": token}}],
                    "contexts": [{"name": DERIVE_CLUSTER, "context": {"cluster": DERIVE_CLUSTER, "user": account}}],
                    "current-context": DERIVE_CLUSTER,
                }
            )
        )
        # The policy must be in force before the run, or the run could not show that it is compatible with it.
        _policy_in_force(fleetlib.Rest(cluster["server"], token, fleet.ca_file), home)
        record = work / "api-calls.jsonl"
        env = dict(
            os.environ,
            ANSIBLE_FORCE_COLOR="0",
            ANSIBLE_NOCOLOR="1",
            GPUFLEET_API_RECORD=str(record),
            PYTHONPATH=os.pathsep.join([str(RECORDER)] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
        )
        run_id = "rbac%s" % suffix
        runs = []
        # A namespace per run (created by the burn-in, deleted whole by the cleanup), then the fixed namespace the
        # admin made (kept: the cleanup lists and deletes the run's TrainJobs and the entry's shared objects).
        for per_run, run in (("true", run_id), ("false", run_id + "f")):
            common = ["-i", fleet.inventory, "--limit", DERIVE_CLUSTER]
            for variable in (
                "burnin_kubeconfig=%s" % kubeconfig,
                "burnin_run_id=%s" % run,
                "burnin_namespace=%s" % home,
                "burnin_namespace_per_run=%s" % per_run,
                "burnin_label_verified=true",
                # Node marks with their condition: the nodes/status patch (set, and removed by the cleanup).
                "burnin_node_marks=true",
                "burnin_mark_condition=true",
                "burnin_report_dir=%s" % (work / "reports"),
                "burnin_poll_interval=1",
                "burnin_timeout=120",
            ):
                common += ["-e", variable]
            for playbook in ("burnin.yml", "cleanup.yml"):
                proc = subprocess.run(
                    ["ansible-playbook", str(REPO / "playbooks" / playbook)] + common,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    universal_newlines=True,
                    check=False,
                    timeout=900,
                )
                runs.append(proc)
        calls = [json.loads(line) for line in record.read_text().splitlines()] if record.is_file() else []
        yield runs, calls, admin, "%s-%s" % (home, run_id)
    finally:
        for obj in reversed(made):
            if obj["kind"] not in ("Role", "RoleBinding"):
                admin.request("DELETE", "%s/%s" % (fleet_rbac.api_path(obj), obj["metadata"]["name"]))
        admin.request("DELETE", "/api/v1/namespaces/%s" % home)


def test_the_rights_a_burnin_uses_are_exactly_those_the_manifest_grants(recorded_run):
    """Derived from the calls themselves: every (API group, resource, verb) the playbooks' requests needed (the API
    server's own mapping of method and path, server-side apply's create included) against the manifest's rules. No
    call was refused, nothing used is missing, and nothing granted went unused but NOT_EXERCISED."""
    runs, calls, admin, run_namespace = recorded_run
    for proc in runs:
        assert proc.returncode == 0, " ".join(proc.args) + "\n" + proc.stdout[-4000:]
    assert len(calls) > 20, "the recorder saw %d calls: is tests/fleet/api_recorder on PYTHONPATH?" % len(calls)
    refused = [c for c in calls if c["status"] in (401, 403)]
    assert refused == [], "calls the manifest did not allow"
    used, used_urls = set(), set()
    for call in calls:
        for group, resource, verb in _rbac_attributes(call["method"], call["url"], call["status"]):
            if group is None:
                used_urls.add((resource, verb))
            else:
                used.add((group, resource, verb))
    have, url_patterns = _granted_by_manifest()
    assert sorted(used - have) == [], "used and not granted"
    assert sorted(have - used - set(NOT_EXERCISED)) == [], "granted and never used by the run"
    assert sorted(set(NOT_EXERCISED) & used) == [], "NOT_EXERCISED lists rights the run did use: remove them"
    assert all(verb == "get" and _url_granted(path, url_patterns) for path, verb in used_urls), sorted(used_urls)
    # The run made its per-run namespace, and the cleanup deleted it through the admission policy.
    status, live = admin.request("GET", "/api/v1/namespaces/%s" % run_namespace)
    assert status == 404 or live["metadata"].get("deletionTimestamp"), (status, live)
