# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""judging/nccl_names.py: the table of _lib/nccl/networks.yaml read once, net names to transports, WARN messages and
lines to faults. The published logs the table's rows come from are tested in test_nccl_real.py; these are the rules."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_names

# The message of NVIDIA/nccl src/transport/net_ib.cc's WARN (the table's first fault row), and PyTorch's watchdog line
# (a fault without a host), as the table's sources quote them.
IB_COMPLETION = "NET/IB : Got completion from peer 10.0.0.2<49152> with error 12, opcode 0, len 0, vendor err 129 (Recv)"
WATCHDOG = "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600000 milliseconds"


def test_a_host_fault_is_named_by_its_what():
    assert nccl_names.fault(IB_COMPLETION, True) == "an InfiniBand/RoCE completion error"


def test_a_host_fault_is_no_fault_as_a_line_without_a_host_and_the_other_way_round():
    assert nccl_names.fault(IB_COMPLETION, False) is None
    assert nccl_names.fault(WATCHDOG, False) == "a collective timed out (PyTorch ProcessGroupNCCL watchdog)"
    assert nccl_names.fault(WATCHDOG, True) is None


def test_a_message_of_no_fault_is_none():
    assert nccl_names.fault("NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC", True) is None
    assert nccl_names.fault("NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC", False) is None


def test_a_fault_without_a_what_is_named_by_its_pattern(tmp_path, monkeypatch):
    table = tmp_path / "networks.yaml"
    table.write_text("networks: []\nfaults:\n  - host: true\n    pattern: 'disk on fire'\n")
    monkeypatch.setattr(nccl_names, "NAMES_FILE", str(table))
    monkeypatch.setattr(nccl_names, "_CACHE", {})
    assert nccl_names.fault("the disk on fire again", True) == "disk on fire"


@pytest.mark.parametrize("text", ["faults: []\n", "networks: IB\n", "- IB\n"])
def test_a_table_without_a_networks_list_is_an_error_naming_the_file(tmp_path, monkeypatch, text):
    table = tmp_path / "networks.yaml"
    table.write_text(text)
    monkeypatch.setattr(nccl_names, "NAMES_FILE", str(table))
    monkeypatch.setattr(nccl_names, "_CACHE", {})
    with pytest.raises(ParseError) as failed:
        nccl_names.catalog()
    assert str(failed.value) == "%s: no 'networks' list" % table


def test_the_table_is_read_once(monkeypatch):
    first = nccl_names.catalog()
    monkeypatch.setattr(nccl_names, "NAMES_FILE", "/nonexistent/networks.yaml")
    assert nccl_names.catalog() is first


@pytest.mark.parametrize("name, tid", [("IB", "ib"), ("IBext_v6", "ib"), ("Socket", "socket"), ("", None), (None, None), ("IBx", None), ("XIBext", None)])
def test_net_names_by_name_or_prefix(name, tid):
    assert nccl_names.transport_of(name) == tid


# What the mutation run of judging/nccl_names.py (docs/mutation.md, issue 47) found untested here: the WARN table's
# plugin_init and noise rows by their `what`, rows without one, and a WARN table that is no mapping.
def test_a_failed_net_plugin_and_a_noise_warn_are_named_by_their_rows():
    # aws/aws-ofi-nccl#1020's and NVIDIA/nccl-tests#82's messages (tests/fixtures/real/nccl)
    assert nccl_names.plugin_failure("NET/OFI OFI fi_getinfo() call failed: No data available") == {
        "transport": "efa",
        "what": "aws-ofi-nccl found no libfabric provider (fi_getinfo failed)",
    }
    assert nccl_names.noise("Failed to open libibverbs.so[.1]").startswith("no IB verbs library in the image")
    assert nccl_names.plugin_failure("Failed to open libibverbs.so[.1]") is None
    assert nccl_names.noise("NET/OFI OFI fi_getinfo() call failed: No data available") is None


def test_warn_rows_without_a_what_are_named_by_their_pattern(tmp_path, monkeypatch):
    table = tmp_path / "warnings.yaml"
    table.write_text("plugin_init:\n  - {pattern: 'plugin down', transport: efa}\nnoise:\n  - {pattern: 'all quiet'}\n")
    monkeypatch.setattr(nccl_names, "WARNINGS_FILE", str(table))
    monkeypatch.setattr(nccl_names, "_CACHE", {})
    assert nccl_names.plugin_failure("the plugin down again") == {"transport": "efa", "what": "plugin down"}
    assert nccl_names.noise("all quiet here") == "all quiet"


def test_a_warn_table_that_is_no_mapping_is_an_error_naming_the_file(tmp_path, monkeypatch):
    table = tmp_path / "warnings.yaml"
    table.write_text("- noise\n")
    monkeypatch.setattr(nccl_names, "WARNINGS_FILE", str(table))
    monkeypatch.setattr(nccl_names, "_CACHE", {})
    with pytest.raises(ParseError) as failed:
        nccl_names.catalog()
    assert str(failed.value) == "%s: not a mapping of faults, plugin_init and noise" % table
