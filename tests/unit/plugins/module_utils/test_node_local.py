# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The node-local stages (node, dcgm, gpu) request GPUs only, on every platform and GPU; the fleet stage keeps its NICs.

A node with one dead NIC must still schedule its GPU test (rendering/node_local.py): read off the rendered plan of
every (platform, GPU, stage).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_plan
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import node_local

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_stage_images as stage_images  # noqa: E402 pylint: disable=wrong-import-position

NICS = role_plan.nic_resource_names()
GPU_RESOURCES = {"nvidia.com/gpu", "cpu", "memory", "ephemeral-storage"}
CASES = [(p, g, s) for p in stage_images.PLATFORMS for g in stage_images.GPUS for s in ("node", "dcgm", "gpu", "fleet")]
# What each fleet stage asks of the network (the platform layer), which the node-local stages must not.
FLEET_NICS = {
    ("aws", "h100"): "vpc.amazonaws.com/efa",
    ("azure", "h100"): "rdma/ib",
    ("coreweave", "h100"): "rdma/ib",
    ("gcp", "gb200"): "networking.gke.io.networks/rdma-0",
    ("gcp", "h100"): "networking.gke.io/interfaces",
    ("aws", "gb300"): "roce-channel",
    ("gcp", "gb300"): "rdma",
}


def _objects(platform, gpu, stage):
    workload = {"node": "nccl-all-reduce-node", "dcgm": "dcgm-diag", "gpu": "gpu-burn", "fleet": "nccl-all-reduce"}[stage]
    given = stage_images._given(platform, gpu, stage, workload, burnin_image="registry.example.com/gpu/nccl-tests:2.16.9")
    return role_plan.role_plan(check_role_vars(given), platform, gpu, "r1", "burnin", stage=stage)["objects"]


def requests_of(objects):
    """Every resource, claim and network annotation the plan's pods ask for."""
    asked = set()
    for obj in objects:
        if obj["kind"] in ("ComputeDomain", "ResourceClaimTemplate"):
            asked.add("%s/%s" % (obj["kind"], obj["metadata"]["name"]))
        if obj["kind"] != "TrainingRuntime":
            continue
        for job in obj["spec"]["template"]["spec"]["replicatedJobs"]:
            template = job["template"]["spec"]["template"]
            asked.update(name for name in ((template.get("metadata") or {}).get("annotations") or {}) if name.startswith("networking.gke.io/"))
            pod_spec = template.get("spec") or {}
            asked.update(claim["name"] for claim in pod_spec.get("resourceClaims") or [])
            for container in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or []):
                resources = container.get("resources") or {}
                for key in ("requests", "limits"):
                    asked.update(resources.get(key) or {})
                asked.update(claim["name"] for claim in resources.get("claims") or [])
    return asked


@pytest.mark.parametrize("platform, gpu, stage", CASES, ids=["-".join(case) for case in CASES])
def test_node_local_stages_request_gpus_only(platform, gpu, stage):
    asked = requests_of(_objects(platform, gpu, stage))
    if stage == "fleet":
        if (platform, gpu) in FLEET_NICS:
            assert FLEET_NICS[(platform, gpu)] in asked  # the network stages keep what the platform layer asks
        return
    assert "nvidia.com/gpu" in asked
    assert asked <= GPU_RESOURCES, "the %s stage on %s %s asks for %s" % (stage, platform, gpu, sorted(asked - GPU_RESOURCES))


def test_a_gpu_claim_stays_and_mnnvl_is_off_on_one_node():
    rct_gpu = {
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpus"},
        "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}},
    }
    rct_nic = {
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "nics"},
        "spec": {"spec": {"devices": {"requests": [{"name": "n", "deviceClassName": "mrdma.google.com"}]}}},
    }
    container = {
        "name": "node",
        "env": [{"name": "NCCL_MNNVL_ENABLE", "value": "1"}],
        "resources": {"limits": {"nvidia.com/gpu": "4", "rdma/ib": 4, "networking.gke.io.networks/rdma-0": "1"}, "claims": [{"name": "g"}, {"name": "n"}]},
    }
    pod = {
        "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "gpus"}, {"name": "n", "resourceClaimTemplateName": "nics"}],
        "containers": [container],
    }
    runtime = {
        "kind": "TrainingRuntime",
        "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": pod}}}}]}}},
    }
    out = node_local.gpus_only([rct_gpu, rct_nic, runtime], {"rdma/ib"})
    assert [obj["metadata"]["name"] for obj in out if obj["kind"] == "ResourceClaimTemplate"] == ["gpus"]
    pod = out[-1]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "g", "resourceClaimTemplateName": "gpus"}]
    assert pod["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "4"}, "claims": [{"name": "g"}]}
    assert pod["containers"][0]["env"] == [{"name": "NCCL_MNNVL_ENABLE", "value": "0"}]
