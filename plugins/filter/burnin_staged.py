# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_staged
short_description: What a cluster's result records after its last stage
version_added: 0.3.0
author: gpufleet.burnin maintainers
description:
  - After the role's stages (C(burnin_stages)) ran - when a stage other than the fleet stage failed or errored, its
    reason joins the cluster's (C(<stage> stage <verdict> - <reason>), after the fleet stage's own failure) and the
    result's C(stage) becomes C(verdict). The cluster's verdict is the worst of its stages'
    (P(gpufleet.burnin.burnin_passed#filter)).
options:
  _input:
    description: The cluster's result.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Record the stages' verdict
  ansible.builtin.set_fact:
    burnin_result: "{{ burnin_result | combine(burnin_result | gpufleet.burnin.burnin_staged) }}"
"""

RETURN = r"""
_value:
  description: The fields to merge into the result (C(reason), C(stage)), empty when no other stage failed.
  type: dict
"""

from ansible.errors import AnsibleFilterError


def burnin_staged_filter(result):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import final_record

    if not isinstance(result, dict):
        raise AnsibleFilterError("gpufleet.burnin.burnin_staged: the input must be a cluster's result (a mapping)")
    return final_record(result)


class FilterModule(object):
    def filters(self):
        return {"burnin_staged": burnin_staged_filter}
