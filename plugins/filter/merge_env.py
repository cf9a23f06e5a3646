# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: merge_env
short_description: Merge a user env list over a base env list
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Base entries whose name no user entry has, in base order, then every user entry in user order.
  - User values win by name and move to their user position; duplicates inside the user list are kept.
  - An empty user list returns the base list unchanged. Names compare case-sensitively.
positional: user
options:
  _input:
    description: The base env, a list of Kubernetes C(EnvVar) mappings.
    type: list
    elements: dict
    required: true
  user:
    description: The user env, a list of Kubernetes C(EnvVar) mappings (C(valueFrom) allowed).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: User NCCL_DEBUG over the base env
  ansible.builtin.debug:
    msg: "{{ false | gpufleet.burnin.base_nccl_env | gpufleet.burnin.merge_env([{'name': 'NCCL_DEBUG', 'value': 'WARN'}]) }}"
"""

RETURN = r"""
_value:
  description: The merged env list.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def merge_env_filter(base, user):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.nccl_env import merge_env

    try:
        return merge_env(base, user)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.merge_env: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"merge_env": merge_env_filter}
