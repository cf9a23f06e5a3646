# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Fleet reports of a burn-in run: JSON, JUnit XML (one testcase per cluster and workload) and a self-contained HTML
page: a fleet overview (every cluster's margin over its pass threshold in one chart, worst first; counts by verdict,
platform and GPU that filter the clusters), then per cluster, folded, an inline SVG busbw-vs-size plot per workload
with the thresholds drawn on it.

Input: the fleet's results keyed by cluster (the role's ``burnin_fleet_results``), each with ``verdicts`` (a list of
``gpufleet.burnin.burnin_verdict`` results) or ``verdict`` (one); a cluster without a verdict is judged by its
``outcome``. The HTML page (templates/reports/, autoescaped Jinja2) has no script, no external asset and escapes every
text; its geometry is computed in geometry.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import hashlib
import re
import xml.etree.ElementTree as ET

try:
    import jinja2

    HAS_JINJA2 = True
except ImportError:  # pragma: no cover - jinja2 ships with ansible-core on the controller
    HAS_JINJA2 = False

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import read_unlinked, write_file
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions, drift, offenders, siblings
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.nccl_results import size_label
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import node_entries, with_findings
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import FAIL_OUTCOMES, FAILING_VERDICTS, OK_OUTCOMES, VERDICTS
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import fleet_plots, geometry, history
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import TEMPLATES_DIR

SCHEMA = "gpufleet.burnin/report/v1"
# The version of docs/verdict-schema.json this report follows (its "$id" ends with it).
SCHEMA_VERSION = "1.0.0"
FORMATS = ("json", "junit", "html")
FILE_SUFFIXES = {"json": ".json", "junit": ".junit.xml", "html": ".html"}
_SEVERITY = dict((name, rank) for rank, name in enumerate(VERDICTS))
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


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
        baseline=dict(type="str", default=""),
        history_dir=dict(type="str", default=""),
        regression_percent=dict(type="float", default=history.DEFAULT_REGRESSION_PERCENT),
        # A SKU key (cluster fields), not a secret.
        sibling_key=dict(type="list", elements="str", default=list(siblings.DEFAULT_KEY), no_log=False),
        sibling_rule=dict(type="raw"),
        sibling_min=dict(type="int", default=siblings.DEFAULT_MIN_SIBLINGS),
        sibling_verdict=dict(type="str", choices=list(siblings.VERDICTS), default="warn"),
        baseline_dir=dict(type="str", default=""),
        golden=dict(type="raw"),
        drift_fail=dict(type="list", elements="str", default=[]),
        offender_failures=dict(type="int", default=offenders.DEFAULT_FAILURES),
        offender_runs=dict(type="int", default=offenders.DEFAULT_RUNS),
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
        "verdict": verdict,
        "reason": text,
        "collective": None,
        "checks": [{"name": "outcome", "verdict": verdict, "reason": text}],
        "metrics": {},
        "series": [],
        "thresholds": [],
        "nodes": [],
        "succeeded_nodes": [],
        "failed_nodes": [],
    }


def _testcase(verdict, entry):
    if not isinstance(verdict, dict) or verdict.get("verdict") not in VERDICTS:
        raise ConfigError(
            "results",
            "a verdict must be a gpufleet.burnin.burnin_verdict result with a 'verdict' of %s, got %r"
            % ("/".join(VERDICTS), verdict if not isinstance(verdict, dict) else verdict.get("verdict")),
        )
    case = dict(
        (key, verdict.get(key))
        for key in ("verdict", "reason", "collective", "checks", "metrics", "series", "thresholds", "nodes", "succeeded_nodes", "failed_nodes", "errors")
    )
    case["workload"] = verdict.get("workload") or entry.get("workload") or entry.get("entry") or verdict.get("collective") or "burn-in"
    for key in ("checks", "series", "thresholds", "nodes", "succeeded_nodes", "failed_nodes", "errors"):
        case[key] = list(case.get(key) or [])
    case["metrics"] = dict(case.get("metrics") or {})
    case["reason"] = case.get("reason") or ""
    return case


def _stages(name, entry):
    """The cluster's stages (plugins/module_utils/burnin/stages.py) with their attempts, as the report shows them."""
    stages = entry.get("stages") or []
    if not isinstance(stages, list):
        raise ConfigError("results.%s.stages" % name, "must be a list of stages (stage, verdict, reason, attempts)")
    out = []
    for record in stages:
        if not isinstance(record, dict) or not record.get("stage"):
            raise ConfigError("results.%s.stages" % name, "must hold mappings with a 'stage', got %r" % (record,))
        attempts = [
            dict((key, attempt.get(key)) for key in ("attempt", "trainjob", "outcome", "verdict", "reason"))
            for attempt in record.get("attempts") or []
            if isinstance(attempt, dict)
        ]
        out.append(
            {
                "stage": str(record["stage"]),
                "verdict": record.get("verdict") if record.get("verdict") in VERDICTS else "error",
                "reason": record.get("reason") or "",
                "note": record.get("note") or "",
                "attempts": attempts,
                "judged": record.get("judged") if isinstance(record.get("judged"), dict) else None,
            }
        )
        # The stage's severity and action (burnin/cluster_result.py recorded_attempt); judged again for older records.
        judged = out[-1]["judged"] or {"verdict": out[-1]["verdict"]}
        out[-1].update(actions.recommendation_fields(record) if record.get("severity") else actions.of_verdict(judged))
    return out


def _stage_testcases(entry, stages):
    """One testcase per stage other than the fleet stage (whose verdict is the cluster's ``verdict``): its last
    attempt's verdict, with a check per node."""
    cases = []
    for stage in stages:
        judged = stage.get("judged")
        if stage["stage"] == "fleet" or not judged or judged.get("verdict") not in VERDICTS:
            continue
        case = _testcase(dict(judged, succeeded_nodes=[], failed_nodes=[]), entry)
        case["workload"] = "%s stage: %s" % (stage["stage"], judged.get("workload") or stage["stage"])
        case["stage"] = stage["stage"]
        cases.append(case)
    return cases


def _nodes(name, entry):
    """The per-node table from the cluster's node_verdicts (plugins/module_utils/judging/node_findings.py): node,
    verdict, reasons, stages; worst first."""
    verdicts = entry.get("node_verdicts") or {}
    if not isinstance(verdicts, dict):
        raise ConfigError("results.%s.node_verdicts" % name, "must map node names to {verdict, reasons, stages}")
    # Each row is docs/verdict-schema.json's $defs/node, with its evidence (judging/node_findings.py node_entries).
    return node_entries(verdicts, entry.get("node_findings"))


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _margin(cases):
    """The cluster's lowest margin over a pass threshold, (value - pass) / pass, among its testcases' checks that have
    both (peak and average busbw), with the check it comes from; None when no check has both."""
    best = None
    for case in cases:
        for check in case["checks"]:
            if not isinstance(check, dict) or not _is_number(check.get("value")) or not _is_number(check.get("pass")) or check["pass"] <= 0:
                continue
            margin = (float(check["value"]) - check["pass"]) / check["pass"]
            if best is None or margin < best["margin"]:
                best = {
                    "margin": round(margin, 6),
                    "value": check["value"],
                    "pass": check["pass"],
                    "warn": check.get("warn") if _is_number(check.get("warn")) else None,
                    "workload": case["workload"],
                    "check": check.get("name") or "",
                    "threshold": check.get("threshold") or "",
                }
    return best


def _with_regression(cluster):
    """A cluster (and each node) that regressed against the baseline (reporting/history.py) warns: its severity and
    action take the regression into account."""
    compared = cluster.get("baseline") or {}
    regressed = set(compared.get("regressed_nodes") or [])
    for row in cluster["nodes"]:
        if row["node"] in regressed:
            row.update(actions.decide([(row["action_rule"], ""), ("regression", "vs baseline run %s" % compared.get("run_id"))]))
    if compared.get("regressed") or regressed:
        cluster.update(actions.decide([(cluster["action_rule"], ""), ("regression", "vs baseline run %s" % compared.get("run_id"))]))


def _with_offenders(clusters, repeat):
    """Each repeat offender's node row (and its cluster) takes the ``repeat_offender`` rule: action replace."""
    by_cluster = {}
    for item in repeat:
        by_cluster.setdefault(item["cluster"], {})[item["node"]] = item
    for cluster in clusters:
        named = by_cluster.get(cluster["cluster"]) or {}
        for row in cluster["nodes"]:
            if row["node"] in named:
                row["repeat_offender"] = named[row["node"]]
                row["reasons"] = [named[row["node"]]["reason"]] + list(row["reasons"])
                row.update(
                    actions.decide(
                        [(row["action_rule"], ""), ("repeat_offender", "%d of %d runs" % (named[row["node"]]["bad_runs"], named[row["node"]]["runs"]))]
                    )
                )
        if named:
            cluster["repeat_offenders"] = sorted(named)
            cluster.update(actions.decide([(cluster["action_rule"], ""), ("repeat_offender", ", ".join(sorted(named)))]))


def _with_drift(name, entry, drifted):
    """ENTRY with the drift check's findings of cluster NAME added and a ``drift`` verdict (a check per drifting node
    and key; passing when the cluster's nodes were compared and none drifted)."""
    configs = (entry.get("detected") or {}).get("node_config") if isinstance(entry.get("detected"), dict) else None
    configs = configs if isinstance(configs, dict) else {}
    runtime = entry.get("node_runtime") if isinstance(entry.get("node_runtime"), dict) else {}
    # The nodes compared: the GPU nodes detection read, else those the stages' pods ran on.
    compared = set(configs) or set(node for nodes in runtime.values() if isinstance(nodes, dict) for node in nodes)
    if not compared:
        return entry
    rows = [row for row in drifted["nodes"] if row["cluster"] == name]
    checks = [
        {
            "name": "drift",
            "verdict": row["verdict"],
            "node": row["node"],
            "reason": "%s: %s" % (row["node"], row["why"]),
            "key": row["key"],
            "scope": row["scope"],
        }
        for row in rows
    ]
    entry = dict(entry)
    found = drifted["findings"].get(name) or []
    if found:
        entry.update(with_findings(entry, found))
    worst = _worst(check["verdict"] for check in checks) if checks else "pass"
    reason = (
        "; ".join(check["reason"] for check in checks if check["verdict"] == worst)[:2000]
        if checks
        else ("%d node(s) run their SKU's majority versions" % len(compared))
    )
    judged = {
        "workload": "drift",
        "verdict": worst,
        "reason": reason,
        "checks": checks or [{"name": "drift", "verdict": "pass", "reason": reason}],
        "metrics": {},
    }
    verdicts = entry.get("verdicts")
    if verdicts is None and entry.get("verdict") is not None:
        verdicts = [entry["verdict"]]
    if verdicts is not None and not isinstance(verdicts, list):
        return entry
    entry["verdicts"] = list(verdicts or []) + [judged]
    return entry


def _with_siblings(name, entry, sibling):
    """ENTRY with the sibling rule's findings of cluster NAME added (node_findings, node_verdicts) and a ``siblings``
    verdict (a testcase: a check per node and metric it judged), when the rule judged any node of the cluster."""
    checks = []
    for record in sibling["baselines"]:
        for row in record["nodes"]:
            if row["cluster"] != name or row["verdict"] is None:
                continue
            what = record["label"] if row["gpu"] is None else "GPU %s %s" % (row["gpu"], record["label"])
            checks.append(
                {
                    "name": "siblings",
                    "verdict": row["verdict"],
                    "node": row["node"],
                    "reason": "%s: %s %.1f %s, %+.1f %% vs baseline %.1f of SKU %s (%d siblings, rule %g %%)"
                    % (row["node"], what, row["value"], record["unit"], row["distance"], record["baseline"], record["sku"], record["count"], record["rule"]),
                    "value": row["value"],
                    "baseline": record["baseline"],
                    "distance_percent": row["distance"],
                    "siblings": record["count"],
                    "sku": record["sku"],
                    "metric": record["metric"],
                }
            )
    if not checks:
        return entry
    entry = dict(entry)
    found = sibling["findings"].get(name) or []
    if found:
        entry.update(with_findings(entry, found))
    worst = _worst(check["verdict"] for check in checks)
    bad = [check["reason"] for check in checks if check["verdict"] == worst]
    reason = "; ".join(bad[:6]) if worst != "pass" else "%d node figure(s) within the rule of their SKU's baseline" % len(checks)
    judged = {"workload": "siblings", "verdict": worst, "reason": reason, "checks": checks, "metrics": {"judged": len(checks)}}
    verdicts = entry.get("verdicts")
    if verdicts is None and entry.get("verdict") is not None:
        verdicts = [entry["verdict"]]
    if verdicts is not None and not isinstance(verdicts, list):
        return entry
    entry["verdicts"] = list(verdicts or []) + [judged]
    return entry


def build_report(
    results,
    run_id=None,
    title="GPU burn-in",
    generated=None,
    baseline=None,
    regression_percent=history.DEFAULT_REGRESSION_PERCENT,
    baseline_note="",
    sibling_options=None,
    drift_options=None,
    earlier_runs=None,
    offender_window=(offenders.DEFAULT_FAILURES, offenders.DEFAULT_RUNS),
):
    """Normalize the fleet's results into the report document that every format is rendered from. ``baseline``: an
    earlier run's report (history.load_baseline) to compare with, or None (``baseline_note`` says why); a drop of more
    than ``regression_percent`` makes the testcase at least warn (reporting/history.py). ``sibling_options``: keyword
    arguments of judging/siblings.py judge() (key, rule, min_siblings, verdict, earlier). ``earlier_runs``: [(run id,
    offenders.node_states())] of earlier runs, oldest first; with this run, a node bad in ``offender_window`` (k, n)
    is a repeat offender (judging/offenders.py), its action ``replace``. ``drift_options``: keyword arguments of
    judging/drift.py judge() (golden, fail_keys; the key is the siblings')."""
    if isinstance(results, list):
        keyed = {}
        for index, entry in enumerate(results):
            if not isinstance(entry, dict) or not entry.get("cluster"):
                raise ConfigError("results[%d]" % index, "must be a cluster result with a 'cluster' name")
            keyed[str(entry["cluster"])] = entry
        results = keyed
    if not isinstance(results, dict):
        raise ConfigError("results", "must be the fleet's results keyed by cluster (burnin_fleet_results), got %s" % type(results).__name__)
    # Every node against its SKU's siblings across all clusters (judging/siblings.py): findings added per cluster.
    sibling = siblings.judge(dict((name, entry) for name, entry in results.items() if isinstance(entry, dict)), **(sibling_options or {}))
    # What each node runs against its SKU's majority and the golden versions (judging/drift.py).
    drifted = drift.judge(dict((name, entry) for name, entry in results.items() if isinstance(entry, dict)), key=sibling["key"], **(drift_options or {}))
    clusters = []
    for name in sorted(results, key=str):
        entry = results[name]
        if not isinstance(entry, dict):
            raise ConfigError("results.%s" % name, "must be the cluster's result mapping, got %r" % (entry,))
        entry = _with_siblings(str(name), entry, sibling)
        entry = _with_drift(str(name), entry, drifted)
        verdicts = entry.get("verdicts")
        if verdicts is None and entry.get("verdict") is not None:
            verdicts = [entry["verdict"]]
        if verdicts is not None and not isinstance(verdicts, list):
            raise ConfigError("results.%s.verdicts" % name, "must be a list of burnin_verdict results")
        stages = _stages(name, entry)
        cases = [_testcase(verdict, entry) for verdict in verdicts or []] + _stage_testcases(entry, stages)
        cases = cases or [_outcome_testcase(name, entry)]
        seconds = _seconds(entry.get("started"), entry.get("finished"))
        clusters.append(
            {
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
                "margin": _margin(cases),
                "testcases": cases,
                # What each stage found on each node (judging/node_findings.py): history compares their busbw per node.
                "node_findings": list(entry.get("node_findings") or []),
                "remediation": entry.get("remediation") or {},
                # The isolation's conclusions with their runs (burnin/cluster_result.py isolation_record: parts, rounds).
                "isolation": entry.get("isolation") or {},
                "stages": stages,
                "nodes": _nodes(name, entry),
            }
        )
        clusters[-1].update(actions.of_result(entry))
        if not run_id and entry.get("run_id"):
            run_id = str(entry["run_id"])
    compared = history.apply_baseline(clusters, baseline, regression_percent, baseline_note)
    for cluster in clusters:
        _with_regression(cluster)
    repeat = offenders.find(list(earlier_runs or []) + [(run_id or "this run", offenders.node_states({"clusters": clusters}))], *offender_window)
    _with_offenders(clusters, repeat)
    counts = dict((verdict, 0) for verdict in VERDICTS)
    for cluster in clusters:
        for case in cluster["testcases"]:
            counts[case["verdict"]] += 1
    run = actions.decide([(cluster["action_rule"], cluster["cluster"]) for cluster in clusters])
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "title": title or "GPU burn-in",
        "run_id": run_id or "",
        "generated": generated or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "summary": dict(
            counts,
            clusters=len(clusters),
            testcases=sum(counts.values()),
            verdict=_worst(cluster["verdict"] for cluster in clusters) if clusters else "error",
            failed_clusters=[cluster["cluster"] for cluster in clusters if cluster["verdict"] in ("fail", "error")],
        ),
        "baseline": compared,
        # The sibling baselines per SKU and metric, every node's distance (judging/siblings.py).
        "siblings": dict((key, sibling[key]) for key in ("key", "rule", "min_siblings", "verdict", "baselines")),
        # Configuration drift per SKU and key, the drifting nodes (judging/drift.py).
        "drift": drifted,
        # Nodes bad in k of their last n runs (judging/offenders.py), action replace.
        "repeat_offenders": repeat,
        "clusters": clusters,
        # The run's severity and action: its worst cluster's (judging/actions.py).
        "severity": run["severity"],
        "action": run["action"],
        "action_rule": run["action_rule"],
        "action_why": run["action_why"],
    }


# ------------------------------------------------------------------------------------------------ JSON


def render_json(report):
    return json.dumps(report, indent=2, sort_keys=True, default=str) + "\n"


# ------------------------------------------------------------------------------------------------ JUnit XML


def _xml_text(value):
    return _XML_BAD.sub("\ufffd", "%s" % ("" if value is None else value))


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


def heading(report):
    """The report's title naming the run once: a title that already holds the run id (a caller's "GPU burn-in <id>")
    is not given it a second time."""
    title, run_id = (report.get("title") or "").strip(), (report.get("run_id") or "").strip()
    if not run_id or run_id in title.split():
        return title
    return ("%s %s" % (title, run_id)).strip()


def render_junit(report):
    summary = report["summary"]
    total_time = sum(cluster["seconds"] or 0.0 for cluster in report["clusters"])
    node_rows = [row for cluster in report["clusters"] for row in cluster.get("nodes") or []]
    suites = ET.Element(
        "testsuites",
        {
            "name": _xml_text("gpufleet.burnin " + heading(report)),
            "tests": str(summary["testcases"] + len(node_rows)),
            "failures": str(summary["fail"] + sum(1 for row in node_rows if row["verdict"] == "fail")),
            "errors": str(summary["error"]),
            "skipped": "0",
            "time": "%.3f" % total_time,
            "timestamp": report["generated"],
        },
    )
    for cluster in report["clusters"]:
        cases = cluster["testcases"]
        nodes = cluster.get("nodes") or []
        suite = ET.SubElement(
            suites,
            "testsuite",
            {
                "name": _xml_text(cluster["cluster"]),
                "tests": str(len(cases) + len(nodes)),
                "failures": str(sum(1 for case in cases if case["verdict"] == "fail") + sum(1 for row in nodes if row["verdict"] == "fail")),
                "errors": str(sum(1 for case in cases if case["verdict"] == "error")),
                "skipped": "0",
                "time": "%.3f" % (cluster["seconds"] or 0.0),
                "timestamp": cluster["started"] or report["generated"],
                "hostname": _xml_text(cluster["cluster"]),
            },
        )
        properties = ET.SubElement(suite, "properties")
        for key in ("platform", "gpu_architecture", "outcome", "namespace", "trainjob", "severity", "action"):
            ET.SubElement(properties, "property", {"name": key, "value": _xml_text(cluster.get(key))})
        ET.SubElement(properties, "property", {"name": "run_id", "value": _xml_text(report["run_id"])})
        compared = cluster.get("baseline")
        if compared:
            # A regression is a warning: the testcase passes, these properties and its system-out say so.
            for key, value in (
                ("baseline_run_id", compared["run_id"]),
                ("baseline_regressed", "true" if compared["regressed"] else "false"),
                ("baseline_change_percent", "" if compared["change_percent"] is None else "%.2f" % compared["change_percent"]),
                ("baseline_note", compared["note"]),
                ("baseline_regressed_nodes", ", ".join(compared.get("regressed_nodes") or [])),
            ):
                if value:
                    ET.SubElement(properties, "property", {"name": key, "value": _xml_text(value)})
        for case in cases:
            element = ET.SubElement(
                suite,
                "testcase",
                {
                    "classname": _xml_text("gpufleet.burnin.%s" % cluster["cluster"]),
                    "name": _xml_text(case["workload"]),
                    "time": "%.3f" % ((cluster["seconds"] or 0.0) / max(len(cases), 1)),
                },
            )
            details = _xml_text(_case_details(case))
            message = _xml_text(case["reason"])[:1000]
            if case["verdict"] == "fail":
                ET.SubElement(element, "failure", {"message": message, "type": "fail"}).text = details
            elif case["verdict"] == "error":
                ET.SubElement(element, "error", {"message": message, "type": "error"}).text = details
            ET.SubElement(element, "system-out").text = details if case["verdict"] in ("pass", "warn") else _xml_text("verdict: %s" % case["verdict"])
        for stage in cluster.get("stages") or []:
            ET.SubElement(properties, "property", {"name": "stage_%s" % _xml_text(stage["stage"]), "value": _xml_text(_stage_text(stage))})
        # A testcase per node (its worst finding over the stages): the failing node is a failure of its own.
        for row in nodes:
            element = ET.SubElement(
                suite, "testcase", {"classname": _xml_text("gpufleet.burnin.%s.nodes" % cluster["cluster"]), "name": _xml_text(row["node"]), "time": "0.000"}
            )
            text = _xml_text(
                "verdict: %s\nseverity: %s\naction: %s (%s)\nstages: %s\n%s"
                % (row["verdict"], row.get("severity"), row.get("action"), row.get("action_why") or "", ", ".join(row["stages"]), "\n".join(row["reasons"]))
            )
            if row["verdict"] == "fail":
                ET.SubElement(element, "failure", {"message": _xml_text("; ".join(row["reasons"]))[:1000], "type": "fail"}).text = text
            ET.SubElement(element, "system-out").text = text
    if hasattr(ET, "indent"):
        ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _stage_text(stage):
    """One line per stage: its verdict and each attempt's TrainJob and verdict."""
    return "%s: %s" % (
        stage["verdict"],
        ", ".join(
            "attempt %s %s %s" % (attempt.get("attempt"), attempt.get("trainjob") or "-", attempt.get("verdict") or "-") for attempt in stage["attempts"]
        ),
    )


# ------------------------------------------------------------------------------------------------ HTML and SVG


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


# The page itself is templates/reports/fleet.html.j2 (autoescaped Jinja2); this code computes what it shows: the fleet
# overview (the margin chart, the counts, the filter facets) and each cluster's folded details.

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
        return _xml_text(value)
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


def _order_key(cluster):
    """Worst first: clusters without a measured margin (most severe verdict first), then by margin, lowest first."""
    margin = cluster.get("margin")
    if margin is None:
        return (0, -_SEVERITY.get(cluster["verdict"], 3), 0.0, cluster["cluster"])
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


# ------------------------------------------------------------------------------------------------ files

RENDERERS = {"json": render_json, "junit": render_junit, "html": render_html}


def report_paths(directory, formats=FORMATS, basename="burnin-report"):
    return dict((fmt, os.path.join(directory, basename + FILE_SUFFIXES[fmt])) for fmt in formats)


BASELINES_FILE = "burnin-baselines.json"
# Bounds on the earlier baselines read (untrusted files): the latest files, each at most this size.
MAX_BASELINE_FILES = 100
MAX_BASELINE_BYTES = 64 << 20


def earlier_baselines(directory, current_dir=None):
    """(documents oldest first, notes) of the sibling baselines (BASELINES_FILE) in DIRECTORY and its run
    subdirectories, never CURRENT_DIR's: the latest MAX_BASELINE_FILES by time written. A file that is not a
    baselines document is left out with a note naming it."""
    if not directory:
        return [], []
    found = []
    try:
        names = [""] + sorted(os.listdir(directory))
    except (IOError, OSError) as exc:
        return [], ["burnin_baseline_dir %s cannot be read: %s" % (directory, exc.strerror or exc)]
    for name in names:
        folder = os.path.join(directory, name) if name else directory
        if name and (not os.path.isdir(folder) or os.path.islink(folder)):
            continue
        if current_dir and os.path.realpath(folder) == os.path.realpath(current_dir):
            continue
        path = os.path.join(folder, BASELINES_FILE)
        try:
            if os.path.isfile(path) and not os.path.islink(path):
                found.append((os.path.getmtime(path), path))
        except (IOError, OSError):
            continue
    documents, notes = [], []
    for _mtime, path in sorted(found)[-MAX_BASELINE_FILES:]:
        data = read_unlinked(path)
        try:
            if data is None or len(data) > MAX_BASELINE_BYTES:
                raise ValueError("missing or larger than %d bytes" % MAX_BASELINE_BYTES)
            doc = json.loads(data.decode("utf-8"))
            siblings.earlier_samples([doc])
        except (ValueError, UnicodeDecodeError, ConfigError) as exc:
            notes.append("earlier baselines %s left out: %s" % (path, exc))
            continue
        documents.append(doc)
    return documents, notes


def earlier_runs(directory, basename=history.DEFAULT_BASENAME, current_dir=None, limit=offenders.MAX_RUNS):
    """[(run id, offenders.node_states())] of the latest LIMIT earlier runs under DIRECTORY (subdirectories holding
    ``<basename>.json``, never CURRENT_DIR), oldest first; a report that cannot be read is skipped."""
    if not directory:
        return []
    try:
        names = sorted(os.listdir(directory))
    except (IOError, OSError):
        return []
    found = []
    for name in names:
        folder = os.path.join(directory, name)
        path = os.path.join(folder, basename + ".json")
        if current_dir and os.path.realpath(folder) == os.path.realpath(current_dir):
            continue
        try:
            if os.path.isdir(folder) and not os.path.islink(folder) and os.path.isfile(path):
                found.append((os.path.getmtime(path), name, path))
        except (IOError, OSError):
            continue
    runs = []
    for _mtime, name, path in sorted(found)[-limit:]:
        data = read_unlinked(path)
        try:
            if data is None or len(data) > MAX_BASELINE_BYTES:
                continue
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(doc, dict) and doc.get("schema") == SCHEMA:
            runs.append((str(doc.get("run_id") or name), offenders.node_states(doc)))
    return runs


def write_reports(
    results,
    directory,
    formats=FORMATS,
    run_id=None,
    title="GPU burn-in",
    generated=None,
    basename="burnin-report",
    check_mode=False,
    baseline="",
    history_dir="",
    regression_percent=history.DEFAULT_REGRESSION_PERCENT,
    sibling_key=siblings.DEFAULT_KEY,
    sibling_rule=None,
    sibling_min=siblings.DEFAULT_MIN_SIBLINGS,
    sibling_verdict="warn",
    baseline_dir="",
    offender_failures=offenders.DEFAULT_FAILURES,
    offender_runs=offenders.DEFAULT_RUNS,
    golden=None,
    drift_fail=(),
):
    """Render the chosen formats and write them into ``directory`` (created when missing); nothing is written in
    check mode. ``baseline`` (an earlier run's JSON report or its directory) or else the latest earlier run under
    ``history_dir`` is compared with (history.resolve_baseline); a baseline that is not a report is no comparison in
    the reports, which are still written, and its error is returned as ``baseline_error``. Nodes are judged against
    their SKU's siblings (judging/siblings.py), merged with the earlier baselines under ``baseline_dir``; this run's
    baselines are written as BASELINES_FILE beside the reports. The earlier runs' reports under ``history_dir`` name
    the repeat offenders (judging/offenders.py).
    Returns {files: {format: path}, changed: bool, changed_files: [...], summary, baseline, baseline_error}."""
    if not isinstance(directory, str) or not directory:
        raise ConfigError("directory", "must be the path of the directory to write the reports into")
    formats = list(formats or FORMATS)
    unknown = [fmt for fmt in formats if fmt not in FORMATS]
    if unknown:
        raise ConfigError("formats", "unknown format(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(FORMATS)))
    if not re.match(r"^[A-Za-z0-9._-]+\Z", basename or ""):
        raise ConfigError("basename", "must be a plain file name prefix, got %r" % (basename,))
    baseline_error = ""
    try:
        loaded, note = history.resolve_baseline(baseline, history_dir, run_id or "", basename, current_dir=directory)
    except ConfigError as exc:
        loaded, note, baseline_error = None, "baseline not compared: %s" % exc, str(exc)
    window = offenders.check_window(offender_failures, offender_runs)
    documents, sibling_notes = earlier_baselines(baseline_dir, current_dir=directory)
    options = dict(
        key=siblings.check_key(sibling_key),
        rule=siblings.check_rule(sibling_rule),
        min_siblings=siblings.check_min_siblings(sibling_min),
        verdict=siblings.check_verdict(sibling_verdict),
        earlier=siblings.earlier_samples(documents),
    )
    drift_options = dict(golden=drift.load_golden(golden), fail_keys=drift.check_fail_keys(drift_fail))
    report = build_report(
        results,
        run_id=run_id,
        title=title,
        generated=generated,
        baseline=loaded,
        regression_percent=regression_percent,
        baseline_note=note,
        sibling_options=options,
        drift_options=drift_options,
        earlier_runs=earlier_runs(history_dir, basename, directory, 3 * window[1]),
        offender_window=window,
    )
    report["siblings"].update(earlier_runs=len(documents), notes=sibling_notes)
    paths = report_paths(directory, formats, basename)
    contents = dict((fmt, RENDERERS[fmt](report)) for fmt in formats)
    if report["siblings"]["baselines"]:
        # Only a run that measured something per node has baselines for a later run to merge.
        paths["baselines"] = os.path.join(directory, BASELINES_FILE)
        contents["baselines"] = json.dumps(siblings.document(report["siblings"], report["run_id"], report["generated"]), indent=2, sort_keys=True) + "\n"
    changed = []
    for fmt in contents:
        content = contents[fmt]
        path = paths[fmt]
        if read_unlinked(path) == content.encode("utf-8"):
            continue
        changed.append(path)
        if not check_mode:
            write_file(directory, os.path.basename(path), content)
    return {
        "files": paths,
        "changed": bool(changed),
        "changed_files": changed,
        "summary": report["summary"],
        "baseline": report["baseline"],
        "baseline_error": baseline_error,
    }


def cluster_node_entries(name, entry):
    """The JSON report's per-node entries of cluster NAME from its result ENTRY: the node marks' verdict annotation is
    one of these (cluster/node_marks.py), so both have the schema's shape."""
    return _nodes(name, entry)
