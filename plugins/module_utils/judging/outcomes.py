# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The pass/fail policy of a cluster's burn-in, defined once: the role's summary and final failure, the reports and
the AWX artifact all ask ``cluster_passed``.

A cluster passes when its outcome is no failure (OK_OUTCOMES) and its verdict, if it has one, is not a failing one
(``warn`` is shown and passes)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

VERDICTS = ("pass", "warn", "fail", "error")
# The one order of the verdicts, least severe first: what every "worst of" in judging/ compares by.
SEVERITY = dict((name, rank) for rank, name in enumerate(VERDICTS))
FAILING_VERDICTS = ("fail", "error")
# Role outcomes that are not a failure of the cluster: a finished job (Trainer's Complete; Succeeded as JobSet and
# older callers say it), a dry run, an apply without waiting, a cleanup.
OK_OUTCOMES = ("Complete", "Succeeded", "Checked", "Applied", "Cleaned")
# Outcomes that are the cluster's own failure (the others are errors of the burn-in).
FAIL_OUTCOMES = ("Failed", "Mismatch")
# A cluster of a later serial batch: not run yet, neither passed nor failed.
PENDING = "Pending"


def worst(verdicts):
    """The most severe of VERDICTS (pass < warn < fail < error, SEVERITY); ``pass`` for none. A name not in
    VERDICTS raises KeyError: a typo must not rank as anything."""
    result = "pass"
    for verdict in verdicts:
        if SEVERITY[verdict] > SEVERITY[result]:
            result = verdict
    return result


def median(values):
    """The median of VALUES (numbers, at least one): what a part is compared with among its siblings (judging/gpu.py's
    GPUs of a node, judging/isolation_parts.py's NICs of a node)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def verdict_of(result):
    """The verdict name of a cluster's RESULT (``pass``, ``warn``, ``fail``, ``error``), or None without one: the
    worst of its verdict and of its stages' (``stages``, plugins/module_utils/burnin/stages.py: a node stage that
    failed fails the cluster even when the fleet stage passed)."""
    verdict = (result or {}).get("verdict")
    names = [verdict.get("verdict")] if isinstance(verdict, dict) and verdict.get("verdict") in VERDICTS else []
    names += [stage.get("verdict") for stage in (result or {}).get("stages") or [] if isinstance(stage, dict) and stage.get("verdict") in VERDICTS]
    return max(names, key=VERDICTS.index) if names else None


def cluster_passed(result):
    """True when the cluster's RESULT is a pass: an outcome of OK_OUTCOMES and no failing verdict."""
    return (result or {}).get("outcome") in OK_OUTCOMES and verdict_of(result) not in FAILING_VERDICTS


def _summary_line(result, passed):
    state = "ok" if passed else (".." if result.get("outcome") == PENDING else "FAIL")
    where = "%s/%s" % (result.get("platform") or "?", result.get("gpu_architecture") or "?")
    if passed and "trainjob" in result:
        job = "%s/%s" % (result.get("namespace"), result["trainjob"])
        reason = (result.get("verdict") or {}).get("reason") if "verdict" in result else result.get("reason")
        detail = "%s: %s" % (job, reason) if reason or "verdict" in result else job
    else:
        detail = result.get("reason") or ""
    # The recommended action (judging/actions.py, on every result since burnin/cluster_result.py grades it): what to do
    # now, beside which cluster and why; "-" when there is none to take.
    action = result.get("action") if result.get("action") not in (None, "", "none") else "-"
    return "%-4s %-28s %-16s %-11s %-5s %-9s %s" % (state, result.get("cluster"), where, result.get("outcome"), verdict_of(result) or "-", action, detail)


def fleet_summary(results, title="burn-in", run_id="", check_mode=False, reports=None, baseline=None):
    """The fleet summary a person reads at the end of a run: a header (how many passed, which failed, which warned,
    where the reports are, which regressed against the baseline) and one line per cluster, sorted. RESULTS: cluster
    name -> the cluster's result; BASELINE: the report's comparison with an earlier run (burnin_report's ``baseline``)."""
    values = sorted((results or {}).values(), key=lambda r: r.get("cluster") or "")
    passed = [r["cluster"] for r in values if cluster_passed(r)]
    failed = sorted(r["cluster"] for r in values if r["cluster"] not in passed and r.get("outcome") != PENDING)
    warned = sorted(r["cluster"] for r in values if r["cluster"] in passed and verdict_of(r) == "warn")
    header = "%s %s%s: %d of %d clusters passed, %d failed" % (title, run_id, " (check mode)" if check_mode else "", len(passed), len(values), len(failed))
    if failed:
        header += ": " + ", ".join(failed)
    if warned:
        header += "; %d with warnings: %s" % (len(warned), ", ".join(warned))
    if reports:
        header += "; reports in %s" % reports
    if isinstance(baseline, dict) and baseline.get("run_id"):
        regressed = list(baseline.get("regressed_clusters") or [])
        header += "; vs baseline run %s: %s" % (
            baseline["run_id"],
            ("%d regressed (warn): %s" % (len(regressed), ", ".join(regressed))) if regressed else "no regression",
        )
        nodes = list(baseline.get("regressed_nodes") or [])
        if nodes:
            header += "; %d node%s regressed: %s" % (len(nodes), "s" if len(nodes) > 1 else "", ", ".join(nodes))
    return {"header": header, "lines": [_summary_line(r, r["cluster"] in passed) for r in values], "passed": passed, "failed": failed, "warned": warned}
