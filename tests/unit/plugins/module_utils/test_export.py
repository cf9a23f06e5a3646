# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The export's parts without I/O (plugins/module_utils/reporting/export.py): the bounded retry with backoff, the
idempotency headers, the checks of URLs and headers that never repeat a secret, and the role's variables."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import export

SECRET = "s3cr3t-token-value"


def sender(answers):
    calls = []

    def send():
        calls.append(1)
        return answers[len(calls) - 1]

    return send, calls


def test_a_busy_receiver_is_retried_with_doubling_waits_until_it_accepts():
    send, calls = sender([(503, "HTTP 503 Service Unavailable"), (None, "no answer: Connection refused"), (202, "")])
    waits = []
    outcome = export.deliver(send, attempts=4, backoff=0.5, sleep=waits.append)
    assert outcome == {"ok": True, "attempts": 3, "status": 202, "error": "", "statuses": [503, None, 202]}
    assert waits == [0.5, 1.0] and len(calls) == 3


def test_the_attempts_are_bounded_and_the_last_error_is_kept():
    send, calls = sender([(503, "HTTP 503 Service Unavailable")] * 10)
    waits = []
    outcome = export.deliver(send, attempts=3, backoff=1, sleep=waits.append)
    assert not outcome["ok"] and outcome["attempts"] == 3 and len(calls) == 3 and waits == [1, 2]
    assert outcome["error"] == "HTTP 503 Service Unavailable"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_an_answer_that_would_fail_again_is_not_retried(status):
    send, calls = sender([(status, "HTTP %d" % status), (200, "")])
    outcome = export.deliver(send, attempts=5, backoff=0, sleep=lambda seconds: None)
    assert not outcome["ok"] and len(calls) == 1 and outcome["status"] == status


def test_the_waits_are_capped():
    assert export.delays(6, 20) == [20, 40, 60, 60, 60]
    assert export.delays(1, 5) == []


def test_every_attempt_carries_the_run_id_as_idempotency_key():
    headers = export.webhook_headers("run-7", {"Authorization": "Bearer " + SECRET})
    assert headers["Idempotency-Key"] == "run-7" and headers["X-Burnin-Run-Id"] == "run-7"
    assert headers["Content-Type"] == "application/json" and headers["Authorization"] == "Bearer " + SECRET
    shown = export.shown_headers(headers)
    assert shown["Idempotency-Key"] == "run-7" and SECRET not in repr(shown)


@pytest.mark.parametrize(
    "headers, field",
    [
        ({"Authorization": "Bearer %s\r\nX-Evil: 1" % SECRET}, "export_headers.Authorization"),
        ({"Idempotency-Key": SECRET}, "export_headers.Idempotency-Key"),
        ({"Bad Name": SECRET}, "export_headers"),
        ({"X-Token": [SECRET]}, "export_headers.X-Token"),
        ("Authorization: %s" % SECRET, "export_headers"),
    ],
)
def test_bad_headers_name_the_header_never_the_value(headers, field):
    with pytest.raises(ConfigError) as caught:
        export.check_headers("export_headers", headers)
    assert str(caught.value).startswith(field + ":") and SECRET not in str(caught.value)


def test_urls_are_checked_and_shown_without_their_credentials():
    url = "https://user:%s@hooks.example.com:8443/burnin?token=%s#x" % (SECRET, SECRET)
    assert export.check_url("burnin_export_url", url) == url
    assert export.shown_url(url) == "https://hooks.example.com:8443/burnin"
    for bad in ("ftp://%s@host/" % SECRET, "hooks.example.com/%s" % SECRET, "http://host:99999/%s" % SECRET, 5):
        with pytest.raises(ConfigError) as caught:
            export.check_url("burnin_export_url", bad)
        assert str(caught.value).startswith("burnin_export_url:") and SECRET not in str(caught.value)


def test_a_failed_export_note_says_why_and_keeps_secrets_out():
    note = export.note(
        "report export", "https://u:%s@hooks.example.com/x?k=%s" % (SECRET, SECRET), {"ok": False, "attempts": 4, "error": "HTTP 503 Service Unavailable"}
    )
    assert note == (
        "report export to https://hooks.example.com/x FAILED after 4 attempt(s): HTTP 503 Service Unavailable (the burn-in's verdicts are not changed)"
    )


def test_the_role_checks_the_variables_and_masks_the_headers():
    given = {
        "burnin_report_dir": "/tmp/reports",
        "burnin_export_url": "http://127.0.0.1:8080/hook",
        "burnin_export_headers": '{"Authorization": "Bearer %s"}' % SECRET,
        "burnin_export_attempts": "3",
        "burnin_export_backoff": "0.5",
        "burnin_metrics_dir": "/var/lib/node_exporter",
        "burnin_pushgateway_url": "http://127.0.0.1:9091",
    }
    checked = check_role_vars(given)
    assert checked["burnin_export_headers"] == {"Authorization": export.MASK} and SECRET not in repr(checked)
    assert checked["burnin_export_attempts"] == 3 and checked["burnin_export_backoff"] == 0.5


@pytest.mark.parametrize(
    "given, message",
    [
        ({"burnin_export_url": "http://h/x"}, "burnin_export_url: needs the run's JSON report: set burnin_report_dir"),
        ({"burnin_metrics_dir": "/m", "burnin_report_dir": "/r", "burnin_report_formats": "html"}, "burnin_metrics_dir: needs the run's JSON report"),
        ({"burnin_export_attempts": 11}, "burnin_export_attempts: must be an integer from 1 to 10"),
        ({"burnin_export_backoff": 61}, "burnin_export_backoff: must be a number of seconds from 0 to 60"),
        ({"burnin_export_headers": "{not json %s" % SECRET}, "burnin_export_headers: must be a mapping of header names to values"),
        ({"burnin_pushgateway_url": "gopher://h"}, "burnin_pushgateway_url: must be an http:// or https:// URL"),
    ],
)
def test_bad_role_variables_name_the_variable(given, message):
    with pytest.raises(ConfigError) as caught:
        check_role_vars(given)
    assert str(caught.value).startswith(message) and SECRET not in str(caught.value)


@pytest.mark.parametrize(
    "host, expected",
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("a.localhost", True),
        ("10.0.0.1", False),
        ("localhost.example.com", False),
        ("pushgateway.monitoring", False),
        ("", False),
        (None, False),
    ],
)
def test_loopback_is_decided_without_resolving_a_name(host, expected):
    assert export.loopback(host) is expected


@pytest.mark.parametrize(
    "given, message",
    [
        (
            {"burnin_export_url": "http://hooks.example.com/x", "burnin_export_headers": {"Authorization": SECRET}},
            "burnin_export_url: is plain http:// to hooks.example.com but sends credentials (burnin_export_headers)",
        ),
        (
            {"burnin_pushgateway_url": "http://u:%s@pushgateway.monitoring:9091" % SECRET},
            "burnin_pushgateway_url: is plain http:// to pushgateway.monitoring but sends credentials (a user and password in the URL)",
        ),
    ],
)
def test_credentials_over_plain_http_are_refused_before_any_cluster(given, message):
    given = dict(given, burnin_report_dir="/tmp/reports")
    with pytest.raises(ConfigError) as caught:
        check_role_vars(given)
    assert str(caught.value).startswith(message) and "burnin_export_allow_insecure: true" in str(caught.value) and SECRET not in str(caught.value)
    assert check_role_vars(dict(given, burnin_export_allow_insecure="yes"))["burnin_export_allow_insecure"] is True


@pytest.mark.parametrize(
    "given",
    [
        {"burnin_export_url": "https://hooks.example.com/x", "burnin_export_headers": {"Authorization": SECRET}},
        {"burnin_export_url": "http://127.0.0.1:8080/x", "burnin_export_headers": {"Authorization": SECRET}},
        {"burnin_export_url": "http://hooks.example.com/x"},
        {"burnin_pushgateway_url": "http://pushgateway.monitoring:9091", "burnin_export_headers": {"Authorization": SECRET}},
    ],
)
def test_https_loopback_or_no_credentials_are_accepted(given):
    check_role_vars(dict(given, burnin_report_dir="/tmp/reports"))
