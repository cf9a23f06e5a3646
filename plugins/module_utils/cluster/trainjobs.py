# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The cluster protocol every cluster-facing action uses, and the records its calls return. Pure.

A cluster (plugins/plugin_utils/cluster.py gives kubernetes.core's client; the unit tests a fake one) has:

- ``apply(objects, check_mode=False, diff=False)``: server-side apply of OBJECTS; kubernetes.core.k8s's result.
- ``wait(names, timeout)``: poll the TrainJobs NAMES until every one has a terminal condition (or TIMEOUT);
  {name: outcome_of()'s record with ``pods`` (the last look at each pod) and ``logs`` (those read once a pod ended)}.
  The outcome is Complete, Failed, Timeout, Unreachable or Error: a wait never raises for the cluster.
- ``logs(name, waited=None, whole_logs_of=None)``: the TrainJob's pods and their logs (module_utils/cluster/pod_logs.py
  collect()), the pods of WHOLE_LOGS_OF's jobs read whole (default the cluster's option).
- ``delete(names)``: delete the TrainJobs NAMES, back once their pods are gone (the next job needs the GPUs).

Every other call raises ClusterCallFailed when the cluster refuses it or stays unreachable for the grace.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.text import clean_tree

TERMINAL = ("Complete", "Failed")
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


def outcome_of(polled, name, timeout):
    """The outcome record of one TrainJob NAME from polling.poll_until's POLLED: outcome, reason, conditions, polls
    (and error)."""
    trainjob = polled["value"]
    # The conditions' reasons and messages are the cluster's text (a controller copies a pod's): made safe here, once.
    conditions = clean_tree(((trainjob or {}).get("status") or {}).get("conditions") or [])
    kept = [dict((k, c[k]) for k in KEPT_CONDITION_KEYS if k in c) for c in conditions]
    out = {"conditions": kept, "polls": polled["polls"]}
    if polled["state"] == "done":
        final = [c for c in conditions if c.get("type") in TERMINAL and c.get("status") == "True"][0]
        reason = ("%s: %s" % (final.get("reason") or "", final.get("message") or "")).strip(": ")
        out.update(outcome=final["type"], reason=reason)
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
