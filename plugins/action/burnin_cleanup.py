# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_cleanup (documentation in plugins/modules/burnin_cleanup.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cleanup_run import run_cleanup
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_CLEANUP_OWN, burnin_cleanup_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit

NAME = "gpufleet.burnin.burnin_cleanup"


class ActionModule(K8sActionBase):
    """Delete what a burn-in run created on one cluster, with kubernetes.core's client in the controller's worker."""

    _supports_check_mode = True
    OWN = BURNIN_CLEANUP_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_cleanup_spec)
    NON_NEGATIVE = ("wait_timeout", "unreachable_grace")

    def run_with(self, result, args, auth):
        if not (args["run_id"] or args["all_runs"]):
            return dict(result, failed=True, msg="run_id: set the run to remove, or all_runs=true")
        try:
            cluster = Cluster(auth, NAME, poll_interval=2, unreachable_grace=args["unreachable_grace"]).connect("Namespace", "v1")
            return dict(result, **run_cleanup(cluster, args, check_mode=self._task.check_mode))
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        except ClusterCallFailed as failed:
            partial = getattr(failed, "partial", {"deleted": [], "kept": []})
            error = self.shown_error(failed.error)
            return dict(result, failed=True, changed=bool(partial["deleted"]), error=error, msg="%s: %s" % (failed.what, failed.error["message"]), **partial)
