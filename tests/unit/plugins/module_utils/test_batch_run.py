# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""module_utils/burnin/batch_run.py: every cluster's stages at once, against fake clusters (threads that block on
events), never a real one."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.batch_run import MAX_THREADS, run_batch

BOUND = 10  # seconds any wait of these tests may take before it fails


class FakeClusters(object):
    """run_stage for run_batch: records each call; a stage in FAILING fails its cluster, one in RAISING raises, a host
    in HELD blocks until released."""

    def __init__(self, failing=(), raising=(), held=()):
        self.calls, self.failing, self.raising = [], set(failing), set(raising)
        self.held = dict((host, threading.Event()) for host in held)
        self.running, self.most = 0, 0
        self.lock = threading.Lock()

    def __call__(self, host, stage, record):
        with self.lock:
            self.calls.append((host, stage))
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if host in self.held:
                assert self.held[host].wait(BOUND), "never released"
            if (host, stage) in self.raising:
                raise KeyError("a bug in %s" % stage)
            if (host, stage) in self.failing:
                return {
                    "failed": True,
                    "record": dict(record, outcome="Unreachable"),
                    "msg": "cannot reach %s" % host,
                    "lines": [],
                    "error": {"category": "Unreachable"},
                }
            done = list(record.get("done") or []) + [stage]
            return {
                "record": dict(record, done=done),
                "lines": ["%s: %s stage: pass" % (host, stage)],
                "changed": stage == "fleet",
                "steps": [{"name": stage, "seconds": 0}],
            }
        finally:
            with self.lock:
                self.running -= 1


def spec(*stages):
    return {"stages": list(stages), "record": {"cluster": "c"}}


def test_every_cluster_runs_its_own_stages_in_order():
    clusters = FakeClusters()
    out = run_batch({"a": spec("node", "fleet"), "b": spec("fleet"), "c": spec("dcgm", "fleet", "isolation"), "d": spec("node")}, clusters)
    assert [stage for host, stage in clusters.calls if host == "c"] == ["dcgm", "fleet", "isolation"]
    # changed when a stage changed something (the fake's fleet stage), not otherwise
    assert out["d"]["changed"] is False and out["d"]["record"]["done"] == ["node"]
    assert out["a"]["record"]["done"] == ["node", "fleet"] and out["b"]["record"]["done"] == ["fleet"]
    assert out["c"]["lines"] == ["c: dcgm stage: pass", "c: fleet stage: pass", "c: isolation stage: pass"]
    assert out["c"]["stage"] == "isolation" and out["c"]["changed"] is True and len(out["c"]["steps"]) == 3
    assert not any(result.get("failed") for result in out.values())


def test_the_clusters_run_at_once():
    # Each stage waits until every cluster is in its stage: run one after another, they would never all get there.
    barrier = threading.Barrier(5, timeout=BOUND)

    def together(host, stage, record):
        barrier.wait()
        return {"record": record, "lines": [host]}

    out = run_batch(dict(("h%d" % i, spec("fleet")) for i in range(5)), together)
    assert sorted(out) == ["h0", "h1", "h2", "h3", "h4"] and not any(result.get("failed") for result in out.values())


def test_a_failed_stage_ends_its_cluster_only():
    clusters = FakeClusters(failing=[("a", "node")])
    out = run_batch({"a": spec("node", "fleet"), "b": spec("node", "fleet")}, clusters)
    assert out["a"]["failed"] and out["a"]["stage"] == "node" and out["a"]["record"]["outcome"] == "Unreachable"
    assert ("a", "fleet") not in clusters.calls
    assert out["b"]["record"]["done"] == ["node", "fleet"] and not out["b"].get("failed")


def test_a_bug_in_one_cluster_is_its_failure_not_the_batchs():
    clusters = FakeClusters(raising=[("a", "fleet")])
    out = run_batch({"a": spec("fleet", "dcgm"), "b": spec("fleet")}, clusters)
    assert out["a"]["failed"] and "KeyError" in out["a"]["msg"] and out["a"]["record"] == {"cluster": "c"}
    assert ("a", "dcgm") not in clusters.calls and not out["b"].get("failed")


def test_a_slow_cluster_holds_only_itself():
    clusters = FakeClusters(held=["slow"])
    finished = {}

    def run():
        finished.update(run_batch({"slow": spec("fleet"), "fast": spec("node", "fleet")}, clusters))

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + BOUND
    while ("fast", "fleet") not in clusters.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    # The fast cluster went through both its stages while the slow one is still in its first.
    assert ("fast", "fleet") in clusters.calls and not finished
    clusters.held["slow"].set()
    thread.join(BOUND)
    assert not thread.is_alive() and finished["slow"]["record"]["done"] == ["fleet"]


def test_at_most_max_threads_clusters_at_a_time():
    clusters = FakeClusters()

    def slower_than_a_wait_step(host, stage, record):
        # the clusters after the first three wait several wait steps for a slot
        time.sleep(0.05)
        return clusters(host, stage, record)

    out = run_batch(dict(("h%02d" % i, spec("fleet")) for i in range(12)), slower_than_a_wait_step, max_threads=3, wait_step=0.01)
    # every cluster ran, the later ones once a slot was free
    assert len(out) == 12 and clusters.most <= 3 and not any(result.get("failed") for result in out.values())
    assert sorted(host for host, stage in clusters.calls) == sorted(out)


def test_a_bound_below_one_still_runs_one_cluster_at_a_time():
    clusters = FakeClusters()
    out = run_batch({"a": spec("fleet"), "b": spec("fleet")}, clusters, max_threads=0, wait_step=0.01)
    assert clusters.most == 1 and not any(result.get("failed") for result in out.values())


def test_more_clusters_than_max_threads_all_run_and_the_batch_ends():
    # Past MAX_THREADS the next cluster starts when one ends; the batch ends once the last one reported.
    clusters = FakeClusters()
    out = run_batch(dict(("h%03d" % i, spec("fleet")) for i in range(MAX_THREADS + 44)), clusters, wait_step=0.01)
    assert len(out) == MAX_THREADS + 44 and clusters.most <= MAX_THREADS and not any(result.get("failed") for result in out.values())


class Ticks(object):
    """A clock that moves STEP at each call; EVENTS ({tick: callable}) run when the clock reaches their tick."""

    def __init__(self, step=1.0, events=None):
        self.now, self.step, self.events, self.lock = 100.0, step, dict(events or {}), threading.Lock()

    def __call__(self):
        with self.lock:
            self.now += self.step
            now = self.now
        for tick in [tick for tick in self.events if tick <= now]:
            self.events.pop(tick)()
        return now


def test_a_clusters_seconds_are_its_stages_time_on_the_clock():
    out = run_batch({"a": spec("fleet")}, FakeClusters(), clock=Ticks(step=1.23456))
    assert out["a"]["seconds"] == 1.235


class FakeCancel(object):
    """Requested as a signal's handler does (the event), set() by the batch."""

    def __init__(self):
        self.event, self.sets = threading.Event(), []

    def is_set(self):
        return self.event.is_set()

    def set(self):
        self.sets.append(threading.current_thread().name)


def test_a_cancel_starts_nothing_more_and_reports_every_cluster_within_its_bound():
    # One slot: "a" holds it (blocked on its dead cluster), "b" and "c" wait for it; then the cancel.
    clusters = FakeClusters(held=["a"])
    cancel = FakeCancel()
    timer = threading.Timer(0.2, cancel.event.set)
    timer.start()
    start = time.monotonic()
    out = run_batch(
        {"a": spec("fleet"), "b": spec("fleet"), "c": spec("node", "fleet")}, clusters, cancel=cancel, max_threads=1, wait_step=0.05, cancel_seconds=0.3
    )
    took = time.monotonic() - start
    clusters.held["a"].set()
    assert took < 0.2 + 0.3 + 1.0, took
    assert out["a"]["failed"] and "still running when the run was cancelled" in out["a"]["msg"]
    assert out["b"]["msg"] == "fleet stage: not started, the run was cancelled" and out["c"]["msg"] == "node stage: not started, the run was cancelled"
    assert (out["c"]["stage"], out["c"]["seconds"], out["c"]["changed"]) == ("node", 0.0, False)
    assert [host for host, stage in clusters.calls] == ["a"]
    # the cluster still in its stage is left to a daemon thread: the process can end without it
    (held,) = [thread for thread in threading.enumerate() if thread.name == "gpufleet-burnin-a"]
    assert held.daemon
    # the batch, not the handler, ends the watches
    assert cancel.sets and all(name == threading.current_thread().name for name in cancel.sets)


def test_a_cancel_between_stages_stops_the_next_stage():
    cancel = FakeCancel()

    def stage_then_cancel(host, stage, record):
        cancel.event.set()
        return {"record": dict(record, done=[stage]), "lines": [stage]}

    out = run_batch({"a": spec("node", "fleet", "isolation")}, stage_then_cancel, cancel=cancel, wait_step=0.01)
    assert out["a"]["failed"] and out["a"]["stage"] == "fleet" and out["a"]["lines"] == ["node"]
    assert out["a"]["msg"] == "fleet stage: not started, the run was cancelled" and out["a"]["record"]["done"] == ["node"]


def test_a_cancelled_batch_waits_its_bound_on_the_clock_for_the_stages_still_running():
    # Both sides of CANCEL_SECONDS, on the clock: a stage that ends within it reports its own result; one that does not
    # is reported as still running once the clock is CANCEL_SECONDS past the cancel, not a tick earlier or later.
    for release_at, bound, still_running in ((104.0, 5, False), (None, 5, True)):
        clusters, cancel = FakeClusters(held=["a"]), FakeCancel()
        ticks = Ticks(events={release_at: clusters.held["a"].set} if release_at else {})
        seen = []

        def clock():
            now = ticks()
            if threading.current_thread() is threading.main_thread():
                seen.append(now)
            return now

        def cancelled_in_its_stage(host, stage, record, clusters=clusters, cancel=cancel):
            cancel.event.set()
            return clusters(host, stage, record)

        out = run_batch({"a": spec("fleet")}, cancelled_in_its_stage, cancel=cancel, wait_step=0.001, cancel_seconds=bound, clock=clock)
        clusters.held["a"].set()
        assert ("still running when the run was cancelled" in out["a"].get("msg", "")) is still_running, out
        if still_running:
            # the first look is the cancel's time; the last one is BOUND past it
            assert seen[-1] - seen[0] == bound, seen


def test_no_clusters_no_threads():
    assert run_batch({}, FakeClusters()) == {}
