# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The one grammar of line prefixes and of the NCCL marker (judging/log_lines.py), and metamorphic tests over the whole
published corpus (tests/fixtures/real/nccl/): a document re-prefixed by any launcher or collector form, or a stack of
two, or with its hosts renamed to any valid host name, yields the same facts as the original."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import sys

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import log_lines

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_nccl_real as corpus  # noqa: E402 pylint: disable=wrong-import-position

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

LINE = "ip-10-1-2-3:123:456 [0] NCCL INFO Using network IB"


@pytest.mark.parametrize(
    "prefix, form",
    [
        ("[1,0]<stdout>:", "mpirun"),
        ("        [1,12]<stderr>: ", "mpirun"),
        ("Fri Jan  2 10:11:12 2026", "ctime"),
        (" 3: ", "srun"),
        ("12: ", "srun"),
        ("[default0]:", "torchrun"),
        ("[rank7]:", "torchrun"),
        ("10.3.35.83: ", "host"),
        ("master_node: ", "host"),
        ("[pod/nccl-0-0-abcde/node] ", "kubectl"),
        ("2026-01-02T10:11:12.123456789Z ", "date"),
        ("2026-01-02 10:11:12,345 ", "date"),
        ("[2026-01-02 10:11:12] ", "bracketed-date"),
        ("[10:11:12.123] ", "bracketed-date"),
        ("Jan  2 10:11:12 gpu-node-1 kernel: ", "syslog"),
        ("2026-01-02T10:11:12+0000 gpu-node-1 python3[4242]: ", "syslog"),
        ("2026-01-02T10:11:12.123456Z stdout F ", "cri"),
        ("  | 2025-05-16T16:39:55.218-07:00 | ", "cloudwatch"),
    ],
)
def test_each_prefix_form_is_stripped_and_named(prefix, form):
    body, prefixes = log_lines.split(prefix + LINE)
    assert body == LINE and [name for name, host in prefixes] == [form]


def test_a_collectors_json_line_is_its_log_text():
    line = json.dumps({"log": "[1,0]<stdout>:" + LINE + "\n", "stream": "stdout", "time": "2026-01-02T10:11:12Z"})
    assert log_lines.split(line) == (LINE, [("json", None), ("mpirun", None)])
    assert log_lines.strip('{"log": 1}') == '{"log": 1}' and log_lines.strip("{not json}") == "{not json}"


def test_nccl_tests_failure_line_keeps_its_host():
    # "<host>: Test NCCL failure" is nccl-tests' own line (src/common.h): its host is no prefix
    assert log_lines.strip("10.0.0.1: node-7: Test NCCL failure common.cu:1279 'x'") == "node-7: Test NCCL failure common.cu:1279 'x'"
    assert log_lines.strip("node-7: Test CUDA failure common.cu:9") == "node-7: Test CUDA failure common.cu:9"


@pytest.mark.parametrize(
    "line, host, level, function, msg",
    [
        ("master_node:123:456 [0] NCCL INFO Using network Socket", "master_node", "INFO", None, "Using network Socket"),
        ("GPU-NODE-01:1:2 [7] transport/net_ib.cc:123 NCCL WARN NET/IB : Got completion", "GPU-NODE-01", "WARN", None, "NET/IB : Got completion"),
        (
            "worker-0:862519:862553 [0] transport/net_ib/gdaki/gin_host_gdaki.cc:431 (gdakiConnectQp) NCCL WARN DOCA failure 21",
            "worker-0",
            "WARN",
            "gdakiConnectQp",
            "DOCA failure 21",
        ),
        ("10.3.35.83:9:9 [1] NCCL INFO NET/OFI Selected provider is efa", "10.3.35.83", "INFO", None, "NET/OFI Selected provider is efa"),
        ("<unknown prefix> |x| n1.example.com:9:9 [1] NCCL INFO Using network IB", "n1.example.com", "INFO", None, "Using network IB"),
        ("[2026-01-02 10:11:12] h:1:2 [0] NCCL INFO x", "h", "INFO", None, "x"),
    ],
)
def test_the_nccl_marker_by_its_grammar(line, host, level, function, msg):
    found = log_lines.nccl_line(line)
    assert (found["host"], found["level"], found["function"], found["msg"]) == (host, level, function, msg)


@pytest.mark.parametrize("line", ["NCCL INFO Using network IB", " [0] NCCL INFO x", "h:1:2 [0] NCCL", "a NCCL b NCCL c", ":1:2 [0] NCCL INFO x"])
def test_no_marker(line):
    assert log_lines.nccl_line(line) is None


def test_bounded_on_long_lines():
    assert log_lines.strip("0: " * 300000 + "x").startswith("0: ")
    assert log_lines.nccl_line("a" * 1000000 + " NCCL " * 100000) is None
    assert log_lines.strip("{" * 1000000 + "}") == "{" * 1000000 + "}"


# --- metamorphic tests over the corpus ---------------------------------------------------------------------------

_HOSTNAME = st.one_of(
    st.from_regex(r"\A[a-z][a-z0-9-]{0,14}[a-z0-9]\Z"),  # RFC 1123 label
    st.from_regex(r"\A[a-z][a-z0-9]{0,8}(?:\.[a-z][a-z0-9]{0,8}){1,3}\Z"),  # a dotted name
    st.from_regex(r"\A[A-Za-z][A-Za-z0-9_]{0,12}_[A-Za-z0-9]{1,4}\Z"),  # underscores, upper case
    st.tuples(*[st.integers(1, 254)] * 4).map(lambda parts: ".".join(str(part) for part in parts)),  # an IP
)
_NUMBER = st.integers(0, 4095)
_ISO = st.sampled_from(
    ["2026-01-02T10:11:12Z", "2026-01-02T10:11:12.123456789Z", "2026-01-02 10:11:12", "2026-01-02 10:11:12,345", "2026-01-02T10:11:12+00:00"]
)
_PREFIX = st.one_of(
    st.builds("[{},{}]<stdout>:".format, _NUMBER, _NUMBER),
    st.builds("{}[1,{}]<stderr>: ".format, st.sampled_from(["", "    "]), _NUMBER),
    st.builds("{:>3}: ".format, _NUMBER),
    st.builds("[default{}]:".format, _NUMBER),
    st.builds("[rank{}]:".format, _NUMBER),
    st.builds("{}: ".format, _HOSTNAME),
    st.builds("[pod/{}/{}] ".format, st.from_regex(r"\A[a-z][a-z0-9-]{0,30}\Z"), st.sampled_from(["node", "launcher"])),
    st.builds("{} ".format, _ISO),
    st.builds("[{}] ".format, _ISO),
    st.just("Fri Jan  2 10:11:12 2026"),
    st.builds("Jan  2 10:11:12 {} {}[{}]: ".format, _HOSTNAME, st.sampled_from(["python3", "mpirun", "torchrun"]), _NUMBER),
    st.builds("{} stdout F ".format, st.sampled_from(["2026-01-02T10:11:12.123456789Z", "2026-01-02T10:11:12Z"])),
    st.builds("  | {} | ".format, st.sampled_from(["2025-05-16T16:39:55.218-07:00", "2026-01-02T10:11:12Z"])),
)
_FACTS = (
    "table",
    "rows",
    "largest_size",
    "largest_busbw",
    "avg_busbw",
    "wrong",
    "complete",
    "collective",
    "nccl_tests_version",
    "nccl_version",
    "hosts",
    "failed_hosts",
    "grade",
    "transport",
    "transport_check",
    "nvls",
    "mnnvl",
)
DOCUMENTS = sorted(corpus.FACTS)
_HOSTLESS_FAILURE = re.compile(r"^\s*Test (?:[A-Z]+ )?failure\b")


def facts_of(text):
    name = "\0metamorphic"
    corpus._CACHE.pop(name, None)  # pylint: disable=protected-access
    real = corpus.real
    try:
        corpus.real = lambda dummy: text
        got = corpus.computed(name)
    finally:
        corpus.real = real
        corpus._CACHE.pop(name, None)  # pylint: disable=protected-access
    return dict((key, got.get(key)) for key in _FACTS)


_ORIGINAL = {}


def original(name):
    if name not in _ORIGINAL:
        _ORIGINAL[name] = facts_of(corpus.real(name))
    return _ORIGINAL[name]


def _prefixed(text, prefixes, wrap_json):
    lines = []
    for line in text.splitlines():
        line = "".join(prefixes) + line
        if wrap_json:
            line = json.dumps({"log": line + "\n", "stream": "stdout", "time": "2026-01-02T10:11:12.1Z"})
        lines.append(line)
    return "\n".join(lines) + "\n"


@hypothesis.settings(max_examples=250, deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(st.sampled_from(DOCUMENTS), st.lists(_PREFIX, min_size=1, max_size=2), st.booleans())
def test_a_reprefixed_document_yields_the_same_facts(name, prefixes, wrap_json):
    text = corpus.real(name)
    want = dict(original(name))
    labels = [prefix[:-2] for prefix in prefixes if re.match(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*: $", prefix) and not prefix[:-2].isdigit()]
    if labels and any(_HOSTLESS_FAILURE.match(log_lines.strip(line)) for line in text.splitlines()):
        # pdsh/clush name the host of a line nccl-tests printed without one: the innermost label is that host
        want["failed_hosts"] = sorted(set(want["failed_hosts"] or []) | {labels[-1]})
    assert facts_of(_prefixed(text, prefixes, wrap_json)) == want


def _hosts_of(text):
    hosts = set()
    for line in text.splitlines():
        found = log_lines.nccl_line(log_lines.strip(line))
        if found:
            hosts.add(found["host"])
    return hosts


@hypothesis.settings(max_examples=150, deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(st.sampled_from(DOCUMENTS), st.lists(_HOSTNAME, min_size=12, max_size=12, unique=True))
def test_a_document_with_its_hosts_renamed_yields_the_same_facts_for_the_new_names(name, names):
    text = corpus.real(name)
    want = dict(original(name))
    hosts = sorted(_hosts_of(text) | set(want["hosts"] or []) | set(want["failed_hosts"] or []))
    names = [new for new in names if new not in hosts and not any(new in line for line in text.splitlines())]
    hypothesis.assume(len(names) >= len(hosts))
    mapping = dict(zip(hosts, names))
    if hosts:
        pattern = re.compile(r"(?<![A-Za-z0-9_.-])(%s)(?=[:\s]|$)" % "|".join(re.escape(host) for host in sorted(hosts, key=len, reverse=True)), re.M)
        text = pattern.sub(lambda match: mapping[match.group(1)], text)
    for key in ("hosts", "failed_hosts"):
        want[key] = sorted(mapping.get(host, host) for host in want[key] or []) if want[key] is not None else None
    got = facts_of(text)
    for key in ("hosts", "failed_hosts"):
        got[key] = sorted(got[key]) if got[key] is not None else None
    assert got == want


def test_a_transport_fact_survives_a_prefix_the_grammar_does_not_know():
    # the marker is found by its grammar: an unknown prefix in front of it hides nothing
    text = corpus.real("socket-lo-using-network-socket.log")
    unknown = "\n".join("<<collector 42>> | " + line for line in text.splitlines())
    assert facts_of(unknown)["transport"] == original("socket-lo-using-network-socket.log")["transport"] == "socket"


def test_a_cloudwatch_paste_that_lost_its_separator_and_repeats_the_line():
    # aws/aws-ofi-nccl#889 (first comment by praveen-aurora, 2025-05-16), as published
    line = (
        "  | 2025-05-16T16:39:51.208-07:00ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using eth0:10.36.29.253<0> | "
        "ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using eth0:10.36.29.253<0>"
    )
    found = log_lines.nccl_line(log_lines.strip(line))
    assert (found["host"], found["msg"]) == ("ip-10-36-29-253", "Bootstrap : Using eth0:10.36.29.253<0>")
    socket = "  | 2025-05-16T16:39:55.218-07:00ip-h:1:2 [0] NCCL INFO Using network Socket | ip-h:1:2 [0] NCCL INFO Using network Socket"
    assert log_lines.nccl_line(log_lines.strip(socket))["msg"] == "Using network Socket"
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import transport

    assert transport.parse_transport(socket)["hosts"]["ip-h"]["transport"] == "socket"
