# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_remediate (documentation in plugins/modules/burnin_remediate.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks, node_records, remediation
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_REMEDIATE_OWN, burnin_remediate_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit

NAME = "gpufleet.burnin.burnin_remediate"
# A node that changes between our read and our patch (a kubelet heartbeat does not: it writes the Lease and the status
# subresource) is read again; after this many conflicts in a row the task fails.
ATTEMPTS = 5


class ActionModule(K8sActionBase):
    """Label, taint or cordon nodes after the verdict, or undo it, with kubernetes.core's client in the worker."""

    _supports_check_mode = True
    OWN = BURNIN_REMEDIATE_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_remediate_spec)
    NON_NEGATIVE = ("unreachable_grace",)

    def run_with(self, result, args, auth):
        # Every option checked before anything connects.
        try:
            options = remediation.check_options(args["label_verified"], args["verified_label"], args["quarantine"], args["quarantine_taint"])
            options.update(node_marks.check_options(args["node_marks"], args["mark_ttl_hours"], args["mark_condition"]))
            now = node_marks.check_now("now", args["now"]) or int(time.time())
            namespace = node_records.check_namespace("record_namespace", args["record_namespace"])
            entries = {}
            if args["mode"] == "apply":
                remediation.check_run_id("run_id", args["run_id"])
                verdicts = remediation.check_node_verdicts("node_verdicts", args["node_verdicts"])
                if options["node_marks"]:
                    # The report's own per-node entries, so the annotation has the JSON report's (the schema's) shape.
                    cluster = dict(args["cluster_result"], node_verdicts=args["node_verdicts"])
                    entries = dict((row["node"], row) for row in report.cluster_node_entries(str(cluster.get("cluster") or "cluster"), cluster))
            else:
                remediation.check_run_id("run_id", args["run_id"], allow_empty=args["all_runs"] or args["mode"] == "expire")
                verdicts = {}
        except BurninError as exc:
            return dict(result, failed=True, msg="%s: %s" % (NAME, exc))
        try:
            self._cluster = Cluster(auth, NAME, poll_interval=2, unreachable_grace=args["unreachable_grace"]).connect("Node", "v1")
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        self._service = self._cluster.service
        self._args = args
        self._namespace, self._now, self._forged, self._record_found = namespace, now, {}, False
        check_mode = self._task.check_mode
        changed, diffs, missing, note, marks = [], [], [], "", {}
        ignored = {"future": [], "unreadable": [], "annotations": {}}
        try:
            # What the collection may remove is read from the record ConfigMap only (cluster/node_records.py).
            wanted = args["mode"] != "apply" or remediation.wanted(options)
            records, unreadable, note = self._read_records(args["mode"]) if wanted else ({}, [], "")
            self._entries, future = node_records.usable(records, now)
            ignored.update(future=future, unreadable=unreadable)
            if args["mode"] == "apply":
                touched = [node for node in sorted(verdicts) if remediation.touches(verdicts[node], options)]
                if touched and not check_mode and not self._record_found:
                    self._write_record({"data": {}})  # before any node changes: a namespace that is missing fails here
                for node in touched:
                    done = self._remediate(node, lambda state, node=node: self._plan_apply(state, verdicts[node], entries.get(node), options, now))
                    if done is None:
                        missing.append(node)
                    else:
                        changed.extend(done[0])
                        diffs.extend(done[1])
            elif args["mode"] == "expire":
                states = []
                for name in sorted(self._entries):
                    node = self._read(name)
                    if node is not None:
                        state = remediation.node_state(node)
                        self._note_untrusted(state, self._entries[name])
                        states.append(node_records.trusted_state(state, self._entries[name]))
                states = [state for state in states if node_marks.read_record(state) is not None]
                removed = node_marks.plan_expire(states, now)
                for state in states:
                    marks[state["name"]] = dict(node_marks.status(state, now), removed=removed.get(state["name"], ""))
                for node in sorted(removed):
                    done = self._remediate(node, node_marks.plan_unmark)
                    if done is not None:
                        changed.extend(done[0])
                        diffs.extend(done[1])
            else:
                run_id = None if args["all_runs"] else args["run_id"]
                for node in sorted(self._entries):
                    done = self._remediate(node, lambda state: remediation.plan_undo(state, run_id))
                    if done is None and not check_mode:  # a Node deleted took the marks with it: its entry goes too
                        self._write_record(node_records.data_patch(node, self._entries.pop(node), None))
                    if done is not None:
                        changed.extend(done[0])
                        diffs.extend(done[1])
        except ClusterCallFailed as failed:
            return dict(
                result,
                failed=True,
                changed=bool(changed) and not check_mode,
                changes=changed,
                error=self.shown_error(failed.error),
                msg="%s: %s" % (failed.what, failed.error["message"]),
            )
        nodes = sorted(set(change["node"] for change in changed))
        ignored["annotations"] = dict(self._forged)
        distrusted = node_records.note(ignored["future"], ignored["unreadable"], ignored["annotations"])
        note = "; ".join(text for text in (note, distrusted) if text)
        result.update(
            ignored=ignored,
            records_left=len(self._entries),
            changed=bool(changed),
            changes=changed,
            remediation=remediation.record(args["mode"], args["run_id"], changed, check_mode=check_mode, missing=missing, note=note),
            msg=remediation.summary(args["mode"], nodes, missing, check_mode) + ("; %s" % note if note else ""),
        )
        if args["mode"] == "expire":
            result["marks"] = marks
        if self._task.diff and diffs:
            result["diff"] = diffs
        return result

    def _plan_apply(self, state, verdict, entry, options, now):
        after = remediation.plan_apply(state, verdict, self._args["run_id"], options)
        if options["node_marks"]:
            entry = entry or {"node": state["name"], "verdict": verdict, "reasons": [], "stages": []}
            after = node_marks.plan_mark(after, entry, self._args["run_id"], now, options)
        return after

    def _retried(self, what, call):
        return self._cluster.retried(what, call)

    def _read(self, name):
        found = self._retried("reading Node/%s" % name, lambda: self._service.find("Node", "v1", name=name))
        resources = found.get("resources") or []
        return resources[0] if resources else None

    def _note_untrusted(self, state, entry):
        forged = node_records.untrusted(state, entry)
        if forged:
            self._forged[state["name"]] = forged

    def _read_records(self, mode):
        """(entries, unreadable node names, note) of the record ConfigMap; none when there is none. An undo or expire by
        an identity that may not read it changes nothing, with a note (it cannot have remediated either: remediation
        writes it); a remediation fails."""
        what = "reading ConfigMap/%s in %s" % (node_records.RECORD_NAME, self._namespace)

        def read():
            found = self._service.find("ConfigMap", "v1", name=node_records.RECORD_NAME, namespace=self._namespace)
            return (found.get("resources") or [None])[0]

        try:
            configmap = read()
        except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
            error = self._cluster.classified(getattr(exc, "result", {}).get("msg") if hasattr(exc, "result") else str(exc))
            if error["category"] == "Forbidden" and mode != "apply":
                return {}, [], "nodes not checked for the collection's labels, taints and cordons: %s" % error["message"]
            configmap = self._retried(what, read)
        self._record_found = configmap is not None
        entries, unreadable = node_records.parse(configmap)
        return entries, unreadable, ""

    def _write_record(self, patch):
        """Merge-patch the node's entry into the record ConfigMap, or create it with the entry."""
        resource = self._retried("finding the ConfigMap API", lambda: self._service.find_resource("ConfigMap", "v1", fail=True))
        name, namespace = node_records.RECORD_NAME, self._namespace
        merge = "application/merge-patch+json"

        no_namespace = []

        def send():
            try:
                self._service.client.patch(resource, patch, name=name, namespace=namespace, content_type=merge)
                return True
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                if getattr(exc, "status", None) != 404:
                    raise
            try:
                self._service.client.create(resource, node_records.configmap(namespace, patch), namespace=namespace)
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                if getattr(exc, "status", None) == 404:  # the namespace itself is not there
                    no_namespace.append(True)
                    return True
                if getattr(exc, "status", None) != 409:  # made by another run in between: patch it
                    raise
                self._service.client.patch(resource, patch, name=name, namespace=namespace, content_type=merge)
            return True

        what = "writing ConfigMap/%s in %s" % (name, namespace)
        self._retried(what, send)
        if no_namespace:
            message = (
                "namespace %s does not exist; it holds the record of what the collection did to each node "
                "(record_namespace, the role's burnin_namespace, also with a namespace per run): create it" % namespace
            )
            raise ClusterCallFailed(what, {"category": "NotFound", "status": 404, "detail": "", "message": message})

    def _remediate(self, name, plan):
        """Read node NAME, PLAN(state) its new state and patch it (not in check mode), again on a conflict. Returns
        (changes, diffs), or None when the node is not there."""
        for _attempt in range(ATTEMPTS):
            node = self._read(name)
            if node is None:
                return None
            before = remediation.node_state(node)
            # Planned from the record ConfigMap's entry; the patch also makes the annotations a true copy of it.
            entry = self._entries.get(name)
            self._note_untrusted(before, entry)
            after = plan(node_records.trusted_state(before, entry))
            patch = remediation.merge_patch(before, after)
            status_patch = node_marks.status_patch(before, after)
            new_entry = node_records.entry_for(after, self._args["run_id"], self._now, entry)
            record_patch = node_records.data_patch(name, entry, new_entry)
            if patch is None and status_patch is None and record_patch is None:
                return [], []
            diff = {
                "before_header": "Node/%s" % name,
                "after_header": "Node/%s" % name,
                "before": remediation.diff_view(before),
                "after": remediation.diff_view(after),
            }
            if self._task.check_mode or patch is None or self._patch(name, patch):
                if status_patch is not None and not self._task.check_mode:
                    self._patch_status(name, status_patch)
                # After the node: a failure in between leaves a mark unrecorded (never removed), not a record of a
                # mark that is not there.
                if record_patch is not None and not self._task.check_mode:
                    self._write_record(record_patch)
                    self._entries[name] = new_entry
                    if new_entry is None:
                        self._entries.pop(name)
                return remediation.changes(before, after), [diff]
        raise ClusterCallFailed(
            "patching Node/%s" % name,
            {"category": "Conflict", "status": 409, "detail": "", "message": "the node changed under every one of %d attempts" % ATTEMPTS},
        )

    def _patch(self, name, patch):
        """Send the merge patch; False on a conflict (the node changed since it was read), so the caller reads again."""
        resource = self._retried("finding the Node API", lambda: self._service.find_resource("Node", "v1", fail=True))
        conflict = []

        def send():
            try:
                self._service.client.patch(resource, patch, name=name, content_type="application/merge-patch+json")
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                if getattr(exc, "status", None) == 409:
                    conflict.append(True)
                    return False
                raise
            return True

        return self._retried("patching Node/%s" % name, send) and not conflict

    def _patch_status(self, name, patch):
        """The condition, a strategic merge patch of the status subresource: conditions merge by their type, so the
        kubelet's own and other tools' conditions stay (a merge patch would replace the whole list)."""
        resource = self._retried("finding the Node API", lambda: self._service.find_resource("Node", "v1", fail=True))
        status = resource.subresources["status"]
        self._retried(
            "patching Node/%s/status" % name,
            lambda: self._service.client.patch(status, patch, name=name, content_type="application/strategic-merge-patch+json"),
        )
