# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The verdict of a node stage: one TrainJob with one pod on every GPU node, each pod judged on its own log.

A node stage (``node``: a single-node all_reduce over all local GPUs, ``dcgm``: a DCGM diagnostic, ``gpu``: a per-GPU test; see
plugins/module_utils/burnin/stages.py) runs a catalogue workload on every GPU node at once. Each pod's output says
how its own node is, so each pod is judged alone: for nccl-tests output by the same grading as the fleet stage
(plugins/module_utils/judging/nccl_judge.py) against the thresholds of one node (``nodes: 1`` records of
_lib/thresholds.yaml, the intra-node NVLink/NVSwitch figures). Each node gets a finding
(plugins/module_utils/judging/node_findings.py) of the stage; the stage's verdict is the worst of its nodes' (and of
the job's own outcome). The parser of a workload's output is named by its catalogue entry (``results``, default
``nccl-tests``); judging/verdict.py KINDS names each one's ``node`` judge, the function judging one pod: (log text,
facts, job (``pods``: the pod with its node, ``pod_logs``: its log), judging (the stage's, with the workload's
rendered ``judging``)) -> a verdict with ``verdict``, ``reason``, ``checks`` (and optionally ``evidence``, added to
the node's finding), or None when the log holds no output of it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.attribution import JOB_OK, _log_items, attribute
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import worst
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import KINDS


def _gb(value):
    return "n/a" if value is None else "%.1f" % value


def _measured(verdict):
    """(busbw, size) of a pod verdict's decisive bandwidth check (peak first), or (None, None)."""
    for name in ("peak", "avg"):
        for check in verdict.get("checks") or []:
            if check.get("name") == name and check.get("value") is not None:
                return check.get("value"), check.get("size")
    metrics = verdict.get("metrics") or {}
    return metrics.get("peak_busbw"), metrics.get("largest_size")


def _bounds(verdict):
    for check in verdict.get("checks") or []:
        if check.get("name") in ("peak", "avg") and check.get("pass") is not None:
            return {"threshold": check.get("threshold"), "pass": check.get("pass"), "warn": check.get("warn")}
    return {}


def _on_node(node, reason, separator):
    """REASON said of NODE: prefixed with the node's name, unless the parser's reason names it first already
    (a DCGM reason reads "node X GPU 5: ...")."""
    return reason if reason.startswith("node %s " % node) else "%s%s%s" % (node, separator, reason)


def _doubled_nodes(judged_pods):
    """{node: [pod, ...]} of the nodes more than one of JUDGED_PODS ran on."""
    by_node = {}
    for entry in judged_pods:
        if entry.get("node"):
            by_node.setdefault(entry["node"], []).append(entry.get("name") or "")
    return dict((node, sorted(pods)) for node, pods in by_node.items() if len(pods) > 1)


def judge_node_stage(output, facts=None, job=None, judging=None):
    """The verdict of one node-stage TrainJob: {stage, workload, collective, verdict, reason, checks (one per node,
    and the job's), node_results (node, pod, verdict, reason, busbw, size, threshold, pass, warn), findings (one per
    node), nodes, succeeded_nodes, failed_nodes, thresholds, metrics, series, errors}.

    ``output``: trainjob_logs' ``results``; ``job``: outcome, reason, pods (trainjob_logs' ``pods``: spec.nodeName
    says where each ran). ``facts``: platform, gpu_architecture, gpus_per_node, instance_type (judged as one node).
    ``judging``: stage (``node`` unless given), workload, collective, results (the parser, ``nccl-tests`` unless
    given), thresholds, overrides, on_missing, and the workload's rendered verdict parameters (``sibling_percent``),
    all given to the parser. A node whose pod failed fails; a node whose pod left no output to judge has no finding
    and makes the stage an ``error``, unless the job failed (then ``fail``)."""
    job, judging = job or {}, judging or {}
    pod_logs, pods, job_outcome, job_reason = output, job.get("pods"), job.get("outcome"), job.get("reason")
    stage, workload, collective = judging.get("stage", "node"), judging.get("workload"), judging.get("collective")
    parser = judging.get("results", "nccl-tests")
    if parser not in KINDS:
        raise ConfigError("parser", "must be one of %s, got %r" % (", ".join(sorted(KINDS)), parser))
    facts = dict(facts or {})
    logs = _log_items(pod_logs or [])
    attribution = attribute(pods or [], pod_logs or [], None, job_outcome)
    judged_pods = [entry for entry in attribution["pods"] if entry["role"] != "launcher"]
    checks, results, findings, chosen = [], [], [], {}
    job_failed = job_outcome is not None and job_outcome not in JOB_OK
    if job_outcome:
        ok = job_outcome in JOB_OK
        checks.append(
            {
                "name": "job",
                "verdict": "pass" if ok else ("fail" if job_outcome == "Failed" else "error"),
                "reason": "TrainJob %s%s" % (job_outcome, (": %s" % job_reason) if job_reason and not ok else ""),
            }
        )
    for entry in sorted(judged_pods, key=lambda item: (item.get("node") or "", item.get("name") or "")):
        node, pod = entry.get("node"), entry.get("name")
        text = (logs.get(pod) or (None, None))[0]
        where = [{"metadata": {"name": pod}, "spec": {"nodeName": node}}] if pod and node else None
        verdict = KINDS[parser]["node"](text, facts, {"pods": where, "pod_logs": {pod: text} if where else None}, judging)
        row = {"node": node, "pod": pod, "busbw": None, "size": None}
        if verdict is not None:
            busbw, size = _measured(verdict)
            row.update(busbw=busbw, size=size, **_bounds(verdict))
            for record in verdict.get("thresholds") or []:
                chosen.setdefault(record["id"], record)
            name = verdict["verdict"]
            reason = verdict["reason"]
        else:
            name, reason = "error", "no %s output in the log of pod %s" % (parser, pod)
        if entry["status"] == "failed":
            name = "fail"
            reason = "pod %s failed: %s%s" % (pod, "; ".join(entry["reasons"]) or "failed", ("; " + reason) if verdict is not None else "")
        elif name == "error" and job_failed:
            name = "fail"
        row.update(verdict=name, reason=reason)
        results.append(row)
        check = {"name": node or pod, "verdict": name, "reason": _on_node(node or pod, reason, ": "), "value": row["busbw"], "size": row["size"]}
        check.update((key, row[key]) for key in ("threshold", "pass", "warn") if key in row)
        checks.append(check)
        if node and name in ("pass", "warn", "fail"):
            # A parser may give evidence of its own (e.g. the failing GPUs of a diagnostic).
            evidence = dict((verdict or {}).get("evidence") or {}, pod=pod)
            if row["busbw"] is not None:
                evidence.update(busbw=float(row["busbw"]), size=row["size"])
            if row.get("pass") is not None:
                evidence.update(threshold=row.get("threshold"), pass_busbw=row["pass"])
            findings.append(finding(node, stage, name, reason, evidence))
    if not judged_pods:
        checks.append({"name": "result", "verdict": "fail" if job_failed else "error", "reason": "no pod of the %s stage ran on a node" % stage})
    doubled = _doubled_nodes(judged_pods)
    if doubled:
        # A pod that ran where another had already finished (anti-affinity counts running pods only) judged a node
        # twice and left another unjudged: the stage cannot say every node passed.
        checks.append(
            {
                "name": "coverage",
                "verdict": "warn",
                "reason": "%d pods judged %d node(s) only: %s"
                % (
                    len(judged_pods),
                    len(set(entry.get("node") for entry in judged_pods)),
                    "; ".join("node %s ran %s" % (node, ", ".join(pods)) for node, pods in sorted(doubled.items())),
                ),
            }
        )
    verdict_name = worst(check["verdict"] for check in checks) if checks else "error"
    bad = [row for row in results if row["verdict"] == verdict_name and verdict_name != "pass"]
    if bad:
        reason = "; ".join(_on_node(row["node"] or row["pod"], row["reason"], " ") for row in bad)
    elif verdict_name == "pass":
        measured = [row["busbw"] for row in results if row["busbw"] is not None]
        reason = "%d node(s) passed%s" % (
            len(set(row["node"] or row["pod"] for row in results)),
            (", busbw %s..%s GB/s" % (_gb(min(measured)), _gb(max(measured)))) if measured else "",
        )
    else:
        reason = "; ".join(check["reason"] for check in checks if check["verdict"] == verdict_name)
    return {
        "stage": stage,
        "workload": workload,
        "collective": collective,
        "verdict": verdict_name,
        "reason": reason,
        "checks": checks,
        "node_results": results,
        "findings": findings,
        "nodes": attribution["nodes"],
        "succeeded_nodes": sorted(row["node"] for row in results if row["node"] and row["verdict"] in ("pass", "warn")),
        "failed_nodes": sorted(row["node"] for row in results if row["node"] and row["verdict"] == "fail"),
        "thresholds": [chosen[key] for key in sorted(chosen)],
        "metrics": {},
        "series": [],
        "errors": [],
        "facts": dict(facts, nodes=1),
    }


__all__ = ["judge_node_stage"]
