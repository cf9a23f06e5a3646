# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The dcgm-diag workload end to end on the test fleet: playbooks/burnin.yml with ``burnin_workload: dcgm-diag``.

Trainer makes one pod per node (framework exec), the scheduler binds them to the KWOK nodes, the fleet's agent prints
DCGM's diagnostic JSON for each (tests/fleet/dcgm_logs.py: every GPU passes except the cluster's
``dcgm_failing_gpus``), KWOK serves the logs, the role reads every pod's log whole and the verdict judges each one
(judging/dcgm.py). The cluster with a failing GPU (``aws-usw2-h100-nodes``: GPU 5 of its fourth node) fails, naming
the node, the GPU and the test; a cluster without one passes; both carry ``dcgm`` findings per node.

The fleet needs a cluster with ``dcgm_failing_gpus`` and one without, both of nodes that match their group
(tests/fleet/default-fleet.yml has them; so has a spec of aws-usw2-h100-nodes and one clean cluster).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent.parent
NAMESPACE = "dcgm-e2e"
ENTRY = "dcgm-burnin"
RUN = "dcgm-1"
FAILING = "aws-usw2-h100-nodes"
# Its third node's dcgmi never ends (tests/fleet/default-fleet.yml dcgm_hung_nodes); the workload's timeout names it.
HUNG = "aws-usw2-h100-nodestage"
HUNG_NODE = "%s-gpu-2" % HUNG

sys.path.insert(0, str(REPO / "tests" / "fleet"))
import fleet_nodes  # noqa: E402  pylint: disable=wrong-import-position


def clean_cluster(fleet):
    """A cluster of the fleet whose nodes match their group, whose TrainJobs complete and no GPU of which fails."""
    for name in sorted(fleet.clusters):
        record = fleet.cluster(name)
        if (
            name not in (FAILING, HUNG)
            and not record.get("dcgm_hung_nodes")
            and record.get("nodes_match_group", True)
            and record.get("trainjob_outcome") == "Complete"
            and not record.get("dcgm_failing_gpus")
        ):
            return name
    return None


@pytest.fixture(scope="module")
def run(fleet_crds, tmp_path_factory, burnin_playbook):
    fleet = fleet_crds
    if FAILING not in fleet.clusters or HUNG not in fleet.clusters or clean_cluster(fleet) is None:
        pytest.fail("the fleet needs %s, %s and a cluster without dcgm_failing_gpus (tests/e2e/test_dcgm.py)" % (FAILING, HUNG), pytrace=False)
    clean = clean_cluster(fleet)
    work = tmp_path_factory.mktemp("dcgm-e2e")
    reports = work / "reports"
    # One pod per GPU node: burnin_nodes is each cluster's GPU node count.
    hosts = work / "hosts.yml"
    nodes = dict((name, gpu_nodes(fleet, name)) for name in (FAILING, clean, HUNG))
    hosts.write_text(yaml.safe_dump({"all": {"hosts": dict((name, {"burnin_nodes": count}) for name, count in nodes.items())}}))
    # The workload alone, as the fleet stage (the dcgm stage is test_role.py's, on the default fleet).
    done = burnin_playbook(
        fleet,
        reports,
        RUN,
        [FAILING, clean, HUNG],
        "-i",
        str(hosts),
        "-e",
        "burnin_workload=dcgm-diag",
        "-e",
        '{"burnin_stages": ["fleet"]}',
        namespace=NAMESPACE,
        entry=ENTRY,
        timeout=120,
    )
    yield {"rc": done.rc, "output": done.output, "results": done.results, "clean": clean, "nodes": nodes, "dir": done.dir}
    from kubernetes.client import CoreV1Api

    for cluster in (FAILING, clean, HUNG):
        try:
            CoreV1Api(fleet.api_client(cluster)).delete_namespace(NAMESPACE)
        except Exception:  # noqa: BLE001 - best effort: the namespace may not exist
            pass


def gpu_nodes(fleet, cluster):
    from kubernetes.client import CoreV1Api

    return len(CoreV1Api(fleet.api_client(cluster)).list_node(label_selector="nvidia.com/gpu.present=true").items)


def failing_node(fleet):
    """The name of the fourth node of FAILING (what the spec calls aws-usw2-h100-nodes-gpu-3), as the fleet names it."""
    record = fleet.cluster(FAILING)
    return fleet_nodes.gpu_node_name(record.get("node_platform") or "aws", FAILING, "%s-gpu-3" % FAILING, record.get("node_naming") or "platform")


def test_the_failing_gpu_fails_its_cluster_naming_node_gpu_and_test(run, fleet_crds):
    results = run["results"]
    assert set(results) == {FAILING, run["clean"], HUNG}, run["output"][-6000:]
    verdict = results[FAILING]["verdict"]
    node = failing_node(fleet_crds)
    assert verdict["verdict"] == "fail" and verdict["results"] == "dcgm-diag", run["output"][-6000:]
    assert verdict["reason"].startswith("node %s GPU 5: memory (Hardware) failed: Detected 14 volatile double-bit ECC error(s) in GPU 5." % node)
    # dcgmi prints it as "Fail"; its error_severity 2 (ISOLATE) is what makes it a failure.
    assert verdict["reason"].endswith("(DCGM error 4) [DCGM severity ISOLATE: isolate the GPU]"), verdict["reason"]
    assert results[FAILING]["stage"] == "verdict"
    assert results[FAILING]["reason"].endswith("(failed nodes: %s)" % node)
    # Every node was judged from its own pod's whole log: 4 nodes of 8 GPUs, one GPU failed.
    assert verdict["metrics"]["nodes_judged"] == 4 and verdict["metrics"]["gpus_judged"] == 32 and verdict["metrics"]["failed_gpus"] == 1
    assert verdict["failed_nodes"] == [node]
    # The failing cluster fails its host after the summary; the clean one passes.
    assert run["rc"] == 2, run["output"][-6000:]


def test_dcgm_findings_name_the_bad_node_and_pass_the_others(run, fleet_crds):
    record = run["results"][FAILING]
    node = failing_node(fleet_crds)
    verdicts = dict((name, entry["verdict"]) for name, entry in record["node_verdicts"].items())
    assert len(verdicts) == 4 and verdicts.pop(node) == "fail" and set(verdicts.values()) == {"pass"}
    bad = [item for item in record["node_findings"] if item["node"] == node]
    assert [(item["stage"], item["verdict"]) for item in bad] == [("dcgm", "fail")]
    assert bad[0]["evidence"]["failed_gpus"] == [5] and bad[0]["evidence"]["failures"][0]["test"] == "memory"
    assert record["node_verdicts"][node]["reasons"][0].startswith("dcgm: node %s GPU 5: memory (Hardware) failed" % node)


def test_a_cluster_without_failing_gpus_passes(run):
    record = run["results"][run["clean"]]
    verdict = record["verdict"]
    assert verdict["verdict"] == "pass", run["output"][-6000:]
    count = run["nodes"][run["clean"]]
    assert verdict["reason"] == "TrainJob Complete; DCGM diagnostic passed on %d node(s), %d GPU(s)" % (count, 8 * count)
    assert [item["verdict"] for item in record["node_findings"]] == ["pass"] * count
    assert set(item["stage"] for item in record["node_findings"]) == {"dcgm"}


def test_the_reports_show_the_failing_gpu(run, fleet_crds):
    node = failing_node(fleet_crds)
    html = (run["dir"] / "burnin-report.html").read_text()
    assert "node %s GPU 5: memory (Hardware) failed" % node in html
    report = json.loads((run["dir"] / "burnin-report.json").read_text())
    text = json.dumps(report)
    assert "node %s GPU 5: memory (Hardware) failed" % node in text


def test_a_hung_dcgmi_is_a_named_error_of_its_node_within_the_timeout(run, fleet_crds):
    record = fleet_crds.cluster(HUNG)
    node = fleet_nodes.gpu_node_name(record.get("node_platform") or "aws", HUNG, HUNG_NODE, record.get("node_naming") or "platform")
    verdict = run["results"][HUNG]["verdict"]
    assert verdict["verdict"] == "error", run["output"][-6000:]
    # The level-2 default timeout (templates/workloads/dcgm-diag.yaml), named with the node and its pod.
    assert verdict["reason"].startswith("node %s (pod " % node), verdict["reason"]
    assert "dcgmi diag did not finish within its timeout of 900 s and was stopped" in verdict["reason"]
    # The other nodes of the cluster were judged from their JSON and passed.
    assert verdict["metrics"]["nodes_judged"] == run["nodes"][HUNG] - 1
