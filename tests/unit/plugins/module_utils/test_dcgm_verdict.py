# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The verdict of a dcgm-diag run (judging/dcgm.py dcgm_verdict): per pod, per node, the whole run, its findings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import judged_record
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_stage import judge_node_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "dcgm")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def pod(name, node, phase="Succeeded"):
    return {
        "metadata": {"name": name, "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}},
        "spec": {"nodeName": node},
        "status": {"phase": phase, "containerStatuses": [{"name": "node", "state": {"terminated": {"exitCode": 0}}}]},
    }


def run(failing_node_log="v4-level3-gpu5-diagnostic-fail.log", job_outcome="Complete"):
    names = ["job-node-0-%d" % index for index in range(4)]
    pods = [pod(name, "n%d" % index) for index, name in enumerate(names)]
    logs = [{"item": pods[index], "log": fixture(failing_node_log if index == 3 else "v4-level3-pass-8gpu.log")} for index in range(4)]
    return verdict_for(logs, job={"outcome": job_outcome, "pods": pods}, judging={"workload": "dcgm-diag", "results": "dcgm-diag"})


def test_a_failing_gpu_fails_the_run_naming_node_gpu_test_and_message():
    verdict = run()
    assert verdict["verdict"] == "fail" and verdict["results"] == "dcgm-diag"
    assert verdict["reason"].startswith("node n3 GPU 5: diagnostic (Hardware) failed: GPU 5 had an error while running the Diagnostic test")
    assert verdict["failed_nodes"] == ["n3"] and verdict["succeeded_nodes"] == ["n0", "n1", "n2"]
    assert verdict["metrics"]["failed_gpus"] == 1 and verdict["metrics"]["gpus_judged"] == 32
    assert [(item["node"], item["stage"], item["verdict"]) for item in verdict["findings"]] == [
        ("n0", "dcgm", "pass"),
        ("n1", "dcgm", "pass"),
        ("n2", "dcgm", "pass"),
        ("n3", "dcgm", "fail"),
    ]
    evidence = verdict["findings"][3]["evidence"]
    assert evidence["failed_gpus"] == [5] and evidence["failures"][0]["test"] == "diagnostic" and evidence["pod"] == "job-node-0-3"
    assert verdict["dcgm"]["n3"]["gpus"]["5"]["verdict"] == "fail"
    checks = dict((check.get("node"), check) for check in verdict["checks"] if check["name"] == "dcgm")
    assert checks["n3"]["value"] == "GPU 5" and "value" not in checks["n0"] and checks["n3"]["pod"] == "job-node-0-3"


def test_all_passing_passes_with_a_short_reason():
    verdict = run("v4-level3-pass-8gpu.log")
    assert verdict["verdict"] == "pass"
    assert verdict["reason"] == "TrainJob Complete; DCGM diagnostic passed on 4 node(s), 32 GPU(s)"
    assert [item["verdict"] for item in verdict["findings"]] == ["pass"] * 4 and verdict["failed_nodes"] == []


def test_a_pod_without_dcgm_json_is_an_error_naming_pod_and_node_and_gives_no_finding():
    verdict = run("no-json.log")
    assert verdict["verdict"] == "error"
    assert verdict["reason"].startswith("node n3 (pod job-node-0-3): no DCGM diagnostic result: the log holds no DCGM diagnostic JSON")
    assert "n3" not in [item["node"] for item in verdict["findings"]] and len(verdict["findings"]) == 3


def test_the_record_carries_the_dcgm_findings_and_the_failure_names_the_node():
    record = judged_record({"cluster": "c", "stage": "logs"}, run())["record"]
    assert record["node_verdicts"]["n3"]["verdict"] == "fail"
    assert record["node_verdicts"]["n3"]["reasons"][0].startswith("dcgm: node n3 GPU 5: diagnostic (Hardware) failed")
    assert record["node_verdicts"]["n0"]["verdict"] == "pass"
    assert record["reason"].startswith("verdict fail: node n3 GPU 5") and record["reason"].endswith("(failed nodes: n3)")


def test_one_pod_at_a_time_as_a_per_node_stage_calls_it():
    one = verdict_for(fixture("v4-level3-gpu5-diagnostic-fail.log"), judging={"results": "dcgm-diag"})
    # Without the pod list the node is the host the workload's marker line names.
    assert one["verdict"] == "fail" and one["findings"][0]["node"] == "nccl-burnin-r1-node-0-3"
    assert one["reason"].startswith("node nccl-burnin-r1-node-0-3 GPU 5: diagnostic (Hardware) failed")
    single = pod("job-node-0-2", "n2")
    by_node = verdict_for([{"item": single, "log": fixture("v4-level3-pass-8gpu.log")}], job={"pods": [single]}, judging={"results": "dcgm-diag"})
    assert by_node["verdict"] == "pass" and [(item["node"], item["verdict"]) for item in by_node["findings"]] == [("n2", "pass")]
    mapping = verdict_for(None, job={"pod_logs": {"p": fixture("v3-level2-4gpu-persistence-config-memory-isolate.log")}}, judging={"results": "dcgm-diag"})
    assert mapping["verdict"] == "fail" and mapping["findings"][0]["node"] == "p"


def test_no_logs_is_an_error_and_a_failed_job_fails():
    assert verdict_for([], judging={"results": "dcgm-diag"})["verdict"] == "error"
    assert verdict_for(None, job={"outcome": "Timeout"}, judging={"results": "dcgm-diag"})["reason"].startswith(
        "no result: the TrainJob did not finish in time"
    )
    failed = run("v4-level3-pass-8gpu.log", job_outcome="Failed")
    assert failed["verdict"] == "fail" and failed["reason"].startswith("TrainJob Failed")


def test_an_unknown_results_kind_is_refused():
    with pytest.raises(ConfigError, match="^results: must be nccl-tests, dcgm-diag or gpu-burn"):
        verdict_for("x", judging={"results": "dcgm"})


def test_the_dcgm_stage_names_each_node_once_not_its_pods_host():
    # The dcgm stage judges pod by pod (judging/node_stage.py); the log's marker line names the pod's host, which
    # the reason showed beside the node ("n3 node job-node-0-3 GPU 5: ...").
    names = ["job-dcgm-node-0-%d" % index for index in range(2)]
    pods = [pod(name, "n%d" % index) for index, name in enumerate(names)]
    logs = [{"item": pods[0], "log": fixture("v4-level3-pass-8gpu.log")}, {"item": pods[1], "log": fixture("v4-level3-gpu5-diagnostic-fail.log")}]
    stage = judge_node_stage(logs, job={"pods": pods, "outcome": "Complete"}, judging={"stage": "dcgm", "results": "dcgm-diag"})
    assert stage["verdict"] == "fail" and stage["failed_nodes"] == ["n1"]
    assert stage["reason"].startswith("node n1 GPU 5: diagnostic (Hardware) failed: GPU 5 had an error"), stage["reason"]
    check = next(check for check in stage["checks"] if check["name"] == "n1")
    assert check["reason"].startswith("node n1 GPU 5: diagnostic (Hardware) failed"), check["reason"]
    assert [(f["node"], f["verdict"], f["evidence"]["pod"]) for f in stage["findings"]] == [("n0", "pass", names[0]), ("n1", "fail", names[1])]


def test_a_runtime_error_is_an_error_check_with_no_finding():
    result = verdict_for(None, job={"pod_logs": {"p": fixture("v4-runtime-error.log")}}, judging={"results": "dcgm-diag"})
    assert result["verdict"] == "error" and result["findings"] == []
    assert result["reason"] == (
        "node nccl-burnin-r1-node-0-3 (pod p): dcgmi could not run the diagnostic (a setup failure, not a GPU result):"
        " Error: Diagnostic could not be run while DCGM is paused."
    )


def test_a_dcgm_verdict_counts_no_nccl_warnings_and_no_nccl_problems():
    # The record has the keys of an NCCL verdict (the report and the history read them alike); a DCGM run has no
    # NCCL WARN lines to count and no output pod, with logs or without.
    for verdict in (run(), verdict_for([], judging={"results": "dcgm-diag"})):
        assert (verdict["warnings"], verdict["problems"], verdict["output_pod"], verdict["collective"]) == (0, [], None, None), verdict


def test_a_warned_run_says_why_not_that_it_passed():
    # The published GB10 document (tests/fixtures/real/dcgm): persistence mode off, a CONFIG warning.
    with open(os.path.join(FIXTURES, "..", "..", "..", "fixtures", "real", "dcgm", "dcgm-4.2.3-level1-gb10-persistence-config.json")) as handle:
        verdict = verdict_for({"spark": handle.read()}, job={"outcome": "Complete"}, judging={"results": "dcgm-diag"})
    assert verdict["verdict"] == "warn" and verdict["reason"].startswith("node spark GPU 0: software (Deployment) warned: Persistence Mode"), verdict["reason"]


def test_empty_logs_of_any_shape_are_no_logs():
    for empty in (None, "", [], {}):
        verdict = verdict_for(empty, judging={"results": "dcgm-diag"})
        assert verdict["verdict"] == "error" and verdict["reason"] == "no result: no pod log to read DCGM diagnostic output from", empty


def test_a_passed_dcgm_3_table_names_no_gpu_count_it_does_not_have():
    # DCGM 3.3.9's "Skip - All"/"Pass - All" table (tests/fixtures/real/dcgm) names no GPU: no "0 GPU(s)".
    with open(os.path.join(FIXTURES, "..", "..", "..", "fixtures", "real", "dcgm", "dcgm-3.3.9-level3-table-skip-2gpu.txt")) as handle:
        verdict = verdict_for({"gpu-node-1": handle.read()}, job={"outcome": "Complete"}, judging={"results": "dcgm-diag"})
    assert verdict["reason"] == "TrainJob Complete; DCGM diagnostic passed on 1 node(s), no GPU named (dcgmi's table reports the whole group)"
    assert verdict_for({"n": fixture("v4-level3-pass-8gpu.log")}, judging={"results": "dcgm-diag"})["reason"] == "DCGM diagnostic passed on 1 node(s), 8 GPU(s)"
