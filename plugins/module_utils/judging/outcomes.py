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
FAILING_VERDICTS = ("fail", "error")
# Role outcomes that are not a failure of the cluster: a finished job (Trainer's Complete; Succeeded as JobSet and
# older callers say it), a dry run, an apply without waiting, a cleanup.
OK_OUTCOMES = ("Complete", "Succeeded", "Checked", "Applied", "Cleaned")
# Outcomes that are the cluster's own failure (the others are errors of the burn-in).
FAIL_OUTCOMES = ("Failed", "Mismatch")
# A cluster of a later serial batch: not run yet, neither passed nor failed.
PENDING = "Pending"


def verdict_of(result):
    """The verdict name of a cluster's RESULT (``pass``, ``warn``, ``fail``, ``error``), or None without one."""
    verdict = (result or {}).get("verdict")
    return verdict.get("verdict") if isinstance(verdict, dict) else None


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
    return "%-4s %-28s %-16s %-11s %-5s %s" % (state, result.get("cluster"), where, result.get("outcome"), verdict_of(result) or "-", detail)


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
    return {"header": header, "lines": [_summary_line(r, r["cluster"] in passed) for r in values], "passed": passed, "failed": failed, "warned": warned}


# Outcomes a task sets on purpose before it fails the block deliberately: kept, with their reason, by failure_of.
DELIBERATE_OUTCOMES = ("Mismatch", "Unreachable", "Error")


def _first_failed_item(failed_result):
    """A loop's failure says only "One or more items failed": its first failed item tells why."""
    items = [item for item in (failed_result or {}).get("results") or [] if isinstance(item, dict) and item.get("failed")]
    return items[0] if items else failed_result or {}


def failure_of(result, failed_task=None, failed_result=None, context=None, server=None):
    """How a cluster's RESULT ends after a failed task (the role's rescue: ansible_failed_task, ansible_failed_result):
    {'record': the fields to merge into the result (outcome, error_class, reason), 'detail': the raw error for
    higher verbosity}.

    An outcome a task set on purpose (DELIBERATE_OUTCOMES with a reason) is kept. Otherwise the error is classified
    (plugins/module_utils/cluster/k8s_errors.py; the collection's cluster plugins return it classified already):
    outcome Unreachable when the cluster could not be talked to, else Error; the reason names the failed task.
    """
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import UNREACHABLE_CLASSES, classify

    result = result or {}
    if result.get("outcome") in DELIBERATE_OUTCOMES and result.get("reason"):
        return {"record": {"outcome": result["outcome"], "error_class": result.get("error_class") or "", "reason": result["reason"]}, "detail": ""}
    failed = _first_failed_item(failed_result)
    msg = failed.get("msg")
    error = failed.get("error") if isinstance(failed.get("error"), dict) else None
    if error is None or not error.get("category"):
        error = classify(msg if msg is not None else "unknown error", context=context or None, server=server or None)
        message = error["message"]
    else:
        message = str(msg) if msg else error.get("message") or ""
    category = error["category"]
    task = (failed_task or {}).get("name") or "a task"
    # The class leads the reason, unless the message says it already ("Forbidden: user ... may not ...").
    named = category == "Error" or (category + ":") in message
    return {
        "record": {
            "outcome": "Unreachable" if category in UNREACHABLE_CLASSES else "Error",
            "error_class": category,
            "reason": "%s: %s%s" % (task, "" if named else category + ": ", message),
        },
        "detail": error.get("detail") or "",
    }
