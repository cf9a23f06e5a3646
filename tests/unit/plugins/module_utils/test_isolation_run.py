# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

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
