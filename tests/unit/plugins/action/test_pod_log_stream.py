# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""plugin_utils/k8s_in_process.pod_log: every container's log streamed into one bounded read (pod_logs.LogBound), the
cut recorded, the connection released; what the real API server serves is exercised by tests/e2e/test_verdict_fleet.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import sys
import types

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


def _fake_api(logs, calls, released):
    class FakeCore(object):
        def __init__(self, api_client):
            self.api_client = api_client

        def read_namespaced_pod_log(self, name, namespace, container=None, _preload_content=True, **options):
            calls.append((name, namespace, container, _preload_content, options))
            return _Response(logs[container], released)

    return FakeCore


def _use(monkeypatch, fake_core):
    """FAKE_CORE as kubernetes.client.CoreV1Api, installed or not (ansible-test's unit venv has no kubernetes)."""
    client = types.ModuleType("kubernetes.client")
    client.CoreV1Api = fake_core
    package = types.ModuleType("kubernetes")
    package.client = client
    monkeypatch.setitem(sys.modules, "kubernetes", package)
    monkeypatch.setitem(sys.modules, "kubernetes.client", client)


POD = {"metadata": {"name": "job-launcher-0-0-x", "namespace": "ns"}, "status": {"containerStatuses": [{"name": "init"}, {"name": "launcher"}]}}


def test_every_container_is_streamed_and_a_short_log_is_read_whole(monkeypatch):
    calls, released = [], []
    _use(monkeypatch, _fake_api({"init": b"a\n", "launcher": "b \u00e9\n".encode()}, calls, released))
    cuts = {}
    assert k8s_in_process.pod_log(object(), POD, tail_lines=5, cuts=cuts) == "a\nb \u00e9\n"
    assert cuts == {} and len(released) == 2
    assert [(c[2], c[3], c[4]) for c in calls] == [("init", False, {"tail_lines": 5}), ("launcher", False, {"tail_lines": 5})]


def test_a_log_over_the_cap_is_cut_and_the_cut_recorded(monkeypatch):
    calls, released = [], []
    big = b"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n" * 40000 + b"# Avg bus bandwidth    : 1.5 \n"
    _use(monkeypatch, _fake_api({"init": b"", "launcher": big}, calls, released))
    cuts = {}
    text = k8s_in_process.pod_log(object(), POD, max_bytes=1 << 16, cuts=cuts)
    assert len(text) <= 1 << 16 < len(big) and text.endswith("# Avg bus bandwidth    : 1.5 \n")
    assert cuts["job-launcher-0-0-x"]["size"] == len(big) and cuts["job-launcher-0-0-x"]["lines_dropped"] > 0


def test_a_failed_read_still_releases_the_connection(monkeypatch):
    released = []

    class Broken(_Response):
        def read(self, size):
            raise IOError("connection reset")

    class FakeCore(object):
        def __init__(self, api_client):
            pass

        def read_namespaced_pod_log(self, name, namespace, container=None, _preload_content=True, **options):
            return Broken(b"", released)

    _use(monkeypatch, FakeCore)
    with pytest.raises(IOError):
        k8s_in_process.pod_log(object(), POD)
    assert released == [True]
