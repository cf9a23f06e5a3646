# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Integration tests against the real multi-cluster test fleet (tests/fleet, fixture in conftest.py).

Kubernetes 1.20 has no strict field validation: unknown fields are pruned silently, so what is read back is
compared with what was sent.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import json
import time
import uuid

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.runtime import build_runtime

FIELD_MANAGER = "gpufleet-burnin"
UPSTREAM_CRDS = (
    "trainingruntimes.trainer.kubeflow.org",
    "clustertrainingruntimes.trainer.kubeflow.org",
    "trainjobs.trainer.kubeflow.org",
    "jobsets.jobset.x-k8s.io",
    "computedomains.resource.nvidia.com",
)
STANDIN_CRD = "resourceclaimtemplates.resource.k8s.io"


def wait_for(predicate, timeout=30.0, interval=0.2, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def pruned_paths(sent, got, path=""):
    """Paths present in `sent` that are missing or different in `got` (extra server-side fields are fine)."""
    out = []
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return [f"{path or '.'}: sent a mapping, read back {type(got).__name__}"]
        for k, v in sent.items():
            p = f"{path}.{k}"
            if k not in got:
                out.append(f"{p}: pruned")
            else:
                out.extend(pruned_paths(v, got[k], p))
    elif isinstance(sent, list):
        if not isinstance(got, list) or len(got) != len(sent):
            return [f"{path}: sent {len(sent)} items, read back {got!r:.200}"]
        for i, (a, b) in enumerate(zip(sent, got)):
            out.extend(pruned_paths(a, b, f"{path}[{i}]"))
    elif sent != got:
        out.append(f"{path}: sent {sent!r}, read back {got!r}")
    return out


def rich_config(entry_name):
    """A runtime config that exercises every part of the renderer's interface."""
    return {
        "entry_name": entry_name,
        "image": "nvcr.io/nvidia/pytorch:25.01-py3",
        "nodes": 2,
        "gpus_per_node": 8,
        "env": [{"name": "NCCL_DEBUG", "value": "WARN"},
                {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "volumes": [{"name": "data", "emptyDir": {}},
                    {"name": "cfg", "configMap": {"name": "burnin-config", "defaultMode": 420}}],
        "volume_mounts": [{"name": "data", "mountPath": "/data"},
                          {"name": "cfg", "mountPath": "/etc/burnin", "readOnly": True}],
        "init_containers": [{"name": "prep", "image": "busybox:1.36", "command": ["sh", "-c", "true"]}],
        "resources": {"limits": {"memory": "64Gi", "cpu": "32"}, "requests": {"memory": "64Gi", "cpu": "32"}},
        "image_pull_secrets": [{"name": "regcred"}],
        "trainer_version": "v2.3.0",
    }


def ssa(dyn, body, namespace):
    res = dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"])
    return res, dyn.server_side_apply(res, body=body, namespace=namespace, field_manager=FIELD_MANAGER)


@pytest.fixture(scope="module")
def e2e_namespace(fleet):
    """A namespace per cluster for these tests, deleted afterwards (namespace controller makes that real)."""
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    for c in fleet.clusters:
        ns = fleet.dynamic(c).resources.get(api_version="v1", kind="Namespace")
        ns.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    for c in fleet.clusters:
        ns = fleet.dynamic(c).resources.get(api_version="v1", kind="Namespace")
        ns.delete(name=name)


def test_upstream_crds_installed_and_served(fleet_crds):
    for c in fleet_crds.clusters:
        dyn = fleet_crds.dynamic(c)
        crds = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
        have = {}
        for item in crds.get().to_dict()["items"]:
            conds = {x["type"]: x["status"] for x in item.get("status", {}).get("conditions", [])}
            have[item["metadata"]["name"]] = conds.get("Established")
        missing = [n for n in UPSTREAM_CRDS + (STANDIN_CRD,) if have.get(n) != "True"]
        assert not missing, f"{c}: CRDs missing or not Established: {missing}"
        for api_version, kind in (("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
                                  ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"),
                                  ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
                                  ("jobset.x-k8s.io/v1alpha2", "JobSet"),
                                  ("resource.nvidia.com/v1beta1", "ComputeDomain"),
                                  ("resource.k8s.io/v1", "ResourceClaimTemplate"),
                                  ("resource.k8s.io/v1beta2", "ResourceClaimTemplate"),
                                  ("resource.k8s.io/v1beta1", "ResourceClaimTemplate")):
            assert dyn.resources.get(api_version=api_version, kind=kind), f"{c}: {api_version} {kind} not served"


@pytest.mark.parametrize("framework", ["torch", "mpi"])
def test_rendered_runtime_server_side_apply_prunes_nothing(fleet_crds, e2e_namespace, framework):
    for c in fleet_crds.clusters:
        runtime = build_runtime(framework, rich_config(f"ssa-{framework}"))
        applied = ssa(fleet_crds.dynamic(c), runtime, e2e_namespace)[1]
        got = applied.to_dict()
        problems = pruned_paths(runtime, got)
        assert not problems, f"{c}: server-side apply of the {framework} runtime lost fields:\n" + "\n".join(problems)
        res = fleet_crds.dynamic(c).resources.get(api_version=runtime["apiVersion"], kind=runtime["kind"])
        again = res.get(name=runtime["metadata"]["name"], namespace=e2e_namespace).to_dict()
        problems = pruned_paths(runtime, again)
        assert not problems, f"{c}: read-back of the {framework} runtime lost fields:\n" + "\n".join(problems)
        managers = [m["manager"] for m in again["metadata"].get("managedFields") or []]
        assert FIELD_MANAGER in managers, f"{c}: field manager {FIELD_MANAGER} not recorded: {managers}"


def _without_apply_time(obj):
    """The object minus what a no-op apply may still touch on 1.20: resourceVersion and managedFields times."""
    obj = json.loads(json.dumps(obj))
    obj["metadata"].pop("resourceVersion", None)
    for entry in obj["metadata"].get("managedFields") or []:
        entry.pop("time", None)
    return obj


def test_second_server_side_apply_is_a_noop(fleet_crds, e2e_namespace):
    """Applying the same runtime again changes nothing: same spec, generation and field ownership.

    Kubernetes 1.20 stamps managedFields[].time on every apply, so when the second apply lands in a later
    second than the first the object is rewritten with only that timestamp (and so resourceVersion) changed
    (newer servers skip the write). Anything else differing fails the test.
    """
    for c in fleet_crds.clusters:
        runtime = build_runtime("torch", rich_config("ssa-noop"))
        first = ssa(fleet_crds.dynamic(c), runtime, e2e_namespace)[1]
        second = ssa(fleet_crds.dynamic(c), runtime, e2e_namespace)[1]
        a, b = _without_apply_time(first.to_dict()), _without_apply_time(second.to_dict())
        assert a == b, f"{c}: second apply changed the object:\n" + "\n".join(difflib.unified_diff(
            json.dumps(a, indent=1, sort_keys=True).splitlines(),
            json.dumps(b, indent=1, sort_keys=True).splitlines(), lineterm="", n=2))
        assert b["metadata"]["generation"] == a["metadata"]["generation"] == 1


def test_restricted_token_is_confined_to_its_namespace(fleet):
    from kubernetes.client.exceptions import ApiException

    ns = fleet.restricted_namespace
    for c in fleet.clusters:
        dyn = fleet.dynamic(c, restricted=True)
        cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
        name = f"restricted-{uuid.uuid4().hex[:6]}"
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}
        cms.create(body=body, namespace=ns)
        assert cms.get(name=name, namespace=ns).data["k"] == "v"
        cms.get(namespace=ns)
        cms.delete(name=name, namespace=ns)
        if fleet.crds_installed:
            rt = dyn.resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainingRuntime")
            rt.get(namespace=ns)

        denied = [
            ("list configmaps in default", lambda: cms.get(namespace="default")),
            ("create a configmap in default", lambda: cms.create(body=body, namespace="default")),
            ("list configmaps in all namespaces", cms.get),
            ("list nodes", lambda: dyn.resources.get(api_version="v1", kind="Node").get()),
            ("list secrets in its namespace", lambda: dyn.resources.get(api_version="v1", kind="Secret").get(namespace=ns)),
            ("delete its namespace",
             lambda: dyn.resources.get(api_version="v1", kind="Namespace").delete(name=ns)),
        ]
        if fleet.crds_installed:
            rt = dyn.resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainingRuntime")
            denied.append(("list trainingruntimes in kube-system", lambda: rt.get(namespace="kube-system")))
        for what, call in denied:
            with pytest.raises(ApiException) as exc:
                call()
            assert exc.value.status == 403, f"{c}: {what}: expected 403, got {exc.value.status}"


def test_fake_gpu_nodes_look_like_the_cluster_platform(fleet):
    for c in fleet.clusters:
        info = fleet.cluster(c)
        nodes = fleet.dynamic(c).resources.get(api_version="v1", kind="Node").get().to_dict()["items"]
        assert nodes, f"{c}: no nodes"
        for n in nodes:
            labels = n["metadata"]["labels"]
            assert labels["nvidia.com/gpu.product"].startswith("NVIDIA-")
            # Bare-metal/on-prem platforms without a catalogue entry carry no instance type, as in real life.
            assert labels.get("node.kubernetes.io/instance-type") == info.get("node_instance_type")
            assert int(n["status"]["capacity"]["nvidia.com/gpu"]) > 0
            ready = [x for x in n["status"]["conditions"] if x["type"] == "Ready"]
            assert ready and ready[0]["status"] == "True"
            assert {"type": "InternalIP", "address": "127.0.0.1"} in n["status"]["addresses"]
            assert n["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] > 0
            gpu_token = info["node_gpu_architecture"].upper()
            assert gpu_token in labels["nvidia.com/gpu.product"], f"{c}: {labels['nvidia.com/gpu.product']}"
            provider = n["spec"].get("providerID", "")
            prefix = {"aws": "aws://", "gcp": "gce://", "azure": "azure://", "oci": "ocid1."}.get(info["node_platform"])
            if prefix:
                assert provider.startswith(prefix), f"{c}: providerID {provider!r}"
            if info["node_platform"] == "aws":
                assert int(n["status"]["capacity"]["vpc.amazonaws.com/efa"]) > 0
            if info["node_gpu_architecture"] in ("gb200", "gb300"):
                assert labels.get("nvidia.com/gpu.clique")
    mismatched = [c for c in fleet.clusters if not fleet.cluster(c)["nodes_match_group"]]
    for c in mismatched:
        info = fleet.cluster(c)
        assert (info["node_platform"], info["node_gpu_architecture"]) != (info["platform"], info["gpu_architecture"])


def test_inventory_groups_clusters_by_platform_and_gpu(fleet):
    import yaml

    with open(fleet.inventory) as f:
        inv = yaml.safe_load(f)
    children = inv["all"]["children"]
    for c in fleet.clusters:
        info = fleet.cluster(c)
        group = children[f"{info['platform']}_{info['gpu_architecture']}"]
        expected = {"burnin_platform": info["platform"], "burnin_gpu_architecture": info["gpu_architecture"]}
        if info["gpu_architecture"] in ("gb200", "gb300"):
            # The nccl-tests workloads have no default arm64 image: the fleet names a stand-in for Grace groups.
            expected["burnin_image"] = "localhost/gpufleet-test/nccl-tests:arm64-stand-in"
        assert group["vars"] == expected
        host = group["hosts"][c]
        assert host["burnin_kubeconfig"] == fleet.kubeconfig and host["burnin_context"] == c
        assert host["ansible_connection"] == "local"
        assert host["ansible_python_interpreter"] == "{{ ansible_playbook_python }}"


def test_controller_marks_trainjobs_complete_or_failed(fleet_crds, e2e_namespace):
    ns = e2e_namespace
    runtime = build_runtime("torch", rich_config("tj"))
    jobs = {}
    for c in fleet_crds.clusters:
        dyn = fleet_crds.dynamic(c)
        ssa(dyn, runtime, ns)
        tj = dyn.resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainJob")
        for name, outcome in (("tj-default", None), ("tj-fail", "Failed"), ("tj-none", "none")):
            meta = {"name": name}
            if outcome:
                meta["annotations"] = {"gpufleet.test/outcome": outcome}
            tj.create(namespace=ns, body={
                "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": meta,
                "spec": {"runtimeRef": {"name": runtime["metadata"]["name"], "kind": "TrainingRuntime",
                                        "apiGroup": "trainer.kubeflow.org"}}})
        jobs[c] = tj

    def terminal(tj, name):
        obj = tj.get(name=name, namespace=ns).to_dict()
        return [x for x in (obj.get("status") or {}).get("conditions") or []
                if x["type"] in ("Complete", "Failed") and x["status"] == "True"]

    for c, tj in jobs.items():
        default = fleet_crds.cluster(c)["trainjob_outcome"]
        conds = wait_for(lambda: terminal(tj, "tj-fail"), what=f"{c}: tj-fail to fail")
        assert conds[0]["type"] == "Failed" and conds[0]["reason"] and conds[0]["message"]
        if default == "none":
            assert not terminal(tj, "tj-default"), f"{c}: outcome none, yet the TrainJob finished"
        else:
            conds = wait_for(lambda: terminal(tj, "tj-default"), what=f"{c}: tj-default to finish")
            assert conds[0]["type"] == default
            status = tj.get(name="tj-default", namespace=ns).to_dict()["status"]
            assert [j["name"] for j in status["jobsStatus"]] == ["node"]
        assert not terminal(tj, "tj-none"), f"{c}: annotation outcome none, yet the TrainJob finished"


def test_namespace_deletion_and_garbage_collection_are_real(fleet):
    c = fleet.clusters[0]
    dyn = fleet.dynamic(c)
    nss = dyn.resources.get(api_version="v1", kind="Namespace")
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    name = f"gc-{uuid.uuid4().hex[:6]}"
    nss.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    owner = cms.create(namespace=name, body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}})
    cms.create(namespace=name, body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "dependent", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                                  "uid": owner.metadata.uid}]}})
    cms.delete(name="owner", namespace=name)
    wait_for(lambda: "dependent" not in [i["metadata"]["name"] for i in cms.get(namespace=name).to_dict()["items"]],
             what="garbage collection of the dependent ConfigMap")
    nss.delete(name=name)
    wait_for(lambda: name not in [i["metadata"]["name"] for i in nss.get().to_dict()["items"]],
             timeout=60, what=f"namespace {name} to be deleted")


def test_trainjob_pods_and_their_logs_come_through_the_api_server(fleet_crds, e2e_namespace):
    """The test controller creates a TrainJob's pods on the fake nodes; the API server proxies pods/log to the fake
    kubelet, whose output is real-shaped nccl-tests output for the TrainJob's command."""
    from kubernetes.client import CoreV1Api

    from ansible_collections.gpufleet.burnin.plugins.module_utils.nccl_results import parse_nccl_output

    c = next(name for name in fleet_crds.clusters if fleet_crds.cluster(name)["trainjob_outcome"] == "Complete")
    dyn = fleet_crds.dynamic(c)
    runtime = build_runtime("mpi", dict(rich_config("logs"), gpus_per_node=8))
    ssa(dyn, runtime, e2e_namespace)
    tj = dyn.resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainJob")
    tj.create(namespace=e2e_namespace, body={
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "logs-1", "labels": {"gpufleet.burnin/run-id": "logs-1"},
                     "annotations": {"gpufleet.test/nccl-log": "good"}},
        "spec": {"runtimeRef": {"name": runtime["metadata"]["name"], "kind": "TrainingRuntime", "apiGroup": "trainer.kubeflow.org"},
                 "trainer": {"numNodes": 2, "numProcPerNode": 8, "command": ["mpirun"],
                             "args": ["-N", "8", "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "1G", "-f", "2", "-g", "1"]}}})
    wait_for(lambda: [x for x in (tj.get(name="logs-1", namespace=e2e_namespace).to_dict().get("status") or {}).get("conditions") or []
                      if x["type"] == "Complete" and x["status"] == "True"], what="logs-1 to complete")
    core = CoreV1Api(fleet_crds.api_client(c))
    pods = core.list_namespaced_pod(e2e_namespace, label_selector="jobset.sigs.k8s.io/jobset-name=logs-1").items
    roles = sorted(p.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] for p in pods)
    assert roles == ["launcher", "node", "node"]
    nodes = [n["metadata"]["name"] for n in dyn.resources.get(api_version="v1", kind="Node").get().to_dict()["items"]]
    for p in pods:
        assert p.spec.node_name in nodes and p.status.phase == "Succeeded"
        assert p.metadata.labels["gpufleet.burnin/run-id"] == "logs-1"
        assert p.metadata.owner_references[0].kind == "TrainJob" and p.metadata.owner_references[0].name == "logs-1"
        assert p.spec.hostname == p.metadata.name.rsplit("-", 1)[0] and p.spec.subdomain == "logs-1"
    launcher = [p for p in pods if p.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == "launcher"][0]
    text = core.read_namespaced_pod_log(launcher.metadata.name, e2e_namespace, container="node")
    result = parse_nccl_output(text)
    assert result["complete"] and result["collective"] == "all_reduce" and result["largest_size"] == 2 ** 30
    assert sorted(result["hosts"]) == sorted(p.spec.hostname for p in pods if p.metadata.labels[
        "jobset.sigs.k8s.io/replicatedjob-name"] == "node")
    assert core.read_namespaced_pod_log(launcher.metadata.name, e2e_namespace, container="node", tail_lines=3) == "\n".join(
        text.splitlines()[-3:]) + "\n"
    from kubernetes.client.exceptions import ApiException
    with pytest.raises(ApiException):
        core.read_namespaced_pod_log(launcher.metadata.name, e2e_namespace, container="node", previous=True)


def test_fake_kubelet_wants_the_api_servers_client_certificate(fleet):
    """Like a kubelet: TLS with a certificate of the fleet CA for 127.0.0.1, and only clients with one of that CA."""
    import http.client
    import ssl
    import sys

    pki = fleet.dir / "pki"
    port = fleet.cluster(fleet.clusters[0])["kubelet_port"]
    anonymous = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    with pytest.raises((ssl.SSLError, ConnectionError)):
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=anonymous, timeout=5)
        conn.request("GET", "/healthz")
        conn.getresponse().read()
    client = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    client.load_cert_chain(str(pki / "kubelet-client.crt"), str(pki / "kubelet-client.key"))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=client, timeout=5)
    conn.request("GET", "/containerLogs/nowhere/no-pod/node")
    response = conn.getresponse()
    assert response.status == 404 and b"not found" in response.read()
    # `fleet.py status` counts the fake kubelet with the other processes (conftest loads fleet.py under this name).
    status = sys.modules["gpufleet_test_fleet"].status(str(fleet.dir))
    assert status["processes"]["kubelet"]["running"] and status["processes"]["controller"]["running"]
