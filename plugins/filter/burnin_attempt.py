# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_attempt
short_description: What a cluster's result records after one attempt of a stage
version_added: 0.3.0
author: gpufleet.burnin maintainers
description:
  - The role runs its stages (C(burnin_stages)) in order; a failed or warned stage runs again up to C(burnin_repeats)
    times. After each attempt this filter gives the result's C(stages) with the attempt added (its number, TrainJob,
    outcome, verdict and reason; a node stage's per-node busbw), the stage's verdict and reason being its last
    attempt's, and for a node stage its per-node findings (C(node_findings), C(node_verdicts); a rerun replaces the
    stage's earlier findings).
  - With O(next_attempt) set, returns instead the number of the stage's next attempt, or C(0) when the stage is done (it
    passed, or ran O(repeats) times again).
options:
  _input:
    description: The cluster's result so far.
    type: dict
    required: true
  stage:
    description: The stage (C(node), C(fleet), C(dcgm)).
    type: str
    required: true
  trainjob:
    description: The attempt's TrainJob.
    type: str
  verdict:
    description: The attempt's verdict (P(gpufleet.burnin.burnin_verdict#filter) or P(gpufleet.burnin.burnin_node_verdict#filter)).
    type: dict
  outcome:
    description: The attempt's TrainJob outcome; default the result's.
    type: str
  note:
    description: A note on the stage (for example how its nodes were counted).
    type: str
  next_attempt:
    description: Return the next attempt's number instead (see above).
    type: bool
    default: false
  repeats:
    description: With O(next_attempt), how many times a failed or warned stage runs again (C(burnin_repeats)).
    type: int
    default: 0
"""

EXAMPLES = r"""
- name: Record the attempt
  ansible.builtin.set_fact:
    burnin_result: "{{ burnin_result | combine(burnin_result | gpufleet.burnin.burnin_attempt('node', trainjob=name, verdict=node_verdict)) }}"

- name: The next attempt of the fleet stage, 0 when done
  ansible.builtin.set_fact:
    attempt: "{{ burnin_result | gpufleet.burnin.burnin_attempt('fleet', next_attempt=true, repeats=1) }}"
"""

RETURN = r"""
_value:
  description: The fields to merge into the result (C(stages), and for a node stage C(node_findings), C(node_verdicts)), or with O(next_attempt) an integer.
  type: raw
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def burnin_attempt_filter(result, stage, trainjob="", verdict=None, outcome=None, note="", next_attempt=False, repeats=0):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import cluster_result, stages

    if not isinstance(result, dict):
        raise AnsibleFilterError("gpufleet.burnin.burnin_attempt: the input must be a cluster's result (a mapping)")
    try:
        if next_attempt:
            return stages.next_attempt(result, stage, stages.check_repeats("repeats", repeats))
        return cluster_result.recorded_attempt(result, stage, trainjob, verdict, outcome=outcome, note=note)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.burnin_attempt: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"burnin_attempt": burnin_attempt_filter}
