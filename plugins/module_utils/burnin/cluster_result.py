# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""A cluster's result, built in one place: what the apply, the verdict and a failed task add to it (the role's
``burnin_result``; filters burnin_applied, burnin_judged, burnin_failure). Whether it passed is outcomes.py's rule."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import UNREACHABLE_CLASSES, classify
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import from_verdict, with_findings
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import cluster_passed


def _names(objects):
    return ["%s/%s" % (obj["kind"], obj["metadata"]["name"]) for obj in objects or []]


def _really_changed(result):
    """Changed, unless the only difference was in hidden fields (managedFields), as some API servers report on a no-op."""
    diff = result.get("diff")
    return bool(result.get("changed")) and not (diff is not None and not (diff or {}).get("before") and not (diff or {}).get("after"))


def apply_results(apply):
    """One k8s_apply result per object."""
    inner = (apply or {}).get("result") or {}
    return list(inner["results"]) if isinstance(inner, dict) and "results" in inner else [apply or {}]


def _added(earlier, names):
    return list(earlier) + [name for name in names if name not in earlier]


def applied_record(results, objects, namespace, namespace_missing, check_mode, wait, planned=None, previous=None):
    """The result's fields after the apply: stage, applied, changed_objects, namespace_created, outcome, reason.
    RESULTS: apply_results(); OBJECTS: what was applied, in order; PLANNED: the plan's kind/name list (in check mode
    with the namespace missing only the namespace could be dry-run); PREVIOUS: the result before this apply, whose
    applied and changed objects (an earlier stage's) are kept."""
    previous = previous or {}
    names = _names(objects)
    changed = [name for name, result in zip(names, results) if _really_changed(result or {})]
    skipped = list(planned or []) if (namespace_missing and check_mode) else []
    if previous.get("applied") or previous.get("changed_objects"):
        names = _added(previous.get("applied") or [], names)
        changed = _added(previous.get("changed_objects") or [], changed)
    namespace_missing = namespace_missing or (bool(previous.get("namespace_created")) and not check_mode)
    reason = ""
    if check_mode:
        reason = "namespace %s does not exist yet: only it was dry-run; would create %s" % (namespace, ", ".join(skipped)) if skipped else "dry run passed"
    return {
        "stage": "apply",
        "applied": names,
        "changed_objects": changed,
        "namespace_created": bool(namespace_missing and not check_mode),
        "outcome": "Checked" if check_mode else ("Applied" if not wait else "Pending"),
        "reason": reason,
    }


def judged_record(result, verdict, cluster=""):
    """{'record': the result's fields after the verdict (verdict, stage, reason, and the per-node findings:
    node_findings, node_verdicts; the fleet stage's, or the verdict's own ``findings`` when it has them), 'line': one
    line for a person}. A failing verdict is the cluster's
    failure: the stage becomes verdict and the reason says why, its failed nodes named."""
    failing = not cluster_passed({"outcome": "Complete", "verdict": verdict})
    failed_nodes = verdict.get("failed_nodes") or []
    record = {"verdict": verdict, "stage": "verdict" if failing else result.get("stage"), "reason": result.get("reason")}
    # A verdict that judged nodes itself (a dcgm-diag run: judging/verdict.py dcgm_verdict) brings its findings.
    findings = verdict["findings"] if isinstance(verdict.get("findings"), list) else from_verdict(verdict)
    record.update(with_findings(result, findings))
    if failing:
        record["reason"] = "verdict %s: %s%s" % (
            verdict.get("verdict"),
            verdict.get("reason"),
            " (failed nodes: %s)" % ", ".join(failed_nodes) if failed_nodes else "",
        )
    line = "%s: %s - %s" % (cluster or result.get("cluster"), verdict.get("verdict"), verdict.get("reason"))
    if verdict.get("nodes"):
        line += "; nodes %d succeeded%s" % (len(verdict.get("succeeded_nodes") or []), ", failed: " + ", ".join(failed_nodes) if failed_nodes else "")
    return {"record": record, "line": line}


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
