# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""A run judged over several pods, one of which printed nothing its kind reads (a Python traceback, an image that
could not start), over the real corpora (tests/fixtures/real/dcgm, tests/fixtures/real/nccl): the run is judged, never a
crash, wherever the broken pod sits. The class of the gpu-burn fix in judging/gpu.py run_medians (test_gpu.py covers
gpu-burn, whose only real corpus is published figures)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import verdict

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "fixtures")
BROKEN = 'Traceback (most recent call last):\n  File "/workload/run.py", line 1, in <module>\nImportError: libcuda.so.1: cannot open shared object file\n'
VERDICTS = ("pass", "warn", "fail", "error")


def documents(*pattern):
    return [path for path in sorted(glob.glob(os.path.join(FIXTURES, *pattern))) if os.path.isfile(path) and not path.endswith(".md")]


def pairs(paths):
    """Each document with the next one (the last with the first): every document judged beside another."""
    return [(paths[index], paths[(index + 1) % len(paths)]) for index in range(len(paths))]


def run_of(texts, broken_at):
    texts = list(texts)
    texts.insert(broken_at, BROKEN)
    logs = dict(("job-node-0-%d" % index, text) for index, text in enumerate(texts))
    pods = [{"metadata": {"name": name}, "spec": {"nodeName": "n%d" % index}, "status": {"phase": "Succeeded"}} for index, name in enumerate(logs)]
    return logs, pods


def read(path):
    with open(path, errors="replace") as handle:
        return handle.read()


DCGM = documents("real", "dcgm", "*")
NCCL = documents("real", "nccl", "*.log")


def test_the_corpora_are_there():
    assert len(DCGM) >= 10 and len(NCCL) >= 50


@pytest.mark.parametrize("broken_at", [0, 1, 2])
@pytest.mark.parametrize("first, second", pairs(DCGM), ids=os.path.basename)
def test_a_dcgm_run_with_a_pod_without_dcgm_output_names_that_node(first, second, broken_at):
    logs, pods = run_of([read(first), read(second)], broken_at)
    judged = verdict.verdict_for(
        logs, {"gpu_architecture": "h100", "gpus_per_node": 8}, {"pods": pods, "pod_logs": logs}, {"results": "dcgm-diag", "workload": "dcgm-diag"}
    )
    assert judged["verdict"] in ("fail", "error"), judged["reason"]
    assert "n%d" % broken_at in judged["reason"] + " ".join(judged["errors"]), judged


@pytest.mark.parametrize("broken_at", [0, 1, 2])
@pytest.mark.parametrize("first, second", pairs(NCCL), ids=os.path.basename)
def test_an_nccl_run_with_a_pod_without_nccl_output_is_judged(first, second, broken_at):
    logs, pods = run_of([read(first), read(second)], broken_at)
    facts = {"platform": "aws", "gpu_architecture": "h100", "gpus_per_node": 8, "nodes": 2}
    judged = verdict.verdict_for(logs, facts, {"pods": pods, "pod_logs": logs}, {"workload": "nccl-all-reduce"})
    assert judged["verdict"] in VERDICTS and judged["reason"], judged
