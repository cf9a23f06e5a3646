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
    parsed = dcgm.parse_diag_output(fixture("v4-level3-pass-8gpu.log"))
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
    judged = dcgm.judge_node(dcgm.parse_diag_output(fixture("v4-level3-gpu5-diagnostic-fail.log")), "aws-usw2-h100-nodes-gpu-3")
    assert judged["verdict"] == "fail"
    assert judged["reason"].startswith("node aws-usw2-h100-nodes-gpu-3 GPU 5: diagnostic (Hardware) failed: GPU 5 had an error while running")
    assert "(DCGM error 87)" in judged["reason"]
    assert [(item["gpu"], item["test"]) for item in judged["failures"]] == [(5, "diagnostic")]
    assert judged["gpus"]["5"]["verdict"] == "fail" and judged["gpus"]["4"]["verdict"] == "pass"
    assert [test["status"] for test in judged["gpus"]["5"]["tests"] if test["name"] == "diagnostic"] == ["fail"]


def test_dcgm4_level4_memtest_isolate_fails_its_gpu_and_a_pulse_test_monitor_warns_another():
    # Level 4 adds memtest (Stress) and pulse_test (Hardware): nvvs/include/PluginStrings.h; severities of error 58
    # (DCGM_FR_MEMORY_MISMATCH, ISOLATE) and 12 (DCGM_FR_CLOCKS_EVENT_POWER, MONITOR): dcgmlib/src/dcgm_errors.c.
    judged = dcgm.judge_node(dcgm.parse_diag_output(fixture("v4-level4-4gpu-memtest-isolate-pulse-monitor.log")), "n1")
    assert judged["verdict"] == "fail"
    assert judged["reason"].startswith("node n1 GPU 2: memtest (Stress) failed: A memory mismatch was detected on GPU 2")
    assert [(item["gpu"], item["test"], item["severity"]) for item in judged["failures"]] == [(2, "memtest", "ISOLATE"), (1, "pulse_test", "MONITOR")]
    assert dict((gpu, item["verdict"]) for gpu, item in judged["gpus"].items()) == {"0": "pass", "1": "warn", "2": "fail", "3": "pass"}
    names = [test["name"] for test in judged["tests"]]
    assert "memtest" in names and "pulse_test" in names and "targeted_power" in names


def test_dcgm3_shape_gpu_id_strings_level_one_results_and_warnings():
    parsed = dcgm.parse_diag_output(fixture("v3-level2-4gpu-persistence-config-memory-isolate.log"))
    assert parsed["dcgm_version"] == "3.3.9" and parsed["driver_version"] == "550.90.07" and parsed["host"] is None
    tests = dict((test["name"], test) for test in parsed["tests"])
    assert tests["Denylist"]["node"][0]["status"] == "pass" and tests["Denylist"]["gpus"] == {}
    assert tests["GPU Memory"]["gpus"][2]["status"] == "fail"
    judged = dcgm.judge_node(parsed, "n1")
    # GPU 2's double-bit ECC error is ISOLATE (fails); GPU 0's persistence mode is CONFIG (warns, with DCGM's fix).
    assert judged["verdict"] == "fail"
    assert judged["reason"] == (
        "node n1 GPU 2: GPU Memory (Hardware) failed: Volatile double-bit ECC error detected on GPU 2 (DCGM error 4)"
        " [DCGM severity ISOLATE: isolate the GPU]"
    )
    assert [(item["gpu"], item["test"], item["severity"]) for item in judged["failures"]] == [(2, "GPU Memory", "ISOLATE"), (0, "Persistence Mode", "CONFIG")]
    assert judged["gpus"]["0"]["verdict"] == "warn" and judged["gpus"]["2"]["verdict"] == "fail"
    # The level-one result's text is under "warnings" in 3.x (Diag.cpp HelperJsonAddBasicTests).
    assert judged["failures"][1]["message"].startswith("Persistence mode for GPU 0 is disabled. Enable persistence mode")


def _one_result(status, warnings):
    result = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 1, "status": status}
    if warnings is not None:
        result["warnings"] = warnings
    return {"DCGM Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [{"name": "software", "results": [result]}]}]}}


@pytest.mark.parametrize(
    "severity, verdict",
    [(1, "warn"), (5, "warn"), (2, "fail"), (3, "fail"), (4, "fail"), (6, "fail"), (None, "fail"), (0, "fail"), (99, "fail")],
)
def test_a_fail_is_judged_by_its_warnings_dcgm_severity(severity, verdict):
    warning = {"warning": "w", "error_id": 29, "error_category": 8}
    if severity is not None:
        warning["error_severity"] = severity
    judged = dcgm.judge_node(dcgm.parse_diag_output(json.dumps(_one_result("Fail", [warning]))), "n")
    assert judged["verdict"] == verdict
    assert judged["failures"][0]["severity"] == (dcgm.SEVERITIES[severity][0] if severity in (1, 2, 3, 4, 5, 6) else None)


def test_a_config_warning_warns_with_dcgms_fix_and_an_isolate_beside_it_fails():
    config = {
        "warning": 'Persistence Mode: Persistence mode for GPU 1 is disabled. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.',
        "error_id": 29,
        "error_category": 8,
        "error_severity": 5,
    }
    judged = dcgm.judge_node(dcgm.parse_diag_output(json.dumps(_one_result("Fail", [config]))), "n")
    assert judged["verdict"] == "warn"
    assert judged["reason"].endswith("-pm 1 \" as root. (DCGM error 29) [DCGM severity CONFIG: fix the node's configuration]")
    isolate = {"warning": "DBE", "error_id": 4, "error_category": 3, "error_severity": 2}
    both = dcgm.judge_node(dcgm.parse_diag_output(json.dumps(_one_result("Fail", [config, isolate]))), "n")
    assert both["verdict"] == "fail" and both["failures"][0]["severity"] == "ISOLATE"


def test_a_fail_without_warnings_fails():
    judged = dcgm.judge_node(dcgm.parse_diag_output(json.dumps(_one_result("Fail", None))), "n")
    assert judged["verdict"] == "fail" and judged["failures"][0]["severity"] is None


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


def test_runtime_error_is_an_error_naming_the_setup_failure():
    judged = dcgm.judge_node(dcgm.parse_diag_output(fixture("v4-runtime-error.log")), "n")
    assert judged["verdict"] == "error"
    assert judged["reason"] == (
        "node n: dcgmi could not run the diagnostic (a setup failure, not a GPU result): Error: Diagnostic could not be run while DCGM is paused."
    )


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


def test_deep_nesting_is_a_parse_error_not_a_recursion_error():
    deep = '{"DCGM Diagnostic": ' + "[" * 10 + '{"a": ' * 100000 + "1" + "}" * 100000 + "]" * 10 + "}"
    with pytest.raises(dcgm.DcgmParseError, match="nests 100001 levels deep, more than 64"):
        dcgm.parse_diag_output(deep)


@pytest.mark.parametrize(
    "noise",
    [
        "{" * 200000,  # the old reader tried to decode from each brace: quadratic
        '{"DCGM Diagnostic": ' * 50000,  # document starts that never close
        '"\\"\\"\\"' * 50000 + "\n" + "{" * 1000,  # escapes in a quote that never closes
    ],
)
def test_the_reader_is_linear_on_worst_case_noise(noise, monkeypatch):
    # The old reader decoded from every brace (quadratic: 80,000 braces took 2 s). Now one token pass pairs the
    # braces and only the outermost document objects are decoded, each once: the decoded text is at most the log.
    decoded = []
    real_loads = dcgm.json.loads
    monkeypatch.setattr(dcgm.json, "loads", lambda text: decoded.append(len(text)) or real_loads(text))
    text = noise + "\n" + fixture("v4-level3-pass-8gpu.log")
    parsed = dcgm.parse_diag_output(text)
    assert parsed["tests"] and len(decoded) == 1 and sum(decoded) < len(fixture("v4-level3-pass-8gpu.log"))


def test_a_timed_out_dcgmi_is_a_parse_error_naming_the_timeout():
    log = (
        "# gpufleet-burnin dcgm-diag on n1: dcgmi diag -r 2 -j on 8 GPUs, timeout 900 s\n"
        "# gpufleet-burnin dcgm-diag on n1: dcgmi diag timed out after 900 s\n"
        "# gpufleet-burnin dcgm-diag on n1: dcgmi exit 124\n"
    )
    with pytest.raises(dcgm.DcgmParseError, match=r"dcgmi diag did not finish within its timeout of 900 s .*NVIDIA/DCGM#247"):
        dcgm.parse_diag_output(log)


# Generated, not published: a warned test in dcgmi's table as dcgmi/Diag.cpp writes it (HelperDisplayDiagResult shows
# the test's row as Warn and its GPU rows as Fail; DisplayVerboseInfo cuts the message every 45 characters).
WARNED_TABLE = """+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| software                  | Warn                                           |
|                           | GPU0: Fail                                     |
| Warning                   | Persistence Mode: Persistence mode for GPU 0  |
|                           | is disabled. Enable persistence mode by runni  |
|                           | ng "nvidia-smi -i <gpuId> -pm 1 " as root.     |
|                           | GPU1: Pass                                     |
+---------------------------+------------------------------------------------+
"""


def test_table_gpu_fail_under_a_warn_row_warns_with_the_whole_message():
    parsed = dcgm.parse_diag_output(WARNED_TABLE)
    software = parsed["tests"][0]
    assert (software["name"], software["category"], software["status"]) == ("software", "Deployment", "warn")
    assert software["gpus"][0]["verdict"] == "warn"
    assert software["gpus"][1]["verdict"] == "pass"
    judged = dcgm.judge_node(parsed, "node-a")
    assert judged["verdict"] == "warn"
    # The cut fell on a space ("GPU 0 " + "is"): padding the piece back keeps it.
    assert 'Persistence mode for GPU 0 is disabled. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.' in judged["reason"]


def test_table_fail_row_fails():
    parsed = dcgm.parse_diag_output(WARNED_TABLE.replace("| Warn   ", "| Fail   "))
    assert dcgm.judge_node(parsed, "node-a")["verdict"] == "fail"


@pytest.mark.parametrize(
    "noise",
    [
        "|-----  a" + " " * 300000,  # a heading's name and the spaces after it, never closed
        "| Diagnostic | Result |\n" + "|" * 300000,
        "| Diagnostic | Result |\n| pcie | Fail |\n| Warning | x |\n" + "|   | %s |\n" % ("y" * 45) * 20000,
    ],
)
def test_the_table_reader_is_linear_on_worst_case_rows(noise, monkeypatch):
    # Each line is matched at most once per pattern, and lines wider than the table are skipped: the characters the
    # patterns see are at most the log's.
    seen = []
    row = dcgm._TABLE_ROW

    class Counting(object):
        def match(self, line):
            seen.append(len(line))
            return row.match(line)

    monkeypatch.setattr(dcgm, "_TABLE_ROW", Counting())
    try:
        dcgm.parse_diag_output(noise)
    except dcgm.DcgmParseError:
        pass
    assert sum(seen) <= len(noise) and all(length <= dcgm._TABLE_MAX_LINE for length in seen)


def test_of_several_documents_in_one_log_the_last_is_read():
    # A log that holds a rerun (the pod's command retried dcgmi): the last diagnostic is the node's result.
    passed, failed = fixture("v4-level3-pass-8gpu.log"), fixture("v4-level3-gpu5-diagnostic-fail.log")
    assert dcgm.judge_node(dcgm.parse_diag_output(passed + "\n" + failed), "n")["verdict"] == "fail"
    assert dcgm.judge_node(dcgm.parse_diag_output(failed + "\n" + passed), "n")["verdict"] == "pass"
