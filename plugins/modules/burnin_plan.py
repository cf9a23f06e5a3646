#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_plan
short_description: The role's plan of one cluster from its burnin_* variables, in one step
version_added: 0.2.0
description:
  - The plan step of the role C(gpufleet.burnin.burnin) as one call. From the role's checked variables
    (M(gpufleet.burnin.burnin_start)'s C(variables)), the cluster's platform and GPU architecture (declared or
    detected) and what detection read (O(cluster)), it resolves the GPUs and NICs per node (the GPU defaults unless
    C(burnin_gpus_per_node), C(burnin_mlnx_per_node)), renders the workload of the catalogue (C(burnin_workload),
    C(burnin_workload_params), C(burnin_image)), takes C(burnin_trainer) and C(burnin_env) over the workload's,
    plans every object as M(gpufleet.burnin.workload_plan) does and adds C(burnin_trainjob_annotations) to the
    TrainJob.
  - The variables are checked again (the role's checks, as M(gpufleet.burnin.burnin_start) does); a bad one fails the
    task with a message naming it. Runs on the controller and never contacts a cluster.
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - gpufleet.burnin.controller
  - gpufleet.burnin.controller.unchanged
attributes:
  check_mode:
    support: full
    description: Renders the same in check mode.
options:
  variables:
    description: The role's C(burnin_*) variables, as M(gpufleet.burnin.burnin_start) returns them checked.
    type: dict
    required: true
  platform:
    description: The cluster's platform (declared or detected), for example C(aws).
    type: str
    required: true
  gpu_architecture:
    description: The cluster's GPU architecture (declared or detected), for example C(h100).
    type: str
    required: true
  run_id:
    description: The run id (a DNS label).
    type: str
    required: true
  namespace:
    description: The namespace of the run.
    type: str
    required: true
  cluster:
    description:
      - What M(gpufleet.burnin.cluster_detect) read, C(nodes), C(kubernetes_version) and C(dra_api_versions); a set
        C(burnin_server_version) or C(burnin_rct_api_version) wins over it. Empty plans without the cluster.
    type: dict
    default: {}
  stage:
    description:
      - The stage to plan (the role's C(burnin_stages)). C(fleet) plans C(burnin_workload) on C(burnin_nodes) nodes
        under the run's TrainJob name; a node stage (C(node), C(dcgm), C(gpu)) plans its catalogue workload
        (C(nccl-all-reduce-node), C(dcgm-diag), C(gpu-burn)) on every GPU node O(cluster) lists (C(burnin_nodes) when none are
        listed), one pod per node, with its own runtime, under C(<entry>-<run id>-<stage>); its RV(record) changes only
        the result's C(stage).
    type: str
    choices: [node, fleet, dcgm, gpu]
    default: fleet
  attempt:
    description: The attempt of the stage (C(burnin_repeats)); attempts after the first add C(-<attempt>) to the TrainJob's name.
    type: int
    default: 1
seealso:
  - module: gpufleet.burnin.workload_plan
  - module: gpufleet.burnin.cluster_detect
"""

EXAMPLES = r"""
- name: Plan the burn-in of this cluster
  gpufleet.burnin.burnin_plan:
    variables: "{{ checked.vars }}"
    platform: aws
    gpu_architecture: h100
    run_id: 20261201-101500
    namespace: gpufleet-burnin
  register: plan
"""

RETURN = r"""
objects:
  description: Every object in apply order (dependencies, runtime, TrainJob with the annotations).
  returned: success
  type: list
  elements: dict
record:
  description:
    - The fields of the cluster's result, C(stage), C(trainjob), C(workload), C(framework), C(image), C(collective)
      (what the verdict judges; empty for a custom trainer), C(gpus_per_node), C(mlnx_per_node), C(matched_overrides),
      C(topology_key), C(instance_type), C(platform_data), C(objects) (kind/name of each).
  returned: success
  type: dict
stage:
  description:
    - What the stage's attempt runs, C(stage), C(attempt), C(trainjob), C(workload), C(collective), C(parser) (the
      workload's C(results), C(nccl-tests) by default), C(nodes), C(gpus_per_node), C(instance_type), C(objects) and
      C(note) (how the nodes were counted, when they could not be).
  returned: success
  type: dict
pre_command:
  description: The matched overrides' pre-command, as M(gpufleet.burnin.workload_plan) returns it.
  returned: success
  type: raw
mpi_args:
  description: The matched overrides' mpirun arguments.
  returned: success
  type: raw
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_plan_spec, refuse_on_host


def main():
    refuse_on_host(burnin_plan_spec(), "gpufleet.burnin.burnin_plan", what="renders on the controller")


if __name__ == "__main__":
    main()
