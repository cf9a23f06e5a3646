# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_applied
short_description: What a cluster's result records after the apply
version_added: 0.2.0
author: gpufleet.burnin maintainers
description:
  - From what M(gpufleet.burnin.k8s_apply) returned, the fields the role adds to the cluster's result, C(stage),
    C(applied) (kind/name in apply order), C(changed_objects) (a change only in hidden fields such as
    C(managedFields) is no change), C(namespace_created), C(outcome) (C(Checked) in check mode, C(Applied) without
    waiting, else C(Pending)) and C(reason).
options:
  _input:
    description: The registered result of the one k8s_apply task.
    type: dict
    required: true
  objects:
    description: The objects applied, in order.
    type: list
    elements: dict
    required: true
  namespace:
    description: The run's namespace.
    type: str
    required: true
  namespace_missing:
    description: Whether the namespace did not exist and was created (or, in check mode, dry-run).
    type: bool
    default: false
  check_mode:
    description: Whether this is a dry run.
    type: bool
    default: false
  wait:
    description: Whether the role waits for the TrainJob next.
    type: bool
    default: true
  planned:
    description: The plan's objects (kind/name), named as what would be created when only the namespace could be dry-run.
    type: list
    elements: str
    default: []
  previous:
    description:
      - The cluster's result before this apply; an earlier stage's C(applied), C(changed_objects) and
        C(namespace_created) are kept, the new ones added (each stage of C(burnin_stages) applies its own objects).
    type: dict
"""

EXAMPLES = r"""
- name: Record what was applied
  ansible.builtin.set_fact:
    burnin_result: >-
      {{ burnin_result | combine(applied | gpufleet.burnin.burnin_applied(objects=to_apply, namespace='burnin')) }}
"""

RETURN = r"""
_value:
  description: The fields to merge into the cluster's result.
  type: dict
"""

from ansible.errors import AnsibleFilterError


def burnin_applied_filter(apply, objects, namespace, namespace_missing=False, check_mode=False, wait=True, planned=None, previous=None):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import applied_record, apply_results

    if not isinstance(apply, dict) or not isinstance(objects, list):
        raise AnsibleFilterError("gpufleet.burnin.burnin_applied: the input must be k8s_apply's result and objects a list")
    return applied_record(apply_results(apply), objects, namespace, bool(namespace_missing), bool(check_mode), bool(wait), planned, previous=previous)


class FilterModule(object):
    def filters(self):
        return {"burnin_applied": burnin_applied_filter}
