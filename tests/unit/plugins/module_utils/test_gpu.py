# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The gpu stage's reader and judge (plugins/module_utils/judging/gpu.py) on the gpu-burn workload's own lines
(_lib/workloads/gpu-burn.py.j2): thresholds, the siblings' median, their boundaries, bad and hostile output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import time

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import gpu
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_stage import judge_node_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file

HOST = "job-gpu-node-0-0"


def uuid(index):
    return "GPU-%08x-1b2c-4d5e-8f90-a1b2c3d4e5f6" % (0x5EED0000 + index)


def log(figures, count=None, done=True, host=HOST):
    """The workload's log for FIGURES: [(tflops, gbps[, errors])] or an error string per GPU, in index order."""
    prefix = "# gpufleet-burnin gpu-burn on %s:" % host
    lines = [
        "%s %d GPUs, torch 2.10.0a0+nv26.01, bf16 matmul 8192x8192 for 30 s, copy 1073741824 bytes x 50" % (prefix, len(figures) if count is None else count)
    ]
    for index, item in enumerate(figures):
        if isinstance(item, str):
            lines.append("%s gpu %d uuid %s error %s" % (prefix, index, uuid(index), item))
        else:
            errors = item[2] if len(item) > 2 else 0
            lines.append("%s gpu %d uuid %s tflops %s gbps %s errors %d" % (prefix, index, uuid(index), _num(item[0]), _num(item[1]), errors))
    if done:
        lines.append("%s done, %d of %d GPUs measured" % (prefix, sum(1 for item in figures if not isinstance(item, str)), len(figures)))
    return "\n".join(lines) + "\n"


def _num(value):
    return value if isinstance(value, str) else "%.1f" % value


def judged(figures, arch="h100", gpus_per_node=8, **kwargs):
    return gpu.judge_node(gpu.parse_gpu_output(log(figures, **kwargs)), "n1", {"gpu_architecture": arch, "gpus_per_node": gpus_per_node})


def by_index(result):
    return dict((item["index"], item) for item in result["gpus"])


GOOD = (795.0, 2500.0)


def test_the_thresholds_come_from_the_expected_figures_with_the_ratios():
    table = gpu.load_gpu_thresholds()
    h100 = table["architectures"]["h100"]
    assert (h100["tflops"]["expected"], h100["tflops"]["pass"], h100["tflops"]["warn"]) == (794.5, 715.1, 635.6)
    assert (h100["gbps"]["expected"], h100["gbps"]["pass"], h100["gbps"]["warn"]) == (2500.0, 2250.0, 2000.0)
    assert table["defaults"]["sibling_percent"] == 10.0
    # gb300: no published dense bf16 figure; memory only.
    assert set(table["architectures"]["gb300"]) == {"gbps"}


def test_every_architecture_is_one_the_collection_knows_and_every_number_has_its_source():
    known = read_yaml_file(os.path.join(LIB_DIR, "gpu-defaults.yaml"), "GPU defaults")["architectures"]
    raw = read_yaml_file(gpu.THRESHOLDS_FILE, "GPU thresholds")
    assert {"h100", "h200", "b200", "gb200", "gb300", "a100"} <= set(raw["architectures"]) <= set(known)
    for arch, figures in raw["architectures"].items():
        for figure, record in figures.items():
            assert set(record["source"]) == {"peak", "expected"}, (arch, figure)
            assert record["expected"] <= record["peak"], (arch, figure)


def test_a_healthy_node_passes_naming_its_figures():
    result = judged([GOOD] * 8)
    assert result["verdict"] == "pass"
    assert result["reason"] == "node n1: 8 GPU(s) passed, bf16 matmul 795.0..795.0 TFLOPS, memory copy 2500.0..2500.0 GB/s"
    assert [item["uuid"] for item in result["gpus"]] == [uuid(index) for index in range(8)]
    assert set(item["result"] for item in result["gpus"]) == {"pass"} and result["bad_gpus"] == []


def test_exactly_at_the_pass_threshold_passes_and_just_below_warns():
    # Every GPU at the same figure keeps the siblings' rule out of the way (715.1 is 10.05 % below 795).
    assert judged([(715.1, 2250.0)] * 8)["verdict"] == "pass"
    result = judged([(715.0, 2500.0)] * 8)
    assert result["verdict"] == "warn" and len(result["bad_gpus"]) == 8
    assert result["reason"].startswith("node n1 GPU 0 (%s): bf16 matmul 715.0 TFLOPS below the pass threshold 715.1 (h100-tflops); node n1 GPU 1 " % uuid(0))
    assert judged([(795.0, 2249.9)] * 8)["verdict"] == "warn"
    # Alone it warns; beside seven at 795 the same 715.1 is more than 10 % below their median.
    assert by_index(judged([GOOD] * 7 + [(715.1, 2500.0)]))[7]["result"] == "fail"


def test_below_a_floor_without_a_sustained_all_gpu_figure_warns_and_says_so():
    # The siblings' rule is kept out of the way: every GPU at the same figure. _lib/gpu-thresholds.yaml's floors are
    # short single-GPU best-shape measurements (MAMF) or inferences: below them a GPU warns, never fails, and says why.
    assert judged([(635.6, 2500.0)] * 8)["verdict"] == "warn"
    result = judged([(635.5, 2500.0)] * 8)
    assert result["verdict"] == "warn" and len(result["bad_gpus"]) == 8
    assert (
        "bf16 matmul 635.5 TFLOPS below the fail threshold 635.6 (h100-tflops; warn only: no sustained all-GPU figure is published for it)"
        in result["gpus"][0]["reason"]
    )
    assert judged([(795.0, 1999.9)] * 8)["verdict"] == "warn"


def test_exactly_at_a_sustained_floor_warns_and_just_below_fails():
    table = gpu.load_gpu_thresholds()
    sustained = dict(table, architectures={"h100": dict((f, dict(r, sustained=True)) for f, r in table["architectures"]["h100"].items())})

    def run(figures):
        return gpu.judge_node(gpu.parse_gpu_output(log(figures)), "n1", {"gpu_architecture": "h100", "gpus_per_node": 8}, {"thresholds": sustained})

    assert run([(635.6, 2500.0)] * 8)["verdict"] == "warn"
    result = run([(635.5, 2500.0)] * 8)
    assert result["verdict"] == "fail" and "bf16 matmul 635.5 TFLOPS below the fail threshold 635.6 (h100-tflops)" in result["gpus"][0]["reason"]
    assert run([(795.0, 2000.0)] * 8)["verdict"] == "warn" and run([(795.0, 1999.9)] * 8)["verdict"] == "fail"
    # no record of the file claims a sustained all-GPU figure today
    assert not any(r["sustained"] for figures in table["architectures"].values() for r in figures.values())


def test_exactly_the_sibling_percent_below_the_median_passes_and_more_fails_above_the_absolute_threshold():
    # Seven GPUs at 800 TFLOPS: the median is 800; 720 is exactly 10 % below it, above the pass threshold 715.1.
    at = by_index(judged([(800.0, 2500.0)] * 7 + [(720.0, 2500.0)]))
    assert at[7]["result"] == "pass", at[7]["reason"]
    assert at[7]["figures"]["tflops_median"] == 800.0
    result = judged([(800.0, 2500.0)] * 7 + [(719.9, 2500.0)])
    assert result["verdict"] == "fail"
    assert result["reason"] == (
        "node n1 GPU 7 (%s): bf16 matmul 719.9 TFLOPS is 10.0 %% below the median 800.0 of the node's 8 GPUs (more than 10 %%)" % uuid(7)
    )
    assert result["bad_gpus"] == [{"index": 7, "uuid": uuid(7), "result": "fail"}]
    # The same rule on memory: 2700 x 0.9 = 2430 passes, 2429.9 fails, both above the absolute 2250.
    assert by_index(judged([(795.0, 2700.0)] * 7 + [(795.0, 2430.0)]))[7]["result"] == "pass"
    assert by_index(judged([(795.0, 2700.0)] * 7 + [(795.0, 2429.9)]))[7]["result"] == "fail"


def test_the_nodes_result_is_its_worst_gpu_and_names_only_those():
    result = judged([GOOD, (700.0, 2500.0), GOOD, (795.0, 1500.0), GOOD, GOOD, GOOD, GOOD])
    assert result["verdict"] == "fail"
    assert [item["index"] for item in result["bad_gpus"]] == [1, 3]
    # GPU 1 warns on the absolute threshold but fails against its siblings (11.9 % below 795).
    assert result["reason"].startswith("node n1 GPU 1 (%s): bf16 matmul 700.0 TFLOPS below the pass threshold" % uuid(1))
    # GPU 3 fails against its siblings (40 % below); its absolute floor only warns (no sustained all-GPU figure)
    assert "node n1 GPU 3 (%s): memory copy 1500.0 GB/s below the fail threshold 2000.0 (h100-gbps; warn only" % uuid(3) in result["reason"]
    assert "memory copy 1500.0 GB/s is 40.0 % below the median 2500.0 of the node's 8 GPUs" in result["reason"]
    assert "GPU 0 " not in result["reason"]


def test_a_gpu_whose_test_raised_or_whose_products_differ_fails():
    result = judged([GOOD] * 6 + ["OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB", (795.0, 2500.0, 3)])
    gpus = by_index(result)
    assert gpus[6]["result"] == "fail" and gpus[6]["reason"] == "the test failed: OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB"
    assert gpus[6]["figures"]["tflops"] is None
    assert gpus[7]["result"] == "fail" and gpus[7]["reason"] == "3 element(s) of the last matmul differ from the first (same inputs)"
    # The errored GPU is no sibling: the median is the seven measured ones'.
    assert gpus[0]["figures"]["tflops_median"] == 795.0


def test_a_non_finite_figure_fails_its_gpu():
    gpus = by_index(judged([GOOD] * 7 + [("nan", "2500.0")]))
    assert gpus[7]["result"] == "fail" and gpus[7]["reason"] == "bf16 matmul is nan"


def test_a_missing_gpu_fails_the_node_naming_its_index():
    result = judged([GOOD] * 7)
    assert result["verdict"] == "fail"
    assert result["reason"] == "node n1: 7 of 8 GPUs reported (no line for GPU 7)"
    # The pod saw 8 but printed 6 lines and no end line: cut short.
    text = "\n".join(log([GOOD] * 8).splitlines()[:7])
    result = gpu.judge_node(gpu.parse_gpu_output(text), "n1", {"gpu_architecture": "h100", "gpus_per_node": None})
    assert result["reason"] == "node n1: 6 of 8 GPUs reported (no line for GPU 6, 7); the output stops before its end line"


def test_an_architecture_without_thresholds_is_judged_by_its_siblings_with_the_on_missing_verdict():
    result = judged([(1000.0, 5000.0)] * 3 + [(800.0, 5000.0)], arch="rtxpro6000", gpus_per_node=4)
    assert result["verdict"] == "fail" and [item["index"] for item in result["bad_gpus"]] == [3]
    result = judged([(1000.0, 5000.0)] * 4, arch="rtxpro6000", gpus_per_node=4)
    assert result["verdict"] == "warn"
    assert result["reason"] == (
        "node n1: no TFLOPS or GB/s threshold for gpu_architecture 'rtxpro6000' in _lib/gpu-thresholds.yaml: judged against the node's GPUs only"
    )
    parsed = gpu.parse_gpu_output(log([(1000.0, 5000.0)] * 4))
    assert gpu.judge_node(parsed, "n1", {"gpu_architecture": "rtxpro6000", "gpus_per_node": 4}, {"on_missing": "pass"})["verdict"] == "pass"
    gb300 = gpu.judge_node(gpu.parse_gpu_output(log([(2000.0, 6500.0)] * 4)), "n1", {"gpu_architecture": "gb300", "gpus_per_node": 4})
    assert gb300["verdict"] == "warn" and "no TFLOPS threshold for gpu_architecture 'gb300'" in gb300["reason"]
    with pytest.raises(ConfigError, match="^on_missing: must be pass, warn or fail"):
        gpu.judge_node(parsed, "n1", {"gpu_architecture": "h100", "gpus_per_node": 4}, {"on_missing": "maybe"})


def test_the_reader_takes_the_first_of_a_repeated_gpu_and_ignores_other_lines():
    text = "noise\n" + log([GOOD, GOOD]) + "# gpufleet-burnin gpu-burn on %s: gpu 1 uuid %s tflops 1.0 gbps 1.0 errors 0\n" % (HOST, uuid(1))
    parsed = gpu.parse_gpu_output("2026-12-03T17:00:00Z " + text.replace("\n# gpufleet", "\nkubelet: # gpufleet", 1))
    assert [item["tflops"] for item in parsed["gpus"]] == [795.0, 795.0]
    assert parsed["problems"] == ["GPU 1 reported twice: the first line counts"]
    assert parsed["host"] == HOST and parsed["count"] == 2 and parsed["torch"] == "2.10.0a0+nv26.01" and parsed["done"]


def test_a_log_without_gpu_burn_lines_is_refused():
    for text in ("", "python: can't open file\n", "# gpufleet-burnin gpu-burn on : nothing\n"):
        with pytest.raises(gpu.GpuParseError, match="no gpu-burn line"):
            gpu.parse_gpu_output(text)


def test_hostile_output_is_read_in_bounded_linear_time():
    prefix = "# gpufleet-burnin gpu-burn on %s: " % HOST
    # One line of 20 MB after the marker: cut at MAX_LINE, no match, no time.
    started = time.monotonic()
    parsed = gpu.parse_gpu_output(prefix + "gpu 0 uuid " + "9" * 20000000 + "\n" + log([GOOD]))
    # 200000 marker lines of near-misses, then more GPU lines than MAX_GPUS.
    text = (prefix + "gpu 1 uuid x tflops 1.0 gbps 1.0 errors\n") * 200000
    text += "".join(prefix + "gpu %d uuid U tflops 1.0 gbps 1.0 errors 0\n" % index for index in range(gpu.MAX_GPUS + 10))
    many = gpu.parse_gpu_output(text)
    assert time.monotonic() - started < 10
    assert [item["index"] for item in parsed["gpus"]] == [0]
    assert len(many["gpus"]) == gpu.MAX_GPUS and many["problems"] == ["more than %d GPU lines: the rest are not read" % gpu.MAX_GPUS]


def test_the_node_stage_names_node_index_and_uuid_and_carries_figures_and_thresholds():
    pods = [{"metadata": {"name": "job-gpu-node-0-%d" % index}, "spec": {"nodeName": "n%d" % index}} for index in range(2)]
    logs = {"job-gpu-node-0-0": log([GOOD] * 8), "job-gpu-node-0-1": log([GOOD] * 5 + [(500.0, 2500.0)] + [GOOD] * 2, host="job-gpu-node-0-1")}
    verdict = judge_node_stage(
        logs,
        facts={"gpu_architecture": "h100", "gpus_per_node": 8},
        job={"pods": pods},
        judging={"stage": "gpu", "workload": "gpu-burn", "results": "gpu-burn"},
    )
    assert verdict["verdict"] == "fail" and verdict["failed_nodes"] == ["n1"] and verdict["succeeded_nodes"] == ["n0"]
    assert verdict["reason"].startswith("node n1 GPU 5 (%s): bf16 matmul 500.0 TFLOPS below the fail threshold 635.6 (h100-tflops; warn only" % uuid(5))
    assert "500.0 TFLOPS is 37.1 % below the median 795.0 of the node's 8 GPUs" in verdict["reason"]
    bad = [item for item in verdict["findings"] if item["node"] == "n1"][0]
    assert (bad["stage"], bad["verdict"]) == ("gpu", "fail")
    assert bad["evidence"]["bad_gpus"] == [{"index": 5, "uuid": uuid(5), "result": "fail"}]
    record = bad["evidence"]["gpus"][5]
    assert set(record) == {"index", "uuid", "result", "reason", "figures"}
    assert record["figures"]["tflops"] == 500.0 and record["figures"]["tflops_warn"] == 635.6 and record["figures"]["tflops_median"] == 795.0
    assert [item["id"] for item in bad["evidence"]["thresholds"]] == ["h100-tflops", "h100-gbps"]


def test_the_workload_renders_the_script_and_refuses_bad_parameters():
    rendered = workload_catalog.render_workload("gpu-burn", {"nodes": 2, "gpus_per_node": 8, "platform": "aws", "gpu_architecture": "h100", "seconds": 5})
    assert rendered["framework"] == "exec" and rendered["results"] == "gpu-burn"
    assert rendered["image"] == "nvcr.io/nvidia/pytorch:26.01-py3"
    assert rendered["trainer"]["command"] == ["python", "-c"]
    script = rendered["trainer"]["args"][0]
    compile(script, "gpu-burn", "exec")
    assert "N, SECONDS, COPY_BYTES, COPY_ITERS = 8192, 5, 1073741824, 50" in script and gpu.PREFIX.strip() in script
    for key, value in (("matrix_size", 1000), ("matrix_size", 8200), ("seconds", 0), ("copy_bytes", "1G"), ("copy_iters", True)):
        with pytest.raises(Exception, match="%s: " % key):
            workload_catalog.render_workload("gpu-burn", {"nodes": 1, "gpus_per_node": 8, "platform": "", "gpu_architecture": "", key: value})


def test_a_bad_thresholds_file_is_refused_naming_the_field(tmp_path):
    path = tmp_path / "gpu-thresholds.yaml"
    path.write_text(
        "schema: gpufleet.burnin/gpu-thresholds/v1\ndefaults: {pass_ratio: 0.9, warn_ratio: 0.8, sibling_percent: 10}\n"
        "architectures:\n  h100:\n    tflops: {peak: 989, expected: -1, source: x}\n"
    )
    with pytest.raises(ConfigError, match=r"^gpu-thresholds.yaml architectures.h100.tflops.expected: must be a number > 0, got -1"):
        gpu.load_gpu_thresholds(str(path))
    path.write_text("schema: other\n")
    with pytest.raises(ConfigError, match="must be a mapping with schema: gpufleet.burnin/gpu-thresholds/v1"):
        gpu.load_gpu_thresholds(str(path))


def test_the_gpu_stage_plans_gpu_burn_on_every_gpu_node_one_pod_each_and_names_its_parser():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import stages
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import role_plan
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

    variables = check_role_vars({"burnin_entry_name": "e", "burnin_nodes": 2, "burnin_stages": ["gpu", "fleet"]})
    assert variables["burnin_stages"] == ["gpu", "fleet"] and "gpu" in stages.JOB_STAGES
    labels = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "node.kubernetes.io/instance-type": "p5.48xlarge"}
    nodes = [{"metadata": {"name": "n%d" % index, "labels": labels}, "status": {"capacity": {"nvidia.com/gpu": "8"}}} for index in range(3)]
    plan = role_plan(variables, "aws", "h100", "r1", "ns", {"nodes": nodes, "detection": {"gpu_nodes": 3}}, stage="gpu")
    trainjob = plan["objects"][-1]
    assert trainjob["metadata"]["name"] == "e-r1-gpu" and trainjob["spec"]["trainer"]["numNodes"] == 3
    assert trainjob["spec"]["trainer"]["command"] == ["python", "-c"] and gpu.PREFIX.strip() in trainjob["spec"]["trainer"]["args"][0]
    assert (plan["stage"]["workload"], plan["stage"]["parser"], plan["stage"]["whole_logs_of"]) == ("gpu-burn", "gpu-burn", ["node"])
    runtime = [obj for obj in plan["objects"] if obj["kind"] == "TrainingRuntime"][0]
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        terms = job["template"]["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms[-1]["topologyKey"] == "kubernetes.io/hostname"
    # A misspelt stage is refused naming the allowed ones.
    with pytest.raises(ConfigError, match="unknown stage 'gpus'; allowed: node, fleet, isolation, dcgm, gpu"):
        check_role_vars({"burnin_stages": ["gpus"]})


# ------------------------------------------------------------------ survivors of the first mutation run (docs/mutation.md)


def test_two_gpus_are_siblings_one_is_not_and_the_median_of_an_odd_count_is_its_middle():
    two = judged([(800.0, 2500.0), (700.0, 2500.0)], gpus_per_node=2)
    # The median of two is their mean, 750: 700 is 6.7 % below it, within the percent; at 600 it is 14.3 % below.
    assert two["verdict"] == "warn" and by_index(two)[1]["figures"]["tflops_median"] == 750.0
    assert by_index(judged([(800.0, 2500.0), (600.0, 2500.0)], gpus_per_node=2))[1]["reason"].endswith(
        "is 14.3 % below the median 700.0 of the node's 2 GPUs (more than 10 %)"
    )
    assert "tflops_median" not in judged([(800.0, 2500.0)], gpus_per_node=1)["gpus"][0]["figures"]
    five = by_index(judged([(800.0, 2500.0), (810.0, 2500.0), (820.0, 2500.0), (830.0, 2500.0), (500.0, 2500.0)], gpus_per_node=5))
    assert five[0]["figures"]["tflops_median"] == 810.0
    assert five[4]["reason"].endswith("bf16 matmul 500.0 TFLOPS is 38.3 % below the median 810.0 of the node's 5 GPUs (more than 10 %)")


def test_a_non_finite_figure_does_not_stop_the_other_figures_judgement():
    gpus = by_index(judged([GOOD] * 7 + [("inf", "1500.0")]))
    assert gpus[7]["reason"].startswith("bf16 matmul is inf; memory copy 1500.0 GB/s below the fail threshold 2000.0 (h100-gbps; warn only")
    assert gpus[7]["result"] == "fail"


def test_a_marker_line_that_names_no_host_is_skipped_and_the_rest_read():
    text = "# gpufleet-burnin gpu-burn on bad host!: gpu 0 uuid X tflops 1.0 gbps 1.0 errors 0\n" + log([GOOD, GOOD])
    assert [item["index"] for item in gpu.parse_gpu_output(text)["gpus"]] == [0, 1]


def test_the_reader_keeps_exactly_max_gpus_and_the_node_shows_at_most_three_output_notes():
    prefix = "# gpufleet-burnin gpu-burn on %s: " % HOST
    text = "".join(prefix + "gpu %d uuid U tflops 795.0 gbps 2500.0 errors 0\n" % index for index in range(gpu.MAX_GPUS))
    parsed = gpu.parse_gpu_output(text)
    assert len(parsed["gpus"]) == gpu.MAX_GPUS and parsed["problems"] == []
    repeated = log([GOOD] * 8) + "".join(prefix + "gpu %d uuid U tflops 1.0 gbps 1.0 errors 0\n" % index for index in range(4))
    result = gpu.judge_node(gpu.parse_gpu_output(repeated), "n1", {"gpu_architecture": "h100", "gpus_per_node": 8})
    assert [check["name"] for check in result["checks"]] == ["output"] * 3 and result["verdict"] == "warn"


def test_no_gpu_line_and_more_lines_than_the_header_counted():
    only_end = "# gpufleet-burnin gpu-burn on %s: done, 0 of 0 GPUs measured\n" % HOST
    assert (
        gpu.judge_node(gpu.parse_gpu_output(only_end), "n1", {"gpu_architecture": "h100", "gpus_per_node": None})["reason"]
        == "node n1: no GPU line in the output"
    )
    # The header said 4 (e.g. CUDA_VISIBLE_DEVICES), eight lines came: nothing is missing.
    assert judged([GOOD] * 8, count=4, gpus_per_node=None)["verdict"] == "pass"


def test_the_percent_below_the_median_is_not_rounded_down():
    assert by_index(judged([(800.0, 2500.0)] * 7 + [(700.0, 2500.0)]))[7]["reason"].endswith(
        "is 12.5 % below the median 800.0 of the node's 8 GPUs (more than 10 %)"
    )


def pods_and_logs(figures_by_node):
    pods, logs = [], {}
    for index, figures in enumerate(figures_by_node):
        name = "job-gpu-node-0-%d" % index
        pods.append({"metadata": {"name": name}, "spec": {"nodeName": "n%d" % index}, "status": {"phase": "Succeeded"}})
        logs[name] = figures if isinstance(figures, str) else log(figures, host=name)
    return pods, logs


H100 = {"gpu_architecture": "h100", "gpus_per_node": 8}


def test_the_run_verdict_over_every_pod():
    pods, logs = pods_and_logs([[GOOD] * 8, [GOOD] * 8])
    verdict = gpu.gpu_verdict(logs, facts=H100, job={"outcome": "Complete", "pods": pods, "pod_logs": logs}, judging={"workload": "gpu-burn"})
    assert verdict["verdict"] == "pass" and verdict["reason"] == "TrainJob Complete; per-GPU test passed on 2 node(s), 16 GPU(s)"
    assert verdict["checks"][0] == {"name": "job", "verdict": "pass", "reason": "TrainJob Complete"}
    assert [item["id"] for item in verdict["thresholds"]] == ["h100-gbps", "h100-tflops"]
    assert (verdict["warnings"], verdict["notes"], verdict["collective"], verdict["results"]) == (0, [], None, "gpu-burn")
    assert verdict["nodes"] == ["n0", "n1"] and verdict["failed_nodes"] == [] and verdict["succeeded_nodes"] == ["n0", "n1"]
    assert verdict["metrics"] == {"nodes_judged": 2, "gpus_judged": 16, "bad_gpus": 0}


def test_the_run_verdict_is_its_worst_node_and_names_only_those():
    pods, logs = pods_and_logs([[GOOD] * 7 + [(700.0, 2500.0)], [GOOD] * 7 + [(500.0, 2500.0)], [(716.0, 2500.0)] * 8])
    verdict = gpu.gpu_verdict(logs, facts=H100, job={"outcome": "Failed", "reason": "BackoffLimitExceeded", "pods": pods, "pod_logs": logs})
    assert verdict["checks"][0] == {"name": "job", "verdict": "fail", "reason": "TrainJob Failed: BackoffLimitExceeded"}
    assert (
        verdict["verdict"] == "fail" and "n2" not in verdict["reason"] and verdict["reason"].startswith("TrainJob Failed: BackoffLimitExceeded; node n0 GPU 7")
    )
    assert verdict["failed_nodes"] == ["n0", "n1"] and verdict["nodes"] == ["n0", "n1", "n2"]
    # n2: 716 TFLOPS alike, above the pass 715.1 and 9.9 % below the run's median 795: passes
    assert [item["verdict"] for item in verdict["findings"]] == ["fail", "fail", "pass"]


def test_a_node_whose_gpus_are_all_slow_alike_fails_against_the_runs_gpus():
    # n1's eight GPUs agree with each other (its own median) but are 24.5 % below the run's: a slow node
    pods, logs = pods_and_logs([[GOOD] * 8, [(600.0, 2500.0)] * 8, [GOOD] * 8])
    verdict = gpu.gpu_verdict(logs, facts=H100, job={"pods": pods, "pod_logs": logs})
    assert verdict["failed_nodes"] == ["n1"]
    n1 = verdict["gpu"]["n1"]
    assert "bf16 matmul 600.0 TFLOPS is 24.5 % below the median 795.0 of the run's 24 GPUs (more than 10 %)" in n1["gpus"][0]["reason"]
    assert "of the node's" not in n1["gpus"][0]["reason"] and n1["gpus"][0]["figures"]["tflops_run_median"] == 795.0
    # one node alone: no run yardstick
    assert "tflops_run_median" not in gpu.gpu_verdict(log([(600.0, 2500.0)] * 8), facts=H100)["gpu"][HOST]["gpus"][0]["figures"]


def test_a_pod_without_gpu_burn_lines_is_an_error_worse_than_a_failed_node():
    pods, logs = pods_and_logs([[GOOD] * 7 + [(500.0, 2500.0)], "Traceback (most recent call last):\nImportError: torch\n"])
    verdict = gpu.gpu_verdict(logs, facts=H100, job={"pods": pods, "pod_logs": logs})
    assert verdict["verdict"] == "error"
    assert verdict["reason"].startswith("node n1 (pod job-gpu-node-0-1): no gpu-burn result: no gpu-burn line")
    assert [item["node"] for item in verdict["findings"]] == ["n0"] and verdict["errors"] == [verdict["reason"]]
    assert gpu.gpu_verdict({}, facts=H100)["reason"] == "no result: no pod log to read gpu-burn output from"


@pytest.mark.parametrize("broken_at", [0, 1, 2])
def test_a_pod_without_gpu_burn_lines_beside_two_measured_nodes_is_an_error_not_a_crash(broken_at):
    # The run's yardstick is taken over the nodes that printed figures; a pod with none (its log holds only a
    # Python traceback) is that node's error, wherever it sits among the pods.
    figures = [[GOOD] * 8, [GOOD] * 7 + [(500.0, 2500.0)]]
    figures.insert(broken_at, "Traceback (most recent call last):\nImportError: torch\n")
    pods, logs = pods_and_logs(figures)
    verdict = gpu.gpu_verdict(logs, facts=H100, job={"pods": pods, "pod_logs": logs})
    broken = "n%d" % broken_at
    assert verdict["verdict"] == "error" and verdict["errors"] == [verdict["reason"]]
    assert verdict["reason"].startswith("node %s (pod job-gpu-node-0-%d): no gpu-burn result: no gpu-burn line" % (broken, broken_at))
    assert sorted(item["node"] for item in verdict["findings"]) == sorted(node for node in ("n0", "n1", "n2") if node != broken)
    # The two measured nodes still have the run's median (16 GPUs) beside their own.
    assert all(verdict["gpu"][node]["gpus"][0]["figures"]["tflops_run_median"] == 795.0 for node in verdict["gpu"])


def test_one_text_without_pods_is_named_by_its_host_and_has_no_attribution():
    verdict = gpu.gpu_verdict(log([GOOD] * 8), facts=H100)
    assert verdict["verdict"] == "pass" and list(verdict["gpu"]) == [HOST] and "attribution" not in verdict
    assert verdict["findings"][0]["node"] == HOST
    # Empty pod logs beside the text: the text is read.
    assert list(gpu.gpu_verdict(log([GOOD] * 8), facts=H100, job={"pod_logs": {}})["gpu"]) == [HOST]


def test_the_fleet_stage_judges_a_gpu_burn_run_per_gpu():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for

    pods, logs = pods_and_logs([[GOOD] * 7 + [(500.0, 2500.0)]])
    verdict = verdict_for(
        logs, facts=dict(H100, platform="aws", nodes=1), job={"outcome": "Complete", "pods": pods}, judging={"workload": "gpu-burn", "results": "gpu-burn"}
    )
    assert verdict["results"] == "gpu-burn" and verdict["failed_nodes"] == ["n0"] and verdict["findings"][0]["stage"] == "fleet"


@pytest.mark.parametrize(
    "body, message",
    [
        ("defaults: {pass_ratio: 0.9, warn_ratio: 0.8, sibling_percent: 100}\n", "defaults need warn_ratio <= pass_ratio <= 1 and sibling_percent < 100"),
        ("defaults: {pass_ratio: 0.9, warn_ratio: 0.95, sibling_percent: 10}\n", "defaults need warn_ratio <= pass_ratio"),
        ("defaults: {pass_ratio: 0.9, warn_ratio: 0.8, sibling_percent: ten}\n", "defaults.sibling_percent: must be a number > 0, got 'ten'"),
        (
            "defaults: {pass_ratio: 0.9, warn_ratio: 0.8, sibling_percent: 10}\narchitectures: {h100: x}\n",
            "architectures.h100: must map tflops and gbps to records",
        ),
        (
            "defaults: {pass_ratio: 0.9, warn_ratio: 0.8, sibling_percent: 10}\narchitectures: {h100: {tflop: {peak: 1, expected: 1, source: x}}}\n",
            "architectures.h100: must map tflops and gbps",
        ),
        (
            "defaults: {pass_ratio: 0.9, warn_ratio: 0.8, sibling_percent: 10}\narchitectures: {h100: {tflops: {peak: 1, expected: 1}}}\n",
            "architectures.h100.tflops: must be a record with peak, expected and source",
        ),
    ],
)
def test_bad_threshold_defaults_and_records_are_refused(tmp_path, body, message):
    path = tmp_path / "gpu-thresholds.yaml"
    path.write_text("schema: gpufleet.burnin/gpu-thresholds/v1\n" + body)
    with pytest.raises(ConfigError, match=re.escape(message)):
        gpu.load_gpu_thresholds(str(path))


def test_equal_ratios_are_allowed(tmp_path):
    path = tmp_path / "gpu-thresholds.yaml"
    path.write_text(
        "schema: gpufleet.burnin/gpu-thresholds/v1\ndefaults: {pass_ratio: 0.9, warn_ratio: 0.9, sibling_percent: 99}\n"
        "architectures: {h100: {tflops: {peak: 989, expected: 800, source: x}}}\n"
    )
    table = gpu.load_gpu_thresholds(str(path))
    assert table["architectures"]["h100"]["tflops"]["pass"] == table["architectures"]["h100"]["tflops"]["warn"] == 720.0


def test_a_figure_far_below_the_median_reports_its_distance_and_a_zero_expected_figure_is_refused(tmp_path):
    assert by_index(judged([(800.0, 2500.0)] * 7 + [(300.0, 2500.0)]))[7]["reason"].endswith(
        "is 62.5 % below the median 800.0 of the node's 8 GPUs (more than 10 %)"
    )
    path = tmp_path / "gpu-thresholds.yaml"
    path.write_text(
        "schema: gpufleet.burnin/gpu-thresholds/v1\ndefaults: {pass_ratio: 0.9, warn_ratio: 0.8, sibling_percent: 10}\n"
        "architectures: {h100: {tflops: {peak: 989, expected: 0, source: x}}}\n"
    )
    with pytest.raises(ConfigError, match="tflops.expected: must be a number > 0, got 0$"):
        gpu.load_gpu_thresholds(str(path))
    path.write_text("schema: aaa\n")
    with pytest.raises(ConfigError, match="must be a mapping with schema"):
        gpu.load_gpu_thresholds(str(path))


def test_the_parse_error_and_the_run_errors_are_bounded():
    with pytest.raises(gpu.GpuParseError) as caught:
        gpu.parse_gpu_output("nothing\n")
    assert str(caught.value) == "no gpu-burn line ('# gpufleet-burnin gpu-burn on <host>: ...') in the log"
    pods, logs = pods_and_logs(["no output"] * 12)
    verdict = gpu.gpu_verdict(logs, facts=H100, job={"pods": pods, "pod_logs": logs})
    assert verdict["verdict"] == "error" and len(verdict["errors"]) == 10 and len([c for c in verdict["checks"] if c["verdict"] == "error"]) == 12


def test_more_survivors_ratios_above_one_a_rounded_warn_the_missing_list_and_a_failed_pod(tmp_path):
    path = tmp_path / "gpu-thresholds.yaml"
    for defaults, message in (
        ("{pass_ratio: 1.5, warn_ratio: 0.8, sibling_percent: 10}", "defaults need warn_ratio <= pass_ratio <= 1"),
        ("{pass_ratio: 0.9, warn_ratio: 0.8, sibling_percent: 150}", "sibling_percent < 100"),
        ("{pass_ratio: x, warn_ratio: 0.8, sibling_percent: 10}", "gpu-thresholds.yaml defaults.pass_ratio: must be a number > 0, got 'x'"),
    ):
        path.write_text("schema: gpufleet.burnin/gpu-thresholds/v1\ndefaults: %s\n" % defaults)
        with pytest.raises(ConfigError, match=re.escape(message)):
            gpu.load_gpu_thresholds(str(path))
    # 271.2 x 0.8 = 216.96, kept to one decimal as the reasons print it.
    assert gpu.load_gpu_thresholds()["architectures"]["a100"]["tflops"]["warn"] == 217.0
    result = gpu.judge_node(gpu.parse_gpu_output(log([GOOD] * 2, count=20)), "n1", {"gpu_architecture": "h100", "gpus_per_node": None})
    assert result["reason"] == "node n1: 2 of 20 GPUs reported (no line for GPU %s)" % ", ".join(str(index) for index in range(2, 18))
    pods, logs = pods_and_logs([[GOOD] * 7 + [(500.0, 2500.0)]])
    pods[0]["status"] = {"phase": "Failed", "containerStatuses": [{"name": "node", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}
    verdict = gpu.gpu_verdict(logs, facts=H100, job={"outcome": "Failed", "pods": pods, "pod_logs": logs})
    assert verdict["failed_nodes"] == ["n0"] and verdict["succeeded_nodes"] == []


# ------------------------------------------------------------------------------------------------ the burn (issue 41)


def burn_line(index, tflops=795.0, gbps=2500.0, errors=0, products=81920, throttle="none", sm=1980, power=699.0, temp=71):
    """One GPU's line as the burn prints it (_lib/workloads/gpu-burn.py.j2 measure and Telemetry.fields)."""
    tail = " sm_mhz %d power_w %.1f temp_c %d throttle %s" % (sm, power, temp, throttle) if throttle is not None else ""
    return "# gpufleet-burnin gpu-burn on %s: gpu %d uuid %s tflops %.1f gbps %.1f errors %d products %d mem_gib 71.8%s" % (
        HOST,
        index,
        uuid(index),
        tflops,
        gbps,
        errors,
        products,
        tail,
    )


def burn_judged(lines):
    head = (
        "# gpufleet-burnin gpu-burn on %s: %d GPUs, torch 2.10.0a0+nv26.01, bf16 matmul 8192x8192 for 120 s on 90 %% of free memory, "
        "copy 1073741824 bytes x 50, nvml"
        % (
            HOST,
            len(lines),
        )
    )
    done = "# gpufleet-burnin gpu-burn on %s: done, %d of %d GPUs measured" % (HOST, len(lines), len(lines))
    return gpu.judge_node(gpu.parse_gpu_output("\n".join([head] + lines + [done]) + "\n"), "n1", {"gpu_architecture": "h100", "gpus_per_node": len(lines)})


def test_the_burn_line_carries_products_memory_clocks_power_temperature_and_throttle_reasons():
    parsed = gpu.parse_gpu_output(burn_line(0, throttle="sw_power_cap,hw_slowdown"))
    record = parsed["gpus"][0]
    assert (record["products"], record["mem_gib"], record["sm_mhz"], record["power_w"], record["temp_c"]) == (81920, 71.8, 1980.0, 699.0, 71.0)
    assert record["throttle"] == ["sw_power_cap", "hw_slowdown"]
    # without NVML in the image the line has no telemetry, and the older line (no products) still reads
    assert gpu.parse_gpu_output(burn_line(0, throttle=None))["gpus"][0]["throttle"] is None
    assert gpu.parse_gpu_output(log([GOOD]))["gpus"][0]["products"] is None


@pytest.mark.parametrize(
    "reasons, result",
    [
        ("none", "pass"),
        ("sw_power_cap", "pass"),  # a loaded GPU at its power cap: how it runs
        ("sync_boost,applications_clocks_setting", "pass"),
        ("sw_thermal_slowdown", "warn"),
        ("hw_slowdown", "fail"),
        ("sw_power_cap,hw_thermal_slowdown", "fail"),
        ("hw_power_brake_slowdown", "fail"),
    ],
)
def test_a_throttled_gpu_names_its_reason(reasons, result):
    gpus = by_index(burn_judged([burn_line(i) for i in range(7)] + [burn_line(7, throttle=reasons, sm=1410, temp=88)]))
    assert gpus[7]["result"] == result, gpus[7]["reason"]
    if result != "pass":
        named = [name for name in reasons.split(",") if name in gpu.THROTTLE_FAIL + gpu.THROTTLE_WARN]
        assert "throttled: %s (NVML clocks-event reasons while it burned; SM clock down to 1410 MHz, 699 W, 88 C)" % ", ".join(named) in gpus[7]["reason"]
    assert gpus[7]["figures"]["throttle"] == ([] if reasons == "none" else reasons.split(","))


def test_every_product_is_checked_and_the_mismatches_counted_over_all_of_them():
    gpus = by_index(burn_judged([burn_line(i) for i in range(7)] + [burn_line(7, errors=12, products=81920)]))
    assert gpus[7]["result"] == "fail"
    assert "12 element(s) differ from the first product over 81920 products of the same inputs" in gpus[7]["reason"]


def test_the_burn_defaults_and_bounds():
    def render(**params):
        data = dict({"nodes": 1, "gpus_per_node": 8, "platform": "aws", "gpu_architecture": "h100"}, **params)
        return workload_catalog.render_workload("gpu-burn", data)["trainer"]["args"][0]

    script = render()
    # 120 s by default (level 1), 90 % of free memory, every product compared on the device, read once
    assert "N, SECONDS, COPY_BYTES, COPY_ITERS = 8192, 120, 1073741824, 50" in script and "MEMORY_PERCENT = 90" in script
    assert "torch.cuda.mem_get_info(device)" in script and "bad += (out != first).sum()" in script and "errors = int(bad.item())" in script
    assert "SECONDS, COPY_BYTES, COPY_ITERS = 8192, 600," in render(level=2) and "= 8192, 1800," in render(level=3)
    assert "= 8192, 45," in render(level=3, seconds=45)
    # copy_bytes: two buffers at most a quarter of the GPU's memory (H100 80 GiB: 10 GiB each), refused before a job
    assert "COPY_ITERS = 8192, 120, 10737418240, 50" in render(copy_bytes=10 << 30)
    with pytest.raises(
        Exception, match=r"copy_bytes: .* from 1048576 to 10737418240 \(two buffers of at most an eighth of h100's 80 GiB each\), got 68719476736"
    ):
        render(copy_bytes=64 << 30)
    assert "COPY_ITERS = 8192, 120, 34359738368, 50" in render(gpu_architecture="gb300", copy_bytes=32 << 30)
    for key, value in (("level", 4), ("level", True), ("memory_percent", 5), ("memory_percent", 96), ("seconds", 86401)):
        with pytest.raises(Exception, match="%s: " % key):
            render(**{key: value})
