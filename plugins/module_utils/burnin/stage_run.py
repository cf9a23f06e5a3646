# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""One stage of a cluster's burn-in (node, fleet or dcgm): its attempts until one passes or burnin_repeats reruns are
spent (burnin/stages.py), each one plan, apply, wait, logs and verdict over the cluster protocol
(module_utils/cluster/trainjobs.py), behind gpufleet.burnin.burnin_stage (roles/burnin/tasks/stage.yml). It builds
the cluster's result record with the pure functions of burnin/role_plan.py, burnin/cluster_result.py,
judging/verdict.py, judging/node_stage.py and burnin/stages.py.

Check mode plans and dry-runs the apply only; without burnin_wait there is no wait and no verdict, without
burnin_collect_logs no logs and no verdict. A wait whose cluster could not be read raises ClusterCallFailed, with
``partial`` (the record so far and the steps) set on it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import mnnvl
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import NOT_READ, ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import stages
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import (
    applied_record,
    apply_results,
    final_record,
    judged_record,
    recorded_attempt,
)
from ansible_collections.gpufleet.burnin.plugins.module_utils.stage_table import runs_on_every_node, scope_of

# What the settings hold (the role's variables of the same name without the burnin_ prefix, and the run's facts).
DEFAULT_SETTINGS = {
    "repeats": 0,
    "check_mode": False,
    "diff": False,
    "wait": True,
    "collect_logs": True,
    "create_namespace": True,
    # Whether detection found the namespace (burnin__cluster.namespace_exists).
    "namespace_exists": False,
    "namespace": "",
    "timeout": 3600,
    "nodes": 1,
    "mnnvl": False,
    # The cluster's Node objects (detection's), for the MNNVL readiness check before an MNNVL fleet job.
    "cluster_nodes": None,
    "thresholds": None,
    "on_missing": "warn",
    # The cluster's name in the summary line (the inventory host).
    "cluster": "",
    # write_logs(log_subdir, results) -> the paths written: the logs under the report directory, or None for none.
    "write_logs": None,
    # progress(line): told as each attempt is applied and as it ends (the fleet driver's lines), or None.
    "progress": None,
}


def _merged(result, fields):
    out = dict(result)
    out.update(fields)
    return out


def to_apply(plan, result, settings):
    """(objects, namespace_missing) as the stage applies them: the namespace object first when it is missing (burnin_create_namespace,
    not found by detection, not created by an earlier stage); in check mode with it missing only the namespace (the
    others' dry run would be refused in a namespace that does not exist)."""
    missing = bool(settings["create_namespace"]) and not settings["namespace_exists"] and not result.get("namespace_created")
    objects = ([plan["namespace_object"]] if missing else []) + ([] if (missing and settings["check_mode"]) else list(plan["objects"]))
    return objects, missing


def judge_attempt(stage, plan_stage, result, pod_logs, waited, settings):
    """The verdict of one attempt: the fleet stage's by verdict.verdict_for (as the filter burnin_verdict does), a node
    stage's pod by pod by node_stage.judge_node_stage ."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_stage import judge_node_stage
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import facts_of, verdict_for

    output = (pod_logs or {}).get("results") or []
    pods = pod_logs["pods"] if "pods" in (pod_logs or {}) else (waited or {}).get("pods") or []
    if scope_of(stage) == "fleet":
        facts = facts_of(result, settings["nodes"], settings["mnnvl"])
        job = {"outcome": result.get("outcome") or None, "reason": result.get("reason") or None, "pods": pods}
        judging = {
            "collective": result.get("collective") or None,
            "overrides": settings["thresholds"] or None,
            "on_missing": settings["on_missing"],
            "workload": result.get("workload") or None,
            "results": result.get("results") or None,
            "sibling_percent": (plan_stage.get("judging") or {}).get("sibling_percent"),
        }
        return verdict_for(output, facts, job, judging)
    # A node stage's own plan says its shape (instance type, GPUs per node).
    facts = facts_of(dict(result, instance_type=plan_stage.get("instance_type"), gpus_per_node=plan_stage.get("gpus_per_node")))
    job = {"outcome": result.get("outcome") or None, "reason": result.get("reason") or None, "pods": pods}
    # The workload's rendered verdict parameters (sibling_percent) ride with the stage's own.
    judging = dict(
        plan_stage.get("judging") or {},
        stage=stage,
        workload=plan_stage.get("workload"),
        collective=plan_stage.get("collective") or None,
        results=plan_stage.get("parser") or "nccl-tests",
        overrides=settings["thresholds"] or None,
        on_missing=settings["on_missing"],
    )
    return judge_node_stage(output, facts, job, judging)


class _Steps(object):
    """The steps of the stage with their seconds (the action shows them at -v)."""

    def __init__(self, clock):
        self.clock = clock
        self.done = []

    def timed(self, name, call, *args, **kwargs):
        start = self.clock()
        try:
            return call(*args, **kwargs)
        finally:
            self.done.append({"name": name, "seconds": round(self.clock() - start, 3)})


def mnnvl_not_ready(stage, result, settings):
    """cluster/mnnvl.py readiness() of the cluster's nodes when STAGE's job enables MNNVL on GB200/GB300 and some GPU
    node's NVLink fabric is not registered, else None (the job runs)."""
    if runs_on_every_node(stage) or not settings.get("mnnvl") or not settings.get("cluster_nodes"):
        return None
    if (result or {}).get("gpu_architecture") not in mnnvl.MNNVL_GPUS:
        return None
    ready = mnnvl.readiness(settings["cluster_nodes"])
    return ready if ready["not_ready"] else None


def run_attempt(cluster, stage, attempt, result, plan_attempt, judge, settings, steps):
    """One attempt: (the result after it, the verdict or None, one line for a person)."""
    label = "%s attempt %d" % (stage, attempt)
    plan = steps.timed("plan (%s)" % label, plan_attempt, stage, attempt, result)
    plan_stage = plan["stage"]
    trainjob = plan_stage["trainjob"]
    result = _merged(result, plan["record"])

    not_ready = mnnvl_not_ready(stage, result, settings)
    if not_ready:
        # Reported instead of a job that would fall back to the network or hang (cluster/mnnvl.py).
        verdict = mnnvl.readiness_verdict(not_ready, stage, plan_stage.get("workload"))
        judged = judged_record(result, verdict)
        result = _merged(result, judged["record"])
        result = _merged(result, recorded_attempt(result, stage, trainjob, verdict, outcome="NotRun"))
        return result, verdict, judged["line"], {}
    objects, missing = to_apply(plan, result, settings)
    check_mode = bool(settings["check_mode"])
    applied = steps.timed("apply (%s)" % label, cluster.apply, objects, check_mode=check_mode, diff=bool(settings["diff"]) or check_mode)
    result = _merged(
        result,
        applied_record(
            apply_results(applied), objects, settings["namespace"], missing, check_mode, bool(settings["wait"]), plan_stage["objects"], previous=result
        ),
    )
    line = "%s: %s stage, attempt %d: %s" % (settings["cluster"] or result.get("cluster"), stage, attempt, result.get("reason") or result.get("outcome"))
    if check_mode:
        return result, None, line, applied

    waited = None
    if settings["wait"]:
        if settings["progress"] is not None:
            settings["progress"](
                "%s: %s stage, attempt %d: applied, waiting for TrainJob %s" % (settings["cluster"] or result.get("cluster"), stage, attempt, trainjob)
            )
        waited = steps.timed("wait (%s)" % label, cluster.wait, [trainjob], int(settings["timeout"]))[trainjob]
        result = _merged(
            result, {"stage": "wait", "outcome": waited.get("outcome"), "reason": waited.get("reason"), "conditions": waited.get("conditions") or []}
        )
        if waited.get("outcome") in NOT_READ:
            failed = ClusterCallFailed(
                "waiting for TrainJob %s" % trainjob, waited.get("error") or {"category": waited.get("outcome"), "message": waited.get("reason") or ""}
            )
            failed.partial = {"record": result, "steps": steps.done}
            raise failed
        line = "%s: %s stage, attempt %d: %s - %s" % (
            settings["cluster"] or result.get("cluster"),
            stage,
            attempt,
            result["outcome"],
            result.get("reason") or "",
        )
    if not settings["collect_logs"]:
        return result, None, line, applied

    # What the wait read of pods their controllers removed since, and what the log cap cut there; its outcome says
    # whether its last look at the pods stands (a job that ended makes no more).
    early = dict((key, (waited or {}).get(key) or default) for key, default in (("pods", []), ("logs", {}), ("logs_cut", {}), ("logs_final", [])))
    early["outcome"] = (waited or {}).get("outcome")
    pod_logs = steps.timed("logs (%s)" % label, cluster.logs, trainjob, early, whole_logs_of=plan_stage["whole_logs_of"])
    if settings["write_logs"] is not None:
        steps.timed("write logs (%s)" % label, settings["write_logs"], plan_stage.get("log_subdir") or "", pod_logs.get("results") or [])
    result = _merged(result, {"logs": pod_logs.get("summary")})
    if not settings["wait"]:
        return result, None, line, applied

    start = steps.clock()
    verdict = judge(stage, plan_stage, result, pod_logs, waited, settings)
    # What each node ran in this stage (images pulled, NCCL env; a node stage's NCCL and net plugin from its own
    # pod's log), compared across the SKU's nodes by the report's drift check (judging/drift.py).
    pods = pod_logs["pods"] if "pods" in (pod_logs or {}) else (waited or {}).get("pods") or []
    runtime = dict(result.get("node_runtime") or {})
    runtime[stage] = drift.stage_runtime(
        pods, (pod_logs or {}).get("results") or [], read_logs=runs_on_every_node(stage), rendered=drift.rendered_env(plan.get("objects"))
    )
    result = _merged(result, {"node_runtime": runtime})
    if scope_of(stage) == "fleet":
        judged = judged_record(result, verdict)
        result = _merged(result, judged["record"])
        result = _merged(result, recorded_attempt(result, stage, trainjob, verdict))
        line = judged["line"]
    else:
        result = _merged(result, recorded_attempt(result, stage, trainjob, verdict, note=plan_stage.get("note") or ""))
        line = "%s: %s stage, attempt %d: %s - %s" % (settings["cluster"] or result.get("cluster"), stage, attempt, verdict["verdict"], verdict.get("reason"))
    steps.done.append({"name": "verdict (%s)" % label, "seconds": round(steps.clock() - start, 3)})
    return result, verdict, line, applied


def run_stage(cluster, stage, result, plan_attempt, judge=None, settings=None, clock=None):
    """Run STAGE's attempts on CLUSTER (the protocol of module_utils/cluster/trainjobs.py; its logs() takes
    ``whole_logs_of``). PLAN_ATTEMPT(stage, attempt, result) -> rendering/role_plan.role_plan()'s output; JUDGE(stage,
    plan_stage, result, pod_logs, waited, settings) -> a verdict (judge_attempt when None); SETTINGS: DEFAULT_SETTINGS'
    keys. Returns {record (the cluster's result after the stage), stop (whether the later stages are skipped: stages.stop_after),
    msg (one line for a person), lines (one per attempt), steps [{name, seconds}], changed, applied (the last
    apply's kubernetes.core result), applies (every attempt's)}. The cluster's exceptions propagate, with ``partial`` set on them."""
    if stage not in stages.JOB_STAGES:
        raise ConfigError("stage", "must be a stage that runs a TrainJob, one of %s, got %r" % (", ".join(stages.JOB_STAGES), stage))
    unknown = sorted(set(settings or {}) - set(DEFAULT_SETTINGS))
    if unknown:
        raise ConfigError("settings", "unknown setting(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(sorted(DEFAULT_SETTINGS))))
    settings = dict(DEFAULT_SETTINGS, **(settings or {}))
    repeats = stages.check_repeats("repeats", settings["repeats"])
    judge = judge or judge_attempt
    steps = _Steps(clock or time.monotonic)
    result = dict(result or {})
    lines, verdict, changed, applied, applies = [], None, False, {}, []
    # Attempt N runs when it is the stage's next one (stages.next_attempt), N from 1 to repeats + 1.
    for attempt in range(1, repeats + 2):
        if stages.next_attempt(result, stage, repeats) != attempt:
            continue
        try:
            result, verdict, line, applied = run_attempt(cluster, stage, attempt, result, plan_attempt, judge, settings, steps)
        except Exception as exc:
            partial = getattr(exc, "partial", None) or {"record": result, "steps": steps.done}
            partial["lines"] = lines
            exc.partial = partial
            raise
        changed = changed or bool(applied.get("changed"))
        applies.append(applied)
        lines.append(line)
        if settings["progress"] is not None:
            settings["progress"](line)
    stop = bool(verdict) and stages.stop_after(verdict.get("verdict"))
    msg = lines[-1] if lines else "%s stage: no attempt ran" % stage
    if len(lines) > 1:
        msg += " (attempts: %s)" % ", ".join(attempt.get("verdict") or "" for attempt in stages.attempts_of(result, stage))
    return {"record": result, "stop": stop, "msg": msg, "lines": lines, "steps": steps.done, "changed": changed, "applied": applied, "applies": applies}


def stopped_by(result):
    """The earlier stage of RESULT whose verdict stops the later ones (stages.stop_after: an error), or ""."""
    for attempt in (result or {}).get("stages") or []:
        if stages.stop_after(attempt.get("verdict")):
            return attempt.get("stage") or "an earlier"
    return ""


def in_order(stage, order, result, run, cluster=""):
    """STAGE of the cluster's stages ORDER (burnin_stages) on RESULT: RUN() -> run_stage()'s output, unless an earlier
    stage ended in error (its jobs would wait for the same GPUs). After the last stage the result's reason names the
    failed stages other than the fleet stage (cluster_result.final_record). Returns run_stage()'s keys."""
    stopper = stopped_by(result)
    if stopper:
        line = "%s: %s stage: skipped, the %s stage ended in error" % (cluster or result.get("cluster"), stage, stopper)
        out = {"record": dict(result), "stop": True, "msg": line, "lines": [line], "steps": [], "changed": False, "applied": {}}
    else:
        out = run()
    if list(order or [])[-1:] == [stage]:
        out["record"] = _merged(out["record"], final_record(out["record"]))
    return out


__all__ = ["DEFAULT_SETTINGS", "in_order", "judge_attempt", "run_attempt", "run_stage", "stopped_by", "to_apply"]
