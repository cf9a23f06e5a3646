# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.trainjob_logs (documentation in plugins/modules/trainjob_logs.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import TRAINJOB_LOGS_OWN, trainjob_logs_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import write_logs
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit

NAME = "gpufleet.burnin.trainjob_logs"


class ActionModule(K8sActionBase):
    """List a TrainJob's pods and read their logs with kubernetes.core's client, in the controller's worker process."""

    _supports_check_mode = True
    OWN = TRAINJOB_LOGS_OWN
    NAME = NAME
    SPEC = staticmethod(trainjob_logs_spec)
    NON_NEGATIVE = ("tail_lines", "unreachable_grace", "max_bytes")

    def run_with(self, result, args, auth):
        if self._task.check_mode:
            return dict(result, changed=False, skipped=True, results=[], pods=[], summary={}, msg="check mode: no TrainJob ran")
        options = dict((key, args[key]) for key in ("tail_lines", "whole_logs_of", "unreachable_grace", "max_bytes"))
        try:
            cluster = Cluster(auth, NAME, args["namespace"], **options).connect()
            collected = cluster.logs(args["name"], {"pods": args["seen_pods"], "logs": args["early_logs"], "logs_cut": args["early_cuts"]})
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        except ClusterCallFailed as failed:
            return dict(result, failed=True, error=self.shown_error(failed.error), msg=str(failed))
        result.update(changed=False, **collected)
        if args["log_dir"]:
            try:
                result["log_files"], result["changed"] = write_logs(args["log_dir"], result["results"])
            except (IOError, OSError) as exc:
                return dict(result, failed=True, msg="cannot write the logs into %s: %s" % (args["log_dir"], exc))
        return result
