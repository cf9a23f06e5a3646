# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""_lib/nccl/warnings.yaml: which NCCL WARN forms are faults, which a net plugin that failed to initialize, which noise;
every log is a result (nccl_results with allow_partial) and a WARN-only log of a fault fails naming its host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_names, nccl_results, transport, verdict

# Published lines (the table's sources): aws/aws-ofi-nccl#889 and #1020, NVIDIA/nccl#2237, ROCm/rccl#2112, NVIDIA/nccl-tests#82.
OFI_INIT = (
    "ip-10-36-29-253:86:2554 [0] nccl_net_ofi_create_plugin:335 NCCL WARN NET/OFI aws-ofi-nccl initialization failed\n"
    "ip-10-36-29-253:86:2554 [0] nccl_net_ofi_init:155 NCCL WARN NET/OFI Initializing plugin failed\n"
)
FI_GETINFO = "[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available"
DOCA = "worker-0:862519:862553 [0] transport/net_ib/gdaki/gin_host_gdaki.cc:431 (gdakiConnectQp) NCCL WARN DOCA failure 21"


def test_every_row_has_a_source_and_a_valid_pattern():
    data = yaml.safe_load(open(nccl_names.WARNINGS_FILE))
    assert set(data) == {"faults", "plugin_init", "noise"}
    for entry in data["faults"] + data["plugin_init"] + data["noise"]:
        assert entry.get("source") and entry.get("what") and entry.get("pattern"), entry
    assert set(entry["transport"] for entry in data["plugin_init"]) <= set(transport.TRANSPORTS)


@pytest.mark.parametrize(
    "message, kind",
    [
        ("NET/OFI OFI fi_getinfo() call failed: No data available", "plugin_init"),
        ("NET/OFI aws-ofi-nccl initialization failed", "plugin_init"),
        ("DOCA failure 21", "fault"),
        ("Cannot get backend version for invalid GIN type 5", "fault"),
        ("Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory", "fault"),
        ("NET/OFI Request completed with error. RC: 21. Error: unknown error", "fault"),
        ("Cuda failure 2 'out of memory'", "fault"),
        ("Failed to open libibverbs.so[.1]", "noise"),
        ('Missing "iommu=pt" from kernel command line which can lead to system instablity or hang!', "noise"),
    ],
)
def test_each_published_warn_form_is_classified_once(message, kind):
    found = {"fault": nccl_names.fault(message, True), "plugin_init": nccl_names.plugin_failure(message), "noise": nccl_names.noise(message)}
    assert [name for name, value in sorted(found.items()) if value] == [kind]


def test_a_warn_only_log_of_a_fault_fails_naming_its_host():
    judged = verdict.verdict_for(DOCA, judging={"on_missing": "pass"})
    assert judged["verdict"] == "fail" and "worker-0" in judged["reason"] and "GIN/GDAKI" in judged["reason"], judged["reason"]
    result = nccl_results.parse_nccl_output(DOCA, allow_partial=True)
    assert result["complete"] is False and sorted(result["failed_hosts"]) == ["worker-0"] and result["rows"] == []


def test_a_log_without_table_or_evidence_is_error_and_still_returns_what_it_holds():
    text = "# nccl-tests version 2.17.6 nccl-headers=22807 nccl-library=22807\n#  Rank  0 Group  0 Pid  1 on node0 device  0 [0000:19:00] NVIDIA H800\n"
    result = nccl_results.parse_nccl_output(text, allow_partial=True)
    assert (result["complete"], result["hosts"], result["nccl_version"], result["nccl_tests_version"]) == (False, ["node0"], "2.28.7", "2.17.6")
    assert verdict.verdict_for(text, judging={"on_missing": "pass"})["verdict"] == "error"
    with pytest.raises(nccl_results.NcclParseError):
        nccl_results.parse_nccl_output(text)


@pytest.mark.parametrize("text", [OFI_INIT, FI_GETINFO])
def test_a_net_plugin_that_failed_to_initialize_fails_the_expected_fabric_naming_the_host(text):
    evidence = transport.parse_transport(text)
    proof = transport.check(evidence, {"transport": "efa", "source": "test"}, {"nodes": 2})
    host = "ip-10-36-29-253" if text == OFI_INIT else "ip-172-31-3-90"
    assert proof["verdict"] == "fail" and not proof.get("note") and host in proof["reason"], proof
    # where that fabric is not expected, a plugin the image carries is no failure
    other = transport.check(evidence, {"transport": "ib", "source": "test"}, {"nodes": 2})
    assert other["verdict"] == "pass" and other.get("note")
    single = transport.check(evidence, {"transport": "efa", "source": "test"}, {"nodes": 1})
    assert single["verdict"] == "pass" and single.get("note")


def test_a_plugin_that_failed_on_one_rank_but_carried_the_traffic_is_no_failure():
    text = OFI_INIT + "ip-10-36-29-253:86:2554 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)\n"
    text += "ip-10-36-29-253:86:2554 [0] NCCL INFO Using network Libfabric\n"
    proof = transport.check(transport.parse_transport(text), {"transport": "efa", "source": "test"}, {"nodes": 2})
    assert proof["verdict"] == "pass" and proof["seen"] == "efa"
