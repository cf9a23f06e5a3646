# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The HTML report in a real browser: headless Chromium (Debian package ``chromium``) renders the busbw plots.
No test fleet is needed: the reports are built from the nccl-tests fixtures and from synthetic results.

Two looks at one report built from the nccl-tests fixtures:
- ``--dump-dom`` of a copy with a probe script appended: the browser's own layout (SVG getBBox, getTotalLength, computed
  stroke colours) of every plot's series, points and threshold line;
- ``--screenshot`` of the report as shipped (no script): the PNG holds the series and threshold colours.
And two at a 200-cluster report of synthetic results (tests/unit/plugins/module_utils/synthetic_fleet.py): the fleet
overview laid out (a bar per cluster in margin order, the counts, the CSS filters hiding rows when clicked, details
folded) and its 1400x1000 screenshot, a picture with every verdict's colour. The report's own page has no script;
only the probe copies have one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import html
import json
import os
import re
import shutil
import struct
import subprocess
import time
import zlib

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import writer

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import verdict

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unit", "fixtures", "nccl")
SYNTHETIC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unit", "plugins", "module_utils", "synthetic_fleet.py")
BROWSERS = ("chromium", "chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--force-device-scale-factor=1",
]

PROBE = """
<script>
window.addEventListener("load", function () {
  var out = [];
  document.querySelectorAll("svg.busbw-plot").forEach(function (svg) {
    function box(selector) {
      var el = svg.querySelector(selector);
      if (!el) { return null; }
      var b = el.getBBox();
      return {x: b.x, y: b.y, width: b.width, height: b.height, stroke: getComputedStyle(el).stroke,
              length: el.getTotalLength ? el.getTotalLength() : 0};
    }
    var rect = svg.getBoundingClientRect();
    out.push({width: rect.width, height: rect.height, oop: box("polyline.series-oop"), ip: box("polyline.series-ip"),
              pass: box("line.threshold-pass"), warn: box("rect.warn-band"), avg: box("line.avg-measured"),
              points: svg.querySelectorAll("circle.point").length,
              visible_points: Array.prototype.filter.call(svg.querySelectorAll("circle.point"), function (c) {
                var r = c.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length});
  });
  var pre = document.createElement("pre");
  pre.id = "render-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def find_or_install_chromium():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path, None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None, "chromium is not installed and this user cannot apt-get install it"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    steps = (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"])
    for step in steps:
        try:
            done = subprocess.run(step, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=900, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, "installing chromium failed: %s" % exc
        if done.returncode != 0:
            return None, "installing chromium failed (%s): %s" % (" ".join(step), done.stdout[-500:])
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path, None
    return None, "apt-get installed chromium but no chromium binary is on PATH"


@pytest.fixture(scope="module")
def chromium():
    path, why = find_or_install_chromium()
    if not path:
        pytest.skip(why)
    return path


def run_chromium(binary, tmp_path, *args):
    profile = tmp_path / ("profile-%d" % len(list(tmp_path.iterdir())))
    env = dict(os.environ, HOME=str(tmp_path))
    command = [binary] + FLAGS + ["--user-data-dir=%s" % profile] + list(args)
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def probed(binary, tmp_path, page_file, probe, *args, name="probed.html"):
    """What PROBE (a script that writes JSON into <pre id="render-check">) saw of PAGE_FILE's page in Chromium with
    ARGS, parsed."""
    with open(page_file) as handle:
        page = handle.read()
    path = tmp_path / name
    path.write_text(page.replace("</body>", probe + "</body>"))
    dom = run_chromium(binary, tmp_path, *args, "--dump-dom", path.as_uri())
    match = re.search(r'<pre id="render-check">(.*?)</pre>', dom, re.S)
    assert match, dom[-2000:]
    return json.loads(html.unescape(match.group(1)))


def fleet_results():
    h100 = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8, "mnnvl": False}
    h200 = {"platform": "gcp", "gpu_architecture": "h200", "nodes": 2, "gpus_per_node": 8, "mnnvl": False}
    return {
        "aws-p5-a": {
            "platform": "aws",
            "gpu_architecture": "h100",
            "outcome": "Complete",
            "run_id": "e2e",
            "verdicts": [
                verdict.verdict_for(
                    fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"),
                    facts=h100,
                    job={"outcome": "Complete"},
                    judging={"collective": "all_reduce", "workload": "nccl-all-reduce"},
                )
            ],
        },
        "gcp-a3u": {
            "platform": "gcp",
            "gpu_architecture": "h200",
            "outcome": "Complete",
            "verdicts": [
                verdict.verdict_for(
                    fixture("v2.16-all-gather-2x8-h200-nccl2.27.log"), facts=h200, job={"outcome": "Complete"}, judging={"workload": "nccl-all-gather"}
                )
            ],
        },
        "aws-p5-<b>": {
            "platform": "aws",
            "gpu_architecture": "h100",
            "outcome": "Failed",
            "verdicts": [
                verdict.verdict_for(fixture("v2.16-all-reduce-wrong.log"), facts=h100, job={"outcome": "Failed"}, judging={"workload": "nccl-all-reduce"})
            ],
        },
        "oci-x": {"outcome": "Unreachable", "reason": "Max retries exceeded"},
    }


def _staged(facts):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import cluster_result

    result = {"outcome": "Complete", "verdict": verdict.verdict_for(None, facts=facts, job={"outcome": "Complete"}, judging={"workload": "torch-smoke"})}
    node = {
        "verdict": "fail",
        "reason": "ip-10-1-2-3 busbw 301.5 GB/s at 16G is below h100-single-node-all-reduce-peak",
        "workload": "nccl-all-reduce-node",
        "checks": [
            {"name": "ip-10-1-2-3", "verdict": "fail", "reason": "busbw 301.5 GB/s", "value": 301.5, "pass": 432.0, "warn": 384.0},
            {"name": "ip-10-1-2-4", "verdict": "pass", "reason": "busbw 482.1 GB/s", "value": 482.1, "pass": 432.0, "warn": 384.0},
        ],
        "node_results": [{"node": "ip-10-1-2-3", "busbw": 301.5, "verdict": "fail"}, {"node": "ip-10-1-2-4", "busbw": 482.1, "verdict": "pass"}],
        "findings": [
            {"node": "ip-10-1-2-3", "stage": "node", "verdict": "fail", "reason": "busbw 301.5 GB/s at 16G", "evidence": {"busbw": 301.5, "size": 2**34}},
            {"node": "ip-10-1-2-4", "stage": "node", "verdict": "pass", "reason": "busbw 482.1 GB/s at 16G", "evidence": {"busbw": 482.1, "size": 2**34}},
        ],
    }
    result.update(cluster_result.recorded_attempt(result, "node", "e-r-node", node))
    result.update(cluster_result.recorded_attempt(result, "fleet", "e-r", result["verdict"]))
    return result


@pytest.fixture(scope="module")
def staged_report_file(tmp_path_factory):
    """A report of a cluster of the role's stages: a node stage that named a slow node, its per-node table
    (node_verdicts), next to a cluster with a plot."""
    directory = tmp_path_factory.mktemp("staged-report")
    h100 = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8, "mnnvl": False}
    results = {
        "aws-p5-nodes": dict({"platform": "aws", "gpu_architecture": "h100", "outcome": "Complete", "trainjob": "e-r"}, **_staged(h100)),
        "aws-p5-a": fleet_results()["aws-p5-a"],
    }
    return writer.write_reports(results, str(directory), formats=["html"], generated="2026-12-01T09:00:00Z")["files"]["html"]


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    directory = tmp_path_factory.mktemp("report")
    written = writer.write_reports(fleet_results(), str(directory), formats=["html"], generated="2026-11-30T09:00:00Z")
    return written["files"]["html"]


def read_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA, non-interlaced PNG: what Chromium writes."""
    with open(path, "rb") as handle:
        data = handle.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    width, height, depth, color, dummy, dummy2, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x : x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


def test_the_report_has_no_script(report_file):
    with open(report_file) as handle:
        assert "<script" not in handle.read().lower()


def test_browser_lays_out_every_plot(chromium, report_file, tmp_path):
    plots = probed(chromium, tmp_path, report_file, PROBE, "--virtual-time-budget=5000")
    assert len(plots) == 3  # aws-p5-a, gcp-a3u and the failed cluster; the unreachable one has no data
    for plot in plots:
        assert 760 <= plot["width"] <= 764 and 354 <= plot["height"] <= 358  # the SVG plus its CSS border
        oop = plot["oop"]
        assert oop["width"] > 500 and oop["height"] > 100 and oop["length"] > 600 and oop["stroke"] == "rgb(31, 119, 180)"
        assert plot["ip"]["stroke"] == "rgb(255, 127, 14)"
        assert plot["points"] > 10 and plot["visible_points"] == plot["points"]
        assert plot["avg"] and plot["avg"]["width"] == 672
    drawn = [plot for plot in plots if plot["pass"]]
    assert len(drawn) == 3
    for plot in drawn:
        line = plot["pass"]
        assert line["width"] == 672 and line["height"] == 0 and line["stroke"] == "rgb(214, 39, 40)"
        assert oop_crosses(plot), plot


def oop_crosses(plot):
    """The threshold line lies inside the series' vertical extent: the curve is drawn on both sides of it."""
    oop, line = plot["oop"], plot["pass"]
    return oop["y"] < line["y"] < oop["y"] + oop["height"]


NODES_PROBE = """
<script>
window.addEventListener("load", function () {
  function visible(el) { return el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0; }
  var out = Array.prototype.map.call(document.querySelectorAll("table.nodes"), function (table) {
    var r = table.getBoundingClientRect();
    return {visible: visible(table), width: r.width, height: r.height,
            rows: Array.prototype.map.call(table.querySelectorAll("tbody tr"), function (tr) {
              return {visible: visible(tr), cells: Array.prototype.map.call(tr.querySelectorAll("td"), function (td) {
                return td.innerText.trim(); })}; })};
  });
  var pre = document.createElement("pre");
  pre.id = "render-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def test_browser_shows_the_per_node_table(chromium, staged_report_file, tmp_path):
    tables = probed(chromium, tmp_path, staged_report_file, NODES_PROBE, "--window-size=1400,1000", "--virtual-time-budget=5000")
    assert len(tables) == 1, tables  # only the staged cluster has node verdicts
    table = tables[0]
    assert table["visible"] and table["width"] > 300 and table["height"] > 40, table
    assert [row["visible"] for row in table["rows"]] == [True, True]
    slow, healthy = table["rows"][0]["cells"], table["rows"][1]["cells"]
    assert slow[0] == "ip-10-1-2-3" and slow[1].lower() == "fail" and slow[2] == "node" and "301.5" in slow[3], table
    assert healthy[0] == "ip-10-1-2-4" and healthy[1].lower() == "pass", table
    # The screenshot shows it: the fail badge's red in the table's rows, under the stages table.
    shot = tmp_path / "nodes.png"
    run_chromium(chromium, tmp_path, "--window-size=1400,1000", "--screenshot=%s" % shot, "file://%s" % staged_report_file)
    width, height, rows = read_png(str(shot))
    red = sum(1 for row in rows for pixel in row if close(pixel, VERDICT_RGB["fail"], 12))
    assert red > 300, "no fail badge drawn (%d pixels)" % red


def test_screenshot_shows_the_plot(chromium, report_file, tmp_path):
    shot = tmp_path / "report.png"
    run_chromium(chromium, tmp_path, "--window-size=900,1600", "--screenshot=%s" % shot, "file://%s" % report_file)
    width, height, rows = read_png(str(shot))
    assert (width, height) == (900, 1600)
    counts = {}
    for row in rows:
        for pixel in row:
            counts[pixel] = counts.get(pixel, 0) + 1
    assert len(counts) > 50, "the screenshot is (nearly) blank"
    series = sum(count for pixel, count in counts.items() if close(pixel, (31, 119, 180)))
    threshold = sum(count for pixel, count in counts.items() if close(pixel, (214, 39, 40)))
    background = counts.get((250, 250, 250), 0) + counts.get((255, 255, 255), 0)
    assert series > 300, "no out-of-place series drawn (%d pixels)" % series
    assert threshold > 150, "no pass threshold drawn (%d pixels)" % threshold
    assert background < width * height * 0.97


def close(pixel, color, tolerance=24):
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, color))


# ------------------------------------------------------------------------------------------------ 200 clusters

OVERVIEW_PROBE = """
<script>
window.addEventListener("load", function () {
  setTimeout(function () {
    // checkVisibility: false under display:none (a filtered row) and in a closed <details> (content-visibility)
    function visible(el) { return el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0; }
    function shown(selector) { return Array.prototype.filter.call(document.querySelectorAll(selector), visible).length; }
    var nav = performance.getEntriesByType("navigation")[0] || {};
    var paints = {};
    performance.getEntriesByType("paint").forEach(function (p) { paints[p.name] = p.startTime; });
    var chart = document.querySelector("svg.fleet-chart");
    var bars = Array.prototype.map.call(chart.querySelectorAll("rect.bar"), function (bar) {
      var r = bar.getBoundingClientRect();
      return {cluster: bar.getAttribute("data-cluster"), verdict: bar.getAttribute("data-verdict"), margin: bar.getAttribute("data-margin"),
              x: r.x, width: r.width, height: r.height, fill: getComputedStyle(bar).fill};
    });
    var out = {bars: bars, chart: chart.getBoundingClientRect().toJSON(), details: document.querySelectorAll("details.cluster").length,
               open: document.querySelectorAll("details.cluster[open]").length, summaries: shown("details.cluster > summary"),
               plots_shown: shown("svg.busbw-plot"),
               chips: Array.prototype.map.call(document.querySelectorAll("label.chip"), function (chip) {
                 return {for: chip.htmlFor, count: +chip.getAttribute("data-count"), text: chip.textContent.trim()}; }),
               timing: {dom_content_loaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, first_paint: paints["first-paint"],
                        first_contentful_paint: paints["first-contentful-paint"], transfer_bytes: nav.decodedBodySize}};
    document.querySelector("label[for=f-v-pass]").click();
    out.without_pass = shown("details.cluster");
    out.dimmed = Array.prototype.filter.call(chart.querySelectorAll("rect.bar"), function (bar) {
      return getComputedStyle(bar).opacity < 0.5; }).length;
    document.querySelector("label[for=f-p-0]").click();
    out.without_pass_and_first_platform = shown("details.cluster");
    document.querySelector("button[type=reset]").click();
    out.after_reset = shown("details.cluster");
    var pre = document.createElement("pre");
    pre.id = "render-check";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 0);
});
</script>
"""
VERDICT_RGB = {"pass": (46, 125, 50), "warn": (183, 121, 31), "fail": (179, 38, 30), "error": (106, 27, 154)}


def synthetic_results(count):
    spec = importlib.util.spec_from_file_location("synthetic_fleet", SYNTHETIC)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.synthetic_results(count)


@pytest.fixture(scope="module")
def fleet_report(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fleet-report")
    results = synthetic_results(200)
    written = writer.write_reports(results, str(directory), generated="2026-12-01T10:10:00Z")
    return results, written["files"]


def test_fleet_report_keeps_every_cluster(fleet_report):
    results, files = fleet_report
    with open(files["json"]) as handle:
        assert sorted(cluster["cluster"] for cluster in json.load(handle)["clusters"]) == sorted(results)
    with open(files["junit"]) as handle:
        assert len(re.findall(r"<testsuite ", handle.read())) == 200
    with open(files["html"]) as handle:
        assert "<script" not in handle.read().lower()


def test_browser_lays_out_the_fleet_overview(chromium, fleet_report, tmp_path):
    results, files = fleet_report
    seen = probed(chromium, tmp_path, files["html"], OVERVIEW_PROBE, "--window-size=1400,1000", "--virtual-time-budget=10000")
    bars = seen["bars"]
    assert len(bars) == 200 and sorted(drawn["cluster"] for drawn in bars) == sorted(results)
    assert all(drawn["width"] >= 3 and drawn["height"] >= 1 for drawn in bars)  # every bar drawn, visible
    assert [drawn["x"] for drawn in bars] == sorted(drawn["x"] for drawn in bars)
    unmeasured = [drawn for drawn in bars if not drawn["margin"]]
    margins = [float(drawn["margin"]) for drawn in bars[len(unmeasured) :]]
    assert unmeasured and all(not drawn["margin"] for drawn in bars[: len(unmeasured)]) and margins == sorted(margins)
    for drawn in bars:
        assert drawn["fill"] == "rgb(%d, %d, %d)" % VERDICT_RGB[drawn["verdict"]]
    assert 1200 <= seen["chart"]["width"] <= 1340 and seen["chart"]["y"] < 300  # the chart is at the top of the page
    counts = dict((chip["for"], chip["count"]) for chip in seen["chips"])
    verdicts = dict((verdict, sum(1 for drawn in bars if drawn["verdict"] == verdict)) for verdict in VERDICT_RGB)
    assert dict((verdict, counts["f-v-" + verdict]) for verdict in verdicts) == verdicts
    assert sum(count for key, count in counts.items() if key.startswith("f-p-")) == 200
    assert sum(count for key, count in counts.items() if key.startswith("f-g-")) == 200
    assert seen["details"] == 200 and seen["open"] == 0 and seen["summaries"] == 200 and seen["plots_shown"] == 0
    assert seen["without_pass"] == 200 - verdicts["pass"] and seen["dimmed"] == verdicts["pass"]
    first_platform = sorted(set(entry["platform"] for entry in results.values()))[0]
    hidden = sum(1 for entry in results.values() if entry["platform"] == first_platform and (entry.get("verdicts") or [{}])[0].get("verdict") != "pass")
    assert seen["without_pass_and_first_platform"] == 200 - verdicts["pass"] - hidden
    assert seen["after_reset"] == 200
    timing = seen["timing"]
    print("200-cluster report in Chromium: %s" % json.dumps(timing, sort_keys=True))


def test_fleet_overview_screenshot(chromium, fleet_report, tmp_path):
    results, files = fleet_report
    del results
    shot = tmp_path / "fleet.png"
    started = time.time()
    run_chromium(chromium, tmp_path, "--window-size=1400,1000", "--screenshot=%s" % shot, "file://%s" % files["html"])
    print("chromium --screenshot of the 200-cluster report: %.2f s wall, including the browser's start" % (time.time() - started))
    width, height, rows = read_png(str(shot))
    assert (width, height) == (1400, 1000)
    counts = {}
    for row in rows[:700]:  # the overview: headline, chart, counts
        for pixel in row:
            counts[pixel] = counts.get(pixel, 0) + 1
    assert len(counts) > 50, "the screenshot is (nearly) blank"
    background = counts.get((250, 250, 250), 0) + counts.get((255, 255, 255), 0)
    assert background < width * 700 * 0.95
    for verdict, color in VERDICT_RGB.items():
        drawn = sum(count for pixel, count in counts.items() if close(pixel, color, 12))
        assert drawn > 400, "no %s bars or counts drawn (%d pixels)" % (verdict, drawn)


HISTORY_PROBE = """
<script>
window.addEventListener("load", function () {
  var rows = Array.prototype.map.call(document.querySelectorAll("table.node-history tbody tr"), function (tr) {
    var r = tr.getBoundingClientRect();
    return {cells: Array.prototype.map.call(tr.cells, function (td) { return td.textContent; }), regressed: tr.classList.contains("regressed"),
            width: r.width, height: r.height, background: getComputedStyle(tr).backgroundColor};
  });
  var ranges = Array.prototype.map.call(document.querySelectorAll("svg.busbw-plot line.threshold-pass.range"), function (line) {
    var b = line.getBBox();
    return {x: b.x, width: b.width, height: b.height, stroke: getComputedStyle(line).stroke};
  });
  var pre = document.createElement("pre");
  pre.id = "render-check";
  pre.textContent = JSON.stringify({rows: rows, ranges: ranges});
  document.body.appendChild(pre);
});
</script>
"""


def test_nodes_against_the_baseline_and_range_thresholds_are_drawn(chromium, tmp_path):
    """A second run whose node n2 dropped: the "nodes vs baseline" table lays out a row per node, the regressed one
    highlighted; the aws plot draws the range threshold's pass line over 1G..8G only (the sweep ends at 8G)."""

    def results(run_id, n2):
        found = [
            {"node": node, "stage": "node", "verdict": "pass", "reason": "ok", "evidence": {"busbw": busbw, "size": 16 << 30}}
            for node, busbw in (("n1", 480.0), ("n2", n2))
        ]
        given = fleet_results()
        given["aws-p5-a"].update(run_id=run_id, node_findings=found)
        return given

    writer.write_reports(results("run1", 480.0), str(tmp_path / "run1"), formats=["json"], run_id="run1")
    written = writer.write_reports(results("run2", 240.0), str(tmp_path / "run2"), formats=["html"], run_id="run2", history_dir=str(tmp_path))
    seen = probed(
        chromium, tmp_path, written["files"]["html"], HISTORY_PROBE, "--window-size=1400,1000", "--virtual-time-budget=5000", name="probed-nodes.html"
    )
    rows = dict((row["cells"][0], row) for row in seen["rows"])
    assert sorted(rows) == ["n1", "n2"] and rows["n2"]["cells"][3:] == ["480.0", "240.0", "-50.0%"] and rows["n2"]["regressed"]
    assert all(row["width"] > 200 and row["height"] > 10 for row in rows.values())
    assert rows["n2"]["background"] == "rgb(253, 243, 225)" and rows["n1"]["background"] != rows["n2"]["background"]
    # aws-p5-a's range line spans 1G..8G of its 8..8G sweep, not the plot's 672 px; the failed aws cluster's sweep ends
    # at 1G, the range's one plotted size: a short mark at the plot's right edge.
    widths = sorted(line["width"] for line in seen["ranges"])
    assert widths[0] == 2 and 60 < widths[1] < 75, seen["ranges"]
    assert all(line["height"] == 0 and line["stroke"] == "rgb(214, 39, 40)" and line["x"] + line["width"] <= 736 for line in seen["ranges"])
