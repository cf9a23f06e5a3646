# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""module_utils/burnin/cleanup_run.py against a fake cluster of its protocol (find, delete_object, wait_gone): what
goes, in which order, what check mode and a failed call leave (end to end: tests/e2e/test_cancel.py, test_role.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cleanup_run import run_cleanup
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import cleanup
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed

MANAGED = {"app.kubernetes.io/managed-by": "gpufleet.burnin"}


def obj(kind, name, namespace="burnin", **labels):
    return {"kind": kind, "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED, **labels)}}


class Objects(object):
    """Objects by kind; FAIL_ON: the kind whose delete fails."""

    def __init__(self, objects, fail_on=None, owned_namespace=True):
        self.objects, self.fail_on, self.calls = list(objects), fail_on, []
        self.namespace = obj("Namespace", "burnin", None) if owned_namespace else {"kind": "Namespace", "metadata": {"name": "burnin"}}

    def find(self, kind, api_version, namespace=None, name=None, selectors=None):
        self.calls.append(("find", kind))
        if kind == "Namespace":
            return [self.namespace]
        return [item for item in self.objects if item["kind"] == kind]

    def delete_object(self, item):
        self.calls.append(("delete", "%s/%s" % (item["kind"], item["metadata"]["name"])))
        if item["kind"] == self.fail_on:
            raise ClusterCallFailed("deleting %s" % item["kind"], {"category": "Forbidden", "status": 403, "detail": "", "message": "no"})

    def wait_gone(self, objects, timeout):
        self.calls.append(("wait", len(objects), timeout))


def args(**given):
    base = dict(entry="nccl", namespace="burnin", run_id="r1", all_runs=False, namespace_per_run=False, shared=True, drop_namespace=False, wait=True)
    base.update(wait_timeout=60, extra_kinds=[])
    base.update(given)
    return base


FLEET = [obj("TrainJob", "nccl-r1", **{"gpufleet.burnin/run-id": "r1"}), obj("TrainJob", "nccl-r2", **{"gpufleet.burnin/run-id": "r2"})]
RUNTIME = obj("TrainingRuntime", "nccl-runtime")


def test_a_runs_trainjob_goes_and_the_shared_runtime_stays_while_another_run_uses_it():
    cluster = Objects(FLEET + [RUNTIME])
    out = run_cleanup(cluster, args())
    assert out["deleted"] == ["burnin: TrainJob/nccl-r1"] and out["changed"]
    assert out["kept"] == [cleanup.kept_note("burnin", "nccl", ["nccl-r2"])]
    assert ("wait", 1, 60) in cluster.calls


def test_the_last_run_takes_the_shared_objects_trainjobs_first():
    cluster = Objects(FLEET[:1] + [RUNTIME])
    out = run_cleanup(cluster, args())
    assert out["deleted"] == ["burnin: TrainJob/nccl-r1", "burnin: TrainingRuntime/nccl-runtime"] and out["kept"] == []


@pytest.mark.parametrize("owned, dropped", [(True, True), (False, False)])
def test_a_namespace_goes_whole_only_when_the_burnin_made_it(owned, dropped):
    cluster = Objects(FLEET[:1], owned_namespace=owned)
    out = run_cleanup(cluster, args(drop_namespace=True))
    assert (out["deleted"] == ["Namespace/burnin"]) is dropped


def test_check_mode_deletes_and_waits_for_nothing_but_names_what_would_go():
    cluster = Objects(FLEET[:1] + [RUNTIME])
    out = run_cleanup(cluster, args(), check_mode=True)
    assert len(out["deleted"]) == 2 and not [call for call in cluster.calls if call[0] in ("delete", "wait")]


def test_a_failed_delete_keeps_what_went_before_it():
    cluster = Objects(FLEET[:1] + [RUNTIME], fail_on="TrainingRuntime")
    with pytest.raises(ClusterCallFailed) as failed:
        run_cleanup(cluster, args())
    assert failed.value.partial == {"deleted": ["burnin: TrainJob/nccl-r1"], "kept": []}
