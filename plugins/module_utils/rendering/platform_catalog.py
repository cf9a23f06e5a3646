# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The platform catalogue (``_lib/platforms/<platform>/platform.yaml``: shapes, NIC resources, variables, detection
markers, topology labels), checked
and cached; platform variables resolved over their defaults; default instance types; NIC counts and instance types
discovered from Node objects. Pure functions of plain data."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, load_yaml
from ansible_collections.gpufleet.burnin.plugins.module_utils.validate import GRAMMARS

PLATFORMS_LIB = "platforms"
# Kubernetes extended resource name: <domain>/<name>.
RESOURCE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")
_INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_VAR_TYPES = (("bool", bool), ("int", int), ("str", str), ("list", list))
_DETECTION_KEYS = ("provider_ids", "label_prefixes", "instance_types")
_CATALOG_KEYS = ("shapes", "nic_resources", "instance_type_labels", "vars", "transport", "detection", "topology_labels")
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
    if spec.get("format") is not None and (kind[0] != "str" or spec["format"] not in GRAMMARS):
        raise _catalog_error(path, "vars.%s format must be one of %s, for a string variable" % (name, ", ".join(sorted(GRAMMARS))))
    choices = spec.get("choices")
    if choices is not None and (not isinstance(choices, list) or spec["default"] not in choices):
        raise _catalog_error(path, "vars.%s choices must be a list holding the default" % name)
    return dict(spec, type=kind[0])


def _check_detection(path, detection):
    """A catalogue's ``detection`` (what a Node says of its platform, read by cluster/detect.py): provider_ids
    (prefixes of spec.providerID; one ending in ``://`` is a scheme, compared without case), label_prefixes (of label
    keys) and instance_types (regular expressions searched in the instance type), each a list of strings; the
    expressions compiled. None when the platform cannot be told from its nodes."""
    if detection is None:
        return None
    if not isinstance(detection, dict) or not detection or set(detection) - set(_DETECTION_KEYS):
        raise _catalog_error(path, "detection must be a mapping with keys from %s" % ", ".join(_DETECTION_KEYS))
    out = {}
    for key in _DETECTION_KEYS:
        values = detection.get(key) or []
        if not isinstance(values, list) or not all(isinstance(value, str) and value for value in values):
            raise _catalog_error(path, "detection.%s must be a list of non-empty strings" % key)
        out[key] = list(values)
    try:
        out["instance_types"] = [re.compile(pattern) for pattern in out["instance_types"]]
    except re.error as exc:
        raise _catalog_error(path, "detection.instance_types holds an invalid regular expression: %s" % exc)
    return out


def _check_topology_labels(path, labels):
    """The platform's topology labels (coarsest first, judging/isolation_parts.py), each a qualified label key."""
    pattern = GRAMMARS["qualified_name"][0]
    if not isinstance(labels, list) or not all(isinstance(label, str) and pattern.match(label) for label in labels) or len(set(labels)) < len(labels):
        raise _catalog_error(path, "topology_labels must be a list of distinct node label keys (such as example.com/rack), coarsest first")
    return list(labels)


def load_platform_catalog(lib_dir=LIB_DIR):
    """``{platform: {"shapes": {...}, "nic_resources": [...], "instance_type_labels": [...], "vars": {...}, "detection":
    {...} or None, "topology_labels": [...]}}`` from
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
        if not isinstance(data, dict) or set(data) - set(_CATALOG_KEYS):
            raise _catalog_error(label, "must be a mapping with keys from %s" % ", ".join(_CATALOG_KEYS))
        declared = [("transport", data.get("transport"))]
        declared += [("shapes.%s.transport" % shape, row.get("transport")) for shape, row in (data.get("shapes") or {}).items() if isinstance(row, dict)]
        for where, value in declared:
            if value is not None and not (isinstance(value, str) and re.match(r"^[a-z][a-z0-9-]*\Z", value)):
                raise _catalog_error(label, "%s must be a transport id (efa, ib, gib, tcpxo, tcpx, socket), got %r" % (where, value))
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
            if not isinstance(nic, dict) or not RESOURCE_NAME.match(str(nic.get("name"))) or nic.get("field") not in ("efa", "rdma"):
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
            "transport": data.get("transport"),
            "detection": _check_detection(label, data.get("detection")),
            "topology_labels": _check_topology_labels(label, data.get("topology_labels") or []),
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
            raise ConfigError("platform_vars.%s" % name, "must be a %s%s, got %r" % (spec["type"], " of strings" if spec["type"] == "list" else "", value))
        if spec.get("choices") and value not in spec["choices"]:
            raise ConfigError("platform_vars.%s" % name, "must be one of %s, got %r" % (", ".join("%s" % c for c in spec["choices"]), value))
        result[name] = copy.deepcopy(value)
    return result


def default_instance_type(platform, gpu_architecture, catalog):
    """The shape marked ``default`` for this GPU in the platform's catalogue, or None."""
    return ((catalog.get(platform) or {}).get("defaults") or {}).get(gpu_architecture)


def expected_transport(platform, gpu_architecture, instance_type=None, catalog=None):
    """The inter-node transport the catalogue expects: ``{"transport", "source"}``, or None when it names none.

    A known ``instance_type``: its shape's ``transport`` (a shape without one expects nothing). No instance type: the
    GPU's default shape's. Otherwise (no shape, or an instance type the catalogue does not list) the platform's own
    ``transport``, if any.
    """
    catalog = load_platform_catalog() if catalog is None else catalog
    info = catalog.get(platform) or {}
    shapes = info.get("shapes") or {}
    shape, how = None, None
    if instance_type and instance_type in shapes:
        shape, how = instance_type, "the instance type"
    elif not instance_type and (info.get("defaults") or {}).get(gpu_architecture):
        shape = info["defaults"][gpu_architecture]
        how = "the default shape for %s" % gpu_architecture
    if shape is not None:
        value = shapes[shape].get("transport")
        where = "_lib/platforms/%s/platform.yaml shapes.%s, %s" % (platform, shape, how)
        return {"transport": value, "source": where} if value else None
    if info.get("transport"):
        return {"transport": info["transport"], "source": "_lib/platforms/%s/platform.yaml transport" % platform}
    return None


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

    result = {"gpu_nodes": len(gpu_nodes) if nodes else 0, "instance_type": instance_type, "efa_per_node": None, "rdma_resource": None, "rdma_per_node": None}
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
