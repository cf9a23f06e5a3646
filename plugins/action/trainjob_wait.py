# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.trainjob_wait (documentation in plugins/modules/trainjob_wait.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import UNREACHABLE_CLASSES
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import TRAINJOB_WAIT_OWN, trainjob_wait_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit

NAME = "gpufleet.burnin.trainjob_wait"


class ActionModule(K8sActionBase):
    """Poll one TrainJob with kubernetes.core's client in the worker process until it ends."""

    _supports_check_mode = True
    OWN = TRAINJOB_WAIT_OWN
    NAME = NAME
    SPEC = staticmethod(trainjob_wait_spec)
    NON_NEGATIVE = ("timeout", "poll_interval", "unreachable_grace")

    def run_with(self, result, args, auth):
        if self._task.check_mode:
            # A dry run created no TrainJob: nothing to wait for.
            return dict(result, changed=False, skipped=True, outcome="Skipped", reason="check mode: nothing was created")
        options = dict((key, args[key]) for key in ("poll_interval", "unreachable_grace", "record_pods", "api_version"))
        try:
            cluster = Cluster(auth, NAME, args["namespace"], **options).connect("TrainJob", args["api_version"])
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        except ClusterCallFailed as failed:
            # A cluster that cannot be read is the wait's outcome, as when it stops answering mid-wait.
            outcome = "Unreachable" if failed.error["category"] in UNREACHABLE_CLASSES else "Error"
            return dict(result, changed=False, outcome=outcome, reason=str(failed), error=self.shown_error(failed.error))
        waited = cluster.wait([args["name"]], args["timeout"])[args["name"]]
        result.update(changed=False, **waited)
        return result
