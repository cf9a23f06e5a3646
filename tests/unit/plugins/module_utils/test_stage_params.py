# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""burnin_stage_params: a node stage's workload parameters, checked as burnin_workload_params is (role_vars), in the
stage's plan (stages.stage_variables, role_plan) and, for gpu-burn's sibling_percent, in its verdict (the rendered
``judging``, stage_run.judge_attempt, node_stage, verdict_for, judging/gpu.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import stage_run
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import role_plan
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import gpu
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog

DATA = {"nodes": 1, "gpus_per_node": 8, "platform": "aws", "gpu_architecture": "h100"}
GOOD = (795.0, 2500.0)


def log(figures, host="job-gpu-node-0-0"):
    prefix = "# gpufleet-burnin gpu-burn on %s:" % host
    lines = ["%s %d GPUs, torch 2.10.0a0, bf16 matmul 8192x8192 for 30 s, copy 1073741824 bytes x 50" % (prefix, len(figures))]
    lines += ["%s gpu %d uuid GPU-%d tflops %.1f gbps %.1f errors 0" % (prefix, index, index, tflops, gbps) for index, (tflops, gbps) in enumerate(figures)]
    return "\n".join(lines + ["%s done, %d of %d GPUs measured" % (prefix, len(figures), len(figures))]) + "\n"


# 7 % below the median: passes the default 10 %, fails 5 %.
SLOW = [GOOD] * 7 + [(739.4, 2500.0)]


def script_of(rendered_or_trainjob):
    trainer = rendered_or_trainjob["trainer"] if "trainer" in rendered_or_trainjob else rendered_or_trainjob["spec"]["trainer"]
    return trainer["args"][0]


# ------------------------------------------------------------------------------------------------ the template


def test_the_script_runs_the_given_parameters_and_the_defaults_otherwise():
    default = workload_catalog.render_workload("gpu-burn", dict(DATA))
    assert "N, SECONDS, COPY_BYTES, COPY_ITERS = 8192, 120, 1073741824, 50\n" in script_of(default) and "judging" not in default
    given = workload_catalog.render_workload("gpu-burn", dict(DATA, matrix_size=4096, seconds="5", copy_bytes=1048576, copy_iters=3))
    assert "N, SECONDS, COPY_BYTES, COPY_ITERS = 4096, 5, 1048576, 3\n" in script_of(given)


@pytest.mark.parametrize("value, expected", [(5, 5.0), ("7.5", 7.5), (0.5, 0.5), (99.9, 99.9)])
def test_sibling_percent_is_rendered_as_the_verdicts_parameter(value, expected):
    rendered = workload_catalog.render_workload("gpu-burn", dict(DATA, sibling_percent=value))
    assert rendered["judging"] == {"sibling_percent": expected}
    # The script itself does not read it.
    assert script_of(rendered) == script_of(workload_catalog.render_workload("gpu-burn", dict(DATA)))


@pytest.mark.parametrize("value", [0, 100, -5, "ten", True, float("nan"), float("inf"), [5]])
def test_a_bad_sibling_percent_is_refused_naming_it(value):
    with pytest.raises(Exception, match=r"sibling_percent: the gpu-burn workload's sibling_percent must be a number above 0 and below 100"):
        workload_catalog.render_workload("gpu-burn", dict(DATA, sibling_percent=value))


def test_a_rendered_judging_is_checked():
    with pytest.raises(ParseError, match=r"judging\.size is not a parameter of the gpu-burn verdict; known: sibling_percent"):
        workload_catalog._check_result(
            "w", {"framework": "exec", "image": "i", "image_kind": "pytorch", "trainer": {"a": 1}, "results": "gpu-burn", "judging": {"size": 1}}, DATA
        )
    with pytest.raises(ParseError, match=r"judging\.sibling_percent is not a parameter of the nccl-tests verdict"):
        workload_catalog._check_result(
            "w",
            {"framework": "exec", "image": "i", "image_kind": "pytorch", "trainer": {"a": 1}, "results": "nccl-tests", "judging": {"sibling_percent": 1}},
            DATA,
        )
    with pytest.raises(ParseError, match=r"judging\.sibling_percent must be a number, got 'x'"):
        workload_catalog._check_result(
            "w",
            {"framework": "exec", "image": "i", "image_kind": "pytorch", "trainer": {"a": 1}, "results": "gpu-burn", "judging": {"sibling_percent": "x"}},
            DATA,
        )


# ------------------------------------------------------------------------------------------------ the role variable


def test_the_role_variable_is_checked_before_any_cluster():
    assert check_role_vars({"burnin_stage_params": {"gpu": {"seconds": 5, "sibling_percent": 5}}})["burnin_stage_params"] == {
        "gpu": {"seconds": 5, "sibling_percent": 5}
    }
    # Survey text: JSON.
    assert check_role_vars({"burnin_stage_params": '{"gpu": {"seconds": 5}}'})["burnin_stage_params"] == {"gpu": {"seconds": 5}}
    assert check_role_vars({"burnin_stage_params": ""})["burnin_stage_params"] == {}


@pytest.mark.parametrize(
    "value, field, words",
    [
        ({"gpuu": {}}, "burnin_stage_params.gpuu", ["is not a stage that takes parameters; allowed: dcgm, gpu, node", "gpu: gpu-burn"]),
        ({"fleet": {}}, "burnin_stage_params.fleet", ["allowed: dcgm, gpu, node"]),
        ({"gpu": 5}, "burnin_stage_params.gpu", ["must be a mapping"]),
        (
            {"gpu": {"secnds": 5}},
            "burnin_stage_params.gpu.secnds",
            ["is not a parameter of workload gpu-burn", "matrix_size, memory_percent, seconds, sibling_percent"],
        ),
        (
            {"gpu": {"seconds": 0}},
            "burnin_stage_params.gpu",
            ["gpu stage's workload gpu-burn does not render", "seconds must be a whole number from 1 to 86400, got 0"],
        ),
        ({"gpu": {"matrix_size": 1000}}, "burnin_stage_params.gpu", ["matrix_size must be a whole number from 1024 to 32768"]),
        ({"gpu": {"matrix_size": 1300}}, "burnin_stage_params.gpu", ["matrix_size: must be a multiple of 256"]),
        ({"gpu": {"sibling_percent": 100}}, "burnin_stage_params.gpu", ["sibling_percent must be a number above 0 and below 100", "got 100"]),
        ({"dcgm": {"level": 7}}, "burnin_stage_params.dcgm", ["dcgm stage's workload dcgm-diag does not render", "must be 1, 2, 3 or 4, got 7"]),
        ({"node": {"sibling_percent": 5}}, "burnin_stage_params.node.sibling_percent", ["is not a parameter of workload nccl-all-reduce-node"]),
    ],
)
def test_a_bad_value_names_the_variable_and_the_allowed_values(value, field, words):
    with pytest.raises(ConfigError) as caught:
        check_role_vars({"burnin_stage_params": value})
    assert caught.value.field == field, str(caught.value)
    for word in words:
        assert word in str(caught.value)


# ------------------------------------------------------------------------------------------------ the plan


def test_the_gpu_stage_plans_its_parameters_and_the_fleet_stage_keeps_its_own():
    variables = check_role_vars(
        {"burnin_entry_name": "e", "burnin_nodes": 2, "burnin_stage_params": {"gpu": {"seconds": 5, "matrix_size": 4096, "sibling_percent": 5}}}
    )
    plan = role_plan(variables, "aws", "h100", "r1", "ns", {"detection": {"gpu_nodes": 3}}, stage="gpu")
    assert "N, SECONDS, COPY_BYTES, COPY_ITERS = 4096, 5, 1073741824, 50\n" in script_of(plan["objects"][-1])
    assert plan["stage"]["workload"] == "gpu-burn" and plan["stage"]["judging"] == {"sibling_percent": 5.0}
    fleet = role_plan(variables, "aws", "h100", "r1", "ns", {"detection": {"gpu_nodes": 3}})
    assert fleet["stage"]["workload"] == "nccl-all-reduce" and fleet["stage"]["judging"] == {}
    # Without an entry the stage runs the workload's defaults.
    plain = role_plan(check_role_vars({"burnin_entry_name": "e"}), "aws", "h100", "r1", "ns", {"detection": {"gpu_nodes": 3}}, stage="gpu")
    assert "= 8192, 120, 1073741824, 50\n" in script_of(plain["objects"][-1]) and plain["stage"]["judging"] == {}


def test_the_dcgm_stage_takes_its_level_the_same_way():
    variables = check_role_vars({"burnin_entry_name": "e", "burnin_stage_params": {"dcgm": {"level": 1}}})
    plan = role_plan(variables, "aws", "h100", "r1", "ns", {"detection": {"gpu_nodes": 2}}, stage="dcgm")
    assert "-r 1" in " ".join(plan["objects"][-1]["spec"]["trainer"]["command"] + plan["objects"][-1]["spec"]["trainer"]["args"])


# ------------------------------------------------------------------------------------------------ the verdict


def test_the_sibling_percent_reaches_the_gpu_stages_verdict():
    text = log(SLOW)
    pods = [{"metadata": {"name": "job-gpu-node-0-0"}, "spec": {"nodeName": "n0"}, "status": {"phase": "Succeeded"}}]
    output = [{"item": {"metadata": {"name": "job-gpu-node-0-0"}}, "log": text}]
    result = {"platform": "aws", "gpu_architecture": "h100", "outcome": "Complete"}
    settings = dict(stage_run.DEFAULT_SETTINGS)
    verdicts = {}
    for judging in ({}, {"sibling_percent": 5.0}):
        plan_stage = {"workload": "gpu-burn", "parser": "gpu-burn", "gpus_per_node": 8, "judging": judging}
        verdicts[judging.get("sibling_percent")] = stage_run.judge_attempt("gpu", plan_stage, result, {"results": output, "pods": pods}, None, settings)
    assert verdicts[None]["verdict"] == "pass", verdicts[None]["reason"]
    assert verdicts[5.0]["verdict"] == "fail" and "GPU 7" in verdicts[5.0]["reason"] and "(more than 5 %)" in verdicts[5.0]["reason"]
    assert verdicts[5.0]["findings"][0]["evidence"]["sibling_percent"] == 5.0


def test_the_sibling_percent_reaches_a_fleet_stage_running_gpu_burn():
    text = log(SLOW)
    facts = {"platform": "aws", "gpu_architecture": "h100", "nodes": 1, "gpus_per_node": 8}
    assert verdict_for(text, facts=facts, judging={"results": "gpu-burn"})["verdict"] == "pass"
    assert verdict_for(text, facts=facts, judging={"results": "gpu-burn", "sibling_percent": 5})["verdict"] == "fail"
    plan_stage = {"judging": {"sibling_percent": 5.0}}
    result = {"platform": "aws", "gpu_architecture": "h100", "gpus_per_node": 8, "results": "gpu-burn", "workload": "gpu-burn", "outcome": "Complete"}
    pod = {"metadata": {"name": "job-gpu-node-0-0"}, "spec": {"nodeName": "n0"}}
    output = [{"item": pod, "log": text}]
    verdict = stage_run.judge_attempt("fleet", plan_stage, result, {"results": output, "pods": [pod]}, None, dict(stage_run.DEFAULT_SETTINGS))
    assert verdict["verdict"] == "fail" and verdict["gpu"]["n0"]["sibling_percent"] == 5.0


@pytest.mark.parametrize("value", [0, 100, True, "5", float("nan")])
def test_the_judge_refuses_a_bad_sibling_percent(value):
    with pytest.raises(ConfigError, match=r"^sibling_percent: must be a number above 0 and below 100"):
        gpu.judge_node(gpu.parse_gpu_output(log(SLOW)), "n0", {"gpu_architecture": "h100", "gpus_per_node": 8}, {"sibling_percent": value})
