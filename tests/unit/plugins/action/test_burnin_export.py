# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The action gpufleet.burnin.burnin_export run as a task runs it, against a local HTTP server in a thread (ansible's
open_url does the requests): the metrics file, check mode, the export's retries, a refused export as a note, bad
options naming the option. Controller code, so here and not under tests/unit/plugins/module_utils/."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import http.server
import json
import os
import threading
from unittest import mock

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.report import write_reports

SECRET = "unit-secret-4711"


def run_action(args, check_mode=False):
    from ansible.playbook.task import Task

    from ansible_collections.gpufleet.burnin.plugins.action.burnin_export import ActionModule

    task = Task()
    task.args = copy.deepcopy(args)
    task.check_mode = check_mode
    plugin = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    return plugin.run(task_vars={})


@pytest.fixture()
def report_file(tmp_path):
    results = {
        "c1": {
            "cluster": "c1",
            "platform": "aws",
            "gpu_architecture": "h100",
            "outcome": "Complete",
            "run_id": "r-1",
            "verdict": {
                "verdict": "pass",
                "reason": "ok",
                "collective": "all_reduce",
                "workload": "nccl-all-reduce",
                "checks": [{"name": "peak", "value": 480.5, "pass": 432.0, "warn": 384.0, "size": 17179869184}],
            },
        }
    }
    written = write_reports(results, str(tmp_path / "r-1"), formats=["json"], run_id="r-1", generated="2026-12-03T07:00:00Z")
    return written["files"]["json"]


@pytest.fixture()
def hook():
    state = {"statuses": [503, 200], "requests": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state["requests"].append((dict(self.headers.items()), body))
            self.send_response(state["statuses"][min(len(state["requests"]), len(state["statuses"])) - 1])
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            del args

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["url"] = "http://user:%s@127.0.0.1:%d/hook?key=%s" % (SECRET, server.server_address[1], SECRET)
    state["shown"] = "http://127.0.0.1:%d/hook" % server.server_address[1]
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def test_the_metrics_file_is_written_once_and_check_mode_writes_nothing(report_file, tmp_path):
    args = {"report": report_file, "run_id": "r-1", "metrics_dir": str(tmp_path / "textfile")}
    planned = run_action(args, check_mode=True)
    assert planned["changed"] and planned["files"] == [] and not os.path.exists(str(tmp_path / "textfile"))
    done = run_action(args)
    assert done["changed"] and done["files"] == [str(tmp_path / "textfile" / "gpufleet-burnin-r-1.prom")] and done["series"] > 5
    text = open(done["files"][0]).read()
    assert (
        'gpufleet_burnin_busbw_bytes_per_second{check="peak",cluster="c1",collective="all_reduce",run_id="r-1",stage="fleet",'
        'workload="nccl-all-reduce"} 4.805e+11' in text
    )
    assert not run_action(args)["changed"]


def test_the_export_retries_and_sends_the_report_with_the_run_id(report_file, hook):
    done = run_action({"report": report_file, "run_id": "r-1", "export_url": hook["url"], "export_headers": {"Authorization": SECRET}, "backoff": 0})
    assert done["export"]["ok"] and done["export"]["attempts"] == 2 and done["export"]["statuses"] == [503, 200]
    body = open(report_file, "rb").read()
    assert [request[1] for request in hook["requests"]] == [body, body]
    assert all(request[0]["Idempotency-Key"] == "r-1" and request[0]["Authorization"] == SECRET for request in hook["requests"])
    assert done["notes"] == ["report export to %s: done (HTTP 200, 2 attempt(s))" % hook["shown"]]
    assert SECRET not in json.dumps(done)


def test_a_refused_export_is_a_note_not_a_failure(report_file, hook):
    hook["statuses"] = [403]
    done = run_action({"report": report_file, "run_id": "r-1", "export_url": hook["url"], "export_headers": {"Authorization": SECRET}, "backoff": 0})
    assert not done.get("failed") and len(hook["requests"]) == 1
    assert done["notes"] == ["report export to %s FAILED after 1 attempt(s): HTTP 403 Forbidden (the burn-in's verdicts are not changed)" % hook["shown"]]
    assert SECRET not in json.dumps(done)


def test_an_unreachable_pushgateway_is_a_note(report_file):
    done = run_action({"report": report_file, "run_id": "r-1", "pushgateway_url": "http://127.0.0.1:9", "attempts": 2, "backoff": 0})
    assert not done.get("failed") and done["pushed"][0]["attempts"] == 2 and done["pushed"][0]["status"] is None
    assert done["notes"][0].startswith("metrics push of c1 to http://127.0.0.1:9 FAILED after 2 attempt(s): no answer:")


@pytest.mark.parametrize(
    "args, message",
    [
        ({"export_url": "ftp://x"}, "export_url: must be an http:// or https:// URL"),
        ({"export_headers": {"Host": SECRET}}, "export_headers.Host: is set by the export itself"),
        ({"attempts": 11}, "attempts: must be an integer from 1 to 10"),
        ({"max_series": 0, "metrics_dir": "/nonexistent/x"}, "burnin_metrics_max_series: must be an integer from 1 to 1000000"),
    ],
)
def test_bad_options_name_the_option(report_file, args, message):
    done = run_action(dict({"report": report_file, "run_id": "r-1"}, **args))
    assert done["failed"] and done["msg"].startswith(message) and SECRET not in done["msg"]


def test_a_report_that_is_not_ours_is_named(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"hello": 1}')
    done = run_action({"report": str(path), "run_id": "r-1", "metrics_dir": str(tmp_path)})
    assert done["failed"] and done["msg"] == "report: %s is not a JSON report of gpufleet.burnin (no 'clusters' list)" % path
