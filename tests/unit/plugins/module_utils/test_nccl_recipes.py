# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""nccl-tests iterations and warmup as each platform's vendor recipe runs them (_lib/workloads/nccl-tests-recipes.yaml),
and torch-smoke's device set before its process group."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
with open(os.path.join(ROOT, "_lib", "workloads", "nccl-tests-recipes.yaml")) as _fh:
    RECIPES = yaml.safe_load(_fh)
PLATFORMS = sorted(name for name in os.listdir(os.path.join(ROOT, "_lib", "platforms")) if not name.endswith(".j2"))


def _args(name, platform, **params):
    data = dict(params, nodes=2, gpus_per_node=8, platform=platform, gpu_architecture="h100")
    rendered = workload_catalog.render_workload(name, data)
    words = rendered["trainer"]["args"]
    return dict(zip(words, words[1:]))


def test_every_platform_has_a_recipe_with_its_source_or_is_named_unconfirmed():
    for platform in PLATFORMS:
        recipe = RECIPES["platforms"].get(platform)
        assert (recipe is None) == (platform in RECIPES["unconfirmed"]), platform
        if recipe:
            assert recipe["iters"] >= 20 and recipe["warmup_iters"] >= 1 and "@" in recipe["source"], platform


@pytest.mark.parametrize("name", ["nccl-all-reduce", "nccl-all-reduce-node", "nccl-all-gather"])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_iterations_are_the_platform_recipe(name, platform):
    recipe = RECIPES["platforms"].get(platform) or RECIPES["default"]
    args = _args(name, platform)
    assert (args["-n"], args["-w"]) == (str(recipe["iters"]), str(recipe["warmup_iters"]))


def test_aws_runs_100_iterations_as_its_eks_recipe_and_a_parameter_wins():
    assert _args("nccl-all-reduce", "aws")["-n"] == "100"  # awsome-distributed-training kubernetes/nccl-tests.yaml
    assert _args("nccl-all-reduce", "azure")["-n"] == "20"
    assert _args("nccl-all-reduce", "aws", iters=7, warmup_iters=2)["-n"] == "7"


def test_torch_smoke_sets_the_device_before_the_process_group():
    script = workload_catalog.render_workload("torch-smoke", dict(nodes=2, gpus_per_node=8, platform="aws", gpu_architecture="h100"))["trainer"]["args"][2]
    assert script.index("torch.cuda.set_device(") < script.index("dist.init_process_group(")
