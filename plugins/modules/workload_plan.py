#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: workload_plan
short_description: Plan every object of one GPU burn-in on one cluster
version_added: 0.1.0
description:
  - Renders the TrainingRuntime and the platform overrides, keeps the overrides whose C(when) matches the
    cluster's O(platform), O(gpu_architecture), O(instance_type) and O(framework), and applies them as the original
    WorkloadRun controller did.
  - The overrides are the seed (C(templates/overrides/workloadrun.yaml), the original's) and, unless
    O(extended_platforms=false), the platform layer of the cluster's platform
    (C(templates/overrides/platforms/<platform>.yaml)), which refines the seed per instance type - see
    C(docs/platforms/).
  - Instance type, EFA devices and the RDMA resource come from the first source that has them - the options,
    O(cluster_nodes), or the platform's table in C(_lib/platforms/<platform>/platform.yaml).
  - C(jobTemplate) patches merge (maps recursively, named lists by C(name), other lists replaced), then
    C(jobTemplatePatch) (RFC 6902) runs; runtime patches merge into the runtime; other dependencies
    (ComputeDomain, ResourceClaimTemplate) come first; C(mpiArgs) are prepended to the MPI arguments;
    C(preCommand) lines wrap the trainer command in C(/bin/bash -c) with C(exec).
  - Returns the objects in apply order, ending with a TrainJob unique to O(run_id). Never contacts a cluster.
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
attributes:
  check_mode:
    support: full
    description: Plans the same objects in check mode.
extends_documentation_fragment:
  - gpufleet.burnin.controller
  - gpufleet.burnin.controller.unchanged
  - gpufleet.burnin.render.runtime
  - gpufleet.burnin.render.overrides
options:
  entry_name:
    description: Name of the burn-in entry; prefixes the runtime and its dependencies.
    type: str
    required: true
  framework:
    description: Trainer framework.
    type: str
    choices: [torch, mpi, exec]
    default: torch
  nodes:
    description: Number of nodes.
    type: int
    default: 1
  gpus_per_node:
    description: GPUs per node.
    type: int
    required: true
  namespace:
    description: Namespace of every object.
    type: str
    required: true
  run_id:
    description: Identifier of this run; the TrainJob is C(<entry_name>-<run_id>) and carries it as a label.
    type: str
    required: true
  platform:
    description:
      - The cluster's platform, for example C(aws), C(gcp), C(azure), C(togetherai), C(mistral); one the collection knows
        (C(_lib/platforms/), C(_lib/gpu-defaults.yaml), the seed's conditions) or C(unknown).
    type: str
    required: true
  gpu_architecture:
    description: The cluster's GPU architecture, for example C(h100), C(gb200), C(gb300).
    type: str
    required: true
  trainer:
    description:
      - What the trainer runs. torch - C(script) or C(module), C(args). mpi - C(binary), C(args), C(mpi_args),
        C(mpirun_path) (default C(mpirun)), C(timeout) (seconds, default 3600). exec - C(command), C(args).
    type: dict
    required: true
  overrides:
    description:
      - User overrides, same shape as the platform ones, applied after them.
      - A C(null) value in a C(jobTemplate) or a runtime patch deletes that key (RFC 7386).
      - Each item is checked before anything is rendered - its keys, C(when) (C(equals) a string, C(in) and C(notIn) lists
        of strings, the whole C(when) even when an earlier condition does not match), C(jobTemplatePatch) as RFC 6902,
        C(dependencies) as objects; an error names the path, for example C(overrides[2].jobTemplatePatch[0].op).
    type: list
    elements: dict
    default: []
  instance_type:
    description:
      - The cluster's instance / machine type / shape (for example V(p5en.48xlarge), V(a3-highgpu-8g),
        V(Standard_ND96isr_H100_v5), V(BM.GPU.H100.8)), matched by the C(instanceType) condition of overrides.
      - Unset - the most common instance type of the GPU nodes in O(cluster_nodes), else the platform's default
        for O(gpu_architecture) (the C(default) shapes of C(_lib/platforms/<platform>/platform.yaml)), else unknown;
        an entry with an C(instanceType) condition never matches an unknown instance type.
    type: str
  cluster_nodes:
    description:
      - The cluster's Node objects (for example the C(resources) of C(kubernetes.core.k8s_info) with C(kind=Node)),
        read for what is not given - O(instance_type) (label C(node.kubernetes.io/instance-type), or the platform's
        own label), O(efa_per_node) (allocatable C(vpc.amazonaws.com/efa)) and O(rdma_resource) / O(rdma_per_node)
        (the first of the platform's NIC resources the GPU nodes offer; shared ones count 1).
    type: list
    elements: dict
seealso:
  - module: gpufleet.burnin.training_runtime
  - module: gpufleet.burnin.platform_overrides
"""

EXAMPLES = r"""
- name: Plan an nccl-tests all-reduce on this cluster
  gpufleet.burnin.workload_plan:
    entry_name: nccl-all-reduce
    namespace: burnin
    run_id: "20261130t0700"
    image: nvcr.io/nvidia/pytorch:26.01-py3
    framework: mpi
    nodes: 2
    gpus_per_node: 8
    platform: aws
    gpu_architecture: h100
    trainer:
      binary: /usr/local/bin/all_reduce_perf
      args: [-b, 8, -e, 8G, -f, "2"]
  register: plan

- name: Read the nodes (instance type, EFA / RDMA allocatable) and the server version
  kubernetes.core.k8s_info:
    kind: Node
  register: nodes

- name: Plan on a GKE A3 High cluster with its own network names
  gpufleet.burnin.workload_plan:
    entry_name: nccl-all-reduce
    namespace: burnin
    run_id: "20261130t0700"
    image: nvcr.io/nvidia/pytorch:26.01-py3
    framework: mpi
    nodes: 2
    gpus_per_node: 8
    platform: gcp
    gpu_architecture: h100
    cluster_nodes: "{{ nodes.resources }}"
    server_version: v1.33.4
    platform_vars:
      gcp_tcpx_networks: [a3-net-1, a3-net-2, a3-net-3, a3-net-4]
    trainer:
      binary: /usr/local/bin/all_reduce_perf
  register: plan_gcp

- name: Apply it
  kubernetes.core.k8s:
    definition: "{{ plan.objects }}"
    apply: true
    server_side_apply:
      field_manager: gpufleet.burnin
"""

RETURN = r"""
objects:
  description: Objects to apply, in order - dependencies, the TrainingRuntime, the TrainJob.
  returned: success
  type: list
  elements: dict
trainjob_name:
  description: Name of the TrainJob.
  returned: success
  type: str
  sample: nccl-all-reduce-20261130t0700
matched:
  description:
    - The overrides that matched, with C(origin) (platform or user), C(source) (the template, or C(overrides) for
      the user's), 1-based C(position) within that source, and C(when).
  returned: success
  type: list
  elements: dict
topology_key:
  description: Node label of the rack or NVLink domain, when an override sets one.
  returned: success
  type: str
orchestration:
  description: Merged orchestration overrides.
  returned: success
  type: dict
pre_command:
  description: Shell lines run before the trainer command.
  returned: success
  type: list
  elements: str
mpi_args:
  description: mpirun arguments added by overrides.
  returned: success
  type: list
  elements: str
instance_type:
  description: The instance type matched against C(instanceType) conditions (given, from the nodes, or the default).
  returned: success
  type: str
  sample: p5.48xlarge
platform_data:
  description:
    - What the platform layer used - C(instance_type) and C(instance_type_source) (given, nodes, default),
      C(efa_per_node), C(rdma_resource), C(rdma_per_node) and C(nic_source) (given, nodes, or null for the
      tables), C(rct_api_version), C(compute_domain_num_nodes), C(platform_vars).
  returned: success
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import workload_plan_spec, refuse_on_host


def main():
    refuse_on_host(workload_plan_spec(), "gpufleet.burnin.workload_plan", "renders on the controller")


if __name__ == "__main__":
    main()
