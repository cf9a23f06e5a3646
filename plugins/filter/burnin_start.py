# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_start
short_description: Where a cluster's burn-in run goes, and its first result
version_added: 0.2.0
author: gpufleet.burnin maintainers
description:
  - From the role's checked variables (P(gpufleet.burnin.burnin_vars#filter)'s C(vars)) and the run id, the namespace
    (C(burnin_namespace), or C(<burnin_namespace>-<run id>) with C(burnin_namespace_per_run)), the TrainJob's name
    (C(<burnin_entry_name>-<run id>)) and the cluster's first result (outcome C(Pending)), as the role starts a run.
options:
  _input:
    description: The role's checked variables.
    type: dict
    required: true
  cluster:
    description: The cluster's name (the inventory host).
    type: str
    required: true
  run_id:
    description: The run id.
    type: str
    required: true
  check_mode:
    description: Whether the run is a dry run.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Start the run
  ansible.builtin.set_fact:
    run: "{{ burnin__checked | gpufleet.burnin.burnin_start(inventory_hostname, '20261201-101500') }}"
"""

RETURN = r"""
_value:
  description: Where the run goes.
  type: dict
  contains:
    namespace:
      description: The namespace of the run.
      type: str
    trainjob:
      description: The TrainJob's name.
      type: str
    problem:
      description: Why the names cannot be used (not DNS labels of at most 63 characters), or empty.
      type: str
    result:
      description: The cluster's first result (cluster, run_id, outcome C(Pending), platform and GPU as declared, namespace, trainjob, ...).
      type: dict
"""

from ansible.errors import AnsibleFilterError


def burnin_start_filter(variables, cluster, run_id, check_mode=False):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import run_start

    if not isinstance(variables, dict):
        raise AnsibleFilterError("gpufleet.burnin.burnin_start: the input must be the role's checked variables (a mapping)")
    return run_start(variables, str(cluster), str(run_id), check_mode=bool(check_mode))


class FilterModule(object):
    def filters(self):
        return {"burnin_start": burnin_start_filter}
