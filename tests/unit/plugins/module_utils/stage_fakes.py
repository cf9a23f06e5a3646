# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""A fake cluster for the stage runner (module_utils/burnin/stage_run.py) and the inputs of its tests (not a test
module): the role's defaults checked, role_plan's plans, and TrainJob pods with the test fleet's nccl-tests output
(tests/fleet/nccl_logs.py). Loaded by path from tests/unit/plugins/module_utils and tests/unit/plugins/filter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import collect
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import role_plan, run_start
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROOT = os.path.dirname(TESTS)
sys.path.insert(0, os.path.join(TESTS, "fleet"))
import nccl_logs  # noqa: E402 pylint: disable=wrong-import-position

NAMESPACE = "burnin"
RUN_ID = "r1"


def checked(**changes):
    with open(os.path.join(ROOT, "roles", "burnin", "defaults", "main.yml")) as fh:
        given = yaml.safe_load(fh)
    given.update(burnin_platform="aws", burnin_gpu_architecture="h100", burnin_nodes=2)
    given.update(changes)
    return check_role_vars(given)


def start(variables):
    return run_start(variables, "aws-a", RUN_ID, started="2026-12-03T10:00:00Z")["result"]


def planner(variables, cluster=None):
    """plan_attempt for run_stage, and the calls it got."""
    calls = []

    def plan_attempt(stage, attempt, result):
        calls.append((stage, attempt))
        return role_plan(variables, result["platform"], result["gpu_architecture"], RUN_ID, NAMESPACE, cluster, stage=stage, attempt=attempt)

    plan_attempt.calls = calls
    return plan_attempt


def _pod(name, role, node, hostname, failed=False):
    state = {"terminated": {"exitCode": 1 if failed else 0, "reason": "Error" if failed else "Completed"}}
    return {
        "metadata": {"name": name, "labels": {"jobset.sigs.k8s.io/replicatedjob-name": role, "jobset.sigs.k8s.io/jobset-name": name.split("-" + role)[0]}},
        "spec": {"nodeName": node, "hostname": hostname},
        "status": {"phase": "Failed" if failed else "Succeeded", "containerStatuses": [{"name": role, "state": state}]},
    }


def fleet_pods(trainjob, objects, kind, nodes=2):
    """(pods, {pod name: log}) of a fleet-stage TrainJob: a launcher printing KIND's output (nccl_logs.RESULTS), NODES workers."""
    (job,) = [obj for obj in objects if obj["kind"] == "TrainJob"]
    hosts = ["%s-node-0-%d" % (trainjob, index) for index in range(nodes)]
    pods = [_pod(host + "-w%d" % index, "node", "node-%d" % index, host) for index, host in enumerate(hosts)]
    launcher = _pod("%s-launcher-0-0-x1" % trainjob, "launcher", "node-0", "%s-launcher-0-0" % trainjob, failed=kind == "truncated")
    text = nccl_logs.launcher_log(kind, hosts, 8, "aws", "h100", nccl_logs.nccl_command(job))
    return [launcher] + pods, {launcher["metadata"]["name"]: text}


def node_pods(trainjob, objects, busbws, failed=()):
    """(pods, logs) of a node-stage TrainJob: one pod per node, each printing its own single-node run at BUSBWS[i]."""
    (job,) = [obj for obj in objects if obj["kind"] == "TrainJob"]
    pods, logs = [], {}
    for index, busbw in enumerate(busbws):
        host = "%s-node-0-%d" % (trainjob, index)
        killed = index in failed
        pod = _pod(host + "-x%d" % index, "node", "node-%d" % index, host, failed=killed)
        pods.append(pod)
        logs[pod["metadata"]["name"]] = nccl_logs.launcher_log(
            "truncated" if killed else "good", [host], 8, "aws", "h100", nccl_logs.nccl_command(job), busbw=busbw, seed=str(index)
        )
    return pods, logs


class FakeCluster(object):
    """The protocol of module_utils/cluster/trainjobs.py over a script: SCRIPT(trainjob, objects) -> (wait outcome,
    pods, logs) of each TrainJob applied, in turn. Records its calls."""

    def __init__(self, script):
        self.script = script
        self.calls = []
        self.jobs = {}

    def apply(self, objects, check_mode=False, diff=False):
        self.calls.append(("apply", ["%s/%s" % (obj["kind"], obj["metadata"]["name"]) for obj in objects], check_mode, diff))
        if not check_mode:
            runtime_and_deps = [obj for obj in objects if obj["kind"] != "TrainJob"]
            for obj in objects:
                if obj["kind"] == "TrainJob":
                    self.jobs[obj["metadata"]["name"]] = self.script(obj["metadata"]["name"], runtime_and_deps + [obj])
        items = [{"changed": True, "method": "apply", "diff": {"before": {}, "after": {"metadata": obj["metadata"]}}, "result": obj} for obj in objects]
        return {"changed": True, "result": {"results": items}}

    def wait(self, names, timeout):
        self.calls.append(("wait", list(names), timeout))
        out = {}
        for name in names:
            outcome, pods, dummy = self.jobs[name]
            reason = {"Complete": "JobsCompleted: jobs completed", "Failed": "JobFailed: a job failed"}.get(outcome, "")
            record = {"outcome": outcome, "reason": reason, "conditions": [{"type": outcome, "status": "True"}] if reason else [], "polls": 2}
            if outcome in ("Unreachable", "Error"):
                record["reason"] = "Unreachable: connection refused. Gave up waiting for TrainJob %s after 60 s without an answer." % name
                record["error"] = {"category": "Unreachable", "message": "connection refused"}
            record.update(pods=list(pods), logs={})
            out[name] = record
        return out

    def logs(self, name, waited=None, whole_logs_of=None):
        self.calls.append(("logs", name, list(whole_logs_of or [])))
        dummy, pods, logs = self.jobs[name]
        waited = waited or {}
        return collect(
            pods, dict((pod["metadata"]["name"], (logs.get(pod["metadata"]["name"], ""), None)) for pod in pods), waited.get("pods"), waited.get("logs")
        )
