# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The isolation of a cluster's burn-in: after the fleet stage failed or warned, pair TrainJobs find the nodes that made
it so (module_utils/burnin/isolation_run.py runs the rounds, judging/isolation.py plans them), each pair judged by
judging/verdict.py against the fleet stage's thresholds for 2 nodes. gpufleet.burnin.burnin_isolate and the
isolation stage of gpufleet.burnin.burnin_stage both call isolate()."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import isolation_run
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import isolation_record, recorded_attempt
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import VERDICTS

STAGE = isolation.STAGE

# What the judging of a pair takes (the role's burnin_thresholds, burnin_threshold_on_missing, burnin_enable_mnnvl).
DEFAULT_JUDGING = {"overrides": None, "on_missing": "warn", "mnnvl": False}
# The isolation's budget (burnin_isolation_max_jobs, burnin_isolation_max_minutes, burnin_timeout per round).
DEFAULT_BUDGET = {"max_jobs": 8, "max_minutes": 30, "timeout": 3600}


def pair_judge(result, judging, nodes=2, expected_transport=None, one_nic_of=None):
    """A pair's verdict: judging/verdict.py with the fleet stage's facts (RESULT) and thresholds (JUDGING), for NODES
    nodes (2; a group of the links probe, more); EXPECTED_TRANSPORT (a judging/transport.py id): the transport the
    run was told to use, instead of the platform catalogue's; ONE_NIC_OF: the run may use one of the node's that many
    NICs, so it is held to one NIC's share of the thresholds."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import facts_of, verdict_for

    facts = facts_of(result, nodes, judging["mnnvl"])
    if one_nic_of:
        facts["one_nic_of"] = one_nic_of
    pair_judging = {
        "collective": result.get("collective") or None,
        "overrides": judging["overrides"] or None,
        "on_missing": judging["on_missing"],
        "workload": result.get("workload") or None,
    }

    def judge(logs, waited):
        job = {"outcome": waited.get("outcome"), "reason": waited.get("reason"), "pods": logs.get("pods")}
        return verdict_for(logs.get("results") or [], facts, job, dict(pair_judging, expected_transport=expected_transport))

    return judge


def probe_judge(result, judging):
    """The judge of a finer probe's run (judging/isolation_parts.py) where it differs from a pair's, else None. A
    network-only run (and its control pair's) is without multi-node NVLink (NCCL_MNNVL_ENABLE=0), so it is held to the
    thresholds of a run without MNNVL; an NVLink-only run goes over NCCL's socket net (NCCL_NET=Socket, _lib/nccl/isolation.yaml), which
    is then the transport it must show; a one-NIC run is held to one NIC's share (the probe's ``of``)."""

    def judge_probe(size, probe):
        if probe.get("kind") == "rails":
            return pair_judge(result, judging, size, one_nic_of=probe.get("of"))
        if probe.get("kind") != "paths":
            return None
        if probe.get("path", "network") in ("network", "control"):
            return pair_judge(result, dict(judging, mnnvl=False), size)
        return pair_judge(result, judging, size, expected_transport="socket")

    return judge_probe


def run_transport(result):
    """The transport id (judging/transport.py) the fleet stage's run used, else the one it expected, else None."""
    proof = ((result or {}).get("verdict") or {}).get("transport") or {}
    seen = proof.get("seen")
    return seen if seen not in (None, "unknown", "mixed") else proof.get("expected")


def needed(result, settings):
    """Why the isolation stage does not run for the cluster's RESULT (after the fleet stage), or "" when it runs: only
    after a real run (not check mode, waited, logs read) whose nccl-tests verdict failed or warned on more than one
    node (pairs of another workload prove nothing about the fabric)."""
    verdict = result.get("verdict") or {}
    if settings.get("check_mode"):
        return "check mode runs no job"
    if not (settings.get("wait") and settings.get("collect_logs")):
        return "no verdict to isolate (burnin_wait and burnin_collect_logs are needed)"
    if any(check.get("name") == "mnnvl" for check in verdict.get("checks") or []):
        return "MNNVL was not ready on some nodes: the fleet stage ran no job (cluster/mnnvl.py)"
    if result.get("results") != "nccl-tests":
        return "the fleet stage's workload is not judged by nccl-tests"
    if verdict.get("verdict") not in ("fail", "warn"):
        return "the fleet stage did not fail or warn"
    if len(verdict.get("nodes") or []) <= 1:
        return "the fleet stage ran on one node"
    return ""


def isolate(connect, result, objects, judging=None, budget=None, nodes=None, known_good=None, check_mode=False, ran_together=True, progress=None):
    """Isolate the bad nodes of the fleet stage whose RESULT and planned OBJECTS (its one TrainJob and its runtime) are
    given. CONNECT(namespace, api_version) -> the cluster (plugin_utils/cluster.py), called only when a job runs.
    RAN_TOGETHER: NODES ran together before (the fleet stage); false for the sweep's pairs (sweep_pairs()).
    PROGRESS(line), when given, hears each round as it ends (round_line()).
    Returns {changed, skipped, rounds, nodes, known_good, conclusion, findings, record (to merge into the result), msg}.
    Raises BurninError on bad input; the cluster's errors propagate with ``partial`` (the rounds so far) set."""
    judging = dict(DEFAULT_JUDGING, **(judging or {}))
    budget = dict(DEFAULT_BUDGET, **(budget or {}))
    trainjobs = [obj for obj in objects if obj.get("kind") == "TrainJob"]
    runtimes = [obj for obj in objects if obj.get("kind") in ("TrainingRuntime", "ClusterTrainingRuntime")]
    nodes = list(nodes) if nodes is not None else isolation_run.run_nodes(result)
    known_good = list(known_good) if known_good is not None else isolation_run.known_good_nodes(result, nodes)
    if len(trainjobs) != 1:
        raise BurninError("objects: must hold the fleet stage's one planned TrainJob, found %d" % len(trainjobs))
    trainjob = trainjobs[0]
    if len(nodes) < 2:
        return {"changed": False, "skipped": True, "rounds": [], "msg": "fewer than 2 nodes in the run: nothing to isolate", "record": {}}
    # A conclusion before any job (a run of 2 nodes, no partner) needs no client.
    first = isolation.next_step(nodes, [], known_good=known_good, max_jobs=budget["max_jobs"], max_minutes=budget["max_minutes"], ran_together=ran_together)
    cluster = None
    if not check_mode and first["state"] == "run":
        cluster = connect(trainjob["metadata"].get("namespace"), trainjob["apiVersion"])
    outcome = isolation_run.run_isolation(
        cluster,
        trainjob,
        nodes,
        pair_judge(result, judging),
        known_good=known_good,
        runtime=runtimes[0] if runtimes else None,
        max_jobs=budget["max_jobs"],
        max_minutes=budget["max_minutes"],
        round_timeout=budget["timeout"],
        check_mode=check_mode,
        ran_together=ran_together,
        on_round=None if progress is None else lambda entry: progress(round_line(entry)),
        parts={
            "transport": run_transport(result),
            "judge_for": lambda size: pair_judge(result, judging, size),
            "mnnvl": bool(judging["mnnvl"]),
            "judge_probe": probe_judge(result, judging),
        },
    )
    out = {"rounds": outcome["rounds"], "nodes": nodes, "known_good": known_good, "skipped": False}
    if check_mode and outcome["rounds"]:
        pairs = ", ".join("+".join(pair) for pair in outcome["rounds"][0]["pairs"])
        return dict(out, changed=False, conclusion=None, findings=[], record={}, msg="check mode: would run round 1, %s" % pairs)
    conclusion = outcome["conclusion"]
    return dict(
        out,
        changed=bool(outcome["results"]),
        conclusion=conclusion,
        findings=outcome["findings"],
        record=isolation_record(result, outcome),
        msg="isolation %s: %s%s" % (conclusion["outcome"], conclusion["reason"], "".join("; %s" % part["reason"] for part in outcome.get("parts") or [])),
    )


def sweep_pairs_needed(nodes, settings):
    """Why the sweep runs no pairs on its picked NODES, or "" when it does: two or more nodes, and a verdict to read
    (burnin_wait and burnin_collect_logs; check mode plans the first round)."""
    if len(nodes or []) < 2:
        return "%d node picked: a pair needs two" % len(nodes or [])
    if not settings.get("check_mode") and not (settings.get("wait") and settings.get("collect_logs")):
        return "no verdict to read (burnin_wait and burnin_collect_logs are needed)"
    return ""


# The fleet stage's fields a pair is judged with (pair_judge): a sweep ran no fleet stage, its plan gives them.
_JUDGED_FIELDS = ("workload", "collective", "results", "gpus_per_node", "instance_type")


def sweep_pairs(connect, result, planned, nodes, judging=None, budget=None, check_mode=False, progress=None):
    """The sweep's pairs (docs/sweep.md): the all_reduce of the isolation's pairs over the picked NODES (two or more),
    so that their network is verified too, not only their GPUs. PLANNED: role_plan()'s plan of the fleet stage for 2
    nodes, which burnin/sweep.py pinned() already pinned to NODES under the sweep's PriorityClass; each pair's TrainJob
    is pinned to its two nodes as the isolation's are (isolation_run.pair_trainjob). The rounds are the isolation's,
    with no run before them (ran_together false): every picked node in a pair at once, then a slow pair's node again
    with a node a pair proved good. The runtime is applied first (a sweep runs no fleet stage). RESULT: the cluster's
    result after the node stages. Returns isolate()'s keys; its record also holds the stage ``isolation`` in
    ``stages`` (its verdict the worst pair's, its reason the conclusion's), so the pairs count in the cluster's
    verdict, and a culprit's finding in the node verdicts (a pass for each node a pair proved good)."""
    objects = planned["objects"]
    facts = dict(result, **dict((key, planned["record"][key]) for key in _JUDGED_FIELDS if key in planned["record"]))
    cluster = None
    if not check_mode:
        trainjob = [obj for obj in objects if obj.get("kind") == "TrainJob"][0]
        cluster = connect(trainjob["metadata"].get("namespace"), trainjob["apiVersion"])
        cluster.apply([obj for obj in objects if obj.get("kind") != "TrainJob"])
    out = isolate(
        lambda namespace, api_version: cluster,
        facts,
        objects,
        judging,
        budget,
        nodes=sorted(nodes),
        known_good=[],
        check_mode=check_mode,
        ran_together=False,
        progress=progress,
    )
    if check_mode or out.get("skipped"):
        return out
    pairs = [row for one in out["rounds"] for row in one.get("results") or []]
    worst = max(pairs, key=lambda row: VERDICTS.index(row["verdict"])) if pairs else None
    verdict = {"verdict": worst["verdict"] if worst else "error", "reason": out["conclusion"]["reason"]}
    names = ", ".join(name for one in out["rounds"] for name in one.get("trainjobs") or [])
    after = dict(result, **out["record"])
    out["record"] = dict(out["record"], **recorded_attempt(after, STAGE, names, verdict, outcome=(worst or {}).get("outcome") or "Error"))
    return out


def round_line(entry):
    """One line for a round that ended: its number, and each job's nodes (with its probe), verdict and busbw."""

    def job(result):
        probe = result.get("probe") or {}
        what = "+".join(result.get("nodes") or [])
        shown = [str(probe[key]) for key in ("kind", "path", "nic", "domain") if probe.get(key)]
        busbw = result.get("busbw")
        return "%s%s %s%s" % (what, " (%s)" % " ".join(shown) if shown else "", result.get("verdict"), " %.1f GB/s" % busbw if busbw is not None else "")

    results = entry.get("results") or []
    return "isolation round %d: %d job(s): %s" % (entry["round"], len(results), "; ".join(job(result) for result in results))


def failed_record(exc):
    """What a cluster's result keeps of an isolation that stopped on EXC (it never changes the run's own verdict)."""
    partial = getattr(exc, "partial", None) or {}
    return {"isolation": {"outcome": "error", "reason": str(exc) or "failed", "rounds": partial.get("rounds") or []}}


__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_JUDGING",
    "failed_record",
    "isolate",
    "needed",
    "pair_judge",
    "round_line",
    "run_transport",
    "sweep_pairs",
    "sweep_pairs_needed",
]
