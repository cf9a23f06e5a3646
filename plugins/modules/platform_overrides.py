#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: platform_overrides
short_description: Render the cloud/GPU platform overrides of a GPU burn-in
version_added: 0.1.0
description:
  - Renders the collection's C(templates/overrides/workloadrun.yaml) with the C(_lib/) fragments and returns the
    list of platform overrides, as the original burn-in operator's C(BuildOverrides) did.
  - Every entry is returned whatever the platform; each carries a C(when) to match against the cluster's
    platform and GPU architecture. Only O(framework) removes entries at render time.
  - Runs on the controller (action plugin) and never contacts a cluster.
author:
  - gpufleet.burnin maintainers
attributes:
  check_mode:
    support: full
    description: Renders the same list in check mode.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to diff.
  action:
    support: full
    description: Runs on the controller.
options:
  entry_name:
    description: Name of the burn-in entry; prefixes every object the overrides create.
    type: str
    required: true
  nodes:
    description: Number of nodes of the burn-in.
    type: int
    default: 1
  gpus_per_node:
    description: GPUs per node.
    type: int
    required: true
  mlnx_per_node:
    description: Mellanox NICs per node (C(nvidia.com/mlnxnics)); 0 requests none.
    type: int
    default: 0
  enable_mnnvl:
    description: Whether multi-node NVLink is enabled (drives C(NCCL_MNNVL_ENABLE) in fragments).
    type: bool
    default: false
  framework:
    description: Trainer framework; C(mpi) adds mpirun arguments and drops trainer-env entries that would reach only the launcher.
    type: str
    choices: [torch, mpi, exec]
    default: torch
seealso:
  - module: gpufleet.burnin.training_runtime
  - module: gpufleet.burnin.workload_plan
"""

EXAMPLES = r"""
- name: Render the overrides of an MPI burn-in on GB200
  gpufleet.burnin.platform_overrides:
    entry_name: nccl-all-reduce
    nodes: 2
    gpus_per_node: 4
    mlnx_per_node: 8
    enable_mnnvl: true
    framework: mpi
  register: platform

- name: Show the dependencies that apply to AWS clusters
  ansible.builtin.debug:
    msg: "{{ platform.overrides | selectattr('when.platform.equals', 'defined') | selectattr('when.platform.equals', '==', 'aws') }}"
"""

RETURN = r"""
overrides:
  description:
    - The overrides in template order. Each key is present only when set.
  returned: success
  type: list
  elements: dict
  contains:
    when:
      description: Conditions on C(platform), C(gpuArchitecture) (C(equals), C(in), C(notIn)).
      type: dict
      returned: always
    jobTemplate:
      description: Patch merged into the job template (maps merge, named lists merge by name).
      type: dict
      returned: when set
    jobTemplatePatch:
      description: RFC 6902 operations applied after C(jobTemplate).
      type: list
      returned: when set
    dependencies:
      description: Objects to create first (ComputeDomain, ResourceClaimTemplate) and partial TrainingRuntime patches.
      type: list
      returned: when set
    orchestration:
      description: Orchestration changes, for example C(topology.topologyKey).
      type: dict
      returned: when set
    preCommand:
      description: Shell lines run before the trainer command.
      type: list
      returned: when set
    mpiArgs:
      description: mpirun arguments prepended to the MPI arguments.
      type: list
      returned: when set
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.burnin.plugins.module_utils.argspec import platform_overrides_spec


def main():
    module = AnsibleModule(argument_spec=platform_overrides_spec(), supports_check_mode=True)
    module.fail_json(msg="gpufleet.burnin.platform_overrides renders on the controller through its action plugin; "
                         "it cannot run as a module on a host")


if __name__ == "__main__":
    main()
