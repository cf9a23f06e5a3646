# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""plugin_utils/k8s_in_process.pod_log: every container's log read through the dynamic client as kubernetes.core's
k8s_log reads it, streamed into one bounded read (pod_logs.LogBound), the cut recorded, the connection released;
what the real API server serves is exercised by tests/e2e/test_verdict_fleet.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.plugin_utils import k8s_in_process


class _Response(object):
    def __init__(self, data, released):
        self.data, self.at, self.released = data, 0, released

    def read(self, size):
        chunk = self.data[self.at : self.at + size]
        self.at += len(chunk)
        return chunk

    def release_conn(self):
        self.released.append(True)


class _Dynamic(object):
    """kubernetes' dynamic client as pod_log calls it: request(method, path, serialize=False, query_params=[...]); LOGS
    by container, each returned as a streamed response (or RESPONSE_CLASS's)."""

    def __init__(self, logs, calls, released, response_class=_Response):
        self.logs, self.calls, self.released, self.response_class = logs, calls, released, response_class

    def request(self, method, path, serialize=True, query_params=None, **params):
        self.calls.append((method, path, serialize, list(query_params or []), params))
        return self.response_class(self.logs[dict(query_params)["container"]], self.released)


POD = {"metadata": {"name": "job-launcher-0-0-x", "namespace": "ns"}, "status": {"containerStatuses": [{"name": "init"}, {"name": "launcher"}]}}


def test_every_container_is_streamed_and_a_short_log_is_read_whole():
    calls, released = [], []
    dynamic = _Dynamic({"init": b"a\n", "launcher": "b \u00e9\n".encode()}, calls, released)
    cuts = {}
    assert k8s_in_process.pod_log(dynamic, POD, tail_lines=5, cuts=cuts) == "a\nb \u00e9\n"
    assert cuts == {} and len(released) == 2
    # The pod's log subresource, unserialized, as kubernetes.core.k8s_log reads it; the tail only when asked.
    path = "/api/v1/namespaces/ns/pods/job-launcher-0-0-x/log"
    assert calls == [
        ("get", path, False, [("container", "init"), ("tailLines", 5)], {}),
        ("get", path, False, [("container", "launcher"), ("tailLines", 5)], {}),
    ]
    calls[:] = []
    k8s_in_process.pod_log(dynamic, POD)
    assert [call[3] for call in calls] == [[("container", "init")], [("container", "launcher")]]


def test_a_log_over_the_cap_is_cut_and_the_cut_recorded():
    calls, released = [], []
    big = b"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n" * 40000 + b"# Avg bus bandwidth    : 1.5 \n"
    cuts = {}
    text = k8s_in_process.pod_log(_Dynamic({"init": b"", "launcher": big}, calls, released), POD, max_bytes=1 << 16, cuts=cuts)
    assert len(text) <= 1 << 16 < len(big) and text.endswith("# Avg bus bandwidth    : 1.5 \n")
    assert cuts["job-launcher-0-0-x"]["size"] == len(big) and cuts["job-launcher-0-0-x"]["lines_dropped"] > 0


def test_a_failed_read_still_releases_the_connection():
    released = []

    class Broken(_Response):
        def read(self, size):
            raise IOError("connection reset")

    with pytest.raises(IOError):
        k8s_in_process.pod_log(_Dynamic({"init": b"", "launcher": b""}, [], released, Broken), POD)
    assert released == [True]
