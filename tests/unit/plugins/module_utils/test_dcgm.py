# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""DCGM diagnostic parser and per-node judgement over real-shaped outputs (tests/unit/fixtures/dcgm/, see its README)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import dcgm

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "dcgm")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def test_dcgm4_pass_lists_every_test_with_its_category_and_every_gpu():
    parsed = dcgm.parse_diag_output(fixture("v4-level2-pass-8gpu.log"))
    assert parsed["host"] == "nccl-burnin-r1-node-0-3"
    assert parsed["dcgm_version"] == "4.5.2" and parsed["driver_version"] == "570.148.08"
    assert [(test["name"], test["category"], test["status"]) for test in parsed["tests"]] == [
        ("software", "Deployment", "pass"),
        ("pcie", "Integration", "pass"),
        ("memory", "Hardware", "pass"),
        ("diagnostic", "Hardware", "pass"),
        ("targeted_stress", "Stress", "skip"),
    ]
    assert sorted(parsed["tests"][3]["gpus"]) == list(range(8))
    judged = dcgm.judge_node(parsed, "node-a")
    assert judged["verdict"] == "pass" and judged["failures"] == []
    assert judged["reason"] == "node node-a: 4 DCGM diagnostic test(s) passed on 8 GPU(s) (1 skipped)"
    assert set(judged["gpus"]) == set(str(index) for index in range(8))


def test_dcgm4_failing_gpu_fails_the_node_naming_gpu_test_and_message():
    judged = dcgm.judge_node(dcgm.parse_diag_output(fixture("v4-level2-gpu5-diagnostic-fail.log")), "aws-usw2-h100-nodes-gpu-3")
    assert judged["verdict"] == "fail"
    assert judged["reason"].startswith("node aws-usw2-h100-nodes-gpu-3 GPU 5: diagnostic (Hardware) failed: GPU 5 had an error while running")
    assert "(DCGM error 87)" in judged["reason"]
    assert [(item["gpu"], item["test"]) for item in judged["failures"]] == [(5, "diagnostic")]
    assert judged["gpus"]["5"]["verdict"] == "fail" and judged["gpus"]["4"]["verdict"] == "pass"
    assert [test["status"] for test in judged["gpus"]["5"]["tests"] if test["name"] == "diagnostic"] == ["fail"]


def test_dcgm3_shape_gpu_id_strings_level_one_results_and_warnings():
    parsed = dcgm.parse_diag_output(fixture("v3-level2-4gpu-persistence-fail-memory-warn.log"))
    assert parsed["dcgm_version"] == "3.3.9" and parsed["driver_version"] == "550.90.07" and parsed["host"] is None
    tests = dict((test["name"], test) for test in parsed["tests"])
    assert tests["Denylist"]["node"][0]["status"] == "pass" and tests["Denylist"]["gpus"] == {}
    assert tests["GPU Memory"]["gpus"][2]["status"] == "warn"
    judged = dcgm.judge_node(parsed, "n1")
    assert judged["verdict"] == "fail"
    # The level-one result's text is under "warnings" in 3.x (Diag.cpp HelperJsonAddBasicTests).
    assert judged["reason"].startswith("node n1 GPU 0: Persistence Mode (Deployment) failed: Persistence mode for GPU 0 is disabled")
    assert [(item["gpu"], item["test"]) for item in judged["failures"]] == [(0, "Persistence Mode"), (2, "GPU Memory")]
    assert judged["gpus"]["2"]["verdict"] == "warn"


def test_a_warning_alone_warns():
    doc = {
        "DCGM Diagnostic": {
            "test_categories": [
                {
                    "category": "Hardware",
                    "tests": [
                        {
                            "name": "memory",
                            "results": [
                                {
                                    "entity_group": "GPU",
                                    "entity_group_id": 1,
                                    "entity_id": 1,
                                    "status": "Warn",
                                    "warnings": [{"warning": "3 SBEs", "error_id": 5}],
                                },
                                {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Pass"},
                            ],
                        }
                    ],
                }
            ]
        }
    }
    judged = dcgm.judge_node(dcgm.parse_diag_output("noise\n" + json.dumps(doc) + "\ntrailing noise {\n"), "n")
    assert judged["verdict"] == "warn" and judged["reason"] == "node n GPU 1: memory (Hardware) warned: 3 SBEs (DCGM error 5)"


def test_other_entities_are_node_wide_and_info_is_the_message_without_warnings():
    doc = {
        "DCGM Diagnostic": {
            "test_categories": [
                {
                    "category": "Hardware",
                    "tests": [
                        {
                            "name": "cpu_eud",
                            "results": [
                                {"entity_group": "CPU", "entity_group_id": 7, "entity_id": 0, "status": "Fail", "info": ["CPU 0 failed its self test"]},
                            ],
                        }
                    ],
                }
            ]
        }
    }
    judged = dcgm.judge_node(dcgm.parse_diag_output(json.dumps(doc)), "n")
    assert judged["reason"] == "node n CPU 0: cpu_eud (Hardware) failed: CPU 0 failed its self test"
    assert judged["failures"][0]["gpu"] is None


def test_runtime_error_fails_the_node_with_dcgms_words():
    judged = dcgm.judge_node(dcgm.parse_diag_output(fixture("v4-runtime-error.log")), "n")
    assert judged["verdict"] == "fail"
    assert judged["reason"] == "node n: dcgmi diag failed: Error: Diagnostic could not be run while DCGM is paused."


def test_iterations_are_judged_by_the_worst():
    parsed = dcgm.parse_diag_output(fixture("v4-iterations-second-fails.log"))
    assert parsed["iterations"] == 2
    judged = dcgm.judge_node(parsed, "n")
    assert judged["verdict"] == "fail" and [item["gpu"] for item in judged["failures"]] == [1]


@pytest.mark.parametrize(
    "name, words",
    [
        ("no-json.log", "no DCGM diagnostic JSON (dcgmi diag -j) (it ends: dcgmi: error while loading shared libraries"),
        ("v4-truncated.log", "no complete DCGM diagnostic JSON"),
    ],
)
def test_a_log_without_dcgm_json_is_an_error_saying_why(name, words):
    with pytest.raises(dcgm.DcgmParseError) as err:
        dcgm.parse_diag_output(fixture(name))
    assert words in str(err.value)


def test_empty_or_foreign_json_is_refused():
    with pytest.raises(dcgm.DcgmParseError, match="the log is empty"):
        dcgm.parse_diag_output("  \n")
    with pytest.raises(dcgm.DcgmParseError, match="no complete DCGM diagnostic JSON .cut short, or another JSON."):
        dcgm.parse_diag_output('{"foo": 1}')
    with pytest.raises(dcgm.DcgmParseError, match="no log text"):
        dcgm.parse_diag_output(None)


def test_no_tests_warns():
    judged = dcgm.judge_node(dcgm.parse_diag_output('{"DCGM Diagnostic": {"test_categories": []}}'), "n")
    assert judged["verdict"] == "warn" and "ran no test" in judged["reason"]
