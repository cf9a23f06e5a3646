# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Node attribution: which pods and nodes took part in a burn-in and which failed.

Reads the pod listing (as ``kubernetes.core.k8s_info`` returns it) and the pods' logs (``kubernetes.core.k8s_log``
loop results or {pod name: text}), and says which nodes and pods took part and which failed, like the original
operator's succeeded/failed node lists. Also finds the log that holds nccl-tests' output.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import log_lines

JOB_OK = ("Complete", "Succeeded")

# Worker pods stopped by SIGTERM/SIGKILL once the launcher is done are not failures.
_STOP_CODES = (137, 143)
_ROLE_LABELS = ("jobset.sigs.k8s.io/replicatedjob-name", "training.kubeflow.org/replica-type", "trainer.kubeflow.org/replicated-job-name")


def _pod_role(pod):
    labels = (pod.get("metadata") or {}).get("labels") or {}
    for key in _ROLE_LABELS:
        if labels.get(key):
            return str(labels[key]).lower()
    name = (pod.get("metadata") or {}).get("name") or ""
    return "launcher" if "-launcher-" in name else "node"


def _excused(job_ok, role, deleted):
    """Whether a container stopped by SIGTERM/SIGKILL is no failure of its pod: a worker of a finished job (JobSet
    ends the workers when the launcher is done), or any pod deleted while it ran (its controller removed it, for
    example the workers JobSet deletes once another job of the TrainJob failed)."""
    return deleted or (job_ok and role != "launcher")


def _container_problems(status, job_ok, role, deleted=False):
    """Reasons a pod failed, from its container statuses (empty when none)."""
    problems = []
    statuses = list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])
    for container in statuses:
        name = container.get("name") or "?"
        state = container.get("state") or {}
        last = (container.get("lastState") or {}).get("terminated")
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        if terminated and terminated.get("exitCode", 0) != 0:
            code = terminated.get("exitCode")
            reason = terminated.get("reason") or "Error"
            if _excused(job_ok, role, deleted) and code in _STOP_CODES and reason != "OOMKilled":
                continue  # stopped when the job ended, or by its deletion
            problems.append("container %s exited %s (%s)" % (name, code, reason))
        if waiting and waiting.get("reason") not in (None, "ContainerCreating", "PodInitializing"):
            message = (" - %s" % waiting["message"][:200]) if waiting.get("message") else ""
            problems.append("container %s waiting: %s%s" % (name, waiting.get("reason"), message))
        restarts = container.get("restartCount") or 0
        if restarts:
            detail = ""
            if last:
                detail = ", last exit %s (%s)" % (last.get("exitCode"), last.get("reason") or "Error")
            problems.append("container %s restarted %d time(s)%s" % (name, restarts, detail))
    return problems


def _stopped_at_end(status, job_ok, role, deleted=False):
    """A pod _excused for stopping whose containers all ended by SIGTERM/SIGKILL (not OOM) or cleanly."""
    if not _excused(job_ok, role, deleted):
        return False
    for container in status.get("containerStatuses") or []:
        terminated = (container.get("state") or {}).get("terminated")
        if not terminated:
            return False
        if terminated.get("exitCode") not in (0,) + _STOP_CODES or terminated.get("reason") == "OOMKilled":
            return False
    return bool(status.get("containerStatuses"))


def _host_keys(pod):
    metadata = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    keys = set()
    for value in (metadata.get("name"), spec.get("hostname")):
        if value:
            keys.add(str(value).split(".", 1)[0])
    return keys


def pod_for_host(pods, host):
    """Name of the pod a log hostname (``host:pid:tid`` prefix, ``on node X``) belongs to, or None."""
    host = str(host).split(".", 1)[0]
    for pod in pods:
        name = (pod.get("metadata") or {}).get("name") or ""
        keys = _host_keys(pod)
        if host in keys:
            return name
        # JobSet pods are named <hostname>-<random suffix>
        if name.startswith(host + "-") and "-" not in name[len(host) + 1 :]:
            return name
    return None


def _log_items(pod_logs):
    """{pod name: (log text or None, read error or None)} from k8s_log loop results or a {name: text} mapping."""
    items = {}
    if not pod_logs:
        return items
    if isinstance(pod_logs, dict):
        if isinstance(pod_logs.get("results"), list):
            pod_logs = pod_logs["results"]
        else:
            for name, text in pod_logs.items():
                items[str(name)] = (text if isinstance(text, str) else None, None if isinstance(text, str) else "no log text")
            return items
    if not isinstance(pod_logs, list):
        raise ConfigError("pod_logs", "must be the results of a kubernetes.core.k8s_log loop or a mapping of pod name to log text")
    for index, entry in enumerate(pod_logs):
        if not isinstance(entry, dict):
            raise ConfigError("pod_logs[%d]" % index, "must be a k8s_log result with 'item' (the pod) and 'log'")
        item = entry.get("item")
        name = ((item or {}).get("metadata") or {}).get("name") if isinstance(item, dict) else item
        name = name or entry.get("name")
        if not name:
            raise ConfigError("pod_logs[%d]" % index, "names no pod ('item.metadata.name' or 'name')")
        text = entry.get("log")
        if text is None and isinstance(entry.get("log_lines"), list):
            text = "\n".join(entry["log_lines"])
        items[str(name)] = (text if isinstance(text, str) else None, None if isinstance(text, str) else (entry.get("msg") or "log not read"))
    return items


def find_nccl_output(pod_logs, pods=None, require_table=False):
    """``(pod name, log text)`` of the log holding nccl-tests' table (launcher first), or (None, None).

    A log with only nccl-tests' preamble or an NCCL version line counts too (a test that died early), unless
    ``require_table``: torch and exec workloads print NCCL lines without being nccl-tests.
    """
    items = _log_items(pod_logs)
    roles = dict((((pod.get("metadata") or {}).get("name")), _pod_role(pod)) for pod in (pods or []))
    ranked = []
    for name, (text, dummy) in items.items():
        if not text:
            continue
        score = 0
        if "# Avg bus bandwidth" in text or '"average_bus_bandwidth"' in text:
            score = 3
        elif re.search(r"#\s+size\s+count", text):
            score = 2
        elif "Collective test starting" in text or "NCCL version" in text or any(_hard_lines(text)):
            score = 1  # a test that died early: its failure lines name the hosts (tests/fixtures/real/nccl)
        if score and (score >= 2 or not require_table):
            launcher = roles.get(name, "launcher" if "-launcher-" in name else "node") == "launcher"
            ranked.append((score, 1 if launcher else 0, name))
    if not ranked:
        return None, None
    ranked.sort(reverse=True)
    name = ranked[0][2]
    return name, items[name][0]


_RE_HARD_LINE = re.compile(
    r"^(?P<host>[^\s:]+): Test (?:[A-Z]+ )?failure.*|(?:mpirun noticed that )?process rank \d+ with PID \d+ on node (?P<node>\S+?) exited on signal.*"
)


def _warn_lines(text):
    """(host, line) of each NCCL WARN line of TEXT, read by the one grammar of prefixes and markers (log_lines)."""
    for raw in (text or "").splitlines():
        if "NCCL WARN" in raw:
            found = log_lines.nccl_line(log_lines.strip(raw))
            if found and found["level"] == "WARN":
                yield found["host"], raw.strip()


def _hard_lines(text):
    """(host, line) of each nccl-tests 'Test ... failure' line naming its host and each rank mpirun lost."""
    for raw in (text or "").splitlines():
        if "failure" in raw or "exited on signal" in raw:
            line = log_lines.strip(raw).strip()
            match = _RE_HARD_LINE.search(line)
            if match:
                yield match.group("host") or match.group("node"), line


def attribute(pods, pod_logs=None, result=None, job_outcome=None):
    """Which nodes and pods took part in the burn-in and which failed.

    ``pods``: the TrainJob's pods as ``kubernetes.core.k8s_info`` lists them (``resources``), with spec.nodeName.
    ``pod_logs``: k8s_log loop results (``item`` = the pod, ``log``) or {pod name: text}. ``result``: the parsed
    nccl-tests result (its device lines and failure lines name hosts). ``job_outcome``: Complete lets worker pods
    stopped by SIGTERM/SIGKILL at the job's end count as succeeded.
    Returns {nodes, succeeded_nodes, failed_nodes, unknown_nodes, pods (name, node, role, phase, status, reasons),
    succeeded_pods, failed_pods, unscheduled_pods, hosts (from nccl-tests' device list)}.
    """
    if pods is None:
        pods = []
    if isinstance(pods, dict) and isinstance(pods.get("resources"), list):
        pods = pods["resources"]
    if not isinstance(pods, list) or not all(isinstance(pod, dict) for pod in pods):
        raise ConfigError("pods", "must be the pod list of kubernetes.core.k8s_info (its 'resources')")
    job_ok = job_outcome in JOB_OK
    job_done = job_outcome is not None
    logs = _log_items(pod_logs)
    entries = []
    for pod in pods:
        metadata = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        role = _pod_role(pod)
        phase = status.get("phase") or "Unknown"
        entry = {"name": metadata.get("name"), "node": spec.get("nodeName") or None, "role": role, "phase": phase, "reasons": []}
        deleted = bool(metadata.get("deletionTimestamp"))
        problems = _container_problems(status, job_ok, role, deleted)
        if phase == "Failed" and not (problems == [] and _stopped_at_end(status, job_ok, role, deleted)):
            why = status.get("reason") or status.get("message")
            entry["reasons"].append("pod Failed%s" % ((": %s" % why) if why else ""))
        entry["reasons"].extend(problems)
        if not entry["node"]:
            entry["status"] = "failed" if job_done else "pending"
            entry["reasons"].append("never scheduled%s" % _pending_reason(status))
        elif entry["reasons"]:
            entry["status"] = "failed"
        elif phase == "Succeeded":
            entry["status"] = "succeeded"
        elif phase == "Failed" and not job_ok:  # only a pod its controller deleted while it ran gets here
            entry["status"] = "stopped"
            entry["note"] = "stopped by its controller (deleted while running): no verdict on its node"
        elif phase == "Failed":  # only a worker stopped when its finished job ended gets here
            entry["status"] = "succeeded"
            entry["note"] = "stopped when the TrainJob ended"
        elif phase == "Running":
            entry["status"] = "succeeded" if job_ok else ("unknown" if job_done else "running")
            if job_done:
                entry["reasons"].append("still running when the TrainJob ended %s" % job_outcome)
        elif phase == "Pending":
            entry["status"] = "failed" if job_done else "pending"
            entry["reasons"].append("never started%s" % _pending_reason(status))
        else:
            entry["status"] = "unknown"
        text, read_error = logs.get(entry["name"], (None, None))
        if read_error:
            entry["log_error"] = read_error
        entry["warnings"] = sum(1 for dummy in _warn_lines(text))
        entries.append(entry)
    _log_evidence(entries, pods, logs, result, job_ok)
    # The nodes under test are the workers' (GPU) nodes: an MPI launcher asks for no GPU and runs wherever there is
    # CPU, often a system node; its failure is the job's, not its node's.
    judged = [entry for entry in entries if entry["role"] != "launcher"] or entries
    nodes = sorted(set(entry["node"] for entry in judged if entry["node"]))
    failed_nodes = sorted(set(entry["node"] for entry in judged if entry["node"] and entry["status"] == "failed"))
    succeeded_nodes = [node for node in nodes if node not in failed_nodes and all(entry["status"] == "succeeded" for entry in judged if entry["node"] == node)]
    return {
        "nodes": nodes,
        "succeeded_nodes": succeeded_nodes,
        "failed_nodes": failed_nodes,
        "unknown_nodes": [node for node in nodes if node not in failed_nodes and node not in succeeded_nodes],
        "pods": entries,
        "succeeded_pods": [entry["name"] for entry in entries if entry["status"] == "succeeded"],
        "failed_pods": [entry["name"] for entry in entries if entry["status"] == "failed"],
        "unscheduled_pods": [entry["name"] for entry in entries if not entry["node"]],
        "hosts": list((result or {}).get("hosts") or []),
    }


def cut_note(name, cut):
    """A person's line for a log that was cut (cluster/pod_logs.py LogBound's ``cut``: size, kept, lines_dropped, max_bytes)."""
    return (
        "log of pod %s cut to %d of its %d bytes (burnin_log_max_bytes %d): its first lines, its last lines (the table and "
        "the failure lines) and the lines between that are not NCCL INFO lines were read; %d lines between were not"
        % (name, cut["kept"], cut["size"], cut["max_bytes"], cut["lines_dropped"])
    )


def job_check(outcome, reason, have_output, is_nccl):
    """The ``job`` check of a verdict: how the TrainJob ended, an error when it ended without output to judge."""
    detail = (": %s" % reason) if reason else ""
    if outcome in JOB_OK:
        return {"name": "job", "verdict": "pass", "reason": "TrainJob %s%s" % (outcome, "" if is_nccl else " (no bandwidth to judge)")}
    if outcome == "Timeout" and not have_output:
        return {"name": "job", "verdict": "error", "reason": "no result: the TrainJob did not finish in time%s" % detail}
    if outcome in ("Failed", "Timeout"):
        return {"name": "job", "verdict": "fail", "reason": "TrainJob %s%s" % (outcome, detail)}
    return {"name": "job", "verdict": "error", "reason": "no result: the burn-in ended %s%s" % (outcome, detail)}


def cut_notes(pod_logs):
    """A note per log that was read only in part (trainjob_logs' ``cut``: pod_logs.LogBound), so that a verdict on a
    cut log says so."""
    entries = pod_logs if isinstance(pod_logs, list) else []
    return [
        cut_note(((entry.get("item") or {}).get("metadata") or {}).get("name") or "?", entry["cut"])
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("cut"), dict)
    ]


def _pending_reason(status):
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return ": %s%s" % (condition.get("reason") or "Unschedulable", (" - %s" % condition["message"][:200]) if condition.get("message") else "")
    return ""


def _log_evidence(entries, pods, logs, result, job_ok):
    """Hard failures in any log (nccl-tests 'Test ... failure', mpirun's lost rank) fail the pod they name; NCCL WARN
    lines fail their pod only when the job itself did not succeed."""
    by_name = dict((entry["name"], entry) for entry in entries)
    evidence = {}
    texts = [text for text, dummy in logs.values() if text]
    for text in texts:
        for host, line in _hard_lines(text):
            evidence.setdefault(host, line)
    for host, line in ((result or {}).get("failed_hosts") or {}).items():
        evidence.setdefault(host, line)
    for host, line in evidence.items():
        name = pod_for_host(pods, host)
        if name in by_name:
            entry = by_name[name]
            entry["status"] = "failed"
            entry["reasons"].append("log: %s" % line[:300])
    if job_ok:
        return
    warned = {}
    for text in texts:
        for host, line in _warn_lines(text):
            warned.setdefault(host, line)
    for host, count in ((result or {}).get("warning_hosts") or {}).items():
        warned.setdefault(host, "%d NCCL WARN line(s)" % count)
    for host, line in warned.items():
        name = pod_for_host(pods, host)
        if name in by_name and by_name[name]["status"] != "failed":
            by_name[name]["status"] = "failed"
            by_name[name]["reasons"].append("NCCL warning while the job failed: %s" % line[:300])


def with_node_attribution(verdict, judged, found, pods, pod_logs, output, job_outcome):
    """VERDICT of a per-node workload (DCGM, gpu-burn) with its pods' attribution: the nodes are those with pods and
    those JUDGED; a node fails when its pod failed or one of its FOUND findings fails."""
    if pods is None and pod_logs is None:
        return verdict
    logs = pod_logs if pod_logs is not None else (output if isinstance(output, (dict, list)) else None)
    attribution = attribute(pods or [], logs, None, job_outcome)
    bad = sorted(set(attribution["failed_nodes"]) | set(item["node"] for item in found if item["verdict"] == "fail"))
    verdict["attribution"] = attribution
    verdict["nodes"] = sorted(set(attribution["nodes"]) | set(judged))
    verdict["failed_nodes"] = bad
    verdict["succeeded_nodes"] = [node for node in attribution["succeeded_nodes"] if node not in bad]
    return verdict


__all__ = ["JOB_OK", "attribute", "cut_note", "cut_notes", "find_nccl_output", "job_check", "pod_for_host", "with_node_attribution"]
