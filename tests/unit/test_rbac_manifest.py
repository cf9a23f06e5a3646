# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""extras/rbac/burnin-rbac.yaml grants exactly what the role uses.

What the role needs is read from its own sources, not restated: every kubernetes.core task of roles/burnin/tasks/*.yml
(module, kind, with or without a name, state, apply, wait) gives verbs on resources; the kinds a burn-in applies come
from planning every workload of the catalog for every platform, GPU and MNNVL setting (gpufleet.burnin.workload_plan's core)
plus the Namespace the role creates. A kind or module the mapping below does not know fails the test, so a new task
or a new dependency kind cannot slip past the manifest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.cleanup import SHARED_KINDS
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.workload_catalog import available_workloads, render_workload
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.platform_catalog import load_platform_catalog

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MANIFEST = os.path.join(ROOT, "extras", "rbac", "burnin-rbac.yaml")
TASKS = os.path.join(ROOT, "roles", "burnin", "tasks")

# kind -> (API group, resource, namespaced)
KINDS = {
    "Namespace": ("", "namespaces", False),
    "Node": ("", "nodes", False),
    "Pod": ("", "pods", True),
    "ConfigMap": ("", "configmaps", True),
    "TrainJob": ("trainer.kubeflow.org", "trainjobs", True),
    "TrainingRuntime": ("trainer.kubeflow.org", "trainingruntimes", True),
    "ComputeDomain": ("resource.nvidia.com", "computedomains", True),
    "ResourceClaimTemplate": ("resource.k8s.io", "resourceclaimtemplates", True),
    "PriorityClass": ("scheduling.k8s.io", "priorityclasses", False),
    "Event": ("", "events", True),
}
# Every platform of _lib/platforms/, and one the collection does not know.
PLATFORMS = tuple(sorted(load_platform_catalog())) + ("other",)
GPUS = ("h100", "h200", "b200", "gb200", "gb300")
MODULE_PREFIX = "kubernetes.core."
# The collection's own actions: those that reach a cluster, as the kubernetes.core module they behave like, and those
# that only render on the controller. Any other gpufleet.burnin action in the tasks fails the test until it is listed.
OWN_CLUSTER_ACTIONS = {
    "gpufleet.burnin.k8s_apply": "apply",  # kubernetes.core's k8s code, server-side apply of `objects`
    # reads one TrainJob and lists its pods, repeatedly, and the logs of those that ended
    "gpufleet.burnin.trainjob_wait": "wait",
    "gpufleet.burnin.trainjob_logs": "logs",  # lists the TrainJob's pods and reads their logs
    "gpufleet.burnin.cluster_detect": "detect",  # /version, /apis and the nodes
    # lists the run's TrainJobs, namespaces and shared objects, deletes them and reads until gone
    "gpufleet.burnin.burnin_cleanup": "cleanup",
    # server-side applies pair TrainJobs, reads them and their pods until they end, reads the logs, deletes them
    "gpufleet.burnin.burnin_isolate": "isolate",
    # a stage: server-side applies the plan, reads its TrainJob and pods until it ends, reads the logs; the isolation
    # stage runs the pair jobs as burnin_isolate does
    "gpufleet.burnin.burnin_stage": "stage",
    # reads every cluster of the batch as cluster_detect does, then runs its stages, each as burnin_stage runs it
    "gpufleet.burnin.burnin_batch": "batch",
    # reads each node (get; undo lists them first) and merge-patches it
    "gpufleet.burnin.burnin_remediate": "remediate",
}
OWN_CONTROLLER_ACTIONS = (
    "gpufleet.burnin.workload_plan",
    "gpufleet.burnin.burnin_plan",
    "gpufleet.burnin.burnin_start",
    "gpufleet.burnin.platform_overrides",
    "gpufleet.burnin.training_runtime",
    "gpufleet.burnin.burnin_report",
    "gpufleet.burnin.burnin_write",
    "gpufleet.burnin.burnin_export",
)
TEMPLATED = re.compile(r"{{|{%")


def load_manifest():
    with open(MANIFEST) as fh:
        docs = [doc for doc in yaml.safe_load_all(fh) if doc]
    assert len(docs) == 1 and docs[0]["kind"] == "List" and docs[0]["apiVersion"] == "v1", "one v1 List document"
    return docs[0]["items"]


def granted():
    """{(group, resource, verb, namespaced)} granted by the manifest's Role (namespaced) and ClusterRoles (cluster)."""
    out, urls = set(), set()
    for doc in load_manifest():
        if doc["kind"] not in ("Role", "ClusterRole"):
            continue
        for rule in doc["rules"]:
            for url in rule.get("nonResourceURLs", []):
                urls.update((url, verb) for verb in rule["verbs"])
            for group in rule.get("apiGroups", []):
                for resource in rule.get("resources", []):
                    for verb in rule["verbs"]:
                        out.add((group, resource, verb, doc["kind"] == "Role"))
    return out, urls


def iter_tasks(tasks):
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from iter_tasks(task.get(key))


def role_tasks():
    for name in sorted(os.listdir(TASKS)):
        if name.endswith(".yml"):
            with open(os.path.join(TASKS, name)) as fh:
                for task in iter_tasks(yaml.safe_load(fh)):
                    yield name, task


def plan_kinds():
    """Every kind a burn-in plan applies, over the whole matrix: each workload of the catalog (framework, image,
    trainer as the role takes them) on every platform, GPU and MNNVL setting. The Namespace is added by the stage's apply (module_utils/burnin/stage_run.py)."""
    kinds, plans = {"Namespace"}, 0
    for workload in available_workloads():
        for platform in PLATFORMS:
            for gpu in GPUS:
                gpus = 4 if gpu.startswith("gb") else 8
                try:
                    rendered = render_workload(workload, dict(nodes=2, gpus_per_node=gpus, platform=platform, gpu_architecture=gpu, image="img"))
                except ConfigError:
                    continue
                for mnnvl in (False, True):
                    config = dict(
                        entry_name="rbac",
                        namespace="burnin",
                        image=rendered["image"],
                        framework=rendered["framework"],
                        nodes=2,
                        gpus_per_node=gpus,
                        mlnx_per_node=8,
                        enable_mnnvl=mnnvl,
                        run_id="r1",
                        trainer=rendered["trainer"],
                        env=rendered.get("env") or [],
                    )
                    try:
                        plan = plan_workload(config, {"platform": platform, "gpuArchitecture": gpu})
                    except ConfigError:
                        continue
                    plans += 1
                    kinds.update(obj["kind"] for obj in plan["objects"])
    return kinds, plans


def cleanup_kinds():
    return set(item["kind"] for item in SHARED_KINDS)


def required():
    """{(group, resource, verb, namespaced): [where]} the role's kubernetes.core tasks need; unknown things fail."""
    applied, _plans = plan_kinds()
    needs, problems, urls = {}, [], set()

    def need(kind, verbs, where, all_namespaces=False):
        if kind not in KINDS:
            problems.append("%s: kind %r is not mapped to an API resource in this test" % (where, kind))
            return
        group, resource, namespaced = KINDS[kind]
        # A namespaced kind read without a namespace is read in every namespace: a ClusterRole's grant.
        namespaced = namespaced and not all_namespaces
        for verb in verbs:
            needs.setdefault((group, resource, verb, namespaced), []).append(where)

    def need_detect(where):
        urls.update([("/version", "get"), ("/apis", "get")])
        need("Node", ["list"], where)
        need("Namespace", ["get"], where)  # whether the run's namespace exists

    for name, task in role_tasks():
        where = "%s: %s" % (name, task.get("name"))
        own = [key for key in task if key.startswith("gpufleet.burnin.") and key not in OWN_CONTROLLER_ACTIONS]
        for key in own:
            if key not in OWN_CLUSTER_ACTIONS:
                problems.append("%s: %s is not known to this test: does it reach the cluster?" % (where, key))
            elif OWN_CLUSTER_ACTIONS[key] in ("wait", "logs"):
                if OWN_CLUSTER_ACTIONS[key] == "wait":
                    # Watched (list, watch), polled (get) when the watch cannot be opened.
                    need("TrainJob", ["get", "list", "watch"], where)
                    need("Pod", ["watch"], where)
                need("Pod", ["list"], where)
                needs.setdefault(("", "pods/log", "get", True), []).append(where)
            elif OWN_CLUSTER_ACTIONS[key] == "cleanup":
                # Its extra_kinds are the user's: the dependencies of the plan and of user overrides.
                for one in sorted(cleanup_kinds() | set(k for k in applied if KINDS.get(k, (None, None, True))[2]) | {"TrainJob"}):
                    need(one, ["list", "get", "delete"], where)
                need("Namespace", ["list", "get", "delete"], where)
            elif OWN_CLUSTER_ACTIONS[key] in ("stage", "batch"):
                for one in sorted(applied):
                    need(one, ["get", "create", "patch"], where)
                need("TrainJob", ["get", "list", "watch", "create", "patch", "delete"], where)
                need("Pod", ["list", "watch"], where)
                needs.setdefault(("", "pods/log", "get", True), []).append(where)
                if OWN_CLUSTER_ACTIONS[key] == "batch":
                    need_detect(where)
            elif OWN_CLUSTER_ACTIONS[key] == "isolate":
                need("TrainJob", ["get", "list", "watch", "create", "patch", "delete"], where)
                need("Pod", ["list", "watch"], where)
                needs.setdefault(("", "pods/log", "get", True), []).append(where)
            elif OWN_CLUSTER_ACTIONS[key] == "remediate":
                undo = (task[key] or {}).get("mode") == "undo"
                need("Node", ["list", "get", "patch"] if undo else ["get", "patch"], where)
                # The node marks' condition (burnin_mark_condition), set by the apply and removed by the undo.
                needs.setdefault(("", "nodes/status", "patch", False), []).append(where)
            elif OWN_CLUSTER_ACTIONS[key] == "detect":
                need_detect(where)
            else:
                need_apply = dict(task[key] or {})
                kinds = applied if "objects" in need_apply else set()
                if not kinds:
                    problems.append("%s: %s without objects" % (where, key))
                for one in sorted(kinds):
                    need(one, ["get", "create", "patch"], where)
        modules = [key for key in task if key.startswith(MODULE_PREFIX)]
        if not modules:
            continue
        module, args = modules[0], task[modules[0]] or {}
        short = module[len(MODULE_PREFIX) :]
        if short == "k8s_cluster_info":
            urls.update([("/version", "get"), ("/apis", "get"), ("/api", "get")])
            continue
        kind = args.get("kind", "Pod" if short == "k8s_log" else None)  # k8s_log's kind defaults to Pod
        if short == "k8s_taint":
            kind = "Node"
        if kind and TEMPLATED.search(str(kind)):
            problems.append("%s: templated kind %r the test cannot resolve" % (where, kind))
            continue
        if kind:
            kinds = {kind}
        elif "definition" in args:
            kinds = applied  # the plan (dependencies, runtime, TrainJob) and the Namespace
        else:
            problems.append("%s: %s without kind or definition" % (where, module))
            continue
        if short == "k8s_info":
            verbs = ["get"] if args.get("name") else ["list"]
            if not args.get("namespace"):
                for one in sorted(kinds):
                    need(one, verbs, where, all_namespaces=True)
                continue
        elif short == "k8s_taint":
            kinds, verbs = {"Node"}, ["get", "patch"]  # reads the node, merge-patches its taints
        elif short == "k8s" and args.get("state") == "absent":
            verbs = ["get", "delete"]  # kubernetes.core reads the object before deleting it, and while waiting
        elif short == "k8s" and args.get("apply"):
            verbs = ["get", "create", "patch"]  # server-side apply: read the live object, PATCH, which creates
        elif short == "k8s_log" and kind == "Pod" and args.get("name"):
            verbs = ["get"]  # all_containers: the pod is read to list its containers, then its log
            needs.setdefault(("", "pods/log", "get", True), []).append(where)
        else:
            problems.append("%s: %s with arguments %s is not mapped to verbs in this test" % (where, module, sorted(args)))
            continue
        for one in sorted(kinds):
            need(one, verbs, where)
    return needs, urls, problems


def test_the_matrix_plans_every_dependency_kind():
    kinds, plans = plan_kinds()
    assert plans >= 100, "only %d plans of the matrix rendered" % plans
    # ComputeDomain (MNNVL), ResourceClaimTemplate (IMEX/RoCE claims), ConfigMap (OCI's sshd port) at least.
    assert {"Namespace", "TrainingRuntime", "TrainJob", "ComputeDomain", "ResourceClaimTemplate", "ConfigMap"} <= kinds


def test_every_role_task_is_understood():
    _needs, _urls, problems = required()
    assert problems == []


def test_the_manifest_covers_every_kind_and_verb_the_role_uses():
    needs, urls, _problems = required()
    have, have_urls = granted()
    missing = dict((k, v) for k, v in needs.items() if k not in have)
    assert missing == {}, "the manifest lacks (group, resource, verb, namespaced): where used"
    assert urls <= have_urls


def test_the_manifest_grants_nothing_the_role_does_not_use():
    needs, _urls, _problems = required()
    have, _have_urls = granted()
    assert sorted(have - set(needs)) == []


def test_namespaced_rules_are_in_the_role_and_cluster_rules_in_cluster_roles():
    docs = load_manifest()
    role = [d for d in docs if d["kind"] == "Role"]
    assert len(role) == 1 and role[0]["metadata"]["namespace"] == "gpufleet-burnin"
    cluster_resources = set()
    for doc in docs:
        if doc["kind"] == "ClusterRole":
            for rule in doc["rules"]:
                cluster_resources.update(rule.get("resources", []))
    # Nothing the Role could grant in one namespace is granted cluster-wide.
    # The sweep (roles/burnin/tasks/sweep.yml) reads pods in every namespace (is a GPU held on a node?) and owns its
    # PriorityClass, a cluster-scoped kind.
    assert cluster_resources == {"nodes", "nodes/status", "namespaces", "pods", "priorityclasses"}
    bindings = [d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    roles = set((d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] in ("Role", "ClusterRole"))
    assert len(bindings) == 5
    for binding in bindings:
        assert (binding["roleRef"]["kind"], binding["roleRef"]["name"]) in roles
        assert binding["subjects"], binding["metadata"]["name"]


@pytest.mark.parametrize("verb", ["*", "escalate", "bind", "impersonate", "update", "deletecollection"])
def test_no_broad_or_unused_verbs(verb):
    have, _urls = granted()
    assert not [g for g in have if g[2] == verb]


def test_node_patches_only_in_the_remediation_cluster_role():
    """Patching nodes is granted only by the ClusterRole a user binds for remediation, not by the node reader."""
    for doc in load_manifest():
        if doc["kind"] not in ("Role", "ClusterRole"):
            continue
        node_verbs = set(verb for rule in doc["rules"] if "nodes" in rule.get("resources", []) for verb in rule["verbs"])
        status_verbs = set(verb for rule in doc["rules"] if "nodes/status" in rule.get("resources", []) for verb in rule["verbs"])
        if doc["metadata"]["name"] == "gpufleet-burnin-node-remediation":
            assert node_verbs == {"get", "patch"} and status_verbs == {"patch"} and len(doc["rules"]) == 2
        else:
            assert "patch" not in node_verbs and not status_verbs, doc["metadata"]["name"]


def test_namespaces_are_patched_and_deleted_only_by_name():
    """Cluster-wide patch/delete on namespaces would let the burn-in identity delete kube-system or lift any namespace's
    pod-security level: only the burn-in's own namespace (the Role's) may be patched or deleted."""
    docs = load_manifest()
    role_namespace = [d for d in docs if d["kind"] == "Role"][0]["metadata"]["namespace"]
    for doc in docs:
        if doc["kind"] != "ClusterRole":
            continue
        for rule in doc["rules"]:
            if "namespaces" in rule.get("resources", []) and set(rule["verbs"]) & {"patch", "delete"}:
                assert rule.get("resourceNames") == [role_namespace], rule
                assert set(rule["verbs"]) == {"patch", "delete"}, rule


def test_the_admission_policy_guards_the_collections_namespaces_for_the_bound_identity():
    """The ValidatingAdmissionPolicy (tests/e2e/test_rbac_manifest.py runs it on an API server) matches namespace
    patches and deletes of the identity the bindings name, and checks the label the collection puts on the namespaces
    it creates (plugins/module_utils/rendering/plan.py), before and after a patch."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import MANAGED_BY_LABEL, MANAGER

    docs = load_manifest()
    policies = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicy"]
    bindings = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert len(policies) == 1 and len(bindings) == 1
    policy, binding = policies[0], bindings[0]
    assert policy["apiVersion"] == binding["apiVersion"] == "admissionregistration.k8s.io/v1"
    assert binding["spec"]["policyName"] == policy["metadata"]["name"] and binding["spec"]["validationActions"] == ["Deny"]
    spec = policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["matchConstraints"]["resourceRules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE", "DELETE"], "resources": ["namespaces"]}
    ]
    subjects = set(s["name"] for d in docs if d["kind"].endswith("RoleBinding") for s in d["subjects"])
    assert len(subjects) == 1
    assert [c["expression"] for c in spec["matchConditions"]] == ["request.userInfo.username == '%s'" % subjects.pop()]
    variables = dict((v["name"], v["expression"]) for v in spec["variables"])
    label_check = "labels['%s'] == '%s'" % (MANAGED_BY_LABEL, MANAGER)
    assert "oldObject.metadata." + label_check in variables["owned"]
    assert " object.metadata." + label_check in variables["kept"] and "request.operation == 'DELETE'" in variables["kept"]
    assert [v["expression"] for v in spec["validations"]] == ["variables.owned && variables.kept"]
