# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: to_mpi_args
short_description: Turn an env list into mpirun -x arguments
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Returns C(['-x', 'NAME=VALUE', ...]) for each C({name, value}) item, so every MPI rank gets the variable.
  - Items with C(valueFrom) are refused, since a command line cannot carry them.
options:
  _input:
    description: Env list of C({name, value}) mappings.
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: mpirun arguments from the base env
  ansible.builtin.debug:
    msg: "{{ false | gpufleet.burnin.base_nccl_env | gpufleet.burnin.to_mpi_args }}"
"""

RETURN = r"""
_value:
  description: Alternating C(-x) and C(NAME=VALUE) strings.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def to_mpi_args_filter(env):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.nccl_env import to_mpi_args

    try:
        return to_mpi_args(env)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.to_mpi_args: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"to_mpi_args": to_mpi_args_filter}
