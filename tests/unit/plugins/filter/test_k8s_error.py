# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.filter import k8s_error as k8s_error_filter
from ansible_collections.gpufleet.burnin.plugins.filter.k8s_error import k8s_error

REFUSED = ("HTTPSConnectionPool(host='127.0.0.1', port=47095): Max retries exceeded with url: /version (Caused by "
           "NewConnectionError(\"HTTPSConnection(host='127.0.0.1', port=47095): Failed to establish a new connection: "
           "[Errno 111] Connection refused\"))")
FORBIDDEN = ("Exception '403\nReason: Forbidden\nHTTP response headers: HTTPHeaderDict({'Content-Type': 'application/json'})\n"
             "HTTP response body: {\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
             "\"message\":\"nodes is forbidden: User \\\"burnin-restricted\\\" cannot list resource \\\"nodes\\\"\","
             "\"reason\":\"Forbidden\",\"details\":{\"kind\":\"nodes\"},\"code\":403}\n\nOriginal traceback: \n  File \"x.py\"")
INVALID = ("Failed to apply object: b'{\"kind\":\"Status\"}' (422)\nReason: Unprocessable Entity\nHTTP response headers: x\n"
           "HTTP response body: {\"kind\":\"Status\",\"message\":\"TrainJob.trainer.kubeflow.org \\\"x\\\" is invalid\",\"code\":422}\n")


@pytest.mark.parametrize("msg, category, status, message", [
    (REFUSED, "Unreachable", 0, "cannot reach https://127.0.0.1:47095: connection refused"),
    ("HTTPSConnectionPool(host='k8s.example', port=443): Max retries exceeded (Caused by ConnectTimeoutError())",
     "Unreachable", 0, "cannot reach https://k8s.example:443: timed out"),
    (FORBIDDEN, "Forbidden", 403, 'nodes is forbidden: User "burnin-restricted" cannot list resource "nodes"'),
    (INVALID, "Invalid", 422, 'TrainJob.trainer.kubeflow.org "x" is invalid'),
    ("Exception '404\nReason: Not Found\n", "NotFound", 404, "Exception '404"),
    ("plain failure\nsecond line", "Error", 0, "plain failure"),
    ("Task failed: Module failed: plain failure", "Error", 0, "plain failure"),
    ("Task failed: Module failed: " + REFUSED, "Unreachable", 0, "cannot reach https://127.0.0.1:47095: connection refused"),
    ("", "Error", 0, "unknown error"),
    (None, "Error", 0, "unknown error"),
])
def test_k8s_error(msg, category, status, message):
    assert k8s_error(msg) == {"category": category, "status": status, "message": message}


def test_long_messages_are_cut():
    assert len(k8s_error("x" * 1000)["message"]) == 400


def test_bad_input_and_export():
    assert list(k8s_error_filter.FilterModule().filters()) == ["k8s_error"]
    with pytest.raises(AnsibleFilterError, match="gpufleet.burnin.k8s_error: msg: "):
        k8s_error(["x"])
