# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The stage runner (module_utils/burnin/stage_run.py) against a fake cluster (stage_fakes.py): attempts, repeats,
an error stopping the stages, check mode, a wait that could not read the cluster, a node stage's per-node findings.
tests/unit/plugins/filter/test_stage_run_yaml_path.py compares its records with what the role's former task files
built with the filters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.stage_run import run_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

_SPEC = importlib.util.spec_from_file_location("stage_fakes", os.path.join(os.path.dirname(os.path.abspath(__file__)), "stage_fakes.py"))
fakes = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fakes)


def settings_of(variables, **changes):
    out = {
        "repeats": variables["burnin_repeats"],
        "namespace": fakes.NAMESPACE,
        "timeout": 600,
        "nodes": variables["burnin_nodes"],
        "thresholds": variables["burnin_thresholds"],
        "on_missing": variables["burnin_threshold_on_missing"],
        "cluster": "aws-a",
    }
    out.update(changes)
    return out


def fleet_script(*kinds):
    """Each TrainJob applied ends Complete with the next of KINDS as the launcher's output."""
    left = list(kinds)

    def script(trainjob, objects):
        kind = left.pop(0)
        if kind in ("Unreachable", "Timeout"):
            return (kind, [], {})
        pods, logs = fakes.fleet_pods(trainjob, objects, kind)
        return ("Failed" if kind == "truncated" else "Complete", pods, logs)

    return script


class Clock(object):
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 0.5
        return self.now


def test_a_fleet_stage_that_passes_first_time_runs_once_and_records_its_attempt():
    variables = fakes.checked()
    cluster = fakes.FakeCluster(fleet_script("good"))
    plan = fakes.planner(variables)
    out = run_stage(cluster, "fleet", fakes.start(variables), plan, settings=settings_of(variables, repeats=2), clock=Clock())
    record = out["record"]
    assert plan.calls == [("fleet", 1)]
    assert [call[0] for call in cluster.calls] == ["apply", "wait", "logs"]
    # The namespace first (detection did not find it), then the plan's objects.
    assert cluster.calls[0][1] == ["Namespace/burnin", "TrainingRuntime/nccl-burnin-runtime", "TrainJob/nccl-burnin-r1"]
    assert cluster.calls[2] == ("logs", "nccl-burnin-r1", ["launcher"])
    assert record["outcome"] == "Complete" and record["verdict"]["verdict"] == "pass" and record["namespace_created"] is True
    assert record["stage"] == "wait"  # a passing verdict keeps the stage (judged_record)
    (stage,) = record["stages"]
    assert stage["stage"] == "fleet" and stage["verdict"] == "pass" and [a["trainjob"] for a in stage["attempts"]] == ["nccl-burnin-r1"]
    assert record["logs"]["pods"] == 3 and record["logs"]["collected"] == 3
    assert out["stop"] is False and out["msg"].startswith("aws-a: pass - ")
    assert [step["name"] for step in out["steps"]] == [
        "plan (fleet attempt 1)",
        "apply (fleet attempt 1)",
        "wait (fleet attempt 1)",
        "logs (fleet attempt 1)",
        "verdict (fleet attempt 1)",
    ]
    assert all(step["seconds"] == 0.5 for step in out["steps"])


def test_a_warned_fleet_stage_runs_again_under_its_own_name_and_passes():
    variables = fakes.checked()
    cluster = fakes.FakeCluster(fleet_script("below-threshold", "good"))
    out = run_stage(cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables, repeats=2))
    (stage,) = out["record"]["stages"]
    assert [(a["attempt"], a["trainjob"], a["verdict"]) for a in stage["attempts"]] == [(1, "nccl-burnin-r1", "warn"), (2, "nccl-burnin-r1-2", "pass")]
    assert stage["verdict"] == "pass" and out["record"]["verdict"]["verdict"] == "pass"
    applies = [call[1] for call in cluster.calls if call[0] == "apply"]
    # The namespace the first attempt created is not applied again.
    assert applies[1] == ["TrainingRuntime/nccl-burnin-runtime", "TrainJob/nccl-burnin-r1-2"]
    assert out["record"]["applied"] == ["Namespace/burnin", "TrainingRuntime/nccl-burnin-runtime", "TrainJob/nccl-burnin-r1", "TrainJob/nccl-burnin-r1-2"]
    assert out["msg"].endswith("(attempts: warn, pass)") and len(out["lines"]) == 2


def test_without_repeats_a_warned_stage_runs_once_and_a_failed_one_fails_the_cluster():
    variables = fakes.checked()
    out = run_stage(
        fakes.FakeCluster(fleet_script("below-threshold")), "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables)
    )
    assert [a["verdict"] for a in out["record"]["stages"][0]["attempts"]] == ["warn"] and out["stop"] is False
    failed = run_stage(
        fakes.FakeCluster(fleet_script("far-below", "far-below")),
        "fleet",
        fakes.start(variables),
        fakes.planner(variables),
        settings=settings_of(variables, repeats=1),
    )
    assert [a["verdict"] for a in failed["record"]["stages"][0]["attempts"]] == ["fail", "fail"]
    assert failed["record"]["stage"] == "verdict" and failed["record"]["reason"].startswith("verdict fail: busbw")


def test_an_error_verdict_is_not_repeated_and_stops_the_later_stages():
    variables = fakes.checked()
    # The job completed but its launcher printed nothing to judge: no result at all.
    cluster = fakes.FakeCluster(fleet_script("none", "good"))
    out = run_stage(cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables, repeats=3))
    (stage,) = out["record"]["stages"]
    assert [a["verdict"] for a in stage["attempts"]] == ["error"] and out["stop"] is True
    assert out["record"]["outcome"] == "Complete" and out["record"]["stage"] == "verdict" and "no result" in out["record"]["reason"]
    assert len([call for call in cluster.calls if call[0] == "apply"]) == 1


def test_check_mode_plans_and_dry_runs_the_namespace_only_when_it_is_missing():
    variables = fakes.checked()
    cluster = fakes.FakeCluster(fleet_script())
    out = run_stage(cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables, check_mode=True, repeats=2))
    assert cluster.calls == [("apply", ["Namespace/burnin"], True, True)]
    record = out["record"]
    assert record["outcome"] == "Checked" and record["stages"] == [] and record["namespace_created"] is False
    assert (
        record["reason"]
        == "namespace burnin does not exist yet: only it was dry-run; would create TrainingRuntime/nccl-burnin-runtime, TrainJob/nccl-burnin-r1"
    )
    assert out["stop"] is False and "Checked" not in out["msg"] and "dry-run" in out["msg"]
    # The namespace there: every object is dry-run.
    cluster = fakes.FakeCluster(fleet_script())
    out = run_stage(cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables, check_mode=True, namespace_exists=True))
    assert cluster.calls == [("apply", ["TrainingRuntime/nccl-burnin-runtime", "TrainJob/nccl-burnin-r1"], True, True)]
    assert out["record"]["reason"] == "dry run passed"


def test_without_waiting_or_logs_there_is_no_verdict():
    variables = fakes.checked()
    cluster = fakes.FakeCluster(fleet_script("good"))
    out = run_stage(cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables, wait=False, repeats=2))
    assert [call[0] for call in cluster.calls] == ["apply", "logs"]
    assert out["record"]["outcome"] == "Applied" and out["record"]["stages"] == [] and "verdict" not in out["record"]
    cluster = fakes.FakeCluster(fleet_script("good"))
    out = run_stage(cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables, collect_logs=False))
    assert [call[0] for call in cluster.calls] == ["apply", "wait"]
    assert out["record"]["outcome"] == "Complete" and out["record"]["stages"] == [] and "logs" not in out["record"]


def test_a_wait_that_could_not_read_the_cluster_raises_with_the_record_so_far():
    variables = fakes.checked()
    cluster = fakes.FakeCluster(fleet_script("Unreachable"))
    with pytest.raises(ClusterCallFailed) as caught:
        run_stage(cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables, repeats=1))
    partial = caught.value.partial["record"]
    assert partial["stage"] == "wait" and partial["outcome"] == "Unreachable" and "Gave up waiting" in partial["reason"]
    assert caught.value.error["category"] == "Unreachable"
    assert [step["name"] for step in caught.value.partial["steps"]][-1] == "wait (fleet attempt 1)"
    assert [call[0] for call in cluster.calls] == ["apply", "wait"]


def test_a_node_stage_judges_each_node_and_keeps_its_findings():
    variables = fakes.checked()
    cluster_facts = {"detection": {"gpu_nodes": 3}}

    def script(trainjob, objects):
        pods, logs = fakes.node_pods(trainjob, objects, [480.0, 120.0, 478.0])
        return ("Complete", pods, logs)

    cluster = fakes.FakeCluster(script)
    written = []
    settings = settings_of(variables, write_logs=lambda subdir, results: written.append((subdir, len(results))))
    out = run_stage(cluster, "node", fakes.start(variables), fakes.planner(variables, cluster_facts), settings=settings)
    record = out["record"]
    (stage,) = record["stages"]
    assert stage["stage"] == "node" and stage["verdict"] == "fail" and stage["trainjob"] == "nccl-burnin-r1-node"
    assert [(row["node"], row["verdict"]) for row in stage["attempts"][0]["nodes"]] == [("node-0", "pass"), ("node-1", "fail"), ("node-2", "pass")]
    assert record["node_verdicts"]["node-1"]["verdict"] == "fail" and record["node_verdicts"]["node-0"]["verdict"] == "pass"
    assert record["workload"] == "nccl-all-reduce"  # the cluster's workload stays the fleet stage's
    assert cluster.calls[2] == ("logs", "nccl-burnin-r1-node", ["node"])
    assert written == [("node", 3)]
    assert out["msg"].startswith("aws-a: node stage, attempt 1: fail - ") and out["stop"] is False
    # What each node ran, from its own pod's log (the stand-in's INFO lines), for the drift check (judging/drift.py).
    ran = record["node_runtime"]["node"]
    assert sorted(ran) == ["node-0", "node-1", "node-2"]
    assert all(ran[name]["nccl"] == "2.27.7+cuda12.9" for name in ran), ran
    assert ran["node-0"]["net_plugin"] == "Libfabric (v10)"
    # The NCCL env of the rendered pod spec of each pod's replicated job (the pods the wait keeps hold no containers).
    assert ran["node-0"]["nccl_env"].startswith("NCCL_") and "NCCL_DEBUG=INFO" in ran["node-0"]["nccl_env"].split(" ")


def test_a_fleet_stage_records_what_its_workers_ran_but_not_from_the_launchers_log():
    variables = fakes.checked()

    def script(trainjob, objects):
        pods, logs = fakes.fleet_pods(trainjob, objects, "good")
        for pod in pods:
            pod["status"]["containerStatuses"][0]["imageID"] = "registry.example/nccl@sha256:" + ("1" if "launcher" in pod["metadata"]["name"] else "2") * 64
        return ("Complete", pods, logs)

    out = run_stage(fakes.FakeCluster(script), "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables))
    ran = out["record"]["node_runtime"]["fleet"]
    assert sorted(ran) == ["node-0", "node-1"] and all(set(ran[name]) == {"images", "nccl_env"} for name in ran)
    assert ran["node-0"]["images"] == {"node": "registry.example/nccl@sha256:" + "2" * 64}


def test_bad_settings_and_stages_name_the_field():
    variables = fakes.checked()
    with pytest.raises(ConfigError, match="stage"):
        run_stage(fakes.FakeCluster(fleet_script()), "isolation", fakes.start(variables), fakes.planner(variables), settings={})
    with pytest.raises(ConfigError, match="unknown setting.*wiat"):
        run_stage(fakes.FakeCluster(fleet_script()), "fleet", fakes.start(variables), fakes.planner(variables), settings={"wiat": True})
    with pytest.raises(ConfigError, match="repeats"):
        run_stage(fakes.FakeCluster(fleet_script()), "fleet", fakes.start(variables), fakes.planner(variables), settings={"repeats": 11})


# What the mutation run of burnin/stage_run.py (issue 47) found untested: the thresholds given reaching both kinds of
# verdict, the pods of the wait when the logs do not list them, a stage other than the fleet stage judged per node, a
# resumed stage, the summary line of several attempts and of none.


def test_a_threshold_override_reaches_the_fleet_and_the_node_stages_verdicts():
    variables = fakes.checked()
    override = [{"id": "mine", "collective": "all_reduce", "source": "test", "pass": 10000.0}]
    for thresholds, verdict in (([], "pass"), (override, "fail")):
        out = run_stage(
            fakes.FakeCluster(fleet_script("good")),
            "fleet",
            fakes.start(variables),
            fakes.planner(variables),
            settings=settings_of(variables, thresholds=thresholds),
        )
        assert out["record"]["verdict"]["verdict"] == verdict
    assert "is below mine (>= 10000 GB/s)" in out["record"]["verdict"]["reason"]

    def script(trainjob, objects):
        pods, logs = fakes.node_pods(trainjob, objects, [480.0, 478.0])
        return ("Complete", pods, logs)

    for thresholds, verdict in (([], "pass"), (override, "fail")):
        out = run_stage(
            fakes.FakeCluster(script),
            "node",
            fakes.start(variables),
            fakes.planner(variables, {"detection": {"gpu_nodes": 2}}),
            settings=settings_of(variables, thresholds=thresholds),
        )
        assert out["record"]["stages"][0]["verdict"] == verdict
    assert "node-0 busbw 478.0 GB/s at 16G (out-of-place) is below mine (>= 10000 GB/s)" in out["msg"]


class LogsWithoutPods(fakes.FakeCluster):
    """A cluster whose logs() does not list the pods: the wait's are used."""

    def logs(self, name, waited=None, whole_logs_of=None):
        out = dict(fakes.FakeCluster.logs(self, name, waited, whole_logs_of))
        assert "pods" in out
        del out["pods"]
        return out


def test_without_the_pods_in_the_logs_the_waits_pods_place_each_node():
    variables = fakes.checked()

    def script(trainjob, objects):
        pods, logs = fakes.node_pods(trainjob, objects, [480.0, 120.0])
        return ("Complete", pods, logs)

    out = run_stage(
        LogsWithoutPods(script), "node", fakes.start(variables), fakes.planner(variables, {"detection": {"gpu_nodes": 2}}), settings=settings_of(variables)
    )
    (stage,) = out["record"]["stages"]
    assert [(row["node"], row["verdict"]) for row in stage["attempts"][0]["nodes"]] == [("node-0", "pass"), ("node-1", "fail")]
    assert sorted(out["record"]["node_runtime"]["node"]) == ["node-0", "node-1"]
    # judge_attempt alone: the pods of the wait, else none
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import stage_run

    result = {"platform": "aws", "gpu_architecture": "h100", "outcome": "Complete"}
    plan_stage = {"workload": "dcgm-diag", "parser": "dcgm-diag"}
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "n0"}, "status": {"phase": "Succeeded"}}
    settings = dict(stage_run.DEFAULT_SETTINGS)
    assert (
        stage_run.judge_attempt("dcgm", plan_stage, result, {"results": []}, {"pods": [pod]}, settings)["reason"]
        == "n0 no dcgm-diag output in the log of pod p"
    )
    assert stage_run.judge_attempt("dcgm", plan_stage, result, {"results": [], "pods": []}, {"pods": [pod]}, settings)["reason"] == (
        "no pod of the dcgm stage ran on a node"
    )


def test_a_dcgm_stage_is_recorded_as_a_node_stage_not_as_the_clusters_verdict():
    variables = fakes.checked()

    def judge(stage, plan_stage, result, pod_logs, waited, settings):
        return {"verdict": "warn", "reason": "dcgm said so", "findings": [], "nodes": []}

    def empty(trainjob, objects):
        return ("Complete", [], {})

    out = run_stage(
        fakes.FakeCluster(empty),
        "dcgm",
        fakes.start(variables),
        fakes.planner(variables, {"detection": {"gpu_nodes": 2}}),
        judge=judge,
        settings=settings_of(variables),
    )
    assert out["msg"] == "aws-a: dcgm stage, attempt 1: warn - dcgm said so"
    assert "verdict" not in out["record"] and out["record"]["stages"][0]["verdict"] == "warn"


def test_the_steps_name_the_written_logs():
    variables = fakes.checked()

    def script(trainjob, objects):
        pods, logs = fakes.node_pods(trainjob, objects, [480.0, 478.0])
        return ("Complete", pods, logs)

    settings = settings_of(variables, write_logs=lambda subdir, results: None)
    out = run_stage(fakes.FakeCluster(script), "node", fakes.start(variables), fakes.planner(variables, {"detection": {"gpu_nodes": 2}}), settings=settings)
    assert [step["name"] for step in out["steps"]] == [
        "plan (node attempt 1)",
        "apply (node attempt 1)",
        "wait (node attempt 1)",
        "logs (node attempt 1)",
        "write logs (node attempt 1)",
        "verdict (node attempt 1)",
    ]


def test_a_resumed_stage_runs_its_next_attempt_only_and_a_done_one_none():
    variables = fakes.checked()
    first = run_stage(
        fakes.FakeCluster(fleet_script("below-threshold")), "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables)
    )
    plan = fakes.planner(variables)
    again = run_stage(fakes.FakeCluster(fleet_script("good")), "fleet", first["record"], plan, settings=settings_of(variables, repeats=1))
    assert plan.calls == [("fleet", 2)]
    assert [(a["attempt"], a["verdict"]) for a in again["record"]["stages"][0]["attempts"]] == [(1, "warn"), (2, "pass")]
    # one line this time, so no list of the attempts
    assert len(again["lines"]) == 1 and again["msg"] == again["lines"][0]
    cluster = fakes.FakeCluster(fleet_script())
    done = run_stage(cluster, "fleet", again["record"], fakes.planner(variables), settings=settings_of(variables, repeats=1))
    assert done["msg"] == "fleet stage: no attempt ran" and done["lines"] == [] and cluster.calls == [] and done["stop"] is False and done["changed"] is False


def test_the_summary_of_several_attempts_is_the_last_line_and_their_verdicts():
    variables = fakes.checked()
    out = run_stage(
        fakes.FakeCluster(fleet_script("below-threshold", "good")),
        "fleet",
        fakes.start(variables),
        fakes.planner(variables),
        settings=settings_of(variables, repeats=2),
    )
    assert len(out["lines"]) == 2 and out["lines"][0] != out["lines"][1]
    assert out["msg"] == out["lines"][-1] + " (attempts: warn, pass)"


def test_the_fleet_verdict_reads_the_planned_instance_type_and_the_jobs_outcome():
    variables = fakes.checked()
    base = fakes.planner(variables)

    def plan(stage, attempt, result):
        out = base(stage, attempt, result)
        out["record"] = dict(out["record"], instance_type="p5en.48xlarge")
        return out

    out = run_stage(fakes.FakeCluster(fleet_script("good")), "fleet", fakes.start(variables), plan, settings=settings_of(variables))
    assert "as expected for aws/h100 (p5en.48xlarge) on 2 host(s)" in out["record"]["verdict"]["reason"]
    out = run_stage(fakes.FakeCluster(fleet_script("truncated")), "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables))
    assert out["record"]["verdict"]["reason"].startswith("TrainJob Failed: JobFailed: a job failed;")


def test_a_stage_named_at_run_time_is_the_fleet_stage():
    variables = fakes.checked()
    stage = "".join(["fl", "eet"])  # as Ansible passes it: not the module's literal
    out = run_stage(fakes.FakeCluster(fleet_script("good")), stage, fakes.start(variables), fakes.planner(variables), settings=settings_of(variables))
    assert out["record"]["verdict"]["verdict"] == "pass" and out["msg"].startswith("aws-a: pass - ")


class Doubling(object):
    """A clock whose every reading doubles the time since 0 (0.1, 0.3, 0.7, 1.5 ... ms): each step's seconds differ."""

    def __init__(self):
        self.ticks = 0

    def __call__(self):
        self.ticks = self.ticks * 2 + 1
        return self.ticks / 10000.0


def test_each_step_takes_its_own_seconds_rounded_to_the_millisecond():
    variables = fakes.checked()
    out = run_stage(
        fakes.FakeCluster(fleet_script("good")), "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables), clock=Doubling()
    )
    # readings 0.1, 0.3 | 0.7, 1.5 | 3.1, 6.3 | 12.7, 25.5 | 51.1, 102.3 ms: 0.2, 0.8, 3.2, 12.8 and 51.2 ms to the millisecond
    assert [(step["name"].split(" ")[0], step["seconds"]) for step in out["steps"]] == [
        ("plan", 0.0),
        ("apply", 0.001),
        ("wait", 0.003),
        ("logs", 0.013),
        ("verdict", 0.051),
    ]


def test_a_wait_that_could_not_read_the_cluster_names_the_trainjob():
    variables = fakes.checked()
    with pytest.raises(ClusterCallFailed) as caught:
        run_stage(fakes.FakeCluster(fleet_script("Unreachable")), "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables))
    assert str(caught.value) == "waiting for TrainJob nccl-burnin-r1: connection refused" and caught.value.what == "waiting for TrainJob nccl-burnin-r1"


class RecordingLogs(fakes.FakeCluster):
    """A fake cluster that keeps what the stage passed to logs() as the wait's reads."""

    def logs(self, name, waited=None, whole_logs_of=None):
        self.early = waited
        return fakes.FakeCluster.logs(self, name, waited, whole_logs_of)


def test_the_defaults_run_once_apply_without_diff_and_wait_an_hour():
    variables = fakes.checked()
    cluster = RecordingLogs(fleet_script("below-threshold", "good"))
    out = run_stage(
        cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings={"namespace": fakes.NAMESPACE, "nodes": variables["burnin_nodes"]}
    )
    # no repeats by default: a warned stage runs once
    assert [a["verdict"] for a in out["record"]["stages"][0]["attempts"]] == ["warn"]
    assert cluster.calls[0][2:] == (False, False) and cluster.calls[1] == ("wait", ["nccl-burnin-r1"], 3600)
    assert out["changed"] is True and out["record"]["verdict"]["workload"] == "nccl-all-reduce"
    # what the wait read goes to the logs, each key with its default when the wait read none
    launcher, worker0, worker1 = cluster.early["pods"]
    assert launcher["metadata"]["name"] == "nccl-burnin-r1-launcher-0-0-x1" and worker1["spec"]["nodeName"] == "node-1"
    assert dict((key, cluster.early[key]) for key in ("logs", "logs_cut", "logs_final")) == {"logs": {}, "logs_cut": {}, "logs_final": []}
    # and its outcome: the logs list the pods again only when the job had not ended (plugin_utils/cluster.py logs)
    assert cluster.early["outcome"] == "Complete"
    # the wait's conditions are recorded
    cluster = fakes.FakeCluster(fleet_script("good"))
    out = run_stage(cluster, "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables, collect_logs=False))
    assert out["record"]["conditions"] == [{"type": "Complete", "status": "True"}]


def test_each_line_names_the_cluster_of_the_settings_else_the_results():
    variables = fakes.checked()
    told = []
    settings = settings_of(variables, cluster="inventory-host", progress=told.append)
    out = run_stage(fakes.FakeCluster(fleet_script("good")), "fleet", fakes.start(variables), fakes.planner(variables), settings=settings)
    assert told[0] == "inventory-host: fleet stage, attempt 1: applied, waiting for TrainJob nccl-burnin-r1" and told[1] == out["lines"][0]
    out = run_stage(
        fakes.FakeCluster(fleet_script("good")),
        "fleet",
        fakes.start(variables),
        fakes.planner(variables),
        settings=settings_of(variables, cluster="x", wait=False),
    )
    assert out["msg"].startswith("x: fleet stage, attempt 1: ")
    out = run_stage(
        fakes.FakeCluster(fleet_script("good")),
        "fleet",
        fakes.start(variables),
        fakes.planner(variables),
        settings=settings_of(variables, cluster="", collect_logs=False),
    )
    assert out["msg"] == "aws-a: fleet stage, attempt 1: Complete - JobsCompleted: jobs completed"

    def script(trainjob, objects):
        pods, logs = fakes.node_pods(trainjob, objects, [480.0, 478.0])
        return ("Complete", pods, logs)

    out = run_stage(
        fakes.FakeCluster(script),
        "node",
        fakes.start(variables),
        fakes.planner(variables, {"detection": {"gpu_nodes": 2}}),
        settings=settings_of(variables, cluster="y"),
    )
    assert out["msg"].startswith("y: node stage, attempt 1: pass - ")


def test_the_fleet_is_judged_as_one_node_unless_the_settings_say_how_many():
    variables = fakes.checked()
    for settings, record in (({}, "h100-single-node-all-reduce-peak"), ({"nodes": 2}, "aws-h100-all-reduce-peak")):
        out = run_stage(
            fakes.FakeCluster(fleet_script("good")),
            "fleet",
            fakes.start(variables),
            fakes.planner(variables),
            settings=dict(settings, namespace=fakes.NAMESPACE),
        )
        assert "meets %s (" % record in out["record"]["verdict"]["reason"], settings


def test_a_node_stage_judges_the_jobs_outcome_and_keeps_the_plans_note():
    variables = fakes.checked()

    def script(trainjob, objects):
        pods, logs = fakes.node_pods(trainjob, objects, [480.0, 478.0], failed=(1,))
        return ("Failed", pods, logs)

    base = fakes.planner(variables, {"detection": {"gpu_nodes": 2}})

    def plan(stage, attempt, result):
        out = base(stage, attempt, result)
        out["stage"] = dict(out["stage"], note="a note")
        return out

    out = run_stage(fakes.FakeCluster(script), "node", fakes.start(variables), plan, settings=settings_of(variables))
    (stage,) = out["record"]["stages"]
    assert stage["judged"]["checks"][0] == {"name": "job", "verdict": "fail", "reason": "TrainJob Failed: JobFailed: a job failed"}
    assert stage["note"] == "a note" and stage["verdict"] == "fail"


class WaitWithoutImages(fakes.FakeCluster):
    """The wait keeps the pods without their status (as cluster/pod_logs.py POD_HIDDEN trims them); the logs' are whole."""

    def wait(self, names, timeout):
        out = fakes.FakeCluster.wait(self, names, timeout)
        for record in out.values():
            record["pods"] = [dict(pod, status={}) for pod in record["pods"]]
        return out


def test_what_each_node_ran_is_read_from_the_pods_the_logs_list():
    variables = fakes.checked()

    def script(trainjob, objects):
        pods, logs = fakes.fleet_pods(trainjob, objects, "good")
        for pod in pods:
            pod["status"]["containerStatuses"][0]["imageID"] = "registry.example/nccl@sha256:" + "2" * 64
        return ("Complete", pods, logs)

    out = run_stage(WaitWithoutImages(script), "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables))
    assert out["record"]["node_runtime"]["fleet"]["node-1"]["images"] == {"node": "registry.example/nccl@sha256:" + "2" * 64}


class UnreadWait(fakes.FakeCluster):
    """A wait that could not read the cluster and says why in its reason only (no classified error)."""

    def wait(self, names, timeout):
        return dict((name, {"outcome": "Unreachable", "reason": "no route to host", "conditions": [], "pods": []}) for name in names)


def test_a_failed_wait_without_an_error_is_explained_by_its_reason():
    variables = fakes.checked()
    with pytest.raises(ClusterCallFailed) as caught:
        run_stage(UnreadWait(fleet_script("good")), "fleet", fakes.start(variables), fakes.planner(variables), settings=settings_of(variables))
    assert caught.value.error == {"category": "Unreachable", "message": "no route to host"}
    assert str(caught.value) == "waiting for TrainJob nccl-burnin-r1: no route to host"


def test_a_node_stages_verdict_names_its_planned_workload_and_collective():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import stage_run

    result = {"platform": "aws", "gpu_architecture": "h100", "outcome": "Complete"}
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "n0"}, "status": {"phase": "Succeeded"}}
    settings = dict(stage_run.DEFAULT_SETTINGS)
    plan_stage = {"workload": "nccl-all-reduce-node", "collective": "all_reduce", "parser": "nccl-tests"}
    verdict = stage_run.judge_attempt("node", plan_stage, result, {"results": [], "pods": [pod]}, {}, settings)
    assert (verdict["stage"], verdict["workload"], verdict["collective"]) == ("node", "nccl-all-reduce-node", "all_reduce")
    # a stage without a collective (dcgm-diag, gpu-burn) names none
    verdict = stage_run.judge_attempt(
        "dcgm", dict(plan_stage, workload="dcgm-diag", collective="", parser="dcgm-diag"), result, {"results": [], "pods": [pod]}, {}, settings
    )
    assert (verdict["stage"], verdict["workload"], verdict["collective"]) == ("dcgm", "dcgm-diag", None)
