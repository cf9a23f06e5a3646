# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The test fleet's replays (tests/fleet/nccl_logs.py REPLAYS, tests/fleet/dcgm_logs.py REPLAYS): published output of
the corpus tests/fixtures/real, its hosts rewritten to the fleet's, judged by the collection as the e2e fleet judges
it (tests/e2e/test_verdict_fleet.py runs the same through the real API servers)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import sys

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.dcgm import dcgm_verdict
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for

FLEET = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "fleet")
sys.path.insert(0, FLEET)
import dcgm_logs  # noqa: E402 pylint: disable=wrong-import-position
import nccl_logs  # noqa: E402 pylint: disable=wrong-import-position

HOSTS = ["replay-1-node-0-0", "replay-1-node-0-1"]
# What names a host in NCCL and nccl-tests output: the `host:pid:tid` prefix, `on <host> device`, `<host>: Test`.
HOST_MARKS = re.compile(r"^\s*(?:\[[0-9,]+\]<std(?:out|err)>:)?([A-Za-z0-9][\w.-]*):\d+:\d+ |on ([\w.-]+) device|^([\w.-]+): Test|\.\. ([\w.-]+) pid", re.M)


def named_hosts(text):
    return set(g for m in HOST_MARKS.finditer(text) for g in m.groups() if g)


def pods(hosts):
    """The launcher and worker pods of a 2-node MPI TrainJob as the fleet makes them (JobSet: <hostname>-<suffix>)."""
    items = [
        {
            "metadata": {"name": "replay-1-launcher-0-0-abcde", "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "launcher"}},
            "spec": {"nodeName": "cpu-node", "hostname": "replay-1-launcher-0-0"},
            "status": {"phase": "Succeeded", "containerStatuses": [{"name": "launcher", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
        }
    ]
    for index, host in enumerate(hosts):
        items.append(
            {
                "metadata": {"name": host + "-x1y2z", "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}},
                "spec": {"nodeName": "gpu-node-%d" % index, "hostname": host},
                "status": {"phase": "Succeeded", "containerStatuses": [{"name": "node", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
            }
        )
    return items


def judged(name, platform, gpu):
    text = nccl_logs.replay_log(name, HOSTS, platform, gpu)
    items = pods(HOSTS)
    logs = [{"item": items[0], "log": text}]
    # As gpufleet.burnin.burnin_stage judges the fleet stage of the default workload.
    facts = {"platform": platform, "gpu_architecture": gpu}
    return text, verdict_for(logs, facts=facts, job={"outcome": "Complete", "pods": items}, judging={"collective": "all_reduce", "workload": "nccl-all-reduce"})


@pytest.mark.parametrize("name", sorted(nccl_logs.REPLAYS))
def test_every_replay_is_the_published_text_with_only_the_fleets_hosts(name):
    text = nccl_logs.replay_log(name, HOSTS)
    for doc in nccl_logs.REPLAYS[name]:
        original = (nccl_logs.CORPUS / doc).read_text(encoding="utf-8")
        # The hosts listed are the document's, and they are all it names.
        assert named_hosts(original) == set(nccl_logs.REPLAY_HOSTS[doc]), doc
        assert "PROVENANCE" not in doc and os.path.basename(doc) in (nccl_logs.CORPUS / os.path.dirname(doc) / "PROVENANCE.md").read_text()
        # Line for line the same but for the host names.
        rewritten = nccl_logs.rewrite_hosts(original, nccl_logs.REPLAY_HOSTS[doc], HOSTS)
        assert rewritten in text and len(rewritten.splitlines()) == len(original.splitlines())
        assert not named_hosts(rewritten) & set(nccl_logs.REPLAY_HOSTS[doc])
    assert named_hosts(text) <= set(HOSTS), named_hosts(text) - set(HOSTS)


def test_host_rewrite_replaces_whole_names_only():
    text = "HCA-10:1:1 [0] NCCL INFO x\nHCA-107: Test NCCL failure\n .. HCA-107 pid 3: Test failure\nHCA-1070:1:1 [0] y\nnotHCA-107z\n"
    out = nccl_logs.rewrite_hosts(text, ["HCA-107", "HCA-10"], ["a", "b"])
    assert out == "b:1:1 [0] NCCL INFO x\na: Test NCCL failure\n .. a pid 3: Test failure\nHCA-1070:1:1 [0] y\nnotHCA-107z\n"


def test_a_crashed_replayed_run_fails_the_nodes_of_the_hosts_it_names():
    text, verdict = judged("crash", "gcp", "h100")
    assert verdict["verdict"] == "fail" and verdict["metrics"]["complete"] is False
    assert sorted(verdict["failed_nodes"]) == ["gpu-node-0", "gpu-node-1"], verdict["failed_nodes"]
    assert "Test NCCL failure" in text and "HCA-1" not in text
    errors = [c for c in verdict["checks"] if c["name"] == "errors"][0]
    assert errors["verdict"] == "fail" and errors["hosts"] == HOSTS


def test_an_ib_plugin_replay_passes_the_transport_check_of_an_ib_platform():
    text, verdict = judged("healthy", "azure", "gb200")
    assert "Using network IBext" in text
    assert verdict["transport"]["verdict"] == "pass" and verdict["transport"]["expected"] == "ib", verdict["transport"]
    assert verdict["failed_nodes"] == []


def test_an_efa_replay_passes_the_transport_check_on_aws():
    dummy, verdict = judged("healthy", "aws", "h100")
    assert verdict["transport"]["verdict"] == "pass" and verdict["transport"]["expected"] == "efa", verdict["transport"]


@pytest.mark.parametrize("name", ["socket-fallback", "ofi-tcp-fallback"])
def test_a_replayed_fall_back_fails_the_transport_check(name):
    dummy, verdict = judged(name, "aws", "h100")
    assert verdict["transport"]["verdict"] == "fail" and verdict["verdict"] == "fail", verdict["transport"]


def test_unknown_replays_and_platforms_without_a_published_excerpt_are_named():
    with pytest.raises(ValueError, match="crash, efa"):
        nccl_logs.replay_log("nope", HOSTS)
    with pytest.raises(ValueError, match="no published healthy tcpxo output"):
        nccl_logs.replay_log("healthy", HOSTS, "gcp", "h100")


def test_a_running_launcher_has_printed_the_first_half():
    whole = nccl_logs.replay_log("crash", HOSTS)
    part = nccl_logs.replay_log("crash", HOSTS, finished=False)
    assert whole.startswith(part) and 0 < len(part.splitlines()) < len(whole.splitlines())


@pytest.mark.parametrize("name, verdict", [("pcie-fail", "fail"), ("pass", "pass"), ("persistence-config", "warn"), ("cannot-load-plugins", "error")])
def test_a_replayed_dcgm_diagnostic_is_judged_as_published(name, verdict):
    text = dcgm_logs.replay_log(name, "dcgm-1-node-0-0", 8, 2)
    assert (dcgm_logs.CORPUS / dcgm_logs.REPLAYS[name]).read_text(encoding="utf-8") in text
    pod = {
        "metadata": {"name": "dcgm-1-node-0-0-x1y2z", "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}},
        "spec": {"nodeName": "gpu-node-0", "hostname": "dcgm-1-node-0-0"},
        "status": {"phase": "Succeeded", "containerStatuses": [{"name": "node", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
    }
    judged = dcgm_verdict([{"item": pod, "log": text}], job={"outcome": "Complete", "pods": [pod]})
    assert judged["verdict"] == verdict, judged["reason"]
    if verdict == "fail":
        assert judged["failed_nodes"] == ["gpu-node-0"]
    with pytest.raises(ValueError, match="cannot-load-plugins, pass"):
        dcgm_logs.replay_log("nope", "h", 8, 2)


def test_the_stand_ins_nvlink_only_run_of_a_gb200_pair_stays_on_nvlink_and_is_judged_as_the_isolation_judges_it():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation_parts

    cmd = {"program": "all_reduce_perf", "collective": "all_reduce", "min_bytes": 8, "max_bytes": 8 << 30, "step": 2, "iters": 20, "warmup": 5, "check": 1}
    items = pods(HOSTS)
    facts = {"platform": "aws", "gpu_architecture": "gb200", "nodes": 2, "gpus_per_node": 4}

    def judge(text, facts, expected_transport=None):
        judging = {"collective": "all_reduce", "workload": "nccl-all-reduce", "expected_transport": expected_transport}
        return verdict_for([{"item": items[0], "log": text}], facts=facts, job={"outcome": "Complete", "pods": items}, judging=judging)

    # NVLink-only (isolation_stage.path_judge): held to the MNNVL thresholds, over the socket net NCCL_NET names.
    text = nccl_logs.launcher_log("good", HOSTS, 4, "aws", "gb200", cmd, mnnvl=True, transport="nvlink")
    assert "via NET/" not in text and "via P2P/MNNVL" in text and "Using network Socket" in text
    assert isolation_parts._unproven(isolation_parts.nvlink_proof([text])) == ""  # pylint: disable=protected-access
    verdict = judge(text, facts=dict(facts, mnnvl=True), expected_transport="socket")
    assert verdict["verdict"] == "pass", verdict["reason"]
    slow = judge(
        nccl_logs.launcher_log("far-below", HOSTS, 4, "aws", "gb200", cmd, mnnvl=True, transport="nvlink"),
        facts=dict(facts, mnnvl=True),
        expected_transport="socket",
    )
    assert slow["verdict"] == "fail"
    # Network-only (NCCL_MNNVL_ENABLE=0): held to the thresholds without MNNVL, over the platform's EFA.
    network = judge(nccl_logs.launcher_log("good", HOSTS, 4, "aws", "gb200", cmd), facts=dict(facts, mnnvl=False))
    assert network["verdict"] == "pass", network["reason"]


def test_the_stand_ins_one_nic_run_lists_that_nic_with_its_share_and_is_judged_against_one_nics_share():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import isolation_stage
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation_parts

    cmd = {"program": "all_reduce_perf", "collective": "all_reduce", "min_bytes": 8, "max_bytes": 16 << 30, "step": 2, "iters": 20, "warmup": 5, "check": 1}
    items = pods(HOSTS)
    result = {"platform": "azure", "gpu_architecture": "h100", "gpus_per_node": 8, "collective": "all_reduce", "workload": "nccl-all-reduce"}
    judging = dict(isolation_stage.DEFAULT_JUDGING)
    waited = {"outcome": "Complete"}

    def logs(text):
        return {"results": [{"item": items[0], "log": text}], "pods": items}

    whole = nccl_logs.launcher_log("good", HOSTS, 8, "azure", "h100", cmd)
    one = nccl_logs.launcher_log("good", HOSTS, 8, "azure", "h100", cmd, nics=["mlx5_2"])
    assert isolation_parts.nics_in([whole], "ib") == nccl_logs.NICS["ib"] and isolation_parts.nics_in([one], "ib") == ["mlx5_2"]
    rails = isolation_stage.probe_judge(result, judging)(2, {"kind": "rails", "node": "n", "nic": "mlx5_2", "of": 4})
    verdict = rails(logs(one), waited)
    assert verdict["verdict"] == "pass" and "azure-h100-all-reduce-peak (one NIC of 4)" in verdict["reason"], verdict["reason"]
    assert verdict["metrics"]["peak_busbw"] * 4 == pytest.approx(
        isolation_stage.pair_judge(result, judging)(logs(whole), waited)["metrics"]["peak_busbw"], rel=0.01
    )
    # Held to the whole pair's thresholds the same good NIC would fail: what the share is for.
    assert isolation_stage.pair_judge(result, judging)(logs(one), waited)["verdict"] == "fail"
    assert rails(logs(nccl_logs.launcher_log("far-below", HOSTS, 8, "azure", "h100", cmd, nics=["mlx5_2"])), waited)["verdict"] == "fail"
    # A links probe's group is judged as a pair of its size is.
    assert isolation_stage.probe_judge(result, judging)(4, {"kind": "links", "key": "k", "domain": "d"}) is None
    # EFA: the stand-in prints a P5's 32 devices in aws-ofi-nccl's 8 groups of 4, a GUID line per group's first
    whole = nccl_logs.launcher_log("good", HOSTS, 8, "aws", "h100", cmd)
    nics = isolation_parts.nics_in([whole], "efa")
    groups, why = isolation_parts.rail_groups_in([whole], "efa", nics)
    assert "(found 32 nics)" in whole and nics == [group[0] for group in nccl_logs.EFA_GROUPS] and why == ""
    assert [groups[nic] for nic in nics] == nccl_logs.EFA_GROUPS and sum(len(group) for group in groups.values()) == 32
    # a run on one NCCL device's group: its 4 devices, one NCCL device, and 1/8 of the pair's busbw
    one = nccl_logs.launcher_log("good", HOSTS, 8, "aws", "h100", cmd, nics=nccl_logs.EFA_GROUPS[3])
    assert isolation_parts.nics_in([one], "efa") == [nccl_logs.EFA_GROUPS[3][0]] and "(found 4 nics)" in one
    assert isolation_parts.rail_groups_in([one], "efa", [nccl_logs.EFA_GROUPS[3][0]]) == ({nccl_logs.EFA_GROUPS[3][0]: nccl_logs.EFA_GROUPS[3]}, "")


def test_the_stand_ins_healthy_network_only_run_misses_the_two_node_thresholds_as_a_real_one_does():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import isolation_stage

    cmd = {"program": "all_reduce_perf", "collective": "all_reduce", "min_bytes": 8, "max_bytes": 16 << 30, "step": 2, "iters": 20, "warmup": 5, "check": 1}
    items = pods(HOSTS)
    result = {"platform": "aws", "gpu_architecture": "h100", "gpus_per_node": 8, "collective": "all_reduce", "workload": "nccl-all-reduce"}
    judge = isolation_stage.probe_judge(result, dict(isolation_stage.DEFAULT_JUDGING))(2, {"kind": "paths", "node": "n", "path": "control"})

    def judged(text):
        return judge({"results": [{"item": items[0], "log": text}], "pods": items}, {"outcome": "Complete"})

    whole = judged(nccl_logs.launcher_log("good", HOSTS, 8, "aws", "h100", cmd))
    network = judged(nccl_logs.launcher_log("good", HOSTS, 8, "aws", "h100", cmd, network_only=True))
    assert whole["verdict"] == "pass" and network["verdict"] in ("warn", "fail"), network["reason"]
    assert network["metrics"]["peak_busbw"] == pytest.approx(whole["metrics"]["peak_busbw"] * nccl_logs.NETWORK_ONLY, rel=0.01)
