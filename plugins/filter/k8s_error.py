# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: k8s_error
short_description: Classify and shorten the error message of a failed kubernetes.core task
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - kubernetes.core reports API errors as the Python client's exception text (status line, headers, JSON body,
    traceback) and connection errors as urllib3's retry message. This filter keeps what a person needs.
  - The category is C(Unreachable) (connection refused, timeout, name resolution, TLS), C(Forbidden) (401/403),
    C(NotFound) (404), C(Conflict) (409), C(Invalid) (422) or C(Error).
options:
  _input:
    description: The C(msg) of the failed task result.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: List the nodes
  kubernetes.core.k8s_info:
    kind: Node
  register: nodes
  failed_when: false

- name: Say why it failed
  ansible.builtin.debug:
    msg: "{{ (nodes.msg | gpufleet.burnin.k8s_error).category }}: {{ (nodes.msg | gpufleet.burnin.k8s_error).message }}"
  when: nodes.resources is not defined
"""

RETURN = r"""
_value:
  description: The classified error.
  type: dict
  contains:
    category:
      description: C(Unreachable), C(Forbidden), C(NotFound), C(Conflict), C(Invalid) or C(Error).
      type: str
    status:
      description: The HTTP status code, or 0 when there was no HTTP answer.
      type: int
    message:
      description: One line, at most 400 characters.
      type: str
"""

import json
import re

from ansible.errors import AnsibleFilterError

_BODY = re.compile(r"HTTP response body: (\{.*?\})\s*(?:\n|$)", re.S)
_STATUS = re.compile(r"\((\d{3})\)\s*\nReason:|'(\d{3})\\?\nReason:|^(\d{3})\nReason:|Exception '(\d{3})", re.M)
_POOL = re.compile(r"HTTPS?ConnectionPool\(host='([^']*)', port=(\d+)\)")
_UNREACHABLE = (
    ("Connection refused", "connection refused"),
    ("Name or service not known", "name not known"),
    ("nodename nor servname", "name not known"),
    ("No route to host", "no route to host"),
    ("Network is unreachable", "network unreachable"),
    ("timed out", "timed out"),
    ("ConnectTimeout", "timed out"),
    ("SSLError", "TLS error"),
    ("CERTIFICATE_VERIFY_FAILED", "TLS certificate not trusted"),
    ("Max retries exceeded", "no answer"),
)
_CATEGORIES = {401: "Forbidden", 403: "Forbidden", 404: "NotFound", 409: "Conflict", 422: "Invalid"}
_MAX = 400
# ansible-core 2.19+ prefixes failures it reports.
_PREFIX = re.compile(r"^(?:(?:Task|Action|Module) failed: )+")


def _one_line(text):
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX else text[:_MAX - 3] + "..."


def k8s_error(msg):
    if msg is None:
        msg = ""
    if not isinstance(msg, str):
        raise AnsibleFilterError("gpufleet.burnin.k8s_error: msg: must be the string 'msg' of a failed task, got %s" % type(msg).__name__)
    msg = _PREFIX.sub("", msg)
    body = _BODY.search(msg)
    if body:
        try:
            status = json.loads(body.group(1))
        except ValueError:
            status = None
        if isinstance(status, dict):
            code = status.get("code") if isinstance(status.get("code"), int) else 0
            return {"category": _CATEGORIES.get(code, "Error"), "status": code,
                    "message": _one_line(status.get("message") or status.get("reason") or msg)}
    for needle, what in _UNREACHABLE:
        if needle in msg:
            pool = _POOL.search(msg)
            where = ("https://%s:%s" % pool.groups()) if pool else "the API server"
            return {"category": "Unreachable", "status": 0, "message": "cannot reach %s: %s" % (where, what)}
    found = _STATUS.search(msg)
    code = int([group for group in found.groups() if group][0]) if found else 0
    first = msg.strip().splitlines()[0] if msg.strip() else "unknown error"
    return {"category": _CATEGORIES.get(code, "Error"), "status": code, "message": _one_line(first)}


class FilterModule(object):
    def filters(self):
        return {"k8s_error": k8s_error}
