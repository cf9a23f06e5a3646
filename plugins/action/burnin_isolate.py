# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_isolate (documentation in plugins/modules/burnin_isolate.py).

The rounds are plugins/module_utils/cluster/isolation_run.py's; this file gives them kubernetes.core's client (the
same calls as k8s_apply, trainjob_wait and trainjob_logs) and the verdict of judging/verdict.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.action.trainjob_wait import outcome_of, terminal_conditions
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import isolation_run
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import classify
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import JOBSET_NAME, POD_HIDDEN, collect, has_ended_once, not_started, pod_name
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import reads_whole
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.polling import poll_until
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_ISOLATE_OWN, burnin_isolate_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.role_vars import check_isolation_budget
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit, api_client_of, k8s_reader, pod_log
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import run_k8s, server_of

NAME = "gpufleet.burnin.burnin_isolate"
TRAINER_API = "trainer.kubeflow.org/v1alpha1"
# How long a deletion waits for the pair's pods to go (their grace period, 30 s by default, and some): past it the
# isolation goes on, the next pods wait for the GPUs.
PODS_GONE_SECONDS = 120


class IsolationFailed(Exception):
    """A cluster call the isolation cannot go on after (its classified error)."""

    def __init__(self, what, error):
        super(IsolationFailed, self).__init__("%s: %s" % (what, error["message"]))
        self.error = error


class Cluster(object):
    """The cluster calls of cluster/isolation_run.py, with kubernetes.core's service and client in this process."""

    def __init__(self, reader, auth, args, namespace):
        self.reader, self.auth, self.args, self.namespace = reader, auth, args, namespace
        self.server = server_of(reader, auth)
        self.api_client = api_client_of(reader)

    def _retried(self, what, call):
        grace = self.args["unreachable_grace"]
        polled = poll_until(call, lambda value: True, grace, 1, grace, context=self.auth.get("context"), server=self.server)
        if polled["state"] != "done":
            raise IsolationFailed(what, polled["error"] or {"message": "no answer", "category": "Error"})
        return polled["value"]

    def apply(self, objects):
        params = dict(
            self.auth,
            resource_definition=objects,
            apply=True,
            server_side_apply={"field_manager": self.args["field_manager"], "force_conflicts": self.args["force_conflicts"]},
            hidden_fields=["metadata.managedFields"],
        )
        outcome = run_k8s(params, check_mode=False, diff=False, name=NAME)
        if outcome.get("failed"):
            raise IsolationFailed("applying the pair TrainJobs", classify(outcome.get("msg"), context=self.auth.get("context"), server=self.server))

    def _pods(self, name):
        return self._pods_of([name])[name]

    def _pods_of(self, names):
        """{name: the pods of TrainJob NAME} for every one of NAMES, in one request (a set-based label selector)."""
        selector = "%s in (%s)" % (JOBSET_NAME, ",".join(sorted(names)))
        found = self.reader.find("Pod", "v1", namespace=self.namespace, hidden_fields=POD_HIDDEN, label_selectors=[selector])
        pods = dict((name, []) for name in names)
        for pod in found.get("resources") or []:
            owner = ((pod.get("metadata") or {}).get("labels") or {}).get(JOBSET_NAME)
            if owner in pods:
                pods[owner].append(pod)
        return pods

    def wait(self, names, timeout):
        """Every TrainJob of NAMES until all ended (or TIMEOUT): {name: trainjob_wait's outcome, pods, logs}."""
        seen = dict((name, {}) for name in names)
        logs = dict((name, {}) for name in names)

        def read():
            jobs = {}
            for name in names:
                found = self.reader.find("TrainJob", TRAINER_API, name=name, namespace=self.namespace, hidden_fields=["metadata.managedFields", "spec"])
                if not found.get("api_found", True):
                    raise LookupError(found.get("msg"))
                if not found.get("resources"):
                    raise LookupError('TrainJob "%s" not found in namespace "%s" (it was deleted)' % (name, self.namespace))
                jobs[name] = found["resources"][0]
            for name, pods in self._pods_of(names).items():
                for pod in pods:
                    seen[name][pod_name(pod)] = pod
                    # JobSet removes the MPI workers once the launcher is done: read an ended pod's log now.
                    if pod_name(pod) not in logs[name] and has_ended_once(pod):
                        try:
                            logs[name][pod_name(pod)] = pod_log(self.api_client, pod)
                        except Exception:  # noqa: BLE001 pylint: disable=broad-except
                            pass  # read again at the next look
            return jobs

        polled = poll_until(
            read,
            lambda jobs: all(terminal_conditions(job) for job in jobs.values()),
            timeout,
            self.args["poll_interval"],
            self.args["unreachable_grace"],
            context=self.auth.get("context"),
            server=self.server,
        )
        if polled["state"] in ("error", "unreachable"):
            raise IsolationFailed("waiting for the pair TrainJobs", polled["error"])
        out = {}
        for name in names:
            job = (polled["value"] or {}).get(name)
            state = "done" if terminal_conditions(job) else polled["state"]
            waited = outcome_of(dict(polled, state=state, value=job), name, timeout)
            out[name] = dict(waited, pods=[seen[name][key] for key in sorted(seen[name])], logs=logs[name])
        return out

    def logs(self, name, waited):
        pods = sorted(self._retried("listing the pods of TrainJob %s" % name, lambda: self._pods(name)), key=pod_name)
        read = {}
        for pod in pods:
            if not_started(pod):
                read[pod_name(pod)] = (None, not_started(pod))
                continue
            tail = None if reads_whole(pod, ["launcher"]) else self.args["tail_lines"]
            try:
                read[pod_name(pod)] = (pod_log(self.api_client, pod, tail), None)
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                read[pod_name(pod)] = (None, classify(str(exc), context=self.auth.get("context"), server=self.server)["message"])
        return collect(pods, read, waited.get("pods"), waited.get("logs"))

    def delete(self, names):
        resource = self._retried("finding the TrainJob API", lambda: self.reader.find_resource("TrainJob", TRAINER_API, fail=True))
        for name in names:

            def delete(name=name):
                try:
                    self.reader.client.delete(resource, name=name, namespace=self.namespace)
                except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                    if getattr(exc, "status", None) != 404 and classify(str(exc))["category"] != "NotFound":
                        raise
                return True

            self._retried("deleting TrainJob %s" % name, delete)
        # Until their pods are gone: a terminating pod still holds its node's GPUs, and the next stage's pods (one per
        # node, whose anti-affinity counts running pods only) would double up on the nodes already free.
        poll_until(
            lambda: sum(len(pods) for pods in self._pods_of(names).values()),
            lambda left: left == 0,
            PODS_GONE_SECONDS,
            self.args["poll_interval"],
            self.args["unreachable_grace"],
            context=self.auth.get("context"),
            server=self.server,
        )


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
                cluster = Cluster(k8s_reader(dict(auth, kind="TrainJob", api_version=TRAINER_API), NAME), auth, args, namespace)
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
        except (IsolationFailed, BurninError) as exc:
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
            record=isolation_run.record(cluster_result, outcome),
            msg="isolation %s: %s" % (conclusion["outcome"], conclusion["reason"]),
        )
