# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.k8s_apply (documentation in plugins/modules/k8s_apply.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import K8S_APPLY_OWN, k8s_apply_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.inputs import check_apply_options
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster, shown_diffs
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase

NAME = "gpufleet.burnin.k8s_apply"
# What the result keeps of each applied object: the caller has the objects it applied; echoing every spec back
# costs Ansible's main process time per cluster.
KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation")


def object_reference(obj):
    """The identity of an applied object as the server returned it."""
    if not isinstance(obj, dict):
        return obj
    metadata = obj.get("metadata") or {}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": dict((key, metadata[key]) for key in KEPT_METADATA if key in metadata)}


def compact(outcome):
    """kubernetes.core.k8s's result with each object reduced to its reference (diffs are kept whole)."""
    for item in (outcome.get("result") or {}).get("results") or []:
        if isinstance(item, dict) and "result" in item:
            item["result"] = object_reference(item["result"])
    if "results" not in (outcome.get("result") or {}) and "result" in outcome:
        outcome["result"] = object_reference(outcome["result"])
    return outcome


class ActionModule(K8sActionBase):
    """Server-side apply of a list of objects with kubernetes.core's client, in the controller's worker process."""

    _supports_check_mode = True
    OWN = K8S_APPLY_OWN
    NAME = NAME
    SPEC = staticmethod(k8s_apply_spec)

    def run_with(self, result, args, auth):
        try:
            check_apply_options(args)  # every object and the field manager, before anything connects
        except BurninError as exc:
            return dict(result, failed=True, msg="%s: %s" % (NAME, exc))
        cluster = Cluster(auth, NAME, field_manager=args["field_manager"], force_conflicts=args["force_conflicts"])
        # In check mode the diffs tell a real change from a dry run that only moved managedFields
        # (plugins/module_utils/burnin/cluster_result.py), shown or not.
        try:
            outcome = cluster.apply(args["objects"], check_mode=self._task.check_mode, diff=self._task.diff or self._task.check_mode)
        except ClusterCallFailed as failed:
            # kubernetes.core's message carries the raw Status body: the task says the classified sentence, the raw
            # text stays in error.detail (shown at -v).
            outcome = dict(failed.outcome, msg=failed.error["message"], error=self.shown_error(failed.error))
            outcome.pop("body", None)
        result.update(compact(outcome))
        if self._task.diff:
            result.update(shown_diffs(result))
        return result
