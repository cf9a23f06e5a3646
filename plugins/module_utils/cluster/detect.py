# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Platform and GPU architecture of a cluster, told from its Node objects, and checked against what the inventory
declares.

The original WorkloadRun controller detected both from node labels (``status.detectedPlatform``,
``status.detectedGPUArchitecture``). Here the evidence is, per node:

- platform: ``spec.providerID`` (``aws://``, ``gce://``, ``azure://``, ``oci://``, ``nebius://`` or an ``ocid1.`` OCID), then the
  cloud's own node labels (``eks.amazonaws.com/...``, ``cloud.google.com/...``, ``kubernetes.azure.com/...``,
  ``oci.oraclecloud.com/...``, ``node.coreweave.cloud/...``, ``topology.nebius.com/...``), then the instance type's naming scheme,
  each platform's markers read from the ``detection`` of its catalogue, _lib/platforms/<platform>/platform.yaml;
- GPU architecture: GPU Feature Discovery's ``nvidia.com/gpu.product`` (``NVIDIA-H100-80GB-HBM3`` -> ``h100``),
  then GKE's ``cloud.google.com/gke-accelerator``, then the instance type (``p5.48xlarge`` -> ``h100``).

Some platforms cannot be told from nodes at all (``togetherai``, ``mistral``, ``onprem``, ...): for them only the
GPU is checked. Pure Python, no cluster access: the caller lists the nodes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.platform_catalog import load_platform_catalog

UNKNOWN = "unknown"


def _markers(key):
    """(marker, platform) of every platform's ``detection.KEY`` (_lib/platforms/<platform>/platform.yaml), platforms
    in name order: what a Node says of its platform is data, beside the rest of the platform."""
    catalog = load_platform_catalog()
    return [(marker, platform) for platform in sorted(catalog) for marker in ((catalog[platform].get("detection") or {}).get(key) or [])]


def detectable_platforms():
    """The platforms whose nodes say who they are (a ``detection`` in their catalogue)."""
    catalog = load_platform_catalog()
    return tuple(platform for platform in sorted(catalog) if catalog[platform].get("detection"))


_INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
PRODUCT_LABEL = "nvidia.com/gpu.product"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
GPU_RESOURCE = "nvidia.com/gpu"

# GPU model names as they appear as words in products, accelerators and instance types; longer names first
# where one contains another (GB200 before B200, H200 before H20, L40S before L40 before L4).
_MODELS = (
    ("GB300", "gb300"),
    ("GB200", "gb200"),
    ("GH200", "gh200"),
    ("B300", "b300"),
    ("B200", "b200"),
    ("H200", "h200"),
    ("H100", "h100"),
    ("H800", "h800"),
    ("H20", "h20"),
    ("A100", "a100"),
    ("A800", "a800"),
    ("A10G", "a10g"),
    ("A10", "a10"),
    ("L40S", "l40s"),
    ("L40", "l40"),
    ("L4", "l4"),
    ("V100", "v100"),
    ("T4", "t4"),
)
_MODEL_WORDS = dict(_MODELS)
_RTX_PRO_6000 = re.compile(r"RTX[-_ ]?PRO[-_ ]?6000")

# Instance types whose name does not carry the GPU model: every such family of a model in _MODELS, of each cloud whose
# instance types the catalogues' detection tells (_lib/platforms/*/platform.yaml). A family left out makes its nodes
# without GFD labels GPU nodes of no architecture (tests/fixtures/real/nodes: the AKS Standard_NC6s_v3 node).
_INSTANCE_TYPES = (
    (re.compile(r"^p3(dn)?\."), "v100"),
    (re.compile(r"^g4dn\."), "t4"),
    (re.compile(r"^p4de?\."), "a100"),
    (re.compile(r"^p5\."), "h100"),
    (re.compile(r"^p5en?\."), "h200"),
    (re.compile(r"^p6-b200\."), "b200"),
    (re.compile(r"^p6-b300\."), "b300"),
    (re.compile(r"^p6e-gb200\."), "gb200"),
    (re.compile(r"^p6e-gb300\."), "gb300"),
    (re.compile(r"^g6e\."), "l40s"),
    (re.compile(r"^g6\."), "l4"),
    (re.compile(r"^g5\."), "a10g"),
    (re.compile(r"^a2-"), "a100"),
    (re.compile(r"^a3-(highgpu|megagpu|edgegpu)-"), "h100"),
    (re.compile(r"^a3-ultragpu-"), "h200"),
    (re.compile(r"^a4-highgpu-"), "b200"),
    (re.compile(r"^a4x-highgpu-"), "gb200"),
    (re.compile(r"^a4x-max(gpu)?-"), "gb300"),
    (re.compile(r"^g2-"), "l4"),
    (re.compile(r"^g4-"), "rtxpro6000"),
    (re.compile(r"^Standard_NC\d+r?s_v3\Z"), "v100"),
    (re.compile(r"^Standard_ND40rs_v2\Z"), "v100"),
    (re.compile(r"^Standard_ND96asr_v4\Z"), "a100"),
    (re.compile(r"^BM\.GPU4\.8\Z"), "a100"),
    (re.compile(r"^BM\.GPU\.B4\.8\Z"), "a100"),
    (re.compile(r"^(BM|VM)\.GPU3\.\d+\Z"), "v100"),
)
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def _text(value):
    return value if isinstance(value, str) else ""


def gpu_from_words(text):
    """The first GPU model named as a word of ``text`` (split on any non-alphanumeric), or None."""
    text = _text(text).upper()
    if _RTX_PRO_6000.search(text):
        return "rtxpro6000"
    for word in _WORD_SPLIT.split(text):
        if word in _MODEL_WORDS:
            return _MODEL_WORDS[word]
    return None


def gpu_from_product(product):
    """GPU architecture from ``nvidia.com/gpu.product`` (``NVIDIA-H100-80GB-HBM3`` -> ``h100``), else ``unknown``."""
    return gpu_from_words(product) or UNKNOWN


def gpu_from_instance_type(instance_type):
    """GPU architecture from an instance / machine type / shape (``p5.48xlarge`` -> ``h100``), else ``unknown``."""
    instance_type = _text(instance_type)
    for pattern, arch in _INSTANCE_TYPES:
        if pattern.search(instance_type):
            return arch
    found = gpu_from_words(instance_type)
    if found:
        return found
    # Names that glue the model to other characters, e.g. CoreWeave's gd-8xh100ib-i128.
    lowered = instance_type.lower()
    for word, arch in _MODELS:
        if len(word) > 3 and word.lower() in lowered:
            return arch
    return UNKNOWN


def platform_from_provider_id(provider_id):
    """Platform from ``spec.providerID`` (``aws:///us-east-1a/i-0...`` -> ``aws``), else ``unknown``."""
    provider_id = _text(provider_id)
    for prefix, platform in _markers("provider_ids"):
        # A scheme (aws://) is compared without case, as URL schemes are; another prefix (an OCID's ocid1.) as it is.
        if (provider_id.lower() if prefix.endswith("://") else provider_id).startswith(prefix):
            return platform
    return UNKNOWN


def platform_from_labels(labels):
    prefixes = _markers("label_prefixes")
    for key in sorted(labels or {}):
        for prefix, platform in prefixes:
            if key.startswith(prefix):
                return platform
    return UNKNOWN


def platform_from_instance_type(instance_type):
    instance_type = _text(instance_type)
    for pattern, platform in _markers("instance_types"):
        if pattern.search(instance_type):
            return platform
    return UNKNOWN


def _quantity(value):
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def node_evidence(node):
    """What detection (describe_node) and the plan's discovery of NIC resources (rendering/platform_catalog.py) read
    of a Node object: name, labels, providerID, capacity and allocatable. cluster_detect keeps only this: the
    controller holds every cluster's result, and a whole Node object is kilobytes, times each cluster's nodes."""
    if not isinstance(node, dict):
        return node
    metadata, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    kept = {
        "metadata": {key: metadata[key] for key in ("name", "labels") if key in metadata},
        "status": {key: status[key] for key in ("capacity", "allocatable") if key in status},
    }
    # The versions the drift check compares (judging/drift.py node_config), a few short strings.
    info = status.get("nodeInfo")
    if isinstance(info, dict):
        kept["status"]["nodeInfo"] = dict((key, info[key]) for key in ("kubeletVersion", "kernelVersion", "osImage", "containerRuntimeVersion") if key in info)
    if "providerID" in spec:
        kept["spec"] = {"providerID": spec["providerID"]}
    return kept


def describe_node(node, index=0):
    """What one Node object says: name, platform, gpu_architecture, gpu_product, instance_type, gpus, is_gpu."""
    if not isinstance(node, dict):
        raise ConfigError("nodes[%d]" % index, "must be a Node object (a mapping), got %r" % (type(node).__name__,))
    metadata = node.get("metadata") or {}
    labels = metadata.get("labels") or {}
    if not isinstance(labels, dict):
        raise ConfigError("nodes[%d].metadata.labels" % index, "must be a mapping")
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    instance_type = ""
    for key in _INSTANCE_TYPE_LABELS:
        if labels.get(key):
            instance_type = _text(labels[key])
            break
    platform = platform_from_provider_id(spec.get("providerID"))
    if platform == UNKNOWN:
        platform = platform_from_labels(labels)
    if platform == UNKNOWN:
        platform = platform_from_instance_type(instance_type)
    product = _text(labels.get(PRODUCT_LABEL))
    arch = gpu_from_product(product)
    if arch == UNKNOWN:
        arch = gpu_from_words(labels.get(GKE_ACCELERATOR_LABEL)) or UNKNOWN
    if arch == UNKNOWN:
        arch = gpu_from_instance_type(instance_type)
    gpus = _quantity((status.get("capacity") or {}).get(GPU_RESOURCE)) or _quantity(labels.get("nvidia.com/gpu.count"))
    is_gpu = bool(product) or gpus > 0 or arch != UNKNOWN or _text(labels.get("nvidia.com/gpu.present")) == "true"
    return {
        "name": _text(metadata.get("name")),
        "platform": platform,
        "gpu_architecture": arch if is_gpu else UNKNOWN,
        "gpu_product": product,
        "instance_type": instance_type,
        "gpus": gpus,
        "is_gpu": is_gpu,
    }


def _count(values):
    counts = {}
    for value in values:
        if value:
            counts[value] = counts.get(value, 0) + 1
    return counts


def _most_common(counts):
    known = dict((key, value) for key, value in counts.items() if key != UNKNOWN)
    if not known:
        return UNKNOWN
    # Most nodes first, then the name, so the answer never depends on node order.
    return sorted(known.items(), key=lambda item: (-item[1], item[0]))[0][0]


def detect_cluster(nodes):
    """Summarise the Node objects of one cluster.

    Returns platform and gpu_architecture (the most common known value, or ``unknown``), the counts behind them
    (platforms over all nodes, gpu_architectures, gpu_products and instance_types over GPU nodes), and the
    numbers of nodes, GPU nodes and GPUs.
    """
    if nodes is None:
        nodes = []
    if not isinstance(nodes, list):
        raise ConfigError("nodes", "must be a list of Node objects (the 'resources' of kubernetes.core.k8s_info), got %s" % type(nodes).__name__)
    described = [describe_node(node, index) for index, node in enumerate(nodes)]
    gpu_nodes = [node for node in described if node["is_gpu"]]
    # What each GPU node runs (judging/drift.py): compared across the SKU's nodes of every cluster in the report.
    configs = dict(
        (described[index]["name"], drift.node_config(node)) for index, node in enumerate(nodes) if described[index]["is_gpu"] and described[index]["name"]
    )
    platforms = _count(node["platform"] for node in described)
    architectures = _count(node["gpu_architecture"] for node in gpu_nodes)
    return {
        "platform": _most_common(platforms),
        "gpu_architecture": _most_common(architectures),
        "platforms": platforms,
        "gpu_architectures": architectures,
        "gpu_products": _count(node["gpu_product"] for node in gpu_nodes),
        "instance_types": _count(node["instance_type"] for node in gpu_nodes),
        "nodes": len(described),
        "gpu_nodes": len(gpu_nodes),
        "gpus": sum(node["gpus"] for node in gpu_nodes),
        # Each config once with its nodes, as a cluster's result keeps them (drift.configs_of reads them per node).
        "node_configs": drift.grouped_configs(dict((name, config) for name, config in configs.items() if config)),
    }


def _declared(field, value):
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ConfigError(field, "must be a string (empty to detect it from the nodes), got %r" % (value,))
    return value.strip()


def _counts_text(counts):
    return ", ".join("%s (%d)" % (key, value) for key, value in sorted(counts.items())) or "none"


def check_cluster(nodes, platform=None, gpu_architecture=None, nodes_listed=True):
    """Detect the platform and GPU of a cluster and check them against the declared ones.

    ``platform``/``gpu_architecture``: what the inventory declares; empty to take the detected value.
    ``nodes_listed``: False when the nodes could not be listed (e.g. a namespace-scoped token); then the declared
    values are used unchecked, and a missing one is an error.

    Returns the detection of :func:`detect_cluster` plus: ``platform`` and ``gpu_architecture`` (the values to
    use), ``declared_platform``, ``declared_gpu_architecture``, ``detected_platform``,
    ``detected_gpu_architecture``, ``platform_source`` and ``gpu_architecture_source`` (declared, detected or
    unchecked), ``ok``, ``errors`` and ``warnings`` (lists of sentences) and ``message`` (all errors in one line).
    """
    declared_platform = _declared("platform", platform)
    declared_gpu = _declared("gpu_architecture", gpu_architecture)
    detection = detect_cluster(nodes if nodes_listed else [])
    errors, warnings = [], []
    result = dict(
        detection,
        declared_platform=declared_platform,
        declared_gpu_architecture=declared_gpu,
        detected_platform=detection["platform"],
        detected_gpu_architecture=detection["gpu_architecture"],
    )

    if not nodes_listed:
        for field, value in (("burnin_platform", declared_platform), ("burnin_gpu_architecture", declared_gpu)):
            if not value:
                errors.append("%s is not set and the nodes cannot be listed to detect it; set it in the inventory" % field)
        warnings.append("the nodes could not be listed, so the declared platform and GPU are used unchecked")
        result.update(
            platform=declared_platform or UNKNOWN, gpu_architecture=declared_gpu or UNKNOWN, platform_source="unchecked", gpu_architecture_source="unchecked"
        )
        return _verdict(result, errors, warnings)

    if detection["nodes"] == 0:
        errors.append("the cluster has no nodes")
    elif detection["gpu_nodes"] == 0:
        errors.append("none of the %d nodes has a GPU (no nvidia.com/gpu.product label, nvidia.com/gpu capacity or GPU instance " "type)" % detection["nodes"])

    detected_platform = detection["platform"]
    if len([key for key in detection["platforms"] if key != UNKNOWN]) > 1:
        warnings.append("the nodes show several platforms: %s" % _counts_text(detection["platforms"]))
    if not declared_platform:
        result.update(platform=detected_platform, platform_source="detected")
        if detected_platform == UNKNOWN and detection["nodes"]:
            errors.append("the platform cannot be detected from the nodes (no known providerID, cloud label or instance type); set burnin_platform")
    else:
        result.update(platform=declared_platform, platform_source="declared")
        if declared_platform not in detectable_platforms():
            # togetherai, mistral, onprem...: nothing on a node says so; only the GPU is checked.
            pass
        elif detected_platform == UNKNOWN:
            if detection["nodes"]:
                warnings.append("the nodes do not confirm platform %s (no providerID, cloud label or instance type of it)" % declared_platform)
        elif declared_platform not in detection["platforms"]:
            errors.append("platform mismatch: the group declares %s but the nodes are %s" % (declared_platform, _counts_text(detection["platforms"])))

    detected_gpu = detection["gpu_architecture"]
    known_gpus = dict((key, value) for key, value in detection["gpu_architectures"].items() if key != UNKNOWN)
    if len(known_gpus) > 1:
        warnings.append("the GPU nodes have several architectures: %s" % _counts_text(detection["gpu_architectures"]))
    if not declared_gpu:
        result.update(gpu_architecture=detected_gpu, gpu_architecture_source="detected")
        if detected_gpu == UNKNOWN and detection["gpu_nodes"]:
            errors.append(
                "the GPU architecture cannot be detected from the nodes (products: %s); set burnin_gpu_architecture" % _counts_text(detection["gpu_products"])
            )
    else:
        result.update(gpu_architecture=declared_gpu, gpu_architecture_source="declared")
        if not known_gpus:
            if detection["gpu_nodes"]:
                warnings.append("the GPU nodes do not confirm architecture %s (products: %s)" % (declared_gpu, _counts_text(detection["gpu_products"])))
        elif declared_gpu not in known_gpus:
            errors.append(
                "GPU mismatch: the group declares %s but the GPU nodes are %s (products: %s)"
                % (declared_gpu, _counts_text(detection["gpu_architectures"]), _counts_text(detection["gpu_products"]))
            )
    return _verdict(result, errors, warnings)


def _verdict(result, errors, warnings):
    result.update(ok=not errors, errors=errors, warnings=warnings, message="; ".join(errors))
    return result


NOT_CHECKED = "burnin_check_nodes is false: the declared platform and GPU are used unchecked"
