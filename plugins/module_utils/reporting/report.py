# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The report document of a burn-in run, what every format is rendered from, and its JSON: build_report normalizes
the fleet's results, render_json is the document as it is (docs/verdict-schema.json). The other audiences read the
document: junit.py (CI), html_view.py with geometry.py (people), writer.py (the files on disk).

Input: the fleet's results keyed by cluster (the role's ``burnin_fleet_results``), each with ``verdicts`` (a list of
``gpufleet.burnin.burnin_verdict`` results) or ``verdict`` (one); a cluster without a verdict is judged by its
``outcome``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions, drift, offenders, siblings
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import node_entries, with_findings
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import FAIL_OUTCOMES, OK_OUTCOMES, SEVERITY, VERDICTS
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import history
from ansible_collections.gpufleet.burnin.plugins.module_utils.stage_table import scope_of

SCHEMA = "gpufleet.burnin/report/v1"
# The version of docs/verdict-schema.json this report follows (its "$id" ends with it).
SCHEMA_VERSION = "1.0.0"


def _worst(verdicts):
    result = "pass"
    for verdict in verdicts:
        if SEVERITY.get(verdict, 3) > SEVERITY[result]:
            result = verdict if verdict in SEVERITY else "error"
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
        if scope_of(stage["stage"]) == "fleet" or not judged or judged.get("verdict") not in VERDICTS:
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
    configs = drift.configs_of(entry.get("detected"))
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
    sibling = siblings.judge(dict((name, entry) for name, entry in results.items() if isinstance(entry, dict)), sibling_options)
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


def cluster_node_entries(name, entry):
    """The JSON report's per-node entries of cluster NAME from its result ENTRY: the node marks' verdict annotation is
    one of these (cluster/node_marks.py), so both have the schema's shape."""
    return _nodes(name, entry)


# ------------------------------------------------------------------------------------------------ what JUnit and HTML share


def heading(report):
    """The report's title naming the run once: a title that already holds the run id (a caller's "GPU burn-in <id>")
    is not given it a second time."""
    title, run_id = (report.get("title") or "").strip(), (report.get("run_id") or "").strip()
    if not run_id or run_id in title.split():
        return title
    return ("%s %s" % (title, run_id)).strip()


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(value):
    """VALUE as text XML can hold (the JUnit file and the HTML page): the characters XML 1.0 forbids replaced."""
    return _XML_BAD.sub("\ufffd", "%s" % ("" if value is None else value))


# ------------------------------------------------------------------------------------------------ JSON


def render_json(report):
    return json.dumps(report, indent=2, sort_keys=True, default=str) + "\n"
