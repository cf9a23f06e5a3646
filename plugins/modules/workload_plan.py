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
    cluster's O(platform), O(gpu_architecture) and O(framework), and applies them as the original WorkloadRun
    controller did.
  - C(jobTemplate) patches merge (maps recursively, named lists by C(name), other lists replaced), then
    C(jobTemplatePatch) (RFC 6902) runs; runtime patches merge into the runtime; other dependencies
    (ComputeDomain, ResourceClaimTemplate) come first; C(mpiArgs) are prepended to the MPI arguments;
    C(preCommand) lines wrap the trainer command in C(/bin/bash -c) with C(exec).
  - Returns the objects in apply order, ending with a TrainJob unique to O(run_id). Never contacts a cluster.
author:
  - gpufleet.burnin maintainers
attributes:
  check_mode:
    support: full
    description: Plans the same objects in check mode.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to diff.
  action:
    support: full
    description: Runs on the controller.
options:
  entry_name:
    description: Name of the burn-in entry; prefixes the runtime and its dependencies.
    type: str
    required: true
  image:
    description: Container image.
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
  mlnx_per_node:
    description: Mellanox NICs per node; 0 requests none.
    type: int
    default: 0
  enable_mnnvl:
    description: Whether multi-node NVLink is enabled.
    type: bool
    default: false
  env:
    description: User env, merged over the base NCCL env (user wins by name).
    type: list
    elements: dict
    default: []
  volumes:
    description: Extra pod volumes.
    type: list
    elements: dict
    default: []
  volume_mounts:
    description: Extra container mounts.
    type: list
    elements: dict
    default: []
  init_containers:
    description: Init containers of the worker pods.
    type: list
    elements: dict
    default: []
  resources:
    description: Resources of the GPU container; the GPUs are added unless named.
    type: dict
  image_pull_secrets:
    description: Pull secrets, set on every pod through the TrainJob's C(runtimePatches).
    type: list
    elements: dict
    default: []
  trainer_version:
    description: Kubeflow Trainer version targeted.
    type: str
    default: v2.3
  namespace:
    description: Namespace of every object.
    type: str
    required: true
  run_id:
    description: Identifier of this run; the TrainJob is C(<entry_name>-<run_id>) and carries it as a label.
    type: str
    required: true
  platform:
    description: The cluster's platform, for example C(aws), C(gcp), C(azure), C(togetherai), C(mistral).
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
    description: User overrides, same shape as the platform ones, applied after them.
    type: list
    elements: dict
    default: []
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
  description: The overrides that matched, with C(origin) (platform or user), 1-based C(position) and C(when).
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
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.burnin.plugins.module_utils.argspec import workload_plan_spec


def main():
    module = AnsibleModule(argument_spec=workload_plan_spec(), supports_check_mode=True)
    module.fail_json(msg="gpufleet.burnin.workload_plan renders on the controller through its action plugin; "
                         "it cannot run as a module on a host")


if __name__ == "__main__":
    main()
