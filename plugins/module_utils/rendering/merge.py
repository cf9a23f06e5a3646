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


def check_when(when, field="when"):
    """Refuse a malformed ``when`` as a whole, before any condition is evaluated: an unknown operator is an error
    even when an earlier condition does not match. ``equals`` is a string, ``in`` and ``notIn`` lists of strings
    (a string there would be a substring match), ``workloadKind`` a string."""
    if when is None:
        return {}
    if not isinstance(when, dict):
        raise ConfigError(field, "must be a mapping of conditions (%s), got %r" % (", ".join(MATCH_FIELDS), when))
    unsupported = sorted("%s" % key for key in set(when) - set(MATCH_FIELDS))
    if unsupported:
        raise ConfigError(field, "unsupported condition(s) %s; supported: %s" % (", ".join(unsupported), ", ".join(MATCH_FIELDS)))
    for name, spec in when.items():
        where = "%s.%s" % (field, name)
        if name == "workloadKind":
            if spec is not None and not isinstance(spec, str):
                raise ConfigError(where, "must be a string such as TrainJob, got %r" % (spec,))
            continue
        if not isinstance(spec, dict) or set(spec) - set(_STRING_MATCH_KEYS):
            raise ConfigError(where, "must be a mapping with keys from %s, got %r" % (", ".join(_STRING_MATCH_KEYS), spec))
        if spec.get("equals") is not None and not isinstance(spec["equals"], str):
            raise ConfigError("%s.equals" % where, "must be a string, got %r" % (spec["equals"],))
        for key in ("in", "notIn"):
            items = spec.get(key)
            if items is not None and (not isinstance(items, list) or not all(isinstance(item, str) for item in items)):
                raise ConfigError("%s.%s" % (where, key), "must be a list of strings such as [aws, gcp], got %r" % (items,))
    return when


def _string_matches(spec, value):
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
    when = check_when(when)
    for field in ("platform", "gpuArchitecture", "instanceType", "framework"):
        if field not in when:
            continue
        value = facts.get(field)
        if field in _OPTIONAL_FACTS and not value:
            return False
        if not _string_matches(when[field], value):
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
            else:
                result[key] = merge_named(base.get(key), value)
        return result
    if isinstance(patch, dict):
        # RFC 7386: onto anything but a map (absent, null, a scalar) a map patch applies to an empty map, so its
        # nulls delete nothing and are dropped, nested ones too.
        return merge_named({}, patch)
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
