# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Override application: ``when`` matching, jobTemplate merge, JSON Patch, dependency merge.

Rules of the original Workflow controller: maps merge recursively, lists whose items all carry a ``name`` merge
by name, every other list is replaced; ``jobTemplatePatch`` (RFC 6902) runs after the merge.

Extension (not in the original, whose rule for null was not recorded): a ``null`` value in a patch deletes that
key, as in JSON Merge Patch (RFC 7386) and strategic merge patch. The platform layer uses it to take back a
seed value that a finer instance type does not want (templates/overrides/platforms/).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

try:
    import jsonpatch
    HAS_JSONPATCH = True
except ImportError:  # pragma: no cover - a documented requirement of the collection
    HAS_JSONPATCH = False

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

MATCH_FIELDS = ("platform", "gpuArchitecture", "instanceType", "framework", "workloadKind")
# Conditions on a fact that may be unknown: a condition on an unknown value never matches (not even notIn).
_OPTIONAL_FACTS = ("instanceType",)
_STRING_MATCH_KEYS = ("equals", "in", "notIn")


def _string_matches(field, spec, value):
    if not isinstance(spec, dict) or set(spec) - set(_STRING_MATCH_KEYS):
        raise ConfigError("when.%s" % field, "must be a mapping with keys from %s, got %r" % (", ".join(_STRING_MATCH_KEYS), spec))
    if spec.get("equals") not in (None, "") and spec["equals"] != value:
        return False
    if spec.get("in") and value not in spec["in"]:
        return False
    if spec.get("notIn") and value in spec["notIn"]:
        return False
    return True


def matches_when(when, facts):
    """True when every condition of ``when`` holds for ``facts`` (platform, gpuArchitecture, instanceType,
    framework, workloadKind). Case-sensitive; an empty ``when`` always matches. ``workloadKind`` is a plain string.
    An entry with an ``instanceType`` condition never matches when the instance type is unknown (None or empty)."""
    when = when or {}
    if not isinstance(when, dict):
        raise ConfigError("when", "must be a mapping, got %r" % (when,))
    unsupported = sorted(set(when) - set(MATCH_FIELDS))
    if unsupported:
        raise ConfigError("when", "unsupported condition(s) %s; supported: %s" % (", ".join(unsupported), ", ".join(MATCH_FIELDS)))
    for field in ("platform", "gpuArchitecture", "instanceType", "framework"):
        if field not in when:
            continue
        value = facts.get(field)
        if field in _OPTIONAL_FACTS and not value:
            _string_matches(field, when[field], value)  # still refuse a malformed condition
            return False
        if not _string_matches(field, when[field], value):
            return False
    if when.get("workloadKind") and when["workloadKind"] != facts.get("workloadKind", "TrainJob"):
        return False
    return True


def _is_named_list(value):
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) and "name" in item for item in value)


def merge_named(base, patch):
    """Return ``base`` merged with ``patch``: maps recursively, named lists by ``name``, other lists replaced,
    and a ``null`` value in a patch map deletes the key (RFC 7386)."""
    if isinstance(base, dict) and isinstance(patch, dict):
        result = dict(base)
        for key, value in patch.items():
            if value is None:
                result.pop(key, None)
            elif key in base:
                result[key] = merge_named(base[key], value)
            elif isinstance(value, dict):
                result[key] = merge_named({}, value)  # drops nulls nested in a new map too
            else:
                result[key] = copy.deepcopy(value)
        return result
    if _is_named_list(base) and _is_named_list(patch):
        result = list(base)
        positions = dict((item["name"], index) for index, item in enumerate(result))
        for item in patch:
            if item["name"] in positions:
                result[positions[item["name"]]] = merge_named(result[positions[item["name"]]], item)
            else:
                positions[item["name"]] = len(result)
                result.append(copy.deepcopy(item))
        return result
    return copy.deepcopy(patch)


def apply_json_patch(document, operations, field="jobTemplatePatch"):
    """Apply RFC 6902 ``operations`` to a copy of ``document`` (library: jsonpatch)."""
    if not HAS_JSONPATCH:
        raise ConfigError(field, "the Python library 'jsonpatch' is required on the controller")
    try:
        return jsonpatch.JsonPatch(operations).apply(document, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError, ValueError) as exc:
        raise ConfigError(field, "cannot apply JSON Patch: %s" % exc)


def object_key(obj):
    metadata = obj.get("metadata") or {}
    return (obj.get("apiVersion"), obj.get("kind"), metadata.get("name"))


def merge_objects(objects):
    """Merge objects that share (apiVersion, kind, name) into the first of them, keeping first-seen order."""
    merged = []
    index = {}
    for obj in objects:
        key = object_key(obj)
        if key in index:
            merged[index[key]] = merge_named(merged[index[key]], obj)
        else:
            index[key] = len(merged)
            merged.append(merge_named({}, obj) if isinstance(obj, dict) else copy.deepcopy(obj))
    return merged
