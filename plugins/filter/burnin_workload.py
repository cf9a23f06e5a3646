# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_workload
short_description: Render a burn-in workload of the catalog (nccl-all-reduce, nccl-all-gather, torch-smoke, exec-example, dcgm-diag, gpu-burn)
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Renders C(templates/workloads/<name>.yaml) with the C(_lib/) fragments into what M(gpufleet.burnin.workload_plan)
    takes - C(framework), C(image), C(trainer), optionally C(env) - plus C(collective) for nccl-tests workloads (what
    P(gpufleet.burnin.burnin_verdict#filter) judges), C(results) (how the verdict reads the logs - C(nccl-tests),
    C(dcgm-diag), or null for the TrainJob's outcome only) and C(workload) (the name).
  - C(nccl-all-reduce) and C(nccl-all-gather) run nccl-tests under mpirun; C(torch-smoke) runs an NCCL all_reduce through
    torch.distributed under torchrun; C(exec-example) checks the GPU count of every node; C(dcgm-diag) runs
    C(dcgmi diag -r <level> -j) in one pod per node (parameters C(image); C(level) 1-4, default 2, as DCGM defines
    them - 1 the software plugin, 2 adds pcie and memory, 3 adds diagnostic, targeted stress and power and memory
    bandwidth, 4 adds memtest and pulse test; C(timeout) seconds, default per level 300, 900, 3600, 10800;
    C(host) a standalone nv-hostengine; C(privileged), required true for levels 3-4).
  - An unknown name fails, listing the available ones.
positional: nodes, gpus_per_node, platform, gpu_architecture
options:
  _input:
    description: The workload's name.
    type: str
    required: true
  nodes:
    description: Number of nodes.
    type: int
    required: true
  gpus_per_node:
    description: GPUs per node.
    type: int
    required: true
  platform:
    description: The cluster's platform (empty when unknown).
    type: str
    default: ""
  gpu_architecture:
    description: The cluster's GPU architecture (empty when unknown); Grace (C(gb200), C(gb300)) nccl-tests runs need an arm64 C(image) in O(params).
    type: str
    default: ""
  params:
    description:
      - The workload's parameters, documented in its template - for nccl-tests C(image), C(nccl_tests_dir), C(min_bytes),
        C(max_bytes), C(step_factor), C(iters), C(warmup_iters), C(check_iters), C(timeout), C(split_mask), C(nccl_algo),
        C(min_bw), C(json_output), C(extra_args), C(env); for torch-smoke C(image), C(size_bytes), C(iters), C(warmup_iters).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: The all-reduce burn-in of this cluster
  ansible.builtin.set_fact:
    workload: "{{ 'nccl-all-reduce' | gpufleet.burnin.burnin_workload(2, 8, 'aws', 'h100', params={'max_bytes': '8G'}) }}"

- name: Plan it
  gpufleet.burnin.workload_plan:
    entry_name: nccl-all-reduce
    namespace: burnin
    run_id: "20261130t0700"
    platform: aws
    gpu_architecture: h100
    nodes: 2
    gpus_per_node: 8
    framework: "{{ workload.framework }}"
    image: "{{ workload.image }}"
    trainer: "{{ workload.trainer }}"
    env: "{{ workload.env | default([]) }}"
"""

RETURN = r"""
_value:
  description: The workload.
  type: dict
  contains:
    workload:
      description: The name.
      type: str
    framework:
      description: C(mpi), C(torch) or C(exec).
      type: str
    image:
      description: The container image.
      type: str
    trainer:
      description: The framework's trainer keys for M(gpufleet.burnin.workload_plan).
      type: dict
    collective:
      description: The nccl-tests collective (nccl-tests workloads only).
      type: str
    results:
      description: How the verdict reads the pods' logs - C(nccl-tests), C(dcgm-diag), or null (the TrainJob's outcome only).
      type: str
    env:
      description: Extra env (when the workload sets any).
      type: list
      elements: dict
    container:
      description:
        - Fields the workload sets on the GPU workers' container C(node) (C(dcgm-diag) with C(privileged=true) -
          C(securityContext.privileged)); only when it sets any. The role merges them after the overrides; with
          M(gpufleet.burnin.workload_plan) give them as a runtime patch in O(gpufleet.burnin.workload_plan#module:overrides).
      type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def burnin_workload_filter(name, nodes, gpus_per_node, platform="", gpu_architecture="", params=None):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.workload_catalog import render_workload

    if params is not None and not isinstance(params, dict):
        raise AnsibleFilterError("gpufleet.burnin.burnin_workload: params: must be a mapping, got %s" % type(params).__name__)
    counts = {}
    for key, value in (("nodes", nodes), ("gpus_per_node", gpus_per_node)):
        try:
            counts[key] = value if isinstance(value, int) and not isinstance(value, bool) else int(str(value))
        except ValueError:
            raise AnsibleFilterError("gpufleet.burnin.burnin_workload: %s: must be an integer, got %r" % (key, value))
    nodes, gpus_per_node = counts["nodes"], counts["gpus_per_node"]
    data = dict(params or {})
    data.update(nodes=nodes, gpus_per_node=gpus_per_node, platform=platform or "", gpu_architecture=gpu_architecture or "")
    try:
        return render_workload(name, data)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.burnin_workload: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"burnin_workload": burnin_workload_filter}
