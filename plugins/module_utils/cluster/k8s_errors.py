# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""One classifier for every Kubernetes API error the collection reports (role, filters, action plugins).

kubernetes.core reports API errors as the Python client's exception text (status line, headers, the Status JSON
body, sometimes a traceback), urllib3's retry message for connection errors, or the Status JSON alone. ``classify``
turns any of them into a class, the HTTP status and one short, complete sentence for a person; the raw text is
kept apart (``detail``) for higher verbosity only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

# The classes, in the order a person would look for the cause.
CLASSES = ("Unreachable", "TLS", "Unauthorized", "Forbidden", "NotFound", "Conflict", "Invalid", "ServerError", "Error")
# Classes for which the cluster could not be talked to at all: the role's outcome Unreachable.
UNREACHABLE_CLASSES = ("Unreachable", "TLS")
RBAC_MANIFEST = "extras/rbac/burnin-rbac.yaml"
# The component that serves an API group, for a missing CRD.
COMPONENTS = {
    "trainer.kubeflow.org": "Kubeflow Trainer (v2)",
    "jobset.x-k8s.io": "JobSet",
    "resource.nvidia.com": "NVIDIA's DRA driver for GPUs",
    "resource.k8s.io": "Kubernetes DRA (resource.k8s.io, Kubernetes 1.32 or later)",
}
MAX_MESSAGE = 400

_JSON_START = re.compile(r'\{\s*"(?:kind|apiVersion)"\s*:')
_STATUS_LINE = re.compile(r"\((\d{3})\)\s*\nReason:|'(\d{3})\\?\nReason:|^(\d{3})\nReason:|Exception '(\d{3})|\bstatus(?: code)?[ :=]+(\d{3})\b", re.M)
_POOL = re.compile(r"HTTPS?ConnectionPool\(host='([^']*)', port=(\d+)\)")
_URL = re.compile(r"https?://[^\s'\"/)]+")
# ansible-core 2.19+ prefixes the failures it reports.
_PREFIX = re.compile(r"^(?:(?:Task|Action|Module) failed: )+")
# (needle, class, what) for errors without an HTTP answer; TLS first: urllib3 says SSLError for both kinds.
_TRANSPORT = (
    ("CERTIFICATE_VERIFY_FAILED", "TLS", "its TLS certificate is not trusted (wrong or missing certificate-authority)"),
    ("certificate verify failed", "TLS", "its TLS certificate is not trusted (wrong or missing certificate-authority)"),
    ("doesn't match", "TLS", "its TLS certificate does not match the server's name"),
    ("Hostname mismatch", "TLS", "its TLS certificate does not match the server's name"),
    ("SSLError", "TLS", "the TLS handshake failed"),
    ("Connection refused", "Unreachable", "the connection was refused (is the API server running?)"),
    ("Name or service not known", "Unreachable", "its name does not resolve"),
    ("nodename nor servname", "Unreachable", "its name does not resolve"),
    ("Temporary failure in name resolution", "Unreachable", "its name does not resolve"),
    ("No route to host", "Unreachable", "there is no route to it"),
    ("Network is unreachable", "Unreachable", "its network is unreachable"),
    ("timed out", "Unreachable", "the connection timed out"),
    ("ConnectTimeout", "Unreachable", "the connection timed out"),
    ("Connection reset", "Unreachable", "the connection was reset"),
    ("RemoteDisconnected", "Unreachable", "it closed the connection"),
    ("Max retries exceeded", "Unreachable", "it did not answer"),
)
# kubernetes.core's discovery ("Failed to find exact match for G/V.Kind") and the API server's ("no matches for
# kind ... in version G/V"): the CRD, or the component serving it, is missing.
_EXACT_MATCH = re.compile(r"Failed to find exact match for ([\w.-]+)/(\w+)\.(\w+)")
_NO_MATCHES = re.compile(r'no matches for kind "(\w+)" in version "([\w.-]+)/(\w+)"')


def _missing_api(text):
    """(kind, group, version) of a missing API named in TEXT, or None."""
    exact = _EXACT_MATCH.search(text)
    if exact:
        group, version, kind = exact.groups()
        return kind, group, version
    none = _NO_MATCHES.search(text)
    return none.groups() if none else None


_FORBIDDEN = re.compile(r'User "([^"]+)" cannot (\w+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]+)"| at the cluster scope)?')


def _one_line(text, limit=MAX_MESSAGE):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _status_object(text):
    """The Kubernetes Status object in TEXT (whatever surrounds it), or None."""
    for match in _JSON_START.finditer(text):
        try:
            obj, _end = json.JSONDecoder().raw_decode(text[match.start() :])
        except ValueError:
            continue
        if isinstance(obj, dict) and (obj.get("kind") == "Status" or "code" in obj):
            return obj
    return None


def _where(text, server):
    pool = _POOL.search(text)
    if pool:
        return "https://%s:%s" % pool.groups()
    if server:
        return server
    url = _URL.search(text)
    return url.group(0) if url else "the API server"


def _sentence(text):
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


_WEBHOOK = re.compile(r'admission webhook "([^"]+)" denied the request:?\s*(.*)', re.S)


def _class_of(code):
    if code == 401:
        return "Unauthorized"
    if code == 403:
        return "Forbidden"
    if code == 404:
        return "NotFound"
    if code == 409:
        return "Conflict"
    if code in (400, 422):
        return "Invalid"
    if code >= 500:
        return "ServerError"
    return "Error"


def _explain(cls, code, message, where, context):
    """One or two short sentences for CLS, built from the server's MESSAGE."""
    at = "%s (context %s)" % (where, context) if context else where
    # "The API server https://...": the server's URL when known, else just "The API server".
    server_words = "The API server" + (at[len("the API server") :] if at.startswith("the API server") else " " + at)
    if cls == "Unauthorized":
        return "%s refused the credential (HTTP 401 Unauthorized): check the token, client certificate or " "exec plugin of the kubeconfig." % server_words
    if cls == "Forbidden":
        found = _FORBIDDEN.search(message)
        if found:
            user, verb, resource, group, namespace = found.groups()
            scope = 'in namespace "%s"' % namespace if namespace else "at cluster scope"
            api = "%s.%s" % (resource, group) if group else resource
            return 'Forbidden: user "%s" may not %s %s %s on %s; grant it with %s.' % (user, verb, api, scope, at, RBAC_MANIFEST)
        return "Forbidden on %s: %s Grant the burn-in's rights with %s." % (at, _sentence(message), RBAC_MANIFEST)
    if cls == "NotFound":
        missing = _missing_api(message)
        if missing:
            kind, group, version = missing
            component = COMPONENTS.get(group, "the component that serves %s" % group)
            return "%s has no %s API (%s/%s): install %s on the cluster." % (at, kind, group, version, component)
        return "Not found on %s: %s" % (at, _sentence(message))
    if cls == "Invalid":
        return "%s rejected the object: %s" % (server_words, _sentence(message))
    if cls == "Conflict":
        return "Conflict on %s: %s" % (at, _sentence(message))
    if cls == "ServerError":
        return "%s failed (HTTP %d): %s" % (server_words, code, _sentence(message))
    return _sentence(message) if message else "Unknown error."


# Each kubeconfig file read once per process while it stays the same (its size and time): every cluster of a batch
# names its server from the same file, whose certificates can make it large.
_SERVERS = {}
_SERVERS_MAX = 64


def _servers(config):
    """{context name: server URL, None: the current context's} of the kubeconfig mapping CONFIG."""
    clusters = dict((c.get("name"), (c.get("cluster") or {}).get("server")) for c in config.get("clusters") or [] if isinstance(c, dict))
    servers = dict((c.get("name"), clusters.get((c.get("context") or {}).get("cluster"))) for c in config.get("contexts") or [] if isinstance(c, dict))
    servers[None] = servers.get(config.get("current-context"))
    return servers


def _file_servers(path):
    import yaml

    stat = os.stat(path)
    key = (path, stat.st_size, stat.st_mtime_ns)
    if key not in _SERVERS:
        with open(path) as handle:
            servers = _servers(yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {})
        if len(_SERVERS) >= _SERVERS_MAX:
            _SERVERS.clear()
        _SERVERS[key] = servers
    return _SERVERS[key]


def kubeconfig_server(kubeconfig, context=None):
    """The server URL of CONTEXT (or the current context) in KUBECONFIG (a path, or the kubeconfig as a mapping), or
    None: for messages about a cluster that gave no answer to tell its URL."""
    try:
        servers = _servers(kubeconfig) if isinstance(kubeconfig, dict) else _file_servers(os.path.expanduser(kubeconfig))
        return servers.get(context or None)
    # Naming the server is a courtesy: any problem reading the file only leaves it out.
    except Exception:  # noqa: BLE001 pylint: disable=broad-except
        return None


# Trainer's TrainJob webhook looks the runtime up in its informer cache, which may not have seen a runtime applied a
# moment before: "... specified trainingRuntime must be created before the TrainJob". Once the cache caught up the
# same apply goes through.
_RUNTIME_NOT_CACHED = "must be created before the TrainJob"


def runtime_not_cached(msg):
    """Whether MSG, the raw error text of a failed apply, is Trainer's webhook refusing a TrainJob whose runtime its
    cache has not seen yet (classify() may shorten its message past the words that say so)."""
    return _RUNTIME_NOT_CACHED in ("" if msg is None else str(msg))


def classify(msg, context=None, server=None):
    """{'category', 'status', 'message', 'detail'} for the error text MSG of a failed Kubernetes call.

    ``category`` is one of CLASSES; ``status`` the HTTP status (0 without an answer); ``message`` one or two short
    sentences, at most MAX_MESSAGE characters, naming the server (and CONTEXT when given); ``detail`` the server's
    own message, or the raw text, for higher verbosity.
    """
    text = _PREFIX.sub("", "" if msg is None else str(msg))
    status = _status_object(text)
    if status is not None:
        code = status.get("code") if isinstance(status.get("code"), int) else 0
        message = str(status.get("message") or status.get("reason") or "")
        cls = _class_of(code)
        webhook = _WEBHOOK.search(message)
        if webhook:
            # A validating webhook's denial (HTTP 403 from controller-runtime's webhooks) is a rejected object,
            # not missing rights: say which webhook and keep its message, field paths included.
            return {
                "category": "Invalid",
                "status": code,
                "detail": _one_line(message, 2000),
                "message": _one_line(
                    "The admission webhook %s on %s rejected the object: %s"
                    % (webhook.group(1), _where(text, server) + (" (context %s)" % context if context else ""), _sentence(webhook.group(2) or message))
                ),
            }
        return {
            "category": cls,
            "status": code,
            "detail": _one_line(message, 2000),
            "message": _one_line(_explain(cls, code, message, _where(text, server), context)),
        }
    if _missing_api(text):
        return {
            "category": "NotFound",
            "status": 404,
            "detail": _one_line(text, 2000),
            "message": _one_line(_explain("NotFound", 404, text, _where(text, server), context)),
        }
    for needle, cls, what in _TRANSPORT:
        if needle in text:
            return {
                "category": cls,
                "status": 0,
                "detail": _one_line(text, 2000),
                "message": _one_line("Cannot reach %s%s: %s." % (_where(text, server), " (context %s)" % context if context else "", what)),
            }
    found = _STATUS_LINE.search(text)
    code = int([group for group in found.groups() if group][0]) if found else 0
    first = text.strip().splitlines()[0] if text.strip() else "unknown error"
    if code == 401 or "Unauthorized" in first and code in (0, 401):
        return {
            "category": "Unauthorized",
            "status": 401,
            "detail": _one_line(text, 2000),
            "message": _one_line(_explain("Unauthorized", 401, first, _where(text, server), context)),
        }
    cls = _class_of(code) if code else "Error"
    return {
        "category": cls,
        "status": code,
        "detail": _one_line(text, 2000),
        "message": _one_line(_explain(cls, code, first, _where(text, server), context) if code else _sentence(first)),
    }
