# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The logs of a TrainJob's pods, put together from what is there now and what the wait saw before the pods' controllers
removed them (JobSet ends the MPI workers once the launcher is done; the Job controller removes a failed Job's pods).

Pure: the reads are the caller's (plugins/action/trainjob_logs.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.attribution import cut_note
from ansible_collections.gpufleet.burnin.plugins.module_utils.text import clean, clean_tree

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
# What is kept of each pod: enough to tell later which node ran which rank (spec.nodeName, spec.hostname, labels),
# after the pod is gone, which containers to read, and whether the scheduler preempted it (status.conditions, a few
# short ones: its DisruptionTarget, cluster/trainjobs.py settled_by_preemption()).
POD_HIDDEN = [
    "metadata.managedFields",
    "spec.containers",
    "spec.initContainers",
    "spec.volumes",
    "spec.affinity",
    "spec.tolerations",
    "spec.resourceClaims",
]
TAIL_KEPT = 10
# What is read of one pod's log at most (burnin_log_max_bytes; docs/nccl-corpus.md "What is read of each pod"): a pod's
# output is its image's, and a log of gigabytes must neither fill the controller's memory nor stall the verdict.
MAX_LOG_BYTES = 16 * 1024 * 1024
MIN_LOG_BYTES = 64 * 1024
# Of the cap: the head (NCCL's first lines: version, network, the plugin), the tail (nccl-tests' table and footer, the
# failure lines of a crash) and, between them, the lines that are not NCCL INFO lines (a table whose rows NCCL INFO
# lines interleave, WARN and failure lines); NCCL INFO lines between head and tail are what a cut drops first.
HEAD_SHARE, TAIL_SHARE = 8, 2
INFO_MARK = b" NCCL INFO "
# A whole line without INFO_MARK (a block that has none is not split at all).
NOT_INFO_LINE = re.compile(b"^(?!.*" + re.escape(INFO_MARK) + b").*\n", re.MULTILINE)


class LogBound(object):
    """A pod's log read in chunks (bytes) into at most ``max_bytes``: the head, the tail, and what fits of the lines
    between that are not NCCL INFO lines. Linear: each byte is copied a bounded number of times, and the lines between
    are looked at only until the middle is full; memory is bounded by twice the cap and one chunk. :meth:`result`
    gives (text, cut): cut is None or {size, kept, lines_dropped, max_bytes}."""

    def __init__(self, max_bytes=MAX_LOG_BYTES):
        self.max_bytes = max(int(max_bytes), MIN_LOG_BYTES)
        self.head_budget = self.max_bytes // HEAD_SHARE
        self.tail_budget = self.max_bytes // TAIL_SHARE
        self.middle_budget = self.max_bytes - self.head_budget - self.tail_budget
        self.head = bytearray()
        self.middle = bytearray()
        self.tail = bytearray()
        self.head_open = True
        self.size = 0
        self.dropped_lines = 0

    def feed(self, chunk):
        if not chunk:
            return
        if not isinstance(chunk, (bytes, bytearray)):
            chunk = chunk.encode("utf-8", "replace")
        self.size += len(chunk)
        if self.head_open:
            room = self.head_budget - len(self.head)
            # Whole lines only, while they fit.
            end = chunk.rfind(b"\n", 0, room) if len(chunk) > room else len(chunk) - 1
            if len(chunk) <= room and not self.tail:
                self.head += chunk
                return
            if end >= 0:
                self.head += chunk[: end + 1]
                chunk = chunk[end + 1 :]
            self.head_open = False
        self.tail += chunk
        # A log within max_bytes is kept whole (burnin_log_max_bytes); only a longer one loses its middle.
        if self.size > self.max_bytes and len(self.tail) > 2 * self.tail_budget:
            self._spill()

    def _spill(self):
        """Move what is before the tail's last ``tail_budget`` bytes (from a line's start on) to the middle."""
        over = len(self.tail) - self.tail_budget
        cut = self.tail.find(b"\n", over - 1)
        cut = over if cut < 0 else cut + 1
        block = bytes(self.tail[:cut])
        del self.tail[:cut]
        lines = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
        kept = 0
        # Once the middle is full the lines are only counted.
        # (Searched first: a block of NCCL INFO lines alone, the bulk of a large log, is not split at all. Not by
        # counting the marks: a line may hold two, ranks' lines interleaved, and the block's last line may be cut.)
        if len(self.middle) < self.middle_budget and NOT_INFO_LINE.search(block):
            kept_lines = [line for line in block.split(b"\n")[: block.count(b"\n")] if INFO_MARK not in line]
            joined = b"\n".join(kept_lines) + b"\n" if kept_lines else b""
            room = self.middle_budget - len(self.middle)
            if len(joined) > room:
                joined = joined[: joined.rfind(b"\n", 0, room) + 1]
                # Full: the lines after are only counted.
                self.middle_budget = len(self.middle) + len(joined)
            self.middle += joined
            kept = joined.count(b"\n")
        self.dropped_lines += lines - kept

    def result(self):
        if self.size > self.max_bytes and len(self.tail) > self.tail_budget:
            self._spill()
        data = bytes(self.head + self.middle + self.tail)
        cut = None
        if len(data) < self.size:
            cut = {"size": self.size, "kept": len(data), "lines_dropped": self.dropped_lines, "max_bytes": self.max_bytes}
        # Where a pod's text enters: decoded with replacement, and what no report can hold replaced (module_utils/text.py).
        return clean(data), cut


def bound_text(text, max_bytes=MAX_LOG_BYTES):
    """TEXT (str or bytes) as :class:`LogBound` keeps it: (text, cut)."""
    bound = LogBound(max_bytes)
    bound.feed(text)
    return bound.result()


NO_PODS = "no pods: the TrainJob's pods were never created or scheduled (no kubelet, no capacity, or no JobSet/Trainer controller)"


def pod_name(pod):
    return (pod.get("metadata") or {}).get("name") or ""


def has_ended_once(pod):
    """True when a container of POD has terminated at least once (exited, or restarted after exiting)."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return True
    return any((c.get("state") or {}).get("terminated") or (c.get("lastState") or {}).get("terminated") for c in status.get("containerStatuses") or [])


def has_ended_for_good(pod):
    """True when POD's phase is Succeeded or Failed: no container of it runs again, its log is complete."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def tail_of(text, lines):
    """The last LINES lines of TEXT (all of it when LINES is None), as the API's tailLines gives them."""
    if lines is None or text is None:
        return text
    return "".join(text.splitlines(True)[-int(lines) :]) if int(lines) > 0 else ""


def not_started(pod):
    """Why POD has no log to read (none of its containers has started), or None."""
    status = pod.get("status") or {}
    if status.get("containerStatuses"):
        return None
    return "no container of the pod has started (phase %s)" % (status.get("phase") or "unknown")


def reads_whole(pod, whole_jobs):
    """True when POD's log is read whole: its replicated job (JobSet's label) is one of WHOLE_JOBS (the launcher, whose
    nccl-tests table and header the verdict needs complete)."""
    return ((pod.get("metadata") or {}).get("labels") or {}).get(REPLICATED_JOB) in whole_jobs


def log_entry(pod, text=None, error=None):
    """One result as kubernetes.core.k8s_log returns it in a loop: the pod as ``item`` and ``log``, or a failed read's
    ``msg``. Not k8s_log's ``log_lines``: the same text again, kept per cluster in the controller's memory."""
    if error is not None:
        return {"item": pod, "failed": True, "msg": error}
    return {"item": pod, "log": text}


def collect(current, read, seen=None, early=None, cuts=None):
    """Every pod of the TrainJob and its log.

    CURRENT: the pods there now; READ: pod name -> (log text, error message) for them; SEEN: the wait's last look at each
    pod; EARLY: pod name -> log text the wait read once the pod had ended. Returns ``results`` (k8s_log-shaped, pods there
    now first), ``pods`` (those there now, then those removed) and ``summary`` (counts, names and a note for a person).
    CUTS: pod name -> the cut of its log (:class:`LogBound`), for the logs read only in part: each such entry carries
    ``cut`` and the summary names them.
    """
    # The pods' fields (termination messages, labels) are the cluster's text: made safe here, once (module_utils/text.py);
    # the logs were, when LogBound decoded them.
    current, seen = clean_tree(list(current)), clean_tree(list(seen or []))
    read = dict((name, (text, clean(error))) for name, (text, error) in read.items())
    early, cuts = early or {}, cuts or {}
    names_now = set(pod_name(pod) for pod in current)
    removed = [pod for pod in seen if pod_name(pod) not in names_now]
    results = []
    for pod in current:
        text, error = read.get(pod_name(pod), (None, "not read"))
        if text is None and pod_name(pod) in early:
            # The pod is still there but no longer answers (its node is gone): what the wait read stands.
            text, error = early[pod_name(pod)], None
        results.append(log_entry(pod, text, error if text is None else None))
    lost = []
    for pod in removed:
        if pod_name(pod) in early:
            results.append(log_entry(pod, early[pod_name(pod)]))
        else:
            lost.append(pod_name(pod))
    collected = [r for r in results if "log" in r]
    summary = {
        "pods": len(current) + len(removed),
        "collected": len(collected),
        "removed": [pod_name(pod) for pod in removed],
        "lost": lost,
        "tails": dict((pod_name(r["item"]), r["log"].splitlines()[-TAIL_KEPT:]) for r in collected),
        "errors": dict((pod_name(r["item"]), r["msg"]) for r in results if r.get("failed")),
        "cut": {},
    }
    for entry in collected:
        cut = cuts.get(pod_name(entry["item"]))
        if cut:
            entry["cut"] = cut
            summary["cut"][pod_name(entry["item"])] = cut_note(pod_name(entry["item"]), cut)
    summary["note"] = note(summary)
    return {"results": results, "pods": list(current) + removed, "summary": summary}


def note(summary):
    if not summary["pods"]:
        return NO_PODS
    text = "logs of %d of %d pods collected" % (summary["collected"], summary["pods"])
    if summary["removed"]:
        text += "; %d removed by their controllers once the job ended" % len(summary["removed"])
        if summary["lost"]:
            text += " (%s before its log could be read)" % ", ".join(summary["lost"])
    if summary["errors"]:
        text += "; unreadable: %s" % ", ".join(sorted(summary["errors"]))
    if summary.get("cut"):
        text += "; cut at burnin_log_max_bytes: %s" % ", ".join(sorted(summary["cut"]))
    return text


def write_logs(directory, results):
    """Write each log of RESULTS (collect()'s) to DIRECTORY/<pod>.log on the controller, the directory made when there
    is one; return (the paths written, whether any file changed). One process writes them all: a copy task per pod
    would start a module process per log. Pod names come from the API server: files.write_file keeps each inside
    DIRECTORY (the name slugged to a plain file name) and replaces a planted symlink instead of writing through it."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.files import slug, write_file

    logs = [(entry["item"]["metadata"]["name"], entry["log"]) for entry in results if "log" in entry]
    paths, changed = [], False
    for name, text in logs:
        # A pod name that is no plain file name (never a real API server's: pod names are DNS subdomains) is slugged.
        path, written = write_file(directory, "%s.log" % slug(name), text or "")
        paths.append(path)
        changed = changed or written
    return paths, changed
