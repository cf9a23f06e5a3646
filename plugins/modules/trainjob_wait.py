#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: trainjob_wait
short_description: Wait for a Kubeflow Trainer TrainJob to end, telling a running job from an unreachable cluster
version_added: 0.2.0
description:
  - Reads the TrainJob O(name) in O(namespace) until its C(Complete) or C(Failed) condition is C(True), O(timeout)
    passes, or the cluster stays unreachable for O(unreachable_grace) seconds, and returns the outcome with the
    reason a person needs.
  - "The TrainJob (and, with O(record_pods), its pods) is watched through the Kubernetes watch API: one list, then a
    watch from its resourceVersion, so the end is seen when the API server records it. Each watch request ends
    after 60 seconds and is opened again from the last resourceVersion seen; C(410 Gone) lists again; a watch that
    breaks is opened again after 1, 2, 4, ... seconds, never more than O(poll_interval) apart."
  - "When the watch cannot be opened (no C(watch) right, a proxy that refuses long requests) the polling rule
    applies: the first read at once, then after 1, 2, 4, ... seconds, never more than O(poll_interval) apart."
  - A read that cannot reach the cluster (connection refused, name resolution, timeout, TLS) does not end the wait at
    once; when every read for O(unreachable_grace) seconds failed the wait ends with outcome C(Unreachable) and the
    last error. Any other error (Unauthorized, Forbidden, the TrainJob deleted, the Trainer API missing) ends it at
    once with outcome C(Error). The errors are classified as by the P(gpufleet.burnin.k8s_error#filter) filter. The
    first read includes kubernetes.core's discovery of the server when the controller has no cache of it.
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
    description: Skipped in check mode (a dry run created no TrainJob); returns outcome C(Skipped).
options:
  name:
    description: The TrainJob's name.
    type: str
    required: true
  namespace:
    description: The TrainJob's namespace.
    type: str
    required: true
  api_version:
    description: The Trainer API version.
    type: str
    default: trainer.kubeflow.org/v1alpha1
  timeout:
    description: Seconds to wait for the TrainJob to end (outcome C(Timeout) after).
    type: int
    default: 3600
  poll_interval:
    description: The longest time between two reads when polling, or two tries to open a broken watch, in seconds.
    type: int
    default: 10
  unreachable_grace:
    description: Seconds of failed reads (cluster unreachable) after which the wait gives up with outcome C(Unreachable).
    type: int
    default: 30
  record_pods:
    description:
      - Also watch the TrainJob's pods (label C(jobset.sigs.k8s.io/jobset-name); listed at each read when polling) and return the last look
        at every pod seen (RV(pods)), and read the log of each pod once a container of it has ended or restarted
        (RV(logs)). Controllers remove pods once a job ends (JobSet ends the MPI workers when the launcher is done;
        the Job controller removes a failed Job's pods when their restarts reach the backoff limit), so this is what
        still says, afterwards, which node ran which pod and what a failed launcher printed.
    type: bool
    default: true
seealso:
  - module: kubernetes.core.k8s_info
  - module: gpufleet.burnin.k8s_apply
"""

EXAMPLES = r"""
- name: Wait for the burn-in's TrainJob
  gpufleet.burnin.trainjob_wait:
    name: nccl-all-reduce-20261201t101500
    namespace: burnin
    timeout: 1800
    kubeconfig: "{{ burnin_kubeconfig }}"
    context: "{{ burnin_context }}"
  register: waited

- name: Say how it ended
  ansible.builtin.debug:
    msg: "{{ waited.outcome }}: {{ waited.reason }}"
"""

RETURN = r"""
outcome:
  description:
    - C(Complete), C(Failed), C(Timeout), C(Unreachable), C(Error), or C(Skipped) in check mode.
    - C(Preempted) when the scheduler preempted a pod of the TrainJob and no other of its pods still runs (the
      replacement of a pod pinned to its node cannot start there while the preempting workload holds it).
  returned: always
  type: str
reason:
  description: The terminal condition's reason and message, or why the wait ended without one.
  returned: always
  type: str
conditions:
  description: The TrainJob's conditions last read, each with C(type), C(status), C(reason), C(message).
  returned: unless skipped
  type: list
  elements: dict
polls:
  description: How many requests the wait made (lists and watches, or reads when polling).
  returned: unless skipped
  type: int
pods:
  description:
    - The last look at each pod of the TrainJob seen while waiting (as M(kubernetes.core.k8s_info) returns pods,
      without containers, volumes and conditions), sorted by name; empty when O(record_pods=false).
  returned: unless skipped
  type: list
  elements: dict
logs:
  description:
    - Pod name -> the log of all its containers, read while waiting once the pod ended or restarted, at most 16 MiB
      of each (its first and last lines and the lines between that are not NCCL INFO lines; RV(logs_cut)).
  returned: unless skipped
  type: dict
logs_cut:
  description: Pod name -> how its log was cut (C(size), C(kept), C(lines_dropped), C(max_bytes)), for the logs of RV(logs) read in part.
  returned: unless skipped
  type: dict
error:
  description: The classified last error (C(category), C(status), C(message), C(detail)), when a read failed.
  returned: when a read failed
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import trainjob_wait_spec, refuse_on_host


def main():
    refuse_on_host(trainjob_wait_spec(), "gpufleet.burnin.trainjob_wait")


if __name__ == "__main__":
    main()
