# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The role's plan step (plugins/module_utils/burnin/role_plan.py), from the role's defaults as gpufleet.burnin.burnin_start checks them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_plan
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload
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
