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
import shlex
import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed, unread
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation, isolation_parts

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


def with_env(trainer, env):
    """TRAINER (a TrainJob's spec.trainer) whose mpirun line passes ENV ([{name, value}]) to every rank: a ``-x
    NAME=...`` the line has is given the new value, the others are added after mpirun (the ranks get only what mpirun
    forwards: module_utils/rendering/plan.py rank_env_args). A ``bash -c`` line (plan.py wrap_pre_command) is changed in
    its ``exec`` line. A line without mpirun is refused: the variables would reach no rank."""
    if not env:
        return dict(trainer)
    values = dict((item["name"], str(item["value"])) for item in env)

    def rewrite(words):
        at = next((i for i, word in enumerate(words) if word.rsplit("/", 1)[-1] == "mpirun"), None)
        if at is None:
            return None
        words, seen = list(words), set()
        for i in range(at + 1, len(words) - 1):
            if words[i] == "-x" and words[i + 1].split("=", 1)[0] in values:
                name = words[i + 1].split("=", 1)[0]
                words[i + 1] = "%s=%s" % (name, values[name])
                seen.add(name)
        added = [arg for item in env if item["name"] not in seen for arg in ("-x", "%s=%s" % (item["name"], values[item["name"]]))]
        return words[: at + 1] + added + words[at + 1 :]

    command, args = list(trainer.get("command") or []), list(trainer.get("args") or [])
    if command[:2] == ["/bin/bash", "-c"] and len(args) == 1:
        lines = args[0].split("\n")
        words = shlex.split(lines[-1]) if lines[-1].startswith("exec ") else []
        changed = rewrite(words)
        if changed is not None:
            lines[-1] = " ".join(shlex.quote(word) for word in changed)
            return dict(trainer, args=["\n".join(lines)])
    else:
        changed = rewrite(command + args)
        if changed is not None:
            return dict(trainer, command=changed[: len(command)], args=changed[len(command) :])
    raise ConfigError("trainjob", "spec.trainer runs no mpirun: the isolation's NCCL variables would reach no rank")


def pair_trainjob(trainjob, pair, round_number, index, runtime=None, env=None):
    """The pair's TrainJob: TRAINJOB (the fleet stage's planned one) on the nodes of PAIR (two, or a group of the
    links probe), named pair_name(), pinned to them; ENV: NCCL variables of a finer probe (with_env)."""
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
    spec["trainer"] = with_env(dict(spec.get("trainer") or {}, numNodes=len(pair)), env)
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


def _run_round(cluster, jobs, groups, number, judge_for, timeout, transport=None, probes=None):
    """Apply JOBS (round NUMBER, one per node group of GROUPS), wait, read, judge and delete them: their results, each
    with ``opened_nics`` (the NIC names NCCL listed in its log, judging/isolation_parts.py nics_in); the run of an
    NVLink-only probe (PROBES, one per job) with ``nvlink_proof`` (what its log says of staying on NVLink)."""
    names = [job["metadata"]["name"] for job in jobs]
    cluster.apply(jobs)
    waited = cluster.wait(names, timeout)
    if unread(waited):
        raise ClusterCallFailed("waiting for the pair TrainJobs", unread(waited)[1].get("error") or {"category": "Error", "message": "no answer"})
    results = []
    for index, (group, name) in enumerate(zip(groups, names)):
        logs = cluster.logs(name, waited[name])
        judge = judge_for(len(group), probes[index]) if probes else judge_for(len(group))
        result = pair_result(group, name, number, dict(waited[name], pods=logs.get("pods") or waited[name].get("pods")), judge(logs, waited[name]))
        texts = [entry.get("log") for entry in logs.get("results") or [] if isinstance(entry, dict) and isinstance(entry.get("log"), str)]
        nics = isolation_parts.nics_in(texts, transport)
        if nics:
            result["opened_nics"] = nics
            groups, why = isolation_parts.rail_groups_in(texts, transport, nics)
            result["rail_groups"] = {"groups": groups, "why": why}
        if probes and (probes[index] or {}).get("path") == "nvlink":
            result["nvlink_proof"] = isolation_parts.nvlink_proof(texts)
        results.append(result)
    cluster.delete(names)
    return results


def node_labels(cluster, nodes):
    """{node: its labels} of NODES (the topology domains of the links probe), or None when the Nodes cannot be read."""
    find = getattr(cluster, "find", None)
    if find is None:
        return None
    try:
        found = find("Node", "v1")
    except ClusterCallFailed:
        # No list right on nodes (docs/rbac.md: the cluster reader's): the links probe says the labels were not read.
        return None
    wanted = set(nodes)
    return dict(
        (item["metadata"]["name"], dict(item["metadata"].get("labels") or {}))
        for item in found or []
        if isinstance(item, dict) and (item.get("metadata") or {}).get("name") in wanted
    )


def run_isolation(
    cluster,
    trainjob,
    nodes,
    judge,
    known_good=(),
    runtime=None,
    max_jobs=8,
    max_minutes=30,
    round_timeout=3600,
    check_mode=False,
    clock=None,
    parts=None,
    ran_together=True,
    on_round=None,
):
    """Run rounds until the planner concludes. JUDGE(logs, waited) -> a verdict (judging/verdict.py's) of one pair.

    PARTS (None: the node level only): {transport (judging/transport.py's id of the run), judge_for (node count ->
    a JUDGE for a group of that many nodes), mnnvl (the run enabled multi-node NVLink), judge_probe ((node count,
    probe) -> the JUDGE of a finer probe's run when it differs, else None: a paths probe's by its path, a rails probe's
    against one NIC's share)}: once the bad nodes are named, the finer rounds of
    judging/isolation_parts.py run within the same budget (MAX_JOBS and MAX_MINUTES bound all rounds).
    Returns {rounds: [{round, pairs, trainjobs, results}], results, conclusion, findings, minutes, parts, part_results,
    pending}. ON_ROUND(round), when given, hears each round once its results are in (the fleet driver's progress).
    RAN_TOGETHER: as judging/isolation.py next_step's. In check mode only the first round is planned
    (rounds[0].planned true) and nothing is applied; the conclusion is None. Exceptions of the cluster's calls
    propagate, with ``partial`` (what was found so far) set.
    """
    clock = clock or time.monotonic
    start = clock()
    results, rounds, part_results = [], [], []
    max_seconds = None if max_minutes is None else max_minutes * 60
    transport = (parts or {}).get("transport")
    base_judge_for = (parts or {}).get("judge_for") or (lambda size: judge)

    def judge_for(size, probe=None):
        chosen = parts["judge_probe"](size, probe) if probe and (parts or {}).get("judge_probe") else None
        if chosen is not None:
            return chosen
        return judge if size == 2 and not (parts or {}).get("judge_for") else base_judge_for(size)

    def timeout():
        return round_timeout if max_seconds is None else max(1, min(round_timeout, int(max_seconds - (clock() - start))))

    def out_of_time():
        return max_seconds is not None and clock() - start >= max_seconds

    try:
        while True:
            elapsed = clock() - start
            step = isolation.next_step(
                nodes, results, known_good=known_good, max_jobs=max_jobs, max_minutes=max_minutes, elapsed_minutes=elapsed / 60.0, ran_together=ran_together
            )
            if step["state"] == "done":
                conclusion = step["conclusion"]
                break
            number = len(rounds) + 1
            jobs = [pair_trainjob(trainjob, pair, number, index, runtime) for index, pair in enumerate(step["pairs"])]
            entry = {"round": number, "pairs": step["pairs"], "trainjobs": [job["metadata"]["name"] for job in jobs], "results": []}
            rounds.append(entry)
            if check_mode:
                entry["planned"] = True
                return {"rounds": rounds, "results": [], "conclusion": None, "findings": [], "minutes": 0.0, "objects": jobs, "nodes": list(nodes)}
            done = _run_round(cluster, jobs, step["pairs"], number, judge_for, timeout(), transport)
            entry["results"].extend(done)
            results.extend(done)
            if on_round is not None:
                on_round(entry)
        concluded = round((clock() - start) / 60.0, 2)
        conclusion = dict(conclusion, minutes=concluded)
        found_parts, pending = [], []
        if parts is not None and conclusion["outcome"] in ("found", "unexplained", "not_reproduced"):
            context = {
                "transport": transport,
                "nodes": list(nodes),
                "known_good": list(known_good),
                "nics": {},
                "rail_groups": {},
                "labels": {},
                "pairs": results,
                "mnnvl": bool((parts or {}).get("mnnvl")),
            }
            for result in results:
                for node in result["nodes"]:
                    if result.get("opened_nics") and node not in context["nics"]:
                        context["nics"][node] = result["opened_nics"]
                        context["rail_groups"][node] = result.get("rail_groups") or {}
            try:
                with_env((trainjob.get("spec") or {}).get("trainer") or {}, isolation_parts.network_only_env())
            except ConfigError as exc:
                context["env_refused"] = "the NCCL variables of a finer run cannot be set: %s" % exc
            if conclusion["outcome"] != "found" or context["mnnvl"]:
                # The links probe's topology domains; an MNNVL run's NVLink domains (the paths probe's NVLink-only run),
                # of the known-good partners too.
                context["labels"] = node_labels(cluster, list(nodes) + [node for node in known_good if node not in nodes])
            while True:
                left = 0 if out_of_time() else max_jobs - len(results) - len(part_results)
                step = isolation_parts.next_step(conclusion, context, part_results, max_jobs=left)
                if step["state"] == "done":
                    found_parts, pending = step["parts"], step["pending"]
                    break
                number = len(rounds) + 1
                groups = [job["nodes"] for job in step["jobs"]]
                jobs = [pair_trainjob(trainjob, job["nodes"], number, index, runtime, env=job["env"]) for index, job in enumerate(step["jobs"])]
                entry = {
                    "round": number,
                    "pairs": groups,
                    "probes": [job["probe"] for job in step["jobs"]],
                    "trainjobs": [job["metadata"]["name"] for job in jobs],
                    "results": [],
                }
                rounds.append(entry)
                done = _run_round(cluster, jobs, groups, number, judge_for, timeout(), transport, [job["probe"] for job in step["jobs"]])
                for job, result in zip(step["jobs"], done):
                    result.update(probe=job["probe"], env=job["env"])
                entry["results"].extend(done)
                part_results.extend(done)
                for result in done:
                    result["minutes"] = round((clock() - start) / 60.0, 2)
                if on_round is not None:
                    on_round(entry)
    except Exception as exc:
        exc.partial = {"rounds": rounds, "results": results, "part_results": part_results, "minutes": round((clock() - start) / 60.0, 2)}
        raise
    for part in found_parts:
        # Minutes to the conclusion: when the last run it rests on was read (the node level's when it ran none).
        runs = [r for r in part_results if r["probe"].get("node") == part.get("node") and r["probe"]["kind"] == _KIND_OF[part["level"]]]
        part["minutes"] = max([r["minutes"] for r in runs] or [conclusion["minutes"]])
    return {
        "nodes": list(nodes),
        "rounds": rounds,
        "results": results,
        "conclusion": conclusion,
        "findings": isolation.findings(conclusion, results),
        "minutes": round((clock() - start) / 60.0, 2) if part_results else concluded,
        "parts": found_parts,
        "part_results": part_results,
        "pending": pending,
    }


_KIND_OF = {"path": "paths", "nic": "rails", "link": "links"}


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
