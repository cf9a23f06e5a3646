#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: trainjob_logs
short_description: Read the logs of every pod of a Kubeflow Trainer TrainJob, those already removed included
version_added: 0.2.0
description:
  - Lists the pods of the TrainJob O(name) in O(namespace) (JobSet's label C(jobset.sigs.k8s.io/jobset-name)) and reads
    the log of all containers of each, as M(kubernetes.core.k8s_log) with C(all_containers) does; the pods of the
    replicated jobs in O(whole_logs_of) whole (nccl-tests' table and header must be complete for the verdict), the
    others' last O(tail_lines) lines.
  - Controllers remove pods once a job ends (JobSet ends the MPI workers when the launcher is done; the Job controller
    removes a failed Job's pods). The pods and logs that M(gpufleet.burnin.trainjob_wait) saw before that
    (O(seen_pods), O(early_logs)) are added, so every pod of the job is counted, and a removed pod whose log nobody
    read is named.
  - One pod that cannot be read does not lose the others' logs; its error is in RV(results) and RV(summary.errors).
    Listing the pods is retried while the cluster does not answer, for O(unreachable_grace) seconds.
  - Runs kubernetes.core's own client and service inside Ansible's worker process on the controller, like
    M(gpufleet.burnin.k8s_apply), and takes kubernetes.core's authentication options and their C(module_defaults).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpufleet.burnin.k8s_in_process
  - gpufleet.burnin.controller.unchanged
attributes:
  check_mode:
    support: full
    description: Skipped in check mode (a dry run ran no TrainJob).
options:
  name:
    description: The TrainJob's name (its JobSet has the same name).
    type: str
    required: true
  namespace:
    description: The TrainJob's namespace.
    type: str
    required: true
  tail_lines:
    description: How many lines of the end of each log to read, for pods not in O(whole_logs_of).
    type: int
    default: 200
  whole_logs_of:
    description: Replicated jobs (JobSet's label C(jobset.sigs.k8s.io/replicatedjob-name)) whose pods' logs are read whole.
    type: list
    elements: str
    default: [launcher]
  seen_pods:
    description: The pods seen earlier, for example RV(gpufleet.burnin.trainjob_wait#module:pods); those gone now count as removed.
    type: list
    elements: dict
    default: []
  early_logs:
    description: Pod name -> log read earlier, for example RV(gpufleet.burnin.trainjob_wait#module:logs).
    type: dict
    default: {}
  early_cuts:
    description: Pod name -> how the log of O(early_logs) was cut, for example RV(gpufleet.burnin.trainjob_wait#module:logs_cut).
    type: dict
    default: {}
  max_bytes:
    description:
      - At most this many bytes are read of each pod's log (all its containers), streamed. A longer log keeps its first
        eighth, its last half and, between them, what fits of the lines that are not NCCL INFO lines (the table when
        NCCL INFO lines interleave it, WARN and failure lines); the entry of RV(results) then carries C(cut) and
        RV(summary.cut) names the pod. Below 65536 counts as 65536.
    type: int
    default: 16777216
  unreachable_grace:
    description: Seconds to retry listing the pods while the cluster does not answer.
    type: int
    default: 30
  log_dir:
    description:
      - A directory on the controller to write each log read into, as C(<pod name>.log) (made when missing). Empty
        writes none.
    type: path
    default: ""
seealso:
  - module: kubernetes.core.k8s_log
  - module: gpufleet.burnin.trainjob_wait
"""

EXAMPLES = r"""
- name: Wait for the burn-in's TrainJob
  gpufleet.burnin.trainjob_wait:
    name: nccl-all-reduce-20261201t101500
    namespace: burnin
  register: waited

- name: Read the logs of its pods
  gpufleet.burnin.trainjob_logs:
    name: nccl-all-reduce-20261201t101500
    namespace: burnin
    seen_pods: "{{ waited.pods }}"
    early_logs: "{{ waited.logs }}"
  register: logs

- name: Say what was read
  ansible.builtin.debug:
    msg: "{{ logs.summary.note }}"
"""

RETURN = r"""
results:
  description:
    - One entry per pod with a log or an error, shaped as a looped M(kubernetes.core.k8s_log) registers it (the pod as
      C(item) and C(log), without k8s_log's C(log_lines), the same text split; or C(failed) and C(msg)), the pods
      there now first. The input of the P(gpufleet.burnin.burnin_verdict#filter) filter.
  returned: unless skipped
  type: list
  elements: dict
pods:
  description: Every pod of the TrainJob, those there now then those removed (as last seen), without containers and volumes.
  returned: unless skipped
  type: list
  elements: dict
summary:
  description: What was read, for the report.
  returned: unless skipped
  type: dict
  contains:
    pods:
      description: How many pods the TrainJob had (there now and removed).
      type: int
    collected:
      description: How many logs were read.
      type: int
    removed:
      description: The pods removed by their controllers.
      type: list
      elements: str
    lost:
      description: The removed pods whose log was never read.
      type: list
      elements: str
    tails:
      description: Pod name -> the last 10 lines of its log.
      type: dict
    errors:
      description: Pod name -> why its log could not be read.
      type: dict
    cut:
      description: Pod name -> a person's line on how its log was cut at O(max_bytes) (what was kept, how many lines not).
      type: dict
    note:
      description: One sentence for a person, for example C(logs of 2 of 3 pods collected; 1 removed by their controllers once the job ended).
      type: str
log_files:
  description: The files written into O(log_dir).
  returned: when O(log_dir) is set
  type: list
  elements: str
error:
  description: The classified error (C(category), C(status), C(message), C(detail)) when the pods could not be listed.
  returned: when the pods could not be listed
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import refuse_on_host, trainjob_logs_spec


def main():
    refuse_on_host(trainjob_logs_spec(), "gpufleet.burnin.trainjob_logs")


if __name__ == "__main__":
    main()
