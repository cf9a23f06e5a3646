# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_vars
short_description: Check the variables of the role gpufleet.burnin.burnin before anything reaches a cluster
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Takes every C(burnin_*) variable defined for the host, as a mapping of name to value, and checks each one - types,
    bounds, Kubernetes names and quantities, image references, the allowed platforms, GPU architectures, workloads,
    frameworks, Trainer versions and report formats, the override items, the threshold records.
  - Text from an AWX survey or C(-e NAME=value) is parsed first (integers, booleans, JSON lists and mappings).
  - A C(burnin_*) name that no entry point of the role documents is refused, with the nearest known name.
  - The role runs it first (C(roles/burnin/tasks/validate.yml)); the error names the variable, the bad value and what
    is allowed.
options:
  _input:
    description: The variables, name to value.
    type: dict
    required: true
  on_error:
    description:
      - C(raise) fails the template with the message; C(return) returns C({error, vars}) instead, so a task can fail with
        the message alone (Ansible prefixes a failed filter's message with the fact it was resolving).
    type: str
    default: raise
    choices: [raise, return]
"""

EXAMPLES = r"""
- name: Check the role's variables
  ansible.builtin.set_fact:
    checked: "{{ {'burnin_nodes': '2', 'burnin_platform': 'aws'} | gpufleet.burnin.burnin_vars }}"
"""

RETURN = r"""
_value:
  description:
    - The checked variables, name to value, with text parsed (C(burnin_nodes) an integer, C(burnin_volumes) a list).
    - With O(on_error=return), C({error, vars}) - C(error) empty or the message, C(vars) the checked variables.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def burnin_vars_filter(given, on_error="raise"):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

    try:
        checked = check_role_vars(given)
    except BurninError as exc:
        if on_error == "return":
            return {"error": "%s" % exc, "vars": {}}
        raise AnsibleFilterError("%s" % exc)
    return {"error": "", "vars": checked} if on_error == "return" else checked


class FilterModule(object):
    def filters(self):
        return {"burnin_vars": burnin_vars_filter}
