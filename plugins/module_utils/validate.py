# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The one validation layer: every option of the plugins, checked on the controller before anything is rendered
or sent to a cluster. The role's variables go through the same checks (role_vars.py).

Each check raises ConfigError naming the field as the user wrote it, with the path inside it
(``overrides[2].jobTemplatePatch[0].op``), the bad value and what is allowed. The Kubernetes grammars are those of
apimachinery's validation (DNS-1123 labels and subdomains, label values, qualified names, quantities). The allowed
sets come from the data: platforms from ``_lib/platforms`` and the seed's ``when`` conditions, GPU architectures from
``_lib/gpu-defaults.yaml``, instance types from the platform catalogues, frameworks from names.py.

Values are never templated here: a string such as ``{{ lookup('pipe', 'id') }}`` is checked as the text it is.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import decimal
import json
import math
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

INT32_MAX = 2**31 - 1
# Sane upper bounds: beyond them a burn-in value is a typo (the largest GPU clusters have some 10^4 nodes; a node
# has at most 16 GPUs and a NIC per GPU or fewer, counted generously).
NODES_MAX = 100000
PER_NODE_MAX = 64
TIMEOUT_MAX = 7 * 24 * 3600
FIELD_MANAGER_MAX = 128  # apimachinery: fieldManager is at most 128 characters

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_NAME_PART = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
# name: (pattern, maximum length, what the user is told is allowed)
GRAMMARS = {
    "dns_label": (re.compile(r"^%s\Z" % _LABEL), 63, "a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit"),
    "dns_subdomain": (
        re.compile(r"^%s(\.%s)*\Z" % (_LABEL, _LABEL)),
        253,
        "a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit",
    ),
    "label_value": (
        re.compile(r"^(%s)?\Z" % _NAME_PART),
        63,
        "a label value: letters, digits, '-', '_' and '.', starting and ending with a letter or digit, or empty",
    ),
    "qualified_name": (
        # apimachinery IsQualifiedName: the prefix at most 253 characters, the name at most 63 (the lookaheads)
        re.compile(r"^((?=[^/]{1,253}/)%s(\.%s)*/)?(?=[^/]{1,63}\Z)%s\Z" % (_LABEL, _LABEL, _NAME_PART)),
        317,
        "a qualified name such as app or example.com/name (prefix a DNS subdomain, name at most 63 characters)",
    ),
    "env_name": (
        re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z"),
        4096,
        "an environment variable name: letters, digits, '_', '-' and '.', not starting with a digit",
    ),
    # The container image reference grammar (distribution/reference): [domain[:port]/]path[:tag][@digest].
    "image": (
        re.compile(
            r"^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*"
            r"(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
            r"(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?\Z"
        ),
        4096,
        "a container image reference such as nvcr.io/nvidia/pytorch:26.01-py3 (no spaces, lower-case repository)",
    ),
    "quantity": (
        re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[numkMGTPE])?\Z"),
        64,
        "a Kubernetes quantity such as 8, 500m, 2Gi or 1e3 (binary suffixes Ki Mi Gi Ti Pi Ei, decimal n u m k M G T P E)",
    ),
    "resource_name": (
        re.compile(r"^(%s(\.%s)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z" % (_LABEL, _LABEL)),
        253,
        "a resource name such as cpu, memory, nvidia.com/gpu or rdma/ib",
    ),
    "api_version": (
        re.compile(r"^(%s(\.%s)*/)?v[0-9]+((alpha|beta)[0-9]+)?\Z" % (_LABEL, _LABEL)),
        253,
        "an apiVersion such as v1 or trainer.kubeflow.org/v1alpha1",
    ),
    "kind": (re.compile(r"^[A-Z][A-Za-z0-9]*\Z"), 63, "a kind such as ConfigMap (a capitalised name of letters and digits)"),
    "path": (re.compile(r"^/[^\x00\n]*\Z"), 4096, "an absolute path"),
}
JSON_PATCH_OPS = ("add", "remove", "replace", "move", "copy", "test")
# Kinds that are not namespaced; every other kind needs metadata.namespace in k8s_apply.
CLUSTER_SCOPED_KINDS = (
    "Namespace",
    "Node",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "ClusterTrainingRuntime",
    "DeviceClass",
    "ResourceSlice",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "RuntimeClass",
    "IngressClass",
    "CSIDriver",
    "CSINode",
    "VolumeAttachment",
)
_ENV_KEYS = ("name", "value", "valueFrom")
_RESOURCES_KEYS = ("limits", "requests", "claims")


def describe(value):
    """The bad value as the user would recognise it, cut short."""
    try:
        text = json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# In order: bool before int (a bool is an int in Python).
_KINDS = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"), (dict, "a mapping"), (list, "a list"), (type(None), "null"))


def _kind(value):
    for cls, name in _KINDS:
        if isinstance(value, cls):
            return name
    return type(value).__name__


def fail(field, message, value=None, show=True):
    if show:
        message = "%s, got %s %s" % (message, _kind(value), describe(value))
    raise ConfigError(field, message)


def check_finite(field, value):
    """Refuse an infinite or NaN number anywhere in VALUE (YAML's .inf and .nan): ansible-core's argument spec would
    raise OverflowError converting it to an integer instead of naming the option."""
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        fail(field, "must be a finite number", value)
    if isinstance(value, dict):
        for key, item in value.items():
            check_finite("%s.%s" % (field, key) if field else str(key), item)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            check_finite("%s[%d]" % (field, index), item)


# The most digits a number given as text for an int or float option may have before the point.
NUMBER_TEXT_DIGITS_MAX = 19


def check_number_text(spec, args, field=""):
    """Refuse, naming the option, text given for an int or float option of the argument SPEC that ansible-core's
    conversion would make infinite ("inf": it raises OverflowError) or huge ("1e999999999": an integer of a billion
    digits), in ARGS and their suboptions. Other text is left to the argument spec."""
    for name, option in (spec or {}).items():
        if not isinstance(args, dict) or name not in args:
            continue
        value, path = args[name], "%s.%s" % (field, name) if field else name
        if option.get("type") in ("int", "float") and isinstance(value, str):
            try:
                number = decimal.Decimal(value.strip())
            except (decimal.DecimalException, ValueError):
                continue
            if not number.is_finite() or number.adjusted() >= NUMBER_TEXT_DIGITS_MAX:
                fail(path, "must be a finite number of at most %d digits" % NUMBER_TEXT_DIGITS_MAX, value)
        elif option.get("options") and isinstance(value, dict):
            check_number_text(option["options"], value, path)
        elif option.get("options") and isinstance(value, list):
            for index, item in enumerate(value):
                check_number_text(option["options"], item, "%s[%d]" % (path, index))


def check_numbers(spec, args):
    """A task's ARGS before ansible-core converts them by their argument SPEC: no infinite or NaN number anywhere
    (check_finite), no text for an int or float option that would convert to an infinite or a huge number
    (check_number_text)."""
    check_finite("", args)
    check_number_text(spec, args)


def check_int(field, value, low=0, high=INT32_MAX):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        fail(field, "must be an integer from %d to %d" % (low, high), value)
    return value


def check_optional_int(field, value, low=0, high=INT32_MAX):
    return None if value is None else check_int(field, value, low, high)


def check_bool(field, value):
    if not isinstance(value, bool):
        fail(field, "must be true or false", value)
    return value


def check_str(field, value, allow_empty=False):
    if not isinstance(value, str) or (not allow_empty and not value):
        fail(field, "must be a %sstring" % ("" if allow_empty else "non-empty "), value)
    return value


def check_grammar(field, value, grammar, allow_empty=False):
    pattern, maximum, what = GRAMMARS[grammar]
    if allow_empty and value == "":
        return value
    if not isinstance(value, str) or len(value) > maximum or not pattern.match(value):
        fail(field, "must be %s, at most %d characters" % (what, maximum), value)
    return value


def check_choice(field, value, choices, allow_empty=False):
    if allow_empty and value in ("", None):
        return value
    if not isinstance(value, str) or value not in choices:
        fail(field, "must be one of %s" % ", ".join(choices), value)
    return value


def check_mapping(field, value, allow_none=False):
    if allow_none and value is None:
        return {}
    if not isinstance(value, dict):
        fail(field, "must be a mapping", value)
    for key in value:
        if not isinstance(key, str):
            fail("%s" % field, "keys must be strings", key)
    return value


def check_list(field, value, allow_none=False):
    if allow_none and value is None:
        return []
    if not isinstance(value, list):
        fail(field, "must be a list", value)
    return value


def check_keys(field, value, allowed):
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise ConfigError(field, "unknown key(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(allowed)))


def check_words(field, value):
    """A list of command-line words: strings (numbers are taken as their text)."""
    check_list(field, value, allow_none=True)
    for index, item in enumerate(value or []):
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            fail("%s[%d]" % (field, index), "must be a string", item)
    return value


def check_string_map(field, value, key_grammar="qualified_name", value_grammar=None):
    check_mapping(field, value, allow_none=True)
    for key, item in (value or {}).items():
        check_grammar("%s[%s]" % (field, key), key, key_grammar)
        if value_grammar:
            check_grammar("%s.%s" % (field, key), item, value_grammar)
        else:
            check_str("%s.%s" % (field, key), item, allow_empty=True)
    return value


# --- pod-spec pieces ----------------------------------------------------------------------------------------------
def _items(field, value, keys=None):
    """``(path, item)`` of a list of mappings (None: empty), each checked to be a mapping with keys from ``keys``."""
    check_list(field, value, allow_none=True)
    for index, item in enumerate(value or []):
        where = "%s[%d]" % (field, index)
        if not isinstance(item, dict):
            fail(where, "must be a mapping: %s is a list of mappings" % field, item)
        if keys:
            check_keys(where, item, keys)
        yield where, item


# Bounds on a structured input (workload params, env, thresholds, overrides, platform vars, trainer...). YAML aliases
# arrive as one object referenced many times (a few KB of `&a [*b, *b, ...]` is billions of values once walked), so
# the size is counted per distinct object and memoised: linear in what was loaded, before anything walks it whole.
STRUCTURE_MAX_VALUES = 1000000
# The role's variables reach gpufleet.burnin.burnin_start as ansible-core's lazy containers, which hand out a new object at
# each look, so the memo cannot see an alias there and each value counted costs a lookup (a bomb took 24 s to refuse
# at 1,000,000 under ansible-core 2.21): a lower bound for them.
ROLE_VAR_MAX_VALUES = 100000
STRUCTURE_MAX_DEPTH = 32


def check_structure(field, value, max_values=STRUCTURE_MAX_VALUES, max_depth=STRUCTURE_MAX_DEPTH):
    """Refuse VALUE when it nests deeper than MAX_DEPTH or holds more than MAX_VALUES values once its aliases are
    expanded, naming FIELD and the limit; checked without expanding it."""
    sizes, heights = {}, {}
    # Iterative, so a value nested deeper than Python's recursion limit is refused, not a RecursionError.
    stack = [(value, 1, False)]
    while stack:
        item, depth, children_done = stack.pop()
        if not isinstance(item, (dict, list, tuple)):
            continue
        if depth > max_depth:
            fail(field, "nests deeper than %d levels; at most %d allowed" % (max_depth, max_depth), show=False)
        key = id(item)
        children = list(item.keys()) + list(item.values()) if isinstance(item, dict) else list(item)
        if children_done:
            total, height = 1, 1
            for child in children:
                if isinstance(child, (dict, list, tuple)):
                    total += sizes[id(child)]
                    height = max(height, heights[id(child)] + 1)
                else:
                    total += 1
            sizes[key], heights[key] = total, height
            # An alias reached again deeper down is counted once: its height, not its first depth, decides.
            if height > max_depth:
                fail(field, "nests deeper than %d levels; at most %d allowed" % (max_depth, max_depth), show=False)
            if total > max_values:
                fail(field, "holds more than %d values (YAML aliases counted as expanded); at most %d allowed" % (max_values, max_values), show=False)
            continue
        if key in sizes:
            continue
        sizes[key] = None  # being counted: a value that contains itself is refused below
        stack.append((item, depth, True))
        for child in children:
            if isinstance(child, (dict, list, tuple)):
                if sizes.get(id(child), 0) is None:
                    fail(field, "contains itself (a recursive YAML alias)", show=False)
                if id(child) not in sizes:
                    stack.append((child, depth + 1, False))
    return value


# A container's env longer than this is a mistake (the base NCCL env is 10 entries); the bound keeps every later step
# (merge, render, apply) small.
ENV_MAX = 256
SECRET_SOURCES = ("secretKeyRef",)
SECRET_REASON = (
    "reads a Secret: whoever sets the burn-in's env (an AWX survey, an inventory) could read any Secret of the burn-in "
    "namespace, the registry credential included, through the pod's logs; set burnin_allow_secret_env (allow_secret_env "
    "on the plugins) to allow it"
)


def check_env(field, value, allow_secret=False):
    """An env list: names are C identifiers, each once; values strings; valueFrom a mapping, a Secret's key only with
    ALLOW_SECRET."""
    if isinstance(value, list) and len(value) > ENV_MAX:
        fail(field, "has %d entries; at most %d allowed" % (len(value), ENV_MAX), show=False)
    seen = {}
    for where, item in _items(field, value, _ENV_KEYS):
        check_grammar("%s.name" % where, item.get("name"), "env_name")
        if item["name"] in seen:
            fail("%s.name" % where, "repeats %s (already %s); each name once" % (item["name"], seen[item["name"]]), item["name"])
        seen[item["name"]] = where
        if "value" in item:  # null is not a string for the API server either
            check_str("%s.value" % where, item["value"], allow_empty=True)
        if "valueFrom" in item:
            check_mapping("%s.valueFrom" % where, item["valueFrom"])
            secret = [key for key in SECRET_SOURCES if key in item["valueFrom"]]
            if secret and not allow_secret:
                fail("%s.valueFrom.%s" % (where, secret[0]), SECRET_REASON, item["valueFrom"][secret[0]])
    return value


def _named_items(field, value, extra=None):
    for where, item in _items(field, value):
        check_grammar("%s.name" % where, item.get("name"), "dns_label")
        if extra:
            extra(where, item)
    return value


def check_volumes(field, value):
    return _named_items(field, value)


def check_volume_mounts(field, value):
    def mount(where, item):
        if not isinstance(item.get("mountPath"), str) or not item["mountPath"] or ":" in item["mountPath"]:
            fail("%s.mountPath" % where, "must be a path without ':'", item.get("mountPath"))

    return _named_items(field, value, mount)


def check_containers(field, value, allow_secret=False):
    def container(where, item):
        check_grammar("%s.image" % where, item.get("image"), "image")
        for key in ("command", "args"):
            if key in item:
                check_words("%s.%s" % (where, key), item[key])
        if "env" in item:
            check_env("%s.env" % where, item["env"], allow_secret)
        if "resources" in item:
            check_resources("%s.resources" % where, item["resources"])
        if "volumeMounts" in item:
            check_volume_mounts("%s.volumeMounts" % where, item["volumeMounts"])

    return _named_items(field, value, container)


def check_resources(field, value):
    if value is None:
        return value
    check_mapping(field, value)
    check_keys(field, value, _RESOURCES_KEYS)
    for side in ("limits", "requests"):
        if value.get(side) is None:
            continue
        check_mapping("%s.%s" % (field, side), value[side])
        for name, amount in value[side].items():
            check_grammar("%s.%s[%s]" % (field, side, name), name, "resource_name")
            if isinstance(amount, bool) or not isinstance(amount, (int, str)) or (isinstance(amount, int) and amount < 0):
                fail("%s.%s.%s" % (field, side, name), "must be a quantity (a string such as 2Gi or an integer >= 0)", amount)
            if isinstance(amount, str):
                check_grammar("%s.%s.%s" % (field, side, name), amount, "quantity")
    if value.get("claims") is not None:
        _named_items("%s.claims" % field, value["claims"])
    return value


def check_name_refs(field, value):
    for where, item in _items(field, value, ("name",)):
        check_grammar("%s.name" % where, item.get("name"), "dns_subdomain")
    return value


# --- Kubernetes objects -------------------------------------------------------------------------------------------
def check_object(field, obj, need_namespace=False):
    """apiVersion, kind, metadata.name (a DNS-1123 subdomain), namespace, labels and annotations of one object."""
    check_mapping(field, obj)
    check_grammar("%s.apiVersion" % field, obj.get("apiVersion"), "api_version")
    check_grammar("%s.kind" % field, obj.get("kind"), "kind")
    metadata = check_mapping("%s.metadata" % field, obj.get("metadata"))
    check_grammar("%s.metadata.name" % field, metadata.get("name"), "dns_subdomain")
    namespace = metadata.get("namespace")
    if namespace is not None or (need_namespace and obj["kind"] not in CLUSTER_SCOPED_KINDS):
        if obj["kind"] in CLUSTER_SCOPED_KINDS:
            fail("%s.metadata.namespace" % field, "must be absent: %s is not namespaced" % obj["kind"], namespace)
        if namespace is None:
            raise ConfigError("%s.metadata.namespace" % field, "%s is namespaced: set the namespace (a DNS-1123 label)" % obj["kind"])
        check_grammar("%s.metadata.namespace" % field, namespace, "dns_label")
    check_string_map("%s.metadata.labels" % field, metadata.get("labels"), value_grammar="label_value")
    check_string_map("%s.metadata.annotations" % field, metadata.get("annotations"))
    for key in ("spec", "data", "status"):
        if key in obj and obj[key] is not None and not isinstance(obj[key], (dict, list)):
            fail("%s.%s" % (field, key), "must be a mapping", obj[key])
    return obj


def check_objects(field, objects, need_namespace=False):
    check_list(field, objects)
    for index, obj in enumerate(objects):
        check_object("%s[%d]" % (field, index), obj, need_namespace)
    return objects


def check_json_patch(field, operations):
    """RFC 6902: a list of {op, path[, value | from]}; paths are JSON Pointers."""
    check_list(field, operations)
    for index, operation in enumerate(operations):
        where = "%s[%d]" % (field, index)
        check_mapping(where, operation)
        check_choice("%s.op" % where, operation.get("op"), JSON_PATCH_OPS)
        allowed = (
            ("op", "path") + (("value",) if operation["op"] in ("add", "replace", "test") else ()) + (("from",) if operation["op"] in ("move", "copy") else ())
        )
        check_keys(where, operation, allowed)
        for key in ("path",) + (("from",) if "from" in allowed else ()):
            pointer = operation.get(key)
            if not isinstance(pointer, str) or not (pointer == "" or pointer.startswith("/")):
                fail("%s.%s" % (where, key), "must be a JSON Pointer: empty or starting with '/'", pointer)
        if "value" in allowed and "value" not in operation:
            raise ConfigError("%s.value" % where, "is required for op %s" % operation["op"])
    return operations


def parse_json_text(field, value):
    """JSON text (a survey answer, an ``-e`` value) parsed; anything else as it is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise ConfigError(field, "is text but not valid JSON (%s), got %s" % (exc, describe(value)))
