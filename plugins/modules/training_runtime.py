#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: training_runtime
short_description: Render a Kubeflow Trainer TrainingRuntime for a GPU burn-in
version_added: 0.1.0
description:
  - Renders a C(trainer.kubeflow.org/v1alpha1) C(TrainingRuntime) for the torch, MPI or exec framework, as the
    original burn-in operator's C(BuildTorchRuntime), C(BuildMPIRuntime) and C(BuildExecRuntime) did.
  - Runs on the controller (action plugin) and never contacts a cluster. Apply the result with
    M(kubernetes.core.k8s).
  - "Deliberate deviations from the original: no C(mlPolicy.torch.numProcPerNode) for Trainer v2.2 and later;
    the MPI runtime carries O(env), volumes, mounts and init containers; no 800Gi memory default (GPUs only);
    the MPI worker installs sshd only when the image lacks it. See the collection README."
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
attributes:
  check_mode:
    support: full
    description: Renders the same object in check mode.
extends_documentation_fragment:
  - gpufleet.burnin.controller
  - gpufleet.burnin.controller.unchanged
  - gpufleet.burnin.render.runtime
options:
  entry_name:
    description:
      - Name of the burn-in entry; the runtime is called C(<entry_name>-runtime) and labelled C(app=<entry_name>).
      - A DNS label of at most 52 characters.
    type: str
    required: true
  framework:
    description:
      - C(torch) and C(exec) give a torch mlPolicy with one C(node) replicated job.
      - C(mpi) gives an MPI mlPolicy with C(node) workers running sshd and a C(launcher) that depends on them.
    type: str
    choices: [torch, mpi, exec]
    default: torch
  nodes:
    description: Number of nodes (C(mlPolicy.numNodes) for torch and exec; MPI takes it from the TrainJob).
    type: int
    default: 1
  gpus_per_node:
    description: GPUs requested per node (C(nvidia.com/gpu)); 0 requests none.
    type: int
    required: true
seealso:
  - module: gpufleet.burnin.platform_overrides
  - module: kubernetes.core.k8s
"""

EXAMPLES = r"""
- name: Render an MPI runtime for nccl-tests
  gpufleet.burnin.training_runtime:
    entry_name: nccl-all-reduce
    image: nvcr.io/nvidia/pytorch:26.01-py3
    framework: mpi
    nodes: 2
    gpus_per_node: 8
    env: "{{ false | gpufleet.burnin.base_nccl_env | gpufleet.burnin.merge_env([{'name': 'NCCL_DEBUG', 'value': 'WARN'}]) }}"
  register: rendered

- name: Apply it
  kubernetes.core.k8s:
    namespace: burnin
    definition: "{{ rendered.runtime }}"
    apply: true
    server_side_apply:
      field_manager: gpufleet.burnin
"""

RETURN = r"""
runtime:
  description: The C(TrainingRuntime) object.
  returned: success
  type: dict
  sample:
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: nccl-all-reduce-runtime
      labels:
        app: nccl-all-reduce
        trainer.kubeflow.org/framework: mpi
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import training_runtime_spec, refuse_on_host


def main():
    refuse_on_host(training_runtime_spec(), "gpufleet.burnin.training_runtime", "renders on the controller")


if __name__ == "__main__":
    main()
