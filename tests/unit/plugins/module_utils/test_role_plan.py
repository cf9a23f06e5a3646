# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The role's plan step (plugins/module_utils/burnin/role_plan.py), from the role's defaults as gpufleet.burnin.burnin_start checks them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_plan, sweep
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import ENTRY_LABEL, MANAGED_BY_LABEL, MANAGER, RUN_LABEL, plan_workload
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def checked(**changes):
    with open(os.path.join(ROOT, "roles", "burnin", "defaults", "main.yml")) as fh:
        given = yaml.safe_load(fh)
    given.update(changes)
    return check_role_vars(given)


def test_the_role_plans_what_workload_plan_plans_with_the_gpu_defaults_and_the_workload():
    out = role_plan.role_plan(checked(), "aws", "h100", "r1", "burnin")
    record = out["record"]
    assert record["gpus_per_node"] == 8 and record["workload"] == "nccl-all-reduce" and record["collective"] == "all_reduce"
    options, dummy = role_plan.plan_options(checked(), "aws", "h100", "r1", "burnin")
    facts = {"platform": options.pop("platform"), "gpuArchitecture": options.pop("gpu_architecture")}
    assert out["objects"] == plan_workload(options, facts)["objects"]
    assert record["objects"] == ["%s/%s" % (o["kind"], o["metadata"]["name"]) for o in out["objects"]]
    assert record["trainjob"] == "nccl-burnin-r1"


def test_annotations_go_on_the_trainjob_and_a_custom_trainer_is_not_judged_as_the_workload():
    out = role_plan.role_plan(checked(burnin_trainjob_annotations={"team": "sre"}, burnin_trainer={"binary": "/bin/true"}), "gcp", "h100", "r1", "burnin")
    assert out["objects"][-1]["kind"] == "TrainJob" and out["objects"][-1]["metadata"]["annotations"]["team"] == "sre"
    assert out["record"]["collective"] == "" and out["record"]["results"] == ""


def test_a_dcgm_run_is_judged_by_dcgm_and_every_pod_log_is_read_whole():
    record = role_plan.role_plan(checked(burnin_workload="dcgm-diag", burnin_nodes=4), "aws", "h100", "r1", "burnin")["record"]
    assert record["results"] == "dcgm-diag" and record["whole_logs_of"] == ["launcher", "node"] and record["framework"] == "exec"
    default = role_plan.role_plan(checked(), "aws", "h100", "r1", "burnin")["record"]
    assert default["results"] == "nccl-tests" and default["whole_logs_of"] == ["launcher"]


def test_set_variables_win_over_detection():
    cluster = {"nodes": [], "kubernetes_version": "v1.31.0", "dra_api_versions": ["v1beta1"]}
    options, dummy = role_plan.plan_options(checked(burnin_server_version="1.34"), "aws", "h100", "r1", "burnin", cluster)
    assert options["server_version"] == "1.34" and options["rct_api_version"] == "v1beta1" and "cluster_nodes" not in options


def test_the_run_starts_pending_with_its_names():
    start = role_plan.run_start(checked(burnin_namespace_per_run=True, burnin_platform="aws"), "aws-a", "r1", started="t")
    assert start["namespace"] == "gpufleet-burnin-r1" and start["trainjob"] == "nccl-burnin-r1" and start["problem"] == ""
    assert start["result"]["outcome"] == "Pending" and start["result"]["declared"]["platform"] == "aws"
    long = role_plan.run_start(checked(burnin_entry_name="e" * 50), "aws-a", "20261201-101500")
    assert "shorten burnin_entry_name" in long["problem"]


def _node_containers(objects):
    runtime = [obj for obj in objects if obj["kind"] == "TrainingRuntime"][0]
    return dict((job["name"], job["template"]["spec"]["template"]["spec"]["containers"]) for job in runtime["spec"]["template"]["spec"]["replicatedJobs"])


def test_a_privileged_dcgm_run_runs_its_gpu_container_privileged_beside_the_platforms_capabilities():
    # Issue 32: `privileged: true` is not only the gate of levels 3-4, the rendered pod's container gets it.
    given = checked(burnin_workload="dcgm-diag", burnin_nodes=2, burnin_workload_params={"level": 3, "privileged": True})
    container = _node_containers(role_plan.role_plan(given, "aws", "h100", "r1", "burnin")["objects"])["node"][0]
    assert container["name"] == "node" and container["securityContext"]["privileged"] is True
    # The AWS-EFA override's IPC_LOCK (templates/overrides/platforms/aws.yaml) stays beside it.
    assert container["securityContext"]["capabilities"] == {"add": ["IPC_LOCK"]}
    for params in ({}, {"level": 2}, {"level": 1, "privileged": False}):
        plain = role_plan.role_plan(checked(burnin_workload="dcgm-diag", burnin_workload_params=params), "aws", "h100", "r1", "burnin")
        assert "privileged" not in str(_node_containers(plain["objects"])), params


def test_the_workloads_container_goes_on_the_gpu_workers_not_on_the_mpi_launcher():
    objects = role_plan.role_plan(checked(), "aws", "h100", "r1", "burnin")["objects"]
    merged = _node_containers(role_plan.with_container(objects, {"securityContext": {"privileged": True}}))
    assert merged["node"][0]["securityContext"]["privileged"] is True
    assert "privileged" not in str(merged["launcher"])
    assert role_plan.with_container(objects, {}) is objects


# ---------------------------------------------------------------------- the stage plan (issue 47, third round)

CLUSTER = {"detection": {"gpu_nodes": 3}}


def test_a_stage_that_runs_no_trainjob_is_refused_naming_those_that_do():
    for stage in ("isolation", "nope", None):
        with pytest.raises(ConfigError) as caught:
            role_plan.role_plan(checked(), "aws", "h100", "r1", "burnin", CLUSTER, stage=stage)
        assert str(caught.value) == "stage: must be a stage that runs a TrainJob, one of node, fleet, dcgm, gpu, got %r" % (stage,)


@pytest.mark.parametrize(
    "changes, stage, attempt, platform, want",
    [
        # A node stage: every GPU node, its pods' logs read whole into a directory of the stage's own.
        ({}, "node", 1, "aws", (3, ["node"], "node", "nccl-burnin-r1-node", 1, "p5.48xlarge")),
        ({}, "gpu", 1, "aws", (3, ["node"], "gpu", "nccl-burnin-r1-gpu", 1, "p5.48xlarge")),
        # The fleet stage: burnin_nodes, the launcher's log, the report's directory itself.
        ({}, "fleet", 1, "aws", (2, ["launcher"], "", "nccl-burnin-r1", 1, "p5.48xlarge")),
        ({"burnin_nodes": 1}, "fleet", 1, "aws", (1, ["launcher"], "", "nccl-burnin-r1", 1, "p5.48xlarge")),
        ({"burnin_nodes": 5, "burnin_entry_name": "e"}, "fleet", 2, "aws", (5, ["launcher"], "", "e-r1-2", 2, "p5.48xlarge")),
        ({"burnin_workload": "dcgm-diag"}, "fleet", "3", "aws", (2, ["launcher", "node"], "", "nccl-burnin-r1-3", 3, "p5.48xlarge")),
        # A platform without a default instance type plans none.
        ({}, "fleet", 1, "onprem", (2, ["launcher"], "", "nccl-burnin-r1", 1, "")),
    ],
)
def test_the_stage_plan_says_where_its_attempt_runs_and_its_logs_go(changes, stage, attempt, platform, want):
    plan = role_plan.role_plan(checked(**changes), platform, "h100", "r1", "burnin", CLUSTER, stage=stage, attempt=attempt)["stage"]
    assert (plan["nodes"], plan["whole_logs_of"], plan["log_subdir"], plan["trainjob"], plan["attempt"], plan["instance_type"]) == want
    assert plan["stage"] == stage and plan["objects"][-1] == "TrainJob/" + want[3]


def test_the_first_attempt_is_the_default_one():
    plan = role_plan.role_plan(checked(), "aws", "h100", "r1", "burnin", CLUSTER)
    assert plan["stage"]["attempt"] == 1 and plan["stage"]["trainjob"] == "nccl-burnin-r1" and plan["stage"]["stage"] == "fleet"


def _anti_affinity(objects):
    runtime = [obj for obj in objects if obj["kind"] == "TrainingRuntime"][0]
    return [
        ((job["template"]["spec"]["template"].get("spec") or {}).get("affinity") or {}).get("podAntiAffinity")
        for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]
    ]


@pytest.mark.parametrize(
    "workload, stage, spread",
    [
        # One pod per node: a node stage, and a fleet stage whose workload judges each pod's own output.
        ("nccl-all-reduce", "node", True),
        ("dcgm-diag", "fleet", True),
        ("gpu-burn", "fleet", True),
        ("nccl-all-reduce", "fleet", False),
    ],
)
def test_a_stage_judged_pod_by_pod_runs_one_pod_per_node(workload, stage, spread):
    objects = role_plan.role_plan(checked(burnin_workload=workload), "aws", "h100", "r1", "burnin", CLUSTER, stage=stage)["objects"]
    assert all(anti is not None for anti in _anti_affinity(objects)) is spread
    assert any(anti is not None for anti in _anti_affinity(objects)) is spread


@pytest.mark.parametrize("hold, tolerated", [("taint", True), ("none", False)])
def test_a_sweeps_pods_tolerate_its_hold_taint_only_when_it_holds_by_taint(hold, tolerated):
    # The role's variables as the action gets them, read from JSON.
    variables = json.loads(json.dumps(checked(burnin_sweep_nodes=["n1"], burnin_sweep_hold=hold)))
    objects = role_plan.role_plan(variables, "aws", "h100", "r1", "burnin", CLUSTER, stage="node")["objects"]
    runtime = [obj for obj in objects if obj["kind"] == "TrainingRuntime"][0]
    (job,) = [job for job in runtime["spec"]["template"]["spec"]["replicatedJobs"] if job["name"] == "node"]
    keys = [item.get("key") for item in job["template"]["spec"]["template"]["spec"].get("tolerations") or []]
    assert (sweep.HOLD_TAINT_KEY in keys) is tolerated


@pytest.mark.parametrize("per_run, labels", [(True, {MANAGED_BY_LABEL: MANAGER, RUN_LABEL: "r1"}), (False, {MANAGED_BY_LABEL: MANAGER})])
def test_the_namespace_carries_the_run_id_only_when_it_is_the_runs_own(per_run, labels):
    out = role_plan.role_plan(checked(burnin_namespace_per_run=per_run), "aws", "h100", "r1", "ns", CLUSTER)
    assert out["namespace_object"] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": labels}}


def _runtime_of(jobs):
    """A TrainingRuntime whose replicated jobs are JOBS [(name, [container names])]."""
    return {
        "kind": "TrainingRuntime",
        "metadata": {"name": "rt"},
        "spec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {"name": name, "template": {"spec": {"template": {"spec": {"containers": [{"name": c, "image": "i"} for c in containers]}}}}}
                        for name, containers in jobs
                    ]
                }
            }
        },
    }


def test_the_workloads_container_goes_on_the_node_container_of_the_node_job_only():
    # other kinds first, a job before and after "node", containers before and after "node"
    runtime = _runtime_of([("launcher", ["node"]), ("node", ["a-sidecar", "node", "z-sidecar"]), ("workers", ["node"])])
    # kinds sorting before and after TrainingRuntime (Kueue's Workload has no runtime template)
    workload = {"kind": "Workload", "metadata": {"name": "w"}, "spec": {"podSets": []}}
    objects = [{"kind": "ConfigMap", "metadata": {"name": "c"}}, runtime, workload, {"kind": "TrainJob", "metadata": {"name": "t"}}]
    merged = _node_containers(role_plan.with_container(objects, {"securityContext": {"privileged": True}}))
    assert objects[2] == {"kind": "Workload", "metadata": {"name": "w"}, "spec": {"podSets": []}}
    assert [[c.get("securityContext") for c in containers] for containers in (merged["launcher"], merged["node"], merged["workers"])] == [
        [None],
        [None, {"privileged": True}, None],
        [None],
    ]


def test_one_pod_per_node_goes_on_every_job_of_the_runtime_and_nothing_else():
    runtime = _runtime_of([("launcher", ["node"]), ("node", ["node"])])
    other = {"kind": "Workload", "metadata": {"name": "w"}, "spec": {"podSets": []}}
    objects = role_plan.one_pod_per_node([{"kind": "ConfigMap", "metadata": {"name": "c"}}, runtime, other])
    assert objects[2] == {"kind": "Workload", "metadata": {"name": "w"}, "spec": {"podSets": []}}
    for job in objects[1]["spec"]["template"]["spec"]["replicatedJobs"]:
        (term,) = job["template"]["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["matchLabelKeys"] == [role_plan.JOBSET_NAME_LABEL] and term["topologyKey"] == "kubernetes.io/hostname"


def test_the_trainjob_is_the_last_of_three_objects_for_its_name_and_annotations():
    objects = [
        {"kind": "ConfigMap", "metadata": {"name": "c", "labels": {ENTRY_LABEL: "old"}}},
        {"kind": "TrainingRuntime", "metadata": {"name": "rt"}},
        {"kind": "TrainJob", "metadata": {"name": "t", "labels": {ENTRY_LABEL: "old"}}},
    ]
    staged = role_plan.staged(objects, "e-r1-node", "e")
    assert [obj["metadata"]["name"] for obj in staged] == ["c", "rt", "e-r1-node"]
    # the entry label replaced where there is one, not added where there is none
    assert [obj["metadata"].get("labels") for obj in staged] == [{ENTRY_LABEL: "e"}, {}, {ENTRY_LABEL: "e"}]
    annotated = role_plan.annotated(staged, {"team": "sre"})
    assert [obj["metadata"].get("annotations") for obj in annotated] == [None, None, {"team": "sre"}]
    assert [obj["metadata"]["name"] for obj in annotated] == ["c", "rt", "e-r1-node"]
    assert role_plan.annotated(staged, {}) is staged


def test_a_namespace_is_labelled_as_the_burn_ins_and_with_a_run_id_only_when_given():
    assert role_plan.namespace_object("ns")["metadata"]["labels"] == {MANAGED_BY_LABEL: MANAGER}
    assert role_plan.namespace_object("ns", "")["metadata"]["labels"] == {MANAGED_BY_LABEL: MANAGER}
    assert role_plan.namespace_object("ns", "r1")["metadata"]["labels"] == {MANAGED_BY_LABEL: MANAGER, RUN_LABEL: "r1"}


def test_the_workloads_counts_and_image_follow_the_platform_and_the_gpu():
    # Azure's H100 VM sizes get no Mellanox NICs from the GPU defaults (_lib/gpu-defaults.yaml platforms)
    plain = checked(burnin_gpus_per_node=None, burnin_mlnx_per_node=None)
    assert (role_plan.workload_of(plain, "azure", "h100")["mlnx_per_node"], role_plan.workload_of(plain, "aws", "h100")["mlnx_per_node"]) == (0, 8)
    # a GB300 (arm64) node of GCP runs GCP's arm64 image, not the x86_64 one
    assert role_plan.workload_of(checked(), "gcp", "gb300")["image"].endswith("-arm64:v1.1.1")
    assert "arm64" not in role_plan.workload_of(checked(), "gcp", "h100")["image"]


def test_the_nic_resource_names_are_the_catalogues():
    assert {"vpc.amazonaws.com/efa", "nvidia.com/gpu"} & role_plan.nic_resource_names() == {"vpc.amazonaws.com/efa"}


def test_the_options_carry_every_default_of_workload_plan():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import workload_plan_spec

    options, dummy = role_plan.plan_options(checked(), "aws", "h100", "r1", "burnin")
    for name, spec in workload_plan_spec().items():
        if "default" in spec:
            assert name in options, name


def test_a_run_starts_out_of_check_mode_unless_told():
    assert role_plan.run_start(checked(), "aws-a", "r1")["result"]["check_mode"] is False
    assert role_plan.run_start(checked(), "aws-a", "r1", check_mode=True)["result"]["check_mode"] is True


def test_the_workloads_parser_env_and_options_as_the_role_gives_them():
    # the parser of a node stage's output: the workload's results, nccl-tests for a custom trainer
    assert role_plan.workload_of(checked(burnin_workload="dcgm-diag"), "aws", "h100")["parser"] == "dcgm-diag"
    assert role_plan.workload_of(checked(), "aws", "h100")["parser"] == "nccl-tests"
    assert role_plan.workload_of(checked(burnin_workload="dcgm-diag", burnin_trainer={"command": ["true"]}), "aws", "h100")["parser"] == "nccl-tests"
    # the workload's env (OCI's default image turns the net plugin off) with the user's after it
    user = [{"name": "NCCL_DEBUG", "value": "INFO"}]
    assert role_plan.workload_of(checked(burnin_env=user), "oci", "h100")["env"] == [{"name": "NCCL_NET_PLUGIN", "value": "none"}] + user
    # an empty burnin_resources leaves workload_plan's option unset (it has no default)
    options, dummy = role_plan.plan_options(checked(burnin_resources={}), "aws", "h100", "r1", "burnin")
    assert "resources" not in options and "instance_type" not in options
    options, dummy = role_plan.plan_options(
        checked(burnin_resources={"limits": {"cpu": "1"}}, burnin_instance_type="p5.48xlarge"), "aws", "h100", "r1", "burnin"
    )
    assert options["resources"] == {"limits": {"cpu": "1"}} and options["instance_type"] == "p5.48xlarge"
