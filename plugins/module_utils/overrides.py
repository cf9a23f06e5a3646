# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Platform overrides: render ``templates/overrides/workloadrun.yaml`` and parse it (the original BuildOverrides)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError, RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils.names import check_entry_name, check_framework
from ansible_collections.gpufleet.burnin.plugins.module_utils.templating import TemplateLibrary

OVERRIDES_TEMPLATE = "overrides/workloadrun.yaml"
OVERRIDE_KEYS = ("when", "jobTemplate", "jobTemplatePatch", "dependencies", "orchestration", "preCommand", "mpiArgs")


def _int(config, field, minimum, default):
    value = config.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(field, "must be an integer >= %d, got %r" % (minimum, value))
    return value


def normalize_override_config(config):
    """Validate the override data (the original OverrideConfig) and return the template data dict."""
    if not isinstance(config, dict):
        raise ConfigError("config", "must be a mapping")
    entry_name = check_entry_name(config.get("entry_name"))
    framework = check_framework(config.get("framework", "torch"))
    enable_mnnvl = config.get("enable_mnnvl", False)
    if not isinstance(enable_mnnvl, bool):
        raise ConfigError("enable_mnnvl", "must be a boolean (true or false), got %r" % (enable_mnnvl,))
    return {
        "entry_name": entry_name,
        "nodes": _int(config, "nodes", 1, 1),
        "gpus_per_node": _int(config, "gpus_per_node", 0, 0),
        "mlnx_per_node": _int(config, "mlnx_per_node", 0, 0),
        "enable_mnnvl": enable_mnnvl,
        "framework": framework,
    }


def parse_override(item, index):
    """One rendered list item -> override dict with only the keys that are set."""
    where = "override #%d" % (index + 1)
    if not isinstance(item, dict):
        raise ParseError("platform: parse overrides: %s is not a mapping" % where)
    unknown = sorted(set(item) - set(OVERRIDE_KEYS))
    if unknown:
        raise ParseError("platform: parse overrides: %s has unknown keys %s; allowed: %s" % (where, ", ".join(unknown), ", ".join(OVERRIDE_KEYS)))
    if not isinstance(item.get("when"), dict):
        raise ParseError("platform: parse overrides: %s needs a 'when' mapping" % where)
    override = {}
    for key in OVERRIDE_KEYS:
        value = item.get(key)
        if value is None or value == [] or value == {} and key != "when":
            continue
        if key == "jobTemplatePatch" and isinstance(value, str):
            # As the original: a string holds the JSON Patch document itself.
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise ParseError("platform: parse overrides: %s jobTemplatePatch is not JSON: %s" % (where, exc))
        if key in ("dependencies", "preCommand", "mpiArgs", "jobTemplatePatch") and not isinstance(value, list):
            raise ParseError("platform: parse overrides: %s %s must be a list" % (where, key))
        if key in ("preCommand", "mpiArgs"):
            value = ["%s" % v for v in value]
        override[key] = value
    return override


def build_overrides(config, library=None):
    """Render and parse the platform overrides for ``config`` (entry_name, nodes, gpus_per_node, mlnx_per_node,
    enable_mnnvl, framework). Returns the list in template order."""
    data = normalize_override_config(config)
    library = library or TemplateLibrary()
    try:
        rendered = library.render_yaml(OVERRIDES_TEMPLATE, data)
    except RenderError as exc:
        raise RenderError("platform: render overrides: %s" % exc)
    if not isinstance(rendered, list):
        raise ParseError("platform: parse overrides: templates/%s must render a YAML list, got %s"
                         % (OVERRIDES_TEMPLATE, type(rendered).__name__))
    return [parse_override(item, index) for index, item in enumerate(rendered)]
