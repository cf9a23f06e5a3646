# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The stage runner (module_utils/burnin/stage_run.py) builds the record the role's task files built: the sequence of
roles/burnin/tasks/attempt.yml (plan.yml, apply.yml, wait.yml, logs.yml, verdict.yml or node_verdict.yml), written
here with the filters those files called and Jinja's ``combine`` as a dict update, on the same fake cluster's answers
(tests/unit/plugins/module_utils/stage_fakes.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.filter.burnin_applied import burnin_applied_filter
from ansible_collections.gpufleet.burnin.plugins.filter.burnin_attempt import burnin_attempt_filter
from ansible_collections.gpufleet.burnin.plugins.filter.burnin_judged import burnin_judged_filter
from ansible_collections.gpufleet.burnin.plugins.filter.burnin_node_verdict import burnin_node_verdict_filter
from ansible_collections.gpufleet.burnin.plugins.filter.burnin_verdict import burnin_verdict_filter
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.stage_run import run_stage

_HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location("stage_fakes", os.path.join(os.path.dirname(_HERE), "module_utils", "stage_fakes.py"))
fakes = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fakes)


def combine(result, fields):
    out = dict(result)
    out.update(fields)
    return out


def yaml_path(cluster, stage, result, variables, cluster_facts=None, check_mode=False):
    """What attempts.yml and attempt.yml did to burnin_result, task by task (burnin_wait and burnin_collect_logs true)."""
    repeats = variables["burnin_repeats"]
    burnin_result = dict(result)
    for attempt in range(1, repeats + 2):
        if burnin_attempt_filter(burnin_result, stage, next_attempt=True, repeats=repeats) != attempt:
            continue
        plan = fakes.planner(variables, cluster_facts)(stage, attempt, burnin_result)  # plan.yml
        burnin_result = combine(burnin_result, plan["record"])
        missing = (
            variables["burnin_create_namespace"]
            and not (cluster_facts or {}).get("namespace_exists", False)
            and not burnin_result.get("namespace_created", False)
        )
        to_apply = ([plan["namespace_object"]] if missing else []) + ([] if (missing and check_mode) else plan["objects"])
        applied = cluster.apply(to_apply, check_mode=check_mode, diff=check_mode)  # apply.yml
        burnin_result = combine(
            burnin_result,
            burnin_applied_filter(
                applied,
                objects=to_apply,
                namespace=fakes.NAMESPACE,
                namespace_missing=missing,
                check_mode=check_mode,
                wait=True,
                planned=plan["stage"]["objects"],
                previous=burnin_result,
            ),
        )
        if check_mode:
            continue
        name = plan["stage"]["trainjob"]
        waited = cluster.wait([name], 600)[name]  # wait.yml
        burnin_result = combine(
            burnin_result, {"stage": "wait", "outcome": waited["outcome"], "reason": waited["reason"], "conditions": waited.get("conditions", [])}
        )
        pod_logs = cluster.logs(name, {"pods": waited["pods"], "logs": waited["logs"]}, whole_logs_of=plan["stage"]["whole_logs_of"])  # logs.yml
        burnin_result = combine(burnin_result, {"logs": pod_logs["summary"]})
        if stage == "fleet":  # verdict.yml
            verdict = burnin_verdict_filter(
                pod_logs["results"],
                facts={
                    "platform": burnin_result["platform"],
                    "gpu_architecture": burnin_result["gpu_architecture"],
                    "nodes": int(variables["burnin_nodes"]),
                    "gpus_per_node": int(burnin_result["gpus_per_node"]),
                    "mnnvl": bool(variables["burnin_enable_mnnvl"]),
                    "instance_type": (burnin_result.get("instance_type") or None),
                },
                job={"outcome": burnin_result["outcome"], "reason": burnin_result["reason"], "pods": pod_logs["pods"]},
                judging={
                    "workload": burnin_result["workload"],
                    "collective": (burnin_result["collective"] or None),
                    "results": (burnin_result.get("results") or None),
                    "overrides": variables["burnin_thresholds"],
                    "on_missing": variables["burnin_threshold_on_missing"],
                },
            )
            burnin_result = combine(burnin_result, burnin_judged_filter(burnin_result, verdict)["record"])
            burnin_result = combine(burnin_result, burnin_attempt_filter(burnin_result, stage, trainjob=name, verdict=verdict))
        else:  # node_verdict.yml
            ps = plan["stage"]
            verdict = burnin_node_verdict_filter(
                pod_logs["results"],
                pods=pod_logs["pods"],
                stage=stage,
                workload=ps["workload"],
                collective=(ps["collective"] or None),
                parser=ps["parser"],
                platform=burnin_result["platform"],
                gpu_architecture=burnin_result["gpu_architecture"],
                gpus_per_node=ps["gpus_per_node"],
                instance_type=(ps["instance_type"] or None),
                overrides=variables["burnin_thresholds"],
                on_missing=variables["burnin_threshold_on_missing"],
                job_outcome=burnin_result["outcome"],
                job_reason=burnin_result["reason"],
            )
            burnin_result = combine(burnin_result, burnin_attempt_filter(burnin_result, stage, trainjob=name, verdict=verdict, note=ps["note"]))
    return burnin_result


def fleet_script(*kinds):
    left = list(kinds)

    def script(trainjob, objects):
        pods, logs = fakes.fleet_pods(trainjob, objects, left.pop(0))
        return ("Complete", pods, logs)

    return script


def node_script(trainjob, objects):
    pods, logs = fakes.node_pods(trainjob, objects, [480.0, 120.0])
    return ("Complete", pods, logs)


@pytest.mark.parametrize(
    "stage,script,repeats,check_mode,facts",
    [
        ("fleet", lambda: fleet_script("good"), 0, False, {}),
        ("fleet", lambda: fleet_script("below-threshold", "far-below", "good"), 2, False, {}),
        ("fleet", lambda: fleet_script("none", "good"), 2, False, {"namespace_exists": True}),
        ("fleet", fleet_script, 1, True, {}),
        ("node", lambda: node_script, 1, False, {"detection": {"gpu_nodes": 2}}),
        # Nodes not counted: the stage runs on burnin_nodes and its record carries the note.
        ("node", lambda: node_script, 0, False, {}),
        ("node", lambda: node_script, 0, True, {"detection": {"gpu_nodes": 2}}),
    ],
)
def test_the_runner_builds_the_record_the_task_files_built(stage, script, repeats, check_mode, facts):
    variables = fakes.checked(burnin_repeats=repeats)
    expected = yaml_path(fakes.FakeCluster(script()), stage, fakes.start(variables), variables, facts, check_mode=check_mode)
    settings = {
        "repeats": repeats,
        "check_mode": check_mode,
        "namespace": fakes.NAMESPACE,
        "timeout": 600,
        "nodes": variables["burnin_nodes"],
        "mnnvl": variables["burnin_enable_mnnvl"],
        "namespace_exists": facts.get("namespace_exists", False),
        "thresholds": variables["burnin_thresholds"],
        "on_missing": variables["burnin_threshold_on_missing"],
    }
    out = run_stage(fakes.FakeCluster(script()), stage, fakes.start(variables), fakes.planner(variables, facts), settings=settings)
    assert out["record"] == expected
    assert len(expected["stages"]) == (0 if check_mode else 1)
