# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The cluster protocol every cluster-facing action uses, and the records its calls return. Pure.

A cluster (plugins/plugin_utils/cluster.py gives kubernetes.core's client; the unit tests a fake one) has:

- ``apply(objects, check_mode=False, diff=False)``: server-side apply of OBJECTS; kubernetes.core.k8s's result.
- ``wait(names, timeout)``: poll the TrainJobs NAMES until every one has a terminal condition, or is settled by a
  preemption (settled_by_preemption()), or TIMEOUT; {name: outcome_of()'s record with ``pods`` (the last look at each
  pod) and ``logs`` (those read once a pod ended)}. The outcome is Complete, Failed, Preempted, Timeout, Unreachable
  or Error: a wait never raises for the cluster.
- ``logs(name, waited=None, whole_logs_of=None)``: the TrainJob's pods and their logs (module_utils/cluster/pod_logs.py
  collect()), the pods of WHOLE_LOGS_OF's jobs read whole (default the cluster's option).
- ``delete(names)``: delete the TrainJobs NAMES, back once none of their pods runs (the next job needs the GPUs).

Every other call raises ClusterCallFailed when the cluster refuses it or stays unreachable for the grace.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.text import clean_tree

TERMINAL = ("Complete", "Failed")
# How the kube-scheduler marks the pod it preempts before it deletes it: a DisruptionTarget condition of this reason
# (pkg/scheduler/framework/preemption/preemption.go; Kubernetes 1.26+, always since 1.31).
PREEMPTION_REASON = "PreemptionByScheduler"
_ENDED_PHASES = ("Succeeded", "Failed")
# The wait's outcomes that say nothing about the job: the cluster could not be read.
NOT_READ = ("Unreachable", "Error")
KEPT_CONDITION_KEYS = ("type", "status", "reason", "message")


class ClusterCallFailed(Exception):
    """A cluster call that failed for good: WHAT was being done and the classified ERROR (k8s_errors.classify); the
    call's OUTCOME (kubernetes.core's result) when it returned one."""

    def __init__(self, what, error, outcome=None):
        super(ClusterCallFailed, self).__init__("%s: %s" % (what, error["message"]))
        self.what = what
        self.error = error
        self.outcome = outcome or {}


def terminal_conditions(trainjob):
    """The TrainJob's Complete or Failed conditions that are True."""
    conditions = ((trainjob or {}).get("status") or {}).get("conditions") or []
    return [c for c in conditions if c.get("type") in TERMINAL and c.get("status") == "True"]


def preemption_of(pod):
    """The DisruptionTarget condition by which the scheduler preempted POD, or None."""
    for condition in ((pod or {}).get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "DisruptionTarget" and condition.get("reason") == PREEMPTION_REASON:
            return condition
    return None


def settled_by_preemption(pods):
    """{pod, node, message} of the first preempted pod of a TrainJob's PODS (the last look at each) once nothing else
    is left to wait for, else None: no other pod is bound and still running. The replacement of a preempted pod is
    pinned where its node's GPUs now serve the preempting workload (a sweep's pods, burnin/sweep.py): it stays
    pending, and the TrainJob would end only at the wait's timeout."""
    victims = [pod for pod in pods or [] if preemption_of(pod)]
    if not victims:
        return None
    for pod in pods:
        if pod in victims or (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if (pod.get("spec") or {}).get("nodeName") and (pod.get("status") or {}).get("phase") not in _ENDED_PHASES:
            return None
    victim = sorted(victims, key=lambda pod: (pod.get("metadata") or {}).get("name") or "")[0]
    return {
        "pod": (victim.get("metadata") or {}).get("name") or "",
        "node": (victim.get("spec") or {}).get("nodeName") or "",
        "message": str(preemption_of(victim).get("message") or "")[:512],
    }


def outcome_of(polled, name, timeout):
    """The outcome record of one TrainJob NAME from polling.poll_until's POLLED: outcome, reason, conditions, polls
    (and error); state ``preempted`` (POLLED's ``preempted``: settled_by_preemption()'s) is the outcome Preempted."""
    trainjob = polled["value"]
    # The conditions' reasons and messages are the cluster's text (a controller copies a pod's): made safe here, once.
    conditions = clean_tree(((trainjob or {}).get("status") or {}).get("conditions") or [])
    kept = [dict((k, c[k]) for k in KEPT_CONDITION_KEYS if k in c) for c in conditions]
    out = {"conditions": kept, "polls": polled["polls"]}
    if polled["state"] == "done":
        final = [c for c in conditions if c.get("type") in TERMINAL and c.get("status") == "True"][0]
        reason = ("%s: %s" % (final.get("reason") or "", final.get("message") or "")).strip(": ")
        out.update(outcome=final["type"], reason=reason)
    elif polled["state"] == "preempted":
        victim = polled["preempted"]
        out.update(
            outcome="Preempted",
            reason=clean_tree(
                "the scheduler preempted pod %s on node %s (%s); its replacement cannot start there, the wait ended"
                % (victim["pod"], victim["node"] or "?", victim["message"] or PREEMPTION_REASON)
            ),
        )
    elif polled["state"] == "timeout":
        out.update(
            outcome="Timeout",
            reason="no Complete or Failed condition after %d s (conditions: %s)" % (timeout, ", ".join(c.get("type", "") for c in conditions) or "none"),
        )
    elif polled["state"] == "unreachable":
        out.update(
            outcome="Unreachable",
            reason="%s Gave up waiting for TrainJob %s after %s s without an answer." % (polled["error"]["message"], name, polled["unreachable_seconds"]),
        )
    else:
        out.update(outcome="Error", reason="reading TrainJob %s: %s" % (name, polled["error"]["message"]))
    if polled.get("error"):
        out["error"] = polled["error"]
    return out


def unread(waited):
    """The first (name, record) of WAITED (wait()'s result) whose cluster could not be read, or None."""
    for name in sorted(waited):
        if waited[name].get("outcome") in NOT_READ:
            return name, waited[name]
    return None
