# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""What a cleanup removes (plugins/module_utils/cluster/cleanup.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import cleanup


def obj(name, **labels):
    return {"metadata": {"name": name, "labels": labels}}


RUN = "gpufleet.burnin/run-id"
MANAGED = {"app.kubernetes.io/managed-by": "gpufleet.burnin"}


def test_only_the_runs_trainjobs_go_and_the_others_are_named():
    jobs = [obj("e-r1", **{RUN: "r1"}), obj("e-r2", **{RUN: "r2"}), obj("e-r10", **{RUN: "r10"})]
    doomed, remaining = cleanup.split_trainjobs(jobs, "r1", all_runs=False)
    assert [j["metadata"]["name"] for j in doomed] == ["e-r1"] and remaining == ["e-r10", "e-r2"]
    doomed, remaining = cleanup.split_trainjobs(jobs, "", all_runs=True)
    assert len(doomed) == 3 and remaining == []


def test_the_namespace_goes_only_when_ours_and_only_the_doomed_are_left():
    ours, theirs = obj("burnin", **MANAGED), obj("burnin")
    doomed = [obj("e-r1")]
    assert cleanup.drops_namespace(ours, [obj("e-r1")], doomed)
    assert not cleanup.drops_namespace(ours, [obj("e-r1"), obj("other-entry-r1")], doomed)
    assert not cleanup.drops_namespace(theirs, [obj("e-r1")], doomed)
    assert not cleanup.drops_namespace(None, [], doomed)


def test_run_namespaces_are_those_of_the_base_namespace():
    found = [obj("burnin-r1"), obj("burnin-r2"), obj("other-r1"), obj("burnin")]
    assert cleanup.run_namespaces("burnin", found) == ["burnin-r1", "burnin-r2"]
    assert cleanup.run_namespace_selectors("r1", False)[1] == RUN + "=r1"
    assert cleanup.run_namespace_selectors("", True)[1] == RUN


def test_trainjobs_are_deleted_before_the_shared_objects_they_use():
    runtime = {"api_version": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime"}
    objects = cleanup.doomed_objects("ns", [obj("e-r1")], [(runtime, [obj("e-runtime")])])
    assert [o["kind"] for o in objects] == ["TrainJob", "TrainingRuntime"]
    assert [cleanup.object_label(o) for o in objects] == ["ns: TrainJob/e-r1", "ns: TrainingRuntime/e-runtime"]
    assert cleanup.summary(["a", "b"], ["ns: shared objects of e, still used by TrainJobs e-r2"]) == (
        "deleted 2 object(s), kept ns: shared objects of e, still used by TrainJobs e-r2"
    )
