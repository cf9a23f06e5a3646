# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The names NCCL's log lines use, from ``_lib/nccl/networks.yaml`` (its header says where each comes from): net and
plugin names to transports, aws-ofi-nccl providers; and from ``_lib/nccl/warnings.yaml`` beside it, which WARN
messages and lines are a fault, which are a net plugin that failed to initialize, and which are noise."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file

NAMES_FILE = os.path.join(LIB_DIR, "nccl", "networks.yaml")
WARNINGS_FILE = os.path.join(LIB_DIR, "nccl", "warnings.yaml")
_CACHE = {}


def catalog():
    """{networks: [{name|prefix, transport, source}], ofi_providers: {provider: transport}, faults: [{host, regex, what}],
    plugin_init: [{regex, transport, what}], noise: [{regex, what}]}."""
    if "data" not in _CACHE:
        data = read_yaml_file(NAMES_FILE, "the NCCL names table")
        if not isinstance(data, dict) or not isinstance(data.get("networks"), list):
            raise ParseError("%s: no 'networks' list" % NAMES_FILE)
        warnings = read_yaml_file(WARNINGS_FILE, "the NCCL WARN table")
        if not isinstance(warnings, dict):
            raise ParseError("%s: not a mapping of faults, plugin_init and noise" % WARNINGS_FILE)
        faults = []
        for item in list(data.get("faults") or []) + list(warnings.get("faults") or []):
            faults.append({"host": bool(item.get("host")), "regex": re.compile(item["pattern"]), "what": item.get("what") or item["pattern"]})
        plugin_init = [
            {"regex": re.compile(item["pattern"]), "transport": item["transport"], "what": item.get("what") or item["pattern"]}
            for item in warnings.get("plugin_init") or []
        ]
        noise = [{"regex": re.compile(item["pattern"]), "what": item.get("what") or item["pattern"]} for item in warnings.get("noise") or []]
        _CACHE["data"] = {
            "networks": data["networks"],
            "ofi_providers": dict(data.get("ofi_providers") or {}),
            "faults": faults,
            "plugin_init": plugin_init,
            "noise": noise,
        }
    return _CACHE["data"]


def transport_of(name):
    """The transport id of a net or plugin name (``IBext_v6`` -> ``ib``), or None for a name the table lacks."""
    if not name:
        return None
    for entry in catalog()["networks"]:
        if entry.get("name") == name or (entry.get("prefix") and name.startswith(entry["prefix"])):
            return entry["transport"]
    return None


def fault(message, with_host):
    """What fault MESSAGE is (a WARN's message when WITH_HOST, else a whole line), or None."""
    for item in catalog()["faults"]:
        if item["host"] == with_host and item["regex"].search(message):
            return item["what"]
    return None


def plugin_failure(message):
    """{transport, what} when a WARN MESSAGE says a net plugin failed to initialize, else None."""
    for item in catalog()["plugin_init"]:
        if item["regex"].search(message):
            return {"transport": item["transport"], "what": item["what"]}
    return None


def noise(message):
    """What a WARN MESSAGE published from healthy runs is, or None."""
    for item in catalog()["noise"]:
        if item["regex"].search(message):
            return item["what"]
    return None
