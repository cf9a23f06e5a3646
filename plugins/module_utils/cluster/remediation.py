# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Remediation after the verdict: what to change on each node, and how to undo only what the collection changed.

From a cluster result's ``node_verdicts`` (judging/node_findings.py): a node whose verdict is ``pass`` gets the
verified label (``<label key>=<run id>``); a ``fail`` node is quarantined with a taint (``<taint key>=<run id>:<effect>``)
or a cordon (``spec.unschedulable``), and loses a verified label the collection set earlier; a ``warn`` node, or a node
without a verdict, is left alone.

Every mark the collection sets is recorded, so that undoing it removes that mark and nothing else: an admin's own
labels, taints and cordons are never touched. The functions here read and write the records as annotations of a node
state; the authoritative copy is the record ConfigMap (cluster/node_records.py: a kubelet may write its own node's
annotations, so the action plans on node_records.trusted_state(), whose records are the ConfigMap's):

- ``gpufleet.burnin/verified-label``: the key of the verified label the collection set (its value is the run id);
- ``gpufleet.burnin/quarantine-taint``: ``<key>:<effect>`` of the taint the collection set (its value is the run id);
- ``gpufleet.burnin/cordoned-by``: the run id that cordoned the node. A node that was unschedulable already (an
  admin's cordon) gets no annotation, so it is never uncordoned by the collection.

Undo for a run id removes the marks whose value is that run id (a newer run's marks stay); undo for all runs removes
every mark an annotation records. Everything here is pure: the remediation's loop (module_utils/burnin/
remediation_run.py) reads the nodes, calls plan_apply/plan_undo and sends merge_patch(). The node marks with an expiry (result, run id,
verdict, condition) are cluster/node_marks.py's; undo removes them too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import NODE_VERDICTS
from ansible_collections.gpufleet.burnin.plugins.module_utils import validate

VERIFIED_LABEL = "gpufleet.burnin/verified"
QUARANTINE_TAINT = {"key": "gpufleet.burnin/bad", "effect": "NoSchedule"}
QUARANTINE_MODES = ("none", "taint", "cordon")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
MODES = ("apply", "undo", "expire")
LABEL_RECORD = "gpufleet.burnin/verified-label"
TAINT_RECORD = "gpufleet.burnin/quarantine-taint"
CORDON_RECORD = "gpufleet.burnin/cordoned-by"
RECORDS = (LABEL_RECORD, TAINT_RECORD, CORDON_RECORD, node_marks.MARKS_RECORD)


def check_options(label_verified, verified_label, quarantine, quarantine_taint, names=None):
    """The remediation options checked and normalized: {label_verified, verified_label, quarantine, quarantine_taint
    {key, effect}}. NAMES maps each option to the user's name for it (the role's burnin_* variables); errors name it."""
    names = dict(
        dict(label_verified="label_verified", verified_label="verified_label", quarantine="quarantine", quarantine_taint="quarantine_taint"), **(names or {})
    )
    validate.check_bool(names["label_verified"], label_verified)
    validate.check_str(names["verified_label"], verified_label)
    validate.check_grammar(names["verified_label"], verified_label, "qualified_name")
    validate.check_choice(names["quarantine"], quarantine, QUARANTINE_MODES)
    taint = check_taint(names["quarantine_taint"], quarantine_taint)
    return {"label_verified": label_verified, "verified_label": verified_label, "quarantine": quarantine, "quarantine_taint": taint}


def check_taint(field, value):
    """The quarantine taint {key, effect} (each defaulted), checked: the key a qualified name, a known effect."""
    given = validate.check_mapping(field, value, allow_none=True)
    validate.check_keys(field, given, ("key", "effect"))
    taint = dict(QUARANTINE_TAINT, **given)
    validate.check_str("%s.key" % field, taint["key"])
    validate.check_grammar("%s.key" % field, taint["key"], "qualified_name")
    validate.check_choice("%s.effect" % field, taint["effect"], TAINT_EFFECTS)
    return taint


def check_run_id(field, run_id, allow_empty=False):
    """A run id is the value of the marks: a label value (the role's run ids are DNS labels, a subset)."""
    validate.check_str(field, run_id, allow_empty=allow_empty)
    if run_id:
        validate.check_grammar(field, run_id, "label_value")
    return run_id


def check_node_verdicts(field, node_verdicts):
    """NODE_VERDICTS as node_findings.summarize() gives them: {node: {verdict, ...}}; returns {node: verdict}."""
    validate.check_mapping(field, node_verdicts, allow_none=True)
    out = {}
    for node in sorted(node_verdicts or {}):
        entry = node_verdicts[node]
        validate.check_mapping("%s.%s" % (field, node), entry)
        validate.check_choice("%s.%s.verdict" % (field, node), entry.get("verdict"), NODE_VERDICTS)
        out[str(node)] = entry["verdict"]
    return out


def wanted(options):
    """Whether OPTIONS ask for any remediation at all."""
    return bool(options["label_verified"]) or options["quarantine"] != "none" or bool(options.get("node_marks"))


def touches(verdict, options):
    """Whether a node with VERDICT can change under OPTIONS (the others are not even read)."""
    if not wanted(options):
        return False
    if options.get("node_marks"):  # every judged node is marked with its result
        return True
    return verdict == "fail" or (verdict == "pass" and bool(options["label_verified"]))


# --- a node's state: the fields remediation reads and writes ------------------------------------------------------
def node_state(node):
    """What remediation reads of a Node object: name, resourceVersion, labels, annotations, taints, unschedulable."""
    metadata = node.get("metadata") or {}
    spec = node.get("spec") or {}
    return {
        "name": metadata.get("name") or "",
        "resourceVersion": metadata.get("resourceVersion") or "",
        "labels": dict(metadata.get("labels") or {}),
        "annotations": dict(metadata.get("annotations") or {}),
        "taints": [dict(taint) for taint in spec.get("taints") or []],
        "unschedulable": bool(spec.get("unschedulable")),
        "condition": node_marks.condition_of(node),
    }


def taint_text(taint):
    """``key=value:effect`` as kubectl writes a taint."""
    return "%s%s:%s" % (taint["key"], "=%s" % taint["value"] if taint.get("value") else "", taint.get("effect") or "")


def _find_taint(taints, key, effect):
    for index, taint in enumerate(taints):
        if taint.get("key") == key and taint.get("effect") == effect:
            return index
    return None


def _split_record(record):
    key, _sep, effect = (record or "").rpartition(":")
    return key, effect


def _drop_label(state, key, run_id=None):
    """Remove the verified label KEY (and its record) when its value is RUN_ID (any value when RUN_ID is None)."""
    value = state["labels"].get(key)
    if value is not None and run_id is not None and value != run_id:
        return
    state["labels"].pop(key, None)
    if state["annotations"].get(LABEL_RECORD) == key:
        state["annotations"].pop(LABEL_RECORD)


def plan_apply(state, verdict, run_id, options):
    """The node's state after remediation for VERDICT (pass, warn, fail or None) of run RUN_ID with OPTIONS
    (check_options()); STATE (node_state()) is not changed."""
    after = copy.deepcopy(state)
    labels, annotations = after["labels"], after["annotations"]
    recorded = annotations.get(LABEL_RECORD)
    if verdict == "pass" and options["label_verified"]:
        key = options["verified_label"]
        if recorded and recorded != key:  # the collection's label under an earlier key
            _drop_label(after, recorded)
        labels[key] = run_id
        annotations[LABEL_RECORD] = key
    elif verdict == "fail":
        if recorded:  # a node that fails now is no longer verified
            _drop_label(after, recorded)
        if options["quarantine"] == "taint":
            _quarantine_taint(after, run_id, options["quarantine_taint"])
        elif options["quarantine"] == "cordon":
            _quarantine_cordon(after, run_id)
    return after


def _quarantine_taint(after, run_id, wanted_taint):
    key, effect = wanted_taint["key"], wanted_taint["effect"]
    record = "%s:%s" % (key, effect)
    index = _find_taint(after["taints"], key, effect)
    if index is None:
        after["taints"].append({"key": key, "value": run_id, "effect": effect})
        after["annotations"][TAINT_RECORD] = record
    elif after["annotations"].get(TAINT_RECORD) == record:  # the collection's, from an earlier run: this run's now
        after["taints"][index] = dict(after["taints"][index], value=run_id)
    # else: the same key and effect set by someone else; the node is quarantined already and stays theirs.


def _quarantine_cordon(after, run_id):
    ours = CORDON_RECORD in after["annotations"]
    if after["unschedulable"] and not ours:
        return  # an admin's cordon: left as it is, and never undone by the collection
    after["unschedulable"] = True
    after["annotations"][CORDON_RECORD] = run_id


def plan_undo(state, run_id=None):
    """The node's state with the collection's marks of run RUN_ID removed (every run's with RUN_ID None)."""
    after = copy.deepcopy(state)
    annotations = after["annotations"]
    if annotations.get(LABEL_RECORD):
        key = annotations[LABEL_RECORD]
        value = after["labels"].get(key)
        if value is None or run_id is None or value == run_id:
            after["labels"].pop(key, None)
            annotations.pop(LABEL_RECORD)
    if annotations.get(TAINT_RECORD):
        key, effect = _split_record(annotations[TAINT_RECORD])
        index = _find_taint(after["taints"], key, effect)
        value = after["taints"][index].get("value") if index is not None else None
        if index is None or run_id is None or value == run_id:
            if index is not None:
                del after["taints"][index]
            annotations.pop(TAINT_RECORD)
    if CORDON_RECORD in annotations and (run_id is None or annotations[CORDON_RECORD] == run_id):
        annotations.pop(CORDON_RECORD)
        after["unschedulable"] = False
    marks = node_marks.read_record(after)
    if node_marks.MARKS_RECORD in annotations and (run_id is None or marks is None or marks["run_id"] == run_id):
        after = node_marks.plan_unmark(after)
    return after


def is_marked(state):
    """Whether the node carries a record of a collection's mark (undo only needs to look at those)."""
    return any(name in state["annotations"] for name in RECORDS)


# --- what changed, as a list, a patch and a diff --------------------------------------------------------------------
def changes(before, after):
    """[{node, what (label, taint, unschedulable, annotation), key, before, after}] between two states of one node;
    taints by key and effect, shown as ``key=value:effect``; an absent value is None."""
    node = before["name"]
    out = []
    for what, field in (("label", "labels"), ("annotation", "annotations")):
        for key in sorted(set(before[field]) | set(after[field])):
            if before[field].get(key) != after[field].get(key):
                out.append({"node": node, "what": what, "key": key, "before": before[field].get(key), "after": after[field].get(key)})
    keys = []
    for taint in before["taints"] + after["taints"]:
        pair = (taint.get("key"), taint.get("effect"))
        if pair not in keys:
            keys.append(pair)
    for key, effect in keys:
        old = [taint for taint in before["taints"] if (taint.get("key"), taint.get("effect")) == (key, effect)]
        new = [taint for taint in after["taints"] if (taint.get("key"), taint.get("effect")) == (key, effect)]
        if old != new:
            out.append(
                {
                    "node": node,
                    "what": "taint",
                    "key": "%s:%s" % (key, effect),
                    "before": taint_text(old[0]) if old else None,
                    "after": taint_text(new[0]) if new else None,
                }
            )
    if before["unschedulable"] != after["unschedulable"]:
        out.append({"node": node, "what": "unschedulable", "key": "spec.unschedulable", "before": before["unschedulable"], "after": after["unschedulable"]})
    if before.get("condition") != after.get("condition"):
        out.append({"node": node, "what": "condition", "key": node_marks.CONDITION_TYPE, "before": _condition_text(before), "after": _condition_text(after)})
    return out


def _condition_text(state):
    condition = state.get("condition")
    return "%s (%s)" % (condition.get("status"), condition.get("reason")) if condition else None


def merge_patch(before, after):
    """The JSON merge patch (RFC 7386) from BEFORE to AFTER, or None when nothing changed.

    Why a merge patch with the resourceVersion read, not server-side apply: a Node's ``spec.taints`` is an atomic list
    for server-side apply and for strategic merge (no merge key), so applying our one taint would take the whole list
    and remove the others. Labels and annotations are maps: the patch names only the keys that change (null removes),
    so other keys are never written. Taints are read, changed and written back whole; the resourceVersion in the patch
    makes the API server refuse it (409 Conflict) if the node changed since it was read, and the action reads again.
    """
    metadata, spec = {}, {}
    for field in ("labels", "annotations"):
        changed = dict(
            (key, after[field].get(key)) for key in sorted(set(before[field]) | set(after[field])) if before[field].get(key) != after[field].get(key)
        )
        if changed:
            metadata[field] = changed
    if before["taints"] != after["taints"]:
        spec["taints"] = after["taints"] or None
    if before["unschedulable"] != after["unschedulable"]:
        spec["unschedulable"] = True if after["unschedulable"] else None
    if not (metadata or spec):
        return None
    metadata["resourceVersion"] = before["resourceVersion"]
    patch = {"metadata": metadata}
    if spec:
        patch["spec"] = spec
    return patch


def diff_view(state):
    """What --diff shows of a node: its labels, taints (as kubectl writes them), unschedulable and the collection's
    records."""
    view = {
        "labels": dict(state["labels"]),
        "taints": [taint_text(taint) for taint in state["taints"]],
        "unschedulable": state["unschedulable"],
        "annotations": dict((key, value) for key, value in state["annotations"].items() if key in RECORDS + node_marks.ANNOTATIONS),
    }
    if state.get("condition"):
        view["condition"] = state["condition"]
    return view


def summary(mode, changed_nodes, missing=(), check_mode=False):
    """One sentence for the task's msg."""
    done = {"apply": "remediated", "undo": "undid the remediation of", "expire": "removed the expired and superseded marks of"}[mode]
    if check_mode:
        done = {"apply": "would remediate", "undo": "would undo the remediation of", "expire": "would remove the expired and superseded marks of"}[mode]
    text = "%s %d node(s)%s" % (done, len(changed_nodes), ": %s" % ", ".join(changed_nodes) if changed_nodes else "")
    if missing:
        text += "; not found: %s" % ", ".join(missing)
    return text


def record(mode, run_id, changed, check_mode=False, missing=(), note=""):
    """The cluster result's ``remediation``: {mode, run_id, check_mode, changes (label, taint and unschedulable only;
    the records are bookkeeping), nodes (changed), missing, note}."""
    shown = [change for change in changed if change["what"] != "annotation"]
    return {
        "mode": mode,
        "run_id": run_id or "",
        "check_mode": bool(check_mode),
        "changes": shown,
        "nodes": sorted(set(change["node"] for change in changed)),
        "missing": list(missing),
        "note": note,
    }
