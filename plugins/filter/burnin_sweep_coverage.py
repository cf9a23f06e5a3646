# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_sweep_coverage
short_description: One cluster's verification coverage after a sweep
version_added: 0.3.0
author: gpufleet.burnin maintainers
description:
  - From the cluster's Node objects read after the sweep, its choice (gpufleet.burnin.burnin_sweep_select) and the
    Events of the run's namespace, the coverage (docs/sweep.md) - GPU nodes verified within their expiry (count and
    percent), the oldest verification, the nodes never verified, those skipped and why, those whose sweep pod a
    workload preempted (C(preempted), not a failure; picked again next sweep).
options:
  _input:
    description: The cluster's Node objects.
    type: list
    elements: dict
    required: true
  selection:
    description: The sweep's choice (gpufleet.burnin.burnin_sweep_select's value); empty for coverage alone.
    type: dict
    default: {}
  events:
    description: Events of the sweep's namespace; those of reason C(Preempted) name the preempted sweep pods' nodes.
    type: list
    elements: dict
    default: []
  run_id:
    description: The sweep's run id; only preemptions of its own pods count (an earlier sweep's events stay an hour).
    type: str
    default: ''
  now:
    description: The clock in Unix seconds; 0 for the controller's.
    type: int
    default: 0
  records:
    description:
      - The record ConfigMap C(gpufleet-burnin-node-records) of the burn-in namespace (C(kubernetes.core.k8s_info)
        C(resources), or the object); a node without an entry counts as never verified, whatever its annotations say.
    type: raw
    default: []
"""

EXAMPLES = r"""
- name: The cluster's coverage
  ansible.builtin.set_fact:
    coverage: "{{ nodes.resources | gpufleet.burnin.burnin_sweep_coverage(sweep, events=events.resources) }}"
"""

RETURN = r"""
_value:
  description: C(gpu_nodes), C(verified), C(verified_percent), C(oldest_verified_at), C(never_verified), C(expired),
    C(skipped) (reason to count), C(picked), C(preempted), C(nodes) (C({node, state, verified_at})).
  type: dict
"""

import time

from ansible.errors import AnsibleFilterError


def burnin_sweep_coverage_filter(nodes, selection=None, events=None, now=0, run_id="", records=None):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import sweep

    if not isinstance(nodes, list) or not isinstance(events or [], list) or not isinstance(selection or {}, dict):
        raise AnsibleFilterError("gpufleet.burnin.burnin_sweep_coverage: the input and events must be lists, selection a mapping")
    selection = selection or {}
    preempted = sweep.preempted_nodes(events or [], [], selection.get("picked") or [], run_id=str(run_id or ""))
    now = int(now) or int(time.time())
    return sweep.coverage(nodes, now, selection, preempted, records=sweep.records_of(records, now))


class FilterModule(object):
    def filters(self):
        return {"burnin_sweep_coverage": burnin_sweep_coverage_filter}
