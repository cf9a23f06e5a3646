# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_summary
short_description: The fleet summary of a burn-in - how many clusters passed, which failed and why, one line each
version_added: 0.2.0
author: gpufleet.burnin maintainers
description:
  - Turns the fleet's results into the summary the role prints at the end of a run, with the pass/fail rule of the
    P(gpufleet.burnin.burnin_passed#filter) filter.
  - The header says how many clusters passed, names every failed one and every one with warnings, and where the
    reports are. Each line - sorted by cluster - gives C(ok), C(FAIL) or C(..) (a later serial batch), the cluster, its
    platform and GPU, its outcome and verdict, and the TrainJob with the verdict's reason, or why it failed.
positional: title, run_id
options:
  _input:
    description: Cluster name -> the cluster's result (the role's C(burnin_fleet_results)).
    type: dict
    required: true
  title:
    description: The first word of the header.
    type: str
    default: burn-in
  run_id:
    description: The run id, after the title.
    type: str
    default: ""
  check_mode:
    description: Say that the run was a dry run.
    type: bool
    default: false
  reports:
    description: Where the reports were written, named in the header when set.
    type: str
    default: ""
  baseline:
    description:
      - The reports' comparison with an earlier run (the C(baseline) that P(gpufleet.burnin.burnin_report#module) returns); the
        header names the baseline run, the clusters and the nodes that regressed.
    type: dict
"""

EXAMPLES = r"""
- name: Print the fleet summary
  ansible.builtin.debug:
    msg: "{{ [summary.header] + summary.lines }}"
  vars:
    summary: "{{ burnin_fleet_results | gpufleet.burnin.burnin_summary('burn-in', burnin_run_id) }}"
"""

RETURN = r"""
_value:
  description: The summary.
  type: dict
  contains:
    header:
      description: "For example C(burn-in 20261201-101500: 3 of 4 clusters passed, 1 failed: azure-eus-gb200-a)."
      type: str
    lines:
      description: One line per cluster, sorted.
      type: list
      elements: str
    passed:
      description: The clusters that passed.
      type: list
      elements: str
    failed:
      description: The clusters that failed, sorted.
      type: list
      elements: str
    warned:
      description: The clusters that passed with warnings, sorted.
      type: list
      elements: str
"""

from ansible.errors import AnsibleFilterError


def burnin_summary_filter(results, title="burn-in", run_id="", check_mode=False, reports="", baseline=None):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import fleet_summary

    if not isinstance(results, dict) or not all(isinstance(r, dict) for r in results.values()):
        raise AnsibleFilterError("gpufleet.burnin.burnin_summary: the input must map each cluster to its result")
    return fleet_summary(
        results, title=title, run_id=run_id, check_mode=bool(check_mode), reports=reports or None, baseline=baseline if isinstance(baseline, dict) else None
    )


class FilterModule(object):
    def filters(self):
        return {"burnin_summary": burnin_summary_filter}
