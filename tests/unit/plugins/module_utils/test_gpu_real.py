# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The gpu stage's thresholds and judge on published per-GPU figures (tests/fixtures/real/gpu/PROVENANCE.md): each
document's figures, read off the verbatim text, become the gpu-burn workload's lines and are judged. Healthy
published GPUs must pass; the published figures of too small a matmul must not."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import gpu

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real", "gpu")


def read(name):
    with open(os.path.join(REAL, name)) as handle:
        return handle.read()


def diagonal(text):
    """The diagonal of p2pBandwidthLatencyTest's matrix: each GPU's copy within its own memory."""
    rows = [line.split() for line in text.splitlines() if re.match(r"^\s+\d+\s+\d", line)]
    return [float(row[1 + int(row[0])]) for row in rows]


def bf16(text):
    return dict((int(size), float(value)) for size, value in re.findall(r"^\s+(\d+)x\d+: ([\d.]+) TFLOPS$", text, re.M))


def lines(figures):
    prefix = "# gpufleet-burnin gpu-burn on published:"
    out = ["%s %d GPUs, torch 2.7.0+cu128, bf16 matmul 8192x8192 for 30 s, copy 1073741824 bytes x 50" % (prefix, len(figures))]
    out += ["%s gpu %d uuid GPU-%d tflops %.2f gbps %.2f errors 0" % (prefix, index, index, tflops, gbps) for index, (tflops, gbps) in enumerate(figures)]
    return "\n".join(out + ["%s done, %d of %d GPUs measured" % (prefix, len(figures), len(figures))])


def test_the_documents_hold_the_figures_provenance_names():
    assert diagonal(read("nccl-1264-h100-sxm-p2p-unidirectional-disabled.txt")) == [2474.76, 2512.44, 2498.88, 2499.38, 2499.63, 2514.71, 2504.76, 2503.38]
    assert bf16(read("torch-perf-79-h100-80gb-hbm3-bf16.txt")) == {1024: 176.62, 2048: 676.59, 4096: 788.72, 8192: 797.51, 10240: 719.72}
    table = read("ml-engineering-mamf-bf16-table.txt")
    assert re.search(r"\| NVIDIA H100 SXM  \|  794\.5 \|    989 \|", table) and re.search(r"\| NVIDIA A100 SXM  \|  271\.2 \|    312 \|", table)


def test_the_thresholds_are_the_published_measurements():
    table = gpu.load_gpu_thresholds()["architectures"]
    mamf = dict(
        (name, float(value)) for name, value in re.findall(r"^\| NVIDIA (\S+) SXM\s+\|\s+([\d.]+) \|", read("ml-engineering-mamf-bf16-table.txt"), re.M)
    )
    assert table["h100"]["tflops"]["expected"] == mamf["H100"] and table["a100"]["tflops"]["expected"] == mamf["A100"]
    copies = diagonal(read("nccl-1264-h100-sxm-p2p-unidirectional-disabled.txt"))
    assert min(copies) <= table["h100"]["gbps"]["expected"] <= max(copies)


def test_a_published_healthy_h100_node_passes_every_gpu():
    # The eight GPUs' published own-memory copies, each with the published 8192x8192 bf16 figure.
    copies = diagonal(read("nccl-1264-h100-sxm-p2p-unidirectional-disabled.txt"))
    tflops = bf16(read("torch-perf-79-h100-80gb-hbm3-bf16.txt"))[8192]
    result = gpu.judge_node(gpu.parse_gpu_output(lines([(tflops, gbps) for gbps in copies])), "h100-node", {"gpu_architecture": "h100", "gpus_per_node": 8})
    assert result["verdict"] == "pass", result["reason"]
    assert result["reason"] == "node h100-node: 8 GPU(s) passed, bf16 matmul 797.5..797.5 TFLOPS, memory copy 2474.8..2514.7 GB/s"
    # Their 1.6 % spread is far inside the sibling percent.
    assert result["gpus"][0]["figures"]["gbps_median"] == 2501.5


def test_the_published_figures_of_each_matrix_size_grade_as_the_thresholds_say():
    figures = bf16(read("torch-perf-79-h100-80gb-hbm3-bf16.txt"))
    grades = {}
    for size, tflops in figures.items():
        # One GPU at the size's figure among seven at the 8192 one: the absolute thresholds and the siblings both apply.
        result = gpu.judge_node(
            gpu.parse_gpu_output(lines([(figures[8192], 2500.0)] * 7 + [(tflops, 2500.0)])), "n", {"gpu_architecture": "h100", "gpus_per_node": 8}
        )
        grades[size] = result["gpus"][7]["result"]
    # 1024 (176.62) and 2048 (676.59: warns on 715.1, but 15 % below its siblings) are too small to fill an H100;
    # 4096, 8192 and 10240 (719.72, above 715.1 and 9.8 % below 797.51) pass.
    assert grades == {1024: "fail", 2048: "fail", 4096: "pass", 8192: "pass", 10240: "pass"}
    alone = gpu.judge_node(gpu.parse_gpu_output(lines([(figures[2048], 2500.0)] * 8)), "n", {"gpu_architecture": "h100", "gpus_per_node": 8})
    assert alone["verdict"] == "warn"


MAMF_744 = "ml-engineering-744d01e1-mamf-bf16-table.txt"
P2P_744 = "ml-engineering-744d01e1-p2p-writes-a100-h100-gb200.txt"


def mamf(text):
    return dict((name, float(value)) for name, value in re.findall(r"^\| NVIDIA (\S+) SXM\s+\|\s+([\d.]+) \|", text, re.M))


def matrices(text):
    """The diagonals of the document's p2pBandwidthLatencyTest matrices, in order (each in its own ``` block)."""
    return [diagonal(block) for block in text.split("```")[1::2]]


def test_the_newer_documents_hold_the_figures_provenance_names():
    assert mamf(read(MAMF_744)) == {"A100": 271.2, "GH200": 828.6, "H100": 794.5, "B300": 1769.0, "B200": 1745.0, "GB200": 1822.0}
    a100, h100, gb200 = matrices(read(P2P_744))
    assert a100 == [1581.48, 1581.48, 1594.39, 1545.50, 1584.69, 1583.08, 1586.29, 1591.14]
    assert h100 == [2494.51, 2533.95, 2532.67, 2525.38, 2526.02, 2521.18, 2529.85, 2519.78]
    assert gb200 == [5714.94, 5820.72, 5814.63, 5816.66]


def test_the_measured_thresholds_of_the_newer_documents():
    table = gpu.load_gpu_thresholds()["architectures"]
    figures = mamf(read(MAMF_744))
    assert table["b200"]["tflops"]["expected"] == figures["B200"] and table["gb200"]["tflops"]["expected"] == figures["GB200"]
    # The older MAMF table's H100 and A100 figures are unchanged in the newer one.
    assert table["h100"]["tflops"]["expected"] == figures["H100"] and table["a100"]["tflops"]["expected"] == figures["A100"]
    a100, h100, gb200 = matrices(read(P2P_744))
    for arch, copies in (("a100", a100), ("h100", h100), ("gb200", gb200)):
        assert min(copies) <= table[arch]["gbps"]["expected"] <= max(copies), arch


def test_the_inferred_thresholds_are_the_peak_times_the_lowest_measured_efficiency():
    raw = gpu.read_yaml_file(gpu.THRESHOLDS_FILE, "GPU thresholds")
    efficiency = {"tflops": raw["defaults"]["tflops_efficiency"], "gbps": raw["defaults"]["gbps_efficiency"]}
    measured = {"tflops": [], "gbps": []}
    for arch, figures in raw["architectures"].items():
        for figure, record in figures.items():
            source = record["source"]["expected"]
            if source.startswith("(inference) peak x"):
                assert record["expected"] == round(record["peak"] * efficiency[figure], 1), (arch, figure)
            elif not source.startswith("(inference)"):
                measured[figure].append(record["expected"] / record["peak"])
    # Each efficiency is at most the lowest measured one (rounded down), so an inferred threshold is no stricter.
    assert efficiency["tflops"] <= min(measured["tflops"]) < efficiency["tflops"] + 0.01
    assert efficiency["gbps"] <= min(measured["gbps"]) < efficiency["gbps"] + 0.01


def test_a_published_healthy_gb200_and_a100_node_pass_every_gpu():
    figures = mamf(read(MAMF_744))
    a100, dummy, gb200 = matrices(read(P2P_744))
    result = gpu.judge_node(
        gpu.parse_gpu_output(lines([(figures["GB200"], gbps) for gbps in gb200])), "gb200-node", {"gpu_architecture": "gb200", "gpus_per_node": 4}
    )
    assert result["verdict"] == "pass", result["reason"]
    # GPU 0's 5714.94 is 1.7 % below the median of the four.
    assert result["gpus"][0]["figures"]["gbps_median"] == 5815.6
    result = gpu.judge_node(
        gpu.parse_gpu_output(lines([(figures["A100"], gbps) for gbps in a100])), "a100-node", {"gpu_architecture": "a100", "gpus_per_node": 8}
    )
    assert result["verdict"] == "pass", result["reason"]
