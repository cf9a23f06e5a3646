# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The isolation's finer rounds (judging/isolation_parts.py run by burnin/isolation_run.py) against a fake cluster
whose faults are those the test fleet's stand-in injects (tests/fleet/agent.py): a slow node, a degraded NVLink, a
slow rail, a bad link between two topology domains. tests/bench/bench_isolation.py runs the same fake cluster at
8, 32 and 128 nodes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shlex

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import cluster_result, isolation_run
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation_parts
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report

NICS = ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
NIC_LINE = "node-0:120:180 [0] NCCL INFO NET/IB : Using " + " ".join("[%d]%s:1/IB" % (i, nic) for i, nic in enumerate(NICS)) + " ; OOB eth0:10.0.0.1<0>"
LAYER = "topology.k8s.aws/network-node-layer-3"
PASS = 300.0
# A healthy pair's network-only busbw beside its whole run's: GCP A3 Mega's published 2x8 H100 all_reduce, 338.8 GB/s,
# over its 8 x 200 Gb/s NICs, 200 GB/s of line rate (tests/fixtures/real/nccl/gcp-a3mega-all-reduce-2x8-h100-pass.log).
NETWORK_ONLY = 0.59
REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real")
EFA_NICS = ["rdmap16s27", "rdmap32s27", "rdmap144s27", "rdmap160s27"]
# aws-ofi-nccl's `GUID of <device>` line (tests/fixtures/real/nccl-nics), one per NCCL device, after `found N nics`
# (as the p4d log there): one EFA device per NCCL device.
EFA_LINES = "node-0:120:180 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)\n" + "\n".join(
    "node-0:120:180 [%d] NCCL INFO NET/OFI GUID of %s: 00000000000000%02x" % (i, nic, i) for i, nic in enumerate(EFA_NICS)
)
# P5: 32 EFA devices in 8 groups of 4, one NCCL device per group named by its first (aws-ofi-nccl's topology lines, as
# tests/fixtures/real/nccl-nics/aws-ofi-p5en-nic-groups-nccl-1597.log prints P5en's 16 in groups of 2).
P5_GROUPS = [["rdmap%ds0" % (0x30 + 0x10 * group + device) for device in range(4)] for group in range(8)]
P5_LINES = "\n".join(
    ["node-0:120:180 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 32 nics)"]
    + [
        "node-0:120:180 [0] NCCL INFO NET/OFI NIC group %d device #%d 0000:%02x:00.0" % (group, device, 0x30 + 0x10 * group + device)
        for group in range(8)
        for device in range(4)
    ]
    + ["node-0:120:180 [%d] NCCL INFO NET/OFI GUID of %s: 00000000000000%02x" % (g, devices[0], g) for g, devices in enumerate(P5_GROUPS)]
)


def real(path):
    with open(os.path.join(REAL, path)) as handle:
        return handle.read()


def trainjob(name="nccl-burnin-run1", bash=False):
    command = ["timeout", "3600", "mpirun"]
    args = ["-N", "8", "-x", "NCCL_DEBUG=INFO", "-x", "NCCL_MNNVL_ENABLE=0", "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "8G"]
    if bash:
        command, args = ["/bin/bash", "-c"], ["ulimit -l unlimited\nexec " + " ".join(shlex.quote(w) for w in command + args)]
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": "burnin", "labels": {"gpufleet.burnin/run-id": "run1"}},
        "spec": {"runtimeRef": {"name": "nccl-burnin-runtime"}, "trainer": {"numNodes": 4, "numProcPerNode": 8, "command": command, "args": args}},
    }


def words_of(job):
    trainer = job["spec"]["trainer"]
    words = []
    for item in trainer["command"] + trainer["args"]:
        words.extend(shlex.split(item) if "\n" in item or " " in item else [item])
    return words


def env_of(words):
    return dict(words[i + 1].split("=", 1) for i in range(len(words) - 1) if words[i] == "-x" and "=" in words[i + 1])


class FaultyCluster(object):
    """The stand-in's faults in a fake cluster. SLOW: nodes slow in any run; NVLINK: nodes slow unless the run turns
    NVLink off (NCCL_P2P_DISABLE=1); RAILS {node: [NIC]}: slow while NCCL_IB_HCA lets the run use that NIC; LINKS
    [[domain a, domain b]]: a run with nodes in both domains is slow. LABELS: {node: {label: value}}; every round
    takes ROUND_MINUTES on the clock (the cluster's ``now``)."""

    def __init__(self, nodes, slow=(), nvlink=(), rails=None, links=(), labels=None, round_minutes=5.0, nic_line=NIC_LINE):
        self.nodes, self.slow_nodes, self.nvlink, self.rails, self.links = list(nodes), set(slow), set(nvlink), dict(rails or {}), [set(x) for x in links]
        self.labels = labels if labels is not None else dict((n, {}) for n in nodes)
        self.round_minutes, self.now, self.nic_line = round_minutes, 0.0, nic_line
        self.jobs, self.calls = {}, []

    def clock(self):
        return self.now * 60

    def apply(self, objects):
        self.calls.append("apply")
        for obj in objects:
            (patch,) = [p for p in obj["spec"]["runtimePatches"] if p["manager"] == isolation_run.PATCH_MANAGER]
            spec = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
            terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
            assert obj["spec"]["trainer"]["numNodes"] == len(terms[-1]["values"])
            self.jobs[obj["metadata"]["name"]] = (terms[-1]["values"], env_of(words_of(obj)))

    def wait(self, names, timeout):
        self.calls.append("wait")
        self.now += self.round_minutes
        return dict((name, {"outcome": "Complete", "reason": "", "pods": [pod(n) for n in self.jobs[name][0]]}) for name in names)

    def logs(self, name, waited):
        return {"results": [{"log": self.nic_line + "\n"}], "pods": waited["pods"], "name": name}

    def delete(self, names):
        self.calls.append("delete")

    def find(self, kind, api_version):
        assert (kind, api_version) == ("Node", "v1")
        return [{"metadata": {"name": n, "labels": dict(self.labels.get(n) or {})}} for n in self.nodes]

    def is_slow(self, name):
        nodes, env = self.jobs[name]
        if set(nodes) & self.slow_nodes:
            return True
        if set(nodes) & self.nvlink and env.get("NCCL_P2P_DISABLE") != "1":
            return True
        # A slow rail slows the run unless the run's NIC variable (NCCL_IB_HCA's "=" list, FI_EFA_IFACE) leaves it out.
        hca, iface = env.get("NCCL_IB_HCA", ""), env.get("FI_EFA_IFACE", "all")
        for n in nodes:
            rails = set(self.rails.get(n) or [])
            if hca.startswith("="):
                rails &= set(hca[1:].split(","))
            if iface != "all":
                rails &= set(iface.split(","))
            if rails:
                return True
        values = set(v for n in nodes for v in (self.labels.get(n) or {}).values())
        return any(link <= values for link in self.links)

    def busbw(self, name):
        """The run's peak: 360 GB/s, 90 when slow; NETWORK_ONLY of it with NVLink off; a run its NIC variable limits to some of the node's NICs (as many as
        NICS) carries their share of it, as real NICs do (_lib/nccl/isolation.yaml peers)."""
        nodes, env = self.jobs[name]
        value = 90.0 if self.is_slow(name) else 360.0
        if env.get("NCCL_P2P_DISABLE") == "1":
            # NVLink off: held to what the NICs carry, below the 2-node thresholds taken from runs with NVLink
            # (NETWORK_ONLY, tests/fleet/nccl_logs.py's).
            value *= NETWORK_ONLY
        hca, iface = env.get("NCCL_IB_HCA", ""), env.get("FI_EFA_IFACE", "all")
        if hca.startswith("="):
            value *= len(hca[1:].split(",")) / float(len(NICS))
        if iface != "all":
            value *= len(iface.split(",")) / float(len(NICS))
        return value

    def judge_for(self, size, share=1):
        """A judge as isolation_stage.pair_judge's: PASS GB/s for the pair, divided by SHARE for a one-NIC run."""

        def judge(logs, waited):
            busbw = self.busbw(logs["name"])
            return {"verdict": "pass" if busbw >= PASS / share else "fail", "reason": "r", "metrics": {"peak_busbw": busbw, "largest_size": 1 << 33}}

        return judge

    def judge_probe(self, size, probe):
        return self.judge_for(size, probe["of"]) if probe["kind"] == "rails" else None


def pod(node):
    return {"metadata": {"labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}}, "spec": {"nodeName": node}}


def isolate(cluster, transport="ib", max_jobs=32, max_minutes=600, job=None):
    return isolation_run.run_isolation(
        cluster,
        job or trainjob(),
        cluster.nodes,
        cluster.judge_for(2),
        max_jobs=max_jobs,
        max_minutes=max_minutes,
        clock=cluster.clock,
        parts={"transport": transport, "judge_for": cluster.judge_for, "judge_probe": cluster.judge_probe},
    )


def nodes(count):
    return ["n%d" % i for i in range(count)]


def by_level(outcome, level):
    return [part for part in outcome["parts"] if part["level"] == level]


def test_a_degraded_nvlink_is_named_nvlink_by_a_network_only_run():
    cluster = FaultyCluster(nodes(4), nvlink=["n2"])
    outcome = isolate(cluster)
    assert [c["node"] for c in outcome["conclusion"]["culprits"]] == ["n2"]
    (path,) = by_level(outcome, "path")
    assert path["node"] == "n2" and path["conclusion"] == "nvlink" and path["jobs"] == 2
    assert [run["path"] for run in path["paths"]] == ["all", "network", "control"]
    full, network, control = path["paths"]
    network_env = dict((item["name"], item["value"]) for item in network["env"])
    assert network_env == {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1", "NCCL_NVLS_ENABLE": "0", "NCCL_MNNVL_ENABLE": "0"}
    # Healthy without NVLink, the pair misses the 2-node thresholds as its control does: beside the control it is good.
    assert full["verdict"] == "fail" and network["verdict"] == control["verdict"] == "fail" and network["busbw"] == control["busbw"]
    assert control["env"] == network["env"] and control["round"] == network["round"] and not set(control["nodes"]) & set(network["nodes"])
    beside = "212.4 GB/s network-only beside 212.4 GB/s on the good pair %s (not more than 10 %% below)" % "+".join(control["nodes"])
    assert beside in path["reason"], path["reason"]
    # Nothing more: an NVLink fault is no rail's.
    assert by_level(outcome, "nic") == [] and len(outcome["part_results"]) == 2
    record = cluster_result.isolation_record({"reason": "verdict fail"}, outcome)["isolation"]
    assert record["parts"] == outcome["parts"] and record["jobs"] == record["node_jobs"] + 2 == 6
    assert cluster_result.isolation_record({"reason": "verdict fail"}, outcome)["reason"] == "verdict fail; isolation: bad node(s) n2; n2 nvlink"


def test_without_a_control_pair_the_network_only_run_is_held_to_the_thresholds_and_says_so():
    # The budget leaves the network-only run but not its control: judged against the 2-node thresholds, which a
    # healthy pair without NVLink misses (the 2-node figures are above what its NICs carry: peers in
    # _lib/nccl/isolation.yaml), so the degraded NVLink reads as its network: what the control is for.
    cluster = FaultyCluster(nodes(4), nvlink=["n2"])
    outcome = isolate(cluster, max_jobs=5)
    (path,) = by_level(outcome, "path")
    assert [run["path"] for run in path["paths"]] == ["all", "network"] and path["jobs"] == 1
    assert path["conclusion"] == "fabric" and "no control pair ran: network-only judged against the 2-node thresholds" in path["reason"]
    assert isolation_parts.control_pair({"n0", "n1", "n3"}, {"n0", "n2"}) == ["n1", "n3"]
    assert isolation_parts.control_pair({"n0", "n1"}, {"n0"}) is None


def test_the_published_two_node_figure_is_above_what_the_nics_carry_so_network_only_runs_are_judged_beside_a_control():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results, thresholds

    # GCP A3 Mega: 8 x 200 Gb/s GPU NICs (a3-megagpu-8g), 200 GB/s of line rate; its published 2x8 H100 all_reduce.
    published = nccl_results.parse_nccl_output(real("nccl/gcp-a3mega-all-reduce-2x8-h100-pass.log"))
    line_rate = 8 * 200 / 8.0
    assert max(row["oop"]["busbw"] for row in published["rows"]) == 338.82 > 1.5 * line_rate
    record = thresholds.select_thresholds({"platform": "gcp", "gpu_architecture": "h100", "nodes": 2, "mnnvl": False}, "all_reduce")["peak"]
    # The 2-node threshold taken from such runs is above the line rate: no healthy network-only run could meet it.
    assert record["id"] == "gcp-h100-all-reduce-peak" and record["pass"] > line_rate


def test_a_slow_rail_is_fabric_then_named_one_nic_per_run():
    cluster = FaultyCluster(nodes(4), rails={"n1": ["mlx5_2"]})
    outcome = isolate(cluster)
    (path,) = by_level(outcome, "path")
    assert path["conclusion"] == "fabric"
    (nic,) = by_level(outcome, "nic")
    assert nic["conclusion"] == "found" and nic["nics"] == ["mlx5_2"] and nic["cleared"] == ["mlx5_0", "mlx5_1", "mlx5_3"]
    assert [run["nic"] for run in nic["runs"]] == NICS and nic["jobs"] == 4
    assert [run["env"] for run in nic["runs"]][2] == [{"name": "NCCL_IB_HCA", "value": "=mlx5_2"}]
    # One NIC per run and round: the culprit is in each of them.
    rail_rounds = [entry for entry in outcome["rounds"] if [p["kind"] for p in entry.get("probes") or []] == ["rails"]]
    assert len(rail_rounds) == 4
    assert "n1 NIC mlx5_2" in cluster_result.isolation_record({"reason": "x"}, outcome)["reason"]


def test_a_slow_node_on_every_rail_is_not_one_nic():
    outcome = isolate(FaultyCluster(nodes(4), slow=["n3"]))
    (nic,) = by_level(outcome, "nic")
    assert nic["conclusion"] == "every_rail" and nic["nics"] == NICS


def test_rails_are_not_rerun_without_a_documented_one_nic_variable():
    outcome = isolate(FaultyCluster(nodes(4), rails={"n1": ["mlx5_0"]}), transport="gib")
    (nic,) = by_level(outcome, "nic")
    assert nic["conclusion"] == "not_probed" and "gib: gIB is a closed plugin" in nic["reason"] and "NCCL_IB_HCA" in nic["reason"]
    for transport, named in (("tcpx", "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"), ("tcpxo", "NCCL_FASTRAK_ALLOW_NIC_SUBSET")):
        (nic,) = by_level(isolate(FaultyCluster(nodes(4), rails={"n1": ["mlx5_0"]}), transport=transport), "nic")
        assert nic["conclusion"] == "not_probed" and "no published example" in nic["reason"] and named in nic["reason"]
    (nic,) = by_level(isolate(FaultyCluster(nodes(4), rails={"n1": ["mlx5_0"]}), transport="socket"), "nic")
    assert "the transport socket has no documented one-NIC variable" in nic["reason"]
    outcome = isolate(FaultyCluster(nodes(4), rails={"n1": ["mlx5_0"]}, nic_line="no NIC listed"))
    assert "its log lists no NIC" in by_level(outcome, "nic")[0]["reason"]


def domains(count, size):
    return dict(("n%d" % i, {"topology.kubernetes.io/zone": "z1", LAYER: "nn-%d" % (i // size)}) for i in range(count))


def test_a_bad_link_between_two_domains_is_named_when_both_halves_pass():
    cluster = FaultyCluster(nodes(8), links=[["nn-0", "nn-1"]], labels=domains(8, 4))
    outcome = isolate(cluster)
    assert outcome["conclusion"]["outcome"] == "not_reproduced"
    (link,) = by_level(outcome, "link")
    assert link["conclusion"] == "found" and link["links"][0]["key"] == LAYER and link["links"][0]["domains"] == ["nn-0", "nn-1"]
    assert link["jobs"] == 2 and [run["verdict"] for run in link["runs"]] == ["pass", "pass"]
    assert [len(run["nodes"]) for run in link["runs"]] == [4, 4]
    assert "link %s nn-0 - nn-1" % LAYER in cluster_result.isolation_record({"reason": "x"}, outcome)["reason"]


def test_a_link_among_many_domains_is_named_by_a_pair_across_them():
    # One node per domain: round 1's pairs (n0+n1, n2+n3) pass, so no node is bad; no group runs alone; the pairs across
    # the domains the node rounds did not span name the slow link.
    cluster = FaultyCluster(nodes(4), links=[["nn-0", "nn-2"]], labels=domains(4, 1))
    outcome = isolate(cluster)
    assert outcome["conclusion"]["outcome"] == "not_reproduced"
    (link,) = by_level(outcome, "link")
    assert link["conclusion"] == "found" and [item["domains"] for item in link["links"]] == [["nn-0", "nn-2"]]
    assert link["jobs"] == 4  # the 6 domain pairs less the 2 the node rounds ran
    spans = [run["domains"] for run in link["runs"]]
    assert sorted(map(tuple, spans)) == [("nn-0", "nn-1"), ("nn-0", "nn-2"), ("nn-0", "nn-3"), ("nn-1", "nn-2"), ("nn-1", "nn-3"), ("nn-2", "nn-3")]


def test_a_slow_pair_of_two_good_nodes_is_a_link_between_their_domains_without_more_jobs():
    conclusion = {"outcome": "unexplained", "culprits": [], "unexplained": [["n0", "n5"]]}
    step = isolation_parts.next_step(conclusion, {"labels": domains(8, 4)}, [], max_jobs=8)
    assert step["state"] == "done"
    (link,) = step["parts"]
    assert link["conclusion"] == "found" and link["links"][0]["domains"] == ["nn-0", "nn-1"] and link["jobs"] == 0
    same = isolation_parts.next_step(dict(conclusion, unexplained=[["n0", "n1"]]), {"labels": domains(8, 4)}, [], max_jobs=8)
    assert same["parts"][0]["conclusion"] == "nodes"


def test_a_group_slow_alone_is_a_fault_inside_its_domain_not_a_link():
    context = {"nodes": nodes(8), "labels": domains(8, 4)}
    conclusion = {"outcome": "not_reproduced", "culprits": []}
    first = isolation_parts.next_step(conclusion, context, [], max_jobs=8)
    assert first["state"] == "run" and [job["nodes"] for job in first["jobs"]] == [nodes(8)[:4], nodes(8)[4:]]
    ran = [dict(job, verdict=verdict) for job, verdict in zip(first["jobs"], ["pass", "fail"])]
    (part,) = isolation_parts.next_step(conclusion, context, ran, max_jobs=8)["parts"]
    assert part["conclusion"] == "inside" and "nn-1" in part["reason"] and part["links"] == []


def test_unreadable_labels_say_so():
    class NoNodes(FaultyCluster):
        def find(self, kind, api_version):
            raise ClusterCallFailed("listing Node", {"category": "Forbidden", "message": "forbidden"})

    outcome = isolate(NoNodes(nodes(8), links=[["nn-0", "nn-1"]], labels=domains(8, 4)))
    (link,) = by_level(outcome, "link")
    assert link["conclusion"] == "undetermined" and "labels could not be read" in link["reason"]


def test_the_budget_bounds_the_finer_rounds_and_says_what_is_left():
    cluster = FaultyCluster(nodes(4), rails={"n1": ["mlx5_2"]})
    outcome = isolate(cluster, max_jobs=7)
    assert len(outcome["results"]) + len(outcome["part_results"]) == 7
    assert by_level(outcome, "nic") == [] and outcome["pending"] == [{"kind": "rails", "node": "n1", "nic": "mlx5_2", "of": 4}]
    assert cluster_result.isolation_record({}, outcome)["isolation"]["pending"] == outcome["pending"]


def test_the_time_budget_ends_the_finer_rounds_too():
    cluster = FaultyCluster(nodes(4), rails={"n1": ["mlx5_2"]}, round_minutes=10)
    outcome = isolate(cluster, max_minutes=35)
    assert outcome["pending"] and outcome["minutes"] <= 40


def test_each_conclusion_carries_its_minutes():
    cluster = FaultyCluster(nodes(4), nvlink=["n0"], round_minutes=5)
    outcome = isolate(cluster)
    (path,) = by_level(outcome, "path")
    assert outcome["conclusion"]["minutes"] == 5 * (len(outcome["rounds"]) - 1) and path["minutes"] == 5 * len(outcome["rounds"])


@pytest.mark.parametrize("bash", [False, True])
def test_the_probe_env_reaches_the_mpirun_line(bash):
    job = isolation_run.pair_trainjob(
        trainjob(bash=bash), ["n0", "n1"], 3, 0, env=[{"name": "NCCL_MNNVL_ENABLE", "value": "0"}, {"name": "NCCL_P2P_DISABLE", "value": "1"}]
    )
    words = words_of(job)
    assert env_of(words)["NCCL_P2P_DISABLE"] == "1" and words.count("-x") == 3  # NCCL_MNNVL_ENABLE given a value, not twice
    assert words[words.index("mpirun") + 1 : words.index("mpirun") + 3] == ["-x", "NCCL_P2P_DISABLE=1"]
    assert job["spec"]["trainer"]["numNodes"] == 2
    with pytest.raises(ConfigError, match="no mpirun"):
        isolation_run.with_env({"command": ["torchrun"], "args": []}, [{"name": "A", "value": "1"}])


def test_nic_names_are_read_bounded_from_ncclss_own_list():
    assert isolation_parts.nics_in(["x\n" + NIC_LINE], "ib") == NICS
    assert isolation_parts.nics_in(["x" * 5000 + NIC_LINE], "ib") == []
    assert isolation_parts.nics_in([NIC_LINE], "efa") == []
    assert isolation_parts.nics_in(["NET/IB : No device found."], "ib") == []


def test_nic_names_are_read_from_published_lines():
    # NCCL's own list, and HPC-X's plugin printing the same line with /IB/SHARP (every NIC, not the first only).
    assert isolation_parts.nics_in([real("nccl/nccl2.19.3-roce-using-network-ib.log")], "ib") == ["mlx5_10", "mlx5_11"]
    assert isolation_parts.nics_in([real("nccl/hpcx-ibext-sharp-collnet-info.log")], "ib") == ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5"]
    # aws-ofi-nccl 1.16: one `GUID of <EFA device>` line per device; every line of every log counts, in order.
    rank3, p4d = real("nccl-nics/aws-ofi-1.16.2-guid-of-rdmap49s0.log"), real("nccl-nics/aws-ofi-1.16.2-p4d-guid-of-rdmap16s27.log")
    assert isolation_parts.nics_in([rank3], "efa") == ["rdmap49s0"]
    assert isolation_parts.nics_in([rank3, p4d, rank3], "efa") == ["rdmap49s0", "rdmap16s27"]
    # aws-ofi-nccl before 1.16 names no device (PCI addresses only): no NIC, so no rail runs.
    assert isolation_parts.nics_in([real("nccl/aws-ofi-efa-p5en-libfabric-info.log")], "efa") == []
    assert isolation_parts.rail_env("efa", "rdmap49s0") == [{"name": "FI_EFA_IFACE", "value": "rdmap49s0"}]
    assert isolation_parts.rail_env("ib", "mlx5_2") == [{"name": "NCCL_IB_HCA", "value": "=mlx5_2"}]
    assert isolation_parts.rail_of("gib") is None and isolation_parts.nics_in([rank3], "tcpxo") == []


def test_nic_names_per_line_are_bounded():
    many = "\n".join("h:1:1 [0] NCCL INFO NET/OFI GUID of rdmap%ds0: 00" % i for i in range(500))
    found = isolation_parts.nics_in([many], "efa")
    assert len(found) == isolation_parts.MAX_NICS and found[0] == "rdmap0s0"
    assert isolation_parts.nics_in(["x" * 5000 + " NET/OFI GUID of rdmap1s0: 00"], "efa") == []


def test_a_slow_efa_rail_is_named_one_nic_per_run():
    outcome = isolate(FaultyCluster(nodes(4), rails={"n1": ["rdmap144s27"]}, nic_line=EFA_LINES), transport="efa")
    (path,) = by_level(outcome, "path")
    assert path["conclusion"] == "fabric"
    (nic,) = by_level(outcome, "nic")
    assert nic["conclusion"] == "found" and nic["nics"] == ["rdmap144s27"] and nic["cleared"] == ["rdmap16s27", "rdmap32s27", "rdmap160s27"]
    assert [run["env"] for run in nic["runs"]][2] == [{"name": "FI_EFA_IFACE", "value": "rdmap144s27"}]


# Each cloud's network-topology labels, as its documentation names them (_lib/nccl/isolation.yaml's header), coarsest
# first: the first label whose values differ names the link.
CLOUD_LABELS = {
    "azure": ["kubernetes.azure.com/ppg"],
    "oci": ["oci.oraclecloud.com/rdma.hpc_island_id", "oci.oraclecloud.com/rdma.network_block_id", "oci.oraclecloud.com/rdma.local_block_id"],
    "coreweave": [
        "backend.coreweave.cloud/fabric",
        "ib.coreweave.cloud/fabric",
        "ib.coreweave.cloud/superpod",
        "backend.coreweave.cloud/leafgroup",
        "ib.coreweave.cloud/leafgroup",
        "node.coreweave.cloud/rack",
        "ds.coreweave.com/nvlink.domain",
    ],
    "nebius": ["topology.nebius.com/gpu-cluster-id", "topology.nebius.com/tier-2", "topology.nebius.com/tier-1", "topology.nebius.com/tier-0"],
}


@pytest.mark.parametrize("cloud", sorted(CLOUD_LABELS))
def test_each_clouds_topology_labels_name_domains_coarsest_first(cloud):
    keys = isolation_parts.topology_labels()
    wanted = CLOUD_LABELS[cloud]
    assert [k for k in keys if k in wanted] == wanted
    assert keys.index("topology.kubernetes.io/zone") < keys.index(wanted[0]) and keys[-1] == "nvidia.com/gpu.clique"
    # Four nodes sharing the zone and every coarser label; the finest splits them in two.
    labels = {}
    for i in range(4):
        node = dict((key, "%s-v" % key.rsplit("/", 1)[-1]) for key in wanted[:-1])
        node.update({"topology.kubernetes.io/zone": "z1", wanted[-1]: "d%d" % (i // 2)})
        labels["n%d" % i] = node
    key, groups = isolation_parts.split_by_domain(nodes(4), labels, keys)
    assert key == wanted[-1] and groups == {"d0": ["n0", "n1"], "d1": ["n2", "n3"]}
    assert isolation_parts.domains_between("n0", "n3", labels, keys) == {"key": wanted[-1], "domains": ["d0", "d1"]}
    assert isolation_parts.domains_between("n0", "n1", labels, keys) is None
    if len(wanted) > 1:
        # A coarser label that differs names the link first.
        labels["n3"][wanted[0]] = "other"
        assert isolation_parts.domains_between("n0", "n3", labels, keys)["key"] == wanted[0]
        assert isolation_parts.split_by_domain(nodes(4), labels, keys)[0] == wanted[0]


def test_bad_part_results_are_refused_by_field():
    with pytest.raises(ConfigError, match=r"part_results\[0\].verdict"):
        isolation_parts.next_step({"outcome": "found", "culprits": []}, {}, [{"nodes": ["a", "b"], "verdict": "slow", "probe": {"kind": "paths"}}])


def test_a_group_slow_alone_is_split_again_by_the_next_label():
    labels = dict(("n%d" % i, {"topology.k8s.aws/network-node-layer-2": "l2-%d" % (i // 8), LAYER: "nn-%d" % (i // 4)}) for i in range(16))
    outcome = isolate(FaultyCluster(nodes(16), links=[["nn-0", "nn-1"]], labels=labels))
    (link,) = by_level(outcome, "link")
    assert link["conclusion"] == "found" and link["links"][0]["key"] == LAYER and link["links"][0]["domains"] == ["nn-0", "nn-1"]
    assert link["jobs"] == 4 and [run["domain"] for run in link["runs"]] == ["l2-0", "l2-1", "nn-0", "nn-1"]
    assert [run["verdict"] for run in link["runs"]] == ["fail", "pass", "pass", "pass"]


def test_a_run_without_mpirun_keeps_its_node_conclusion_and_says_why_no_path_was_probed():
    job = trainjob()
    job["spec"]["trainer"] = dict(job["spec"]["trainer"], command=["torchrun"], args=["train.py"])
    outcome = isolate(FaultyCluster(nodes(4), nvlink=["n2"]), job=job)
    assert [c["node"] for c in outcome["conclusion"]["culprits"]] == ["n2"] and outcome["part_results"] == []
    (path,) = by_level(outcome, "path")
    assert path["conclusion"] == "not_probed" and "no mpirun" in path["reason"]


def test_the_report_carries_each_conclusion_with_its_runs():
    outcome = isolate(FaultyCluster(nodes(4), nvlink=["n2"]))
    entry = dict(cluster_result.isolation_record({"reason": "verdict fail"}, outcome), cluster="c", outcome="Complete")
    (cluster,) = report.build_report({"c": entry}, run_id="r")["clusters"]
    (path,) = [part for part in cluster["isolation"]["parts"] if part["level"] == "path"]
    assert path["conclusion"] == "nvlink" and len(path["paths"]) == 3 and "n2 nvlink" in cluster["reason"]
    assert '"conclusion": "nvlink"' in report.render_json(report.build_report({"c": entry}, run_id="r"))


def test_one_nic_runs_are_held_to_one_nics_share_not_to_the_whole_pairs_thresholds():
    # A real NIC alone carries its share of a pair's busbw (46-48 GB/s per NDR NIC, NVIDIA/nccl-tests#290): held to
    # the whole pair's thresholds every good NIC would be slow and a single slow rail read as the node's whole network.
    cluster = FaultyCluster(nodes(4), rails={"n1": ["mlx5_2"]})
    unshared = isolation_run.run_isolation(
        cluster,
        trainjob(),
        cluster.nodes,
        cluster.judge_for(2),
        max_jobs=32,
        max_minutes=600,
        clock=cluster.clock,
        parts={"transport": "ib", "judge_for": cluster.judge_for},
    )
    assert by_level(unshared, "nic")[0]["conclusion"] == "every_rail"
    (nic,) = by_level(isolate(FaultyCluster(nodes(4), rails={"n1": ["mlx5_2"]})), "nic")
    assert nic["conclusion"] == "found" and nic["nics"] == ["mlx5_2"]
    assert [run["busbw"] for run in nic["runs"]] == [90.0, 90.0, 22.5, 90.0]


class UnevenRails(FaultyCluster):
    """A NIC of n1 at FACTOR of its siblings: above one NIC's share of the pair's thresholds, below its siblings."""

    factor = 0.85

    def busbw(self, name):
        value = FaultyCluster.busbw(self, name)
        nodes, env = self.jobs[name]
        return value * self.factor if "n1" in nodes and env.get("NCCL_IB_HCA") == "=mlx5_1" else value


def test_a_nic_well_below_its_siblings_is_named_though_above_its_share():
    cluster = UnevenRails(nodes(4), rails={"n1": ["mlx5_3"]})
    (nic,) = by_level(isolate(cluster), "nic")
    runs = dict((run["nic"], run) for run in nic["runs"])
    assert runs["mlx5_1"]["verdict"] == "pass" and runs["mlx5_1"]["busbw"] == 76.5 and runs["mlx5_1"]["below_siblings"] == 90.0
    assert nic["conclusion"] == "found" and nic["nics"] == ["mlx5_1", "mlx5_3"] and nic["cleared"] == ["mlx5_0", "mlx5_2"]
    assert "mlx5_1 76.5 GB/s, 15 % below the median 90.0 GB/s of the others" in nic["reason"]
    # Within the catalogue's percent (10) of the siblings it is not.
    cluster = UnevenRails(nodes(4), rails={"n1": ["mlx5_3"]})
    cluster.factor = 0.95
    (nic,) = by_level(isolate(cluster), "nic")
    assert nic["nics"] == ["mlx5_3"] and "below_siblings" not in nic["runs"][1]


def test_below_siblings_compares_with_the_others_median_and_spares_exactly_the_percent():
    assert isolation_parts.below_siblings({"a": 90.0, "b": 90.0, "c": 81.0, "d": 80.9}, 10) == {"d": (80.9, 90.0)}  # c is exactly 10 % below 90: spared
    assert isolation_parts.below_siblings({"a": 90.0, "b": 81.0}, 10) == {}
    assert isolation_parts.below_siblings({"a": 90.0, "b": 80.0}, 10) == {"b": (80.0, 90.0)}
    assert isolation_parts.below_siblings({"a": 90.0}, 10) == {}
    assert isolation_parts.peer_percent() == 10.0
    with pytest.raises(ConfigError, match="peers.percent"):
        isolation_parts.peer_percent({"peers": {"percent": 100}})


def test_the_nic_runs_of_two_culprits_with_other_partners_share_their_rounds():
    # One NIC per run on a culprit (each run needs all its GPUs), but two culprits' runs go in parallel.
    cluster = FaultyCluster(nodes(8), rails={"n1": ["mlx5_2"], "n6": ["mlx5_0"]})
    outcome = isolate(cluster)
    nics = dict((part["node"], part["nics"]) for part in by_level(outcome, "nic"))
    assert nics == {"n1": ["mlx5_2"], "n6": ["mlx5_0"]}
    rail_rounds = [entry for entry in outcome["rounds"] if any(p["kind"] == "rails" for p in entry.get("probes") or [])]
    assert len(rail_rounds) == len(NICS) and all(len(entry["probes"]) == 2 for entry in rail_rounds)
    assert all(not set(entry["pairs"][0]) & set(entry["pairs"][1]) for entry in rail_rounds)


def test_nic_runs_without_a_result_leave_the_rails_undetermined_not_good():
    def run(verdict, busbw=None):
        return {"verdict": verdict, "busbw": busbw, "nodes": ["n1", "n0"], "reason": "NET/OFI Unable to find a usable device" if verdict == "error" else ""}

    nics = ["rdmap16s27", "rdmap32s27"]
    percent = isolation_parts.peer_percent()
    every = isolation_parts._nic_part("n1", nics, dict((nic, run("error")) for nic in nics), percent)  # pylint: disable=protected-access
    assert every["conclusion"] == "undetermined" and every["errors"] == nics and every["cleared"] == [] and every["nics"] == []
    assert "nothing on the others; no result on NIC(s) rdmap16s27, rdmap32s27 (NET/OFI Unable to find a usable device)" in every["reason"]
    some = isolation_parts._nic_part("n1", nics, {"rdmap16s27": run("pass", 90.0), "rdmap32s27": run("error")}, percent)  # pylint: disable=protected-access
    assert some["conclusion"] == "undetermined" and some["cleared"] == ["rdmap16s27"] and "good on rdmap16s27" in some["reason"]
    slow = isolation_parts._nic_part("n1", nics, {"rdmap16s27": run("fail", 20.0), "rdmap32s27": run("error")}, percent)  # pylint: disable=protected-access
    assert slow["conclusion"] == "undetermined" and slow["nics"] == ["rdmap16s27"] and "none good" in slow["reason"]
    three = ["a", "b", "c"]
    found = isolation_parts._nic_part(
        "n1", three, {"a": run("fail", 20.0), "b": run("pass", 90.0), "c": run("error")}, percent
    )  # pylint: disable=protected-access
    assert found["conclusion"] == "found" and found["nics"] == ["a"] and found["errors"] == ["c"] and "no result on NIC(s) c" in found["reason"]


class P5Cluster(FaultyCluster):
    """A P5 pair's runs: a run FI_EFA_IFACE limits carries its devices' share of the node's 32."""

    def busbw(self, name):
        nodes, env = self.jobs[name]
        value = (90.0 if self.is_slow(name) else 360.0) * (NETWORK_ONLY if env.get("NCCL_P2P_DISABLE") == "1" else 1.0)
        iface = env.get("FI_EFA_IFACE", "all")
        return value * (len(iface.split(",")) / 32.0 if iface != "all" else 1.0)


def test_a_p5_one_nic_run_selects_one_nccl_device_whole_rail_group_held_to_an_eighth():
    bad = P5_GROUPS[5][2]  # the third EFA device of NCCL device 5: never named by aws-ofi-nccl's GUID lines
    outcome = isolate(P5Cluster(nodes(4), rails={"n1": [bad]}, nic_line=P5_LINES), transport="efa")
    (nic,) = by_level(outcome, "nic")
    assert nic["conclusion"] == "found" and nic["nics"] == [P5_GROUPS[5][0]], nic
    assert [run["env"] for run in nic["runs"]] == [[{"name": "FI_EFA_IFACE", "value": ",".join(devices)}] for devices in P5_GROUPS]
    assert [run["devices"] for run in nic["runs"]] == P5_GROUPS
    assert "run on its whole EFA rail group (%s = %s)" % (P5_GROUPS[5][0], ", ".join(P5_GROUPS[5])) in nic["reason"]
    # held to one NCCL device's share (1/8) of the pair's thresholds: a good group passes at 360/8
    rails = [entry for entry in outcome["rounds"] if [p["kind"] for p in entry.get("probes") or []] == ["rails"]]
    assert len(rails) == 8 and all(entry["probes"][0]["of"] == 8 for entry in rails)


def test_a_p5_log_without_its_topology_leaves_the_rails_not_probed_with_why():
    guid_only = "\n".join(line for line in P5_LINES.splitlines() if "NIC group" not in line)
    outcome = isolate(P5Cluster(nodes(4), rails={"n1": [P5_GROUPS[5][2]]}, nic_line=guid_only), transport="efa")
    (nic,) = by_level(outcome, "nic")
    assert nic["conclusion"] == "not_probed" and nic["jobs"] == 0
    assert "names 8 NCCL devices but not the EFA devices of each" in nic["reason"] and "found 32 nics" in nic["reason"]


def test_rail_groups_of_published_aws_ofi_nccl_output():
    # P5en (NVIDIA/nccl#1597): 16 EFA devices, two per NCCL device; host 8h200-3 printed groups 0-3 before the cut
    hosts, found, why = isolation_parts.topology_groups([real("nccl-nics/aws-ofi-p5en-nic-groups-nccl-1597.log")], "efa")
    assert (found, why) == (16, "")
    assert hosts["8h200-3"] == [["rdmap86s0", "rdmap85s0"], ["rdmap88s0", "rdmap87s0"], ["rdmap111s0", "rdmap110s0"], ["rdmap113s0"]]
    assert hosts["8h200-2"] == [["rdmap163s0", "rdmap162s0"]]
    # a partial topology does not group the devices a run names: not probed, with why
    groups, why = isolation_parts.rail_groups_in([real("nccl-nics/aws-ofi-p5en-nic-groups-nccl-1597.log")], "efa", ["rdmap86s0", "rdmap88s0"])
    assert groups == {} and "does not group the 2 NCCL devices" in why
    # the device the topology line names at 0000:31:00.0 is the one the GUID line names rdmap49s0 (the same log)
    text = real("nccl-nics/aws-ofi-1.16.2-guid-of-rdmap49s0.log")
    nics = isolation_parts.nics_in([text], "efa")
    assert nics == ["rdmap49s0"] and isolation_parts.rail_groups_in([text], "efa", nics) == ({"rdmap49s0": ["rdmap49s0"]}, "")
    # p4d: no topology line, `found 1 nics` for its one NCCL device: the device is its own group
    text = real("nccl-nics/aws-ofi-1.16.2-p4d-guid-of-rdmap16s27.log")
    assert isolation_parts.rail_groups_in([text], "efa", isolation_parts.nics_in([text], "efa")) == ({"rdmap16s27": ["rdmap16s27"]}, "")
    # InfiniBand: each NIC is its own rail
    assert isolation_parts.rail_groups_in([NIC_LINE], "ib", NICS) == (dict((nic, [nic]) for nic in NICS), "")


def test_pci_device_names():
    assert isolation_parts.pci_device_name("0000:10:1b.0", "rdmap{bus}s{slot}") == "rdmap16s27"  # p4d, aws/aws-ofi-nccl#64
    assert isolation_parts.pci_device_name("0000:10:1b.1", "rdmap{bus}s{slot}") is None
    assert isolation_parts.pci_device_name("10:1b.0", "rdmap{bus}s{slot}") is None


# What the mutation run of judging/isolation_parts.py (docs/mutation.md) found untested. The rounds' inputs come back
# from Ansible's variables as new strings, not this file's interned literals (a `==` mutated to `is` passed every test
# built from literals): the flow below reads every input through JSON, as the role's facts are.
def roundtrip(value):
    return json.loads(json.dumps(value))


FLOW_CONCLUSION = {
    "outcome": "culprits",
    "culprits": [
        {
            "node": "n1",
            "evidence": [
                {"nodes": ["n1", "n3"], "verdict": "fail", "busbw": 100.0},
                {"nodes": ["n1", "n2"], "verdict": "fail", "busbw": 80.0},
                # the slowest pair, but with a partner not proved good: not the one repeated
                {"nodes": ["n1", "n5"], "verdict": "fail", "busbw": 10.0},
                {"nodes": ["n1", "n4"], "verdict": "pass", "busbw": 360.0},
            ],
        }
    ],
    # n2 is good by both the pair rounds and the caller: still good (the union, not the difference)
    "good": ["n2", "n3"],
}
FLOW_CONTEXT = {
    "transport": "ib",
    "nics": {"n1": ["mlx5_0", "mlx5_1"]},
    "labels": {},
    "mnnvl": False,
    "known_good": ["n2", "n4"],
    "nodes": ["n1", "n2", "n3", "n4", "n5"],
}
NETWORK_ENV = isolation_parts.network_only_env()


def test_the_rounds_read_back_from_the_roles_variables_name_the_same_parts():
    step = isolation_parts.next_step(roundtrip(FLOW_CONCLUSION), roundtrip(FLOW_CONTEXT), [], max_jobs=10)
    assert step == {
        "state": "run",
        "jobs": [
            {"nodes": ["n1", "n2"], "env": NETWORK_ENV, "probe": {"kind": "paths", "node": "n1", "path": "network"}},
            {"nodes": ["n3", "n4"], "env": NETWORK_ENV, "probe": {"kind": "paths", "node": "n1", "path": "control"}},
        ],
    }
    results = [
        {"nodes": ["n1", "n2"], "verdict": "fail", "busbw": 50.0, "probe": {"kind": "paths", "node": "n1", "path": "network"}},
        {"nodes": ["n3", "n4"], "verdict": "pass", "busbw": 200.0, "probe": {"kind": "paths", "node": "n1", "path": "control"}},
    ]
    step = isolation_parts.next_step(roundtrip(FLOW_CONCLUSION), roundtrip(FLOW_CONTEXT), roundtrip(results), max_jobs=10)
    assert step == {
        "state": "run",
        "jobs": [
            {"nodes": ["n1", "n2"], "env": [{"name": "NCCL_IB_HCA", "value": "=mlx5_0"}], "probe": {"kind": "rails", "node": "n1", "nic": "mlx5_0", "of": 2}}
        ],
    }
    results += [
        {"nodes": ["n1", "n2"], "verdict": "pass", "busbw": 100.0, "probe": {"kind": "rails", "node": "n1", "nic": "mlx5_0", "of": 2}},
        {"nodes": ["n1", "n2"], "verdict": "fail", "busbw": 20.0, "probe": {"kind": "rails", "node": "n1", "nic": "mlx5_1", "of": 2}},
    ]
    step = isolation_parts.next_step(roundtrip(FLOW_CONCLUSION), roundtrip(FLOW_CONTEXT), roundtrip(results), max_jobs=10)
    path, nic = step["parts"]
    assert (step["state"], step["pending"]) == ("done", [])
    assert path == {
        "level": "path",
        "node": "n1",
        "conclusion": "fabric",
        "reason": "n1: slow network-only too: its network path is at fault (50.0 GB/s network-only beside 200.0 GB/s on the good pair n3+n4 (is more "
        "than 10 % below); NVLink not proved good: the run did not enable multi-node NVLink (burnin_enable_mnnvl), so a pair has no NVLink path "
        "between its nodes) (n1+n2 fail 80.0 GB/s; network-only n1+n2 fail 50.0 GB/s; control network-only n3+n4 pass 200.0 GB/s)",
        "paths": [
            {"nodes": ["n1", "n2"], "verdict": "fail", "busbw": 80.0, "path": "all"},
            {"nodes": ["n1", "n2"], "verdict": "fail", "busbw": 50.0, "path": "network"},
            {"nodes": ["n3", "n4"], "verdict": "pass", "busbw": 200.0, "path": "control"},
        ],
        "jobs": 2,
    }
    assert (nic["conclusion"], nic["nics"], nic["cleared"], nic["errors"], nic["jobs"]) == ("found", ["mlx5_1"], ["mlx5_0"], [], 2)
    assert nic["reason"] == (
        "n1: slow on NIC(s) mlx5_1 alone, good on mlx5_0 (mlx5_1 20.0 GB/s, 80 % below the median 100.0 GB/s of the others; more than 10 % "
        "below its siblings is slow)"
    )
    assert isolation_parts.summary(roundtrip(step["parts"])) == "n1 fabric, n1 NIC mlx5_1"


@pytest.mark.parametrize(
    "good, chosen",
    [
        # the partner is exactly the good set: still a good partner (a subset, not a proper one)
        ({"n2"}, ["n1", "n2"]),
        ({"n2", "n3"}, ["n1", "n2"]),
        ({"n3"}, ["n1", "n3"]),
        (set(), None),
    ],
)
def test_the_slow_pair_repeated_is_the_slowest_with_a_good_partner(good, chosen):
    culprit = roundtrip(FLOW_CONCLUSION["culprits"][0])
    got = isolation_parts._slowest_pair(culprit, good)
    assert (got["nodes"] if got else None) == chosen


@pytest.mark.parametrize(
    "network, control, slow",
    [
        # exactly the percent below the control is not slow; a hair more is
        (90.0, 100.0, False),
        (89.9, 100.0, True),
        (100.0, 100.0, False),
    ],
)
def test_a_network_only_run_is_slow_only_more_than_the_percent_below_its_control(network, control, slow):
    got, why = isolation_parts.beside_control(
        {"nodes": ["a", "b"], "verdict": "pass", "busbw": network}, {"nodes": ["c", "d"], "verdict": "pass", "busbw": control}, 10.0
    )
    assert got is slow
    assert why == "%.1f GB/s network-only beside %.1f GB/s on the good pair c+d (%s more than 10 %% below)" % (network, control, "is" if slow else "not")


def test_a_control_that_gave_no_result_is_not_measured_though_it_carries_a_figure():
    network = roundtrip({"nodes": ["a", "b"], "verdict": "fail", "busbw": 10.0})
    control = roundtrip({"nodes": ["c", "d"], "verdict": "error", "busbw": 100.0})
    assert isolation_parts.beside_control(network, control, 10.0) == (
        True,
        "the control pair gave no result: network-only judged against the 2-node thresholds",
    )
    assert isolation_parts.beside_control(dict(network, verdict="pass"), None, 10.0) == (
        False,
        "no control pair ran: network-only judged against the 2-node thresholds",
    )


@pytest.mark.parametrize(
    "busbw, below",
    [
        ({"m0": 100.0, "m1": 100.0, "m2": 89.0}, {"m2": (89.0, 100.0)}),
        # the first NIC in the order is compared with the others too (with all the others, not the ones before it)
        ({"m0": 89.0, "m1": 100.0, "m2": 100.0}, {"m0": (89.0, 100.0)}),
        ({"m0": 100.0, "m1": 89.0, "m2": 100.0}, {"m1": (89.0, 100.0)}),
        ({"m0": 100.0, "m1": 100.0, "m2": 90.0}, {}),
        ({"m0": 10.0}, {}),
    ],
)
def test_a_nic_is_below_its_siblings_against_every_other_nic(busbw, below):
    assert isolation_parts.below_siblings(busbw, 10.0) == below


def test_a_nic_runs_reason_keeps_200_characters_of_a_failed_runs_reason():
    done = {
        "m0": {"nodes": ["a", "b"], "verdict": "pass", "busbw": 100.0, "probe": {"kind": "rails"}},
        "m1": {"nodes": ["a", "b"], "verdict": "error", "reason": "r" * 199 + "XY", "probe": {"kind": "rails"}},
    }
    part = isolation_parts._nic_part("a", ["m0", "m1"], done, 10.0)
    assert part["conclusion"] == "undetermined"
    assert part["reason"] == "a: good on m0 on the others; no result on NIC(s) m1 (%s)" % ("r" * 199 + "X")


def test_the_link_parts_that_ran_nothing_count_no_job():
    unread = isolation_parts._pair_link(["a", "b"], None, ["l0"])
    shared = isolation_parts._pair_link(["a", "b"], {"a": {"l0": "x"}, "b": {"l0": "x"}}, ["l0"])
    assert (unread["conclusion"], unread["jobs"]) == ("undetermined", 0)
    assert (shared["conclusion"], shared["jobs"], shared["links"]) == ("nodes", 0, [{"key": None, "domains": [], "nodes": ["a", "b"]}])


# l0 splits the run in three; the group A of l0 is slow alone and l1 splits it in two; l2 splits it another way.
GROUP_LABELS = {
    "a1": {"l0": "A", "l1": "A1", "l2": "X"},
    "a2": {"l0": "A", "l1": "A1", "l2": "Y"},
    "a3": {"l0": "A", "l1": "A2", "l2": "X"},
    "a4": {"l0": "A", "l1": "A2", "l2": "Y"},
    "b1": {"l0": "B", "l1": "B1", "l2": "X"},
    "b2": {"l0": "B", "l1": "B1", "l2": "Y"},
    "c1": {"l0": "C", "l1": "C1", "l2": "X"},
    "c2": {"l0": "C", "l1": "C1", "l2": "Y"},
}


def link_run(nodes, verdict, key, domain):
    return {"nodes": nodes, "verdict": verdict, "busbw": 90.0 if verdict == "fail" else 360.0, "probe": {"kind": "links", "key": key, "domain": domain}}


@pytest.mark.parametrize("slow_group", [["a1", "a2", "a3", "a4"], ["a1", "a2", "a3"]])
def test_a_group_slow_alone_of_three_or_more_nodes_is_split_by_the_next_label(slow_group):
    labels = dict((node, GROUP_LABELS[node]) for node in slow_group + ["b1", "b2", "c1", "c2"])
    keys = ["l0", "l1", "l2"]
    outer = [link_run(slow_group, "fail", "l0", "A"), link_run(["b1", "b2"], "pass", "l0", "B"), link_run(["c1", "c2"], "pass", "l0", "C")]
    part, jobs = isolation_parts._group_links(sorted(labels), labels, keys, roundtrip(outer))
    assert part is None
    assert jobs == [{"nodes": ["a1", "a2"], "env": [], "probe": {"kind": "links", "key": "l1", "domain": "A1"}}] + (
        [{"nodes": ["a3", "a4"], "env": [], "probe": {"kind": "links", "key": "l1", "domain": "A2"}}] if len(slow_group) == 4 else []
    )
    inner = [link_run(job["nodes"], "pass", "l1", job["probe"]["domain"]) for job in jobs]
    part, jobs = isolation_parts._group_links(sorted(labels), labels, keys, roundtrip(outer + inner))
    assert (part["conclusion"], part["links"][0]["key"], part["links"][0]["domains"], jobs) == ("found", "l1", ["A1", "A2"], [])
    # the outer round's three runs and the inner round's
    assert part["jobs"] == 3 + len(inner) and len(part["runs"]) == 3 + len(inner)


def test_a_malformed_part_result_is_refused_with_its_index_and_the_allowed_values():
    with pytest.raises(ConfigError) as raised:
        isolation_parts.next_step(
            {}, {}, [{"nodes": [], "verdict": "pass", "probe": {"kind": "paths"}}, {"nodes": [], "verdict": "pass", "probe": {"kind": "x"}}]
        )
    assert str(raised.value) == "part_results[1].probe.kind: must be one of paths, rails, links"
    with pytest.raises(ConfigError) as raised:
        isolation_parts.next_step({}, {}, [{"nodes": [], "verdict": "ok", "probe": {"kind": "paths"}}])
    assert str(raised.value) == "part_results[0].verdict: must be pass, warn, fail or error, got 'ok'"


@pytest.mark.parametrize("extra, kept", [(0, True), (1, False)])
def test_a_nic_or_topology_line_of_exactly_max_line_characters_is_read_and_one_more_is_not(extra, kept):
    nic = "h:1:1 [0] NCCL INFO NET/OFI GUID of rdmap49s0: 00"
    line = nic + " " * (4096 - len(nic) + extra)
    assert len(line) == 4096 + extra
    assert isolation_parts.nics_in([line], "efa") == (["rdmap49s0"] if kept else [])
    group = "h:1:1 [0] NCCL INFO NET/OFI NIC group 0 device #0 0000:31:00.0"
    line = group + " " * (4096 - len(group) + extra)
    assert isolation_parts.topology_groups([line], "efa")[0] == ({"h": [["rdmap49s0"]]} if kept else {})


def test_the_nvlink_proof_of_published_logs():
    # NCCL's own `MNNVL 0` on a single node (tests/fixtures/real/nccl/single-node-mnnvl-0-p2p-direct.log): reported,
    # not used; the same lines saying `MNNVL 1`: used; a log that does not say (the A3 Mega run): not proved used.
    zero = real("nccl/single-node-mnnvl-0-p2p-direct.log")
    assert isolation_parts.nvlink_proof([zero]) == {"info_lines": 18, "mnnvl": False, "net": {}}
    assert isolation_parts.nvlink_proof([zero.replace(" MNNVL 0", " MNNVL 1")])["mnnvl"] is True
    assert isolation_parts.nvlink_proof([real("nccl/gcp-a3mega-all-reduce-2x8-h100-pass.log")])["mnnvl"] is False
    assert isolation_parts.nvlink_proof([real("nccl/k8s-channels-via-net-ib.log")]) == {"info_lines": 15, "mnnvl": False, "net": {"IB": 15}}


def test_the_summary_names_only_found_parts():
    parts = roundtrip(
        [
            {"level": "path", "node": "n1", "conclusion": "not_reproduced"},
            {"level": "path", "node": "n2", "conclusion": "both"},
            {"level": "nic", "node": "n2", "conclusion": "every_rail", "nics": ["m0"]},
            {"level": "nic", "node": "n3", "conclusion": "found", "nics": ["m0", "m1"]},
            {"level": "link", "conclusion": "nodes", "links": [{"key": None, "domains": []}]},
            {"level": "link", "conclusion": "found", "links": [{"key": "l0", "domains": ["A", "B"]}, {"key": "l0", "domains": ["B", "C"]}]},
        ]
    )
    assert isolation_parts.summary(parts) == "n2 both, n3 NIC m0, m1, link l0 A - B, link l0 B - C"
    assert isolation_parts.summary([]) == ""


# The survivors of the recheck (docs/mutation.md, "Issue 47: cluster/k8s_errors.py, ..."): every combination of the
# two path runs, an NVLink-only round read back, the budget's end on both sides, the link rounds read back.
PROVEN = {"info_lines": 10, "mnnvl": True, "net": {}}
SLOW_PAIR = {"nodes": ["n1", "n2"], "verdict": "fail", "busbw": 80.0}
BESIDE = "no control pair ran: network-only judged against the 2-node thresholds"


def path_run(path, verdict, busbw, **extra):
    return dict({"nodes": ["n1", "n2"], "verdict": verdict, "busbw": busbw, "probe": {"kind": "paths", "node": "n1", "path": path}}, **extra)


@pytest.mark.parametrize(
    "network, nvlink, conclusion, why",
    [
        ("fail", "fail", "both", "slow network-only and slow NVLink-only: its NVLink and its network path are both at fault (%s)" % BESIDE),
        ("fail", "pass", "fabric", "slow network-only, passes NVLink-only: its network path is at fault, its NVLink proved good (%s)" % BESIDE),
        ("pass", "fail", "nvlink", "good network-only, slow NVLink-only: its NVLink (or NVSwitch) is at fault (%s)" % BESIDE),
        (
            "pass",
            "pass",
            "not_reproduced",
            "good network-only and passes NVLink-only: neither path alone reproduces the slow pair (the two together, or a passing fault; %s)" % BESIDE,
        ),
    ],
)
def test_each_combination_of_the_two_path_runs_names_its_part(network, nvlink, conclusion, why):
    part = isolation_parts._paths_conclusion(
        "n1", SLOW_PAIR, path_run("network", network, 50.0), path_run("nvlink", nvlink, 100.0, nvlink_proof=PROVEN), "", None, 10.0
    )
    assert part["conclusion"] == conclusion
    assert part["reason"] == "n1: %s (n1+n2 fail 80.0 GB/s; network-only n1+n2 %s 50.0 GB/s; NVLink-only n1+n2 %s 100.0 GB/s)" % (why, network, nvlink)


def test_an_nvlink_only_run_without_a_result_leaves_the_path_undetermined_with_its_reason():
    part = isolation_parts._paths_conclusion(
        "n1", SLOW_PAIR, path_run("network", "fail", 50.0), path_run("nvlink", "error", 100.0, reason="pod evicted"), "", None, 10.0
    )
    assert (part["conclusion"], part["reason"]) == (
        "undetermined",
        "n1: the NVLink-only run gave no result: pod evicted (n1+n2 fail 80.0 GB/s; network-only n1+n2 fail 50.0 GB/s; NVLink-only n1+n2 error 100.0 GB/s)",
    )


CLIQUE = "nvidia.com/gpu.clique"
NVLINK_CONCLUSION = {"outcome": "found", "culprits": [{"node": "n1", "evidence": [SLOW_PAIR]}], "good": ["n2"]}
NVLINK_CONTEXT = {"transport": "ib", "nics": {}, "labels": {"n1": {CLIQUE: "c1"}, "n2": {CLIQUE: "c1"}}, "mnnvl": True, "nodes": ["n1", "n2"]}


def test_a_pair_in_one_nvlink_domain_gets_its_nvlink_only_run_and_both_runs_decide():
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(NVLINK_CONTEXT), [], max_jobs=5)
    # one pair, one job at a time: the network-only run first
    assert [job["probe"] for job in step["jobs"]] == [{"kind": "paths", "node": "n1", "path": "network"}]
    results = [path_run("network", "pass", 50.0)]
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(NVLINK_CONTEXT), roundtrip(results), max_jobs=5)
    assert step["jobs"] == [{"nodes": ["n1", "n2"], "env": isolation_parts.nvlink_only_env(), "probe": {"kind": "paths", "node": "n1", "path": "nvlink"}}]
    results.append(path_run("nvlink", "fail", 100.0, nvlink_proof=PROVEN))
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(NVLINK_CONTEXT), roundtrip(results), max_jobs=5)
    ((part),) = step["parts"]
    assert (part["conclusion"], part["jobs"], [item["path"] for item in part["paths"]]) == ("nvlink", 2, ["all", "network", "nvlink"])


@pytest.mark.parametrize("max_jobs, state", [(1, "run"), (0, "done"), (-1, "done")])
def test_the_rounds_end_when_no_job_is_left_and_not_before(max_jobs, state):
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(NVLINK_CONTEXT), [], max_jobs=max_jobs)
    assert step["state"] == state
    if state == "run":
        assert len(step["jobs"]) == 1
    else:
        assert step == {
            "state": "done",
            "parts": [],
            "pending": [{"kind": "paths", "node": "n1", "path": "network"}, {"kind": "paths", "node": "n1", "path": "nvlink"}],
        }


ZONE = "topology.kubernetes.io/zone"
ZONES = {"a1": {ZONE: "A"}, "a2": {ZONE: "A"}, "b1": {ZONE: "B"}, "b2": {ZONE: "B"}}


def test_a_not_reproduced_run_read_back_splits_by_zone_and_a_group_without_a_result_is_undetermined():
    conclusion, context = {"outcome": "not_reproduced", "culprits": [], "good": sorted(ZONES)}, {"labels": ZONES, "nodes": sorted(ZONES)}
    step = isolation_parts.next_step(roundtrip(conclusion), roundtrip(context), [], max_jobs=5)
    assert [job["probe"] for job in step["jobs"]] == [{"kind": "links", "key": ZONE, "domain": "A"}, {"kind": "links", "key": ZONE, "domain": "B"}]
    results = [link_run(["a1", "a2"], "pass", ZONE, "A"), dict(link_run(["b1", "b2"], "pass", ZONE, "B"), verdict="error")]
    step = isolation_parts.next_step(roundtrip(conclusion), roundtrip(context), roundtrip(results), max_jobs=5)
    ((part),) = step["parts"]
    assert (part["conclusion"], part["reason"], part["jobs"]) == ("undetermined", "a group's run gave no result", 2)
    assert isolation_parts._group_links(sorted(ZONES), None, [ZONE], [])[0]["jobs"] == 0


def test_a_slow_group_of_two_nodes_is_the_fault_inside_it_not_split_again():
    labels = {"a1": {"l0": "A", "l1": "A1"}, "a2": {"l0": "A", "l1": "A2"}, "b1": {"l0": "B", "l1": "B1"}, "b2": {"l0": "B", "l1": "B1"}}
    runs = [link_run(["a1", "a2"], "fail", "l0", "A"), link_run(["b1", "b2"], "pass", "l0", "B")]
    part, jobs = isolation_parts._group_links(sorted(labels), labels, ["l0", "l1"], roundtrip(runs))
    assert (part["conclusion"], jobs) == ("inside", [])


# l1 at index 1 and 2 of the labels: `index + 1` mutated to `index ^ 1`, `& 1`, `% 1` or `- 1` gives another slice at
# one of the two
@pytest.mark.parametrize("coarser", [[], ["lz"]])
def test_a_slow_group_is_split_by_the_labels_after_its_own_only(coarser):
    # l0 is missing on the other groups' nodes (so the run is split by l1) but splits the slow group: it is not a
    # finer domain of it, the next label (l2) is.
    labels = {
        "a1": {"l0": "P", "l1": "A", "l2": "X"},
        "a2": {"l0": "P", "l1": "A", "l2": "Y"},
        "a3": {"l0": "Q", "l1": "A", "l2": "X"},
        "a4": {"l0": "Q", "l1": "A", "l2": "Y"},
        "b1": {"l1": "B", "l2": "X"},
        "b2": {"l1": "B", "l2": "Y"},
    }
    keys = coarser + ["l0", "l1", "l2"]
    labels = dict((node, dict(values, lz="Z")) for node, values in labels.items())
    runs = [link_run(["a1", "a2", "a3", "a4"], "fail", "l1", "A"), link_run(["b1", "b2"], "pass", "l1", "B")]
    part, jobs = isolation_parts._group_links(sorted(labels), labels, keys, roundtrip(runs))
    assert part is None
    assert [job["probe"] for job in jobs] == [{"kind": "links", "key": "l2", "domain": "X"}, {"kind": "links", "key": "l2", "domain": "Y"}]


@pytest.mark.parametrize(
    "percent, allowed", [(0, False), (0.5, True), (10, True), (99.9, True), (100, False), (-5, False), (150, False), (True, False), ("10", False)]
)
def test_the_peer_percent_is_above_0_and_below_100(percent, allowed):
    cat = {"peers": {"percent": percent}}
    if allowed:
        assert isolation_parts.peer_percent(cat) == float(percent)
    else:
        with pytest.raises(ConfigError, match="peers.percent"):
            isolation_parts.peer_percent(cat)


def test_the_first_nic_without_a_result_gives_the_reason():
    done = {
        "m0": {"nodes": ["a", "b"], "verdict": "fail", "busbw": 10.0},
        "m1": {"nodes": ["a", "b"], "verdict": "error", "reason": "first"},
        "m2": {"nodes": ["a", "b"], "verdict": "error", "reason": "second"},
    }
    assert isolation_parts._nic_part("a", ["m0", "m1", "m2"], done, 10.0)["reason"] == (
        "a: slow on NIC(s) m0 alone, none good on the others; no result on NIC(s) m1, m2 (first)"
    )


def test_a_long_line_is_skipped_and_the_lines_after_it_are_read():
    assert isolation_parts.MAX_LINE == 4096
    assert isolation_parts.nics_in(["x" * 4097 + "\n" + NIC_LINE], "ib") == NICS
    groups = "\n".join("h:1:1 [0] NCCL INFO NET/OFI NIC group %d device #0 0000:%02x:00.0" % (group, group) for group in range(70))
    assert len(isolation_parts.topology_groups([groups], "efa")[0]["h"]) == isolation_parts.MAX_NICS == 64


# Survivors of the wider sample (docs/mutation.md): the link's domains by name, the first unmeasured slow pair, the
# `found N nics` count equal to the NCCL devices and not fewer.
def test_a_pair_link_names_both_domains_in_order():
    part = isolation_parts._pair_link(["a", "b"], {"a": {"l0": "X"}, "b": {"l0": "Y"}}, ["l0"])
    assert part["reason"] == "a+b slow though each passes with others: the link between l0 X and Y"


def test_without_a_measured_slow_pair_the_first_slow_one_is_repeated():
    culprit = {
        "node": "n1",
        "evidence": [{"nodes": ["n1", "n2"], "verdict": "fail"}, {"nodes": ["n1", "n3"], "verdict": "warn"}, {"nodes": ["n1", "n4"], "verdict": "fail"}],
    }
    assert isolation_parts._slowest_pair(culprit, {"n2", "n3", "n4"})["nodes"] == ["n1", "n2"]


@pytest.mark.parametrize("found, grouped", [(1, False), (2, True), (3, False)])
def test_a_found_count_groups_one_device_each_only_when_equal_to_the_nccl_devices(found, grouped):
    groups, why = isolation_parts.rail_groups_in(
        ["h:1:1 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found %d nics)" % found], "efa", ["a", "b"]
    )
    assert (groups == {"a": ["a"], "b": ["b"]}) is grouped and (why == "") is grouped


# The rest of the module's mutants (docs/mutation.md, "judging/isolation_parts.py run whole"): the catalogue's check, the
# channel counts of two hosts, the control pair's two nodes, a culprit without a repeatable pair before one with,
# older path results without a path, the last of two runs of one path, the link rounds' fallbacks and texts.
def test_a_catalogue_without_paths_network_only_is_refused_under_its_file(monkeypatch):
    for data in ({"paths": {}}, {"paths": {"network_only": []}}, ["paths"]):
        monkeypatch.setattr(isolation_parts, "_cached", {})
        monkeypatch.setattr(isolation_parts, "read_yaml_file", lambda path, what, data=data: data)
        with pytest.raises(ConfigError) as raised:
            isolation_parts.catalog()
        assert str(raised.value) == "%s: must hold paths.network_only" % isolation_parts.CATALOG_FILE


def test_a_peer_percent_out_of_bounds_is_refused_under_the_catalogues_field():
    with pytest.raises(ConfigError) as raised:
        isolation_parts.peer_percent({"peers": {"percent": 100}})
    assert str(raised.value) == "%s peers.percent: must be a number above 0 and below 100, got 100" % isolation_parts.CATALOG_FILE


def test_the_network_channels_of_every_host_are_added_up():
    # two hosts, one `via NET/<name>` channel each (aws/aws-ofi-nccl's and NVIDIA/nccl-tests' published logs)
    assert isolation_parts.nvlink_proof([real("nccl/aws-ofi-1.1.2-channel-via-net-aws-libfabric.log")])["net"] == {"AWS Libfabric": 2}
    assert isolation_parts.nvlink_proof([real("nccl/nccl2.4-ring-via-net-socket.log")])["net"] == {"Socket": 2}


def test_the_control_pair_is_two_free_good_nodes_in_name_order():
    assert isolation_parts.control_pair({"g3", "g1", "g2"}, set()) == ["g1", "g2"]
    assert isolation_parts.control_pair({"g3", "g1", "g2"}, {"g1"}) == ["g2", "g3"]
    assert isolation_parts.control_pair({"g1", "g2"}, {"g2"}) is None


def test_the_rails_gap_reads_the_catalogue_given():
    cat = {"rails": {"x": {"not_probed": "no one-NIC variable documented"}}}
    assert isolation_parts.rail_gap("x", cat) == "x: no one-NIC variable documented"
    assert isolation_parts.rail_gap(None, cat) == "the transport unknown has no documented one-NIC variable"
    assert isolation_parts.rail_gap("tcpx").startswith("tcpx: ")


def test_rail_groups_without_nics_or_without_a_rule_are_none():
    assert isolation_parts.rail_groups_in([P5_LINES], "efa", []) == ({}, "")
    assert isolation_parts.rail_groups_in([NIC_LINE], "tcpx", NICS) == ({}, "")


def test_a_long_topology_line_is_skipped_and_the_lines_after_it_are_read():
    line = "h:1:1 [0] NCCL INFO NET/OFI NIC group 0 device #0 0000:31:00.0"
    assert isolation_parts.topology_groups(["x" * 4097 + "\n" + line], "efa")[0] == {"h": [["rdmap49s0"]]}


def test_a_topology_group_keeps_64_devices():
    lines = "\n".join("h:1:1 [0] NCCL INFO NET/OFI NIC group 0 device #%d 0000:%02x:00.0" % (device, device) for device in range(70))
    groups = list(isolation_parts.topology_groups([lines], "efa")[0].values())
    assert len(groups) == 1 and len(groups[0]) == 1
    assert groups[0][0] == ["rdmap%ds0" % device for device in range(64)]


def test_without_a_budget_next_step_plans_no_job_and_lists_them_pending():
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(NVLINK_CONTEXT), [])
    assert (step["state"], step["parts"], len(step["pending"])) == ("done", [], 2)


def test_a_culprit_without_a_slow_pair_with_a_good_partner_does_not_end_the_others():
    conclusion = {
        "outcome": "found",
        "culprits": [
            {"node": "n1", "evidence": [{"nodes": ["n1", "n5"], "verdict": "fail"}]},
            {"node": "n3", "evidence": [{"nodes": ["n3", "n2"], "verdict": "fail"}]},
        ],
        "good": ["n2"],
    }
    context = {"transport": "ib", "nics": {}, "labels": {}, "mnnvl": False, "nodes": ["n1", "n2", "n3", "n5"]}
    step = isolation_parts.next_step(roundtrip(conclusion), roundtrip(context), [])
    assert step["pending"] == [{"kind": "paths", "node": "n3", "path": "network"}]
    # and a run whose variables cannot be changed names each culprit not probed
    conclusion["culprits"][0]["evidence"][0]["nodes"] = ["n1", "n2"]
    step = isolation_parts.next_step(roundtrip(conclusion), roundtrip(dict(context, env_refused="no mpirun")), [])
    assert [(part["node"], part["conclusion"], part["reason"], part["jobs"]) for part in step["parts"]] == [
        ("n1", "not_probed", "n1: no mpirun", 0),
        ("n3", "not_probed", "n3: no mpirun", 0),
    ]


def test_without_mnnvl_only_the_network_only_run_is_wanted():
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(dict(NVLINK_CONTEXT, mnnvl=False)), [])
    assert step["pending"] == [{"kind": "paths", "node": "n1", "path": "network"}]


def test_a_path_result_without_a_path_is_the_network_only_run():
    result = {"nodes": ["n1", "n2"], "verdict": "fail", "busbw": 50.0, "probe": {"kind": "paths", "node": "n1"}}
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(dict(NVLINK_CONTEXT, mnnvl=False)), roundtrip([result]), max_jobs=5)
    part = step["parts"][0]
    assert (part["conclusion"], [item["path"] for item in part["paths"]]) == ("fabric", ["all", "network"])


def test_of_two_runs_of_one_path_the_last_decides():
    # the network-only run twice (pass, then fail): fabric, not nvlink
    results = [path_run("network", "pass", 50.0), path_run("network", "fail", 20.0)]
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(dict(NVLINK_CONTEXT, mnnvl=False)), roundtrip(results), max_jobs=5)
    assert step["parts"][0]["conclusion"] == "fabric"
    # the NVLink-only run twice (pass, then fail) after a good network-only run: nvlink, not not_reproduced
    results = [path_run("network", "pass", 50.0), path_run("nvlink", "pass", 100.0, nvlink_proof=PROVEN), path_run("nvlink", "fail", 30.0, nvlink_proof=PROVEN)]
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(NVLINK_CONTEXT), roundtrip(results), max_jobs=5)
    assert step["parts"][0]["conclusion"] == "nvlink"


def test_a_nic_below_its_siblings_carries_their_median_to_a_tenth():
    done = dict(
        (nic, {"nodes": ["a", "b"], "verdict": "pass", "busbw": busbw, "probe": {"kind": "rails", "node": "a", "nic": nic}})
        for nic, busbw in (("m0", 10.0), ("m1", 333.33), ("m2", 333.35))
    )
    part = isolation_parts._nic_part("a", ["m0", "m1", "m2"], done, 10.0)
    assert (part["conclusion"], part["nics"], part["runs"][0]["below_siblings"]) == ("found", ["m0"], 333.3)


def test_only_a_found_nic_part_is_named_in_the_summary():
    parts = [{"level": "nic", "node": "n1", "conclusion": conclusion, "nics": ["m0"]} for conclusion in ("not_reproduced", "undetermined", "not_probed")]
    assert isolation_parts.summary(roundtrip(parts)) == ""


THREE_DOMAINS = dict((node, {"l0": node[0].upper()}) for node in ("a1", "a2", "b1", "b2", "c1", "c2"))


def test_a_slow_link_among_three_domains_is_named_from_the_pairs_across_them_only():
    groups = [link_run([d + "1", d + "2"], "pass", "l0", d.upper()) for d in "abc"]
    pairs = [
        # within A, and with a node outside the run: no link
        {"nodes": ["a1", "a2"], "verdict": "pass", "busbw": 360.0},
        {"nodes": ["a1", "x9"], "verdict": "pass", "busbw": 360.0},
        {"nodes": ["a1", "b1"], "verdict": "pass", "busbw": 360.0},
        {"nodes": ["a2", "c1"], "verdict": "fail", "busbw": 50.0},
        {"nodes": ["b2", "c2"], "verdict": "pass", "busbw": 360.0},
    ]
    part, jobs = isolation_parts._group_links(sorted(THREE_DOMAINS), THREE_DOMAINS, ["l0"], roundtrip(groups), roundtrip(pairs))
    assert jobs == [] and part["conclusion"] == "found"
    assert part["reason"] == "slow across l0 A - C (a2+c1 fail 50.0 GB/s), good within each and across the others: the link(s) between them"
    assert part["links"] == [{"key": "l0", "domains": ["A", "C"], "nodes": ["a2", "c1"]}]
    assert [run.get("domain") or run["domains"] for run in part["runs"]] == ["A", "B", "C", ["A", "B"], ["A", "C"], ["B", "C"]]


def test_a_domain_whose_nodes_are_all_paired_lends_its_first_node_again():
    labels = dict((node, {"l0": node[0].upper()}) for node in ("a1", "a2", "b1", "c1", "d1", "d2"))
    runs = [link_run(["a1", "a2"], "pass", "l0", "A"), link_run(["d1", "d2"], "pass", "l0", "D")]
    part, jobs = isolation_parts._group_links(sorted(labels), labels, ["l0"], roundtrip(runs))
    assert part is None
    # A's and D's nodes are all paired by A - D and B - D: their first node again on either side of a pair
    assert [job["nodes"] for job in jobs] == [["a1", "b1"], ["a2", "c1"], ["a1", "d1"], ["b1", "c1"], ["b1", "d2"], ["c1", "d1"]]


def test_the_nvlink_only_run_sets_the_catalogues_three_variables():
    # _lib/nccl/isolation.yaml paths.nvlink_only: MNNVL on, P2P up to NVLink, the network plugin off (sockets only)
    assert isolation_parts.nvlink_only_env() == [
        {"name": "NCCL_MNNVL_ENABLE", "value": "1"},
        {"name": "NCCL_P2P_LEVEL", "value": "NVL"},
        {"name": "NCCL_NET", "value": "Socket"},
    ]
    assert isolation_parts.nvlink_only_env({"paths": {"network_only": {}}}) == []


def test_each_culprit_gets_its_parts_whatever_the_part_of_the_one_before():
    # n1: good network-only (nvlink, no rails); n3 and n5: slow network-only (fabric) on EFA whose devices the log
    # does not group (rails not probed, with why)
    conclusion = {
        "outcome": "found",
        "culprits": [
            {"node": node, "evidence": [{"nodes": [node, partner], "verdict": "fail"}]} for node, partner in (("n1", "n2"), ("n3", "n4"), ("n5", "n6"))
        ],
        "good": ["n2", "n4", "n6"],
    }
    context = {
        "transport": "efa",
        "nics": {"n3": ["rdmap16s27"], "n5": ["rdmap16s27"]},
        "labels": {},
        "mnnvl": False,
        "nodes": ["n%d" % i for i in range(1, 7)],
    }
    results = [
        dict(path_run("network", verdict, 50.0), nodes=[node, partner], probe={"kind": "paths", "node": node, "path": "network"})
        for node, partner, verdict in (("n1", "n2", "pass"), ("n3", "n4", "fail"), ("n5", "n6", "fail"))
    ]
    step = isolation_parts.next_step(roundtrip(conclusion), roundtrip(context), roundtrip(results), max_jobs=5)
    assert [(part["level"], part["node"], part["conclusion"]) for part in step["parts"]] == [
        ("path", "n1", "nvlink"),
        ("path", "n3", "fabric"),
        ("nic", "n3", "not_probed"),
        ("path", "n5", "fabric"),
        ("nic", "n5", "not_probed"),
    ]
    assert step["parts"][2]["reason"] == "rails not re-run: its log does not group its NCCL devices' EFA devices"


def test_a_nic_without_a_result_read_back_is_an_error_not_a_cleared_nic():
    done = {
        "m0": {"nodes": ["a", "b"], "verdict": "pass", "busbw": 50.0},
        "m1": {"nodes": ["a", "b"], "verdict": "error", "reason": "no EFA device"},
    }
    part = isolation_parts._nic_part("a", ["m0", "m1"], roundtrip(done), 10.0)
    assert (part["conclusion"], part["cleared"], part["errors"]) == ("undetermined", ["m0"], ["m1"])


def test_nodes_that_share_every_domain_are_not_probed_and_count_no_job():
    labels = {"a1": {"l0": "A"}, "a2": {"l0": "A"}}
    part, jobs = isolation_parts._group_links(["a1", "a2"], labels, ["l0"], [])
    assert (part["conclusion"], part["jobs"], jobs) == ("not_probed", 0, [])


@pytest.mark.parametrize(
    "transport, nics, why",
    [
        ("tcpx", {"n1": ["eth1"], "n3": ["eth1"]}, "rails not re-run: tcpx: "),
        ("ib", {}, "rails not re-run: its log lists no NIC"),
    ],
)
def test_rails_not_re_run_are_named_for_each_fabric_culprit_with_no_job(transport, nics, why):
    conclusion = {
        "outcome": "found",
        "culprits": [{"node": node, "evidence": [{"nodes": [node, partner], "verdict": "fail"}]} for node, partner in (("n1", "n2"), ("n3", "n4"))],
        "good": ["n2", "n4"],
    }
    context = {"transport": transport, "nics": nics, "labels": {}, "mnnvl": False, "nodes": ["n1", "n2", "n3", "n4"]}
    results = [
        dict(path_run("network", "fail", 50.0), nodes=[node, partner], probe={"kind": "paths", "node": node, "path": "network"})
        for node, partner in (("n1", "n2"), ("n3", "n4"))
    ]
    step = isolation_parts.next_step(roundtrip(conclusion), roundtrip(context), roundtrip(results), max_jobs=5)
    nic_parts = [part for part in step["parts"] if part["level"] == "nic"]
    assert [(part["node"], part["conclusion"], part["jobs"]) for part in nic_parts] == [("n1", "not_probed", 0), ("n3", "not_probed", 0)]
    assert all(part["reason"].startswith(why) for part in nic_parts)
    if transport == "tcpx":
        assert nic_parts[0]["reason"] == "rails not re-run: %s" % isolation_parts.rail_gap("tcpx")


def test_a_job_that_shares_a_node_waits_and_the_next_free_one_still_runs():
    conclusion = {
        "outcome": "found",
        "culprits": [{"node": node, "evidence": [{"nodes": [node, partner], "verdict": "fail"}]} for node, partner in (("n1", "n2"), ("n3", "n4"))],
        "good": ["n2", "n4"],
    }
    labels = dict((node, {CLIQUE: "c1"}) for node in ("n1", "n2", "n3", "n4"))
    context = {"transport": "ib", "nics": {}, "labels": labels, "mnnvl": True, "nodes": ["n1", "n2", "n3", "n4"]}
    step = isolation_parts.next_step(roundtrip(conclusion), roundtrip(context), [], max_jobs=5)
    # each pair's NVLink-only run waits for its network-only run; the other pair's runs in the same round
    assert [job["probe"] for job in step["jobs"]] == [{"kind": "paths", "node": "n1", "path": "network"}, {"kind": "paths", "node": "n3", "path": "network"}]


def test_an_ib_nic_list_is_read_from_its_first_line_only():
    other = NIC_LINE.replace("node-0", "node-1").replace("mlx5_", "mlx5_1")
    assert isolation_parts.nics_in([NIC_LINE + "\n" + other], "ib") == NICS


def test_an_efa_device_at_another_pci_function_stops_the_topology_with_its_address():
    line = "h:1:1 [0] NCCL INFO NET/OFI NIC group 0 device #0 0000:10:1b.1"
    assert isolation_parts.topology_groups([line], "efa") == ({}, None, "its log names EFA device 0000:10:1b.1, whose name the PCI naming does not give")


def test_of_two_control_runs_the_last_decides():
    control = [dict(path_run("control", "pass", busbw), nodes=["g1", "g2"]) for busbw in (100.0, 52.0)]
    results = [path_run("network", "fail", 50.0)] + control
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(dict(NVLINK_CONTEXT, mnnvl=False)), roundtrip(results), max_jobs=5)
    # 50 beside 52 is less than 10 % below: not slow, so the NVLink paths are at fault (beside 100 it would be fabric)
    assert step["parts"][0]["conclusion"] == "nvlink"


@pytest.mark.parametrize("group", [["a0", "a1"], ["a0"]])
def test_a_one_nic_run_names_the_devices_of_its_group_from_two_on(group):
    context = dict(NVLINK_CONTEXT, transport="efa", mnnvl=False, nics={"n1": ["a0", "b0"]}, rail_groups={"n1": {"groups": {"a0": group, "b0": ["b0"]}}})
    step = isolation_parts.next_step(roundtrip(NVLINK_CONCLUSION), roundtrip(context), roundtrip([path_run("network", "fail", 50.0)]), max_jobs=5)
    (job,) = [job for job in step["jobs"] if job["probe"]["kind"] == "rails"]
    assert job["probe"] == dict({"kind": "rails", "node": "n1", "nic": "a0", "of": 2}, **({"devices": group} if len(group) > 1 else {}))


def test_only_an_unexplained_outcome_read_back_names_pair_links_and_only_not_reproduced_splits_the_run():
    labels = {"a": {ZONE: "A"}, "b": {ZONE: "B"}}
    context = {"transport": "ib", "nics": {}, "labels": labels, "mnnvl": False, "nodes": ["a", "b"]}
    step = isolation_parts.next_step(roundtrip({"outcome": "unexplained", "unexplained": [["a", "b"]], "good": ["a", "b"]}), roundtrip(context), [])
    assert [(part["level"], part["conclusion"]) for part in step["parts"]] == [("link", "found")]
    for outcome in ("undetermined", "budget_exhausted", "found"):
        step = isolation_parts.next_step(roundtrip({"outcome": outcome, "unexplained": [["a", "b"]], "good": ["a", "b"]}), roundtrip(context), [])
        assert step == {"state": "done", "parts": [], "pending": []}


def test_a_path_run_without_a_result_read_back_gives_its_reason():
    runs = roundtrip([path_run("network", "error", None, reason="pod evicted"), path_run("nvlink", "error", None, reason="OOM")])
    part = isolation_parts._paths_conclusion("n1", SLOW_PAIR, runs[0], None, "no MNNVL", None, 10.0)
    assert (part["conclusion"], part["reason"].split(" (")[0]) == ("undetermined", "n1: the network-only run gave no result: pod evicted")
    part = isolation_parts._paths_conclusion("n1", SLOW_PAIR, roundtrip(path_run("network", "pass", 50.0)), runs[1], "", None, 10.0)
    assert (part["conclusion"], part["reason"].split(" (")[0]) == ("undetermined", "n1: the NVLink-only run gave no result: OOM")


def test_three_domains_whose_pairs_across_all_pass_reproduce_nothing():
    groups = [link_run([d + "1", d + "2"], "pass", "l0", d.upper()) for d in "abc"]
    pairs = [{"nodes": nodes, "verdict": "pass", "busbw": 360.0} for nodes in (["a1", "b1"], ["a2", "c1"], ["b2", "c2"])]
    part, jobs = isolation_parts._group_links(sorted(THREE_DOMAINS), THREE_DOMAINS, ["l0"], roundtrip(groups), roundtrip(pairs))
    assert (part["conclusion"], part["reason"], part["jobs"], jobs) == (
        "not_reproduced",
        "every l0 group passes alone and every pair across two of them passes: no link between two domains is slow in pairs",
        3,
        [],
    )


def test_a_pair_in_two_nvlink_domains_gets_no_nvlink_only_run_in_either_order():
    for first, second in (("c1", "c2"), ("c2", "c1")):
        context = dict(NVLINK_CONTEXT, labels={"n1": {CLIQUE: first}, "n2": {CLIQUE: second}})
        assert isolation_parts.nvlink_pair("n1", "n2", roundtrip(context)) == "the nodes are in different NVLink domains (%s %s and %s)" % (
            CLIQUE,
            first,
            second,
        )


def test_an_nvlink_only_run_that_left_nvlink_does_not_count_and_says_why():
    nvlink = path_run("nvlink", "pass", 100.0, nvlink_proof={"info_lines": 10, "mnnvl": True, "net": {"IB": 2}})
    part = isolation_parts._paths_conclusion("n1", SLOW_PAIR, path_run("network", "pass", 50.0), nvlink, "", None, 10.0)
    assert (part["conclusion"], part["reason"].split(" (")[0]) == (
        "undetermined",
        "n1: the NVLink-only run does not count: its log shows network channels",
    )


@pytest.mark.parametrize("size", [1, 2])
def test_two_domains_that_pass_alone_name_their_runs_or_one_node_each(size):
    labels = dict(("%s%d" % (d, i), {"l0": d.upper()}) for d in "ab" for i in range(1, size + 1))
    runs = [link_run(["%s%d" % (d, i) for i in range(1, size + 1)], "pass", "l0", d.upper()) for d in "ab"] if size > 1 else []
    part, jobs = isolation_parts._group_links(sorted(labels), labels, ["l0"], roundtrip(runs))
    groups = "A: a1+a2 pass 360.0 GB/s; B: b1+b2 pass 360.0 GB/s" if size > 1 else "one node each"
    assert (part["conclusion"], part["reason"], jobs) == (
        "found",
        "each l0 group passes alone (%s) but the run over all failed: the link between A and B" % groups,
        [],
    )


def test_two_groups_slow_alone_are_both_named_inside_and_not_split_again():
    labels = dict((node, {"l0": node[0].upper(), "l1": node}) for node in ("a1", "a2", "a3", "b1", "b2", "c1", "c2"))
    runs = [link_run(["a1", "a2", "a3"], "fail", "l0", "A"), link_run(["b1", "b2"], "fail", "l0", "B"), link_run(["c1", "c2"], "pass", "l0", "C")]
    part, jobs = isolation_parts._group_links(sorted(labels), labels, ["l0", "l1"], roundtrip(runs))
    assert (part["conclusion"], part["reason"], jobs) == (
        "inside",
        "the group of l0 A, B is slow alone: the fault is inside that domain, not between domains",
        [],
    )


def test_the_finer_rounds_are_numbered_on_after_the_node_rounds():
    cluster = FaultyCluster(nodes(4), nvlink=["n2"])
    outcome = isolate(cluster)
    probed = [entry for entry in outcome["rounds"] if entry.get("probes")]
    assert probed and len(probed) < len(outcome["rounds"])
    for number, entry in enumerate(outcome["rounds"], 1):
        assert entry["round"] == number
        assert all(name.endswith("-iso-%d-%d" % (number, index)) for index, name in enumerate(entry["trainjobs"]))


def test_each_finer_run_and_part_carries_its_own_minutes_to_the_hundredth():
    # Rounds of 100 s on a clock that does not start at 0: minutes since the isolation's start, to two decimals.
    cluster = FaultyCluster(nodes(4), rails={"n1": ["mlx5_2"], "n3": ["mlx5_1"]}, round_minutes=100 / 60.0)
    cluster.now = 1000.0
    outcome = isolate(cluster)
    assert outcome["conclusion"]["minutes"] == 3.33 and len(outcome["rounds"]) == 7
    assert [(run["round"], run["minutes"]) for run in outcome["part_results"]] == [(r, round(r * 100 / 60.0, 2)) for r in (3, 3, 4, 4, 5, 5, 6, 6, 7, 7)]
    # A part's minutes: the last run of its own node and kind (the paths probe ended at round 3, the rails at 7).
    assert [(part["level"], part["node"], part["minutes"]) for part in outcome["parts"]] == [
        ("path", "n1", 5.0),
        ("nic", "n1", 11.67),
        ("path", "n3", 5.0),
        ("nic", "n3", 11.67),
    ]
    assert outcome["minutes"] == 11.67


def test_a_failed_log_read_beside_a_read_one_adds_no_text_to_the_nic_search():
    class Cluster(FaultyCluster):
        def logs(self, name, waited):
            read = FaultyCluster.logs(self, name, waited)
            # k8s_log's failed read (no log), a log that is no text, and something that is no entry at all
            return dict(read, results=[{"failed": True, "msg": "pod gone"}, {"log": None}, "junk"] + read["results"])

    outcome = isolate(Cluster(nodes(4), slow=["n2"]))
    assert all(result["opened_nics"] == NICS for result in outcome["results"])


@pytest.mark.parametrize("count, max_jobs", [(4, 6), (4, 8), (4, 12), (6, 9), (6, 11), (6, 13), (6, 15)])
def test_the_jobs_budget_bounds_the_node_and_the_finer_rounds_together(count, max_jobs):
    outcome = isolate(FaultyCluster(nodes(count), rails={"n1": ["mlx5_2"], "n3": ["mlx5_1"]}), max_jobs=max_jobs)
    assert len(outcome["results"]) + len(outcome["part_results"]) == max_jobs and outcome["pending"]


def test_by_default_the_isolation_runs_at_most_8_jobs():
    cluster = FaultyCluster(nodes(6), rails={"n1": ["mlx5_2"], "n3": ["mlx5_1"]})
    outcome = isolation_run.run_isolation(
        cluster,
        trainjob(),
        cluster.nodes,
        cluster.judge_for(2),
        clock=cluster.clock,
        parts={"transport": "ib", "judge_for": cluster.judge_for, "judge_probe": cluster.judge_probe},
    )
    assert len(outcome["results"]) + len(outcome["part_results"]) == 8 and outcome["pending"]
