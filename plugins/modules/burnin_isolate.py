#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_isolate
short_description: Find the nodes that made a multi-node burn-in fail or warn, with pair TrainJobs
version_added: 0.3.0
description:
  - After a multi-node (fleet stage) run failed or warned, runs rounds of 2-node TrainJobs on the run's nodes and
    names the nodes that are slow with a good partner, with the pair results as evidence.
  - "The plan (plugins/module_utils/judging/isolation.py): round 1 pairs the nodes together (disjoint pairs, all at
    once); a slow pair (fail or warn) has one of its nodes run again with a node a passing pair proved good; it passes,
    and its first partner is the culprit; it fails, and it is a culprit and its first partner is tested too. One bad
    node among n costs about n/2 + 1 jobs (4 nodes 3 or 4, not all 6 pairs; 8 nodes 5 or 6, not 28)."
  - Each pair is the planned TrainJob of O(objects) again (same runtime, command, image), with C(numNodes=2), the name
    C(<trainjob>-iso-<round>-<index>), and a C(runtimePatches) entry (manager C(gpufleet.burnin/isolation)) giving the
    C(node) replicated job a required node affinity C(kubernetes.io/hostname In [a, b]), added to the runtime's own
    terms. It is applied by server-side apply with O(field_manager), waited for with the round's other pairs, its
    logs read and judged with the verdict of P(gpufleet.burnin.burnin_verdict#filter) against the same thresholds
    (the collection's and O(overrides)) for 2 nodes, then deleted. Pairs carry the run's labels, so the role's
    C(cleanup) entry point removes any an interrupted play left behind.
  - Ends with a conclusion - C(found) (the culprits), C(not_reproduced) (every node passed in pairs - the fault needs
    more nodes, or was transient), C(unexplained) (a pair slow although both its nodes passed with others),
    C(budget_exhausted) (O(max_jobs) or O(max_minutes) ran out - what is known so far) or C(undetermined) (no pair left
    to tell the suspects apart).
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
    description: Plans the first round and returns it (RV(rounds)); nothing is applied.
  diff_mode:
    support: none
    description: The pair TrainJobs are created and deleted again; there is nothing to show.
options:
  result:
    description:
      - The cluster's result after the fleet stage's verdict (the role's C(burnin_result)) - its C(verdict) names the
        run's nodes, its C(node_verdicts) the known-good partners, its C(platform), C(gpu_architecture),
        C(gpus_per_node), C(instance_type), C(collective) and C(workload) pick the thresholds.
    type: dict
    required: true
  objects:
    description: The fleet stage's planned objects (M(gpufleet.burnin.burnin_plan)'s C(objects)) - its TrainJob, and the runtime whose node affinity is kept.
    type: list
    elements: dict
    required: true
  nodes:
    description: The nodes to isolate; default the nodes the verdict in O(result) attributed the run's pods to.
    type: list
    elements: str
  known_good:
    description:
      - Nodes to trust as partners without testing them. Default the nodes of O(result)'s C(node_verdicts) that
        passed and were not in the run; a node of the run is always tested (a single-node pass proves its GPUs, not
        its network).
    type: list
    elements: str
  max_jobs:
    description: Jobs in all (the pairs and the finer rounds that follow them), from 1 to 1000.
    type: int
    default: 8
  max_minutes:
    description: Minutes in all, from 1 to 1440; a round's wait ends when they run out.
    type: int
    default: 30
  overrides:
    description: Threshold records from the inventory (the role's C(burnin_thresholds)), as for the fleet stage.
    type: list
    elements: dict
    default: []
  on_missing:
    description: The verdict when no threshold matches.
    type: str
    choices: [pass, warn, fail]
    default: warn
  mnnvl:
    description: Whether multi-node NVLink was enabled (picks the thresholds).
    type: bool
    default: false
  field_manager:
    description: The server-side apply field manager.
    type: str
    default: gpufleet.burnin
  force_conflicts:
    description: Take over fields another manager owns.
    type: bool
    default: false
  timeout:
    description: Seconds a round may take at most (also bounded by what is left of O(max_minutes)).
    type: int
    default: 3600
  poll_interval:
    description: The longest time between two reads while waiting when the pairs cannot be watched, or two tries to open a broken watch, in seconds.
    type: int
    default: 10
  unreachable_grace:
    description: Seconds of failed reads (cluster unreachable) after which the isolation gives up.
    type: int
    default: 30
  tail_lines:
    description: Lines kept of each worker's log (the launcher's is read whole).
    type: int
    default: 200
seealso:
  - module: gpufleet.burnin.trainjob_wait
  - module: gpufleet.burnin.trainjob_logs
"""

EXAMPLES = r"""
- name: Find the bad nodes of a failed burn-in
  gpufleet.burnin.burnin_isolate:
    result: "{{ burnin_result }}"
    objects: "{{ plan.objects }}"
    max_jobs: 8
    max_minutes: 30
  register: isolated

- name: Say which
  ansible.builtin.debug:
    msg: "{{ isolated.msg }}"
"""

RETURN = r"""
rounds:
  description: Each round - C(round), C(pairs), C(trainjobs) (their names), C(results) (per pair - C(nodes), C(trainjob),
    C(verdict), C(busbw), C(size), C(reason), C(outcome)); a finer round also C(probes) and per result C(probe) and
    C(env); in check mode only the first, with C(planned=true).
  returned: always
  type: list
  elements: dict
nodes:
  description: The nodes isolated.
  returned: always
  type: list
  elements: str
known_good:
  description: The partners trusted without a test.
  returned: always
  type: list
  elements: str
conclusion:
  description:
    - C(outcome) (found, not_reproduced, unexplained, budget_exhausted, undetermined), C(reason), C(culprits) (each
      C(node) with its pair results as C(evidence)), C(good), C(unknown), C(suspects), C(unexplained), C(jobs). Null in
      check mode.
  returned: always
  type: dict
findings:
  description: The C(isolation) node findings - fail for each culprit, pass for each node a pair proved good.
  returned: always
  type: list
  elements: dict
record:
  description: The fields to combine into the cluster's result - C(isolation) (outcome, reason, culprits, good,
    unknown, jobs, node_jobs, node_minutes, all_pairs, minutes, rounds, parts (the finer conclusions, each with
    C(level) path, nic or link, C(conclusion), C(reason), C(jobs), C(minutes) and its runs as evidence in C(paths),
    C(runs), C(nics) or C(links)), pending), C(node_findings) and C(node_verdicts) with the isolation's findings.
  returned: always
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_isolate_spec, refuse_on_host


def main():
    refuse_on_host(burnin_isolate_spec(), "gpufleet.burnin.burnin_isolate")


if __name__ == "__main__":
    main()
