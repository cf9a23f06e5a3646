# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_node_verdict
short_description: Judge a node stage - each pod's own output on its own node
version_added: 0.3.0
author: gpufleet.burnin maintainers
description:
  - The verdict of a node stage of the role (C(node), C(dcgm)), whose TrainJob runs a catalogue workload with one pod
    on every GPU node at once. Each pod's log is judged alone, as a run of one node - for nccl-tests output by the
    grading of P(gpufleet.burnin.burnin_verdict#filter) against the single-node (NVLink/NVSwitch) thresholds of
    C(_lib/thresholds.yaml) (records with C(nodes=1)) and O(overrides).
  - Each node gets a finding of the stage (C(node), C(stage), C(verdict) pass, warn or fail, C(reason), C(evidence)
    with C(busbw) in GB/s and C(size) in bytes); the stage's verdict is the worst of its nodes' and of the job's
    outcome. A pod that failed fails its node; a pod without output is an C(error) of the stage (C(fail) when the
    TrainJob failed).
options:
  _input:
    description: The pods' logs, the C(results) of M(gpufleet.burnin.trainjob_logs) (shaped like a M(kubernetes.core.k8s_log) loop).
    type: list
    elements: dict
    required: true
  pods:
    description: The TrainJob's pods (M(gpufleet.burnin.trainjob_logs)' C(pods)), with C(spec.nodeName).
    type: list
    elements: dict
    required: true
  stage:
    description: The stage's name, carried into the findings.
    type: str
    default: node
  workload:
    description: The workload's name.
    type: str
  collective:
    description: The collective of nccl-tests output (C(all_reduce)).
    type: str
  parser:
    description: The parser of the output, as the workload's catalogue entry names it (C(results)).
    type: str
    default: nccl-tests
  platform:
    description: The cluster's platform.
    type: str
  gpu_architecture:
    description: The cluster's GPU architecture.
    type: str
  gpus_per_node:
    description: GPUs per node (each pod drives all of its node's).
    type: int
  instance_type:
    description: The nodes' instance type.
    type: str
  overrides:
    description: Threshold records from the inventory (C(burnin_thresholds)); a record with C(nodes=1) judges the node stage.
    type: list
    elements: dict
    default: []
  on_missing:
    description: The verdict of a node when no threshold matches.
    type: str
    choices: [pass, warn, fail]
    default: warn
  job_outcome:
    description: The TrainJob's outcome (C(Complete), C(Failed), C(Timeout), ...).
    type: str
  job_reason:
    description: Why the TrainJob ended so.
    type: str
"""

EXAMPLES = r"""
- name: Judge the node stage
  ansible.builtin.set_fact:
    node_verdict: >-
      {{ logs.results | gpufleet.burnin.burnin_node_verdict(pods=logs.pods, workload='nccl-all-reduce-node',
           collective='all_reduce', platform='aws', gpu_architecture='h100', gpus_per_node=8, job_outcome='Complete') }}
"""

RETURN = r"""
_value:
  description: The stage's verdict.
  type: dict
  contains:
    verdict:
      description: C(pass), C(warn), C(fail) or C(error).
      type: str
    reason:
      description: Why - the nodes with that verdict and their busbw, or how many passed.
      type: str
    checks:
      description: The job's check and one per node (C(name) the node, C(verdict), C(reason), C(value) busbw, C(size), C(threshold), C(pass), C(warn)).
      type: list
      elements: dict
    node_results:
      description: Per node - node, pod, verdict, reason, busbw, size, threshold, pass, warn.
      type: list
      elements: dict
    findings:
      description: One finding per judged node (plugins/module_utils/judging/node_findings.py).
      type: list
      elements: dict
    succeeded_nodes:
      description: Nodes that passed or warned.
      type: list
      elements: str
    failed_nodes:
      description: Nodes that failed.
      type: list
      elements: str
    thresholds:
      description: The threshold records used, with their sources.
      type: list
      elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def burnin_node_verdict_filter(
    pod_logs,
    pods=None,
    stage="node",
    workload=None,
    collective=None,
    parser="nccl-tests",
    platform=None,
    gpu_architecture=None,
    gpus_per_node=None,
    instance_type=None,
    overrides=None,
    on_missing="warn",
    job_outcome=None,
    job_reason=None,
):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_stage import judge_node_stage

    facts = {"platform": platform or "", "gpu_architecture": gpu_architecture or "", "instance_type": instance_type or None}
    if gpus_per_node not in (None, ""):
        try:
            facts["gpus_per_node"] = int(gpus_per_node)
        except (TypeError, ValueError):
            raise AnsibleFilterError("gpufleet.burnin.burnin_node_verdict: gpus_per_node must be an integer, got %r" % (gpus_per_node,))
    try:
        return judge_node_stage(
            pod_logs or [],
            pods or [],
            facts=facts,
            stage=stage,
            workload=workload,
            collective=collective or None,
            parser=parser or "nccl-tests",
            overrides=overrides or None,
            on_missing=on_missing,
            job_outcome=job_outcome or None,
            job_reason=job_reason or None,
        )
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.burnin_node_verdict: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"burnin_node_verdict": burnin_node_verdict_filter}
