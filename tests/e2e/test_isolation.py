# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Isolation of the bad node, on a fleet of its own: aws-usw2-h100-nodes (4 AWS H100 nodes, the agent's slow NIC on
aws-usw2-h100-nodes-gpu-2: every MPI job with a worker there prints far-below busbw) and a good cluster.

- one run of playbooks/burnin.yml: the 4-node run fails, the isolation names exactly gpu-2 as the bad node with
  fewer pair jobs than all 6 pairs, each finding's evidence lists its pair results, the pair TrainJobs are gone
  afterwards, and the good cluster is not isolated;
- a budget of 1 job: the result says the budget ran out and what is known;
- a bad budget is refused before any cluster is touched, naming the variable;
- check mode: gpufleet.burnin.burnin_isolate plans the first round and applies nothing;
- the finer rounds (docs/isolation.md, "Finding the bad part"), each fault of the stand-in in a cluster of its own,
  all isolated by the same run of playbooks/burnin.yml: a degraded NVLink (aws-usw2-h100-nvlink, gpu-2) is named
  `nvlink` by one network-only job; a slow rail (azure-eus-h100-rails, InfiniBand, NIC mlx5_2 of gpu-1) is `fabric` and named
  by one job per NIC (NCCL_IB_HCA), as is one on EFA (aws-usw2-h100-efa-rails, EFA device rdmap99s0 of gpu-1, the
  fourth device of NCCL device rdmap96s0's group: one job per NCCL device, FI_EFA_IFACE its whole group of 4); the
  slow node of aws-usw2-h100-nodes is slow on every EFA device alone; a bad link between the two
  network-node-layer-3 domains of aws-usw2-h100-links (8 nodes, 4 per domain) is named when both halves pass; on AWS
  GB200 pairs in one multi-node NVLink domain (burnin_enable_mnnvl) the paths probe adds an NVLink-only run, proved
  from its channel lines: a degraded NVLink and a slow NIC on the same node (aws-usw2-gb200-both, gpu-2) is `both`, a
  slow NIC alone (aws-usw2-gb200-fabric, gpu-1) is `fabric` with its NVLink proved good. Each states the number of
  jobs it took.

GPUFLEET_ISOLATION_FLEET_DIR reuses a fleet started by hand from the same clusters.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOKS = REPO / "playbooks"
CLUSTER, GOOD = "aws-usw2-h100-nodes", "gcp-usc1-h100-a"
BAD_NODE = "aws-usw2-h100-nodes-gpu-2"
NODES = ["%s-gpu-%d" % (CLUSTER, i) for i in range(4)]
NAMESPACE = "gpufleet-burnin"
# Run ids of this session: a reused fleet (GPUFLEET_ISOLATION_FLEET_DIR) keeps the TrainJobs of earlier sessions.
SESSION = "%x" % (int(time.time()) % 0xFFFFFF)


def run_id(n):
    return "iso%s-%d" % (SESSION, n)


NVLINK, RAILS, LINKS = "aws-usw2-h100-nvlink", "azure-eus-h100-rails", "aws-usw2-h100-links"
BOTH, FABRIC = "aws-usw2-gb200-both", "aws-usw2-gb200-fabric"
MNNVL = {"gpu_architecture": "gb200", "inventory_vars": {"burnin_nodes": 4, "burnin_enable_mnnvl": True}}
EFA_RAILS = "aws-usw2-h100-efa-rails"
# A GB200 cluster with burnin_enable_mnnvl whose node gpu-1 has no registered NVLink fabric (no nvidia.com/gpu.clique).
UNREG = "aws-usw2-gb200-unregistered"
# The NCCL devices the stand-in's aws-ofi-nccl lines name (tests/fleet/nccl_logs.py EFA_GROUPS, `NET/OFI GUID of
# <device>`: the first EFA device of each of P5's 8 groups of 4) and each one's group (`NIC group` lines).
EFA_GROUPS = [["rdmap%ds0" % (0x30 + 0x10 * group + device) for device in range(4)] for group in range(8)]
EFA_NICS = [group[0] for group in EFA_GROUPS]
SLOW_EFA = EFA_GROUPS[3][3]  # rdmap99s0: never named by a GUID line
LAYER3 = "topology.k8s.aws/network-node-layer-3"
# The fleet's layer-3 domain of nodes 0-3 and of 4-7 (tests/fleet/fleet_nodes.py labels them; conftest loaded it).
LINK_DOMAINS = ["nn-%s" % sys.modules["gpufleet_test_fleet"].fake_nodes._hex("%s/l3/%d" % (LINKS, half), 17) for half in (0, 1)]
FAULTY = {
    "platform": "aws",
    "gpu_architecture": "h100",
    "kubernetes_version": "1.37",
    "nodes": 4,
    "node_naming": "indexed",
    "inventory_vars": {"burnin_nodes": 4},
    "trainjob_outcome": "Complete",
    "nccl_log": "good",
}
SPEC = {
    "restricted_namespace": "burnin-restricted",
    "clusters": [
        {
            "name": CLUSTER,
            "platform": "aws",
            "gpu_architecture": "h100",
            "kubernetes_version": "1.37",
            "nodes": 4,
            "node_naming": "indexed",
            "slow_nodes": [BAD_NODE],
            # 4 pairs, a network-only run and its control pair's, one run per NCCL device (8): 14 jobs.
            "inventory_vars": {"burnin_nodes": 4, "burnin_isolation_max_jobs": 16},
            "trainjob_outcome": "Complete",
            "nccl_log": "good",
        },
        {"name": GOOD, "platform": "gcp", "gpu_architecture": "h100", "kubernetes_version": "1.37", "nodes": 2, "nccl_log": "good"},
        dict(FAULTY, name=NVLINK, degraded_nvlink=["%s-gpu-2" % NVLINK]),
        # 3 pairs, a network-only run and its control pair's, one run per NIC: 9 jobs.
        dict(
            FAULTY,
            name=RAILS,
            platform="azure",
            slow_rails={"%s-gpu-1" % RAILS: ["mlx5_2"]},
            inventory_vars={"burnin_nodes": 4, "burnin_isolation_max_jobs": 9},
        ),
        dict(FAULTY, name=LINKS, nodes=8, inventory_vars={"burnin_nodes": 8}, bad_links=[LINK_DOMAINS]),
        dict(FAULTY, name=BOTH, degraded_nvlink=["%s-gpu-2" % BOTH], slow_nodes=["%s-gpu-2" % BOTH], **MNNVL),
        dict(FAULTY, name=FABRIC, slow_nodes=["%s-gpu-1" % FABRIC], **MNNVL),
        dict(FAULTY, name=UNREG, unregistered_fabric=["%s-gpu-1" % UNREG], **MNNVL),
        # 3 pairs, a network-only run and its control pair's, one run per NCCL device (8): 13 jobs.
        dict(FAULTY, name=EFA_RAILS, slow_rails={"%s-gpu-1" % EFA_RAILS: [SLOW_EFA]}, inventory_vars={"burnin_nodes": 4, "burnin_isolation_max_jobs": 14}),
    ],
}


@pytest.fixture(scope="module")
def iso_fleet(own_fleet):
    return own_fleet("isolation", SPEC, "GPUFLEET_ISOLATION_FLEET_DIR")


def run(state, work, playbook, run_id, *options):
    """ansible-playbook PLAYBOOK over the fleet: (the process, the run's summary.json or None)."""
    reports = work / "reports"
    proc = subprocess.run(
        # forks 10: every cluster of the fleet isolates at once (the default 5 would hold the sixth back).
        ["ansible-playbook", str(playbook), "-i", state["inventory"], "--forks", "10", "-e", "burnin_run_id=%s" % run_id]
        + ["-e", "burnin_report_dir=%s" % reports, *options],
        env=dict(os.environ, ANSIBLE_NOCOLOR="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        timeout=900,
        check=False,
    )
    summary = reports / run_id / "summary.json"
    return proc, (json.loads(summary.read_text()) if summary.is_file() else None)


def trainjobs(state, cluster):
    from kubernetes import config
    from kubernetes.dynamic import DynamicClient

    dyn = DynamicClient(config.new_client_from_config(config_file=state["kubeconfig"], context=cluster))
    found = dyn.resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainJob").get(namespace=NAMESPACE).to_dict()["items"]
    return [item["metadata"]["name"] for item in found]


@pytest.fixture(scope="module")
def isolated(iso_fleet):
    state, work = iso_fleet
    proc, summary = run(state, work, PLAYBOOKS / "burnin.yml", run_id(1))
    assert summary is not None, proc.stdout[-4000:]
    return state, proc, summary


def test_the_isolation_names_exactly_the_slow_node_with_fewer_jobs_than_all_pairs(isolated):
    state, proc, summary = isolated
    result = summary[CLUSTER]
    assert result["verdict"]["verdict"] == "fail", proc.stdout[-3000:]
    isolation = result["isolation"]
    assert isolation["outcome"] == "found", isolation
    assert isolation["culprits"] == [BAD_NODE]
    assert isolation["good"] == sorted(set(NODES) - {BAD_NODE})
    assert isolation["node_jobs"] < isolation["all_pairs"] == 6
    assert sum(len(r["pairs"]) for r in isolation["rounds"]) == isolation["jobs"]
    # Each round's pairs are disjoint and ran pinned where planned.
    for entry in isolation["rounds"]:
        used = [node for pair in entry["pairs"] for node in pair]
        assert len(used) == len(set(used))
        assert [r["nodes"] for r in entry["results"]] == entry["pairs"]
        assert all(name.startswith("nccl-burnin-%s-iso-%d-" % (run_id(1), entry["round"])) for name in entry["trainjobs"])
    # The node findings: fail for the culprit with its pair results as evidence, pass for the others.
    verdicts = result["node_verdicts"]
    assert verdicts[BAD_NODE]["verdict"] == "fail"
    assert all(verdicts[node]["verdict"] == "pass" for node in NODES if node != BAD_NODE)
    (culprit,) = [f for f in result["node_findings"] if f["stage"] == "isolation" and f["verdict"] == "fail"]
    pairs = culprit["evidence"]["pairs"]
    assert pairs and all(BAD_NODE in p["nodes"] for p in pairs)
    assert all(p["verdict"] == "fail" and p["busbw"] < 250 and p["trainjob"] for p in pairs)
    assert culprit["evidence"]["busbw"] < 250 and culprit["evidence"]["size"] > 0
    assert "isolation: bad node(s) %s" % BAD_NODE in result["reason"]
    assert "isolation found: %s" % BAD_NODE in proc.stdout
    # Each round was told as it ended, in order (the fleet driver's progress).
    told = [line.split(": isolation round ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("%s: isolation round " % CLUSTER)]
    assert [int(line.split(":")[0]) for line in told] == [entry["round"] for entry in isolation["rounds"]], proc.stdout[-3000:]
    # The pair jobs are deleted once read; the run's own TrainJob stays for the cleanup.
    names = trainjobs(state, CLUSTER)
    assert "nccl-burnin-%s" % run_id(1) in names and not [name for name in names if name.startswith("nccl-burnin-%s-iso-" % run_id(1))]


def test_a_passing_cluster_is_not_isolated(isolated):
    state, proc, summary = isolated
    assert summary[GOOD]["verdict"]["verdict"] == "pass"
    assert "isolation" not in summary[GOOD]
    assert proc.returncode == 2  # the failed cluster fails its host


def test_a_budget_of_one_job_says_it_ran_out_and_what_is_known(iso_fleet):
    state, work = iso_fleet
    proc, summary = run(state, work, PLAYBOOKS / "burnin.yml", run_id(2), "--limit", CLUSTER, "-e", "burnin_isolation_max_jobs=1")
    assert summary is not None, proc.stdout[-4000:]
    isolation = summary[CLUSTER]["isolation"]
    assert isolation["outcome"] == "budget_exhausted" and isolation["jobs"] == 1
    assert isolation["culprits"] == []
    assert isolation["good"] == NODES[:2] and isolation["unknown"] == NODES[2:]
    assert "ran out (1 job(s) of 1)" in isolation["reason"] and "not cleared: %s" % ", ".join(NODES[2:]) in isolation["reason"]


def test_a_bad_budget_is_refused_before_the_cluster_is_touched(iso_fleet):
    state, work = iso_fleet
    proc, summary = run(state, work, PLAYBOOKS / "burnin.yml", run_id(3), "--limit", CLUSTER, "-e", "burnin_isolation_max_jobs=0")
    assert proc.returncode != 0
    assert "burnin_isolation_max_jobs" in proc.stdout and "must be an integer from 1 to 1000" in proc.stdout
    assert "nccl-burnin-%s" % run_id(3) not in trainjobs(state, CLUSTER)


def test_check_mode_plans_the_first_round_and_applies_nothing(iso_fleet):
    state, work = iso_fleet
    playbook = work / "check.yml"
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "nccl-burnin-%s" % run_id(4), "namespace": NAMESPACE, "labels": {"gpufleet.burnin/run-id": run_id(4)}},
        "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "nccl-burnin-runtime"}, "trainer": {"numNodes": 4}},
    }
    result = {"verdict": {"verdict": "fail", "nodes": NODES}, "platform": "aws", "gpu_architecture": "h100", "gpus_per_node": 8}
    play = [
        {
            "hosts": CLUSTER,
            "gather_facts": False,
            "tasks": [
                {
                    "name": "Plan the isolation",
                    "gpufleet.burnin.burnin_isolate": {
                        "result": result,
                        "objects": [trainjob],
                        "kubeconfig": "{{ burnin_kubeconfig }}",
                        "context": "{{ burnin_context }}",
                    },
                    "register": "planned",
                },
                {"ansible.builtin.copy": {"content": "{{ planned | to_json }}", "dest": str(work / "planned.json")}, "check_mode": False},
            ],
        }
    ]
    playbook.write_text(yaml.safe_dump(play))
    proc, dummy = run(state, work, playbook, run_id(4), "--check")
    assert proc.returncode == 0, proc.stdout[-3000:]
    planned = json.loads((work / "planned.json").read_text())
    assert planned["changed"] is False and planned["conclusion"] is None
    (first,) = planned["rounds"]
    assert first["planned"] is True and first["pairs"] == [NODES[:2], NODES[2:]]
    assert first["trainjobs"] == ["nccl-burnin-%s-iso-1-0" % run_id(4), "nccl-burnin-%s-iso-1-1" % run_id(4)]
    assert not [name for name in trainjobs(state, CLUSTER) if name.startswith("nccl-burnin-%s" % run_id(4))]


def parts_of(summary, cluster, level):
    return [part for part in summary[cluster]["isolation"]["parts"] if part["level"] == level]


def test_a_degraded_nvlink_is_named_nvlink_by_one_network_only_job(isolated):
    state, proc, summary = isolated
    isolation = summary[NVLINK]["isolation"]
    assert isolation["culprits"] == ["%s-gpu-2" % NVLINK], isolation
    (path,) = parts_of(summary, NVLINK, "path")
    assert path["conclusion"] == "nvlink" and path["jobs"] == 2, path
    full, network, control = path["paths"]
    assert network["path"] == "network" and {"name": "NCCL_P2P_DISABLE", "value": "1"} in network["env"]
    assert full["verdict"] == "fail" and full["busbw"] < network["busbw"]
    # With NVLink off a healthy pair misses the 2-node thresholds (the stand-in carries what its NICs do, as a real pair
    # does): the network-only run is judged beside its control, the same run on two good nodes in the same round.
    assert network["verdict"] != "pass" and control["path"] == "control" and control["env"] == network["env"]
    assert control["round"] == network["round"] and not set(control["nodes"]) & set(network["nodes"]) and "beside" in path["reason"]
    # The jobs it took: 4 pairs to name the node (its partner in round 1 needs a test of its own), the network-only run
    # and its control.
    assert (isolation["node_jobs"], isolation["jobs"]) == (4, 6)
    assert "%s-gpu-2 nvlink" % NVLINK in summary[NVLINK]["reason"]


def test_a_slow_rail_is_fabric_and_named_by_one_job_per_nic(isolated):
    state, proc, summary = isolated
    bad = "%s-gpu-1" % RAILS
    isolation = summary[RAILS]["isolation"]
    assert isolation["culprits"] == [bad], isolation
    (path,) = parts_of(summary, RAILS, "path")
    assert path["conclusion"] == "fabric"
    (nic,) = parts_of(summary, RAILS, "nic")
    assert nic["conclusion"] == "found" and nic["nics"] == ["mlx5_2"] and nic["cleared"] == ["mlx5_0", "mlx5_1", "mlx5_3"], nic
    assert nic["jobs"] == 4 and [run["env"] for run in nic["runs"]][2] == [{"name": "NCCL_IB_HCA", "value": "=mlx5_2"}]
    # Each NIC alone carries its share of the pair's busbw (the stand-in prints it so, as real NICs do) and is held to
    # one NIC's share of the pair's thresholds: held to the whole pair's, every NIC would be slow.
    good = [run for run in nic["runs"] if run["nic"] != "mlx5_2"]
    pair = max(r["busbw"] for r in isolation["rounds"][0]["results"] if r["verdict"] == "pass")
    assert all(run["verdict"] == "pass" and "(one NIC of 4)" in run["reason"] and run["busbw"] < pair / 3 for run in good), nic["runs"]
    assert nic["runs"][2]["verdict"] == "fail" and nic["runs"][2]["busbw"] < min(run["busbw"] for run in good)
    # 3 pairs, the network-only run and its control, 1 per NIC: the cluster's budget of 9 exactly.
    assert (isolation["node_jobs"], isolation["jobs"]) == (3, 9)
    assert "%s NIC mlx5_2" % bad in summary[RAILS]["reason"]


def test_a_bad_link_between_two_domains_is_named_when_both_halves_pass(isolated):
    state, proc, summary = isolated
    isolation = summary[LINKS]["isolation"]
    assert summary[LINKS]["verdict"]["verdict"] == "fail" and isolation["outcome"] == "not_reproduced", isolation
    (link,) = parts_of(summary, LINKS, "link")
    assert link["conclusion"] == "found", link
    assert link["links"][0]["key"] == LAYER3 and link["links"][0]["domains"] == sorted(LINK_DOMAINS)
    assert [len(run["nodes"]) for run in link["runs"]] == [4, 4] and all(run["verdict"] == "pass" for run in link["runs"])
    assert link["jobs"] == 2 and isolation["jobs"] == isolation["node_jobs"] + 2 == 6


def test_a_slow_node_on_efa_is_slow_on_every_efa_device_alone(isolated):
    state, proc, summary = isolated
    (path,) = parts_of(summary, CLUSTER, "path")
    (nic,) = parts_of(summary, CLUSTER, "nic")
    assert path["conclusion"] == "fabric" and nic["conclusion"] == "every_rail", nic
    assert nic["nics"] == EFA_NICS and [run["env"] for run in nic["runs"]] == [[{"name": "FI_EFA_IFACE", "value": ",".join(g)}] for g in EFA_GROUPS]
    isolation = summary[CLUSTER]["isolation"]
    assert isolation["jobs"] == isolation["node_jobs"] + 2 + len(EFA_NICS) and not isolation["pending"]


def test_a_slow_efa_rail_is_named_by_one_job_per_efa_device(isolated):
    state, proc, summary = isolated
    bad = "%s-gpu-1" % EFA_RAILS
    isolation = summary[EFA_RAILS]["isolation"]
    assert isolation["culprits"] == [bad], isolation
    (path,) = parts_of(summary, EFA_RAILS, "path")
    assert path["conclusion"] == "fabric"
    (nic,) = parts_of(summary, EFA_RAILS, "nic")
    # The NIC named, not the busbw: how rail runs are judged against each other is the rails round's own.
    # The NCCL device whose group holds the slow EFA device, run on its whole group and held to 1/8 of the pair's.
    assert nic["conclusion"] == "found" and nic["nics"] == [EFA_NICS[3]], nic
    assert set(nic["cleared"]) == set(EFA_NICS) - {EFA_NICS[3]}
    assert [run["env"] for run in nic["runs"]][3] == [{"name": "FI_EFA_IFACE", "value": ",".join(EFA_GROUPS[3])}]
    assert (isolation["node_jobs"], isolation["jobs"]) == (3, 13)
    assert "%s NIC %s" % (bad, EFA_NICS[3]) in summary[EFA_RAILS]["reason"]


def test_a_degraded_nvlink_and_a_slow_nic_on_one_mnnvl_node_are_both_by_a_network_only_and_an_nvlink_only_job(isolated):
    state, proc, summary = isolated
    bad = "%s-gpu-2" % BOTH
    isolation = summary[BOTH]["isolation"]
    assert isolation["culprits"] == [bad], isolation
    (path,) = parts_of(summary, BOTH, "path")
    assert path["conclusion"] == "both" and path["jobs"] == 3, path
    full, network, nvlink, control = path["paths"]
    assert (full["path"], network["path"], nvlink["path"], control["path"]) == ("all", "network", "nvlink", "control")
    assert network["busbw"] < control["busbw"] * 0.9
    assert full["verdict"] == network["verdict"] == nvlink["verdict"] == "fail"
    assert {"name": "NCCL_MNNVL_ENABLE", "value": "0"} in network["env"] and {"name": "NCCL_NET", "value": "Socket"} in nvlink["env"]
    # The NVLink-only run stayed on NVLink: MNNVL used, no channel via NET.
    assert nvlink["proof"]["mnnvl"] is True and nvlink["proof"]["net"] == {} and nvlink["proof"]["info_lines"] > 0
    # The rails follow a `both` as a `fabric`: one EFA device per job (FI_EFA_IFACE) until the budget (8 jobs) runs out.
    assert isolation["node_jobs"] == 4 and 4 + 3 < isolation["jobs"] <= 8, isolation
    assert parts_of(summary, BOTH, "nic") or [probe for probe in isolation["pending"] if probe["kind"] == "rails"], isolation
    assert "%s both" % bad in summary[BOTH]["reason"]


def test_a_slow_nic_on_an_mnnvl_node_is_fabric_with_its_nvlink_proved_good(isolated):
    state, proc, summary = isolated
    bad = "%s-gpu-1" % FABRIC
    isolation = summary[FABRIC]["isolation"]
    assert isolation["culprits"] == [bad], isolation
    (path,) = parts_of(summary, FABRIC, "path")
    assert path["conclusion"] == "fabric" and path["jobs"] == 3 and "its NVLink proved good" in path["reason"], path
    network, nvlink = path["paths"][1:3]
    assert network["verdict"] == "fail" and nvlink["verdict"] == "pass" and nvlink["busbw"] > network["busbw"]
    assert nvlink["proof"]["mnnvl"] is True and nvlink["proof"]["net"] == {}
    assert isolation["node_jobs"] == 3 and 3 + 3 < isolation["jobs"] <= 8, isolation
    assert parts_of(summary, FABRIC, "nic") or [probe for probe in isolation["pending"] if probe["kind"] == "rails"], isolation


def test_an_unregistered_nvlink_fabric_is_named_before_any_mnnvl_job(isolated):
    """MNNVL readiness (plugins/module_utils/cluster/mnnvl.py): the fleet stage names the node whose fabric is not
    registered and runs no MNNVL job there; the isolation does not chase it."""
    state, proc, summary = isolated
    bad = "%s-gpu-1" % UNREG
    result = summary[UNREG]
    assert result["verdict"]["verdict"] == "fail", proc.stdout[-3000:]
    assert "MNNVL not ready, the job was not run" in result["reason"], result["reason"]
    assert "node %s: no nvidia.com/gpu.clique label" % bad in result["reason"], result["reason"]
    assert result["node_verdicts"][bad]["verdict"] == "fail"
    assert "nccl-burnin-%s" % run_id(1) not in trainjobs(state, UNREG)
