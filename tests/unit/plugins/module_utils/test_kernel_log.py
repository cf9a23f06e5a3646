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
