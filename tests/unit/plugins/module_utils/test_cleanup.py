# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""What a cleanup removes (plugins/module_utils/cluster/cleanup.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

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


# What the mutation run of cluster/cleanup.py (issue 47) found untested.


def test_only_the_runs_own_label_value_dooms_a_trainjob_read_back_from_json():
    # the TrainJobs come from the API server as JSON: their label values are new strings, never the caller's run id
    # object (`==` -> `is`); a run id sorting before the others' or a TrainJob without the run label is not doomed
    # (`==` -> `<=`)
    jobs = json.loads(json.dumps([obj("e-r1", **{RUN: "r1"}), obj("e-r0", **{RUN: "r0"}), obj("e-a", **{RUN: "a"}), obj("e-nolabel")]))
    doomed, remaining = cleanup.split_trainjobs(jobs, "".join(["r", "1"]), all_runs=False)
    assert [j["metadata"]["name"] for j in doomed] == ["e-r1"] and remaining == ["e-a", "e-nolabel", "e-r0"]
    doomed, remaining = cleanup.split_trainjobs(jobs, "r9", all_runs=False)
    assert doomed == [] and remaining == ["e-a", "e-nolabel", "e-r0", "e-r1"]


def test_a_namespace_whose_doomed_trainjob_is_already_gone_still_goes():
    # the run's TrainJobs are read before the namespace's burn-in TrainJobs: one deleted in between (its TTL, another
    # cleanup) leaves no burn-in TrainJob in the namespace, which then holds nothing but the run's leftovers
    ours = obj("burnin", **MANAGED)
    assert cleanup.drops_namespace(ours, [], [obj("e-r1")])
    assert cleanup.drops_namespace(ours, [obj("e-r1")], [obj("e-r1"), obj("e-r1-gone")])
    assert not cleanup.drops_namespace(ours, [obj("e-r2")], [obj("e-r1")])
