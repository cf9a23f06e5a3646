# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""One grammar for the lines of a pod's or a job's log, read before any reader (nccl_results, transport) sees them.

A line is ``prefix* body``. The prefixes launchers and log collectors put in front of a program's line, any stack of
them, in any order (at most MAX_PREFIXES, each matched at a position, no copies, so a line costs linear time):

- Kubernetes log collectors' JSON lines (Docker's json-file ``{"log": "...", "stream": ..., "time": ...}``, Fluent
  Bit/Vector ``{"message": ...}``): the line is its ``log``/``message``/``msg`` string; only as the outermost form;
- the CRI log format ``<RFC 3339 time> stdout|stderr F|P `` (the kubelet's files under /var/log/pods);
- CloudWatch Logs' console export ``| <ISO time> | `` (aws/aws-ofi-nccl#889), also with its separator lost (the time
  running into the line) and the line repeated after `` | `` (the repeat, with its own prefixes, is cut off the
  message);
- journald/syslog ``Mmm dd HH:MM:SS host ident[pid]: `` and ``<ISO time> host ident[pid]: `` (journalctl's short
  and short-iso forms);
- dates: RFC 3339/ISO ``2026-01-02T10:11:12.123Z `` (``kubectl logs --timestamps``), ``2026-01-02 10:11:12,345 ``,
  bracketed ``[2026-01-02 10:11:12] `` (NCCL_DEBUG_TIMESTAMP_FORMAT, collectors), ctime ``Fri Jan  2 10:11:12 2026``
  (Open MPI ``--timestamp-output``);
- ``[1,0]<stdout>:`` (Open MPI ``--tag-output``), ``[default0]:`` / ``[rank0]:`` (torchrun ``--tee``/``--role``,
  PyTorch's rank-prefixed C++ logs), ``[pod/name/container] `` (``kubectl logs --prefix``), ``0: `` (srun
  ``--label``, right-aligned), ``host: `` (pdsh, clush: any host name, an IP);
- spaces and tabs between them (a test harness that re-indents a log).

A ``host: `` label followed by ``Test ... failure`` is not a prefix: that is nccl-tests' own failure line
(``<host>: Test NCCL failure common.cu:...``, NVIDIA/nccl-tests src/common.h), whose host the reader needs.

The NCCL marker is found by its own grammar, not at a position: ``host:pid:tid [dev] [file:line ][(function) ]NCCL
LEVEL msg`` (NVIDIA/nccl src/debug.cc; ``(function)`` since NCCL 2.28), where host is any host name NCCL prints
(gethostname cut at the first dot unless NCCL_HOSTID: RFC 1123 labels, underscores, upper case, IPs). So a prefix this
grammar does not know still leaves the marker readable.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

MAX_PREFIXES = 8  # prefixes stripped from one line: bounded, so a line of repeated tags stays linear
MAX_JSON_LINE = 1 << 20  # a collector's JSON line longer than this is left as it is (no decode of a huge line)

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d{1,9})?)?(?: ?(?:Z|UTC|[+-]\d\d:?\d\d))?"
_HOST = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252})"

# name, pattern (matched at the position after any spaces). Order matters only where two could match: the
# syslog forms before the bare dates they start with, srun's number before a host label.
_PREFIXES = (
    ("cri", re.compile(_ISO + r" (?:stdout|stderr) [FP] ")),
    # also with the separator lost in a paste, the time running into the line (aws/aws-ofi-nccl#889's first comment)
    ("cloudwatch", re.compile(r"\| " + _ISO + r"(?: \| ?)?")),
    ("syslog", re.compile(r"(?:" + _MONTH + r" {1,2}\d{1,2} \d\d:\d\d:\d\d|" + _ISO + r") (?P<host>" + _HOST + r") [^\s:\[\]]{1,64}(?:\[\d{1,10}\])?: ")),
    ("date", re.compile(_ISO + r":? ")),
    ("ctime", re.compile(_DAY + r" " + _MONTH + r" {1,2}\d{1,2} \d\d:\d\d:\d\d(?: \d{4})? ?")),
    (
        "bracketed-date",
        re.compile(r"\[(?:" + _ISO + r"|" + _DAY + r" " + _MONTH + r" {1,2}\d{1,2} \d\d:\d\d:\d\d(?: \d{4})?|\d\d:\d\d:\d\d(?:[.,]\d{1,9})?)\]:? ?"),
    ),
    ("mpirun", re.compile(r"\[\d{1,10},\d{1,10}\]<std(?:out|err)>: ?")),
    ("torchrun", re.compile(r"\[(?:default|rank)\d{1,7}\]: ?")),
    ("kubectl", re.compile(r"\[pod/[^\]\s]{0,300}\] ")),
    ("srun", re.compile(r"\d{1,7}: ")),
    ("host", re.compile(r"(?P<host>" + _HOST + r"): (?!Test (?:[A-Z]+ )?failure\b)")),
)
_SPACES = re.compile(r"[ \t]*")
_JSON_KEYS = ("log", "message", "msg", "MESSAGE")

# The NCCL marker, searched near each " NCCL " of a line: ``:pid:tid [dev] [file:line ][(func) ]NCCL LEVEL``; the
# host is read backwards from it.
_MARKER = re.compile(
    r":(?P<pid>\d{1,10}):(?P<tid>\d{1,10}) \[(?P<dev>[^\]\s]{0,32})\](?: (?P<location>[^\s()]{1,300}:\d{1,7}))?"
    r"(?: \((?P<function>[^()\s]{1,200})\))? NCCL (?P<level>INFO|WARN|ERROR|ABORT|TRACE)\b ?"
)
_HOST_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_MARKER_REACH = 600  # characters before " NCCL " the marker's head can take (pid, tid, dev, location, function)
_MAX_MARKERS = 4  # " NCCL " occurrences of one line looked at
_MAX_REPEAT_BARS = 2 * MAX_PREFIXES + 1  # bars looked back from a repeat: its separator and its prefixes' own


def _json_body(line):
    """The text of a collector's JSON line, or None when LINE is no such line."""
    if len(line) > MAX_JSON_LINE or not line.endswith("}"):
        return None
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    for key in _JSON_KEYS:
        value = data.get(key)
        if isinstance(value, str):
            return value.rstrip("\r\n")
    return None


def is_collector_json(line):
    """Whether LINE is a log collector's JSON line (a log of them is text, not nccl-tests' -J document)."""
    return line[:1] == "{" and _json_body(line.rstrip("\r")) is not None


def split(line):
    """(body, prefixes): LINE without its launcher and collector prefixes, and the prefixes as (form, host or None)
    outermost first. At most MAX_PREFIXES; linear in the line."""
    prefixes = []
    if line[:1] == "{":
        body = _json_body(line)
        if body is not None:
            prefixes.append(("json", None))
            line = body
    position = 0
    for dummy in range(MAX_PREFIXES):
        start = _SPACES.match(line, position).end()
        for name, pattern in _PREFIXES:
            match = pattern.match(line, start)
            if match:
                prefixes.append((name, match.groupdict().get("host")))
                position = match.end()
                break
        else:
            break
    return (line[position:] if position else line), prefixes


def strip(line):
    """LINE without its launcher and collector prefixes (see :func:`split`)."""
    return split(line)[0]


def _repeat(line, position):
    """Where a second NCCL marker of LINE after POSITION starts (its host), or the line's end: a CloudWatch paste
    repeats the line after `` | `` (aws/aws-ofi-nccl#889), which is no part of the first message. A message may hold
    " NCCL " itself (``Loaded net plugin NCCL RDMA Plugin v6``): the first _MAX_MARKERS occurrences are looked at."""
    at = line.find(" NCCL ", position)
    for dummy in range(_MAX_MARKERS):
        if at < 0:
            break
        match = _MARKER.search(line, max(position, at - _MARKER_REACH), at + 12)
        if match:
            begin = match.start()
            while begin > position and line[begin - 1] in _HOST_CHARS:
                begin -= 1
            if begin < match.start():
                return begin
        at = line.find(" NCCL ", at + 6)
    return len(line)


def _message(line, start, repeat):
    """The message of LINE from START up to REPEAT, where _repeat found a repeat's host (or the line's end). The
    repeat is a whole line, so it starts at its own prefix stack (``| <time> | ``, ``[1,0]<stdout>:``, ...): the cut
    is at the earliest of the last _MAX_REPEAT_BARS bars after which only prefixes and spaces come."""
    if repeat == len(line):
        return line[start:].strip()
    cut = separator = repeat
    for dummy in range(_MAX_REPEAT_BARS):
        separator = line.rfind("|", start, separator)
        if separator < 0:
            break
        if not strip(line[separator + 1 : repeat]).strip():
            cut = separator
    return line[start:cut].rstrip(" \t|").strip()


def nccl_line(line):
    """The NCCL log line in LINE, wherever its marker is: {host, pid, tid, dev, location, function, level, msg}, or
    None. LINE may still carry prefixes this grammar does not know."""
    at = line.find(" NCCL ")
    for dummy in range(_MAX_MARKERS):
        if at < 0:
            return None
        match = _MARKER.search(line, max(0, at - _MARKER_REACH), at + 12)
        if match:
            start = match.start()
            begin = start
            while begin > 0 and start - begin < 253 and line[begin - 1] in _HOST_CHARS:
                begin -= 1
            if begin < start:
                found = match.groupdict()
                found["host"] = line[begin:start]
                found["msg"] = _message(line, match.end(), _repeat(line, match.end()))
                return found
        at = line.find(" NCCL ", at + 6)
    return None


__all__ = ["MAX_PREFIXES", "is_collector_json", "nccl_line", "split", "strip"]
