# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Fleet reports of a burn-in run: JSON, JUnit XML (one testcase per cluster and workload) and a self-contained HTML
page with an inline SVG busbw-vs-size plot per cluster and workload, the thresholds drawn on it.

Input: the fleet's results keyed by cluster (the role's ``burnin_fleet_results``), each with ``verdicts`` (a list of
``gpufleet.burnin.burnin_verdict`` results) or ``verdict`` (one); a cluster without a verdict is judged by its
``outcome``. The HTML page has no script, no external asset and escapes every text.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import math
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from html import escape

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.nccl_results import size_label
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import FAIL_OUTCOMES, OK_OUTCOMES, VERDICTS

SCHEMA = "gpufleet.burnin/report/v1"
FORMATS = ("json", "junit", "html")
FILE_SUFFIXES = {"json": ".json", "junit": ".junit.xml", "html": ".html"}
_SEVERITY = dict((name, rank) for rank, name in enumerate(VERDICTS))
_XML_BAD = re.compile(u"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
COLORS = {"oop": "#1f77b4", "ip": "#ff7f0e", "pass": "#d62728", "warn": "#f5b041", "expected": "#7f7f7f", "avg": "#2ca02c",
          "avg_pass": "#9467bd"}


def report_argument_spec():
    """Options of gpufleet.burnin.burnin_report (action plugin and its documentation stub)."""
    return dict(
        results=dict(type="raw", required=True),
        directory=dict(type="path", required=True),
        formats=dict(type="list", elements="str", choices=list(FORMATS), default=list(FORMATS)),
        run_id=dict(type="str"),
        title=dict(type="str", default="GPU burn-in"),
        generated=dict(type="str"),
        basename=dict(type="str", default="burnin-report"),
    )


def _worst(verdicts):
    result = "pass"
    for verdict in verdicts:
        if _SEVERITY.get(verdict, 3) > _SEVERITY[result]:
            result = verdict if verdict in _SEVERITY else "error"
    return result


def _seconds(start, end):
    try:
        begin = datetime.datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ")
        finish = datetime.datetime.strptime(end, "%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError):
        return None
    return max(0.0, (finish - begin).total_seconds())


def _outcome_testcase(cluster, entry):
    outcome = entry.get("outcome") or "Error"
    reason = entry.get("reason") or ""
    if outcome in OK_OUTCOMES:
        verdict = "pass"
    elif outcome in FAIL_OUTCOMES:
        verdict = "fail"
    else:
        verdict = "error"
    text = "%s%s" % (outcome, (": %s" % reason) if reason else "")
    return {
        "workload": entry.get("workload") or entry.get("entry") or "burn-in",
        "verdict": verdict, "reason": text, "collective": None, "checks": [{"name": "outcome", "verdict": verdict, "reason": text}],
        "metrics": {}, "series": [], "thresholds": [], "nodes": [], "succeeded_nodes": [], "failed_nodes": [],
    }


def _testcase(verdict, entry):
    if not isinstance(verdict, dict) or verdict.get("verdict") not in VERDICTS:
        raise ConfigError("results", "a verdict must be a gpufleet.burnin.burnin_verdict result with a 'verdict' of %s, got %r"
                          % ("/".join(VERDICTS), verdict if not isinstance(verdict, dict) else verdict.get("verdict")))
    case = dict((key, verdict.get(key)) for key in ("verdict", "reason", "collective", "checks", "metrics", "series", "thresholds",
                                                    "nodes", "succeeded_nodes", "failed_nodes", "errors"))
    case["workload"] = verdict.get("workload") or entry.get("workload") or entry.get("entry") or verdict.get("collective") or "burn-in"
    for key in ("checks", "series", "thresholds", "nodes", "succeeded_nodes", "failed_nodes", "errors"):
        case[key] = list(case.get(key) or [])
    case["metrics"] = dict(case.get("metrics") or {})
    case["reason"] = case.get("reason") or ""
    return case


def build_report(results, run_id=None, title="GPU burn-in", generated=None):
    """Normalize the fleet's results into the report document that every format is rendered from."""
    if isinstance(results, list):
        keyed = {}
        for index, entry in enumerate(results):
            if not isinstance(entry, dict) or not entry.get("cluster"):
                raise ConfigError("results[%d]" % index, "must be a cluster result with a 'cluster' name")
            keyed[str(entry["cluster"])] = entry
        results = keyed
    if not isinstance(results, dict):
        raise ConfigError("results", "must be the fleet's results keyed by cluster (burnin_fleet_results), got %s" % type(results).__name__)
    clusters = []
    for name in sorted(results, key=str):
        entry = results[name]
        if not isinstance(entry, dict):
            raise ConfigError("results.%s" % name, "must be the cluster's result mapping, got %r" % (entry,))
        verdicts = entry.get("verdicts")
        if verdicts is None and entry.get("verdict") is not None:
            verdicts = [entry["verdict"]]
        if verdicts is not None and not isinstance(verdicts, list):
            raise ConfigError("results.%s.verdicts" % name, "must be a list of burnin_verdict results")
        cases = [_testcase(verdict, entry) for verdict in verdicts] if verdicts else [_outcome_testcase(name, entry)]
        seconds = _seconds(entry.get("started"), entry.get("finished"))
        clusters.append({
            "cluster": str(name),
            "platform": entry.get("platform") or "",
            "gpu_architecture": entry.get("gpu_architecture") or "",
            "outcome": entry.get("outcome") or "",
            "reason": entry.get("reason") or "",
            "namespace": entry.get("namespace") or "",
            "trainjob": entry.get("trainjob") or "",
            "started": entry.get("started") or "",
            "finished": entry.get("finished") or "",
            "seconds": seconds,
            "verdict": _worst(case["verdict"] for case in cases),
            "testcases": cases,
        })
        if not run_id and entry.get("run_id"):
            run_id = str(entry["run_id"])
    counts = dict((verdict, 0) for verdict in VERDICTS)
    for cluster in clusters:
        for case in cluster["testcases"]:
            counts[case["verdict"]] += 1
    return {
        "schema": SCHEMA,
        "title": title or "GPU burn-in",
        "run_id": run_id or "",
        "generated": generated or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "summary": dict(counts, clusters=len(clusters), testcases=sum(counts.values()),
                        verdict=_worst(cluster["verdict"] for cluster in clusters) if clusters else "error",
                        failed_clusters=[cluster["cluster"] for cluster in clusters if cluster["verdict"] in ("fail", "error")]),
        "clusters": clusters,
    }


# ------------------------------------------------------------------------------------------------ JSON

def render_json(report):
    return json.dumps(report, indent=2, sort_keys=True, default=str) + "\n"


# ------------------------------------------------------------------------------------------------ JUnit XML

def _xml_text(value):
    return _XML_BAD.sub(u"\ufffd", u"%s" % ("" if value is None else value))


def _case_details(case):
    lines = ["verdict: %s" % case["verdict"], "reason: %s" % case["reason"]]
    for check in case["checks"]:
        lines.append("  [%s] %s: %s" % (check.get("verdict"), check.get("name"), check.get("reason")))
    metrics = case["metrics"]
    if metrics.get("peak_busbw") is not None:
        lines.append("peak busbw: %s GB/s at %s" % (metrics["peak_busbw"], size_label(metrics.get("largest_size"))))
    if metrics.get("avg_busbw") is not None:
        lines.append("avg busbw: %s GB/s" % metrics["avg_busbw"])
    for key in ("succeeded_nodes", "failed_nodes"):
        if case.get(key):
            lines.append("%s: %s" % (key.replace("_", " "), ", ".join(case[key])))
    for error in case.get("errors") or []:
        lines.append("error: %s" % error)
    return "\n".join(lines)


def render_junit(report):
    summary = report["summary"]
    total_time = sum(cluster["seconds"] or 0.0 for cluster in report["clusters"])
    suites = ET.Element("testsuites", {
        "name": _xml_text("gpufleet.burnin %s %s" % (report["title"], report["run_id"])).strip(),
        "tests": str(summary["testcases"]), "failures": str(summary["fail"]), "errors": str(summary["error"]), "skipped": "0",
        "time": "%.3f" % total_time, "timestamp": report["generated"],
    })
    for cluster in report["clusters"]:
        cases = cluster["testcases"]
        suite = ET.SubElement(suites, "testsuite", {
            "name": _xml_text(cluster["cluster"]), "tests": str(len(cases)),
            "failures": str(sum(1 for case in cases if case["verdict"] == "fail")),
            "errors": str(sum(1 for case in cases if case["verdict"] == "error")), "skipped": "0",
            "time": "%.3f" % (cluster["seconds"] or 0.0), "timestamp": cluster["started"] or report["generated"],
            "hostname": _xml_text(cluster["cluster"]),
        })
        properties = ET.SubElement(suite, "properties")
        for key in ("platform", "gpu_architecture", "outcome", "namespace", "trainjob"):
            ET.SubElement(properties, "property", {"name": key, "value": _xml_text(cluster[key])})
        ET.SubElement(properties, "property", {"name": "run_id", "value": _xml_text(report["run_id"])})
        for case in cases:
            element = ET.SubElement(suite, "testcase", {
                "classname": _xml_text("gpufleet.burnin.%s" % cluster["cluster"]), "name": _xml_text(case["workload"]),
                "time": "%.3f" % ((cluster["seconds"] or 0.0) / max(len(cases), 1)),
            })
            details = _xml_text(_case_details(case))
            message = _xml_text(case["reason"])[:1000]
            if case["verdict"] == "fail":
                ET.SubElement(element, "failure", {"message": message, "type": "fail"}).text = details
            elif case["verdict"] == "error":
                ET.SubElement(element, "error", {"message": message, "type": "error"}).text = details
            ET.SubElement(element, "system-out").text = details if case["verdict"] in ("pass", "warn") else _xml_text(
                "verdict: %s" % case["verdict"])
    if hasattr(ET, "indent"):
        ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


# ------------------------------------------------------------------------------------------------ HTML and SVG

def _e(value):
    return escape(_xml_text(value), quote=True)


def _num(value):
    return "%.1f" % value


def _nice_step(span):
    raw = span / 5.0 if span > 0 else 1.0
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power  # pragma: no cover


def render_plot(case, cluster_name=""):
    """Inline SVG of busbw (GB/s) against message size (log scale), with the thresholds; "" without data."""
    points = [item for item in case.get("series") or [] if isinstance(item, (list, tuple)) and len(item) >= 2 and item[0] and item[0] > 0]
    if not points:
        return ""
    width, height = 760, 354
    left, right, top, bottom = 64, 24, 42, 54
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [math.log(item[0], 2) for item in points]
    x_lo, x_hi = min(xs), max(xs)
    if x_hi - x_lo < 1:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    thresholds = case.get("thresholds") or []
    values = [value for item in points for value in item[1:3] if value is not None]
    for record in thresholds:
        values.extend(value for value in (record.get("pass"), record.get("warn"), record.get("expected")) if value is not None)
    avg = (case.get("metrics") or {}).get("avg_busbw")
    if avg is not None:
        values.append(avg)
    y_hi = max(values + [1.0]) * 1.1
    step = _nice_step(y_hi)
    y_hi = math.ceil(y_hi / step) * step

    def px(size):
        return left + (math.log(size, 2) - x_lo) / (x_hi - x_lo) * plot_w

    def py(value):
        return top + plot_h - (value / y_hi) * plot_h

    title = "busbw vs message size: %s %s" % (cluster_name, case.get("workload") or "")
    out = ['<svg class="busbw-plot" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">'
           % (width, height, width, height, _e(title)),
           '<title>%s</title>' % _e(title),
           '<rect class="plot-area" x="%d" y="%d" width="%d" height="%d" fill="#ffffff" stroke="#cccccc"/>' % (left, top, plot_w, plot_h)]
    value = 0.0
    while value <= y_hi + 1e-9:
        y = py(value)
        out.append('<line class="grid" x1="%d" y1="%s" x2="%d" y2="%s" stroke="#eeeeee"/>' % (left, _num(y), left + plot_w, _num(y)))
        out.append('<text class="tick" x="%d" y="%s" text-anchor="end" font-size="11">%s</text>' % (left - 6, _num(y + 4), _e("%g" % value)))
        value += step
    tick_every = max(1, int(math.ceil(len(points) / 10.0)))
    for index, item in enumerate(points):
        if index % tick_every and index != len(points) - 1:
            continue
        x = px(item[0])
        out.append('<line class="xtick" x1="%s" y1="%d" x2="%s" y2="%d" stroke="#999999"/>' % (_num(x), top + plot_h, _num(x), top + plot_h + 5))
        out.append('<text class="tick" x="%s" y="%d" text-anchor="middle" font-size="11">%s</text>' % (_num(x), top + plot_h + 18, _e(size_label(item[0]))))
    out.append('<text class="axis-label" x="%d" y="%d" text-anchor="middle" font-size="12">message size (bytes, log scale)</text>'
               % (left + plot_w // 2, height - 10))
    out.append('<text class="axis-label" x="14" y="%d" text-anchor="middle" font-size="12" transform="rotate(-90 14 %d)">busbw (GB/s)</text>'
               % (top + plot_h // 2, top + plot_h // 2))
    x_min, x_max = left, left + plot_w
    for record in thresholds:
        label = "%s: %s" % (record.get("metric"), record.get("id"))
        if record.get("metric") == "avg":
            if record.get("pass") is not None:
                y = py(record["pass"])
                out.append('<line class="threshold-avg" x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="2" stroke-dasharray="2 4">'
                           '<title>%s</title></line>' % (x_min, _num(y), x_max, _num(y), COLORS["avg_pass"], _e("average pass >= %s GB/s (%s)" % (
                               record["pass"], record.get("id")))))
                out.append('<text class="threshold-label" x="%d" y="%s" text-anchor="end" font-size="11" fill="%s">%s</text>' % (
                    x_max - 6, _num(y - 4), COLORS["avg_pass"], _e("average pass >= %g GB/s (%s)" % (record["pass"], record.get("id")))))
            continue
        if record.get("warn") is not None and record.get("pass") is not None:
            y_pass, y_warn = py(record["pass"]), py(record["warn"])
            out.append('<rect class="warn-band" x="%d" y="%s" width="%d" height="%s" fill="%s" fill-opacity="0.35"><title>%s</title></rect>' % (
                x_min, _num(y_pass), plot_w, _num(max(y_warn - y_pass, 0.5)), COLORS["warn"], _e("warning band %g-%g GB/s (%s)" % (
                    record["warn"], record["pass"], label))))
        if record.get("expected") is not None:
            y = py(record["expected"])
            out.append('<line class="expected" x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-dasharray="1 3"><title>%s</title></line>' % (
                x_min, _num(y), x_max, _num(y), COLORS["expected"], _e("published %g GB/s (%s)" % (record["expected"], label))))
        if record.get("pass") is not None:
            y = py(record["pass"])
            out.append('<line class="threshold-pass" x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="2" stroke-dasharray="8 4">'
                       '<title>%s</title></line>' % (x_min, _num(y), x_max, _num(y), COLORS["pass"], _e("pass >= %g GB/s (%s)" % (record["pass"], label))))
            out.append('<text class="threshold-label" x="%d" y="%s" font-size="11" fill="%s">%s</text>' % (
                x_min + 6, _num(y - 4), COLORS["pass"], _e("pass >= %g GB/s (%s)" % (record["pass"], record.get("id")))))
        if record.get("size"):
            x = px(record["size"]) if x_lo <= math.log(record["size"], 2) <= x_hi else None
            if x is not None:
                out.append('<line class="threshold-size" x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-dasharray="3 3"/>' % (
                    _num(x), top, _num(x), top + plot_h, COLORS["pass"]))
    if avg is not None:
        y = py(avg)
        out.append('<line class="avg-measured" x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-dasharray="6 3"><title>%s</title></line>' % (
            x_min, _num(y), x_max, _num(y), COLORS["avg"], _e("measured average %g GB/s" % avg)))
    for key, css in ((1, "series-oop"), (2, "series-ip")):
        coords = [(px(item[0]), py(item[key])) for item in points if len(item) > key and item[key] is not None]
        if not coords:
            continue
        color = COLORS["oop" if key == 1 else "ip"]
        dash = '' if key == 1 else ' stroke-dasharray="5 3"'
        out.append('<polyline class="%s" fill="none" stroke="%s" stroke-width="2.5"%s points="%s"/>' % (
            css, color, dash, " ".join("%s,%s" % (_num(x), _num(y)) for x, y in coords)))
        side = "out-of-place" if key == 1 else "in-place"
        for item, (x, y) in zip([item for item in points if len(item) > key and item[key] is not None], coords):
            out.append('<circle class="point point-%s" cx="%s" cy="%s" r="3" fill="%s"><title>%s</title></circle>' % (
                css[7:], _num(x), _num(y), color, _e("%s %s: %g GB/s" % (size_label(item[0]), side, item[key]))))
    legend = [("oop", "out-of-place busbw", ""), ("ip", "in-place busbw", ' stroke-dasharray="5 3"')]
    metrics = set(record.get("metric") for record in thresholds if record.get("pass") is not None)
    if "peak" in metrics:
        legend.append(("pass", "pass threshold", ' stroke-dasharray="8 4"'))
    if any(record.get("expected") is not None and record.get("metric") != "avg" for record in thresholds):
        legend.append(("expected", "published", ' stroke-dasharray="1 3"'))
    if avg is not None:
        legend.append(("avg", "measured average", ' stroke-dasharray="6 3"'))
    if "avg" in metrics:
        legend.append(("avg_pass", "average threshold", ' stroke-dasharray="2 4"'))
    x, y = left + 8, 14
    for key, text, dash in legend:
        needed = 36 + 6 * len(text)
        if x + needed > width - right:
            x, y = left + 8, y + 15
        out.append('<line class="legend" x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"%s/>' % (x, y, x + 22, y, COLORS[key], dash))
        out.append('<text class="legend-text" x="%d" y="%d" font-size="11">%s</text>' % (x + 27, y + 4, _e(text)))
        x += needed
    out.append("</svg>")
    return "\n".join(out)


_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;background:#fafafa}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 6px} h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:8px 0 12px;background:#fff} th,td{border:1px solid #ddd;padding:4px 8px;font-size:13px;text-align:left;vertical-align:top}
th{background:#f0f0f0} .meta{color:#555;font-size:13px} section.cluster{border-top:2px solid #ddd;margin-top:20px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff}
.v-pass{background:#2e7d32} .v-warn{background:#b7791f} .v-fail{background:#c62828} .v-error{background:#6a1b9a}
.reason{font-size:13px;margin:4px 0} .no-plot{color:#777;font-style:italic;font-size:13px} ul{margin:4px 0;font-size:13px}
svg.busbw-plot{background:#fff;border:1px solid #ddd;margin:6px 0}
"""


def _badge(verdict):
    return '<span class="badge v-%s">%s</span>' % (_e(verdict), _e(verdict.upper()))


def _slug(text):
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)).strip("-") or "cluster"


def _fmt(value, unit=""):
    if value is None:
        return ""
    if isinstance(value, float):
        return "%.1f%s" % (value, unit)
    return "%s%s" % (value, unit)


def render_html(report):
    summary = report["summary"]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>%s</title>" % _e("%s %s" % (report["title"], report["run_id"])),
             "<style>%s</style></head><body>" % _CSS,
             "<h1>%s</h1>" % _e("%s %s" % (report["title"], report["run_id"])),
             '<p class="meta">generated %s - %d clusters, %d testcases: %s</p>' % (
                 _e(report["generated"]), summary["clusters"], summary["testcases"],
                 " ".join("%s %d" % (_badge(verdict), summary[verdict]) for verdict in VERDICTS))]
    parts.append('<table class="summary"><thead><tr><th>cluster</th><th>platform / GPU</th><th>workload</th><th>verdict</th>'
                 '<th>peak busbw (GB/s)</th><th>avg busbw (GB/s)</th><th>failed nodes</th><th>reason</th></tr></thead><tbody>')
    for cluster in report["clusters"]:
        for case in cluster["testcases"]:
            metrics = case["metrics"]
            parts.append("<tr><td><a href=\"#cluster-%s\">%s</a></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
                _e(_slug(cluster["cluster"])), _e(cluster["cluster"]), _e("%s / %s" % (cluster["platform"] or "?", cluster["gpu_architecture"] or "?")),
                _e(case["workload"]), _badge(case["verdict"]), _e(_fmt(metrics.get("peak_busbw"))), _e(_fmt(metrics.get("avg_busbw"))),
                _e(", ".join(case["failed_nodes"])), _e(case["reason"])))
    parts.append("</tbody></table>")
    for cluster in report["clusters"]:
        parts.append('<section class="cluster" id="cluster-%s">' % _e(_slug(cluster["cluster"])))
        parts.append("<h2>%s %s</h2>" % (_e(cluster["cluster"]), _badge(cluster["verdict"])))
        facts = [("platform", cluster["platform"]), ("GPU", cluster["gpu_architecture"]), ("outcome", cluster["outcome"]),
                 ("TrainJob", ("%s/%s" % (cluster["namespace"], cluster["trainjob"])) if cluster["trainjob"] else ""),
                 ("started", cluster["started"]), ("finished", cluster["finished"])]
        parts.append('<p class="meta">%s</p>' % " - ".join("%s: %s" % (_e(key), _e(value)) for key, value in facts if value))
        for case in cluster["testcases"]:
            parts.append('<div class="testcase">')
            parts.append("<h3>%s %s</h3>" % (_e(case["workload"]), _badge(case["verdict"])))
            parts.append('<p class="reason">%s</p>' % _e(case["reason"]))
            plot = render_plot(case, cluster["cluster"])
            parts.append(plot or '<p class="no-plot">no busbw data to plot</p>')
            if case["checks"]:
                parts.append('<table class="checks"><thead><tr><th>check</th><th>verdict</th><th>value</th><th>threshold</th>'
                             '<th>reason</th></tr></thead><tbody>')
                for check in case["checks"]:
                    threshold = ""
                    if check.get("pass") is not None:
                        threshold = ">= %g" % check["pass"] + (" (warn >= %g)" % check["warn"] if check.get("warn") is not None else "")
                    parts.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
                        _e(check.get("name")), _badge(check.get("verdict") if check.get("verdict") in VERDICTS else "error"),
                        _e(_fmt(check.get("value"))), _e(threshold), _e(check.get("reason"))))
                parts.append("</tbody></table>")
            for record in case["thresholds"]:
                source = record.get("source")
                if isinstance(source, dict):
                    source = "; ".join("%s: %s" % (key, value) for key, value in sorted(source.items()))
                parts.append('<p class="meta">threshold %s: %s</p>' % (_e(record.get("id")), _e(source)))
            for key, label in (("succeeded_nodes", "succeeded nodes"), ("failed_nodes", "failed nodes")):
                if case.get(key):
                    parts.append("<p class=\"meta\">%s: %s</p>" % (_e(label), _e(", ".join(case[key]))))
            if case.get("errors"):
                parts.append("<ul class=\"errors\">%s</ul>" % "".join("<li>%s</li>" % _e(error) for error in case["errors"]))
            parts.append("</div>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# ------------------------------------------------------------------------------------------------ files

RENDERERS = {"json": render_json, "junit": render_junit, "html": render_html}


def report_paths(directory, formats=FORMATS, basename="burnin-report"):
    return dict((fmt, os.path.join(directory, basename + FILE_SUFFIXES[fmt])) for fmt in formats)


def write_reports(results, directory, formats=FORMATS, run_id=None, title="GPU burn-in", generated=None, basename="burnin-report",
                  check_mode=False):
    """Render the chosen formats and write them into ``directory`` (created when missing); nothing is written in
    check mode. Returns {files: {format: path}, changed: bool, changed_files: [...], summary}."""
    if not isinstance(directory, str) or not directory:
        raise ConfigError("directory", "must be the path of the directory to write the reports into")
    formats = list(formats or FORMATS)
    unknown = [fmt for fmt in formats if fmt not in FORMATS]
    if unknown:
        raise ConfigError("formats", "unknown format(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(FORMATS)))
    if not re.match(r"^[A-Za-z0-9._-]+$", basename or ""):
        raise ConfigError("basename", "must be a plain file name prefix, got %r" % (basename,))
    report = build_report(results, run_id=run_id, title=title, generated=generated)
    paths = report_paths(directory, formats, basename)
    changed = []
    for fmt in formats:
        content = RENDERERS[fmt](report)
        path = paths[fmt]
        try:
            with open(path, "r", encoding="utf-8") as handle:
                same = handle.read() == content
        except (IOError, OSError):
            same = False
        if same:
            continue
        changed.append(path)
        if check_mode:
            continue
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        handle, temp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(content)
            os.chmod(temp, 0o644)
            os.replace(temp, path)
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise
    return {"files": paths, "changed": bool(changed), "changed_files": changed, "summary": report["summary"]}
