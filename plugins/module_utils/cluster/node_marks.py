# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Node marks: a node's verdict written on the node, for schedulers and tools, with an expiry (opt-in).

A marked node carries

- the labels ``gpufleet.burnin/result`` (``pass``, ``warn``, ``fail``, ``error``), ``gpufleet.burnin/run-id`` and
  ``gpufleet.burnin/expires`` (Unix seconds, an integer string, so a ``nodeAffinity`` can compare it with ``Gt``/``Lt``);
- the annotation ``gpufleet.burnin/verdict``: the node's entry of the JSON report (reporting/report.py cluster_node_entries(),
  docs/verdict-schema.json ``$defs/node``) as compact JSON, at most VERDICT_MAX_BYTES;
- optionally the Node condition CONDITION_TYPE (status True for pass, False otherwise), written to the status
  subresource;
- the record ``gpufleet.burnin/node-marks`` (JSON: run_id, marked_at, expires, condition): the collection wrote the marks
  above. Only a node with this record is ever unmarked, and only the keys above go: other labels, annotations and
  conditions are never touched (as in cluster/remediation.py).

A mark past its expiry counts as unverified (status()). The expiry counts from the run's first mark on the node: the
same run marking again keeps marked_at, so a second run with the same verdict changes nothing. Pure functions over
remediation.node_state() dicts (with ``condition``); the clock is the caller's ``now`` (Unix seconds).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import datetime
import json

from ansible_collections.gpufleet.burnin.plugins.module_utils import validate

RESULT_LABEL = "gpufleet.burnin/result"
RUN_LABEL = "gpufleet.burnin/run-id"
EXPIRES_LABEL = "gpufleet.burnin/expires"
LABELS = (RESULT_LABEL, RUN_LABEL, EXPIRES_LABEL)
VERDICT_ANNOTATION = "gpufleet.burnin/verdict"
MARKS_RECORD = "gpufleet.burnin/node-marks"
ANNOTATIONS = (VERDICT_ANNOTATION, MARKS_RECORD)
# CamelCase like the kubelet's (Ready, MemoryPressure) and Node Problem Detector's condition types; "Passed" so that
# status True is the good state, as for Ready.
CONDITION_TYPE = "GpuBurninPassed"
RESULTS = ("pass", "warn", "fail", "error")
TTL_HOURS_DEFAULT = 24
# Seconds a record's time may be ahead of the reader's clock (the writer's clock differs a little).
FUTURE_SKEW = 300
TTL_HOURS_MAX = 24 * 366
# A clock given in place of the real one (burnin_marks_now): Unix seconds up to 2100-01-01.
NOW_MAX = 4102444800
# All of a node's annotations together may hold 256 KiB, and every client that reads nodes gets them: the verdict
# keeps to 8 KiB (the report's node entry may carry 20 evidence entries, judging/node_findings.py).
VERDICT_MAX_BYTES = 8192
TEXT_MAX_CHARS = 300
MESSAGE_MAX_CHARS = 512


def check_options(node_marks, ttl_hours, condition, names=None):
    """The node-mark options checked: {node_marks, mark_ttl_hours, mark_condition}; NAMES maps each to the user's name."""
    names = dict(dict(node_marks="node_marks", mark_ttl_hours="mark_ttl_hours", mark_condition="mark_condition"), **(names or {}))
    validate.check_bool(names["node_marks"], node_marks)
    validate.check_int(names["mark_ttl_hours"], ttl_hours, 1, TTL_HOURS_MAX)
    validate.check_bool(names["mark_condition"], condition)
    return {"node_marks": node_marks, "mark_ttl_hours": ttl_hours, "mark_condition": condition}


def check_now(field, now):
    """A fake clock for tests and replays (Unix seconds); 0 means the controller's clock."""
    return validate.check_int(field, now, 0, 1 << 40)


def iso(seconds):
    return datetime.datetime.fromtimestamp(int(seconds), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_record(state):
    """The node's record of the collection's marks {run_id, marked_at, expires, condition}, or None (none, or not one
    the collection wrote: unreadable JSON or the wrong shape)."""
    text = state["annotations"].get(MARKS_RECORD)
    if not text or len(text) > 1024:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("run_id"), str):
        return None
    for key in ("marked_at", "expires"):
        if isinstance(record.get(key), bool) or not isinstance(record.get(key), int):
            return None
    return {"run_id": record["run_id"], "marked_at": record["marked_at"], "expires": record["expires"], "condition": record.get("condition") or ""}


def _record_text(record):
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def _compact(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _fits(value):
    return len(_compact(value).encode("utf-8")) <= VERDICT_MAX_BYTES


def _cut_strings(value):
    if isinstance(value, str):
        return value if len(value) <= TEXT_MAX_CHARS else value[: TEXT_MAX_CHARS - 3] + "..."
    if isinstance(value, dict):
        return dict((key, _cut_strings(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_cut_strings(item) for item in value]
    return value


def bounded_entry(entry):
    """ENTRY (a report node entry) as compact JSON of at most VERDICT_MAX_BYTES, in the report's shape still (every key
    kept, so it validates against the schema's node entry): long texts are cut first, then the longest lists (evidence,
    reasons, ...) lose their last items, halving, until it fits; the run's report has them all."""
    if _fits(entry):
        return _compact(entry)
    entry = _cut_strings(copy.deepcopy(entry))
    while not _fits(entry):
        lists = sorted((len(_compact(value)), key) for key, value in entry.items() if isinstance(value, list) and value)
        if not lists:
            break
        key = lists[-1][1]
        entry[key] = entry[key][: len(entry[key]) // 2]
    if not _fits(entry):  # long scalars alone: only the texts the schema needs no more of than a line
        entry = dict((key, value[:80] if isinstance(value, str) else value) for key, value in entry.items())
    return _compact(entry)


def condition_for(result, run_id, expires, reasons, marked_at, before=None):
    """The Node condition for RESULT; its lastTransitionTime stays BEFORE's when the status is the same."""
    status = "True" if result == "pass" else "False"
    message = "run %s: %s; expires %s" % (run_id, result, iso(expires))
    if reasons:
        message += "; " + reasons[0]
    if len(message) > MESSAGE_MAX_CHARS:
        message = message[: MESSAGE_MAX_CHARS - 3] + "..."
    since = before.get("lastTransitionTime") if before and before.get("status") == status and before.get("lastTransitionTime") else iso(marked_at)
    return {
        "type": CONDITION_TYPE,
        "status": status,
        "reason": "Burnin" + result.capitalize(),
        "message": message,
        "lastHeartbeatTime": iso(marked_at),
        "lastTransitionTime": since,
    }


def plan_mark(state, entry, run_id, now, options):
    """The node's state with the marks of ENTRY (its report node entry: node, verdict, reasons, ...) of run RUN_ID at
    NOW under OPTIONS (check_options()); STATE is not changed."""
    after = copy.deepcopy(state)
    result = entry.get("verdict") if entry.get("verdict") in RESULTS else "error"
    record = read_record(state)
    marked_at = record["marked_at"] if record and record["run_id"] == run_id else int(now)
    expires = marked_at + int(options["mark_ttl_hours"]) * 3600
    after["labels"].update({RESULT_LABEL: result, RUN_LABEL: run_id, EXPIRES_LABEL: str(expires)})
    after["annotations"][VERDICT_ANNOTATION] = bounded_entry(entry)
    if options["mark_condition"]:
        after["condition"] = condition_for(result, run_id, expires, entry.get("reasons") or [], marked_at, state.get("condition"))
    elif record and record["condition"]:
        after["condition"] = None  # the collection's condition of an earlier run, no longer asked for
    new_record = {"run_id": run_id, "marked_at": marked_at, "expires": expires, "condition": CONDITION_TYPE if options["mark_condition"] else ""}
    # The same record (key order aside) is kept as it is, so a second run changes nothing.
    if read_record(state) != new_record:
        after["annotations"][MARKS_RECORD] = _record_text(new_record)
    return after


def plan_unmark(state):
    """The node's state without the collection's marks (none without the record)."""
    after = copy.deepcopy(state)
    record = read_record(state)
    if record is None:
        if MARKS_RECORD in state["annotations"]:
            after["annotations"].pop(MARKS_RECORD)  # a record it cannot read: only the record goes, nothing it names
        return after
    for key in LABELS:
        after["labels"].pop(key, None)
    for key in ANNOTATIONS:
        after["annotations"].pop(key, None)
    if record["condition"] and state.get("condition"):
        after["condition"] = None
    return after


def status(state, now):
    """What the node's mark says at NOW: {state (verified, expired, warn, fail, error, unmarked), result, run_id,
    expires}. Only pass and unexpired is verified; a mark past its expiry counts as unverified, whatever its result."""
    record = read_record(state)
    if record is None:
        return {"state": "unmarked", "result": "", "run_id": "", "expires": None}
    result = state["labels"].get(RESULT_LABEL) or ""
    text = state["labels"].get(EXPIRES_LABEL) or ""
    expires = int(text) if text.isdigit() else record["expires"]
    out = {"result": result, "run_id": state["labels"].get(RUN_LABEL) or record["run_id"], "expires": expires}
    if now >= expires:
        out["state"] = "expired"
    elif result == "pass":
        out["state"] = "verified"
    else:
        out["state"] = result if result in RESULTS else "error"
    return out


def plan_expire(states, now):
    """Of the cluster's node states, which marks the cleanup removes: {node: why} with why ``expired`` (past its expiry
    at NOW) or ``superseded by run <id>`` (an earlier run's mark where the cluster's latest marking run did not mark the
    node: that run did not judge it). Nodes without the collection's record are never named."""
    records = dict((state["name"], read_record(state)) for state in states)
    records = dict((name, record) for name, record in records.items() if record is not None)
    # A mark from the future cannot be the latest run (cluster/node_records.py ignores such records before this).
    records = dict((name, record) for name, record in records.items() if record["marked_at"] <= now + FUTURE_SKEW)
    if not records:
        return {}
    latest = max(records.values(), key=lambda record: (record["marked_at"], record["run_id"]))
    out = {}
    for state in states:
        record = records.get(state["name"])
        if record is None:
            continue
        if status(state, now)["state"] == "expired":
            out[state["name"]] = "expired"
        elif record["run_id"] != latest["run_id"] and record["marked_at"] < latest["marked_at"]:
            out[state["name"]] = "superseded by run %s" % latest["run_id"]
    return out


def status_patch(before, after):
    """The strategic merge patch of the status subresource for the condition (conditions merge by type, so the
    kubelet's and other tools' conditions are never written), or None."""
    if before.get("condition") == after.get("condition"):
        return None
    if after.get("condition") is None:
        return {"status": {"conditions": [{"type": CONDITION_TYPE, "$patch": "delete"}]}}
    return {"status": {"conditions": [after["condition"]]}}


def condition_of(node):
    """The collection's condition in a Node object, or None."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == CONDITION_TYPE:
            return dict((key, condition.get(key)) for key in ("type", "status", "reason", "message", "lastHeartbeatTime", "lastTransitionTime"))
    return None
