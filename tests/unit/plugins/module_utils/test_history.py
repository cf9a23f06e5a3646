# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""History: this run's report compared with an earlier run's (reporting/history.py and the reports that show it)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding, from_verdict
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import fleet_summary
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import history
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import html_view, writer
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report as rp

GENERATED = "2026-12-01T09:00:00Z"


def verdict(peak, avg, verdict_="pass", reason="", workload="nccl-all-reduce", collective="all_reduce"):
    return {
        "verdict": verdict_,
        "reason": reason,
        "workload": workload,
        "collective": collective,
        "checks": [{"name": "peak", "verdict": verdict_, "value": peak, "pass": 300, "warn": 250, "reason": reason or "peak ok"}],
        "metrics": {"peak_busbw": peak, "avg_busbw": avg},
        "series": [],
        "thresholds": [],
        "nodes": ["n1", "n2"],
        "succeeded_nodes": ["n1", "n2"],
        "failed_nodes": [],
    }


def results(run_id, peaks):
    """One cluster per (name: (peak, avg[, verdict])); the clusters all ran nccl-all-reduce."""
    out = {}
    for name, figures in peaks.items():
        out[name] = {"cluster": name, "platform": "aws", "gpu_architecture": "h100", "outcome": "Complete", "run_id": run_id, "verdicts": [verdict(*figures)]}
    return out


def write_run(root, run_id, peaks, mtime=None):
    written = writer.write_reports(results(run_id, peaks), str(root / run_id), formats=["json"], run_id=run_id, generated=GENERATED)
    if mtime is not None:
        os.utime(written["files"]["json"], (mtime, mtime))
    return written["files"]["json"]


# --- the comparison ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "baseline, current, change",
    [
        (400.0, 352.0, -12.0),
        (400, 400, 0.0),
        (200.0, 250.0, 25.0),
        (0, 10.0, None),
        (None, 10.0, None),
        (400.0, None, None),
        (True, 1.0, None),
    ],
)
def test_change_percent(baseline, current, change):
    assert history.change_percent(baseline, current) == change


def test_a_drop_beyond_the_percentage_regresses_and_warns(tmp_path):
    path = write_run(tmp_path, "run1", {"a": (400.0, 200.0), "b": (400.0, 200.0), "c": (400.0, 200.0)})
    loaded = history.load_baseline(path)
    report = rp.build_report(
        results("run2", {"a": (352.0, 199.0), "b": (361.0, 180.1), "c": (300.0, 150.0, "fail", "peak below pass")}),
        generated=GENERATED,
        baseline=loaded,
        regression_percent=10,
    )
    clusters = dict((cluster["cluster"], cluster) for cluster in report["clusters"])
    a, b, c = clusters["a"]["baseline"], clusters["b"]["baseline"], clusters["c"]["baseline"]
    # a: peak -12% (beyond 10%) is the worst change; avg -0.5% is not.
    assert a["regressed"] is True and a["run_id"] == "run1" and a["file"] == path and a["metric"] == "peak_busbw"
    assert (a["baseline"], a["current"], a["change_percent"]) == (400.0, 352.0, -12.0)
    assert [(item["metric"], item["regressed"]) for item in a["comparisons"]] == [("peak_busbw", True), ("avg_busbw", False)]
    assert clusters["a"]["verdict"] == "warn"
    case = clusters["a"]["testcases"][0]
    assert case["verdict"] == "warn"
    assert case["reason"] == "nccl-all-reduce peak busbw dropped 12.0% against baseline run run1 (400.0 GB/s -> 352.0 GB/s; more than 10% warns)"
    checks = [check for check in case["checks"] if check["name"] == "baseline"]
    assert [check["verdict"] for check in checks] == ["warn", "pass"] and checks[1]["note"] is True
    # b: -9.75% peak stays within, avg -9.95% too: no regression, the verdict stays pass.
    assert b["regressed"] is False and b["change_percent"] == -9.95 and clusters["b"]["verdict"] == "pass"
    # c: a failed testcase stays failed, its reason its own.
    assert c["regressed"] is True and clusters["c"]["verdict"] == "fail" and clusters["c"]["testcases"][0]["reason"] == "peak below pass"
    assert report["baseline"]["regressed_clusters"] == ["a", "c"] and report["baseline"]["run_id"] == "run1"
    assert report["summary"]["warn"] == 1 and report["summary"]["pass"] == 1 and report["summary"]["fail"] == 1


def test_a_drop_of_exactly_the_percentage_does_not_regress(tmp_path):
    # 400 -> 300 is exactly -25.0 % in binary floating point; 400 -> 299.96 is -25.01 %
    loaded = history.load_baseline(write_run(tmp_path, "run1", {"a": (400.0, 200.0), "b": (400.0, 200.0)}))
    report = rp.build_report(results("run2", {"a": (300.0, 150.0), "b": (299.96, 150.0)}), generated=GENERATED, baseline=loaded, regression_percent=25)
    clusters = dict((cluster["cluster"], cluster) for cluster in report["clusters"])
    a, b = clusters["a"]["baseline"], clusters["b"]["baseline"]
    assert [(item["metric"], item["change_percent"], item["regressed"]) for item in a["comparisons"]] == [
        ("peak_busbw", -25.0, False),
        ("avg_busbw", -25.0, False),
    ]
    assert a["regressed"] is False and clusters["a"]["verdict"] == "pass"
    assert [(item["metric"], item["change_percent"], item["regressed"]) for item in b["comparisons"]] == [
        ("peak_busbw", -25.01, True),
        ("avg_busbw", -25.0, False),
    ]
    assert b["regressed"] is True and clusters["b"]["verdict"] == "warn" and report["baseline"]["regressed_clusters"] == ["b"]


def test_a_node_drop_of_exactly_the_percentage_does_not_regress(tmp_path):
    first = [measured("n1", "node", 400.0), measured("n2", "node", 400.0)]
    loaded = history.load_baseline(writer.write_reports(with_nodes("run1", first), str(tmp_path / "run1"), formats=["json"], run_id="run1")["files"]["json"])
    now = [measured("n1", "node", 300.0), measured("n2", "node", 299.96)]
    block = rp.build_report(with_nodes("run2", now), generated=GENERATED, baseline=loaded, regression_percent=25)["clusters"][0]["baseline"]
    assert [(item["node"], item["change_percent"], item["regressed"]) for item in block["nodes"]] == [("n1", -25.0, False), ("n2", -25.01, True)]
    assert block["regressed_nodes"] == ["n2"]


@pytest.mark.parametrize("percent", [0, 100])
def test_the_percentage_limits_are_allowed(percent, tmp_path):
    loaded = history.load_baseline(write_run(tmp_path, "run1", {"a": (400.0, 200.0)}))
    block = rp.build_report(results("run2", {"a": (0.01, 0.01)}), baseline=loaded, regression_percent=percent)["clusters"][0]["baseline"]
    # 0 %: any drop regresses; 100 %: no drop can be more than 100 %
    assert block["regression_percent"] == percent and block["regressed"] is (percent == 0)


def test_a_warned_testcase_keeps_its_reason_and_adds_the_regression(tmp_path):
    loaded = history.load_baseline(write_run(tmp_path, "run1", {"a": (400.0, 200.0)}))
    report = rp.build_report(results("run2", {"a": (260.0, 200.0, "warn", "peak 260 below warn 300")}), baseline=loaded)
    case = report["clusters"][0]["testcases"][0]
    assert case["verdict"] == "warn" and case["reason"].startswith("peak 260 below warn 300; nccl-all-reduce peak busbw dropped 35.0%")


def test_clusters_and_testcases_the_baseline_lacks_are_notes(tmp_path):
    loaded = history.load_baseline(write_run(tmp_path, "run1", {"a": (400.0, 200.0)}))
    given = results("run2", {"a": (100.0, 50.0), "new": (100.0, 50.0)})
    given["a"]["verdicts"].append(verdict(10.0, 5.0, workload="nccl-all-gather", collective="all_gather"))
    report = rp.build_report(given, baseline=loaded)
    clusters = dict((cluster["cluster"], cluster) for cluster in report["clusters"])
    assert clusters["new"]["baseline"]["note"] == "cluster new is not in baseline run run1: nothing compared"
    assert clusters["new"]["baseline"]["regressed"] is False and clusters["new"]["verdict"] == "pass"
    assert clusters["a"]["baseline"]["note"] == "not in baseline run run1: nccl-all-gather"
    assert clusters["a"]["testcases"][1]["verdict"] == "pass"


def test_no_figures_on_either_side_compare_nothing(tmp_path):
    loaded = history.load_baseline(write_run(tmp_path, "run1", {"a": (None, None)}))
    compared = rp.build_report(results("run2", {"a": (400.0, 200.0)}), baseline=loaded)["clusters"][0]["baseline"]
    assert compared["comparisons"] == [] and compared["change_percent"] is None and "nothing compared" in compared["note"]


def test_the_percentage_is_checked():
    with pytest.raises(ConfigError, match="^regression_percent: must be a number from 0 to 100"):
        rp.build_report(results("run2", {"a": (1.0, 1.0)}), regression_percent=150)


# --- the baseline: which run, and what is refused -------------------------------------------------------------------
def test_the_latest_earlier_run_is_found_and_the_current_one_skipped(tmp_path):
    write_run(tmp_path, "20261129-090000", {"a": (400.0, 200.0)}, mtime=1000)
    latest = write_run(tmp_path, "20261130-090000", {"a": (410.0, 200.0)}, mtime=2000)
    write_run(tmp_path, "20261201-090000", {"a": (420.0, 200.0)}, mtime=3000)
    (tmp_path / "20261202-090000").mkdir()  # a run that wrote no JSON report (a cleanup, formats without json)
    (tmp_path / "20261202-090000" / "summary.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("not a run")
    assert history.latest_earlier_run(str(tmp_path), "20261201-090000") == latest
    assert history.latest_earlier_run(str(tmp_path), "", current_dir=str(tmp_path / "20261201-090000")) == latest
    assert history.latest_earlier_run(str(tmp_path / "missing")) is None
    loaded, note = history.resolve_baseline("", str(tmp_path), "20261201-090000")
    assert loaded["run_id"] == "20261130-090000" and note == ""


def test_an_explicit_baseline_file_or_run_directory(tmp_path):
    path = write_run(tmp_path, "golden", {"a": (400.0, 200.0)})
    write_run(tmp_path, "later", {"a": (1.0, 1.0)}, mtime=4000000000)
    assert history.resolve_baseline(path, str(tmp_path), "now")[0]["run_id"] == "golden"
    assert history.resolve_baseline(str(tmp_path / "golden"), str(tmp_path), "now")[0]["file"] == path


@pytest.mark.parametrize(
    "baseline, history_dir, run_id, note",
    [
        ("/nonexistent/burnin-report.json", "", "run2", "baseline /nonexistent/burnin-report.json does not exist: nothing compared"),
        ("", "/nonexistent", "run2", "no earlier run with a JSON report in /nonexistent: nothing compared"),
        ("", "", "run2", "no baseline and no report directory: nothing compared"),
    ],
)
def test_a_missing_baseline_is_a_note(baseline, history_dir, run_id, note):
    assert history.resolve_baseline(baseline, history_dir, run_id) == (None, note)


def test_the_current_run_is_never_its_own_baseline(tmp_path):
    path = write_run(tmp_path, "run2", {"a": (400.0, 200.0)})
    assert history.resolve_baseline("", str(tmp_path), "run2") == (None, "no earlier run with a JSON report in %s: nothing compared" % tmp_path)
    assert history.resolve_baseline(path, "", "run2")[0] is None


@pytest.mark.parametrize(
    "content, field",
    [
        ("{not json", "is not JSON"),
        ("[]", "(document): must be a mapping"),
        (json.dumps({"schema": "other/v9", "clusters": []}), "schema: must be gpufleet.burnin/report/v1"),
        (json.dumps({"schema": history.SCHEMA}), "clusters: must be a list, got null"),
        (json.dumps({"schema": history.SCHEMA, "clusters": [{"testcases": []}]}), "clusters[0].cluster: must be a non-empty string"),
        (json.dumps({"schema": history.SCHEMA, "clusters": [{"cluster": "a", "testcases": {}}]}), "clusters[0].testcases: must be a list"),
        (
            json.dumps({"schema": history.SCHEMA, "clusters": [{"cluster": "a", "testcases": [{"metrics": {"peak_busbw": "fast"}}]}]}),
            'clusters[0].testcases[0].metrics.peak_busbw: must be a number (GB/s) or null, got a string "fast"',
        ),
    ],
)
def test_a_malformed_baseline_names_the_file_and_the_field(tmp_path, content, field):
    path = tmp_path / "burnin-report.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        history.resolve_baseline(str(path), "", "run2")
    assert str(info.value).startswith("baseline %s: " % path) and field in str(info.value)


def test_write_reports_still_writes_when_the_baseline_is_malformed(tmp_path):
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / "burnin-report.json").write_text("{not json")
    written = writer.write_reports(results("run2", {"a": (400.0, 200.0)}), str(tmp_path / "run2"), run_id="run2", history_dir=str(tmp_path))
    assert written["baseline_error"].startswith("baseline %s: is not JSON" % (tmp_path / "run1" / "burnin-report.json"))
    assert os.path.isfile(written["files"]["json"]) and written["baseline"]["note"].startswith("baseline not compared: baseline ")


# --- the reports show it --------------------------------------------------------------------------------------------
def test_a_second_run_finds_the_first_and_every_format_shows_the_change(tmp_path):
    first = writer.write_reports(
        results("run1", {"a": (400.0, 200.0), "b": (400.0, 200.0)}), str(tmp_path / "run1"), run_id="run1", history_dir=str(tmp_path), generated=GENERATED
    )
    assert first["baseline"]["run_id"] is None and "no earlier run" in first["baseline"]["note"] and first["baseline_error"] == ""
    second = writer.write_reports(
        results("run2", {"a": (350.0, 200.0), "b": (401.0, 200.0)}),
        str(tmp_path / "run2"),
        run_id="run2",
        history_dir=str(tmp_path),
        generated=GENERATED,
        regression_percent=10,
    )
    assert second["baseline"]["run_id"] == "run1" and second["baseline"]["regressed_clusters"] == ["a"] and second["summary"]["warn"] == 1
    with open(second["files"]["json"]) as handle:
        data = json.load(handle)
    a = data["clusters"][0]
    assert a["verdict"] == "warn" and a["baseline"]["run_id"] == "run1" and a["baseline"]["change_percent"] == -12.5
    assert a["baseline"]["baseline"] == 400.0 and a["baseline"]["current"] == 350.0 and a["baseline"]["regressed"] is True
    assert data["baseline"]["file"] == first["files"]["json"]
    with open(second["files"]["html"]) as handle:
        page = handle.read()
    assert '<section class="clusters with-baseline"' in page and "<span>vs baseline</span>" in page
    assert "compared with baseline run <b>run1</b>" in page and "1 regressed: a" in page
    assert '<span class="cut vs regressed" title="nccl-all-reduce peak busbw: 400.0 -&gt; 350.0 GB/s against baseline run run1">vs run1: -12.5%</span>' in page
    # b's worst change is its average's, 0%; its peak's +0.25% shows in its testcase.
    assert '<span class="cut vs" title="nccl-all-reduce avg busbw' in page and "vs run1: +0.0%" in page and "peak busbw 400.0 -&gt; 401.0 GB/s: +0.2%" in page
    assert '<span class="regressed">peak busbw 400.0 -&gt; 350.0 GB/s: -12.5%</span>' in page
    assert "<script" not in page
    with open(second["files"]["junit"]) as handle:
        suites = ET.fromstring(handle.read().split("\n", 1)[1])
    suite = suites.find("testsuite[@name='a']")
    properties = dict((item.get("name"), item.get("value")) for item in suite.iter("property"))
    assert properties["baseline_run_id"] == "run1" and properties["baseline_regressed"] == "true" and properties["baseline_change_percent"] == "-12.50"
    case = suite.find("testcase")
    assert case.find("failure") is None and case.find("error") is None
    assert "[warn] baseline: nccl-all-reduce peak busbw dropped 12.5% against baseline run run1" in case.find("system-out").text
    assert suites.get("failures") == "0"


def test_without_a_baseline_the_page_has_no_baseline_column(tmp_path):
    page = html_view.render_html(rp.build_report(results("run1", {"a": (400.0, 200.0)}), generated=GENERATED))
    assert 'class="clusters with-baseline"' not in page and "vs baseline" not in page
    report = rp.build_report(results("run1", {"a": (400.0, 200.0)}), generated=GENERATED, baseline_note="no earlier run: nothing compared")
    assert report["baseline"]["note"] == "no earlier run: nothing compared" and report["clusters"][0]["baseline"] is None
    assert '<p class="history">no earlier run: nothing compared</p>' in html_view.render_html(report)


# --- per node ------------------------------------------------------------------------------------------------------
G16 = 16 << 30


def measured(node, stage, busbw, size=G16, verdict_="pass"):
    return finding(node, stage, verdict_, "all_reduce %s GB/s" % busbw, {"busbw": busbw, "size": size})


def with_nodes(run_id, findings, peak=400.0):
    """One cluster "a" whose result carries FINDINGS (node_findings), its testcase at PEAK."""
    given = results(run_id, {"a": (peak, 200.0)})
    given["a"]["node_findings"] = findings
    return given


def test_node_measurements_are_findings_with_busbw_and_size():
    figures = history.node_measurements(
        [
            measured("n1", "node", 480.0),
            measured("n1", "isolation", 300.0),
            measured("n1", "isolation", 120.0),  # a second pair of n1: the lower counts
            finding("n2", "fleet", "fail", "its pod failed", {"pods": ["x"]}),  # no busbw: not a measurement
            finding("n3", "dcgm", "fail", "gpu 5", {"busbw": "fast", "size": G16}),
            finding("n4", "node", "pass", "odd", {"busbw": 400.0, "size": True}),
        ]
    )
    assert figures == {("n1", "node", G16): 480.0, ("n1", "isolation", G16): 120.0}


def test_a_node_whose_busbw_dropped_beyond_the_percentage_warns_and_is_named(tmp_path):
    first = [measured("n1", "node", 480.0), measured("n2", "node", 480.0), measured("n3", "node", 480.0, size=8 << 30), measured("n1", "isolation", 300.0)]
    loaded = history.load_baseline(writer.write_reports(with_nodes("run1", first), str(tmp_path / "run1"), formats=["json"], run_id="run1")["files"]["json"])
    assert loaded["clusters"]["a"]["nodes"][("n2", "node", G16)] == 480.0
    now = [measured("n1", "node", 470.0), measured("n2", "node", 400.0), measured("n3", "node", 300.0), measured("n4", "node", 480.0)]
    report = rp.build_report(with_nodes("run2", now), generated=GENERATED, baseline=loaded, regression_percent=10)
    block = report["clusters"][0]["baseline"]
    # n2 -16.7% regressed; n1 -2.1% did not; n3 was measured at another size, n4 is new, n1's isolation is gone: notes.
    assert [(item["node"], item["stage"], item["change_percent"], item["regressed"]) for item in block["nodes"]] == [
        ("n1", "node", -2.08, False),
        ("n2", "node", -16.67, True),
    ]
    assert block["regressed_nodes"] == ["n2"] and block["regressed"] is True and report["baseline"]["regressed_nodes"] == ["a/n2"]
    assert block["note"] == "no node figure at the same stage and size in baseline run run1: n3 (node), n4 (node)"
    case = report["clusters"][0]["testcases"][0]
    reason = "node n2 (stage node) busbw at 16G dropped 16.7% against baseline run run1 (480.0 GB/s -> 400.0 GB/s; more than 10% warns)"
    assert case["verdict"] == "warn" and case["reason"] == reason and report["clusters"][0]["verdict"] == "warn"
    node_checks = [check for check in case["checks"] if check["name"] == "baseline_node"]
    assert [(check["node"], check["verdict"], check["baseline"], check["value"]) for check in node_checks] == [("n2", "warn", 480.0, 400.0)]
    # The cluster's own figures did not move: only the node regressed.
    assert all(not item["regressed"] for item in block["comparisons"])
    header = fleet_summary({"a": {"cluster": "a", "outcome": "Complete"}}, "burn-in", "run2", baseline=report["baseline"])["header"]
    assert header.endswith("; vs baseline run run1: 1 regressed (warn): a; 1 node regressed: a/n2")


def test_every_report_shows_the_nodes_against_the_baseline(tmp_path):
    writer.write_reports(with_nodes("run1", [measured("n1", "node", 480.0), measured("n2", "node", 480.0)]), str(tmp_path / "run1"), run_id="run1")
    second = writer.write_reports(
        with_nodes("run2", [measured("n1", "node", 481.0), measured("n2", "node", 240.0)]),
        str(tmp_path / "run2"),
        run_id="run2",
        history_dir=str(tmp_path),
        generated=GENERATED,
    )
    with open(second["files"]["json"]) as handle:
        data = json.load(handle)
    assert data["clusters"][0]["baseline"]["regressed_nodes"] == ["n2"] and data["baseline"]["regressed_nodes"] == ["a/n2"]
    assert [finding_["node"] for finding_ in data["clusters"][0]["node_findings"]] == ["n1", "n2"]
    with open(second["files"]["html"]) as handle:
        page = handle.read()
    assert '<table class="node-history"><caption>nodes vs baseline run run1</caption>' in page
    assert '<tr class="regressed"><td>n2</td><td>node</td><td>16G</td>\n<td>480.0</td><td>240.0</td><td>-50.0%</td></tr>' in page
    assert '<tr class=""><td>n1</td><td>node</td><td>16G</td>\n<td>480.0</td><td>481.0</td><td>+0.2%</td></tr>' in page
    assert "vs run1: +0.0%; node n2 regressed</span>" in page and '<span class="cut vs regressed"' in page
    with open(second["files"]["junit"]) as handle:
        suite = ET.fromstring(handle.read().split("\n", 1)[1]).find("testsuite[@name='a']")
    properties = dict((item.get("name"), item.get("value")) for item in suite.iter("property"))
    assert properties["baseline_regressed_nodes"] == "n2" and properties["baseline_regressed"] == "true"
    assert "[warn] baseline_node: node n2 (stage node) busbw at 16G dropped 50.0%" in suite.find("testcase").find("system-out").text


def test_the_fleet_stage_findings_carry_the_runs_busbw_and_compare_per_node(tmp_path):
    def fleet_verdict(peak):
        judged = verdict(peak, 200.0)
        judged["checks"][0]["size"] = G16
        return judged

    found = from_verdict(fleet_verdict(400.0))
    assert [(item["node"], item["stage"], item["evidence"]) for item in found] == [
        ("n1", "fleet", {"busbw": 400.0, "size": G16}),
        ("n2", "fleet", {"busbw": 400.0, "size": G16}),
    ]
    assert from_verdict(dict(fleet_verdict(400.0), checks=[]))[0]["evidence"] == {}
    writer.write_reports(with_nodes("run1", found), str(tmp_path / "run1"), formats=["json"], run_id="run1")
    report = rp.build_report(
        with_nodes("run2", from_verdict(fleet_verdict(300.0)), peak=300.0),
        baseline=history.load_baseline(str(tmp_path / "run1" / "burnin-report.json")),
    )
    # The fleet run's figure is the same for each node: its drop names every node of the run (and the cluster's peak).
    assert report["clusters"][0]["baseline"]["regressed_nodes"] == ["n1", "n2"]


def test_a_baseline_with_malformed_node_findings_names_the_field(tmp_path):
    path = tmp_path / "burnin-report.json"
    path.write_text(json.dumps({"schema": history.SCHEMA, "clusters": [{"cluster": "a", "testcases": [], "node_findings": {"n1": 1}}]}))
    with pytest.raises(ConfigError, match=r"clusters\[0\].node_findings: must be a list"):
        history.load_baseline(str(path))
    path.write_text(json.dumps({"schema": history.SCHEMA, "clusters": [{"cluster": "a", "testcases": [], "node_findings": ["n1"]}]}))
    with pytest.raises(ConfigError, match=r"clusters\[0\].node_findings\[0\]: must be a mapping"):
        history.load_baseline(str(path))
