# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Transport proof: NCCL INFO lines -> network, transport, NVLS, MNNVL; the catalogue's expectation; the verdict check."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shlex

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import transport as tp
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import verdict as vd
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import nccl_env, platform_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "nccl", "transport")
H100_AWS = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8, "mnnvl": False}


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def pods(trainjob, nodes=2):
    return [
        {
            "metadata": {"name": "%s-node-0-%d-x%d" % (trainjob, index, index)},
            "spec": {"nodeName": "ip-10-0-0-%d" % index, "hostname": "%s-node-0-%d" % (trainjob, index)},
            "status": {"phase": "Succeeded"},
        }
        for index in range(nodes)
    ]


@pytest.mark.parametrize(
    "name, transport, network",
    [
        ("aws-h100-efa.log", "efa", "Libfabric"),
        ("aws-h100-socket-fallback.log", "socket", "Socket"),
        ("azure-h100-ib.log", "ib", "IB"),
        ("gcp-h200-gib.log", "gib", "gIB"),
        ("gcp-h100-fastrak.log", "tcpxo", "FasTrak"),
    ],
)
def test_each_network_is_recognised(name, transport, network):
    evidence = tp.parse_transport({"launcher": fixture(name)})
    assert evidence["transports"] == [transport]
    assert len(evidence["hosts"]) == 2 and all(entry["network"] == network for entry in evidence["hosts"].values())
    assert evidence["mnnvl"] is False


def test_plugin_provider_and_link_details():
    efa = tp.parse_transport(fixture("aws-h100-efa.log"))["hosts"]["nccl-all-reduce-20261130t0900-node-0-1"]
    assert efa["plugins"] == ["Libfabric"] and efa["provider"] == "efa" and efa["fabric"] == "efa-direct"
    assert efa["channels"] == {"Libfabric": 2}  # rank 15 -> 0 on its two channels
    ib = tp.parse_transport(fixture("azure-h100-ib.log"))["hosts"]["nccl-all-reduce-20261130t0930-node-0-0"]
    assert ib["ib_link"] == "IB" and ib["provider"] is None
    gib = tp.parse_transport(fixture("gcp-h200-gib.log"))
    assert gib["nvls"] == "used" and sorted(gib["hosts"]["nccl-all-reduce-20261130t0945-node-0-0"]["plugins"]) == ["gIB"]
    assert tp.parse_transport(fixture("aws-h100-efa.log"))["nvls"] == "not available"


def test_mnnvl_and_nvls():
    evidence = tp.parse_transport(fixture("gb200-mnnvl.log"))
    assert evidence["mnnvl"] is True and evidence["nvls"] == "used"
    assert all(entry["nnodes"] == 1 for entry in evidence["hosts"].values())


def test_names_and_prefix_networks():
    assert tp.transport_of("AWS Libfabric") == "efa" and tp.transport_of("OFI") == "efa"
    assert tp.transport_of("GPUDirectTCPX_v7") == "tcpx" and tp.transport_of("FasTrak") == "tcpxo"
    assert tp.transport_of("Socket") == "socket" and tp.transport_of("IB") == "ib" and tp.transport_of("gIB") == "gib"
    assert tp.transport_of("NoSuchNet") is None and tp.transport_of(None) is None


def test_channel_lines_alone_name_the_network_and_other_providers_are_not_efa():
    text = "\n".join(
        [
            "h-0:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA",
            "h-0:1:2 [0] NCCL INFO NET/OFI Selected Provider is tcp (found 1 nics)",
            "h-1:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/Socket/1",
        ]
    )
    evidence = tp.parse_transport(text)
    assert evidence["hosts"]["h-0"]["transport"] == "ofi-tcp" and evidence["hosts"]["h-1"]["transport"] == "socket"


def test_socket_fallback_on_aws_h100_fails_naming_both():
    expected = platform_catalog.expected_transport("aws", "h100")
    assert expected["transport"] == "efa" and "p5.48xlarge" in expected["source"]
    evidence = tp.parse_transport({"launcher": fixture("aws-h100-socket-fallback.log")})
    locate = dict(
        (pod["spec"]["hostname"], {"pod": pod["metadata"]["name"], "node": pod["spec"]["nodeName"]}) for pod in pods("nccl-all-reduce-20261130t0915")
    ).get
    check = tp.check(evidence, expected, H100_AWS, locate)
    assert check["verdict"] == "fail" and check["expected"] == "efa" and check["seen"] == "socket"
    assert "expected EFA through aws-ofi-nccl" in check["reason"] and "seen plain TCP sockets" in check["reason"]
    assert "network Socket" in check["reason"] and "node ip-10-0-0-1" in check["reason"]
    assert [item["node"] for item in check["evidence"]] == ["ip-10-0-0-0", "ip-10-0-0-1"]
    assert "Using network Socket" in check["evidence"][0]["lines"][0]


def test_matching_transport_passes():
    check = tp.check(tp.parse_transport(fixture("aws-h100-efa.log")), platform_catalog.expected_transport("aws", "h100"), H100_AWS)
    assert check["verdict"] == "pass" and not check.get("note")
    assert "EFA through aws-ofi-nccl (network Libfabric, provider efa, the OFI net plugin)" in check["reason"]


def test_no_info_lines_is_an_unknown_note():
    text = "# nccl-tests version 2.16.9\nh-0:1:2 [0] NCCL WARN something\n"
    check = tp.check(tp.parse_transport(text), {"transport": "efa", "source": "x"}, H100_AWS)
    assert check["verdict"] == "pass" and check["note"] and check["seen"] == "unknown" and "NCCL_DEBUG is not INFO" in check["reason"]
    check = tp.check(tp.parse_transport("h-0:1:2 [0] NCCL INFO NCCL version 2.27.7+cuda12.9\n"), {"transport": "efa"}, H100_AWS)
    assert check["note"] and "name no network" in check["reason"]


def test_no_expectation_and_single_node_are_notes():
    evidence = tp.parse_transport(fixture("aws-h100-socket-fallback.log"))
    assert tp.check(evidence, None, {"platform": "nebius"})["note"]
    single = tp.check(evidence, {"transport": "efa"}, dict(H100_AWS, nodes=1))
    assert single["verdict"] == "pass" and single["note"] and "single-node" in single["reason"]
    with pytest.raises(ConfigError, match="expected_transport"):
        tp.check(evidence, {"transport": "carrier-pigeon"})


def test_mnnvl_run_in_one_nvlink_domain_does_not_fail_on_the_network():
    evidence = tp.parse_transport(fixture("gb200-mnnvl.log"))
    check = tp.check(evidence, {"transport": "efa"}, {"platform": "aws", "gpu_architecture": "gb200", "nodes": 2, "mnnvl": True})
    assert check["verdict"] == "pass" and "MNNVL used" in check["reason"] and "NVLS used" in check["reason"]


def test_mnnvl_enabled_but_not_used_fails():
    check = tp.check(tp.parse_transport(fixture("azure-h100-ib.log")), {"transport": "ib"}, dict(H100_AWS, mnnvl=True))
    assert check["verdict"] == "fail" and "NCCL reported MNNVL 0" in check["reason"]


# ------------------------------------------------------------------------------------------------ the data


def test_catalogue_expectations_are_known_transports():
    catalog = platform_catalog.load_platform_catalog()
    for platform, info in catalog.items():
        values = [info["transport"]] + [row.get("transport") for row in info["shapes"].values()]
        for value in values:
            assert value is None or value in tp.TRANSPORTS, (platform, value)


@pytest.mark.parametrize(
    "platform, gpu, instance_type, transport",
    [
        ("aws", "h100", None, "efa"),
        ("aws", "gb300", None, "ib"),
        ("aws", "h200", "p5e.48xlarge", "efa"),
        ("gcp", "h100", None, "tcpxo"),
        ("gcp", "h100", "a3-highgpu-8g", "tcpx"),
        ("gcp", "h200", None, "gib"),
        ("gcp", "gb300", None, None),
        ("azure", "gb200", None, "ib"),
        ("oci", "h100", "BM.GPU.H100.8", None),
        ("oci", "h100", "BM.GPU.Unknown", "ib"),
        ("onprem", "h100", None, "ib"),
        ("nosuch", "h100", None, None),
    ],
)
def test_expected_transport(platform, gpu, instance_type, transport):
    expected = platform_catalog.expected_transport(platform, gpu, instance_type)
    assert (expected or {}).get("transport") == transport


def test_base_env_keeps_the_lines_the_proof_reads():
    env = dict((item["name"], item["value"]) for item in nccl_env.base_nccl_env(False))
    assert env["NCCL_DEBUG"] == "INFO"
    subsystems = set(env["NCCL_DEBUG_SUBSYS"].split(","))
    assert all(subsystems & set(names) for names in tp.SUBSYSTEMS.values())


# ------------------------------------------------------------------------------------------------ in the verdict


def test_verdict_for_a_socket_fallback_on_aws_h100():
    trainjob = "nccl-all-reduce-20261130t0915"
    logs = [{"item": {"metadata": {"name": "%s-launcher-0-0-abcde" % trainjob}}, "log": fixture("aws-h100-socket-fallback.log")}]
    result = vd.verdict_for(logs, facts=H100_AWS, job={"outcome": "Complete", "pods": pods(trainjob)}, judging={"collective": "all_reduce"})
    assert result["verdict"] == "fail"
    assert "expected EFA through aws-ofi-nccl" in result["reason"] and "seen plain TCP sockets (network Socket" in result["reason"]
    # The wrong transport explains the busbw: its reason comes first.
    assert result["reason"].startswith("inter-node transport is not the expected one: expected EFA through aws-ofi-nccl"), result["reason"]
    assert result["transport"]["expected"] == "efa" and result["transport"]["seen"] == "socket"
    names = [check["name"] for check in result["checks"]]
    assert "transport" in names and "peak" in names


def test_verdict_for_matching_transport_passes_and_unknown_is_a_note():
    trainjob = "nccl-all-reduce-20261130t0900"
    text = fixture("aws-h100-efa.log")
    result = vd.verdict_for(
        text, facts=H100_AWS, job={"outcome": "Complete", "pods": pods(trainjob), "pod_logs": {"launcher": text}}, judging={"collective": "all_reduce"}
    )
    assert result["verdict"] == "pass" and result["transport"]["seen"] == "efa"
    plain = "\n".join(line for line in fixture("aws-h100-efa.log").splitlines() if "NCCL INFO" not in line)
    quiet = vd.verdict_for(plain, facts=H100_AWS, job={"outcome": "Complete"}, judging={"collective": "all_reduce"})
    assert quiet["verdict"] == "pass" and quiet["transport"]["seen"] == "unknown"
    assert any("transport unknown" in note for note in quiet["notes"]) and "transport" not in quiet["reason"]


def test_verdict_for_instance_type_and_given_expectation():
    text = fixture("gcp-h100-fastrak.log")
    facts = {"platform": "gcp", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8, "mnnvl": False}
    assert vd.verdict_for(text, facts=facts, judging={"collective": "all_reduce"})["transport"]["verdict"] == "pass"
    high = vd.verdict_for(text, facts=dict(facts, instance_type="a3-highgpu-8g"), judging={"collective": "all_reduce"})
    assert high["transport"]["verdict"] == "fail" and "expected GPUDirect-TCPX" in high["reason"]
    assert vd.verdict_for(text, facts=facts, judging={"collective": "all_reduce", "expected_transport": "socket"})["transport"]["expected_source"] == "given"
    with pytest.raises(ConfigError, match="expected_transport"):
        vd.verdict_for(text, facts=facts, judging={"collective": "all_reduce", "expected_transport": "nope"})


# --- what the rendered objects leave in the logs -------------------------------------------------------------------
def _containers(node, found):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                found.extend(item for item in value if isinstance(item, dict))
            _containers(value, found)
    elif isinstance(node, list):
        for value in node:
            _containers(value, found)
    return found


def _mpirun_words(trainer):
    words = list(trainer.get("command") or []) + list(trainer.get("args") or [])
    if words[:2] == ["/bin/bash", "-c"]:  # a platform's preCommand wraps mpirun in a script (plan.wrap_pre_command)
        words = shlex.split(words[2].rsplit("\nexec ", 1)[-1])
    return words


@pytest.mark.parametrize("framework", ["mpi", "torch", "exec"])
@pytest.mark.parametrize("platform", sorted(platform_catalog.load_platform_catalog()) + ["other"])
def test_every_rendered_plan_logs_what_the_transport_check_reads(platform, framework):
    """Issue 13: the base env keeps NCCL's INIT and NET lines in the logs on every platform and GPU: NCCL_DEBUG=INFO
    and an NCCL_DEBUG_SUBSYS naming INIT (which every line kind of SUBSYSTEMS is logged under) in every container that
    sets NCCL variables, and for MPI on mpirun's -x (remote ranks get their env from mpirun, not from the pod)."""
    trainers = {
        "mpi": {"binary": "/opt/nccl-tests/build/all_reduce_perf", "args": ["-b", "1K", "-e", "16G"]},
        "torch": {"script": "/workspace/smoke.py"},
        "exec": {"command": ["/bin/true"]},
    }
    assert all("INIT" in subsystems for subsystems in tp.SUBSYSTEMS.values())
    for architecture, mnnvl in (("h100", False), ("h200", False), ("b200", False), ("gb200", True), ("gb300", False)):
        config = dict(
            entry_name="b",
            namespace="n",
            image="i",
            framework=framework,
            nodes=2,
            gpus_per_node=4 if architecture.startswith("gb") else 8,
            enable_mnnvl=mnnvl,
            run_id="r1",
            trainer=trainers[framework],
        )
        objects = dict((obj["kind"], obj) for obj in plan_workload(config, {"platform": platform, "gpuArchitecture": architecture})["objects"])
        where = "%s/%s/%s" % (platform, architecture, framework)
        for container in _containers(objects["TrainingRuntime"], []):
            env = dict((item["name"], item.get("value")) for item in container.get("env") or [])  # the last of a name wins
            if container.get("name") == "node" or any(name.startswith("NCCL_") for name in env):
                assert env.get("NCCL_DEBUG") == "INFO", (where, container.get("name"))
                assert "INIT" in env.get("NCCL_DEBUG_SUBSYS", "INIT").split(","), (where, container.get("name"))
        if framework == "mpi":
            words = _mpirun_words(objects["TrainJob"]["spec"]["trainer"])
            exported = [words[index + 1] for index, word in enumerate(words[:-1]) if word == "-x"]
            debug = [item.split("=", 1)[1] for item in exported if item.startswith("NCCL_DEBUG=")]
            subsystems = [item.split("=", 1)[1] for item in exported if item.startswith("NCCL_DEBUG_SUBSYS=")]
            assert debug and debug[-1] == "INFO", where
            assert all("INIT" in value.split(",") for value in subsystems), where


# What the mutation run of judging/transport.py (docs/mutation.md) found untested.


def test_the_first_channel_line_of_a_network_is_kept_as_evidence_and_not_its_repeats():
    first = "h-0:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/1"
    again = "h-0:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/Socket/1"
    entry = tp.parse_transport("\n".join([first, again]))["hosts"]["h-0"]
    assert entry["channels"] == {"Socket": 2}
    kept = "\n".join(entry["lines"]) if isinstance(entry["lines"], list) else str(entry["lines"])
    assert "Channel 00/0" in kept and "Channel 01/0" not in kept, entry["lines"]


def test_a_network_the_table_lacks_is_a_note():
    text = "h-0:1:2 [0] NCCL INFO Using network NewNet_v9\nh-1:1:2 [0] NCCL INFO Using network NewNet_v9"
    proof = tp.check(tp.parse_transport(text), {"transport": "ib", "source": "test"}, {"nodes": 2})
    assert proof["note"] is True and proof["verdict"] == "pass" and proof["seen"] == "unknown", proof
    assert "NewNet_v9" in proof["reason"]


def test_the_evidence_names_at_most_twenty_hosts_the_first_by_name():
    # A large cluster's record stays bounded (docs/verdicts.md): 25 hosts on Socket, the first 20 by name are listed.
    lines = ["h-%02d:1:2 [0] NCCL INFO Using network Socket" % index for index in range(25)]
    proof = tp.check(tp.parse_transport("\n".join(lines)), {"transport": "efa", "source": "test"}, {"nodes": 25})
    assert proof["verdict"] == "fail" and [item["host"] for item in proof["evidence"]] == ["h-%02d" % index for index in range(20)]
    assert "(network Socket, NCCL's net_socket) on 25 of 25 host(s): h-00, h-01, h-02, h-03, h-04, h-05, ..." in proof["reason"], proof["reason"]


def test_a_host_whose_channels_name_two_nets_names_the_most_used_first():
    # Without a 'Using network' line the channel lines name the net; IB on one channel, then Socket on two.
    lines = [
        "h-0:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0",
        "h-0:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/Socket/0",
        "h-0:1:2 [0] NCCL INFO Channel 02/0 : 0[0] -> 8[0] [send] via NET/Socket/0",
    ]
    entry = tp.parse_transport("\n".join(lines))["hosts"]["h-0"]
    assert entry["channels"] == {"IB": 1, "Socket": 2} and entry["network"] == "Socket, IB" and entry["transport"] == "mixed", entry
