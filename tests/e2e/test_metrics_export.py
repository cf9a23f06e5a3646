# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The metrics and the report export end to end (plugins/plugin_utils/export_run.py behind gpufleet.burnin.burnin_export,
docs/metrics-export.md).

A burn-in of two clusters of the test fleet (gcp-usc1-h100-a passes; aws-usw2-h100-nodestage fails its slow node in
the node stage) at -vvv, with every export on:
- the metrics file: ``promtool check metrics`` (built from cmd/promtool of the prometheus module, tests/fleet/build.sh)
  passes on it, and it names the failing node;
- a real Pushgateway (built from its Go module), started here on a free port: its /metrics shows each cluster's group
  (job, cluster) with the run's series;
- a webhook (a thread here) that answers 503 twice, then 200: three attempts, each with the same body (the JSON report
  as written) and ``Idempotency-Key: <run id>``, the credential header received, its value nowhere in the output.
Then a webhook that always refuses: the summary says the export failed and why, the burn-in's result is unchanged.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.server
import json
import os
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parent.parent.parent
NAMESPACE = "metrics-e2e"
ENTRY = "metrics-burnin"
PASSING = "gcp-usc1-h100-a"
FAILING = "aws-usw2-h100-nodestage"
SECRET = "tok-9f8e7d6c5b4a-never-shown"


def components():
    versions = {}
    for line in (REPO / "tests" / "fleet" / "components.env").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            versions[key] = value.strip('"')
    root = Path(os.environ.get("GPUFLEET_CACHE") or Path.home() / ".cache" / "gpufleet-burnin") / "components"
    binaries = {
        "pushgateway": root / ("pushgateway-%s" % versions["PUSHGATEWAY_VERSION"]) / "bin" / "pushgateway",
        "promtool": root / ("promtool-%s" % versions["PROMETHEUS_MODULE_VERSION"]) / "bin" / "promtool",
    }
    missing = [str(path) for path in binaries.values() if not os.access(str(path), os.X_OK)]
    if missing:
        pytest.fail("missing %s: build them with tests/fleet/build.sh" % ", ".join(missing), pytrace=False)
    return binaries


def failing_node(fleet):
    """The node the fleet spec's node_busbw makes slow, by its real name (the fleet's state has it)."""
    slow = sorted(fleet.cluster(FAILING).get("node_busbw") or {})
    assert len(slow) == 1, fleet.cluster(FAILING)
    return slow[0]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def pushgateway(tmp_path_factory):
    binary = components()["pushgateway"]
    port = free_port()
    log = tmp_path_factory.mktemp("pushgateway") / "pushgateway.log"
    with open(str(log), "w") as out:
        proc = subprocess.Popen([str(binary), "--web.listen-address=127.0.0.1:%d" % port], stdout=out, stderr=subprocess.STDOUT)
    url = "http://127.0.0.1:%d" % port
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/-/ready", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the Pushgateway did not start: %s" % log.read_text()[-2000:], pytrace=False)
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class Webhook(object):
    """An HTTP server in a thread: answers each POST with the next of STATUSES (the last one repeats), keeps them all."""

    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.requests = []
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hook.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                status = hook.statuses[min(len(hook.requests), len(hook.statuses)) - 1]
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                del args

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/hooks/burnin" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def run_with_exports(fleet, burnin_playbook, work, run_id, hosts, extra):
    settings = dict({"burnin_export_headers": {"Authorization": "Bearer " + SECRET}, "burnin_export_backoff": 0.2}, **extra)
    return burnin_playbook(fleet, work / "reports", run_id, hosts, "-vvv", "-e", json.dumps(settings), namespace=NAMESPACE, entry=ENTRY, timeout=120)


def summary_lines(output):
    return [line.strip().strip('",') for line in output.splitlines() if line.strip().startswith('"')]


@pytest.fixture(scope="module")
def run(fleet, tmp_path_factory, burnin_playbook, pushgateway):
    if PASSING not in fleet.clusters or FAILING not in fleet.clusters:
        pytest.fail("the fleet needs %s and %s (tests/fleet/default-fleet.yml)" % (PASSING, FAILING), pytrace=False)
    work = tmp_path_factory.mktemp("metrics-e2e")
    hook = Webhook([503, 503, 200])
    try:
        done = run_with_exports(
            fleet,
            burnin_playbook,
            work,
            "metrics-1",
            [PASSING, FAILING],
            {"burnin_metrics_dir": str(work / "textfile"), "burnin_pushgateway_url": pushgateway, "burnin_export_url": hook.url, "burnin_export_attempts": 4},
        )
    finally:
        hook.close()
    return done, work, hook


def test_the_run_writes_a_metrics_file_that_promtool_accepts(run, fleet):
    slow = failing_node(fleet)
    done, work, _hook = run
    assert done.results[PASSING]["outcome"] == "Complete", done
    path = work / "textfile" / "gpufleet-burnin-metrics-1.prom"
    assert path.is_file(), done
    text = path.read_text()
    check = subprocess.run(
        [str(components()["promtool"]), "check", "metrics"], input=text, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False
    )
    assert check.returncode == 0, check.stdout
    families = dict((family.name, family) for family in text_string_to_metric_families(text))
    nodes = dict((sample.labels["node"], sample.labels["verdict"]) for sample in families["gpufleet_burnin_node_info"].samples)
    assert [node for node, verdict in sorted(nodes.items()) if verdict == "fail"] == [slow]
    clusters = dict((sample.labels["cluster"], sample.labels["verdict"]) for sample in families["gpufleet_burnin_cluster_info"].samples)
    assert clusters == {PASSING: "pass", FAILING: "fail"}
    # The failing node's own all_reduce (tests/fleet/default-fleet.yml node_busbw), in bytes per second.
    node_busbw = [s for s in families["gpufleet_burnin_node_busbw_bytes_per_second"].samples if s.labels["node"] == slow and s.labels["stage"] == "node"]
    assert len(node_busbw) == 1 and 2.9e11 < node_busbw[0].value < 3.1e11


def test_the_pushgateway_serves_every_clusters_group(run, pushgateway, fleet):
    slow = failing_node(fleet)
    done, _work, _hook = run
    with urllib.request.urlopen(pushgateway + "/metrics", timeout=10) as answer:
        text = answer.read().decode("utf-8")
    families = dict((family.name, family) for family in text_string_to_metric_families(text))
    info = families["gpufleet_burnin_cluster_info"].samples
    assert sorted((s.labels["job"], s.labels["cluster"], s.labels["run_id"], s.labels["verdict"]) for s in info) == [
        ("gpufleet_burnin", FAILING, "metrics-1", "fail"),
        ("gpufleet_burnin", PASSING, "metrics-1", "pass"),
    ]
    # Each group holds its own cluster's nodes only; the Pushgateway's own push_time_seconds names both groups.
    groups = {}
    for sample in families["gpufleet_burnin_node_info"].samples:
        groups.setdefault(sample.labels["cluster"], {})[sample.labels["node"]] = sample.labels["verdict"]
    assert groups[FAILING][slow] == "fail" and slow not in groups[PASSING]
    pushed = set(s.labels["cluster"] for s in families["push_time_seconds"].samples if s.labels.get("job") == "gpufleet_burnin")
    assert pushed == {PASSING, FAILING}
    assert any("metrics push (2 cluster group(s)) to %s: done" % pushgateway in line for line in summary_lines(done.output)), done


def test_the_report_is_exported_through_retries_with_one_idempotency_key(run):
    done, _work, hook = run
    assert [request["path"] for request in hook.requests] == ["/hooks/burnin"] * 3
    report = (done.dir / "burnin-report.json").read_bytes()
    for request in hook.requests:
        assert request["headers"]["Idempotency-Key"] == "metrics-1" and request["headers"]["X-Burnin-Run-Id"] == "metrics-1"
        assert request["headers"]["Authorization"] == "Bearer " + SECRET
        assert request["headers"]["Content-Type"] == "application/json"
        assert request["body"] == report
    assert json.loads(report.decode("utf-8"))["run_id"] == "metrics-1"
    assert any(line.startswith("report export to %s: done (HTTP 200, 3 attempt(s))" % hook.url) for line in summary_lines(done.output)), done


def test_the_credential_is_never_in_the_output_at_vvv(run):
    done, _work, _hook = run
    # -vvv took effect (task paths are printed from -vv on), and the start task's checked variables hold the mask.
    assert "task path:" in done.output and "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" in done.output
    assert SECRET not in done.output


def test_a_refused_export_is_a_summary_line_not_a_failed_burnin(fleet, tmp_path_factory, burnin_playbook):
    work = tmp_path_factory.mktemp("metrics-e2e-refused")
    hook = Webhook([503])
    try:
        done = run_with_exports(
            fleet, burnin_playbook, work, "metrics-2", [PASSING], {"burnin_export_url": hook.url, "burnin_export_attempts": 2, "burnin_stages": ["fleet"]}
        )
    finally:
        hook.close()
    assert done.rc == 0, done
    assert done.results[PASSING]["outcome"] == "Complete"
    assert len(hook.requests) == 2
    assert "report export to %s FAILED after 2 attempt(s): HTTP 503 Service Unavailable (the burn-in's verdicts are not changed)" % hook.url in summary_lines(
        done.output
    ), done
    assert SECRET not in done.output
