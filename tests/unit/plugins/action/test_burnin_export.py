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

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.writer import write_reports

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


class RawServer(object):
    """A TCP server on 127.0.0.1 that is not a well-behaved HTTP server: BEHAVIOUR(connection, stop) is run for each
    connection in a thread. Stops by itself after LIFETIME seconds even if the test never stops it."""

    def __init__(self, behaviour, lifetime=30.0):
        import socket

        self.stop = threading.Event()
        self.connections = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.behaviour = behaviour
        self.timer = threading.Timer(lifetime, self.stop.set)
        self.timer.daemon = True
        self.timer.start()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        import socket

        while not self.stop.is_set():
            try:
                connection = self.sock.accept()[0]
            except socket.timeout:
                continue
            except OSError:
                break
            self.connections += 1
            threading.Thread(target=self._one, args=(connection,), daemon=True).start()
        self.sock.close()

    def _one(self, connection):
        try:
            self.behaviour(connection, self.stop)
        except OSError:
            pass
        finally:
            connection.close()

    def close(self):
        self.stop.set()
        self.timer.cancel()
        self.thread.join(5)


def _garbage(connection, stop):
    connection.recv(65536)
    connection.sendall(b"SSH-2.0-OpenSSH_9.6p1 Debian-4\r\n")


def _trickle(connection, stop):
    connection.recv(65536)
    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10000:
        if stop.wait(0.1):
            return
        connection.sendall(bytes([byte]))


def _silent(connection, stop):
    connection.recv(65536)
    stop.wait(30)


def _ended_body_trickle(connection, stop):
    connection.recv(65536)
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
    while not stop.wait(0.1):
        connection.sendall(b"x")


@pytest.fixture()
def raw_server():
    servers = []

    def start(behaviour):
        server = RawServer(behaviour)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.mark.parametrize(
    "behaviour, error",
    [
        (_garbage, "not an HTTP answer (BadStatusLine)"),
        (_trickle, "no answer within 1 s"),
        (_silent, "no answer within 1 s"),
        (_ended_body_trickle, "no answer within 1 s"),
    ],
)
def test_an_export_to_a_server_that_is_not_http_ends_as_a_note(report_file, raw_server, behaviour, error):
    # Before: BadStatusLine failed the task; a trickle held it as long as the server kept sending (timeout bounded each read).
    import time

    server = raw_server(behaviour)
    url = "http://127.0.0.1:%d/hook" % server.port
    started = time.monotonic()
    done = run_action({"report": report_file, "run_id": "r-1", "export_url": url, "attempts": 2, "backoff": 0, "timeout": 1})
    assert time.monotonic() - started < 15  # two attempts of one second each, with room for a loaded machine
    assert not done.get("failed"), done
    assert done["export"]["statuses"] == [None, None] and server.connections == 2
    assert done["notes"] == ["report export to %s FAILED after 2 attempt(s): %s (the burn-in's verdicts are not changed)" % (url, error)]


def _fleet_report(tmp_path, count):
    results = dict(
        (
            "c%03d" % index,
            {
                "cluster": "c%03d" % index,
                "platform": "aws",
                "gpu_architecture": "h100",
                "outcome": "Complete",
                "run_id": "r-1",
                "verdict": {"verdict": "pass", "reason": "ok", "collective": "all_reduce", "workload": "nccl-all-reduce", "checks": []},
            },
        )
        for index in range(count)
    )
    return write_reports(results, str(tmp_path / "fleet"), formats=["json"], run_id="r-1", generated="2026-12-03T07:00:00Z")["files"]["json"]


def test_a_pushgateway_that_does_not_answer_is_tried_once_for_a_fleet_of_100(tmp_path, raw_server):
    # Before: every cluster group was tried attempts x timeout (127 s per cluster with the defaults).
    server = raw_server(_silent)
    url = "http://127.0.0.1:%d" % server.port
    done = run_action({"report": _fleet_report(tmp_path, 100), "run_id": "r-1", "pushgateway_url": url, "attempts": 2, "backoff": 0, "timeout": 1})
    assert not done.get("failed") and server.connections == 2
    assert len(done["pushed"]) == 100 and [entry["cluster"] for entry in done["pushed"]][:2] == ["c000", "c001"]
    assert done["pushed"][0]["statuses"] == [None, None] and all(entry["error"] == "skipped" and entry["attempts"] == 0 for entry in done["pushed"][1:])
    assert done["notes"] == [
        "metrics push of c000 to %s FAILED after 2 attempt(s): no answer within 1 s (the burn-in's verdicts are not changed)" % url,
        "metrics push to %s: 99 later cluster group(s) skipped, the Pushgateway did not answer c000" % url,
    ]


def test_a_pushgateway_that_refuses_one_group_still_gets_the_others(tmp_path):
    state = {"paths": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_PUT(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state["paths"].append(self.path)
            self.send_response(400 if self.path.endswith("/c001") else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            del args

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = "http://127.0.0.1:%d" % server.server_address[1]
        done = run_action({"report": _fleet_report(tmp_path, 3), "run_id": "r-1", "pushgateway_url": url, "attempts": 2, "backoff": 0, "timeout": 5})
    finally:
        server.shutdown()
        server.server_close()
    assert len(state["paths"]) == 3 and [entry["ok"] for entry in done["pushed"]] == [True, False, True]
    assert done["notes"] == ["metrics push of c001 to %s FAILED after 1 attempt(s): HTTP 400 Bad Request (the burn-in's verdicts are not changed)" % url]


@pytest.mark.parametrize(
    "args, refused",
    [
        ({"export_url": "http://hooks.example.com/x", "export_headers": {"Authorization": SECRET}}, "export_url"),
        ({"export_url": "http://user:%s@10.0.0.5/x" % SECRET}, "export_url"),
        ({"pushgateway_url": "http://user:%s@pushgateway.monitoring:9091" % SECRET}, "pushgateway_url"),
    ],
)
def test_credentials_over_plain_http_to_another_host_are_refused(report_file, args, refused):
    done = run_action(dict({"report": report_file, "run_id": "r-1", "attempts": 1, "timeout": 1}, **args))
    assert done["failed"] and done["msg"].startswith("%s: is plain http:// to " % refused) and "burnin_export_allow_insecure" in done["msg"]
    assert SECRET not in json.dumps(done) and not done["pushed"] and not done["export"]
    allowed = run_action(dict({"report": report_file, "run_id": "r-1", "allow_insecure": True}, **args), check_mode=True)
    assert not allowed.get("failed")


def test_an_https_url_answered_in_plain_text_is_a_tls_failure_note(report_file, raw_server):
    server = raw_server(_garbage)
    url = "https://127.0.0.1:%d/hook" % server.port
    done = run_action({"report": report_file, "run_id": "r-1", "export_url": url, "attempts": 1, "timeout": 2})
    assert not done.get("failed") and done["export"]["statuses"] == [None]
    assert done["notes"][0].startswith("report export to %s FAILED after 1 attempt(s): TLS failed (" % url), done["notes"]


def test_a_user_in_the_url_is_sent_as_basic_authorization(report_file, hook):
    import base64

    hook["statuses"] = [200]
    done = run_action({"report": report_file, "run_id": "r-1", "export_url": hook["url"], "backoff": 0})
    assert done["export"]["ok"]
    assert hook["requests"][0][0]["Authorization"] == "Basic " + base64.b64encode(("user:%s" % SECRET).encode()).decode()
    assert "key=%s" % SECRET not in json.dumps(done) and SECRET not in json.dumps(done)


def test_a_name_that_never_resolves_ends_at_the_deadline(report_file):
    # getaddrinfo has no timeout of its own (a dead resolver holds it for its retries): it is waited for until the deadline.
    import socket
    import time

    from ansible_collections.gpufleet.burnin.plugins.plugin_utils import _http

    release = threading.Event()

    def hanging(*args, **kwargs):
        release.wait(20)
        raise socket.gaierror("released")

    started = time.monotonic()
    try:
        with mock.patch.object(_http.socket, "getaddrinfo", hanging):
            status, error = _http.request("http://hooks.invalid/x", "POST", b"{}", {}, 1)
    finally:
        release.set()
    assert (status, error) == (None, "no answer within 1 s") and time.monotonic() - started < 10
