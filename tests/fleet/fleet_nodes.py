"""Fake GPU Node objects that look like the nodes of real managed GPU clusters.

There is no kubelet behind them: they exist so that platform/GPU detection code has real Node objects to
read (labels, providerID, capacity, addresses). Values follow what the clouds and NVIDIA's GPU Feature
Discovery put on nodes; docs/platforms/ names the labels per platform and their sources.
"""

import hashlib
import uuid
from datetime import datetime, timezone

# nvidia.com/gpu.product, GPU memory (MiB), family, GPUs per node, CPU architecture, NVLink clique (MNNVL)
GPUS = {
    "a100": {"product": "NVIDIA-A100-SXM4-80GB", "memory": 81920, "family": "ampere", "count": 8, "arch": "amd64", "clique": False},
    "h100": {"product": "NVIDIA-H100-80GB-HBM3", "memory": 81559, "family": "hopper", "count": 8, "arch": "amd64", "clique": False},
    "h200": {"product": "NVIDIA-H200", "memory": 143771, "family": "hopper", "count": 8, "arch": "amd64", "clique": False},
    "b200": {"product": "NVIDIA-B200", "memory": 183359, "family": "blackwell", "count": 8, "arch": "amd64", "clique": False},
    "gb200": {"product": "NVIDIA-GB200", "memory": 189471, "family": "blackwell", "count": 4, "arch": "arm64", "clique": True},
    "gb300": {"product": "NVIDIA-GB300", "memory": 284208, "family": "blackwell", "count": 4, "arch": "arm64", "clique": True},
}

# Instance type / machine type / shape per platform and GPU.
INSTANCE_TYPES = {
    "aws": {
        "a100": "p4d.24xlarge",
        "h100": "p5.48xlarge",
        "h200": "p5en.48xlarge",
        "b200": "p6-b200.48xlarge",
        "gb200": "p6e-gb200.36xlarge",
        "gb300": "p6e-gb300.36xlarge",
    },
    "gcp": {
        "a100": "a2-ultragpu-8g",
        "h100": "a3-megagpu-8g",
        "h200": "a3-ultragpu-8g",
        "b200": "a4-highgpu-8g",
        "gb200": "a4x-highgpu-4g",
        "gb300": "a4x-maxgpu-4g",
    },
    "azure": {
        "a100": "Standard_ND96amsr_A100_v4",
        "h100": "Standard_ND96isr_H100_v5",
        "h200": "Standard_ND96isr_H200_v5",
        "gb200": "Standard_ND128isr_NDR_GB200_v6",
        "gb300": "Standard_ND128isr_GB300_v6",
    },
    "oci": {
        "a100": "BM.GPU.A100-v2.8",
        "h100": "BM.GPU.H100.8",
        "h200": "BM.GPU.H200.8",
        "b200": "BM.GPU.B200.8",
        "gb200": "BM.GPU.GB200.4",
        "gb300": "BM.GPU.GB300.4",
    },
    "coreweave": {"h100": "gd-8xh100ib-i128", "b200": "b200-8x", "gb200": "gb200-4x", "gb300": "gb300-4x"},
    # Nebius compute platforms (node.kubernetes.io/instance-type on mk8s nodes).
    "nebius": {"h100": "gpu-h100-sxm", "h200": "gpu-h200-sxm", "b200": "gpu-b200-sxm"},
}

# EFA devices per AWS instance type (vpc.amazonaws.com/efa).
AWS_EFA = {
    "p4d.24xlarge": 4,
    "p5.48xlarge": 32,
    "p5e.48xlarge": 32,
    "p5en.48xlarge": 16,
    "p6-b200.48xlarge": 8,
    "p6e-gb200.36xlarge": 4,
    "p6e-gb300.36xlarge": 4,
}

# SR-IOV RDMA VFs per OCI shape (nvidia.com/rdma-vf, NVIDIA Network Operator): one per RoCE port, 16 on
# dual-port shapes, 8 on single-port ones (platform reference 7.3). GB200/GB300 shapes expose none.
OCI_RDMA_VFS = {"BM.GPU.A100-v2.8": 16, "BM.GPU.H100.8": 16, "BM.GPU.H200.8": 8, "BM.GPU.B200.8": 8, "BM.GPU.B300.8": 16}

# Nebius resource presets of 8-GPU nodes (nebius.com/resource-preset). Nebius node labels and the providerID
# (nebius://computeinstance-...) follow third-party manifests, not Nebius's own documentation.
NEBIUS_PRESETS = {"h100": "8gpu-128vcpu-1600gb", "h200": "8gpu-128vcpu-1600gb"}

GKE_ACCELERATOR = {
    "a100": "nvidia-a100-80gb",
    "h100": "nvidia-h100-mega-80gb",
    "h200": "nvidia-h200-141gb",
    "b200": "nvidia-b200",
    "gb200": "nvidia-gb200",
    "gb300": "nvidia-gb300",
}

REGIONS = {
    "aws": ("us-east-1", "us-east-1a"),
    "gcp": ("us-central1", "us-central1-a"),
    "azure": ("eastus", "eastus-1"),
    "oci": ("us-ashburn-1", "US-ASHBURN-AD-1"),
    "coreweave": ("US-EAST-04", "US-EAST-04A"),
}


def _hex(seed, n):
    out = ""
    i = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}/{i}".encode()).hexdigest()
        i += 1
    return out[:n]


def gpu_info(gpu):
    g = GPUS.get(gpu)
    if g is None:
        g = {"product": f"NVIDIA-{gpu.upper()}", "memory": 81920, "family": "unknown", "count": 8, "arch": "amd64", "clique": False}
    return g


def instance_type_for(platform, gpu):
    it = INSTANCE_TYPES.get(platform, {}).get(gpu)
    if it:
        return it
    return None


# How the nodes are named: as the platform names them (ip-10-1-...ec2.internal, gke-..., aks-...), or
# <cluster>-gpu-<i> ("indexed": a spec that names nodes, e.g. slow_nodes, can say which without computing hashes).
NODE_NAMINGS = ("platform", "indexed")


def _node_name(platform, cluster, i, naming="platform"):
    h = _hex(f"{cluster}/{i}", 8)
    if naming == "indexed":
        return f"{cluster}-gpu-{i}"
    if platform == "aws":
        return f"ip-10-1-{int(h[:2], 16)}-{int(h[2:4], 16)}.ec2.internal"
    if platform == "gcp":
        return f"gke-{cluster[:20]}-gpu-pool-{h[:8]}-{h[4:8]}"
    if platform == "azure":
        return f"aks-gpu-{int(h[:6], 16) % 100000000:08d}-vmss{i:06x}"
    if platform == "oci":
        return f"10.0.{int(h[:2], 16)}.{int(h[2:4], 16)}"
    if platform == "nebius":
        return f"computeinstance-e00{_hex(f'{cluster}/{i}/ci', 17)}"
    return f"{cluster}-gpu-{i}"


def gpu_node_name(platform, cluster, key, naming="platform"):
    """The name of a cluster's GPU node as a spec names it: its own name, or `<cluster>-gpu-<i>` for the i-th GPU node
    (0-based; the real name follows NAMING: the platform's scheme, e.g. ip-10-1-...ec2.internal on AWS, or indexed)."""
    prefix = f"{cluster}-gpu-"
    if key.startswith(prefix) and key[len(prefix) :].isdigit():
        return _node_name(platform, cluster, int(key[len(prefix) :]), naming)
    return key


def _provider_id(platform, cluster, name, i, zone):
    h = _hex(f"{cluster}/{name}", 64)
    if platform == "aws":
        return f"aws:///{zone}/i-0{h[:16]}"
    if platform == "gcp":
        return f"gce://gpufleet-test/{zone}/{name}"
    if platform == "azure":
        sub = str(uuid.UUID(h[:32]))
        return (
            f"azure:///subscriptions/{sub}/resourceGroups/mc_burnin_{cluster}_eastus/providers/"
            f"Microsoft.Compute/virtualMachineScaleSets/aks-gpu-vmss/virtualMachines/{i}"
        )
    if platform == "oci":
        return f"ocid1.instance.oc1.iad.{h[:60]}"
    if platform == "nebius":
        return f"nebius://{name}"
    return None


def build_nodes(
    cluster,
    platform,
    gpu,
    count,
    instance_type=None,
    kubelet_port=10250,
    extra_labels=None,
    extra_capacity=None,
    taints=None,
    kubelet_version="v1.34.4",
    naming="platform",
    unregistered=(),
    node_driver=None,
):
    """Return [(node_object, status)] for `count` fake GPU nodes of one cluster (named as NAMING says: NODE_NAMINGS).
    UNREGISTERED: names of MNNVL nodes whose NVLink fabric is not registered (no nvidia.com/gpu.clique label).

    The node object is what is POSTed; status is applied afterwards through the nodes/status subresource.
    """
    g = gpu_info(gpu)
    it = instance_type or instance_type_for(platform, gpu)
    region, zone = REGIONS.get(platform, (None, None))
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    clique_uuid = str(uuid.UUID(_hex(f"{cluster}/clique", 32)))
    out = []
    for i in range(count):
        name = _node_name(platform, cluster, i, naming)
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": g["arch"],
            "beta.kubernetes.io/os": "linux",
            "beta.kubernetes.io/arch": g["arch"],
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": g["product"],
            "nvidia.com/gpu.count": str(g["count"]),
            "nvidia.com/gpu.memory": str(g["memory"]),
            "nvidia.com/gpu.family": g["family"],
            "nvidia.com/cuda.driver.major": "570",
            "nvidia.com/cuda.driver.minor": "148",
            "nvidia.com/cuda.runtime.major": "12",
            "nvidia.com/cuda.runtime.minor": "8",
            "gpufleet.test/fake-node": "true",
        }
        if name in (node_driver or {}):
            # A driver version skew, as GPU feature discovery labels it (major, minor, rev).
            major, minor, rev = node_driver[name].split(".")
            labels.update({"nvidia.com/cuda.driver.major": major, "nvidia.com/cuda.driver.minor": minor, "nvidia.com/cuda.driver.rev": rev})
        if it:
            labels["node.kubernetes.io/instance-type"] = it
            labels["beta.kubernetes.io/instance-type"] = it
            labels["nvidia.com/gpu.machine"] = it
        if region:
            labels["topology.kubernetes.io/region"] = region
            labels["topology.kubernetes.io/zone"] = zone
            labels["failure-domain.beta.kubernetes.io/region"] = region
            labels["failure-domain.beta.kubernetes.io/zone"] = zone
        if g["clique"] and name not in set(unregistered or ()):
            # GPU Feature Discovery: <ClusterUUID>.<CliqueId>, once the fabric registered (a non-zero clique id); an
            # NVL72 rack holds 18 trays.
            labels["nvidia.com/gpu.clique"] = f"{clique_uuid}.{i // 18 + 1}"
        capacity = {
            "cpu": "192" if g["arch"] == "amd64" else "144",
            "memory": "2097152000Ki",
            "pods": "110",
            "ephemeral-storage": "3750000000Ki",
            "hugepages-2Mi": "0",
            "hugepages-1Gi": "0",
            "nvidia.com/gpu": str(g["count"]),
        }
        node_taints = []
        if platform == "aws":
            labels["eks.amazonaws.com/nodegroup"] = f"gpu-{gpu}"
            labels["eks.amazonaws.com/capacityType"] = "ON_DEMAND"
            labels["k8s.io/cloud-provider-aws"] = _hex(cluster, 32)
            labels["topology.k8s.aws/network-node-layer-1"] = f"nn-{_hex(cluster + '/l1', 17)}"
            labels["topology.k8s.aws/network-node-layer-2"] = f"nn-{_hex(cluster + '/l2', 17)}"
            labels["topology.k8s.aws/network-node-layer-3"] = f"nn-{_hex(cluster + '/l3/' + str(i // 4), 17)}"
            if it in AWS_EFA:
                capacity["vpc.amazonaws.com/efa"] = str(AWS_EFA[it])
        elif platform == "gcp":
            labels["cloud.google.com/gke-nodepool"] = f"gpu-{gpu}"
            labels["cloud.google.com/gke-accelerator"] = GKE_ACCELERATOR.get(gpu, f"nvidia-{gpu}")
            labels["cloud.google.com/machine-family"] = (it or "a3").split("-")[0]
            labels["cloud.google.com/gke-gpu"] = "true"
            labels["cloud.google.com/gce-topology-block"] = _hex(cluster + "/block", 16)
            labels["cloud.google.com/gce-topology-subblock"] = _hex(cluster + "/sb/" + str(i // 4), 16)
            node_taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
        elif platform == "azure":
            labels["kubernetes.azure.com/agentpool"] = "gpu"
            labels["agentpool"] = "gpu"
            labels["kubernetes.azure.com/accelerator"] = "nvidia"
            labels["kubernetes.azure.com/cluster"] = f"MC_burnin_{cluster}_eastus"
            labels["kubernetes.azure.com/ppg"] = f"ppg-{_hex(cluster, 8)}"
            labels["kubernetes.azure.com/mode"] = "user"
            capacity["rdma/rdma_shared_device_a"] = "63"
        elif platform == "oci":
            labels["oci.oraclecloud.com/fault-domain"] = f"FAULT-DOMAIN-{i % 3 + 1}"
            labels["node.info/compartment.name"] = "burnin"
            labels["oci.oraclecloud.com/host.rack_id"] = _hex(cluster + "/rack/" + str(i // 4), 12)
            # OKE's RDMA locality labels (hashes, oracle-quickstart/oci-hpc-oke using-rdma-network-locality...md):
            # one HPC island and network block per cluster, a local block of 4 nodes, the host.
            labels["oci.oraclecloud.com/rdma.hpc_island_id"] = _hex(cluster + "/island", 11)
            labels["oci.oraclecloud.com/rdma.network_block_id"] = _hex(cluster + "/nb", 11)
            labels["oci.oraclecloud.com/rdma.local_block_id"] = _hex(cluster + "/lb/" + str(i // 4), 11)
            labels["oci.oraclecloud.com/rdma.host_id"] = _hex(name + "/host", 11)
            if it in OCI_RDMA_VFS:
                capacity["nvidia.com/rdma-vf"] = str(OCI_RDMA_VFS[it])
        elif platform == "coreweave":
            labels["node.coreweave.cloud/type"] = it or f"{gpu}-8x"
            labels["ds.coreweave.com/nvlink.domain"] = _hex(cluster + "/nvl", 12)
            # Backend fabric labels (docs.coreweave.com infiniband-roce-labels): one fabric and superpod per cluster, a
            # leafgroup and a rack of 4 nodes.
            fabric = "%s-ib-%s" % (REGIONS["coreweave"][1].lower(), _hex(cluster + "/fabric", 4))
            labels["backend.coreweave.cloud/flavor"] = "infiniband"
            labels["backend.coreweave.cloud/fabric"] = fabric
            labels["ib.coreweave.cloud/fabric"] = fabric
            labels["ib.coreweave.cloud/superpod"] = str(int(_hex(cluster + "/su", 2), 16) % 8 + 1)
            labels["backend.coreweave.cloud/leafgroup"] = labels["ib.coreweave.cloud/leafgroup"] = str(i // 4 + 1)
            labels["node.coreweave.cloud/rack"] = str(100 + i // 4)
            capacity["rdma/ib"] = "1"
        elif platform == "nebius":
            # mk8s node group attached to a GPU cluster (the InfiniBand fabric); no RDMA extended resource.
            labels["nebius.com/node-group-id"] = f"mk8snodegroup-e00{_hex(cluster + '/ng', 17)}"
            labels["topology.nebius.com/gpu-cluster-id"] = f"computegpucluster-e00{_hex(cluster + '/gc', 17)}"
            # InfiniBand tiers (docs.nebius.com/kubernetes/gpu/topology-aware-scheduling): a spine per cluster, a
            # rack-level block of 4 nodes; tier-0 (multi-node NVLink) only on MNNVL nodes, a rack of 18.
            labels["topology.nebius.com/tier-2"] = _hex(cluster + "/t2", 12)
            labels["topology.nebius.com/tier-1"] = _hex(cluster + "/t1/" + str(i // 4), 12)
            if g["clique"]:
                labels["topology.nebius.com/tier-0"] = _hex(cluster + "/t0/" + str(i // 18), 12)
            if gpu in NEBIUS_PRESETS:
                labels["nebius.com/resource-preset"] = NEBIUS_PRESETS[gpu]
        elif platform == "onprem":
            # NVIDIA Network Operator: NFD sees the Mellanox NICs (PCI vendor 15b3); the RDMA shared device plugin
            # offers rdma_shared_device_a (rdmaHcaMax 63).
            labels["feature.node.kubernetes.io/pci-15b3.present"] = "true"
            labels["network.nvidia.com/operator.mofed.wait"] = "false"
            capacity["rdma/rdma_shared_device_a"] = "63"
        labels.update(extra_labels or {})
        capacity.update(extra_capacity or {})
        if taints is not None:
            node_taints = list(taints)
        spec = {}
        pid = _provider_id(platform, cluster, name, i, zone)
        if pid:
            spec["providerID"] = pid
        if node_taints:
            spec["taints"] = node_taints
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": labels,
                "annotations": {"node.alpha.kubernetes.io/ttl": "0", "gpufleet.test/note": "KWOK node: pods are scheduled, nothing runs"},
            },
            "spec": spec,
        }
        status = {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [
                {"type": t, "status": "False", "reason": r, "message": m, "lastHeartbeatTime": now, "lastTransitionTime": now}
                for t, r, m in (
                    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                )
            ]
            + [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": int(kubelet_port)}},
            "nodeInfo": {
                "machineID": _hex(name + "/machine", 32),
                "systemUUID": str(uuid.UUID(_hex(name + "/sys", 32))),
                "bootID": str(uuid.UUID(_hex(name + "/boot", 32))),
                "kernelVersion": "6.8.0-1024-nvidia" if g["arch"] == "arm64" else "6.1.0-31-cloud-amd64",
                "osImage": "Ubuntu 22.04.5 LTS",
                "containerRuntimeVersion": "containerd://1.7.27",
                "kubeletVersion": kubelet_version,
                "kubeProxyVersion": kubelet_version,
                "operatingSystem": "linux",
                "architecture": g["arch"],
            },
        }
        out.append((node, status))
    return out


# The CPU instance type of the system node pool every managed cluster has (an on-prem cluster's control nodes).
SYSTEM_INSTANCE_TYPES = {
    "aws": "m7i.2xlarge",
    "gcp": "e2-standard-8",
    "azure": "Standard_D8s_v5",
    "oci": "VM.Standard.E5.Flex",
    "coreweave": "cd-gp-a192-genoa",
    "nebius": "cpu-d3",
}


def system_node(cluster, platform, kubelet_port=10250, kubelet_version="v1.34.4"):
    """(node, status) of the cluster's one CPU node: the system (default) node pool of a managed cluster, where pods
    that ask for no GPU go (an MPI launcher on GKE, whose GPU nodes carry the nvidia.com/gpu taint)."""
    name = f"{cluster}-system-0"
    region, zone = REGIONS.get(platform, (None, None))
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "gpufleet.test/fake-node": "true",
        "gpufleet.test/system-node": "true",
    }
    if SYSTEM_INSTANCE_TYPES.get(platform):
        labels["node.kubernetes.io/instance-type"] = SYSTEM_INSTANCE_TYPES[platform]
    if zone:
        labels["topology.kubernetes.io/region"] = region
        labels["topology.kubernetes.io/zone"] = zone
    spec = {}
    pid = _provider_id(platform, cluster, name, 99, zone)
    if pid:
        spec["providerID"] = pid
    capacity = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": {"gpufleet.test/note": "KWOK node: the system pool's CPU node"}},
        "spec": spec,
    }
    status = {
        "capacity": capacity,
        "allocatable": dict(capacity),
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            }
        ],
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": int(kubelet_port)}},
        "nodeInfo": {
            "kubeletVersion": kubelet_version,
            "kubeProxyVersion": kubelet_version,
            "operatingSystem": "linux",
            "architecture": "amd64",
            "containerRuntimeVersion": "containerd://1.7.27",
            "osImage": "Ubuntu 22.04.5 LTS",
            "kernelVersion": "6.1.0-31-cloud-amd64",
            "machineID": _hex(name + "/machine", 32),
            "systemUUID": str(uuid.UUID(_hex(name + "/sys", 32))),
            "bootID": str(uuid.UUID(_hex(name + "/boot", 32))),
        },
    }
    return node, status
