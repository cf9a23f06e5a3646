# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Truncation never passes: every nccl-tests and DCGM document of the published corpus (tests/fixtures/real/), cut
after every line, is judged ``error`` or ``fail`` unless the cut still holds its format's end marker (nccl-tests'
``# Avg bus bandwidth`` footer of its last table, dcgmi's closing border)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import dcgm, nccl_results, verdict

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real")
_AVG = re.compile(r"#\s*Avg bus bandwidth")
_CLOSE = re.compile(r"^\s*\+-+\+-+\+\s*$")


def _read(*parts):
    with open(os.path.join(REAL, *parts)) as handle:
        return handle.read()


def _nccl_tests_documents():
    names = []
    for name in sorted(os.listdir(os.path.join(REAL, "nccl"))):
        if not name.endswith(".log"):
            continue
        try:
            runs = nccl_results.parse_nccl_runs(_read("nccl", name), allow_partial=True)
        except nccl_results.NcclParseError:
            continue
        if any(run["rows"] or run["program"] or run["config"] for run in runs):
            names.append(name)
    return names


NCCL_TESTS = _nccl_tests_documents()
DCGM_TABLES = sorted(name for name in os.listdir(os.path.join(REAL, "dcgm")) if name.endswith(".txt") and "| Diagnostic" in _read("dcgm", name))


def test_the_corpus_has_the_documents_to_cut():
    assert len(NCCL_TESTS) >= 25 and len(DCGM_TABLES) >= 7


@pytest.mark.parametrize("name", NCCL_TESTS)
def test_no_cut_nccl_tests_document_passes(name):
    lines = _read("nccl", name).splitlines()
    ends = [number for number, line in enumerate(lines) if _AVG.search(line)]
    last_end = ends[-1] if ends else None
    passed = []
    for cut in range(len(lines)):
        if last_end is not None and cut > last_end:
            break  # the cut holds the footer of the last table: that is the whole result
        text = "\n".join(lines[:cut])
        judged = verdict.verdict_for(text, judging={"on_missing": "pass"})
        if judged["verdict"] not in ("error", "fail"):
            passed.append((cut, judged["verdict"], judged["reason"][:200]))
    assert not passed, passed[:5]


@pytest.mark.parametrize("name", DCGM_TABLES)
def test_no_cut_dcgm_table_passes(name):
    lines = _read("dcgm", name).splitlines()
    ends = [number for number, line in enumerate(lines) if _CLOSE.match(line)]
    passed = []
    for cut in range(len(lines)):
        if ends and cut > ends[-1]:
            break
        text = "\n".join(lines[:cut])
        try:
            parsed = dcgm.parse_diag_output(text)
        except dcgm.DcgmParseError:
            continue  # no result: an error
        judged = dcgm.judge_node(parsed, "node-a")
        if judged["verdict"] not in ("error", "fail"):
            passed.append((cut, judged["verdict"], judged["reason"][:200]))
    assert not passed, passed[:5]


def test_a_table_cut_after_its_deployment_section_is_an_error_naming_what_was_seen():
    # Before: judged pass, by the absence of a failure (NVIDIA/DCGM#124's table, cut as a terminal or kubectl exec cuts)
    text = _read("dcgm", "dcgm-4.4.2-level2-table-pass-1gpu.txt")
    cut = text[: text.index("+-----  Hardware")]
    judged = dcgm.judge_node(dcgm.parse_diag_output(cut), "node-a")
    assert judged["verdict"] == "error" and "cut (no closing border after Metadata, Deployment; 1 test(s) seen" in judged["reason"]


@pytest.mark.parametrize("name", DCGM_TABLES)
@pytest.mark.parametrize("prefix", ["2026-01-02T10:11:12.123456789Z ", "[pod/dcgm-diag-abc/dcgm] ", "[1,0]<stdout>:", "gpu-node-1: "])
def test_a_prefixed_dcgm_table_reads_the_same(name, prefix):
    text = _read("dcgm", name)
    prefixed = "\n".join(prefix + line for line in text.splitlines())
    want, got = dcgm.judge_node(dcgm.parse_diag_output(text), "n"), dcgm.judge_node(dcgm.parse_diag_output(prefixed), "n")
    assert (got["verdict"], got["reason"], got["tests"]) == (want["verdict"], want["reason"], want["tests"])
