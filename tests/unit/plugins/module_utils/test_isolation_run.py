# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import cluster_result, isolation_run
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import cleanup
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

TRAINJOB = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {
        "name": "nccl-burnin-run1",
        "namespace": "burnin",
        "labels": {"app.kubernetes.io/managed-by": "gpufleet.burnin", "gpufleet.burnin/entry": "nccl-burnin", "gpufleet.burnin/run-id": "run1"},
    },
    "spec": {
        "runtimeRef": {"name": "nccl-burnin-runtime", "kind": "TrainingRuntime"},
        "trainer": {"numNodes": 4, "numProcPerNode": 8, "command": ["mpirun"]},
        "runtimePatches": [{"manager": "gpufleet.burnin/image-pull-secrets", "trainingRuntimeSpec": {}}],
    },
}
RUNTIME = {
    "kind": "TrainingRuntime",
    "spec": {
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "node",
                        "template": {
                            "spec": {
                                "template": {
                                    "spec": {
                                        "affinity": {
                                            "nodeAffinity": {
                                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                                    "nodeSelectorTerms": [
                                                        {
                                                            "matchExpressions": [
                                                                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}
                                                            ]
                                                        }
                                                    ]
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        },
                    },
                    {"name": "launcher"},
                ]
            }
        }
    },
}
NODES = ["n0", "n1", "n2", "n3"]


def node_affinity(job):
    (patch,) = [p for p in job["spec"]["runtimePatches"] if p["manager"] == isolation_run.PATCH_MANAGER]
    (rjob,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert rjob["name"] == "node"
    return rjob["template"]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]


def test_a_pair_job_is_the_planned_one_on_two_nodes_pinned_by_a_runtime_patch():
    job = isolation_run.pair_trainjob(TRAINJOB, ["n2", "n0"], 2, 1)
    assert job["metadata"]["name"] == "nccl-burnin-run1-iso-2-1"
    assert job["spec"]["trainer"] == {"numNodes": 2, "numProcPerNode": 8, "command": ["mpirun"]}
    assert job["spec"]["runtimeRef"] == TRAINJOB["spec"]["runtimeRef"]
    assert [p["manager"] for p in job["spec"]["runtimePatches"]] == ["gpufleet.burnin/image-pull-secrets", "gpufleet.burnin/isolation"]
    assert node_affinity(job) == {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n0", "n2"]}]}]}
    assert TRAINJOB["spec"]["trainer"]["numNodes"] == 4  # the plan is not changed
    # The run's labels: the cleanup entry point removes pair jobs an interrupted play left behind.
    doomed, kept = cleanup.split_trainjobs([job, TRAINJOB], "run1", False)
    assert len(doomed) == 2 and kept == []


def test_the_runtimes_own_required_node_terms_are_kept():
    terms = node_affinity(isolation_run.pair_trainjob(TRAINJOB, ["n0", "n1"], 1, 0, runtime=RUNTIME))["nodeSelectorTerms"]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]},
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n0", "n1"]},
            ]
        }
    ]


def test_long_names_stay_valid_and_distinct():
    long_job = dict(TRAINJOB, metadata=dict(TRAINJOB["metadata"], name="a" * 40 + "-run-20261201t101500"))
    names = set(isolation_run.pair_trainjob(long_job, ["n0", "n1"], 1, i)["metadata"]["name"] for i in range(3))
    assert len(names) == 3 and all(len(name) <= isolation_run.NAME_MAX and name.endswith("-iso-1-%s" % name[-1]) for name in names)
    with pytest.raises(ConfigError, match="trainjob"):
        isolation_run.pair_trainjob({"kind": "Pod"}, ["n0", "n1"], 1, 0)


def pod(node, role="node"):
    return {"metadata": {"labels": {"jobset.sigs.k8s.io/replicatedjob-name": role}}, "spec": {"nodeName": node}}


def test_a_pair_whose_pods_ran_elsewhere_is_an_error_not_a_result():
    verdict = {"verdict": "pass", "reason": "ok", "metrics": {"peak_busbw": 440.0, "largest_size": 1024}}
    good = isolation_run.pair_result(["n0", "n1"], "j", 1, {"outcome": "Complete", "pods": [pod("n0"), pod("n1"), pod("sys", "launcher")]}, verdict)
    assert good["verdict"] == "pass" and good["busbw"] == 440.0 and good["size"] == 1024
    stray = isolation_run.pair_result(["n0", "n1"], "j", 1, {"outcome": "Complete", "pods": [pod("n0"), pod("n3")]}, verdict)
    assert stray["verdict"] == "error" and "ran on n0, n3" in stray["reason"]


class FakeCluster(object):
    """Pairs with a node of BAD are slow; records every call."""

    def __init__(self, bad):
        self.bad, self.calls, self.pairs = set(bad), [], {}

    def apply(self, objects):
        self.calls.append(("apply", [o["metadata"]["name"] for o in objects]))
        for obj in objects:
            terms = node_affinity(obj)["nodeSelectorTerms"][0]["matchExpressions"]
            self.pairs[obj["metadata"]["name"]] = terms[-1]["values"]

    def wait(self, names, timeout):
        self.calls.append(("wait", list(names), timeout))
        return dict((name, {"outcome": "Complete", "reason": "", "pods": [pod(n) for n in self.pairs[name]], "logs": {}}) for name in names)

    def logs(self, name, waited):
        return {"results": [], "pods": waited["pods"], "name": name}

    def delete(self, names):
        self.calls.append(("delete", list(names)))


def judge_for(cluster):
    def judge(logs, waited):
        slow = set(cluster.pairs[logs["name"]]) & cluster.bad
        return {"verdict": "fail" if slow else "pass", "reason": "r", "metrics": {"peak_busbw": 110.0 if slow else 440.0, "largest_size": 8}}

    return judge


def test_rounds_run_apply_wait_delete_and_conclude_with_findings():
    cluster = FakeCluster(["n2"])
    outcome = isolation_run.run_isolation(cluster, TRAINJOB, NODES, judge_for(cluster), max_jobs=8, max_minutes=30)
    assert outcome["conclusion"]["outcome"] == "found"
    assert [c["node"] for c in outcome["conclusion"]["culprits"]] == ["n2"]
    assert len(outcome["results"]) == 4 < 6
    kinds = [call[0] for call in cluster.calls]
    assert kinds == ["apply", "wait", "delete"] * len(outcome["rounds"])
    assert cluster.calls[0][1] == ["nccl-burnin-run1-iso-1-0", "nccl-burnin-run1-iso-1-1"]
    assert all(call[2] <= 30 * 60 for call in cluster.calls if call[0] == "wait")
    failed = [f for f in outcome["findings"] if f["verdict"] == "fail"]
    assert [f["node"] for f in failed] == ["n2"] and failed[0]["evidence"]["busbw"] == 110.0
    record = cluster_result.isolation_record({"reason": "verdict fail: busbw low", "node_findings": []}, outcome)
    assert record["isolation"]["culprits"] == ["n2"] and record["isolation"]["all_pairs"] == 6 and record["isolation"]["jobs"] == 4
    assert record["node_verdicts"]["n2"]["verdict"] == "fail"
    assert record["reason"] == "verdict fail: busbw low; isolation: bad node(s) n2"


def test_check_mode_plans_the_first_round_and_touches_nothing():
    outcome = isolation_run.run_isolation(None, TRAINJOB, NODES, None, check_mode=True)
    assert outcome["rounds"] == [
        {
            "round": 1,
            "pairs": [["n0", "n1"], ["n2", "n3"]],
            "trainjobs": ["nccl-burnin-run1-iso-1-0", "nccl-burnin-run1-iso-1-1"],
            "results": [],
            "planned": True,
        }
    ]
    assert outcome["conclusion"] is None


def test_a_cluster_failure_carries_what_was_found():
    class Broken(FakeCluster):
        def wait(self, names, timeout):
            raise RuntimeError("gone")

    with pytest.raises(RuntimeError) as info:
        isolation_run.run_isolation(Broken([]), TRAINJOB, NODES, None)
    assert info.value.partial["rounds"][0]["pairs"] == [["n0", "n1"], ["n2", "n3"]]


def test_the_time_budget_bounds_each_round_and_ends_the_isolation():
    ticks = iter([0, 0, 0, 29 * 60, 29 * 60, 31 * 60, 31 * 60])
    cluster = FakeCluster(["n2"])
    outcome = isolation_run.run_isolation(cluster, TRAINJOB, NODES, judge_for(cluster), max_minutes=30, clock=lambda: next(ticks))
    assert outcome["conclusion"]["outcome"] == "budget_exhausted"
    assert [call[2] for call in cluster.calls if call[0] == "wait"] == [1800, 60]


def test_known_good_partners_are_passed_nodes_outside_the_run_and_run_nodes_come_from_the_verdict():
    result = {
        "verdict": {"nodes": ["n1", "n0"]},
        "node_verdicts": {"n0": {"verdict": "pass"}, "spare": {"verdict": "pass"}, "other": {"verdict": "fail"}},
    }
    assert isolation_run.run_nodes(result) == ["n0", "n1"]
    assert isolation_run.known_good_nodes(result, ["n0", "n1"]) == ["spare"]


def test_the_budget_options_are_checked_as_the_role_takes_them():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

    checked = check_role_vars({"burnin_isolation_max_jobs": "3", "burnin_isolation_max_minutes": 45})
    assert checked["burnin_isolation_max_jobs"] == 3 and checked["burnin_isolation_max_minutes"] == 45
    with pytest.raises(ConfigError, match="burnin_isolation_max_jobs.*from 1 to 1000"):
        check_role_vars({"burnin_isolation_max_jobs": 0})
    with pytest.raises(ConfigError, match="burnin_isolation_max_minutes.*from 1 to 1440"):
        check_role_vars({"burnin_isolation_max_minutes": "two"})


def test_a_wait_that_could_not_read_the_cluster_ends_the_isolation_with_what_was_found():
    class Unreadable(FakeCluster):
        def wait(self, names, timeout):
            waited = FakeCluster.wait(self, names, timeout)
            waited[names[-1]] = {"outcome": "Unreachable", "reason": "r", "error": {"category": "Unreachable", "message": "it did not answer"}}
            return waited

    cluster = Unreadable(["n2"])
    with pytest.raises(ClusterCallFailed) as failed:
        isolation_run.run_isolation(cluster, TRAINJOB, NODES, judge_for(cluster), max_jobs=8, max_minutes=30)
    assert failed.value.what == "waiting for the pair TrainJobs" and failed.value.error["category"] == "Unreachable"
    assert len(failed.value.partial["rounds"]) == 1 and failed.value.partial["results"] == []
    assert [call[0] for call in cluster.calls] == ["apply", "wait"]


# ------------------------------------------------------------------------------------------------ mutation (issue 47, fifth round)


@pytest.mark.parametrize(
    "trainer, line",
    [
        # mpirun first: the variables right after it, the rest of the line once
        ({"command": ["mpirun", "-np", "16", "prog"]}, ["mpirun", "-x", "NEW=1", "-x", "NCCL_X=5", "-np", "16", "prog"]),
        # split between command and args; a -x the line has is given the new value in place
        (
            {"command": ["/usr/local/mpi/bin/mpirun"], "args": ["-np", "16", "-x", "NCCL_X=0", "prog"]},
            ["/usr/local/mpi/bin/mpirun", "-x", "NEW=1", "-np", "16", "-x", "NCCL_X=5", "prog"],
        ),
        # a -x pair that ends the line is read too; a -x without a value is left alone
        ({"command": ["env", "A=1", "mpirun", "prog", "-x", "NCCL_X=0"]}, ["env", "A=1", "mpirun", "-x", "NEW=1", "prog", "-x", "NCCL_X=5"]),
        ({"command": ["mpirun", "prog", "-x"]}, ["mpirun", "-x", "NEW=1", "-x", "NCCL_X=5", "prog", "-x"]),
        # a -x right after an mpirun that is not the first word; a NAME=value that is no -x pair is the program's
        ({"command": ["env", "A=1", "mpirun", "-x", "NCCL_X=0", "prog"]}, ["env", "A=1", "mpirun", "-x", "NEW=1", "-x", "NCCL_X=5", "prog"]),
        ({"command": ["mpirun", "prog", "NCCL_X=0"]}, ["mpirun", "-x", "NEW=1", "-x", "NCCL_X=5", "prog", "NCCL_X=0"]),
        # a wrapper's own -x before mpirun, and another option sorting before -x, are not mpirun's -x
        ({"command": ["wrapper", "-x", "NCCL_X=0", "mpirun", "prog"]}, ["wrapper", "-x", "NCCL_X=0", "mpirun", "-x", "NEW=1", "-x", "NCCL_X=5", "prog"]),
        ({"command": ["mpirun", "--env", "NCCL_X=0", "prog"]}, ["mpirun", "-x", "NEW=1", "-x", "NCCL_X=5", "--env", "NCCL_X=0", "prog"]),
        # one arg, not under /bin/bash -c: the plain line
        ({"command": ["mpirun"], "args": ["all_reduce_perf"]}, ["mpirun", "-x", "NEW=1", "-x", "NCCL_X=5", "all_reduce_perf"]),
    ],
)
def test_the_probe_env_rewrites_an_mpirun_line_in_its_place(trainer, line):
    got = isolation_run.with_env(trainer, [{"name": "NEW", "value": 1}, {"name": "NCCL_X", "value": "5"}])
    # the command keeps its number of words, the rest of the line is in args
    assert got["command"] + got["args"] == line and len(got["command"]) == len(trainer["command"])
    assert isolation_run.with_env(trainer, []) == trainer


def test_the_pin_replaces_only_the_runtimes_hostname_expressions_whatever_their_keys_sort():
    own = [
        {"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": ["a3"]},  # sorts before the hostname key
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["old"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},  # before it too, by one word
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z"]},  # after it
    ]
    runtime = copy.deepcopy(RUNTIME)
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] = [{"matchExpressions": own}]
    (term,) = node_affinity(isolation_run.pair_trainjob(TRAINJOB, ["n1", "n0"], 1, 0, runtime=runtime))["nodeSelectorTerms"]
    assert term["matchExpressions"] == [own[0], own[2], own[3], {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n0", "n1"]}]


@pytest.mark.parametrize("max_minutes, waits", [(None, [3600, 3600]), (120, [3600, 3600]), (30, [1800, 1800])])
def test_a_round_waits_an_hour_at_most_by_default(max_minutes, waits):
    cluster = FakeCluster(["n2"])
    outcome = isolation_run.run_isolation(cluster, TRAINJOB, NODES, judge_for(cluster), max_minutes=max_minutes, clock=lambda: 0)
    assert [call[2] for call in cluster.calls if call[0] == "wait"][:2] == waits and len(outcome["rounds"]) >= 2


@pytest.mark.parametrize("second_round_at, more", [(1799, True), (1800, False)])
def test_the_time_budget_at_its_bound_and_a_second_before(second_round_at, more):
    # The clock: the start, then each later look at it (the first round's timeout, then the next step's elapsed time).
    ticks = iter([0, 0, 0, second_round_at] + [second_round_at] * 20)
    cluster = FakeCluster(["n2"])
    outcome = isolation_run.run_isolation(cluster, TRAINJOB, NODES, judge_for(cluster), max_minutes=30, clock=lambda: next(ticks))
    assert (len(outcome["rounds"]) > 1) == more
    assert (outcome["conclusion"]["outcome"] == "budget_exhausted") == (not more)


def test_the_rounds_are_numbered_in_order_and_name_their_trainjobs():
    cluster = FakeCluster(["n2"])
    outcome = isolation_run.run_isolation(cluster, TRAINJOB, NODES, judge_for(cluster), max_jobs=8, max_minutes=30)
    assert len(outcome["rounds"]) >= 3
    for number, entry in enumerate(outcome["rounds"], 1):
        assert entry["round"] == number
        assert all(name.startswith("nccl-burnin-run1-iso-%d-" % number) for name in entry["trainjobs"])
        assert all(result["round"] == number for result in entry["results"])


def test_a_cluster_failure_carries_the_minutes_spent():
    class Broken(FakeCluster):
        def wait(self, names, timeout):
            raise RuntimeError("gone")

    ticks = iter([1000, 1000, 1000, 1610, 1610, 1610])  # a clock that does not start at 0
    with pytest.raises(RuntimeError) as info:
        isolation_run.run_isolation(Broken([]), TRAINJOB, NODES, None, clock=lambda: next(ticks))
    assert info.value.partial["minutes"] == 10.17


def test_a_planned_trainjob_read_back_from_json_is_a_trainjob():
    # The plan reaches the isolation as JSON (Ansible's facts): its kind is an equal string, not this module's literal.
    job = isolation_run.pair_trainjob(json.loads(json.dumps(TRAINJOB)), ["n0", "n1"], 1, 0)
    assert job["kind"] == "TrainJob" and job["metadata"]["name"] == "nccl-burnin-run1-iso-1-0"
    with pytest.raises(ConfigError, match="must be the planned TrainJob"):
        isolation_run.pair_trainjob(json.loads(json.dumps(dict(TRAINJOB, kind="TrainingRuntime"))), ["n0", "n1"], 1, 0)


@pytest.mark.parametrize("lines", [["exec mpirun -np 2 prog"], ["set -e", "exec mpirun -np 2 prog"], ["set -e", "export A=1", "exec mpirun -np 2 prog"]])
def test_the_probe_env_reaches_the_exec_line_of_a_bash_script_of_any_length(lines):
    trainer = {"command": ["/bin/bash", "-c"], "args": ["\n".join(lines)]}
    got = isolation_run.with_env(trainer, [{"name": "NEW", "value": 1}])
    assert got["command"] == ["/bin/bash", "-c"]
    assert got["args"] == ["\n".join(lines[:-1] + ["exec mpirun -x NEW=1 -np 2 prog"])]


@pytest.mark.parametrize("logs_pods, waited_on, verdict", [(None, ["n0", "n1"], "pass"), (None, ["n0", "n9"], "error"), (["n0", "n9"], ["n0", "n1"], "error")])
def test_a_pairs_pods_are_the_logs_else_the_waits(logs_pods, waited_on, verdict):
    class Cluster(FakeCluster):
        def wait(self, names, timeout):
            waited = FakeCluster.wait(self, names, timeout)
            return dict((name, dict(entry, pods=[pod(node) for node in waited_on])) for name, entry in waited.items())

        def logs(self, name, waited):
            return {"results": [], "name": name, "pods": [pod(node) for node in logs_pods] if logs_pods else None}

    cluster = Cluster([])
    outcome = isolation_run.run_isolation(cluster, TRAINJOB, NODES, judge_for(cluster), max_jobs=2)
    assert outcome["rounds"][0]["results"][0]["verdict"] == verdict


def test_by_default_the_run_ran_its_nodes_together_so_a_pair_of_two_would_only_repeat_it():
    cluster = FakeCluster(["n1"])
    outcome = isolation_run.run_isolation(cluster, TRAINJOB, ["n0", "n1"], judge_for(cluster))
    assert outcome["conclusion"]["outcome"] == "undetermined" and outcome["rounds"] == [] and cluster.calls == []
    apart = isolation_run.run_isolation(cluster, TRAINJOB, ["n0", "n1"], judge_for(cluster), ran_together=False)
    assert len(apart["rounds"]) == 1 and apart["rounds"][0]["pairs"] == [["n0", "n1"]]


def test_the_pin_keeps_the_node_jobs_own_terms_not_another_jobs_sorting_after_it():
    def job(name, key):
        terms = {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "Exists"}]}]}
        return {
            "name": name,
            "template": {"spec": {"template": {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}}}}}},
        }

    runtime = {
        "spec": {"template": {"spec": {"replicatedJobs": [job("launcher", "example.com/l"), job("workers", "example.com/w"), job("node", "example.com/n")]}}}
    }
    (term,) = node_affinity(isolation_run.pair_trainjob(TRAINJOB, ["n0", "n1"], 1, 0, runtime=runtime))["nodeSelectorTerms"]
    assert [expr["key"] for expr in term["matchExpressions"]] == ["example.com/n", "kubernetes.io/hostname"]


def test_by_default_the_isolation_has_30_minutes():
    cluster = FakeCluster(["n2"])
    isolation_run.run_isolation(cluster, TRAINJOB, NODES, judge_for(cluster), clock=lambda: 0)
    assert [call[2] for call in cluster.calls if call[0] == "wait"][0] == 1800


def test_only_a_passed_node_outside_the_run_is_a_known_good_partner():
    # pass sorts between error, fail and warn: each of them is no partner
    verdicts = dict((node, {"verdict": verdict}) for node, verdict in (("e", "error"), ("f", "fail"), ("p", "pass"), ("w", "warn"), ("n0", "pass")))
    assert isolation_run.known_good_nodes({"node_verdicts": verdicts}, ["n0", "n1"]) == ["p"]


def test_a_pair_of_a_trainjob_read_back_from_json_holds_one_isolation_patch():
    # a pair job made again from one read back (its earlier isolation patch's manager an equal string, not this module's)
    earlier = isolation_run.pair_trainjob(TRAINJOB, ["n0", "n1"], 1, 0)
    again = isolation_run.pair_trainjob(json.loads(json.dumps(earlier)), ["n2", "n3"], 2, 0)
    assert [p["manager"] for p in again["spec"]["runtimePatches"]] == ["gpufleet.burnin/image-pull-secrets", "gpufleet.burnin/isolation"]
    assert node_affinity(again)["nodeSelectorTerms"][0]["matchExpressions"][-1]["values"] == ["n2", "n3"]


def test_a_pairs_pods_read_back_from_json_are_checked_for_strays():
    verdict = {"verdict": "pass", "reason": "ok", "metrics": {"peak_busbw": 440.0, "largest_size": 1024}}
    pods = json.loads(json.dumps([pod("n0"), pod("n3")]))
    assert isolation_run.pair_result(["n0", "n1"], "j", 1, {"outcome": "Complete", "pods": pods}, verdict)["verdict"] == "error"


@pytest.mark.parametrize("kind", ["ConfigMap", "TrainingRuntime"])  # sorting before and after TrainJob
def test_only_a_trainjob_makes_a_pair_job(kind):
    with pytest.raises(ConfigError, match="must be the planned TrainJob"):
        isolation_run.pair_trainjob(dict(TRAINJOB, kind=kind), ["n0", "n1"], 1, 0)


def test_check_mode_spends_no_minutes_and_finds_nothing():
    outcome = isolation_run.run_isolation(None, TRAINJOB, NODES, None, check_mode=True)
    assert (outcome["minutes"], outcome["results"], outcome["findings"], outcome["nodes"]) == (0.0, [], [], NODES)
    assert [job["metadata"]["name"] for job in outcome["objects"]] == ["nccl-burnin-run1-iso-1-0", "nccl-burnin-run1-iso-1-1"]


def test_a_bash_line_without_a_script_runs_no_mpirun():
    with pytest.raises(ConfigError, match="runs no mpirun"):
        isolation_run.with_env({"command": ["/bin/bash", "-c"], "args": []}, [{"name": "NEW", "value": 1}])


# --- issue 47, seventh round: decided (docs/mutation.md), which bash -c trainer has its exec line rewritten ---------------
@pytest.mark.parametrize(
    "command",
    [
        ["/bin/bash", "-c"],  # plan.py wrap_pre_command's shape
        ["/bin/bash", "-c", "-e"],  # bash options before the script: bash still reads the script from the first arg
        ["/bin/bash", "-c", "-o", "pipefail"],
    ],
)
def test_a_bash_c_trainer_with_one_arg_has_the_exec_line_of_that_script_rewritten(command):
    trainer = {"command": command, "args": ["set -e\nexec mpirun -np 2 prog"]}
    got = isolation_run.with_env(trainer, [{"name": "NEW", "value": 1}])
    assert got == {"command": command, "args": ["set -e\nexec mpirun -x NEW=1 -np 2 prog"]}


def test_a_bash_c_trainer_with_more_args_is_read_as_a_plain_command_line():
    # bash's $0 and positional arguments after the script: the `exec "$@"` idiom runs mpirun from the positional
    # arguments, where the plain line's mpirun word is found; the script's own exec line names no mpirun
    trainer = {"command": ["/bin/bash", "-c"], "args": ['exec "$@"', "bash", "mpirun", "-np", "2", "prog"]}
    got = isolation_run.with_env(trainer, [{"name": "NEW", "value": 1}])
    assert got == {"command": ["/bin/bash", "-c"], "args": ['exec "$@"', "bash", "mpirun", "-x", "NEW=1", "-np", "2", "prog"]}
    # a script of an mpirun exec line followed by $0: still the plain line, which holds no mpirun word
    with pytest.raises(ConfigError, match="runs no mpirun"):
        isolation_run.with_env({"command": ["/bin/bash", "-c"], "args": ["exec mpirun -np 2 prog", "bash"]}, [{"name": "NEW", "value": 1}])


class ClockedCluster(FakeCluster):
    """A FakeCluster whose clock (``now``, from START) moves to START + AT after its WAITS-th wait."""

    def __init__(self, bad, at, waits, start=0):
        FakeCluster.__init__(self, bad)
        self.now, self.at, self.waits = start, start + at, waits

    def wait(self, names, timeout):
        out = FakeCluster.wait(self, names, timeout)
        if sum(1 for call in self.calls if call[0] == "wait") == self.waits:
            self.now = self.at
        return out


@pytest.mark.parametrize("start", [0, 1000])
@pytest.mark.parametrize("at, finer_wait", [(1799, 1), (1799.5, 1), (1800, None)])
def test_the_finer_rounds_keep_to_the_budget_at_its_bound_and_wait_a_second_at_least(start, at, finer_wait):
    # n2 is found by three rounds of pairs; the clock then reads AT seconds after the start (a clock not starting at
    # 0: the time spent is the clock's difference): under 30 minutes the finer (paths) round runs, waiting what is
    # left, a second at least; at 30 minutes it does not run and its probe is pending
    cluster = ClockedCluster(["n2"], at, 3, start)
    judge = judge_for(cluster)
    outcome = isolation_run.run_isolation(
        cluster, TRAINJOB, NODES, judge, max_jobs=8, max_minutes=30, clock=lambda: cluster.now, parts={"judge_for": lambda size: judge}
    )
    waits = [call[2] for call in cluster.calls if call[0] == "wait"]
    assert outcome["conclusion"]["outcome"] == "found" and [c["node"] for c in outcome["conclusion"]["culprits"]] == ["n2"]
    if finer_wait is None:
        assert waits == [1800, 1800, 1800] and outcome["part_results"] == []
        assert [(probe["kind"], probe["node"]) for probe in outcome["pending"]] == [("paths", "n2")]
    else:
        assert waits == [1800, 1800, 1800, finer_wait] and outcome["rounds"][3]["probes"][0]["node"] == "n2"


def test_the_isolation_patch_replaces_only_its_own_whatever_the_other_managers_sort():
    patches = [{"manager": "a.example/first"}, {"manager": isolation_run.PATCH_MANAGER, "trainingRuntimeSpec": {}}, {"manager": "kueue.x-k8s.io/last"}]
    planned = json.loads(json.dumps(dict(TRAINJOB, spec=dict(TRAINJOB["spec"], runtimePatches=patches))))
    job = isolation_run.pair_trainjob(planned, ["n0", "n1"], 1, 0)
    assert [p["manager"] for p in job["spec"]["runtimePatches"]] == ["a.example/first", "kueue.x-k8s.io/last", isolation_run.PATCH_MANAGER]


@pytest.mark.parametrize("round_number, index", [(1, 0), (9, 9), (10, 0), (1, 10), (10, 10), (100, 7), (123, 45)])
def test_a_long_base_is_cut_to_exactly_the_name_bound_whatever_the_suffixs_length(round_number, index):
    # suffixes of 8 to 12 characters (-iso-1-0 to -iso-123-45): the base's cut leaves room for the hash and the suffix
    name = isolation_run.pair_name("b" * 60, round_number, index)
    suffix = "-iso-%d-%d" % (round_number, index)
    assert len(name) == isolation_run.NAME_MAX and name.endswith(suffix) and name.startswith("b" * (isolation_run.NAME_MAX - len(suffix) - 7) + "-")


def test_known_good_partners_are_read_by_value_from_a_result_read_back_from_json():
    verdicts = {"spare": {"verdict": "pass"}, "n0": {"verdict": "pass"}, "bad": {"verdict": "fail"}}
    result = json.loads(json.dumps({"node_verdicts": verdicts}))
    assert isolation_run.known_good_nodes(result, ["n0", "n1"]) == ["spare"]


@pytest.mark.parametrize("ran_on", [[], ["n0"], ["n1"], ["n0", "n1"]])
def test_a_pair_whose_pods_ran_on_part_of_it_or_nowhere_keeps_its_verdict(ran_on):
    # only a node outside the pair makes the result the pair's no more
    verdict = {"verdict": "fail", "reason": "busbw low", "metrics": {"peak_busbw": 110.0, "largest_size": 8}}
    got = isolation_run.pair_result(["n0", "n1"], "j", 1, {"outcome": "Failed", "pods": [pod(node) for node in ran_on]}, verdict)
    assert (got["verdict"], got["reason"]) == ("fail", "busbw low")


def test_the_node_labels_are_those_of_the_wanted_nodes_only():
    class Finder(FakeCluster):
        def find(self, kind, version):
            assert (kind, version) == ("Node", "v1")
            return [
                {"metadata": {"name": "n0", "labels": {"rack": "r1"}}},
                {"metadata": {"name": "other", "labels": {"rack": "r9"}}},
                {"metadata": {"name": "n1"}},
                {"metadata": {}},
            ]

    assert isolation_run.node_labels(Finder([]), ["n0", "n1", "n5"]) == {"n0": {"rack": "r1"}, "n1": {}}
    assert isolation_run.node_labels(FakeCluster([]), ["n0"]) is None


def test_only_the_node_jobs_pods_name_where_a_pair_ran():
    # replicated jobs sorting before the node job (launcher, dataset-initializer) and after it (worker), and a pod
    # without the label: only the node job's pods count
    pods = [pod("n0"), pod("n1"), pod("n7", "launcher"), pod("n8", "dataset-initializer"), pod("n9", "worker"), {"metadata": {}, "spec": {"nodeName": "n6"}}]
    assert isolation_run.worker_nodes(pods) == ["n0", "n1"]
    verdict = {"verdict": "pass", "reason": "ok", "metrics": {}}
    assert isolation_run.pair_result(["n0", "n1"], "j", 1, {"outcome": "Complete", "pods": pods}, verdict)["verdict"] == "pass"


@pytest.mark.parametrize(
    "verdict, waited_reason, reason",
    [({"verdict": "fail", "reason": "busbw low"}, "DeadlineExceeded", "busbw low"), (None, "DeadlineExceeded", "DeadlineExceeded"), (None, None, "")],
)
def test_a_pairs_reason_is_its_verdicts_else_the_waits(verdict, waited_reason, reason):
    got = isolation_run.pair_result(["n0", "n1"], "j", 1, {"outcome": "Failed", "reason": waited_reason, "pods": [pod("n0"), pod("n1")]}, verdict)
    assert got["reason"] == reason and got["verdict"] == (verdict or {}).get("verdict", "error")


class LabelledCluster(FakeCluster):
    """A FakeCluster that can list its Nodes (recorded)."""

    def find(self, kind, version):
        self.calls.append(("find", kind))
        return [{"metadata": {"name": name, "labels": {"rack": "r%d" % (index // 2)}}} for index, name in enumerate(NODES)]


@pytest.mark.parametrize("mnnvl, reads", [(False, False), (True, True)])
def test_a_found_culprit_reads_the_nodes_labels_only_for_an_mnnvl_run(mnnvl, reads):
    # the links probe's topology domains are for a conclusion that names no culprit; an MNNVL run's paths probe needs
    # the NVLink domains: a found culprit of a run without MNNVL lists no Nodes (the cluster reader's rights, docs/rbac.md)
    cluster = LabelledCluster(["n2"])
    judge = judge_for(cluster)
    outcome = isolation_run.run_isolation(cluster, TRAINJOB, NODES, judge, max_jobs=8, clock=lambda: 0, parts={"judge_for": lambda size: judge, "mnnvl": mnnvl})
    assert outcome["conclusion"]["outcome"] == "found"
    assert (("find", "Node") in cluster.calls) is reads


def test_with_parts_every_group_is_judged_by_their_judge_for_of_its_size():
    # PARTS' judge_for (a node count -> its JUDGE) judges the pairs and every finer group; JUDGE itself is not asked
    cluster = FakeCluster(["n2"])
    judge, sizes = judge_for(cluster), []

    def not_asked(logs, waited):
        raise AssertionError("JUDGE asked while PARTS has a judge_for")

    def by_size(size):
        sizes.append(size)
        return judge

    outcome = isolation_run.run_isolation(cluster, TRAINJOB, NODES, not_asked, max_jobs=8, clock=lambda: 0, parts={"judge_for": by_size})
    assert outcome["conclusion"]["outcome"] == "found" and outcome["part_results"]
    assert sizes == [2] * (len(outcome["results"]) + len(outcome["part_results"]))


def test_the_runtimes_node_job_read_back_from_json_gives_its_terms():
    # the runtime as plan.py renders it or the cluster returns it: its job names new strings, not this module's
    terms = node_affinity(isolation_run.pair_trainjob(TRAINJOB, ["n0", "n1"], 1, 0, runtime=json.loads(json.dumps(RUNTIME))))["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0] == {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}


@pytest.mark.parametrize("command", [["/bin/bash"], ["/bin/bash", "-a"], ["/bin/b"]])
def test_a_bash_without_c_or_another_command_sorting_before_bash_c_runs_its_one_arg_as_a_file(command):
    # only `/bin/bash -c` and one arg is a script whose exec line is rewritten; `/bin/bash FILE` runs a file
    trainer = {"command": command, "args": ["exec mpirun -np 2 /opt/nccl-tests/build/all_reduce_perf"]}
    with pytest.raises(ConfigError, match="runs no mpirun"):
        isolation_run.with_env(trainer, [{"name": "NCCL_P2P_DISABLE", "value": "1"}])
