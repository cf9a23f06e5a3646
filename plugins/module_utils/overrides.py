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

Also here, as pure functions of plain data: the DRA API version policy (``resource_api_version``), the
ComputeDomain ``numNodes`` policy (``compute_domain_num_nodes``), the platform catalogue of ``_lib/platforms``
(``load_platform_catalog``: shapes, NIC resources, variables), default instance types and discovery of NIC
counts from Node objects (``discover_node_resources``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError, ParseError, RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils.names import check_entry_name, check_framework
from ansible_collections.gpufleet.burnin.plugins.module_utils.templating import LIB_DIR, load_yaml, shared_library

OVERRIDES_TEMPLATE = "overrides/workloadrun.yaml"
PLATFORM_TEMPLATES = "overrides/platforms"
PLATFORMS_LIB = "platforms"
OVERRIDE_KEYS = ("when", "jobTemplate", "jobTemplatePatch", "dependencies", "orchestration", "preCommand", "mpiArgs")

# --- DRA (resource.k8s.io) API version ------------------------------------------------------------------------
RESOURCE_API_GROUP = "resource.k8s.io"
RCT_API_VERSIONS = ("v1", "v1beta2", "v1beta1")
RCT_API_DEFAULT = "v1"
# Rendered in place of the apiVersion when the server is too old for DRA; an error once DRA is actually needed.
DRA_UNAVAILABLE = "resource.k8s.io/UNAVAILABLE"
_SERVER_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")
_DRIVER_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")
# IMEXDaemonsWithDNSNames is on by default from NVIDIA DRA driver chart v25.8.0: numNodes 0 is then recommended.
DNS_NAMES_DRIVER = (25, 8, 0)
# Kubernetes extended resource name: <domain>/<name>.
_RESOURCE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_VAR_TYPES = (("bool", bool), ("int", int), ("str", str), ("list", list))


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


def parse_server_version(value, field="server_version"):
    """``(major, minor)`` of a Kubernetes server version such as ``v1.33.2``, ``1.34`` or ``v1.34.3-gke.1318000``."""
    match = _SERVER_VERSION.match(value) if isinstance(value, str) else None
    if not match:
        raise ConfigError(field, "must be a Kubernetes version such as v1.33.2 or 1.34, got %r" % (value,))
    return int(match.group(1)), int(match.group(2))


def resource_api_version(explicit=None, server_version=None):
    """The ``resource.k8s.io`` apiVersion for ResourceClaimTemplates.

    ``explicit`` (``v1``, ``v1beta2``, ``v1beta1``, with or without the group) wins. Otherwise from the server
    version: 1.34 and later -> v1 (GA), 1.33 -> v1beta2, 1.32 -> v1beta1; older servers have no DRA API and give
    ``DRA_UNAVAILABLE`` (an error once an object needs DRA). Neither given -> v1, as the seed.
    """
    if explicit not in (None, ""):
        version = explicit[len(RESOURCE_API_GROUP) + 1:] if isinstance(explicit, str) and explicit.startswith(RESOURCE_API_GROUP + "/") else explicit
        if version not in RCT_API_VERSIONS:
            raise ConfigError("rct_api_version", "must be one of %s (optionally prefixed with %s/), got %r"
                              % (", ".join(RCT_API_VERSIONS), RESOURCE_API_GROUP, explicit))
        return "%s/%s" % (RESOURCE_API_GROUP, version)
    if server_version in (None, ""):
        return "%s/%s" % (RESOURCE_API_GROUP, RCT_API_DEFAULT)
    major, minor = parse_server_version(server_version)
    if (major, minor) >= (1, 34):
        return RESOURCE_API_GROUP + "/v1"
    if (major, minor) == (1, 33):
        return RESOURCE_API_GROUP + "/v1beta2"
    if (major, minor) == (1, 32):
        return RESOURCE_API_GROUP + "/v1beta1"
    return DRA_UNAVAILABLE


def dra_unavailable_error(server_version, what):
    return ConfigError("server_version", "Kubernetes %s has no resource.k8s.io DRA API, which %s needs; allowed: a server "
                                         ">= v1.32 (v1beta1 on 1.32, v1beta2 on 1.33, v1 on 1.34 and later), or set "
                                         "rct_api_version explicitly" % (server_version, what))


def parse_driver_version(value):
    """``(major, minor, patch)`` of an NVIDIA DRA driver version such as ``v25.8.0``, ``25.3.2`` or ``0.4.0``."""
    match = _DRIVER_VERSION.match(value) if isinstance(value, str) else None
    if not match:
        raise ConfigError("dra_driver_version", "must be a version such as v25.8.0 or 0.4.0, got %r" % (value,))
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def compute_domain_num_nodes(dra_driver_version, nodes):
    """ComputeDomain ``spec.numNodes`` for the NVIDIA DRA driver version (platforms reference §11.1).

    - unknown (None): 0, as the seed;
    - 25.8.0 and later (``IMEXDaemonsWithDNSNames`` on by default): 0, the recommended value;
    - 25.x before 25.8.0 (gate off): must equal the node count, or pods wait in ContainerCreating;
    - major below 25: the kubernetes-sigs ``dra-driver-nvidia-gpu`` numbering (v0.4.0 on), newer than 25.12: 0.
    """
    if dra_driver_version in (None, ""):
        return 0
    version = parse_driver_version(dra_driver_version)
    if version[0] >= 25 and version < DNS_NAMES_DRIVER:
        return nodes
    return 0


# --- the platform catalogue (_lib/platforms/<platform>/platform.yaml) ----------------------------------------
_CATALOGS = {}


def _catalog_error(path, message):
    return ParseError("platform catalogue %s: %s" % (path, message))


def _check_var(path, name, spec):
    if not isinstance(spec, dict) or "default" not in spec or not isinstance(spec.get("description"), str):
        raise _catalog_error(path, "vars.%s needs a default and a description" % name)
    kind = [label for label, cls in _VAR_TYPES if isinstance(spec["default"], cls)]
    if not kind:
        raise _catalog_error(path, "vars.%s default must be a boolean, integer, string or list of strings" % name)
    if kind[0] == "list" and not all(isinstance(item, str) for item in spec["default"]):
        raise _catalog_error(path, "vars.%s default must be a list of strings" % name)
    choices = spec.get("choices")
    if choices is not None and (not isinstance(choices, list) or spec["default"] not in choices):
        raise _catalog_error(path, "vars.%s choices must be a list holding the default" % name)
    return dict(spec, type=kind[0])


def load_platform_catalog(lib_dir=LIB_DIR):
    """``{platform: {"shapes": {...}, "nic_resources": [...], "instance_type_labels": [...], "vars": {...}}}`` from
    every ``_lib/platforms/<platform>/platform.yaml`` (plain YAML), checked and cached per directory."""
    if lib_dir in _CATALOGS:
        return _CATALOGS[lib_dir]
    root = os.path.join(lib_dir, PLATFORMS_LIB)
    catalog = {}
    var_owner = {}
    for platform in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, platform, "platform.yaml")
        if not os.path.isfile(path):
            continue
        label = "_lib/%s/%s/platform.yaml" % (PLATFORMS_LIB, platform)
        with open(path) as handle:
            data = load_yaml(handle.read(), label) or {}
        if not isinstance(data, dict) or set(data) - {"shapes", "nic_resources", "instance_type_labels", "vars"}:
            raise _catalog_error(label, "must be a mapping with keys from shapes, nic_resources, instance_type_labels, vars")
        shapes = data.get("shapes") or {}
        defaults = {}
        for shape, row in shapes.items():
            if not isinstance(row, dict) or not isinstance(row.get("gpu"), str):
                raise _catalog_error(label, "shapes.%s needs a gpu (architecture)" % shape)
            if row.get("default"):
                if row["gpu"] in defaults:
                    raise _catalog_error(label, "shapes %s and %s are both the default for %s" % (defaults[row["gpu"]], shape, row["gpu"]))
                defaults[row["gpu"]] = shape
        nics = data.get("nic_resources") or []
        for index, nic in enumerate(nics):
            if not isinstance(nic, dict) or not _RESOURCE_NAME.match(str(nic.get("name"))) or nic.get("field") not in ("efa", "rdma"):
                raise _catalog_error(label, "nic_resources[%d] needs a resource name and field efa or rdma" % index)
        variables = {}
        for name, spec in (data.get("vars") or {}).items():
            if name in var_owner:
                raise _catalog_error(label, "variable %s is already defined by platform %s" % (name, var_owner[name]))
            var_owner[name] = platform
            variables[name] = _check_var(label, name, spec)
        catalog[platform] = {
            "shapes": shapes,
            "defaults": defaults,
            "nic_resources": nics,
            "instance_type_labels": list(data.get("instance_type_labels") or []),
            "vars": variables,
        }
    _CATALOGS[lib_dir] = catalog
    return catalog


def platform_var_specs(catalog):
    """Every platform variable: ``{name: {default, description, type, choices?, platform}}``."""
    specs = {}
    for platform, data in catalog.items():
        for name, spec in data["vars"].items():
            specs[name] = dict(spec, platform=platform)
    return specs


def resolve_platform_vars(given, catalog):
    """The catalogue's defaults with ``given`` over them; unknown names, wrong types or choices are errors."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise ConfigError("platform_vars", "must be a mapping of variable names to values, got %r" % (given,))
    specs = platform_var_specs(catalog)
    unknown = sorted(set(given) - set(specs))
    if unknown:
        raise ConfigError("platform_vars", "unknown variable(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(sorted(specs))))
    result = dict((name, copy.deepcopy(spec["default"])) for name, spec in specs.items())
    for name, value in given.items():
        spec = specs[name]
        cls = dict(_VAR_TYPES)[spec["type"]]
        ok = isinstance(value, cls) and (spec["type"] == "bool" or not isinstance(value, bool))
        if ok and spec["type"] == "list":
            ok = all(isinstance(item, str) for item in value)
        if not ok:
            raise ConfigError("platform_vars.%s" % name, "must be a %s%s, got %r"
                              % (spec["type"], " of strings" if spec["type"] == "list" else "", value))
        if spec.get("choices") and value not in spec["choices"]:
            raise ConfigError("platform_vars.%s" % name, "must be one of %s, got %r" % (", ".join("%s" % c for c in spec["choices"]), value))
        result[name] = copy.deepcopy(value)
    return result


def default_instance_type(platform, gpu_architecture, catalog):
    """The shape marked ``default`` for this GPU in the platform's catalogue, or None."""
    return ((catalog.get(platform) or {}).get("defaults") or {}).get(gpu_architecture)


def _quantity(value):
    """An integer device count from a Kubernetes quantity (``"8"``, ``8``); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def discover_node_resources(nodes, platform=None, catalog=None):
    """What the Node objects say about one cluster's GPU nodes (pure function: the caller lists the nodes).

    Returns ``{"gpu_nodes", "instance_type", "efa_per_node", "rdma_resource", "rdma_per_node"}``:

    - GPU nodes: nodes with ``nvidia.com/gpu`` allocatable (or capacity) above 0; all nodes when none has it;
    - ``instance_type``: the most common ``node.kubernetes.io/instance-type`` (then the platform's own label, e.g.
      CoreWeave's ``node.coreweave.cloud/type``) of the GPU nodes;
    - ``efa_per_node``: the smallest ``vpc.amazonaws.com/efa`` allocatable among the GPU nodes that have it;
    - ``rdma_resource`` / ``rdma_per_node``: the first of the platform's NIC resources (catalogue order) that the
      GPU nodes offer; a shared resource (``shared: true``) is requested as 1, an exclusive one as the smallest
      allocatable count.
    Every value is None when the nodes do not say.
    """
    if not isinstance(nodes, list) or not all(isinstance(node, dict) for node in nodes):
        raise ConfigError("cluster_nodes", "must be a list of Node objects (mappings), got %r" % (type(nodes).__name__,))
    catalog = load_platform_catalog() if catalog is None else catalog
    info = catalog.get(platform) or {}

    def amounts(node):
        status = node.get("status") or {}
        return status.get("allocatable") or status.get("capacity") or {}

    gpu_nodes = [node for node in nodes if (_quantity(amounts(node).get("nvidia.com/gpu")) or 0) > 0] or list(nodes)
    labels_order = list(_INSTANCE_TYPE_LABELS) + list(info.get("instance_type_labels") or [])
    counts = {}
    for node in gpu_nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        for key in labels_order:
            if isinstance(labels.get(key), str) and labels[key]:
                counts[labels[key]] = counts.get(labels[key], 0) + 1
                break
    instance_type = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0] if counts else None

    def smallest(resource):
        values = [_quantity(amounts(node).get(resource)) for node in gpu_nodes]
        values = [value for value in values if value]
        return min(values) if values else None

    result = {"gpu_nodes": len(gpu_nodes) if nodes else 0, "instance_type": instance_type,
              "efa_per_node": None, "rdma_resource": None, "rdma_per_node": None}
    for nic in info.get("nic_resources") or []:
        count = smallest(nic["name"])
        if not count:
            continue
        if nic["field"] == "efa" and result["efa_per_node"] is None:
            result["efa_per_node"] = count
        elif nic["field"] == "rdma" and result["rdma_resource"] is None:
            result["rdma_resource"] = nic["name"]
            result["rdma_per_node"] = 1 if nic.get("shared") else count
    return result


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
    if rdma_resource is not None and (not isinstance(rdma_resource, str) or not _RESOURCE_NAME.match(rdma_resource)):
        raise ConfigError("rdma_resource", "must be an extended resource name such as rdma/ib or nvidia.com/hostdev, got %r"
                          % (rdma_resource,))
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
    return os.path.basename(path)[:-len(".yaml")]


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
                raise ParseError("platform: parse overrides: override #%d of templates/%s must have when.platform.equals: %s"
                                 % (index + 1, path, platform))
            result.append((override, "templates/%s" % path))
    return result


def needs_dra(obj):
    """True for objects that only work with the resource.k8s.io DRA API: claim templates, ComputeDomains (the NVIDIA
    DRA driver turns them into claim templates) and runtimes whose pods claim devices."""
    if obj.get("apiVersion") == DRA_UNAVAILABLE or obj.get("kind") in ("ResourceClaimTemplate", "ComputeDomain"):
        return True
    return '"resourceClaims"' in json.dumps(obj.get("spec") or {})


def build_overrides_with_sources(config, library=None):
    """``(overrides, sources)``: the overrides in render order and, for each, the template it came from. With
    ``config["platform"]`` the platform layer is that platform's file only (the seed is always whole)."""
    library = library or shared_library()
    data = normalize_override_config(config, load_platform_catalog(library.lib_dir))
    platform = config.get("platform") or None
    if platform is not None and not (isinstance(platform, str) and re.match(r"^[a-z0-9][a-z0-9_-]*$", platform)):
        raise ConfigError("platform", "must be a platform name such as aws, gcp, azure, oci, coreweave, nebius, onprem, got %r"
                          % (platform,))
    rendered = render_overrides(data, library, platforms=[platform] if platform else None)
    if data["rct_api_version"] == DRA_UNAVAILABLE:
        for override, dummy in rendered:
            if any(needs_dra(dep) for dep in override.get("dependencies", [])):
                raise dra_unavailable_error(data["server_version"], "the ComputeDomain and ResourceClaimTemplate overrides")
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
