# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: detect_platform
short_description: Detect a cluster's platform and GPU architecture from its nodes and check the declared ones
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Reads each Node's C(spec.providerID) (C(aws://), C(gce://), C(azure://), C(oci://), C(nebius://) or an C(ocid1.) OCID), the clouds'
    node labels and the instance type to tell the platform, and GPU Feature Discovery's C(nvidia.com/gpu.product)
    (C(NVIDIA-H100-80GB-HBM3) is C(h100), C(NVIDIA-GB200) is C(gb200)), GKE's C(cloud.google.com/gke-accelerator) or
    the instance type (C(p5.48xlarge) is C(h100)) to tell the GPU architecture.
  - A declared value is checked against the nodes; a mismatch is an error. An empty one is replaced by the detected
    value. Platforms nothing on a node names (C(togetherai), C(mistral), C(onprem), ...) are not checked; only
    their GPU is.
  - The filter never fails on a mismatch; it returns C(ok=false) with the reasons, so the caller decides.
positional: platform, gpu_architecture
options:
  _input:
    description: The Node objects, for example the C(resources) of M(kubernetes.core.k8s_info) with C(kind=Node).
    type: list
    elements: dict
    required: true
  platform:
    description: The declared platform (C(burnin_platform)); empty to detect it.
    type: str
    default: ""
  gpu_architecture:
    description: The declared GPU architecture (C(burnin_gpu_architecture)); empty to detect it.
    type: str
    default: ""
  nodes_listed:
    description: False when the nodes could not be listed (a namespace-scoped token); the declared values are then used
      unchecked and must both be set.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: List the nodes
  kubernetes.core.k8s_info:
    kind: Node
  register: nodes

- name: Check the declared platform and GPU
  ansible.builtin.set_fact:
    detection: "{{ nodes.resources | gpufleet.burnin.detect_platform(platform='aws', gpu_architecture='h100') }}"

- name: Fail on a mismatch
  ansible.builtin.fail:
    msg: "{{ detection.message }}"
  when: not detection.ok
"""

RETURN = r"""
_value:
  description: The verdict.
  type: dict
  contains:
    ok:
      description: Whether the declared values match the nodes and nothing needed is missing.
      type: bool
    platform:
      description: The platform to use, declared or detected.
      type: str
      sample: aws
    gpu_architecture:
      description: The GPU architecture to use, declared or detected.
      type: str
      sample: h100
    detected_platform:
      description: The most common platform of the nodes, or C(unknown).
      type: str
    detected_gpu_architecture:
      description: The most common architecture of the GPU nodes, or C(unknown).
      type: str
    platform_source:
      description: C(declared), C(detected) or C(unchecked).
      type: str
    gpu_architecture_source:
      description: C(declared), C(detected) or C(unchecked).
      type: str
    errors:
      description: Why the check failed, one sentence each.
      type: list
      elements: str
    warnings:
      description: What could not be confirmed.
      type: list
      elements: str
    message:
      description: The errors in one line.
      type: str
    nodes:
      description: Number of nodes.
      type: int
    gpu_nodes:
      description: Number of GPU nodes.
      type: int
    gpus:
      description: GPUs in the GPU nodes' capacity.
      type: int
    platforms:
      description: Nodes per detected platform.
      type: dict
    gpu_architectures:
      description: GPU nodes per detected architecture.
      type: dict
    gpu_products:
      description: GPU nodes per C(nvidia.com/gpu.product).
      type: dict
    instance_types:
      description: GPU nodes per instance type.
      type: dict
    node_configs:
      description:
        - What the GPU nodes run (kubelet, kernel, OS image, container runtime, driver and CUDA versions, ...), each
          configuration once with the names of the nodes that run it, in the order of their first node.
        - The drift between a SKU's nodes is judged on it (docs/verdicts.md).
      type: list
      elements: dict
      contains:
        config:
          description: The configuration, key to version.
          type: dict
        nodes:
          description: The nodes that run it, sorted.
          type: list
          elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def detect_platform_filter(nodes, platform="", gpu_architecture="", nodes_listed=True):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.detect import check_cluster

    if not isinstance(nodes_listed, bool):
        raise AnsibleFilterError("gpufleet.burnin.detect_platform: nodes_listed: must be a boolean, got %r" % (nodes_listed,))
    try:
        return check_cluster(nodes, platform=platform, gpu_architecture=gpu_architecture, nodes_listed=nodes_listed)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.detect_platform: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"detect_platform": detect_platform_filter}
