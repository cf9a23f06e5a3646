# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_isolate (documentation in plugins/modules/burnin_isolate.py).

The isolation is plugins/module_utils/burnin/isolation_stage.py's (the burn-in's isolation stage runs the same); this
file gives it the cluster of plugins/plugin_utils/cluster.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.isolation_stage import isolate
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_ISOLATE_OWN, burnin_isolate_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_isolation_budget
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit

NAME = "gpufleet.burnin.burnin_isolate"


class ActionModule(K8sActionBase):
    """Find the nodes that made a multi-node run fail, with pair TrainJobs, in the controller's worker process."""

    _supports_check_mode = True
    OWN = BURNIN_ISOLATE_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_isolate_spec)
    NON_NEGATIVE = ("timeout", "poll_interval", "unreachable_grace", "tail_lines")

    def run_with(self, result, args, auth):
        options = dict((key, args[key]) for key in ("poll_interval", "unreachable_grace", "field_manager", "force_conflicts", "tail_lines"))

        def connect(namespace, api_version):
            return Cluster(auth, NAME, namespace, api_version=api_version, **options).connect("TrainJob", api_version)

        try:
            check_isolation_budget(args["max_jobs"], args["max_minutes"])
            out = isolate(
                connect,
                args["result"],
                args["objects"],
                judging=dict((key, args[key]) for key in ("overrides", "on_missing", "mnnvl")),
                budget=dict((key, args[key]) for key in ("max_jobs", "max_minutes", "timeout")),
                nodes=args["nodes"],
                known_good=args["known_good"],
                check_mode=bool(self._task.check_mode),
            )
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        except (ClusterCallFailed, BurninError) as exc:
            partial = getattr(exc, "partial", {})
            return dict(
                result,
                failed=True,
                changed=bool(partial.get("rounds")),
                rounds=partial.get("rounds") or [],
                error=self.shown_error(getattr(exc, "error", None)),
                msg="%s: %s" % (NAME, exc),
            )
        return dict(result, **out)
