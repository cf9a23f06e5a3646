"""The collection's least-privilege RBAC manifest (extras/rbac/burnin-rbac.yaml), for the test fleet's restricted token.

    objects_for(namespace, user)                          Role + RoleBinding of the manifest, in NAMESPACE, bound to USER
    objects_for(namespace, user, cluster_reader=True)     plus the node-reading ClusterRole and its binding
    objects_for(namespace, user, namespaces=True)         plus the namespace-managing ClusterRole and its binding
    objects_for(namespace, user, remediation=True)        plus the node-remediation ClusterRole and its binding
    objects_for(namespace, user, sweep=True)              plus the sweep's ClusterRole and its binding
    objects_for(namespace, user, namespaces=True, per_run=True, admission=True)
                                                          the per-run variant of docs/rbac.md: patch/delete on every
                                                          namespace by RBAC, kept to the labelled ones by the admission
                                                          policy (bound for USER)
    install(rest, namespace, user, ...)                   create them through fleet.Rest (AlreadyExists is success)

The fleet's restricted token is confined to one namespace on purpose (tests/e2e test that nodes answer 403 and the
role goes on with the declared platform), so by default only the manifest's namespaced part is returned. Cluster-scoped
objects get the user's name appended, so that several users on one API server do not share a binding.
"""

import copy
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent.parent
MANIFEST = REPO / "extras" / "rbac" / "burnin-rbac.yaml"
RBAC_API = "rbac.authorization.k8s.io/v1"
CLUSTER_READER = "gpufleet-burnin-cluster-reader"
NAMESPACES = "gpufleet-burnin-namespaces"
REMEDIATION = "gpufleet-burnin-node-remediation"
SWEEP = "gpufleet-burnin-sweep"
ROLE = "gpufleet-burnin"
POLICY = "gpufleet-burnin-namespaces"
ADMISSION_API = "admissionregistration.k8s.io/v1"
# The user the shipped manifest names (its bindings' subject and the admission policy's match condition).
SHIPPED_USER = "gpufleet-burnin"


class RbacManifestError(Exception):
    pass


def load_manifest(path=MANIFEST):
    """Every document of the manifest, as dicts, checked to be the RBAC objects this module expects."""
    path = Path(path)
    try:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    except (OSError, yaml.YAMLError) as exc:
        raise RbacManifestError(f"{path}: cannot read the RBAC manifest: {exc}") from exc
    # One v1 List (as shipped), or plain documents.
    docs = [item for d in docs for item in (d.get("items") or [] if d.get("kind") == "List" else [d])]
    found = {(d.get("kind"), (d.get("metadata") or {}).get("name")) for d in docs}
    wanted = {
        ("ClusterRole", CLUSTER_READER),
        ("ClusterRole", NAMESPACES),
        ("ClusterRole", REMEDIATION),
        ("ClusterRole", SWEEP),
        ("Role", ROLE),
        ("ClusterRoleBinding", CLUSTER_READER),
        ("ClusterRoleBinding", NAMESPACES),
        ("ClusterRoleBinding", REMEDIATION),
        ("ClusterRoleBinding", SWEEP),
        ("RoleBinding", ROLE),
        ("ValidatingAdmissionPolicy", POLICY),
        ("ValidatingAdmissionPolicyBinding", POLICY),
    }
    if found != wanted:
        raise RbacManifestError(f"{path}: expected exactly {sorted(wanted)}, found {sorted(found)}")
    for d in docs:
        api = ADMISSION_API if d.get("kind", "").startswith("ValidatingAdmissionPolicy") else RBAC_API
        if d.get("apiVersion") != api:
            raise RbacManifestError(f"{path}: {d['kind']}/{d['metadata']['name']}: apiVersion must be {api}")
    return docs


def _get(docs, kind, name):
    return copy.deepcopy(next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name))


def role_rules(path=MANIFEST):
    """The rules of the manifest's namespaced Role (what a burn-in needs in its namespace)."""
    return _get(load_manifest(path), "Role", ROLE)["rules"]


def _subject(user):
    return [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]


def objects_for(
    namespace, user, cluster_reader=False, namespaces=False, path=MANIFEST, remediation=False, per_run=False, admission=False, suffix=None, sweep=False
):
    """The manifest's objects for one namespace and one user, in creation order (roles before their bindings)."""
    docs = load_manifest(path)
    out = []
    # The cluster-scoped objects' names end with SUFFIX (default USER; a service account's user name has colons).
    suffix = suffix or user
    role = _get(docs, "Role", ROLE)
    role["metadata"]["namespace"] = namespace
    binding = _get(docs, "RoleBinding", ROLE)
    binding["metadata"]["namespace"] = namespace
    binding["subjects"] = _subject(user)
    out += [role, binding]
    for wanted, name in ((cluster_reader, CLUSTER_READER), (namespaces, NAMESPACES), (remediation, REMEDIATION), (sweep, SWEEP)):
        if not wanted:
            continue
        cluster_role = _get(docs, "ClusterRole", name)
        cluster_role["metadata"]["name"] = f"{name}-{suffix}"
        # The namespace the manifest names for patch/delete (resourceNames) is this one, as a user edits it.
        for rule in cluster_role["rules"]:
            if rule.get("resourceNames") == [ROLE]:
                rule["resourceNames"] = [namespace]
                if per_run:
                    # docs/rbac.md's per-run variant: the names are not known before the run.
                    del rule["resourceNames"]
        cluster_binding = _get(docs, "ClusterRoleBinding", name)
        cluster_binding["metadata"]["name"] = f"{name}-{suffix}"
        cluster_binding["roleRef"]["name"] = cluster_role["metadata"]["name"]
        cluster_binding["subjects"] = _subject(user)
        out += [cluster_role, cluster_binding]
    if admission:
        policy = _get(docs, "ValidatingAdmissionPolicy", POLICY)
        policy["metadata"]["name"] = f"{POLICY}-{suffix}"
        for condition in policy["spec"]["matchConditions"]:
            condition["expression"] = condition["expression"].replace(f"'{SHIPPED_USER}'", f"'{user}'")
        policy_binding = _get(docs, "ValidatingAdmissionPolicyBinding", POLICY)
        policy_binding["metadata"]["name"] = f"{POLICY}-{suffix}"
        policy_binding["spec"]["policyName"] = policy["metadata"]["name"]
        out += [policy, policy_binding]
    return out


def api_path(obj):
    """The collection path to POST OBJ to."""
    if obj["kind"].startswith("ValidatingAdmissionPolicy"):
        return f"/apis/{ADMISSION_API}/" + {"ValidatingAdmissionPolicy": "validatingadmissionpolicies"}.get(obj["kind"], "validatingadmissionpolicybindings")
    plural = {"Role": "roles", "RoleBinding": "rolebindings", "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings"}[obj["kind"]]
    if obj["kind"] in ("Role", "RoleBinding"):
        return f"/apis/{RBAC_API}/namespaces/{obj['metadata']['namespace']}/{plural}"
    return f"/apis/{RBAC_API}/{plural}"


def install(rest, namespace, user, cluster_reader=False, namespaces=False, path=MANIFEST, remediation=False, per_run=False, admission=False, suffix=None):
    """Create the objects with REST (an object with create(path, body), such as fleet.Rest); returns them."""
    objs = objects_for(
        namespace,
        user,
        cluster_reader=cluster_reader,
        namespaces=namespaces,
        path=path,
        remediation=remediation,
        per_run=per_run,
        admission=admission,
        suffix=suffix,
    )
    for obj in objs:
        rest.create(api_path(obj), obj)
    return objs
