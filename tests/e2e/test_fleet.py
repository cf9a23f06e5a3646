# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Integration tests against the real multi-cluster test fleet (tests/fleet, fixture in conftest.py).

Each cluster is a real control plane (1.34 or 1.37) with KWOK nodes and the real JobSet and Trainer controllers
and webhooks. Server-side apply drops unknown fields of custom resources with only a warning, so what is read back
is compared with what was sent.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import json
import time
import uuid

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.runtime import build_runtime

FIELD_MANAGER = "gpufleet-burnin"
UPSTREAM_CRDS = (
    "trainingruntimes.trainer.kubeflow.org",
    "clustertrainingruntimes.trainer.kubeflow.org",
    "trainjobs.trainer.kubeflow.org",
    "jobsets.jobset.x-k8s.io",
    "computedomains.resource.nvidia.com",
)
TRAINER = "trainer.kubeflow.org/v1alpha1"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"


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
        "env": [{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "burnin-config", "defaultMode": 420}}],
        "volume_mounts": [{"name": "data", "mountPath": "/data"}, {"name": "cfg", "mountPath": "/etc/burnin", "readOnly": True}],
        "init_containers": [{"name": "prep", "image": "busybox:1.36", "command": ["sh", "-c", "true"]}],
        "resources": {"limits": {"memory": "64Gi", "cpu": "32"}, "requests": {"memory": "64Gi", "cpu": "32"}},
        "image_pull_secrets": [{"name": "regcred"}],
        "trainer_version": "v2.3.0",
    }


def ssa(dyn, body, namespace):
    res = dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"])
    return res, dyn.server_side_apply(res, body=body, namespace=namespace, field_manager=FIELD_MANAGER)


def create_trainjob(fleet, tj, namespace, body):
    """Create a TrainJob whose runtime was applied a moment before (the conftest's Fleet.until_runtime_seen)."""
    return fleet.until_runtime_seen(lambda: tj.create(namespace=namespace, body=body))


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
        missing = [n for n in UPSTREAM_CRDS if have.get(n) != "True"]
        assert not missing, f"{c}: CRDs missing or not Established: {missing}"
        for api_version, kind in (
            ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
            ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"),
            ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
            ("jobset.x-k8s.io/v1alpha2", "JobSet"),
            ("resource.nvidia.com/v1beta1", "ComputeDomain"),
            ("resource.k8s.io/v1", "ResourceClaimTemplate"),
        ):
            assert dyn.resources.get(api_version=api_version, kind=kind), f"{c}: {api_version} {kind} not served"
        # The cluster's own Kubernetes version, as the version-dependent rendering reads it.
        from kubernetes.client import VersionApi

        assert "v" + fleet_crds.cluster(c)["kubernetes_version"] == VersionApi(fleet_crds.api_client(c)).get_code().git_version


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
    """The object minus what a no-op apply may touch: resourceVersion and managedFields times."""
    obj = json.loads(json.dumps(obj))
    obj["metadata"].pop("resourceVersion", None)
    for entry in obj["metadata"].get("managedFields") or []:
        entry.pop("time", None)
    return obj


def test_second_server_side_apply_is_a_noop(fleet_crds, e2e_namespace):
    """Applying the same runtime again changes nothing: same spec, generation, field ownership and resourceVersion
    (current servers skip the write of a no-op apply)."""
    for c in fleet_crds.clusters:
        runtime = build_runtime("torch", rich_config("ssa-noop"))
        first = ssa(fleet_crds.dynamic(c), runtime, e2e_namespace)[1]
        second = ssa(fleet_crds.dynamic(c), runtime, e2e_namespace)[1]
        a, b = _without_apply_time(first.to_dict()), _without_apply_time(second.to_dict())
        assert a == b, f"{c}: second apply changed the object:\n" + "\n".join(
            difflib.unified_diff(json.dumps(a, indent=1, sort_keys=True).splitlines(), json.dumps(b, indent=1, sort_keys=True).splitlines(), lineterm="", n=2)
        )
        assert b["metadata"]["generation"] == a["metadata"]["generation"] == 1
        assert second.metadata.resourceVersion == first.metadata.resourceVersion, f"{c}: a no-op apply wrote"


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
        rt = dyn.resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainingRuntime")
        rt.get(namespace=ns)

        denied = [
            ("list configmaps in default", lambda: cms.get(namespace="default")),
            ("create a configmap in default", lambda: cms.create(body=body, namespace="default")),
            ("list configmaps in all namespaces", cms.get),
            ("list nodes", lambda: dyn.resources.get(api_version="v1", kind="Node").get()),
            ("list secrets in its namespace", lambda: dyn.resources.get(api_version="v1", kind="Secret").get(namespace=ns)),
            ("delete its namespace", lambda: dyn.resources.get(api_version="v1", kind="Namespace").delete(name=ns)),
            ("list trainingruntimes in kube-system", lambda: rt.get(namespace="kube-system")),
        ]
        for what, call in denied:
            with pytest.raises(ApiException) as exc:
                call()
            assert exc.value.status == 403, f"{c}: {what}: expected 403, got {exc.value.status}"


def test_fake_gpu_nodes_look_like_the_cluster_platform(fleet):
    for c in fleet.clusters:
        info = fleet.cluster(c)
        nodes = fleet.dynamic(c).resources.get(api_version="v1", kind="Node").get().to_dict()["items"]
        # Every cluster also has its system pool's CPU node, as managed clusters do.
        system = [n for n in nodes if n["metadata"]["labels"].get("gpufleet.test/system-node") == "true"]
        assert len(system) == 1 and "nvidia.com/gpu" not in system[0]["status"]["capacity"], f"{c}: {system}"
        nodes = [n for n in nodes if n not in system]
        assert nodes, f"{c}: no GPU nodes"
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
            # Most platforms have no default arm64 nccl-tests image (_lib/images.yaml): the fleet names a stand-in for every Grace group.
            expected["burnin_image"] = "localhost/gpufleet-test/nccl-tests:arm64-stand-in"
        assert group["vars"] == expected
        host = group["hosts"][c]
        assert host["burnin_kubeconfig"] == fleet.kubeconfig and host["burnin_context"] == c
        assert host["ansible_connection"] == "local"
        assert host["ansible_python_interpreter"] == "{{ ansible_playbook_python }}"


def cluster_shape(fleet, c):
    """(nodes, GPUs per node) of a fleet cluster's KWOK GPU nodes: what a TrainJob there can be scheduled onto."""
    nodes = fleet.dynamic(c).resources.get(api_version="v1", kind="Node").get(label_selector="nvidia.com/gpu.present=true").to_dict()["items"]
    return len(nodes), int(nodes[0]["status"]["allocatable"]["nvidia.com/gpu"])


def terminal(tj, name, ns):
    obj = tj.get(name=name, namespace=ns).to_dict()
    return [x for x in (obj.get("status") or {}).get("conditions") or [] if x["type"] in ("Complete", "Failed") and x["status"] == "True"]


def test_real_chain_ends_trainjobs_complete_or_failed(fleet_crds, e2e_namespace):
    """Trainer makes a JobSet of runtime + TrainJob, JobSet its Jobs, the Job controller their pods, the scheduler
    binds them to KWOK nodes, the agent ends their containers as the annotation or the cluster says, and the Job,
    JobSet and TrainJob conditions that follow are the real controllers' own."""
    ns = e2e_namespace
    jobs = {}
    for c in fleet_crds.clusters:
        # One GPU per pod: the three TrainJobs fit on the nodes together (tj-none never ends).
        nodes, gpus = cluster_shape(fleet_crds, c)
        runtime = build_runtime("torch", dict(rich_config("tj"), nodes=nodes, gpus_per_node=1))
        dyn = fleet_crds.dynamic(c)
        ssa(dyn, runtime, ns)
        tj = dyn.resources.get(api_version=TRAINER, kind="TrainJob")
        for name, outcome in (("tj-default", None), ("tj-fail", "Failed"), ("tj-none", "none")):
            meta = {"name": name}
            if outcome:
                meta["annotations"] = {"gpufleet.test/outcome": outcome}
            create_trainjob(
                fleet_crds,
                tj,
                ns,
                {
                    "apiVersion": TRAINER,
                    "kind": "TrainJob",
                    "metadata": meta,
                    "spec": {"runtimeRef": {"name": runtime["metadata"]["name"], "kind": "TrainingRuntime", "apiGroup": "trainer.kubeflow.org"}},
                },
            )
        jobs[c] = tj

    for c, tj in jobs.items():
        default = fleet_crds.cluster(c)["trainjob_outcome"]
        conds = wait_for(lambda: terminal(tj, "tj-fail", ns), timeout=120, what=f"{c}: tj-fail to fail")
        # JobSet's reason for a JobSet whose Job failed, as Trainer copies it.
        assert conds[0]["type"] == "Failed" and conds[0]["reason"] == "FailedJobs" and conds[0]["message"]
        if default == "none":
            assert not terminal(tj, "tj-default", ns), f"{c}: outcome none, yet the TrainJob finished"
        else:
            conds = wait_for(lambda: terminal(tj, "tj-default", ns), timeout=120, what=f"{c}: tj-default to finish")
            assert conds[0]["type"] == default
            if default == "Complete":
                assert conds[0]["reason"] == "AllJobsCompleted"
            status = tj.get(name="tj-default", namespace=ns).to_dict()["status"]
            assert [j["name"] for j in status["jobsStatus"]] == ["node"]
        assert not terminal(tj, "tj-none", ns), f"{c}: annotation outcome none, yet the TrainJob finished"
        # The Job controller's own record of the failure: the pod's restarts reached the backoff limit.
        job = fleet_crds.dynamic(c).resources.get(api_version="batch/v1", kind="Job").get(name="tj-fail-node-0", namespace=ns).to_dict()
        failed = [x for x in job["status"].get("conditions") or [] if x["type"] == "Failed"]
        assert failed and failed[0]["reason"] == "BackoffLimitExceeded", f"{c}: {job['status']}"
    for c, tj in jobs.items():  # free the GPUs for the next tests
        for name in ("tj-default", "tj-fail", "tj-none"):
            tj.delete(name=name, namespace=ns)


def test_trainer_webhook_rejection_is_trainers_own_message(fleet_crds, e2e_namespace):
    """Trainer's validating webhook is wired as in a real cluster: a runtime it rejects fails with its message."""
    from kubernetes.client.exceptions import ApiException

    runtime = build_runtime("torch", rich_config("rejected"))
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2
    c = fleet_crds.clusters[0]
    with pytest.raises(ApiException) as exc:
        ssa(fleet_crds.dynamic(c), runtime, e2e_namespace)
    body = json.loads(exc.value.body)
    assert exc.value.status == 403 or exc.value.status == 422, exc.value.body
    assert 'admission webhook "validator.trainingruntime.trainer.kubeflow.org" denied the request' in body["message"]
    assert "spec.template.spec.replicatedJobs[0].replicas" in body["message"]


def test_namespace_deletion_and_garbage_collection_are_real(fleet):
    c = fleet.clusters[0]
    dyn = fleet.dynamic(c)
    nss = dyn.resources.get(api_version="v1", kind="Namespace")
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    name = f"gc-{uuid.uuid4().hex[:6]}"
    nss.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    owner = cms.create(namespace=name, body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}})
    cms.create(
        namespace=name,
        body={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "dependent", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}]},
        },
    )
    cms.delete(name="owner", namespace=name)
    wait_for(
        lambda: "dependent" not in [i["metadata"]["name"] for i in cms.get(namespace=name).to_dict()["items"]],
        what="garbage collection of the dependent ConfigMap",
    )
    nss.delete(name=name)
    wait_for(lambda: name not in [i["metadata"]["name"] for i in nss.get().to_dict()["items"]], timeout=60, what=f"namespace {name} to be deleted")


def test_mpi_trainjob_runs_through_trainer_jobset_and_kwok_with_logs(fleet_crds, e2e_namespace):
    """An MPI TrainJob through the real chain: Trainer's MPI plugin makes the SSH key Secret and the hostfile, JobSet's
    webhook makes the Jobs Indexed with DNS hostnames, the launcher starts once the workers are Ready, and the
    launcher's nccl-tests output (the agent's stand-in for the GPUs) comes through the API server from KWOK."""
    from kubernetes.client import CoreV1Api
    from kubernetes.client.exceptions import ApiException

    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.nccl_results import parse_nccl_output

    c = next(name for name in fleet_crds.clusters if fleet_crds.cluster(name)["trainjob_outcome"] == "Complete")
    dyn = fleet_crds.dynamic(c)
    nodes, gpus = cluster_shape(fleet_crds, c)
    runtime = build_runtime("mpi", dict(rich_config("logs"), nodes=nodes, gpus_per_node=gpus))
    ssa(dyn, runtime, e2e_namespace)
    tj = dyn.resources.get(api_version=TRAINER, kind="TrainJob")
    create_trainjob(
        fleet_crds,
        tj,
        e2e_namespace,
        {
            "apiVersion": TRAINER,
            "kind": "TrainJob",
            "metadata": {"name": "logs-1", "labels": {"gpufleet.burnin/run-id": "logs-1"}, "annotations": {"gpufleet.test/nccl-log": "good"}},
            "spec": {
                "runtimeRef": {"name": runtime["metadata"]["name"], "kind": "TrainingRuntime", "apiGroup": "trainer.kubeflow.org"},
                "trainer": {
                    "numNodes": nodes,
                    "numProcPerNode": gpus,
                    "command": ["mpirun"],
                    "args": ["-N", str(gpus), "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "1G", "-f", "2", "-g", "1"],
                },
            },
        },
    )
    wait_for(lambda: [x for x in terminal(tj, "logs-1", e2e_namespace) if x["type"] == "Complete"], timeout=120, what="logs-1 to complete")
    core = CoreV1Api(fleet_crds.api_client(c))
    secret = core.read_namespaced_secret("logs-1-mpi-ssh-auth", e2e_namespace)
    assert "ssh-privatekey" in secret.data and secret.type == "kubernetes.io/ssh-auth"
    hostfile = core.read_namespaced_config_map("logs-1-mpi-hostfile", e2e_namespace).data["hostfile"]
    assert [line.split()[0] for line in hostfile.splitlines() if line.strip()] == [f"logs-1-node-0-{i}.logs-1" for i in range(nodes)]
    pods = core.list_namespaced_pod(e2e_namespace, label_selector=f"{JOBSET_NAME}=logs-1").items
    roles = sorted(p.metadata.labels[REPLICATED_JOB] for p in pods)
    assert roles == ["launcher"] + ["node"] * nodes
    node_names = [n["metadata"]["name"] for n in dyn.resources.get(api_version="v1", kind="Node").get().to_dict()["items"]]
    for p in pods:
        assert p.spec.node_name in node_names
        assert p.metadata.owner_references[0].kind == "Job"
        assert p.spec.hostname == p.metadata.name.rsplit("-", 1)[0] and p.spec.subdomain == "logs-1"
        assert p.metadata.labels["batch.kubernetes.io/job-completion-index"] == p.spec.hostname.rsplit("-", 1)[1]
    workers = [p for p in pods if p.metadata.labels[REPLICATED_JOB] == "node"]
    assert len({p.spec.node_name for p in workers}) == nodes, "one worker per node (GPUs fill each node)"
    launcher = [p for p in pods if p.metadata.labels[REPLICATED_JOB] == "launcher"][0]
    assert launcher.status.phase == "Succeeded"
    assert min(p.status.start_time for p in workers) <= launcher.status.start_time, "dependsOn: workers Ready first"
    text = core.read_namespaced_pod_log(launcher.metadata.name, e2e_namespace, container="node")
    result = parse_nccl_output(text)
    assert result["complete"] and result["collective"] == "all_reduce" and result["largest_size"] == 2**30
    assert sorted(result["hosts"]) == sorted(p.spec.hostname for p in workers)
    assert core.read_namespaced_pod_log(launcher.metadata.name, e2e_namespace, container="node", tail_lines=3) == "\n".join(text.splitlines()[-3:]) + "\n"
    with pytest.raises(ApiException):
        core.read_namespaced_pod_log(launcher.metadata.name, e2e_namespace, container="node", previous=True)


def test_computedomain_channel_claims_are_allocated_by_the_scheduler(fleet_crds, e2e_namespace):
    """Multi-node NVLink: a ComputeDomain's channel ResourceClaimTemplate (made by the agent, standing in for NVIDIA's
    DRA driver) gives each pod a ResourceClaim (kube-controller-manager) that kube-scheduler allocates from the
    nodes' IMEX channel ResourceSlices before the pod is bound."""
    c = next(
        (n for n in fleet_crds.clusters if fleet_crds.cluster(n)["node_gpu_architecture"] in ("gb200", "gb300") and fleet_crds.cluster(n)["nodes_match_group"]),
        None,
    )
    assert c, "the default fleet has a GB200 cluster"
    dyn = fleet_crds.dynamic(c)
    nodes, gpus = cluster_shape(fleet_crds, c)
    gpus = 1
    cd = {
        "apiVersion": "resource.nvidia.com/v1beta1",
        "kind": "ComputeDomain",
        "metadata": {"name": "cd-e2e"},
        "spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": "cd-e2e-channel"}}},
    }
    ssa(dyn, cd, e2e_namespace)
    rct = wait_for(
        lambda: [
            x
            for x in dyn.resources.get(api_version="resource.k8s.io/v1", kind="ResourceClaimTemplate").get(namespace=e2e_namespace).to_dict()["items"]
            if x["metadata"]["name"] == "cd-e2e-channel"
        ],
        what="the ComputeDomain's channel ResourceClaimTemplate",
    )
    assert rct[0]["metadata"]["ownerReferences"][0]["kind"] == "ComputeDomain"
    runtime = build_runtime("torch", dict(rich_config("dra"), nodes=nodes, gpus_per_node=gpus))
    pod_spec = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod_spec["resourceClaims"] = [{"name": "imex-channel", "resourceClaimTemplateName": "cd-e2e-channel"}]
    pod_spec["containers"][0].setdefault("resources", {})["claims"] = [{"name": "imex-channel"}]
    ssa(dyn, runtime, e2e_namespace)
    tj = dyn.resources.get(api_version=TRAINER, kind="TrainJob")
    create_trainjob(
        fleet_crds,
        tj,
        e2e_namespace,
        {
            "apiVersion": TRAINER,
            "kind": "TrainJob",
            "metadata": {"name": "dra-1", "annotations": {"gpufleet.test/outcome": "Complete", "gpufleet.test/delay-seconds": "30"}},
            "spec": {"runtimeRef": {"name": runtime["metadata"]["name"], "kind": "TrainingRuntime", "apiGroup": "trainer.kubeflow.org"}},
        },
    )
    claims = dyn.resources.get(api_version="resource.k8s.io/v1", kind="ResourceClaim")

    def allocated():
        mine = [
            x
            for x in claims.get(namespace=e2e_namespace).to_dict()["items"]
            if x["metadata"]["name"].startswith("dra-1-") and (x.get("status") or {}).get("allocation")
        ]
        return mine if len(mine) == nodes else None

    # While the pods run: each has its own claim, allocated an IMEX channel of the node it was bound to.
    for claim in wait_for(allocated, timeout=60, what="the pods' channel claims to be allocated"):
        results = claim["status"]["allocation"]["devices"]["results"]
        assert results[0]["driver"] == "compute-domain.nvidia.com" and results[0]["device"].startswith("channel-")
        node = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
        owner = claim["metadata"]["ownerReferences"][0]
        assert owner["kind"] == "Pod"
        pods = dyn.resources.get(api_version="v1", kind="Pod")
        # Bound to the claim's node; KWOK then starts it (a moment later on a loaded machine).
        pod = wait_for(
            lambda: [p for p in [pods.get(name=owner["name"], namespace=e2e_namespace)] if p.status.phase != "Pending"],
            timeout=60,
            what="pod %s to start" % owner["name"],
        )[0]
        assert pod.spec.nodeName == node and pod.status.phase == "Running"
    wait_for(lambda: [x for x in terminal(tj, "dra-1", e2e_namespace) if x["type"] == "Complete"], timeout=120, what="dra-1 to complete")


def test_status_counts_every_component_of_every_cluster(fleet):
    import sys

    status = sys.modules["gpufleet_test_fleet"].status(str(fleet.dir))
    assert status["running"], status
    for c in fleet.clusters:
        for kind in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "jobset", "trainer"):
            assert status["processes"][f"{c}/{kind}"]["running"], f"{c}/{kind}"
    assert status["processes"]["agent"]["running"] and status["processes"]["etcd"]["running"]
