# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The platform layer against real API servers: plan one burn-in per platform with
plugins/module_utils/workload.plan_workload, apply every planned object with server-side apply through the
kubernetes dynamic client, and read each back: nothing may be pruned or changed.

Uses the `fleet_crds` fixture of conftest.py (the loopback test fleet of tests/fleet, with the upstream CRDs and a
ResourceClaimTemplate stand-in serving v1, v1beta2 and v1beta1). A plan goes to a fleet cluster of its platform
when the fleet has one (its Node objects are then read for discovery, as the role does), otherwise to the first
cluster: API servers do not care which cloud an object is meant for. The fleet's kube-apiserver 1.20 has no
strict field validation, so what is read back is compared with what was sent.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import uuid

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.workload import plan_workload

pytest.importorskip("kubernetes")

FIELD_MANAGER = "gpufleet-burnin-platforms"
TRAINERS = {
    "torch": {"script": "/workspace/smoke.py", "args": ["--steps", "10"]},
    "mpi": {"binary": "/usr/local/bin/all_reduce_perf", "args": ["-b", "8", "-e", "8G", "-f", "2"]},
}
# (platform, gpu, framework, extra plan config): one or more per platform, chosen for what they create.
CASES = [
    ("aws", "h100", "mpi", {}),                                                     # EFA x 32, IPC_LOCK, -x env
    ("aws", "gb300", "torch", {"rct_api_version": "v1beta1"}),                      # ComputeDomain, flat RoCE claim
    ("gcp", "h100", "torch", {}),                                                   # A3 Mega: tcpxo-daemon sidecar
    ("gcp", "h100", "mpi", {"instance_type": "a3-highgpu-8g"}),                     # A3 High: tcpx-daemon, trainer env patch
    ("gcp", "gb300", "torch", {"rct_api_version": "v1beta2"}),                      # A4X Max: mrdma claim, seed keys deleted
    ("gcp", "h200", "mpi", {"platform_vars": {"gcp_rdma_mode": "dranet"}}),        # A3 Ultra over managed DRANET
    ("azure", "gb200", "mpi", {}),                                                  # ND GB200 v6, ComputeDomain
    ("azure", "h100", "torch", {"platform_vars": {"azure_topology_configmap": "ndv5-topo"}}),
    ("oci", "h100", "mpi", {}),                                                     # host network, sshd port ConfigMap
    ("oci", "h200", "torch", {"platform_vars": {"oci_network_mode": "sriov"}}),     # SR-IOV VFs and multus
    ("coreweave", "gb200", "mpi", {}),
    ("coreweave", "h100", "torch", {}),
    ("nebius", "h100", "torch", {}),
    ("onprem", "b200", "mpi", {"platform_vars": {"onprem_networks": ["rdma-net-ipam"]}}),
]


def pruned_paths(sent, got, path=""):
    """Paths present in `sent` that are missing or different in `got` (extra server-side fields are fine)."""
    out = []
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return ["%s: sent a mapping, read back %s" % (path or ".", type(got).__name__)]
        for key, value in sent.items():
            here = "%s.%s" % (path, key)
            if key not in got:
                out.append("%s: pruned" % here)
            else:
                out.extend(pruned_paths(value, got[key], here))
    elif isinstance(sent, list):
        if not isinstance(got, list) or len(got) != len(sent):
            return ["%s: sent %d items, read back %.200r" % (path, len(sent), got)]
        for index, (a, b) in enumerate(zip(sent, got)):
            out.extend(pruned_paths(a, b, "%s[%d]" % (path, index)))
    elif sent != got:
        out.append("%s: sent %r, read back %r" % (path, sent, got))
    return out


def target_cluster(fleet, platform):
    """(cluster, True) for a fleet cluster of `platform` whose nodes match it, else (the first cluster, False)."""
    for name in fleet.clusters:
        record = fleet.cluster(name)
        if record.get("platform") == platform and record.get("nodes_match_group", True):
            return name, True
    return fleet.clusters[0], False


@pytest.fixture(scope="module")
def platforms_namespace(fleet_crds):
    name = "platforms-%s" % uuid.uuid4().hex[:8]
    for cluster in fleet_crds.clusters:
        namespaces = fleet_crds.dynamic(cluster).resources.get(api_version="v1", kind="Namespace")
        namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    for cluster in fleet_crds.clusters:
        namespaces = fleet_crds.dynamic(cluster).resources.get(api_version="v1", kind="Namespace")
        namespaces.delete(name=name)


def list_nodes(fleet, cluster):
    return [item.to_dict() for item in fleet.dynamic(cluster).resources.get(api_version="v1", kind="Node").get().items]


def server_version(fleet, cluster):
    from kubernetes import client
    return client.VersionApi(fleet.api_client(cluster)).get_code().git_version


@pytest.mark.parametrize("platform, gpu, framework, extra", CASES,
                         ids=["%s-%s-%s-%d" % (c[0], c[1], c[2], i) for i, c in enumerate(CASES)])
def test_planned_objects_apply_and_read_back_unpruned(fleet_crds, platforms_namespace, platform, gpu, framework, extra):
    cluster, native = target_cluster(fleet_crds, platform)
    config = dict(entry_name=("%s-%s-%s" % (platform, gpu, framework)), namespace=platforms_namespace,
                  image="nvcr.io/nvidia/pytorch:26.01-py3", framework=framework, nodes=2,
                  gpus_per_node=4 if gpu.startswith("gb") else 8, enable_mnnvl=gpu.startswith("gb"), run_id="e2e",
                  trainer=TRAINERS[framework], env=[{"name": "NCCL_DEBUG", "value": "WARN"}])
    config.update(extra)
    facts = {"platform": platform, "gpuArchitecture": gpu}
    if native and fleet_crds.cluster(cluster).get("gpu_architecture") == gpu:
        config["cluster_nodes"] = list_nodes(fleet_crds, cluster)  # discovery, as the role does
    plan = plan_workload(config, facts)
    assert plan["objects"][-1]["kind"] == "TrainJob"
    dyn = fleet_crds.dynamic(cluster)
    problems = []
    for obj in plan["objects"]:
        resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        applied = dyn.server_side_apply(resource, body=obj, namespace=platforms_namespace, field_manager=FIELD_MANAGER,
                                        force_conflicts=True).to_dict()
        problems.extend("%s %s (apply): %s" % (obj["kind"], obj["metadata"]["name"], p) for p in pruned_paths(obj, applied))
        again = resource.get(name=obj["metadata"]["name"], namespace=platforms_namespace).to_dict()
        problems.extend("%s %s (read back): %s" % (obj["kind"], obj["metadata"]["name"], p) for p in pruned_paths(obj, again))
    assert not problems, "%s on %s:\n%s" % (platform, cluster, "\n".join(problems))


def test_discovery_reads_the_fleet_nodes(fleet_crds, platforms_namespace):
    """On fleet clusters of the platform layer's clouds, what the nodes offer reaches the plan."""
    seen = 0
    for cluster in fleet_crds.clusters:
        record = fleet_crds.cluster(cluster)
        if not record.get("nodes_match_group", True) or record.get("platform") not in ("aws", "gcp", "azure", "oci", "coreweave"):
            continue
        nodes = list_nodes(fleet_crds, cluster)
        gpu = record["gpu_architecture"]
        plan = plan_workload(dict(entry_name="discovery", namespace=platforms_namespace, image="img", nodes=1,
                                  gpus_per_node=4 if gpu.startswith("gb") else 8, run_id="d", trainer=TRAINERS["torch"],
                                  cluster_nodes=nodes), {"platform": record["platform"], "gpuArchitecture": gpu})
        labels = [(n["metadata"].get("labels") or {}).get("node.kubernetes.io/instance-type") for n in nodes]
        if any(labels):
            assert plan["instance_type"] in labels and plan["platform_data"]["instance_type_source"] == "nodes", cluster
        allocatable = {}
        for n in nodes:
            allocatable.update((n.get("status") or {}).get("allocatable") or (n.get("status") or {}).get("capacity") or {})
        if record["platform"] == "aws" and "vpc.amazonaws.com/efa" in allocatable:
            assert plan["platform_data"]["efa_per_node"] == int(allocatable["vpc.amazonaws.com/efa"]), cluster
            assert plan["platform_data"]["nic_source"] == "nodes"
        seen += 1
    if not seen:
        pytest.skip("the fleet has no cluster of the platform layer's clouds")


def test_server_version_of_the_fleet_drives_the_dra_policy(fleet_crds, platforms_namespace):
    """The fleet's API servers (1.20) predate DRA: a plan that needs it fails naming server_version; one that does
    not plans; rct_api_version overrides the policy."""
    cluster = fleet_crds.clusters[0]
    version = server_version(fleet_crds, cluster)
    config = dict(entry_name="dra-policy", namespace=platforms_namespace, image="img", nodes=2, gpus_per_node=4, run_id="p",
                  trainer=TRAINERS["torch"], server_version=version)
    major, minor = [int(part) for part in version.lstrip("v").split(".")[:2]]
    if (major, minor) >= (1, 32):
        pytest.skip("the fleet runs Kubernetes %s, which has DRA" % version)
    with pytest.raises(ConfigError, match="^server_version: Kubernetes %s has no resource.k8s.io DRA API" % version.replace(".", r"\.")):
        plan_workload(config, {"platform": "aws", "gpuArchitecture": "gb300"})
    assert plan_workload(dict(config, gpus_per_node=8), {"platform": "aws", "gpuArchitecture": "h100"})["objects"]
    plan = plan_workload(dict(config, rct_api_version="v1"), {"platform": "aws", "gpuArchitecture": "gb300"})
    assert [o["apiVersion"] for o in plan["objects"] if o["kind"] == "ResourceClaimTemplate"] == ["resource.k8s.io/v1"]
