# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""What a cleanup removes from one namespace, decided from what the cluster holds (module_utils/burnin/
cleanup_run.py reads and deletes).

A run's TrainJobs go (label gpufleet.burnin/run-id, or every TrainJob of the entry with ``all_runs``). The entry's
shared objects (its runtime and the dependencies of its overrides, label gpufleet.burnin/entry) go once no TrainJob
of the entry is left. The namespace goes, with everything in it, when the burn-in created it (label
app.kubernetes.io/managed-by) and no burn-in TrainJob but the doomed ones is in it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import ENTRY_LABEL, MANAGED_BY_LABEL, MANAGER, RUN_LABEL
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.runtime import API_VERSION as TRAINER_API

# Kinds the burn-in may create beside its TrainJobs, searched by the entry's label: the runtime and the objects
# platform overrides depend on (_lib/deps/).
SHARED_KINDS = (
    {"api_version": TRAINER_API, "kind": "TrainingRuntime"},
    {"api_version": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain"},
    {"api_version": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate"},
    {"api_version": "v1", "kind": "ConfigMap"},  # e.g. OCI's sshd port on the host network
)


def managed_selector():
    """The label selector of everything the burn-in created."""
    return "%s=%s" % (MANAGED_BY_LABEL, MANAGER)


def entry_selectors(entry):
    """The label selectors of the objects of ENTRY."""
    return [managed_selector(), "%s=%s" % (ENTRY_LABEL, entry)]


def run_namespace_selectors(run_id, all_runs):
    """The label selectors of the namespaces made per run: RUN_ID's, or every run's."""
    return [managed_selector(), RUN_LABEL if all_runs else "%s=%s" % (RUN_LABEL, run_id)]


def _name(obj):
    return obj["metadata"]["name"]


def _labels(obj):
    return (obj.get("metadata") or {}).get("labels") or {}


def run_namespaces(base, namespaces):
    """The names of NAMESPACES (objects found by run_namespace_selectors) made for runs of the BASE namespace
    (named BASE-<run id>), sorted."""
    return sorted(_name(ns) for ns in namespaces if _name(ns).startswith(base + "-"))


def split_trainjobs(trainjobs, run_id, all_runs):
    """(the TrainJobs of the entry that go, the names of those that stay), from the entry's TRAINJOBS."""
    if all_runs:
        return list(trainjobs), []
    doomed = [job for job in trainjobs if _labels(job).get(RUN_LABEL) == str(run_id)]
    return doomed, sorted(set(_name(job) for job in trainjobs) - set(_name(job) for job in doomed))


def owns_namespace(namespace):
    """Whether the burn-in created NAMESPACE (an object, or None when it does not exist)."""
    return bool(namespace) and _labels(namespace).get(MANAGED_BY_LABEL) == MANAGER


def drops_namespace(namespace, burnin_trainjobs, doomed):
    """Whether NAMESPACE goes: the burn-in created it and of its BURNIN_TRAINJOBS (any entry) only the DOOMED are in
    it, so that deleting it deletes nothing but the run."""
    if not owns_namespace(namespace):
        return False
    return not set(_name(job) for job in burnin_trainjobs) - set(_name(job) for job in doomed)


def doomed_objects(namespace, trainjobs, shared):
    """The objects to delete, TrainJobs first (their pods hold the shared objects), as {apiVersion, kind, metadata}.
    SHARED is a list of (kind entry of SHARED_KINDS or extra kinds, objects found)."""
    objects = [{"apiVersion": TRAINER_API, "kind": "TrainJob", "metadata": {"name": _name(job), "namespace": namespace}} for job in trainjobs]
    for kind, found in shared:
        objects.extend({"apiVersion": kind["api_version"], "kind": kind["kind"], "metadata": {"name": _name(obj), "namespace": namespace}} for obj in found)
    return objects


def object_label(obj, dropped_namespace=False):
    """How the result names a deleted object: "<namespace>: Kind/name", or "Namespace/<name>"."""
    if dropped_namespace:
        return "Namespace/%s" % obj["metadata"]["name"]
    return "%s: %s/%s" % (obj["metadata"]["namespace"], obj["kind"], obj["metadata"]["name"])


def kept_note(namespace, entry, remaining):
    """The result's sentence for shared objects kept because TrainJobs of other runs still use them."""
    return "%s: shared objects of %s, still used by TrainJobs %s" % (namespace, entry, ", ".join(remaining))


def summary(deleted, kept):
    """The cleanup's reason: "deleted 3 object(s), kept ..."."""
    return "deleted %d object(s)%s" % (len(deleted), (", kept " + ", ".join(kept)) if kept else "")
