# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_sweep_select
short_description: The GPU nodes a sweep verifies again now
version_added: 0.3.0
author: gpufleet.burnin maintainers
description:
  - The choice of the sweep (docs/sweep.md) on one cluster, from its Node and Pod objects.
  - A GPU node is stale when its burn-in mark is missing, expired or older than O(max_age_hours); it is picked when idle
    (no pod holds a GPU on it), Ready, schedulable and without a NoSchedule or NoExecute taint, stalest first, at most
    O(max_nodes) and O(max_percent) of the GPU nodes (rounded down, at least one).
  - The others are listed with the reason (V(busy), V(cordoned), V(not_ready), V(tainted), V(preempted), V(over_limit)).
options:
  _input:
    description: The cluster's Node objects (C(kubernetes.core.k8s_info) C(resources)).
    type: list
    elements: dict
    required: true
  pods:
    description: The cluster's pods of all namespaces.
    type: list
    elements: dict
    required: true
  max_age_hours:
    description: A mark older than this is verified again, even before its expiry.
    type: int
    required: true
  max_nodes:
    description: At most this many nodes per cluster per sweep.
    type: int
    required: true
  max_percent:
    description: At most this percentage of the cluster's GPU nodes per sweep.
    type: int
    required: true
  hold:
    description: V(taint) holds the picked nodes with the collection's NoSchedule taint during the stages, V(none) does not.
    type: str
    default: none
  run_id:
    description: The sweep's run id (the hold taint's value); holds of other runs are listed in C(stale_holds) of the result.
    type: str
    default: ''
  now:
    description: The clock in Unix seconds; 0 for the controller's.
    type: int
    default: 0
  records:
    description:
      - The record ConfigMap C(gpufleet-burnin-node-records) of the burn-in namespace (C(kubernetes.core.k8s_info)
        C(resources), or the object), which says when the collection last marked each node. A node's own annotations are
        not read (a kubelet may write them); a node without an entry counts as never verified.
    type: raw
    default: []
"""

EXAMPLES = r"""
- name: Choose the nodes to verify again
  ansible.builtin.set_fact:
    sweep: "{{ nodes.resources | gpufleet.burnin.burnin_sweep_select(pods.resources, max_age_hours=24, max_nodes=4, max_percent=10) }}"
"""

RETURN = r"""
_value:
  description:
    - C(picked) (node names, stalest first), C(rows) (C({node, why, marked_at}) of the picked), C(skipped)
      (C({node, reason, detail})), C(limit), C(gpu_nodes), C(stale), C(fresh), C(stale_holds) (nodes holding an earlier
      sweep's taint), C(hold_taint), C(priority_class) (the collection's PriorityClass object).
  type: dict
"""

import time

from ansible.errors import AnsibleFilterError


def burnin_sweep_select_filter(nodes, pods, max_age_hours, max_nodes, max_percent, hold="none", run_id="", now=0, records=None):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import sweep
    from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError

    if not isinstance(nodes, list) or not isinstance(pods, list):
        raise AnsibleFilterError("gpufleet.burnin.burnin_sweep_select: the input and pods must be lists of objects")
    try:
        options = sweep.check_options(
            int(max_age_hours),
            int(max_nodes),
            int(max_percent),
            hold,
            names=dict(("%s" % k, "burnin_sweep_%s" % k) for k in ("max_age_hours", "max_nodes", "max_percent", "hold")),
        )
    except (BurninError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("gpufleet.burnin.burnin_sweep_select: %s" % exc)
    now = int(now) or int(time.time())
    chosen = sweep.select(nodes, pods, now, options, records=sweep.records_of(records, now))
    return dict(
        chosen,
        rows=chosen["picked"],
        picked=[row["node"] for row in chosen["picked"]],
        stale_holds=sweep.stale_holds(nodes, run_id),
        hold_taint=sweep.hold_taint(run_id),
        priority_class=sweep.priority_class(),
    )


class FilterModule(object):
    def filters(self):
        return {"burnin_sweep_select": burnin_sweep_select_filter}
