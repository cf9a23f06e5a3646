# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The paths probe of the isolation's finer rounds (judging/isolation_parts.py, docs/isolation.md "Finding the bad
part"): network-only and, on a pair in one multi-node NVLink domain, NVLink-only; every combination of the two runs,
their errors, pairs without an NVLink-only run, and the proof that an NVLink-only run stayed on NVLink (its log's
transport lines; published logs of tests/fixtures/real/nccl for the runs that did not)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import isolation_run
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions, isolation_parts

REAL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "fixtures", "real", "nccl")
CLIQUE = "nvidia.com/gpu.clique"


def real(name):
    with open(os.path.join(REAL, name)) as handle:
        return handle.read()


def info(host, dev, text):
    return "%s:57:57 [%d] NCCL INFO %s" % (host, dev, text)


def run_log(kind):
    """The launcher's NCCL INFO lines of a 2 x 4 GPU run. kind: mnnvl (cross-node channels over P2P/MNNVL, MNNVL 1),
    net (an MNNVL 0 run whose cross-node channels go via NET/Socket), nomnnvl (MNNVL 0, no channel line), none."""
    if kind == "none":
        return "# nccl-tests: no NCCL INFO lines\n"
    lines = []
    for node, host in enumerate(("w0", "w1")):
        for dev in range(4):
            rank = node * 4 + dev
            lines.append(info(host, dev, "comm 0x55d1c3a0 rank %d nRanks 8 nNodes %d localRanks 4 localRank %d MNNVL %d" % (rank, 2, dev, kind == "mnnvl")))
            peer = (rank + 1) % 8
            if kind == "mnnvl":
                lines.append(info(host, dev, "Channel 00 : %d[%d] -> %d[%d] via P2P/MNNVL" % (rank, dev, peer, peer % 4)))
            elif kind == "net" and peer // 4 != node:
                lines.append(info(host, dev, "Channel 00/0 : %d[%d] -> %d[%d] [send] via NET/Socket/0" % (rank, dev, peer, peer % 4)))
    return "\n".join(lines) + "\n"


def env_of(job):
    trainer = job["spec"]["trainer"]
    words = list(trainer["command"]) + list(trainer["args"])
    return dict(words[i + 1].split("=", 1) for i in range(len(words) - 1) if words[i] == "-x" and "=" in words[i + 1])


def trainjob():
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "nccl-burnin-run1", "namespace": "burnin", "labels": {}},
        "spec": {
            "runtimeRef": {"name": "nccl-burnin-runtime"},
            "trainer": {
                "numNodes": 4,
                "command": ["mpirun"],
                "args": ["-x", "NCCL_DEBUG=INFO", "-x", "NCCL_MNNVL_ENABLE=1", "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "8G"],
            },
        },
    }


class MnnvlCluster(object):
    """A fake MNNVL cluster: NVLINK nodes are slow unless the run turns NVLink off (NCCL_P2P_DISABLE=1); NETWORK
    nodes are slow in a run that uses the network (every run but an NVLink-only one that stayed on NVLink); TOGETHER
    nodes only in a run that uses both. NVLINK_LOG: the log kind (run_log) of an NVLink-only run; NVLINK_ERROR: such
    a run gives no result. CLIQUES: {node: clique label value}."""

    def __init__(self, count=4, nvlink=(), network=(), together=(), cliques=None, nvlink_log="mnnvl", nvlink_error=False):
        self.nodes = ["n%d" % i for i in range(count)]
        self.nvlink, self.network, self.together = set(nvlink), set(network), set(together)
        self.cliques = cliques if cliques is not None else dict((n, "uuid.0") for n in self.nodes)
        self.nvlink_log, self.nvlink_error = nvlink_log, nvlink_error
        self.jobs, self.applied = {}, []

    def apply(self, objects):
        for obj in objects:
            (patch,) = [p for p in obj["spec"]["runtimePatches"] if p["manager"] == isolation_run.PATCH_MANAGER]
            spec = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
            terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
            self.jobs[obj["metadata"]["name"]] = (terms[-1]["values"], env_of(obj))
            self.applied.append(obj["metadata"]["name"])

    def wait(self, names, timeout):
        return dict((name, {"outcome": "Complete", "reason": "", "pods": [pod(n) for n in self.jobs[name][0]]}) for name in names)

    def nvlink_only(self, name):
        env = self.jobs[name][1]
        return env.get("NCCL_NET") == "Socket" and env.get("NCCL_MNNVL_ENABLE") == "1" and env.get("NCCL_P2P_DISABLE") != "1"

    def logs(self, name, waited):
        text = run_log(self.nvlink_log if self.nvlink_only(name) else "net")
        return {"results": [{"log": text}], "pods": waited["pods"], "name": name}

    def delete(self, names):
        pass

    def find(self, kind, api_version):
        return [{"metadata": {"name": n, "labels": {CLIQUE: self.cliques[n]} if self.cliques.get(n) else {}}} for n in self.nodes]

    def judge(self, logs, waited):
        name = logs["name"]
        nodes, env = self.jobs[name]
        if self.nvlink_error and self.nvlink_only(name):
            return {"verdict": "error", "reason": "NCCL WARN MNNVL is not supported on this system", "metrics": {}}
        on_nvlink = env.get("NCCL_P2P_DISABLE") != "1"
        on_network = not (self.nvlink_only(name) and self.nvlink_log == "mnnvl")
        slow = bool(
            (on_nvlink and set(nodes) & self.nvlink) or (on_network and set(nodes) & self.network) or (on_nvlink and on_network and set(nodes) & self.together)
        )
        return {"verdict": "fail" if slow else "pass", "reason": "r", "metrics": {"peak_busbw": 90.0 if slow else 800.0, "largest_size": 1 << 33}}


def pod(node):
    return {"metadata": {"labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}}, "spec": {"nodeName": node}}


def isolate(cluster, mnnvl=True, max_jobs=32, transport="efa"):
    return isolation_run.run_isolation(
        cluster,
        trainjob(),
        cluster.nodes,
        cluster.judge,
        max_jobs=max_jobs,
        max_minutes=None,
        clock=lambda: 0.0,
        parts={"transport": transport, "judge_for": lambda size: cluster.judge, "mnnvl": mnnvl},
    )


def path_of(outcome):
    (part,) = [p for p in outcome["parts"] if p["level"] == "path"]
    return part


@pytest.mark.parametrize(
    "faults, conclusion, words",
    [
        ({"nvlink": ["n2"]}, "nvlink", "good network-only, slow NVLink-only"),
        ({"network": ["n2"]}, "fabric", "its NVLink proved good"),
        ({"nvlink": ["n2"], "network": ["n2"]}, "both", "both at fault"),
        ({"together": ["n2"]}, "not_reproduced", "neither path alone reproduces the slow pair"),
    ],
)
def test_every_combination_of_the_two_runs_has_its_conclusion(faults, conclusion, words):
    cluster = MnnvlCluster(**faults)
    outcome = isolate(cluster)
    assert [c["node"] for c in outcome["conclusion"]["culprits"]] == ["n2"]
    part = path_of(outcome)
    assert part["conclusion"] == conclusion and words in part["reason"], part
    # The network-only run beside its control, two good nodes in the same round (_lib/nccl/isolation.yaml peers).
    assert part["jobs"] == 3 and [run["path"] for run in part["paths"]] == ["all", "network", "nvlink", "control"]
    network, nvlink, control = part["paths"][1:]
    assert control["env"] == network["env"] and not set(control["nodes"]) & set(network["nodes"]) and "n2" not in control["nodes"]
    assert {"name": "NCCL_P2P_DISABLE", "value": "1"} in network["env"] and "proof" not in network
    assert nvlink["env"] == isolation_parts.nvlink_only_env() and nvlink["proof"]["mnnvl"] is True and nvlink["proof"]["net"] == {}
    # The two runs are of the culprit's slow pair, each a round of its own (they share the pair's nodes).
    assert len(set(tuple(r["nodes"]) for r in outcome["part_results"] if r["probe"]["kind"] == "paths" and r["probe"]["path"] != "control")) == 1
    assert len(set(r["round"] for r in outcome["part_results"] if r["probe"]["kind"] == "paths")) == 2


def test_the_nvlink_only_env_is_sourced_data_and_reaches_the_mpirun_line():
    env = dict((item["name"], item["value"]) for item in isolation_parts.nvlink_only_env())
    assert env == {"NCCL_MNNVL_ENABLE": "1", "NCCL_P2P_LEVEL": "NVL", "NCCL_NET": "Socket"}
    cluster = MnnvlCluster(nvlink=["n2"])
    isolate(cluster)
    (name,) = [n for n in cluster.applied if cluster.nvlink_only(n)]
    assert cluster.jobs[name][1]["NCCL_MNNVL_ENABLE"] == "1" and cluster.jobs[name][1]["NCCL_P2P_LEVEL"] == "NVL"


def test_fabric_and_both_go_on_to_the_rails_nvlink_and_not_reproduced_do_not():
    for faults, rails in (
        ({"network": ["n2"]}, True),
        ({"nvlink": ["n2"], "network": ["n2"]}, True),
        ({"nvlink": ["n2"]}, False),
        ({"together": ["n2"]}, False),
    ):
        outcome = isolate(MnnvlCluster(**faults))
        nic = [p for p in outcome["parts"] if p["level"] == "nic"]
        assert bool(nic) == rails, (faults, outcome["parts"])
        if rails:
            # The fake cluster's EFA log lists no NIC (aws-ofi-nccl's GUID lines): the rails are not re-run, and say why.
            assert nic[0]["conclusion"] == "not_probed" and nic[0]["reason"] == "rails not re-run: its log lists no NIC"


@pytest.mark.parametrize(
    "kwargs, why",
    [
        ({"cliques": {"n0": "uuid.0", "n1": "uuid.0", "n2": "uuid.1", "n3": "uuid.0"}}, "different NVLink domains (nvidia.com/gpu.clique uuid."),
        ({"cliques": {}}, "nvidia.com/gpu.clique is not labelled on both nodes"),
    ],
)
def test_a_pair_outside_one_nvlink_domain_keeps_the_network_only_conclusion_and_says_nvlink_was_not_proved(kwargs, why):
    outcome = isolate(MnnvlCluster(network=["n2"], **kwargs))
    part = path_of(outcome)
    assert part["conclusion"] == "fabric" and part["jobs"] == 2 and [run["path"] for run in part["paths"]] == ["all", "network", "control"]
    assert "NVLink not proved good" in part["reason"] and why in part["reason"], part["reason"]


def test_a_run_without_mnnvl_makes_no_nvlink_only_run():
    part = path_of(isolate(MnnvlCluster(nvlink=["n2"]), mnnvl=False))
    assert part["conclusion"] == "nvlink" and part["jobs"] == 2
    assert "no NVLink-only run: the run did not enable multi-node NVLink (burnin_enable_mnnvl)" in part["reason"]


def test_unreadable_labels_make_no_nvlink_only_run_and_say_so():
    cluster = MnnvlCluster(network=["n2"])
    cluster.find = None
    part = path_of(isolate(cluster))
    assert part["conclusion"] == "fabric" and part["jobs"] == 2 and "the nodes' labels could not be read" in part["reason"]


def test_an_nvlink_only_run_without_a_result_is_undetermined():
    part = path_of(isolate(MnnvlCluster(network=["n2"], nvlink_error=True)))
    assert part["conclusion"] == "undetermined" and part["jobs"] == 3
    assert "the NVLink-only run gave no result: NCCL WARN MNNVL is not supported" in part["reason"]


@pytest.mark.parametrize(
    "kind, why",
    [
        ("net", "its log shows network channels (via NET/Socket x2): it did not stay on NVLink"),
        ("nomnnvl", "NCCL did not report multi-node NVLink used"),
        ("none", "its log has no NCCL INFO lines"),
    ],
)
def test_an_nvlink_only_run_that_did_not_prove_it_stayed_on_nvlink_does_not_count(kind, why):
    part = path_of(isolate(MnnvlCluster(nvlink=["n2"], network=["n2"], nvlink_log=kind)))
    assert part["conclusion"] == "undetermined" and "the NVLink-only run does not count: " + why in part["reason"], part["reason"]
    assert part["paths"][2]["proof"]["mnnvl"] is False


def test_the_proof_reads_published_logs_that_left_nvlink_or_used_no_mnnvl():
    # NCCL 2.4, two hosts, rings via NET/Socket (tests/fixtures/real/nccl/PROVENANCE.md).
    proof = isolation_parts.nvlink_proof([real("nccl2.4-ring-via-net-socket.log")])
    assert proof["info_lines"] and proof["net"].get("Socket") and "did not stay on NVLink" in isolation_parts._unproven(proof)
    # Kubernetes workers, channels via NET/IB.
    proof = isolation_parts.nvlink_proof([real("k8s-channels-via-net-ib.log")])
    assert proof["net"].get("IB") and "via NET/IB" in isolation_parts._unproven(proof)
    # One node, MNNVL 0, P2P/direct pointer: no network channel, but no MNNVL either.
    proof = isolation_parts.nvlink_proof([real("single-node-mnnvl-0-p2p-direct.log")])
    assert proof == {"info_lines": proof["info_lines"], "mnnvl": False, "net": {}} and "did not report multi-node NVLink" in isolation_parts._unproven(proof)
    assert isolation_parts._unproven(isolation_parts.nvlink_proof([run_log("mnnvl")])) == ""
    assert isolation_parts.nvlink_proof([None, 3])["info_lines"] == 0


def conclusion():
    return {
        "outcome": "found",
        "culprits": [{"node": "n2", "evidence": [{"nodes": ["n2", "n0"], "verdict": "fail", "busbw": 90.0, "round": 1}]}],
        "good": ["n0"],
    }


def context(**extra):
    return dict({"transport": "efa", "mnnvl": True, "labels": {"n0": {CLIQUE: "u.0"}, "n2": {CLIQUE: "u.0"}}}, **extra)


def paths_run(path, verdict, proof=None):
    result = {"nodes": ["n2", "n0"], "verdict": verdict, "busbw": 90.0, "probe": {"kind": "paths", "node": "n2", "path": path}, "env": []}
    if proof is not None:
        result["nvlink_proof"] = proof
    return result


def test_the_planner_asks_for_both_runs_and_the_budget_names_both():
    step = isolation_parts.next_step(conclusion(), context(), [], max_jobs=4)
    assert step["state"] == "run" and [job["probe"]["path"] for job in step["jobs"]] == ["network"]
    step = isolation_parts.next_step(conclusion(), context(), [], max_jobs=0)
    assert step["state"] == "done" and [probe["path"] for probe in step["pending"]] == ["network", "nvlink"]
    step = isolation_parts.next_step(conclusion(), context(), [paths_run("network", "fail")], max_jobs=4)
    assert [job["probe"]["path"] for job in step["jobs"]] == ["nvlink"] and step["jobs"][0]["env"] == isolation_parts.nvlink_only_env()


def test_a_network_only_run_without_a_result_is_undetermined_whatever_the_nvlink_only_run_says():
    proof = isolation_parts.nvlink_proof([run_log("mnnvl")])
    step = isolation_parts.next_step(conclusion(), context(), [paths_run("network", "error"), paths_run("nvlink", "fail", proof)], max_jobs=4)
    (part,) = step["parts"]
    assert part["conclusion"] == "undetermined" and "the network-only run gave no result" in part["reason"]


def test_a_path_result_of_an_older_report_without_a_path_counts_as_network_only():
    run = paths_run("network", "pass")
    del run["probe"]["path"]
    step = isolation_parts.next_step(conclusion(), context(mnnvl=False), [run], max_jobs=4)
    assert step["parts"][0]["conclusion"] == "nvlink"


def test_both_is_an_nvlink_finding_for_the_recommendation_and_the_summary():
    part = {"level": "path", "node": "n2", "conclusion": "both"}
    assert actions.of_result({"isolation": {"parts": [part]}})["action_rule"] == "isolation_nvlink"
    assert isolation_parts.summary([part]) == "n2 both"
