# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: name_refs
short_description: Normalise names to a list of Kubernetes LocalObjectReference mappings
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Accepts a list of names or C({name}) mappings, or one string holding a JSON list or names separated by commas,
    as an AWX survey gives it; returns C({name}) mappings, for example for C(imagePullSecrets).
options:
  _input:
    description: The names.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Pull secrets from a survey answer
  ansible.builtin.debug:
    msg: "{{ 'ngc-pull,mirror-pull' | gpufleet.burnin.name_refs }}"
"""

RETURN = r"""
_value:
  description: The references, one C(name) mapping per name.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def name_refs_filter(value):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.survey import name_refs

    try:
        return name_refs(value)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.name_refs: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"name_refs": name_refs_filter}
