# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_isolate (documentation in plugins/modules/burnin_isolate.py).

The rounds are plugins/module_utils/burnin/isolation_run.py's; this file gives them the cluster of
plugins/plugin_utils/cluster.py (the calls of k8s_apply, trainjob_wait and trainjob_logs) and the verdict of
judging/verdict.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import isolation_run
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import isolation_record
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_ISOLATE_OWN, burnin_isolate_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_isolation_budget
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit

NAME = "gpufleet.burnin.burnin_isolate"


def judge_with(args, result):
    """A pair's verdict: judging/verdict.py with the fleet stage's facts and thresholds, for 2 nodes."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for

    facts = {
        "platform": result.get("platform") or None,
        "gpu_architecture": result.get("gpu_architecture") or None,
        "nodes": 2,
        "gpus_per_node": int(result["gpus_per_node"]) if result.get("gpus_per_node") not in (None, "") else None,
        "mnnvl": args["mnnvl"],
        "instance_type": result.get("instance_type") or None,
    }

    def judge(logs, waited):
        return verdict_for(
            logs.get("results") or [],
            facts=facts,
            collective=result.get("collective") or None,
            overrides=args["overrides"] or None,
            job_outcome=waited.get("outcome"),
            job_reason=waited.get("reason"),
            pods=logs.get("pods"),
            on_missing=args["on_missing"],
            workload=result.get("workload") or None,
        )

    return judge


class ActionModule(K8sActionBase):
    """Find the nodes that made a multi-node run fail, with pair TrainJobs, in the controller's worker process."""

    _supports_check_mode = True
    OWN = BURNIN_ISOLATE_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_isolate_spec)
    NON_NEGATIVE = ("timeout", "poll_interval", "unreachable_grace", "tail_lines")

    def run_with(self, result, args, auth):
        cluster_result = args["result"]
        trainjobs = [obj for obj in args["objects"] if obj.get("kind") == "TrainJob"]
        runtimes = [obj for obj in args["objects"] if obj.get("kind") in ("TrainingRuntime", "ClusterTrainingRuntime")]
        nodes = args["nodes"] if args["nodes"] is not None else isolation_run.run_nodes(cluster_result)
        known_good = args["known_good"] if args["known_good"] is not None else isolation_run.known_good_nodes(cluster_result, nodes)
        try:
            check_isolation_budget(args["max_jobs"], args["max_minutes"])
            if len(trainjobs) != 1:
                raise BurninError("objects: must hold the fleet stage's one planned TrainJob, found %d" % len(trainjobs))
        except BurninError as exc:
            return dict(result, failed=True, msg="%s: %s" % (NAME, exc))
        trainjob = trainjobs[0]
        namespace = trainjob["metadata"].get("namespace")
        if len(nodes) < 2:
            return dict(result, changed=False, skipped=True, msg="fewer than 2 nodes in the run: nothing to isolate", record={})
        cluster = None
        try:
            # A conclusion before any job (a run of 2 nodes, no partner) needs no client.
            first = isolation.next_step(nodes, [], known_good=known_good, max_jobs=args["max_jobs"], max_minutes=args["max_minutes"])
        except BurninError as exc:
            return dict(result, failed=True, msg="%s: %s" % (NAME, exc))
        if not self._task.check_mode and first["state"] == "run":
            try:
                options = dict((key, args[key]) for key in ("poll_interval", "unreachable_grace", "field_manager", "force_conflicts", "tail_lines"))
                cluster = Cluster(auth, NAME, namespace, api_version=trainjob["apiVersion"], **options).connect("TrainJob", trainjob["apiVersion"])
            except ModuleExit as exc:
                return dict(result, failed=True, msg=exc.result.get("msg"))
        try:
            outcome = isolation_run.run_isolation(
                cluster,
                trainjob,
                nodes,
                judge_with(args, cluster_result),
                known_good=known_good,
                runtime=runtimes[0] if runtimes else None,
                max_jobs=args["max_jobs"],
                max_minutes=args["max_minutes"],
                round_timeout=args["timeout"],
                check_mode=self._task.check_mode,
            )
        except (ClusterCallFailed, BurninError) as exc:
            partial = getattr(exc, "partial", {})
            return dict(
                result,
                failed=True,
                changed=bool(partial.get("rounds")),
                rounds=partial.get("rounds") or [],
                error=self.shown_error(getattr(exc, "error", None)),
                msg="%s: %s" % (NAME, exc),
            )
        outcome.update(nodes=nodes, known_good=known_good)
        if self._task.check_mode and outcome["rounds"]:
            first = outcome["rounds"][0]
            return dict(
                result,
                changed=False,
                rounds=outcome["rounds"],
                nodes=nodes,
                known_good=known_good,
                conclusion=None,
                findings=[],
                record={},
                msg="check mode: would run round 1, %s" % ", ".join("+".join(pair) for pair in first["pairs"]),
            )
        conclusion = outcome["conclusion"]
        return dict(
            result,
            changed=bool(outcome["results"]),
            rounds=outcome["rounds"],
            nodes=nodes,
            known_good=known_good,
            conclusion=conclusion,
            findings=outcome["findings"],
            record=isolation_record(cluster_result, outcome),
            msg="isolation %s: %s" % (conclusion["outcome"], conclusion["reason"]),
        )
