#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_stage
short_description: Run one stage of a cluster's burn-in (node, fleet, isolation, dcgm or gpu), its attempts until one passes
version_added: 0.3.0
description:
  - Runs one stage of O(variables)' C(burnin_stages) that runs a TrainJob - plan, server-side apply (the namespace
    first when it is missing and C(burnin_create_namespace) is set), wait, logs and verdict - and again while the
    last attempt warned or failed, C(burnin_repeats) times at most. Every attempt is kept in the result's C(stages).
  - The fleet stage is judged as P(gpufleet.burnin.burnin_verdict#filter) judges it; a node stage (C(node), C(dcgm), C(gpu))
    pod by pod, each node on its own, with per-node findings (C(node_findings), C(node_verdicts)).
  - Each stage records per node what its pods ran, in the result's C(node_runtime) (the images pulled, the NCCL env of
    the rendered pod spec; for a node stage also the NCCL and net plugin versions its pod printed), for the report's
    drift check.
  - The C(isolation) stage runs after the fleet stage's verdict, when that nccl-tests verdict failed or warned on more
    than one node, as M(gpufleet.burnin.burnin_isolate) does (pair TrainJobs, C(burnin_isolation_max_jobs),
    C(burnin_isolation_max_minutes)); its conclusion and node findings join the result. An isolation that stops on a
    cluster error is recorded in the result's C(isolation) and never fails the task.
  - In a sweep (C(burnin_sweep_nodes) in O(variables), its picked nodes) the C(isolation) stage runs the isolation's
    pairs over those nodes instead, when there are two or more (docs/sweep.md); its verdict is the stage's in the
    result's C(stages).
  - A stage does not fail on its verdict; it fails only when the cluster cannot be applied to or read, with the
    classified C(error) and the result so far in C(record).
  - The logs are written under C(burnin_report_dir) (C(<run id>/<host>/), a node stage's in C(<stage>/)) when it is set.
  - Runs kubernetes.core's own client inside Ansible's worker process on the controller, like
    M(gpufleet.burnin.k8s_apply), and takes kubernetes.core's authentication options and their C(module_defaults).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpufleet.burnin.k8s_in_process
attributes:
  check_mode:
    support: full
    description: Plans and dry-runs the apply (only the namespace when it is missing); no wait, logs or verdict.
  diff_mode:
    support: full
    description: The apply's diffs are computed.
options:
  stage:
    description: The stage to run.
    type: str
    required: true
    choices: [node, fleet, isolation, dcgm, gpu]
  result:
    description: The cluster's result so far (the role's C(burnin_result)); its C(platform) and C(gpu_architecture) are planned for.
    type: dict
    required: true
  variables:
    description:
      - The role's checked variables (M(gpufleet.burnin.burnin_start)'s C(variables)), checked again. A stage reads
        C(burnin_repeats), C(burnin_wait), C(burnin_collect_logs), C(burnin_create_namespace), C(burnin_timeout),
        C(burnin_nodes), C(burnin_enable_mnnvl), C(burnin_thresholds), C(burnin_threshold_on_missing),
        C(burnin_poll_interval), C(burnin_unreachable_grace), C(burnin_log_tail_lines), C(burnin_log_max_bytes),
        C(burnin_field_manager), C(burnin_force_conflicts), C(burnin_isolation_max_jobs),
        C(burnin_isolation_max_minutes) and C(burnin_report_dir); a missing one fails the task naming it.
    type: dict
    required: true
  run_id:
    description: The run's id.
    type: str
    required: true
  namespace:
    description: The run's namespace.
    type: str
    required: true
  cluster:
    description: What M(gpufleet.burnin.cluster_detect) read (the nodes a node stage runs on, whether the namespace exists).
    type: dict
    default: {}
  host:
    description: The cluster's name in the summary and the report directory; default the result's C(cluster).
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Run the fleet stage
  gpufleet.burnin.burnin_stage:
    stage: fleet
    result: "{{ burnin_result }}"
    variables: "{{ burnin__checked }}"
    run_id: "{{ burnin__run_id }}"
    namespace: "{{ burnin__namespace }}"
    cluster: "{{ burnin__cluster | default({}) }}"
    host: "{{ inventory_hostname }}"
  register: stage
"""

RETURN = r"""
record:
  description: The cluster's result after the stage (on a failure, the result so far).
  returned: always
  type: dict
stop:
  description: Whether the later stages are skipped (the stage's verdict was an error).
  returned: success
  type: bool
msg:
  description: One line for a person, for example C(aws-a - pass - busbw 441.4 GB/s ...).
  returned: always
  type: str
lines:
  description: One line per attempt.
  returned: success
  type: list
  elements: str
steps:
  description: The steps (plan, apply, wait, logs, verdict of each attempt), each C(name) and C(seconds).
  returned: always
  type: list
  elements: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_stage_spec, refuse_on_host


def main():
    refuse_on_host(burnin_stage_spec(), "gpufleet.burnin.burnin_stage")


if __name__ == "__main__":
    main()
