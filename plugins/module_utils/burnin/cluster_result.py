# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""A cluster's result (the role's ``burnin_result``), built in this one module: its first fields (started_record),
what detection (recorded_detection), the plan (planned_record), the apply (applied_record), the verdict
(judged_record), each stage's attempt (recorded_attempt), the isolation (isolation_record), the last stage
(final_record) and a failed task (failure_of) add to it. Each returns the fields to merge into the result; whether it
passed is judging/outcomes.py's rule."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import detect
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import UNREACHABLE_CLASSES, classify
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions, isolation, isolation_parts
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import from_verdict, with_findings
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import VERDICTS, cluster_passed
from ansible_collections.gpufleet.burnin.plugins.module_utils.stage_table import runs_on_every_node, scope_of


def utc_stamp():
    """Now, in UTC, as a result's times are written (its ``started`` and ``finished``)."""
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def started_record(variables, cluster, run_id, namespace, trainjob, entry, check_mode=False, started=None):
    """A cluster's first result, before any task reached it (role_plan.run_start). VARIABLES: the role's checked
    variables; STARTED: the start time (now, in UTC, when not given)."""
    platform, gpu = str(variables.get("burnin_platform") or ""), str(variables.get("burnin_gpu_architecture") or "")
    started = started or utc_stamp()
    return {
        "cluster": cluster,
        "run_id": run_id,
        "outcome": "Pending",
        "reason": "",
        "stage": "start",
        "check_mode": bool(check_mode),
        "declared": {"platform": platform, "gpu_architecture": gpu},
        "platform": platform,
        "gpu_architecture": gpu,
        "namespace": namespace,
        "trainjob": trainjob,
        "entry": entry,
        "workload": variables.get("burnin_workload") or "",
        "framework": variables.get("burnin_framework") or "",
        "nodes": variables.get("burnin_nodes", 2),
        "warnings": [],
        # Each stage's attempts, in the order they ran (burnin/stages.py).
        "stages": [],
        "started": started,
    }


def recorded_detection(detection, check_nodes=True):
    """The fields a cluster's result keeps of DETECTION (check_cluster's answer): the platform and GPU used, what the
    nodes said, the warnings to add; outcome Mismatch with the reason when the nodes contradict the group."""
    recorded = {
        "stage": "detect",
        "platform": detection["platform"],
        "gpu_architecture": detection["gpu_architecture"],
        "detected": dict(
            (key, detection.get(source))
            for key, source in (
                ("platform", "detected_platform"),
                ("gpu_architecture", "detected_gpu_architecture"),
                ("platform_source", "platform_source"),
                ("gpu_architecture_source", "gpu_architecture_source"),
                ("nodes", "nodes"),
                ("gpu_nodes", "gpu_nodes"),
                ("gpus", "gpus"),
                ("gpu_products", "gpu_products"),
                ("instance_types", "instance_types"),
            )
        ),
        "warnings": list(detection["warnings"]) + ([] if check_nodes else [detect.NOT_CHECKED]),
    }
    # Each config once with its nodes (detect.py groups them): per node, an 80-node cluster's configs were half of its
    # result's values.
    recorded["detected"]["node_configs"] = detection.get("node_configs") or []
    if not detection["ok"]:
        recorded.update(outcome="Mismatch", reason=detection["message"])
        recorded.update(actions.of_result(recorded))
    return recorded


def planned_record(stage, trainjob, workload, plan, objects, whole_logs_of):
    """The result's fields after the plan of STAGE (role_plan.role_plan): the fleet stage's workload, plan and OBJECTS
    (kind/name); a node stage changes only the result's stage (the cluster's workload fields stay the fleet stage's)."""
    if runs_on_every_node(stage):
        return {"stage": "plan"}
    platform_data = dict((key, value) for key, value in (plan.get("platform_data") or {}).items() if key != "platform_vars")
    return {
        "stage": "plan",
        "trainjob": trainjob,
        "workload": workload["workload"],
        "framework": workload["framework"],
        "image": workload["image"],
        "collective": workload["collective"],
        "results": workload["results"],
        "whole_logs_of": list(whole_logs_of),
        "gpus_per_node": workload["gpus_per_node"],
        "mlnx_per_node": workload["mlnx_per_node"],
        "matched_overrides": plan["matched"],
        "topology_key": plan.get("topology_key") or "",
        "instance_type": plan.get("instance_type") or "",
        "platform_data": platform_data,
        "objects": list(objects),
    }


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
    # A verdict that judged nodes itself (a dcgm-diag run: judging/dcgm.py dcgm_verdict) brings its findings.
    findings = verdict["findings"] if isinstance(verdict.get("findings"), list) else from_verdict(verdict)
    record.update(with_findings(result, findings))
    if failing:
        record["reason"] = "verdict %s: %s%s" % (
            verdict.get("verdict"),
            verdict.get("reason"),
            " (failed nodes: %s)" % ", ".join(failed_nodes) if failed_nodes else "",
        )
    record.update(_graded(result, record))
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
        record = {"outcome": result["outcome"], "error_class": result.get("error_class") or "", "reason": result["reason"]}
        return {"record": _graded(result, record), "detail": ""}
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
    record = {
        "outcome": "Unreachable" if category in UNREACHABLE_CLASSES else "Error",
        "error_class": category,
        "reason": "%s: %s%s" % (task, "" if named else category + ": ", message),
    }
    return {"record": _graded(result, record), "detail": error.get("detail") or ""}


def _graded(result, fields):
    """FIELDS with the cluster's severity and action (judging/actions.py of_result) of RESULT once FIELDS are merged."""
    return dict(fields, **actions.of_result(dict(result or {}, **fields)))


def stage_index(stages, stage):
    for index, record in enumerate(stages):
        if record.get("stage") == stage:
            return index
    return None


def recorded_attempt(result, stage, trainjob, verdict, outcome=None, note=""):
    """The fields of a cluster's RESULT after an attempt of STAGE judged by VERDICT (a verdict of verdict.py or
    node_stage.py): ``stages`` with the attempt added (the stage's verdict and reason are its last attempt's) and,
    for a node stage, its findings (node_findings, node_verdicts: a rerun replaces the stage's earlier findings)."""
    result = result or {}
    verdict = verdict or {}
    name = verdict.get("verdict")
    if name not in VERDICTS:
        raise ConfigError("verdict", "must be a verdict with a 'verdict' of %s, got %r" % (", ".join(VERDICTS), name))
    stages = [dict(record) for record in result.get("stages") or []]
    index = stage_index(stages, stage)
    if index is None:
        stages.append({"stage": stage, "attempts": []})
        index = len(stages) - 1
    record = stages[index]
    attempt = {
        "attempt": len(record.get("attempts") or []) + 1,
        "trainjob": trainjob,
        "outcome": outcome or result.get("outcome") or "",
        "verdict": name,
        "reason": verdict.get("reason") or "",
    }
    if verdict.get("node_results") is not None:
        attempt["nodes"] = [
            dict((key, row.get(key)) for key in ("node", "pod", "verdict", "busbw", "size", "reason")) for row in verdict.get("node_results") or []
        ]
    record["attempts"] = list(record.get("attempts") or []) + [attempt]
    record.update(verdict=name, reason=attempt["reason"], trainjob=trainjob)
    # The stage's severity and action, from its last verdict's evidence (judging/actions.py).
    record.update(actions.of_verdict(verdict))
    if note:
        record["note"] = note
    if verdict.get("node_results") is not None:
        # The node stage's last verdict, compact, for the reports (its checks are one per node).
        record["judged"] = dict((key, verdict.get(key)) for key in ("stage", "workload", "collective", "verdict", "reason", "checks", "thresholds", "nodes"))
    fields = {"stages": stages}
    if verdict.get("findings") is not None:
        fields.update(with_findings(result, verdict["findings"]))
    return _graded(result, fields)


def isolation_record(result, outcome):
    """The fields of the cluster's RESULT after the isolation: isolation (rounds, conclusion, jobs, minutes) and the
    node findings with the isolation's added (node_findings.with_findings)."""
    fields = with_findings(result, outcome.get("findings") or [])
    conclusion = outcome.get("conclusion") or {}
    fields["isolation"] = {
        "outcome": conclusion.get("outcome"),
        "reason": conclusion.get("reason"),
        "culprits": [culprit["node"] for culprit in conclusion.get("culprits") or []],
        "good": conclusion.get("good") or [],
        "unknown": conclusion.get("unknown") or [],
        "jobs": len(outcome.get("results") or []) + len(outcome.get("part_results") or []),
        "node_jobs": len(outcome.get("results") or []),
        "node_minutes": conclusion.get("minutes"),
        "all_pairs": isolation.all_pairs(len(outcome.get("nodes") or [])),
        "minutes": outcome.get("minutes"),
        "rounds": outcome.get("rounds") or [],
        # The finer conclusions (judging/isolation_parts.py), each with its runs as evidence (paths, nics, links).
        "parts": outcome.get("parts") or [],
        "pending": outcome.get("pending") or [],
    }
    found = isolation_parts.summary(fields["isolation"]["parts"])
    if fields["isolation"]["culprits"] or found:
        # The cluster's one line (the summary) names them too.
        named = ["bad node(s) %s" % ", ".join(fields["isolation"]["culprits"])] if fields["isolation"]["culprits"] else []
        fields["reason"] = "%s; isolation: %s" % ((result or {}).get("reason") or "", "; ".join(named + ([found] if found else [])))
    return _graded(result, fields)


def final_record(result):
    """The fields of a cluster's RESULT after its last stage: when a stage other than the fleet stage failed (fail or
    error), the reason names it (after the fleet stage's own failure, which judged_record put there) and the stage
    becomes ``verdict``; {} otherwise."""
    result = result or {}
    records = [record for record in result.get("stages") or [] if record.get("verdict") in ("fail", "error")]
    others = [record for record in records if scope_of(record.get("stage")) != "fleet"]
    if not others:
        return {}
    text = "; ".join("%s stage %s: %s" % (record["stage"], record["verdict"], record.get("reason") or "") for record in others)
    fleet_failed = any(scope_of(record.get("stage")) == "fleet" for record in records)
    return {"reason": ("%s; %s" % (result["reason"], text)) if fleet_failed and result.get("reason") else text, "stage": "verdict"}
