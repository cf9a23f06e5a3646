# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Fleet reports: JSON, JUnit XML and the self-contained HTML page."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import geometry, html_view, junit, writer
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report as rp
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import verdict as vd
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "nccl")
GENERATED = "2026-11-30T09:00:00Z"
_SPEC = importlib.util.spec_from_file_location("synthetic_fleet", os.path.join(os.path.dirname(os.path.abspath(__file__)), "synthetic_fleet.py"))
synthetic_fleet = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(synthetic_fleet)


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def fleet():
    """Four clusters: a pass, a fail (#wrong), a warn with a nasty name, and one that never ran."""
    h100 = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8, "mnnvl": False}
    ok = vd.verdict_for(
        fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"),
        facts=h100,
        job={"outcome": "Complete"},
        judging={"collective": "all_reduce", "workload": "nccl-all-reduce"},
    )
    smoke = vd.verdict_for(None, facts={}, job={"outcome": "Complete"}, judging={"collective": None, "workload": "torch-smoke"})
    wrong = vd.verdict_for(
        fixture("v2.16-all-reduce-wrong.log"), facts=h100, job={"outcome": "Failed", "reason": "exit 1"}, judging={"workload": "nccl-all-reduce"}
    )
    warn = vd.verdict_for(
        fixture("v2.16-all-gather-2x8-h200-nccl2.27.log"),
        facts={"platform": "gcp", "gpu_architecture": "h200", "nodes": 2},
        judging={"overrides": [{"collective": "all_gather", "metric": "peak", "pass": 400, "warn": 300}], "workload": "nccl-all-gather"},
    )
    return {
        "aws-p5-a": {
            "cluster": "aws-p5-a",
            "platform": "aws",
            "gpu_architecture": "h100",
            "outcome": "Complete",
            "verdicts": [ok, smoke],
            "started": "2026-11-30T08:00:00Z",
            "finished": "2026-11-30T08:04:00Z",
            "run_id": "20261130t0800",
            "namespace": "burnin",
            "trainjob": "nccl-all-reduce-20261130t0800",
        },
        "aws-p5-b": {"platform": "aws", "gpu_architecture": "h100", "outcome": "Failed", "verdicts": [wrong]},
        "gcp<script>alert(1)</script>": {"platform": "gcp", "gpu_architecture": "h200", "outcome": "Complete", "verdict": warn},
        "oci-x": {"outcome": "Unreachable", "reason": "Max retries exceeded \x07 <&>"},
    }


def test_build_report_counts_and_order():
    report = rp.build_report(fleet(), generated=GENERATED)
    assert report["schema"] == "gpufleet.burnin/report/v1" and report["run_id"] == "20261130t0800" and report["generated"] == GENERATED
    assert [cluster["cluster"] for cluster in report["clusters"]] == ["aws-p5-a", "aws-p5-b", "gcp<script>alert(1)</script>", "oci-x"]
    assert report["summary"] == {
        "pass": 2,
        "warn": 1,
        "fail": 1,
        "error": 1,
        "clusters": 4,
        "testcases": 5,
        "verdict": "error",
        "failed_clusters": ["aws-p5-b", "oci-x"],
    }
    first = report["clusters"][0]
    assert first["seconds"] == 240.0 and first["verdict"] == "pass"
    assert [case["workload"] for case in first["testcases"]] == ["nccl-all-reduce", "torch-smoke"]
    never = report["clusters"][3]["testcases"][0]
    assert never["workload"] == "burn-in" and never["verdict"] == "error" and never["reason"].startswith("Unreachable: Max retries")


@pytest.mark.parametrize(
    "outcome, verdict",
    [
        ("Complete", "pass"),
        ("Checked", "pass"),
        ("Failed", "fail"),
        ("Mismatch", "fail"),
        ("Timeout", "error"),
        ("Error", "error"),
        ("Pending", "error"),
        (None, "error"),
    ],
)
def test_clusters_without_verdicts_are_judged_by_outcome(outcome, verdict):
    report = rp.build_report({"c": {"outcome": outcome, "entry": "nccl-burnin"}}, generated=GENERATED)
    case = report["clusters"][0]["testcases"][0]
    assert case["verdict"] == verdict and case["workload"] == "nccl-burnin"


def test_list_input_and_errors():
    report = rp.build_report([{"cluster": "a", "outcome": "Complete"}], run_id="r1", generated=GENERATED)
    assert report["run_id"] == "r1" and report["clusters"][0]["cluster"] == "a"
    with pytest.raises(ConfigError, match=r"^results\[0\]: must be a cluster result"):
        rp.build_report([{"outcome": "Complete"}])
    with pytest.raises(ConfigError, match="^results: must be the fleet's results"):
        rp.build_report("text")
    with pytest.raises(ConfigError, match="^results.a: must be the cluster's result"):
        rp.build_report({"a": 5})
    with pytest.raises(ConfigError, match="^results.a.verdicts: must be a list"):
        rp.build_report({"a": {"verdicts": "pass"}})
    with pytest.raises(ConfigError, match="^results: a verdict must be a gpufleet.burnin.burnin_verdict result"):
        rp.build_report({"a": {"verdicts": [{"verdict": "great"}]}})


def test_json_roundtrip():
    report = rp.build_report(fleet(), generated=GENERATED)
    loaded = json.loads(rp.render_json(report))
    assert loaded == json.loads(json.dumps(report))
    case = loaded["clusters"][0]["testcases"][0]
    assert case["metrics"]["peak_busbw"] == 441.91 and case["thresholds"][0]["id"] == "aws-h100-all-reduce-peak"
    assert case["series"][-1] == [8589934592, 441.91, 444.78]


def test_junit():
    xml = junit.render_junit(rp.build_report(fleet(), generated=GENERATED))
    root = ET.fromstring(xml.encode("utf-8"))
    assert root.tag == "testsuites" and root.get("tests") == "5" and root.get("failures") == "1" and root.get("errors") == "1"
    suites = root.findall("testsuite")
    assert [suite.get("name") for suite in suites] == ["aws-p5-a", "aws-p5-b", "gcp<script>alert(1)</script>", "oci-x"]
    cases = dict(((case.get("classname"), case.get("name")), case) for case in root.iter("testcase"))
    assert set(cases) == {
        ("gpufleet.burnin.aws-p5-a", "nccl-all-reduce"),
        ("gpufleet.burnin.aws-p5-a", "torch-smoke"),
        ("gpufleet.burnin.aws-p5-b", "nccl-all-reduce"),
        ("gpufleet.burnin.gcp<script>alert(1)</script>", "nccl-all-gather"),
        ("gpufleet.burnin.oci-x", "burn-in"),
    }
    failure = cases[("gpufleet.burnin.aws-p5-b", "nccl-all-reduce")].find("failure")
    assert failure.get("type") == "fail" and "12 wrong elements (#wrong) at 256M, 512M" in failure.get("message")
    assert "[fail] wrong:" in failure.text
    error = cases[("gpufleet.burnin.oci-x", "burn-in")].find("error")
    assert error.get("message") == "Unreachable: Max retries exceeded \ufffd <&>"
    warn = cases[("gpufleet.burnin.gcp<script>alert(1)</script>", "nccl-all-gather")]
    assert warn.find("failure") is None and warn.find("error") is None and warn.find("system-out").text.startswith("verdict: warn")
    props = dict((prop.get("name"), prop.get("value")) for prop in suites[0].find("properties"))
    assert props["platform"] == "aws" and props["trainjob"] == "nccl-all-reduce-20261130t0800" and props["run_id"] == "20261130t0800"
    assert suites[0].get("time") == "240.000"


def test_html_is_self_contained_and_escaped():
    html = html_view.render_html(rp.build_report(fleet(), generated=GENERATED))
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html.lower()
    assert "gcp&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert re.findall(r"(?:src|href)=\"(?!#)[^\"]*\"", html) == []
    assert set(re.findall(r"https?://[^\"' <]+", html)) == {"http://www.w3.org/2000/svg"}
    assert "\x07" not in html and "Max retries exceeded \ufffd &lt;&amp;&gt;" in html
    assert html.count('<svg class="busbw-plot"') == 3
    assert 'class="no-plot"' in html


def test_plot_draws_series_thresholds_and_average():
    report = rp.build_report(fleet(), generated=GENERATED)
    case = report["clusters"][0]["testcases"][0]
    svg = html_view.render_plot(case, "aws-p5-a")
    points = re.search(r'<polyline class="series-oop"[^>]* points="([^"]+)"', svg).group(1).split()
    assert len(points) == 31 and svg.count('class="point point-oop"') == 31 and svg.count('class="point point-ip"') == 31
    xs = [float(point.split(",")[0]) for point in points]
    assert xs == sorted(xs) and xs[0] == 64.0 and xs[-1] == 736.0
    pass_line = re.search(r'<line class="threshold-pass" x1="64" y1="([0-9.]+)" x2="736" y2="([0-9.]+)"', svg)
    assert pass_line and pass_line.group(1) == pass_line.group(2)
    assert 'class="warn-band"' in svg and 'class="expected"' in svg and 'class="avg-measured"' in svg
    assert "pass &gt;= 270 GB/s (aws-h100-all-reduce-peak)" in svg
    y_pass = float(pass_line.group(1))
    y_peak = float(points[-1].split(",")[1])
    assert y_peak < y_pass  # 441.9 GB/s is drawn above the 270 GB/s line (SVG y grows downwards)


def test_plot_draws_a_range_threshold_over_its_sizes_only():
    report = rp.build_report(fleet(), generated=GENERATED)
    case = report["clusters"][0]["testcases"][0]
    assert [record["id"] for record in case["thresholds"]] == ["aws-h100-all-reduce-peak", "aws-h100-all-reduce-sizes"]
    svg = html_view.render_plot(case, "aws-p5-a")
    line = re.search(r'<line class="threshold-pass range" x1="([0-9.]+)" y1="([0-9.]+)" x2="([0-9.]+)" y2="([0-9.]+)"', svg)
    # The sweep is 8 B..8G (31 sizes over 672 px): 1G is the 28th point; the range's 16G end is clipped to 8G.
    assert line and float(line.group(1)) == 64.0 + 27 * 672 / 30.0 and float(line.group(3)) == 736.0 and line.group(2) == line.group(4)
    assert "pass &gt;= 250 GB/s at every size (aws-h100-all-reduce-sizes in 1G..16G)" in svg
    ranged = dict(case["thresholds"][1], ranges=[dict(case["thresholds"][1]["ranges"][0], warn=200.0)])
    svg = html_view.render_plot(dict(case, thresholds=[ranged]), "aws-p5-a")
    assert 'class="warn-band range"' in svg and "pass threshold" in svg


def test_plot_of_an_average_threshold_and_no_data():
    report = rp.build_report(fleet(), generated=GENERATED)
    gather = report["clusters"][2]["testcases"][0]
    gather["thresholds"].append({"id": "avg-x", "metric": "avg", "pass": 100.0, "warn": None, "expected": None})
    svg = html_view.render_plot(gather, "gcp")
    assert 'class="threshold-avg"' in svg and "average pass &gt;= 100 GB/s (avg-x)" in svg and "average threshold" in svg
    assert html_view.render_plot({"series": []}) == "" and html_view.render_plot({"series": [[0, None, None]]}) == ""
    single = html_view.render_plot({"series": [[1 << 30, 100.0, None]], "thresholds": [], "metrics": {}})
    assert single.count('class="point point-oop"') == 1 and 'class="series-ip"' not in single


def test_write_reports_and_check_mode(tmp_path):
    target = str(tmp_path / "reports" / "run1")
    dry = writer.write_reports(fleet(), target, generated=GENERATED, check_mode=True)
    assert dry["changed"] is True and len(dry["changed_files"]) == 3 and not os.path.exists(target)
    first = writer.write_reports(fleet(), target, generated=GENERATED)
    assert first["changed"] is True and sorted(os.listdir(target)) == ["burnin-report.html", "burnin-report.json", "burnin-report.junit.xml"]
    assert first["files"]["junit"] == os.path.join(target, "burnin-report.junit.xml") and first["summary"]["fail"] == 1
    assert oct(os.stat(first["files"]["html"]).st_mode & 0o777) == "0o644"
    again = writer.write_reports(fleet(), target, generated=GENERATED)
    assert again["changed"] is False and again["changed_files"] == []
    dry_again = writer.write_reports(fleet(), target, generated=GENERATED, check_mode=True)
    assert dry_again["changed"] is False
    only = writer.write_reports(fleet(), target, formats=["json"], generated="2026-12-01T00:00:00Z", basename="fleet")
    assert only["files"] == {"json": os.path.join(target, "fleet.json")} and only["changed"] is True


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"formats": ["pdf"]}, "^formats: unknown format"),
        ({"basename": "../x"}, "^basename: must be a plain file name prefix"),
        ({"directory": ""}, "^directory: "),
    ],
)
def test_write_reports_errors(tmp_path, kwargs, message):
    args = dict(directory=str(tmp_path))
    args.update(kwargs)
    with pytest.raises(ConfigError, match=message):
        writer.write_reports(fleet(), **args)


def test_argument_spec_is_defined_once():
    spec = writer.report_argument_spec()
    assert sorted(spec) == sorted(
        ["baseline", "basename", "directory", "formats", "generated", "history_dir", "regression_percent", "results", "run_id", "title"]
        + ["baseline_dir", "sibling_key", "sibling_min", "sibling_rule", "sibling_verdict", "offender_failures", "offender_runs", "golden", "drift_fail"]
    )
    assert spec["formats"]["choices"] == ["json", "junit", "html"] and spec["results"]["required"] is True


def test_margin_is_the_lowest_check_over_its_pass_threshold():
    report = rp.build_report(fleet(), generated=GENERATED)
    margins = dict((cluster["cluster"], cluster["margin"]) for cluster in report["clusters"])
    first = margins["aws-p5-a"]
    assert first["workload"] == "nccl-all-reduce" and first["check"] in ("peak", "avg") and first["threshold"]
    assert first["margin"] == round((first["value"] - first["pass"]) / first["pass"], 6)
    checks = [check for case in report["clusters"][0]["testcases"] for check in case["checks"] if check.get("pass") and check.get("value")]
    assert first["margin"] == min(round((check["value"] - check["pass"]) / check["pass"], 6) for check in checks)
    warned = margins["gcp<script>alert(1)</script>"]
    assert warned["check"] == "peak" and warned["pass"] == 400 and warned["warn"] == 300 and warned["margin"] < 0
    assert margins["oci-x"] is None
    assert rp.build_report({"a": {"verdicts": [{"verdict": "pass", "checks": [{"name": "x", "value": True, "pass": 1}]}]}})["clusters"][0]["margin"] is None


def test_fleet_overview_of_200_clusters():
    results = synthetic_fleet.synthetic_results(200)
    report = rp.build_report(results, generated=GENERATED)
    html = html_view.render_html(report)
    assert "<script" not in html.lower() and re.findall(r"(?:src|href)=\"(?!#)[^\"]*\"", html) == []
    assert "=&#34;" not in html  # no attribute escaped by mistake in the templates
    assert set(re.findall(r"https?://[^\"' <]+", html)) == {"http://www.w3.org/2000/svg"}
    chart = re.search(r'<svg class="fleet-chart".*?</svg>', html, re.S).group(0)
    bars = re.findall(r'<rect class="bar ([^"]*)" data-cluster="([^"]*)" data-verdict="([^"]*)" data-margin="([^"]*)"', chart)
    assert len(bars) == 200 and sorted(drawn[1] for drawn in bars) == sorted(results)
    by_name = dict((cluster["cluster"], cluster) for cluster in report["clusters"])
    unmeasured = [drawn for drawn in bars if not drawn[3]]
    assert unmeasured and bars[: len(unmeasured)] == unmeasured and all("nodata" in drawn[0] for drawn in unmeasured)
    assert all(by_name[drawn[1]]["verdict"] == "error" for drawn in unmeasured)
    margins = [float(drawn[3]) for drawn in bars[len(unmeasured) :]]
    assert margins == sorted(margins) and margins[0] < -0.1 < 0 < margins[-1]
    assert all(drawn[2] == by_name[drawn[1]]["verdict"] and "fv-%s" % drawn[2] in drawn[0].split() for drawn in bars)
    assert chart.count('class="threshold"') == 1 and chart.count('class="warn-mark"') == len(margins)
    xs = [float(x) for x in re.findall(r'<rect class="bar [^>]* x="([0-9.]+)"', chart)]
    assert xs == sorted(xs) and len(set(xs)) == 200
    # counts by verdict, platform and GPU, each a filter control
    chips = dict((value, int(count)) for value, count in re.findall(r'<label class="chip" for="([^"]+)" data-count="(\d+)"', html))
    summary = report["summary"]
    assert dict((verdict, chips["f-v-%s" % verdict]) for verdict in ("pass", "warn", "fail", "error")) == dict(
        (verdict, summary[verdict]) for verdict in ("pass", "warn", "fail", "error")
    )
    assert sum(chips[key] for key in chips if key.startswith("f-p-")) == 200 and len([key for key in chips if key.startswith("f-p-")]) == 7
    assert sum(chips[key] for key in chips if key.startswith("f-g-")) == 200 and len([key for key in chips if key.startswith("f-g-")]) == 5
    inputs = re.findall(r'<input class="filter" type="checkbox" id="([^"]+)"', html)
    assert sorted(inputs) == sorted(chips) and html.count("#f-p-0:not(:checked)~.clusters .fp-0{display:none}") == 1
    # per-cluster details, folded, in the chart's order; every cluster keeps its plot
    details = re.findall(r'<details class="cluster ([^"]*)" id="cluster-([^"]+)"( open)?>', html)
    assert [name.rsplit("-", 1)[0] for dummy, name, dummy2 in details] == [drawn[1] for drawn in bars] and not any(opened for dummy, dummy2, opened in details)
    assert html.count('<svg class="busbw-plot"') == 200 - len(unmeasured)
    # JSON and JUnit keep every cluster
    assert len(json.loads(rp.render_json(report))["clusters"]) == 200
    assert len(ET.fromstring(junit.render_junit(report).encode("utf-8")).findall("testsuite")) == 200


def test_small_fleets_show_their_details_unfolded():
    html = html_view.render_html(rp.build_report(fleet(), generated=GENERATED))
    assert html.count('<details class="cluster ') == 4 and html.count('" open>') == 4
    chart = re.search(r'<svg class="fleet-chart".*?</svg>', html, re.S).group(0)
    assert 'data-cluster="gcp&lt;script&gt;alert(1)&lt;/script&gt;"' in chart
    assert re.findall(r'data-cluster="([^"]*)"', chart)[0] == "oci-x"  # no result: first, with the errors
    assert "0 below" not in html and "1 below the pass threshold, 2 at or above, 1 without a busbw result." in html
    empty = html_view.render_html(rp.build_report({}, generated=GENERATED))
    assert '<svg class="fleet-chart"' in empty and "<details class" not in empty and "<b>0</b> of 0 clusters" in empty


def test_plot_geometry_is_computed_apart_from_its_markup():
    report = rp.build_report(fleet(), generated=GENERATED)
    case = report["clusters"][0]["testcases"][0]
    plot = geometry.plot_geometry(case, "aws-p5-a")
    assert [series["css"] for series in plot["series"]] == ["series-oop", "series-ip"] and len(plot["series"][0]["circles"]) == 31
    assert [line["kind"] for line in plot["thresholds"]][:3] == ["warn", "expected", "pass"] and plot["avg"]["y"]
    assert plot["series"][0]["points"] in html_view.render_plot(case, "aws-p5-a")
    assert geometry.plot_geometry({"series": []}) is None


def test_the_remediation_is_in_the_json_and_listed_in_the_html():
    results = fleet()
    done = {
        "mode": "apply",
        "run_id": "20261130t0800",
        "check_mode": False,
        "changes": [
            {"node": "n1", "what": "label", "key": "gpufleet.burnin/verified", "before": None, "after": "20261130t0800"},
            {"node": "n<2>", "what": "taint", "key": "gpufleet.burnin/bad:NoSchedule", "before": None, "after": "gpufleet.burnin/bad=20261130t0800:NoSchedule"},
        ],
        "nodes": ["n1", "n<2>"],
        "missing": ["gone"],
        "note": "",
    }
    results["aws-p5-a"]["remediation"] = done
    report = rp.build_report(results, generated=GENERATED)
    clusters = dict((c["cluster"], c) for c in json.loads(rp.render_json(report))["clusters"])
    assert clusters["aws-p5-a"]["remediation"] == done and clusters["aws-p5-b"]["remediation"] == {}
    html = html_view.render_html(report)
    assert html.count('class="remediation"') == 1
    assert "remediation (apply, run 20261130t0800): changed 2 node(s) - not found: gone" in html
    assert "<li>n1: label gpufleet.burnin/verified: - -&gt; 20261130t0800</li>" in html
    assert "<li>n&lt;2&gt;: taint gpufleet.burnin/bad:NoSchedule: - -&gt; gpufleet.burnin/bad=20261130t0800:NoSchedule</li>" in html


def test_nodes_and_clusters_whose_names_slug_alike_get_their_own_html_ids(tmp_path):
    # Before: n.1 and n-1 (and clusters a.b and a-b) shared their ids, so a node's severity link could jump to
    # another node's evidence.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding, with_findings

    def result(cluster):
        findings = [
            finding(node, "node", verdict, "%s %s" % (node, verdict), {"busbw": 100.0}) for node, verdict in (("n.1", "fail"), ("n-1", "pass"), ("n_1", "pass"))
        ]
        return dict(
            {
                "cluster": cluster,
                "platform": "aws",
                "gpu_architecture": "h100",
                "outcome": "Complete",
                "run_id": "r-1",
                "verdict": {"verdict": "pass", "reason": "ok", "checks": []},
            },
            **with_findings({}, findings),
        )

    written = writer.write_reports(
        dict((name, result(name)) for name in ("a.b", "a-b")), str(tmp_path), formats=["html"], run_id="r-1", generated="2026-12-03T07:00:00Z"
    )
    html = open(written["files"]["html"], encoding="utf-8").read()
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert len([i for i in ids if re.match(r"cluster-a-b-[0-9a-f]{8}$", i)]) == 2
    rows = [i for i in ids if re.match(r"cluster-a-b-[0-9a-f]{8}-node-n-1-[0-9a-f]{8}$", i)]
    assert len(rows) == 4
    hrefs = re.findall(r'href="#([^"]+)"', html)
    assert all(href in ids for href in hrefs)


@pytest.mark.parametrize(
    "title, run_id, expected",
    [
        # the role once passed the run id in the title as well: "GPU burn-in demo-035857 demo-035857"
        ("GPU burn-in demo-035857", "demo-035857", "GPU burn-in demo-035857"),
        ("GPU burn-in", "demo-035857", "GPU burn-in demo-035857"),
        # no run id given: the clusters' own (fleet()'s aws-p5-a), still once
        ("GPU burn-in", "", "GPU burn-in 20261130t0800"),
        ("GPU burn-in 20261130t0800", "", "GPU burn-in 20261130t0800"),
        # a run id that is only part of a word of the title is still named
        ("GPU burn-in demo-0358570", "demo-035857", "GPU burn-in demo-0358570 demo-035857"),
    ],
)
def test_the_title_names_the_run_once(title, run_id, expected):
    report = rp.build_report(fleet(), run_id=run_id, title=title, generated=GENERATED)
    html = html_view.render_html(report)
    # the page's <title> comes first (the charts' SVG <title>s follow)
    assert re.findall(r"<title>(.*?)</title>", html)[0] == expected
    assert re.findall(r"<h1>(.*?)</h1>", html) == [expected]
    suites = ET.fromstring(junit.render_junit(report))
    assert suites.get("name") == "gpufleet.burnin " + expected
    assert expected.split().count(report["run_id"]) == 1


def test_the_role_does_not_put_the_run_id_in_the_title():
    """The role passes run_id apart; the report adds it to the title (roles/burnin/tasks/summary.yml)."""
    root = os.path.abspath(__file__)
    for _level in range(5):  # tests/unit/plugins/module_utils/test_report.py -> the collection's root
        root = os.path.dirname(root)
    tasks = os.path.join(root, "roles", "burnin", "tasks", "summary.yml")
    with open(tasks) as handle:
        text = handle.read()
    assert "title: GPU burn-in\n" in text and "title: GPU burn-in {{" not in text
