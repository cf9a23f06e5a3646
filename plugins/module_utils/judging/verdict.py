# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Burn-in verdicts: thresholds as data, their selection, judging a parsed nccl-tests result, node attribution.

A verdict is ``pass``, ``warn``, ``fail`` or ``error`` (no result), always with a reason. Thresholds live in
``_lib/thresholds.yaml`` (schema in its header); inventory records override them. Attribution reads the pod
listing (as ``kubernetes.core.k8s_info`` returns it) and the pods' logs, and says which nodes and pods took part
and which failed, like the original operator's succeeded/failed node lists.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results, transport
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import VERDICTS
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import platform_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file

THRESHOLDS_FILE = os.path.join(LIB_DIR, "thresholds.yaml")

_SEVERITY = dict((name, rank) for rank, name in enumerate(VERDICTS))
METRICS = ("peak", "avg")
SIDES = ("out_of_place", "in_place", "both")
_NUMBERS = ("pass", "warn", "expected", "pass_ratio", "warn_ratio")
_RECORD_KEYS = frozenset(("id", "platform", "gpu_architecture", "collective", "nodes", "gpus_per_node", "mnnvl", "metric", "size",
                          "min_size", "side", "sweep", "pass", "warn", "expected", "pass_ratio", "warn_ratio", "source", "note",
                          "disabled"))
JOB_OK = ("Complete", "Succeeded")
_CACHE = {}

# Worker pods stopped by SIGTERM/SIGKILL once the launcher is done are not failures.
_STOP_CODES = (137, 143)
_ROLE_LABELS = ("jobset.sigs.k8s.io/replicatedjob-name", "training.kubeflow.org/replica-type", "trainer.kubeflow.org/replicated-job-name")


def worst(verdicts):
    """The most severe of ``verdicts`` (pass < warn < fail < error); ``pass`` for none."""
    result = "pass"
    for verdict in verdicts:
        if _SEVERITY[verdict] > _SEVERITY[result]:
            result = verdict
    return result


# ------------------------------------------------------------------------------------------------ thresholds data

def parse_nodes(value, field="nodes"):
    """``2`` -> (2, 2); ``"2-18"`` -> (2, 18); ``"2+"`` -> (2, None); ``{min: 2, max: 18}``; None -> (1, None)."""
    if value is None:
        return (1, None)
    if isinstance(value, bool):
        raise ConfigError(field, "must be a node count (2), a range (2-18, 2+) or {min, max}, got %r" % (value,))
    if isinstance(value, int):
        low, high = value, value
    elif isinstance(value, str):
        match = re.match(r"^\s*(\d+)\s*(?:(-)\s*(\d+)?|(\+))?\s*$", value)
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
    metric = record.get("metric", "peak")
    if metric not in METRICS:
        raise ConfigError("%s.metric" % where, "must be one of %s, got %r" % (", ".join(METRICS), metric))
    out["metric"] = metric
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
    out["expected"] = numbers.get("expected")
    source = record.get("source")
    if "pass" in numbers:
        out["pass"] = numbers["pass"]
        out["warn"] = numbers.get("warn")
        out["derived"] = False
    elif "expected" in numbers:
        pass_ratio = numbers.get("pass_ratio", defaults.get("pass_ratio"))
        warn_ratio = numbers.get("warn_ratio", defaults.get("warn_ratio"))
        if pass_ratio is None:
            raise ConfigError(where, "has 'expected' but no pass_ratio (and the data has no defaults.pass_ratio)")
        out["pass"] = round(numbers["expected"] * pass_ratio, 2)
        out["warn"] = None if warn_ratio is None else round(numbers["expected"] * warn_ratio, 2)
        out["derived"] = True
    elif out["disabled"]:
        out["pass"] = out["warn"] = None
        out["derived"] = False
    else:
        raise ConfigError(where, "needs 'pass' (GB/s) or 'expected' (GB/s, with pass_ratio), or 'disabled: true'")
    if out["warn"] is not None and out["warn"] > out["pass"]:
        raise ConfigError("%s.warn" % where, "%s is above pass %s: the warning band lies below pass" % (out["warn"], out["pass"]))
    if origin == "collection":
        _check_sources(record, where, numbers, source)
    out["source"] = source if source is not None else origin
    out["note"] = record.get("note")
    out["id"] = record.get("id") or "%s-%s-%s-%s-%s" % (origin, out["platform"], out["gpu_architecture"], out["collective"], metric)
    if not isinstance(out["id"], str):
        raise ConfigError("%s.id" % where, "must be a string, got %r" % (out["id"],))
    return out


def _check_sources(record, where, numbers, source):
    """Collection data: every number of the record says where it comes from."""
    if isinstance(source, str) and source.strip():
        return
    if not isinstance(source, dict):
        raise ConfigError("%s.source" % where, "is required: where each number comes from (a string, or a mapping per number)")
    needed = [key for key in ("pass", "warn", "expected", "pass_ratio", "warn_ratio") if key in numbers]
    needed += [key for key in ("nodes", "size", "min_size", "sweep") if record.get(key) is not None]
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
    width = 10 ** 6 if high is None else high - low
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


# ------------------------------------------------------------------------------------------------ judging

def _gb(value):
    return "n/a" if value is None else ("%.1f" % value if value < 1000 else "%.0f" % value)


def _grade(value, record):
    if value >= record["pass"]:
        return "pass"
    if record["warn"] is not None and value >= record["warn"]:
        return "warn"
    return "fail"


def _bounds(record):
    text = ">= %s GB/s" % _gb(record["pass"])
    if record["warn"] is not None:
        text += ", warn >= %s" % _gb(record["warn"])
    return text


def _threshold_summary(record):
    return {
        "id": record["id"], "metric": record["metric"], "origin": record["origin"], "pass": record["pass"], "warn": record["warn"],
        "expected": record["expected"], "derived": record["derived"], "size": record["size"], "min_size": record["min_size"],
        "side": record["side"], "sweep": record["sweep"], "nodes": nodes_label(record["nodes"]), "source": record["source"],
        "note": record["note"],
    }


def _side_value(row, side):
    oop, ip = (row.get("oop") or {}).get("busbw"), (row.get("ip") or {}).get("busbw")
    if side == "in_place":
        return ip, "in-place"
    if side == "both":
        values = [value for value in (oop, ip) if value is not None]
        return (min(values) if values else None), "lower of out-of-place and in-place"
    if oop is None:
        return ip, "in-place (no out-of-place column)"
    return oop, "out-of-place"


def _peak_check(result, record):
    rows = sorted(result.get("rows") or [], key=lambda row: row["size"])
    check = {"name": "peak", "threshold": record["id"], "pass": record["pass"], "warn": record["warn"], "value": None, "size": None}
    label = "%s (%s)" % (record["id"], _bounds(record))
    if not rows:
        check.update(verdict="error", reason="no result rows to judge against %s" % label)
        return check
    if record["size"] is not None:
        matching = [row for row in rows if row["size"] == record["size"]]
        if not matching:
            check.update(verdict="warn", reason="busbw not measured at %s (the run covers %s..%s): %s not judged" % (
                nccl_results.size_label(record["size"]), nccl_results.size_label(rows[0]["size"]),
                nccl_results.size_label(rows[-1]["size"]), record["id"]))
            return check
        row = matching[-1]
    else:
        row = rows[-1]
        if record["min_size"] is not None and row["size"] < record["min_size"]:
            check.update(size=row["size"], value=_side_value(row, record["side"])[0],
                         verdict="warn", reason="largest size %s is below the %s that %s was measured at: not comparable" % (
                             nccl_results.size_label(row["size"]), nccl_results.size_label(record["min_size"]), record["id"]))
            return check
    value, side_text = _side_value(row, record["side"])
    check.update(size=row["size"], side=side_text, value=value)
    if value is None:
        check.update(verdict="error", reason="no busbw at %s to judge against %s" % (nccl_results.size_label(row["size"]), label))
        return check
    verdict = _grade(value, record)
    where = "busbw %s GB/s at %s (%s)" % (_gb(value), nccl_results.size_label(row["size"]), side_text)
    if verdict == "warn":
        reason = "%s is below %s GB/s but above %s GB/s, in the warning band of %s" % (where, _gb(record["pass"]), _gb(record["warn"]), record["id"])
    else:
        reason = "%s %s %s" % (where, "meets" if verdict == "pass" else "is below", label)
    check.update(verdict=verdict, reason=reason)
    return check


def _avg_check(result, record):
    check = {"name": "avg", "threshold": record["id"], "pass": record["pass"], "warn": record["warn"], "value": result.get("avg_busbw")}
    label = "%s (%s)" % (record["id"], _bounds(record))
    value = result.get("avg_busbw")
    if value is None:
        check.update(verdict="error", reason="no '# Avg bus bandwidth' value to judge against %s" % label)
        return check
    sweep = record["sweep"] or {}
    config = result.get("config") or {}
    rows = sorted(result.get("rows") or [], key=lambda row: row["size"])
    run_min = config.get("min_bytes", rows[0]["size"] if rows else None)
    run_max = config.get("max_bytes", rows[-1]["size"] if rows else None)
    for key, actual in (("min", run_min), ("max", run_max)):
        if key in sweep and actual is not None and actual != sweep[key]:
            check.update(verdict="warn", reason="the run's sweep %s..%s differs from the %s..%s that %s averages over: not comparable" % (
                nccl_results.size_label(run_min), nccl_results.size_label(run_max), nccl_results.size_label(sweep.get("min")) if "min" in sweep else "?",
                nccl_results.size_label(sweep.get("max")) if "max" in sweep else "?", record["id"]))
            return check
    verdict = _grade(value, record)
    if verdict == "warn":
        reason = "average busbw %s GB/s is below %s GB/s but above %s GB/s, in the warning band of %s" % (
            _gb(value), _gb(record["pass"]), _gb(record["warn"]), record["id"])
    else:
        reason = "average busbw %s GB/s %s %s" % (_gb(value), "meets" if verdict == "pass" else "is below", label)
    check.update(verdict=verdict, reason=reason)
    return check


def _sizes_text(sizes):
    return ", ".join(nccl_results.size_label(size) for size in sizes[:6]) + (", ..." if len(sizes) > 6 else "")


def judge(result, facts=None, collective=None, thresholds=None, overrides=None, job_outcome=None, job_reason=None,
          on_missing="warn", error=None, workload=None, transport_evidence=None, expected_transport=None, locate=None):
    """Judge one burn-in: a parsed nccl-tests ``result`` (or None), the TrainJob's outcome, the thresholds.

    ``facts``: platform, gpu_architecture, nodes, gpus_per_node, mnnvl. ``collective``: all_reduce, all_gather, ...
    (default: the result's); None with no result judges a non-NCCL workload by its job outcome only.
    ``error``: why there is no result (a parse error), reported as the ``error`` verdict. ``on_missing``: the
    verdict when no threshold matches (warn, pass or fail). ``transport_evidence``: what
    :func:`transport.parse_transport` read from the logs, judged against ``expected_transport`` ({transport, source}
    or None) as the ``transport`` check; ``locate``: host -> {pod, node} for its evidence.
    Returns {workload, collective, verdict, reason, checks, notes, thresholds, metrics, series, facts, errors, warnings,
    problems, transport}; each check has name, verdict, reason (and value, size, threshold where they apply); a check
    with ``note: true`` is information that never decides the verdict (its reason is in ``notes``, not ``reason``).
    """
    facts = dict(facts or {})
    if on_missing not in ("pass", "warn", "fail"):
        raise ConfigError("on_missing", "must be pass, warn or fail, got %r" % (on_missing,))
    if result is not None and not isinstance(result, dict):
        raise ConfigError("result", "must be a parsed nccl-tests result (gpufleet.burnin.nccl_results), got %s" % type(result).__name__)
    collective = nccl_results.program_collective(collective or (result or {}).get("collective"))
    checks = []
    if job_outcome:
        checks.append(_job_check(job_outcome, job_reason, result is not None or error is not None, bool(collective)))
    if error:
        checks.append({"name": "result", "verdict": "error", "reason": "no result: %s" % error})
    elif result is None and collective:
        checks.append({"name": "result", "verdict": "error", "reason": "no result: no nccl-tests output to judge"})
    chosen = {}
    if result is not None:
        checks.extend(_result_checks(result))
        if result.get("complete", True) and collective:
            chosen = select_thresholds(facts, collective, thresholds, overrides)
            judged = False
            for metric, builder in (("peak", _peak_check), ("avg", _avg_check)):
                if chosen.get(metric):
                    checks.append(builder(result, chosen[metric]))
                    judged = True
            if not judged:
                checks.append({"name": "threshold", "verdict": on_missing, "reason": "no threshold for %s/%s %s on %s node(s)%s: busbw not judged" % (
                    facts.get("platform") or "?", facts.get("gpu_architecture") or "?", collective, facts.get("nodes") or "?",
                    "" if facts.get("mnnvl") is None else (" with MNNVL" if facts.get("mnnvl") else " without MNNVL"))})
        elif collective is None:
            checks.append({"name": "threshold", "verdict": on_missing, "reason": "the output does not name its collective: busbw not judged"})
    if transport_evidence is not None:
        checks.append(transport.check(transport_evidence, expected_transport, facts, locate))
    if not [check for check in checks if not check.get("note")]:
        checks.append({"name": "result", "verdict": "error", "reason": "no result and no job outcome to judge"})
    if job_outcome in ("Failed", "Timeout") and (result is not None or error is not None):
        # The job failed and left (partial) output: a failed burn-in, not a missing result.
        for check in checks:
            if check["name"] == "result" and check["verdict"] == "error":
                check["verdict"] = "fail"
    verdict = worst(check["verdict"] for check in checks)
    reasons = [check["reason"] for check in checks if check["verdict"] == verdict and not check.get("note")]
    proof = [check for check in checks if check["name"] == "transport"]
    return {
        "workload": workload,
        "collective": collective,
        "verdict": verdict,
        "reason": "; ".join(reasons),
        "checks": checks,
        "notes": [check["reason"] for check in checks if check.get("note")],
        "transport": dict((key, proof[0].get(key)) for key in ("verdict", "expected", "expected_source", "seen", "nvls", "mnnvl")) if proof else None,
        "thresholds": [_threshold_summary(record) for metric, record in sorted(chosen.items()) if record],
        "metrics": _metrics(result),
        "series": nccl_results.series(result),
        "facts": facts,
        "errors": list((result or {}).get("errors") or [])[:10],
        "warnings": len((result or {}).get("warnings") or []),
        "problems": list((result or {}).get("problems") or []),
    }


def _job_check(outcome, reason, have_output, is_nccl):
    detail = (": %s" % reason) if reason else ""
    if outcome in JOB_OK:
        return {"name": "job", "verdict": "pass", "reason": "TrainJob %s%s" % (outcome, "" if is_nccl else " (no bandwidth to judge)")}
    if outcome == "Timeout" and not have_output:
        return {"name": "job", "verdict": "error", "reason": "no result: the TrainJob did not finish in time%s" % detail}
    if outcome in ("Failed", "Timeout"):
        return {"name": "job", "verdict": "fail", "reason": "TrainJob %s%s" % (outcome, detail)}
    return {"name": "job", "verdict": "error", "reason": "no result: the burn-in ended %s%s" % (outcome, detail)}


def _result_checks(result):
    checks = []
    if not result.get("complete", True):
        problems = result.get("problems") or ["the output is incomplete"]
        checks.append({"name": "result", "verdict": "error", "reason": "no complete result: %s" % problems[0]})
    wrong = result.get("wrong_total") or 0
    if wrong:
        checks.append({"name": "wrong", "verdict": "fail", "value": wrong, "reason": "%d wrong elements (#wrong) at %s" % (
            wrong, _sizes_text(result.get("wrong_sizes") or []))})
    elif result.get("out_of_bounds"):
        checks.append({"name": "wrong", "verdict": "fail", "value": result["out_of_bounds"],
                       "reason": "%d out-of-bounds values reported by nccl-tests" % result["out_of_bounds"]})
    if result.get("avg_busbw_check") == "FAILED":
        checks.append({"name": "min_bw", "verdict": "fail", "value": result.get("avg_busbw"),
                       "reason": "nccl-tests' own NCCL_TESTS_MIN_BW check failed (average %s GB/s)" % _gb(result.get("avg_busbw"))})
    if result.get("errors") and result.get("complete", True):
        checks.append({"name": "errors", "verdict": "fail", "reason": "the test reported: %s" % result["errors"][0]})
    return checks


def _metrics(result):
    if not result:
        return {}
    return dict((key, result.get(key)) for key in (
        "program", "largest_size", "peak_busbw", "peak_busbw_in_place", "avg_busbw", "max_busbw", "max_busbw_size", "wrong_total",
        "out_of_bounds", "nccl_version", "nccl_tests_version", "cuda_version", "complete", "hosts"))


# ------------------------------------------------------------------------------------------------ attribution

def _pod_role(pod):
    labels = (pod.get("metadata") or {}).get("labels") or {}
    for key in _ROLE_LABELS:
        if labels.get(key):
            return str(labels[key]).lower()
    name = (pod.get("metadata") or {}).get("name") or ""
    return "launcher" if "-launcher-" in name else "node"


def _excused(job_ok, role, deleted):
    """Whether a container stopped by SIGTERM/SIGKILL is no failure of its pod: a worker of a finished job (JobSet
    ends the workers when the launcher is done), or any pod deleted while it ran (its controller removed it, for
    example the workers JobSet deletes once another job of the TrainJob failed)."""
    return deleted or (job_ok and role != "launcher")


def _container_problems(status, job_ok, role, deleted=False):
    """Reasons a pod failed, from its container statuses (empty when none)."""
    problems = []
    statuses = list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])
    for container in statuses:
        name = container.get("name") or "?"
        state = container.get("state") or {}
        last = (container.get("lastState") or {}).get("terminated")
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        if terminated and terminated.get("exitCode", 0) != 0:
            code = terminated.get("exitCode")
            reason = terminated.get("reason") or "Error"
            if _excused(job_ok, role, deleted) and code in _STOP_CODES and reason != "OOMKilled":
                continue  # stopped when the job ended, or by its deletion
            problems.append("container %s exited %s (%s)" % (name, code, reason))
        if waiting and waiting.get("reason") not in (None, "ContainerCreating", "PodInitializing"):
            message = (" - %s" % waiting["message"][:200]) if waiting.get("message") else ""
            problems.append("container %s waiting: %s%s" % (name, waiting.get("reason"), message))
        restarts = container.get("restartCount") or 0
        if restarts:
            detail = ""
            if last:
                detail = ", last exit %s (%s)" % (last.get("exitCode"), last.get("reason") or "Error")
            problems.append("container %s restarted %d time(s)%s" % (name, restarts, detail))
    return problems


def _stopped_at_end(status, job_ok, role, deleted=False):
    """A pod _excused for stopping whose containers all ended by SIGTERM/SIGKILL (not OOM) or cleanly."""
    if not _excused(job_ok, role, deleted):
        return False
    for container in status.get("containerStatuses") or []:
        terminated = (container.get("state") or {}).get("terminated")
        if not terminated:
            return False
        if terminated.get("exitCode") not in (0,) + _STOP_CODES or terminated.get("reason") == "OOMKilled":
            return False
    return bool(status.get("containerStatuses"))


def _host_keys(pod):
    metadata = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    keys = set()
    for value in (metadata.get("name"), spec.get("hostname")):
        if value:
            keys.add(str(value).split(".", 1)[0])
    return keys


def pod_for_host(pods, host):
    """Name of the pod a log hostname (``host:pid:tid`` prefix, ``on node X``) belongs to, or None."""
    host = str(host).split(".", 1)[0]
    for pod in pods:
        name = (pod.get("metadata") or {}).get("name") or ""
        keys = _host_keys(pod)
        if host in keys:
            return name
        # JobSet pods are named <hostname>-<random suffix>
        if name.startswith(host + "-") and "-" not in name[len(host) + 1:]:
            return name
    return None


def _log_items(pod_logs):
    """{pod name: (log text or None, read error or None)} from k8s_log loop results or a {name: text} mapping."""
    items = {}
    if not pod_logs:
        return items
    if isinstance(pod_logs, dict):
        if isinstance(pod_logs.get("results"), list):
            pod_logs = pod_logs["results"]
        else:
            for name, text in pod_logs.items():
                items[str(name)] = (text if isinstance(text, str) else None, None if isinstance(text, str) else "no log text")
            return items
    if not isinstance(pod_logs, list):
        raise ConfigError("pod_logs", "must be the results of a kubernetes.core.k8s_log loop or a mapping of pod name to log text")
    for index, entry in enumerate(pod_logs):
        if not isinstance(entry, dict):
            raise ConfigError("pod_logs[%d]" % index, "must be a k8s_log result with 'item' (the pod) and 'log'")
        item = entry.get("item")
        name = ((item or {}).get("metadata") or {}).get("name") if isinstance(item, dict) else item
        name = name or entry.get("name")
        if not name:
            raise ConfigError("pod_logs[%d]" % index, "names no pod ('item.metadata.name' or 'name')")
        text = entry.get("log")
        if text is None and isinstance(entry.get("log_lines"), list):
            text = "\n".join(entry["log_lines"])
        items[str(name)] = (text if isinstance(text, str) else None, None if isinstance(text, str) else (entry.get("msg") or "log not read"))
    return items


def find_nccl_output(pod_logs, pods=None, require_table=False):
    """``(pod name, log text)`` of the log holding nccl-tests' table (launcher first), or (None, None).

    A log with only nccl-tests' preamble or an NCCL version line counts too (a test that died early), unless
    ``require_table``: torch and exec workloads print NCCL lines without being nccl-tests.
    """
    items = _log_items(pod_logs)
    roles = dict((((pod.get("metadata") or {}).get("name")), _pod_role(pod)) for pod in (pods or []))
    ranked = []
    for name, (text, dummy) in items.items():
        if not text:
            continue
        score = 0
        if "# Avg bus bandwidth" in text or '"average_bus_bandwidth"' in text:
            score = 3
        elif re.search(r"#\s+size\s+count", text):
            score = 2
        elif "Collective test starting" in text or "NCCL version" in text:
            score = 1
        if score and (score >= 2 or not require_table):
            launcher = roles.get(name, "launcher" if "-launcher-" in name else "node") == "launcher"
            ranked.append((score, 1 if launcher else 0, name))
    if not ranked:
        return None, None
    ranked.sort(reverse=True)
    name = ranked[0][2]
    return name, items[name][0]


_RE_WARN_LINE = re.compile(r"(?:^|\n)(?:\S+ )?(?P<host>[^\s:\[]+):\d+:\d+ \[[^\]]*\] (?:\S+:\d+ )?NCCL WARN (?P<msg>[^\n]*)")
_RE_HARD_LINE = re.compile(r"(?:^|\n)(?:\S+ )?(?P<host>[^\s:]+): Test (?:[A-Z]+ )?failure[^\n]*"
                           r"|(?:mpirun noticed that )?process rank \d+ with PID \d+ on node (?P<node>\S+?) exited on signal[^\n]*")


def attribute(pods, pod_logs=None, result=None, job_outcome=None):
    """Which nodes and pods took part in the burn-in and which failed.

    ``pods``: the TrainJob's pods as ``kubernetes.core.k8s_info`` lists them (``resources``), with spec.nodeName.
    ``pod_logs``: k8s_log loop results (``item`` = the pod, ``log``) or {pod name: text}. ``result``: the parsed
    nccl-tests result (its device lines and failure lines name hosts). ``job_outcome``: Complete lets worker pods
    stopped by SIGTERM/SIGKILL at the job's end count as succeeded.
    Returns {nodes, succeeded_nodes, failed_nodes, unknown_nodes, pods (name, node, role, phase, status, reasons),
    succeeded_pods, failed_pods, unscheduled_pods, hosts (from nccl-tests' device list)}.
    """
    if pods is None:
        pods = []
    if isinstance(pods, dict) and isinstance(pods.get("resources"), list):
        pods = pods["resources"]
    if not isinstance(pods, list) or not all(isinstance(pod, dict) for pod in pods):
        raise ConfigError("pods", "must be the pod list of kubernetes.core.k8s_info (its 'resources')")
    job_ok = job_outcome in JOB_OK
    job_done = job_outcome is not None
    logs = _log_items(pod_logs)
    entries = []
    for pod in pods:
        metadata = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        role = _pod_role(pod)
        phase = status.get("phase") or "Unknown"
        entry = {"name": metadata.get("name"), "node": spec.get("nodeName") or None, "role": role, "phase": phase, "reasons": []}
        deleted = bool(metadata.get("deletionTimestamp"))
        problems = _container_problems(status, job_ok, role, deleted)
        if phase == "Failed" and not (problems == [] and _stopped_at_end(status, job_ok, role, deleted)):
            why = status.get("reason") or status.get("message")
            entry["reasons"].append("pod Failed%s" % ((": %s" % why) if why else ""))
        entry["reasons"].extend(problems)
        if not entry["node"]:
            entry["status"] = "failed" if job_done else "pending"
            entry["reasons"].append("never scheduled%s" % _pending_reason(status))
        elif entry["reasons"]:
            entry["status"] = "failed"
        elif phase == "Succeeded":
            entry["status"] = "succeeded"
        elif phase == "Failed" and not job_ok:  # only a pod its controller deleted while it ran gets here
            entry["status"] = "stopped"
            entry["note"] = "stopped by its controller (deleted while running): no verdict on its node"
        elif phase == "Failed":  # only a worker stopped when its finished job ended gets here
            entry["status"] = "succeeded"
            entry["note"] = "stopped when the TrainJob ended"
        elif phase == "Running":
            entry["status"] = "succeeded" if job_ok else ("unknown" if job_done else "running")
            if job_done:
                entry["reasons"].append("still running when the TrainJob ended %s" % job_outcome)
        elif phase == "Pending":
            entry["status"] = "failed" if job_done else "pending"
            entry["reasons"].append("never started%s" % _pending_reason(status))
        else:
            entry["status"] = "unknown"
        text, read_error = logs.get(entry["name"], (None, None))
        if read_error:
            entry["log_error"] = read_error
        entry["warnings"] = len(_RE_WARN_LINE.findall(text or ""))
        entries.append(entry)
    _log_evidence(entries, pods, logs, result, job_ok)
    # The nodes under test are the workers' (GPU) nodes: an MPI launcher asks for no GPU and runs wherever there is
    # CPU, often a system node; its failure is the job's, not its node's.
    judged = [entry for entry in entries if entry["role"] != "launcher"] or entries
    nodes = sorted(set(entry["node"] for entry in judged if entry["node"]))
    failed_nodes = sorted(set(entry["node"] for entry in judged if entry["node"] and entry["status"] == "failed"))
    succeeded_nodes = [node for node in nodes if node not in failed_nodes
                       and all(entry["status"] == "succeeded" for entry in judged if entry["node"] == node)]
    return {
        "nodes": nodes,
        "succeeded_nodes": succeeded_nodes,
        "failed_nodes": failed_nodes,
        "unknown_nodes": [node for node in nodes if node not in failed_nodes and node not in succeeded_nodes],
        "pods": entries,
        "succeeded_pods": [entry["name"] for entry in entries if entry["status"] == "succeeded"],
        "failed_pods": [entry["name"] for entry in entries if entry["status"] == "failed"],
        "unscheduled_pods": [entry["name"] for entry in entries if not entry["node"]],
        "hosts": list((result or {}).get("hosts") or []),
    }


def _pending_reason(status):
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return ": %s%s" % (condition.get("reason") or "Unschedulable", (" - %s" % condition["message"][:200]) if condition.get("message") else "")
    return ""


def _log_evidence(entries, pods, logs, result, job_ok):
    """Hard failures in any log (nccl-tests 'Test ... failure', mpirun's lost rank) fail the pod they name; NCCL WARN
    lines fail their pod only when the job itself did not succeed."""
    by_name = dict((entry["name"], entry) for entry in entries)
    evidence = {}
    texts = [text for text, dummy in logs.values() if text]
    for text in texts:
        for match in _RE_HARD_LINE.finditer(text):
            host = match.group("host") or match.group("node")
            evidence.setdefault(host, match.group(0).strip())
    for host, line in ((result or {}).get("failed_hosts") or {}).items():
        evidence.setdefault(host, line)
    for host, line in evidence.items():
        name = pod_for_host(pods, host)
        if name in by_name:
            entry = by_name[name]
            entry["status"] = "failed"
            entry["reasons"].append("log: %s" % line[:300])
    if job_ok:
        return
    warned = {}
    for text in texts:
        for match in _RE_WARN_LINE.finditer(text):
            warned.setdefault(match.group("host"), match.group(0).strip())
    for host, count in ((result or {}).get("warning_hosts") or {}).items():
        warned.setdefault(host, "%d NCCL WARN line(s)" % count)
    for host, line in warned.items():
        name = pod_for_host(pods, host)
        if name in by_name and by_name[name]["status"] != "failed":
            by_name[name]["status"] = "failed"
            by_name[name]["reasons"].append("NCCL warning while the job failed: %s" % line[:300])


# ------------------------------------------------------------------------------------------------ one call

def verdict_for(output, facts=None, collective=None, thresholds=None, overrides=None, job_outcome=None, job_reason=None,
                pods=None, pod_logs=None, on_missing="warn", workload=None, allow_partial=True, expected_transport=None):
    """Parse (when needed), judge and attribute in one call; what the ``burnin_verdict`` filter returns.

    ``output``: nccl-tests output as text, a parsed result, the ``-J`` JSON (text or dict), k8s_log loop results
    (the log holding the table is found), or None (no output, e.g. a torch or exec workload).
    The logs' NCCL INFO lines are the transport proof, judged against ``expected_transport`` (a transport id of
    :data:`transport.TRANSPORTS`) or, when it is None, what the platform catalogue expects for the facts' platform,
    gpu_architecture and instance_type.
    """
    facts = dict(facts or {})
    if expected_transport is not None and expected_transport not in transport.TRANSPORTS:
        raise ConfigError("expected_transport", "must be one of %s, got %r" % (", ".join(sorted(transport.TRANSPORTS)), expected_transport))
    texts = None
    if isinstance(pod_logs, (dict, list)) and pod_logs:
        texts = dict((name, text) for name, (text, dummy) in _log_items(pod_logs).items())
    elif isinstance(output, list) and output and all(isinstance(item, dict) for item in output):
        texts = dict((name, text) for name, (text, dummy) in _log_items(output).items())
    elif isinstance(output, str) and output:
        texts = {"output": output}
    result = None
    error = None
    source_pod = None
    if isinstance(output, list) and output and all(isinstance(item, dict) for item in output):
        if pod_logs is None:
            pod_logs = output
        source_pod, output = find_nccl_output(output, pods, require_table=not collective)
        if output is None and collective:
            error = "no pod log holds nccl-tests output"
    if isinstance(output, dict) and "rows" in output and "format" in output:
        result = output
    elif output is not None and output != "" and output != []:
        try:
            result = nccl_results.parse_nccl_output(output, collective=collective, allow_partial=allow_partial)
        except nccl_results.NcclParseError as exc:
            error = str(exc)
        except ConfigError as exc:
            if exc.field != "collective":
                raise
            error = str(exc)
    if output is not None and output != "" and error is None and result is None:
        error = "nccl-tests output could not be read"
    evidence = expected = None
    if texts is not None:
        evidence = transport.parse_transport(texts)
        if expected_transport is not None:
            expected = {"transport": expected_transport, "source": "given"}
        else:
            expected = platform_catalog.expected_transport(facts.get("platform"), facts.get("gpu_architecture"), facts.get("instance_type"))

    def locate(host):
        name = pod_for_host(pods or [], host)
        nodes = [(pod.get("spec") or {}).get("nodeName") for pod in pods or [] if (pod.get("metadata") or {}).get("name") == name]
        return {"pod": name, "node": nodes[0] if nodes else None}

    verdict = judge(result, facts=facts, collective=collective, thresholds=thresholds, overrides=overrides, job_outcome=job_outcome,
                    job_reason=job_reason, on_missing=on_missing, error=error, workload=workload, transport_evidence=evidence,
                    expected_transport=expected, locate=locate)
    verdict["output_pod"] = source_pod
    if pods is not None or pod_logs is not None:
        attribution = attribute(pods or [], pod_logs, result, job_outcome)
        verdict["attribution"] = attribution
        for key in ("nodes", "succeeded_nodes", "failed_nodes"):
            verdict[key] = attribution[key]
    return verdict


__all__ = ["VERDICTS", "attribute", "find_nccl_output", "judge", "load_thresholds",
           "parse_nodes", "select_thresholds", "validate_thresholds", "verdict_for", "worst"]
