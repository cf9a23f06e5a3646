# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_judged
short_description: What a cluster's result records after the verdict
version_added: 0.2.0
author: gpufleet.burnin maintainers
description:
  - From the verdict of P(gpufleet.burnin.burnin_verdict#filter), the fields the role adds to the cluster's result
    and one line for a person. A failing verdict (P(gpufleet.burnin.burnin_passed#filter)'s rule) is the cluster's
    failure; its stage becomes C(verdict) and its reason names the verdict, why and the failed nodes.
options:
  _input:
    description: The cluster's result so far.
    type: dict
    required: true
  verdict:
    description: The verdict.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Record the verdict
  ansible.builtin.set_fact:
    burnin_result: "{{ burnin_result | combine((burnin_result | gpufleet.burnin.burnin_judged(verdict)).record) }}"
"""

RETURN = r"""
_value:
  description: What the verdict means for the cluster.
  type: dict
  contains:
    record:
      description: The fields to merge into the result, C(verdict), C(stage) and C(reason).
      type: dict
    line:
      description: One line, for example C(aws-a - fail - busbw 3.1 GB/s ...; nodes 1 succeeded, failed - b).
      type: str
"""

from ansible.errors import AnsibleFilterError


def burnin_judged_filter(result, verdict):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import judged_record

    if not isinstance(result, dict) or not isinstance(verdict, dict):
        raise AnsibleFilterError("gpufleet.burnin.burnin_judged: the input must be a cluster's result and verdict a verdict (mappings)")
    return judged_record(result, verdict)


class FilterModule(object):
    def filters(self):
        return {"burnin_judged": burnin_judged_filter}
