# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_passed
short_description: Whether a cluster's burn-in result is a pass
version_added: 0.2.0
author: gpufleet.burnin maintainers
description:
  - The collection's one pass/fail rule, the same the role's summary, its final failure, the reports and the AWX
    artifact use.
  - A cluster passes when its C(outcome) is no failure (C(Complete), C(Succeeded), C(Checked), C(Applied), C(Cleaned))
    and its C(verdict), if it has one, is not C(fail) or C(error). C(warn) passes.
options:
  _input:
    description: A cluster's result, for example the role's C(burnin_result) or an entry of the AWX artifact C(burnin_results).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Fail the clusters that did not pass
  ansible.builtin.fail:
    msg: "{{ burnin_result.outcome }}: {{ burnin_result.reason }}"
  when: not (burnin_result | gpufleet.burnin.burnin_passed)
"""

RETURN = r"""
_value:
  description: True when the cluster passed.
  type: bool
"""

from ansible.errors import AnsibleFilterError


def burnin_passed_filter(result):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import cluster_passed

    if not isinstance(result, dict):
        raise AnsibleFilterError("gpufleet.burnin.burnin_passed: the input must be a cluster's result (a mapping), got %s" % type(result).__name__)
    return cluster_passed(result)


class FilterModule(object):
    def filters(self):
        return {"burnin_passed": burnin_passed_filter}
