# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The role's stages end to end on the test fleet: playbooks/burnin.yml with the default burnin_stages
(node, fleet, isolation) on one AWS H100 cluster of several GPU nodes, one of which has a slow own all_reduce
(tests/fleet/default-fleet.yml: `node_busbw` of aws-usw2-h100-nodestage).

1. The node stage runs one TrainJob (`<entry>-<run id>-node`, framework exec) with one pod on every GPU node at once,
   each running all_reduce_perf -g 8; each pod's output is judged alone against the single-node thresholds: the slow
   node fails with its busbw, the others pass; the cluster fails, its reason naming the node. The fleet stage still
   runs its own TrainJob (`<entry>-<run id>`) over burnin_nodes nodes and is judged as before. Reports: the stages,
   their attempts and the per-node table in JSON, JUnit (a testcase per node) and HTML.
2. burnin_repeats=1: the failed node stage runs again (`-node-2`), every attempt kept and reported; the fleet stage,
   which passed, runs once.
3. On the GB200 cluster, after pods that held every GPU were deleted while they ran (their Jobs replace only failed
   pods, so the Job controller keeps its finalizer until the pod is Failed, as a kubelet reports it): the pods end
   and go as on a real kubelet (tests/fleet/kwok-stages.yaml gpufleet-pod-stop), and the default stages run there.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOK = REPO / "playbooks" / "burnin.yml"
CLUSTER = "aws-usw2-h100-nodestage"
GB200 = "azure-eus-gb200-a"
NAMESPACE = "stages-e2e"
ENTRY = "nccl-stages"
RUN1, RUN2 = "stages-1", "stages-2"
TRAINER = "trainer.kubeflow.org/v1alpha1"
JOBSET = "jobset.sigs.k8s.io/jobset-name"


class Run:
    def __init__(self, proc, reports, run_id, cluster=CLUSTER):
        self.rc, self.output = proc.returncode, proc.stdout
        self.dir = Path(reports) / run_id
        summary = self.dir / "summary.json"
        self.results = json.loads(summary.read_text()) if summary.is_file() else {}
        self.result = self.results.get(cluster) or {}

    def __repr__(self):
        # The cluster's own verdict first: pytest cuts a long repr, and the recap alone does not say why a run ended.
        reason = dict((key, self.result.get(key)) for key in ("status", "reason", "error") if key in self.result)
        return "Run(rc=%s, %s)\n%s" % (self.rc, json.dumps(reason)[:2000], self.output[-8000:])


def playbook(fleet, reports, run_id, *extra, cluster=CLUSTER):
    command = ["ansible-playbook", str(PLAYBOOK), "-i", fleet.inventory, "--limit", cluster]
    for name, value in (
        ("burnin_run_id", run_id),
        ("burnin_namespace", NAMESPACE),
        ("burnin_entry_name", ENTRY),
        ("burnin_report_dir", str(reports)),
        ("burnin_poll_interval", "1"),
        ("burnin_timeout", "120"),
    ) + tuple(extra):
        command += ["-e", "%s=%s" % (name, value)]
    env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=900)
    return Run(proc, reports, run_id, cluster)


def gpu_nodes(fleet):
    from kubernetes.client import CoreV1Api

    nodes = CoreV1Api(fleet.api_client(CLUSTER)).list_node(label_selector="nvidia.com/gpu.present=true").items
    return sorted(node.metadata.name for node in nodes)


def slow_node(fleet):
    """The node the fleet spec's node_busbw makes slow (its real name: the spec says <cluster>-gpu-<i>)."""
    slow = sorted(fleet.cluster(CLUSTER).get("node_busbw") or {})
    assert len(slow) == 1, fleet.cluster(CLUSTER)
    return slow[0]


@pytest.fixture(scope="module")
def work(fleet, tmp_path_factory):
    if CLUSTER not in fleet.clusters:
        pytest.fail("the fleet has no cluster %s (tests/fleet/default-fleet.yml)" % CLUSTER, pytrace=False)
    path = tmp_path_factory.mktemp("stages-e2e")
    yield path
    from kubernetes.client import CoreV1Api

    try:
        CoreV1Api(fleet.api_client(CLUSTER)).delete_namespace(NAMESPACE)
    except Exception:  # noqa: BLE001 - best effort: the namespace may not exist
        pass


@pytest.fixture(scope="module")
def first(fleet, work):
    return playbook(fleet, work / "reports", RUN1)


@pytest.fixture(scope="module")
def repeated(fleet, work, first):
    # Run 1's fleet-stage workers terminate for their grace period after the job (holding two nodes' GPUs): run 2's
    # node pods would double up on the free node, which the node stage warns of (its coverage check) but this test is
    # about repeats, so it starts once they are gone.
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(fleet.api_client(CLUSTER))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pods = core.list_namespaced_pod(NAMESPACE).items
        if not [pod for pod in pods if pod.metadata.deletion_timestamp or pod.status.phase in ("Pending", "Running")]:
            break
        time.sleep(1)
    return playbook(fleet, work / "reports", RUN2, ("burnin_repeats", "1"))


def test_node_stage_runs_one_pod_on_every_gpu_node(fleet, first):
    slow = slow_node(fleet)
    nodes = gpu_nodes(fleet)
    assert len(nodes) >= 3 and slow in nodes, nodes
    trainjobs = fleet.dynamic(CLUSTER).resources.get(api_version=TRAINER, kind="TrainJob")
    node_job = trainjobs.get(name="%s-%s-node" % (ENTRY, RUN1), namespace=NAMESPACE).to_dict()
    # One exec TrainJob over every GPU node, its own runtime; each pod drives all 8 GPUs of its node.
    assert node_job["spec"]["trainer"]["numNodes"] == len(nodes), node_job["spec"]
    assert node_job["spec"]["runtimeRef"]["name"] == "%s-node-runtime" % ENTRY
    assert node_job["metadata"]["labels"]["gpufleet.burnin/entry"] == ENTRY
    words = node_job["spec"]["trainer"]["command"] + node_job["spec"]["trainer"]["args"]
    assert words[2].endswith("/all_reduce_perf") and words[words.index("-g") + 1] == "8", words
    assert [c["type"] for c in node_job["status"]["conditions"] if c["status"] == "True"] == ["Complete"]
    stage = first.result["stages"][0]
    assert stage["stage"] == "node" and len(stage["attempts"]) == 1, first
    ran_on = [row["node"] for row in stage["attempts"][0]["nodes"]]
    assert sorted(ran_on) == nodes and len(set(row["pod"] for row in stage["attempts"][0]["nodes"])) == len(nodes)


def test_the_slow_node_is_named_with_its_busbw(fleet, first):
    slow = slow_node(fleet)
    verdicts = first.result["node_verdicts"]
    assert verdicts[slow]["verdict"] == "fail", first
    assert "node: busbw 30" in verdicts[slow]["reasons"][0] and "h100-single-node-all-reduce-peak" in verdicts[slow]["reasons"][0]
    healthy = [node for node in gpu_nodes(fleet) if node != slow]
    assert all(verdicts[node]["verdict"] == "pass" for node in healthy), verdicts
    found = [f for f in first.result["node_findings"] if f["stage"] == "node" and f["node"] == slow][0]
    assert 290 <= found["evidence"]["busbw"] <= 310 and found["evidence"]["size"] == 16 * 2**30
    healthy_bw = [f["evidence"]["busbw"] for f in first.result["node_findings"] if f["stage"] == "node" and f["node"] != slow]
    assert len(healthy_bw) == len(healthy) and min(healthy_bw) >= 432
    # The stage fails the cluster, and its reason names the node.
    stage = first.result["stages"][0]
    assert stage["verdict"] == "fail" and slow in stage["reason"]
    assert first.rc == 2 and "node stage fail: %s busbw 30" % slow in first.result["reason"], first
    assert first.result["stage"] == "verdict"


def test_fleet_stage_runs_and_is_judged_as_before(fleet, first):
    trainjobs = fleet.dynamic(CLUSTER).resources.get(api_version=TRAINER, kind="TrainJob")
    fleet_job = trainjobs.get(name="%s-%s" % (ENTRY, RUN1), namespace=NAMESPACE).to_dict()
    assert fleet_job["spec"]["runtimeRef"]["name"] == "%s-runtime" % ENTRY and fleet_job["spec"]["trainer"]["numNodes"] == 2
    verdict = first.result["verdict"]
    assert verdict["verdict"] == "pass" and [t["id"] for t in verdict["thresholds"]] == ["aws-h100-all-reduce-peak", "aws-h100-all-reduce-sizes"], first
    assert len(verdict["succeeded_nodes"]) == 2
    assert [s["stage"] for s in first.result["stages"]] == ["node", "fleet"]
    fleet_stage = first.result["stages"][1]
    assert fleet_stage["verdict"] == "pass" and fleet_stage["attempts"][0]["trainjob"] == "%s-%s" % (ENTRY, RUN1)
    # Both TrainJobs, and both runtimes, were applied.
    assert "TrainJob/%s-%s-node" % (ENTRY, RUN1) in first.result["applied"] and "TrainJob/%s-%s" % (ENTRY, RUN1) in first.result["applied"]
    # The fleet stage's nodes have a finding of their own too.
    assert any(f["stage"] == "fleet" for f in first.result["node_findings"])


def test_reports_show_stages_attempts_and_nodes(fleet, first):
    slow = slow_node(fleet)
    report = json.loads((first.dir / "burnin-report.json").read_text())
    cluster = report["clusters"][0]
    assert [(s["stage"], s["verdict"], len(s["attempts"])) for s in cluster["stages"]] == [("node", "fail", 1), ("fleet", "pass", 1)]
    assert cluster["stages"][0]["attempts"][0]["trainjob"] == "%s-%s-node" % (ENTRY, RUN1)
    nodes = dict((row["node"], row) for row in cluster["nodes"])
    assert nodes[slow]["verdict"] == "fail" and any("busbw" in reason for reason in nodes[slow]["reasons"])
    assert cluster["verdict"] == "fail"

    root = ET.parse(str(first.dir / "burnin-report.junit.xml")).getroot()
    node_cases = [case for case in root.iter("testcase") if case.get("classname") == "gpufleet.burnin.%s.nodes" % CLUSTER]
    assert sorted(case.get("name") for case in node_cases) == gpu_nodes(fleet)
    slow_case = [case for case in node_cases if case.get("name") == slow][0]
    assert slow_case.find("failure") is not None and "busbw" in slow_case.find("failure").get("message")

    html = (first.dir / "burnin-report.html").read_text()
    assert 'class="nodes"' in html and 'class="stages"' in html and slow in html
    assert "%s-%s-node" % (ENTRY, RUN1) in html


def test_repeats_rerun_the_failed_stage_and_keep_every_attempt(fleet, repeated):
    slow = slow_node(fleet)
    stages = dict((s["stage"], s) for s in repeated.result["stages"])
    node = stages["node"]
    assert [a["trainjob"] for a in node["attempts"]] == ["%s-%s-node" % (ENTRY, RUN2), "%s-%s-node-2" % (ENTRY, RUN2)], repeated
    assert [a["verdict"] for a in node["attempts"]] == ["fail", "fail"] and node["verdict"] == "fail"
    # The fleet stage passed at once: no second attempt.
    assert [a["trainjob"] for a in stages["fleet"]["attempts"]] == ["%s-%s" % (ENTRY, RUN2)]
    trainjobs = fleet.dynamic(CLUSTER).resources.get(api_version=TRAINER, kind="TrainJob")
    names = sorted(
        item["metadata"]["name"] for item in trainjobs.get(namespace=NAMESPACE, label_selector="gpufleet.burnin/run-id=%s" % RUN2).to_dict()["items"]
    )
    assert names == sorted(["%s-%s" % (ENTRY, RUN2), "%s-%s-node" % (ENTRY, RUN2), "%s-%s-node-2" % (ENTRY, RUN2)])
    report = json.loads((repeated.dir / "burnin-report.json").read_text())
    attempts = report["clusters"][0]["stages"][0]["attempts"]
    assert [a["attempt"] for a in attempts] == [1, 2] and all(slow in a["reason"] for a in attempts)
    html = (repeated.dir / "burnin-report.html").read_text()
    assert "%s-%s-node-2" % (ENTRY, RUN2) in html


def test_default_stages_run_on_gb200_after_running_pods_were_deleted(fleet, work):
    from kubernetes.client import BatchV1Api, CoreV1Api

    if GB200 not in fleet.clusters:
        pytest.fail("the fleet has no cluster %s (tests/fleet/default-fleet.yml)" % GB200, pytrace=False)
    core, batch = CoreV1Api(fleet.api_client(GB200)), BatchV1Api(fleet.api_client(GB200))
    nodes = core.list_node(label_selector="nvidia.com/gpu.present=true").items
    assert len(nodes) >= 2, [node.metadata.name for node in nodes]
    namespace = "gb200-held"
    core.create_namespace({"metadata": {"name": namespace}})
    for index, node in enumerate(nodes):
        gpus = node.status.capacity["nvidia.com/gpu"]
        pod = {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 2,
            "nodeSelector": {"kubernetes.io/hostname": node.metadata.name},
            "containers": [{"name": "hold", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
        }
        job = {"metadata": {"name": "hold-%d" % index}, "spec": {"podReplacementPolicy": "Failed", "backoffLimit": 0, "template": {"spec": pod}}}
        batch.create_namespaced_job(namespace, job)

    def pods():
        return core.list_namespaced_pod(namespace).items

    deadline = time.monotonic() + 60
    while not (len(pods()) == len(nodes) and all(p.status.phase == "Running" for p in pods())):
        assert time.monotonic() < deadline, [(p.metadata.name, p.status.phase) for p in pods()]
        time.sleep(1)
    for pod in pods():
        core.delete_namespaced_pod(pod.metadata.name, namespace)
    phases, deadline = set(), time.monotonic() + 60
    while pods():
        phases.update(p.status.phase for p in pods())
        assert time.monotonic() < deadline, "deleted pods still there: %s" % [(p.metadata.name, p.status.phase, p.metadata.finalizers) for p in pods()]
        time.sleep(0.5)
    assert "Failed" in phases, phases
    core.delete_namespace(namespace)

    run = playbook(fleet, work / "reports", "stages-gb200", cluster=GB200)
    stages = dict((record["stage"], record) for record in run.result.get("stages") or [])
    assert set(stages) >= {"node", "fleet"}, run
    node_rows = stages["node"]["attempts"][0]["nodes"]
    # Every GPU node ran its node-stage pod (none stayed Pending behind the deleted ones' GPUs).
    assert sorted(row["node"] for row in node_rows) == sorted(node.metadata.name for node in nodes), run
    # The fleet stage's TrainJob ran as the fleet spec makes it end on this cluster (Failed, not a Timeout).
    assert stages["fleet"]["attempts"][0]["outcome"] == fleet.cluster(GB200)["trainjob_outcome"], run
