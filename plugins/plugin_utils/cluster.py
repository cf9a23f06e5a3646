# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""One cluster through kubernetes.core's code in this process: the cluster protocol of
plugins/module_utils/cluster/trainjobs.py (apply, wait, logs, delete) and the retried reads, deletes and waits the
cluster-facing actions share. Every action that talks to a cluster goes through a ``Cluster``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import classify, runtime_not_cached
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import (
    JOBSET_NAME,
    POD_HIDDEN,
    collect,
    has_ended_for_good,
    has_ended_once,
    not_started,
    pod_name,
    tail_of,
)
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import reads_whole
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.polling import poll_until
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import (
    TERMINAL,
    ClusterCallFailed,
    outcome_of,
    settled_by_preemption,
    terminal_conditions,
)
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.watching import WATCH_SECONDS, watch_until
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.runtime import API_VERSION as TRAINER_API
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import (
    ListWatch,
    dynamic_client_of,
    apply_with,
    configured_server,
    k8s_reader,
    pod_log,
    run_k8s,
    server_of,
)

HIDDEN_FIELDS = ["metadata.managedFields"]
# A TrainJob refused because Trainer's webhook has not seen its runtime yet (applied a moment before, in the same
# call) is applied again, server-side apply being idempotent: up to CACHE_RETRIES times, CACHE_DELAY_SECONDS apart
# (10 s in all). A connected cluster applies that TrainJob alone again; kubernetes.core's runner, every object.
CACHE_RETRIES, CACHE_DELAY_SECONDS = 10, 1
# How long delete() waits for the TrainJobs' pods to end (their grace period, 30 s by default, and some): past it the
# caller goes on, the next pods wait for the GPUs.
PODS_GONE_SECONDS = 120
TRAINJOB_HIDDEN = ["metadata.managedFields", "spec"]
# How long wait() gives the pod watch's thread to end once the jobs ended (stop() closes its stream at once).
PODS_THREAD_JOIN_SECONDS = 5


class _PodsSeen(object):
    """What a wait saw of the pods of its TrainJobs NAMES: the last look at each pod and the logs of those that ended
    (read at once: their controllers remove them). Fed by the pod watch's thread and by the wait's own last look."""

    def __init__(self, names, read_log, on_preempted=None):
        self.seen = dict((name, {}) for name in names)
        self.logs = dict((name, {}) for name in names)
        self.cuts = dict((name, {}) for name in names)
        # The pods whose log was read once they had ended for good (phase Succeeded or Failed): complete, not read again.
        self.final = dict((name, set()) for name in names)
        # Per TrainJob, settled_by_preemption() once it says so; ON_PREEMPTED() then wakes the wait.
        self.preempted = dict((name, None) for name in names)
        self.requests = 0
        self._read_log = read_log
        self._on_preempted = on_preempted
        self._lock = threading.Lock()

    def saw(self, pod):
        owner = ((pod.get("metadata") or {}).get("labels") or {}).get(JOBSET_NAME)
        if owner not in self.seen:
            return
        settled = None
        with self._lock:
            self.seen[owner][pod_name(pod)] = pod
            # A pod that ended, or crash-loops, is removed by its Job once the Job gives up: read its log now.
            if pod_name(pod) not in self.logs[owner] and has_ended_once(pod):
                try:
                    self.logs[owner][pod_name(pod)] = self._read_log(pod, self.cuts[owner])
                    if has_ended_for_good(pod):
                        self.final[owner].add(pod_name(pod))
                except Exception:  # noqa: BLE001 pylint: disable=broad-except
                    pass  # read again at the next look
            if self.preempted[owner] is None:
                settled = self.preempted[owner] = settled_by_preemption(list(self.seen[owner].values()))
        if settled and self._on_preempted is not None:
            self._on_preempted()


class Cancel(object):
    """A cancel of every cluster's stage at once (gpufleet.burnin.burnin_batch on SIGINT or SIGTERM). The signal's
    handler only request()s it: a handler runs in the main thread between any two bytecodes, also inside a lock the
    main thread holds, and a signal may come twice (Ctrl-C, then Ansible's SIGTERM), so it takes no lock. set(), from
    a thread of the batch (batch_run.run_batch), ends the watches being read by the clusters that hold it (their
    ``cancel`` option); their waits then end as failed reads and no later apply starts."""

    REASON = "cancelled (SIGINT or SIGTERM): the stage was stopped"

    def __init__(self):
        self.signum = None
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._sources = set()

    def request(self, signum):
        """From a signal's handler: a plain assignment, no lock."""
        if self.signum is None:
            self.signum = signum

    def is_set(self):
        return self.signum is not None or self._event.is_set()

    def set(self):
        if self._event.is_set():
            return
        self._event.set()
        with self._lock:
            sources = list(self._sources)
        for source in sources:
            source.stop()

    def watching(self, source):
        """SOURCE (a ListWatch) is stopped by set(), now or later, until forget(SOURCE)."""
        with self._lock:
            self._sources.add(source)
        if self._event.is_set():
            source.stop()

    def forget(self, source):
        with self._lock:
            self._sources.discard(source)

    def check(self, what):
        """Raise ClusterCallFailed for WHAT once set or requested."""
        if self.is_set():
            raise ClusterCallFailed(what, {"category": "Error", "status": 0, "detail": "", "message": self.REASON})


def shown_diffs(outcome):
    """For several objects, their diffs as one list with each object's kind/name as its header: Ansible's callbacks
    print a list of diffs one by one, so one task shows every object's diff."""
    items = (outcome.get("result") or {}).get("results")
    if not isinstance(items, list):
        return {}
    diffs = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("diff"), dict):
            reference = item.get("result") or {}
            header = "%s/%s" % (reference.get("kind"), (reference.get("metadata") or {}).get("name"))
            diffs.append(dict(item["diff"], before_header=header, after_header=header))
    return {"diff": diffs} if diffs else {}


class Cluster(object):
    """One cluster with kubernetes.core's authentication options AUTH, for the action NAME.

    OPTIONS: poll_interval, unreachable_grace (seconds), field_manager and force_conflicts (apply), tail_lines,
    whole_logs_of and max_bytes (logs: k8s_in_process.pod_log's bound per pod, None for its default), record_pods
    (wait: read the pods and the logs of those that ended), api_version (the TrainJob API), watch and watch_seconds
    (waits watch, each watch request at most that long; module_utils/cluster/watching.py). The client is made by
    connect(); apply() uses it when there is one (check and diff mode aside), else kubernetes.core.k8s's runner
    makes its own.
    """

    DEFAULTS = {
        "poll_interval": 5,
        "unreachable_grace": 120,
        "field_manager": "gpufleet.burnin",
        "force_conflicts": True,
        "tail_lines": 200,
        "whole_logs_of": ["launcher"],
        "record_pods": True,
        "api_version": TRAINER_API,
        "max_bytes": None,
        # Waits follow the watch API (False: they poll, the rule of polling.py, as when a watch cannot be opened).
        "watch": True,
        "watch_seconds": WATCH_SECONDS,
        # A Cancel shared by the clusters of a batch, or None.
        "cancel": None,
        # The run's namespace when a read found it missing just before this cluster's first apply (detection's look):
        # that apply reads neither the namespace nor its objects, none of which can be there.
        "absent_namespace": None,
    }

    def __init__(self, auth, name, namespace=None, clock=time.monotonic, sleep=time.sleep, **options):
        self.auth, self.name, self.namespace, self._clock, self._sleep = auth, name, namespace, clock, sleep
        self.options = dict(self.DEFAULTS, **options)
        self.service = None
        self.server = configured_server(auth)
        self._applied = False

    def connect(self, kind="Pod", api_version="v1"):
        """Make the client (kubernetes.core's K8sService), retried while the cluster does not answer; raises
        ClusterCallFailed, classified, when it cannot. A process with no discovery cache for the server (a fresh AWX
        job, a new server) reads the server's discovery here: its refusal or silence is the cluster's error, not the
        client's traceback."""
        params = dict(self.auth, kind=kind, api_version=api_version)
        self.service = self.retried("reading the API server's discovery", lambda: k8s_reader(params, self.name))
        self.server = server_of(self.service, self.auth)
        return self

    def classified(self, text):
        return classify(text, context=self.auth.get("context"), server=self.server)

    # Retried calls: a cluster that stops answering for a moment does not end the action.

    def _poll(self, read, done, timeout, interval=None):
        """polling.poll_until with this cluster's poll interval, grace, clock and names for messages."""
        return poll_until(
            read,
            done,
            timeout,
            interval or self.options["poll_interval"],
            self.options["unreachable_grace"],
            context=self.auth.get("context"),
            server=self.server,
            clock=self._clock,
            sleep=self._sleep,
        )

    def retried(self, what, call, timeout=None, done=None, interval=None):
        """CALL()'s value, retried while the cluster does not answer (for unreachable_grace seconds); with DONE,
        polled until DONE(value) or TIMEOUT. Raises ClusterCallFailed."""
        grace = self.options["unreachable_grace"]
        polled = self._poll(call, done or (lambda value: True), grace if timeout is None else timeout, interval)
        if polled["state"] == "done":
            return polled["value"]
        if polled["state"] == "timeout" and polled["error"] is None:
            raise ClusterCallFailed(what, {"category": "Error", "status": 0, "detail": "", "message": "still not done after %d s." % (timeout or grace)})
        raise ClusterCallFailed(what, polled["error"] or {"category": "Error", "status": 0, "detail": "", "message": "no answer"})

    def find(self, kind, api_version, namespace=None, name=None, selectors=None, hidden_fields=None):
        """The objects found, retried while the cluster does not answer."""
        found = self.retried(
            "listing %s" % kind,
            lambda: self.service.find(kind, api_version, name=name, namespace=namespace, label_selectors=selectors, hidden_fields=hidden_fields),
        )
        return found.get("resources") or []

    def delete_object(self, obj):
        """Delete OBJ (gone already is fine)."""
        metadata = obj["metadata"]
        what = "deleting %s/%s" % (obj["kind"], metadata["name"])
        resource = self.retried(what, lambda: self.service.find_resource(obj["kind"], obj["apiVersion"], fail=True))

        def delete():
            try:
                self.service.client.delete(resource, name=metadata["name"], namespace=metadata.get("namespace"))
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                if getattr(exc, "status", None) != 404 and classify(str(exc))["category"] != "NotFound":
                    raise
            return True

        self.retried(what, delete)

    def wait_gone(self, objects, timeout):
        """Poll until every one of OBJECTS is gone, all at once (their finalizers and grace periods run side by side);
        each look reads only the ones still there. Raises ClusterCallFailed after TIMEOUT."""
        left = list(objects)

        def still_there():
            left[:] = [
                obj
                for obj in left
                if self.service.find(obj["kind"], obj["apiVersion"], name=obj["metadata"]["name"], namespace=obj["metadata"].get("namespace")).get("resources")
            ]
            return list(left)

        what = "waiting for %s to go" % ", ".join("%s/%s" % (obj["kind"], obj["metadata"]["name"]) for obj in objects)
        self.retried(what, still_there, timeout=timeout, done=lambda found: not found, interval=2)

    # The protocol (module_utils/cluster/trainjobs.py).

    def apply(self, objects, check_mode=False, diff=False):
        """Server-side apply of OBJECTS with kubernetes.core.k8s's code: its result. A TrainJob refused because Trainer's
        webhook has not cached its runtime yet is applied again. Raises ClusterCallFailed (its ``outcome`` the result)."""
        if self.options["cancel"] is not None:
            self.options["cancel"].check("applying")
        params = dict(
            self.auth,
            resource_definition=objects,
            apply=True,
            server_side_apply={"field_manager": self.options["field_manager"], "force_conflicts": self.options["force_conflicts"]},
            hidden_fields=HIDDEN_FIELDS,
        )
        # A connected cluster applies with its own client (k8s_in_process.apply_with: one request less per object);
        # check and diff mode, and a cluster not connected, with kubernetes.core's runner whole.
        direct = self.service is not None and not check_mode and not diff

        def again(msg, tries):
            if tries > CACHE_RETRIES or not runtime_not_cached(msg):
                return False
            self._sleep(CACHE_DELAY_SECONDS)
            return True

        for attempt in range(CACHE_RETRIES + 1):
            # Only the first try of the first apply: after it, the namespace and some of its objects may be there.
            absent_namespace = None if self._applied else self.options["absent_namespace"]
            self._applied = True
            if direct:
                outcome = apply_with(self.service, params, absent_namespace, again=again)
                break
            outcome = run_k8s(params, check_mode=check_mode, diff=diff, name=self.name)
            # In check mode a runtime's dry run stores nothing: its TrainJob is refused however long one waits.
            if not outcome.get("failed") or check_mode or attempt == CACHE_RETRIES or not runtime_not_cached(outcome.get("msg")):
                break
            self._sleep(CACHE_DELAY_SECONDS)
        if outcome.get("failed"):
            named = ["%s/%s" % (obj.get("kind"), (obj.get("metadata") or {}).get("name")) for obj in objects if isinstance(obj, dict)]
            what = "applying %s" % ", ".join(named[:3]) + (" and %d more" % (len(named) - 3) if len(named) > 3 else "")
            raise ClusterCallFailed(what, self.classified(outcome.get("msg")), outcome)
        return outcome

    def pods_of(self, names):
        """{name: the pods of TrainJob NAME} for every one of NAMES, in one request (a set-based label selector), as
        the server sent them: kubernetes.core's find would make every field of every pod an object first, a quarter of
        a batch's CPU (docs/benchmarks.md)."""
        selector = "%s in (%s)" % (JOBSET_NAME, ",".join(sorted(names)))
        listed = ListWatch(self.service, "Pod", "v1", self.namespace, label_selector=selector, hidden_fields=POD_HIDDEN).list()
        pods = dict((name, []) for name in names)
        for pod in listed.get("items") or []:
            owner = ((pod.get("metadata") or {}).get("labels") or {}).get(JOBSET_NAME)
            if owner in pods:
                pods[owner].append(pod)
        return pods

    def _trainjob(self, name):
        found = self.service.find(
            "TrainJob", self.options["api_version"], name=name, namespace=self.namespace, hidden_fields=["metadata.managedFields", "spec"]
        )
        if not found.get("api_found", True):
            raise LookupError(found.get("msg"))
        if not found.get("resources"):
            raise LookupError('TrainJob "%s" not found in namespace "%s" (it was deleted)' % (name, self.namespace))
        return found["resources"][0]

    def _source(self, kind, api_version, field_selector=None, label_selector=None, hidden_fields=()):
        """A ListWatch of KIND in the cluster's namespace (the unit tests give a fake one)."""
        return ListWatch(self.service, kind, api_version, self.namespace, field_selector, label_selector, hidden_fields)

    def _watch(self, source, done, timeout, on_event=None, sleep=None, list_first=True):
        """watching.watch_until with this cluster's grace, watch timeout, clock and names for messages; the reconnects
        back off up to the poll interval."""
        return watch_until(
            source,
            done,
            timeout,
            self.options["unreachable_grace"],
            watch_seconds=self.options["watch_seconds"],
            backoff_cap=self.options["poll_interval"],
            on_event=on_event,
            context=self.auth.get("context"),
            server=self.server,
            clock=self._clock,
            sleep=sleep or self._sleep,
            list_first=list_first,
        )

    def _look_at_pods(self, names, pods):
        """One listing of the pods of NAMES into PODS (a _PodsSeen)."""
        pods.requests += 1
        for found in self.pods_of(names).values():
            for pod in found:
                pods.saw(pod)
        return pods

    def _follow_pods(self, source, names, pods, stop, timeout):
        """The pod watch's thread: every pod event into PODS until STOP; polled (as before watches) when the pods
        cannot be watched."""

        def stopped(dummy):
            return stop.is_set()

        # No list first: the watch's ADDED events show the pods there already (the wait's last look lists them once more).
        watched = self._watch(source, stopped, timeout, on_event=lambda kind, pod: kind == "DELETED" or pods.saw(pod), sleep=stop.wait, list_first=False)
        pods.requests += watched["polls"]
        if watched["state"] == "unwatchable" and not stop.is_set():
            poll_until(
                lambda: self._look_at_pods(names, pods),
                stopped,
                timeout,
                self.options["poll_interval"],
                self.options["unreachable_grace"],
                clock=self._clock,
                sleep=stop.wait,
            )

    def _selector(self, names):
        return "%s in (%s)" % (JOBSET_NAME, ",".join(sorted(names)))

    def wait(self, names, timeout):
        """Every TrainJob of NAMES until all ended (or TIMEOUT): {name: outcome_of()'s record, pods, logs, logs_cut (the
        logs the bound cut)}. The TrainJobs and their pods are watched (module_utils/cluster/watching.py; the pods in a
        thread of their own), or polled when they cannot be watched (or the ``watch`` option is off)."""

        def read_log(pod, cuts):
            return pod_log(dynamic_client_of(self.service), pod, max_bytes=self.options["max_bytes"], cuts=cuts)

        if not self.options["watch"]:
            pods = _PodsSeen(names, read_log)
            return self._finished(names, timeout, self._polled_wait(names, timeout, pods), pods)
        start = self._clock()
        jobs = self._source(
            "TrainJob", self.options["api_version"], field_selector="metadata.name=%s" % names[0] if len(names) == 1 else None, hidden_fields=TRAINJOB_HIDDEN
        )
        # A preemption that settles a TrainJob changes no TrainJob: the pods' thread wakes the TrainJobs' watch.
        pods = _PodsSeen(names, read_log, on_preempted=getattr(jobs, "interrupt", None))

        cancel = self.options["cancel"]

        def ended(found):
            if cancel is not None and cancel.is_set():
                raise LookupError(Cancel.REASON)
            missing = [name for name in names if name not in found]
            if missing:
                raise LookupError('TrainJob "%s" not found in namespace "%s" (it was deleted)' % (missing[0], self.namespace))
            return all(terminal_conditions(found[name]) or pods.preempted[name] for name in names)

        stop, thread, pod_source = threading.Event(), None, None
        if self.options["record_pods"]:
            pod_source = self._source("Pod", "v1", label_selector=self._selector(names), hidden_fields=POD_HIDDEN)
            try:
                pod_source.path()  # discovery in this thread: kubernetes.core's discovery cache is not shared safely
            except Exception:  # noqa: BLE001 pylint: disable=broad-except
                pass  # the thread's list fails the same way and says so
            thread = threading.Thread(target=self._follow_pods, args=(pod_source, names, pods, stop, timeout), name="gpufleet-burnin-pods")
            thread.daemon = True
            thread.start()
        if cancel is not None:
            cancel.watching(jobs)
        try:
            watched = self._watch(jobs, ended, timeout)
        finally:
            if cancel is not None:
                cancel.forget(jobs)
            stop.set()
            if thread is not None:
                pod_source.stop()
                thread.join(PODS_THREAD_JOIN_SECONDS)
        if watched["state"] == "unwatchable":
            polled = self._polled_wait(names, max(1, int(timeout - (self._clock() - start))), pods)
            watched = dict(polled, polls=polled["polls"] + watched["polls"])
        elif self.options["record_pods"]:
            # The last look, as a poll's: the pods as they are when the jobs ended, and the logs of those that ended.
            try:
                self._look_at_pods(names, pods)
            except Exception:  # noqa: BLE001 pylint: disable=broad-except
                pass  # what the watch saw stands
        watched["value"] = dict((name, job) for name, job in (watched.get("value") or {}).items() if name in names)
        return self._finished(names, timeout, dict(watched, polls=watched["polls"] + pods.requests), pods)

    def _polled_wait(self, names, timeout, pods):
        """The wait by polling (polling.py): the TrainJobs and, with record_pods, their pods at every look."""

        def read():
            jobs = dict((name, self._trainjob(name)) for name in names)
            if self.options["record_pods"]:
                # Controllers remove pods once a job ends (JobSet ends the MPI workers when the launcher is done, the
                # Job controller removes a failed Job's pods): the last look at each is what says where it ran.
                for found in self.pods_of(names).values():
                    for pod in found:
                        pods.saw(pod)
            return jobs

        return self._poll(read, lambda jobs: all(terminal_conditions(job) or pods.preempted[name] for name, job in jobs.items()), timeout)

    @staticmethod
    def _finished(names, timeout, polled, pods):
        out = {}
        for name in names:
            job = (polled["value"] or {}).get(name)
            # One job of several may have ended while another timed out, or was settled by a preemption.
            state = "done" if terminal_conditions(job) else ("preempted" if pods.preempted[name] else polled["state"])
            out[name] = dict(
                outcome_of(dict(polled, state=state, value=job, preempted=pods.preempted[name]), name, timeout),
                pods=[pods.seen[name][key] for key in sorted(pods.seen[name])],
                logs=pods.logs[name],
                logs_cut=pods.cuts[name],
                logs_final=sorted(pods.final[name]),
            )
        return out

    def logs(self, name, waited=None, whole_logs_of=None):
        """The pods of TrainJob NAME and their logs (pod_logs.collect()), the wait's record WAITED (pods, logs,
        logs_cut) kept for the pods their controllers removed; WHOLE_LOGS_OF (default the option) names the replicated
        jobs whose logs are read whole. The pod listing is retried as the wait's reads are; one unreadable pod is
        recorded as such and does not lose the others' logs. A job that ended is not listed again: its controllers make
        no more pods, and the wait looked at them as it ended; a pod of that look gone since counts as removed."""
        waited = waited or {}
        cuts = dict(waited.get("logs_cut") or {})
        early, final = waited.get("logs") or {}, set(waited.get("logs_final") or [])
        seen = waited.get("pods") or []
        reused = bool(waited.get("outcome") in TERMINAL and seen)
        if reused:
            pods = sorted(seen, key=pod_name)
        else:
            pods = sorted(self.retried("listing the pods of TrainJob %s" % name, lambda: self.pods_of([name])[name], interval=1), key=pod_name)
        read, gone = {}, set()
        for pod in pods:
            if not_started(pod):
                read[pod_name(pod)] = (None, not_started(pod))
                continue
            whole = self.options["whole_logs_of"] if whole_logs_of is None else whole_logs_of
            tail = None if reads_whole(pod, whole) else self.options["tail_lines"]
            if pod_name(pod) in final and pod_name(pod) in early and has_ended_for_good(pod) and (tail is None or pod_name(pod) not in cuts):
                # The wait read it whole once it had ended for good: the same text, without asking again.
                read[pod_name(pod)] = (tail_of(early[pod_name(pod)], tail), None)
                continue
            try:
                read[pod_name(pod)] = (pod_log(dynamic_client_of(self.service), pod, tail, self.options["max_bytes"], cuts), None)
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                error = self.classified(str(exc))
                if reused and error["category"] == "NotFound":
                    gone.add(pod_name(pod))
                read[pod_name(pod)] = (None, error["message"])
        pods = [pod for pod in pods if pod_name(pod) not in gone]
        return collect(pods, read, waited.get("pods"), waited.get("logs"), cuts)

    def delete(self, names):
        """Delete the TrainJobs NAMES; back once none of their pods holds a node (PODS_GONE_SECONDS at most): a pod that
        still runs holds its node's GPUs, and the next job's pods (one per node, whose anti-affinity counts running
        pods only) would double up on the nodes already free. A pod that ended (Succeeded or Failed) holds nothing,
        even before it is removed (docs/stages.md, "Waits")."""
        for name in names:
            self.delete_object({"apiVersion": self.options["api_version"], "kind": "TrainJob", "metadata": {"name": name, "namespace": self.namespace}})
        if self.options["watch"]:
            gone = self._watch(
                self._source("Pod", "v1", label_selector=self._selector(names), hidden_fields=POD_HIDDEN),
                lambda left: all(has_ended_for_good(pod) for pod in left.values()),
                PODS_GONE_SECONDS,
            )
            if gone["state"] != "unwatchable":
                return
        self._poll(lambda: sum(not has_ended_for_good(pod) for pods in self.pods_of(names).values() for pod in pods), lambda left: left == 0, PODS_GONE_SECONDS)

    # The node protocol (module_utils/burnin/remediation_run.py): nodes read and patched, the record ConfigMap.

    def read_node(self, name):
        """Node NAME, or None when there is none."""
        found = self.retried("reading Node/%s" % name, lambda: self.service.find("Node", "v1", name=name))
        return (found.get("resources") or [None])[0]

    def patch_node(self, name, patch):
        """Merge-patch Node NAME; False on a conflict (the node changed since it was read), so the caller reads again."""
        resource = self.retried("finding the Node API", lambda: self.service.find_resource("Node", "v1", fail=True))
        conflict = []

        def send():
            try:
                self.service.client.patch(resource, patch, name=name, content_type="application/merge-patch+json")
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                if getattr(exc, "status", None) == 409:
                    conflict.append(True)
                    return False
                raise
            return True

        return self.retried("patching Node/%s" % name, send) and not conflict

    def patch_node_status(self, name, patch):
        """A strategic merge patch of Node NAME's status subresource: conditions merge by their type, so the kubelet's
        own and other tools' conditions stay (a merge patch would replace the whole list)."""
        resource = self.retried("finding the Node API", lambda: self.service.find_resource("Node", "v1", fail=True))
        status = resource.subresources["status"]
        self.retried(
            "patching Node/%s/status" % name,
            lambda: self.service.client.patch(status, patch, name=name, content_type="application/strategic-merge-patch+json"),
        )

    def read_configmap(self, name, namespace):
        """ConfigMap NAME in NAMESPACE, or None when there is none. Raises ClusterCallFailed (a Forbidden at once)."""
        return (
            self.retried("reading ConfigMap/%s in %s" % (name, namespace), lambda: self.service.find("ConfigMap", "v1", name=name, namespace=namespace)).get(
                "resources"
            )
            or [None]
        )[0]

    def merge_configmap(self, name, namespace, patch, created):
        """Merge-patch ConfigMap NAME in NAMESPACE, or create it as CREATED when there is none (patched after all when
        another client made it in between). False when NAMESPACE is not there. Raises ClusterCallFailed."""
        resource = self.retried("finding the ConfigMap API", lambda: self.service.find_resource("ConfigMap", "v1", fail=True))
        merge = "application/merge-patch+json"
        no_namespace = []

        def send():
            try:
                self.service.client.patch(resource, patch, name=name, namespace=namespace, content_type=merge)
                return True
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                if getattr(exc, "status", None) != 404:
                    raise
            try:
                self.service.client.create(resource, created, namespace=namespace)
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                if getattr(exc, "status", None) == 404:  # the namespace itself is not there
                    no_namespace.append(True)
                    return True
                if getattr(exc, "status", None) != 409:  # made by another client in between: patch it
                    raise
                self.service.client.patch(resource, patch, name=name, namespace=namespace, content_type=merge)
            return True

        self.retried("writing ConfigMap/%s in %s" % (name, namespace), send)
        return not no_namespace
