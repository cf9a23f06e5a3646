# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The action plugins' argument handling and result shaping, run as a task runs them, against a fake client: no host,
no cluster. cluster_detect and burnin_remediate get a stand-in for kubernetes.core's K8sService (its find, find_resource
and patch, the dynamic client's request) in place of k8s_reader; the rendering plugins (burnin_plan, workload_plan,
training_runtime, platform_overrides) and burnin_report need none.

Controller code (ansible.playbook, ansible.plugins), so here and not under tests/unit/plugins/module_utils/."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import importlib
import json
import os
from unittest import mock

import pytest

pytest.importorskip("kubernetes")

ACTION = "ansible_collections.gpufleet.burnin.plugins.action.%s"


def run_action(module, args, check_mode=False, diff=False):
    """Run the action plugin gpufleet.burnin.MODULE with ARGS as a task would; its result."""
    from ansible.playbook.task import Task

    action = importlib.import_module(ACTION % module).ActionModule
    task = Task()
    task.args = copy.deepcopy(args)
    task.check_mode = check_mode
    task.diff = diff
    plugin = action(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    return plugin.run(task_vars={})


def h100_node(name, labels=None):
    """A node as an EKS p5.48xlarge node shows itself (labels of NVIDIA's GPU feature discovery)."""
    node_labels = {
        "kubernetes.io/hostname": name,
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.count": "8",
    }
    node_labels.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": node_labels, "annotations": {}},
        "spec": {"providerID": "aws:///us-east-1a/i-0%s" % name},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}},
    }


class Response:
    def __init__(self, body):
        self.data = json.dumps(body).encode("utf-8")


class FakeCluster:
    """What the plugins call of kubernetes.core's K8sService, over an in-memory cluster.

    FAIL maps a call ("version", "nodes", "namespace", "node:<name>", "patch:<name>", "configmap") to an exception
    raised instead, or to a list of them raised one call after the other. CONFIGMAPS holds {(namespace, name): object}
    (the record ConfigMap of burnin_remediate, cluster/node_records.py)."""

    def __init__(self, nodes=(), namespaces=(), fail=None, version="v1.33.2"):
        self.nodes = dict((node["metadata"]["name"], copy.deepcopy(node)) for node in nodes)
        self.namespaces = list(namespaces)
        self.fail = dict(fail or {})
        self.version = version
        self.calls = []
        self.patches = []
        self.configmaps = {}
        outer = self

        class Dynamic:
            def request(self, method, path, serialize=False, limit=None, _continue=None):
                outer.calls.append(("request", method, path))
                if path == "/api/v1/nodes":
                    # The node list a page of LIMIT at a time, as the API server pages it (its continue token).
                    outer.raise_for("nodes")
                    names, start = sorted(outer.nodes), int(_continue or 0)
                    end = start + (limit or len(names))
                    more = {"continue": str(end)} if end < len(names) else {}
                    return Response({"kind": "NodeList", "metadata": more, "items": [outer.nodes[name] for name in names[start:end]]})
                outer.raise_for("version" if path == "/version" else "apis")
                if path == "/version":
                    return Response({"gitVersion": outer.version})
                return Response({"groups": [{"name": "resource.k8s.io", "versions": [{"groupVersion": "resource.k8s.io/v1", "version": "v1"}]}]})

        class Client:
            client = Dynamic()
            configuration = mock.Mock(host="https://10.0.0.1:6443")

            def patch(self, resource, patch, name=None, content_type=None, namespace=None):
                if getattr(resource, "kind", None) == "ConfigMap":
                    outer.calls.append(("patch-configmap", namespace, name, content_type))
                    if (namespace, name) not in outer.configmaps:
                        raise ApiError("(404)\nReason: Not Found", 404)
                    merge(outer.configmaps[(namespace, name)], patch)
                    return outer.configmaps[(namespace, name)]
                outer.calls.append(("patch", name, content_type))
                outer.raise_for("patch:%s" % name)
                outer.patches.append((name, copy.deepcopy(patch)))
                node = outer.nodes[name]
                if resource == "nodes-status-resource":
                    strategic_merge_conditions(node, patch)
                else:
                    merge(node, patch)
                return node

            def create(self, resource, definition, namespace=None):
                outer.calls.append(("create-configmap", namespace, definition["metadata"]["name"]))
                if namespace not in outer.namespaces and outer.namespaces:
                    raise ApiError('(404)\nReason: Not Found\nHTTP response body: namespaces "%s" not found' % namespace, 404)
                outer.configmaps[(namespace, definition["metadata"]["name"])] = copy.deepcopy(definition)
                return definition

        self.client = Client()

    def raise_for(self, call):
        failure = self.fail.get(call)
        if isinstance(failure, list):
            failure = failure.pop(0) if failure else None
        if failure is not None:
            raise failure

    def find(self, kind, api_version, name=None, namespace=None, **kwargs):
        self.calls.append(("find", kind, name))
        if kind == "ConfigMap":
            self.raise_for("configmap")
            found = self.configmaps.get((namespace, name))
            return {"api_found": True, "resources": [copy.deepcopy(found)] if found else []}
        if kind == "Namespace":
            self.raise_for("namespace")
            return {"api_found": True, "resources": [{"metadata": {"name": name}}] if name in self.namespaces else []}
        if name is None:
            self.raise_for("nodes")
            return {"api_found": True, "resources": [copy.deepcopy(node) for _key, node in sorted(self.nodes.items())]}
        self.raise_for("node:%s" % name)
        return {"api_found": True, "resources": [copy.deepcopy(self.nodes[name])] if name in self.nodes else []}

    def find_resource(self, kind, api_version, fail=False):
        self.calls.append(("find_resource", kind))
        if kind == "ConfigMap":
            return mock.Mock(kind="ConfigMap")
        return mock.Mock(subresources={"status": "nodes-status-resource"}, __eq__=lambda me, other: other == "nodes-resource")


def strategic_merge_conditions(node, patch):
    """A strategic merge patch of status.conditions, merged by type as the API server does ($patch: delete removes)."""
    assert set(patch) == {"status"} and set(patch["status"]) == {"conditions"}, patch
    conditions = node.setdefault("status", {}).setdefault("conditions", [])
    for change in patch["status"]["conditions"]:
        kept = [c for c in conditions if c["type"] != change["type"]]
        if change.get("$patch") != "delete":
            kept.append(copy.deepcopy(change))
        conditions[:] = kept


def merge(target, patch):
    """RFC 7386 merge patch, as the API server applies a merge-patch+json."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


class ApiError(Exception):
    """The client's ApiException as the plugins see it: its text and status."""

    def __init__(self, text, status=None):
        super(ApiError, self).__init__(text)
        self.status = status


REFUSED = (
    "HTTPSConnectionPool(host='10.0.0.1', port=6443): Max retries exceeded with url: /version (Caused by NewConnectionError: [Errno 111] Connection refused)"
)
FORBIDDEN = (
    '(403)\nReason: Forbidden\nHTTP response body: {"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes is forbidden: User '
    '\\"system:serviceaccount:burnin:burnin\\" cannot list resource \\"nodes\\" in API group \\"\\" at the cluster scope","reason":"Forbidden","code":403}'
)


@pytest.fixture
def cluster(monkeypatch):
    """Install a FakeCluster as the client of cluster_detect and burnin_remediate; returns a setter."""
    holder = {}

    def use(fake):
        holder["fake"] = fake
        # cluster_detect makes its client in plugin_utils/cluster_detection.py; burnin_remediate through the cluster
        # protocol (plugin_utils/cluster.py).
        for module, where in (
            ("cluster_detect", "ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster_detection"),
            ("burnin_remediate", "ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster"),
        ):
            plugin = importlib.import_module(where)

            def reader(params, name, plugin_name=module):
                holder.setdefault("params", []).append((plugin_name, dict(params), name))
                return holder["fake"]

            monkeypatch.setattr(plugin, "k8s_reader", reader)
        return fake

    use.holder = holder
    return use


AUTH = {"kubeconfig": "/nonexistent/kubeconfig", "context": "aws-a"}


# --- cluster_detect ---------------------------------------------------------------------------------------------


def test_cluster_detect_reports_version_nodes_namespace_and_the_detection(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("n1"), h100_node("n2")], namespaces=["burnin"]))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100", namespace="burnin"))
    assert not result.get("failed"), result
    assert result["changed"] is False
    assert result["kubernetes_version"] == "v1.33.2" and result["dra_api_versions"] == ["v1"]
    assert result["nodes_listed"] is True and [n["metadata"]["name"] for n in result["nodes"]] == ["n1", "n2"]
    # only what detection reads of a node is kept (the annotations are not)
    assert result["nodes"][0] == {
        "metadata": {"name": "n1", "labels": h100_node("n1")["metadata"]["labels"]},
        "spec": {"providerID": "aws:///us-east-1a/i-0n1"},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}},
    }
    assert result["namespace_exists"] is True
    assert result["outcome"] == "Detected" and result["reason"] == ""
    assert result["recorded"]["platform"] == "aws" and result["recorded"]["gpu_architecture"] == "h100"
    assert result["recorded"]["detected"]["gpu_nodes"] == 2
    # the authentication options reach the client, the plugin's own do not
    _plugin, params, fqcn = cluster.holder["params"][0]
    assert fqcn == "gpufleet.burnin.cluster_detect" and params["context"] == "aws-a" and params["kind"] == "Node"
    assert "platform" not in params and "namespace" not in params
    assert ("find", "Namespace", "burnin") in fake.calls


def test_cluster_detect_without_a_namespace_does_not_look_for_one(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("n1")]))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100"))
    assert "namespace_exists" not in result and not [c for c in fake.calls if c[:2] == ("find", "Namespace")]


def test_cluster_detect_a_missing_namespace_is_reported_not_failed(cluster):
    cluster(FakeCluster(nodes=[h100_node("n1")], namespaces=["other"]))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100", namespace="burnin"))
    assert result["namespace_exists"] is False and not result.get("failed")


def test_cluster_detect_nodes_that_contradict_the_group_are_a_mismatch(cluster):
    cluster(FakeCluster(nodes=[h100_node("n1")]))
    result = run_action("cluster_detect", dict(AUTH, platform="gcp", gpu_architecture="h100"))
    assert result["outcome"] == "Mismatch" and result["recorded"]["outcome"] == "Mismatch", result
    assert "gcp" in result["reason"] and "aws" in result["reason"]
    assert not result.get("failed")


def test_cluster_detect_an_unreachable_cluster_stops_with_its_class_not_a_failure(cluster):
    cluster(FakeCluster(fail={"version": ApiError(REFUSED)}))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100"))
    assert not result.get("failed"), result
    assert result["outcome"] == "Unreachable" and result["error"]["category"] == "Unreachable"
    assert result["reason"].startswith("Unreachable: ") and "https://10.0.0.1:6443" in result["reason"]
    assert result["recorded"] == {"stage": "detect", "outcome": "Unreachable", "error_class": "Unreachable", "reason": result["reason"]}
    assert "nodes" not in result and "kubernetes_version" not in result


def test_cluster_detect_a_token_that_may_not_list_nodes_goes_on_with_the_declared_values(cluster):
    cluster(FakeCluster(fail={"nodes": ApiError(FORBIDDEN, 403)}))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100"))
    assert not result.get("failed"), result
    assert result["nodes_listed"] is False and result["nodes"] == []
    assert result["nodes_error"]["category"] == "Forbidden"
    assert result["outcome"] == "Detected" and result["recorded"]["platform"] == "aws"


def test_cluster_detect_another_error_listing_nodes_stops(cluster):
    cluster(FakeCluster(fail={"nodes": ApiError(REFUSED)}))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100"))
    assert result["outcome"] == "Unreachable" and "nodes_error" not in result
    assert result["kubernetes_version"] == "v1.33.2"  # what was read before is kept


def test_cluster_detect_an_error_reading_the_namespace_stops(cluster):
    cluster(FakeCluster(nodes=[h100_node("n1")], fail={"namespace": ApiError(FORBIDDEN, 403)}))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100", namespace="burnin"))
    assert result["outcome"] == "Error" and result["error"]["category"] == "Forbidden", result


def test_cluster_detect_check_nodes_false_reads_no_node_and_says_so(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("n1")]))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100", check_nodes=False))
    assert result["nodes_listed"] is False and result["nodes"] == []
    assert ("request", "get", "/api/v1/nodes") not in fake.calls
    assert result["recorded"]["warnings"], result["recorded"]


def test_cluster_detect_reads_every_page_of_the_node_list_keeping_what_detection_reads(cluster, monkeypatch):
    from ansible_collections.gpufleet.burnin.plugins.plugin_utils import k8s_in_process

    monkeypatch.setattr(k8s_in_process, "LIST_PAGE", 2)
    fake = cluster(FakeCluster(nodes=[h100_node("n%d" % i) for i in range(5)]))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100"))
    assert [n["metadata"]["name"] for n in result["nodes"]] == ["n0", "n1", "n2", "n3", "n4"], result
    assert all("annotations" not in n["metadata"] for n in result["nodes"])
    assert fake.calls.count(("request", "get", "/api/v1/nodes")) == 3
    assert result["recorded"]["detected"]["gpu_nodes"] == 5


@pytest.mark.parametrize("pages, stops", [(3, False), (2, True)])
def test_cluster_detect_stops_a_node_list_that_never_ends_at_its_page_bound(cluster, monkeypatch, pages, stops):
    # Input from the cluster is bounded: a server answering "continue" for ever ends the read at MAX_LIST_PAGES pages.
    from ansible_collections.gpufleet.burnin.plugins.plugin_utils import k8s_in_process

    cluster(FakeCluster(nodes=[h100_node("n%d" % i) for i in range(6)]))
    monkeypatch.setattr(k8s_in_process, "LIST_PAGE", 2)
    monkeypatch.setattr(k8s_in_process, "MAX_LIST_PAGES", pages)
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100"))
    if stops:
        assert result["outcome"] == "Error" and "still more after 2 pages of 2" in result["reason"], result
    else:
        assert result["nodes_listed"] is True and len(result["nodes"]) == 6, result


@pytest.mark.parametrize(
    "args, message",
    [
        ({"check_nodes": "maybe"}, "argument 'check_nodes' is of type str and we were unable to convert to bool"),
        ({"bogus": 1}, "Unsupported parameters for (None) module: bogus"),
    ],
)
def test_cluster_detect_refuses_bad_options_before_any_contact(cluster, args, message):
    from ansible.errors import AnsibleActionFail

    fake = cluster(FakeCluster(nodes=[h100_node("n1")]))
    # ansible-core turns AnsibleActionFail into the task's failure with this message
    with pytest.raises(AnsibleActionFail) as failed:
        run_action("cluster_detect", dict(AUTH, **args))
    assert message in str(failed.value)
    assert fake.calls == [] and "params" not in cluster.holder


def test_cluster_detect_refuses_a_value_that_is_not_finite_naming_it(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("n1")]))
    result = run_action("cluster_detect", dict(AUTH, platform="aws", gpu_architecture="h100", extra={"x": float("nan")}))
    assert result.get("failed") and result["msg"].startswith("gpufleet.burnin.cluster_detect: extra.x: "), result
    assert fake.calls == []


# --- burnin_remediate -------------------------------------------------------------------------------------------

VERDICTS = {"good": {"verdict": "pass"}, "bad": {"verdict": "fail"}, "meh": {"verdict": "warn"}}


def test_remediate_labels_the_passed_and_taints_the_failed_node_leaving_the_warned_one(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("good"), h100_node("bad"), h100_node("meh")]))
    result = run_action(
        "burnin_remediate", dict(AUTH, run_id="r1", node_verdicts=VERDICTS, label_verified=True, quarantine="taint", unreachable_grace=0), diff=True
    )
    assert not result.get("failed"), result
    assert result["changed"] is True
    assert result["msg"] == "remediated 2 node(s): bad, good"
    assert sorted(name for name, _patch in fake.patches) == ["bad", "good"]
    assert fake.nodes["good"]["metadata"]["labels"]["gpufleet.burnin/verified"] == "r1"
    assert fake.nodes["bad"]["spec"]["taints"] == [{"key": "gpufleet.burnin/bad", "value": "r1", "effect": "NoSchedule"}]
    assert "gpufleet.burnin/verified" not in fake.nodes["meh"]["metadata"]["labels"] and "taints" not in fake.nodes["meh"]["spec"]
    # the warned node is not even read
    assert ("find", "Node", "meh") not in fake.calls
    shown = result["remediation"]
    assert shown["mode"] == "apply" and shown["run_id"] == "r1" and shown["check_mode"] is False and shown["nodes"] == ["bad", "good"]
    assert sorted((c["node"], c["what"]) for c in shown["changes"]) == [("bad", "taint"), ("good", "label")]  # no annotations
    assert [c for c in result["changes"] if c["what"] == "annotation"], "the records are in changes"
    assert [d["before_header"] for d in result["diff"]] == ["Node/bad", "Node/good"]
    assert all(call[2] == "application/merge-patch+json" for call in fake.calls if call[0] == "patch")


def role_remediation_variables(**changes):
    """The checked variables of a host that asks for the verified label and a taint."""
    return dict(role_defaults(burnin_label_verified=True, burnin_quarantine="taint", burnin_unreachable_grace=0), **changes)


def test_the_batch_remediates_a_cluster_as_burnin_remediate_does(cluster):
    from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster_stages import remediate_cluster

    fake = cluster(FakeCluster(nodes=[h100_node("good"), h100_node("bad"), h100_node("meh")]))
    record = {"cluster": "aws-a", "outcome": "Complete", "node_verdicts": VERDICTS}
    args = {"variables": role_remediation_variables(burnin_namespace="burnin-records"), "run_id": "r1", "result": record, "host": "aws-a"}
    out = remediate_cluster(AUTH, "gpufleet.burnin.burnin_batch", args, diff=True)
    assert not out.get("failed") and out["changed"] is True, out
    # The record of what was done to each node, in the role's burnin_namespace (cluster/node_records.py).
    assert [namespace for namespace, _name in fake.configmaps] == ["burnin-records"]
    assert out["lines"] == ["aws-a: remediated 2 node(s): bad, good"]
    assert fake.nodes["good"]["metadata"]["labels"]["gpufleet.burnin/verified"] == "r1"
    assert fake.nodes["bad"]["spec"]["taints"] == [{"key": "gpufleet.burnin/bad", "value": "r1", "effect": "NoSchedule"}]
    # The record keeps what changed, as the role's record of burnin_remediate's result did; the diff only with --diff.
    assert out["record"]["remediation"]["nodes"] == ["bad", "good"] and out["record"]["outcome"] == "Complete"
    assert [d["before_header"] for d in out["diff"]] == ["Node/bad", "Node/good"]
    assert "diff" not in remediate_cluster(AUTH, "gpufleet.burnin.burnin_batch", dict(args, run_id="r2"))


def test_the_batch_remediation_that_is_refused_is_the_clusters_failure_with_what_changed_before(cluster):
    from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster_stages import remediate_cluster

    cluster(FakeCluster(nodes=[h100_node("good"), h100_node("bad")], fail={"patch:good": ApiError(FORBIDDEN, 403)}))
    record = {"cluster": "aws-a", "node_verdicts": VERDICTS}
    args = {"variables": role_remediation_variables(), "run_id": "r1", "result": record, "host": "aws-a"}
    out = remediate_cluster(AUTH, "gpufleet.burnin.burnin_batch", args)
    assert out["failed"] and out["error"]["category"] == "Forbidden" and out["record"] == record, out
    assert [(c["node"], c["what"]) for c in out["changes"] if c["what"] != "annotation"] == [("bad", "taint")] and out["changed"] is True
    # A bad option is named before anything connects.
    fake = cluster(FakeCluster(nodes=[h100_node("good")]))
    bad = remediate_cluster(AUTH, "gpufleet.burnin.burnin_batch", dict(args, variables=role_remediation_variables(burnin_verified_label="Bad Label")))
    assert bad["failed"] and bad["msg"].startswith("gpufleet.burnin.burnin_batch: verified_label: ") and bad["error"] is None, bad
    assert fake.calls == []


def test_remediate_in_check_mode_reads_but_patches_nothing(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("good"), h100_node("bad")]))
    result = run_action(
        "burnin_remediate", dict(AUTH, run_id="r1", node_verdicts=VERDICTS, label_verified=True, quarantine="cordon", unreachable_grace=0), check_mode=True
    )
    assert result["changed"] is True and result["msg"].startswith("would remediate 2 node(s): bad, good"), result
    assert fake.patches == [] and not [c for c in fake.calls if c[0] == "patch"]
    assert result["remediation"]["check_mode"] is True
    assert "diff" not in result  # without --diff


def test_remediate_a_node_that_is_gone_is_named_missing(cluster):
    cluster(FakeCluster(nodes=[h100_node("good")]))
    result = run_action("burnin_remediate", dict(AUTH, run_id="r1", node_verdicts=VERDICTS, label_verified=True, quarantine="taint", unreachable_grace=0))
    assert result["remediation"]["missing"] == ["bad"]
    assert result["msg"] == "remediated 1 node(s): good; not found: bad"


def test_remediate_without_any_remediation_asked_touches_nothing(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("good"), h100_node("bad")]))
    result = run_action("burnin_remediate", dict(AUTH, run_id="r1", node_verdicts=VERDICTS, unreachable_grace=0))
    assert result["changed"] is False and result["msg"] == "remediated 0 node(s)"
    assert [c for c in fake.calls if c[0] == "find"] == []


def test_remediate_an_already_remediated_node_is_not_patched_again(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("good")]))
    args = dict(AUTH, run_id="r1", node_verdicts={"good": {"verdict": "pass"}}, label_verified=True, unreachable_grace=0)
    assert run_action("burnin_remediate", args)["changed"] is True
    again = run_action("burnin_remediate", args)
    assert again["changed"] is False and len(fake.patches) == 1, again


def test_remediate_retries_a_conflict_and_gives_up_after_its_attempts(cluster):
    conflict = ApiError("(409)\nReason: Conflict", 409)
    fake = cluster(FakeCluster(nodes=[h100_node("bad")], fail={"patch:bad": [conflict, None]}))
    args = dict(AUTH, run_id="r1", node_verdicts={"bad": {"verdict": "fail"}}, quarantine="cordon", unreachable_grace=0)
    result = run_action("burnin_remediate", args)
    assert not result.get("failed") and fake.nodes["bad"]["spec"]["unschedulable"] is True, result
    assert len([c for c in fake.calls if c[0] == "patch"]) == 2
    fake = cluster(FakeCluster(nodes=[h100_node("bad")], fail={"patch:bad": [conflict] * 5}))
    result = run_action("burnin_remediate", args)
    assert result["failed"] and result["msg"] == "patching Node/bad: the node changed under every one of 5 attempts", result
    assert result["error"]["category"] == "Conflict" and result["changed"] is False


def test_remediate_an_unreachable_cluster_fails_the_task_naming_the_call(cluster):
    cluster(FakeCluster(nodes=[h100_node("bad")], fail={"node:bad": ApiError(REFUSED)}))
    result = run_action("burnin_remediate", dict(AUTH, run_id="r1", node_verdicts={"bad": {"verdict": "fail"}}, quarantine="taint", unreachable_grace=0))
    assert result["failed"] and result["msg"].startswith("reading Node/bad: "), result
    assert result["error"]["category"] == "Unreachable" and "detail" not in result["error"]  # the server's words only at -v


UNAUTHORIZED = (
    "(401)\nReason: Unauthorized\nHTTP response body: "
    '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
)


@pytest.mark.parametrize(
    "module, args",
    [
        ("burnin_remediate", dict(AUTH, mode="undo", run_id="r1", unreachable_grace=0)),
        ("burnin_cleanup", dict(AUTH, entry="nccl", namespace="burnin", run_id="r1", unreachable_grace=0)),
        ("trainjob_logs", dict(AUTH, namespace="burnin", name="j", unreachable_grace=0)),
    ],
)
@pytest.mark.parametrize("text, category", [(UNAUTHORIZED, "Unauthorized"), (REFUSED, "Unreachable")])
def test_a_client_refused_at_its_first_discovery_fails_the_task_classified(monkeypatch, module, args, text, category):
    # No discovery cache for the server (a fresh AWX job): making the client reads the server's discovery, and its
    # raw exception once escaped the action, printed by ansible-core with the client's "Original traceback".
    def refused(params, name):
        raise ApiError(text)

    monkeypatch.setattr(importlib.import_module("ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster"), "k8s_reader", refused)
    result = run_action(module, args)
    assert result["failed"] and result["msg"].startswith("reading the API server's discovery: "), result
    assert result["error"]["category"] == category and "detail" not in result["error"], result


def test_a_wait_refused_at_its_first_discovery_is_its_outcome(monkeypatch):
    def refused(params, name):
        raise ApiError(UNAUTHORIZED)

    monkeypatch.setattr(importlib.import_module("ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster"), "k8s_reader", refused)
    result = run_action("trainjob_wait", dict(AUTH, namespace="burnin", name="j", timeout=60, unreachable_grace=0))
    assert not result.get("failed") and result["outcome"] == "Error", result
    assert result["reason"].startswith("reading the API server's discovery: ") and result["error"]["category"] == "Unauthorized"


def test_remediate_undo_removes_only_the_marks_of_its_run(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("good"), h100_node("bad"), h100_node("other", labels={"team": "infra"})]))
    apply_args = dict(AUTH, run_id="r1", node_verdicts=VERDICTS, label_verified=True, quarantine="taint", unreachable_grace=0)
    run_action("burnin_remediate", apply_args)
    result = run_action("burnin_remediate", dict(AUTH, mode="undo", run_id="r2", unreachable_grace=0))
    assert result["changed"] is False and result["msg"] == "undid the remediation of 0 node(s)", result
    result = run_action("burnin_remediate", dict(AUTH, mode="undo", run_id="r1", unreachable_grace=0))
    assert result["changed"] is True and result["msg"] == "undid the remediation of 2 node(s): bad, good", result
    assert "gpufleet.burnin/verified" not in fake.nodes["good"]["metadata"]["labels"]
    assert not fake.nodes["bad"]["spec"].get("taints")
    assert fake.nodes["other"]["metadata"]["labels"]["team"] == "infra"
    assert result["remediation"]["mode"] == "undo"


def test_remediate_undo_with_a_token_that_may_not_read_the_record_undoes_nothing_with_a_note(cluster):
    cluster(FakeCluster(nodes=[h100_node("good")], fail={"configmap": ApiError(FORBIDDEN, 403)}))
    result = run_action("burnin_remediate", dict(AUTH, mode="undo", all_runs=True, unreachable_grace=0))
    assert not result.get("failed") and result["changed"] is False, result
    assert result["msg"].startswith("undid the remediation of 0 node(s); nodes not checked for the collection's labels, taints and cordons: ")
    assert result["remediation"]["note"].startswith("nodes not checked")


@pytest.mark.parametrize(
    "args, message",
    [
        ({"run_id": "", "node_verdicts": VERDICTS}, "gpufleet.burnin.burnin_remediate: run_id: "),
        ({"run_id": "r1", "node_verdicts": {"a": {"verdict": "great"}}}, "gpufleet.burnin.burnin_remediate: node_verdicts.a.verdict: "),
        ({"run_id": "r1", "quarantine_taint": {"effect": "Sometimes"}}, "gpufleet.burnin.burnin_remediate: quarantine_taint.effect: "),
        ({"run_id": "r1", "verified_label": "not a label!"}, "gpufleet.burnin.burnin_remediate: verified_label: "),
        ({"mode": "undo", "run_id": ""}, "gpufleet.burnin.burnin_remediate: run_id: "),
        ({"run_id": "r1", "unreachable_grace": -1}, "unreachable_grace: must be >= 0, got -1"),
    ],
)
def test_remediate_refuses_bad_options_before_it_connects(cluster, args, message):
    fake = cluster(FakeCluster(nodes=[h100_node("a")]))
    result = run_action("burnin_remediate", dict(AUTH, **args))
    assert result.get("failed") and result["msg"].startswith(message), result
    assert fake.calls == [] and "params" not in cluster.holder


def test_remediate_undo_for_all_runs_needs_no_run_id(cluster):
    cluster(FakeCluster(nodes=[h100_node("a")]))
    result = run_action("burnin_remediate", dict(AUTH, mode="undo", all_runs=True, unreachable_grace=0))
    assert not result.get("failed") and result["remediation"]["run_id"] == "", result


def test_remediate_node_marks_label_annotate_and_set_the_condition_by_its_type_then_expire(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("good"), h100_node("bad"), h100_node("meh"), h100_node("other", labels={"team": "infra"})]))
    fake.nodes["good"]["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    now = 1764770000
    args = dict(AUTH, run_id="r1", node_verdicts=VERDICTS, node_marks=True, mark_condition=True, mark_ttl_hours=2, now=now, unreachable_grace=0)
    result = run_action("burnin_remediate", args, diff=True)
    assert not result.get("failed") and result["msg"] == "remediated 3 node(s): bad, good, meh", result
    labels = fake.nodes["good"]["metadata"]["labels"]
    assert (labels["gpufleet.burnin/result"], labels["gpufleet.burnin/run-id"], labels["gpufleet.burnin/expires"]) == ("pass", "r1", str(now + 7200))
    assert json.loads(fake.nodes["bad"]["metadata"]["annotations"]["gpufleet.burnin/verdict"])["verdict"] == "fail"
    assert [c["type"] for c in fake.nodes["good"]["status"]["conditions"]] == ["Ready", "GpuBurninPassed"]
    status_calls = [c for c in fake.calls if c[0] == "patch" and c[2] == "application/strategic-merge-patch+json"]
    assert len(status_calls) == 3 and "condition" in result["diff"][0]["after"]
    assert run_action("burnin_remediate", args)["changed"] is False, "the same verdict again changes nothing"
    # In check mode an hour past the expiry: every mark would go, nothing is patched.
    patches = len(fake.patches)
    expire = dict(AUTH, mode="expire", now=now + 3 * 3600, unreachable_grace=0)
    checked = run_action("burnin_remediate", expire, check_mode=True)
    assert checked["changed"] and len(fake.patches) == patches and checked["marks"]["good"]["state"] == "expired", checked
    assert checked["msg"] == "would remove the expired and superseded marks of 3 node(s): bad, good, meh"
    early = run_action("burnin_remediate", dict(expire, now=now + 60))
    assert early["changed"] is False and early["marks"]["good"] == {"state": "verified", "result": "pass", "run_id": "r1", "expires": now + 7200, "removed": ""}
    done = run_action("burnin_remediate", expire)
    assert done["changed"] and "gpufleet.burnin/result" not in fake.nodes["good"]["metadata"]["labels"], done
    assert [c["type"] for c in fake.nodes["good"]["status"]["conditions"]] == ["Ready"]
    assert fake.nodes["other"]["metadata"]["labels"]["team"] == "infra" and "other" not in done["marks"]


RECORD = ("gpufleet-burnin", "gpufleet-burnin-node-records")


def test_remediate_records_each_mark_in_the_configmap_and_the_undo_reads_it_from_there(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("good"), h100_node("bad")]))
    run_action("burnin_remediate", dict(AUTH, run_id="r1", node_verdicts=VERDICTS, label_verified=True, quarantine="taint", unreachable_grace=0))
    data = fake.configmaps[RECORD]["data"]
    assert json.loads(data["good"])["records"] == {"gpufleet.burnin/verified-label": "gpufleet.burnin/verified"}
    assert json.loads(data["bad"])["records"] == {"gpufleet.burnin/quarantine-taint": "gpufleet.burnin/bad:NoSchedule"}
    assert fake.configmaps[RECORD]["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpufleet.burnin"}
    # Made (empty) before any node changes, so a missing namespace fails first; then each node's entry is patched in.
    assert [c[0] for c in fake.calls if "configmap" in c[0]] == ["patch-configmap", "create-configmap", "patch-configmap", "patch-configmap"]
    # The annotations are a copy; without the record the undo removes nothing, whatever they say.
    del fake.configmaps[RECORD]
    result = run_action("burnin_remediate", dict(AUTH, mode="undo", all_runs=True, unreachable_grace=0))
    assert result["changed"] is False and fake.nodes["good"]["metadata"]["labels"]["gpufleet.burnin/verified"] == "r1", result
    assert result["records_left"] == 0


def test_remediate_undo_drops_the_entry_of_a_node_that_is_gone(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("good"), h100_node("bad")]))
    run_action("burnin_remediate", dict(AUTH, run_id="r1", node_verdicts=VERDICTS, label_verified=True, quarantine="taint", unreachable_grace=0))
    del fake.nodes["bad"]
    checked = run_action("burnin_remediate", dict(AUTH, mode="undo", run_id="r2", unreachable_grace=0), check_mode=True)
    assert sorted(fake.configmaps[RECORD]["data"]) == ["bad", "good"] and checked["records_left"] == 2, "check mode writes nothing"
    result = run_action("burnin_remediate", dict(AUTH, mode="undo", run_id="r2", unreachable_grace=0))
    assert result["changed"] is False and sorted(fake.configmaps[RECORD]["data"]) == ["good"], result
    assert result["records_left"] == 1


def test_remediate_undo_ignores_a_forged_annotation_record_and_names_it(cluster):
    admin_taint = {"key": "admin.example.com/drain", "value": "rack7", "effect": "NoExecute"}
    victim = h100_node("victim")
    victim["spec"]["taints"] = [dict(admin_taint)]
    victim["metadata"]["annotations"]["gpufleet.burnin/quarantine-taint"] = "admin.example.com/drain:NoExecute"
    fake = cluster(FakeCluster(nodes=[victim, h100_node("bad")]))
    run_action("burnin_remediate", dict(AUTH, run_id="r1", node_verdicts={"bad": {"verdict": "fail"}}, quarantine="taint", unreachable_grace=0))
    result = run_action("burnin_remediate", dict(AUTH, mode="undo", all_runs=True, unreachable_grace=0))
    assert result["msg"] == "undid the remediation of 1 node(s): bad", result
    assert fake.nodes["victim"]["spec"]["taints"] == [admin_taint]
    assert not fake.nodes["bad"]["spec"].get("taints") and "bad" not in fake.configmaps[RECORD]["data"]
    assert result["records_left"] == 0


def test_remediate_apply_ignores_a_forged_verified_label_record_and_says_so(cluster):
    node = h100_node("good", labels={"node-restriction.kubernetes.io/pool": "a"})
    node["metadata"]["annotations"]["gpufleet.burnin/verified-label"] = "node-restriction.kubernetes.io/pool"
    fake = cluster(FakeCluster(nodes=[node]))
    result = run_action("burnin_remediate", dict(AUTH, run_id="r2", node_verdicts={"good": {"verdict": "pass"}}, label_verified=True, unreachable_grace=0))
    labels = fake.nodes["good"]["metadata"]["labels"]
    assert labels["node-restriction.kubernetes.io/pool"] == "a" and labels["gpufleet.burnin/verified"] == "r2", result
    assert result["ignored"]["annotations"] == {"good": ["gpufleet.burnin/verified-label"]}
    assert "not trusted" in result["msg"] and "gpufleet.burnin/verified-label on good" in result["msg"]
    # The annotation is now the record's copy.
    assert fake.nodes["good"]["metadata"]["annotations"]["gpufleet.burnin/verified-label"] == "gpufleet.burnin/verified"


def test_remediate_expire_ignores_a_record_from_the_future_and_reports_it(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("a"), h100_node("b")]))
    now = 1764770000
    args = dict(AUTH, run_id="r1", node_verdicts={"a": {"verdict": "pass"}, "b": {"verdict": "pass"}}, node_marks=True, now=now, unreachable_grace=0)
    run_action("burnin_remediate", args)
    future = {
        "records": {"gpufleet.burnin/node-marks": json.dumps({"run_id": "evil", "marked_at": now + 10**8, "expires": now + 10**9})},
        "run_id": "e",
        "at": now,
    }
    fake.configmaps[RECORD]["data"]["c"] = json.dumps(future)
    fake.nodes["c"] = h100_node("c")
    result = run_action("burnin_remediate", dict(AUTH, mode="expire", now=now + 60, unreachable_grace=0))
    assert result["changed"] is False and sorted(result["marks"]) == ["a", "b"], result
    assert result["ignored"]["future"] == ["c"] and "ignored the record of c: written at a time from the future" in result["msg"]
    assert fake.nodes["a"]["metadata"]["labels"]["gpufleet.burnin/result"] == "pass"


def test_remediate_fails_naming_the_namespace_the_record_needs_before_it_changes_a_node(cluster):
    fake = cluster(FakeCluster(nodes=[h100_node("bad")], namespaces=["other"]))
    result = run_action("burnin_remediate", dict(AUTH, run_id="r1", node_verdicts={"bad": {"verdict": "fail"}}, quarantine="taint", unreachable_grace=0))
    assert result["failed"] and result["error"]["category"] == "NotFound", result
    assert result["msg"].startswith("writing ConfigMap/gpufleet-burnin-node-records in gpufleet-burnin: namespace gpufleet-burnin does not exist"), result
    assert fake.configmaps == {} and fake.patches == [] and not fake.nodes["bad"]["spec"].get("taints"), "no node changed"


def test_remediate_fails_naming_the_record_when_its_namespace_is_missing(cluster):
    cluster(FakeCluster(nodes=[h100_node("bad")]))
    result = run_action(
        "burnin_remediate",
        dict(AUTH, run_id="r1", node_verdicts={"bad": {"verdict": "fail"}}, quarantine="taint", record_namespace="Bad_NS", unreachable_grace=0),
    )
    assert result["failed"] and result["msg"].startswith("gpufleet.burnin.burnin_remediate: record_namespace: "), result


# --- the rendering plugins: burnin_plan, workload_plan, training_runtime, platform_overrides ----------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def role_defaults(**changes):
    import yaml

    with open(os.path.join(ROOT, "roles", "burnin", "defaults", "main.yml")) as handle:
        given = yaml.safe_load(handle)
    given.update(changes)
    return given


PLAN_ARGS = {"platform": "aws", "gpu_architecture": "h100", "run_id": "r1", "namespace": "burnin"}


def test_burnin_plan_returns_the_role_plan_of_the_checked_variables_unchanged():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import role_plan
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

    result = run_action("burnin_plan", dict(PLAN_ARGS, variables=role_defaults()))
    assert not result.get("failed"), result
    assert result["changed"] is False
    want = role_plan(check_role_vars(role_defaults()), "aws", "h100", "r1", "burnin", {}, stage="fleet", attempt=1)
    assert dict((key, result[key]) for key in want) == want
    assert result["record"]["trainjob"] == "nccl-burnin-r1"


def test_burnin_plan_passes_stage_attempt_and_cluster():
    cluster = {"nodes": [], "kubernetes_version": "v1.31.0", "dra_api_versions": ["v1beta1"]}
    fleet = run_action("burnin_plan", dict(PLAN_ARGS, variables=role_defaults(), cluster=cluster, attempt=2))
    assert fleet["stage"]["attempt"] == 2 and fleet["stage"]["stage"] == "fleet", fleet["stage"]
    dcgm = run_action("burnin_plan", dict(PLAN_ARGS, variables=role_defaults(), stage="dcgm"))
    assert dcgm["stage"]["stage"] == "dcgm" and dcgm["stage"]["parser"] == "dcgm-diag", dcgm["stage"]
    assert dcgm["stage"]["trainjob"] == "nccl-burnin-r1-dcgm" and dcgm["record"] == {"stage": "plan"}


def test_burnin_start_checks_the_variables_and_starts_the_result():
    result = run_action("burnin_start", {"variables": role_defaults(burnin_repeats="2"), "run_id": "20261203-120000", "host": "aws-a"}, check_mode=True)
    assert not result.get("failed"), result
    assert result["variables"]["burnin_repeats"] == 2  # survey text parsed
    assert result["run_id"] == "20261203-120000" and result["trainjob"] == "nccl-burnin-20261203-120000"
    assert result["result"]["cluster"] == "aws-a" and result["result"]["outcome"] == "Pending" and result["result"]["check_mode"] is True
    given = run_action("burnin_start", {"variables": role_defaults(burnin_run_id="mine", burnin_namespace_per_run=True), "run_id": "gen", "host": "c"})
    assert given["run_id"] == "mine" and given["namespace"] == "gpufleet-burnin-mine"


def run_with_host_variables(module, args, host_variables):
    """Run the action gpufleet.burnin.MODULE as a task of a host whose variables are HOST_VARIABLES (templated by
    Ansible's own templar)."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.playbook.task import Task
    from ansible.template import Templar

    task = Task()
    task.args = copy.deepcopy(args)
    templar = Templar(loader=DataLoader(), variables=host_variables)
    plugin = importlib.import_module(ACTION % module).ActionModule(
        task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=templar, shared_loader_obj=None
    )
    return plugin.run(task_vars=host_variables)


def test_burnin_start_without_variables_reads_the_hosts_own_burnin_variables():
    from ansible.template import trust_as_template  # what a play's YAML gives: text Ansible may template

    host = dict(role_defaults(burnin_repeats=trust_as_template("{{ survey_repeats }}")), survey_repeats="3", inventory_hostname="c", other=1)
    # Left out: the two that may hold secrets, the role's internal names and anything not burnin_*.
    host.update(burnin_kubeconfig={"users": [{"user": {"token": "s3cret"}}]}, burnin_context="ctx", burnin__internal="x")
    result = run_with_host_variables("burnin_start", {"run_id": "r1", "host": "c"}, host)
    assert not result.get("failed"), result
    assert result["variables"]["burnin_repeats"] == 3  # templated, then the survey text parsed
    assert not set(result["variables"]) & {"burnin_kubeconfig", "burnin_context", "burnin__internal", "other", "survey_repeats"}
    assert "s3cret" not in json.dumps(result)
    # Given variables win: the host's are not read.
    given = run_with_host_variables("burnin_start", {"variables": role_defaults(), "run_id": "r1", "host": "c"}, dict(host, burnin_nodes="many"))
    assert not given.get("failed") and given["variables"]["burnin_repeats"] == 0, given
    # Each of the host's variables is checked as a given one would be, and one that cannot be templated is named.
    for name, value, message in (
        ("burnin_nodes", "many", "burnin_nodes: "),
        ("burnin_image", trust_as_template("{{ no_such_variable }}"), "burnin_image: cannot be templated"),
    ):
        failed = run_with_host_variables("burnin_start", {"run_id": "r1", "host": "c"}, dict(host, **{name: value}))
        assert failed.get("failed") and failed["msg"].startswith(message) and "result" not in failed, failed


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"variables": role_defaults(burnin_nodes="many")}, "burnin_nodes: "),
        ({"variables": role_defaults(burnin_entry_name="e" * 50, burnin_run_id="run-of-today")}, "TrainJob e"),
        ({"run_id": "Not_A_Label"}, "run_id: "),
        ({"run_id": ""}, "run_id: empty"),
    ],
)
def test_burnin_start_refuses_a_bad_variable_naming_it(changes, message):
    result = run_action("burnin_start", dict({"variables": role_defaults(), "run_id": "r1", "host": "c"}, **changes))
    assert result.get("failed") and result["msg"].startswith(message), result
    assert "result" not in result


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"run_id": "R_1"}, "run_id: "),
        ({"namespace": "Bad Namespace"}, "namespace: "),
        ({"attempt": 0}, "attempt: "),
        ({"attempt": 101}, "attempt: "),
        ({"variables": role_defaults(burnin_nodes="many")}, "burnin_nodes: "),
    ],
)
def test_burnin_plan_refuses_bad_options_naming_the_field(changes, message):
    result = run_action("burnin_plan", dict(dict(PLAN_ARGS, variables=role_defaults()), **changes))
    assert result.get("failed") and result["msg"].startswith(message), result
    assert "record" not in result and "objects" not in result


def test_burnin_plan_attempt_bounds_are_inclusive():
    for attempt in (1, 100):
        assert not run_action("burnin_plan", dict(PLAN_ARGS, variables=role_defaults(), attempt=attempt)).get("failed")


WORKLOAD = {
    "entry_name": "nccl",
    "image": "nvcr.io/nvidia/pytorch:26.01-py3",
    "framework": "mpi",
    "nodes": 2,
    "gpus_per_node": 8,
    "namespace": "burnin",
    "run_id": "r1",
    "platform": "aws",
    "gpu_architecture": "h100",
    "trainer": {"binary": "/usr/local/bin/all_reduce_perf"},
}


def test_workload_plan_renders_what_plan_workload_renders_with_the_facts_taken_out_of_the_options():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload
    from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import workload_plan_spec

    result = run_action("workload_plan", WORKLOAD)
    assert not result.get("failed") and result["changed"] is False, result
    options = dict((name, option.get("default")) for name, option in workload_plan_spec().items())
    options.update(copy.deepcopy(WORKLOAD))
    facts = {"platform": options.pop("platform"), "gpuArchitecture": options.pop("gpu_architecture")}
    assert result["objects"] == plan_workload(options, facts)["objects"]
    kinds = [obj["kind"] for obj in result["objects"]]
    assert kinds[-1] == "TrainJob" and "TrainingRuntime" in kinds


def test_workload_plan_refuses_an_unknown_platform_naming_it():
    result = run_action("workload_plan", dict(WORKLOAD, platform="mars"))
    assert result.get("failed") and result["msg"].startswith("platform: "), result
    assert "objects" not in result


def test_training_runtime_returns_the_runtime_of_build_runtime():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.runtime import build_runtime
    from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import training_runtime_spec

    args = {"entry_name": "nccl", "image": "nvcr.io/nvidia/pytorch:26.01-py3", "gpus_per_node": 8, "framework": "torch"}
    result = run_action("training_runtime", args)
    assert not result.get("failed") and result["changed"] is False, result
    options = dict((name, option.get("default")) for name, option in training_runtime_spec().items())
    options.update(args)
    assert result["runtime"] == build_runtime("torch", options)
    assert result["runtime"]["kind"] == "TrainingRuntime" and sorted(result) == sorted(["changed", "runtime"] + [k for k in result if k.startswith("_")])


def test_training_runtime_refuses_a_framework_outside_its_choices():
    from ansible.errors import AnsibleActionFail

    with pytest.raises(AnsibleActionFail, match="value of framework must be one of: torch, mpi, exec, got: jax"):
        run_action("training_runtime", {"entry_name": "nccl", "image": "img", "gpus_per_node": 8, "framework": "jax"})


def test_training_runtime_refuses_a_negative_gpu_count_naming_the_field():
    result = run_action("training_runtime", {"entry_name": "nccl", "image": "img", "gpus_per_node": -1})
    assert result.get("failed") and result["msg"].startswith("gpus_per_node: "), result


@pytest.mark.parametrize(
    "module, args, message",
    [
        ("training_runtime", {"entry_name": "nccl", "image": "img", "gpus_per_node": "INFINITY"}, "gpus_per_node: must be a finite number"),
        ("platform_overrides", {"entry_name": "nccl", "gpus_per_node": "1e999999999"}, "gpus_per_node: must be a finite number"),
        ("burnin_export", {"report": "/nonexistent/r.json", "run_id": "r1", "backoff": "Infinity"}, "backoff: must be a finite number"),
        ("trainjob_wait", dict(AUTH, namespace="burnin", name="j", timeout="-inf"), "gpufleet.burnin.trainjob_wait: timeout: must be a finite number"),
    ],
)
def test_number_text_that_would_be_infinite_is_refused_naming_the_option_not_a_traceback(module, args, message):
    result = run_action(module, args)
    assert result.get("failed") and result["msg"].startswith(message), result


def test_platform_overrides_returns_the_overrides_and_their_sources():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.overrides import build_overrides_with_sources
    from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import platform_overrides_spec

    args = {"entry_name": "nccl", "gpus_per_node": 8, "platform": "aws", "efa_per_node": 32}
    result = run_action("platform_overrides", args)
    assert not result.get("failed") and result["changed"] is False, result
    options = dict((name, option.get("default")) for name, option in platform_overrides_spec().items())
    options.update(args)
    overrides, sources = build_overrides_with_sources(options)
    assert result["overrides"] == overrides and result["sources"] == sources
    assert result["overrides"], "aws with EFA has overrides"
    assert len(result["sources"]) == len(result["overrides"])


def test_platform_overrides_refuses_negative_counts_naming_the_field():
    result = run_action("platform_overrides", {"entry_name": "nccl", "gpus_per_node": 8, "platform": "aws", "efa_per_node": -1})
    assert result.get("failed") and result["msg"].startswith("efa_per_node: "), result
    assert "overrides" not in result


# --- burnin_report ----------------------------------------------------------------------------------------------

RESULTS = {
    "aws-a": {"cluster": "aws-a", "platform": "aws", "gpu_architecture": "h100", "outcome": "Complete", "run_id": "r1"},
    "gcp-a": {"cluster": "gcp-a", "platform": "gcp", "gpu_architecture": "h100", "outcome": "Unreachable", "reason": "Cannot reach it", "run_id": "r1"},
}


def test_burnin_report_writes_the_chosen_formats_and_shapes_the_result(tmp_path):
    directory = str(tmp_path / "reports")
    result = run_action("burnin_report", {"results": RESULTS, "directory": directory, "formats": ["json", "junit"], "run_id": "r1", "generated": "t"})
    assert not result.get("failed"), result
    assert result["changed"] is True
    assert sorted(result["files"]) == ["json", "junit"]
    assert sorted(os.listdir(directory)) == sorted(os.path.basename(path) for path in result["files"].values())
    assert sorted(result["changed_files"]) == sorted(result["files"].values())
    with open(result["files"]["json"]) as handle:
        written = json.load(handle)
    assert sorted(written["clusters"]) == ["aws-a", "gcp-a"] if isinstance(written.get("clusters"), dict) else written
    assert isinstance(result["summary"], dict) and "baseline" in result
    again = run_action("burnin_report", {"results": RESULTS, "directory": directory, "formats": ["json", "junit"], "run_id": "r1", "generated": "t"})
    assert again["changed"] is False and again["changed_files"] == [], again


def test_burnin_report_in_check_mode_writes_nothing_and_says_what_would_change(tmp_path):
    directory = str(tmp_path / "reports")
    result = run_action("burnin_report", {"results": RESULTS, "directory": directory, "formats": ["json"], "generated": "t"}, check_mode=True)
    assert result["changed"] is True and result["changed_files"], result
    assert not os.path.exists(directory)


def test_burnin_report_bad_options_fail_the_task_naming_the_field(tmp_path):
    result = run_action("burnin_report", {"results": RESULTS, "directory": str(tmp_path), "basename": "../x"})
    assert result.get("failed") and result["msg"].startswith("basename: must be a plain file name prefix"), result
    assert "files" not in result


def test_burnin_report_a_directory_it_cannot_write_fails_naming_it(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = run_action("burnin_report", {"results": RESULTS, "directory": str(blocker / "reports"), "formats": ["json"]})
    assert result.get("failed") and result["msg"].startswith("cannot write the reports into %s: " % (blocker / "reports")), result


def test_burnin_write_a_directory_it_cannot_write_fails_naming_it(tmp_path):
    # The shared write base (plugin_utils/action.py WriteActionBase): an OSError is the task's message, not a traceback.
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = run_action("burnin_write", {"directory": str(blocker / "out"), "files": [{"name": "a.json", "content": "{}"}]})
    assert result.get("failed") and result["msg"].startswith("cannot write into %s: " % (blocker / "out")), result


def test_burnin_report_a_baseline_that_is_no_report_fails_after_writing_the_reports(tmp_path):
    bad = tmp_path / "baseline.json"
    bad.write_text("[1, 2]")
    directory = str(tmp_path / "reports")
    result = run_action("burnin_report", {"results": RESULTS, "directory": directory, "formats": ["json"], "baseline": str(bad)})
    assert result.get("failed") and str(bad) in result["msg"], result
    assert os.path.exists(result["files"]["json"])
