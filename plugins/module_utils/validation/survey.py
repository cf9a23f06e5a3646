# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Structured role variables that may arrive as strings (AWX survey answers, ``-e NAME=value``).

- env: a list of Kubernetes EnvVar mappings, ``NAME=value`` strings, or one string holding a JSON/YAML list or
  ``NAME=value`` items separated by commas or new lines;
- name references (image pull secrets): a list of ``{name: ...}`` mappings or names, or one string of names
  separated by commas or a JSON list.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
_SEPARATORS = re.compile(r"[,\n]")


def _parse_string(field, value):
    text = value.strip()
    if not text:
        return []
    if text[0] in "[{":
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ConfigError(field, "looks like JSON but is not valid JSON: %s" % exc)
    return [item.strip() for item in _SEPARATORS.split(text) if item.strip()]


def env_list(value, field="env"):
    """Normalise an env value to a list of EnvVar mappings (see the module docstring)."""
    if value is None:
        return []
    if isinstance(value, str):
        value = _parse_string(field, value)
    if isinstance(value, dict):
        value = [{"name": key, "value": item} for key, item in value.items()]
    if not isinstance(value, list):
        raise ConfigError(field, "must be a list of {name, value} mappings or NAME=value strings, got %s" % type(value).__name__)
    result = []
    for index, item in enumerate(value):
        where = "%s[%d]" % (field, index)
        if isinstance(item, str):
            name, sep, text = item.partition("=")
            if not sep:
                raise ConfigError(where, "must be NAME=value, got %r" % (item,))
            item = {"name": name.strip(), "value": text}
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not _ENV_NAME.match(item["name"]):
            raise ConfigError(where, "must be a mapping with a valid 'name' (letters, digits, '_', '-', '.'), got %r" % (item,))
        # A null value would become the text "None" in the pod: refused, as YAML's `A:` with nothing after it is.
        if "value" in item and item["value"] is None:
            raise ConfigError("%s.value" % where, "is null; allowed: a string (quote it in YAML), or no value for an empty one")
        if "value" in item and isinstance(item["value"], (dict, list, tuple)):
            # value confused with valueFrom ({secretKeyRef: ...}) would reach the pod as the text of a mapping.
            hint = " (a Secret's or ConfigMap's key, a field or a resource goes under valueFrom, not value)" if isinstance(item["value"], dict) else ""
            raise ConfigError("%s.value" % where, "must be a string, got a %s%s" % ("mapping" if isinstance(item["value"], dict) else "list", hint))
        if "value" in item and isinstance(item["value"], bool):
            raise ConfigError("%s.value" % where, "must be a string, got a boolean (quote it in YAML: 'true' or 'false')")
        if "value" in item and not isinstance(item["value"], str):
            # A number is written as its text (NCCL_IB_TIMEOUT: 22), as the API server needs it.
            item = dict(item, value="%s" % item["value"])
        result.append(item)
    return result


def name_refs(value, field="image_pull_secrets"):
    """Normalise names or ``{name: ...}`` mappings to a list of ``{name: ...}`` mappings."""
    if value is None:
        return []
    if isinstance(value, str):
        value = _parse_string(field, value)
    if not isinstance(value, list):
        raise ConfigError(field, "must be a list of names or {name: ...} mappings, got %s" % type(value).__name__)
    result = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item:
            item = {"name": item}
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
            raise ConfigError("%s[%d]" % (field, index), "must be a name or a mapping with a 'name', got %r" % (item,))
        result.append(item)
    return result
