"""What `dcgmi diag -r <level> -j` prints on a fleet node: the stand-in log of the catalogue's dcgm-diag workload.

The JSON has DCGM 4.x's shape as dcgmi writes it (the published GB10 output in tests/fixtures/real/dcgm/: "DCGM
Diagnostic" -> test_categories -> tests -> results per GPU entity, test_summary, entity_groups, metadata; keys sorted,
tab-indented, "key" : value, as jsoncpp writes them), with the tests each level runs (level 1 the software plugin; 2
adds pcie and memory; 3 adds diagnostic and the targeted stress/power and memory bandwidth tests; 4 memtest and
pulse_test). Every GPU passes, except the node's failing GPUs (the fleet spec's `dcgm_failing_gpus`), which fail the
memory test with a volatile double-bit ECC error as DCGM reports it: "Fail" with DCGM_FR_VOLATILE_DBE_DETECTED (error
4) at severity ISOLATE (2) (NVIDIA/DCGM's dcgm_errors.h). A node of the spec's `dcgm_hung_nodes` stands for a dcgmi
that never ends (NVIDIA/DCGM#247): its log is what the workload prints when its coreutils timeout stops dcgmi (no
JSON, the timeout marker line, exit 124), at once rather than after the timeout. The lines before and after the JSON
are what templates/workloads/dcgm-diag.yaml prints.

Replays (the spec's `dcgm_replay: {<node>: <name>}`, a node's name or `<cluster>-gpu-<i>`): that node's pod prints
published dcgmi output of the corpus tests/fixtures/real/dcgm (PROVENANCE.md names the sources) verbatim between the
workload's lines instead (REPLAYS). dcgmi's output names no host, so nothing in it is rewritten.
"""

import hashlib
import json
import re
from pathlib import Path

# (category, test) per level, each level adding to the one before.
TESTS = {
    1: [("Deployment", "software")],
    2: [("Integration", "pcie"), ("Hardware", "memory")],
    3: [("Hardware", "diagnostic"), ("Stress", "targeted_stress"), ("Stress", "targeted_power"), ("Stress", "memory_bandwidth")],
    4: [("Stress", "memtest"), ("Hardware", "pulse_test")],
}
DEVICE_IDS = {"h100": "2330", "h200": "2335", "b200": "2901", "gb200": "2941", "gb300": "31c2", "a100": "20b2"}
FAILING_TEST = "memory"


def level_of(words):
    """The level of `dcgmi diag -r <level>` in the pod's command words, or None when the pod runs no dcgmi diag."""
    text = " ".join(words)
    if "dcgmi" not in text:
        return None
    match = re.search(r"dcgmi diag (?:-r|--run) (\d)", text)
    return int(match.group(1)) if match else 1


def timeout_of(words):
    """The seconds of the workload's `timeout -k 30 <seconds> dcgmi ...`, or None."""
    match = re.search(r"timeout (?:-k \d+ )?(\d+) dcgmi", " ".join(words))
    return int(match.group(1)) if match else None


def hung_log(host, gpus, level, seconds):
    """The pod's log when its dcgmi never ended and the workload's timeout stopped it."""
    return (
        "\n".join(
            [
                "# gpufleet-burnin dcgm-diag on %s: dcgmi diag -r %d -j on %d GPUs, timeout %d s" % (host, level, gpus, seconds),
                "# gpufleet-burnin dcgm-diag on %s: dcgmi diag timed out after %d s" % (host, seconds),
                "# gpufleet-burnin dcgm-diag on %s: dcgmi exit 124" % host,
            ]
        )
        + "\n"
    )


def failure_message(gpu):
    return "Detected 14 volatile double-bit ECC error(s) in GPU %d. Drain the GPU and reset it or reboot the node." % gpu


def diag_log(host, gpus, level=2, failing=(), gpu="h100"):
    """The pod's log: the workload's marker line, DCGM's JSON for GPUS GPUs at LEVEL, the exit line."""
    failing = set(int(index) for index in failing or ())
    categories = {}
    for step in range(1, min(max(int(level), 1), 4) + 1):
        for category, name in TESTS[step]:
            results = []
            for index in range(gpus):
                fails = name == FAILING_TEST and index in failing
                entry = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": index, "status": "Fail" if fails else "Pass"}
                if fails:
                    entry["warnings"] = [{"warning": failure_message(index), "error_id": 4, "error_category": 3, "error_severity": 2}]
                results.append(entry)
            summary = "Fail" if any(entry["status"] == "Fail" for entry in results) else "Pass"
            categories.setdefault(category, []).append({"name": name, "results": results, "test_summary": {"status": summary}})
    serial = hashlib.sha256(host.encode()).hexdigest()
    doc = {
        "DCGM Diagnostic": {"test_categories": [{"category": category, "tests": tests} for category, tests in categories.items()]},
        "entity_groups": [
            {
                "entity_group": "GPU",
                "entity_group_id": 1,
                "entities": [
                    {
                        "entity_id": index,
                        "device_id": DEVICE_IDS.get(gpu, "2330"),
                        "serial_num": "1652%09d" % (int(serial[index * 4 : index * 4 + 6], 16) % 10**9),
                    }
                    for index in range(gpus)
                ],
            }
        ],
        "metadata": {"version": "4.5.2", "Driver Version Detected": "570.148.08"},
    }
    head = "# gpufleet-burnin dcgm-diag on %s: dcgmi diag -r %d -j on %d GPUs" % (host, level, gpus)
    # jsoncpp's StyledWriter, as dcgmi prints (tests/fixtures/real/dcgm/): sorted keys, tabs, "key" : value.
    text = json.dumps(doc, indent="\t", sort_keys=True, separators=(",", " : "))
    tail = "# gpufleet-burnin dcgm-diag on %s: dcgmi exit %d" % (host, 226 if failing & set(range(gpus)) else 0)
    return "\n".join([head, text, tail]) + "\n"


def bus_id(index):
    """The PCI bus of GPU INDEX on the stand-in's nodes (an HGX board's order: 0x18, 0x2a, ...)."""
    return 0x18 + 0x12 * index


def kernel_section(gpus, xids):
    """What the dcgm-diag workload prints with kernel_log on (templates/workloads/dcgm-diag.yaml): nvidia-smi's
    `index, pci.bus_id` per GPU, then the run's kernel Xid lines, here XIDS ([gpu, xid] or [gpu, xid, cause]) in the
    driver's form (NVIDIA/open-gpu-kernel-modules nvErrorLog_va; the cause as NVIDIA/open-gpu-kernel-modules#1150 shows)."""
    lines = ["# gpufleet-burnin gpu %d, 00000000:%02X:00.0" % (index, bus_id(index)) for index in range(gpus)]
    for item in xids:
        gpu, xid = item[0], item[1]
        cause = (" caused by previous Xid %d" % item[2]) if len(item) > 2 else ""
        lines.append("# gpufleet-burnin kmsg: NVRM: Xid (PCI:0000:%02x:00): %d, pid=4242, name=python3, Ch 00000001%s" % (bus_id(gpu), xid, cause))
    return "\n".join(lines) + "\n"


CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "real" / "dcgm"
REPLAYS = {
    # NVIDIA/DCGM#253: `srun dcgmi diag -r 2` on 8 B200, pcie Fail with an internal error (DCGM 4.4.1 table).
    "pcie-fail": "dcgm-4.4.1-level2-table-pcie-fail-b200-8gpu.txt",
    # An AWS guide's `dcgmi diag -r 2` on p4de (DCGM 3.3.3 table), every check Pass.
    "pass": "dcgm-3.3.3-level2-table-pass-8gpu.txt",
    # `dcgmi diag -r 1 -j` on a GB10 (DCGM 4.2.3 JSON): persistence mode off, "Fail" at CONFIG severity (a warning).
    "persistence-config": "dcgm-4.2.3-level1-gb10-persistence-config.json",
    # NVIDIA/DCGM#254: dcgmi cannot load its plugins: no result at all.
    "cannot-load-plugins": "dcgm-4.4.x-error-cannot-load-plugins.txt",
}


def replay_log(name, host, gpus, level):
    """The pod's log for replay NAME (REPLAYS) between the workload's marker lines; ValueError naming the values."""
    if name not in REPLAYS:
        raise ValueError("dcgm replay must be one of %s, got %r" % (", ".join(sorted(REPLAYS)), name))
    text = (CORPUS / REPLAYS[name]).read_text(encoding="utf-8")
    head = "# gpufleet-burnin dcgm-diag on %s: dcgmi diag -r %d -j on %d GPUs" % (host, level, gpus)
    return head + "\n" + text + ("" if text.endswith("\n") else "\n")


__all__ = ["REPLAYS", "diag_log", "hung_log", "level_of", "replay_log", "timeout_of"]
