# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""gpufleet.burnin.burnin_stage: one stage's attempts (module_utils/burnin/stage_run.py) over plugin_utils/cluster.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.stage_run import run_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import write_logs
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import safe_join
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import role_plan
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_STAGE_OWN, TRAINER_API, burnin_stage_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit

NAME = "gpufleet.burnin.burnin_stage"


class ActionModule(K8sActionBase):
    """Run one stage of a cluster's burn-in with kubernetes.core's client, in the controller's worker process."""

    _supports_check_mode = True
    OWN = BURNIN_STAGE_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_stage_spec)

    def run_with(self, result, args, auth):
        try:
            variables = check_role_vars(args["variables"])
        except BurninError as exc:
            return dict(result, failed=True, msg="%s: %s" % (NAME, exc))
        host = args["host"] or args["result"].get("cluster") or ""
        report_dir = variables.get("burnin_report_dir") or ""

        def plan_attempt(stage, attempt, record):
            return role_plan(variables, record["platform"], record["gpu_architecture"], args["run_id"], args["namespace"], args["cluster"], stage, attempt)

        def written(subdir, results):
            # The logs under the report directory as trainjob_logs' log_dir wrote them (a node stage's in <stage>/).
            return write_logs(safe_join(report_dir, [args["run_id"], host, subdir]), results)[0]

        settings = {
            "repeats": variables["burnin_repeats"],
            "check_mode": bool(self._task.check_mode),
            "diff": bool(self._task.diff),
            "wait": bool(variables["burnin_wait"]),
            "collect_logs": bool(variables["burnin_collect_logs"]),
            "create_namespace": bool(variables["burnin_create_namespace"]),
            "namespace_exists": bool(args["cluster"].get("namespace_exists")),
            "namespace": args["namespace"],
            "timeout": int(variables["burnin_timeout"]),
            "nodes": int(variables["burnin_nodes"]),
            "mnnvl": bool(variables["burnin_enable_mnnvl"]),
            "thresholds": variables["burnin_thresholds"],
            "on_missing": variables["burnin_threshold_on_missing"],
            "cluster": host,
            "write_logs": written if report_dir else None,
        }
        options = dict(
            poll_interval=max(int(variables["burnin_poll_interval"]), 1),
            unreachable_grace=int(variables["burnin_unreachable_grace"]),
            tail_lines=int(variables["burnin_log_tail_lines"]),
            field_manager=variables["burnin_field_manager"],
            force_conflicts=bool(variables["burnin_force_conflicts"]),
        )
        try:
            cluster = Cluster(auth, NAME, args["namespace"], **options).connect("TrainJob", TRAINER_API)
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        try:
            out = run_stage(cluster, args["stage"], args["result"], plan_attempt, settings=settings)
        except (ClusterCallFailed, BurninError, IOError, OSError) as exc:
            partial = getattr(exc, "partial", {})
            return dict(
                result,
                failed=True,
                record=partial.get("record") or args["result"],
                steps=partial.get("steps") or [],
                error=self.shown_error(getattr(exc, "error", None)),
                msg="%s: %s" % (NAME, exc),
            )
        return dict(result, changed=out["changed"], record=out["record"], stop=out["stop"], msg=out["msg"], lines=out["lines"], steps=out["steps"])
