# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""gpufleet.burnin.burnin_stage: one stage of a cluster's burn-in over plugin_utils/cluster.py: a TrainJob stage's attempts
(module_utils/burnin/stage_run.py) or the isolation (module_utils/burnin/isolation_stage.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_STAGE_OWN, burnin_stage_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster_stages import run_cluster_stage
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase

NAME = "gpufleet.burnin.burnin_stage"


class ActionModule(K8sActionBase):
    """Run one stage of a cluster's burn-in with kubernetes.core's client, in the controller's worker process."""

    _supports_check_mode = True
    OWN = BURNIN_STAGE_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_stage_spec)

    def run_with(self, result, args, auth):
        out = run_cluster_stage(auth, NAME, args, check_mode=self._task.check_mode, diff=self._task.diff)
        if out.get("failed"):
            out["error"] = self.shown_error(out.get("error"))
        result.update(out)
        return result
