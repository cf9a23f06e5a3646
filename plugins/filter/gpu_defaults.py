# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: gpu_defaults
short_description: GPUs and Mellanox NICs per node of a GPU architecture
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Reads the collection's C(_lib/gpu-defaults.yaml), as the original controller's C(GPUDefaults(arch, platform)).
  - The architecture's row applies, then the platform's exception for that architecture field by field (an explicit
    C(0) overrides). An unknown architecture gets the C(unknown) row (4 GPUs, no NIC request).
  - C(mlnx_per_node=0) means no C(nvidia.com/mlnxnics) request.
positional: platform
options:
  _input:
    description: The GPU architecture, for example C(h100), C(gb200), C(gb300).
    type: str
    required: true
  platform:
    description: The platform, for example C(aws) or C(oci); empty for none.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Eight GPUs and eight NICs on an H100 node
  ansible.builtin.debug:
    msg: "{{ 'h100' | gpufleet.burnin.gpu_defaults }}"

- name: OCI GB200 requests no NIC
  ansible.builtin.debug:
    msg: "{{ ('gb200' | gpufleet.burnin.gpu_defaults(platform='oci')).mlnx_per_node }}"
"""

RETURN = r"""
_value:
  description: The per-node counts.
  type: dict
  contains:
    gpus_per_node:
      description: GPUs per node.
      type: int
      sample: 8
    mlnx_per_node:
      description: Mellanox NICs per node; 0 requests none.
      type: int
      sample: 8
    known:
      description: Whether the architecture has its own row (false means the C(unknown) row applied).
      type: bool
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def gpu_defaults_filter(architecture, platform=""):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.defaults import gpu_defaults

    try:
        return gpu_defaults(architecture, platform or None)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.gpu_defaults: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"gpu_defaults": gpu_defaults_filter}
