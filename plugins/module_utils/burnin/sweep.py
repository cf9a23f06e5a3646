# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The sweep (playbooks/sweep.yml, roles/burnin/tasks/sweep.yml, docs/sweep.md): which GPU nodes of a cluster are
verified again now, the pins and the priority of the node stages that verify them, what a preemption means, and the
coverage of the verification per cluster and fleet-wide.

Pure functions over Node, Pod and Event objects as the API server returns them; the clock is the caller's ``now``
(Unix seconds). What the collection recorded on a node is read in one place, ``verification_of()``: from the record
ConfigMap (module_utils/cluster/node_records.py; RECORDS below is its object as read), never from the node's own
annotations, which a kubelet may write (a node claiming a fresh verification would never be swept).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils import validate
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks, node_records, remediation, trainjobs
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.detect import GPU_RESOURCE
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

PRIORITY_CLASS = "gpufleet-burnin-sweep"
# Below every default (0) and every PriorityClass a workload is likely to use; any pod of a higher priority preempts a
# sweep pod, and a sweep pod never preempts (preemptionPolicy Never).
PRIORITY_VALUE = -1000
HOLD_TAINT_KEY = "gpufleet.burnin/sweep"
HOLDS = ("none", "taint")
# The replicated job of a node stage whose pods hold the GPUs, one per node (burnin/isolation_run.py NODE_JOB).
GPU_JOB = "node"
JOBSET_SKIP_PRIORITY_LABEL = "alpha.jobset.sigs.k8s.io/node-selector"
# Extended resources that are a GPU (the GPU Operator's, AMD's device plugin's).
GPU_RESOURCES = (GPU_RESOURCE, "amd.com/gpu")
SKIP_REASONS = ("busy", "cordoned", "not_ready", "tainted", "preempted", "over_limit")
# How the scheduler says it preempted a pod: an Event of reason Preempted on the victim, "Preempted by pod <uid> on node
# <node>" (pkg/scheduler/framework/preemption/preemption.go), and the victim's DisruptionTarget condition.
PREEMPTED_REASON = "Preempted"
_ON_NODE = re.compile(r"\bon node (\S{1,253})")
MAX_AGE_HOURS_MAX = node_marks.TTL_HOURS_MAX
MAX_NODES_MAX = validate.NODES_MAX


def check_options(max_age_hours, max_nodes, max_percent, hold, names=None):
    """The sweep's bounds checked: {max_age_hours, max_nodes, max_percent, hold}; NAMES maps each to the user's name."""
    names = dict(dict(max_age_hours="max_age_hours", max_nodes="max_nodes", max_percent="max_percent", hold="hold"), **(names or {}))
    validate.check_int(names["max_age_hours"], max_age_hours, 1, MAX_AGE_HOURS_MAX)
    validate.check_int(names["max_nodes"], max_nodes, 1, MAX_NODES_MAX)
    validate.check_int(names["max_percent"], max_percent, 1, 100)
    if hold not in HOLDS:
        raise ConfigError(names["hold"], "must be one of %s, got %r" % (", ".join(HOLDS), hold))
    return {"max_age_hours": max_age_hours, "max_nodes": max_nodes, "max_percent": max_percent, "hold": hold}


def _quantity(value):
    text = str(value if value is not None else "").strip()
    return int(text) if text.isdigit() else 0


def gpus_of(node):
    """The GPUs a Node offers (capacity of GPU_RESOURCES), 0 for a node without."""
    capacity = (node.get("status") or {}).get("capacity") or {}
    return sum(_quantity(capacity.get(name)) for name in GPU_RESOURCES)


def records_of(configmap, now):
    """{node: entry} of the record CONFIGMAP (the object, a k8s_info list of it, or None), without the entries written
    at a time from the future (ignored as cluster/node_records.py ignores them)."""
    if isinstance(configmap, list):
        configmap = configmap[0] if configmap else None
    entries, _unreadable = node_records.parse(configmap if isinstance(configmap, dict) else None)
    return node_records.usable(entries, now)[0]


def verification_of(node, now, records=None):
    """What the collection recorded of the node's last verification, at NOW: {state (node_marks.status: verified,
    expired, warn, fail, error, unmarked), result, run_id, expires, marked_at (Unix seconds or None)}; the one reader
    of the records (see the module's docstring). RECORDS: records_of()'s {node: entry}; a node without an entry is
    unmarked, whatever its annotations say."""
    state = remediation.node_state(node)
    state = node_records.trusted_state(state, (records or {}).get(state["name"]))
    record = node_marks.read_record(state)
    out = node_marks.status(state, now)
    out["marked_at"] = record["marked_at"] if record else None
    return out


def _ready(node):
    for condition in (node.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _blocking_taint(node):
    """The first NoSchedule or NoExecute taint a sweep pod does not tolerate, or "". Tolerated: the sweep's own hold,
    and a taint keyed by a GPU resource (GKE's nvidia.com/gpu=present on every GPU node: the platform overrides
    tolerate it, templates/overrides/platforms/gcp.yaml, as Kubernetes' ExtendedResourceToleration admission does for
    pods that request the resource)."""
    for taint in (node.get("spec") or {}).get("taints") or []:
        if not isinstance(taint, dict) or taint.get("key") in (HOLD_TAINT_KEY,) + GPU_RESOURCES:
            continue
        if taint.get("effect") in ("NoSchedule", "NoExecute"):
            return remediation.taint_text(taint) if taint.get("key") else "a taint"
    return ""


def _requests_gpu(container):
    resources = (container or {}).get("resources") or {}
    for part in ("requests", "limits"):
        for name in GPU_RESOURCES:
            if _quantity((resources.get(part) or {}).get(name)) > 0:
                return True
    return False


def holds_gpu(pod):
    """Whether POD holds a GPU on its node: bound, not ended, and a container asks for a GPU resource or the pod has
    DRA resource claims (counted as GPUs: a claim's device class is not on the pod, and a false busy only waits)."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    if spec.get("resourceClaims"):
        return True
    return any(_requests_gpu(container) for container in list(spec.get("containers") or []) + list(spec.get("initContainers") or []))


def gpu_holders(pods, ignore_priority_class=PRIORITY_CLASS):
    """{node: ["namespace/name", ...]} of the pods holding GPUs; the sweep's own pods (its PriorityClass) do not count."""
    out = {}
    for pod in pods or []:
        if not holds_gpu(pod) or (pod.get("spec") or {}).get("priorityClassName") == ignore_priority_class:
            continue
        metadata = pod.get("metadata") or {}
        out.setdefault(pod["spec"]["nodeName"], []).append("%s/%s" % (metadata.get("namespace") or "", metadata.get("name") or ""))
    return dict((node, sorted(names)) for node, names in out.items())


def limit(gpu_nodes, max_nodes, max_percent):
    """How many nodes one sweep may take: at most MAX_NODES and MAX_PERCENT of the GPU_NODES (rounded down), but at
    least one on a cluster with GPU nodes, or a small cluster would never be swept."""
    if gpu_nodes <= 0:
        return 0
    return max(1, min(int(max_nodes), gpu_nodes * int(max_percent) // 100))


def _stale_why(status, now, max_age_seconds):
    if status["state"] == "unmarked":
        return "missing"
    if status["state"] == "expired":
        return "expired"
    if status["marked_at"] is not None and now - status["marked_at"] >= max_age_seconds:
        return "stale"
    return ""


def select(nodes, pods, now, options, preempted=(), records=None):
    """The sweep's choice on one cluster. NODES: the Node objects; PODS: the cluster's pods (all namespaces); NOW: Unix
    seconds; OPTIONS: check_options()'s; PREEMPTED: nodes whose sweep pod an earlier step saw preempted (recorded as a
    skip, picked again next sweep); RECORDS: records_of()'s. Returns {picked: [{node, why, marked_at}] stalest first, skipped: [{node, reason,
    detail}], limit, gpu_nodes, stale, fresh: [names]}. A GPU node is stale when its mark is missing, expired or older
    than max_age_hours; it is picked when idle (no pod holds a GPU on it), Ready, schedulable and untainted, up to the
    limit."""
    max_age = int(options["max_age_hours"]) * 3600
    holders = gpu_holders(pods)
    gpu_nodes = [node for node in nodes or [] if gpus_of(node) > 0]
    bound = limit(len(gpu_nodes), options["max_nodes"], options["max_percent"])
    candidates, skipped, fresh = [], [], []
    for node in gpu_nodes:
        name = (node.get("metadata") or {}).get("name") or ""
        status = verification_of(node, now, records)
        why = _stale_why(status, now, max_age)
        if not why:
            fresh.append(name)
            continue
        if name in preempted:
            skipped.append({"node": name, "reason": "preempted", "detail": "a workload preempted its sweep pod; picked again next sweep"})
        elif (node.get("spec") or {}).get("unschedulable"):
            skipped.append({"node": name, "reason": "cordoned", "detail": "spec.unschedulable"})
        elif not _ready(node):
            skipped.append({"node": name, "reason": "not_ready", "detail": "condition Ready is not True"})
        elif _blocking_taint(node):
            skipped.append({"node": name, "reason": "tainted", "detail": _blocking_taint(node)})
        elif holders.get(name):
            shown = holders[name][:3] + (["..."] if len(holders[name]) > 3 else [])
            skipped.append({"node": name, "reason": "busy", "detail": "GPUs held by %s" % ", ".join(shown)})
        else:
            candidates.append({"node": name, "why": why, "marked_at": status["marked_at"]})
    # Stalest first: never verified, then by the time of the last mark; the name breaks ties, so the choice is stable.
    candidates.sort(key=lambda row: (row["marked_at"] is not None, row["marked_at"] or 0, row["node"]))
    picked = candidates[:bound]
    for row in candidates[bound:]:
        skipped.append({"node": row["node"], "reason": "over_limit", "detail": "beyond this sweep's limit of %d node(s)" % bound})
    stale = len(candidates) + sum(1 for row in skipped if row["reason"] != "over_limit")
    return {
        "picked": picked,
        "skipped": sorted(skipped, key=lambda row: (row["reason"], row["node"])),
        "limit": bound,
        "gpu_nodes": len(gpu_nodes),
        "stale": stale,
        "fresh": sorted(fresh),
    }


def coverage(nodes, now, selection=None, preempted=(), records=None):
    """One cluster's coverage at NOW: {gpu_nodes, verified (pass within expiry), verified_percent, oldest_verified_at
    (ISO time of the oldest verification still valid, or None), never_verified [names], expired [names], skipped
    {reason: count} (of SELECTION, the sweep's choice, with PREEMPTED added), picked [names], preempted [names], nodes
    [{node, state, verified_at}]}."""
    rows = []
    for node in nodes or []:
        if gpus_of(node) <= 0:
            continue
        status = verification_of(node, now, records)
        name = (node.get("metadata") or {}).get("name") or ""
        rows.append({"node": name, "state": status["state"], "verified_at": status["marked_at"] if status["state"] == "verified" else None})
    rows.sort(key=lambda row: row["node"])
    verified = [row for row in rows if row["state"] == "verified"]
    selection = selection or {}
    preempted = sorted(set(preempted))
    skipped = {}
    for row in selection.get("skipped") or []:
        if row["node"] not in preempted:
            skipped[row["reason"]] = skipped.get(row["reason"], 0) + 1
    if preempted:
        skipped["preempted"] = skipped.get("preempted", 0) + len(preempted)
    oldest = min((row["verified_at"] for row in verified), default=None)
    return {
        "gpu_nodes": len(rows),
        "verified": len(verified),
        "verified_percent": round(100.0 * len(verified) / len(rows), 1) if rows else 0.0,
        "oldest_verified_at": node_marks.iso(oldest) if oldest is not None else None,
        "never_verified": [row["node"] for row in rows if row["state"] == "unmarked"],
        "expired": [row["node"] for row in rows if row["state"] == "expired"],
        "skipped": skipped,
        # select()'s rows, or their names (gpufleet.burnin.burnin_sweep_select gives the names).
        "picked": [row["node"] if isinstance(row, dict) else str(row) for row in selection.get("picked") or []],
        "preempted": preempted,
        "nodes": [dict(row, verified_at=node_marks.iso(row["verified_at"]) if row["verified_at"] is not None else None) for row in rows],
    }


def fleet_coverage(clusters):
    """The fleet's coverage from {cluster: coverage()}: {clusters: the same, sorted, gpu_nodes, verified,
    verified_percent, oldest_verified_at, never_verified (count), skipped {reason: count}}."""
    clusters = dict(sorted((clusters or {}).items()))
    gpu_nodes = sum(one["gpu_nodes"] for one in clusters.values())
    verified = sum(one["verified"] for one in clusters.values())
    skipped = {}
    for one in clusters.values():
        for reason, count in one["skipped"].items():
            skipped[reason] = skipped.get(reason, 0) + count
    oldest = [one["oldest_verified_at"] for one in clusters.values() if one["oldest_verified_at"]]
    return {
        "gpu_nodes": gpu_nodes,
        "verified": verified,
        "verified_percent": round(100.0 * verified / gpu_nodes, 1) if gpu_nodes else 0.0,
        # ISO times of one format compare as text.
        "oldest_verified_at": min(oldest) if oldest else None,
        "never_verified": sum(len(one["never_verified"]) for one in clusters.values()),
        "skipped": dict(sorted(skipped.items())),
        "clusters": clusters,
    }


def preempted_nodes(events, pods=(), picked=(), run_id=""):
    """The nodes of PICKED whose sweep pod the scheduler preempted: from Events of reason Preempted ("... on node X")
    on a pod of run RUN_ID (its pods' names hold ``-<run id>-``: an earlier sweep's events stay an hour in the same
    namespace), and pods whose DisruptionTarget condition says PreemptionByScheduler (their spec.nodeName)."""
    picked = set(picked)
    found = set()
    for event in events or []:
        if (event or {}).get("reason") != PREEMPTED_REASON:
            continue
        victim = str(((event or {}).get("involvedObject") or {}).get("name") or "")
        if run_id and "-%s-" % run_id not in victim:
            continue
        match = _ON_NODE.search(str(event.get("message") or "")[:1024])
        if match and match.group(1) in picked:
            found.add(match.group(1))
    for pod in pods or []:
        node = (pod.get("spec") or {}).get("nodeName")
        if trainjobs.preemption_of(pod) and node in picked:
            found.add(node)
    return sorted(found)


def priority_class(name=PRIORITY_CLASS):
    """The collection's PriorityClass for sweep pods: negative, never preempting, not the global default."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "gpufleet.burnin"}},
        "value": PRIORITY_VALUE,
        "preemptionPolicy": "Never",
        "globalDefault": False,
        "description": "gpufleet.burnin sweep pods: any workload preempts them, they preempt nothing (docs/sweep.md).",
    }


def hold_taint(run_id):
    """The NoSchedule taint that holds a swept node for the stage's duration; its value is the sweep's run id."""
    return {"key": HOLD_TAINT_KEY, "value": str(run_id), "effect": "NoSchedule"}


def stale_holds(nodes, run_id=""):
    """The nodes that carry the sweep's hold taint from another run than RUN_ID (a sweep cancelled before its release):
    the next sweep releases them first."""
    out = []
    for node in nodes or []:
        for taint in (node.get("spec") or {}).get("taints") or []:
            if isinstance(taint, dict) and taint.get("key") == HOLD_TAINT_KEY and str(taint.get("value") or "") != str(run_id):
                out.append((node.get("metadata") or {}).get("name") or "")
                break
    return sorted(out)


def pinned(objects, nodes, priority_class_name=PRIORITY_CLASS, hold=False):
    """OBJECTS (a node stage's plan) with the pods of the GPU job (``node``, as isolation_run.NODE_JOB) required on NODES
    (node affinity on the hostname, added to each of the runtime's required terms; an MPI launcher stays where it
    goes: pinned beside the node pods, the stage's one-pod-per-node anti-affinity would leave one pending), every pod
    under PRIORITY_CLASS_NAME, and with HOLD tolerating the sweep's hold taint."""
    required = {"key": "kubernetes.io/hostname", "operator": "In", "values": sorted(nodes)}
    out = copy.deepcopy(objects)
    for obj in out:
        if obj.get("kind") != "TrainingRuntime":
            continue
        for job in obj["spec"]["template"]["spec"]["replicatedJobs"]:
            pod_template = job["template"]["spec"]["template"]
            pod_spec = pod_template.setdefault("spec", {})
            if priority_class_name:
                # JobSet's pod webhook copies a pod's priority into the label jobset.sigs.k8s.io/priority, and a
                # negative number is no valid label value: the pod is refused. The webhook skips pods carrying this
                # annotation (sigs.k8s.io/jobset v0.12.0 pkg/webhooks/pod_webhook.go); it changes nothing else
                # without exclusive placement, which the collection does not use (tests/e2e/test_sweep.py).
                metadata = pod_template.setdefault("metadata", {})
                metadata["annotations"] = dict(metadata.get("annotations") or {}, **{JOBSET_SKIP_PRIORITY_LABEL: "true"})
            if job.get("name") == GPU_JOB:
                node_affinity = pod_spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
                selector = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
                terms = [dict(term) for term in selector.get("nodeSelectorTerms") or []] or [{}]
                for term in terms:
                    term["matchExpressions"] = [e for e in term.get("matchExpressions") or [] if e.get("key") != required["key"]] + [dict(required)]
                node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = dict(selector, nodeSelectorTerms=terms)
            if priority_class_name:
                pod_spec["priorityClassName"] = priority_class_name
            if hold:
                tolerations = [t for t in pod_spec.get("tolerations") or [] if t.get("key") != HOLD_TAINT_KEY]
                pod_spec["tolerations"] = tolerations + [{"key": HOLD_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]
    return out


def _label(value):
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus(fleet, now=None):
    """The fleet's coverage in the Prometheus text format: gpufleet_burnin_nodes_verified_ratio per cluster and for the
    fleet (cluster=""), gpufleet_burnin_node_verified_timestamp_seconds per verified node, the never-verified and
    skipped counts."""
    lines = [
        "# HELP gpufleet_burnin_nodes_verified_ratio GPU nodes whose burn-in mark is a pass within its expiry, over all GPU nodes.",
        "# TYPE gpufleet_burnin_nodes_verified_ratio gauge",
    ]
    for cluster, one in fleet["clusters"].items():
        ratio = float(one["verified"]) / one["gpu_nodes"] if one["gpu_nodes"] else 0.0
        lines.append('gpufleet_burnin_nodes_verified_ratio{cluster="%s"} %s' % (_label(cluster), repr(round(ratio, 6))))
    ratio = float(fleet["verified"]) / fleet["gpu_nodes"] if fleet["gpu_nodes"] else 0.0
    lines.append('gpufleet_burnin_nodes_verified_ratio{cluster=""} %s' % repr(round(ratio, 6)))
    lines += [
        "# HELP gpufleet_burnin_node_verified_timestamp_seconds When the node's valid burn-in mark was made (Unix seconds).",
        "# TYPE gpufleet_burnin_node_verified_timestamp_seconds gauge",
    ]
    import calendar
    import time as _time

    for cluster, one in fleet["clusters"].items():
        for row in one["nodes"]:
            if row["verified_at"]:
                seconds = calendar.timegm(_time.strptime(row["verified_at"], "%Y-%m-%dT%H:%M:%SZ"))
                lines.append('gpufleet_burnin_node_verified_timestamp_seconds{cluster="%s",node="%s"} %d' % (_label(cluster), _label(row["node"]), seconds))
    lines += [
        "# HELP gpufleet_burnin_sweep_nodes_skipped The stale GPU nodes the sweep did not verify, by reason.",
        "# TYPE gpufleet_burnin_sweep_nodes_skipped gauge",
    ]
    for cluster, one in fleet["clusters"].items():
        for reason in SKIP_REASONS:
            lines.append('gpufleet_burnin_sweep_nodes_skipped{cluster="%s",reason="%s"} %d' % (_label(cluster), reason, one["skipped"].get(reason, 0)))
    return "\n".join(lines) + "\n"


def html(fleet):
    """The fleet's coverage as a small self-contained HTML page (every value escaped)."""
    from html import escape

    def cells(values, tag="td"):
        return "<tr>%s</tr>" % "".join("<%s>%s</%s>" % (tag, escape(str(value)), tag) for value in values)

    head = ["cluster", "GPU nodes", "verified", "verified %", "oldest verification", "never verified", "picked", "preempted", "skipped"]
    rows = [cells(head, "th")]
    for cluster, one in fleet["clusters"].items():
        skipped = ", ".join("%s %d" % item for item in sorted(one["skipped"].items())) or "-"
        rows.append(
            cells(
                [
                    cluster,
                    one["gpu_nodes"],
                    one["verified"],
                    one["verified_percent"],
                    one["oldest_verified_at"] or "-",
                    ", ".join(one["never_verified"]) or "-",
                    ", ".join(one["picked"]) or "-",
                    ", ".join(one["preempted"]) or "-",
                    skipped,
                ]
            )
        )
    skipped = ", ".join("%s %d" % item for item in sorted(fleet["skipped"].items())) or "-"
    rows.append(
        cells(
            [
                "fleet",
                fleet["gpu_nodes"],
                fleet["verified"],
                fleet["verified_percent"],
                fleet["oldest_verified_at"] or "-",
                fleet["never_verified"],
                "",
                "",
                skipped,
            ]
        )
    )
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>gpufleet.burnin sweep coverage</title></head><body>\n'
        "<h1>Verification coverage</h1>\n<table>\n%s\n</table>\n</body></html>\n" % "\n".join(rows)
    )


__all__ = [
    "HOLD_TAINT_KEY",
    "PRIORITY_CLASS",
    "check_options",
    "coverage",
    "fleet_coverage",
    "gpu_holders",
    "hold_taint",
    "holds_gpu",
    "html",
    "limit",
    "pinned",
    "preempted_nodes",
    "priority_class",
    "prometheus",
    "records_of",
    "select",
    "stale_holds",
    "verification_of",
]
