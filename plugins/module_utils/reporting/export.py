# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Sending a run's results elsewhere, the parts without I/O: the checks of the export options, the webhook's headers,
the bounded retry with backoff, and messages that never hold a secret. The export (plugins/plugin_utils/export_run.py)
does the HTTP calls through ``send`` functions given to ``deliver``; docs/metrics-export.md describes the whole.

Idempotent by run id: every attempt of one export sends the same body with ``Idempotency-Key: <run id>`` (and
``X-Burnin-Run-Id``), so a receiver that saw an attempt whose answer was lost can drop the repeat.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re
import time

from urllib.parse import urlsplit, urlunsplit

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

MAX_ATTEMPTS = 10
DEFAULT_ATTEMPTS = 4
MAX_BACKOFF = 60.0
DEFAULT_BACKOFF = 1.0
MAX_TIMEOUT = 300
# Answers worth another attempt: the receiver is busy or restarting (RFC 9110 408, 429, 5xx); any other 4xx is the
# request's fault and would fail again.
RETRY_STATUSES = (408, 425, 429, 500, 502, 503, 504)
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
# Headers the export sets itself.
OWN_HEADERS = ("content-type", "idempotency-key", "x-burnin-run-id", "content-length", "host")
MASK = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"


def check_url(name, value, allow_empty=True):
    """An http(s) URL with a host, or '' when ALLOW_EMPTY. The message never repeats the value (it may hold a token)."""
    if value is None or value == "":
        if allow_empty:
            return ""
        raise ConfigError(name, "must be an http:// or https:// URL")
    if not isinstance(value, str):
        raise ConfigError(name, "must be an http:// or https:// URL (text), got %s" % type(value).__name__)
    try:
        parts = urlsplit(value.strip())
        parts.port  # pylint: disable=pointless-statement  # a bad port raises here
    except ValueError:
        raise ConfigError(name, "is not a URL (scheme http or https, a host, an optional port and path)")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(name, "must be an http:// or https:// URL with a host (scheme given: %r)" % (parts.scheme,))
    if re.search(r"[\s]", value.strip()):
        raise ConfigError(name, "must not hold white space")
    return value.strip()


def loopback(host):
    """True for a HOST that never leaves the machine: localhost or a loopback address (no name is resolved)."""
    host = (host or "").strip("[]").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_insecure(name, url, headers=None, allow=False):
    """Refuse credentials (a user part in URL, or HEADERS, which hold the export's credentials) sent over plain http://
    to a host other than loopback, unless ALLOW (burnin_export_allow_insecure). The message names the variable, never
    the value."""
    if not url or allow:
        return
    parts = urlsplit(url)
    if parts.scheme != "http" or loopback(parts.hostname):
        return
    what = []
    if parts.username or parts.password:
        what.append("a user and password in the URL")
    if headers:
        what.append("burnin_export_headers")
    if what:
        raise ConfigError(
            name,
            "is plain http:// to %s but sends credentials (%s) that anyone on the path can read: use https://, or set "
            "burnin_export_allow_insecure: true to send them anyway" % (parts.hostname, " and ".join(what)),
        )


def shown_url(url):
    """URL for messages: scheme, host, port and path; user, password, query and fragment left out (they may be secrets)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host = "%s:%d" % (host, parts.port)
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return "(the URL)"


def check_headers(name, value):
    """Extra headers of the export: a mapping of header names (RFC 9110 tokens) to text on one line. Messages name the
    header, never its value."""
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        raise ConfigError(name, "must be a mapping of header names to values, got %s" % type(value).__name__)
    out = {}
    for key in sorted(value, key=str):
        if not isinstance(key, str) or not _TOKEN.match(key):
            raise ConfigError(name, "has a header name that is not an HTTP token: %r" % (key,))
        if key.lower() in OWN_HEADERS:
            raise ConfigError("%s.%s" % (name, key), "is set by the export itself (%s)" % ", ".join(OWN_HEADERS))
        item = value[key]
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise ConfigError("%s.%s" % (name, key), "must be text")
        item = "%s" % (item,)
        if re.search(r"[\r\n\x00]", item):
            raise ConfigError("%s.%s" % (name, key), "must be one line (no CR, LF or NUL)")
        out[key] = item
    return out


def shown_headers(headers):
    """HEADERS as they may be shown or returned: the export's own in clear, the user's (credentials) masked."""
    return dict((key, value if key.lower() in OWN_HEADERS else MASK) for key, value in (headers or {}).items())


def check_count(name, value, low, high):
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(name, "must be an integer from %d to %d, got %r" % (low, high, value))
    return value


def check_backoff(name, value):
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_BACKOFF:
        raise ConfigError(name, "must be a number of seconds from 0 to %g, got %r" % (MAX_BACKOFF, value))
    return float(value)


def webhook_headers(run_id, extra=None):
    """The POST's headers: the user's (checked), then the export's own, which win."""
    headers = dict(check_headers("headers", extra))
    headers.update({"Content-Type": "application/json", "Idempotency-Key": run_id, "X-Burnin-Run-Id": run_id})
    return headers


def delays(attempts, backoff, limit=MAX_BACKOFF):
    """Seconds to wait before each attempt after the first: BACKOFF, doubled each time, capped at LIMIT."""
    return [min(limit, backoff * (2**index)) for index in range(max(0, attempts - 1))]


def retryable(status):
    """True for no answer (None: the connection failed) and the statuses of RETRY_STATUSES."""
    return status is None or status in RETRY_STATUSES


def deliver(send, attempts=DEFAULT_ATTEMPTS, backoff=DEFAULT_BACKOFF, sleep=time.sleep):
    """Call SEND() until it succeeds, at most ATTEMPTS times, waiting delays(ATTEMPTS, BACKOFF) between. SEND returns
    (status, error): a 2xx status with error '' is success; status None is no answer. A status that is not worth a
    retry (retryable) ends it. Returns {ok, attempts, status, error, statuses}."""
    waits = delays(attempts, backoff)
    statuses = []
    status, error = None, "not attempted"
    for attempt in range(1, attempts + 1):
        status, error = send()
        statuses.append(status)
        if not error and status is not None and 200 <= status < 300:
            return {"ok": True, "attempts": attempt, "status": status, "error": "", "statuses": statuses}
        if not retryable(status) or attempt == attempts:
            break
        sleep(waits[attempt - 1])
    return {"ok": False, "attempts": len(statuses), "status": status, "error": error or "HTTP %s" % status, "statuses": statuses}


def unanswered(outcome):
    """True when a delivery failed because the receiver did not answer (or answered busy) on every attempt: the
    fleet-wide budget of a push is spent, later cluster groups are not tried (a 4xx is that group's own fault)."""
    return not outcome.get("ok") and retryable(outcome.get("status"))


def note(what, url, outcome):
    """One line for the fleet summary: what was sent where, and how it went (no secret: the URL is shown_url's)."""
    where = shown_url(url)
    if outcome.get("ok"):
        return "%s to %s: done (HTTP %s, %d attempt(s))" % (what, where, outcome.get("status"), outcome.get("attempts") or 0)
    return "%s to %s FAILED after %d attempt(s): %s (the burn-in's verdicts are not changed)" % (
        what,
        where,
        outcome.get("attempts") or 0,
        outcome.get("error") or "unknown error",
    )


def export_argument_spec():
    """Options of gpufleet.burnin.burnin_export (action plugin and its documentation stub)."""
    return dict(
        report=dict(type="path", required=True),
        run_id=dict(type="str", required=True),
        metrics_dir=dict(type="path", default=""),
        max_series=dict(type="int", default=20000),
        pushgateway_url=dict(type="str", default=""),
        pushgateway_job=dict(type="str", default="gpufleet_burnin"),
        export_url=dict(type="str", default=""),
        export_headers=dict(type="dict", default={}, no_log=True),
        attempts=dict(type="int", default=DEFAULT_ATTEMPTS),
        backoff=dict(type="float", default=DEFAULT_BACKOFF),
        timeout=dict(type="int", default=30),
        validate_certs=dict(type="bool", default=True),
        allow_insecure=dict(type="bool", default=False),
    )
