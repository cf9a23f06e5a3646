# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""plugins/plugin_utils/cluster.py's protocol against a fake kubernetes.core service and a fake clock: what each call
asks the cluster, when it retries, and the records it returns."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import threading

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.plugin_utils import cluster as cluster_module

JOBSET = "jobset.sigs.k8s.io/jobset-name"
REPLICATED = "jobset.sigs.k8s.io/replicatedjob-name"


class Clock(object):
    def __init__(self):
        self.now, self.sleeps = 0.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def pod(name, job, replicated="node", started=True, ended=False, node="n1"):
    status = {"phase": "Succeeded" if ended else "Running"}
    if started:
        status["containerStatuses"] = [{"name": "node", "state": {"terminated": {"exitCode": 0}} if ended else {"running": {}}}]
    return {"metadata": {"name": name, "namespace": "burnin", "labels": {JOBSET: job, REPLICATED: replicated}}, "spec": {"nodeName": node}, "status": status}


def trainjob(name, condition=None):
    conditions = [{"type": condition, "status": "True", "reason": "Done", "message": "m"}] if condition else []
    return {"kind": "TrainJob", "metadata": {"name": name}, "status": {"conditions": conditions}}


class NotFound(Exception):
    status = 404


class Resource(str):
    """kubernetes.core's resource of a kind, as the cluster uses it: its name and its collection's path."""

    def path(self, namespace=None):
        return "/fake/namespaces/%s/%s" % (namespace, self)


class Response(object):
    def __init__(self, body):
        self.data = json.dumps(body).encode("utf-8")


class FakeService(object):
    """kubernetes.core's K8sService as the cluster uses it: find, find_resource, client.delete, and the dynamic
    client's raw GET of a list (client.client.request, as ListWatch.list reads the pods). SCRIPT: per kind, a list of
    answers (a value, or an exception to raise), the last one repeated."""

    def __init__(self, script):
        self.script, self.calls = dict((kind, list(answers)) for kind, answers in script.items()), []
        self.client = self
        self.deleted = []

    def _answer(self, kind, name, selectors):
        self.calls.append((kind, name, tuple(selectors or ())))
        answers = self.script[kind]
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def find(self, kind, api_version, name=None, namespace=None, label_selectors=None, hidden_fields=None):
        answer = self._answer(kind, name, label_selectors)
        if kind == "TrainJob":
            return {"resources": [answer[name]] if name in answer else []}
        return {"resources": answer}

    def request(self, method, path, serialize=True, label_selector=None, **params):
        assert method == "get" and serialize is False and "watch" not in params, (method, serialize, params)
        return Response({"items": self._answer(path.rsplit("/", 1)[-1], None, [label_selector] if label_selector else []), "metadata": {}})

    def find_resource(self, kind, api_version, fail=False):
        return Resource(kind)

    def delete(self, resource, name=None, namespace=None):
        self.deleted.append((resource, name, namespace))
        if name == "gone":
            raise NotFound("not found")


BIG_CUT = {"kept": 10, "size": 100, "max_bytes": 10, "lines_dropped": 9}


@pytest.fixture(name="logs_read")
def fixture_logs_read(monkeypatch):
    """pod_log replaced: each read recorded with its tail; a pod named *-broken cannot be read, one named *-gone was
    removed (the API server's 404 for its log)."""
    reads = []

    def pod_log(dynamic, item, tail_lines=None, max_bytes=None, cuts=None):
        reads.append((item["metadata"]["name"], tail_lines))
        if item["metadata"]["name"].endswith("-broken"):
            raise RuntimeError("Connection refused")
        if item["metadata"]["name"].endswith("-gone"):
            raise RuntimeError('(404) Reason: Not Found HTTP response body: {"kind":"Status","reason":"NotFound","code":404}')
        if item["metadata"]["name"].endswith("-big") and cuts is not None:
            cuts[item["metadata"]["name"]] = BIG_CUT
        return "log of %s\n" % item["metadata"]["name"]

    monkeypatch.setattr(cluster_module, "pod_log", pod_log)
    monkeypatch.setattr(cluster_module, "dynamic_client_of", lambda service: None)
    return reads


def cluster_with(script, **options):
    """A cluster that polls (watch False: the fall back's rule) unless OPTIONS say otherwise."""
    options.setdefault("watch", False)
    clock = Clock()
    cluster = cluster_module.Cluster({"context": "ctx"}, "test", "burnin", clock=clock, sleep=clock.sleep, **options)
    cluster.service = FakeService(script)
    return cluster, clock


def test_wait_polls_until_every_job_ended_and_reads_ended_pods_once(logs_read):
    running = {"a": trainjob("a"), "b": trainjob("b")}
    ended = {"a": trainjob("a", "Complete"), "b": trainjob("b", "Failed")}
    pods = [pod("a-node-0", "a", ended=True), pod("b-node-0", "b")]
    cluster, clock = cluster_with({"TrainJob": [running, running, running, running, ended], "Pod": [pods]}, poll_interval=4)
    waited = cluster.wait(["a", "b"], 600)
    assert waited["a"]["outcome"] == "Complete" and waited["b"]["outcome"] == "Failed"
    assert waited["a"]["reason"] == "Done: m"
    assert waited["a"]["polls"] == 3  # two reads per look: a and b
    assert clock.sleeps == [1.0, 2.0]
    assert [p["metadata"]["name"] for p in waited["a"]["pods"]] == ["a-node-0"]
    # The ended pod's log read once, in full, though the wait looked three times; the running pod's never.
    assert logs_read == [("a-node-0", None)]
    assert waited["a"]["logs"] == {"a-node-0": "log of a-node-0\n"} and waited["b"]["logs"] == {}
    assert waited["a"]["logs_cut"] == {} and waited["b"]["logs_cut"] == {}


def test_wait_without_record_pods_reads_no_pod():
    cluster, dummy = cluster_with({"TrainJob": [{"a": trainjob("a", "Complete")}], "Pod": [[]]}, record_pods=False)
    waited = cluster.wait(["a"], 10)
    assert waited["a"]["outcome"] == "Complete" and waited["a"]["pods"] == []
    assert [call[0] for call in cluster.service.calls] == ["TrainJob"]


def test_wait_times_out_with_the_conditions_seen():
    cluster, clock = cluster_with({"TrainJob": [{"a": trainjob("a")}], "Pod": [[]]}, poll_interval=10)
    waited = cluster.wait(["a"], 30)
    assert waited["a"]["outcome"] == "Timeout"
    assert "after 30 s" in waited["a"]["reason"]
    assert clock.now == 30


def test_wait_unreachable_only_after_the_grace():
    cluster, clock = cluster_with({"TrainJob": [RuntimeError("Connection refused")], "Pod": [[]]}, poll_interval=5, unreachable_grace=20)
    waited = cluster.wait(["a"], 600)
    assert waited["a"]["outcome"] == "Unreachable"
    assert waited["a"]["error"]["category"] == "Unreachable"
    assert 20 <= clock.now < 30


def test_wait_of_a_deleted_job_is_an_error_at_once():
    cluster, clock = cluster_with({"TrainJob": [{}], "Pod": [[]]})
    waited = cluster.wait(["a"], 600)
    assert waited["a"]["outcome"] == "Error" and "it was deleted" in waited["a"]["reason"]
    assert clock.sleeps == []


def test_logs_tail_workers_whole_launcher_and_keep_what_the_wait_read(logs_read):
    now = [pod("j-node-0", "j"), pod("j-launcher-0", "j", replicated="launcher"), pod("j-node-1", "j", started=False), pod("j-node-2-broken", "j")]
    removed = pod("j-node-3", "j", ended=True)
    cluster, dummy = cluster_with({"Pod": [now]}, tail_lines=50)
    cut = {"kept": 10, "size": 100, "max_bytes": 10, "lines_dropped": 9}
    collected = cluster.logs("j", {"pods": now + [removed], "logs": {"j-node-3": "early\n"}, "logs_cut": {"j-node-3": cut}})
    assert sorted(logs_read) == [("j-launcher-0", None), ("j-node-0", 50), ("j-node-2-broken", 50)]
    by_name = dict((entry["item"]["metadata"]["name"], entry) for entry in collected["results"])
    assert by_name["j-node-3"]["log"] == "early\n"
    # The wait's cut of a removed pod's log is carried into the collected logs.
    assert by_name["j-node-3"]["cut"] == cut and list(collected["summary"]["cut"]) == ["j-node-3"]
    assert "has started" in by_name["j-node-1"]["msg"]
    assert "refused" in by_name["j-node-2-broken"]["msg"]
    assert collected["summary"]["pods"] == 5 and collected["summary"]["collected"] == 3
    assert cluster.service.calls == [("Pod", None, ("%s in (j)" % JOBSET,))]


def test_wait_marks_the_logs_it_read_of_pods_ended_for_good(logs_read):
    # a-node-0 had ended for good (Succeeded); a-node-1's container ended but the pod may run it again (Running).
    again = pod("a-node-1", "a")
    again["status"]["containerStatuses"][0]["lastState"] = {"terminated": {"exitCode": 1}}
    cluster, dummy = cluster_with({"TrainJob": [{"a": trainjob("a", "Complete")}], "Pod": [[pod("a-node-0", "a", ended=True), again]]})
    waited = cluster.wait(["a"], 60)
    assert sorted(waited["a"]["logs"]) == ["a-node-0", "a-node-1"] and waited["a"]["logs_final"] == ["a-node-0"]


def test_logs_reuse_what_the_wait_read_of_a_pod_ended_for_good_and_read_the_rest(logs_read):
    ended = [pod("j-launcher-0", "j", replicated="launcher", ended=True), pod("j-node-0", "j", ended=True), pod("j-node-1-big", "j", ended=True)]
    running = pod("j-node-2", "j")
    cluster, dummy = cluster_with({"Pod": [ended + [running]]}, tail_lines=2)
    whole = "".join("line %d\n" % i for i in range(5))
    waited = {
        "pods": ended + [running],
        "logs": {"j-launcher-0": whole, "j-node-0": whole, "j-node-1-big": whole, "j-node-2": "early\n"},
        "logs_cut": {"j-node-1-big": BIG_CUT},
        "logs_final": ["j-launcher-0", "j-node-0", "j-node-1-big"],
    }
    collected = cluster.logs("j", waited)
    by_name = dict((entry["item"]["metadata"]["name"], entry["log"]) for entry in collected["results"])
    # The launcher whole and a worker's tail from the wait's read; a tail of a cut log, and a running pod, read again.
    assert by_name["j-launcher-0"] == whole and by_name["j-node-0"] == "line 3\nline 4\n"
    assert sorted(logs_read) == [("j-node-1-big", 2), ("j-node-2", 2)]
    assert by_name["j-node-2"] == "log of j-node-2\n"


def test_a_log_the_wait_read_before_the_pod_ended_for_good_is_read_again(logs_read):
    now = pod("j-node-0", "j", ended=True)
    cluster, dummy = cluster_with({"Pod": [[now]]}, tail_lines=5)
    collected = cluster.logs("j", {"pods": [now], "logs": {"j-node-0": "first run\n"}, "logs_final": []})
    assert logs_read == [("j-node-0", 5)] and collected["results"][0]["log"] == "log of j-node-0\n"


def test_logs_read_whole_the_jobs_named_for_this_call(logs_read):
    # A node stage reads every node pod whole (module_utils/burnin/stage_run.py passes its plan's whole_logs_of).
    now = [pod("j-node-0", "j"), pod("j-launcher-0", "j", replicated="launcher")]
    cluster, dummy = cluster_with({"Pod": [now]}, tail_lines=50)
    cluster.logs("j", {}, whole_logs_of=["node"])
    assert sorted(logs_read) == [("j-launcher-0", 50), ("j-node-0", None)]


def test_logs_listing_retried_then_failed_for_good():
    cluster, clock = cluster_with({"Pod": [RuntimeError("Connection refused")]}, unreachable_grace=10)
    with pytest.raises(ClusterCallFailed) as failed:
        cluster.logs("j")
    assert failed.value.what == "listing the pods of TrainJob j"
    assert failed.value.error["category"] == "Unreachable"
    assert clock.now >= 10


def test_delete_tolerates_gone_and_waits_for_the_pods():
    cluster, clock = cluster_with({"Pod": [[pod("a-node-0", "a")], [pod("a-node-0", "a")], []]}, poll_interval=2)
    cluster.delete(["a", "gone"])
    assert [name for dummy, name, dummy_ns in cluster.service.deleted] == ["a", "gone"]
    assert len([call for call in cluster.service.calls if call[0] == "Pod"]) == 3
    assert clock.sleeps == [1.0, 2.0]


@pytest.mark.parametrize("phase, holds", [("Running", True), ("Pending", True), ("Succeeded", False), ("Failed", False)])
def test_delete_waits_for_the_pods_that_hold_their_node_only(phase, holds):
    # A pod that ended holds no node while it waits for its removal (its grace period): the scheduler does not count it
    # and the kubelet has freed its devices (docs/stages.md, "Waits"). One that runs or starts still does.
    left = dict(pod("a-node-0", "a"), status={"phase": phase})
    cluster, clock = cluster_with({"Pod": [[left], []]}, poll_interval=2)
    cluster.delete(["a"])
    assert len([call for call in cluster.service.calls if call[0] == "Pod"]) == (2 if holds else 1)
    assert clock.sleeps == ([1.0] if holds else [])


def test_delete_refused_raises_with_what():
    cluster, dummy = cluster_with({"Pod": [[]]})

    def refused(resource, name=None, namespace=None):
        raise RuntimeError(
            "(403)\nReason: Forbidden\nHTTP response body: "
            '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"trainjobs.trainer.kubeflow.org \\"a\\" is forbidden: '
            'User \\"system:serviceaccount:burnin:runner\\" cannot delete resource \\"trainjobs\\" in API group \\"trainer.kubeflow.org\\" '
            'in the namespace \\"burnin\\"","reason":"Forbidden","code":403}'
        )

    cluster.service.delete = refused
    with pytest.raises(ClusterCallFailed) as failed:
        cluster.delete(["a"])
    assert failed.value.what == "deleting TrainJob/a"
    assert failed.value.error["category"] == "Forbidden"


REFUSED = "admission webhook denied: TrainingRuntime x must be created before the TrainJob"


@pytest.mark.parametrize("check_mode", [False, True])
def test_kubernetes_cores_runner_applies_every_object_again_after_a_refusal_but_in_check_mode(monkeypatch, check_mode):
    # The runner's path (diff mode; check mode): the whole call again, CACHE_DELAY_SECONDS apart.
    answers = [{"failed": True, "msg": REFUSED}] * 2 + [{"changed": True}]
    calls = []

    def run_k8s(params, check_mode, diff, name):
        calls.append((params["server_side_apply"], check_mode, diff))
        return answers[len(calls) - 1]

    monkeypatch.setattr(cluster_module, "run_k8s", run_k8s)
    cluster, clock = cluster_with({}, field_manager="fm", force_conflicts=False)
    objects = [{"kind": "TrainJob", "metadata": {"name": "a"}}]
    if check_mode:
        # A dry run stores no runtime: the TrainJob is refused however long one waits, so no retry.
        with pytest.raises(ClusterCallFailed) as failed:
            cluster.apply(objects, check_mode=True)
        assert len(calls) == 1 and failed.value.what == "applying TrainJob/a"
        assert failed.value.outcome["failed"] is True
        return
    assert cluster.apply(objects, diff=True) == {"changed": True}
    assert calls == [({"field_manager": "fm", "force_conflicts": False}, False, True)] * 3
    assert clock.sleeps == [cluster_module.CACHE_DELAY_SECONDS] * 2


@pytest.mark.parametrize("refusals, applied", [(0, True), (1, True), (10, True), (11, False)])
def test_a_connected_cluster_applies_the_refused_trainjob_alone_again_up_to_the_retries(monkeypatch, refusals, applied):
    # apply_with asks AGAIN after each failed object: the runtime's refusal of the TrainJob, CACHE_RETRIES times at most
    # (10, a second apart); another error is never retried.
    asked = []

    def apply_with(service, params, absent_namespace=None, again=None):
        for tries in range(1, refusals + 1):
            asked.append(tries)
            if not again(REFUSED, tries):
                return {"failed": True, "msg": REFUSED}
        assert not again("Forbidden: cannot patch trainjobs", 1)
        return {"changed": True}

    monkeypatch.setattr(cluster_module, "apply_with", apply_with)
    cluster, clock = cluster_with({})
    objects = [{"kind": "TrainJob", "metadata": {"name": "a"}}]
    if applied:
        assert cluster.apply(objects) == {"changed": True}
    else:
        with pytest.raises(ClusterCallFailed):
            cluster.apply(objects)
    assert clock.sleeps == [1] * min(refusals, 10) and asked == list(range(1, refusals + 1))


def test_only_the_first_apply_skips_the_reads_of_a_namespace_found_missing(monkeypatch):
    given = []

    def apply_with(service, params, absent_namespace=None, again=None):
        given.append(absent_namespace)
        return {"changed": True}

    monkeypatch.setattr(cluster_module, "apply_with", apply_with)
    cluster, dummy = cluster_with({}, absent_namespace="burnin")
    objects = [{"kind": "TrainJob", "metadata": {"name": "a", "namespace": "burnin"}}]
    cluster.apply(objects)
    cluster.apply(objects)
    cluster.apply(objects)
    # the first apply created the namespace and its objects: any later apply reads them
    assert given == ["burnin", None, None]


@pytest.mark.parametrize(
    "connected, check_mode, diff, direct",
    [(True, False, False, True), (True, True, False, False), (True, False, True, False), (False, False, False, False)],
)
def test_apply_uses_the_connected_client_only_outside_check_and_diff_mode(monkeypatch, connected, check_mode, diff, direct):
    used = []
    monkeypatch.setattr(cluster_module, "run_k8s", lambda params, check_mode, diff, name: used.append(("runner", check_mode, diff)) or {"changed": True})
    monkeypatch.setattr(
        cluster_module, "apply_with", lambda service, params, absent_namespace=None, again=None: used.append(("direct", service)) or {"changed": True}
    )
    cluster, dummy = cluster_with({})
    if not connected:
        cluster.service = None
    cluster.apply([{"kind": "ConfigMap", "metadata": {"name": "a"}}], check_mode=check_mode, diff=diff)
    assert used == ([("direct", cluster.service)] if direct else [("runner", check_mode, diff)])


def test_a_log_the_wait_cut_is_named_in_the_wait_and_in_the_logs(logs_read):
    ended = pod("a-node-0-big", "a", ended=True)
    cluster, dummy = cluster_with({"TrainJob": [{"a": trainjob("a", "Complete")}], "Pod": [[ended], []]})
    waited = cluster.wait(["a"], 60)
    assert waited["a"]["logs_cut"] == {"a-node-0-big": BIG_CUT}
    # The pod is gone when the logs are read: its early log and its cut stand.
    collected = cluster.logs("a", waited["a"])
    assert collected["results"][0]["cut"] == BIG_CUT and list(collected["summary"]["cut"]) == ["a-node-0-big"]


FORBIDDEN_WATCH = (
    "(403)\nReason: Forbidden\nHTTP response body: "
    '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"trainjobs.trainer.kubeflow.org is forbidden: '
    'User \\"runner\\" cannot watch resource \\"trainjobs\\"","reason":"Forbidden","code":403}'
)


class FakeListWatch(object):
    """A ListWatch of plugin_utils/k8s_in_process.py answering from a script: LISTED (the list's items), WATCHES (per
    watch request: a list of (event, seconds it takes) or an exception). A watch past the script blocks until stop(),
    as a quiet stream does; GATE, when given, is waited for before each event."""

    def __init__(self, clock, listed, watches, gate=None, delivered=None):
        self.clock, self.listed, self.watches, self.gate, self.delivered = clock, listed, list(watches), gate, delivered
        self.calls = []
        self.stopped = threading.Event()

    def path(self):
        return "/fake"

    def list(self):
        self.calls.append("list")
        return {"items": self.listed, "metadata": {"resourceVersion": "10"}}

    def watch(self, resource_version, seconds):
        self.calls.append(("watch", resource_version))
        if not self.watches:
            self.stopped.wait(10)
            return iter(())
        script = self.watches.pop(0)
        if isinstance(script, Exception):
            raise script
        return self._stream(script)

    def _stream(self, script):
        for event, took in script:
            if self.gate is not None:
                assert self.gate.wait(10)
            self.clock.now += took
            yield event
            if self.delivered is not None:
                self.delivered.set()

    def stop(self):
        self.stopped.set()

    def interrupt(self):
        # The blocked watch ends; this fake's later ones end at once (as a real one after a quiet watch window).
        self.stopped.set()


def watched_cluster(script, sources, **options):
    cluster, clock = cluster_with(script, watch=True, **options)
    made = []

    def source(kind, api_version, field_selector=None, label_selector=None, hidden_fields=()):
        made.append((kind, field_selector, label_selector))
        return sources[kind](clock)

    cluster._source = source  # pylint: disable=protected-access
    return cluster, clock, made


def modified(obj):
    return {"type": "MODIFIED", "object": dict(obj, metadata=dict(obj["metadata"], resourceVersion="11"))}


def test_wait_watches_and_sees_the_end_when_it_happens():
    sources = {"TrainJob": lambda clock: FakeListWatch(clock, [trainjob("a")], [[(modified(trainjob("a", "Complete")), 11.2)]])}
    cluster, clock, made = watched_cluster({}, sources, record_pods=False)
    waited = cluster.wait(["a"], 600)
    assert waited["a"]["outcome"] == "Complete"
    assert clock.now == pytest.approx(11.2) and clock.sleeps == []
    assert waited["a"]["polls"] == 2  # one list, one watch
    assert made == [("TrainJob", "metadata.name=a", None)]
    assert cluster.service.calls == []


def test_wait_watches_the_pods_in_a_thread_and_reads_an_ended_pods_log_before_it_goes(logs_read):
    # The pod ends (seen by the pod watch only) and is removed before the jobs' end: its log is what the watch read.
    delivered = threading.Event()
    ended_pod = {"type": "MODIFIED", "object": pod("a-node-0", "a", ended=True)}
    sources = {
        "TrainJob": lambda clock: FakeListWatch(
            clock, [trainjob("a"), trainjob("b")], [[(modified(trainjob("a", "Complete")), 3), (modified(trainjob("b", "Failed")), 1)]], gate=delivered
        ),
        "Pod": lambda clock: FakeListWatch(clock, [pod("a-node-0", "a")], [[(ended_pod, 0)]], delivered=delivered),
    }
    cluster, dummy, made = watched_cluster({"Pod": [[]]}, sources)
    waited = cluster.wait(["a", "b"], 600)
    assert (waited["a"]["outcome"], waited["b"]["outcome"]) == ("Complete", "Failed")
    assert [p["status"]["phase"] for p in waited["a"]["pods"]] == ["Succeeded"]
    assert waited["a"]["logs"] == {"a-node-0": "log of a-node-0\n"} and logs_read == [("a-node-0", None)]
    assert made == [("TrainJob", None, None), ("Pod", None, "%s in (a,b)" % JOBSET)]
    # The last look lists the pods once, as a poll would have.
    assert [call[0] for call in cluster.service.calls] == ["Pod"]


def test_wait_polls_when_the_trainjobs_cannot_be_watched():
    sources = {"TrainJob": lambda clock: FakeListWatch(clock, [trainjob("a")], [RuntimeError(FORBIDDEN_WATCH)])}
    cluster, clock, dummy = watched_cluster({"TrainJob": [{"a": trainjob("a")}, {"a": trainjob("a", "Complete")}]}, sources, record_pods=False)
    waited = cluster.wait(["a"], 600)
    assert waited["a"]["outcome"] == "Complete"
    assert clock.sleeps == [1.0]
    assert waited["a"]["polls"] == 4  # the list and the refused watch, then two polls


def test_delete_watches_the_pods_go():
    gone = {"type": "DELETED", "object": pod("a-node-0", "a")}
    sources = {"Pod": lambda clock: FakeListWatch(clock, [pod("a-node-0", "a")], [[(gone, 4)]])}
    cluster, clock, made = watched_cluster({"Pod": [[pod("a-node-0", "a")]]}, sources)
    cluster.delete(["a"])
    assert made == [("Pod", None, "%s in (a)" % JOBSET)]
    assert clock.sleeps == [] and clock.now == 4
    assert not [call for call in cluster.service.calls if call[0] == "Pod"]


def test_delete_watch_ends_when_the_pods_left_have_ended():
    # The MPI workers JobSet stops when the launcher is done: Failed, deleted, removed only at their grace period's end.
    stopped = dict(pod("a-node-0", "a"), status={"phase": "Failed"})
    ended = {"type": "MODIFIED", "object": stopped}
    sources = {"Pod": lambda clock: FakeListWatch(clock, [pod("a-node-0", "a")], [[(ended, 2), ({"type": "DELETED", "object": stopped}, 30)]])}
    cluster, clock, dummy = watched_cluster({"Pod": [[]]}, sources)
    cluster.delete(["a"])
    assert clock.now == 2


def preempted(obj):
    conditions = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": "Preempted by pod 1234 on node n1"}]
    return dict(obj, metadata=dict(obj["metadata"], deletionTimestamp="2026-12-06T10:00:00Z"), status=dict(obj["status"], conditions=conditions))


def test_a_preempted_pod_ends_the_wait_once_nothing_else_runs_without_waiting_for_the_timeout():
    # The TrainJob never changes (its pod's replacement stays pending, pinned where the workload now runs): only the
    # pod watch sees the preemption, and wakes the TrainJobs' watch.
    pending = {
        "metadata": {"name": "a-node-0-2", "namespace": "burnin", "labels": {JOBSET: "a", REPLICATED: "node"}},
        "spec": {},
        "status": {"phase": "Pending"},
    }
    events = [({"type": "MODIFIED", "object": preempted(pod("a-node-0", "a"))}, 5), ({"type": "ADDED", "object": pending}, 1)]
    sources = {
        "TrainJob": lambda clock: FakeListWatch(clock, [trainjob("a")], []),
        "Pod": lambda clock: FakeListWatch(clock, [pod("a-node-0", "a")], [events]),
    }
    cluster, clock, dummy = watched_cluster({"Pod": [[]]}, sources)
    waited = cluster.wait(["a"], 3600)
    assert waited["a"]["outcome"] == "Preempted", waited["a"]
    assert "preempted pod a-node-0 on node n1 (Preempted by pod 1234 on node n1)" in waited["a"]["reason"]
    assert clock.now < 60


def test_a_preemption_does_not_end_the_wait_while_another_pod_of_the_job_runs():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import settled_by_preemption

    victim, other = preempted(pod("a-node-0", "a")), pod("a-node-1", "a", node="n2")
    assert settled_by_preemption([victim, other]) is None
    assert settled_by_preemption([victim, dict(other, status={"phase": "Succeeded"})])["node"] == "n1"
    # A pending replacement (not bound) waits for nothing; a pod being deleted neither.
    assert settled_by_preemption([victim, dict(other, spec={})])["pod"] == "a-node-0"
    assert settled_by_preemption([victim, dict(other, metadata=dict(other["metadata"], deletionTimestamp="t"))]) is not None
    # Without a preemption nothing is settled, whatever the pods do.
    assert settled_by_preemption([dict(other, status={"phase": "Succeeded"})]) is None
    # Only the scheduler's preemption: an eviction's DisruptionTarget (reason EvictionByEvictionAPI) is not one.
    evicted = dict(victim, status={"phase": "Running", "conditions": [{"type": "DisruptionTarget", "reason": "EvictionByEvictionAPI"}]})
    assert settled_by_preemption([evicted]) is None


def test_a_polled_wait_ends_on_a_preemption_too():
    victim = preempted(pod("a-node-0", "a"))
    cluster, clock = cluster_with({"TrainJob": [{"a": trainjob("a")}], "Pod": [[pod("a-node-0", "a")], [victim]]})
    waited = cluster.wait(["a"], 3600)
    assert waited["a"]["outcome"] == "Preempted" and clock.now < 60


class Source(object):
    """A watch that stop() ends; STOPPING runs inside stop(), as a signal's handler may run inside it."""

    def __init__(self, stopping=None):
        self.stops, self.stopping = 0, stopping

    def stop(self):
        self.stops += 1
        if self.stopping:
            self.stopping()


def test_a_cancel_requested_from_a_signal_only_flags_and_set_stops_each_watch_once():
    cancel = cluster_module.Cancel()
    first = Source()
    cancel.watching(first)
    cancel.request(2)
    cancel.request(15)
    # requested: seen by every cluster, but no watch is ended from the handler
    assert cancel.is_set() and cancel.signum == 2 and first.stops == 0
    with pytest.raises(ClusterCallFailed):
        cancel.check("apply")
    cancel.set()
    cancel.set()
    assert first.stops == 1
    later = Source()
    cancel.watching(later)
    assert later.stops == 1


def test_a_second_signal_while_the_watches_are_stopped_does_not_deadlock():
    # Ctrl-C, then Ansible's SIGTERM while set() is still ending the watches: the handler's request() takes no lock
    cancel = cluster_module.Cancel()
    cancel.watching(Source(stopping=lambda: cancel.request(15)))
    done = threading.Event()

    def both():
        cancel.request(2)
        cancel.set()
        done.set()

    thread = threading.Thread(target=both, daemon=True)
    thread.start()
    assert done.wait(5) and cancel.signum == 2


@pytest.mark.parametrize(
    "outcome, running, listed",
    [
        ("Complete", False, False),
        ("Failed", False, False),
        # A pod the wait last saw running (an MPI worker its JobSet ends once the launcher is done): the job ended, its
        # controllers make no more pods, so the wait's last look stands and the pod's log is read now.
        ("Complete", True, False),
        ("Failed", True, False),
        # A job that did not end may make pods after the wait's last look.
        ("Timeout", False, True),
        ("Preempted", False, True),
        ("Unreachable", False, True),
        (None, False, True),
    ],
)
def test_logs_list_the_pods_again_unless_the_job_ended_and_the_wait_saw_its_pods(logs_read, outcome, running, listed):
    seen = [pod("j-launcher-0", "j", replicated="launcher", ended=True), pod("j-node-0", "j", ended=not running)]
    now = [pod("j-launcher-0", "j", replicated="launcher", ended=True), pod("j-node-0", "j", ended=True), pod("j-node-9", "j", ended=True)]
    cluster, dummy = cluster_with({"Pod": [now]})
    collected = cluster.logs("j", {"outcome": outcome, "pods": seen, "logs": {}, "logs_final": []})
    assert bool(cluster.service.calls) is listed
    names = sorted(entry["item"]["metadata"]["name"] for entry in collected["results"])
    assert names == (["j-launcher-0", "j-node-0", "j-node-9"] if listed else ["j-launcher-0", "j-node-0"])
    # Every pod's log is read either way (none was read whole by the wait here).
    assert sorted(name for name, dummy in logs_read) == names


@pytest.mark.parametrize("early", [True, False])
def test_a_pod_of_the_waits_last_look_gone_since_counts_as_removed(logs_read, early):
    seen = [pod("j-launcher-0", "j", replicated="launcher", ended=True), pod("j-node-gone", "j")]
    cluster, dummy = cluster_with({"Pod": [[]]})
    waited = {"outcome": "Complete", "pods": seen, "logs": {"j-node-gone": "early log\n"} if early else {}, "logs_final": []}
    collected = cluster.logs("j", waited)
    assert not cluster.service.calls
    summary = collected["summary"]
    assert summary["removed"] == ["j-node-gone"] and not summary["errors"]
    # What the wait read of it stands; without that it is lost, as a pod a listing no longer shows.
    assert summary["lost"] == ([] if early else ["j-node-gone"])
    assert summary["collected"] == (2 if early else 1)
    # Any other failed read of a pod still there is that pod's error.
    cluster, dummy = cluster_with({"Pod": [[]]})
    broken = cluster.logs("j", dict(waited, pods=[pod("j-node-broken", "j")]))["summary"]
    assert list(broken["errors"]) == ["j-node-broken"] and not broken["removed"]


def test_logs_of_a_job_whose_wait_saw_no_pod_list_them(logs_read):
    cluster, dummy = cluster_with({"Pod": [[pod("j-node-0", "j", ended=True)]]})
    cluster.logs("j", {"outcome": "Complete", "pods": [], "logs": {}})
    assert cluster.service.calls == [("Pod", None, ("%s in (j)" % JOBSET,))]


@pytest.mark.parametrize("version, encoded", [("24.2.0", True), ("25.0.0", False), ("37.0.3", False)])
def test_the_apply_body_is_sent_as_kubernetes_cores_k8s_apply_sends_it(monkeypatch, version, encoded):
    import kubernetes

    from ansible_collections.gpufleet.burnin.plugins.plugin_utils import k8s_in_process

    monkeypatch.setattr(kubernetes, "__version__", version)
    definition = {"kind": "ConfigMap", "metadata": {"name": "a"}}
    body = k8s_in_process._apply_body(definition)  # pylint: disable=protected-access
    assert body == (b'{"kind": "ConfigMap", "metadata": {"name": "a"}}' if encoded else definition)


def unauthorized():
    """The client's own exception for a refused token, as kubernetes.core's discovery raises it (its body verbatim
    from an API server's 401)."""
    from kubernetes.client.exceptions import ApiException

    exc = ApiException(status=401, reason="Unauthorized")
    exc.body = '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
    return exc


def connecting(monkeypatch, answers, **options):
    """A cluster whose client creation (kubernetes.core's discovery) answers ANSWERS in turn: an exception to raise or
    a service; the last one repeated."""
    clock = Clock()
    tries = []

    def k8s_reader(params, name):
        tries.append(params["kind"])
        answer = answers[min(len(tries), len(answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(cluster_module, "k8s_reader", k8s_reader)
    options = dict(dict(poll_interval=1, unreachable_grace=10), **options)
    return cluster_module.Cluster({"host": "https://127.0.0.1:6443"}, "gpufleet.burnin.test", clock=clock, sleep=clock.sleep, **options), clock, tries


def test_a_refused_discovery_is_the_clusters_classified_error_at_once(monkeypatch):
    # A process without kubernetes.core's discovery cache for the server reads it while making the client: the raw
    # exception escaped the action once, and Ansible printed its "Original traceback".
    cluster, clock, tries = connecting(monkeypatch, [unauthorized()])
    with pytest.raises(ClusterCallFailed) as failed:
        cluster.connect("Node", "v1")
    assert failed.value.what == "reading the API server's discovery"
    assert failed.value.error["category"] == "Unauthorized", failed.value.error
    assert "Traceback" not in str(failed.value)
    assert tries == ["Node"] and clock.sleeps == []


def test_a_silent_discovery_is_retried_for_the_grace_then_unreachable(monkeypatch):
    refused = OSError(
        "HTTPSConnectionPool(host='127.0.0.1', port=6443): Max retries exceeded with url: /version"
        " (Caused by NewConnectionError: [Errno 111] Connection refused)"
    )
    cluster, clock, tries = connecting(monkeypatch, [refused], unreachable_grace=10)
    with pytest.raises(ClusterCallFailed) as failed:
        cluster.connect()
    assert failed.value.error["category"] == "Unreachable", failed.value.error
    assert 10 <= clock.now < 20 and len(tries) > 1


def test_a_discovery_that_answers_within_the_grace_connects(monkeypatch):
    service = FakeService({})
    refused = OSError("[Errno 111] Connection refused")
    cluster, clock, tries = connecting(monkeypatch, [refused, refused, service], unreachable_grace=10)
    assert cluster.connect().service is service
    assert len(tries) == 3 and clock.now < 10
