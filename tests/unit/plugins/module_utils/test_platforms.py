# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Per-platform facts of the platform layer (templates/overrides/platforms/, _lib/platforms/), each with its source.

Short source names are those of docs/platforms/README.md ("Sources"): CEA =
GoogleCloudPlatform/container-engine-accelerators@992db812, CTK = GoogleCloudPlatform/cluster-toolkit@10470803,
ADT = aws-samples/awsome-distributed-training@7217859f, OFI = aws/aws-ofi-nccl@2daf7d30, AIA =
Azure/ai-infrastructure-on-azure@a01b0731, ARI = Azure/aks-rdma-infiniband@700dabb4, OKE =
oracle-quickstart/oci-hpc-oke@61d210ac, CW = coreweave/nccl-tests@cb865533, NETOP = Mellanox/network-operator@b06827e0,
DRA = NVIDIA/k8s-dra-driver-gpu@22407113, AICR = NVIDIA/aicr.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shlex

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import dra

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import overrides

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import platform_catalog

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import templating
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.merge import matches_when
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload
from ansible_collections.gpufleet.burnin.plugins.module_utils.validate import GRAMMARS

TRAINERS = {
    "torch": {"script": "/workspace/smoke.py"},
    "mpi": {"binary": "/usr/local/bin/all_reduce_perf", "args": ["-b", "8", "-e", "8G"]},
    "exec": {"command": ["true"]},
}


def plan(platform, gpu, framework="torch", facts=None, **config):
    gpus = 4 if gpu.startswith("gb") else 8
    base = dict(
        entry_name="burnin", namespace="burnin", image="img", framework=framework, nodes=2, gpus_per_node=gpus, run_id="r1", trainer=TRAINERS[framework]
    )
    base.update(config)
    return plan_workload(base, dict({"platform": platform, "gpuArchitecture": gpu}, **(facts or {})))


def objects(result, kind):
    return [obj for obj in result["objects"] if obj["kind"] == kind]


def runtime(result):
    (obj,) = objects(result, "TrainingRuntime")
    return obj


def pod(result, job="node"):
    (replicated,) = [j for j in runtime(result)["spec"]["template"]["spec"]["replicatedJobs"] if j["name"] == job]
    return replicated["template"]["spec"]["template"]


def worker(result, job="node"):
    (container,) = [c for c in pod(result, job)["spec"]["containers"] if c["name"] == "node"]
    return container


def env(container):
    return dict((item["name"], item.get("value")) for item in container.get("env", []))


def limits(result):
    return worker(result).get("resources", {}).get("limits", {})


def trainjob(result):
    (obj,) = objects(result, "TrainJob")
    return obj


def mpi_x(result):
    """The NAME=VALUE pairs mpirun passes with -x (the last one wins, as for Open MPI)."""
    args = trainjob(result)["spec"]["trainer"]["args"]
    if trainjob(result)["spec"]["trainer"]["command"] == ["/bin/bash", "-c"]:
        args = shlex.split(args[0].split("\n")[-1])
    pairs = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "-x"]
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)


def node(instance_type=None, allocatable=None, labels=None, gpus=8):
    meta_labels = dict(labels or {})
    if instance_type:
        meta_labels["node.kubernetes.io/instance-type"] = instance_type
    return {
        "metadata": {"name": "n", "labels": meta_labels},
        "status": {"allocatable": dict({"nvidia.com/gpu": str(gpus), "cpu": "192"}, **(allocatable or {}))},
    }


# --- AWS --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "gpu, instance_type, efa",
    [
        # ADT instance-profiles.conf: p5 and p5e 32 EFA, p5en 16, p6-b200 8; ADT nccl-tests-gb200.yaml: p6e has 4.
        ("h100", "p5.48xlarge", 32),
        ("h200", "p5en.48xlarge", 16),
        ("b200", "p6-b200.48xlarge", 8),
        ("gb200", "p6e-gb200.36xlarge", 4),
    ],
)
def test_aws_default_instance_types_and_efa_counts(gpu, instance_type, efa):
    result = plan("aws", gpu)
    assert result["instance_type"] == instance_type and result["platform_data"]["instance_type_source"] == "default"
    assert limits(result)["vpc.amazonaws.com/efa"] == efa and worker(result)["resources"]["requests"]["vpc.amazonaws.com/efa"] == efa
    assert isinstance(limits(result)["vpc.amazonaws.com/efa"], int)


def test_aws_p5e_is_finer_than_the_gpu():
    # ADT instance-profiles.conf: p5e.48xlarge (H200) has 32 EFA devices, p5en.48xlarge (H200) 16.
    assert limits(plan("aws", "h200", instance_type="p5e.48xlarge"))["vpc.amazonaws.com/efa"] == 32
    assert limits(plan("aws", "h200", instance_type="p5en.48xlarge"))["vpc.amazonaws.com/efa"] == 16


def test_aws_efa_pods_lock_memory_pin_libfabric_and_keep_the_ofi_plugin():
    # AICR EKS runtime: IPC_LOCK; ADT/AICR: FI_PROVIDER=efa (OFI doc/efa-env-var.md: harmless). The OFI plugin stays
    # (README deviation 5): no /opt/amazon removal on EFA shapes.
    for framework in ("torch", "mpi"):
        result = plan("aws", "h100", framework)
        assert worker(result)["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
        assert env(worker(result))["FI_PROVIDER"] == "efa"
        assert "rm -rf /opt/amazon" not in json.dumps(trainjob(result))
    assert mpi_x(plan("aws", "h100", "mpi"))["FI_PROVIDER"] == "efa"
    # OFI doc: FI_EFA_FORK_SAFE / FI_EFA_USE_DEVICE_RDMA are not needed any more.
    assert not set(env(worker(plan("aws", "h100")))) & {"FI_EFA_FORK_SAFE", "FI_EFA_USE_DEVICE_RDMA", "NCCL_NET_PLUGIN"}


def test_aws_efa_discovered_from_node_allocatable_beats_the_table():
    # AICR reads vpc.amazonaws.com/efa from the node's allocatable instead of a table.
    nodes = [node("p5.48xlarge", {"vpc.amazonaws.com/efa": "16"}), node("p5.48xlarge", {"vpc.amazonaws.com/efa": "32"})]
    result = plan("aws", "h100", cluster_nodes=nodes)
    assert limits(result)["vpc.amazonaws.com/efa"] == 16  # fits every node
    assert result["platform_data"]["nic_source"] == "nodes" and result["platform_data"]["instance_type_source"] == "nodes"
    assert limits(plan("aws", "h100", cluster_nodes=nodes, efa_per_node=8))["vpc.amazonaws.com/efa"] == 8  # given wins
    # 0 takes even the seed's T9 request back
    assert "vpc.amazonaws.com/efa" not in limits(plan("aws", "h100", efa_per_node=0))


def test_aws_hugepages_only_when_asked():
    # ADT p5 worker: hugepages-2Mi 5120Mi; not requested by default (Pending on nodes without huge pages).
    assert "hugepages-2Mi" not in limits(plan("aws", "h100"))
    assert limits(plan("aws", "h100", platform_vars={"aws_hugepages_2mi": "5120Mi"}))["hugepages-2Mi"] == "5120Mi"


def test_aws_gb300_roce_through_dra_without_efa():
    # AICR roce/eks/runtime-net.yaml@30dabb46: DeviceClass roce.networking.k8s.aws, NCCL_NET_PLUGIN=none,
    # NCCL_IB_HCA=rocep.
    result = plan("aws", "gb300", "mpi")
    assert "vpc.amazonaws.com/efa" not in limits(result)
    (claim_template,) = objects(result, "ResourceClaimTemplate")
    assert claim_template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "roce.networking.k8s.aws"
    assert env(worker(result))["NCCL_IB_HCA"] == "rocep"
    assert mpi_x(result)["NCCL_IB_HCA"] == "rocep" and mpi_x(result)["NCCL_NET_PLUGIN"] == "none"


# --- GCP --------------------------------------------------------------------------------------------------------


def test_gcp_a3_mega_tcpxo_daemon_is_a_native_sidecar():
    # CEA gpudirect-tcpxo/nccl-test-latest.yaml and best-practice.md (native sidecar, GKE >= 1.29); README Jan 2026.
    result = plan("gcp", "h100", "mpi")
    assert result["instance_type"] == "a3-megagpu-8g"
    (daemon,) = pod(result)["spec"]["initContainers"]
    assert daemon["name"] == "tcpxo-daemon" and daemon["restartPolicy"] == "Always"
    assert daemon["image"] == "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21"
    assert daemon["securityContext"]["capabilities"]["add"] == ["NET_ADMIN", "NET_BIND_SERVICE"]
    assert "--num_hops=2" in daemon["args"][0] and "--num_nics" not in daemon["args"][0]  # retired Nov 2025
    mounts = dict((m["name"], m["mountPath"]) for m in daemon["volumeMounts"])
    assert mounts == {"nvidia-lib64": "/usr/local/nvidia/lib64", "sys": "/hostsysfs", "proc-sys": "/hostprocsysfs"}
    annotations = pod(result)["metadata"]["annotations"]
    assert annotations["networking.gke.io/default-interface"] == "eth0"
    assert json.loads(annotations["networking.gke.io/interfaces"]) == [{"interfaceName": "eth0", "network": "default"}] + [
        {"interfaceName": "eth%d" % n, "network": "vpc%d" % n} for n in range(1, 9)
    ]
    devices = [d["path"] for d in templating.load_yaml(annotations["devices.gke.io/container.tcpxo-daemon"], "annotation")]
    assert devices == ["/dev/nvidia%d" % n for n in range(8)] + ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/dmabuf_import_helper"]
    volumes = dict((v["name"], v["hostPath"]["path"]) for v in pod(result)["spec"]["volumes"] if "hostPath" in v)
    assert volumes == {"nvidia-lib64": "/home/kubernetes/bin/nvidia/lib64", "sys": "/sys", "proc-sys": "/proc/sys", "aperture-devices": "/dev/aperture_devices"}
    assert pod(result)["spec"]["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}
    # The TCPXO profile reaches the workers and the MPI ranks, NVLSTREE chunk size included (the guest-config
    # checker aborts without it since Aug 2025).
    assert env(worker(result))["NCCL_NVLSTREE_MAX_CHUNKSIZE"] == "131072"
    assert mpi_x(result)["NCCL_FASTRAK_IFNAME"] == "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"
    assert "securityContext" not in worker(plan("gcp", "h100"))  # CEA's TCPXO sample adds no capability
    tolerations = pod(result)["spec"]["tolerations"]
    assert tolerations == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]


def test_gcp_a3_high_tcpx_replaces_the_tcpxo_profile():
    # CEA gpudirect-tcpx/nccl-test-latest.yaml: tcpx-daemon with NET_ADMIN, eth1..eth4 on vpc1..vpc4, IPC_LOCK on the
    # workload, /run/tcpx seen at /tmp; nccl-config.yaml run-nccl.sh env; CTK adds FORCE_ACK and NCHANNELS.
    result = plan("gcp", "h100", instance_type="a3-highgpu-8g", platform_vars={"gcp_tcpx_networks": ["n1", "n2", "n3", "n4"]})
    (daemon,) = pod(result)["spec"]["initContainers"]
    assert daemon["name"] == "tcpx-daemon" and daemon["restartPolicy"] == "Always"
    assert daemon["securityContext"]["capabilities"]["add"] == ["NET_ADMIN"]
    assert "--gpu_nic_preset a3vm" in daemon["args"][0]
    interfaces = json.loads(pod(result)["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert [i["network"] for i in interfaces] == ["default", "n1", "n2", "n3", "n4"]
    assert "devices.gke.io/container.tcpx-daemon" in pod(result)["metadata"]["annotations"]
    assert worker(result)["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert {"name": "tcpx-socket", "mountPath": "/tmp"} in worker(result)["volumeMounts"]
    trainer_env = env(trainjob(result)["spec"]["trainer"])
    assert trainer_env["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] == "eth1,eth2,eth3,eth4" and trainer_env["NCCL_BUFFSIZE"] == "4194304"
    assert not [name for name in trainer_env if "FASTRAK" in name]  # the seed's T10 TCPXO profile is replaced
    assert env(worker(result))["NCCL_GPUDIRECTTCPX_FORCE_ACK"] == "0"
    assert pod(result)["spec"]["nodeSelector"]["cloud.google.com/gke-accelerator"] == "nvidia-h100-80gb"


@pytest.mark.parametrize(
    "gpu, machine, tuner",
    [
        ("h200", "a3-ultragpu-8g", "/usr/local/gib/configs/tuner_config_a3u.txtpb"),
        ("b200", "a4-highgpu-8g", "/usr/local/gib/configs/tuner_config_a4.txtpb"),
    ],
)
def test_gcp_gib_rdma_over_eight_networks(gpu, machine, tuner):
    # CEA gpudirect-rdma/nccl-test.yaml, nccl-test-a4.yaml: eth2..eth9 on rdma-0..7, /home/kubernetes/bin/{nvidia,gib};
    # set_nccl_env.sh values (Google's Ray runtime-env excerpt; docs/platforms/gcp.md, GCP-GIB).
    result = plan("gcp", gpu, "mpi")
    assert result["instance_type"] == machine
    interfaces = json.loads(pod(result)["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert interfaces[1:] == [{"interfaceName": "eth%d" % (n + 2), "network": "rdma-%d" % n} for n in range(8)]
    values = env(worker(result))
    assert (values["NCCL_NET"], values["NCCL_IB_TC"], values["NCCL_IB_FIFO_TC"], values["NCCL_TUNER_CONFIG_PATH"]) == ("gIB", "52", "84", tuner)
    assert mpi_x(result)["NCCL_TUNER_CONFIG_PATH"] == tuner
    paths = dict((v["name"], v["hostPath"]["path"]) for v in pod(result)["spec"]["volumes"] if "hostPath" in v)
    assert paths == {"library-dir-host": "/home/kubernetes/bin/nvidia", "gib": "/home/kubernetes/bin/gib"}
    assert "securityContext" not in worker(plan("gcp", gpu))  # none in Google's samples


def test_gcp_gib_with_managed_dranet_and_a_gvnic():
    # CEA nccl-test-managed-rdma.yaml: ResourceClaimTemplate of 8 mrdma.google.com, ExactCount, no interfaces annotation.
    result = plan("gcp", "h200", platform_vars={"gcp_rdma_mode": "dranet"})
    (claim_template,) = objects(result, "ResourceClaimTemplate")
    assert claim_template["metadata"]["name"] == "burnin-mrdma"
    assert claim_template["spec"]["spec"]["devices"]["requests"] == [
        {"name": "req-mrdma", "exactly": {"deviceClassName": "mrdma.google.com", "allocationMode": "ExactCount", "count": 8}}
    ]
    assert pod(result)["spec"]["resourceClaims"] == [{"name": "rdma", "resourceClaimTemplateName": "burnin-mrdma"}]
    assert worker(result)["resources"]["claims"] == [{"name": "rdma"}]
    assert "annotations" not in pod(result).get("metadata", {})
    # AICR's A4X sample: eth1 = gvnic-1
    interfaces = json.loads(pod(plan("gcp", "h200", platform_vars={"gcp_gvnic_network": "gvnic-1"}))["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert interfaces[1] == {"interfaceName": "eth1", "network": "gvnic-1"} and interfaces[2]["interfaceName"] == "eth2"


def test_gcp_a4x_keeps_the_seed_networks_and_adds_gib():
    # Seed T11 (README deviation 7) keeps eth2..eth5 on rdma-0..3; AICR gb200/gke runtime adds IPC_LOCK and gIB.
    result = plan("gcp", "gb200")
    assert result["instance_type"] == "a4x-highgpu-4g"
    annotations = pod(result)["metadata"]["annotations"]
    assert [i["network"] for i in json.loads(annotations["networking.gke.io/interfaces"])] == ["default", "rdma-0", "rdma-1", "rdma-2", "rdma-3"]
    assert limits(result)["networking.gke.io.networks/rdma-0"] == "1"
    values = env(worker(result))
    assert values["NCCL_NET"] == "gIB" and values["NCCL_NET_GDR_LEVEL"] == "PIX"  # set_nccl_env.sh over T11's 5
    assert worker(result)["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert [t["key"] for t in pod(result)["spec"]["tolerations"]] == ["kubernetes.io/arch", "nvidia.com/gpu"]  # T11
    assert result["topology_key"] == "cloud.google.com/gce-topology-block"
    # other network names re-point the interfaces and the per-network requests
    renamed = plan("gcp", "gb200", platform_vars={"gcp_rdma_networks": ["a4x-0", "a4x-1", "a4x-2", "a4x-3"]})
    interfaces = json.loads(pod(renamed)["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert [i["network"] for i in interfaces] == ["default", "a4x-0", "a4x-1", "a4x-2", "a4x-3"]
    assert sorted(k for k in limits(renamed) if k.startswith("networking.gke.io")) == ["networking.gke.io.networks/a4x-%d" % n for n in range(4)]


def test_gcp_a4x_max_is_dranet_only():
    # CEA nccl-test-a4x-max.yaml, AICR gke-a4x-max-networking.md: no multi-networking, mrdma x 8 + ComputeDomain,
    # IPC_LOCK, nodeSelector gke.networks.io/accelerator-network-profile: auto.
    result = plan("gcp", "gb300")
    assert result["instance_type"] == "a4x-maxgpu-4g-metal"
    assert pod(result)["metadata"].get("annotations", {}) == {}
    assert not [k for k in limits(result) if k.startswith("networking.gke.io")]
    assert [c["name"] for c in pod(result)["spec"]["resourceClaims"]] == ["compute-domain", "rdma"]
    assert worker(result)["resources"]["claims"] == [{"name": "compute-domain"}, {"name": "rdma"}]
    assert pod(result)["spec"]["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-gb300", "gke.networks.io/accelerator-network-profile": "auto"}
    assert [o["kind"] for o in result["objects"]] == ["ComputeDomain", "ResourceClaimTemplate", "TrainingRuntime", "TrainJob"]


# --- Azure ------------------------------------------------------------------------------------------------------


def test_azure_nd_h100_v5_infiniband_sharp_and_topology():
    # AIA aks/NCCL/helm/nccl-test/values.yaml: rdma/ib = 8, IPC_LOCK, NDv5 topology, SHARP on.
    result = plan("azure", "h100")
    assert result["instance_type"] == "Standard_ND96isr_H100_v5"
    assert limits(result)["rdma/ib"] == 8 and "nvidia.com/mlnxnics" not in limits(result)
    assert worker(result)["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    values = env(worker(result))
    assert values["NCCL_TOPO_FILE"] == "/etc/topology/ndv5-topo.xml" and values["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert (values["NCCL_COLLNET_ENABLE"], values["SHARP_COLL_ENABLE_SAT"], values["NCCL_MIN_NCHANNELS"]) == ("1", "1", "32")
    # ARI mounts the topology from a ConfigMap at /opt/nvidia-topology/topo.xml
    mounted = plan("azure", "h200", "mpi", platform_vars={"azure_topology_configmap": "ndv5-topo", "azure_sharp": False})
    assert env(worker(mounted))["NCCL_TOPO_FILE"] == "/opt/nvidia-topology/topo.xml"
    assert {"name": "nvidia-topology", "configMap": {"name": "ndv5-topo"}} in pod(mounted)["spec"]["volumes"]
    assert mpi_x(mounted)["NCCL_COLLNET_ENABLE"] == "0"


def test_azure_one_nic_resource_per_pod():
    # Seed T12 keeps nvidia.com/mlnxnics when mlnx_per_node > 0 (exact seed); nodes offering rdma/shared_ib
    # (AIA rdma-shared-device-plugin, rdmaHcaMax 63: request 1) replace it.
    seeded = plan("azure", "gb200", mlnx_per_node=8)
    assert limits(seeded)["nvidia.com/mlnxnics"] == 8 and "rdma/ib" not in limits(seeded)
    nodes = [node("Standard_ND128isr_NDR_GB200_v6", {"rdma/shared_ib": "63"}, gpus=4)]
    found = plan("azure", "gb200", mlnx_per_node=8, cluster_nodes=nodes)
    assert limits(found)["rdma/shared_ib"] == 1 and "nvidia.com/mlnxnics" not in limits(found)
    table = plan("azure", "gb200")  # AIA values-gb300.yaml: rdma/ib = 4 on the 4-NIC v6 sizes
    assert table["instance_type"] == "Standard_ND128isr_NDR_GB200_v6" and limits(table)["rdma/ib"] == 4
    assert "rdma/ib" not in limits(plan("azure", "gb200", rdma_per_node=0))


def test_azure_nd_v6_env():
    # AIA slurm/NCCL/configs/graceblackwell.conf: IB SL 1, dma-buf, C2C; topology key ppg (seed T4).
    result = plan("azure", "gb300")
    values = env(worker(result))
    assert (values["NCCL_IB_SL"], values["NCCL_DMABUF_ENABLE"], values["NCCL_NET_GDR_C2C"]) == ("1", "1", "1")
    assert "NCCL_TOPO_FILE" not in values  # no ndv6 topology file exists
    assert result["topology_key"] == "kubernetes.azure.com/ppg"


# --- OCI --------------------------------------------------------------------------------------------------------


def test_oci_h100_host_network_roce():
    # OKE recommended-nccl-rccl-parameters-by-shape.md (16 HCAs, GID 3, TC 41, SL 0, TIMEOUT 22) and
    # using-rdma-network-interfaces-in-manifests.md (hostNetwork, /dev/infiniband, privileged + IPC_LOCK).
    result = plan("oci", "h100")
    assert result["instance_type"] == "BM.GPU.H100.8"
    spec = pod(result)["spec"]
    assert spec["hostNetwork"] is True and spec["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert worker(result)["securityContext"] == {"privileged": True, "capabilities": {"add": ["IPC_LOCK"]}}
    assert {"name": "devinf", "hostPath": {"path": "/dev/infiniband"}} in spec["volumes"]
    values = env(worker(result))
    assert values["NCCL_IB_HCA"].startswith("=mlx5_0,") and len(values["NCCL_IB_HCA"].split(",")) == 16
    assert (values["NCCL_IB_GID_INDEX"], values["NCCL_IB_TC"], values["NCCL_IB_SL"], values["NCCL_IB_TIMEOUT"]) == ("3", "41", "0", "22")
    assert "NCCL_IB_QPS_PER_CONNECTION" not in values  # not set for H100 (NCCL's default 1)
    assert not objects(result, "ConfigMap")


def test_oci_mpi_on_the_host_network_moves_sshd():
    # OKE: MPI ssh on port 2222 because of hostNetwork.
    result = plan("oci", "h200", "mpi")
    (config_map,) = objects(result, "ConfigMap")
    assert config_map["metadata"]["name"] == "burnin-ssh-port" and config_map["data"]["sshd.conf"] == "Port 2222\n"
    assert worker(result)["readinessProbe"]["tcpSocket"]["port"] == 2222
    assert worker(result)["readinessProbe"]["initialDelaySeconds"] == 5  # the runtime's, kept
    assert {"name": "ssh-port", "mountPath": "/etc/ssh/ssh_config.d/gpufleet-burnin-port.conf", "subPath": "ssh.conf", "readOnly": True} in worker(
        result, "launcher"
    )["volumeMounts"]
    assert "hostNetwork" not in pod(result, "launcher")["spec"]
    assert len(mpi_x(result)["NCCL_IB_HCA"].split(",")) == 8
    assert result["objects"][0]["kind"] == "ConfigMap"  # created before the runtime


@pytest.mark.parametrize("gpu, vfs", [("h100", 16), ("h200", 8), ("b200", 8)])
def test_oci_sriov_vfs(gpu, vfs):
    # OKE using-rdma-network-interfaces-in-manifests.md: nvidia.com/rdma-vf 16 on dual-port shapes, 8 on single-port
    # ones; one rdma-vf attachment per VF; NCCL_IB_HCA=mlx5 with VFs.
    result = plan("oci", gpu, platform_vars={"oci_network_mode": "sriov"})
    assert limits(result)["nvidia.com/rdma-vf"] == vfs
    assert pod(result)["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == ",".join(["default/rdma-vf"] * vfs)
    assert env(worker(result))["NCCL_IB_HCA"] == "mlx5"
    assert "hostNetwork" not in pod(result)["spec"]


@pytest.mark.parametrize("gpu", ["h100", "b300"])
def test_oci_sriov_mpirun_exports_the_vf_hca_once(gpu):
    # With VFs the shape's exact HCA list (host device names) must not reach the ranks: one -x NCCL_IB_HCA=mlx5
    # (mpirun keeps the last -x of a name, so a second one would win over the env).
    result = plan("oci", gpu, "mpi", platform_vars={"oci_network_mode": "sriov"})
    args = trainjob(result)["spec"]["trainer"]["command"] + trainjob(result)["spec"]["trainer"].get("args", [])
    exports = [value for flag, value in zip(args, args[1:]) if flag == "-x" and value.startswith("NCCL_IB_HCA=")]
    assert exports == ["NCCL_IB_HCA=mlx5"]
    assert env(worker(result))["NCCL_IB_HCA"] == "mlx5"
    assert mpi_x(result)["NCCL_IB_GID_INDEX"] == "3"  # the shape's other parameters stay


def test_oci_gb200_shapes():
    # OKE table: GB200.4 uses NCCL_NET_PLUGIN=sys and 4 HCAs; GB200-v3.4 uses none, QPS 1 and C2C.
    values = env(worker(plan("oci", "gb200")))
    assert (values["NCCL_NET_PLUGIN"], values["NCCL_IB_HCA"]) == ("sys", "mlx5_0,mlx5_1,mlx5_3,mlx5_4")
    v3 = env(worker(plan("oci", "gb200", instance_type="BM.GPU.GB200-v3.4")))
    assert (v3["NCCL_NET_PLUGIN"], v3["NCCL_IB_QPS_PER_CONNECTION"], v3["NCCL_NET_GDR_C2C"]) == ("none", "1", "1")
    gb300 = env(worker(plan("oci", "gb300")))
    assert (gb300["NCCL_BUFFSIZE"], gb300["NCCL_IB_QPS_PER_CONNECTION"], gb300["NCCL_DMABUF_ENABLE"]) == ("16777216", "4", "1")
    assert plan("oci", "gb300")["topology_key"] == "nvidia.com/gpu.clique"


# --- CoreWeave, Nebius, on-prem ---------------------------------------------------------------------------------


def test_coreweave_infiniband():
    # CW h100 MPIJob and docs: rdma/ib: 1 "used as a boolean", NCCL_IB_HCA=ibp, UCX on ibp0..7, no net plugin.
    result = plan("coreweave", "h100", "mpi")
    assert limits(result)["rdma/ib"] == 1 and result["instance_type"] == "gd-8xh100ib-i128"
    values = env(worker(result))
    assert (values["NCCL_IB_HCA"], values["NCCL_NET_PLUGIN"], values["NCCL_COLLNET_ENABLE"]) == ("ibp", "none", "0")
    assert mpi_x(result)["UCX_NET_DEVICES"] == ",".join("ibp%d:1" % n for n in range(8))


def test_coreweave_gb200_and_gb300():
    # CW gb200-nvl72 MPIJob: IMEX channel 0 pre-provisioned, MPI over TCP on eth0; nvlink.domain label.
    gb200 = plan("coreweave", "gb200")
    values = env(worker(gb200))
    assert (values["NVIDIA_IMEX_CHANNELS"], values["UCX_NET_DEVICES"], values["NCCL_SHM_DISABLE"]) == ("0", "eth0", "0")
    assert gb200["topology_key"] == "ds.coreweave.com/nvlink.domain"
    # CW gb300-roce-nvl72 MPIJob (DRA): RoCE env, multus networks when named, no rdma/ib.
    gb300 = plan("coreweave", "gb300", platform_vars={"coreweave_gb300_networks": ["cw-multus/ibs0p0-macvlan"]})
    assert env(worker(gb300))["NCCL_IB_TC"] == "96" and "rdma/ib" not in limits(gb300)
    assert pod(gb300)["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == "cw-multus/ibs0p0-macvlan"


def test_nebius_infiniband():
    # skypilot examples/nebius_infiniband (third party): IPC_LOCK, NCCL_IB_HCA=mlx5, no RDMA resource;
    # topology.nebius.com/gpu-cluster-id.
    result = plan("nebius", "h100")
    assert worker(result)["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert env(worker(result))["NCCL_IB_HCA"] == "mlx5" and env(worker(result))["UCX_NET_DEVICES"].count("mlx5_") == 8
    assert set(limits(result)) == {"nvidia.com/gpu"}
    assert result["topology_key"] == "topology.nebius.com/gpu-cluster-id" and result["instance_type"] is None


def test_onprem_network_operator():
    # NETOP nicclusterpolicy_cr.yaml: rdmaSharedDevicePlugin rdma_shared_device_a, request 1, IPC_LOCK;
    # hostdevice-network-pod1.yml: nvidia.com/hostdev = NICs.
    result = plan("onprem", "h100", platform_vars={"onprem_networks": ["rdma-net-ipam"]})
    assert limits(result)["rdma/rdma_shared_device_a"] == 1
    assert worker(result)["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert pod(result)["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == "rdma-net-ipam"
    hostdev = plan("onprem", "h100", cluster_nodes=[node(None, {"nvidia.com/hostdev": "4"})])
    assert limits(hostdev)["nvidia.com/hostdev"] == 4 and "rdma/rdma_shared_device_a" not in limits(hostdev)
    assert plan("onprem", "gb200")["topology_key"] == "nvidia.com/gpu.clique"


def test_platforms_outside_the_layer_keep_the_seed():
    for platform in ("togetherai", "mistral", "other"):
        for gpu in ("h100", "gb300"):
            full = plan(platform, gpu, mlnx_per_node=8)
            seed = plan(platform, gpu, mlnx_per_node=8, extended_platforms=False)
            assert full["objects"] == seed["objects"]


SEED = "templates/overrides/workloadrun.yaml"


@pytest.mark.parametrize("platform", ["aws", "gcp", "azure", "oci", "togetherai", "mistral", "other"])
def test_platform_option_keeps_only_what_can_match_that_platform(platform):
    config = dict(entry_name="burnin", nodes=2, gpus_per_node=8, mlnx_per_node=8, framework="mpi")
    every, every_sources = overrides.build_overrides_with_sources(config)
    some, some_sources = overrides.build_overrides_with_sources(dict(config, platform=platform))
    seed = overrides.build_overrides(dict(config, extended_platforms=False))

    def admits(override):
        condition = override["when"].get("platform") or {}
        return condition.get("equals") in (None, platform) and platform in condition.get("in", [platform]) and platform not in condition.get("notIn", [])

    # The seed's entries that admit the platform, first and in the seed's order; then that platform's file alone.
    wanted = [(o, src) for o, src in zip(every, every_sources) if (src == SEED and admits(o)) or src.endswith("/%s.yaml" % platform)]
    assert list(zip(some, some_sources)) == wanted
    kept_seed = [o for o, src in zip(some, some_sources) if src == SEED]
    assert some[: len(kept_seed)] == kept_seed == [o for o in seed if admits(o)]
    # Both sides: the seed has entries for other platforms (left out) and entries without a platform (kept).
    assert len(kept_seed) < len(seed)
    assert any("platform" not in o["when"] for o in kept_seed)
    assert all(o["when"]["platform"]["equals"] == platform for o in some[len(kept_seed) :])


def test_platform_option_unset_keeps_the_whole_seed():
    # Parity: without the option every seed entry is returned, whatever its platform (the original's list).
    config = dict(entry_name="burnin", nodes=2, gpus_per_node=8, mlnx_per_node=8, framework="mpi", extended_platforms=False)
    seed = overrides.build_overrides(config)
    named = sorted({o["when"]["platform"]["equals"] for o in seed if "equals" in o["when"].get("platform", {})})
    assert {"aws", "gcp", "azure"} <= set(named)
    assert len(overrides.build_overrides(dict(config, platform="aws"))) < len(seed)


def _match_values(entries):
    """Every value the entries' conditions name, per field, plus one they never name."""
    values = {"platform": {"other"}, "gpuArchitecture": {"unknown"}, "instanceType": {None, "other.type"}}
    for entry in entries:
        for field, condition in entry["when"].items():
            if field in values:
                for key in ("equals", "in", "notIn"):
                    found = condition.get(key)
                    values[field].update(found if isinstance(found, list) else [found] if found else [])
    return values


@pytest.mark.parametrize("framework", ["torch", "mpi", "exec"])
def test_platform_option_never_changes_what_matches(framework):
    """Metamorphic: for every platform, GPU and instance type the entries name (and one each they do not), the
    entries matching a cluster are the same from the list rendered for its platform as from the whole list."""
    config = dict(entry_name="burnin", nodes=2, gpus_per_node=8, mlnx_per_node=8, framework=framework)
    every = overrides.build_overrides(config)
    values = _match_values(every)
    checked = 0
    for platform in sorted(values["platform"]):
        some = overrides.build_overrides(dict(config, platform=platform))
        for gpu in sorted(values["gpuArchitecture"]):
            for instance_type in sorted(values["instanceType"], key=str):
                facts = {"platform": platform, "gpuArchitecture": gpu, "instanceType": instance_type, "framework": framework}
                assert [o for o in some if matches_when(o["when"], facts)] == [o for o in every if matches_when(o["when"], facts)], facts
                checked += 1
    assert checked > 500


@pytest.mark.parametrize(
    "condition, admitted",
    [
        (None, True),
        ({"equals": "aws"}, True),
        ({"equals": "gcp"}, False),
        ({"equals": ""}, True),
        ({"in": ["gcp", "aws"]}, True),
        ({"in": ["gcp"]}, False),
        ({"notIn": ["aws"]}, False),
        ({"notIn": ["gcp"]}, True),
        ({"equals": "aws", "notIn": ["aws"]}, False),
    ],
)
def test_admits_platform_reads_every_operator(condition, admitted):
    when = {"gpuArchitecture": {"equals": "h100"}}
    if condition is not None:
        when["platform"] = condition
    assert overrides.admits_platform({"when": when}, "aws") is admitted


def test_platform_option_is_checked():
    with pytest.raises(ConfigError, match="platform: must be a platform name"):
        overrides.build_overrides(dict(entry_name="burnin", gpus_per_node=8, platform="AWS cloud"))


def test_extended_platforms_false_is_the_seed_behaviour():
    # aws h100 with the platform layer off: exactly the seed's T9 (README deviation 5 pinned in test_workload).
    result = plan("aws", "h100", extended_platforms=False)
    assert limits(result) == {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": 32}
    assert "securityContext" not in worker(result) and [m["source"] for m in result["matched"]] == ["templates/overrides/workloadrun.yaml"]


# --- DRA ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "server, explicit, expected",
    [
        # https://kubernetes.io/blog/2025/09/01/kubernetes-v1-34-dra-updates (1.34: v1 GA, default); 1.33 adds v1beta2, 1.32 has v1beta1.
        ("v1.34.1", None, "resource.k8s.io/v1"),
        ("1.35", None, "resource.k8s.io/v1"),
        ("v1.34.3-gke.1318000", None, "resource.k8s.io/v1"),
        ("v1.33.2-eks-931bdca", None, "resource.k8s.io/v1beta2"),
        ("v1.32.0", None, "resource.k8s.io/v1beta1"),
        ("v1.31.4", None, dra.DRA_UNAVAILABLE),
        (None, None, "resource.k8s.io/v1"),
        ("v1.31.4", "v1beta1", "resource.k8s.io/v1beta1"),
        ("v1.34.0", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta2"),
    ],
)
def test_resource_api_version(server, explicit, expected):
    assert dra.resource_api_version(explicit, server) == expected


@pytest.mark.parametrize("server, explicit, field", [("1", None, "server_version"), ("latest", None, "server_version"), (None, "v1alpha3", "rct_api_version")])
def test_resource_api_version_errors(server, explicit, field):
    with pytest.raises(ConfigError, match="^%s: " % field):
        dra.resource_api_version(explicit, server)


def test_v1beta1_claim_templates_are_flat():
    # DRA vendor/k8s.io/api/resource/v1beta2/types.go and v1beta1: v1beta1 requests carry deviceClassName directly.
    result = plan("aws", "gb300", server_version="v1.32.4")
    (claim_template,) = objects(result, "ResourceClaimTemplate")
    assert claim_template["apiVersion"] == "resource.k8s.io/v1beta1"
    assert claim_template["spec"]["spec"]["devices"]["requests"] == [{"name": "roce", "deviceClassName": "roce.networking.k8s.aws", "count": 8}]
    gcp = plan("gcp", "gb300", server_version="v1.33.1")
    (mrdma,) = objects(gcp, "ResourceClaimTemplate")
    assert mrdma["apiVersion"] == "resource.k8s.io/v1beta2" and "exactly" in mrdma["spec"]["spec"]["devices"]["requests"][0]
    assert gcp["platform_data"]["rct_api_version"] == "resource.k8s.io/v1beta2"


def test_old_servers_fail_only_when_dra_is_needed():
    with pytest.raises(ConfigError, match=r"^server_version: Kubernetes v1\.31\.2 has no resource\.k8s\.io DRA API.*ComputeDomain"):
        plan("azure", "gb200", server_version="v1.31.2")
    assert plan("aws", "h100", server_version="v1.31.2")["objects"]  # no claims: fine
    assert objects(plan("aws", "gb300", server_version="v1.31.2", rct_api_version="v1beta1"), "ResourceClaimTemplate")
    with pytest.raises(ConfigError, match="^server_version: "):
        overrides.build_overrides(dict(entry_name="e", gpus_per_node=8, server_version="v1.30.0"))


@pytest.mark.parametrize(
    "version, expected",
    [
        # DRA pkg/featuregates: IMEXDaemonsWithDNSNames on by default from v25.8.0 -> numNodes 0; before, = node count.
        (None, 0),
        ("v25.8.0", 0),
        ("25.12.0", 0),
        ("v25.8.1-rc.1", 0),
        ("v25.3.2", 3),
        ("25.3.0", 3),
        ("v0.4.0", 0),  # kubernetes-sigs/dra-driver-nvidia-gpu numbering, after 25.12.0
    ],
)
def test_compute_domain_num_nodes(version, expected):
    assert dra.compute_domain_num_nodes(version, 3) == expected


def test_compute_domain_num_nodes_in_the_plan():
    (domain,) = objects(plan("aws", "gb200", nodes=3, dra_driver_version="v25.3.2"), "ComputeDomain")
    assert domain["spec"]["numNodes"] == 3
    (domain,) = objects(plan("aws", "gb200", nodes=3), "ComputeDomain")
    assert domain["spec"]["numNodes"] == 0
    with pytest.raises(ConfigError, match="^dra_driver_version: "):
        plan("aws", "gb200", dra_driver_version="latest")


# --- discovery, variables, catalogue --------------------------------------------------------------------------


def test_discover_node_resources():
    catalog = platform_catalog.load_platform_catalog()
    nodes = [
        node("p5en.48xlarge", {"vpc.amazonaws.com/efa": "16"}),
        node("p5en.48xlarge", {"vpc.amazonaws.com/efa": 16}),
        node("p5.48xlarge", {"vpc.amazonaws.com/efa": "32"}),
        {"metadata": {"labels": {"node.kubernetes.io/instance-type": "m5.large"}}, "status": {"allocatable": {"cpu": "2"}}},
    ]
    found = platform_catalog.discover_node_resources(nodes, "aws", catalog)
    assert found == {"gpu_nodes": 3, "instance_type": "p5en.48xlarge", "efa_per_node": 16, "rdma_resource": None, "rdma_per_node": None}
    cw = platform_catalog.discover_node_resources([node(None, {"rdma/ib": "1"}, {"node.coreweave.cloud/type": "gb200-4x"}, 4)], "coreweave", catalog)
    assert (cw["instance_type"], cw["rdma_resource"], cw["rdma_per_node"]) == ("gb200-4x", "rdma/ib", 1)
    azure = platform_catalog.discover_node_resources([node(None, {"rdma/ib": "8", "rdma/shared_ib": "63"})], "azure", catalog)
    assert (azure["rdma_resource"], azure["rdma_per_node"]) == ("rdma/ib", 8)  # catalogue order: exclusive first
    assert platform_catalog.discover_node_resources([], "aws", catalog)["instance_type"] is None
    with pytest.raises(ConfigError, match="^cluster_nodes: "):
        platform_catalog.discover_node_resources("nodes", "aws", catalog)


@pytest.mark.parametrize(
    "value, message",
    [
        ({"gcp_rdma_mode": "rdma"}, r"^platform_vars.gcp_rdma_mode: must be one of multinetwork, dranet"),
        ({"gcp_tcpx_networks": "vpc1"}, r"^platform_vars.gcp_tcpx_networks: must be a list of strings"),
        ({"oci_ssh_port": "2222"}, r"^platform_vars.oci_ssh_port: must be a int"),
        ({"azure_sharp": 1}, r"^platform_vars.azure_sharp: must be a bool"),
        ({"gcp_networks": []}, r"^platform_vars: unknown variable\(s\) gcp_networks; allowed: aws_hugepages_2mi, "),
        ("x", r"^platform_vars: must be a mapping"),
    ],
)
def test_platform_vars_are_checked(value, message):
    with pytest.raises(ConfigError, match=message):
        plan("gcp", "h100", platform_vars=value)


@pytest.mark.parametrize(
    "field, value", [("rdma_resource", "ib"), ("rdma_per_node", -1), ("efa_per_node", "4"), ("instance_type", ""), ("extended_platforms", "yes")]
)
def test_bad_platform_input_names_the_field(field, value):
    with pytest.raises(ConfigError, match="^%s: " % field):
        plan("aws", "h100", **{field: value})


def test_every_platform_has_data_a_template_docs_and_documented_variables():
    root = templating.COLLECTION_ROOT
    catalog = platform_catalog.load_platform_catalog()
    templates = sorted(name[: -len(".yaml")] for name in os.listdir(os.path.join(templating.TEMPLATES_DIR, "overrides", "platforms")))
    folders = sorted(
        name for name in os.listdir(os.path.join(templating.LIB_DIR, "platforms")) if os.path.isdir(os.path.join(templating.LIB_DIR, "platforms", name))
    )
    # Every folder is a catalogued platform; every platform-layer template has its folder; a folder without a template
    # is a platform whose entries are the seed's (its page says "seed only").
    assert sorted(catalog) == folders and set(templates) <= set(folders)
    seed_named = inputs._seed_platforms(templating.shared_library())  # pylint: disable=protected-access
    for platform in set(folders) - set(templates):
        assert platform in seed_named, platform
        assert "(seed only)" in open(os.path.join(root, "docs", "platforms", "%s.md" % platform)).read().split("\n")[0], platform
    # The option docs of platform_overrides and workload_plan (doc fragment gpufleet.burnin.render.overrides).
    options = open(os.path.join(root, "plugins", "doc_fragments", "render.py")).read().split("OVERRIDES = ")[1]
    # The README links docs/platforms/README.md, which links every platform's page.
    assert "](docs/platforms/README.md)" in open(os.path.join(root, "README.md")).read()
    index = open(os.path.join(root, "docs", "platforms", "README.md")).read()
    for platform, data in catalog.items():
        page = open(os.path.join(root, "docs", "platforms", "%s.md" % platform)).read()
        assert "](%s.md)" % platform in index
        for name in data["vars"]:
            assert name in page, (platform, name)
            assert name in options, name
        for shape in data["shapes"]:
            assert shape in page, (platform, shape)


def test_a_new_platform_is_data_and_a_template(tmp_path):
    # "A new platform is a new fragment plus one entry, not Python": add one in a copy of the library.
    import shutil

    shutil.copytree(templating.TEMPLATES_DIR, str(tmp_path / "templates"))
    shutil.copytree(templating.LIB_DIR, str(tmp_path / "_lib"))
    (tmp_path / "_lib" / "platforms" / "acme").mkdir()
    (tmp_path / "_lib" / "platforms" / "acme" / "platform.yaml").write_text(
        "shapes:\n  acme-8x: {gpu: h100, gpus: 8, default: true}\nvars:\n  acme_hca:\n    default: mlx5\n    description: HCA.\n"
    )
    (tmp_path / "templates" / "overrides" / "platforms" / "acme.yaml").write_text(
        "- when:\n    platform: {equals: acme}\n    instanceType: {equals: acme-8x}\n"
        "  jobTemplate: {spec: {workload: {trainJob: {trainer: {env: [{name: NCCL_IB_HCA, value: {{ platform_vars.acme_hca }}}]}}}}}\n"
    )
    library = templating.TemplateLibrary(str(tmp_path / "templates"), str(tmp_path / "_lib"))
    config = dict(entry_name="e", namespace="n", image="i", gpus_per_node=8, run_id="r", trainer=TRAINERS["torch"], platform_vars={"acme_hca": "mlx5_0"})
    result = plan_workload(config, {"platform": "acme", "gpuArchitecture": "h100"}, library)
    assert result["instance_type"] == "acme-8x"
    assert {"name": "NCCL_IB_HCA", "value": "mlx5_0"} in trainjob(result)["spec"]["trainer"]["env"]
    # an entry for another platform in acme.yaml is refused: plan_workload renders only the cluster's file
    (tmp_path / "templates" / "overrides" / "platforms" / "acme.yaml").write_text("- when: {platform: {equals: aws}}\n")
    with pytest.raises(ParseError, match=r"override #1 of templates/overrides/platforms/acme.yaml must have when.platform.equals: acme"):
        plan_workload(config, {"platform": "acme", "gpuArchitecture": "h100"}, templating.TemplateLibrary(str(tmp_path / "templates"), str(tmp_path / "_lib")))


def test_catalogue_errors_name_the_file(tmp_path):
    (tmp_path / "platforms" / "bad").mkdir(parents=True)
    (tmp_path / "platforms" / "bad" / "platform.yaml").write_text("shapes:\n  x: {gpus: 8}\n")
    with pytest.raises(ParseError, match=re.escape("_lib/platforms/bad/platform.yaml: shapes.x needs a gpu")):
        platform_catalog.load_platform_catalog(str(tmp_path))


@pytest.mark.parametrize(
    "detection, message",
    [
        ("detection: [aws://]\n", "detection must be a mapping with keys from provider_ids, label_prefixes, instance_types"),
        # an empty mapping tells no platform from its nodes: refused, as a mapping with an unknown key and no mapping
        ("detection: {}\n", "detection must be a mapping with keys from provider_ids, label_prefixes, instance_types"),
        ("detection: 5\n", "detection must be a mapping with keys from provider_ids, label_prefixes, instance_types"),
        ("detection: {labels: [x/]}\n", "detection must be a mapping with keys from provider_ids, label_prefixes, instance_types"),
        ("detection: {label_prefixes: x/}\n", "detection.label_prefixes must be a list of non-empty strings"),
        ("detection: {provider_ids: ['']}\n", "detection.provider_ids must be a list of non-empty strings"),
        ("detection: {instance_types: ['^(p5']}\n", "detection.instance_types holds an invalid regular expression"),
    ],
)
def test_a_catalogues_detection_is_checked_naming_the_file(tmp_path, detection, message):
    (tmp_path / "platforms" / "bad").mkdir(parents=True)
    (tmp_path / "platforms" / "bad" / "platform.yaml").write_text("shapes:\n  x: {gpu: h100}\n" + detection)
    with pytest.raises(ParseError, match=re.escape("_lib/platforms/bad/platform.yaml: " + message)):
        platform_catalog.load_platform_catalog(str(tmp_path))


@pytest.mark.parametrize(
    "labels",
    [
        "topology_labels: example.com/rack\n",
        "topology_labels: [example.com/rack, '']\n",
        "topology_labels: ['bad key!']\n",
        "topology_labels: [example.com/rack, example.com/rack]\n",
        "topology_labels: [{example.com/rack: 1}]\n",
    ],
)
def test_a_catalogues_topology_labels_are_checked_naming_the_file(tmp_path, labels):
    (tmp_path / "platforms" / "bad").mkdir(parents=True)
    (tmp_path / "platforms" / "bad" / "platform.yaml").write_text("shapes: {}\n" + labels)
    message = "_lib/platforms/bad/platform.yaml: topology_labels must be a list of distinct node label keys"
    with pytest.raises(ParseError, match=re.escape(message)):
        platform_catalog.load_platform_catalog(str(tmp_path))


def test_a_catalogues_topology_labels_are_kept_in_order(tmp_path):
    (tmp_path / "platforms" / "good").mkdir(parents=True)
    (tmp_path / "platforms" / "good" / "platform.yaml").write_text("topology_labels: [example.com/spine, rack, example.com/host]\n")
    assert platform_catalog.load_platform_catalog(str(tmp_path))["good"]["topology_labels"] == ["example.com/spine", "rack", "example.com/host"]

    (tmp_path / "other" / "platforms" / "none").mkdir(parents=True)
    (tmp_path / "other" / "platforms" / "none" / "platform.yaml").write_text("shapes: {}\n")
    assert platform_catalog.load_platform_catalog(str(tmp_path / "other"))["none"]["topology_labels"] == []


TRANSPORT_IDS = "must be a transport id (efa, ib, gib, tcpxo, tcpx, socket), got "


@pytest.mark.parametrize(
    "files, message",
    [
        ({"bad": "shapes: {}\nlabels: [x]\n"}, "bad: must be a mapping with keys from " + ", ".join(platform_catalog._CATALOG_KEYS)),
        ({"bad": "- shapes\n"}, "bad: must be a mapping with keys from " + ", ".join(platform_catalog._CATALOG_KEYS)),
        ({"bad": "transport: EFA\n"}, "bad: transport " + TRANSPORT_IDS + "'EFA'"),
        ({"bad": "transport: 5\n"}, "bad: transport " + TRANSPORT_IDS + "5"),
        ({"bad": "shapes:\n  x: {gpu: h100, transport: Bad}\n"}, "bad: shapes.x.transport " + TRANSPORT_IDS + "'Bad'"),
        ({"bad": "shapes:\n  a: {gpu: h100, default: true}\n  b: {gpu: h100, default: true}\n"}, "bad: shapes a and b are both the default for h100"),
        ({"bad": "nic_resources: [{name: vpc.amazonaws.com/efa, field: efa}, {name: vpc.amazonaws.com/efa, field: x}]\n"}, "bad: nic_resources[1] needs"),
        ({"bad": "nic_resources: [{name: 'bad name', field: efa}]\n"}, "bad: nic_resources[0] needs a resource name and field efa or rdma"),
        ({"bad": "nic_resources: [vpc.amazonaws.com/efa]\n"}, "bad: nic_resources[0] needs a resource name and field efa or rdma"),
        (
            {"a": "vars: {hca: {default: x, description: d}}\n", "b": "vars: {hca: {default: y, description: d}}\n"},
            "b: variable hca is already defined by platform a",
        ),
    ],
)
def test_each_catalogue_rule_is_refused_naming_the_file(tmp_path, files, message):
    for platform, text in files.items():
        (tmp_path / "platforms" / platform).mkdir(parents=True)
        (tmp_path / "platforms" / platform / "platform.yaml").write_text(text)
    platform, rest = message.split(": ", 1)
    with pytest.raises(ParseError, match=re.escape("platform catalogue _lib/platforms/%s/platform.yaml: %s" % (platform, rest))):
        platform_catalog.load_platform_catalog(str(tmp_path))


def test_a_catalogue_takes_what_its_rules_allow(tmp_path):
    (tmp_path / "platforms" / "good").mkdir(parents=True)
    labels = ["example.com/l%d" % index for index in range(300)]
    (tmp_path / "platforms" / "good" / "platform.yaml").write_text(
        "transport: efa\nshapes:\n  a: {gpu: h100, default: true, transport: ib}\n  b: {gpu: h100}\n  c: {gpu: b200, default: true}\n"
        "nic_resources: [{name: vpc.amazonaws.com/efa, field: efa}, {name: rdma/ib, field: rdma}]\n"
        "topology_labels: %s\n" % json.dumps(labels)
    )
    info = platform_catalog.load_platform_catalog(str(tmp_path))["good"]
    assert info["defaults"] == {"h100": "a", "b200": "c"} and info["transport"] == "efa" and len(info["nic_resources"]) == 2
    # 300 distinct labels are distinct (no bound on their number)
    assert info["topology_labels"] == labels


# --- What the mutation run of rendering/platform_catalog.py found untested (issue 47, fourth round) --------------


@pytest.mark.parametrize(
    "spec, message",
    [
        ("{default: 1.5, description: d}", "vars.v default must be a boolean, integer, string or list of strings"),
        ("{default: null, description: d}", "vars.v default must be a boolean, integer, string or list of strings"),
        ("{default: [a, 1], description: d}", "vars.v default must be a list of strings"),
        ("{default: [1], description: d}", "vars.v default must be a list of strings"),
        ("{default: 8, description: d, format: qualified_name}", "vars.v format must be one of %s, for a string variable" % ", ".join(sorted(GRAMMARS))),
        ("{default: [a], description: d, format: qualified_name}", "vars.v format must be one of %s, for a string variable" % ", ".join(sorted(GRAMMARS))),
        ("{default: a, description: d, format: no_such_grammar}", "vars.v format must be one of %s, for a string variable" % ", ".join(sorted(GRAMMARS))),
        ("{default: a, description: d, choices: abc}", "vars.v choices must be a list holding the default"),
        ("{default: a, description: d, choices: [b, c]}", "vars.v choices must be a list holding the default"),
        ("{default: a}", "vars.v needs a default and a description"),
        ("{description: d}", "vars.v needs a default and a description"),
        ("{default: a, description: 1}", "vars.v needs a default and a description"),
        ("[a]", "vars.v needs a default and a description"),
    ],
)
def test_each_rule_of_a_variable_is_refused_with_its_text(tmp_path, spec, message):
    (tmp_path / "platforms" / "bad").mkdir(parents=True)
    (tmp_path / "platforms" / "bad" / "platform.yaml").write_text("vars:\n  v: %s\n" % spec)
    with pytest.raises(ParseError) as caught:
        platform_catalog.load_platform_catalog(str(tmp_path))
    assert str(caught.value) == "platform catalogue _lib/platforms/bad/platform.yaml: " + message


def test_variables_within_the_rules_are_taken_with_their_type(tmp_path):
    (tmp_path / "platforms" / "good").mkdir(parents=True)
    (tmp_path / "platforms" / "good" / "platform.yaml").write_text(
        "vars:\n  b: {default: true, description: d}\n  i: {default: 2, description: d, choices: [1, 2]}\n"
        "  s: {default: x.example.com/y, description: d, format: qualified_name}\n  l: {default: [a, b], description: d}\n  e: {default: [], description: d}\n"
    )
    found = platform_catalog.load_platform_catalog(str(tmp_path))["good"]["vars"]
    assert dict((name, spec["type"]) for name, spec in found.items()) == {"b": "bool", "i": "int", "s": "str", "l": "list", "e": "list"}


@pytest.mark.parametrize(
    "value, message",
    [
        # each type's refusal names it, " of strings" for a list only
        ({"azure_sharp": 1}, "platform_vars.azure_sharp: must be a bool, got 1"),
        ({"oci_ssh_port": True}, "platform_vars.oci_ssh_port: must be a int, got True"),
        ({"oci_ssh_port": "2222"}, "platform_vars.oci_ssh_port: must be a int, got '2222'"),
        ({"gcp_rdma_mode": 1}, "platform_vars.gcp_rdma_mode: must be a str, got 1"),
        ({"gcp_tcpx_networks": ["a", 1]}, "platform_vars.gcp_tcpx_networks: must be a list of strings, got ['a', 1]"),
        ({"gcp_tcpx_networks": "vpc1"}, "platform_vars.gcp_tcpx_networks: must be a list of strings, got 'vpc1'"),
    ],
)
def test_a_platform_variable_of_the_wrong_type_is_refused_naming_its_type(value, message):
    with pytest.raises(ConfigError) as caught:
        platform_catalog.resolve_platform_vars(value, platform_catalog.load_platform_catalog())
    assert str(caught.value) == message


def test_the_transport_of_a_default_shape_names_it():
    found = platform_catalog.expected_transport("aws", "h100")
    assert found == {"transport": "efa", "source": "_lib/platforms/aws/platform.yaml shapes.p5.48xlarge, the default shape for h100"}


def test_the_transport_expected_and_its_source_in_each_case_of_the_docstring():
    catalog = {
        "acme": {"transport": "ib", "defaults": {"h100": "a-8x"}, "shapes": {"a-8x": {"transport": "efa"}, "a-cpu": {}}},
        "bare": {"defaults": {"h100": "b-8x"}, "shapes": {"b-8x": {}}},
    }

    def expected(platform, gpu, instance_type=None):
        return platform_catalog.expected_transport(platform, gpu, instance_type, catalog)

    shape = "_lib/platforms/acme/platform.yaml shapes.a-8x, "
    own = {"transport": "ib", "source": "_lib/platforms/acme/platform.yaml transport"}
    # a known instance type: its shape's transport, whatever the GPU; a shape without one expects nothing
    assert expected("acme", "h100", "a-8x") == {"transport": "efa", "source": shape + "the instance type"}
    assert expected("acme", "b200", "a-8x") == {"transport": "efa", "source": shape + "the instance type"}
    assert expected("acme", "h100", "a-cpu") is None
    # no instance type: the GPU's default shape's, else the platform's own
    assert expected("acme", "h100") == {"transport": "efa", "source": shape + "the default shape for h100"}
    assert expected("acme", "b200") == own
    # an instance type the catalogue does not list: the platform's own, also for a GPU with a default shape
    assert expected("acme", "h100", "z-8x") == own
    assert expected("acme", "b200", "z-8x") == own
    # a platform without a transport of its own, and a platform the catalogue does not know: nothing
    assert expected("bare", "h100") is None
    assert expected("bare", "b200") is None
    assert expected("bare", "h100", "z-8x") is None
    assert expected("nowhere", "h100") is None


@pytest.mark.parametrize("nodes", [[{}, "node-1"], [node("a"), None]])
def test_cluster_nodes_must_all_be_mappings(nodes):
    with pytest.raises(ConfigError) as caught:
        platform_catalog.discover_node_resources(nodes, "aws")
    assert str(caught.value) == "cluster_nodes: must be a list of Node objects (mappings), got 'list'"


def test_a_node_with_one_gpu_is_a_gpu_node():
    cpu = {"metadata": {"labels": {"node.kubernetes.io/instance-type": "m5.large"}}, "status": {"allocatable": {"cpu": "2"}}}
    found = platform_catalog.discover_node_resources([node("g", gpus=1), cpu, cpu], "aws")
    assert (found["gpu_nodes"], found["instance_type"]) == (1, "g")
    assert platform_catalog.discover_node_resources([node("g", gpus=0), cpu, cpu], "aws") == dict(found, gpu_nodes=3, instance_type="m5.large")
    assert platform_catalog.discover_node_resources([], "aws")["gpu_nodes"] == 0


def test_a_nodes_instance_type_is_its_first_label_and_ties_go_to_the_first_name():
    # CoreWeave's own label counts only for a node without node.kubernetes.io/instance-type.
    both = node("x", labels={"node.coreweave.cloud/type": "y"})
    found = platform_catalog.discover_node_resources([both, node("z"), node(None, labels={"node.coreweave.cloud/type": "y"})], "coreweave")
    assert found["instance_type"] == "x"  # x, y and z once each: the first by name
    # a tie between names seen in the other order
    assert platform_catalog.discover_node_resources([node("b"), node("a")], "aws")["instance_type"] == "a"
    assert platform_catalog.discover_node_resources([node("b"), node("a"), node("b")], "aws")["instance_type"] == "b"


def test_a_nodes_counts_are_its_allocatable_else_its_capacity():
    capacity_only = {
        "metadata": {"labels": {"node.kubernetes.io/instance-type": "g"}},
        "status": {"capacity": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"}},
    }
    cpu = {"metadata": {"labels": {"node.kubernetes.io/instance-type": "c"}}, "status": {"allocatable": {"cpu": "2"}}}
    found = platform_catalog.discover_node_resources([capacity_only, cpu, cpu], "aws")
    assert (found["gpu_nodes"], found["instance_type"], found["efa_per_node"]) == (1, "g", 4)


def test_the_first_nic_resource_of_each_field_is_taken_and_only_for_its_field():
    catalog = {
        "p": {
            "nic_resources": [
                {"name": "a.example.com/efa", "field": "efa"},
                {"name": "b.example.com/efa", "field": "efa"},
                {"name": "c.example.com/ib", "field": "rdma"},
                {"name": "d.example.com/ib", "field": "rdma", "shared": True},
            ]
        }
    }
    offered = {"a.example.com/efa": "2", "b.example.com/efa": "3", "c.example.com/ib": "4", "d.example.com/ib": "5"}
    found = platform_catalog.discover_node_resources([node("x", offered)], "p", catalog)
    assert (found["efa_per_node"], found["rdma_resource"], found["rdma_per_node"]) == (2, "c.example.com/ib", 4)
    del offered["a.example.com/efa"], offered["c.example.com/ib"]
    found = platform_catalog.discover_node_resources([node("x", offered)], "p", catalog)
    assert (found["efa_per_node"], found["rdma_resource"], found["rdma_per_node"]) == (3, "d.example.com/ib", 1)  # a shared one counts 1
    found = platform_catalog.discover_node_resources([node("x", {"b.example.com/efa": "3"})], "p", catalog)
    assert (found["efa_per_node"], found["rdma_resource"], found["rdma_per_node"]) == (3, None, None)
