# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Platform overrides: render the override templates and parse them (the original BuildOverrides).

Two layers, rendered with the same data and concatenated in a fixed order:

1. the seed, ``templates/overrides/workloadrun.yaml``: the original's entries T1-T16, unchanged;
2. the platform layer (``extended_platforms``, on by default): every ``templates/overrides/platforms/*.yaml``
   in file-name order, each a YAML list of entries for one platform, built from ``_lib/platforms/<platform>/``.

The seed list is therefore always a prefix of the full list. Platform entries come later, so where both match
they merge over the seed's values (a ``null`` deletes a seed key, see merge.py).

The DRA policy (API version, ComputeDomain ``numNodes``) is in dra.py; the platform catalogue of ``_lib/platforms``
(shapes, NIC resources, variables, discovery from Node objects) in platform_catalog.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError, ParseError, RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.dra import (
    DRA_UNAVAILABLE,
    compute_domain_num_nodes,
    dra_unavailable_error,
    parse_server_version,
    resource_api_version,
)
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.merge import matches_when
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.names import check_entry_name, check_framework
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.platform_catalog import RESOURCE_NAME, load_platform_catalog, resolve_platform_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import shared_library

OVERRIDES_TEMPLATE = "overrides/workloadrun.yaml"
PLATFORM_TEMPLATES = "overrides/platforms"
OVERRIDE_KEYS = ("when", "jobTemplate", "jobTemplatePatch", "dependencies", "orchestration", "preCommand", "mpiArgs")


def _int(config, field, minimum, default):
    value = config.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(field, "must be an integer >= %d, got %r" % (minimum, value))
    return value


def _optional_int(config, field):
    value = config.get(field)
    if value is None:
        return None
    return _int(config, field, 0, None)


# --- template data -------------------------------------------------------------------------------------------
def normalize_override_config(config, catalog=None):
    """Validate the override data (the original OverrideConfig plus the platform layer's) and return the template
    data dict. ``catalog`` is the platform catalogue (default: the collection's ``_lib/platforms``)."""
    if not isinstance(config, dict):
        raise ConfigError("config", "must be a mapping")
    entry_name = check_entry_name(config.get("entry_name"))
    framework = check_framework(config.get("framework", "torch"))
    enable_mnnvl = config.get("enable_mnnvl", False)
    if not isinstance(enable_mnnvl, bool):
        raise ConfigError("enable_mnnvl", "must be a boolean (true or false), got %r" % (enable_mnnvl,))
    extended = config.get("extended_platforms", True)
    if not isinstance(extended, bool):
        raise ConfigError("extended_platforms", "must be a boolean (true or false), got %r" % (extended,))
    nodes = _int(config, "nodes", 1, 1)
    server_version = config.get("server_version")
    if server_version not in (None, ""):
        parse_server_version(server_version)
    rdma_resource = config.get("rdma_resource")
    if rdma_resource in ("",):
        rdma_resource = None
    if rdma_resource is not None and (not isinstance(rdma_resource, str) or not RESOURCE_NAME.match(rdma_resource)):
        raise ConfigError("rdma_resource", "must be an extended resource name such as rdma/ib or nvidia.com/hostdev, got %r" % (rdma_resource,))
    rdma_per_node = _optional_int(config, "rdma_per_node")
    if rdma_resource is not None and rdma_per_node is None:
        rdma_per_node = 1
    catalog = load_platform_catalog() if catalog is None else catalog
    return {
        "entry_name": entry_name,
        "nodes": nodes,
        "gpus_per_node": _int(config, "gpus_per_node", 0, 0),
        "mlnx_per_node": _int(config, "mlnx_per_node", 0, 0),
        "enable_mnnvl": enable_mnnvl,
        "framework": framework,
        "extended_platforms": extended,
        "server_version": server_version or None,
        "rct_api_version": resource_api_version(config.get("rct_api_version"), server_version),
        "compute_domain_num_nodes": compute_domain_num_nodes(config.get("dra_driver_version"), nodes),
        "efa_per_node": _optional_int(config, "efa_per_node"),
        "rdma_resource": rdma_resource,
        "rdma_per_node": rdma_per_node,
        "platform_vars": resolve_platform_vars(config.get("platform_vars"), catalog),
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


def override_templates(library, extended=True, platforms=None):
    """The override templates in render order: the seed, then (``extended``) the platform layer by file name,
    only the files of ``platforms`` when it is given (``platforms/<platform>.yaml``)."""
    layer = library.list_templates(PLATFORM_TEMPLATES) if extended else []
    if platforms is not None:
        layer = [path for path in layer if template_platform(path) in platforms]
    return [OVERRIDES_TEMPLATE] + layer


def template_platform(path):
    """``overrides/platforms/aws.yaml`` -> ``aws``; None for the seed template."""
    if not path.startswith(PLATFORM_TEMPLATES + "/"):
        return None
    return os.path.basename(path)[: -len(".yaml")]


def render_overrides(data, library, platforms=None):
    """Render the override templates for template ``data`` -> ``[(override, "templates/<path>")]`` in order.

    ``platforms``: render only these platforms' files of the platform layer (the seed always). Every entry of
    ``platforms/<platform>.yaml`` must carry ``when.platform.equals: <platform>``, so leaving the other files out
    cannot change which entries match a cluster of that platform.
    """
    result = []
    for path in override_templates(library, data["extended_platforms"], platforms):
        try:
            rendered = library.render_yaml(path, data)
        except RenderError as exc:
            raise RenderError("platform: render overrides: %s" % exc)
        if rendered is None and path != OVERRIDES_TEMPLATE:
            rendered = []  # a platform file whose entries are all conditional may render nothing
        if not isinstance(rendered, list):
            raise ParseError("platform: parse overrides: templates/%s must render a YAML list, got %s" % (path, type(rendered).__name__))
        platform = template_platform(path)
        for index, item in enumerate(rendered):
            try:
                override = parse_override(item, index)
            except ParseError as exc:
                raise ParseError("%s (templates/%s)" % (exc, path))
            if platform is not None and (override["when"].get("platform") or {}).get("equals") != platform:
                raise ParseError("platform: parse overrides: override #%d of templates/%s must have when.platform.equals: %s" % (index + 1, path, platform))
            result.append((override, "templates/%s" % path))
    return result


def needs_dra(obj):
    """True for objects that only work with the resource.k8s.io DRA API: claim templates, ComputeDomains (the NVIDIA
    DRA driver turns them into claim templates) and runtimes whose pods claim devices."""
    if obj.get("apiVersion") == DRA_UNAVAILABLE or obj.get("kind") in ("ResourceClaimTemplate", "ComputeDomain"):
        return True
    return '"resourceClaims"' in json.dumps(obj.get("spec") or {})


def admits_platform(override, platform):
    """Whether ``override`` can match a cluster of ``platform``: its ``when.platform`` condition holds for it (an
    entry without one matches any platform). The other conditions are left to the cluster's facts."""
    condition = override["when"].get("platform")
    return condition is None or matches_when({"platform": condition}, {"platform": platform})


def build_overrides_with_sources(config, library=None):
    """``(overrides, sources)``: the overrides in render order and, for each, the template it came from. With
    ``config["platform"]`` only the entries that can match that platform: the platform layer is its file alone and
    the seed keeps the entries whose ``when.platform`` admits it, so which entries match a cluster of that platform
    is the same (and the result, which Ansible copies in every task that reads it, is about half as long)."""
    library = library or shared_library()
    data = normalize_override_config(config, load_platform_catalog(library.lib_dir))
    platform = config.get("platform") or None
    if platform is not None and not (isinstance(platform, str) and re.match(r"^[a-z0-9][a-z0-9_-]*\Z", platform)):
        raise ConfigError("platform", "must be a platform name such as aws, gcp, azure, oci, coreweave, nebius, onprem, got %r" % (platform,))
    rendered = render_overrides(data, library, platforms=[platform] if platform else None)
    if data["rct_api_version"] == DRA_UNAVAILABLE:
        for override, dummy in rendered:
            if any(needs_dra(dep) for dep in override.get("dependencies", [])):
                raise dra_unavailable_error(data["server_version"], "the ComputeDomain and ResourceClaimTemplate overrides")
    if platform is not None:
        rendered = [(override, source) for override, source in rendered if admits_platform(override, platform)]
    return [override for override, dummy in rendered], [source for dummy, source in rendered]


def build_overrides(config, library=None):
    """Render and parse the platform overrides for ``config`` (entry_name, nodes, gpus_per_node, mlnx_per_node,
    enable_mnnvl, framework, plus the platform layer's data). Returns the list in render order; the seed's
    entries come first."""
    return build_overrides_with_sources(config, library)[0]


def warm_up():
    """Load the platform catalogue and every template into this process once (see TemplateLibrary.warm). The
    action plugins call it when Ansible imports them in its main process, before it forks a worker per host."""
    library = shared_library()
    library.warm()
    try:
        load_platform_catalog(library.lib_dir)
    except BurninError:
        pass  # reported by the render that needs the catalogue
