# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The nccl-tests reader, the transport proof and the verdict on published output (tests/fixtures/real/nccl/
PROVENANCE.md): every hand-read fact of facts.yaml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results, transport, verdict

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real", "nccl")
with open(os.path.join(REAL, "facts.yaml")) as _handle:
    FACTS = yaml.safe_load(_handle)

# (document, fact) -> why the collection gets it wrong today; strict, so a fix must remove the entry.
XFAIL = {
    (
        "aws-ofi-nccl2.4-provider-tcp-fallback.log",
        "note_names",
    ): "a NET/OFI provider line without a 'Using network' line is not read as the OFI net; the version is lost when no table",
    (
        "aws-ofi-nccl2.4-provider-tcp-fallback.log",
        "transport",
    ): "a NET/OFI provider line without a 'Using network' line is not read as the OFI net; the version is lost when no table",
    (
        "aws-ofi-nccl2.4-provider-tcp-fallback.log",
        "transport_check",
    ): "a NET/OFI provider line without a 'Using network' line is not read as the OFI net; the version is lost when no table",
    ("gcp-fastsocket-plugin-nccl2.20.5.log", "note_names"): "the transport note does not name a loaded plugin the table does not know",
    ("hpcx-ibext-sharp-collnet-info.log", "transport"): "the HPC-X plugin's IBext net name is not in the transport table",
    ("hpcx-ibext-sharp-collnet-info.log", "transport_check"): "the HPC-X plugin's IBext net name is not in the transport table",
    ("hpcx-ibext-v6-sharp-init-failure.log", "transport"): "IBext_v6 is not in the transport table; failure lines without a table raise",
    ("hpcx-ibext-v6-sharp-init-failure.log", "transport_check"): "IBext_v6 is not in the transport table; failure lines without a table raise",
    ("nccl2.4-ring-via-net-socket.log", "transport"): "old 'Ring 00 : 15 -> 0 [send] via NET/Socket/0' lines are not read",
    ("nccl2.4-ring-via-net-socket.log", "transport_check"): "old 'Ring 00 : 15 -> 0 [send] via NET/Socket/0' lines are not read",
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
    judged = verdict.verdict_for(text, on_missing="pass")
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


def test_every_document_has_facts_and_provenance():
    with open(os.path.join(REAL, "PROVENANCE.md")) as handle:
        provenance = handle.read()
    documents = sorted(name for name in os.listdir(REAL) if name.endswith(".log"))
    assert documents == sorted(FACTS)
    for name in documents:
        assert "| %s | " % name in provenance, name
    assert len(documents) >= 30


def test_corpus_size():
    """The figures the README states: documents and facts."""
    assert len(FACTS) >= 40
    assert sum(len(facts) for facts in FACTS.values()) >= 200
