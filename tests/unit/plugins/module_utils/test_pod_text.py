# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Text from pods made safe once, where it enters (plugins/module_utils/text.py): a log's bytes, the JSON escapes a log
holds, the pods' and TrainJobs' fields. Whatever a pod prints, every report writer (JSON, JUnit XML, HTML, the metrics
exposition, the fleet summary) writes its file: Hypothesis feeds arbitrary bytes and Unicode (lone surrogates, control
characters) from each entry through all of them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils import text
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import judged_record
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import bound_text, collect
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import outcome_of
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import fleet_summary
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import metrics
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.writer import write_reports

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "dcgm")
WARNING = (
    "GPU 5 had an error while running the Diagnostic test: Detected 14 double-bit ECC errors during the stress test. Drain the GPU and reset it or "
    "reboot the node."
)
# Every character: lone surrogates and control characters too (Hypothesis leaves surrogates out unless told).
ANY_CHAR = st.characters(codec=None, exclude_categories=())
# ... and at least one that breaks a writer when it is let through.
HOSTILE = st.tuples(st.text(ANY_CHAR, max_size=20), st.sampled_from(["\udcff", "\ud800", "\x00", "\x1b", "\x85", "\ufffe"]), st.text(ANY_CHAR, max_size=20))
HOSTILE_TEXT = HOSTILE.map("".join)


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def _pod(name, node):
    return {
        "metadata": {"name": name, "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}},
        "spec": {"nodeName": node},
        "status": {"phase": "Succeeded", "containerStatuses": [{"name": "node", "state": {"terminated": {"exitCode": 0, "message": "done"}}}]},
    }


def burn_in(warning, noise=b"", node="n3", message="TrainJob finished", tmp_path=None, failing=True):
    """A dcgm-diag run of 2 nodes whose failing node's log holds WARNING as dcgmi writes JSON (ASCII, escapes) and NOISE
    bytes around it, its node named NODE, the TrainJob's condition message MESSAGE: entry (LogBound, collect,
    outcome_of), verdict, the cluster's record, then every writer. Returns the files written, parsed."""
    log = fixture("v4-level3-gpu5-diagnostic-fail.log" if failing else "v4-level3-pass-8gpu.log")
    assert json.dumps(WARNING) in log or not failing
    log = log.replace(json.dumps(WARNING), json.dumps(warning))
    raw = {"p-0": fixture("v4-level3-pass-8gpu.log").encode("utf-8"), "p-1": noise + log.encode("utf-8") + noise}
    pods = [_pod("p-0", "n0"), _pod("p-1", node)]
    pods[1]["status"]["containerStatuses"][0]["state"]["terminated"]["message"] = message
    read = dict((name, (bound_text(data)[0], None)) for name, data in raw.items())
    collected = collect(pods, read)
    job = {"status": {"conditions": [{"type": "Complete", "status": "True", "reason": "JobsCompleted", "message": message}]}}
    outcome = outcome_of({"state": "done", "value": job, "polls": 1}, "job", 60)
    verdict = verdict_for(
        collected["results"], job={"outcome": outcome["outcome"], "pods": collected["pods"]}, judging={"workload": "dcgm-diag", "results": "dcgm-diag"}
    )
    result = {"cluster": "c1", "platform": "aws", "gpu_architecture": "h100", "outcome": outcome["outcome"], "run_id": "r-1", "reason": outcome["reason"]}
    result.update(judged_record(result, verdict, "c1")["record"])
    written = write_reports({"c1": result}, str(tmp_path), formats=["json", "junit", "html"], run_id="r-1", generated="2026-12-03T07:00:00Z")
    files = written["files"]
    report = json.load(open(files["json"], encoding="utf-8"))
    junit = ET.parse(files["junit"])
    html = open(files["html"], encoding="utf-8").read()
    exposition = metrics.exposition(metrics.build_families(report))
    summary = fleet_summary({"c1": result}, run_id="r-1")
    json.dumps(summary).encode("utf-8")
    return {"verdict": verdict, "report": report, "junit": junit, "html": html, "metrics": exposition, "result": result}


def test_a_json_surrogate_escape_in_a_pod_log_no_longer_loses_the_junit_and_html(tmp_path):
    # Before: the verdict's reason held a lone surrogate; the JSON was written, the JUnit and HTML were not.
    out = burn_in("GPU 5 \udcff bad \x00 \x1b[31m red", tmp_path=tmp_path)
    assert out["verdict"]["verdict"] == "fail"
    assert "GPU 5 \ufffd bad \ufffd \ufffd[31m red" in out["verdict"]["reason"]
    assert "GPU 5 \ufffd bad" in json.dumps(out["report"]["clusters"][0], ensure_ascii=False)
    assert "GPU 5 \ufffd bad" in ET.tostring(out["junit"].getroot(), encoding="unicode") and "GPU 5 \ufffd bad" in out["html"]
    assert 'cluster="c1"' in out["metrics"]


def test_a_condition_message_and_a_node_name_are_made_safe_where_they_enter(tmp_path):
    out = burn_in(WARNING, message="done\x07\x1b]0;owned\x07 \ud800", node="n\udcff3", tmp_path=tmp_path, failing=False)
    assert out["result"]["reason"] == "JobsCompleted: done\ufffd\ufffd]0;owned\ufffd \ufffd"
    dumped = json.dumps(out["report"], ensure_ascii=False)
    assert "done\ufffd\ufffd]0;owned" in dumped and "n\ufffd3" in dumped and "\x07" not in dumped


@pytest.mark.parametrize(
    "given, expected",
    [
        ("plain \t tab\nline\r\n", "plain \t tab\nline\r\n"),
        ("\udcff\ud800x", "\ufffd\ufffdx"),
        ("\x00\x08\x0b\x0c\x0e\x1f\x7f\x85\x9f", "\ufffd" * 9),
        ("\ufffe\uffff", "\ufffd\ufffd"),
        ("GPU \U0001f525 ü", "GPU \U0001f525 ü"),
        (b"\xff\xfe ok", "\ufffd\ufffd ok"),
        (7, 7),
    ],
)
def test_clean_replaces_what_no_report_can_hold(given, expected):
    assert text.clean(given) == expected


def test_clean_tree_cleans_keys_and_values_at_any_depth():
    deep = current = []
    for dummy in range(5000):
        current.append([])
        current = current[0]
    current.append("\udcff")
    cleaned = text.clean_tree({"k\x00": [{"m": "\ud800"}, 1, None, True], "deep": deep})
    assert cleaned["k\ufffd"] == [{"m": "\ufffd"}, 1, None, True]
    inner = cleaned["deep"]
    for dummy in range(5000):
        inner = inner[0]
    assert inner == ["\ufffd"]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(ANY_CHAR, max_size=60))
def test_clean_text_is_encodable_and_xml_safe(value):
    cleaned = text.clean(value)
    assert text.clean(cleaned) == cleaned and len(cleaned) == len(value)
    cleaned.encode("utf-8")
    ET.fromstring("<a>%s</a>" % cleaned.replace("&", "&amp;").replace("<", "&lt;"))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    warning=HOSTILE_TEXT,
    noise=st.binary(max_size=80),
    node=HOSTILE_TEXT,
    message=HOSTILE_TEXT,
    failing=st.booleans(),
)
def test_whatever_a_pod_prints_every_report_writer_writes(tmp_path_factory, warning, noise, node, message, failing):
    out = burn_in(warning, noise=noise, node=node, message=message, tmp_path=tmp_path_factory.mktemp("r"), failing=failing)
    dumped = json.dumps(out["report"], ensure_ascii=False)
    dumped.encode("utf-8")
    assert not any(char in dumped for char in "\x00\x01\x1b\x7f\x85")
    assert out["junit"].getroot() is not None and "</html>" in out["html"]


def test_escapes_in_an_nccl_tests_json_file_are_made_safe():
    # A host name with a \udcff escape in the -J file became a lone surrogate in the verdict's evidence.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results

    path = os.path.join(os.path.dirname(FIXTURES), "nccl", "v2.16-all-reduce-2x8-h100.json")
    with open(path) as handle:
        text = handle.read()
    hostile = text.replace('"hostname":"nccl-all-reduce-20261130t0930-node-0-0"', '"hostname":"node-0-0\\udcff\\u0007"')
    assert hostile != text
    result = nccl_results.parse_nccl_output(hostile)
    json.dumps(result, ensure_ascii=False).encode("utf-8")
    assert "node-0-0\ufffd\ufffd" in json.dumps(result, ensure_ascii=False)
