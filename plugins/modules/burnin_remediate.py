#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_remediate
short_description: Label the nodes a burn-in verified, taint or cordon those it failed, or undo it
version_added: 0.2.0
description:
  - With O(mode=apply), acts on the nodes of O(node_verdicts) (a cluster result's C(node_verdicts)) - a node whose
    verdict is C(pass) gets the label O(verified_label) with the run id as its value when O(label_verified); a node
    whose verdict is C(fail) gets the taint O(quarantine_taint) with the run id as its value (O(quarantine=taint)) or
    is cordoned (O(quarantine=cordon)), and loses a verified label the collection set earlier. C(warn) nodes are left
    alone.
  - Each mark is recorded in the ConfigMap C(gpufleet-burnin-node-records) of O(record_namespace), one key per node,
    which only the burn-in identity may write; the node's annotations (C(gpufleet.burnin/verified-label),
    C(gpufleet.burnin/quarantine-taint), C(gpufleet.burnin/cordoned-by), C(gpufleet.burnin/node-marks)) carry a copy
    for people and schedulers. A kubelet may write its own node's annotations, so only the ConfigMap decides what is
    removed; annotation records that differ from it, and a record written at a time from the future (more than 300
    seconds ahead of the clock), are ignored and named in RV(msg). A node that is unschedulable already (an admin's
    cordon) is not recorded, so the collection never uncordons it.
  - With O(mode=undo), removes the marks of the run O(run_id) (those whose value is that run id), or every mark the
    collection recorded with O(all_runs). Labels, taints and cordons the collection did not set stay.
  - With O(node_marks), every judged node gets the labels C(gpufleet.burnin/result), C(gpufleet.burnin/run-id) and
    C(gpufleet.burnin/expires) (Unix seconds, O(mark_ttl_hours) after the run first marked the node), the annotation
    C(gpufleet.burnin/verdict) (its entry of the JSON report, at most 4 KiB) and, with O(mark_condition), the Node
    condition C(GpuBurninPassed); recorded in C(gpufleet.burnin/node-marks). O(mode=undo) removes them as well.
  - With O(mode=expire), removes the node marks past their expiry and those an earlier run left where the cluster's
    latest marking run did not mark the node (superseded); RV(marks) says what each marked node's mark means now.
  - Labels and annotations are changed key by key with a JSON merge patch; taints, an atomic list for every kind of
    patch, are read, changed and written back with the resourceVersion read, and read again when the node changed
    in between, so other taints are never lost.
  - Runs kubernetes.core's own client and service inside Ansible's worker process on the controller, like
    M(gpufleet.burnin.burnin_cleanup), and takes kubernetes.core's authentication options and their C(module_defaults).
  - Needs C(get) and C(patch) on nodes, and C(get), C(create) and C(patch) on ConfigMaps in O(record_namespace); see
    C(extras/rbac/burnin-rbac.yaml), ClusterRole C(gpufleet-burnin-node-remediation) and Role C(gpufleet-burnin). An
    undo or expire by an identity that may not read the record changes nothing and says so in RV(msg).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpufleet.burnin.k8s_in_process
attributes:
  check_mode:
    support: full
    description: Reads the nodes and returns in RV(changes) what would change, changing nothing.
  diff_mode:
    support: full
    description: Each node that changes, before and after - its labels, taints, C(unschedulable) and the collection's annotations.
options:
  mode:
    description:
      - V(apply) remediates after a verdict, V(undo) removes what the collection set, V(expire) removes expired and
        superseded node marks.
    type: str
    choices: [apply, undo, expire]
    default: apply
  run_id:
    description:
      - The run id, the value of every mark (a label value). Required for V(apply), and for V(undo) unless O(all_runs).
    type: str
    default: ""
  all_runs:
    description: With O(mode=undo), remove the marks of every run.
    type: bool
    default: false
  node_verdicts:
    description:
      - The cluster result's C(node_verdicts) (C({<node>{verdict}}), verdict V(pass), V(warn) or V(fail)), for O(mode=apply).
    type: dict
    default: {}
  cluster_result:
    description:
      - The cluster's result (the role's C(burnin_result)), for O(node_marks) - the verdict annotation is the node's entry of
        the JSON report made from it.
    type: dict
    default: {}
  node_marks:
    description: Mark every node of O(node_verdicts) with its result, the run id and an expiry (labels) and its verdict (annotation).
    type: bool
    default: false
  mark_ttl_hours:
    description: Hours a node mark stays valid (1 to 8784).
    type: int
    default: 24
  mark_condition:
    description: With O(node_marks), also set the Node condition C(GpuBurninPassed) (needs C(patch) on C(nodes/status)).
    type: bool
    default: false
  now:
    description: The time in Unix seconds to mark and expire by, for tests and replays; V(0) is the controller's clock.
    type: int
    default: 0
  label_verified:
    description: Label the nodes whose verdict is V(pass).
    type: bool
    default: false
  verified_label:
    description: The key of the verified label (a Kubernetes qualified name); its value is the run id.
    type: str
    default: gpufleet.burnin/verified
  quarantine:
    description: What happens to a node whose verdict is V(fail) - nothing, a taint, or a cordon.
    type: str
    choices: [none, taint, cordon]
    default: none
  quarantine_taint:
    description:
      - The taint's C(key) (a qualified name, default C(gpufleet.burnin/bad)) and C(effect) (C(NoSchedule) by default,
        C(PreferNoSchedule) or C(NoExecute)); its value is the run id.
    type: dict
    default: {}
  record_namespace:
    description:
      - The namespace of the record ConfigMap C(gpufleet-burnin-node-records) (the role's C(burnin_namespace), also with
        a namespace per run). It must exist for O(mode=apply).
    type: str
    default: gpufleet-burnin
  unreachable_grace:
    description: Seconds to retry a read or patch while the cluster does not answer.
    type: int
    default: 30
seealso:
  - module: gpufleet.burnin.burnin_cleanup
"""

EXAMPLES = r"""
- name: Label the verified nodes and taint the failed ones
  gpufleet.burnin.burnin_remediate:
    run_id: "{{ burnin_result.run_id }}"
    node_verdicts: "{{ burnin_result.node_verdicts }}"
    label_verified: true
    quarantine: taint
  register: remediated

- name: Remove the node marks past their expiry and the superseded ones
  gpufleet.burnin.burnin_remediate:
    mode: expire

- name: Remove the labels and taints of the run
  gpufleet.burnin.burnin_remediate:
    mode: undo
    run_id: 20261201t101500
"""

RETURN = r"""
changes:
  description:
    - What changed (in check mode, what would), one item per label, taint, C(unschedulable) or record annotation of a
      node - C(node), C(what) (C(label), C(taint), C(unschedulable), C(annotation)), C(key), C(before), C(after)
      (taints as C(key=value:effect); null when absent).
  returned: always
  type: list
  elements: dict
remediation:
  description:
    - For the cluster's result - C(mode), C(run_id), C(check_mode), C(changes) (without the annotations), C(nodes)
      changed, C(missing) (nodes of O(node_verdicts) not in the cluster), C(note).
  returned: success
  type: dict
marks:
  description:
    - With O(mode=expire), each node that carried the collection's node marks - C(state) (C(verified) for a C(pass)
      before its expiry, C(expired), C(warn), C(fail), C(error)), C(result), C(run_id), C(expires), C(removed) (why
      it was removed, C(expired) or C(superseded by run <id>); empty when kept).
  returned: with mode=expire
  type: dict
ignored:
  description:
    - What was not trusted - C(future) (nodes whose record was written at a time from the future), C(unreadable)
      (nodes whose record cannot be read) and C(annotations) (C({<node>[<annotation key>]}), annotation records that
      differ from the record ConfigMap).
  returned: success
  type: dict
records_left:
  description: How many nodes the record ConfigMap still names after the task (a cleanup keeps its namespace while any are left).
  returned: success
  type: int
msg:
  description: One sentence, for example C(remediated 2 node(s)), in check mode C(would remediate 2 node(s)).
  returned: always
  type: str
error:
  description: The classified error (C(category), C(status), C(message), C(detail)) when a read or patch failed.
  returned: on failure
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_remediate_spec, refuse_on_host


def main():
    refuse_on_host(burnin_remediate_spec(), "gpufleet.burnin.burnin_remediate")


if __name__ == "__main__":
    main()
