# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""gpufleet.burnin.burnin_cleanup's loop: what a burn-in run created on one cluster, deleted namespace by namespace
(what goes: module_utils/cluster/cleanup.py), over the cluster protocol of plugin_utils/cluster.py:

- ``find(kind, api_version, namespace=None, name=None, selectors=None)`` -> the objects;
- ``delete_object(obj)`` (gone already is fine);
- ``wait_gone(objects, timeout)``.

Each raises ClusterCallFailed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import cleanup
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed


def run_cleanup(cluster, args, check_mode=False):
    """burnin_cleanup's options ARGS over CLUSTER: {changed, deleted, kept, msg}. Check mode deletes nothing. A failed
    call raises ClusterCallFailed with ``partial`` {deleted, kept}: what went before it."""
    deleted, kept = [], []

    def delete(obj):
        if not check_mode:
            cluster.delete_object(obj)

    def wait_gone(objects):
        # With ``wait``, every one of OBJECTS at once.
        if not check_mode and args["wait"] and objects:
            cluster.wait_gone(objects, args["wait_timeout"])

    def clean(namespace):
        trainjobs = cluster.find("TrainJob", cleanup.TRAINER_API, namespace, selectors=cleanup.entry_selectors(args["entry"]))
        doomed, remaining = cleanup.split_trainjobs(trainjobs, args["run_id"], args["all_runs"])
        drop = False
        if args["drop_namespace"]:
            found = cluster.find("Namespace", "v1", name=namespace)
            if cleanup.owns_namespace(found[0] if found else None):
                left = cluster.find("TrainJob", cleanup.TRAINER_API, namespace, selectors=[cleanup.managed_selector()])
                drop = cleanup.drops_namespace(found[0], left, doomed)
        if drop:
            dropped = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            delete(dropped)
            deleted.append(cleanup.object_label(dropped, dropped_namespace=True))
            wait_gone([dropped])
            return
        shared = []
        if args["shared"] and not remaining:
            shared = [
                (kind, cluster.find(kind["kind"], kind["api_version"], namespace, selectors=cleanup.entry_selectors(args["entry"])))
                for kind in list(cleanup.SHARED_KINDS) + args["extra_kinds"]
            ]
        elif args["shared"]:
            kept.append(cleanup.kept_note(namespace, args["entry"], remaining))
        objects = list(cleanup.doomed_objects(namespace, doomed, shared))
        for obj in objects:
            delete(obj)
            deleted.append(cleanup.object_label(obj))
        wait_gone(objects)

    try:
        if args["namespace_per_run"]:
            found = cluster.find("Namespace", "v1", selectors=cleanup.run_namespace_selectors(args["run_id"], args["all_runs"]))
            namespaces = cleanup.run_namespaces(args["namespace"], found)
        else:
            namespaces = [args["namespace"]]
        for namespace in namespaces:
            clean(namespace)
    except ClusterCallFailed as failed:
        failed.partial = {"deleted": deleted, "kept": kept}
        raise
    return {"changed": bool(deleted), "deleted": deleted, "kept": kept, "msg": cleanup.summary(deleted, kept)}


__all__ = ["run_cleanup"]
