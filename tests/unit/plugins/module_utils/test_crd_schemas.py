# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every rendered object validates against the upstream CRD schemas, structurally:
an unknown field is a failure, as it would be pruned or rejected by an API server.

The matrix: every platform (the platform layer's, the seed-only neoclouds and an unknown one) x GPU (h100, h200,
b200, gb200, gb300) x framework x MNNVL, plus the instance types and platform variables that change the output.
Built-in kinds without a CRD here (ResourceClaimTemplate in its three API versions, ConfigMap) are checked by hand.

The CRDs are the ones the test fleet installs: Trainer's from its Go module, copied out of the module cache by
tests/fleet/build.sh into $GPUFLEET_CACHE/components/manifests/crds (the ansible-test tree links it as
ansible_collections/gpufleet/testbed-manifests, scripts/setup.sh), and the ComputeDomain stand-in of
tests/fleet/stand-ins (NVIDIA's DRA driver module is not served)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import itertools
import json
import os
import re

import pytest

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import templating  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.platform_catalog import load_platform_catalog


def _manifests_dir():
    for candidate in (
        os.path.join(os.path.dirname(templating.COLLECTION_ROOT), "testbed-manifests"),
        os.path.join(os.environ.get("GPUFLEET_CACHE") or os.path.expanduser("~/.cache/gpufleet-burnin"), "components", "manifests"),
    ):
        if os.path.isdir(os.path.join(candidate, "crds")):
            return candidate
    return None


MANIFESTS = _manifests_dir()
STAND_INS = os.path.join(templating.COLLECTION_ROOT, "tests", "fleet", "stand-ins")
CRD_FILES = {
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"): os.path.join("crds", "trainer.kubeflow.org_trainingruntimes.yaml"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): os.path.join("crds", "trainer.kubeflow.org_trainjobs.yaml"),
    ("resource.nvidia.com/v1beta1", "ComputeDomain"): os.path.join(STAND_INS, "computedomain-crd.yaml"),
}
# Every platform of _lib/platforms/, and one the collection does not know.
PLATFORMS = sorted(load_platform_catalog()) + ["other"]
ARCHITECTURES = ["h100", "h200", "b200", "gb200", "gb300"]
# (platform, gpu, extra plan config): instance types and variables that change the rendered objects.
VARIANTS = [
    ("aws", "h200", {"instance_type": "p5e.48xlarge"}),
    ("aws", "h100", {"platform_vars": {"aws_hugepages_2mi": "5120Mi"}, "efa_per_node": 16}),
    ("aws", "gb300", {"server_version": "v1.32.4"}),
    ("aws", "gb300", {"server_version": "v1.33.2"}),
    ("gcp", "h100", {"instance_type": "a3-highgpu-8g", "platform_vars": {"gcp_tcpx_networks": ["n1", "n2", "n3", "n4"]}}),
    ("gcp", "h200", {"platform_vars": {"gcp_rdma_mode": "dranet"}, "rct_api_version": "v1beta1"}),
    ("gcp", "b200", {"platform_vars": {"gcp_gvnic_network": "gvnic-1"}}),
    ("gcp", "gb200", {"platform_vars": {"gcp_rdma_networks": ["a", "b", "c", "d"], "gcp_gvnic_network": "gvnic-1"}}),
    ("gcp", "gb300", {"server_version": "v1.33.0", "dra_driver_version": "v25.3.2"}),
    ("azure", "h100", {"mlnx_per_node": 8}),
    ("azure", "h200", {"platform_vars": {"azure_topology_configmap": "ndv5-topo", "azure_sharp": False}}),
    ("azure", "gb300", {"rdma_resource": "rdma/shared_ib"}),
    ("oci", "h100", {"platform_vars": {"oci_network_mode": "sriov"}}),
    ("oci", "b200", {"platform_vars": {"oci_network_mode": "sriov", "oci_sriov_network": "burnin/rdma-vf"}}),
    ("oci", "gb200", {"instance_type": "BM.GPU.GB200-v3.4"}),
    ("oci", "h200", {"platform_vars": {"oci_ssh_port": 2022}}),
    ("coreweave", "gb300", {"platform_vars": {"coreweave_gb300_networks": ["cw-multus/ibs0p0-macvlan"], "coreweave_sharp": True}}),
    ("nebius", "h100", {"rdma_resource": "rdma/ib", "rdma_per_node": 8}),
    (
        "onprem",
        "b200",
        {"rdma_resource": "nvidia.com/hostdev", "rdma_per_node": 8, "platform_vars": {"onprem_networks": ["hostdev-net"], "onprem_ib_hca": "=mlx5_0,mlx5_1"}},
    ),
]
FRAMEWORKS = ["torch", "mpi", "exec"]
DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
TRAINERS = {
    "torch": {"script": "/workspace/smoke.py", "args": ["--steps", "10"]},
    "mpi": {"binary": "/usr/local/bin/all_reduce_perf", "args": ["-b", "8", "-e", "8G", "-f", "2"]},
    "exec": {"command": ["python3", "-c", "print('ok')"]},
}

pytestmark = pytest.mark.skipif(
    MANIFESTS is None or not os.path.isdir(STAND_INS), reason="the test bed's upstream CRDs are not built yet: run tests/fleet/build.sh in a checkout"
)


def structural(schema):
    """OpenAPI v3 CRD schema -> JSON Schema that refuses unknown fields where the API server would prune them."""
    schema = copy.deepcopy(schema)

    def visit(node):
        if not isinstance(node, dict):
            return
        if node.get("x-kubernetes-int-or-string"):
            node.pop("type", None)
            node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        if "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields") and "additionalProperties" not in node:
            node["additionalProperties"] = False
        if node.get("nullable"):
            node.pop("type", None)
        for key in ("properties",):
            for child in (node.get(key) or {}).values():
                visit(child)
        for key in ("items", "additionalProperties"):
            visit(node.get(key))
        for key in ("allOf", "anyOf", "oneOf"):
            for child in node.get(key) or []:
                visit(child)

    visit(schema)
    return schema


_VALIDATORS = {}


def validator(api_version, kind):
    key = (api_version, kind)
    if key not in _VALIDATORS:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        with open(os.path.join(MANIFESTS, CRD_FILES[key])) as handle:
            crd = [doc for doc in yaml.load_all(handle, Loader=loader) if doc][0]
        version = api_version.split("/")[1]
        (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
        _VALIDATORS[key] = jsonschema.Draft7Validator(structural(served["schema"]["openAPIV3Schema"]))
    return _VALIDATORS[key]


_EXACT_REQUEST = {"deviceClassName", "count", "allocationMode", "selectors", "adminAccess", "tolerations"}


def validate_resource_claim_template(obj):
    # resource.k8s.io is built into Kubernetes (no CRD): check the shapes by hand (k8s.io/api resource/*/types.go):
    # v1 and v1beta2 nest the request under "exactly", v1beta1 has it flat.
    assert obj["apiVersion"] in ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")
    assert set(obj) == {"apiVersion", "kind", "metadata", "spec"} and set(obj["spec"]) == {"spec"}
    assert set(obj["spec"]["spec"]) == {"devices"}
    for request in obj["spec"]["spec"]["devices"]["requests"]:
        assert DNS_LABEL.match(request["name"])
        if obj["apiVersion"] == "resource.k8s.io/v1beta1":
            assert "exactly" not in request and set(request) <= {"name"} | _EXACT_REQUEST and "deviceClassName" in request
        else:
            assert set(request) == {"name", "exactly"} and set(request["exactly"]) <= _EXACT_REQUEST
            assert "deviceClassName" in request["exactly"]
        count = request.get("count", (request.get("exactly") or {}).get("count"))
        assert isinstance(count, int) and count > 0


def validate_config_map(obj):
    assert obj["apiVersion"] == "v1" and set(obj) == {"apiVersion", "kind", "metadata", "data"}
    assert all(isinstance(key, str) and isinstance(value, str) for key, value in obj["data"].items())


_CHECKED = {}


def errors_of(obj):
    """Schema errors of ``obj``; identical objects (the matrix repeats many) are validated once."""
    key = json.dumps(obj, sort_keys=True)
    if key not in _CHECKED:
        _CHECKED[key] = _errors_of(obj)
    return _CHECKED[key]


def _errors_of(obj):
    if obj["kind"] == "ResourceClaimTemplate":
        validate_resource_claim_template(obj)
        return []
    if obj["kind"] == "ConfigMap":
        validate_config_map(obj)
        return []
    return ["%s: %s" % ("/".join(str(p) for p in error.absolute_path), error.message) for error in validator(obj["apiVersion"], obj["kind"]).iter_errors(obj)]


def plan_and_validate(platform, architecture, framework, mnnvl, **extra):
    gpus = 4 if architecture.startswith("gb") else 8
    config = dict(
        entry_name="burnin-%s" % framework,
        namespace="burnin",
        image="nvcr.io/nvidia/pytorch:26.01-py3",
        framework=framework,
        nodes=2,
        gpus_per_node=gpus,
        mlnx_per_node=8,
        enable_mnnvl=mnnvl,
        run_id="r1",
        trainer=TRAINERS[framework],
        env=[{"name": "USER_VAR", "value": "1"}],
        volumes=[{"name": "scratch", "emptyDir": {}}],
        volume_mounts=[{"name": "scratch", "mountPath": "/scratch"}],
        image_pull_secrets=[{"name": "regcred"}],
    )
    config.update(extra)
    plan = plan_workload(config, {"platform": platform, "gpuArchitecture": architecture})
    kinds = [obj["kind"] for obj in plan["objects"]]
    assert kinds[-1] == "TrainJob" and kinds[-2] == "TrainingRuntime" and kinds.count("TrainingRuntime") == 1
    problems = []
    for obj in plan["objects"]:
        assert DNS_LABEL.match(obj["metadata"]["name"]) and len(obj["metadata"]["name"]) <= 63
        problems.extend("%s %s: %s" % (obj["kind"], obj["metadata"]["name"], error) for error in errors_of(obj))
    assert problems == []
    # no null left behind by the platform layer's deletions
    assert "null" not in json.dumps(plan["objects"])
    if architecture in ("gb200", "gb300"):
        assert "ComputeDomain" in kinds
    return plan


# MNNVL on and off where it matters (the seed's h100 coverage and the NVL72 GPUs); off for h200 and b200.
MATRIX = [
    (platform, architecture, framework, mnnvl)
    for platform, architecture, framework in itertools.product(PLATFORMS, ARCHITECTURES, FRAMEWORKS)
    for mnnvl in ([True, False] if architecture in ("h100", "gb200", "gb300") else [False])
]


@pytest.mark.parametrize("platform, architecture, framework, mnnvl", MATRIX)
def test_matrix_renders_and_validates(platform, architecture, framework, mnnvl):
    plan_and_validate(platform, architecture, framework, mnnvl)


@pytest.mark.parametrize(
    "platform, architecture, extra, framework",
    [variant + (framework,) for variant in VARIANTS for framework in FRAMEWORKS],
    ids=["%s-%s-%d-%s" % (v[0], v[1], i, f) for i, v in enumerate(VARIANTS) for f in FRAMEWORKS],
)
def test_instance_types_and_variables_render_and_validate(platform, architecture, extra, framework):
    plan_and_validate(platform, architecture, framework, architecture.startswith("gb"), **extra)


def test_structural_validation_catches_unknown_fields():
    plan = plan_workload(
        dict(entry_name="x", namespace="n", image="i", framework="torch", gpus_per_node=1, run_id="r", trainer=TRAINERS["torch"]),
        {"platform": "aws", "gpuArchitecture": "h100"},
    )
    runtime = copy.deepcopy(plan["objects"][0])
    runtime["spec"]["mlPolicy"]["torch"]["numProcPerNode"] = 8  # removed in Trainer v2.2 (kubeflow/trainer#3239)
    assert any("numProcPerNode" in error for error in errors_of(runtime))
    runtime = copy.deepcopy(plan["objects"][0])
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["bogus"] = 1
    assert any("bogus" in error for error in errors_of(runtime))
