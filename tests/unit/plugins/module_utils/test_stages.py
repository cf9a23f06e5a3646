# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The stages of a burn-in (burnin/stages.py), the node stage's per-pod verdict (judging/node_stage.py), the node
stage's plan (burnin/role_plan.py), the role's stage variables (burnin/role_vars.py) and the reports' stages
and per-node table (reporting/report.py). Pod logs are the test fleet's single-node nccl-tests output
(tests/fleet/nccl_logs.py), as a node-stage pod prints it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import cluster_result, stages
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import outcomes
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_stage import judge_node_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import role_plan, run_start
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import html_view, junit
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

FLEET = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "fleet")
sys.path.insert(0, FLEET)
import nccl_logs  # noqa: E402 pylint: disable=wrong-import-position

H100 = {"platform": "aws", "gpu_architecture": "h100", "gpus_per_node": 8}
COMMAND = {"spec": {"trainer": {"command": ["timeout", "1800", "/opt/nccl-tests/build/all_reduce_perf"], "args": "-b 1K -e 16G -f 2 -g 8".split()}}}


def node_pods(busbws, failed=()):
    """(pod logs, pods) of a node-stage TrainJob: one pod per node, each with its own single-node output."""
    cmd = nccl_logs.nccl_command(COMMAND)
    logs, pods = [], []
    for index, busbw in enumerate(busbws):
        host = "job-node-node-0-%d" % index
        killed = index in failed
        text = nccl_logs.launcher_log("truncated" if killed else "good", [host], 8, "aws", "h100", cmd, busbw=busbw, seed=str(index))
        state = {"terminated": {"exitCode": 1 if killed else 0, "reason": "Error" if killed else "Completed"}}
        pod = {
            "metadata": {"name": host + "-x1y2z", "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}},
            "spec": {"nodeName": "node-%d" % index, "hostname": host},
            "status": {"phase": "Failed" if killed else "Succeeded", "containerStatuses": [{"name": "node", "state": state}]},
        }
        pods.append(pod)
        logs.append({"item": pod, "log": text})
    return logs, pods


# ------------------------------------------------------------------------------------------------ the stage list


def test_stage_list_allows_the_known_stages_in_order():
    assert stages.check_stages("burnin_stages", ["node", "fleet", "isolation"]) == ["node", "fleet", "isolation"]
    assert stages.check_stages("burnin_stages", "fleet, node") == ["fleet", "node"]
    assert list(stages.DEFAULT_STAGES) == ["node", "fleet", "isolation"]


@pytest.mark.parametrize(
    "value, field, words",
    [
        (["node", "nodes"], "burnin_stages[1]", ["unknown stage 'nodes'", "node, fleet, isolation, dcgm, gpu"]),
        (["fleet", "fleet"], "burnin_stages[1]", ["listed twice"]),
        (["isolation", "fleet"], "burnin_stages", ["fleet must come before it"]),
        (["node", "isolation"], "burnin_stages", ["fleet must come before it"]),
        ([], "burnin_stages", ["non-empty list", "node, fleet, isolation, dcgm, gpu"]),
        ("", "burnin_stages", ["non-empty list"]),
    ],
)
def test_bad_stage_lists_are_refused_naming_the_allowed_stages(value, field, words):
    with pytest.raises(ConfigError) as caught:
        stages.check_stages("burnin_stages", value)
    assert caught.value.field == field
    for word in words:
        assert word in str(caught.value)


def test_a_node_stage_whose_workload_is_missing_is_refused_by_the_role_check():
    available = workload_catalog.available_workloads()
    assert "nccl-all-reduce-node" in available
    with pytest.raises(ConfigError) as caught:
        stages.check_stages("burnin_stages", ["dcgm", "fleet"], [name for name in available if name != "dcgm-diag"])
    assert caught.value.field == "burnin_stages" and "templates/workloads/dcgm-diag.yaml" in str(caught.value) and "stage dcgm" in str(caught.value)
    checked = check_role_vars({"burnin_stages": '["node", "fleet"]', "burnin_repeats": "2"})
    assert checked["burnin_stages"] == ["node", "fleet"] and checked["burnin_repeats"] == 2
    with pytest.raises(ConfigError) as caught:
        check_role_vars({"burnin_stages": ["node", "gpu-burn"]})
    assert caught.value.field == "burnin_stages[1]" and "allowed: node, fleet, isolation, dcgm, gpu" in str(caught.value)


@pytest.mark.parametrize("value", [-1, 11, True, "many", 1.5])
def test_repeats_are_a_small_count(value):
    with pytest.raises(ConfigError) as caught:
        check_role_vars({"burnin_repeats": value})
    assert caught.value.field == "burnin_repeats" and "0 to 10" in str(caught.value)


def test_trainjob_names_per_stage_and_attempt():
    assert stages.stage_trainjob("e-r1", "fleet") == "e-r1"
    assert stages.stage_trainjob("e-r1", "fleet", 2) == "e-r1-2"
    assert stages.stage_trainjob("e-r1", "node") == "e-r1-node"
    assert stages.stage_trainjob("e-r1", "node", 3) == "e-r1-node-3"
    # the first attempt (or none before it) keeps the name, the second adds its number, also given as text
    assert [stages.stage_trainjob("e-r1", "gpu", attempt) for attempt in (0, 1, 2, "1", "2")] == [
        "e-r1-gpu",
        "e-r1-gpu",
        "e-r1-gpu-2",
        "e-r1-gpu",
        "e-r1-gpu-2",
    ]
    assert stages.longest_trainjob("e-r1", ["node", "fleet", "isolation"], 2) == "e-r1-node-3"
    # The run's DNS-label check covers the longest stage name.
    long_entry = "e" * 41
    started = run_start({"burnin_entry_name": long_entry, "burnin_stages": ["fleet"]}, "c", "20261201-101010")
    assert started["problem"] == ""
    started = run_start({"burnin_entry_name": long_entry, "burnin_stages": ["node", "fleet"], "burnin_repeats": 1}, "c", "20261201-101010")
    assert "%s-20261201-101010-node-2" % long_entry in started["problem"]


# ------------------------------------------------------------------------------------------------ repeats bookkeeping


def test_attempts_are_kept_and_a_failed_or_warned_stage_runs_again_up_to_the_repeats():
    result = {"outcome": "Complete"}
    assert stages.next_attempt(result, "node", 1) == 1
    result.update(cluster_result.recorded_attempt(result, "node", "e-r-node", {"verdict": "fail", "reason": "slow", "findings": []}))
    assert stages.next_attempt(result, "node", 0) == 0
    assert stages.next_attempt(result, "node", 1) == 2
    result.update(cluster_result.recorded_attempt(result, "node", "e-r-node-2", {"verdict": "pass", "reason": "fine", "findings": []}))
    assert stages.next_attempt(result, "node", 5) == 0  # passed: done
    node = result["stages"][0]
    assert [(a["attempt"], a["trainjob"], a["verdict"]) for a in node["attempts"]] == [(1, "e-r-node", "fail"), (2, "e-r-node-2", "pass")]
    assert node["verdict"] == "pass" and node["reason"] == "fine"
    # Warned attempts run again too; the stage's verdict is its last attempt's.
    result.update(cluster_result.recorded_attempt(result, "fleet", "e-r", {"verdict": "warn", "reason": "band"}))
    assert stages.next_attempt(result, "fleet", 1) == 2
    result.update(cluster_result.recorded_attempt(result, "fleet", "e-r-2", {"verdict": "warn", "reason": "band"}))
    assert stages.next_attempt(result, "fleet", 1) == 0
    assert [s["stage"] for s in result["stages"]] == ["node", "fleet"]
    with pytest.raises(ConfigError):
        cluster_result.recorded_attempt(result, "fleet", "e-r", {"verdict": "maybe"})


def test_a_rerun_replaces_the_stage_findings_and_a_failed_stage_fails_the_cluster():
    logs, pods = node_pods([480.0, 300.0])
    first = judge_node_stage(logs, facts=H100, job={"pods": pods, "outcome": "Complete"}, judging={"collective": "all_reduce"})
    result = {"outcome": "Complete", "verdict": {"verdict": "pass"}, "reason": "AllJobsCompleted"}
    result.update(cluster_result.recorded_attempt(result, "node", "e-r-node", first))
    assert result["node_verdicts"]["node-1"]["verdict"] == "fail" and len(result["node_findings"]) == 2
    assert outcomes.verdict_of(result) == "fail" and not outcomes.cluster_passed(result)
    final = cluster_result.final_record(result)
    assert final["stage"] == "verdict" and final["reason"].startswith("node stage fail: node-1 busbw ")
    logs, pods = node_pods([480.0, 470.0])
    second = judge_node_stage(logs, facts=H100, job={"pods": pods, "outcome": "Complete"}, judging={"collective": "all_reduce"})
    result.update(cluster_result.recorded_attempt(result, "node", "e-r-node-2", second))
    assert len(result["node_findings"]) == 2 and result["node_verdicts"]["node-1"]["verdict"] == "pass"
    assert outcomes.cluster_passed(result) and cluster_result.final_record(result) == {}
    assert [a["verdict"] for a in result["stages"][0]["attempts"]] == ["fail", "pass"]


@pytest.mark.parametrize(
    "records, reason, want",
    [
        # The fleet stage's failure is the result's own reason: alone, nothing is added.
        ([("fleet", "fail", "slow")], "R", {}),
        ([("fleet", "error", "no pods")], "R", {}),
        # Another stage's failure is added after the fleet's reason when the fleet failed too, alone otherwise.
        ([("fleet", "fail", "slow"), ("node", "fail", "n1 slow")], "R", {"reason": "R; node stage fail: n1 slow", "stage": "verdict"}),
        ([("fleet", "pass", "ok"), ("node", "fail", "n1 slow")], "R", {"reason": "node stage fail: n1 slow", "stage": "verdict"}),
        ([("fleet", "fail", "slow"), ("isolation", "error", "x")], "", {"reason": "isolation stage error: x", "stage": "verdict"}),
        ([("node", "warn", "band"), ("gpu", "fail", "g"), ("dcgm", "pass", "")], "R", {"reason": "gpu stage fail: g", "stage": "verdict"}),
    ],
)
def test_the_final_record_adds_the_failed_stages_but_the_fleets_to_the_reason(records, reason, want):
    result = {"reason": reason, "stages": [{"stage": stage, "verdict": verdict, "reason": why} for stage, verdict, why in records]}
    assert cluster_result.final_record(result) == want


# ------------------------------------------------------------------------------------------------ per-pod judging


def test_each_pod_is_judged_alone_against_the_single_node_threshold():
    logs, pods = node_pods([482.0, 300.0, 410.0])
    verdict = judge_node_stage(
        logs, facts=H100, job={"pods": pods, "outcome": "Complete"}, judging={"stage": "node", "workload": "nccl-all-reduce-node", "collective": "all_reduce"}
    )
    rows = dict((row["node"], row) for row in verdict["node_results"])
    assert [rows[node]["verdict"] for node in ("node-0", "node-1", "node-2")] == ["pass", "fail", "warn"]
    assert rows["node-1"]["threshold"] == "h100-single-node-all-reduce-peak" and rows["node-1"]["pass"] == 432.0
    assert 295 <= rows["node-1"]["busbw"] <= 305 and rows["node-1"]["size"] == 16 * 2**30
    assert verdict["verdict"] == "fail" and verdict["reason"].startswith("node-1 busbw ") and "node-0" not in verdict["reason"]
    found = dict((item["node"], item) for item in verdict["findings"])
    assert found["node-1"]["stage"] == "node" and found["node-1"]["evidence"]["busbw"] == rows["node-1"]["busbw"]
    assert found["node-1"]["evidence"]["size"] == 16 * 2**30 and found["node-2"]["verdict"] == "warn"
    assert verdict["failed_nodes"] == ["node-1"] and verdict["succeeded_nodes"] == ["node-0", "node-2"]
    assert [t["id"] for t in verdict["thresholds"]] == ["h100-single-node-all-reduce-peak"]


def test_a_platform_single_node_record_and_inventory_records_win():
    logs, pods = node_pods([455.0])
    azure = judge_node_stage(logs, facts=dict(H100, platform="azure"), job={"pods": pods, "outcome": "Complete"}, judging={"collective": "all_reduce"})
    assert azure["node_results"][0]["threshold"] == "azure-h100-all-reduce-single-node" and azure["verdict"] == "fail"
    own = [{"id": "ours", "gpu_architecture": "h100", "collective": "all_reduce", "nodes": 1, "pass": 400}]
    mine = judge_node_stage(
        logs, facts=dict(H100, platform="azure"), job={"pods": pods, "outcome": "Complete"}, judging={"collective": "all_reduce", "overrides": own}
    )
    assert mine["verdict"] == "pass" and mine["node_results"][0]["threshold"] == "ours"


def test_a_failed_pod_fails_its_node_and_a_missing_output_is_an_error():
    logs, pods = node_pods([480.0, 481.0], failed=[1])
    verdict = judge_node_stage(logs, facts=H100, job={"pods": pods, "outcome": "Failed", "reason": "FailedJobs"}, judging={"collective": "all_reduce"})
    rows = dict((row["node"], row) for row in verdict["node_results"])
    assert rows["node-0"]["verdict"] == "pass" and rows["node-1"]["verdict"] == "fail"
    assert rows["node-1"]["reason"].startswith("pod job-node-node-0-1-x1y2z failed: ") and "container node exited 1" in rows["node-1"]["reason"]
    assert verdict["verdict"] == "fail" and verdict["checks"][0] == {"name": "job", "verdict": "fail", "reason": "TrainJob Failed: FailedJobs"}
    logs[0]["log"] = "nothing here\n"
    verdict = judge_node_stage(logs[:1], facts=H100, job={"pods": pods[:1], "outcome": "Complete"}, judging={"collective": "all_reduce"})
    assert verdict["verdict"] == "error" and verdict["findings"] == [] and "no nccl-tests output" in verdict["reason"]
    with pytest.raises(ConfigError):
        judge_node_stage([], job={"pods": []}, judging={"results": "dcgm-json"})


def test_two_pods_on_one_node_warn_that_a_node_went_unjudged():
    """A pod scheduled where another had already finished (the anti-affinity counts running pods only: seen in the
    test fleet after the isolation's pods held two nodes) judges that node twice and another not at all."""
    logs, pods = node_pods([480.0, 481.0, 479.0])
    pods[2]["spec"]["nodeName"] = "node-0"
    verdict = judge_node_stage(logs, facts=H100, job={"pods": pods, "outcome": "Complete"}, judging={"collective": "all_reduce"})
    assert verdict["verdict"] == "warn", verdict["checks"]
    assert verdict["reason"] == "3 pods judged 2 node(s) only: node node-0 ran job-node-node-0-0-x1y2z, job-node-node-0-2-x1y2z"
    logs, pods = node_pods([480.0, 481.0])
    assert judge_node_stage(logs, facts=H100, job={"pods": pods, "outcome": "Complete"}, judging={"collective": "all_reduce"})["reason"].startswith(
        "2 node(s) passed"
    )


# ------------------------------------------------------------------------------------------------ the node stage's plan


def test_the_node_stage_plans_its_workload_on_every_gpu_node():
    variables = check_role_vars({"burnin_entry_name": "e", "burnin_nodes": 2, "burnin_workload_params": {"max_bytes": "1G"}})
    nodes = [
        {
            "metadata": {
                "name": "n%d" % index,
                "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "node.kubernetes.io/instance-type": "p5.48xlarge"},
            },
            "status": {"capacity": {"nvidia.com/gpu": "8"}},
        }
        for index in range(5)
    ]
    cluster = {"nodes": nodes, "detection": {"gpu_nodes": 5}}
    plan = role_plan(variables, "aws", "h100", "r1", "ns", cluster, stage="node", attempt=2)
    trainjob = plan["objects"][-1]
    assert trainjob["metadata"]["name"] == "e-r1-node-2" and trainjob["spec"]["trainer"]["numNodes"] == 5
    assert all(obj["metadata"]["labels"]["gpufleet.burnin/entry"] == "e" for obj in plan["objects"])
    assert trainjob["spec"]["runtimeRef"]["name"] == "e-node-runtime"
    words = trainjob["spec"]["trainer"]["command"] + trainjob["spec"]["trainer"]["args"]
    assert words[2].endswith("all_reduce_perf") and words[words.index("-g") + 1] == "8" and words[words.index("-e") + 1] == "16G"
    assert plan["stage"]["workload"] == "nccl-all-reduce-node" and plan["stage"]["parser"] == "nccl-tests" and plan["stage"]["nodes"] == 5
    assert plan["record"] == {"stage": "plan"}  # the cluster's workload fields stay the fleet stage's
    # One pod per node: a pod whose node frees its GPUs first may not take a second node's place.
    runtime = [obj for obj in plan["objects"] if obj["kind"] == "TrainingRuntime"][0]
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        terms = job["template"]["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms[-1]["topologyKey"] == "kubernetes.io/hostname" and terms[-1]["matchLabelKeys"] == ["jobset.sigs.k8s.io/jobset-name"]
        # The API server refuses a pod whose matchLabelKeys repeat a key of its labelSelector (a real run showed it).
        selector_keys = [expression["key"] for expression in terms[-1]["labelSelector"]["matchExpressions"]]
        assert not set(selector_keys) & set(terms[-1]["matchLabelKeys"]), terms[-1]
    fleet = role_plan(variables, "aws", "h100", "r1", "ns", cluster)
    assert fleet["objects"][-1]["metadata"]["name"] == "e-r1" and fleet["record"]["workload"] == "nccl-all-reduce"
    assert fleet["objects"][-1]["spec"]["trainer"]["numNodes"] == 2
    fleet_runtime = [obj for obj in fleet["objects"] if obj["kind"] == "TrainingRuntime"][0]
    assert not any(
        "podAntiAffinity" in (job["template"]["spec"]["template"]["spec"].get("affinity") or {})
        for job in fleet_runtime["spec"]["template"]["spec"]["replicatedJobs"]
    )
    # Nodes that cannot be listed: burnin_nodes, said so.
    unlisted = role_plan(variables, "aws", "h100", "r1", "ns", {}, stage="node")
    assert unlisted["objects"][-1]["spec"]["trainer"]["numNodes"] == 2 and "burnin_nodes (2)" in unlisted["stage"]["note"]


# ------------------------------------------------------------------------------------------------ reports


def staged_result():
    logs, pods = node_pods([482.0, 300.0])
    node = judge_node_stage(
        logs, facts=H100, job={"pods": pods, "outcome": "Complete"}, judging={"stage": "node", "workload": "nccl-all-reduce-node", "collective": "all_reduce"}
    )
    result = {"cluster": "c1", "platform": "aws", "gpu_architecture": "h100", "outcome": "Complete", "trainjob": "e-r"}
    result.update(cluster_result.recorded_attempt(result, "node", "e-r-node", node))
    result.update(cluster_result.recorded_attempt(result, "node", "e-r-node-2", node))
    return result


def test_reports_show_every_stage_attempt_and_a_row_per_node():
    built = report.build_report({"c1": staged_result()}, run_id="r")
    cluster = built["clusters"][0]
    assert [(s["stage"], [a["trainjob"] for a in s["attempts"]]) for s in cluster["stages"]] == [("node", ["e-r-node", "e-r-node-2"])]
    assert [(row["node"], row["verdict"]) for row in cluster["nodes"]] == [("node-1", "fail"), ("node-0", "pass")]
    assert cluster["verdict"] == "fail" and cluster["testcases"][0]["workload"] == "node stage: nccl-all-reduce-node"
    assert json.loads(report.render_json(built))["clusters"][0]["nodes"][0]["node"] == "node-1"
    root = ET.fromstring(junit.render_junit(built).split("\n", 1)[1])
    nodes = [case for case in root.iter("testcase") if case.get("classname") == "gpufleet.burnin.c1.nodes"]
    assert sorted(case.get("name") for case in nodes) == ["node-0", "node-1"]
    assert [case.get("name") for case in nodes if case.find("failure") is not None] == ["node-1"]
    assert root.get("tests") == "3" and root.get("failures") == "2"
    html = html_view.render_html(built)
    assert html.count('<table class="nodes">') == 1 and html.count('<table class="stages">') == 1 and "e-r-node-2" in html


# What the mutation run of burnin/stages.py (docs/mutation.md) found untested.


def test_the_stages_verdict_is_the_worst_of_the_stages_and_none_without_any():
    result = {"stages": [{"stage": "node", "verdict": "warn"}, {"stage": "fleet", "verdict": "fail"}, {"stage": "dcgm", "verdict": "pass"}]}
    assert stages.stages_verdict(result) == "fail"
    assert stages.stages_verdict({"stages": [{"stage": "node", "verdict": "pass"}, {"stage": "fleet", "verdict": "warn"}]}) == "warn"
    assert stages.stages_verdict({"stages": []}) is None and stages.stages_verdict({}) is None and stages.stages_verdict(None) is None
    # a stage without a verdict yet does not count
    assert stages.stages_verdict({"stages": [{"stage": "node"}]}) is None


def test_a_missing_output_is_an_error_also_when_the_job_outcome_is_not_known_yet():
    logs, pods = node_pods([480.0])
    logs[0]["log"] = "nothing here\n"
    verdict = judge_node_stage(logs, facts=H100, job={"pods": pods, "outcome": None}, judging={"collective": "all_reduce"})
    assert verdict["verdict"] == "error" and "no nccl-tests output" in verdict["reason"], verdict
    assert all(check["name"] != "job" for check in verdict["checks"])  # no outcome, no job check


def test_a_pods_busbw_is_its_peak_check_else_its_avg_check_else_its_metrics():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import node_stage

    checks = [{"name": "range", "value": 1.0, "size": 8}, {"name": "avg", "value": 300.0, "size": None}, {"name": "peak", "value": 480.0, "size": 1 << 33}]
    metrics = {"peak_busbw": 490.0, "largest_size": 1 << 34}
    assert node_stage._measured({"checks": checks, "metrics": metrics}) == (480.0, 1 << 33)
    assert node_stage._measured({"checks": checks[:2], "metrics": metrics}) == (300.0, None)
    assert node_stage._measured({"checks": [{"name": "peak", "value": None}], "metrics": metrics}) == (490.0, 1 << 34)
    assert node_stage._measured({"checks": [], "metrics": None}) == (None, None)


def test_a_passed_node_stage_names_the_busbw_range_of_its_nodes():
    import re

    logs, pods = node_pods([480.0, 481.0])
    verdict = judge_node_stage(logs, facts=H100, job={"pods": pods, "outcome": "Complete"}, judging={"collective": "all_reduce"})
    low, high = sorted(row["busbw"] for row in verdict["node_results"])
    assert re.match(r"^2 node\(s\) passed, busbw [0-9.]+\.\.[0-9.]+ GB/s$", verdict["reason"]), verdict["reason"]
    assert ("%.1f..%.1f" % (low, high)) in verdict["reason"]


def test_only_the_fleet_stage_keeps_the_runs_trainjob_name():
    # "dcgm" and "isolation" sort before and after "fleet": each adds its name
    assert stages.stage_trainjob("nccl-burnin-r1", "fleet") == "nccl-burnin-r1"
    assert stages.stage_trainjob("nccl-burnin-r1", "dcgm") == "nccl-burnin-r1-dcgm"
    assert stages.stage_trainjob("nccl-burnin-r1", "isolation", attempt=2) == "nccl-burnin-r1-isolation-2"


def test_only_an_error_stops_the_later_stages():
    assert stages.stop_after("error") is True
    assert [stages.stop_after(verdict) for verdict in ("fail", "pass", "warn", None)] == [False, False, False, False]


def test_a_third_stage_is_recorded_after_the_first_two():
    verdict = {"verdict": "pass", "reason": "ok"}
    result = {}
    for stage in ("node", "fleet", "dcgm"):
        result = dict(result, **cluster_result.recorded_attempt(result, stage, "job-%s" % stage, verdict))
    assert [record["stage"] for record in result["stages"]] == ["node", "fleet", "dcgm"]
    assert [len(record["attempts"]) for record in result["stages"]] == [1, 1, 1]
    assert result["stages"][2]["attempts"][0]["trainjob"] == "job-dcgm"


# ------------------------------------------------------------------------------------------------ mutation (issue 47, fifth round)


def attempts_result(stage, verdicts):
    result = {}
    for number, verdict in enumerate(verdicts, 1):
        result = dict(result, **cluster_result.recorded_attempt(result, stage, "job-%d" % number, {"verdict": verdict, "reason": "r", "findings": []}))
    return result


@pytest.mark.parametrize(
    "verdicts, repeats, want",
    [
        (["fail"], 3, 2),  # fewer attempts than reruns allowed: the next one
        (["fail", "warn"], 3, 3),
        (["fail", "fail"], 2, 3),  # at the bound: the last rerun
        (["fail", "fail", "fail"], 2, 0),  # one past it: done
        (["warn", "warn", "warn", "warn"], 10, 5),
        (["fail", "pass"], 10, 0),
        (["warn", "error"], 10, 0),
    ],
)
def test_the_next_attempt_at_the_repeats_bound_and_one_past_it(verdicts, repeats, want):
    assert stages.next_attempt(attempts_result("node", verdicts), "node", repeats) == want
    assert stages.next_attempt(attempts_result("node", verdicts), "node", str(repeats)) == want


@pytest.mark.parametrize("given, want", [({}, 1), ({"burnin_nodes": None}, 1), ({"burnin_nodes": 0}, 1), ({"burnin_nodes": 3}, 3)])
def test_a_node_stage_without_counted_nodes_runs_on_burnin_nodes_else_one(given, want):
    variables, note = stages.stage_variables(dict(given, burnin_entry_name="e"), "node", cluster={})
    assert variables["burnin_nodes"] == want
    assert note == "the GPU nodes could not be counted (nodes not listed): the node stage runs on burnin_nodes (%d) nodes" % want


@pytest.mark.parametrize(
    "stage_list, repeats, want",
    [
        (["node", "fleet"], None, "x-r1-node"),  # by default no rerun: the first attempts' names
        (["node", "fleet"], 0, "x-r1-node"),
        (["node", "fleet"], 1, "x-r1-node-2"),
        (["fleet"], 10, "x-r1-11"),
        (None, 0, "x-r1"),
        (["isolation"], 0, "x-r1"),  # no TrainJob of its own: the run's name
    ],
)
def test_the_longest_trainjob_name_of_a_run(stage_list, repeats, want):
    if repeats is None:
        assert stages.longest_trainjob("x-r1", stage_list) == want
    else:
        assert stages.longest_trainjob("x-r1", stage_list, repeats) == want


@pytest.mark.parametrize("available, shown", [([], "none"), (["nccl-all-reduce"], "nccl-all-reduce"), (["a", "b"], "a, b")])
def test_a_missing_node_stage_workload_names_the_workloads_there_else_none(available, shown):
    with pytest.raises(ConfigError) as caught:
        stages.check_stages("burnin_stages", ["node", "fleet"], available)
    assert str(caught.value).endswith(
        "stage node runs the catalogue workload nccl-all-reduce-node, but templates/workloads/nccl-all-reduce-node.yaml is missing; available: %s" % shown
    )


@pytest.mark.parametrize("value, want", [(0, 0), ("0", 0), (10, 10), (" 10 ", 10), (-1, None), (11, None), ("11", None)])
def test_repeats_at_their_bounds_and_one_past_them(value, want):
    if want is None:
        with pytest.raises(ConfigError, match="must be an integer from 0 to 10"):
            stages.check_repeats("burnin_repeats", value)
    else:
        assert stages.check_repeats("burnin_repeats", value) == want


def test_a_stage_listed_twice_is_refused_under_its_index_with_its_name():
    with pytest.raises(ConfigError) as caught:
        stages.check_stages("burnin_stages", ["node", "fleet", "node"])
    assert caught.value.field == "burnin_stages[2]"
    assert str(caught.value).endswith("stage node is listed twice (burnin_repeats runs a stage again)")


def test_an_error_read_back_from_json_stops_the_later_stages():
    # A resumed run's verdicts are read from its JSON record: equal strings, not this module's literals.
    assert stages.stop_after(json.loads('"error"')) is True
    assert stages.stop_after(json.loads('"fail"')) is False
