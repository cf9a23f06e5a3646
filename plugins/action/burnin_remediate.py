# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_remediate (documentation in plugins/modules/burnin_remediate.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.remediation_run import checked, run_remediation
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_REMEDIATE_OWN, burnin_remediate_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit

NAME = "gpufleet.burnin.burnin_remediate"


class ActionModule(K8sActionBase):
    """Label, taint or cordon nodes after the verdict, or undo it, with kubernetes.core's client in the worker."""

    _supports_check_mode = True
    OWN = BURNIN_REMEDIATE_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_remediate_spec)
    NON_NEGATIVE = ("unreachable_grace",)

    def run_with(self, result, args, auth):
        check_mode = self._task.check_mode
        try:
            # Every option checked before anything connects.
            settings = checked(args)
            cluster = Cluster(auth, NAME, poll_interval=2, unreachable_grace=args["unreachable_grace"]).connect("Node", "v1")
            out = run_remediation(cluster, args, settings, check_mode=check_mode)
        except BurninError as exc:
            return dict(result, failed=True, msg="%s: %s" % (NAME, exc))
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        except ClusterCallFailed as failed:
            changes = getattr(failed, "partial", {}).get("changes", [])
            error = self.shown_error(failed.error)
            return dict(
                result,
                failed=True,
                changed=bool(changes) and not check_mode,
                changes=changes,
                error=error,
                msg="%s: %s" % (failed.what, failed.error["message"]),
            )
        diffs = out.pop("diffs")
        result.update(out)
        if self._task.diff and diffs:
            result["diff"] = diffs
        return result
