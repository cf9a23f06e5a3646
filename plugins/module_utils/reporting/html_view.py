# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The report for people: the self-contained HTML page of the report document (report.py build_report). A fleet
overview (every cluster's margin over its pass threshold in one chart, worst first; counts by verdict, platform and
GPU that filter the clusters), then per cluster, folded, an inline SVG busbw-vs-size plot per workload with the
thresholds drawn on it. The page (templates/reports/, autoescaped Jinja2) has no script, no external asset and escapes
every text; this module computes what it shows, the charts' geometry is geometry.py's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import hashlib
import re

try:
    import jinja2

    HAS_JINJA2 = True
except ImportError:  # pragma: no cover - jinja2 ships with ansible-core on the controller
    HAS_JINJA2 = False

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.nccl_results import size_label
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import FAILING_VERDICTS, SEVERITY, VERDICTS
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import fleet_plots, geometry, history
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.report import heading, xml_text
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import TEMPLATES_DIR

REPORT_TEMPLATES_DIR = os.path.join(TEMPLATES_DIR, "reports")
# The fail red is darker than the plots' threshold red (geometry.COLORS["pass"]), so the two never read as one.
VERDICT_COLORS = {"pass": "#2e7d32", "warn": "#b7791f", "fail": "#b3261e", "error": "#6a1b9a"}
# Fleets up to this many clusters show every cluster's details unfolded; larger ones fold them.
DETAILS_OPEN_UP_TO = 12
_ENVIRONMENT = {}


def _slug(text):
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)).strip("-") or "cluster"


def _html_id(text):
    """TEXT (a cluster's or node's name) as part of an HTML id: readable, and unique with 8 hex digits of its SHA-256,
    so names that slug alike (``n.1`` and ``n-1``) never share an id and a link never jumps to another's evidence."""
    text = "%s" % (text,)
    return "%s-%s" % (_slug(text)[:48], hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8])


def _fmt(value, unit=""):
    if value is None:
        return ""
    if isinstance(value, float):
        return "%.1f%s" % (value, unit)
    return "%s%s" % (value, unit)


def _percent(margin):
    return "%+.1f%%" % (margin * 100.0) if margin is not None else ""


def _finalize(value):
    """Every text the page prints goes through here before Jinja2 escapes it: no XML-invalid characters, no 'None'."""
    if value is None:
        return ""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return xml_text(value)
    return value


def _environment():
    if "env" not in _ENVIRONMENT:
        if not HAS_JINJA2:
            raise RenderError("Jinja2 is required to render the HTML report; install it on the controller")
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(REPORT_TEMPLATES_DIR),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            finalize=_finalize,
        )
        env.globals["colors"] = VERDICT_COLORS
        _ENVIRONMENT["env"] = env
    return _ENVIRONMENT["env"]


def render_plot(case, cluster_name=""):
    """Inline SVG of busbw (GB/s) against message size (log scale), with the thresholds; "" without data."""
    plot = geometry.plot_geometry(case, cluster_name)
    if plot is None:
        return ""
    environment = _environment()
    try:
        return environment.get_template("busbw_plot.svg.j2").render(plot=plot).rstrip("\n")
    except jinja2.TemplateError as exc:
        raise RenderError("templates/reports/busbw_plot.svg.j2: %s" % exc)


def _order_key(cluster):
    """Worst first: clusters without a measured margin (most severe verdict first), then by margin, lowest first."""
    margin = cluster.get("margin")
    if margin is None:
        return (0, -SEVERITY.get(cluster["verdict"], 3), 0.0, cluster["cluster"])
    return (1, 0, margin["margin"], cluster["cluster"])


def _facets(clusters):
    """The overview's counts, each value a filter: verdict, platform and GPU, with each value's clusters by verdict."""
    facets, classes = [], dict((cluster["cluster"], ["fv-%s" % cluster["verdict"]]) for cluster in clusters)
    verdict_values = []
    for verdict in VERDICTS:
        count = sum(1 for cluster in clusters if cluster["verdict"] == verdict)
        verdict_values.append(
            {
                "id": "f-v-%s" % verdict,
                "cls": "fv-%s" % verdict,
                "label": verdict,
                "verdict": verdict,
                "count": count,
                "segments": [{"verdict": verdict, "count": count, "width": "%.2f" % (100.0 * count / max(len(clusters), 1))}] if count else [],
            }
        )
    facets.append({"name": "verdict", "title": "Verdict", "values": verdict_values})
    for key, name, title, prefix in (("platform", "platform", "Platform", "p"), ("gpu_architecture", "gpu", "GPU", "g")):
        values = []
        for index, value in enumerate(sorted(set(cluster[key] for cluster in clusters))):
            members = [cluster for cluster in clusters if cluster[key] == value]
            cls = "f%s-%d" % (prefix, index)
            for cluster in members:
                classes[cluster["cluster"]].append(cls)
            segments = []
            for verdict in VERDICTS:
                count = sum(1 for cluster in members if cluster["verdict"] == verdict)
                if count:
                    segments.append({"verdict": verdict, "count": count, "width": "%.2f" % (100.0 * count / len(members))})
            values.append(
                {"id": "f-%s-%d" % (prefix, index), "cls": cls, "label": value or "unknown", "verdict": None, "count": len(members), "segments": segments}
            )
        facets.append({"name": name, "title": title, "values": values})
    return facets, dict((name, " ".join(items)) for name, items in classes.items())


def fleet_chart(clusters, classes=None):
    """The overview chart: geometry.margin_chart's bars, one per cluster in the order given, each with its cluster's
    link, filter classes and title."""
    classes = classes or {}
    chart = geometry.margin_chart([cluster.get("margin") for cluster in clusters])
    for cluster, rect in zip(clusters, chart["bars"]):
        margin = cluster.get("margin")
        where = "%s / %s" % (cluster["platform"] or "?", cluster["gpu_architecture"] or "?")
        if margin is None:
            title = "%s: %s, %s - no busbw result against a threshold" % (cluster["cluster"], cluster["verdict"], where)
        else:
            title = "%s: %s, %s - %s %s %s GB/s against pass %s GB/s: %s" % (
                cluster["cluster"],
                cluster["verdict"],
                where,
                margin["workload"],
                margin["check"],
                _fmt(float(margin["value"])),
                "%g" % margin["pass"],
                _percent(margin["margin"]),
            )
        rect.update(
            {
                "cluster": cluster["cluster"],
                "anchor": "cluster-%s" % _html_id(cluster["cluster"]),
                "verdict": cluster["verdict"],
                "classes": " ".join(["bar", classes.get(cluster["cluster"], "fv-%s" % cluster["verdict"])] + ([] if margin else ["nodata"])),
                "measured": margin is not None,
                "margin": "%.4f" % margin["margin"] if margin else "",
                "title": title,
            }
        )
    return chart


def _check_rows(case):
    rows = []
    for check in case["checks"]:
        threshold = ""
        if check.get("pass") is not None:
            threshold = ">= %g" % check["pass"] + (" (warn >= %g)" % check["warn"] if check.get("warn") is not None else "")
        elif check.get("name") == "baseline" and check.get("baseline") is not None:
            threshold = "baseline %s (%+.1f%%)" % (_fmt(check["baseline"]), check.get("change_percent") or 0.0)
        rows.append(
            {
                "name": check.get("name"),
                "verdict": check.get("verdict") if check.get("verdict") in VERDICTS else "error",
                "value": _fmt(check.get("value")),
                "threshold": threshold,
                "reason": check.get("reason"),
            }
        )
    return rows


def _case_view(cluster, case):
    metrics = case["metrics"]
    sources = []
    for record in case["thresholds"]:
        source = record.get("source")
        if isinstance(source, dict):
            source = "; ".join("%s: %s" % (key, value) for key, value in sorted(source.items()))
        sources.append({"id": record.get("id"), "source": source})
    plot = render_plot(case, cluster["cluster"])
    compared = cluster.get("baseline") or {}
    changes = [
        {
            "text": "%s %s -> %s GB/s: %+.1f%%" % (item["label"], _fmt(float(item["baseline"])), _fmt(float(item["current"])), item["change_percent"]),
            "regressed": item["regressed"],
        }
        for item in compared.get("comparisons") or []
        if item["workload"] == case["workload"] and item["collective"] == case.get("collective")
    ]
    return {
        "baseline_run": compared.get("run_id") or "",
        "changes": changes,
        "workload": case["workload"],
        "verdict": case["verdict"],
        "reason": case["reason"],
        # Rendered by busbw_plot.svg.j2 with autoescape: fleet.html.j2 inserts it as it is (| safe).
        "plot": plot or "",
        "peak": _fmt(metrics.get("peak_busbw")),
        "avg": _fmt(metrics.get("avg_busbw")),
        "checks": _check_rows(case),
        "sources": sources,
        "succeeded_nodes": ", ".join(case["succeeded_nodes"]),
        "failed_nodes": ", ".join(case["failed_nodes"]),
        "errors": case.get("errors") or [],
    }


def _history_view(compared):
    """The row's "vs baseline" cell: the worst change against the baseline run, or why there is none."""
    if not compared:
        return {"text": "", "title": "", "regressed": False}
    if compared["change_percent"] is None:
        return _with_node_history({"text": "vs %s: -" % compared["run_id"], "title": compared["note"], "regressed": False}, compared)
    title = "%s %s: %s -> %s GB/s against baseline run %s%s" % (
        compared["workload"],
        dict(history.METRICS).get(compared["metric"], compared["metric"]),
        _fmt(float(compared["baseline"])),
        _fmt(float(compared["current"])),
        compared["run_id"],
        " (%s)" % compared["note"] if compared["note"] else "",
    )
    view = {"text": "vs %s: %+.1f%%" % (compared["run_id"], compared["change_percent"]), "title": title, "regressed": compared["regressed"]}
    return _with_node_history(view, compared)


def _with_node_history(view, compared):
    """The "vs baseline" cell names the nodes whose busbw dropped beyond the percentage."""
    nodes = compared.get("regressed_nodes") or []
    if nodes:
        view["text"] += "; node%s %s regressed" % ("s" if len(nodes) > 1 else "", ", ".join(nodes))
        view["regressed"] = True
    return view


def _node_history_view(compared):
    """Rows of the cluster's "nodes vs baseline" table: each node measurement compared with the baseline run's."""
    return [
        {
            "node": item["node"],
            "stage": item["stage"],
            "size": size_label(item["size"]),
            "baseline": _fmt(float(item["baseline"])),
            "current": _fmt(float(item["current"])),
            "change": "%+.1f%%" % item["change_percent"],
            "regressed": item["regressed"],
        }
        for item in (compared or {}).get("nodes") or []
    ]


def _remediation_view(done):
    """The cluster's remediation (cluster/remediation.py record()) as short lines: one per node and mark changed."""
    if not done:
        return {}
    verb = "would change" if done.get("check_mode") else "changed"
    lines = []
    for change in done.get("changes") or []:
        before = "-" if change["before"] is None else change["before"]
        after = "-" if change["after"] is None else change["after"]
        lines.append("%s: %s %s: %s -> %s" % (change["node"], change["what"], change["key"], before, after))
    title = "%s (%s, run %s): %s %d node(s)" % ("remediation", done.get("mode") or "apply", done.get("run_id") or "-", verb, len(done.get("nodes") or []))
    notes = [text for text in ["not found: %s" % ", ".join(done["missing"]) if done.get("missing") else "", done.get("note") or ""] if text]
    return {"title": title, "lines": lines, "notes": notes}


def _cluster_view(cluster, classes, open_details):
    margin = cluster.get("margin")
    worst = [case for case in cluster["testcases"] if case["verdict"] == cluster["verdict"]]
    facts = [
        ("platform", cluster["platform"]),
        ("GPU", cluster["gpu_architecture"]),
        ("outcome", cluster["outcome"]),
        ("TrainJob", ("%s/%s" % (cluster["namespace"], cluster["trainjob"])) if cluster["trainjob"] else ""),
        ("started", cluster["started"]),
        ("finished", cluster["finished"]),
    ]
    return {
        "cluster": cluster["cluster"],
        "anchor": "cluster-%s" % _html_id(cluster["cluster"]),
        "verdict": cluster["verdict"],
        "classes": classes.get(cluster["cluster"], ""),
        "open": open_details,
        "where": "%s / %s" % (cluster["platform"] or "?", cluster["gpu_architecture"] or "?"),
        "result": ("%s %s / %g" % (margin["check"], _fmt(float(margin["value"])), margin["pass"])) if margin else "",
        "margin": _percent(margin["margin"]) if margin else "",
        "negative": bool(margin and margin["margin"] < 0),
        "reason": (worst[0]["reason"] if worst else "") or cluster["reason"],
        "history": _history_view(cluster.get("baseline")),
        "history_note": (cluster.get("baseline") or {}).get("note") or "",
        "node_history": _node_history_view(cluster.get("baseline")),
        "node_history_run": (cluster.get("baseline") or {}).get("run_id") or "",
        "facts": [(key, value) for key, value in facts if value],
        "cases": [_case_view(cluster, case) for case in cluster["testcases"]],
        "remediation": _remediation_view(cluster.get("remediation")),
        "stages": [
            dict(attempt, stage=stage["stage"], stage_verdict=stage["verdict"], first=index == 0, rows=len(stage["attempts"]))
            for stage in cluster.get("stages") or []
            for index, attempt in enumerate(stage["attempts"])
        ],
        "nodes": [_node_view(cluster["cluster"], node) for node in cluster.get("nodes") or []],
    }


def node_anchor(cluster, node):
    """The id of a node's row on the page (_node_view's ``row_anchor``): the sibling plots link their points to it."""
    return "cluster-%s-node-%s" % (_html_id(cluster), _html_id(node))


def _node_view(cluster, node):
    """A node's row and its evidence section: anchors (unique on the page: cluster and node in each), the severity
    and action linking to the evidence that decided them, each evidence entry's figures, DCGM tests and Xids as text."""
    prefix = node_anchor(cluster, node["node"])
    items = []
    for item in node.get("evidence") or []:
        figures = []
        for figure in item.get("figures") or []:
            text = "%s %s %s" % (figure["name"], _fmt(figure["value"]), figure.get("unit") or "")
            if figure.get("size"):
                text += " at %s" % size_label(figure["size"])
            if figure.get("pass") is not None:
                text += " against pass >= %g (%s)" % (figure["pass"], figure.get("threshold") or "")
            figures.append({"text": text})
        tests = [
            "%s%s%s%s"
            % (
                "GPU %s " % test["gpu"] if test.get("gpu") is not None else "",
                test.get("test") or "",
                " [%s]" % test["severity"] if test.get("severity") else "",
                ": %s" % test["message"][:300] if test.get("message") else "",
            )
            for test in item.get("dcgm_tests") or []
        ]
        xids = ["%d %s (%s)" % (xid["xid"], xid.get("mnemonic") or "", xid.get("bucket") or "") for xid in item.get("xids") or []]
        items.append(dict(item, anchor="%s-%s" % (prefix, item["id"]), figures=figures, dcgm_tests=tests, xids=xids, log_lines=item.get("log_lines") or []))
    anchor = "%s-evidence" % prefix
    deciding = node.get("evidence_anchor")
    return dict(
        node,
        anchor=anchor,
        row_anchor=prefix,
        evidence=items,
        evidence_href=("%s-%s" % (prefix, deciding)) if deciding else anchor,
        action_why=node.get("action_why") or "",
    )


def render_html(report):
    """The self-contained HTML page (no script, no external asset): a fleet overview (margin chart, counts by verdict,
    platform and GPU that filter the clusters, CSS only), then every cluster's details, folded in large fleets."""
    summary = report["summary"]
    ordered = sorted(report["clusters"], key=_order_key)
    facets, classes = _facets(ordered)
    open_details = len(ordered) <= DETAILS_OPEN_UP_TO
    data = {
        "title": heading(report),
        "generated": report["generated"],
        "summary": summary,
        "verdicts": VERDICTS,
        "facets": facets,
        "chart": fleet_chart(ordered, classes),
        "open_details": open_details,
        "clusters": [_cluster_view(cluster, classes, open_details) for cluster in ordered],
        "failing": sum(1 for cluster in ordered if cluster["verdict"] in FAILING_VERDICTS),
        "baseline": report.get("baseline"),
        # Per SKU and metric the nodes against their siblings, and the drift table (reporting/fleet_plots.py).
        "sibling_plots": [fleet_plots.strip_plot(record, node_anchor) for record in (report.get("siblings") or {}).get("baselines") or []],
        "drift_rows": fleet_plots.drift_rows(report.get("drift"), node_anchor) if (report.get("drift") or {}).get("skus") else None,
        "drift_golden": (report.get("drift") or {}).get("golden"),
    }
    environment = _environment()
    try:
        return environment.get_template("fleet.html.j2").render(data)
    except jinja2.TemplateError as exc:
        raise RenderError("templates/reports/fleet.html.j2: %s" % exc)
