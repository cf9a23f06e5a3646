# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Model-independent NCCL environment: the base list, env merging and mpirun ``-x`` arguments.

Pure Python, no Ansible imports: shared by the filters, the action plugins and the templates.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

# Order and values are the original package's BaseNCCLEnvVars (doc-era, 10 entries).
_BASE_NCCL_ENV = (
    ("NCCL_DEBUG", "INFO"),
    ("NCCL_DEBUG_SUBSYS", "NET,INIT"),
    ("NCCL_NVLS_ENABLE", "1"),
    ("NCCL_CUMEM_ENABLE", "1"),
    ("NCCL_NET_GDR_C2C", "1"),
    ("NCCL_NET_GDR_LEVEL", "PHB"),
    ("NCCL_P2P_NET_CHUNKSIZE", "2097152"),
    ("NCCL_SHM_DISABLE", "1"),
    ("NCCL_MNNVL_ENABLE", None),  # follows enable_mnnvl
    ("NCCL_SOCKET_IFNAME", "eth0"),
)


def base_nccl_env(enable_mnnvl=False):
    """Return the 10 base NCCL variables as ``[{name, value}]``, values as strings."""
    if not isinstance(enable_mnnvl, bool):
        raise ConfigError("enable_mnnvl", "must be a boolean (true or false), got %r" % (enable_mnnvl,))
    mnnvl = "1" if enable_mnnvl else "0"
    return [{"name": name, "value": mnnvl if value is None else value} for name, value in _BASE_NCCL_ENV]


def _check_env_list(field, env):
    if env is None:
        return []
    if not isinstance(env, list):
        raise ConfigError(field, "must be a list of {name, value} mappings, got %s" % type(env).__name__)
    for index, item in enumerate(env):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item.get("name"):
            raise ConfigError("%s[%d]" % (field, index), "must be a mapping with a non-empty string 'name', got %r" % (item,))
    return env


def merge_env(base, user):
    """Merge ``user`` env over ``base`` exactly as the original MergeEnvVars.

    - empty ``user``: ``base`` itself is returned (not a copy);
    - otherwise: base entries whose name no user entry has, in base order, then every user entry in user order
      (duplicates inside ``user`` are kept; whole entries are carried, ``valueFrom`` included).
    Names compare case-sensitively.
    """
    base = _check_env_list("base", base)
    user = _check_env_list("user", user)
    if not user:
        return base
    user_names = set(item["name"] for item in user)
    return [item for item in base if item["name"] not in user_names] + list(user)


def _env_value(field, item):
    value = item.get("value", "")
    if isinstance(value, bool):
        value = "true" if value else "false"
    if not isinstance(value, (str, int, float)):
        raise ConfigError(field, "value of %s must be a string, got %r" % (item["name"], value))
    return "%s" % (value,)


def to_mpi_args(env):
    """Turn ``[{name, value}]`` into mpirun arguments ``['-x', 'NAME=VALUE', ...]``.

    Entries with ``valueFrom`` cannot be expressed on a command line and are refused.
    """
    env = _check_env_list("env", env)
    args = []
    for index, item in enumerate(env):
        if "valueFrom" in item:
            raise ConfigError("env[%d]" % index, "%s uses valueFrom, which mpirun -x cannot pass; give a plain value" % item["name"])
        args.extend(["-x", "%s=%s" % (item["name"], _env_value("env[%d]" % index, item))])
    return args
