# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""gpufleet.burnin.burnin_remediate's loop: label, taint, cordon or mark nodes by their verdicts (mode apply), undo
what a run did (undo) or remove marks past their time (expire), over a cluster's node protocol
(plugin_utils/cluster.py):

- ``read_node(name)`` -> the Node or None;
- ``patch_node(name, patch)`` -> True, or False on a conflict (the node changed since it was read: read it again);
- ``patch_node_status(name, patch)`` (the condition, a strategic merge patch of the status subresource);
- ``read_configmap(name, namespace)`` -> the ConfigMap or None;
- ``merge_configmap(name, namespace, patch, created)`` -> False when the namespace is not there.

Each raises ClusterCallFailed. What the collection may remove is read from the record ConfigMap only
(cluster/node_records.py), never from a node's own annotations."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks, node_records, remediation
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report

# A node that changes between our read and our patch (a kubelet heartbeat does not: it writes the Lease and the status
# subresource) is read again; after this many conflicts in a row the task fails.
ATTEMPTS = 5


def checked(args, clock=time.time):
    """burnin_remediate's options ARGS checked before anything connects: {options, now, namespace, verdicts, entries}.
    Raises BurninError naming the option."""
    options = remediation.check_options(args["label_verified"], args["verified_label"], args["quarantine"], args["quarantine_taint"])
    options.update(node_marks.check_options(args["node_marks"], args["mark_ttl_hours"], args["mark_condition"]))
    found = {
        "options": options,
        "now": node_marks.check_now("now", args["now"]) or int(clock()),
        "namespace": node_records.check_namespace("record_namespace", args["record_namespace"]),
        "verdicts": {},
        "entries": {},
    }
    if args["mode"] == "apply":
        remediation.check_run_id("run_id", args["run_id"])
        found["verdicts"] = remediation.check_node_verdicts("node_verdicts", args["node_verdicts"])
        if options["node_marks"]:
            # The report's own per-node entries, so the annotation has the JSON report's (the schema's) shape.
            cluster = dict(args["cluster_result"], node_verdicts=args["node_verdicts"])
            found["entries"] = dict((row["node"], row) for row in report.cluster_node_entries(str(cluster.get("cluster") or "cluster"), cluster))
    else:
        remediation.check_run_id("run_id", args["run_id"], allow_empty=args["all_runs"] or args["mode"] == "expire")
    return found


class _Run(object):
    """One remediation over CLUSTER: the record's entries as they change, the nodes whose annotations disagree."""

    def __init__(self, cluster, args, settings, check_mode):
        self.cluster, self.args, self.check_mode = cluster, args, check_mode
        self.namespace, self.now = settings["namespace"], settings["now"]
        self.entries, self.forged, self.record_found = {}, {}, False
        self.changes, self.diffs = [], []

    def read_records(self):
        """(entries, unreadable node names, note) of the record ConfigMap; none when there is none. An undo or expire by
        an identity that may not read it changes nothing, with a note (it cannot have remediated either: remediation
        writes it); a remediation fails."""
        try:
            configmap = self.cluster.read_configmap(node_records.RECORD_NAME, self.namespace)
        except ClusterCallFailed as failed:
            if failed.error["category"] == "Forbidden" and self.args["mode"] != "apply":
                return {}, [], "nodes not checked for the collection's labels, taints and cordons: %s" % failed.error["message"]
            raise
        self.record_found = configmap is not None
        entries, unreadable = node_records.parse(configmap)
        return entries, unreadable, ""

    def write_record(self, patch):
        """Merge-patch the node's entry into the record ConfigMap, or create it with the entry."""
        name = node_records.RECORD_NAME
        if not self.cluster.merge_configmap(name, self.namespace, patch, node_records.configmap(self.namespace, patch)):
            message = (
                "namespace %s does not exist; it holds the record of what the collection did to each node "
                "(record_namespace, the role's burnin_namespace, also with a namespace per run): create it" % self.namespace
            )
            raise ClusterCallFailed(
                "writing ConfigMap/%s in %s" % (name, self.namespace), {"category": "NotFound", "status": 404, "detail": "", "message": message}
            )

    def note_untrusted(self, state, entry):
        forged = node_records.untrusted(state, entry)
        if forged:
            self.forged[state["name"]] = forged

    def remediate(self, name, plan):
        """Read node NAME, PLAN(state) its new state and patch it (not in check mode), again on a conflict; its changes
        and diff are kept. False when the node is not there."""
        for _attempt in range(ATTEMPTS):
            node = self.cluster.read_node(name)
            if node is None:
                return False
            before = remediation.node_state(node)
            # Planned from the record ConfigMap's entry; the patch also makes the annotations a true copy of it.
            entry = self.entries.get(name)
            self.note_untrusted(before, entry)
            after = plan(node_records.trusted_state(before, entry))
            patch = remediation.merge_patch(before, after)
            status_patch = node_marks.status_patch(before, after)
            new_entry = node_records.entry_for(after, self.args["run_id"], self.now, entry)
            record_patch = node_records.data_patch(name, entry, new_entry)
            if patch is None and status_patch is None and record_patch is None:
                return True
            if self.check_mode or patch is None or self.cluster.patch_node(name, patch):
                if status_patch is not None and not self.check_mode:
                    self.cluster.patch_node_status(name, status_patch)
                # After the node: a failure in between leaves a mark unrecorded (never removed), not a record of a
                # mark that is not there.
                if record_patch is not None and not self.check_mode:
                    self.write_record(record_patch)
                    self.entries[name] = new_entry
                    if new_entry is None:
                        self.entries.pop(name)
                self.changes.extend(remediation.changes(before, after))
                header = "Node/%s" % name
                self.diffs.append(
                    {"before_header": header, "after_header": header, "before": remediation.diff_view(before), "after": remediation.diff_view(after)}
                )
                return True
        raise ClusterCallFailed(
            "patching Node/%s" % name,
            {"category": "Conflict", "status": 409, "detail": "", "message": "the node changed under every one of %d attempts" % ATTEMPTS},
        )

    def apply(self, verdicts, options, report_entries):
        missing = []
        touched = [node for node in sorted(verdicts) if remediation.touches(verdicts[node], options)]
        if touched and not self.check_mode and not self.record_found:
            self.write_record({"data": {}})  # before any node changes: a namespace that is missing fails here
        for node in touched:
            if not self.remediate(node, lambda state, node=node: self.plan_apply(state, verdicts[node], report_entries.get(node), options)):
                missing.append(node)
        return missing

    def plan_apply(self, state, verdict, entry, options):
        after = remediation.plan_apply(state, verdict, self.args["run_id"], options)
        if options["node_marks"]:
            entry = entry or {"node": state["name"], "verdict": verdict, "reasons": [], "stages": []}
            after = node_marks.plan_mark(after, entry, self.args["run_id"], self.now, options)
        return after

    def expire(self):
        """{node: its mark's status and what was removed} of every node the record names with a mark."""
        states = []
        for name in sorted(self.entries):
            node = self.cluster.read_node(name)
            if node is not None:
                state = remediation.node_state(node)
                self.note_untrusted(state, self.entries[name])
                states.append(node_records.trusted_state(state, self.entries[name]))
        states = [state for state in states if node_marks.read_record(state) is not None]
        removed = node_marks.plan_expire(states, self.now)
        marks = dict((state["name"], dict(node_marks.status(state, self.now), removed=removed.get(state["name"], ""))) for state in states)
        for node in sorted(removed):
            self.remediate(node, node_marks.plan_unmark)
        return marks

    def undo(self):
        run_id = None if self.args["all_runs"] else self.args["run_id"]
        for node in sorted(self.entries):
            if not self.remediate(node, lambda state: remediation.plan_undo(state, run_id)) and not self.check_mode:
                # a Node deleted took the marks with it: its entry goes too
                self.write_record(node_records.data_patch(node, self.entries.pop(node), None))


def run_remediation(cluster, args, settings, check_mode=False):
    """burnin_remediate's mode ``args['mode']`` over CLUSTER with SETTINGS (checked()). Returns the action's result:
    {changed, changes, diffs, remediation, msg, ignored, records_left, marks (expire)}. A failed call raises
    ClusterCallFailed with ``partial`` {changes}: what changed before it."""
    run = _Run(cluster, args, settings, check_mode)
    mode, missing, marks = args["mode"], [], None
    ignored = {"future": [], "unreadable": [], "annotations": {}}
    try:
        wanted = mode != "apply" or remediation.wanted(settings["options"])
        records, unreadable, note = run.read_records() if wanted else ({}, [], "")
        run.entries, future = node_records.usable(records, run.now)
        ignored.update(future=future, unreadable=unreadable)
        if mode == "apply":
            missing = run.apply(settings["verdicts"], settings["options"], settings["entries"])
        elif mode == "expire":
            marks = run.expire()
        else:
            run.undo()
    except ClusterCallFailed as failed:
        failed.partial = {"changes": run.changes}
        raise
    nodes = sorted(set(change["node"] for change in run.changes))
    ignored["annotations"] = dict(run.forged)
    distrusted = node_records.note(ignored["future"], ignored["unreadable"], ignored["annotations"])
    note = "; ".join(text for text in (note, distrusted) if text)
    result = {
        "ignored": ignored,
        "records_left": len(run.entries),
        "changed": bool(run.changes),
        "changes": run.changes,
        "diffs": run.diffs,
        "remediation": remediation.record(mode, args["run_id"], run.changes, check_mode=check_mode, missing=missing, note=note),
        "msg": remediation.summary(mode, nodes, missing, check_mode) + ("; %s" % note if note else ""),
    }
    if marks is not None:
        result["marks"] = marks
    return result


def asked(variables, check_mode=False):
    """Whether the role remediates a cluster after its stages, by its checked VARIABLES (off by default): never in
    check mode, only with the stages' verdicts (burnin_wait and burnin_collect_logs), and when a verified label, a
    quarantine or node marks are asked."""
    wanted = variables.get("burnin_label_verified") or variables.get("burnin_quarantine", "none") != "none" or variables.get("burnin_node_marks")
    return bool(not check_mode and variables.get("burnin_wait") and variables.get("burnin_collect_logs") and wanted)


def role_args(variables, run_id, record):
    """burnin_remediate's options as the role gives them after a cluster's stages: from its checked VARIABLES, the
    run's RUN_ID and the cluster's RECORD (its node verdicts; itself for the node marks' annotation)."""
    return {
        "mode": "apply",
        "run_id": run_id,
        "all_runs": False,
        "now": 0,
        "node_verdicts": record.get("node_verdicts") or {},
        "label_verified": variables["burnin_label_verified"],
        "verified_label": variables["burnin_verified_label"],
        "quarantine": variables["burnin_quarantine"],
        "quarantine_taint": variables["burnin_quarantine_taint"],
        "node_marks": variables["burnin_node_marks"],
        "mark_ttl_hours": variables["burnin_mark_ttl_hours"],
        "mark_condition": variables["burnin_mark_condition"],
        "cluster_result": record if variables["burnin_node_marks"] else {},
        # The record of what the collection did to each node, which no node can write (cluster/node_records.py).
        "record_namespace": variables["burnin_namespace"],
        "unreachable_grace": int(variables["burnin_unreachable_grace"]),
    }


__all__ = ["ATTEMPTS", "asked", "checked", "role_args", "run_remediation"]
