# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""burnin/isolation_stage.py, the rules its mutation run (docs/mutation.md, issue 47's sixth round) found unpinned by
test_isolation_stage.py: the one TrainJob of the fleet stage, and how many nodes the sweep's pairs need."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import isolation_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def trainjob(name):
    return {"kind": "TrainJob", "apiVersion": "trainer.kubeflow.org/v1alpha1", "metadata": {"name": name, "namespace": "burnin"}}


@pytest.mark.parametrize("count", [0, 2, 3])
def test_the_fleet_stage_must_have_planned_exactly_one_trainjob(count):
    objects = [{"kind": "TrainingRuntime", "metadata": {"name": "rt"}}] + [trainjob("nccl-%d" % index) for index in range(count)]
    with pytest.raises(BurninError) as caught:
        isolation_stage.isolate(lambda *args: None, {}, objects, nodes=["n1", "n2", "n3"], known_good=[])
    assert "must hold the fleet stage's one planned TrainJob, found %d" % count in str(caught.value)


def test_one_trainjob_and_fewer_than_two_nodes_is_nothing_to_isolate():
    out = isolation_stage.isolate(lambda *args: None, {}, [trainjob("nccl-1")], nodes=["n1"], known_good=[])
    assert out["skipped"] is True and out["msg"] == "fewer than 2 nodes in the run: nothing to isolate"


@pytest.mark.parametrize(
    "nodes, reason",
    [
        ([], "0 node picked: a pair needs two"),
        (None, "0 node picked: a pair needs two"),
        (["n1"], "1 node picked: a pair needs two"),
        (["n1", "n2"], ""),
        (["n1", "n2", "n3"], ""),
    ],
)
def test_the_sweeps_pairs_need_two_nodes_or_more(nodes, reason):
    assert isolation_stage.sweep_pairs_needed(nodes, {"wait": True, "collect_logs": True}) == reason


def test_a_fleet_stage_without_mnnvl_ready_needs_no_isolation_also_read_back_from_json():
    # The result arrives through the role's facts: its check names are new strings, compared by value.
    text = '{"results": "nccl-tests", "verdict": {"verdict": "fail", "nodes": ["n1", "n2"], "checks": [{"name": "mnnvl"}]}}'
    settings = {"wait": True, "collect_logs": True}
    assert isolation_stage.needed(json.loads(text), settings) == "MNNVL was not ready on some nodes: the fleet stage ran no job (cluster/mnnvl.py)"
    other = json.loads(text.replace('"mnnvl"', '"transport"'))
    assert isolation_stage.needed(other, settings) != isolation_stage.needed(json.loads(text), settings)
