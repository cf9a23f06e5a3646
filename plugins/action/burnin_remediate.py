# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_remediate (documentation in plugins/modules/burnin_remediate.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_REMEDIATE_OWN, burnin_remediate_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.node_remediation import remediate_nodes

NAME = "gpufleet.burnin.burnin_remediate"


class ActionModule(K8sActionBase):
    """Label, taint or cordon nodes after the verdict, or undo it, with kubernetes.core's client in the worker."""

    _supports_check_mode = True
    OWN = BURNIN_REMEDIATE_OWN
    NAME = NAME
    SPEC = staticmethod(burnin_remediate_spec)
    NON_NEGATIVE = ("unreachable_grace",)

    def run_with(self, result, args, auth):
        out = remediate_nodes(auth, NAME, args, check_mode=self._task.check_mode)
        if out.get("failed"):
            if "error" in out:
                out["error"] = self.shown_error(out["error"])
            return dict(result, **out)
        diffs = out.pop("diffs")
        result.update(out)
        if self._task.diff and diffs:
            result["diff"] = diffs
        return result
