# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: env_list
short_description: Normalise an env variable to a list of Kubernetes EnvVar mappings
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Accepts what an inventory, C(-e) or an AWX survey gives - a list of C({name, value}) mappings (C(valueFrom) kept),
    C(NAME=value) strings, a mapping of names to values, or one string holding a JSON list or C(NAME=value) items
    separated by commas or new lines.
  - Values are turned into strings, as Kubernetes requires.
options:
  _input:
    description: The env value.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Env from a survey answer
  ansible.builtin.debug:
    msg: "{{ 'NCCL_DEBUG=WARN,NCCL_ALGO=Ring' | gpufleet.burnin.env_list }}"
"""

RETURN = r"""
_value:
  description: The env list of C(name)/C(value) mappings (C(valueFrom) kept).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def env_list_filter(value):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.survey import env_list

    try:
        return env_list(value)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.env_list: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"env_list": env_list_filter}
