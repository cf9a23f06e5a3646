# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Platform, GPU, instance type and per-node config read off Node objects people outside this project published
(tests/fixtures/real/nodes/PROVENANCE.md): `kubectl describe node` output of EKS, AKS, GKE and OKE nodes, and the GPU
feature discovery labels of a Lambda node. Each expected value is read by hand off the published text; the comment
beside it says where."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import recorded_detection
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import detect
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real", "nodes")

# `kubectl describe node` prints status.nodeInfo under "System Info:" with these names.
_SYSTEM_INFO = {
    "Machine ID": "machineID",
    "System UUID": "systemUUID",
    "Boot ID": "bootID",
    "Kernel Version": "kernelVersion",
    "OS Image": "osImage",
    "Operating System": "operatingSystem",
    "Architecture": "architecture",
    "Container Runtime Version": "containerRuntimeVersion",
    "Kubelet Version": "kubeletVersion",
    "Kube-Proxy Version": "kubeProxyVersion",
}
_HEADER = re.compile(r"^([A-Z][A-Za-z -]*):\s*(.*)$")


def read(name):
    with open(os.path.join(REAL, name)) as handle:
        return handle.read()


def node_from_describe(text):
    """The Node object (the fields detection reads) that `kubectl describe node` TEXT prints: metadata.name and
    labels, spec.providerID, status.capacity, allocatable and nodeInfo. Lines before "Name:" (the command) are
    skipped; a section ends at the next line that does not start with a space, as describe prints them."""
    metadata, spec, status = {"labels": {}}, {}, {}
    section = None
    started = False
    for line in text.splitlines():
        if not started:
            started = line.startswith("Name:")
            if not started:
                continue
        if line and not line[0].isspace():
            match = _HEADER.match(line)
            section, value = (match.group(1), match.group(2).strip()) if match else (None, "")
            if section == "Name":
                metadata["name"] = value
            elif section == "ProviderID":
                spec["providerID"] = value
            elif section == "Labels" and value:
                key, _sep, label = value.partition("=")
                metadata["labels"][key] = label
            continue
        item = line.strip()
        if section == "Labels" and "=" in item:
            key, _sep, label = item.partition("=")
            metadata["labels"][key] = label
        elif section in ("Capacity", "Allocatable") and ":" in item:
            key, _sep, quantity = item.partition(":")
            status.setdefault(section.lower(), {})[key.strip()] = quantity.strip()
        elif section == "System Info" and ":" in item:
            key, _sep, value = item.partition(":")
            if key.strip() in _SYSTEM_INFO:
                status.setdefault("nodeInfo", {})[_SYSTEM_INFO[key.strip()]] = value.strip()
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "spec": spec, "status": status}


def node_from_label_lines(name, text):
    """A Node named NAME with the labels of `kubectl describe nodes | grep ...` TEXT: describe prints a label as
    key=value and an annotation as key: value, so only the key=value lines are labels."""
    labels = {}
    for line in text.splitlines():
        item = line.strip()
        if "=" in item and ": " not in item:
            key, _sep, value = item.partition("=")
            labels[key] = value
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {}, "status": {}}


def eks_p4d():
    return node_from_describe(read("eks-p4d-24xlarge-karpenter-describe.txt"))


def aks_nc6s_v3():
    return node_from_describe(read("aks-standard-nc6s-v3-describe.txt"))


def aks_windows_t4():
    return node_from_describe(read("aks-windows-standard-nc4as-t4-v3-describe.txt"))


def gke_l4():
    return node_from_describe(read("gke-g2-standard-4-l4-describe.txt"))


def gke_tpu():
    return node_from_describe(read("gke-ct6e-standard-1t-tpu-describe.txt"))


def oke_cpu():
    return node_from_describe(read("oke-vm-standard-e5-flex-describe.txt"))


def lambda_h100():
    # The page's `kubectl get nodes` names its one node 192-222-54-148; the grep output itself holds no name.
    return node_from_label_lines("192-222-54-148", read("lambda-k3s-8x-h100-gfd-labels.txt"))


# What each published node shows, read by hand: name, platform, GPU architecture, GFD product, instance type, GPUs,
# whether it is a GPU node.
EXPECTED = {
    "eks_p4d": (
        eks_p4d,
        # Name:; ProviderID: aws:///ap-northeast-2b/...; no nvidia.com/gpu.product label (GFD's pod was 42s old);
        # node.kubernetes.io/instance-type=p4d.24xlarge, whose 8 GPUs are A100s (its own label
        # karpenter.k8s.aws/instance-gpu-name=a100, instance-gpu-count=8); Capacity: nvidia.com/gpu: 8
        ("ip-10-0-5-152.ap-northeast-2.compute.internal", "aws", "a100", "", "p4d.24xlarge", 8, True),
    ),
    "aks_nc6s_v3": (
        aks_nc6s_v3,
        # ProviderID: azure:///subscriptions/...; node.kubernetes.io/instance-type=Standard_NC6s_v3, one Tesla V100
        # (Azure's NCv3 series); no GFD labels; Capacity: nvidia.com/gpu: 1
        ("aks-gpunp-10282168-vmss000000", "azure", "v100", "", "Standard_NC6s_v3", 1, True),
    ),
    "aks_windows_t4": (
        aks_windows_t4,
        # ProviderID: azure:///subscriptions/...; node.kubernetes.io/instance-type=Standard_NC4as_T4_v3 (its
        # nvidia-smi on the same page: Tesla T4); the GPU is advertised as microsoft.com/directx: 1, not nvidia.com/gpu
        ("akswin19000005", "azure", "t4", "", "Standard_NC4as_T4_v3", 0, True),
    ),
    "gke_l4": (
        gke_l4,
        # no ProviderID printed (the page shows Name, Labels and Taints only): the cloud.google.com/ labels;
        # cloud.google.com/gke-accelerator=nvidia-l4; node.kubernetes.io/instance-type=g2-standard-4; no Capacity
        ("gke-tpu-gpu-fungibility-l4-spot-55a0278b-qdj6", "gcp", "l4", "", "g2-standard-4", 0, True),
    ),
    "gke_tpu": (
        gke_tpu,
        # a TPU node of the same cluster: cloud.google.com/gke-tpu-accelerator=tpu-v6e-slice,
        # node.kubernetes.io/instance-type=ct6e-standard-1t, no GPU
        ("gke-tpu-cfe31df8-rc2f", "gcp", "unknown", "", "ct6e-standard-1t", 0, False),
    ),
    "oke_cpu": (
        oke_cpu,
        # ProviderID: ocid1.instance.oc1.iad...; node.kubernetes.io/instance-type=VM.Standard.E5.Flex, a CPU shape
        ("10.140.50.107", "oci", "unknown", "", "VM.Standard.E5.Flex", 0, False),
    ),
    "lambda_h100": (
        lambda_h100,
        # a K3s node on a Lambda instance: no providerID, cloud label or instance type in the published lines;
        # nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3; nvidia.com/gpu.count=8
        ("192-222-54-148", "unknown", "h100", "NVIDIA-H100-80GB-HBM3", "", 8, True),
    ),
}
FIELDS = ("name", "platform", "gpu_architecture", "gpu_product", "instance_type", "gpus", "is_gpu")


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_each_published_node_is_read_as_it_shows(fixture):
    make, expected = EXPECTED[fixture]
    described = detect.describe_node(make())
    assert tuple(described[field] for field in FIELDS) == expected
    # node_evidence keeps all that detection reads: the trimmed node is described alike
    assert detect.describe_node(detect.node_evidence(make())) == described


def test_the_helpers_read_each_published_field():
    p4d, nc6s, windows, l4, tpu, oke = eks_p4d(), aks_nc6s_v3(), aks_windows_t4(), gke_l4(), gke_tpu(), oke_cpu()
    assert detect.platform_from_provider_id(p4d["spec"]["providerID"]) == "aws"
    assert detect.platform_from_provider_id(nc6s["spec"]["providerID"]) == "azure"
    assert detect.platform_from_provider_id(windows["spec"]["providerID"]) == "azure"
    assert detect.platform_from_provider_id(oke["spec"]["providerID"]) == "oci"
    assert "providerID" not in l4["spec"] and "providerID" not in tpu["spec"]
    # each cloud's own labels: karpenter.k8s.aws/ (and k8s.io/cloud-provider-aws), kubernetes.azure.com/,
    # cloud.google.com/, oci.oraclecloud.com/
    assert [detect.platform_from_labels(obj["metadata"]["labels"]) for obj in (p4d, nc6s, windows, l4, tpu, oke)] == [
        "aws",
        "azure",
        "azure",
        "gcp",
        "gcp",
        "oci",
    ]
    assert detect.platform_from_labels(lambda_h100()["metadata"]["labels"]) == "unknown"
    # the instance types' naming: AWS's p4d, Azure's Standard_, GKE's g2-; ct6e (TPU) and OCI's CPU shape are none
    assert [detect.platform_from_instance_type(t) for t in ("p4d.24xlarge", "Standard_NC6s_v3", "g2-standard-4")] == ["aws", "azure", "gcp"]
    assert detect.gpu_from_product(lambda_h100()["metadata"]["labels"]["nvidia.com/gpu.product"]) == "h100"
    assert detect.gpu_from_words(l4["metadata"]["labels"]["cloud.google.com/gke-accelerator"]) == "l4"
    assert [detect.gpu_from_instance_type(t) for t in ("p4d.24xlarge", "Standard_NC4as_T4_v3")] == ["a100", "t4"]
    assert [detect.gpu_from_instance_type(t) for t in ("ct6e-standard-1t", "VM.Standard.E5.Flex")] == ["unknown", "unknown"]


def test_check_cluster_on_each_published_cluster():
    # the EKS p4d node alone: aws and a100 detected, 8 GPUs
    eks = detect.check_cluster([eks_p4d()])
    assert eks["ok"], eks["errors"]
    assert (eks["platform"], eks["gpu_architecture"], eks["gpus"], eks["instance_types"]) == ("aws", "a100", 8, {"p4d.24xlarge": 1})
    # AKS: the Linux V100 node and the Windows T4 node are two clusters of two pages; each alone (the V100 node:
    # test_the_aks_ncv3_node_is_detected_as_its_v100)
    windows = detect.check_cluster([aks_windows_t4()], "azure", "t4")
    assert windows["ok"] and windows["gpu_nodes"] == 1 and windows["gpus"] == 0
    # GKE: the TPU node and the L4 node are of one cluster (the same page, cluster tpu-gpu-fungibility)
    gke = detect.check_cluster([gke_tpu(), gke_l4()])
    assert gke["ok"], gke["errors"]
    assert (gke["platform"], gke["gpu_architecture"], gke["nodes"], gke["gpu_nodes"]) == ("gcp", "l4", 2, 1)
    assert gke["instance_types"] == {"g2-standard-4": 1}
    # OKE: a CPU node of a CPU pool is no GPU cluster
    oke = detect.check_cluster([oke_cpu()])
    assert oke["platform"] == "oci" and oke["errors"] == [
        "none of the 1 nodes has a GPU (no nvidia.com/gpu.product label, nvidia.com/gpu capacity or GPU instance type)"
    ]
    # Lambda: nothing on the node names its platform; the GPU is detected, the platform must be declared
    lam = detect.check_cluster([lambda_h100()])
    assert lam["gpu_architecture"] == "h100" and lam["platform"] == "unknown" and not lam["ok"]
    assert detect.check_cluster([lambda_h100()], "onprem", "")["ok"]
    # the declared platform of another cloud is a mismatch on every published cluster that names its platform
    assert detect.check_cluster([eks_p4d()], "gcp", "a100")["errors"][0].startswith("platform mismatch: the group declares gcp but the nodes are aws (1)")


def test_the_aks_ncv3_node_is_detected_as_its_v100():
    # node.kubernetes.io/instance-type=Standard_NC6s_v3 and nvidia.com/gpu: 1, no GFD labels: before the NCv3 family
    # was in cluster/detect.py _INSTANCE_TYPES this was a GPU node of no architecture, and check_cluster an error
    assert detect.gpu_from_instance_type("Standard_NC6s_v3") == "v100"
    aks = detect.check_cluster([aks_nc6s_v3()])
    assert aks["ok"], aks["errors"]
    assert (aks["platform"], aks["gpu_architecture"], aks["gpus"]) == ("azure", "v100", 1)


# --- the rule the AKS NCv3 node broke: a GPU node's instance type alone tells its architecture -----------------------
_MODEL_LABELS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator")
_COUNT_LABELS = ("nvidia.com/gpu.count", "nvidia.com/gpu.present")


def without_labels(obj, names):
    copy = json.loads(json.dumps(obj))
    for name in names:
        copy["metadata"]["labels"].pop(name, None)
    return copy


def without_gpu_resources(obj):
    copy = without_labels(obj, _COUNT_LABELS)
    for section in ("capacity", "allocatable"):
        copy["status"].get(section, {}).pop("nvidia.com/gpu", None)
    return copy


def only_beta_instance_type(obj):
    copy = json.loads(json.dumps(obj))
    labels = copy["metadata"]["labels"]
    labels["beta.kubernetes.io/instance-type"] = labels.pop("node.kubernetes.io/instance-type")
    return copy


_TYPED_GPU_NODES = sorted(name for name, (make, expected) in EXPECTED.items() if expected[6] and expected[4])


@pytest.mark.parametrize("fixture", _TYPED_GPU_NODES)
@pytest.mark.parametrize("change", [lambda obj: without_labels(obj, _MODEL_LABELS), without_gpu_resources, only_beta_instance_type])
def test_a_published_gpu_nodes_instance_type_alone_tells_its_architecture(fixture, change):
    # Metamorphic, over every published GPU node with an instance type: leaving out GFD's product and GKE's
    # accelerator label, or the GPU count, or moving the instance type to the beta label, changes neither whether it
    # is a GPU node nor its architecture. The catalogues' detection tells these instance types as their cloud's
    # (_lib/platforms/*/platform.yaml); cluster/detect.py _INSTANCE_TYPES must name the GPU of each such family.
    make, expected = EXPECTED[fixture]
    described = detect.describe_node(change(make()))
    assert (described["is_gpu"], described["gpu_architecture"], described["platform"]) == (True, expected[2], expected[1])
    assert detect.gpu_from_instance_type(expected[4]) == expected[2]
    assert detect.platform_from_instance_type(expected[4]) == expected[1]


# Families whose names do not carry the GPU model, of models cluster/detect.py knows (each family's source:
# tests/fixtures/real/nodes/PROVENANCE.md): each size is read as the family's GPU and as its own cloud, as the published
# NC6s_v3 node must be.
_FAMILIES = {
    ("aws", "v100"): ("p3.2xlarge", "p3.8xlarge", "p3.16xlarge", "p3dn.24xlarge"),
    ("aws", "t4"): ("g4dn.xlarge", "g4dn.12xlarge", "g4dn.metal"),
    ("azure", "v100"): ("Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3", "Standard_NC24rs_v3", "Standard_ND40rs_v2"),
    ("azure", "a100"): ("Standard_ND96asr_v4",),
    ("oci", "v100"): ("BM.GPU3.8", "VM.GPU3.1", "VM.GPU3.2", "VM.GPU3.4"),
    ("oci", "a100"): ("BM.GPU4.8", "BM.GPU.B4.8"),
    ("gcp", "rtxpro6000"): ("g4-standard-48", "g4-standard-384"),
}


@pytest.mark.parametrize(
    "instance_type, platform, arch", [(instance_type, platform, arch) for (platform, arch), sizes in sorted(_FAMILIES.items()) for instance_type in sizes]
)
def test_each_size_of_a_family_without_its_model_in_the_name_is_read_as_its_gpu(instance_type, platform, arch):
    node = {"metadata": {"name": "n0", "labels": {"node.kubernetes.io/instance-type": instance_type}}}
    described = detect.describe_node(node)
    assert (described["platform"], described["gpu_architecture"], described["is_gpu"]) == (platform, arch, True)


@pytest.mark.parametrize("instance_type", ["g4ad.xlarge", "Standard_NC6", "Standard_NC6s_v2", "BM.GPU2.2", "Standard_L4s", "t4g.medium"])
def test_families_of_gpus_detect_does_not_know_or_of_no_gpu_stay_unknown(instance_type):
    # AMD's g4ad, the K80 NC, the P100 NCv2 and GPU2 sizes: a GPU of no model cluster/detect.py knows; Ls and t4g: no GPU
    assert detect.gpu_from_instance_type(instance_type) == "unknown"


def test_each_published_node_config_is_what_its_system_info_and_gfd_labels_show():
    configs = drift.configs_of(detect.detect_cluster([eks_p4d(), aks_nc6s_v3(), aks_windows_t4(), gke_l4(), gke_tpu(), oke_cpu(), lambda_h100()]))
    assert configs == {
        # System Info: of the EKS node; no GFD driver or CUDA labels yet
        "ip-10-0-5-152.ap-northeast-2.compute.internal": {
            "kubelet": "v1.34.2-eks-ecaa3a6",
            "kernel": "6.12.58-82.121.amzn2023.x86_64",
            "os_image": "Amazon Linux 2023.9.20251208",
            "container_runtime": "containerd://2.1.5",
        },
        "aks-gpunp-10282168-vmss000000": {
            "kubelet": "v1.26.6",
            "kernel": "5.4.0-1112-azure",
            "os_image": "Ubuntu 18.04.6 LTS",
            "container_runtime": "containerd://1.7.1+azure-1",
        },
        "akswin19000005": {
            "kubelet": "v1.25.4",
            "kernel": "10.0.17763.3887",
            "os_image": "Windows Server 2019 Datacenter",
            "container_runtime": "containerd://1.6.14+azure",
        },
        # GFD's nvidia.com/cuda.driver-version.full=535.129.03 and nvidia.com/cuda.runtime-version.full=12.2
        "192-222-54-148": {"driver": "535.129.03", "cuda": "12.2"},
        # the GKE L4 node's page prints no System Info and no GFD labels: no config; the TPU and OKE nodes are no GPU nodes
    }
    # the driver from its parts (cuda.driver.major/minor/rev = 535/129/03) is the full version GFD printed
    parts = dict((key, value) for key, value in lambda_h100()["metadata"]["labels"].items() if key != "nvidia.com/cuda.driver-version.full")
    assert drift.node_config({"metadata": {"labels": parts}})["driver"] == "535.129.03"


def test_the_published_configs_group_and_come_back_per_node():
    grouped = detect.detect_cluster([eks_p4d(), aks_nc6s_v3(), aks_windows_t4(), lambda_h100()])["node_configs"]
    configs = drift.configs_of({"node_configs": grouped})
    # four nodes of four different configs: four groups of one node each, in node-name order
    assert [group["nodes"] for group in grouped] == [
        ["192-222-54-148"],
        ["aks-gpunp-10282168-vmss000000"],
        ["akswin19000005"],
        ["ip-10-0-5-152.ap-northeast-2.compute.internal"],
    ]
    assert drift.grouped_configs(configs) == grouped
    # a result as the controller records it holds the same groups
    recorded = recorded_detection(detect.check_cluster([eks_p4d(), aks_nc6s_v3()], "aws", "a100"))
    assert drift.configs_of(recorded["detected"]) == dict(
        (name, configs[name]) for name in ("ip-10-0-5-152.ap-northeast-2.compute.internal", "aks-gpunp-10282168-vmss000000")
    )
    # the same published node twice is one group of two
    twin = eks_p4d()
    twin["metadata"]["name"] = "ip-10-0-5-153.ap-northeast-2.compute.internal"
    twice = detect.detect_cluster([eks_p4d(), twin])["node_configs"]
    assert len(twice) == 1 and twice[0]["nodes"] == ["ip-10-0-5-152.ap-northeast-2.compute.internal", "ip-10-0-5-153.ap-northeast-2.compute.internal"]
