# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""One stage of one cluster's burn-in over a ``Cluster`` (plugin_utils/cluster.py): a TrainJob stage's attempts
(module_utils/burnin/stage_run.py), the isolation (module_utils/burnin/isolation_stage.py) or a sweep's pairs. What
gpufleet.burnin.burnin_stage runs for one cluster and gpufleet.burnin.burnin_batch for every cluster of a batch at
once, in a thread each: every exception of the cluster ends as a failed result, never as an exception."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import isolation_stage, remediation_run, stages
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import recorded_attempt
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import role_plan
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.stage_run import in_order, run_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import write_logs
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import safe_join
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import TRAINER_API
from ansible_collections.gpufleet.burnin.plugins.module_utils.stage_table import scope_of
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster, shown_diffs
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster_detection import detect
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import ModuleExit
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.node_remediation import remediate_nodes

# The role's variables a stage reads (roles/burnin/defaults/main.yml gives them all).
USED = (
    "burnin_repeats",
    "burnin_wait",
    "burnin_collect_logs",
    "burnin_create_namespace",
    "burnin_timeout",
    "burnin_nodes",
    "burnin_enable_mnnvl",
    "burnin_thresholds",
    "burnin_threshold_on_missing",
    "burnin_poll_interval",
    "burnin_unreachable_grace",
    "burnin_log_tail_lines",
    "burnin_log_max_bytes",
    "burnin_field_manager",
    "burnin_force_conflicts",
    "burnin_isolation_max_jobs",
    "burnin_isolation_max_minutes",
)


# The batch's first step of every cluster (gpufleet.burnin.burnin_batch), before its stages.
DETECT = "detect"


def detect_cluster(auth, name, args, progress=None):
    """The first contact with one cluster of a batch: cluster_detection.detect with the host's checked variables
    (burnin_platform, burnin_gpu_architecture, burnin_check_nodes; the namespace looked up with
    burnin_create_namespace). ARGS: burnin_stage's options (variables, namespace, result, host). Returns {record (the
    result with what detection recorded), cluster (detect's answer, the stages' ``cluster`` option), lines, steps} or,
    when the cluster cannot be read or its nodes contradict its group, {failed, record, msg, error, lines, steps}."""
    variables = args["variables"] or {}
    found = detect(
        auth,
        name,
        variables.get("burnin_platform") or "",
        variables.get("burnin_gpu_architecture") or "",
        check_nodes=bool(variables.get("burnin_check_nodes", True)),
        namespace=args["namespace"] if variables.get("burnin_create_namespace", True) else "",
    )
    host = args["host"] or args["result"].get("cluster") or ""
    if found.get("failed"):
        return {"failed": True, "record": args["result"], "steps": [], "lines": [], "error": None, "msg": found.get("msg")}
    record = dict(args["result"], **found["recorded"])
    if found["outcome"] != "Detected":
        return {"failed": True, "record": record, "steps": [], "lines": [], "error": found.get("error"), "msg": "%s: %s" % (found["outcome"], found["reason"])}
    if progress is not None:
        progress(
            "%s: read: Kubernetes %s, %s/%s, %s GPU node(s)"
            % (
                host,
                found.get("kubernetes_version") or "?",
                record.get("platform"),
                record.get("gpu_architecture"),
                (record.get("detected") or {}).get("gpu_nodes"),
            )
        )
    return {"record": record, "cluster": found, "steps": [], "lines": []}


# The batch's last step of a cluster whose stages all ran, when its variables ask for it (remediation_run.asked).
REMEDIATE = "remediate"


def remediate_cluster(auth, name, args, diff=False):
    """Label, taint, cordon or mark one cluster's nodes by its stages' verdicts, as gpufleet.burnin.burnin_remediate
    does (module_utils/burnin/remediation_run.py), with kubernetes.core's authentication options AUTH. ARGS:
    burnin_stage's options (variables, run_id, result, host). Returns {record (with its remediation), changed, lines,
    steps, diff} or {failed, record, changes, msg, error, lines, steps}."""
    record = args["result"]
    host = args["host"] or record.get("cluster") or ""
    out = remediate_nodes(auth, name, remediation_run.role_args(args["variables"] or {}, args["run_id"], record))
    if out.get("failed"):
        return dict({"record": record, "steps": [], "lines": [], "error": None}, **out)
    result = {"record": dict(record, remediation=out["remediation"]), "changed": out["changed"], "lines": ["%s: %s" % (host, out["msg"])], "steps": []}
    if diff and out.get("diffs"):
        result["diff"] = out["diffs"]
    return result


def checked_variables(given):
    """The role's variables, checked; every one of USED is needed."""
    variables = check_role_vars(given)
    missing = [name for name in USED if name not in variables]
    if missing:
        raise ConfigError("variables", "missing %s (the role passes all its burnin_* variables)" % ", ".join(missing))
    return variables


def run_cluster_stage(auth, name, args, check_mode=False, diff=False, progress=None, cancel=None):
    """STAGE ``args['stage']`` of one cluster, with kubernetes.core's authentication options AUTH, for the action NAME.
    ARGS: burnin_stage's options (stage, result, variables, run_id, namespace, cluster, host). PROGRESS(line), when
    given, hears each attempt as it is applied and judged; CANCEL (a threading.Event) set ends the waits and the later
    attempts. Returns the action's result: {changed, record, stop, msg, lines, steps, rounds, diff} or, on a failure,
    {failed, record (the result so far), steps, lines, error (classified, or None), msg}."""
    try:
        variables = checked_variables(args["variables"])
    except BurninError as exc:
        return {"failed": True, "record": args["result"], "steps": [], "lines": [], "error": None, "msg": "%s: %s" % (name, exc)}
    host = args["host"] or args["result"].get("cluster") or ""
    report_dir = variables.get("burnin_report_dir") or ""
    options = dict(
        poll_interval=max(int(variables["burnin_poll_interval"]), 1),
        unreachable_grace=int(variables["burnin_unreachable_grace"]),
        tail_lines=int(variables["burnin_log_tail_lines"]),
        max_bytes=int(variables["burnin_log_max_bytes"]),
        field_manager=variables["burnin_field_manager"],
        force_conflicts=bool(variables["burnin_force_conflicts"]),
        cancel=cancel,
    )

    def plan_attempt(stage, attempt, record):
        return role_plan(variables, record["platform"], record["gpu_architecture"], args["run_id"], args["namespace"], args["cluster"], stage, attempt)

    # Detection read the run's namespace just now: when it was missing (and no earlier stage created it), the first apply
    # reads neither the namespace nor its objects again.
    missing = args["cluster"].get("namespace_exists", True) is False and not args["result"].get("namespace_created")
    absent_namespace = args["namespace"] if missing else None

    def connect(namespace, api_version):
        return Cluster(auth, name, namespace, api_version=api_version, absent_namespace=absent_namespace, **options).connect("TrainJob", api_version)

    def written(subdir, results):
        # The logs under the report directory (a node stage's in <stage>/); the host is one plain directory name there.
        return write_logs(safe_join(report_dir, [args["run_id"], host, subdir]), results)[0]

    settings = {
        "repeats": variables["burnin_repeats"],
        "check_mode": bool(check_mode),
        "diff": bool(diff),
        "wait": bool(variables["burnin_wait"]),
        "collect_logs": bool(variables["burnin_collect_logs"]),
        "create_namespace": bool(variables["burnin_create_namespace"]),
        "namespace_exists": bool(args["cluster"].get("namespace_exists")),
        "namespace": args["namespace"],
        "timeout": int(variables["burnin_timeout"]),
        "nodes": int(variables["burnin_nodes"]),
        "mnnvl": bool(variables["burnin_enable_mnnvl"]),
        "cluster_nodes": args["cluster"].get("nodes") or None,
        "thresholds": variables["burnin_thresholds"],
        "on_missing": variables["burnin_threshold_on_missing"],
        "cluster": host,
        "write_logs": written if report_dir else None,
        "progress": progress,
    }

    def run():
        if scope_of(args["stage"]) == "pairs":
            return _isolation(args, variables, settings, plan_attempt, connect, host)
        return run_stage(connect(args["namespace"], TRAINER_API), args["stage"], args["result"], plan_attempt, settings=settings)

    order = list(variables.get("burnin_stages") or [args["stage"]])
    if scope_of(args["stage"]) == "pairs" and variables.get("burnin_sweep_nodes"):
        # The sweep's pairs come after its node stages (roles/burnin/tasks/sweep.yml).
        order.append(args["stage"])
    try:
        out = in_order(args["stage"], order, args["result"], run, cluster=host)
    except ModuleExit as exc:
        return {"failed": True, "record": args["result"], "steps": [], "lines": [], "error": None, "msg": exc.result.get("msg")}
    except (ClusterCallFailed, BurninError, IOError, OSError) as exc:
        partial = getattr(exc, "partial", {})
        return {
            "failed": True,
            "record": partial.get("record") or args["result"],
            "steps": partial.get("steps") or [],
            "lines": partial.get("lines") or [],
            "error": getattr(exc, "error", None),
            # A cluster call says what it was doing; a bad value names the action.
            "msg": str(exc) if isinstance(exc, ClusterCallFailed) else "%s: %s" % (name, exc),
        }
    result = dict((key, out[key]) for key in ("changed", "record", "stop", "msg", "lines", "steps", "rounds") if key in out)
    if diff:
        # Every attempt's objects, each diff headed by its kind/name, as k8s_apply shows them.
        diffs = [shown for applied in out.get("applies") or [] for shown in shown_diffs(applied).get("diff", [])]
        if diffs:
            result["diff"] = diffs
    return result


def _judging(settings):
    return {"overrides": settings["thresholds"] or None, "on_missing": settings["on_missing"], "mnnvl": settings["mnnvl"]}


def _budget(variables, settings):
    return {
        "max_jobs": int(variables["burnin_isolation_max_jobs"]),
        "max_minutes": int(variables["burnin_isolation_max_minutes"]),
        "timeout": settings["timeout"],
    }


def _told(settings, host):
    """PROGRESS(line) for HOST's lines (the fleet driver's), or None when nobody listens."""
    progress = settings["progress"]
    return None if progress is None else lambda line: progress("%s: %s" % (host, line))


def _stopped(record, exc, what, host):
    """The record and result of an isolation or pairs stage that stopped on EXC (never a failed task)."""
    failed = isolation_stage.failed_record(exc.result.get("msg") if isinstance(exc, ModuleExit) else exc)
    merged = dict(record, **failed)
    line = "%s: %s stopped: %s" % (host, what, failed["isolation"]["reason"])
    return merged, {"changed": bool(failed["isolation"]["rounds"]), "record": merged, "stop": False, "msg": line, "lines": [line], "steps": []}


def _not_run(record, line):
    return {"changed": False, "record": record, "stop": False, "msg": line, "lines": [line], "steps": []}


def _isolation(args, variables, settings, plan_attempt, connect, host):
    """The isolation stage: after the fleet stage's verdict, when it failed or warned on more than one node. A failed
    isolation is recorded in the result and never fails the task: it does not change the run's own verdict."""
    record = args["result"]
    if variables.get("burnin_sweep_nodes"):
        return _sweep_pairs(args, variables, settings, connect, host)
    why_not = isolation_stage.needed(record, settings)
    if why_not:
        return _not_run(record, "%s: isolation stage: not run (%s)" % (host, why_not))
    # The fleet stage's last attempt, planned again (planning is pure): the pairs are its TrainJob pinned to two nodes.
    attempt = max(len(stages.attempts_of(record, "fleet")), 1)
    try:
        objects = plan_attempt("fleet", attempt, record)["objects"]
        out = isolation_stage.isolate(connect, record, objects, judging=_judging(settings), budget=_budget(variables, settings), progress=_told(settings, host))
    except (ModuleExit, ClusterCallFailed, BurninError) as exc:
        return _stopped(record, exc, "isolation", host)[1]
    merged = dict(record, **out["record"]) if out["record"] else record
    line = "%s: %s" % (host, out["msg"])
    return {"changed": out["changed"], "record": merged, "stop": False, "msg": line, "lines": [line], "steps": [], "rounds": out["rounds"]}


def _sweep_pairs(args, variables, settings, connect, host):
    """The sweep's pairs over its picked nodes (burnin_sweep_nodes), when two or more were picked: the fleet stage
    planned for 2 nodes (pinned to the picked nodes by the plan), in the isolation's pairs. A pair stage that stops
    on a cluster error is the stage's error."""
    record = args["result"]
    nodes = variables["burnin_sweep_nodes"]
    why_not = isolation_stage.sweep_pairs_needed(nodes, settings)
    if why_not:
        return _not_run(record, "%s: pairs: not run (%s)" % (host, why_not))
    try:
        planned = role_plan(
            dict(variables, burnin_nodes=2), record["platform"], record["gpu_architecture"], args["run_id"], args["namespace"], args["cluster"], "fleet"
        )
        out = isolation_stage.sweep_pairs(
            connect,
            record,
            planned,
            nodes,
            judging=_judging(settings),
            budget=_budget(variables, settings),
            check_mode=settings["check_mode"],
            progress=_told(settings, host),
        )
    except (ModuleExit, ClusterCallFailed, BurninError) as exc:
        merged, stopped = _stopped(record, exc, "pairs", host)
        verdict = {"verdict": "error", "reason": "the pairs stopped: %s" % merged["isolation"]["reason"]}
        merged.update(recorded_attempt(merged, "isolation", "", verdict, outcome="Error"))
        return dict(stopped, record=merged)
    merged = dict(record, **out["record"]) if out.get("record") else record
    line = "%s: pairs of %s: %s" % (host, ", ".join(sorted(nodes)), out["msg"])
    return {"changed": out["changed"], "record": merged, "stop": False, "msg": line, "lines": [line], "steps": [], "rounds": out["rounds"]}


__all__ = ["DETECT", "REMEDIATE", "USED", "checked_variables", "detect_cluster", "remediate_cluster", "run_cluster_stage"]
