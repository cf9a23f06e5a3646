# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The nccl-tests reader, the transport proof and the verdict on published output (tests/fixtures/real/nccl/
PROVENANCE.md): every hand-read fact of facts.yaml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import random

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_names, nccl_results, transport, verdict

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real", "nccl")
with open(os.path.join(REAL, "facts.yaml")) as _handle:
    FACTS = yaml.safe_load(_handle)

# (document, fact) -> why the collection gets it wrong today; strict, so a fix must remove the entry.
_UNPREFIXED = (
    "the reporter cut NCCL's `host:pid:tid [dev] NCCL INFO` prefix: the transport reader keys on that marker, so that a "
    "program's own text cannot pass for NCCL's, and reads none of these lines"
)
XFAIL = {
    ("nccl2.24.3-unprefixed-ibext-v8-mnnvl-nvls.log", "transport"): _UNPREFIXED,
    ("nccl2.24.3-unprefixed-ibext-v8-mnnvl-nvls.log", "transport_check"): _UNPREFIXED,
    ("nccl2.24.3-unprefixed-ibext-v8-mnnvl-nvls.log", "nvls"): _UNPREFIXED,
    ("nccl2.24.3-unprefixed-ibext-v8-mnnvl-nvls.log", "net_plugin"): _UNPREFIXED,
}


def real(name):
    with open(os.path.join(REAL, name)) as handle:
        return handle.read()


_CACHE = {}


def computed(name):
    """Every fact the collection gives on one document, by facts.yaml's names."""
    if name in _CACHE:
        return _CACHE[name]
    text = real(name)
    got = {}
    try:
        runs = nccl_results.parse_nccl_runs(text, allow_partial=True)
        result = runs[-1]
        got["table"] = bool(result["rows"]) or bool(result["columns"])
    except nccl_results.NcclParseError as exc:
        error = exc
        result = None
        got["table"] = False
        got["parse_error"] = str(error)
    if result is not None:
        got.update(
            rows=len(result["rows"]),
            largest_size=result["largest_size"],
            largest_busbw=result["peak_busbw"],
            avg_busbw=result["avg_busbw"],
            wrong=result["wrong_total"],
            complete=result["complete"],
            collective=result["collective"],
            nccl_tests_version=result["nccl_tests_version"],
            nccl_version=result["nccl_version"],
            hosts=result["hosts"],
            failed_hosts=sorted(result.get("failed_hosts") or {}),
        )
    else:
        # no table: what the reader read before it gave up (versions, program), and no failing host
        facts = error.facts or {}
        got.update(
            collective=facts.get("collective"),
            nccl_tests_version=facts.get("nccl_tests_version"),
            nccl_version=facts.get("nccl_version"),
            failed_hosts=sorted(facts.get("failed_hosts") or {}),
        )
    judged = verdict.verdict_for(text, judging={"on_missing": "pass"})
    got["grade"] = judged["verdict"]
    got["grade_reason"] = judged["reason"]
    evidence = transport.parse_transport(text)
    proof = transport.check(evidence)
    got["transport"] = proof["seen"]
    got["transport_note"] = proof["reason"]
    got["nvls"] = evidence["nvls"]
    got["mnnvl"] = evidence["mnnvl"]
    checks = {}
    for expected in transport.TRANSPORTS:
        result_check = transport.check(evidence, {"transport": expected, "source": "test"}, {"nodes": 2})
        checks[expected] = "note" if result_check.get("note") else result_check["verdict"]
    got["transport_check"] = checks
    # What the drift check records of the node's NCCL (judging/transport.py versions).
    ran = transport.versions(text)
    got["net_plugin"] = ran.get("net_plugin")
    got["nccl_ran"] = ran.get("nccl")
    _CACHE[name] = got
    return got


def _cases():
    for name in sorted(FACTS):
        for fact, expected in sorted(FACTS[name].items()):
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[(name, fact)])] if (name, fact) in XFAIL else []
            yield pytest.param(name, fact, expected, id="%s:%s" % (name, fact), marks=marks)


@pytest.mark.parametrize("name, fact, expected", list(_cases()))
def test_published_document_fact(name, fact, expected):
    got = computed(name)
    if fact == "transport_check":
        assert dict((key, got["transport_check"][key]) for key in expected) == expected, got["transport_note"]
    elif fact == "note_names":
        for word in expected:
            assert word in got["transport_note"], got["transport_note"]
    elif fact in ("hosts", "failed_hosts"):
        assert sorted(got.get(fact) or []) == sorted(expected), got.get("grade_reason")
    elif fact == "grade":
        assert got["grade"] == expected, got["grade_reason"]
    elif fact == "table" or fact in got:
        assert got.get(fact) == expected, got.get("parse_error")
    else:
        # a table fact of a document the reader found no table in
        assert fact in got, "no %s: %s" % (fact, got.get("parse_error"))


def test_versions_name_a_net_plugin_exactly_where_the_facts_do():
    """Both sides over the whole corpus: a document without a net_plugin fact gets none either."""
    named = set(name for name in FACTS if computed(name)["net_plugin"] is not None)
    expected = set(name for name in FACTS if "net_plugin" in FACTS[name] and (name, "net_plugin") not in XFAIL)
    assert named == expected


def test_versions_give_the_nccl_version_exactly_where_the_facts_do():
    """The NCCL version the drift check records is the one the facts read by hand (its build after '+' kept)."""
    for name in sorted(FACTS):
        ran = computed(name)["nccl_ran"]
        assert (ran.split("+")[0] if ran else None) == FACTS[name].get("nccl_version"), name


def test_every_document_has_facts_and_provenance():
    with open(os.path.join(REAL, "PROVENANCE.md")) as handle:
        provenance = handle.read()
    documents = sorted(name for name in os.listdir(REAL) if name.endswith(".log"))
    assert documents == sorted(FACTS)
    for name in documents:
        assert "| %s | " % name in provenance, name
    assert len(documents) >= 30


def test_corpus_size():
    """The figures docs/verdicts.md states: documents and facts."""
    assert len(FACTS) >= 85
    assert sum(len(facts) for facts in FACTS.values()) >= 445


def test_every_name_and_fault_of_the_table_has_a_source():
    data = yaml.safe_load(open(nccl_names.NAMES_FILE))
    warns = yaml.safe_load(open(nccl_names.WARNINGS_FILE))
    for entry in data["networks"] + warns["faults"] + warns["plugin_init"] + warns["noise"]:
        assert entry.get("source"), entry
    assert {entry["transport"] for entry in data["networks"]} <= set(transport.TRANSPORTS)


@pytest.mark.parametrize(
    "name, tid", [("IB", "ib"), ("IBext", "ib"), ("IBext_v6", "ib"), ("Socket", "socket"), ("AWS Libfabric", "efa"), ("FastSocket", None), ("IBx", None)]
)
def test_net_names_by_the_table(name, tid):
    assert transport.transport_of(name) == tid


def test_a_name_the_table_lacks_is_a_note_naming_it_never_a_fail():
    # the published IBext log with its net renamed to one no table lists
    text = real("hpcx-ibext-sharp-collnet-info.log").replace("Using network IBext", "Using network NewNet_v9")
    proof = transport.check(transport.parse_transport(text), {"transport": "ib", "source": "test"}, {"nodes": 2})
    assert proof["note"] and proof["verdict"] == "pass" and proof["seen"] == "unknown" and "NewNet_v9" in proof["reason"]


def test_ofi_tcp_provider_is_a_fall_back_that_fails_efa():
    evidence = transport.parse_transport(real("aws-ofi-nccl2.4-provider-tcp-fallback.log"))
    proof = transport.check(evidence, {"transport": "efa", "source": "test"}, {"nodes": 2})
    assert proof["verdict"] == "fail" and proof["seen"] == "ofi-tcp" and "provider tcp;ofi_rxm" in proof["reason"]


def test_prefix_stripping_is_bounded_on_a_line_of_repeated_tags():
    line = "0: " * 300000 + "# Avg bus bandwidth    : 1.0"
    stripped = nccl_results._strip_prefixes(line)  # pylint: disable=protected-access
    assert len(line) - len(stripped) == 3 * nccl_results.MAX_PREFIXES


def test_pod_logs_with_failure_lines_but_no_table_name_the_failed_nodes():
    pods = [
        {"metadata": {"name": "job-launcher-0-0-a", "labels": {}}, "spec": {"nodeName": "n0", "hostname": "HCA-128"}, "status": {"phase": "Failed"}},
    ]
    logs = [{"item": pods[0], "log": real("hca-all-reduce-crash-test-nccl-failure.log")}]
    judged = verdict.verdict_for(logs, job={"pods": pods}, judging={"collective": "all_reduce", "on_missing": "pass"})
    assert judged["verdict"] == "fail" and judged["reason"].startswith("the log names failing host(s) HCA-107, HCA-108, HCA-128")
    assert judged["failed_nodes"] == ["n0"]


def test_deeply_nested_json_is_the_parse_error():
    with pytest.raises(nccl_results.NcclParseError, match="nests too deep"):
        nccl_results.parse_nccl_output('{"results": ' + "[" * 100000 + "]" * 100000 + "}")


_LINES = sorted(set(line for name in sorted(FACTS) for line in real(name).splitlines()))


def test_shuffled_published_lines_give_a_result_or_the_parse_error():
    """Any order and mix of published lines (what a crashed, interleaved or cut log is): a result, or the reader's
    parse error naming the problem, never another exception; the transport reader and the grade never raise."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=150, deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(st.lists(st.sampled_from(_LINES), max_size=60), st.sampled_from(["", "0: ", "[1,0]<stdout>:", "        [1,0]<stdout>:"]))
    def check(lines, prefix):
        text = "\n".join(prefix + line for line in lines)
        try:
            nccl_results.parse_nccl_runs(text, allow_partial=True)
        except nccl_results.NcclParseError as error:
            assert error.reason
        transport.check(transport.parse_transport(text), {"transport": "ib", "source": "test"}, {"nodes": 2})
        assert verdict.verdict_for(text, judging={"on_missing": "pass"})["verdict"] in ("pass", "warn", "fail", "error")

    check()


def _torch_run(name):
    """A torch run whose one worker printed the published log NAME (no nccl-tests table: collective None)."""
    with open(os.path.join(REAL, name)) as handle:
        text = handle.read()
    pod = {"metadata": {"name": "ddp-node-0-0", "labels": {}}, "spec": {"nodeName": "n1"}, "status": {"phase": "Succeeded"}}
    facts = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8, "instance_type": "p5.48xlarge"}
    return verdict.verdict_for(
        [{"item": pod, "log": text}], facts=facts, job={"outcome": "Complete", "pods": [pod]}, judging={"collective": None, "workload": "torch-ddp"}
    )


@pytest.mark.parametrize(
    "name, named",
    [
        ("torch-watchdog-timeout-allreduce.log", "Watchdog caught collective operation timeout"),
        ("ib-completion-error-4-three-hosts.log", "H100-1, H100-5"),
        ("connection-reset-cuda-failure-test-failure.log", "A03-R28-I49-2-6000166"),
    ],
)
def test_a_torch_run_whose_log_names_failing_hosts_fails_without_a_table(name, named):
    # Before: a completed torch or exec job passed ("no bandwidth to judge") whatever its logs said.
    judged = _torch_run(name)
    assert judged["verdict"] == "fail" and named in judged["reason"], judged["reason"]
    assert [check["name"] for check in judged["checks"] if check["verdict"] == "fail" and check["name"] == "errors"], judged["checks"]


def test_a_torch_run_with_only_info_lines_is_judged_by_its_job():
    judged = _torch_run("aws-ofi-efa-p5en-libfabric-info.log")
    assert not [check for check in judged["checks"] if check["name"] == "errors"], judged["checks"]
    assert judged["verdict"] == "pass" and "TrainJob Complete (no bandwidth to judge)" in judged["reason"], judged["reason"]


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(FACTS)),
    seed=st.integers(0, 2**32 - 1),
    prefix=st.sampled_from(["", "[1,0]<stdout>:", "0: ", "[pod/job-node-0-0-x/node] "]),
)
def test_versions_do_not_depend_on_line_order_or_launcher_prefixes(name, seed, prefix):
    """Metamorphic over the corpus: the lines shuffled, or each given a launcher's prefix, name the same versions
    (every document prints one NCCL version)."""
    lines = real(name).splitlines()
    random.Random(seed).shuffle(lines)
    expected = transport.versions(real(name))
    assert transport.versions("\n".join(lines)) == expected
    assert transport.versions("\n".join(prefix + line for line in real(name).splitlines())) == expected


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(FACTS)),
    version=st.from_regex(r"\A[0-9]\.[0-9]{1,2}\.[0-9]{1,2}(aws)?\Z"),
    kind=st.sampled_from(["ofi", "ofi-old", "loaded", "gib"]),
)
def test_a_plugin_version_line_added_to_a_published_log_is_named(name, version, kind):
    line = {
        "ofi": "NET/OFI Initializing aws-ofi-nccl %s" % version,
        "ofi-old": "NET/OFI Using aws-ofi-nccl %s" % version,
        "loaded": "NET/Plugin: Loaded net plugin Libfabric (v%s)" % version.split(".")[0],
        "gib": "NET/gIB : Initializing gIB v%s" % version,
    }[kind]
    expected = {"ofi": "aws-ofi-nccl " + version, "ofi-old": "aws-ofi-nccl " + version, "loaded": "Libfabric (v%s)" % version.split(".")[0]}
    expected["gib"] = "gIB v" + version
    text = real(name) + "\nnode-7:100:200 [3] NCCL INFO %s\n" % line
    named = transport.versions(text)["net_plugin"].split(", ")
    assert expected[kind] in named and "internal" not in named
    # The same line as a WARN, or without NCCL's marker, is no proof of a plugin.
    assert transport.versions(real(name) + "\nnode-7:100:200 [3] NCCL WARN %s\n" % line) == transport.versions(real(name))
    assert transport.versions(real(name) + "\n%s\n" % line) == transport.versions(real(name))


def test_versions_are_bounded_on_hostile_lines():
    # A line of repeated markers, a version of a megabyte, more plugins than kept.
    marker = "h:1:1 [0] NCCL INFO " * 50000
    hostile = "\n".join(
        [
            marker + "NCCL version 2.21.5+cuda12.4",
            "h:1:1 [0] NCCL INFO NCCL version 2.21.5+" + "c" * 1000000,
            "h:1:1 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl " + "1" * 1000000,
        ]
        + ["h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin P%d (v9)" % index for index in range(100)]
    )
    found = transport.versions(hostile)
    assert len(found.get("nccl", "")) <= 60 and len(found["net_plugin"].split(", ")) == transport.MAX_VERSIONS
    assert transport.versions(None) == {} and transport.versions("") == {}
