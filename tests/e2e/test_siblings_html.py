# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The sibling strip plots and the drift table in a real browser (headless Chromium, as tests/e2e/test_report_html.py):
the page renders, every point sits where its value puts it on the plot's axis (the baseline and floor lines too), the
node beyond the rule is marked left of the rule's limit and links to its node's row, which exists on the page.
No test fleet is needed: the report is built from results like the unit tests' (tests/unit/plugins/module_utils)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import html_view
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "unit", "plugins", "module_utils"))

from test_report_html import chromium, probed  # noqa: E402,F401 pylint: disable=unused-import
import test_drift  # noqa: E402
import test_siblings  # noqa: E402

PROBE = """
<script>
window.addEventListener("load", function () {
  var out = [];
  document.querySelectorAll("figure.sibling-plot").forEach(function (figure) {
    var svg = figure.querySelector("svg");
    var box = svg.getBoundingClientRect();
    var lines = {};
    figure.querySelectorAll("line[data-value]").forEach(function (line) {
      var b = line.getBBox();
      lines[line.getAttribute("class")] = {value: parseFloat(line.getAttribute("data-value")), x: b.x + b.width / 2};
    });
    var points = [];
    figure.querySelectorAll("circle.sib-pt").forEach(function (c) {
      var b = c.getBBox();
      var link = c.closest("a");
      var href = link ? link.getAttribute("href") : null;
      points.push({node: c.getAttribute("data-node"), cluster: c.getAttribute("data-cluster"), value: parseFloat(c.getAttribute("data-value")),
        x: b.x + b.width / 2, r: b.width / 2, fill: getComputedStyle(c).fill, href: href,
        target: href ? !!document.getElementById(href.slice(1)) : null});
    });
    out.push({id: figure.id, width: box.width, height: box.height, lines: lines, points: points});
  });
  var drift = [];
  document.querySelectorAll("table.drift-table tbody tr").forEach(function (tr) {
    var cells = Array.prototype.map.call(tr.querySelectorAll("td"), function (td) { return td.textContent.trim(); });
    var a = tr.querySelector("a");
    drift.push({cells: cells, target: a ? !!document.getElementById(a.getAttribute("href").slice(1)) : false});
  });
  var pre = document.createElement("pre");
  pre.id = "render-check";
  pre.textContent = JSON.stringify({plots: out, drift: drift});
  document.body.appendChild(pre);
});
</script>
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    results = test_siblings.fleet()
    results.update(dict(("d" + name, entry) for name, entry in test_drift.fleet().items()))
    path = tmp_path_factory.mktemp("siblings") / "report.html"
    path.write_text(html_view.render_html(report.build_report(results, generated="2026-01-01T00:00:00Z")))
    return str(path)


def test_the_strip_plot_puts_every_node_where_its_value_is(chromium, page, tmp_path):  # noqa: F811
    seen = probed(chromium, tmp_path, page, PROBE, "--window-size=1400,1000", "--virtual-time-budget=5000")
    (plot,) = seen["plots"]
    assert plot["width"] > 300 and plot["height"] > 60, plot
    base, limit, floor = plot["lines"]["sib-baseline"], plot["lines"]["sib-limit"], plot["lines"]["sib-floor"]
    assert floor["x"] < limit["x"] < base["x"], plot["lines"]
    # One linear axis: each point's x from the baseline line is proportional to its value's distance from the baseline.
    scale = (base["x"] - floor["x"]) / (base["value"] - floor["value"])
    assert len(plot["points"]) == 12
    for point in plot["points"]:
        assert abs(point["x"] - (base["x"] + (point["value"] - base["value"]) * scale)) < 1.0, point
    outliers = [point for point in plot["points"] if point["href"]]
    assert [(point["cluster"], point["node"]) for point in outliers] == [("c", "c-3")]
    (slow,) = outliers
    assert slow["x"] < limit["x"] and slow["x"] > floor["x"] and slow["r"] > max(p["r"] for p in plot["points"] if not p["href"])
    assert slow["href"] == "#" + html_view.node_anchor("c", "c-3") and slow["target"] is True
    assert all(point["x"] > limit["x"] for point in plot["points"] if not point["href"])


def test_the_drift_table_names_the_skewed_node_and_links_it(chromium, page, tmp_path):  # noqa: F811
    seen = probed(chromium, tmp_path, page, PROBE, "--window-size=1400,1000", "--virtual-time-budget=5000", name="drift.html")
    (row,) = seen["drift"]
    assert row["cells"][:5] == ["db", "b-1", "driver", "570.124.06", "570.148.08"] and row["target"] is True
