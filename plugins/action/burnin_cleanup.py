# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_cleanup (documentation in plugins/modules/burnin_cleanup.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import cleanup
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
            self._cluster = Cluster(auth, NAME, poll_interval=2, unreachable_grace=args["unreachable_grace"]).connect("Namespace", "v1")
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        self._args = args
        deleted, kept = [], []
        try:
            for namespace in self._namespaces():
                self._clean(namespace, deleted, kept)
        except ClusterCallFailed as failed:
            return dict(
                result,
                failed=True,
                changed=bool(deleted),
                deleted=deleted,
                kept=kept,
                error=self.shown_error(failed.error),
                msg="%s: %s" % (failed.what, failed.error["message"]),
            )
        return dict(result, changed=bool(deleted), deleted=deleted, kept=kept, msg=cleanup.summary(deleted, kept))

    def _find(self, kind, api_version, namespace=None, name=None, selectors=None):
        return self._cluster.find(kind, api_version, namespace=namespace, name=name, selectors=selectors)

    def _namespaces(self):
        args = self._args
        if not args["namespace_per_run"]:
            return [args["namespace"]]
        found = self._find("Namespace", "v1", selectors=cleanup.run_namespace_selectors(args["run_id"], args["all_runs"]))
        return cleanup.run_namespaces(args["namespace"], found)

    def _clean(self, namespace, deleted, kept):
        args = self._args
        trainjobs = self._find("TrainJob", cleanup.TRAINER_API, namespace, selectors=cleanup.entry_selectors(args["entry"]))
        doomed, remaining = cleanup.split_trainjobs(trainjobs, args["run_id"], args["all_runs"])
        drop = False
        if args["drop_namespace"]:
            found = self._find("Namespace", "v1", name=namespace)
            if cleanup.owns_namespace(found[0] if found else None):
                left = self._find("TrainJob", cleanup.TRAINER_API, namespace, selectors=[cleanup.managed_selector()])
                drop = cleanup.drops_namespace(found[0], left, doomed)
        if drop:
            dropped = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            self._delete(dropped)
            deleted.append(cleanup.object_label(dropped, dropped_namespace=True))
            self._wait_gone([dropped])
            return
        shared = []
        if args["shared"] and not remaining:
            shared = [
                (kind, self._find(kind["kind"], kind["api_version"], namespace, selectors=cleanup.entry_selectors(args["entry"])))
                for kind in list(cleanup.SHARED_KINDS) + args["extra_kinds"]
            ]
        elif args["shared"]:
            kept.append(cleanup.kept_note(namespace, args["entry"], remaining))
        objects = list(cleanup.doomed_objects(namespace, doomed, shared))
        for obj in objects:
            self._delete(obj)
            deleted.append(cleanup.object_label(obj))
        self._wait_gone(objects)

    def _delete(self, obj):
        """Delete OBJ (gone already is fine). Check mode deletes nothing."""
        if not self._task.check_mode:
            self._cluster.delete_object(obj)

    def _wait_gone(self, objects):
        """With ``wait``, poll until every one of OBJECTS is gone, all at once."""
        if self._task.check_mode or not self._args["wait"] or not objects:
            return
        self._cluster.wait_gone(objects, self._args["wait_timeout"])
