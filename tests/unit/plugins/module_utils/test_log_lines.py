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


def _repeated(text, prefixes, copy_prefix):
    # a CloudWatch paste repeats each line after " | " (aws/aws-ofi-nccl#889): the whole line, its prefixes too, or
    # its body under other prefixes
    lines = []
    for line in text.splitlines():
        if log_lines.nccl_line(log_lines.strip(line)):
            line += " | " + "".join(prefixes) + (line if copy_prefix else log_lines.strip(line))
        lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", DOCUMENTS)
def test_a_document_whose_nccl_lines_are_repeated_yields_the_same_facts(name):
    text = corpus.real(name)
    assert facts_of(_repeated(text, [], True)) == facts_of(_repeated(text, [], False)) == original(name)


@hypothesis.settings(max_examples=150, deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(st.sampled_from(DOCUMENTS), st.lists(_PREFIX, min_size=1, max_size=2), st.booleans())
def test_a_repeat_under_any_prefix_stack_yields_the_same_facts(name, prefixes, copy_prefix):
    assert facts_of(_repeated(corpus.real(name), prefixes, copy_prefix)) == original(name)


def test_a_repeat_is_cut_at_its_own_prefixes():
    # eks-tag-output-indented-socket-fallback.log's line, CloudWatch-repeated with its Open MPI tag: before the cut
    # at the repeat's own prefixes, its message ended in "|         [1,0]<stdout>:" and the socket transport was lost
    line = "        [1,0]<stdout>:multi-node-nccl-test-worker-0:22:28 [0] NCCL INFO Using network Socket"
    assert log_lines.nccl_line(log_lines.strip(line + " | " + line))["msg"] == "Using network Socket"
    cloudwatch = "  | 2025-05-16T16:39:55.218-07:00 | ip-h:86:2554 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>"
    assert log_lines.nccl_line(log_lines.strip(cloudwatch + " | " + cloudwatch))["msg"] == "NET/Socket : Using [0]eth0:10.0.0.1<0>"
    # what is no prefix stays in the message, and a bar inside the message is kept
    assert log_lines.nccl_line("h:1:2 [0] NCCL INFO a | b | not a prefix h:1:2 [0] NCCL INFO a")["msg"] == "a | b | not a prefix"
    assert log_lines.nccl_line("h:1:2 [0] NCCL INFO a | b | [1,0]<stdout>:h:1:2 [0] NCCL INFO a | b")["msg"] == "a | b"


@pytest.mark.parametrize("count, cut", [(8, True), (9, False)])
def test_a_repeat_under_the_most_prefixes_with_bars_is_cut(count, cut):
    # CloudWatch's prefix holds two bars: MAX_PREFIXES of them and the separator are the 17 bars looked back; of a
    # ninth, what lies before those bars stays in the message
    stack = "| 2025-05-16T16:39:55.218-07:00 | " * count
    line = "h:1:2 [0] NCCL INFO a | " + stack + "h:1:2 [0] NCCL INFO a"
    assert log_lines.nccl_line(line)["msg"] == ("a" if cut else "a | | 2025-05-16T16:39:55.218-07:00")


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


# What the mutation run of judging/log_lines.py (docs/mutation.md, issue 47) found untested: each bound at its value
# and one past it, a brace line that is no JSON, the " NCCL " occurrences looked at, a repeat without a host.
def test_eight_prefixes_are_stripped_and_a_ninth_is_left():
    assert log_lines.MAX_PREFIXES == 8
    body, prefixes = log_lines.split("[1,0]<stdout>:" * 8 + LINE)
    assert (body, len(prefixes)) == (LINE, 8)
    body, prefixes = log_lines.split("[1,0]<stdout>:" * 9 + LINE)
    assert (body, len(prefixes)) == ("[1,0]<stdout>:" + LINE, 8)


@pytest.mark.parametrize("extra, decoded", [(0, True), (1, False)])
def test_a_json_line_of_at_most_a_mebibyte_is_decoded(extra, decoded):
    head = json.dumps({"log": LINE, "pad": ""})[:-2]
    line = head + " " * ((1 << 20) - len(head) - 2 + extra) + '"}'
    assert len(line) == (1 << 20) + extra
    assert log_lines.split(line)[0] == (LINE if decoded else line)
    assert log_lines.is_collector_json(line) is decoded


def test_a_brace_line_that_is_no_collectors_json_is_text():
    assert log_lines.is_collector_json("{not json}") is False
    assert log_lines.is_collector_json('{"log": 1}') is False
    assert log_lines.is_collector_json(json.dumps({"log": LINE})) is True


@pytest.mark.parametrize("length, kept", [(253, 253), (254, 253), (300, 253)])
def test_a_marker_host_is_at_most_253_characters(length, kept):
    host = "h" * length
    assert log_lines.nccl_line(host + ":1:2 [0] NCCL INFO x")["host"] == "h" * kept


@pytest.mark.parametrize("junk, found", [(1, True), (3, True), (4, False)])
def test_the_first_four_nccl_occurrences_of_a_line_are_looked_at(junk, found):
    line = "a NCCL b" * junk + " h:1:2 [0] NCCL INFO x"
    got = log_lines.nccl_line(line)
    assert (got and (got["host"], got["msg"])) == (("h", "x") if found else None)


def test_a_later_marker_without_a_host_is_part_of_the_message():
    # only a marker with its host is a CloudWatch repeat (aws/aws-ofi-nccl#889); far into a long message too
    for pad in (10, 300):
        msg = "y" * pad + " |:1:2 [0] NCCL INFO z"
        assert log_lines.nccl_line("h:1:2 [0] NCCL INFO " + msg)["msg"] == msg


@pytest.mark.parametrize("pad", ["", "x"])
@pytest.mark.parametrize("host", ["ab", "abc"])
def test_a_repeated_line_is_cut_where_the_repeats_host_starts(pad, host):
    # the host read backwards from the second marker, at an even and an odd position, of an even and an odd length:
    # only the ` | ` around it is trimmed, anything else before the host stays in the first message
    line = "h:1:2 [0] NCCL INFO " + pad + "hello#" + host + ":1:2 [0] NCCL INFO " + pad + "hello"
    assert log_lines.nccl_line(line)["msg"] == pad + "hello#"
    assert log_lines.nccl_line(line.replace("#", " | "))["msg"] == pad + "hello"


def test_a_line_that_starts_with_nccl_is_searched_on():
    assert log_lines.nccl_line(" NCCL x h:1:2 [0] NCCL INFO y")["host"] == "h"


def test_a_second_nccl_far_into_a_long_message_is_searched_near_it_only():
    msg = "y" * 13000 + " NCCL z"
    assert log_lines.nccl_line("h:1:2 [0] NCCL INFO " + msg)["msg"] == msg


def test_a_json_line_after_spaces_is_text():
    # a collector's JSON line is the outermost form only (module doc): spaces before it make it text
    line = " " + json.dumps({"log": LINE})
    assert log_lines.is_collector_json(line) is False and log_lines.split(line) == (line, [])


@pytest.mark.parametrize("at", [6, 7, 600, 603])
def test_the_next_nccl_is_found_wherever_the_one_before_it_sits(at):
    first = "h:1:2 [0] NCCL INFO "
    if at < len(first):
        # a junk " NCCL " at `at`, then a marker
        line = "abcdefg"[:at] + " NCCL b h:1:2 [0] NCCL INFO x"
        assert log_lines.nccl_line(line)["msg"] == "x"
    else:
        # a repeat whose " NCCL " sits at `at`: cut there
        pad = "y" * (at - len(first) - len(" | h:1:2 [0]"))
        line = first + pad + " | h:1:2 [0] NCCL INFO " + pad
        assert line.find(" NCCL ", len(first)) == at
        assert log_lines.nccl_line(line)["msg"] == pad


@pytest.mark.parametrize("pad", [1, 300])
def test_a_message_that_ends_with_a_bar_and_repeats_nothing_keeps_it(pad):
    assert log_lines.nccl_line("h:1:2 [0] NCCL INFO " + "a" * pad + " |")["msg"] == "a" * pad + " |"


def test_a_repeated_line_whose_message_holds_nccl_is_cut_at_the_repeat():
    # NCCL's own "Loaded net plugin NCCL RDMA Plugin v6 (v6)" (NVIDIA/nccl#1357, tests/fixtures/real/nccl/
    # hpcx-ibext-sharp-collnet-info.log) in a CloudWatch paste that repeats the line after ` | ` (aws/aws-ofi-nccl#889):
    # the " NCCL " of the message is no marker, the repeat's is
    msg = "NET/Plugin: Loaded net plugin NCCL RDMA Plugin v6 (v6)"
    line = "  | 2025-05-16T16:39:51.208-07:00 | qh100-gpu20:39629:39686 [0] NCCL INFO " + msg + " | qh100-gpu20:39629:39686 [0] NCCL INFO " + msg
    found = log_lines.nccl_line(log_lines.strip(line))
    assert (found["host"], found["msg"]) == ("qh100-gpu20", msg)
    # the occurrences looked at stay bounded: a repeat after four other " NCCL " is not looked for
    many = "h:1:2 [0] NCCL INFO " + "a NCCL b" * 4 + " | h:1:2 [0] NCCL INFO x"
    assert log_lines.nccl_line(many)["msg"] == "a NCCL b" * 4 + " | h:1:2 [0] NCCL INFO x"


@pytest.mark.parametrize("shift", range(8))
def test_a_repeat_is_found_after_a_message_nccl_wherever_it_sits(shift):
    msg = "x" * shift + "a NCCL b"
    assert log_lines.nccl_line("h:1:2 [0] NCCL INFO " + msg + " | h:1:2 [0] NCCL INFO " + msg)["msg"] == msg
