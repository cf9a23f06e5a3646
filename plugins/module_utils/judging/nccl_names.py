# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The names NCCL's log lines use, from ``_lib/nccl/networks.yaml`` (its header says where each comes from): net and
plugin names to transports, aws-ofi-nccl providers, and the WARN messages and lines that are a fault."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file

NAMES_FILE = os.path.join(LIB_DIR, "nccl", "networks.yaml")
_CACHE = {}


def catalog():
    """{networks: [{name|prefix, transport, source}], ofi_providers: {provider: transport}, faults: [{host, regex, what}]}."""
    if "data" not in _CACHE:
        data = read_yaml_file(NAMES_FILE, "the NCCL names table")
        if not isinstance(data, dict) or not isinstance(data.get("networks"), list):
            raise ParseError("%s: no 'networks' list" % NAMES_FILE)
        faults = []
        for item in data.get("faults") or []:
            faults.append({"host": bool(item.get("host")), "regex": re.compile(item["pattern"]), "what": item.get("what") or item["pattern"]})
        _CACHE["data"] = {"networks": data["networks"], "ofi_providers": dict(data.get("ofi_providers") or {}), "faults": faults}
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
