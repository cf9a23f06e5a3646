# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Severity and recommended action (judging/actions.py, _lib/actions.yaml) on published evidence: Xid lines
(tests/fixtures/real/xid), DCGM diagnostics (tests/fixtures/real/dcgm) and a published NCCL fall back to sockets
(tests/fixtures/real/nccl through the fleet's replay), with the boundaries of the table."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import sys
import time

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding, from_verdict, node_entries, summarize
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.dcgm import dcgm_verdict
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
REAL = os.path.join(TESTS, "fixtures", "real")
sys.path.insert(0, os.path.join(TESTS, "fleet"))
import nccl_logs  # noqa: E402 pylint: disable=wrong-import-position


def read(*parts):
    with open(os.path.join(REAL, *parts), encoding="utf-8") as handle:
        return handle.read()


def test_the_vocabulary_is_the_issues_and_every_catalog_entry_has_a_rule():
    data = actions.table()
    assert data["actions"] == ["none", "monitor", "retest", "reset-gpu", "reboot", "drain", "replace"]
    assert data["severities"] == ["none", "info", "warning", "critical"]
    # NVIDIA's catalog for Ampere and newer lists codes 1 to 162; each bucket names a rule of the table.
    assert sorted(data["xids"]) == list(range(1, 163))
    assert set(entry["bucket"] for entry in data["xids"].values()) <= set(data["xid_buckets"])
    assert data["xids"][79] == {"mnemonic": "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "bucket": "RESTART_BM"}
    # Each DCGM severity of dcgmErrorSeverity_t but NONE (0) has a rule (the enum: tests/fixtures/real/dcgm/source).
    enum = read("dcgm", "source", "dcgm_errors.h-severity-enum.txt")
    numbers = [int(value) for value in re.findall(r"DCGM_ERROR_\w+\s*=\s*(\d+)", enum)]
    assert sorted(data["dcgm_severities"]) == [number for number in sorted(numbers) if number > 0]


@pytest.mark.parametrize(
    "name, codes, severity, action",
    [
        # 13 is RESTART_APP (retest), 109 RESET_GPU: the worse decides.
        ("gpud-pr46-dmesg-xid-13-109.txt", [13, 109], "critical", "reset-gpu"),
        ("kenorb-gist-xid-79-fallen-off-the-bus.txt", [79], "critical", "reboot"),
        # The line says "reset gpu to activate"; NVIDIA's catalog says IGNORE, and the catalog decides.
        ("ml-engineering-xid-63-row-remapper.txt", [63], "info", "none"),
        ("gpud-pr1174-kmsg-xid-149-145-nvlink.txt", [149, 145], "critical", "drain"),
    ],
)
def test_published_xid_lines_map_through_nvidias_catalog(name, codes, severity, action):
    text = read("xid", name)
    assert [item["xid"] for item in actions.xids_in(text)] == codes
    found = finding("gpu-node-0", "fleet", "fail", "its pod failed", {"log_lines": text.splitlines()})
    recommended = actions.of_finding(found)
    assert (recommended["severity"], recommended["action"]) == (severity, action), recommended
    assert recommended["action_why"].startswith("Xid "), recommended
    entry = node_entries(summarize([found]), [found])[0]
    assert [item["xid"] for item in entry["evidence"][0]["xids"]] == codes and entry["action"] == action


def test_dcgms_xid_message_names_the_code_and_the_gpu():
    form = re.search(r'DCGM_FR_XID_ERROR_MSG "([^"]+)"', read("xid", "dcgm_errors.h-xid-error-msg.txt")).group(1)
    message = form.replace("%u", "79", 1).replace("%u", "3", 1)
    assert actions.xids_in(message) == [{"xid": 79, "line": "Detected XID 79 for GPU 3", "gpu": 3}]
    # A DCGM failure without DCGM's severity is a retest; the Xid it names (79: RESTART_BM) is a reboot, as critical
    # and more disruptive, so it decides.
    failure = {"gpu": 3, "test": "diagnostic", "category": "Hardware", "message": message, "severity": None}
    found = finding("gpu-node-0", "dcgm", "fail", "node gpu-node-0 GPU 3: diagnostic failed", {"failures": [failure]})
    signals = [name for name, _unused in actions.signals_of_finding(found)]
    assert signals == ["xid_reboot", "dcgm_fail"] and actions.of_finding(found)["action"] == "reboot"
    entry = node_entries(summarize([found]), [found])[0]
    assert entry["gpus"] == [{"index": 3, "result": "fail", "reason": "diagnostic: Detected XID 79 for GPU 3"}]


def test_an_xid_past_the_catalog_is_a_retest_not_a_hardware_action():
    # 162 is the catalog's last code (RESET_GPU); 163 is in no catalog of this table.
    assert actions.decide([actions.xid_signal(162)])["action"] == "reset-gpu"
    unknown = actions.decide([actions.xid_signal(163)])
    assert (unknown["severity"], unknown["action"], unknown["action_rule"]) == ("warning", "retest", "xid_unknown")


def test_the_xid_scan_is_bounded_and_linear():
    many = "\n".join("NVRM: Xid (PCI:0000:%02x:00): %d, x" % (index, index) for index in range(1, 60))
    assert len(actions.xids_in(many)) == actions.MAX_XIDS
    # A code past the scanned prefix is not read; a huge line without a match is quick.
    assert actions.xids_in("x" * actions.MAX_SCAN + "NVRM: Xid (PCI:0000:65:00): 79, GPU has fallen off the bus.") == []
    started = time.time()
    assert actions.xids_in("NVRM: Xid (" + "(" * 2000000) == []
    assert time.time() - started < 2.0


@pytest.mark.parametrize(
    "name, verdict, severity, action, rule",
    [
        # DCGM severity 5 (CONFIG, persistence mode off): a configuration change, not a hardware action.
        ("dcgm-4.2.3-level1-gb10-persistence-config.json", "warn", "warning", "retest", "dcgm_config"),
        # dcgmi's table has no severity: a retest (with -j) decides between setup and GPU.
        ("dcgm-3.3.8-level3-table-cuda-init-fail-8gpu.txt", "fail", "critical", "retest", "dcgm_fail"),
        ("dcgm-4.0.0-level3-table-pass-4gpu.txt", "pass", "none", "none", "pass"),
        # dcgmi could not run at all: no GPU result.
        ("dcgm-nvvs-runtime-error-hostengine-log.txt", "error", "warning", "retest", "dcgm_error"),
    ],
)
def test_published_dcgm_results_map_by_dcgms_own_severity(name, verdict, severity, action, rule):
    judged = dcgm_verdict(read("dcgm", name), judging={"workload": "dcgm-diag"})
    assert judged["verdict"] == verdict, judged["reason"]
    recommended = actions.of_verdict(judged)
    assert (recommended["severity"], recommended["action"], recommended["action_rule"]) == (severity, action, rule), recommended


HOSTS = ["replay-1-node-0-0", "replay-1-node-0-1"]


def _pods():
    items = [
        {
            "metadata": {"name": "replay-1-launcher-0-0-abcde", "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "launcher"}},
            "spec": {"nodeName": "cpu-node", "hostname": "replay-1-launcher-0-0"},
            "status": {"phase": "Succeeded", "containerStatuses": [{"name": "launcher", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
        }
    ]
    for index, host in enumerate(HOSTS):
        items.append(
            {
                "metadata": {"name": host + "-x1y2z", "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}},
                "spec": {"nodeName": "gpu-node-%d" % index, "hostname": host},
                "status": {"phase": "Succeeded", "containerStatuses": [{"name": "node", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
            }
        )
    return items


def judged_replay(name, platform="aws", gpu="h100"):
    items = _pods()
    logs = [{"item": items[0], "log": nccl_logs.replay_log(name, HOSTS, platform, gpu)}]
    facts = {"platform": platform, "gpu_architecture": gpu}
    return verdict_for(logs, facts=facts, job={"outcome": "Complete", "pods": items}, judging={"collective": "all_reduce", "workload": "nccl-all-reduce"})


@pytest.mark.parametrize("name", ["socket-fallback", "ofi-tcp-fallback"])
def test_a_published_fall_back_is_a_configuration_fault_not_a_hardware_one(name):
    verdict = judged_replay(name)
    assert verdict["verdict"] == "fail" and verdict["transport"]["verdict"] == "fail"
    signals = [rule for rule, _unused in actions.signals_of_verdict(verdict)]
    # The fall back explains the busbw it costs: no node is drained for it.
    assert "transport_fallback" in signals
    recommended = actions.of_verdict(verdict)
    assert (recommended["severity"], recommended["action"], recommended["action_rule"]) == ("warning", "retest", "transport_fallback"), recommended


def test_a_published_crash_retests_the_nodes_it_names():
    verdict = judged_replay("crash", "gcp", "h100")
    assert verdict["verdict"] == "fail" and verdict["failed_nodes"] == ["gpu-node-0", "gpu-node-1"]
    recommended = actions.of_verdict(verdict)
    assert (recommended["severity"], recommended["action"], recommended["action_rule"]) == ("critical", "retest", "pod_failure"), recommended
    # Its nodes' findings: the log names their hosts (their pods exited 0), a pod failure each, not a bare fail.
    found = from_verdict(verdict)
    assert [(item["node"], actions.of_finding(item)["action_rule"]) for item in found] == [("gpu-node-0", "pod_failure"), ("gpu-node-1", "pod_failure")]


@pytest.mark.parametrize(
    "stage, verdict, evidence, action",
    [
        # A node's own busbw: at the pass threshold it passes (nothing to do), in the band it warns (monitor),
        # below the band it fails (drain).
        ("node", "pass", {"busbw": 432.0, "pass_busbw": 432.0, "threshold": "h100-single-node-all-reduce-peak"}, "none"),
        ("node", "warn", {"busbw": 431.9, "pass_busbw": 432.0, "threshold": "h100-single-node-all-reduce-peak"}, "monitor"),
        ("node", "fail", {"busbw": 383.9, "pass_busbw": 432.0, "threshold": "h100-single-node-all-reduce-peak"}, "drain"),
        ("isolation", "fail", {"busbw": 12.0, "pairs": []}, "drain"),
        ("fleet", "fail", {"pods": ["job-node-0-1: exited on signal 9"]}, "retest"),
        # The log named the node's host as failing, its pods exited 0 (node_findings.from_verdict: no pod reasons).
        ("fleet", "fail", {"pods": []}, "retest"),
        ("node", "fail", {}, "retest"),
    ],
)
def test_a_nodes_finding_gives_its_action(stage, verdict, evidence, action):
    assert actions.of_finding(finding("n1", stage, verdict, "why", evidence))["action"] == action


def test_a_fleet_verdict_below_its_threshold_names_no_node_so_it_retests():
    check = {"name": "peak", "verdict": "fail", "value": 200.0, "pass": 270.0, "warn": 250.0, "reason": "below"}
    assert actions.of_verdict({"verdict": "fail", "checks": [check]})["action"] == "retest"
    assert actions.of_verdict({"verdict": "warn", "checks": [dict(check, verdict="warn")]})["action"] == "monitor"


def test_the_worst_severity_wins_then_the_most_disruptive_action():
    assert actions.decide([("busbw_warn", ""), actions.xid_signal(109)])["action"] == "reset-gpu"
    # Both critical: drain is more disruptive than retest.
    assert actions.decide([("pod_failure", ""), ("isolation_culprit", "")])["action"] == "drain"
    assert actions.decide([])["action"] == "none" and actions.decide([("no-such-rule", "")])["severity"] == "none"


def test_a_cluster_takes_its_outcome_stages_and_nodes_into_account():
    assert actions.of_result({"outcome": "Mismatch"})["action_rule"] == "mismatch"
    assert actions.of_result({"outcome": "Unreachable"})["action_rule"] == "unreachable"
    assert actions.of_result({"outcome": "Timeout"})["action_rule"] == "no_result"
    culprit = finding("n2", "isolation", "fail", "slow with a good partner", {"busbw": 12.0})
    result = {"outcome": "Complete", "verdict": {"verdict": "pass", "checks": []}, "node_findings": [culprit]}
    assert actions.of_result(result)["action"] == "drain"


def _gpu_finding(figures):
    """The gpu stage's finding (judging/gpu.py) of a node whose GPUs print FIGURES [(tflops, gbps, errors)]."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import gpu

    prefix = "# gpufleet-burnin gpu-burn on n:"
    text = "\n".join(
        ["%s %d GPUs, torch 2.7.0+cu128, bf16 matmul 8192x8192 for 30 s, copy 1073741824 bytes x 50" % (prefix, len(figures))]
        + ["%s gpu %d uuid GPU-%d tflops %.2f gbps %.2f errors %d" % (prefix, index, index, t, g, e) for index, (t, g, e) in enumerate(figures)]
        + ["%s done, %d of %d GPUs measured" % (prefix, len(figures), len(figures))]
    )
    result = gpu.judge_node(gpu.parse_gpu_output(text), "n", {"gpu_architecture": "h100", "gpus_per_node": len(figures)})
    return finding("n", "gpu", result["verdict"], result["reason"], {"gpus": result["gpus"], "bad_gpus": result["bad_gpus"]})


def test_the_gpu_stage_resets_a_slow_gpu_drains_a_wrong_one_and_watches_a_warning():
    # 797.51 TFLOPS: the published 8192x8192 bf16 figure of an H100 (tests/fixtures/real/gpu); 676.59 its 2048 one.
    good = (797.51, 2500.0, 0)
    assert actions.of_finding(_gpu_finding([good] * 8))["action"] == "none"
    slow = actions.of_finding(_gpu_finding([good] * 7 + [(476.7, 2500.0, 0)]))
    assert (slow["severity"], slow["action"], slow["action_rule"]) == ("critical", "reset-gpu", "gpu_slow") and "GPU 7" in slow["action_why"]
    wrong = actions.of_finding(_gpu_finding([good] * 6 + [(476.7, 2500.0, 0), (797.51, 2500.0, 3)]))
    assert (wrong["action"], wrong["action_rule"]) == ("drain", "gpu_wrong_results") and "GPU 7" in wrong["action_why"]
    warned = actions.of_finding(_gpu_finding([(676.59, 2500.0, 0)] * 8))
    assert (warned["severity"], warned["action"]) == ("warning", "monitor")


def test_the_isolations_finer_conclusions_name_their_part_in_the_clusters_action():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation_parts

    slow = [{"name": "peak", "verdict": "fail", "value": 20.0, "pass": 80.0, "warn": 60.0}]
    base = {"outcome": "Complete", "verdict": {"verdict": "fail", "checks": slow}}
    assert actions.of_result(base)["action_rule"] == "busbw_fail_cluster"
    nic = isolation_parts._nic_part("n2", ["mlx5_0", "mlx5_1"], {"mlx5_0": {"verdict": "fail"}, "mlx5_1": {"verdict": "pass"}}, 10)
    got = actions.of_result(dict(base, isolation={"parts": [nic]}))
    assert (got["severity"], got["action"], got["action_rule"]) == ("critical", "drain", "isolation_nic") and got["action_why"].startswith("n2 NIC mlx5_0:")
    labels = {"a": {"topology.kubernetes.io/zone": "z1"}, "b": {"topology.kubernetes.io/zone": "z2"}}
    link = isolation_parts._pair_link(("a", "b"), labels, ["topology.kubernetes.io/zone"])
    assert link["conclusion"] == "found"
    got = actions.of_result(dict(base, isolation={"parts": [link]}))
    # The link explains the slow run: retest after the network is checked, no node drained.
    assert (got["action"], got["action_rule"]) == ("retest", "isolation_link") and got["action_why"].startswith("z1 - z2:")
    nvlink = {"level": "path", "node": "n3", "conclusion": "nvlink"}
    assert actions.of_result(dict(base, isolation={"parts": [nvlink]}))["action_rule"] == "isolation_nvlink"
    # A part that concluded nothing changes nothing.
    assert actions.of_result(dict(base, isolation={"parts": [dict(nic, conclusion="not_reproduced")]}))["action_rule"] == "busbw_fail_cluster"


def test_an_xid_45_naming_its_causes_is_judged_by_the_worst_of_them():
    # NVIDIA/open-gpu-kernel-modules#1150: only Xid 45 lines, each "caused by previous Xid 149/145" (NVLink5 errors).
    # Before: Xid 45 alone, no action (preemptive cleanup); the catalog's action of its causes is drain.
    text = read("xid", "ogkm-1150-xid-45-caused-by-149-145.txt")
    found = actions.xids_in(text)
    assert [(item["xid"], item["caused_by"]) for item in found] == [(45, [149, 145])]
    node = finding("gpu-node-0", "fleet", "fail", "its pod failed", {"log_lines": text.splitlines()})
    assert [item["xid"] for item in actions.finding_xids(node)] == [45, 149, 145]
    recommended = actions.of_finding(node)
    assert (recommended["severity"], recommended["action"]) == ("critical", "drain"), recommended
    # without the cause the same code decides nothing
    alone = finding("gpu-node-0", "fleet", "fail", "its pod failed", {"log_lines": [line.split(" caused by")[0] for line in text.splitlines()]})
    assert actions.of_finding(alone)["action"] != "drain"


@pytest.mark.parametrize(
    "line, causes", [("NVRM: Xid (PCI:0000:dc:00): 45, Ch 1 caused by previous Xid 149/145", [149, 145]), ("NVRM: Xid (PCI:0:1:0): 45, x", None)]
)
def test_the_causes_an_xid_line_names(line, causes):
    assert actions.xids_in(line)[0].get("caused_by") == causes


@pytest.mark.parametrize(
    "stage, verdict, evidence, signal",
    [
        # The isolation's culprit: a fail of the pairs stage only (a warn is a slow pair, judged by its busbw).
        ("isolation", "fail", {}, ("isolation_culprit", "")),
        ("isolation", "warn", {"busbw": 80.0}, ("busbw_warn", "busbw 80.0 GB/s")),
        # The report's own checks (judging/drift.py, siblings.py), each on both sides of fail.
        ("drift", "fail", {"key": "nccl", "value": "2.21.5"}, ("config_drift", "nccl 2.21.5")),
        ("drift", "warn", {"key": "nccl", "value": "2.21.5"}, ("config_drift_warn", "nccl 2.21.5")),
        ("siblings", "fail", {"metric": "gpu/gflops", "sku": "h100"}, ("sibling_slow", "gpu/gflops of SKU h100")),
        ("siblings", "warn", {"metric": "gpu/gflops", "sku": "h100"}, ("sibling_slow_warn", "gpu/gflops of SKU h100")),
    ],
)
def test_a_findings_signal_is_its_origins_on_both_sides_of_fail(stage, verdict, evidence, signal):
    found = {"node": "n1", "stage": stage, "verdict": verdict, "reason": "r", "evidence": evidence}
    assert actions.signals_of_finding(found) == [signal]


# The signal rules of signals_of_finding, each on both sides of its verdict (issue 47, third round): the findings
# are read back from JSON as a report holds them, so a verdict is compared by its value, not by its identity.
SIGNAL_ROWS = [
    ("node", "pass", {"busbw": 432.0}, "r", [("pass", "")]),
    ("gpu", "fail", {"bad_gpus": [{"index": 3, "result": "fail"}]}, "r", [("gpu_slow", "GPU 3")]),
    ("gpu", "warn", {"bad_gpus": [{"index": 3, "result": "warn"}]}, "r", [("gpu_slow_warn", "GPU 3")]),
    ("isolation", "fail", {}, "r", [("isolation_culprit", "")]),
    ("siblings", "fail", {"metric": "gpu/gflops", "sku": "h100"}, "r", [("sibling_slow", "gpu/gflops of SKU h100")]),
    ("drift", "fail", {"key": "nccl", "value": "2.21.5"}, "r", [("config_drift", "nccl 2.21.5")]),
    # A failed node of a fleet verdict (its pods' reasons), a node stage's failed pod; a warning naming a failed
    # pod is no pod failure.
    ("fleet", "fail", {"pods": []}, "r", [("pod_failure", "")]),
    ("node", "fail", {}, "pod p-0 failed: exit code 1", [("pod_failure", "")]),
    ("node", "warn", {}, "pod p-0 failed: exit code 1", [("warn", "")]),
    ("fleet", "warn", {"pods": []}, "r", [("warn", "")]),
    # The pod's " failed" read in the reason's first 200 characters: ending at the 200th, then one past it.
    ("node", "fail", {}, "pod " + "x" * 189 + " failed", [("pod_failure", "")]),
    ("node", "fail", {}, "pod " + "x" * 190 + " failed", [("fail", "")]),
    # A passing finding's Xid is its only signal.
    (
        "node",
        "pass",
        {"log_lines": ["NVRM: Xid (PCI:0000:dc:00): 79, pid=1, GPU has fallen off the bus."]},
        "r",
        [("xid_reboot", "Xid 79 ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS (RESTART_BM)")],
    ),
    ("node", "fail", {"busbw": 383.9}, "r", [("busbw_fail_node", "busbw 383.9 GB/s")]),
    ("node", "warn", {"busbw": 431.9}, "r", [("busbw_warn", "busbw 431.9 GB/s")]),
    # Nothing more to say: the verdict itself.
    ("node", "fail", {}, "r", [("fail", "")]),
    ("node", "warn", {}, "r", [("warn", "")]),
]


@pytest.mark.parametrize("stage, verdict, evidence, reason, signals", SIGNAL_ROWS)
def test_a_findings_signals_read_from_json_are_its_verdicts_rule(stage, verdict, evidence, reason, signals):
    found = json.loads(json.dumps({"node": "n1", "stage": stage, "verdict": verdict, "reason": reason, "evidence": evidence}))
    assert actions.signals_of_finding(found) == signals
