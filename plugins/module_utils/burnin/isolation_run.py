# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The isolation's rounds on one cluster: what judging/isolation.py plans, run as pair TrainJobs.

Each pair is the fleet stage's planned TrainJob again (same runtime, command and thresholds) with 2 nodes, its own
name and a runtime patch that pins the ``node`` replicated job to its two nodes (node affinity on
``kubernetes.io/hostname``; Trainer 2.3's TrainJob accepts ``affinity`` in ``runtimePatches``, its CRD under
tests/fleet's cached manifests). A round's pairs are applied together, waited for together, their logs read and
judged, then deleted: a pair that timed out still holds its nodes' GPUs, which the next round needs. They carry the
run's labels, so the cleanup entry point (cluster/cleanup.py) removes any an interrupted play left.

The cluster is the caller's (plugins/action/burnin_isolate.py gives plugins/plugin_utils/cluster.py's): the protocol
of module_utils/cluster/trainjobs.py, whose apply, logs and delete raise on a failure the isolation cannot go on
after; a wait whose cluster could not be read ends the isolation the same way.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed, unread
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation

HOSTNAME_LABEL = "kubernetes.io/hostname"
PATCH_MANAGER = "gpufleet.burnin/isolation"
ROUND_LABEL = "gpufleet.burnin/isolation-round"
NODE_JOB = "node"
# Room left of a TrainJob's 63 characters for what JobSet appends ("-launcher-0-0" and the pod's suffix).
NAME_MAX = 47


def pair_name(base, round_number, index):
    """<base>-iso-<round>-<index>, the base shortened (with a hash, to stay unique) when it would be too long."""
    suffix = "-iso-%d-%d" % (round_number, index)
    if len(base) + len(suffix) <= NAME_MAX:
        return base + suffix
    digest = hashlib.sha256(base.encode("utf-8")).hexdigest()[:6]
    return "%s-%s%s" % (base[: NAME_MAX - len(suffix) - 7].rstrip("-"), digest, suffix)


def _node_pod_spec(runtime):
    for job in (((runtime or {}).get("spec") or {}).get("template") or {}).get("spec", {}).get("replicatedJobs") or []:
        if job.get("name") == NODE_JOB:
            return ((job.get("template") or {}).get("spec") or {}).get("template", {}).get("spec") or {}
    return {}


def pinned_affinity(pair, runtime=None):
    """The node affinity that keeps the node job on PAIR: the hostname requirement added to each of the runtime's
    own required terms (nodeSelectorTerms is an atomic list: a patch replaces it, so the runtime's terms are kept in)."""
    required = {"key": HOSTNAME_LABEL, "operator": "In", "values": sorted(pair)}
    affinity = copy.deepcopy(_node_pod_spec(runtime).get("affinity") or {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    selector = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = [dict(term) for term in selector.get("nodeSelectorTerms") or []] or [{}]
    for term in terms:
        term["matchExpressions"] = [expr for expr in term.get("matchExpressions") or [] if expr.get("key") != HOSTNAME_LABEL] + [required]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = dict(selector, nodeSelectorTerms=terms)
    return affinity


def pair_trainjob(trainjob, pair, round_number, index, runtime=None):
    """The pair's TrainJob: TRAINJOB (the fleet stage's planned one) on 2 nodes, named pair_name(), pinned to PAIR."""
    if not isinstance(trainjob, dict) or trainjob.get("kind") != "TrainJob" or not (trainjob.get("metadata") or {}).get("name"):
        raise ConfigError("trainjob", "must be the planned TrainJob (kind TrainJob with a metadata.name)")
    metadata = trainjob["metadata"]
    job = {
        "apiVersion": trainjob["apiVersion"],
        "kind": "TrainJob",
        "metadata": {
            "name": pair_name(metadata["name"], round_number, index),
            "namespace": metadata.get("namespace"),
            "labels": dict(metadata.get("labels") or {}, **{ROUND_LABEL: str(round_number)}),
        },
        "spec": copy.deepcopy(trainjob.get("spec") or {}),
    }
    if metadata.get("annotations"):
        job["metadata"]["annotations"] = dict(metadata["annotations"])
    spec = job["spec"]
    spec["trainer"] = dict(spec.get("trainer") or {}, numNodes=2)
    patch = {
        "manager": PATCH_MANAGER,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {"replicatedJobs": [{"name": NODE_JOB, "template": {"spec": {"template": {"spec": {"affinity": pinned_affinity(pair, runtime)}}}}}]}
            }
        },
    }
    spec["runtimePatches"] = [item for item in spec.get("runtimePatches") or [] if item.get("manager") != PATCH_MANAGER] + [patch]
    return job


def worker_nodes(pods):
    """The nodes the pods of the node job ran on."""
    nodes = set()
    for pod in pods or []:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if labels.get("jobset.sigs.k8s.io/replicatedjob-name") == NODE_JOB and (pod.get("spec") or {}).get("nodeName"):
            nodes.add(pod["spec"]["nodeName"])
    return sorted(nodes)


def pair_result(pair, name, round_number, waited, verdict):
    """One pair's result for the planner and the report: nodes, trainjob, round, verdict (pass, warn, fail or error),
    busbw and size (the peak and its message size), reason, outcome (the TrainJob's)."""
    metrics = (verdict or {}).get("metrics") or {}
    result = {
        "round": round_number,
        "nodes": list(pair),
        "trainjob": name,
        "outcome": waited.get("outcome"),
        "verdict": (verdict or {}).get("verdict") or "error",
        "reason": (verdict or {}).get("reason") or waited.get("reason") or "",
        "busbw": metrics.get("peak_busbw"),
        "size": metrics.get("largest_size"),
    }
    ran_on = worker_nodes(waited.get("pods"))
    strays = sorted(set(ran_on) - set(pair))
    if strays:
        # The pin did not hold: the result says nothing about this pair.
        result.update(verdict="error", reason="its pods ran on %s, not only on %s: the result is not the pair's" % (", ".join(ran_on), " and ".join(pair)))
    return result


def run_isolation(cluster, trainjob, nodes, judge, known_good=(), runtime=None, max_jobs=8, max_minutes=30, round_timeout=3600, check_mode=False, clock=None):
    """Run rounds until the planner concludes. JUDGE(logs, waited) -> a verdict (judging/verdict.py's) of one pair.

    Returns {rounds: [{round, pairs, trainjobs, results}], results, conclusion, findings, minutes}. In check mode only
    the first round is planned (rounds[0].planned true) and nothing is applied; the conclusion is None.
    Exceptions of the cluster's calls propagate, with ``partial`` (what was found so far) set on them.
    """
    clock = clock or time.monotonic
    start = clock()
    results, rounds = [], []
    max_seconds = None if max_minutes is None else max_minutes * 60
    while True:
        elapsed = clock() - start
        step = isolation.next_step(nodes, results, known_good=known_good, max_jobs=max_jobs, max_minutes=max_minutes, elapsed_minutes=elapsed / 60.0)
        if step["state"] == "done":
            conclusion = step["conclusion"]
            break
        number = len(rounds) + 1
        jobs = [pair_trainjob(trainjob, pair, number, index, runtime) for index, pair in enumerate(step["pairs"])]
        names = [job["metadata"]["name"] for job in jobs]
        entry = {"round": number, "pairs": step["pairs"], "trainjobs": names, "results": []}
        rounds.append(entry)
        if check_mode:
            entry["planned"] = True
            return {"rounds": rounds, "results": [], "conclusion": None, "findings": [], "minutes": 0.0, "objects": jobs, "nodes": list(nodes)}
        try:
            cluster.apply(jobs)
            timeout = round_timeout if max_seconds is None else max(1, min(round_timeout, int(max_seconds - (clock() - start))))
            waited = cluster.wait(names, timeout)
            if unread(waited):
                raise ClusterCallFailed("waiting for the pair TrainJobs", unread(waited)[1].get("error") or {"category": "Error", "message": "no answer"})
            for pair, name in zip(step["pairs"], names):
                logs = cluster.logs(name, waited[name])
                result = pair_result(pair, name, number, dict(waited[name], pods=logs.get("pods") or waited[name].get("pods")), judge(logs, waited[name]))
                entry["results"].append(result)
                results.append(result)
            cluster.delete(names)
        except Exception as exc:
            exc.partial = {"rounds": rounds, "results": results, "minutes": round((clock() - start) / 60.0, 2)}
            raise
    return {
        "nodes": list(nodes),
        "rounds": rounds,
        "results": results,
        "conclusion": conclusion,
        "findings": isolation.findings(conclusion, results),
        "minutes": round((clock() - start) / 60.0, 2),
    }


def known_good_nodes(result, nodes):
    """The partners the isolation may trust from the cluster's RESULT: nodes outside the run's NODES whose node
    verdict (node_findings.py's node_verdicts) is pass. A node of the run is tested even when its own single-node
    stage passed: that proves its GPUs, not its network (a slow NIC passes it)."""
    verdicts = (result or {}).get("node_verdicts") or {}
    return sorted(node for node, entry in verdicts.items() if entry.get("verdict") == "pass" and node not in set(nodes))


def run_nodes(result):
    """The nodes of the fleet stage's run: those its verdict attributed pods to (the launcher's excluded)."""
    verdict = (result or {}).get("verdict") or {}
    return sorted(set(verdict.get("nodes") or []))
