# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: base_nccl_env
short_description: The model-independent base NCCL environment
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Returns the 10 base NCCL variables of the original burn-in operator, in order, as C({name, value}) items.
  - C(NCCL_MNNVL_ENABLE) is C(1) when the input is true, else C(0). Platform variables come from overrides.
options:
  _input:
    description: Whether multi-node NVLink is enabled.
    type: bool
    required: true
"""

EXAMPLES = r"""
- name: Base env with MNNVL
  ansible.builtin.debug:
    msg: "{{ true | gpufleet.burnin.base_nccl_env }}"
"""

RETURN = r"""
_value:
  description: C(NCCL_DEBUG), C(NCCL_DEBUG_SUBSYS), C(NCCL_NVLS_ENABLE), C(NCCL_CUMEM_ENABLE), C(NCCL_NET_GDR_C2C),
    C(NCCL_NET_GDR_LEVEL), C(NCCL_P2P_NET_CHUNKSIZE), C(NCCL_SHM_DISABLE), C(NCCL_MNNVL_ENABLE), C(NCCL_SOCKET_IFNAME).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def base_nccl_env_filter(enable_mnnvl):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.nccl_env import base_nccl_env

    try:
        return base_nccl_env(enable_mnnvl)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.base_nccl_env: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"base_nccl_env": base_nccl_env_filter}
