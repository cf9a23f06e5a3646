# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The watch rule of the waits on a cluster (a TrainJob's end, its pods, the isolation's pairs): list once, then
follow the Kubernetes watch API from the list's resourceVersion, so an end is seen when the API server says so,
not at the next poll. Pure: the SOURCE does the requests (plugins/plugin_utils/k8s_in_process.py ListWatch).

- Each watch request asks the server to end it after ``watch_seconds`` (the watch timeout, 5 minutes: client-go's
  reflectors ask for 5 to 10; less when the wait's own timeout is nearer); a watch that ends is opened again from the
  last resourceVersion seen (an event's or a BOOKMARK's). A stream that stays silent longer than the API server's
  bookmark period is a broken one (the SOURCE's read timeout), opened again as below.
- ``410 Gone`` (the resourceVersion is older than the server keeps: an ERROR event or the HTTP status) re-lists.
- A request that cannot reach the cluster (classes Unreachable and TLS of k8s_errors.py), or a stream cut while it is
  read (an API server killed mid-watch), is tried again after 1, 2,
  4, ... s (at most ``backoff_cap``) from the last resourceVersion; the wait ends as Unreachable only when every try
  for ``unreachable_grace`` seconds failed, as in polling.py. Any other error ends it at once.
- A caller whose DONE does not need every object at once (the pods' thread of a wait: it only records what it sees)
  skips the list (``list_first=False``): a watch without a resourceVersion starts with an ADDED event for every object
  there, then follows (the Kubernetes API's "start at most recent"), one request where the list and watch are two.
- When the first watch cannot be opened (RBAC without the ``watch`` verb, a proxy that refuses long requests) the
  state is ``unwatchable``: the caller polls instead (polling.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import UNREACHABLE_CLASSES, classify
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.polling import delays

WATCH_SECONDS = 300
GONE = 410


class WatchError(Exception):
    """An ERROR event of a watch stream: its Status object's text, for k8s_errors.classify."""

    def __init__(self, status):
        # "kind" first: k8s_errors finds a Status object by it.
        shown = dict({"kind": "Status"}, **status) if isinstance(status, dict) else {"kind": "Status", "message": str(status)}
        super(WatchError, self).__init__("watch ERROR event: %s" % json.dumps(shown))
        self.status = status.get("code") if isinstance(status, dict) else None


class _Relist(Exception):
    pass


def _name(obj):
    return ((obj or {}).get("metadata") or {}).get("name")


def _version(obj):
    return ((obj or {}).get("metadata") or {}).get("resourceVersion")


def _status(exc):
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def watch_until(
    source,
    done,
    timeout,
    unreachable_grace,
    watch_seconds=WATCH_SECONDS,
    backoff_cap=8,
    on_event=None,
    context=None,
    server=None,
    clock=time.monotonic,
    sleep=time.sleep,
    list_first=True,
):
    """Follow SOURCE's objects until DONE(objects) is true, the TIMEOUT passes, the cluster stays unreachable or a
    call fails.

    SOURCE has ``list()`` -> the list's JSON ({items, metadata.resourceVersion}) and ``watch(resource_version,
    seconds)`` -> an iterable of watch events ({type, object}); both raise on failure. OBJECTS is {name: object}, as
    the list and the events since left it; DONE may raise (the exception's text is classified as a failed read).
    ON_EVENT(type, object) is called for every listed object (type LISTED) and event. LIST_FIRST false: no list, the
    watches start without a resourceVersion until an event gives one (OBJECTS fill from their ADDED events). Returns a dict: ``state``
    (done, timeout, unreachable, error or unwatchable), ``value`` (OBJECTS), ``error`` (the classified last error, or
    None), ``polls`` (the requests: lists and watches), ``lists``, ``watches``, ``relists`` (after 410 Gone) and
    ``reconnects``.
    """
    start = clock()
    objects, version = {}, None
    counts = {"polls": 0, "lists": 0, "watches": 0, "relists": 0, "reconnects": 0}
    failing_since = last_error = None
    backoff = delays(backoff_cap)
    watched_once = False

    def out(state, **extra):
        return dict(counts, state=state, value=objects, error=extra.pop("error", last_error), **extra)

    def seen(kind, obj):
        name = _name(obj)
        if name is None:
            return
        if kind == "DELETED":
            objects.pop(name, None)
        else:
            objects[name] = obj
        if on_event is not None:
            on_event(kind, obj)

    opened_at = clock()
    while True:
        phase = "list"
        try:
            if version is None and not list_first:
                # Filled again by the watch's ADDED events (after a 410 Gone too).
                objects.clear()
            elif version is None:
                counts["polls"] += 1
                counts["lists"] += 1
                listed = source.list() or {}
                objects.clear()
                for item in listed.get("items") or []:
                    seen("LISTED", item)
                version = _version(listed) or "0"
                failing_since = last_error = None
            if done(objects):
                return out("done", error=None)
            remaining = start + timeout - clock()
            if remaining <= 0:
                return out("timeout")
            phase = "open"
            opened_at = clock()
            counts["polls"] += 1
            counts["watches"] += 1
            stream = source.watch(version, int(max(1, math.ceil(min(watch_seconds, remaining)))))
            phase = "stream"
            watched_once = True
            events = 0
            for event in stream:
                if not events:
                    backoff = delays(backoff_cap)
                    failing_since = last_error = None
                events += 1
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == GONE:
                        raise _Relist()
                    raise WatchError(obj)
                version = _version(obj) or version
                if kind != "BOOKMARK":
                    seen(kind, obj)
                    if done(objects):
                        return out("done", error=None)
                if clock() - start >= timeout:
                    return out("timeout")
            # The server ended the watch (its timeout): open it again, after a pause when it ended at once (a
            # proxy that cuts long requests would otherwise be asked again and again).
            if not events and clock() - opened_at < 1:
                sleep(min(next(backoff), max(0.0, start + timeout - clock())))
            elif not events:
                backoff = delays(backoff_cap)
                failing_since = last_error = None
        except _Relist:
            counts["relists"] += 1
            version = None
        # Classified, never re-raised.
        except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
            if _status(exc) == GONE:
                counts["relists"] += 1
                version = None
                continue
            text = exc.result.get("msg") if isinstance(getattr(exc, "result", None), dict) else str(exc)
            error = classify(text, context=context, server=server)
            if phase == "stream" and not isinstance(exc, WatchError) and error["category"] not in UNREACHABLE_CLASSES:
                # A stream cut while it was read (an API server killed or restarted, a proxy's idle cut: "Connection
                # broken", "Response ended prematurely") is a lost connection, not the server's answer: open it again.
                error = dict(error, category="Unreachable", message="The watch on %s broke: %s" % (server or "the API server", error["message"]))
            last_error = error
            if error["category"] not in UNREACHABLE_CLASSES:
                if phase == "open" and not watched_once:
                    return out("unwatchable", error=error)
                return out("error", error=error)
            now = clock()
            if phase == "stream" and now - opened_at >= 1:
                # The stream stood a while before it broke: the cluster answered until then (a proxy's idle cut).
                failing_since = None
            failing_since = now if failing_since is None else failing_since
            if now - failing_since >= unreachable_grace:
                return out("unreachable", error=error, unreachable_seconds=round(now - failing_since, 1))
            if now - start >= timeout:
                return out("timeout")
            counts["reconnects"] += 1
            sleep(min(next(backoff), max(0.0, start + timeout - now)))


__all__ = ["WATCH_SECONDS", "WatchError", "watch_until"]
