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
