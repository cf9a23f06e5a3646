# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The DCGM reader and judge on published dcgmi output (tests/fixtures/real/dcgm/PROVENANCE.md): each hand-read fact."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import dcgm

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real", "dcgm")


def real(name):
    with open(os.path.join(REAL, name)) as handle:
        return handle.read()


GB10 = "dcgm-4.2.3-level1-gb10-persistence-config.json"
GB10_MESSAGE = (
    'Persistence Mode: Persistence mode for GPU 0 is disabled. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root. (DCGM error 29)'
)


@pytest.mark.parametrize(
    "fact, expected",
    [
        ("dcgm_version", "4.2.3"),
        ("driver_version", "580.82.09"),
        ("tests", [("software", "Deployment", "fail")]),
        ("gpus", [0]),
        ("status", "fail"),
        ("error", (29, 5)),
        ("message_starts", "Persistence Mode: Persistence mode for GPU 0 is disabled."),
        ("verdict", "warn"),
        ("severity", "CONFIG"),
        ("fix_in_reason", 'Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.'),
    ],
)
def test_gb10_level1_facts(fact, expected):
    parsed = dcgm.parse_diag_output(real(GB10))
    test = parsed["tests"][0]
    record = test["gpus"].get(0)
    judged = dcgm.judge_node(parsed, "spark")
    got = {
        "dcgm_version": parsed["dcgm_version"],
        "driver_version": parsed["driver_version"],
        "tests": [(item["name"], item["category"], item["status"]) for item in parsed["tests"]],
        "gpus": sorted(test["gpus"]),
        "status": record["status"],
        "error": (record["warnings"][0]["error_id"], record["warnings"][0]["severity"]),
        "message_starts": record["message"][: len(str(expected))],
        "verdict": judged["verdict"],
        "severity": judged["failures"][0]["severity"],
        "fix_in_reason": expected if str(expected) in judged["reason"] else judged["reason"],
    }[fact]
    assert got == expected


def _facts(name):
    """Every fact the reader and judge give on one published document, by the names PROVENANCE.md uses."""
    try:
        parsed = dcgm.parse_diag_output(real(name))
    except dcgm.DcgmParseError as error:
        return {"parse_error": str(error)}
    judged = dcgm.judge_node(parsed, "node-a")
    return {
        "dcgm_version": parsed["dcgm_version"],
        "driver_version": parsed["driver_version"],
        "runtime_error": parsed["runtime_error"],
        "tests": [(test["name"], test["category"], test["status"]) for test in parsed["tests"]],
        "gpus": sorted(set(gpu for test in parsed["tests"] for gpu in test["gpus"])),
        "verdict": judged["verdict"],
        "complete": parsed.get("complete"),
        "reason": judged["reason"],
        "failures": [(item["gpu"], item["test"], item["message"]) for item in judged["failures"]],
        "info": [
            (test["name"], record["verdict"], record["info"], record["warnings"])
            for test in parsed["tests"]
            for record in list(test["gpus"].values()) + test["node"]
            if record["info"]
        ],
    }


LEVEL3_4X = [("software", "Deployment"), ("memory", "Hardware"), ("diagnostic", "Hardware"), ("pcie", "Integration")]
LEVEL3_4X += [("memory_bandwidth", "Stress"), ("targeted_stress", "Stress"), ("targeted_power", "Stress")]
DEPLOYMENT_3X = ["Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode"]
DEPLOYMENT_3X += ["Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom"]
PCIE_MESSAGE = (
    "There was an internal error during the test: 'A child process (2378806) exited with non-zero status 1' Check DCGM"
    " and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics."
)
CHILD_ERROR = "There was an internal error during the test: 'A child process (%d) exited with non-zero status 1' Check DCGM and system logs"
CHILD_ERROR += " for errors. Reset GPU. Restart DCGM. Rerun diagnostics."
PARSE_ERROR = "There was an internal error during the test: 'Output of child process (%d) couldn't be parsed: '* Line 1, Column 1   Syntax"
PARSE_ERROR += " error: value, object or array expected. '' Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics."
B200_4_4_1 = "dcgm-4.4.1-level2-table-pcie-fail-b200-8gpu.txt"
PCIE_4_2_3 = "dcgm-4.2.3-level2-table-pcie-internal-error-4gpu.txt"
HOSTENGINE = "Unable to get the driver version: Host engine connection invalid/disconnected. Couldn't succeed despite 0 retries."

SKIP_3_3_9 = "dcgm-3.3.9-level3-table-skip-2gpu.txt"
CUDA_3_3_8 = "dcgm-3.3.8-level3-table-cuda-init-fail-8gpu.txt"
CUDA_INIT = "GPU %d Error using CUDA API cuInit Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics. Unable to"
CUDA_INIT += " initialize CUDA library: 'system not yet initialized'. . Please check if a CUDA sample program can be run successfully on"
CUDA_INIT += " this host. Refer to https://github.com/nvidia/cuda-samples"
PERSISTENCE_INFO = ",".join(
    'Persistence mode for GPU %d is disabled. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.' % gpu for gpu in range(4)
)
PERSISTENCE_INFO += ",Persistence mode for GPU 4 is disabled. Enable pers"  # the reporter's paste ends there
STRESS_3X = ["Targeted Stress", "Targeted Power", "Memory Bandwidth", "EUD Test"]

# (document, fact, the value read off the text by hand): tests/fixtures/real/dcgm/PROVENANCE.md.
FACTS = [
    (SKIP_3_3_9, "dcgm_version", "3.3.9"),
    (SKIP_3_3_9, "driver_version", "570.172.08"),
    (
        SKIP_3_3_9,
        "tests",
        [(name, "Deployment", "pass") for name in DEPLOYMENT_3X]
        + [("PCIe", "Integration", "skip"), ("GPU Memory", "Hardware", "skip")]
        + [(name, "Stress", "skip") for name in STRESS_3X],
    ),
    (SKIP_3_3_9, "verdict", "pass"),
    (SKIP_3_3_9, "reason", "node node-a: 9 DCGM diagnostic test(s) passed for the whole GPU group (dcgmi named no GPU) (6 skipped)"),
    (CUDA_3_3_8, "dcgm_version", "3.3.8"),
    (CUDA_3_3_8, "driver_version", "560.35.03"),
    (
        CUDA_3_3_8,
        "tests",
        [(name, "Deployment", "pass") for name in DEPLOYMENT_3X]
        + [("PCIe", "Integration", "skip"), ("GPU Memory", "Hardware", "fail"), ("Memory Bandwidth", "Stress", "skip"), ("EUD Test", "Stress", "skip")],
    ),
    (CUDA_3_3_8, "gpus", []),
    (CUDA_3_3_8, "verdict", "fail"),
    (CUDA_3_3_8, "failures", [(None, "GPU Memory", "; ".join(CUDA_INIT % gpu for gpu in range(8)))]),
    (CUDA_3_3_8, "reason", "node node-a: GPU Memory (Hardware) failed: " + CUDA_INIT % 0 + "; " + CUDA_INIT % 1),
    # An Info row is no warning: the Persistence Mode check passed, its note is information only.
    (CUDA_3_3_8, "info", [("Persistence Mode", "pass", [PERSISTENCE_INFO], [])]),
    ("dcgm-4.4.2-level2-table-pass-1gpu.txt", "dcgm_version", "4.4.2"),
    ("dcgm-4.4.2-level2-table-pass-1gpu.txt", "driver_version", "580.105.08"),
    ("dcgm-4.4.2-level2-table-pass-1gpu.txt", "tests", [("software", "Deployment", "pass"), ("memory", "Hardware", "pass"), ("pcie", "Integration", "pass")]),
    ("dcgm-4.4.2-level2-table-pass-1gpu.txt", "gpus", [0]),
    ("dcgm-4.4.2-level2-table-pass-1gpu.txt", "verdict", "pass"),
    ("dcgm-4.0.0-level3-table-pass-4gpu.txt", "dcgm_version", "4.0.0"),
    ("dcgm-4.0.0-level3-table-pass-4gpu.txt", "driver_version", "550.90.07"),
    ("dcgm-4.0.0-level3-table-pass-4gpu.txt", "tests", [(name, category, "pass") for name, category in LEVEL3_4X]),
    ("dcgm-4.0.0-level3-table-pass-4gpu.txt", "gpus", [0, 1, 2, 3]),
    ("dcgm-4.0.0-level3-table-pass-4gpu.txt", "verdict", "pass"),
    ("dcgm-3.3.3-level2-table-pass-8gpu.txt", "dcgm_version", "3.3.3"),
    ("dcgm-3.3.3-level2-table-pass-8gpu.txt", "driver_version", "535.104.12"),
    (
        "dcgm-3.3.3-level2-table-pass-8gpu.txt",
        "tests",
        [(name, "Deployment", "pass") for name in DEPLOYMENT_3X] + [("PCIe", "Integration", "pass"), ("GPU Memory", "Hardware", "pass")],
    ),
    ("dcgm-3.3.3-level2-table-pass-8gpu.txt", "gpus", []),  # 3.x prints "Pass - All": no GPU is named
    ("dcgm-3.3.3-level2-table-pass-8gpu.txt", "verdict", "pass"),
    ("dcgm-4.4.1-level2-table-pcie-fail-tail.txt", "tests", [("pcie", "Integration", "fail")]),
    ("dcgm-4.4.1-level2-table-pcie-fail-tail.txt", "verdict", "fail"),
    ("dcgm-4.4.1-level2-table-pcie-fail-tail.txt", "failures", [(None, "pcie", PCIE_MESSAGE)]),
    (PCIE_4_2_3, "dcgm_version", "4.2.3"),
    (PCIE_4_2_3, "driver_version", "570.148.08"),
    (PCIE_4_2_3, "tests", [("software", "Deployment", "pass"), ("memory", "Hardware", "pass"), ("pcie", "Integration", "fail")]),
    (PCIE_4_2_3, "gpus", [0, 1, 2, 3]),
    (PCIE_4_2_3, "verdict", "fail"),
    (PCIE_4_2_3, "failures", [(None, "pcie", "; ".join([CHILD_ERROR % 152, CHILD_ERROR % 153, PARSE_ERROR % 152, PARSE_ERROR % 153]))]),
    (B200_4_4_1, "dcgm_version", "4.4.1"),
    (B200_4_4_1, "driver_version", "570.172.08"),
    (B200_4_4_1, "tests", [("software", "Deployment", "pass"), ("memory", "Hardware", "pass"), ("pcie", "Integration", "fail")]),
    (B200_4_4_1, "gpus", list(range(8))),
    (B200_4_4_1, "verdict", "fail"),
    (B200_4_4_1, "failures", [(None, "pcie", PARSE_ERROR % 11167)]),
    ("dcgm-4.4.x-error-cannot-load-plugins.txt", "parse_error", "Error: Cannot load plugins."),
    ("dcgm-nvvs-runtime-error-hostengine-log.txt", "runtime_error", HOSTENGINE),
    ("dcgm-nvvs-runtime-error-hostengine-log.txt", "verdict", "error"),
    ("dcgm-nvvs-runtime-error-hostengine-log.txt", "reason", "a setup failure, not a GPU result"),
    ("dcgm-4.2.3-level1-gb10-persistence-config.json", "verdict", "warn"),
    # Tables saved cut inside their sections (as the excerpts held them): never pass, error naming what was seen.
    ("dcgm-3.3.1-level2-table-cut-in-deployment.txt", "dcgm_version", "3.3.1"),
    ("dcgm-3.3.1-level2-table-cut-in-deployment.txt", "driver_version", "535.129.03"),
    ("dcgm-3.3.1-level2-table-cut-in-deployment.txt", "tests", [(name, "Deployment", "pass") for name in DEPLOYMENT_3X[:7]]),
    ("dcgm-3.3.1-level2-table-cut-in-deployment.txt", "complete", False),
    ("dcgm-3.3.1-level2-table-cut-in-deployment.txt", "verdict", "error"),
    ("dcgm-3.3.1-level2-table-cut-in-deployment.txt", "reason", "cut (no closing border after Metadata, Deployment; 7 test(s) seen"),
    ("dcgm-3.0.4-level3-table-cut-at-integration.txt", "dcgm_version", None),
    ("dcgm-3.0.4-level3-table-cut-at-integration.txt", "tests", [(name, "Deployment", "pass") for name in DEPLOYMENT_3X]),
    ("dcgm-3.0.4-level3-table-cut-at-integration.txt", "complete", False),
    ("dcgm-3.0.4-level3-table-cut-at-integration.txt", "verdict", "error"),
    ("dcgm-3.3.5-level3-kubectl-exec-table-cut.txt", "dcgm_version", "3.3.5"),
    ("dcgm-3.3.5-level3-kubectl-exec-table-cut.txt", "driver_version", "550.54.15"),
    ("dcgm-3.3.5-level3-kubectl-exec-table-cut.txt", "tests", [(name, "Deployment", "pass") for name in DEPLOYMENT_3X[:3]]),
    ("dcgm-3.3.5-level3-kubectl-exec-table-cut.txt", "verdict", "error"),
    ("dcgm-4.2.3-level2-pod-exec-table-cut-at-hardware.txt", "dcgm_version", "4.2.3"),
    ("dcgm-4.2.3-level2-pod-exec-table-cut-at-hardware.txt", "tests", [("software", "Deployment", "pass")]),
    ("dcgm-4.2.3-level2-pod-exec-table-cut-at-hardware.txt", "gpus", [0, 1, 2, 3]),
    ("dcgm-4.2.3-level2-pod-exec-table-cut-at-hardware.txt", "complete", False),
    ("dcgm-4.2.3-level2-pod-exec-table-cut-at-hardware.txt", "verdict", "error"),
    ("dcgm-4.4.2-level2-table-pass-1gpu.txt", "complete", True),
    ("dcgm-3.3.3-level2-table-pass-8gpu.txt", "complete", True),
    ("dcgm-4.2.3-level1-gb10-persistence-config.json", "failures", [(0, "software", GB10_MESSAGE)]),
]


@pytest.mark.parametrize("name, fact, expected", FACTS, ids=["%s:%s" % (name, fact) for name, fact, _value in FACTS])
def test_published_document_facts(name, fact, expected):
    got = _facts(name).get(fact)
    if fact in ("parse_error", "reason"):
        # The error and the reason are sentences: the published words they must carry.
        assert got is not None and expected in got, got
    else:
        assert got == expected


def test_every_published_document_has_facts_and_provenance():
    with open(os.path.join(REAL, "PROVENANCE.md")) as handle:
        provenance = handle.read()
    documents = sorted(name for name in os.listdir(REAL) if name != "PROVENANCE.md" and os.path.isfile(os.path.join(REAL, name)))
    assert documents == sorted(set(item[0] for item in FACTS))
    for name in documents:
        assert "## %s" % name in provenance, name


def test_dcgm_source_prints_a_warning_as_fail_and_only_the_severity_tells_it_apart():
    # The README's deviation "DCGM warnings by severity", pinned by DCGM's own source (PROVENANCE.md, source/).
    enum = dict((int(number), name) for name, number in re.findall(r"DCGM_ERROR_([A-Z]+)\s*=\s*(\d+),", real("source/dcgm_errors.h-severity-enum.txt")))
    assert enum == dict((number, record[0]) for number, record in dcgm.SEVERITIES.items())
    diag_cpp, diag_h = real("source/Diag.cpp-status.txt"), real("source/Diag.h-display-warn.txt")
    # A WARN result is "Warn" only with DDR_DISPLAY_WARN, else it falls through to "Fail"; the JSON's status passes no
    # argument, and the argument's default is DDR_NO_DISPLAY_WARN: `dcgmi diag -j` never writes "Warn".
    assert re.search(
        r'case DCGM_DIAG_RESULT_WARN:\s*if \(showWarn == DDR_DISPLAY_WARN\)\s*\{\s*return "Warn";\s*\}\s*'
        r'\[\[fallthrough\]\];\s*case DCGM_DIAG_RESULT_FAIL:\s*return "Fail";',
        diag_cpp,
    )
    assert "resultEntry[NVVS_STATUS] = HelperDisplayDiagResult(result.result);" in diag_cpp
    assert "displayDiagResultWarn_enum showWarn = DDR_NO_DISPLAY_WARN" in diag_h
    # Persistence mode off (error 29) is CONFIG: a "Fail" carrying it warns; the same "Fail" with ISOLATE fails.
    entry = re.search(r"DCGM_ERROR_TABLE_ENTRY\(DCGM_FR_PERSISTENCE_MODE, DCGM_ERROR_([A-Z]+),", real("source/dcgm_errors.c-persistence-mode-entry.txt"))
    severity = dict((name, number) for number, name in enum.items())[entry.group(1)]
    for level, verdict in ((severity, "warn"), (dict((name, number) for number, name in enum.items())["ISOLATE"], "fail")):
        warning = {"warning": "Persistence mode for GPU 0 is disabled.", "error_id": 29, "error_category": 8, "error_severity": level}
        result = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Fail", "warnings": [warning]}
        doc = {"DCGM Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [{"name": "software", "results": [result]}]}]}}
        assert dcgm.judge_node(dcgm.parse_diag_output(json.dumps(doc)), "n")["verdict"] == verdict, level


def test_the_skipped_count_is_the_tests_that_did_not_run():
    # The 3.3.9 table's first check and its six skipped tests: more skipped than run (the count is no ratio or rest).
    parsed = dcgm.parse_diag_output(real(SKIP_3_3_9))
    parsed["tests"] = parsed["tests"][:1] + [test for test in parsed["tests"] if test["status"] == "skip"]
    assert dcgm.judge_node(parsed, "n")["reason"] == "node n: 1 DCGM diagnostic test(s) passed for the whole GPU group (dcgmi named no GPU) (6 skipped)"


def test_only_dcgmis_own_header_row_starts_a_table():
    # Another tool's "| Diagnostic | Status |" table with no dcgmi category heading is no dcgmi result.
    other = real("dcgm-4.4.2-level2-table-pass-1gpu.txt").replace("| Result    ", "| Status    ", 1)
    other = "\n".join(line for line in other.splitlines() if not line.startswith(("|-----", "+-----")))
    with pytest.raises(dcgm.DcgmParseError, match="no DCGM diagnostic JSON"):
        dcgm.parse_diag_output(other)
    with pytest.raises(dcgm.DcgmParseError, match="no DCGM diagnostic JSON"):
        dcgm.parse_diag_output(other.replace("| Status    ", "| Result    ", 1).replace("| Diagnostic   ", "| Test         ", 1))
    assert [test["status"] for test in dcgm.parse_diag_output(other.replace("| Status    ", "| Result    ", 1))["tests"]] == ["pass"] * 3


# What the mutation run of judging/dcgm.py (docs/mutation.md) found untested, on the published -j document (GB10).


def gb10(change=None):
    doc = json.loads(real(GB10))
    if change:
        change(doc)
    return doc


def gb10_tests(doc):
    return doc["DCGM Diagnostic"]["test_categories"][0]["tests"]


def gb10_result(doc):
    return gb10_tests(doc)[0]["results"][0]


def parse(doc):
    return dcgm.parse_diag_output(json.dumps(doc))


def test_a_result_is_a_gpus_by_its_entity_group_name_or_id_or_when_it_names_neither():
    by_id = gb10(lambda doc: gb10_result(doc).pop("entity_group"))
    by_name = gb10(lambda doc: gb10_result(doc).pop("entity_group_id"))
    neither = gb10(lambda doc: [gb10_result(doc).pop(key) for key in ("entity_group", "entity_group_id")])
    for doc in (by_id, by_name, neither):
        assert sorted(parse(doc)["tests"][0]["gpus"]) == [0], gb10_result(doc)


def test_a_node_wide_warning_warns_and_names_its_entity():
    # The CONFIG warning (severity 5) on another entity than a GPU: a node-wide result that warns.
    for group in ({"entity_group": "CPU"}, {"entity_group": "CPU", "entity_group_id": 7}):
        doc = gb10(lambda doc: [gb10_result(doc).pop("entity_group_id"), gb10_result(doc).update(group)])
        parsed = parse(doc)
        assert parsed["tests"][0]["gpus"] == {} and [record["entity"] for record in parsed["tests"][0]["node"]] == ["CPU 0"], group
        judged = dcgm.judge_node(parsed, "spark")
        assert judged["verdict"] == "warn" and [(item["gpu"], item["entity"], item["severity"]) for item in judged["failures"]] == [(None, "CPU 0", "CONFIG")]
        assert judged["reason"].startswith("node spark CPU 0: software (Deployment) warned: Persistence Mode:"), judged["reason"]


def test_a_result_for_no_gpu_or_several_by_gpu_ids_is_node_wide():
    for ids in ([], [0, 1]):
        doc = gb10(lambda doc: [gb10_result(doc).pop(key) for key in ("entity_group", "entity_group_id", "entity_id")] + [gb10_result(doc).update(gpu_ids=ids)])
        parsed = parse(doc)
        assert parsed["tests"][0]["gpus"] == {} and len(parsed["tests"][0]["node"]) == 1, ids
    doc = gb10(lambda doc: [gb10_result(doc).pop(key) for key in ("entity_group", "entity_group_id", "entity_id")] + [gb10_result(doc).update(gpu_ids=[3])])
    assert sorted(parse(doc)["tests"][0]["gpus"]) == [3]


def test_the_worse_of_two_results_of_one_gpu_counts():
    def twice(first, second):
        def change(doc):
            result = gb10_result(doc)
            results = gb10_tests(doc)[0]["results"]
            results[:] = [dict(result, status=first), dict(result, status=second)]
            if first == "Pass":
                results[0].pop("warnings")
            else:
                results[1].pop("warnings")

        return gb10(change)

    for first, second in (("Pass", "Fail"), ("Fail", "Pass")):
        assert parse(twice(first, second))["tests"][0]["gpus"][0]["status"] == "fail", (first, second)


def test_a_test_without_a_summary_status_has_its_results_worst_status():
    def results(*statuses):
        def change(doc):
            result = gb10_result(doc)
            del gb10_tests(doc)[0]["test_summary"]["status"]
            gb10_tests(doc)[0]["results"] = [dict(result, entity_id=index, status=status) for index, status in enumerate(statuses)]

        return parse(gb10(change))["tests"][0]["status"]

    assert results("Fail") == "fail" and results("Warn", "Fail") == "fail" and results("Fail", "Warn") == "fail"
    assert results("Not Run", "Skip") == "skip" and results("Skip", "Pass") == "pass" and results("Pass", "Warn") == "warn"


def test_a_warning_without_an_error_id_or_without_text_is_kept():
    no_id = gb10(lambda doc: gb10_result(doc)["warnings"][0].pop("error_id"))
    judged = dcgm.judge_node(parse(no_id), "spark")
    assert judged["failures"][0]["message"].startswith("Persistence Mode: Persistence mode for GPU 0 is disabled.") and judged["verdict"] == "warn"
    no_text = gb10(lambda doc: gb10_result(doc)["warnings"][0].update(warning=""))
    assert [(item["error_id"], item["severity"]) for item in parse(no_text)["tests"][0]["gpus"][0]["warnings"]] == [(29, 5)]


def test_entries_that_are_no_objects_are_skipped_not_the_rest():
    def noise(doc):
        gb10_tests(doc)[0]["results"].insert(0, "Fail")
        gb10_tests(doc).insert(0, ["software"])
        doc["DCGM Diagnostic"]["test_categories"].insert(0, "Deployment")

    parsed = parse(gb10(noise))
    assert [(test["name"], sorted(test["gpus"])) for test in parsed["tests"]] == [("software", [0])]


def test_an_iterations_entry_without_a_diagnostic_is_skipped():
    wrapper = {"iterations": [{}, gb10(), {"note": "no run"}]}
    parsed = dcgm.parse_diag_output(json.dumps(wrapper))
    assert parsed["iterations"] == 1 and [test["status"] for test in parsed["tests"]] == ["fail"]


def test_a_document_whose_diagnostic_is_no_object_or_whose_categories_are_no_list_is_refused_naming_it():
    with pytest.raises(dcgm.DcgmParseError, match=r"^the JSON has no 'DCGM Diagnostic' or 'DCGM GPU Diagnostic' object$"):
        dcgm.parse_diag_output(json.dumps({"DCGM Diagnostic": "4.2.3", "metadata": {}}))
    with pytest.raises(dcgm.DcgmParseError, match=r"^'test_categories' must be a list, got dict$"):
        dcgm.parse_diag_output(json.dumps(gb10(lambda doc: doc["DCGM Diagnostic"].update(test_categories={}))))


def test_a_document_may_nest_max_depth_objects_and_no_more():
    def nested(depth):
        # the document is one object, its diagnostic a second: depth - 2 more objects inside it
        inner = {}
        for _unused in range(depth - 3):
            inner = {"x": inner}
        return json.dumps(gb10(lambda doc: doc["DCGM Diagnostic"].update(deep=inner)))

    assert parse(json.loads(nested(dcgm.MAX_DEPTH)))["tests"][0]["status"] == "fail"
    with pytest.raises(dcgm.DcgmParseError, match="nests %d levels deep, more than %d" % (dcgm.MAX_DEPTH + 1, dcgm.MAX_DEPTH)):
        dcgm.parse_diag_output(nested(dcgm.MAX_DEPTH + 1))
    assert dcgm.MAX_DEPTH == 64


def test_the_hint_quotes_the_last_line_cut_at_200_characters():
    with pytest.raises(dcgm.DcgmParseError) as raised:
        dcgm.parse_diag_output("dcgmi started\n" + "x" * 250 + "\n")
    assert str(raised.value).endswith(" (it ends: %s)" % ("x" * 200)), str(raised.value)


def test_a_closing_brace_in_the_noise_before_the_json_hides_nothing():
    assert parse(gb10())["tests"] == dcgm.parse_diag_output("} stray brace from the pod's shell\n" + real(GB10))["tests"]
