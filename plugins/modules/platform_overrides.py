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
    list of platform overrides, as the original burn-in operator's C(BuildOverrides) did (the seed).
  - Then, unless O(extended_platforms=false), the platform layer - C(templates/overrides/platforms/*.yaml) in
    file-name order (aws, azure, coreweave, gcp, nebius, oci, onprem), built from C(_lib/platforms/). The seed's
    entries are always first and unchanged; RV(sources) names the template of each entry.
  - Without O(platform) every entry is returned, as the original did; each carries a C(when) to match against the
    cluster's platform, GPU architecture and instance type. Only O(platform), O(framework) and the data (for example
    O(platform_vars)) change the list at render time.
  - Runs on the controller (action plugin) and never contacts a cluster.
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
attributes:
  check_mode:
    support: full
    description: Renders the same list in check mode.
extends_documentation_fragment:
  - gpufleet.burnin.controller
  - gpufleet.burnin.controller.unchanged
  - gpufleet.burnin.render.overrides
options:
  platform:
    description:
      - The cluster's platform, for example V(aws), V(gcp), V(azure), V(oci). Set, only the entries that can match
        a cluster of that platform are returned - the platform layer is that platform's file only
        (C(templates/overrides/platforms/<platform>.yaml), none for platforms without one such as V(togetherai)),
        and the seed's entries are those whose C(when.platform) admits it (every seed entry without one), in the
        seed's order and first. This never changes which entries match the cluster, and the list is much shorter.
      - Unset - every platform's entries. An unknown platform is refused, naming the known ones.
    type: str
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

- name: Only the original's entries (the seed), for a Kubernetes 1.33 cluster
  gpufleet.burnin.platform_overrides:
    entry_name: nccl-all-reduce
    gpus_per_node: 8
    extended_platforms: false
    server_version: v1.33.2
  register: seed

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
      description:
        - Conditions on C(platform), C(gpuArchitecture) and C(instanceType) (C(equals), C(in), C(notIn)).
        - An C(instanceType) condition never matches a cluster whose instance type is unknown.
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
sources:
  description:
    - For each entry of RV(overrides), the template it comes from - C(templates/overrides/workloadrun.yaml) for
      the seed, C(templates/overrides/platforms/<platform>.yaml) for the platform layer.
  returned: success
  type: list
  elements: str
  sample: [templates/overrides/workloadrun.yaml, templates/overrides/platforms/aws.yaml]
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import platform_overrides_spec, refuse_on_host


def main():
    refuse_on_host(platform_overrides_spec(), "gpufleet.burnin.platform_overrides", "renders on the controller")


if __name__ == "__main__":
    main()
