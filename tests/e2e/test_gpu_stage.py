# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The gpu stage end to end on the shared test fleet: playbooks/burnin.yml with ``burnin_stages: [gpu]``.

The stage runs the catalogue's gpu-burn workload as its own TrainJob (``<entry>-<run id>-gpu``, framework exec), one
pod on every GPU node; the fleet's agent prints the workload's per-GPU lines for each (tests/fleet/gpu_logs.py:
every GPU at the published H100 figures except the spec's ``slow_gpus``), the role reads every pod's log and judges
each GPU (plugins/module_utils/judging/gpu.py). ``aws-usw2-h100-nodes`` (tests/fleet/default-fleet.yml: GPU 6 of
its second node at 60 % bf16 TFLOPS) fails, naming node, GPU index and UUID with the figures and thresholds; its
other three nodes and every GPU of a clean cluster pass. One TrainJob per cluster (the CI time budget), run with
``burnin_stage_params.gpu`` set (seconds 5, sibling_percent 20): the seconds reach the pod's script, the percent the
verdict.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
NAMESPACE = "gpu-e2e"
ENTRY = "gpu-burnin"
RUN = "gpu-1"
SLOW = "aws-usw2-h100-nodes"
CLEAN = "gcp-usc1-h100-a"
TRAINER = "trainer.kubeflow.org/v1alpha1"

sys.path.insert(0, str(REPO / "tests" / "fleet"))
import fleet_nodes  # noqa: E402  pylint: disable=wrong-import-position
import gpu_logs  # noqa: E402  pylint: disable=wrong-import-position


def node_name(fleet, cluster, spec_name):
    record = fleet.cluster(cluster)
    return fleet_nodes.gpu_node_name(record.get("node_platform") or record["platform"], cluster, spec_name, record.get("node_naming") or "platform")


def gpu_nodes(fleet, cluster):
    from kubernetes.client import CoreV1Api

    return sorted(node.metadata.name for node in CoreV1Api(fleet.api_client(cluster)).list_node(label_selector="nvidia.com/gpu.present=true").items)


@pytest.fixture(scope="module")
def run(fleet_crds, tmp_path_factory, burnin_playbook):
    fleet = fleet_crds
    if SLOW not in fleet.clusters or CLEAN not in fleet.clusters or not fleet.cluster(SLOW).get("slow_gpus"):
        pytest.fail("the fleet needs %s with slow_gpus and %s (tests/fleet/default-fleet.yml)" % (SLOW, CLEAN), pytrace=False)
    work = tmp_path_factory.mktemp("gpu-e2e")
    extra = json.dumps({"burnin_stages": ["gpu"], "burnin_stage_params": {"gpu": {"seconds": 5, "sibling_percent": 20}}})
    done = burnin_playbook(fleet, work / "reports", RUN, [SLOW, CLEAN], "-e", extra, namespace=NAMESPACE, entry=ENTRY, timeout=120)
    yield done
    from kubernetes.client import CoreV1Api

    for cluster in (SLOW, CLEAN):
        try:
            CoreV1Api(fleet.api_client(cluster)).delete_namespace(NAMESPACE)
        except Exception:  # noqa: BLE001 - best effort: the namespace may not exist
            pass


def test_the_stage_runs_one_gpu_burn_pod_on_every_gpu_node(run, fleet_crds):
    trainjobs = fleet_crds.dynamic(SLOW).resources.get(api_version=TRAINER, kind="TrainJob")
    job = trainjobs.get(name="%s-%s-gpu" % (ENTRY, RUN), namespace=NAMESPACE).to_dict()
    nodes = gpu_nodes(fleet_crds, SLOW)
    assert job["spec"]["trainer"]["numNodes"] == len(nodes) == 4, job["spec"]
    assert job["spec"]["trainer"]["command"] == ["python", "-c"] and gpu_logs.MARKER in job["spec"]["trainer"]["args"][0]
    # burnin_stage_params.gpu.seconds in the pod's script; the other parameters at their defaults.
    assert "N, SECONDS, COPY_BYTES, COPY_ITERS = 8192, 5, 1073741824, 50\n" in job["spec"]["trainer"]["args"][0]
    record = run.results[SLOW]
    assert [stage["stage"] for stage in record["stages"]] == ["gpu"], run
    attempt = record["stages"][0]["attempts"][0]
    assert sorted(row["node"] for row in attempt["nodes"]) == nodes and len(set(row["pod"] for row in attempt["nodes"])) == 4


def test_the_slow_gpu_is_named_by_node_index_and_uuid(run, fleet_crds):
    record = run.results[SLOW]
    slow_node = node_name(fleet_crds, SLOW, "%s-gpu-1" % SLOW)
    uuid = gpu_logs.gpu_uuid(slow_node, 6)
    stage = record["stages"][0]
    assert stage["verdict"] == "fail", run
    assert stage["reason"].startswith("node %s GPU 6 (%s): bf16 matmul 4" % (slow_node, uuid)), stage["reason"]
    # the absolute floor warns only (no sustained all-GPU figure); its siblings and its throttle reason fail it
    assert "below the fail threshold 635.6 (h100-tflops; warn only" in stage["reason"] and "below the median" in stage["reason"]
    assert "throttled: hw_thermal_slowdown (NVML clocks-event reasons while it burned; SM clock down to 1140 MHz" in stage["reason"]
    assert "(more than 20 %)" in stage["reason"], stage["reason"]  # burnin_stage_params.gpu.sibling_percent
    assert run.rc == 2 and slow_node in record["reason"], run
    verdicts = dict((node, entry["verdict"]) for node, entry in record["node_verdicts"].items())
    assert verdicts.pop(slow_node) == "fail" and len(verdicts) == 3 and set(verdicts.values()) == {"pass"}, verdicts
    found = [item for item in record["node_findings"] if item["node"] == slow_node and item["stage"] == "gpu"]
    assert len(found) == 1 and found[0]["verdict"] == "fail"
    evidence = found[0]["evidence"]
    assert evidence["bad_gpus"] == [{"index": 6, "uuid": uuid, "result": "fail"}]
    gpus = dict((item["index"], item) for item in evidence["gpus"])
    assert sorted(gpus) == list(range(8)) and gpus[6]["uuid"] == uuid
    assert gpus[6]["figures"]["tflops"] < gpus[6]["figures"]["tflops_warn"] == 635.6 and gpus[6]["figures"]["gbps"] >= 2250
    assert all(gpus[index]["result"] == "pass" for index in range(8) if index != 6)
    assert [item["id"] for item in evidence["thresholds"]] == ["h100-tflops", "h100-gbps"]
    assert evidence["sibling_percent"] == 20.0


def test_a_cluster_without_slow_gpus_passes_every_gpu(run, fleet_crds):
    record = run.results[CLEAN]
    stage = record["stages"][0]
    assert stage["verdict"] == "pass", run
    found = [item for item in record["node_findings"] if item["stage"] == "gpu"]
    assert len(found) == len(gpu_nodes(fleet_crds, CLEAN)) and set(item["verdict"] for item in found) == {"pass"}
    assert all(len(item["evidence"]["gpus"]) == 8 for item in found)


def test_the_reports_carry_the_slow_gpu(run, fleet_crds):
    slow_node = node_name(fleet_crds, SLOW, "%s-gpu-1" % SLOW)
    text = json.dumps(json.loads((run.dir / "burnin-report.json").read_text()))
    assert "node %s GPU 6 (%s)" % (slow_node, gpu_logs.gpu_uuid(slow_node, 6)) in text
    assert "node %s GPU 6" % slow_node in (run.dir / "burnin-report.html").read_text()
