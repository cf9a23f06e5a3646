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


# What the mutation run of rendering/node_local.py (issue 47) left untested: gpus_only on small objects of the test's
# own, each rule on both sides.
def rct(name, *classes, **how):
    key = how.get("key")
    requests = [
        {"name": "r%d" % i, "exactly": {"deviceClassName": c}} if key == "exactly" else {"name": "r%d" % i, "deviceClassName": c} for i, c in enumerate(classes)
    ]
    return {"kind": "ResourceClaimTemplate", "metadata": {"name": name}, "spec": {"spec": {"devices": {"requests": requests}}}}


def runtime_with(pod, annotations=None):
    template = {"spec": pod}
    if annotations is not None:
        template["metadata"] = {"annotations": annotations}
    return {"kind": "TrainingRuntime", "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": template}}}]}}}}


def pod_of(out):
    return out[-1]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def test_a_claim_template_is_kept_when_any_of_its_requests_is_a_gpu():
    templates = [
        rct("mixed", "roce.networking.k8s.aws", "gpu.nvidia.com"),
        rct("nics", "roce.networking.k8s.aws", "mrdma.google.com"),
        rct("empty"),
        rct("gpus", "compute-domain-default-channel.nvidia.com"),
    ]
    templates.append({"kind": "ResourceClaimTemplate", "metadata": {"name": "bare"}})
    out = node_local.gpus_only(templates + [runtime_with({"containers": []})], set())
    # "gpu" anywhere in a class's name counts (compute-domain-default-channel.nvidia.com has none)
    assert [obj["metadata"]["name"] for obj in out if obj["kind"] == "ResourceClaimTemplate"] == ["mixed"]


def test_a_computedomains_channel_template_goes_with_the_computedomain_and_its_claims():
    domain = {"kind": "ComputeDomain", "metadata": {"name": "cd"}, "spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": "imex-gpu"}}}}
    bare_domain = {"kind": "ComputeDomain", "metadata": {"name": "cd2"}, "spec": {}}
    channel = rct("imex-gpu", "gpu.nvidia.com")  # a GPU-sounding class, but the ComputeDomain's channel
    pod = {
        "resourceClaims": [{"name": "imex", "resourceClaimTemplateName": "imex-gpu"}, {"name": "own", "resourceClaimName": "given"}],
        "containers": [{"name": "node", "resources": {"claims": [{"name": "imex"}, {"name": "own"}]}}],
        "initContainers": [{"name": "init", "resources": {"claims": [{"name": "imex"}]}}],
    }
    out = node_local.gpus_only([domain, bare_domain, channel, runtime_with(pod)], set())
    assert [obj["kind"] for obj in out] == ["TrainingRuntime"]
    pod = pod_of(out)
    assert pod["resourceClaims"] == [{"name": "own", "resourceClaimName": "given"}]
    assert pod["containers"][0]["resources"] == {"claims": [{"name": "own"}]}
    assert pod["initContainers"][0]["resources"] == {}


def test_nic_resources_go_from_requests_and_limits_by_name_or_gke_network_prefix():
    container = {
        "name": "node",
        "resources": {
            "requests": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32, "networking.gke.io.networks/rdma-1": "1", "cpu": "4"},
            "limits": {"nvidia.com/gpu": 8, "rdma/ib": 1, "networking.gke.io.networks/rdma-1.IP": "1", "xnetworking.gke.io.networks/a": "1"},
            "claims": [],
        },
    }
    out = node_local.gpus_only([runtime_with({"containers": [container], "resourceClaims": []})], ["vpc.amazonaws.com/efa", "rdma/ib"])
    pod = pod_of(out)
    assert "resourceClaims" not in pod
    assert pod["containers"][0]["resources"] == {
        "requests": {"nvidia.com/gpu": 8, "cpu": "4"},
        "limits": {"nvidia.com/gpu": 8, "xnetworking.gke.io.networks/a": "1"},
    }
    assert node_local.is_nic_resource("networking.gke.io.networks/x", ()) and not node_local.is_nic_resource("networking.gke.io/interfaces", ())


def test_gke_interfaces_go_and_other_annotations_stay():
    annotations = {"networking.gke.io/interfaces": "[...]", "networking.gke.io/default-interface": "eth0", "other/x": "y"}
    out = node_local.gpus_only([runtime_with({"containers": []}, annotations)], set())
    assert out[0]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"] == {"annotations": {"other/x": "y"}}
    assert annotations["networking.gke.io/interfaces"] == "[...]"  # the objects given are not changed


def test_mnnvl_is_turned_off_in_any_container_and_other_variables_stay():
    env = [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "NCCL_MNNVL_ENABLE", "value": "1"}, {"name": "X", "value": "1"}]
    pod = {
        "containers": [{"name": "a", "env": [dict(e) for e in env]}, {"name": "b"}],
        "initContainers": [{"name": "c", "env": [{"name": "NCCL_MNNVL_ENABLE"}]}],
    }
    pod = pod_of(node_local.gpus_only([runtime_with(pod)], set()))
    assert pod["containers"][0]["env"] == [env[0], {"name": "NCCL_MNNVL_ENABLE", "value": "0"}, env[2]]
    assert pod["initContainers"][0]["env"] == [{"name": "NCCL_MNNVL_ENABLE", "value": "0"}]
    assert pod["containers"][1] == {"name": "b"}


def test_other_objects_pass_through_and_a_runtime_without_jobs_is_kept():
    objects = [
        {"kind": "ClusterRole", "metadata": {"name": "c"}},
        {"kind": "ConfigMap", "metadata": {"name": "c"}},
        {"kind": "TrainingRuntime", "spec": {"template": {"spec": {}}}},
        {"kind": "TrainJob", "spec": {}},
        {"kind": "Workload", "metadata": {"name": "w"}, "spec": {}},
    ]
    assert node_local.gpus_only(objects, set()) == objects


def test_only_a_computedomains_channel_names_a_template_to_drop_and_only_claim_templates_are_dropped_by_name():
    """Objects of other kinds that carry the same fields or names (a ConfigMap named as a NIC template, another kind with
    a channel) keep what they name and stay themselves."""
    channel = {"channel": {"resourceClaimTemplate": {"name": "gpus"}}}
    objects = [
        rct("gpus", "gpu.nvidia.com"),
        rct("nics", "mrdma.google.com"),
        {"kind": "ChannelSet", "metadata": {"name": "a"}, "spec": channel},
        {"kind": "Tenant", "metadata": {"name": "b"}, "spec": channel},
        {"kind": "ConfigMap", "metadata": {"name": "nics"}},
    ]
    out = node_local.gpus_only(objects, set())
    assert [(obj["kind"], obj["metadata"]["name"]) for obj in out] == [
        ("ResourceClaimTemplate", "gpus"),
        ("ChannelSet", "a"),
        ("Tenant", "b"),
        ("ConfigMap", "nics"),
    ]
