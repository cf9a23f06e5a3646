# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Burn-in thresholds as data: loading, checking and normalizing threshold records, and selecting the record to
judge a cluster's metric by.

Thresholds live in ``_lib/thresholds.yaml`` (schema in its header); inventory records (``burnin_thresholds``)
override them and win over the collection's for the same metric. Grading a result against the selected records is
the job of plugins/module_utils/judging/nccl_judge.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file

THRESHOLDS_FILE = os.path.join(LIB_DIR, "thresholds.yaml")

# peak: one row (the largest, or `size`); avg: nccl-tests' average; range: every row whose size lies in `sizes`.
METRICS = ("peak", "avg", "range")
SIDES = ("out_of_place", "in_place", "both")
_NUMBERS = ("pass", "warn", "expected", "pass_ratio", "warn_ratio")
_RECORD_KEYS = frozenset(
    (
        "id",
        "platform",
        "gpu_architecture",
        "collective",
        "nodes",
        "gpus_per_node",
        "mnnvl",
        "metric",
        "size",
        "min_size",
        "side",
        "sweep",
        "sizes",
        "pass",
        "warn",
        "expected",
        "pass_ratio",
        "warn_ratio",
        "source",
        "note",
        "disabled",
    )
)
# Keys of one range of a range record's `sizes` list: its bounds, and its own numbers (else the record's).
_RANGE_KEYS = frozenset(("min", "max", "pass", "warn", "expected", "pass_ratio", "warn_ratio", "source", "note"))
_CACHE = {}


def parse_nodes(value, field="nodes"):
    """``2`` -> (2, 2); ``"2-18"`` -> (2, 18); ``"2+"`` -> (2, None); ``{min: 2, max: 18}``; None -> (1, None)."""
    if value is None:
        return (1, None)
    if isinstance(value, bool):
        raise ConfigError(field, "must be a node count (2), a range (2-18, 2+) or {min, max}, got %r" % (value,))
    if isinstance(value, int):
        low, high = value, value
    elif isinstance(value, str):
        match = re.match(r"^\s*(\d+)\s*(?:(-)\s*(\d+)?|(\+))?\s*\Z", value)
        if not match:
            raise ConfigError(field, "must be a node count (2), a range (2-18, 2+) or {min, max}, got %r" % (value,))
        low = int(match.group(1))
        if match.group(4) or (match.group(2) and not match.group(3)):
            high = None
        elif match.group(3):
            high = int(match.group(3))
        else:
            high = low
    elif isinstance(value, dict):
        unknown = sorted(set(value) - set(("min", "max")))
        if unknown:
            raise ConfigError(field, "unknown key(s) %s; allowed: min, max" % ", ".join(unknown))
        low, high = value.get("min", 1), value.get("max")
        for key, number in (("min", low), ("max", high)):
            if number is not None and (isinstance(number, bool) or not isinstance(number, int)):
                raise ConfigError("%s.%s" % (field, key), "must be an integer, got %r" % (number,))
    else:
        raise ConfigError(field, "must be a node count (2), a range (2-18, 2+) or {min, max}, got %r" % (value,))
    if low < 1 or (high is not None and high < low):
        raise ConfigError(field, "must be a range of node counts >= 1 with min <= max, got %r" % (value,))
    return (low, high)


def nodes_label(span):
    low, high = span
    if high is None:
        return "%d+" % low if low > 1 else "any"
    return str(low) if low == high else "%d-%d" % (low, high)


def _number(value, field):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(field, "must be a number >= 0 (GB/s or a ratio), got %r" % (value,))
    return float(value)


def normalize_record(record, where, origin="collection", defaults=None):
    """Check one threshold record and return it with every key filled; ``where`` names it in errors."""
    if not isinstance(record, dict):
        raise ConfigError(where, "must be a mapping of threshold keys, got %r" % (record,))
    unknown = sorted(set(record) - _RECORD_KEYS)
    if unknown:
        raise ConfigError(where, "unknown key(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(sorted(_RECORD_KEYS))))
    defaults = defaults or {}
    out = {"origin": origin}
    for key in ("platform", "gpu_architecture"):
        value = record.get(key, "*")
        if not isinstance(value, str) or not value:
            raise ConfigError("%s.%s" % (where, key), "must be a non-empty string or '*', got %r" % (value,))
        out[key] = value.lower()
    collective = record.get("collective")
    if not isinstance(collective, str) or not collective:
        raise ConfigError("%s.collective" % where, "is required: all_reduce, all_gather, ... (nccl-tests program without _perf)")
    out["collective"] = nccl_results.program_collective(collective)
    metric = record.get("metric", "range" if record.get("sizes") is not None else "peak")
    if metric not in METRICS:
        raise ConfigError("%s.metric" % where, "must be one of %s, got %r" % (", ".join(METRICS), metric))
    out["metric"] = metric
    if metric == "range":
        for key in ("size", "min_size", "sweep"):
            if record.get(key) is not None:
                raise ConfigError("%s.%s" % (where, key), "is for metric peak or avg; a range record judges every row inside its 'sizes'")
        if record.get("sizes") is None:
            raise ConfigError("%s.sizes" % where, "is required for metric range: {min: 1G, max: 16G}, or a list of such ranges with their own pass/warn")
    elif record.get("sizes") is not None:
        raise ConfigError("%s.sizes" % where, "is for metric range only (metric is %s); use size or min_size for a peak" % metric)
    out["nodes"] = parse_nodes(record.get("nodes"), "%s.nodes" % where)
    for key in ("gpus_per_node",):
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigError("%s.%s" % (where, key), "must be an integer >= 1, got %r" % (value,))
        out[key] = value
    mnnvl = record.get("mnnvl")
    if mnnvl is not None and not isinstance(mnnvl, bool):
        raise ConfigError("%s.mnnvl" % where, "must be true or false, got %r" % (mnnvl,))
    out["mnnvl"] = mnnvl
    for key in ("size", "min_size"):
        out[key] = None if record.get(key) is None else nccl_results.parse_size(record[key], "%s.%s" % (where, key))
    side = record.get("side", "out_of_place")
    if side not in SIDES:
        raise ConfigError("%s.side" % where, "must be one of %s, got %r" % (", ".join(SIDES), side))
    out["side"] = side
    sweep = record.get("sweep")
    if sweep is not None:
        if not isinstance(sweep, dict) or not sweep or set(sweep) - set(("min", "max")):
            raise ConfigError("%s.sweep" % where, "must be a mapping with min and/or max sizes, got %r" % (sweep,))
        sweep = dict((key, nccl_results.parse_size(value, "%s.sweep.%s" % (where, key))) for key, value in sweep.items())
    out["sweep"] = sweep
    out["disabled"] = bool(record.get("disabled", False))
    numbers = dict((key, _number(record[key], "%s.%s" % (where, key))) for key in _NUMBERS if record.get(key) is not None)
    source = record.get("source")
    listed = metric == "range" and isinstance(record.get("sizes"), list)
    if listed and "pass" not in numbers and "expected" not in numbers and not out["disabled"]:
        # Every range of the list brings its own pass (checked in _parse_ranges).
        out.update(expected=None, **{"pass": None, "warn": None, "derived": False})
    else:
        out.update(_grades(numbers, where, defaults, out["disabled"]))
    if metric == "range":
        out["ranges"] = _parse_ranges(record["sizes"], "%s.sizes" % where, out, numbers, defaults, origin, source)
    if origin == "collection":
        _check_sources(record, where, numbers, source)
    out["source"] = source if source is not None else origin
    out["note"] = record.get("note")
    out["id"] = record.get("id") or "%s-%s-%s-%s-%s" % (origin, out["platform"], out["gpu_architecture"], out["collective"], metric)
    if not isinstance(out["id"], str):
        raise ConfigError("%s.id" % where, "must be a string, got %r" % (out["id"],))
    return out


def _grades(numbers, where, defaults, disabled=False):
    """{pass, warn, expected, derived} from a record's (or a range's) numbers: pass/warn as given, or expected x ratios."""
    out = {"expected": numbers.get("expected")}
    if "pass" in numbers:
        out.update(warn=numbers.get("warn"), derived=False, **{"pass": numbers["pass"]})
    elif "expected" in numbers:
        pass_ratio = numbers.get("pass_ratio", defaults.get("pass_ratio"))
        warn_ratio = numbers.get("warn_ratio", defaults.get("warn_ratio"))
        if pass_ratio is None:
            raise ConfigError(where, "has 'expected' but no pass_ratio (and the data has no defaults.pass_ratio)")
        out["pass"] = round(numbers["expected"] * pass_ratio, 2)
        out["warn"] = None if warn_ratio is None else round(numbers["expected"] * warn_ratio, 2)
        out["derived"] = True
    elif disabled:
        out.update(warn=None, derived=False, **{"pass": None})
    else:
        raise ConfigError(where, "needs 'pass' (GB/s) or 'expected' (GB/s, with pass_ratio), or 'disabled: true'")
    if out["warn"] is not None and out["warn"] > out["pass"]:
        raise ConfigError("%s.warn" % where, "%s is above pass %s: the warning band lies below pass" % (out["warn"], out["pass"]))
    return out


def _bound(item, key, where):
    if item.get(key) is None:
        return None
    return nccl_results.parse_size(item[key], "%s.%s" % (where, key))


def _parse_ranges(value, where, record, numbers, defaults, origin, record_source):
    """A range record's ``sizes``: one mapping {min, max} judged by the record's pass/warn, or a list of ranges
    {min, max, pass, warn, expected, pass_ratio, warn_ratio, source, note}, each with its own numbers (else the
    record's). Returns [{min (bytes, 0 when open), max (bytes or None: open), pass, warn, expected, derived, source,
    note}], ordered by size; ranges may not overlap (a row is judged once)."""
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ConfigError(where, "must be a mapping {min, max} of sizes (1G, 16G) or a non-empty list of them")
    ranges = []
    for index, item in enumerate(items):
        at = "%s[%d]" % (where, index) if isinstance(value, list) else where
        if not isinstance(item, dict):
            raise ConfigError(at, "must be a mapping with min and/or max sizes (1G, 16G), got %r" % (item,))
        allowed = _RANGE_KEYS if isinstance(value, list) else frozenset(("min", "max"))
        unknown = sorted(set(item) - allowed)
        if unknown:
            raise ConfigError(at, "unknown key(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(sorted(allowed))))
        low, high = _bound(item, "min", at), _bound(item, "max", at)
        if low is None and high is None:
            raise ConfigError(at, "needs min and/or max (sizes such as 1G, 16G), got %r" % (item,))
        if low is not None and high is not None and high < low:
            raise ConfigError(at, "max %s is below min %s" % (nccl_results.size_label(high), nccl_results.size_label(low)))
        own = dict((key, _number(item[key], "%s.%s" % (at, key))) for key in _NUMBERS if item.get(key) is not None)
        if "pass" in own or "expected" in own:
            for key in ("pass_ratio", "warn_ratio"):
                if key not in own and key in numbers:
                    own[key] = numbers[key]
            grades = _grades(own, at, defaults)
        elif own:
            raise ConfigError(at, "has %s but no pass or expected of its own" % ", ".join(sorted(own)))
        elif record["pass"] is None and not record["disabled"]:
            raise ConfigError(at, "needs pass (GB/s) or expected (GB/s): the record has none for its ranges")
        else:
            grades = dict((key, record[key]) for key in ("pass", "warn", "expected", "derived"))
        source = item.get("source")
        if origin == "collection" and own and not (isinstance(source, str) and source.strip()) and not isinstance(record_source, str):
            raise ConfigError("%s.source" % at, "is required: where this range's numbers come from")
        ranges.append(dict(grades, min=low or 0, max=high, source=source, note=item.get("note")))
    ranges.sort(key=lambda item: item["min"])
    for earlier, later in zip(ranges, ranges[1:]):
        if earlier["max"] is None or later["min"] <= earlier["max"]:
            raise ConfigError(where, "ranges %s and %s overlap: a size may be judged by one range only" % (range_label(earlier), range_label(later)))
    return ranges


def range_label(item):
    """{min: 1G, max: 16G} -> "1G..16G"; open ends: "1G+", "up to 512M"."""
    if item["max"] is None:
        return "%s+" % nccl_results.size_label(item["min"])
    if not item["min"]:
        return "up to %s" % nccl_results.size_label(item["max"])
    return "%s..%s" % (nccl_results.size_label(item["min"]), nccl_results.size_label(item["max"]))


def _check_sources(record, where, numbers, source):
    """Collection data: every number of the record says where it comes from."""
    if isinstance(source, str) and source.strip():
        return
    if not isinstance(source, dict):
        raise ConfigError("%s.source" % where, "is required: where each number comes from (a string, or a mapping per number)")
    needed = [key for key in ("pass", "warn", "expected", "pass_ratio", "warn_ratio") if key in numbers]
    needed += [key for key in ("nodes", "size", "min_size", "sweep", "sizes") if record.get(key) is not None]
    missing = [key for key in needed if not str(source.get(key) or "").strip()]
    if missing:
        raise ConfigError("%s.source" % where, "names no source for %s" % ", ".join(missing))


def validate_thresholds(data, origin="collection", where="thresholds"):
    """Check a thresholds document ({schema, defaults, thresholds: [...]}) and return its normalized records."""
    if not isinstance(data, dict):
        raise ConfigError(where, "must be a mapping with a 'thresholds' list, got %r" % (type(data).__name__,))
    records = data.get("thresholds")
    if not isinstance(records, list):
        raise ConfigError("%s.thresholds" % where, "must be a list of threshold records")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ConfigError("%s.defaults" % where, "must be a mapping")
    ratios = {}
    for key in ("pass_ratio", "warn_ratio"):
        if defaults.get(key) is not None:
            ratios[key] = _number(defaults[key], "%s.defaults.%s" % (where, key))
    if origin == "collection" and ratios:
        _check_sources(defaults, "%s.defaults" % where, ratios, defaults.get("source"))
    out = [normalize_record(record, "%s.thresholds[%d]" % (where, index), origin, ratios) for index, record in enumerate(records)]
    seen = {}
    for index, record in enumerate(out):
        if record["id"] in seen:
            raise ConfigError("%s.thresholds[%d].id" % (where, index), "%r is already used by thresholds[%d]" % (record["id"], seen[record["id"]]))
        seen[record["id"]] = index
    return out


def load_thresholds(path=THRESHOLDS_FILE):
    """The collection's thresholds document, parsed and checked (cached per path)."""
    if path in _CACHE:
        return copy.deepcopy(_CACHE[path])
    data = read_yaml_file(path, "thresholds")
    try:
        validate_thresholds(data)
    except ConfigError as exc:
        raise ParseError("thresholds %s: %s" % (path, exc))
    _CACHE[path] = data
    return copy.deepcopy(data)


def _matches(record, facts, collective, metric=None):
    if record["collective"] != collective or (metric and record["metric"] != metric):
        return False
    for key in ("platform", "gpu_architecture"):
        if record[key] != "*" and record[key] != str(facts.get(key) or "").lower():
            return False
    low, high = record["nodes"]
    nodes = facts.get("nodes")
    if (low, high) != (1, None):
        if nodes is None or nodes < low or (high is not None and nodes > high):
            return False
    if record["gpus_per_node"] is not None and record["gpus_per_node"] != facts.get("gpus_per_node"):
        return False
    if record["mnnvl"] is not None and record["mnnvl"] != facts.get("mnnvl"):
        return False
    return True


def _specificity(record):
    low, high = record["nodes"]
    given = sum(1 for key in ("platform", "gpu_architecture") if record[key] != "*")
    given += sum(1 for key in ("gpus_per_node", "mnnvl") if record[key] is not None)
    width = 10**6 if high is None else high - low
    return (1 if record["origin"] == "inventory" else 0, given, 1 if low == high else 0, -width, 1 if record["size"] else 0)


def select_thresholds(facts, collective, thresholds=None, overrides=None):
    """The record to judge each metric by: ``{"peak": record or None, "avg": record or None}``.

    ``facts``: platform, gpu_architecture, nodes, gpus_per_node, mnnvl (unknown keys match only records that leave
    them open). ``thresholds``: a thresholds document (default: the collection's). ``overrides``: inventory records,
    or a document with a ``thresholds`` list; they win over the collection's for the same metric, and
    ``disabled: true`` turns a metric off.
    """
    records = validate_thresholds(load_thresholds() if thresholds is None else thresholds)
    if overrides:
        if isinstance(overrides, dict):
            overrides = overrides.get("thresholds")
        if not isinstance(overrides, list):
            raise ConfigError("overrides", "must be a list of threshold records (or a mapping with a 'thresholds' list)")
        records = validate_thresholds({"thresholds": overrides}, origin="inventory", where="overrides") + records
    collective = nccl_results.program_collective(collective)
    chosen = {}
    for metric in METRICS:
        best = None
        for record in records:
            if _matches(record, facts, collective, metric) and (best is None or _specificity(record) > _specificity(best)):
                best = record
        chosen[metric] = None if best is None or best["disabled"] else best
    return chosen


def nic_share(record, nics):
    """RECORD (a normalized threshold record, or None) as one NIC's share of it: pass, warn and expected (the record's
    and each range's) divided by NICS, the NICs a node's run spreads its inter-node traffic over. The isolation's
    one-NIC runs (judging/isolation_parts.py) are held to it: one NIC carries 1/NICS of a pair's traffic (NVIDIA's
    per-NIC figures, _lib/nccl/isolation.yaml ``peers``)."""
    if record is None or nics == 1:
        return record
    if isinstance(nics, bool) or not isinstance(nics, int) or nics < 1:
        raise ConfigError("one_nic_of", "must be an integer >= 1 (the NICs of the node), got %r" % (nics,))

    def shared(numbers):
        return dict(numbers, **dict((key, numbers[key] / float(nics)) for key in ("pass", "warn", "expected") if numbers.get(key) is not None))

    out = shared(record)
    out["id"] = "%s (one NIC of %d)" % (record["id"], nics)
    if record.get("ranges"):
        out["ranges"] = [shared(item) for item in record["ranges"]]
    return out


__all__ = [
    "METRICS",
    "SIDES",
    "THRESHOLDS_FILE",
    "load_thresholds",
    "nic_share",
    "nodes_label",
    "normalize_record",
    "parse_nodes",
    "range_label",
    "select_thresholds",
    "validate_thresholds",
]
