# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark (not a test): the fleet HTML report of N synthetic clusters (tests/unit/plugins/module_utils/synthetic_fleet.py),
its size, the time to build and write the three reports, and headless Chromium's render of the page.

Per N it prints the report's size, the Python time to write JSON, JUnit and HTML, and, as the median of ROUNDS runs of
``chromium --headless --dump-dom`` on a copy with a timing probe, the page's own Navigation and Paint Timing figures
(DOMContentLoaded, load, first contentful paint, from the navigation's start) and the browser's wall time, next to the
wall time of the same command on an empty page (the browser's start and exit).

Needs Debian's /usr/bin/chromium. Run with scripts/env.sh sourced:  python tests/bench/bench_report_html.py [50 100 200]
"""

from __future__ import absolute_import, division, print_function

import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import writer

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SYNTHETIC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unit", "plugins", "module_utils", "synthetic_fleet.py")
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
    "--window-size=1400,1000",
]
PROBE = """<script>
window.addEventListener("load", function () { setTimeout(function () {
  var nav = performance.getEntriesByType("navigation")[0], paint = {};
  performance.getEntriesByType("paint").forEach(function (p) { paint[p.name] = p.startTime; });
  var pre = document.createElement("pre"); pre.id = "timing";
  pre.textContent = JSON.stringify({dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, fcp: paint["first-contentful-paint"]});
  document.body.appendChild(pre); }, 0); });
</script>"""


def load_synthetic():
    spec = importlib.util.spec_from_file_location("synthetic_fleet", SYNTHETIC)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chromium(binary, workdir, page):
    profile = tempfile.mkdtemp(prefix="profile-", dir=workdir)
    started = time.time()
    done = subprocess.run(
        [binary] + FLAGS + ["--user-data-dir=%s" % profile, "--dump-dom", "file://%s" % page],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        timeout=300,
        check=True,
        env=dict(os.environ, HOME=workdir),
    )
    wall = time.time() - started
    shutil.rmtree(profile, ignore_errors=True)
    match = re.search(r'<pre id="timing">(.*?)</pre>', done.stdout, re.S)
    return wall, json.loads(match.group(1).replace("&quot;", '"')) if match else {}


def main(sizes):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if not binary:
        sys.exit("chromium is not installed (apt-get install chromium)")
    synthetic = load_synthetic()
    workdir = tempfile.mkdtemp(prefix="bench-report-")
    try:
        empty = os.path.join(workdir, "empty.html")
        with open(empty, "w") as handle:
            handle.write("<!DOCTYPE html><html><body>" + PROBE + "</body></html>")
        base = statistics.median(chromium(binary, workdir, empty)[0] for dummy in range(ROUNDS))
        print("chromium on an empty page: %.2f s wall (median of %d)" % (base, ROUNDS))
        print("%8s %10s %10s %8s %8s %8s %10s" % ("clusters", "HTML KiB", "write s", "DCL ms", "load ms", "FCP ms", "wall s"))
        for size in sizes:
            results = synthetic.synthetic_results(size)
            started = time.time()
            written = writer.write_reports(results, os.path.join(workdir, str(size)), generated="2026-12-01T10:10:00Z")
            write_s = time.time() - started
            page = written["files"]["html"]
            probed = page.replace(".html", ".probed.html")
            with open(page) as handle:
                text = handle.read()
            with open(probed, "w") as handle:
                handle.write(text.replace("</body>", PROBE + "</body>"))
            runs = [chromium(binary, workdir, probed) for dummy in range(ROUNDS)]

            def median(key, runs=runs):
                values = [run[1].get(key) for run in runs if run[1].get(key) is not None]
                return statistics.median(values) if values else float("nan")

            print(
                "%8d %10.0f %10.2f %8.0f %8.0f %8.0f %10.2f"
                % (size, len(text.encode("utf-8")) / 1024.0, write_s, median("dcl"), median("load"), median("fcp"), statistics.median(run[0] for run in runs))
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [50, 100, 200])
