# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The isolation stage (module_utils/burnin/isolation_stage.py): when it runs, pairs judged by the real verdict on the
test fleet's nccl-tests output, a failure recorded, and the stages' order (stage_run.in_order)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import isolation_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.stage_run import in_order, stopped_by
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import collect
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError

_SPEC = importlib.util.spec_from_file_location("stage_fakes", os.path.join(os.path.dirname(os.path.abspath(__file__)), "stage_fakes.py"))
fakes = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fakes)

RUN = {"wait": True, "collect_logs": True, "check_mode": False}
FAILED_FLEET = {
    "cluster": "aws-a",
    "platform": "aws",
    "gpu_architecture": "h100",
    "gpus_per_node": 8,
    "instance_type": "p5.48xlarge",
    "collective": "all_reduce",
    "workload": "nccl-all-reduce",
    "results": "nccl-tests",
    "reason": "verdict fail: busbw low",
    "verdict": {"verdict": "fail", "nodes": ["n0", "n1", "n2", "n3"]},
    "node_findings": [],
}


@pytest.mark.parametrize(
    "changes, settings, why",
    [
        ({}, dict(RUN, check_mode=True), "check mode"),
        ({}, dict(RUN, wait=False), "burnin_wait and burnin_collect_logs"),
        ({}, dict(RUN, collect_logs=False), "burnin_wait and burnin_collect_logs"),
        ({"results": None}, RUN, "not judged by nccl-tests"),
        ({"verdict": {"verdict": "pass", "nodes": ["n0", "n1"]}}, RUN, "did not fail or warn"),
        ({"verdict": {"verdict": "error", "nodes": ["n0", "n1"]}}, RUN, "did not fail or warn"),
        ({"verdict": {"verdict": "fail", "nodes": ["n0"]}}, RUN, "one node"),
    ],
)
def test_the_isolation_runs_only_after_a_real_nccl_tests_run_that_failed_or_warned_on_several_nodes(changes, settings, why):
    assert why in isolation_stage.needed(dict(FAILED_FLEET, **changes), settings)


def test_a_warned_run_on_two_nodes_is_isolated():
    assert isolation_stage.needed(dict(FAILED_FLEET, verdict={"verdict": "warn", "nodes": ["n0", "n1"]}), RUN) == ""


class PairCluster(object):
    """Pair TrainJobs end Complete; a pair holding a node of SLOW prints the test fleet's far-below output."""

    def __init__(self, slow):
        self.slow, self.calls, self.pairs = set(slow), [], {}

    def apply(self, objects):
        self.calls.append("apply")
        for obj in objects:
            terms = obj["spec"]["runtimePatches"][-1]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
            nodes = terms["template"]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            self.pairs[obj["metadata"]["name"]] = (obj, nodes["nodeSelectorTerms"][0]["matchExpressions"][-1]["values"])

    def wait(self, names, timeout):
        self.calls.append("wait")
        out = {}
        for name in names:
            job, nodes = self.pairs[name]
            pods, logs = fakes.fleet_pods(name, [job], "far-below" if set(nodes) & self.slow else "good")
            for pod, node in zip(pods[1:], nodes):
                pod["spec"]["nodeName"] = node
            out[name] = {"outcome": "Complete", "reason": "JobsCompleted", "pods": pods, "logs": logs}
        return out

    def logs(self, name, waited):
        pods = waited["pods"]
        return collect(pods, dict((p["metadata"]["name"], (waited["logs"].get(p["metadata"]["name"], ""), None)) for p in pods), None, None)

    def delete(self, names):
        self.calls.append("delete")


def fleet_objects():
    variables = fakes.checked(burnin_nodes=4)
    return fakes.planner(variables)("fleet", 1, fakes.start(variables))["objects"]


def test_pairs_judged_by_the_verdict_on_nccl_tests_output_name_the_slow_node():
    cluster = PairCluster(["n2"])
    connected = []

    def connect(namespace, api_version):
        connected.append((namespace, api_version))
        return cluster

    out = isolation_stage.isolate(connect, FAILED_FLEET, fleet_objects(), budget={"max_jobs": 8, "max_minutes": 30, "timeout": 600})
    assert connected == [(fakes.NAMESPACE, "trainer.kubeflow.org/v1alpha1")]
    assert out["conclusion"]["outcome"] == "found" and out["record"]["isolation"]["culprits"] == ["n2"]
    assert out["record"]["node_verdicts"]["n2"]["verdict"] == "fail"
    # The slow node is slow with NVLink off too: its network (the finer round, on the planned TrainJob's own mpirun line).
    assert out["record"]["reason"] == "verdict fail: busbw low; isolation: bad node(s) n2; n2 fabric"
    assert out["changed"] is True and out["msg"].startswith("isolation found: ")
    (path,) = out["record"]["isolation"]["parts"][:1]
    assert path["level"] == "path" and path["conclusion"] == "fabric" and path["paths"][1]["verdict"] == "fail"
    network_job = cluster.pairs[path["paths"][1]["trainjob"]][0]
    words = " ".join(network_job["spec"]["trainer"]["command"] + network_job["spec"]["trainer"]["args"])
    assert "-x NCCL_P2P_DISABLE=1" in words and "-x NCCL_SHM_DISABLE=1" in words and words.count("NCCL_MNNVL_ENABLE") == 1


def test_each_round_is_told_as_it_ends_with_its_jobs_verdicts_and_busbw():
    cluster, told = PairCluster(["n2"]), []
    out = isolation_stage.isolate(
        lambda *a: cluster, FAILED_FLEET, fleet_objects(), budget={"max_jobs": 8, "max_minutes": 30, "timeout": 600}, progress=told.append
    )
    rounds = out["rounds"]
    assert len(told) == len(rounds) > 1 and all(line.startswith("isolation round %d: " % (n + 1)) for n, line in enumerate(told))
    # Round 1 holds every node once; a pair with n2 fails at the far-below output's busbw, one without it passes.
    assert told[0].startswith("isolation round 1: 2 job(s): n0+n1 pass ") and "; n2+n3 fail " in told[0] and " GB/s" in told[0]
    # The finer rounds name their probe: the slow node's network-only run.
    assert any("(paths network) fail" in line for line in told[2:]), told
    # Nobody listening: the same isolation, no line (each run's minutes are the wall clock's: 0.0 or 0.01).
    again = isolation_stage.isolate(lambda *a: PairCluster(["n2"]), FAILED_FLEET, fleet_objects(), budget={"max_jobs": 8, "max_minutes": 30, "timeout": 600})
    assert without_minutes(again["rounds"]) == without_minutes(rounds)


def without_minutes(rounds):
    return [dict(r, results=[dict((k, v) for k, v in result.items() if k != "minutes") for result in r.get("results") or []]) for r in rounds]


def test_check_mode_plans_the_first_round_without_a_client():
    out = isolation_stage.isolate(lambda *a: pytest.fail("no client in check mode"), FAILED_FLEET, fleet_objects(), check_mode=True)
    assert out["msg"] == "check mode: would run round 1, n0+n1, n2+n3" and out["record"] == {} and out["changed"] is False


def test_bad_objects_and_too_few_nodes():
    with pytest.raises(BurninError, match="one planned TrainJob, found 0"):
        isolation_stage.isolate(None, FAILED_FLEET, [])
    out = isolation_stage.isolate(None, dict(FAILED_FLEET, verdict={"verdict": "fail", "nodes": ["n0"]}), fleet_objects())
    assert out["skipped"] is True and out["record"] == {}


def test_a_stopped_isolation_keeps_its_rounds_and_the_cluster_words():
    failed = ClusterCallFailed("waiting for the pair TrainJobs", {"category": "Unreachable", "message": "it did not answer"})
    failed.partial = {"rounds": [{"round": 1}]}
    assert isolation_stage.failed_record(failed) == {
        "isolation": {"outcome": "error", "reason": "waiting for the pair TrainJobs: it did not answer", "rounds": [{"round": 1}]}
    }


def ran(record):
    def run():
        return {"record": dict(record, ran=True), "stop": False, "msg": "m", "lines": ["m"], "steps": [], "changed": True}

    return run


def test_a_stage_after_an_error_does_nothing_and_the_last_stage_names_the_failed_ones():
    errored = {"cluster": "c", "reason": "", "stages": [{"stage": "node", "verdict": "error", "reason": "timed out"}]}
    assert stopped_by(errored) == "node" and stopped_by({"stages": [{"stage": "node", "verdict": "fail"}]}) == ""
    skipped = in_order("fleet", ["node", "fleet", "isolation"], errored, lambda: pytest.fail("must not run"))
    assert skipped["stop"] is True and skipped["changed"] is False and "ran" not in skipped["record"]
    assert skipped["msg"] == "c: fleet stage: skipped, the node stage ended in error"
    # Only the last stage adds the failed stages to the reason (cluster_result.final_record), once.
    assert "stage" not in skipped["record"] or skipped["record"]["stage"] != "verdict"
    last = in_order("isolation", ["node", "fleet", "isolation"], errored, lambda: pytest.fail("must not run"))
    assert last["record"]["reason"] == "node stage error: timed out" and last["record"]["stage"] == "verdict"
    failed = {"cluster": "c", "reason": "", "stages": [{"stage": "dcgm", "verdict": "fail", "reason": "GPU 3"}]}
    out = in_order("dcgm", ["fleet", "dcgm"], failed, ran(failed))
    assert out["record"]["ran"] is True and out["record"]["reason"] == "dcgm stage fail: GPU 3"
    middle = in_order("fleet", ["fleet", "dcgm"], failed, ran(failed))
    assert middle["record"]["reason"] == "" and middle["changed"] is True


class SweepPairCluster(PairCluster):
    """PairCluster that also takes the sweep's runtime (applied before its pairs)."""

    def __init__(self, slow):
        super(SweepPairCluster, self).__init__(slow)
        self.applied = []

    def apply(self, objects):
        runtimes = [obj for obj in objects if obj.get("kind") != "TrainJob"]
        self.applied.extend("%s/%s" % (obj["kind"], obj["metadata"]["name"]) for obj in runtimes)
        if len(runtimes) < len(objects):
            super(SweepPairCluster, self).apply([obj for obj in objects if obj.get("kind") == "TrainJob"])


def sweep_plan(picked):
    variables = fakes.checked(burnin_nodes=2, burnin_sweep_nodes=picked)
    return fakes.planner(variables)("fleet", 1, fakes.start(variables))


SWEPT = {"cluster": "aws-a", "platform": "aws", "gpu_architecture": "h100", "outcome": "Complete", "reason": "", "node_findings": []}


@pytest.mark.parametrize("picked, why", [([], "0 node picked"), (["n0"], "1 node picked"), (["n0", "n1"], "")])
def test_the_sweep_runs_pairs_only_when_two_or_more_nodes_are_picked(picked, why):
    found = isolation_stage.sweep_pairs_needed(picked, RUN)
    assert found.startswith(why) and bool(found) == bool(why)
    assert "burnin_wait" in isolation_stage.sweep_pairs_needed(["n0", "n1"], dict(RUN, wait=False))


def test_two_picked_nodes_run_one_pair_pinned_to_them_under_the_sweeps_priority_class():
    # The isolation alone would not run this pair (a run of 2 nodes and no partner: it repeats the run); the sweep's
    # pairs follow no run.
    cluster = SweepPairCluster([])
    planned = sweep_plan(["n1", "n0"])
    out = isolation_stage.sweep_pairs(lambda namespace, api_version: cluster, SWEPT, planned, ["n1", "n0"], budget={"timeout": 600})
    assert [obj for obj in cluster.applied if obj.startswith("TrainingRuntime/")] and not [obj for obj in cluster.applied if obj.startswith("TrainJob/")]
    assert cluster.calls[-3:] == ["apply", "wait", "delete"]
    (name,) = list(cluster.pairs)
    job, nodes = cluster.pairs[name]
    assert nodes == ["n0", "n1"] and job["spec"]["trainer"]["numNodes"] == 2
    runtime = [obj for obj in planned["objects"] if obj["kind"] == "TrainingRuntime"][0]
    assert set(j["template"]["spec"]["template"]["spec"]["priorityClassName"] for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]) == {
        "gpufleet-burnin-sweep"
    }
    (stage,) = out["record"]["stages"]
    assert stage["stage"] == "isolation" and stage["verdict"] == "pass" and stage["attempts"][0]["trainjob"] == name
    assert out["record"]["isolation"]["outcome"] == "not_reproduced" and "n0+n1 pass" in stage["reason"]
    assert out["record"]["node_verdicts"]["n0"]["verdict"] == out["record"]["node_verdicts"]["n1"]["verdict"] == "pass"


def test_a_slow_pair_of_the_sweep_fails_its_stage_and_a_good_partner_names_the_node():
    cluster = SweepPairCluster(["n2"])
    picked = ["n0", "n1", "n2", "n3"]
    out = isolation_stage.sweep_pairs(lambda namespace, api_version: cluster, SWEPT, sweep_plan(picked), picked, budget={"timeout": 600})
    stage = [one for one in out["record"]["stages"] if one["stage"] == "isolation"][0]
    assert stage["verdict"] == "fail" and "n2" in stage["reason"]
    assert out["record"]["node_verdicts"]["n2"]["verdict"] == "fail" and out["record"]["node_verdicts"]["n0"]["verdict"] == "pass"
    # The pairs ran on the picked nodes only.
    assert set(node for pair in cluster.pairs.values() for node in pair[1]) <= set(picked)


def test_a_slow_pair_of_two_picked_nodes_fails_the_stage_without_blaming_either():
    cluster = SweepPairCluster(["n1"])
    out = isolation_stage.sweep_pairs(lambda namespace, api_version: cluster, SWEPT, sweep_plan(["n0", "n1"]), ["n0", "n1"], budget={"timeout": 600})
    (stage,) = out["record"]["stages"]
    assert stage["verdict"] == "fail" and out["record"]["isolation"]["outcome"] == "undetermined"
    assert "n0" not in (out["record"].get("node_verdicts") or {}) and "n1" not in (out["record"].get("node_verdicts") or {})


# What the mutation run of burnin/isolation_stage.py (issue 47) found untested: the default budget, the transport of
# the fleet's run, a fleet verdict naming no node, the runtime's own node affinity in each pair, the message's parts.


def test_the_default_budget_is_the_roles():
    import yaml

    with open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "burnin", "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    assert isolation_stage.DEFAULT_BUDGET == {
        "max_jobs": defaults["burnin_isolation_max_jobs"],
        "max_minutes": defaults["burnin_isolation_max_minutes"],
        "timeout": defaults["burnin_timeout"],
    }


def test_the_runs_transport_is_the_one_seen_else_the_one_expected():
    def transport(**proof):
        return isolation_stage.run_transport({"verdict": {"transport": proof}})

    assert transport(seen="efa", expected="ib") == "efa"
    for seen in (None, "unknown", "mixed"):
        assert transport(seen=seen, expected="ib") == "ib", seen
    assert transport() is None and isolation_stage.run_transport(None) is None


def test_a_fleet_verdict_that_names_no_node_is_not_isolated():
    assert isolation_stage.needed(dict(FAILED_FLEET, verdict={"verdict": "fail", "nodes": []}), RUN) == "the fleet stage ran on one node"
    assert isolation_stage.needed(dict(FAILED_FLEET, verdict={"verdict": "fail"}), RUN) == "the fleet stage ran on one node"


def test_each_pair_keeps_the_runtimes_own_node_affinity_and_the_message_its_parts():
    objects = fleet_objects()
    (runtime,) = [obj for obj in objects if obj["kind"] == "TrainingRuntime"]
    term = {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        if job["name"] == "node":
            pod_spec = job["template"]["spec"]["template"]["spec"]
            pod_spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}}}
    cluster = PairCluster(["n2"])
    out = isolation_stage.isolate(lambda *a: cluster, FAILED_FLEET, objects, budget={"max_jobs": 8, "max_minutes": 30, "timeout": 600})
    for job, nodes in cluster.pairs.values():
        replicated = job["spec"]["runtimePatches"][-1]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
        terms = replicated["template"]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"][0]["matchExpressions"][0] == term, nodes
    parts = out["record"]["isolation"]["parts"]
    assert parts and out["msg"] == "isolation found: %s%s" % (out["conclusion"]["reason"], "".join("; " + part["reason"] for part in parts))
    assert "; n2: slow" in out["msg"] and "%s" not in out["msg"]


def test_a_pairs_verdict_names_the_fleets_workload():
    name = "nccl-burnin-r1-iso-1-0"
    (job,) = [obj for obj in fleet_objects() if obj["kind"] == "TrainJob"]
    pods, logs = fakes.fleet_pods(name, [job], "good")
    collected = collect(pods, dict((pod["metadata"]["name"], (logs.get(pod["metadata"]["name"], ""), None)) for pod in pods), None, None)
    verdict = isolation_stage.pair_judge(FAILED_FLEET, dict(isolation_stage.DEFAULT_JUDGING))(collected, {"outcome": "Complete", "reason": "JobsCompleted"})
    assert verdict["workload"] == "nccl-all-reduce" and verdict["verdict"] == "pass"


def good_pair_logs():
    (job,) = [obj for obj in fleet_objects() if obj["kind"] == "TrainJob"]
    pods, logs = fakes.fleet_pods("nccl-burnin-r1-iso-1-0", [job], "good")
    return collect(pods, dict((pod["metadata"]["name"], (logs.get(pod["metadata"]["name"], ""), None)) for pod in pods), None, None)


def test_a_pair_is_judged_as_two_nodes_of_the_fleets_instance_type_by_default():
    fleet = dict(FAILED_FLEET, instance_type="p5en.48xlarge")
    verdict = isolation_stage.pair_judge(fleet, dict(isolation_stage.DEFAULT_JUDGING))(good_pair_logs(), {"outcome": "Complete", "reason": "JobsCompleted"})
    assert "as expected for aws/h100 (p5en.48xlarge) on 2 host(s)" in verdict["reason"]
    # two nodes: the multi-node record, not the single node's
    assert "meets aws-h100-all-reduce-peak (" in verdict["reason"] and "single-node" not in verdict["reason"]
    # and its verdict records the two nodes it was asked for
    assert verdict["facts"]["nodes"] == 2 and verdict["facts"]["mnnvl"] is False


def test_a_rails_probe_named_at_run_time_is_judged_as_one_nic():
    judge_probe = isolation_stage.probe_judge(FAILED_FLEET, dict(isolation_stage.DEFAULT_JUDGING))
    assert judge_probe(2, {"kind": "".join(["ra", "ils"]), "of": 8}) is not None
    assert judge_probe(2, {"kind": "links"}) is None
    # a probe without a kind is judged as a pair
    assert judge_probe(2, {}) is None


def test_a_run_of_two_nodes_that_ran_together_needs_no_client_and_no_job():
    two = dict(FAILED_FLEET, verdict={"verdict": "fail", "nodes": ["n0", "n1"]})
    out = isolation_stage.isolate(lambda *a: pytest.fail("no client: the run itself was the pair"), two, fleet_objects())
    assert out["rounds"] == [] and out["msg"].startswith("isolation undetermined: a run of 2 node(s) and no known-good partner")


def test_objects_read_back_from_json_are_isolated():
    objects = json.loads(json.dumps(fleet_objects()))
    out = isolation_stage.isolate(lambda *a: pytest.fail("no client in check mode"), FAILED_FLEET, objects, check_mode=True)
    assert out["msg"] == "check mode: would run round 1, n0+n1, n2+n3"


def test_only_an_mnnvl_check_of_the_fleet_verdict_stops_the_isolation():
    checks = [
        {"name": "job", "verdict": "pass"},
        {"name": "avg", "verdict": "fail"},
        {"name": "peak", "verdict": "fail"},
        {"name": "transport", "verdict": "pass"},
    ]
    assert isolation_stage.needed(dict(FAILED_FLEET, verdict=dict(FAILED_FLEET["verdict"], checks=checks)), RUN) == ""
    mnnvl = checks + [{"name": "mnnvl", "verdict": "error"}]
    assert isolation_stage.needed(dict(FAILED_FLEET, verdict=dict(FAILED_FLEET["verdict"], checks=mnnvl)), RUN).startswith("MNNVL was not ready")


def test_too_few_nodes_change_nothing():
    out = isolation_stage.isolate(None, dict(FAILED_FLEET, verdict={"verdict": "fail", "nodes": ["n0"]}), fleet_objects())
    assert out["changed"] is False and out["skipped"] is True and out["msg"] == "fewer than 2 nodes in the run: nothing to isolate"


def test_a_pair_is_judged_with_the_fleets_collective():
    fleet = dict(FAILED_FLEET, collective="all_gather")
    verdict = isolation_stage.pair_judge(fleet, dict(isolation_stage.DEFAULT_JUDGING))(good_pair_logs(), {"outcome": "Complete", "reason": "JobsCompleted"})
    assert verdict["collective"] == "all_gather"


def test_the_sweep_applies_every_object_but_the_trainjob_and_records_the_pairs_outcome():
    cluster = SweepPairCluster([])
    planned = sweep_plan(["n0", "n1"])
    # a ConfigMap sorts before TrainJob, the TrainingRuntime after it: both are applied before the pairs
    planned["objects"] = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": fakes.NAMESPACE}}] + planned["objects"]
    out = isolation_stage.sweep_pairs(lambda namespace, api_version: cluster, SWEPT, planned, ["n0", "n1"], budget={"timeout": 600})
    assert cluster.applied[0] == "ConfigMap/extra" and [name for name in cluster.applied if name.startswith("TrainingRuntime/")]
    (stage,) = out["record"]["stages"]
    assert stage["attempts"][0]["outcome"] == "Complete"


def test_the_sweep_in_check_mode_plans_the_first_round_and_records_nothing():
    out = isolation_stage.sweep_pairs(lambda *a: pytest.fail("no client in check mode"), SWEPT, sweep_plan(["n0", "n1"]), ["n0", "n1"], check_mode=True)
    assert out["msg"] == "check mode: would run round 1, n0+n1" and out["record"] == {} and out["changed"] is False


def test_the_sweep_connects_to_the_trainjobs_namespace_and_api_version_whatever_the_objects_order():
    cluster, connected = SweepPairCluster([]), []

    def connect(namespace, api_version):
        connected.append((namespace, api_version))
        return cluster

    planned = json.loads(json.dumps(sweep_plan(["n0", "n1"])))
    planned["objects"] = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": "other"}}] + planned["objects"]
    isolation_stage.sweep_pairs(connect, SWEPT, planned, ["n0", "n1"], budget={"timeout": 600})
    assert connected == [(fakes.NAMESPACE, "trainer.kubeflow.org/v1alpha1")]


def test_a_pair_is_judged_by_the_roles_thresholds_when_it_has_some():
    # burnin_thresholds reach the pairs' verdicts: 10000 GB/s fails the good pair that the catalogue passes.
    waited = {"outcome": "Complete", "reason": "JobsCompleted"}
    judging = dict(isolation_stage.DEFAULT_JUDGING, overrides=[{"collective": "all_reduce", "pass": 10000.0, "warn": 9000.0}])
    verdict = isolation_stage.pair_judge(FAILED_FLEET, judging)(good_pair_logs(), waited)
    assert verdict["verdict"] == "fail" and "is below inventory-*-*-all_reduce-peak (>= 10000 GB/s, warn >= 9000)" in verdict["reason"]
    assert isolation_stage.pair_judge(FAILED_FLEET, dict(judging, overrides=[]))(good_pair_logs(), waited)["verdict"] == "pass"
