# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The authoritative record of what the collection did to each node, in an object no node can write.

The NodeRestriction admission plugin lets a kubelet write its own Node's annotations, so the records the collection
keeps in node annotations (cluster/remediation.py RECORDS: the verified label's key, the quarantine taint, the cordon,
the node marks with their run and time) can be forged by the node. What the collection may remove is therefore read
from one ConfigMap per cluster, RECORD_NAME in the burn-in namespace (burnin_namespace), which only the burn-in
identity and the cluster's admins may write (docs/rbac.md). Its ``data`` holds one key per node (a node name is a
valid ConfigMap key): compact JSON ``{"records": {<annotation key>: <value>}, "run_id": ..., "at": <Unix seconds>}``,
the same records the node's annotations carry as a copy for people and schedulers.

Planning stays cluster/remediation.py's and cluster/node_marks.py's: trusted_state() replaces a node's annotation
records by the ConfigMap's before planning, entry_for() turns the planned state back into the node's entry, and
data_patch() is the ConfigMap's merge patch (only the node's key, so runs on other nodes are never overwritten). An
entry written at a time from the future (beyond CLOCK_SKEW) is ignored and reported, as is a node whose annotation
records differ from its entry. Pure functions; the clock is the caller's ``now`` (Unix seconds).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks, remediation
from ansible_collections.gpufleet.burnin.plugins.module_utils import validate

RECORD_NAME = "gpufleet-burnin-node-records"
# The annotation keys an entry may hold.
RECORD_KEYS = remediation.RECORDS
# How far ahead of the controller's clock a record's time may be (clocks of the controller that wrote it and of the
# one reading it differ a little) before it counts as from the future.
CLOCK_SKEW = node_marks.FUTURE_SKEW
# An entry is a few hundred bytes; a ConfigMap holds 1 MiB, so a bound per entry keeps thousands of nodes in one.
ENTRY_MAX_BYTES = 2048
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpufleet.burnin"}


def check_namespace(field, namespace):
    """The namespace of the record (the burn-in namespace): a DNS label."""
    validate.check_str(field, namespace)
    return validate.check_grammar(field, namespace, "dns_label")


def _entry(text):
    """One node's entry read from the ConfigMap, or None when it is not one the collection wrote."""
    if not isinstance(text, str) or len(text) > ENTRY_MAX_BYTES:
        return None
    try:
        entry = json.loads(text)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("run_id"), str) or not isinstance(entry.get("records"), dict):
        return None
    if isinstance(entry.get("at"), bool) or not isinstance(entry.get("at"), int):
        return None
    records = entry["records"]
    if not records or set(records) - set(RECORD_KEYS) or not all(isinstance(value, str) for value in records.values()):
        return None
    return {"records": dict(records), "run_id": entry["run_id"], "at": entry["at"]}


def parse(configmap):
    """{node: entry} of the record CONFIGMAP (an object, or None when there is none); (entries, unreadable node names)."""
    data = ((configmap or {}).get("data")) or {}
    entries, unreadable = {}, []
    for node in sorted(data):
        entry = _entry(data[node])
        if entry is None:
            unreadable.append(node)
        else:
            entries[node] = entry
    return entries, unreadable


def _times(entry):
    times = [entry["at"]]
    marks = entry["records"].get(node_marks.MARKS_RECORD)
    if marks:
        record = node_marks.read_record({"annotations": {node_marks.MARKS_RECORD: marks}})
        if record:
            times.append(record["marked_at"])
    return times


def from_the_future(entry, now, skew=CLOCK_SKEW):
    """Whether ENTRY was written, or its marks made, later than NOW plus SKEW."""
    return any(at > now + skew for at in _times(entry))


def usable(entries, now, skew=CLOCK_SKEW):
    """(ENTRIES without those from the future, the names of the nodes whose entry is from the future)."""
    future = sorted(node for node, entry in entries.items() if from_the_future(entry, now, skew))
    return dict((node, entry) for node, entry in entries.items() if node not in future), future


def trusted_state(state, entry):
    """STATE (remediation.node_state()) with its annotation records replaced by ENTRY's (none without an entry), so
    that planning acts on what the collection recorded and never on what the node wrote."""
    trusted = copy.deepcopy(state)
    for key in RECORD_KEYS:
        trusted["annotations"].pop(key, None)
    if entry:
        trusted["annotations"].update(entry["records"])
    return trusted


def untrusted(state, entry):
    """The annotation record keys of the node that differ from its ENTRY (forged, or left by a version of the
    collection that kept its records on the node only): reported, never acted on."""
    records = (entry or {}).get("records") or {}
    return sorted(key for key in RECORD_KEYS if state["annotations"].get(key) != records.get(key))


def entry_for(after, run_id, now, before=None):
    """The node's entry for its planned state AFTER (its annotation records), written by run RUN_ID at NOW; BEFORE
    (the entry read) is kept as it is when the records are the same, so a run that changes nothing writes nothing.
    An expiry (no run id) keeps BEFORE's run id. None when no record is left."""
    records = dict((key, after["annotations"][key]) for key in RECORD_KEYS if key in after["annotations"])
    if not records:
        return None
    if before and before["records"] == records:
        return before
    return {"records": records, "run_id": run_id or (before or {}).get("run_id") or "", "at": int(now)}


def entry_text(entry):
    return json.dumps(entry, sort_keys=True, separators=(",", ":"))


def data_patch(node, before, after):
    """The ConfigMap's merge patch for NODE's entry going from BEFORE to AFTER (entries or None), or None: only the
    node's key, so entries of other nodes (another run's, written at the same time) stay."""
    if before == after:
        return None
    return {"data": {node: entry_text(after) if after else None}}


def configmap(namespace, patch):
    """The record ConfigMap to create when there is none yet, with PATCH's entries (removals dropped)."""
    data = dict((node, text) for node, text in patch["data"].items() if text is not None)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": RECORD_NAME, "namespace": namespace, "labels": dict(MANAGED_BY)},
        "data": data,
    }


def note(future, unreadable, forged):
    """The sentence for what was ignored: entries from the future, unreadable entries, and nodes whose annotation
    records differ from the record ({node: [keys]}); empty when nothing was."""
    parts = []
    if future:
        parts.append("ignored the record of %s: written at a time from the future" % ", ".join(future))
    if unreadable:
        parts.append("ignored the unreadable record of %s" % ", ".join(unreadable))
    if forged:
        parts.append(
            "not trusted, as not in %s: the annotations %s"
            % (RECORD_NAME, "; ".join("%s on %s" % (", ".join(keys), node) for node, keys in sorted(forged.items())))
        )
    return "; ".join(parts)
