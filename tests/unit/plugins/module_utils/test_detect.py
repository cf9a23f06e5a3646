# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Platform and GPU detection from Node objects, and the check against the declared values."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import recorded_detection
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import detect
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR


def node(name="n0", provider_id=None, product=None, instance_type=None, gpus=None, labels=None):
    node_labels = {"kubernetes.io/hostname": name}
    if product:
        node_labels["nvidia.com/gpu.product"] = product
    if instance_type:
        node_labels["node.kubernetes.io/instance-type"] = instance_type
    node_labels.update(labels or {})
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": node_labels}, "spec": {}, "status": {}}
    if provider_id:
        obj["spec"]["providerID"] = provider_id
    if gpus is not None:
        obj["status"]["capacity"] = {"nvidia.com/gpu": str(gpus)}
    return obj


def aws_h100(i=0):
    return node("ip-10-1-0-%d.ec2.internal" % i, "aws:///us-east-1a/i-0abc%d" % i, "NVIDIA-H100-80GB-HBM3", "p5.48xlarge", 8)


def gcp_h100(i=0):
    return node("gke-gpu-%d" % i, "gce://proj/us-central1-a/gke-gpu-%d" % i, "NVIDIA-H100-80GB-HBM3", "a3-megagpu-8g", 8)


def azure_gb200(i=0):
    return node(
        "aks-gpu-%d" % i,
        "azure:///subscriptions/x/resourceGroups/y/providers/Microsoft.Compute/virtualMachineScaleSets/z/virtualMachines/%d" % i,
        "NVIDIA-GB200",
        "Standard_ND128isr_GB200_v6",
        4,
    )


@pytest.mark.parametrize(
    "product, arch",
    [
        ("NVIDIA-H100-80GB-HBM3", "h100"),
        ("NVIDIA-H100-80GB-HBM3-SHARED", "h100"),
        ("NVIDIA-H100-NVL", "h100"),
        ("NVIDIA-H200", "h200"),
        ("NVIDIA-H20", "h20"),
        ("NVIDIA-GH200-480GB", "gh200"),
        ("NVIDIA-B200", "b200"),
        ("NVIDIA-GB200", "gb200"),
        ("NVIDIA-GB300", "gb300"),
        ("NVIDIA-A100-SXM4-80GB", "a100"),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "a100"),
        ("NVIDIA-L40S", "l40s"),
        ("NVIDIA-L40", "l40"),
        ("NVIDIA-L4", "l4"),
        ("NVIDIA-A10G", "a10g"),
        ("Tesla-V100-SXM2-16GB", "v100"),
        ("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "rtxpro6000"),
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("", "unknown"),
        ("NVIDIA-Something-New", "unknown"),
        (None, "unknown"),
    ],
)
def test_gpu_from_product(product, arch):
    assert detect.gpu_from_product(product) == arch


@pytest.mark.parametrize(
    "instance_type, arch",
    [
        ("p4d.24xlarge", "a100"),
        ("p4de.24xlarge", "a100"),
        ("p5.48xlarge", "h100"),
        ("p5e.48xlarge", "h200"),
        ("p5en.48xlarge", "h200"),
        ("p6-b200.48xlarge", "b200"),
        ("p6e-gb200.36xlarge", "gb200"),
        ("p6e-gb300.36xlarge", "gb300"),
        ("g6e.48xlarge", "l40s"),
        ("a2-ultragpu-8g", "a100"),
        ("a3-megagpu-8g", "h100"),
        ("a3-highgpu-8g", "h100"),
        ("a3-ultragpu-8g", "h200"),
        ("a4-highgpu-8g", "b200"),
        ("a4x-highgpu-4g", "gb200"),
        ("a4x-maxgpu-4g", "gb300"),
        ("Standard_ND96isr_H100_v5", "h100"),
        ("Standard_ND96isr_H200_v5", "h200"),
        ("Standard_ND96amsr_A100_v4", "a100"),
        ("Standard_ND128isr_GB200_v6", "gb200"),
        ("Standard_ND128isr_GB300_v6", "gb300"),
        ("BM.GPU.H100.8", "h100"),
        ("BM.GPU.A100-v2.8", "a100"),
        ("BM.GPU4.8", "a100"),
        ("BM.GPU.GB200.4", "gb200"),
        ("gd-8xh100ib-i128", "h100"),
        ("gb200-4x", "gb200"),
        ("m5.large", "unknown"),
        ("", "unknown"),
    ],
)
def test_gpu_from_instance_type(instance_type, arch):
    assert detect.gpu_from_instance_type(instance_type) == arch


@pytest.mark.parametrize(
    "provider_id, platform",
    [
        ("aws:///us-east-1a/i-0123", "aws"),
        ("gce://proj/us-central1-a/gke-node", "gcp"),
        ("azure:///subscriptions/x/resourceGroups/y", "azure"),
        ("oci://ocid1.instance.oc1.iad.abc", "oci"),
        ("nebius://computeinstance-e00abc", "nebius"),
        ("ocid1.instance.oc1.iad.abc", "oci"),
        ("kind://docker/kind/kind-control-plane", "unknown"),
        ("", "unknown"),
        (None, "unknown"),
    ],
)
def test_platform_from_provider_id(provider_id, platform):
    assert detect.platform_from_provider_id(provider_id) == platform


def catalogues():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.platform_catalog import load_platform_catalog

    return load_platform_catalog()


@pytest.mark.parametrize("platform", sorted(catalogues()))
def test_every_shape_a_catalogue_names_is_told_as_its_own_platform_and_no_other(platform):
    # What a Node says of its platform is the catalogue's detection (_lib/platforms/<platform>/platform.yaml): every
    # shape of a platform with instance-type markers is read as that platform, and no platform's markers claim another's.
    entry = catalogues()[platform]
    told = dict((shape, detect.platform_from_instance_type(shape)) for shape in entry["shapes"])
    if (entry["detection"] or {}).get("instance_types"):
        assert set(told.values()) <= {platform}, told
    else:
        assert set(told.values()) <= {"unknown"}, told


@pytest.mark.parametrize(
    "instance_type, platform",
    [
        # GCP's G4 (RTX PRO 6000) machine types, as dstackai/dstack#3213 lists them: AWS's g-family markers took them.
        ("g4-standard-48", "gcp"),
        ("g4-standard-384", "gcp"),
        ("g2-standard-96", "gcp"),
        # AWS's g families are <family>.<size>; p6's family holds a dash.
        ("g4dn.12xlarge", "aws"),
        ("g6e.48xlarge", "aws"),
        ("p6-b200.48xlarge", "aws"),
        ("p6e-gb200.36xlarge", "aws"),
        ("trn1.32xlarge", "aws"),
        ("BM.GPU.GB200-v2.4", "oci"),
        ("gd-8xh100ib-i128", "unknown"),
    ],
)
def test_platform_from_instance_type_reads_each_clouds_naming(instance_type, platform):
    assert detect.platform_from_instance_type(instance_type) == platform


def test_the_detectable_platforms_are_those_whose_catalogue_has_a_detection():
    folders = sorted(name for name in os.listdir(os.path.join(LIB_DIR, "platforms")) if os.path.isdir(os.path.join(LIB_DIR, "platforms", name)))
    assert detect.detectable_platforms() == tuple(name for name in folders if catalogues()[name]["detection"])
    # Nothing on a node says these: they have no detection block.
    assert {"onprem", "togetherai", "mistral"} <= set(folders) - set(detect.detectable_platforms())
    # A scheme is compared without case (as before), an OCID as it is.
    assert detect.platform_from_provider_id("GCE://proj/zone/vm") == "gcp"
    assert detect.platform_from_provider_id("OCID1.instance.oc1.iad.abc") == "unknown"


def test_platform_from_labels_and_instance_type_when_no_provider_id():
    assert detect.describe_node(node(labels={"eks.amazonaws.com/nodegroup": "gpu"}))["platform"] == "aws"
    assert detect.describe_node(node(labels={"cloud.google.com/gke-nodepool": "gpu"}))["platform"] == "gcp"
    assert detect.describe_node(node(labels={"kubernetes.azure.com/agentpool": "gpu"}))["platform"] == "azure"
    assert detect.describe_node(node(labels={"oci.oraclecloud.com/fault-domain": "FD-1"}))["platform"] == "oci"
    assert detect.describe_node(node(labels={"node.coreweave.cloud/type": "gd-8xh100ib-i128"}))["platform"] == "coreweave"
    # SkyPilot examples/nebius_infiniband/README.md (third party): the GPU cluster label of Nebius mk8s.
    assert detect.describe_node(node(labels={"topology.nebius.com/gpu-cluster-id": "computegpucluster-e00x"}))["platform"] == "nebius"
    assert detect.describe_node(node(instance_type="p5.48xlarge"))["platform"] == "aws"
    assert detect.describe_node(node(instance_type="Standard_ND96isr_H100_v5"))["platform"] == "azure"
    assert detect.describe_node(node(instance_type="a3-megagpu-8g"))["platform"] == "gcp"
    assert detect.describe_node(node(instance_type="BM.GPU.H100.8"))["platform"] == "oci"
    assert detect.describe_node(node())["platform"] == "unknown"


def test_gke_accelerator_label_when_no_product():
    described = detect.describe_node(node(labels={"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}))
    assert described["gpu_architecture"] == "h100" and described["is_gpu"]


def test_cpu_node_is_not_a_gpu_node():
    cpu = node("cpu-0", "aws:///us-east-1a/i-cpu", instance_type="m5.large")
    described = detect.describe_node(cpu)
    assert not described["is_gpu"] and described["gpu_architecture"] == "unknown" and described["platform"] == "aws"


def test_detect_cluster_counts_and_majority():
    nodes = [aws_h100(0), aws_h100(1), node("cpu", "aws:///x/i-cpu", instance_type="m5.large")]
    result = detect.detect_cluster(nodes)
    assert result["platform"] == "aws" and result["gpu_architecture"] == "h100"
    assert result["nodes"] == 3 and result["gpu_nodes"] == 2 and result["gpus"] == 16
    assert result["gpu_products"] == {"NVIDIA-H100-80GB-HBM3": 2}
    assert result["instance_types"] == {"p5.48xlarge": 2}
    assert result["platforms"] == {"aws": 3}


def test_majority_never_depends_on_order():
    a = detect.detect_cluster([aws_h100(0), gcp_h100(1)])
    b = detect.detect_cluster([gcp_h100(1), aws_h100(0)])
    assert a["platform"] == b["platform"] == "aws"


@pytest.mark.parametrize(
    "nodes, platform, gpu",
    [
        ([aws_h100(0), aws_h100(1)], "aws", "h100"),
        ([gcp_h100(0)], "gcp", "h100"),
        ([azure_gb200(0)], "azure", "gb200"),
    ],
)
def test_matching_declarations_pass(nodes, platform, gpu):
    result = detect.check_cluster(nodes, platform, gpu)
    assert result["ok"], result["errors"]
    assert (result["platform"], result["gpu_architecture"]) == (platform, gpu)
    assert result["platform_source"] == result["gpu_architecture_source"] == "declared"
    assert result["message"] == "" and result["warnings"] == []


def test_empty_declarations_are_detected():
    result = detect.check_cluster([azure_gb200(0), azure_gb200(1)], "", None)
    assert result["ok"] and result["platform"] == "azure" and result["gpu_architecture"] == "gb200"
    assert result["platform_source"] == result["gpu_architecture_source"] == "detected"


def test_mismatch_names_both_sides():
    result = detect.check_cluster([aws_h100(0)], "gcp", "gb200")
    assert not result["ok"]
    assert "platform mismatch: the group declares gcp but the nodes are aws (1)" in result["message"]
    assert "GPU mismatch: the group declares gb200 but the GPU nodes are h100 (1)" in result["message"]
    assert "NVIDIA-H100-80GB-HBM3" in result["message"]


@pytest.mark.parametrize("platform", ["togetherai", "mistral", "onprem"])
def test_platforms_nodes_cannot_name_only_check_the_gpu(platform):
    bare = [node("gpu-0", product="NVIDIA-GB300", gpus=4)]
    assert detect.check_cluster(bare, platform, "gb300")["ok"]
    wrong = detect.check_cluster(bare, platform, "h100")
    assert not wrong["ok"] and "GPU mismatch" in wrong["message"] and "platform" not in wrong["message"]


def test_unconfirmed_platform_is_a_warning():
    result = detect.check_cluster([node("gpu-0", product="NVIDIA-H100-80GB-HBM3", gpus=8)], "aws", "h100")
    assert result["ok"] and "do not confirm platform aws" in result["warnings"][0]


def test_undetectable_values_are_errors_when_not_declared():
    bare = [node("gpu-0", gpus=8)]
    result = detect.check_cluster(bare, "", "")
    assert not result["ok"]
    assert "set burnin_platform" in result["message"] and "set burnin_gpu_architecture" in result["message"]


def test_no_gpu_nodes_and_no_nodes():
    no_gpu = detect.check_cluster([node("cpu", "aws:///x/i-1", instance_type="m5.large")], "aws", "h100")
    assert not no_gpu["ok"] and "none of the 1 nodes has a GPU" in no_gpu["message"]
    empty = detect.check_cluster([], "aws", "h100")
    assert not empty["ok"] and "the cluster has no nodes" in empty["message"]


def test_mixed_architectures_warn_and_accept_a_present_one():
    a100 = node("a100", "aws:///x/i-a", "NVIDIA-A100-SXM4-80GB", "p4d.24xlarge", 8)
    result = detect.check_cluster([aws_h100(0), aws_h100(1), a100], "aws", "a100")
    assert result["ok"] and "several architectures" in result["warnings"][0]
    assert result["detected_gpu_architecture"] == "h100"


def test_nodes_not_listed_uses_declared_values_unchecked():
    result = detect.check_cluster(None, "aws", "h100", nodes_listed=False)
    assert result["ok"] and result["platform_source"] == "unchecked" and result["warnings"]
    missing = detect.check_cluster(None, "aws", "", nodes_listed=False)
    assert not missing["ok"] and "burnin_gpu_architecture is not set" in missing["message"]


@pytest.mark.parametrize(
    "nodes, platform, field",
    [
        ("nodes", "aws", "nodes"),
        (["x"], "aws", r"nodes\[0\]"),
        ([{"metadata": {"labels": ["a"]}}], "aws", r"nodes\[0\].metadata.labels"),
        ([], 3, "platform"),
    ],
)
def test_bad_input_names_the_field(nodes, platform, field):
    with pytest.raises(ConfigError, match="^%s: " % field):
        detect.check_cluster(nodes, platform, "h100")


def test_the_recorded_detection_keeps_what_the_nodes_said():
    nodes = [node("g%d" % i, provider_id="aws:///us-east-1a/i-%d" % i, product="NVIDIA-H100-80GB-HBM3", instance_type="p5.48xlarge", gpus=8) for i in range(2)]
    recorded = recorded_detection(detect.check_cluster(nodes, platform="aws", gpu_architecture=""))
    assert "outcome" not in recorded and recorded["stage"] == "detect"
    assert (recorded["platform"], recorded["gpu_architecture"]) == ("aws", "h100")
    assert recorded["detected"]["gpus"] == 16 and recorded["detected"]["gpu_nodes"] == 2
    assert recorded["detected"]["instance_types"] == {"p5.48xlarge": 2}
    unchecked = recorded_detection(detect.check_cluster([], "aws", "h100", nodes_listed=False), check_nodes=False)
    assert detect.NOT_CHECKED in unchecked["warnings"]


def test_a_recorded_mismatch_is_the_outcome_with_its_reason():
    nodes = [node("g0", provider_id="gce://p/us-central1-a/g0", product="NVIDIA-H100-80GB-HBM3", gpus=8)]
    recorded = recorded_detection(detect.check_cluster(nodes, platform="aws", gpu_architecture="h100"))
    assert recorded["outcome"] == "Mismatch" and "gcp" in recorded["reason"] and "aws" in recorded["reason"]


def test_node_evidence_keeps_what_detection_and_discovery_read():
    """cluster_detect keeps node_evidence() of each Node: the same detection and NIC discovery as the whole object."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.platform_catalog import discover_node_resources

    whole = node("gpu-1", "aws:///us-east-1a/i-0abc", "NVIDIA-H100-80GB-HBM3", "p5.48xlarge", gpus=8)
    whole["metadata"].update(annotations={"node.alpha.kubernetes.io/ttl": "0"}, managedFields=[{"manager": "kubelet"}], uid="u-1")
    whole["spec"]["taints"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    whole["status"].update(
        allocatable={"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"},
        conditions=[{"type": "Ready", "status": "True"}],
        images=[{"names": ["nccl:latest"], "sizeBytes": 1 << 30}],
        nodeInfo={"kubeletVersion": "v1.34.4"},
        addresses=[{"type": "InternalIP", "address": "10.0.0.1"}],
    )
    kept = detect.node_evidence(whole)
    assert kept == {
        "metadata": {"name": "gpu-1", "labels": whole["metadata"]["labels"]},
        "spec": {"providerID": "aws:///us-east-1a/i-0abc"},
        # nodeInfo's versions for the drift check (judging/drift.py).
        "status": {"capacity": whole["status"]["capacity"], "allocatable": whole["status"]["allocatable"], "nodeInfo": {"kubeletVersion": "v1.34.4"}},
    }
    assert detect.describe_node(kept) == detect.describe_node(whole)
    assert discover_node_resources([kept], "aws") == discover_node_resources([whole], "aws")
    assert discover_node_resources([kept], "aws")["efa_per_node"] == 32
    # A node without a providerID gets none; what is not a mapping is left for describe_node to refuse by its index.
    assert "spec" not in detect.node_evidence({"metadata": {"name": "n"}})
    assert detect.node_evidence("n") == "n"


# --- what the mutation run of cluster/detect.py (issue 47) found untested ------------------------------------------
@pytest.mark.parametrize("instance_type", ["t4g.medium", "t4g.2xlarge", "Standard_L4s"])
def test_a_cpu_instance_type_holding_a_short_model_name_is_no_gpu(instance_type):
    # AWS's Graviton t4g and Azure's storage-optimized Ls instances have no GPU: only model names longer than three
    # characters are found glued to other characters
    described = detect.describe_node(node("cpu-0", instance_type=instance_type))
    assert described["gpu_architecture"] == "unknown" and not described["is_gpu"]
    assert detect.gpu_from_instance_type("gd-8xh100ib-i128") == "h100"


@pytest.mark.parametrize("present, is_gpu", [("true", True), ("false", False), ("yes", False), ("TRUE", False), ("", False)])
def test_only_gpu_present_true_makes_a_node_without_other_evidence_a_gpu_node(present, is_gpu):
    # read back from JSON, as the API server's answer is: the value is a new string
    labels = json.loads(json.dumps({"nvidia.com/gpu.present": present}))
    assert detect.describe_node(node("n0", labels=labels))["is_gpu"] is is_gpu


def test_a_v100_cluster_is_a_v100_cluster():
    # v100 sorts after "unknown": the most common known value is not the most common value before "unknown"
    nodes = [node("v%d" % i, "aws:///us-east-1a/i-%d" % i, "Tesla-V100-SXM2-16GB", "p3.16xlarge", 8) for i in range(2)]
    result = detect.check_cluster(nodes, "", "")
    assert result["ok"] and (result["platform"], result["gpu_architecture"]) == ("aws", "v100")


def test_the_warnings_name_the_platforms_and_architectures_with_their_counts():
    result = detect.check_cluster([aws_h100(0), aws_h100(1), gcp_h100(2), azure_gb200(3)], "aws", "h100")
    assert result["warnings"] == [
        "the nodes show several platforms: aws (2), azure (1), gcp (1)",
        "the GPU nodes have several architectures: gb200 (1), h100 (3)",
    ]


def test_a_gpu_declared_against_v100_nodes_is_a_mismatch():
    nodes = [node("v%d" % i, "aws:///us-east-1a/i-%d" % i, "Tesla-V100-SXM2-16GB", "p3.16xlarge", 8) for i in range(2)]
    result = detect.check_cluster(nodes, "aws", "h100")
    assert not result["ok"] and result["message"].startswith("GPU mismatch: the group declares h100 but the GPU nodes are v100 (2)")
    assert detect.check_cluster(nodes, "aws", "v100")["ok"]


def test_nodes_of_no_known_platform_beside_one_platform_are_no_second_platform():
    bare = node("gpu-9", product="NVIDIA-H100-80GB-HBM3", gpus=8)
    result = detect.check_cluster([aws_h100(0), aws_h100(1), bare], "aws", "h100")
    assert result["ok"] and result["platforms"] == {"aws": 2, "unknown": 1} and result["warnings"] == []


def test_gpu_nodes_of_an_unknown_model_do_not_confirm_a_declared_gpu_and_are_no_second_architecture():
    odd = [node("gpu-%d" % i, "aws:///x/i-%d" % i, "NVIDIA-Foo-9000", gpus=8) for i in range(2)]
    result = detect.check_cluster(odd, "aws", "h100")
    assert result["ok"] and result["warnings"] == ["the GPU nodes do not confirm architecture h100 (products: NVIDIA-Foo-9000 (2))"]


def test_a_cluster_without_gpu_nodes_warns_of_no_gpu_architecture():
    result = detect.check_cluster([node("cpu", "aws:///x/i-1", instance_type="m5.large")], "aws", "h100")
    assert result["warnings"] == [] and result["errors"] == [
        "none of the 1 nodes has a GPU (no nvidia.com/gpu.product label, nvidia.com/gpu capacity or GPU instance type)"
    ]


@pytest.mark.parametrize("gpus, is_gpu", [(0, False), (1, True), (2, True)])
def test_a_node_with_one_gpu_of_capacity_alone_is_a_gpu_node(gpus, is_gpu):
    assert detect.describe_node(node("n0", gpus=gpus))["is_gpu"] is is_gpu


@pytest.mark.parametrize("nodes, kind", [("nodes", "str"), ({"items": []}, "dict")])
def test_nodes_that_are_no_list_name_their_type(nodes, kind):
    with pytest.raises(ConfigError) as raised:
        detect.check_cluster(nodes, "aws", "h100")
    assert str(raised.value) == "nodes: must be a list of Node objects (the 'resources' of kubernetes.core.k8s_info), got %s" % kind


def test_the_node_config_is_of_named_gpu_nodes_only():
    info = {"kubeletVersion": "v1.34.1", "kernelVersion": "6.8.0-1024-aws"}
    gpu, cpu, nameless = aws_h100(0), node("cpu", "aws:///x/i-1", instance_type="m5.large"), aws_h100(2)
    for obj in (gpu, cpu, nameless):
        obj["status"]["nodeInfo"] = dict(info)
    del nameless["metadata"]["name"]
    grouped = detect.detect_cluster([gpu, cpu, nameless])["node_configs"]
    assert [group["nodes"] for group in grouped] == [[gpu["metadata"]["name"]]] and grouped[0]["config"]["kubelet"] == "v1.34.1"
    # the filter's answer and the result's record hold one shape
    assert recorded_detection(detect.check_cluster([gpu, cpu, nameless], "aws", "h100"))["detected"]["node_configs"] == grouped
    assert "node_config" not in detect.check_cluster([gpu, cpu, nameless], "aws", "h100")


def test_nodes_not_listed_take_the_declared_platform_and_gpu():
    result = detect.check_cluster(None, "aws", "h100", nodes_listed=False)
    assert (result["platform"], result["gpu_architecture"]) == ("aws", "h100")
    missing = detect.check_cluster(None, "", "", nodes_listed=False)
    assert (missing["platform"], missing["gpu_architecture"]) == ("unknown", "unknown")


def test_two_platforms_are_several():
    result = detect.check_cluster([aws_h100(0), gcp_h100(1)], "", "")
    assert result["warnings"] == ["the nodes show several platforms: aws (1), gcp (1)"]


def test_an_undetectable_gpu_says_which_products_the_nodes_show():
    result = detect.check_cluster([node("gpu-0", "aws:///x/i-1", "NVIDIA-Foo-9000", gpus=8)], "", "")
    assert result["errors"] == ["the GPU architecture cannot be detected from the nodes (products: NVIDIA-Foo-9000 (1)); set burnin_gpu_architecture"]


def test_a_node_described_alone_is_the_first_in_its_errors():
    with pytest.raises(ConfigError) as raised:
        detect.describe_node("not a node")
    assert raised.value.field == "nodes[0]"


def test_a_node_known_only_by_gkes_accelerator_label_is_a_gpu_node_whatever_its_model():
    # nvidia-tesla-v100 is GKE's accelerator name of the V100 (v100 sorts after "unknown")
    for accelerator, arch in (("nvidia-tesla-v100", "v100"), ("nvidia-tesla-t4", "t4"), ("nvidia-h100-80gb", "h100")):
        described = detect.describe_node(node("gke-0", labels={"cloud.google.com/gke-accelerator": accelerator}))
        assert described["is_gpu"] and described["gpu_architecture"] == arch


def test_a_gpu_node_without_a_gpu_count_counts_no_gpus():
    bare = node("gpu-0", "aws:///x/i-1", "NVIDIA-H100-80GB-HBM3")
    assert detect.describe_node(bare)["gpus"] == 0
    assert detect.detect_cluster([bare, aws_h100(1)])["gpus"] == 8


@pytest.mark.parametrize(
    "labels, instance_type",
    [
        ({"node.kubernetes.io/instance-type": "p5.48xlarge", "beta.kubernetes.io/instance-type": "g6.xlarge"}, "p5.48xlarge"),
        ({"beta.kubernetes.io/instance-type": "g6.xlarge"}, "g6.xlarge"),
        ({"node.kubernetes.io/instance-type": "", "beta.kubernetes.io/instance-type": "g6.xlarge"}, "g6.xlarge"),
    ],
)
def test_the_ga_instance_type_label_wins_over_the_beta_one(labels, instance_type):
    # Sixth round of issue 47 (docs/mutation.md): `break` -> `continue` let the beta label override the GA one.
    assert detect.describe_node({"metadata": {"name": "n0", "labels": labels}})["instance_type"] == instance_type


# --- issue 47, seventh round: decided (docs/mutation.md), only models of four characters or more are found glued --------
@pytest.mark.parametrize(
    "instance_type, arch",
    [
        # four characters or more, glued inside an instance type (CoreWeave's names): found
        ("gd-8xh100ib-i128", "h100"),
        ("gd-8xl40sib-i128", "l40s"),
        ("xa10gy", "a10g"),
        # three characters, glued: not found (a short name glued to other characters also matches unrelated names,
        # and a wrong GPU is worse than unknown, which makes the user declare it)
        ("gd-8xh20ib-i128", "unknown"),
        ("xa10y", "unknown"),
        ("gd-8xl40ib-i128", "unknown"),
        # the same three-character models as whole words: found
        ("Standard_NV36ads_A10_v5", "a10"),
        ("gd-8x-h20-ib", "h20"),
        ("gd-8x.L40.ib", "l40"),
    ],
)
def test_only_models_of_four_characters_or_more_are_found_glued_in_an_instance_type(instance_type, arch):
    assert detect.gpu_from_instance_type(instance_type) == arch
