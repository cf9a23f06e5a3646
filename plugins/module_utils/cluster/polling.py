# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The polling rule of every wait the collection does on a cluster, and how it tells "still running" from "gone".

A wait polls at once, then after 1, 2, 4, ... seconds, never more than ``poll_interval`` apart: a short job is seen
finished within a second or two, a long one costs one request per ``poll_interval``. A poll that cannot reach the
cluster (classes Unreachable and TLS of plugins/module_utils/cluster/k8s_errors.py) does not end the wait at once: only when
every poll for ``unreachable_grace`` seconds failed so does the wait end, as Unreachable, with the last error. Any
other error ends it at once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import UNREACHABLE_CLASSES, classify

FIRST_DELAY = 1.0


def delays(poll_interval):
    """1, 2, 4, ... seconds, capped at poll_interval (at least 1)."""
    delay, cap = FIRST_DELAY, max(1.0, float(poll_interval))
    while True:
        yield min(delay, cap)
        delay *= 2


def poll_until(read, done, timeout, poll_interval, unreachable_grace, context=None, server=None, clock=time.monotonic, sleep=time.sleep):
    """Call READ() until DONE(value) is true, the TIMEOUT passes, or the cluster stays unreachable.

    READ returns a value or raises; the exception's text is classified. Returns a dict: ``state`` (done, timeout,
    unreachable or error), ``value`` (the last value read), ``error`` (the classified last error, or None) and
    ``polls``.
    """
    start = clock()
    failing_since = last_error = None
    polls = 0
    value = None
    waits = delays(poll_interval)
    while True:
        polls += 1
        try:
            value = read()
        # Classified, never re-raised.
        except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
            error = classify(getattr(exc, "result", {}).get("msg") if hasattr(exc, "result") else str(exc), context=context, server=server)
            last_error = error
            if error["category"] not in UNREACHABLE_CLASSES:
                return {"state": "error", "value": value, "error": error, "polls": polls}
            now = clock()
            failing_since = now if failing_since is None else failing_since
            if now - failing_since >= unreachable_grace:
                return {"state": "unreachable", "value": value, "error": error, "polls": polls, "unreachable_seconds": round(now - failing_since, 1)}
        else:
            failing_since = last_error = None
            if done(value):
                return {"state": "done", "value": value, "error": None, "polls": polls}
        now = clock()
        if now - start >= timeout:
            return {"state": "timeout", "value": value, "error": last_error, "polls": polls}
        sleep(min(next(waits), max(0.0, start + timeout - now)))
