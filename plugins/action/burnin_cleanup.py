# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_cleanup (documentation in plugins/modules/burnin_cleanup.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import cleanup
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import classify
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.polling import poll_until
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_CLEANUP_OWN, burnin_cleanup_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import ClusterCallFailed, K8sActionBase, ModuleExit, k8s_reader, server_of

NAME = "gpufleet.burnin.burnin_cleanup"


class CleanupFailed(ClusterCallFailed):
    """A read or delete that failed for good (its class, or the cluster unreachable for the grace)."""


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
            self._service = k8s_reader(dict(auth, kind="Namespace", api_version="v1"), NAME)
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        self._args, self._auth = args, auth
        self._server = server_of(self._service, auth)
        deleted, kept = [], []
        try:
            for namespace in self._namespaces():
                self._clean(namespace, deleted, kept)
        except CleanupFailed as failed:
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

    def _retried(self, what, call, timeout=None, done=None):
        """CALL()'s value, retried while the cluster does not answer (for unreachable_grace seconds); with DONE,
        polled until DONE(value) or TIMEOUT."""
        grace = self._args["unreachable_grace"]
        polled = poll_until(
            call, done or (lambda value: True), grace if timeout is None else timeout, 2, grace, context=self._auth.get("context"), server=self._server
        )
        if polled["state"] == "done":
            return polled["value"]
        if polled["state"] == "timeout" and polled["error"] is None:
            raise CleanupFailed(what, {"category": "Error", "status": 0, "detail": "", "message": "still there after %d s." % timeout})
        raise CleanupFailed(what, polled["error"])

    def _find(self, kind, api_version, namespace=None, name=None, selectors=None):
        found = self._retried("listing %s" % kind, lambda: self._service.find(kind, api_version, name=name, namespace=namespace, label_selectors=selectors))
        return found.get("resources") or []

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
        if self._task.check_mode:
            return
        metadata = obj["metadata"]
        what = "deleting %s/%s" % (obj["kind"], metadata["name"])
        resource = self._retried(what, lambda: self._service.find_resource(obj["kind"], obj["apiVersion"], fail=True))

        def delete():
            try:
                self._service.client.delete(resource, name=metadata["name"], namespace=metadata.get("namespace"))
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                if getattr(exc, "status", None) != 404 and classify(str(exc))["category"] != "NotFound":
                    raise
            return True

        self._retried(what, delete)

    def _wait_gone(self, objects):
        """With ``wait``, poll until every one of OBJECTS is gone, all at once (their finalizers and grace periods
        run side by side); each look reads only the ones still there."""
        if self._task.check_mode or not self._args["wait"] or not objects:
            return
        left = list(objects)

        def still_there():
            left[:] = [
                obj
                for obj in left
                if self._service.find(obj["kind"], obj["apiVersion"], name=obj["metadata"]["name"], namespace=obj["metadata"].get("namespace")).get("resources")
            ]
            return list(left)

        self._retried(
            "waiting for %s to go" % ", ".join("%s/%s" % (obj["kind"], obj["metadata"]["name"]) for obj in objects),
            still_there,
            timeout=self._args["wait_timeout"],
            done=lambda found: not found,
        )
