# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every rendered object validates against the upstream CRD schemas (../shared/crds), structurally:
an unknown field is a failure, as it would be pruned or rejected by an API server."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import itertools
import os
import re

import pytest

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")

from ansible_collections.gpufleet.burnin.plugins.module_utils import templating  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.module_utils.workload import plan_workload  # noqa: E402

CRD_DIR = os.environ.get("GPUFLEET_SHARED_CRDS") or os.path.join(
    os.path.dirname(os.path.realpath(templating.COLLECTION_ROOT)), "shared", "crds")
CRD_FILES = {
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"): "trainer.kubeflow.org_trainingruntimes.yaml",
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): "trainer.kubeflow.org_trainjobs.yaml",
    ("resource.nvidia.com/v1beta1", "ComputeDomain"): "resource.nvidia.com_computedomains.yaml",
}
PLATFORMS = ["aws", "gcp", "azure", "togetherai", "mistral", "other"]
ARCHITECTURES = ["h100", "gb200", "gb300"]
FRAMEWORKS = ["torch", "mpi", "exec"]
DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
TRAINERS = {
    "torch": {"script": "/workspace/smoke.py", "args": ["--steps", "10"]},
    "mpi": {"binary": "/usr/local/bin/all_reduce_perf", "args": ["-b", "8", "-e", "8G", "-f", "2"]},
    "exec": {"command": ["python3", "-c", "print('ok')"]},
}

pytestmark = pytest.mark.skipif(not os.path.isdir(CRD_DIR), reason="upstream CRDs not found at %s (../shared/crds)" % CRD_DIR)


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
        with open(os.path.join(CRD_DIR, CRD_FILES[key])) as handle:
            crd = [doc for doc in yaml.load_all(handle, Loader=loader) if doc][0]
        version = api_version.split("/")[1]
        (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
        _VALIDATORS[key] = jsonschema.Draft7Validator(structural(served["schema"]["openAPIV3Schema"]))
    return _VALIDATORS[key]


def validate_resource_claim_template(obj):
    # resource.k8s.io is built into Kubernetes 1.34 (no CRD in ../shared): check the v1 shape by hand.
    assert obj["apiVersion"] == "resource.k8s.io/v1" and set(obj) == {"apiVersion", "kind", "metadata", "spec"}
    for request in obj["spec"]["spec"]["devices"]["requests"]:
        assert set(request) == {"name", "exactly"} and DNS_LABEL.match(request["name"])
        assert set(request["exactly"]) <= {"deviceClassName", "count", "allocationMode", "selectors", "adminAccess", "tolerations"}


def errors_of(obj):
    if obj["kind"] == "ResourceClaimTemplate":
        validate_resource_claim_template(obj)
        return []
    return ["%s: %s" % ("/".join(str(p) for p in error.absolute_path), error.message)
            for error in validator(obj["apiVersion"], obj["kind"]).iter_errors(obj)]


@pytest.mark.parametrize("platform, architecture, framework, mnnvl",
                         list(itertools.product(PLATFORMS, ARCHITECTURES, FRAMEWORKS, [True, False])))
def test_matrix_renders_and_validates(platform, architecture, framework, mnnvl):
    gpus = 4 if architecture.startswith("gb") else 8
    config = dict(entry_name="burnin-%s" % framework, namespace="burnin", image="nvcr.io/nvidia/pytorch:26.01-py3",
                  framework=framework, nodes=2, gpus_per_node=gpus, mlnx_per_node=8, enable_mnnvl=mnnvl,
                  run_id="r1", trainer=TRAINERS[framework], env=[{"name": "USER_VAR", "value": "1"}],
                  volumes=[{"name": "scratch", "emptyDir": {}}], volume_mounts=[{"name": "scratch", "mountPath": "/scratch"}],
                  image_pull_secrets=[{"name": "regcred"}])
    plan = plan_workload(config, {"platform": platform, "gpuArchitecture": architecture})
    assert plan["objects"][-1]["kind"] == "TrainJob" and plan["objects"][-2]["kind"] == "TrainingRuntime"
    problems = []
    for obj in plan["objects"]:
        assert DNS_LABEL.match(obj["metadata"]["name"]) and len(obj["metadata"]["name"]) <= 63
        problems.extend("%s %s: %s" % (obj["kind"], obj["metadata"]["name"], error) for error in errors_of(obj))
    assert problems == []
    if architecture in ("gb200", "gb300"):
        assert "ComputeDomain" in [obj["kind"] for obj in plan["objects"]]


def test_structural_validation_catches_unknown_fields():
    plan = plan_workload(dict(entry_name="x", namespace="n", image="i", framework="torch", gpus_per_node=1, run_id="r",
                              trainer=TRAINERS["torch"]), {"platform": "aws", "gpuArchitecture": "h100"})
    runtime = copy.deepcopy(plan["objects"][0])
    runtime["spec"]["mlPolicy"]["torch"]["numProcPerNode"] = 8  # removed in Trainer v2.2 (kubeflow/trainer#3239)
    assert any("numProcPerNode" in error for error in errors_of(runtime))
    runtime = copy.deepcopy(plan["objects"][0])
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["bogus"] = 1
    assert any("bogus" in error for error in errors_of(runtime))
