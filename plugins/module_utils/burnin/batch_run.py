# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every cluster of a batch at once (behind gpufleet.burnin.burnin_batch): each cluster's stages, in order, in a thread
of its own, so a slow or dead cluster holds only itself, and one process holds the whole batch where Ansible would
hold a worker per cluster for the length of its TrainJobs.

The protocol: RUN_STAGE(host, stage, record) -> the stage's result (plugin_utils/cluster_stages.py: {record, lines,
...}, or {failed, record, msg, ...}), never raising for a cluster's own failure. A cluster's stages stop at its first
failed stage, as the role's block stops at a failed task. An exception that escapes RUN_STAGE anyway is that
cluster's failure, not the batch's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

# Threads at once: a thread per cluster mostly waits on its watch; past this many the next cluster starts when one ends.
MAX_THREADS = 256


def _one_cluster(host, stages, record, run_stage, cancelled):
    """HOST's STAGES in order from RECORD: {host's last result, with every stage's lines}."""
    lines, steps, diffs, changed, out = [], [], [], False, {"record": record}
    for stage in stages:
        if cancelled():
            out = dict(out, failed=True, msg="%s stage: not started, the run was cancelled" % stage, stage=stage, error=None)
            break
        out = dict(run_stage(host, stage, out["record"]), stage=stage)
        lines.extend(out.get("lines") or [])
        steps.extend(out.get("steps") or [])
        diffs.extend(out.get("diff") or [])
        changed = changed or bool(out.get("changed"))
        if out.get("failed"):
            break
    return dict(out, lines=lines, steps=steps, diff=diffs, changed=changed)


# How long a cancelled batch waits for its clusters' stages to see the cancel before it reports them as they are.
CANCEL_SECONDS = 3.0


def run_batch(clusters, run_stage, cancel=None, max_threads=MAX_THREADS, wait_step=0.5, cancel_seconds=CANCEL_SECONDS, clock=time.monotonic):
    """Every one of CLUSTERS ({host: {'stages': [...], 'record': the result so far}}) through its stages at once, at
    most MAX_THREADS at a time. CANCEL (is_set() and set(), as threading.Event): once it is_set(), the batch set()s it
    from its own thread, starts no further stage, and returns once every cluster's stage ended or CANCEL_SECONDS later
    (a cluster still in its stage then is a failure that says so).
    Returns {host: {record, lines, steps, diff, changed, stage (the last one run), failed and msg when it failed,
    error, seconds}}."""
    results = {}
    lock = threading.Lock()
    ended = threading.Event()
    slots = threading.BoundedSemaphore(max(1, int(max_threads)))

    def cancelled():
        if cancel is None or not cancel.is_set():
            return False
        # set() here, in a thread of the batch: a signal's handler only requests the cancel (plugin_utils/cluster.py)
        cancel.set()
        return True

    def drive(host, spec):
        start = clock()
        try:
            out = _one_cluster(host, spec["stages"], spec["record"], run_stage, cancelled)
        # One cluster's bug is its own failure: the others go on.
        except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
            out = _failed(spec, None, "%s: %s" % (type(exc).__name__, exc))
        finally:
            slots.release()
        out["seconds"] = round(clock() - start, 3)
        with lock:
            results[host] = out
            if len(results) == len(clusters):
                ended.set()

    if not clusters:
        return results
    for host in sorted(clusters):
        while not slots.acquire(timeout=wait_step):
            if cancelled():
                break
        else:
            thread = threading.Thread(target=drive, args=(host, clusters[host]), name="gpufleet-burnin-%s" % host)
            # A daemon: a cancelled batch's process ends without waiting for a thread blocked on a dead cluster.
            thread.daemon = True
            thread.start()
            continue
        # Cancelled while waiting for a slot: this cluster and the rest never start.
        with lock:
            for rest in sorted(clusters):
                if rest not in results and rest >= host:
                    results[rest] = _not_started(clusters[rest])
        break
    cancelled_at = None
    while not ended.wait(wait_step):
        if cancelled():
            cancelled_at = clock() if cancelled_at is None else cancelled_at
            if clock() - cancelled_at >= cancel_seconds:
                break
    with lock:
        return dict((host, results.get(host) or _not_started(clusters[host], "still running when the run was cancelled")) for host in clusters)


def _not_started(spec, why="not started, the run was cancelled"):
    stage = (spec["stages"] or ["fleet"])[0]
    return dict(_failed(spec, stage, "%s stage: %s" % (stage, why)), seconds=0.0)


def _failed(spec, stage, msg):
    """A cluster's failed result that ran nothing more: its record as it was."""
    out = {"failed": True, "record": spec["record"], "lines": [], "steps": [], "diff": [], "changed": False, "error": None, "msg": msg}
    if stage:
        out["stage"] = stage
    return out


__all__ = ["MAX_THREADS", "run_batch"]
