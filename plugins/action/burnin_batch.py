# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""gpufleet.burnin.burnin_batch: every cluster's stages of the play's batch at once, from one task run once
(module_utils/burnin/batch_run.py over plugin_utils/cluster_stages.py); documentation in plugins/modules/burnin_batch.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_BATCH_OWN, burnin_batch_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster_batch import drive_batch, host_inputs, started_result
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, display, host_auth

NAME = "gpufleet.burnin.burnin_batch"


class ActionModule(K8sActionBase):
    """Run every cluster's stages with kubernetes.core's client, in this worker process, a thread per cluster."""

    _supports_check_mode = True
    OWN = BURNIN_BATCH_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_batch_spec)

    def run(self, tmp=None, task_vars=None):
        self._task_vars = task_vars or {}
        # As given, before the base templates them: each host's authentication is templated with its own variables.
        self._given = dict((key, value) for key, value in self._task.args.items() if key not in self.OWN)
        return super(ActionModule, self).run(tmp, task_vars)

    def run_with(self, result, args, auth):
        del auth  # each host's own (host_inputs)
        hostvars = self._task_vars.get("hostvars")
        spec = self.SPEC()  # once: each call builds it anew

        def inputs_of(host):
            return host_inputs(hostvars, self._task_vars, self._templar, host, lambda templar: host_auth(self._task, templar, spec, self.OWN, self._given))

        def broken_record(host):
            return dict((started_result(hostvars.raw_get(host)) or {}).get("result") or {})

        out = drive_batch(
            NAME,
            args["hosts"],
            inputs_of,
            broken_record,
            display.display,
            check_mode=self._task.check_mode,
            diff=self._task.diff,
            # The API server's own words at -v, as the role's rescue shows them, unless the task hides its output.
            verbose=display.verbosity >= 1 and not self._task.no_log,
        )
        for entry in out["clusters"].values():
            if entry.get("failed"):
                entry["error"] = self.shown_error(entry.get("error"))
        result.update(out)
        return result
