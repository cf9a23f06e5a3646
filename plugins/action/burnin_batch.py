# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""gpufleet.burnin.burnin_batch: every cluster's stages of the play's batch at once, from one task run once
(module_utils/burnin/batch_run.py over plugin_utils/cluster_stages.py); documentation in plugins/modules/burnin_batch.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.batch_run import run_batch
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import failure_of
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import safe_join
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_BATCH_OWN, burnin_batch_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cancel
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster_stages import run_cluster_stage
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, display, host_auth

NAME = "gpufleet.burnin.burnin_batch"
# The facts of each host the role's earlier tasks set (roles/burnin/tasks/main.yml), by the option of burnin_stage
# they feed.
FACTS = {"result": "burnin_result", "variables": "burnin__checked", "run_id": "burnin__run_id", "namespace": "burnin__namespace", "cluster": "burnin__cluster"}


class ActionModule(K8sActionBase):
    """Run every cluster's stages with kubernetes.core's client, in this worker process, a thread per cluster."""

    _supports_check_mode = True
    OWN = BURNIN_BATCH_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_batch_spec)

    def run(self, tmp=None, task_vars=None):
        self._host_vars_of = (task_vars or {}).get("hostvars")
        self._given = dict(self._task.args)
        self._all_vars = task_vars or {}
        return super(ActionModule, self).run(tmp, task_vars)

    def inputs_of(self, host):
        """(burnin_stage's options, kubernetes.core's authentication options) of HOST from its facts and its own
        templating of the play's module_defaults; None when its cluster was not detected in this play."""
        raw = self._host_vars_of.raw_get(host) if self._host_vars_of is not None else {}
        if not isinstance(raw, dict) or not isinstance(raw.get("burnin__cluster"), dict):
            return None
        variables = dict(self._all_vars)
        variables.update(raw)
        templar = self._templar.copy_with_new_env(available_variables=variables)
        args = dict((option, templar.template(raw.get(fact))) for option, fact in FACTS.items())
        if (args["cluster"] or {}).get("outcome") != "Detected" or not isinstance(args["result"], dict):
            return None
        args["host"] = host
        given = dict((key, value) for key, value in self._given.items() if key not in self.OWN)
        return args, host_auth(self._task, templar, self.SPEC(), self.OWN, given)

    def run_with(self, result, args, auth):
        del auth  # each host's own (inputs_of)
        specs, inputs, left_out, broken = {}, {}, [], {}
        for host in args["hosts"]:
            try:
                found = self.inputs_of(host)
            except BurninError as exc:
                broken[host] = "%s: %s: %s" % (NAME, host, exc)
                continue
            if found is None:
                left_out.append(host)
                continue
            inputs[host] = found
            stages = list((found[0]["variables"] or {}).get("burnin_stages") or ["fleet"])
            specs[host] = {"stages": stages, "record": found[0]["result"]}
        check_mode, diff = bool(self._task.check_mode), bool(self._task.diff)
        display.display("%s: %d cluster(s) at once: %s" % (NAME, len(specs), ", ".join(sorted(specs)) or "none"))
        # Said now: once the run is cancelled, Ansible no longer shows what its workers print.
        for run_id in sorted(set(found[0]["run_id"] for found in inputs.values())):
            display.display(
                "%s: if this run is stopped (Ctrl-C, an AWX cancel), what it created (label gpufleet.burnin/run-id=%s) is removed by: "
                "ansible-playbook -i <inventory> gpufleet.burnin.cleanup -e burnin_run_id=%s" % (NAME, run_id, run_id)
            )

        def run_stage(host, stage, record):
            stage_args, host_auth_options = inputs[host]
            return run_cluster_stage(
                host_auth_options, NAME, dict(stage_args, stage=stage, result=record), check_mode=check_mode, diff=diff, progress=display.display, cancel=cancel
            )

        cancel = Cancel()
        previous = {}

        def on_signal(signum, frame):
            del frame
            cancel.request(signum)

        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, on_signal)
        try:
            outs = run_batch(specs, run_stage, cancel=cancel)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        clusters = dict((host, self.shown(host, out, inputs[host][1])) for host, out in outs.items())
        for host, msg in broken.items():
            # Its authentication options are wrong: nothing reached its cluster.
            record = self._host_vars_of[host].get("burnin_result") or {}
            clusters[host] = self.shown(host, {"failed": True, "record": record, "msg": msg, "stage": "fleet", "error": None}, {})
            inputs[host] = ({"run_id": record.get("run_id") or "", "namespace": "", "variables": {}}, {})
        if cancel.is_set():
            self.cancelled(clusters, inputs, cancel.signum or signal.SIGINT, previous)
        diffs = [diff for host in sorted(clusters) for diff in clusters[host].pop("diff", [])]
        result.update(clusters=clusters, left_out=left_out, changed=any(out.get("changed") for out in clusters.values()))
        result["msg"] = "%d cluster(s): %d ran every stage, %d failed, %d not driven" % (
            len(clusters) + len(left_out),
            sum(1 for out in clusters.values() if not out.get("failed")),
            sum(1 for out in clusters.values() if out.get("failed")),
            len(left_out),
        )
        if diffs:
            result["diff"] = diffs
        return result

    def shown(self, host, out, auth):
        """HOST's entry: its last stage's result, with a failure's record as the role's rescue keeps it
        (cluster_result.failure_of, the failed task named by its stage) and the server's words only at -v."""
        out = dict(out)
        for diff in out.get("diff") or []:
            for header in ("before_header", "after_header"):
                if header in diff:
                    diff[header] = "%s: %s" % (host, diff[header])
        if not out.get("failed"):
            return out
        failed = {"msg": out.get("msg"), "error": out.get("error")}
        failure = failure_of(out.get("record"), {"name": "Run the stage %s" % out.get("stage")}, failed, context=auth.get("context"))
        out["record"] = dict(out.get("record") or {}, **failure["record"])
        out["detail"] = failure["detail"] if display.verbosity >= 1 else ""
        out["error"] = self.shown_error(out.get("error"))
        return out

    @staticmethod
    def cancelled(clusters, inputs, signum, previous):
        """After a cancel: what each cluster's run created, with burnin_report_dir in <report dir>/<run id>/cancelled.json
        (Ansible no longer shows what a worker prints by then); then the signal's own handler (Ansible's worker ends
        there)."""
        created, run_ids, report_dirs = {}, set(), set()
        for host, out in clusters.items():
            args = inputs[host][0]
            record = out.get("record") or {}
            run_ids.add(args["run_id"])
            created[host] = {"namespace": args["namespace"], "applied": list(record.get("applied") or []), "stage": out.get("stage"), "msg": out.get("msg")}
            report_dir = (args["variables"] or {}).get("burnin_report_dir")
            if report_dir:
                report_dirs.add((report_dir, args["run_id"]))
        record = {"cancelled": True, "run_ids": sorted(run_ids), "clusters": created}
        for report_dir, run_id in sorted(report_dirs):
            path = safe_join(report_dir, [run_id, "cancelled.json"])
            if not os.path.isdir(os.path.dirname(path)):
                os.makedirs(os.path.dirname(path))
            with open(path, "w") as handle:
                json.dump(record, handle, indent=2, sort_keys=True)
        handler = previous.get(signum)
        if callable(handler):
            handler(signum, None)
