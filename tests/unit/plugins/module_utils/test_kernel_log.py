# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""judging/kernel_log.py: a node's kernel Xids (the dcgm-diag workload's kernel_log section), each on its GPU by the
node's own nvidia-smi PCI map, judged by NVIDIA's catalog; and the dcgm verdict that a kernel Xid fails."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions, dcgm, kernel_log

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real")


def real(*parts):
    with open(os.path.join(REAL, *parts)) as handle:
        return handle.read()


# nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader prints "0, 00000000:97:00.0"
GPUS = "\n".join("# gpufleet-burnin gpu %d, 00000000:%s:00.0" % (index, bus) for index, bus in enumerate(["97", "BA", "DC", "ED"]))


def kernel_section(lines):
    """The dcgm-diag pod's kernel section around published kernel lines (their `kernel: ` journald tag dropped)."""
    return GPUS + "\n" + "\n".join(kernel_log.XID_MARK + line.split("kernel: ", 1)[-1] for line in lines)


def test_published_xid_45_lines_land_on_their_gpus_with_the_causes_action():
    # NVIDIA/open-gpu-kernel-modules#1150: Xid 45 caused by 149 (dc:00) and 145 (the others): NVLink5 errors, drain.
    judged = kernel_log.judge(kernel_section(real("xid", "ogkm-1150-xid-45-caused-by-149-145.txt").splitlines()))
    assert judged["verdict"] == "fail"
    assert sorted(set((item["gpu"], tuple(item["caused_by"]), item["action"]) for item in judged["xids"])) == [
        (0, (145,), "drain"),
        (1, (145,), "drain"),
        (2, (149,), "drain"),
        (3, (145,), "drain"),
    ]
    assert "GPU 2: kernel Xid 45 caused by Xid 149 (critical: drain)" in judged["reason"]


def test_a_published_fallen_off_the_bus_xid_is_a_reboot():
    lines = [line for line in real("xid", "kenorb-gist-xid-79-fallen-off-the-bus.txt").splitlines() if "NVRM: Xid" in line]
    text = "# gpufleet-burnin gpu 0, 00000000:65:00.0\n" + "\n".join(kernel_log.XID_MARK + line[line.index("NVRM: Xid") :] for line in lines)
    judged = kernel_log.judge(text)
    assert [(item["xid"], item["gpu"], item["action"]) for item in judged["xids"]] == [(79, 0, "reboot")] and judged["verdict"] == "fail"


def test_off_by_default_and_an_empty_window_passes():
    assert kernel_log.judge("# gpufleet-burnin dcgm-diag on n: dcgmi exit 0") is None
    assert kernel_log.judge(GPUS)["verdict"] == "pass"


def test_an_ignored_xid_alone_does_not_fail_and_an_unknown_gpu_is_named_by_its_bus():
    judged = kernel_log.judge(kernel_log.XID_MARK + "NVRM: Xid (PCI:0000:01:00): 63, pid=1, Row Remapper: New row marked for remapping")
    assert judged["verdict"] == "pass" and judged["xids"][0]["gpu"] is None and "PCI 0000:01:00" in judged["reason"]


def test_a_kernel_xid_fails_a_node_whose_diagnostic_passed_and_gives_the_catalogs_action():
    table = real("dcgm", "dcgm-4.4.2-level2-table-pass-1gpu.txt")
    lines = ["NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149"]
    log = table + "\n" + "# gpufleet-burnin gpu 0, 00000000:DC:00.0\n" + "\n".join(kernel_log.XID_MARK + line for line in lines)
    pods = [{"metadata": {"name": "dcgm-node-0-0"}, "spec": {"nodeName": "gpu-node-0"}, "status": {"phase": "Succeeded"}}]
    judged = dcgm.dcgm_verdict({"dcgm-node-0-0": log}, job={"outcome": "Complete", "pods": pods})
    assert judged["verdict"] == "fail" and judged["failed_nodes"] == ["gpu-node-0"], judged["reason"]
    assert "node gpu-node-0 GPU 0: kernel Xid 45 caused by Xid 149 (critical: drain)" in judged["reason"]
    recommended = actions.of_finding(judged["findings"][0])
    assert recommended["action"] == "drain", recommended
    # without the kernel section the same log passes
    assert dcgm.dcgm_verdict({"dcgm-node-0-0": table}, job={"outcome": "Complete", "pods": pods})["verdict"] == "pass"


# What the mutation run of judging/kernel_log.py (issue 47) found untested: each bound at its value and one past it,
# the verdict whatever the order of the Xids, a repeated Xid counted once.

# DGX A100's eight GPUs (nvidia-smi --query-gpu=index,pci.bus_id): bus 0F holds an F, which base 15 would not read.
A100_BUSES = ["07", "0F", "47", "4E", "87", "90", "B7", "BD"]
A100_GPUS = "\n".join("# gpufleet-burnin gpu %d, 00000000:%s:00.0" % (index, bus) for index, bus in enumerate(A100_BUSES))


def xid_line(bus, xid, text="pid=1, name=python3, Ch 00000001"):
    return kernel_log.XID_MARK + "NVRM: Xid (PCI:0000:%s:00): %d, %s" % (bus.lower(), xid, text)


def test_each_gpu_of_a_dgx_a100_is_found_by_its_bus_also_one_with_an_f():
    for index, bus in enumerate(A100_BUSES):
        judged = kernel_log.judge(A100_GPUS + "\n" + xid_line(bus, 48))
        assert [(item["gpu"], item["pci"]) for item in judged["xids"]] == [(index, "0000:%s:00" % bus.lower())]
        assert judged["reason"] == "GPU %d: kernel Xid 48 (critical: reset-gpu)" % index


def test_a_repeated_xid_on_one_gpu_counts_once_and_on_two_gpus_twice():
    judged = kernel_log.judge("\n".join([A100_GPUS, xid_line("07", 13), xid_line("07", 13), xid_line("0f", 13)]))
    assert [(item["xid"], item["gpu"]) for item in judged["xids"]] == [(13, 0), (13, 1)]
    assert judged["reason"] == "GPU 0: kernel Xid 13 (warning: retest); GPU 1: kernel Xid 13 (warning: retest)"
    assert judged["verdict"] == "warn" and len(judged["lines"]) == 2


def test_the_verdict_is_the_worst_xid_whatever_their_order():
    # Xid 48: critical (fail), 13: warning (warn), 63: info (pass)
    cases = [((13, 48), "fail"), ((48, 13), "fail"), ((63, 13), "warn"), ((13, 63), "warn"), ((63,), "pass"), ((63, 48, 13), "fail")]
    for xids, verdict in cases:
        text = "\n".join([A100_GPUS] + [xid_line(A100_BUSES[number], xid) for number, xid in enumerate(xids)])
        assert kernel_log.judge(text)["verdict"] == verdict, xids


def test_at_most_200_kernel_lines_are_kept():
    assert kernel_log.MAX_LINES == 200
    for count, kept in ((199, 199), (200, 200), (201, 200)):
        text = "\n".join(xid_line("07", 13, "line %d" % number) for number in range(count))
        lines = kernel_log.read(text)["lines"]
        assert len(lines) == kept and lines[-1].endswith("line %d" % (kept - 1)), count


def test_a_kernel_line_is_kept_up_to_300_characters():
    for length, kept in ((299, 299), (300, 300), (301, 300)):
        message = ("NVRM: Xid (PCI:0000:07:00): 13, " + "x" * length)[:length]
        assert kernel_log.read(kernel_log.XID_MARK + message)["lines"] == [message[:kept]], length


def test_the_reason_names_six_xids_and_counts_the_others():
    # distinct Xids on GPU 0: each its own entry, in the order of the log
    xids = [13, 31, 43, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92]

    def reason(count):
        return kernel_log.judge("\n".join([A100_GPUS] + [xid_line("07", xid) for xid in xids[:count]]))["reason"]

    named = "; ".join(
        "GPU 0: kernel Xid %d (%s)" % pair
        for pair in zip(xids, ["warning: retest", "warning: retest", "info: none", "critical: reset-gpu", "critical: drain", "critical: reset-gpu"])
    )
    assert reason(1) == "GPU 0: kernel Xid 13 (warning: retest)"
    assert reason(5) == named.rsplit("; ", 1)[0]
    assert reason(6) == named
    assert reason(7) == named + " (and 1 more)"
    assert reason(8) == named + " (and 2 more)"
    assert reason(13) == named + " (and 7 more)"
