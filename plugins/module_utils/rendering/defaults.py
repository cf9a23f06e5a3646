# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""GPUs and Mellanox NICs per node for a GPU architecture, from ``_lib/gpu-defaults.yaml``.

The original's ``catalog.GPUDefaults(arch, platform)``: the architecture's row, then the platform's exception for
that architecture field by field (an explicit 0 overrides), and the ``unknown`` row for an unknown architecture.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file

GPU_DEFAULTS_FILE = os.path.join(LIB_DIR, "gpu-defaults.yaml")
_FIELDS = (("gpusPerNode", "gpus_per_node"), ("mlnxPerNode", "mlnx_per_node"))
_CACHE = {}


def load_gpu_defaults(path=GPU_DEFAULTS_FILE):
    """Parse and check the defaults table (cached per path)."""
    if path in _CACHE:
        return _CACHE[path]
    table = read_yaml_file(path, "GPU defaults")
    if not isinstance(table, dict) or not isinstance(table.get("architectures"), dict) or not isinstance(table.get("unknown"), dict):
        raise ParseError("GPU defaults %s needs the mappings 'architectures' and 'unknown'" % path)
    for where, row in [("unknown", table["unknown"])] + [("architectures.%s" % k, v) for k, v in table["architectures"].items()]:
        _check_row(path, where, row, complete=True)
    platforms = table.get("platforms") or {}
    if not isinstance(platforms, dict):
        raise ParseError("GPU defaults %s: 'platforms' must be a mapping" % path)
    for platform, rows in platforms.items():
        if not isinstance(rows, dict):
            raise ParseError("GPU defaults %s: platforms.%s must be a mapping of architectures" % (path, platform))
        for arch, row in rows.items():
            _check_row(path, "platforms.%s.%s" % (platform, arch), row, complete=False)
    _CACHE[path] = table
    return table


def _check_row(path, where, row, complete):
    if not isinstance(row, dict):
        raise ParseError("GPU defaults %s: %s must be a mapping" % (path, where))
    for key, dummy in _FIELDS:
        if key not in row:
            if complete:
                raise ParseError("GPU defaults %s: %s needs %s" % (path, where, key))
            continue
        value = row[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ParseError("GPU defaults %s: %s.%s must be an integer >= 0, got %r" % (path, where, key, value))


def gpu_defaults(architecture, platform=None, path=GPU_DEFAULTS_FILE):
    """Return ``{"gpus_per_node": int, "mlnx_per_node": int, "known": bool}`` for ``architecture`` on ``platform``."""
    if not isinstance(architecture, str) or not architecture:
        raise ConfigError("gpu_architecture", "must be a non-empty string such as h100 or gb200, got %r" % (architecture,))
    if platform is not None and not isinstance(platform, str):
        raise ConfigError("platform", "must be a string such as aws or oci, got %r" % (platform,))
    table = load_gpu_defaults(path)
    known = architecture in table["architectures"]
    row = dict(table["architectures"][architecture] if known else table["unknown"])
    if platform:
        row.update((table.get("platforms") or {}).get(platform, {}).get(architecture) or {})
    result = dict((name, row[key]) for key, name in _FIELDS)
    result["known"] = known
    return result
