# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""History of burn-in runs: this run's report compared with an earlier run's JSON report (the baseline).

The baseline is an earlier ``burnin-report.json`` (a file, or a run directory holding one), or, when none is given,
the latest earlier run in the report directory: its subdirectories are runs (``<burnin_report_dir>/<run id>/``), the
latest is the one whose JSON report was written last, and the current run's own directory never counts.

Clusters are matched by name, their testcases by workload and collective; the headline figures the verdict records
(``metrics.peak_busbw`` and ``metrics.avg_busbw``, GB/s) are compared. A drop of more than the regression percentage
makes the testcase (and so its cluster) at least ``warn``, with a reason that names the baseline run, both values and
the change; it never fails a run on its own.

Per node: the cluster's ``node_findings`` (plugins/module_utils/judging/node_findings.py) whose evidence has ``busbw``
(GB/s) and ``size`` (bytes) are bandwidth measurements of a node in a stage (``node``: its own all_reduce;
``isolation``: a pair it was in; ``fleet``: the multi-node run it took part in, the same figure for every node of that
run). Each is compared with the baseline's same node and stage at the same size (the lowest figure on each side when
a node has several, e.g. several isolation pairs); a drop beyond the percentage names the node and warns its cluster
the same way (recorded on the cluster's first nccl-tests testcase: findings belong to the cluster, not to a testcase).

No baseline, a cluster, testcase, node or size the baseline does not have, or a figure missing on either side is no
comparison, with a note, never an error. A baseline file that is not such a report is a ConfigError naming the file
and the field.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.nccl_results import size_label
from ansible_collections.gpufleet.burnin.plugins.module_utils import validate

SCHEMA = "gpufleet.burnin/report/v1"
DEFAULT_BASENAME = "burnin-report"
DEFAULT_REGRESSION_PERCENT = 10.0
# The figures compared, in the order they are reported.
METRICS = (("peak_busbw", "peak busbw"), ("avg_busbw", "avg busbw"))
_SEVERITY = {"pass": 0, "warn": 1, "fail": 2, "error": 3}


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _field(path, where):
    return "baseline %s: %s" % (path, where) if where else "baseline %s" % path


def node_measurements(findings):
    """{(node, stage, size): busbw} of the findings that are bandwidth measurements (evidence with a number ``busbw``
    and an integer ``size``); the lowest busbw when a node has several for one stage and size. Others are skipped."""
    figures = {}
    for item in findings or []:
        if not isinstance(item, dict) or not item.get("node") or not isinstance(item.get("evidence"), dict):
            continue
        busbw, size = item["evidence"].get("busbw"), item["evidence"].get("size")
        if not _is_number(busbw) or not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            continue
        key = (str(item["node"]), str(item.get("stage") or ""), size)
        figures[key] = min(figures.get(key, busbw), busbw)
    return figures


def load_baseline(path):
    """Read and check an earlier run's JSON report. Returns {file, run_id, generated, clusters: {name: cluster}}, each
    cluster {verdict, testcases: [{workload, collective, metrics, nodes}], nodes: node_measurements() of its
    ``node_findings``}. A file that is not such a report raises ConfigError naming the file and the field."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read()
    except (IOError, OSError) as exc:
        raise ConfigError(_field(path, ""), "cannot be read: %s" % (exc.strerror or exc))
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(_field(path, ""), "is not JSON: %s" % exc)
    validate.check_mapping(_field(path, "(document)"), data)
    if data.get("schema") != SCHEMA:
        validate.fail(_field(path, "schema"), "must be %s (a gpufleet.burnin JSON report)" % SCHEMA, data.get("schema"))
    for key in ("run_id", "generated"):
        if data.get(key) is not None:
            validate.check_str(_field(path, key), data[key], allow_empty=True)
    clusters = {}
    validate.check_list(_field(path, "clusters"), data.get("clusters"))
    for index, cluster in enumerate(data["clusters"]):
        where = "clusters[%d]" % index
        validate.check_mapping(_field(path, where), cluster)
        name = validate.check_str(_field(path, where + ".cluster"), cluster.get("cluster"))
        testcases = []
        validate.check_list(_field(path, where + ".testcases"), cluster.get("testcases"))
        for number, case in enumerate(cluster["testcases"]):
            at = "%s.testcases[%d]" % (where, number)
            validate.check_mapping(_field(path, at), case)
            metrics = validate.check_mapping(_field(path, at + ".metrics"), case.get("metrics"), allow_none=True) or {}
            for key, dummy in METRICS:
                if metrics.get(key) is not None and not _is_number(metrics[key]):
                    validate.fail(_field(path, "%s.metrics.%s" % (at, key)), "must be a number (GB/s) or null", metrics[key])
            testcases.append(
                {
                    "workload": case.get("workload"),
                    "collective": case.get("collective"),
                    "metrics": metrics,
                    "verdict": case.get("verdict"),
                    "nodes": list(case.get("nodes") or []),
                }
            )
        findings = validate.check_list(_field(path, where + ".node_findings"), cluster.get("node_findings"), allow_none=True) or []
        for number, item in enumerate(findings):
            validate.check_mapping(_field(path, "%s.node_findings[%d]" % (where, number)), item)
        clusters[name] = {"verdict": cluster.get("verdict"), "testcases": testcases, "nodes": node_measurements(findings)}
    return {
        "file": path,
        "run_id": data.get("run_id") or os.path.basename(os.path.dirname(os.path.abspath(path))),
        "generated": data.get("generated") or "",
        "clusters": clusters,
    }


def _same_dir(one, other):
    return bool(one) and bool(other) and os.path.realpath(one) == os.path.realpath(other)


def latest_earlier_run(directory, current_run_id="", basename=DEFAULT_BASENAME, current_dir=None):
    """The JSON report of the latest run in ``directory`` other than the current one (named ``current_run_id``, or
    written into ``current_dir``): its subdirectories are runs, the latest is the one whose ``<basename>.json`` was
    written last (then the greatest name). None when there is none."""
    try:
        names = os.listdir(directory)
    except (IOError, OSError):
        return None
    candidates = []
    for name in names:
        if (current_run_id and name == current_run_id) or _same_dir(os.path.join(directory, name), current_dir):
            continue
        path = os.path.join(directory, name, basename + ".json")
        try:
            if os.path.isdir(os.path.join(directory, name)) and os.path.isfile(path):
                candidates.append((os.path.getmtime(path), name, path))
        except (IOError, OSError):
            continue
    return max(candidates)[2] if candidates else None


def resolve_baseline(baseline="", history_dir="", current_run_id="", basename=DEFAULT_BASENAME, current_dir=None):
    """The baseline to compare with: ``baseline`` (a JSON report, or a run directory holding ``<basename>.json``), or,
    when it is empty, the latest earlier run in ``history_dir`` (never the current run: ``current_run_id`` names it,
    ``current_dir`` is where its reports go). Returns (loaded baseline or None, note); a file that is not a JSON
    report raises ConfigError."""
    if baseline:
        path = os.path.join(baseline, basename + ".json") if os.path.isdir(baseline) else baseline
        if not os.path.isfile(path):
            return None, "baseline %s does not exist: nothing compared" % path
    elif history_dir:
        path = latest_earlier_run(history_dir, current_run_id, basename, current_dir)
        if path is None:
            return None, "no earlier run with a JSON report in %s: nothing compared" % history_dir
    else:
        return None, "no baseline and no report directory: nothing compared"
    if current_dir and os.path.isfile(path) and _same_dir(os.path.dirname(path), current_dir):
        return None, "baseline %s is this run's own report: nothing compared" % path
    loaded = load_baseline(path)
    if current_run_id and loaded["run_id"] == current_run_id:
        return None, "baseline %s is this run (%s): nothing compared" % (path, current_run_id)
    return loaded, ""


def change_percent(baseline, current):
    """(current - baseline) / baseline in percent; None when either is missing or the baseline is not positive."""
    if not _is_number(baseline) or not _is_number(current) or baseline <= 0:
        return None
    return (float(current) - baseline) / baseline * 100.0


def _gb(value):
    return "%.1f GB/s" % value


def _case_key(case):
    return (case.get("workload") or "", case.get("collective") or "")


def compare_cluster(cluster, baseline, percent=DEFAULT_REGRESSION_PERCENT):
    """Compare one cluster of this run's report (build_report's shape) with the loaded baseline. Returns its
    ``baseline`` block: run_id, file, regression_percent, regressed, the worst comparison's workload, metric, baseline,
    current and change_percent (None without any), every comparison, the baseline's verdict and a note."""
    block = {
        "run_id": baseline["run_id"],
        "file": baseline["file"],
        "generated": baseline["generated"],
        "regression_percent": percent,
        "regressed": False,
        "workload": None,
        "metric": None,
        "baseline": None,
        "current": None,
        "change_percent": None,
        "baseline_verdict": None,
        "comparisons": [],
        "nodes": [],
        "regressed_nodes": [],
        "note": "",
    }
    earlier = baseline["clusters"].get(cluster["cluster"])
    if earlier is None:
        block["note"] = "cluster %s is not in baseline run %s: nothing compared" % (cluster["cluster"], baseline["run_id"])
        return block
    block["baseline_verdict"] = earlier.get("verdict")
    by_key = dict((_case_key(case), case) for case in earlier["testcases"])
    missing = []
    for case in cluster["testcases"]:
        old = by_key.get(_case_key(case))
        if old is None:
            # A testcase without a figure to compare (the sibling rule's, judged on its own baseline) is not missing.
            if any((case.get("metrics") or {}).get(key) is not None for key, _label in METRICS):
                missing.append(case["workload"])
            continue
        for key, label in METRICS:
            change = change_percent(old["metrics"].get(key), (case.get("metrics") or {}).get(key))
            if change is None:
                continue
            block["comparisons"].append(
                {
                    "workload": case["workload"],
                    "collective": case.get("collective"),
                    "metric": key,
                    "label": label,
                    "baseline": old["metrics"][key],
                    "current": case["metrics"][key],
                    "change_percent": round(change, 2),
                    "regressed": change < -percent,
                }
            )
    if block["comparisons"]:
        worst = min(block["comparisons"], key=lambda item: item["change_percent"])
        block.update((key, worst[key]) for key in ("workload", "metric", "baseline", "current", "change_percent"))
        block["regressed"] = any(item["regressed"] for item in block["comparisons"])
    earlier_nodes = earlier.get("nodes") or {}
    unmatched = []
    for key, current in sorted(node_measurements(cluster.get("node_findings")).items()):
        old = earlier_nodes.get(key)
        change = change_percent(old, current)
        if change is None:
            unmatched.append("%s (%s)" % key[:2])
            continue
        block["nodes"].append(
            {
                "node": key[0],
                "stage": key[1],
                "size": key[2],
                "baseline": old,
                "current": current,
                "change_percent": round(change, 2),
                "regressed": change < -percent,
            }
        )
    block["regressed_nodes"] = sorted(set(item["node"] for item in block["nodes"] if item["regressed"]))
    block["regressed"] = block["regressed"] or bool(block["regressed_nodes"])
    notes = []
    if missing:
        notes.append("not in baseline run %s: %s" % (baseline["run_id"], ", ".join(sorted(set(str(name) for name in missing)))))
    if unmatched:
        notes.append("no node figure at the same stage and size in baseline run %s: %s" % (baseline["run_id"], ", ".join(sorted(set(unmatched)))))
    if not block["comparisons"] and not block["nodes"]:
        notes.append("no busbw figure on both sides: nothing compared")
    block["note"] = "; ".join(notes)
    return block


def regression_reason(item, run_id, percent):
    return "%s %s dropped %.1f%% against baseline run %s (%s -> %s; more than %g%% warns)" % (
        item["workload"],
        item["label"],
        -item["change_percent"],
        run_id,
        _gb(item["baseline"]),
        _gb(item["current"]),
        percent,
    )


def node_regression_reason(item, run_id, percent):
    return "node %s (stage %s) busbw at %s dropped %.1f%% against baseline run %s (%s -> %s; more than %g%% warns)" % (
        item["node"],
        item["stage"],
        size_label(item["size"]),
        -item["change_percent"],
        run_id,
        _gb(item["baseline"]),
        _gb(item["current"]),
        percent,
    )


def _node_checks(block):
    """A ``baseline_node`` check per regressed node measurement (the others are in the block's ``nodes`` only)."""
    checks = []
    for item in block["nodes"]:
        if item["regressed"]:
            checks.append(
                {
                    "name": "baseline_node",
                    "verdict": "warn",
                    "node": item["node"],
                    "stage": item["stage"],
                    "size": item["size"],
                    "value": item["current"],
                    "baseline": item["baseline"],
                    "change_percent": item["change_percent"],
                    "reason": node_regression_reason(item, block["run_id"], block["regression_percent"]),
                }
            )
    return checks


def apply_to_cluster(cluster, block):
    """Record the comparison in the cluster and its testcases: each comparison becomes a ``baseline`` check (a note
    unless it regressed); a regressed testcase's verdict becomes at least ``warn``, its reason naming the baseline run,
    both values and the change; a regressed node measurement becomes a ``baseline_node`` check of the cluster's first
    nccl-tests testcase (else its first), warning it the same way; the cluster's verdict follows its worst testcase.
    Returns the cluster."""
    cluster["baseline"] = block
    node_checks = _node_checks(block)
    holder = ([case for case in cluster["testcases"] if case.get("collective")] + cluster["testcases"] + [None])[0]
    for case in cluster["testcases"]:
        regressed = []
        for item in block["comparisons"]:
            if item["workload"] != case["workload"] or item["collective"] != case.get("collective"):
                continue
            check = {
                "name": "baseline",
                "verdict": "warn" if item["regressed"] else "pass",
                "value": item["current"],
                "baseline": item["baseline"],
                "change_percent": item["change_percent"],
                "metric": item["metric"],
            }
            if item["regressed"]:
                check["reason"] = regression_reason(item, block["run_id"], block["regression_percent"])
                regressed.append(check["reason"])
            else:
                check["note"] = True
                check["reason"] = "%s %s %+.1f%% against baseline run %s (%s -> %s)" % (
                    item["workload"],
                    item["label"],
                    item["change_percent"],
                    block["run_id"],
                    _gb(item["baseline"]),
                    _gb(item["current"]),
                )
            case["checks"].append(check)
        if case is holder:
            case["checks"].extend(node_checks)
            regressed.extend(check["reason"] for check in node_checks)
        if not regressed:
            continue
        if case["verdict"] == "pass":
            case["verdict"], case["reason"] = "warn", "; ".join(regressed)
        elif case["verdict"] == "warn":
            case["reason"] = "; ".join([case["reason"]] + regressed) if case["reason"] else "; ".join(regressed)
    cluster["verdict"] = max((case["verdict"] for case in cluster["testcases"]), key=lambda verdict: _SEVERITY.get(verdict, 3))
    return cluster


def apply_baseline(clusters, baseline, percent=DEFAULT_REGRESSION_PERCENT, note=""):
    """Compare every cluster with ``baseline`` (load_baseline's result, or None with ``note`` saying why) and apply the
    comparison. Returns the report's top-level ``baseline`` block: run_id, file, generated, regression_percent, the
    regressed clusters and a note."""
    if not _is_number(percent) or not 0 <= percent <= 100:
        validate.fail("regression_percent", "must be a number from 0 to 100", percent)
    if baseline is None:
        for cluster in clusters:
            cluster["baseline"] = None
        return {
            "run_id": None,
            "file": None,
            "generated": None,
            "regression_percent": percent,
            "regressed_clusters": [],
            "regressed_nodes": [],
            "note": note,
        }
    for cluster in clusters:
        apply_to_cluster(cluster, compare_cluster(cluster, baseline, percent))
    return {
        "run_id": baseline["run_id"],
        "file": baseline["file"],
        "generated": baseline["generated"],
        "regression_percent": percent,
        "regressed_clusters": [cluster["cluster"] for cluster in clusters if cluster["baseline"]["regressed"]],
        "regressed_nodes": ["%s/%s" % (cluster["cluster"], node) for cluster in clusters for node in cluster["baseline"]["regressed_nodes"]],
        "note": note,
    }


__all__ = [
    "apply_baseline",
    "apply_to_cluster",
    "change_percent",
    "compare_cluster",
    "latest_earlier_run",
    "load_baseline",
    "node_measurements",
    "resolve_baseline",
]
