# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Burn-in verdicts end to end on the real test fleet: playbooks/burnin.yml as a user runs it.

Trainer, JobSet and the Job controller make each TrainJob's pods, the scheduler binds them to KWOK nodes, and the
fleet's agent writes nccl-tests output per cluster (tests/fleet/default-fleet.yml: aws below the pass threshold but
in the warning band, gcp good, azure truncated with a Failed TrainJob); KWOK serves it, so the role's
kubernetes.core.k8s_log reads the logs through the API servers. Nothing here is mocked: parser, thresholds,
verdicts, attribution and reports run as in production.

1. The default workload on aws, gcp and azure: exactly one pass, one warn and one fail, in the summary, the JSON,
   JUnit and HTML reports and the set_stats artifact; the failing cluster fails, the others go on; the failed node
   is the one the killed rank ran on.
2. Per-host inventory settings: gcp's launcher prints far-below numbers (a Complete TrainJob that fails its
   verdict), aws gets a threshold of its own that it passes, azure a bad threshold record (a clear error before
   anything is applied).
3. Replayed real output (tests/fleet/nccl_logs.py REPLAYS: published logs of tests/fixtures/real, their hosts
   rewritten to the workers' hostnames): a crashed run (NVIDIA/nccl-tests#322's `Test NCCL failure` lines) fails its
   hosts' nodes on gcp, an HPC-X `IBext` plugin log passes azure's InfiniBand transport check, a published fall back to
   `Using network Socket` fails aws's EFA check. Fleet stage only, to keep the run short.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import xml.etree.ElementTree as ET

import pytest
import yaml

NAMESPACE = "verdict-e2e"
ENTRY = "nccl-verdict"
AWS, GCP, AZURE = "aws-use1-h100-a", "gcp-usc1-h100-a", "azure-eus-gb200-a"
RUN1, RUN2, RUN3 = "verdict-1", "verdict-2", "verdict-3"
JOBSET = "jobset.sigs.k8s.io/jobset-name"
OWN_THRESHOLD = {
    "id": "fleet-aws-h100-peak",
    "platform": "aws",
    "gpu_architecture": "h100",
    "collective": "all_reduce",
    "metric": "peak",
    "pass": 255,
    "warn": 200,
    "source": "our acceptance test",
}


def pods_of(fleet, cluster, trainjob):
    from kubernetes.client import CoreV1Api

    return CoreV1Api(fleet.api_client(cluster)).list_namespaced_pod(NAMESPACE, label_selector="%s=%s" % (JOBSET, trainjob)).items


@pytest.fixture(scope="module")
def work(fleet_crds, tmp_path_factory):
    path = tmp_path_factory.mktemp("verdict-e2e")
    yield path
    from kubernetes.client import CoreV1Api

    for cluster in (AWS, GCP, AZURE):
        try:
            CoreV1Api(fleet_crds.api_client(cluster)).delete_namespace(NAMESPACE)
        except Exception:  # noqa: BLE001 - best effort: the namespace may not exist
            pass


@pytest.fixture(scope="module")
def first(fleet_crds, work, burnin_playbook):
    return burnin_playbook(fleet_crds, work / "reports", RUN1, [AWS, GCP, AZURE], namespace=NAMESPACE, entry=ENTRY)


@pytest.fixture(scope="module")
def second(fleet_crds, work, first, burnin_playbook):
    extra = work / "per-host.yml"
    extra.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "hosts": {
                        GCP: {"burnin_trainjob_annotations": {"gpufleet.test/nccl-log": "far-below"}},
                        AWS: {"burnin_thresholds": [OWN_THRESHOLD]},
                        AZURE: {"burnin_thresholds": [{"collective": "all_reduce", "metric": "median", "pass": 100}]},
                    }
                }
            }
        )
    )
    return burnin_playbook(fleet_crds, work / "reports", RUN2, [AWS, GCP, AZURE], "-i", str(extra), namespace=NAMESPACE, entry=ENTRY)


@pytest.fixture(scope="module")
def third(fleet_crds, work, second, burnin_playbook):
    def replay(name):
        # Complete: whatever fails must come from the replayed log alone, not from a pod's exit.
        return {"burnin_stages": ["fleet"], "burnin_trainjob_annotations": {"gpufleet.test/nccl-replay": name, "gpufleet.test/outcome": "Complete"}}

    extra = work / "replay.yml"
    extra.write_text(yaml.safe_dump({"all": {"hosts": {GCP: replay("crash"), AZURE: replay("ib-plugin"), AWS: replay("socket-fallback")}}}))
    return burnin_playbook(fleet_crds, work / "reports", RUN3, [AWS, GCP, AZURE], "-i", str(extra), namespace=NAMESPACE, entry=ENTRY)


def test_one_pass_one_warn_one_fail_and_the_failing_cluster_alone_fails(first):
    verdicts = dict((name, (r.get("verdict") or {}).get("verdict")) for name, r in first.results.items())
    assert verdicts == {AWS: "warn", GCP: "pass", AZURE: "fail"}, first
    outcomes = dict((name, r["outcome"]) for name, r in first.results.items())
    assert outcomes == {AWS: "Complete", GCP: "Complete", AZURE: "Failed"}
    # The failing cluster fails its host after the summary (exit 2); the others ran to the end and pass.
    assert first.rc == 2, first
    assert first.recap() == {AWS: 0, GCP: 0, AZURE: 1}, first
    assert first.results[AZURE]["stage"] == "verdict"
    assert first.results[AZURE]["reason"].startswith("verdict fail: TrainJob Failed: FailedJobs")
    assert first.results[AWS]["stage"] == "wait" and first.results[AWS]["reason"].startswith("AllJobsCompleted")


def test_summary_shows_every_verdict(first):
    header = "burn-in %s: 2 of 3 clusters passed, 1 failed: %s; 1 with warnings: %s; reports in %s" % (RUN1, AZURE, AWS, first.dir)
    assert header in first.output, first
    lines = [line.strip().strip('",') for line in first.output.splitlines()]
    for status, cluster, outcome, verdict, why in (
        ("ok", AWS, "Complete", "warn", "in the warning band of aws-h100-all-reduce-peak"),
        ("ok", GCP, "Complete", "pass", "meets gcp-h100-all-reduce-peak (>= 225.0 GB/s)"),
        ("FAIL", AZURE, "Failed", "fail", "no complete result: line"),
    ):
        assert any(line.startswith("%-4s %-28s" % (status, cluster)) and " %-11s %-5s " % (outcome, verdict) in line and why in line for line in lines), (
            cluster,
            first,
        )


def test_verdicts_judge_the_numbers_against_the_published_thresholds(first):
    aws = first.results[AWS]["verdict"]
    peak = [c for c in aws["checks"] if c["name"] == "peak"][0]
    assert peak["threshold"] == "aws-h100-all-reduce-peak" and peak["pass"] == 270 and peak["warn"] == 250
    assert 250 <= peak["value"] < 270 and peak["size"] == 16 * 2**30
    assert aws["metrics"]["largest_size"] == 16 * 2**30 and aws["metrics"]["nccl_version"].startswith("2.27.7")
    # The series holds every size of the 1K..16G sweep: the launcher's log was read whole, not its last lines.
    assert [row[0] for row in aws["series"]] == [1024 * 2**i for i in range(25)]
    gcp = first.results[GCP]["verdict"]
    assert [t["id"] for t in gcp["thresholds"]] == ["gcp-h100-all-reduce-peak"] and gcp["metrics"]["peak_busbw"] >= 225
    azure = first.results[AZURE]["verdict"]
    assert azure["metrics"]["complete"] is False and "truncated" in azure["reason"]


def recorded_pods(first, cluster):
    """The pods of the cluster's TrainJob as the role last saw them while waiting (JobSet and the Job controller remove
    them once the job ended, as on a real cluster): name -> pod entry of the verdict's attribution."""
    return dict((p["name"], p) for p in first.results[cluster]["verdict"]["attribution"]["pods"])


def test_node_attribution_names_the_node_of_the_killed_rank(first):
    pods = recorded_pods(first, AZURE)
    workers = [p for p in pods.values() if p["role"] != "launcher"]
    killed = [p for p in workers if any("exited on signal 9" in reason or "last exit 137" in reason for reason in p["reasons"])]
    assert len(killed) == 1 and 2 <= len(pods) <= 3, pods
    verdict = first.results[AZURE]["verdict"]
    assert verdict["failed_nodes"] == [killed[0]["node"]]
    assert verdict["nodes"] == sorted(set(p["node"] for p in workers))
    assert killed[0]["status"] == "failed"
    assert any(p["role"] == "launcher" and p["status"] == "failed" for p in pods.values())
    # The healthy clusters: every worker succeeded, on both GPU nodes; the launcher's log held the output.
    for cluster in (AWS, GCP):
        verdict = first.results[cluster]["verdict"]
        pods = recorded_pods(first, cluster)
        nodes = sorted(set(p["node"] for p in pods.values() if p["role"] != "launcher"))
        assert len(nodes) == 2 and verdict["succeeded_nodes"] == nodes and verdict["failed_nodes"] == []
        launcher = [name for name, p in pods.items() if p["role"] == "launcher"]
        assert verdict["output_pod"] == launcher[0]


def test_logs_are_collected_from_every_pod_still_there(first):
    """The launcher's log is read whole, by the wait already when the launcher fails (the Job controller removes a
    failed Job's pods); the MPI workers' logs only while JobSet has not yet removed them (it does once the launcher
    is done, as on a real cluster): every pod is counted, those removed are named."""
    for cluster in (AWS, GCP, AZURE):
        logs = first.results[cluster]["logs"]
        assert 2 <= logs["pods"] <= 3 and logs["errors"] == {}, (cluster, logs)
        # Removed pods count as collected when the wait read their log first (the failed launcher's, above all).
        assert 1 <= logs["collected"] <= 3 and len(logs["removed"]) <= 3, (cluster, logs)
        files = sorted((first.dir / cluster).glob("*.log"))
        assert len(files) == logs["collected"]
        launcher = [f for f in files if "-launcher-0-0-" in f.name][0].read_text()
        # Longer than burnin_log_tail_lines (200), yet read whole: NCCL's first line and the table's header are there.
        assert launcher.count("\n") > 200 and "NCCL INFO Bootstrap" in launcher.splitlines()[0]
        assert "# nccl-tests version 2.16.9" in launcher
    assert "# Avg bus bandwidth" in list((first.dir / AWS).glob("*-launcher-*.log"))[0].read_text()


def test_reports_json_junit_html(first):
    report = json.loads((first.dir / "burnin-report.json").read_text())
    assert report["schema"] == "gpufleet.burnin/report/v1" and report["run_id"] == RUN1
    summary = report["summary"]
    # A testcase per stage: the node stage (default burnin_stages) passes on aws and gcp and fails on azure (its
    # TrainJob fails too), then the fleet stage's warn, pass and fail; and each cluster's drift testcase (judging/drift.py:
    # its nodes run the same versions, so it passes).
    assert (summary["pass"], summary["warn"], summary["fail"], summary["error"], summary["clusters"]) == (6, 1, 2, 0, 3)
    assert summary["failed_clusters"] == [AZURE]

    root = ET.parse(str(first.dir / "burnin-report.junit.xml")).getroot()
    stage_cases = [case for case in root.iter("testcase") if not case.get("classname").endswith(".nodes")]
    cases = dict((case.get("classname") + "/" + case.get("name"), case) for case in stage_cases)
    # Two stages per cluster, and each cluster's drift testcase (judging/drift.py), which passes.
    assert len(stage_cases) == 9 and len([name for name in cases if name.endswith("/drift")]) == 3, sorted(cases)
    # And a testcase per node (two per cluster): only azure's nodes whose pods were killed fail (in the node stage,
    # the fleet stage or both).
    node_cases = [case for case in root.iter("testcase") if case.get("classname").endswith(".nodes")]
    failing_nodes = [case.get("classname") for case in node_cases if case.find("failure") is not None]
    assert len(node_cases) == 6 and failing_nodes and set(failing_nodes) == set(["gpufleet.burnin.%s.nodes" % AZURE]), failing_nodes
    failing = [name for name, case in cases.items() if case.find("failure") is not None or case.find("error") is not None]
    assert len(failing) == 2 and all(AZURE in name for name in failing)
    text = ET.tostring(root, encoding="unicode")
    assert "warning band" in text and "nccl-all-reduce" in text

    html = (first.dir / "burnin-report.html").read_text()
    # One busbw plot per cluster, under the fleet overview's chart.
    assert html.count('<svg class="busbw-plot"') == 3 and html.count('<svg class="fleet-chart"') == 1 and "<script" not in html.lower()
    for cluster in (AWS, GCP, AZURE):
        assert cluster in html


def test_set_stats_artifact_carries_the_same_verdicts(first):
    stats = first.stats()
    assert sorted(stats) == sorted([AWS, GCP, AZURE])
    for cluster, result in first.results.items():
        assert stats[cluster]["verdict"]["verdict"] == result["verdict"]["verdict"]
        assert stats[cluster]["verdict"]["reason"] == result["verdict"]["reason"]
        assert stats[cluster]["verdict"]["failed_nodes"] == result["verdict"]["failed_nodes"]


def test_complete_trainjob_far_below_threshold_fails(second):
    result = second.results[GCP]
    assert result["outcome"] == "Complete" and result["verdict"]["verdict"] == "fail", second
    assert result["stage"] == "verdict"
    assert re.search(r"verdict fail: busbw \d+\.\d GB/s at 16G \(out-of-place\) is below gcp-h100-all-reduce-peak", result["reason"])
    assert second.recap()[GCP] == 1


def test_inventory_thresholds_win_and_bad_ones_are_named(fleet_crds, second):
    aws = second.results[AWS]["verdict"]
    assert aws["verdict"] == "pass", second
    # The inventory's peak record wins its metric; the collection's range record (a metric of its own) still judges.
    assert [(t["id"], t["origin"]) for t in aws["thresholds"]] == [("fleet-aws-h100-peak", "inventory"), ("aws-h100-all-reduce-sizes", "collection")]
    # A bad record stops its cluster before anything reaches it, naming the field and the allowed values.
    azure = second.results[AZURE]
    assert azure["outcome"] == "Error" and "verdict" not in azure, second
    assert "failed before its burn-in started" in azure["reason"]
    # The variable check (gpufleet.burnin.burnin_start) names the variable, the field and the allowed values.
    assert "burnin_thresholds" in second.output and "metric" in second.output and "median" in second.output
    assert "peak" in second.output and "avg" in second.output
    from kubernetes.dynamic.exceptions import NotFoundError

    trainjobs = fleet_crds.dynamic(AZURE).resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainJob")
    with pytest.raises(NotFoundError):
        trainjobs.get(name="%s-%s" % (ENTRY, RUN2), namespace=NAMESPACE)
    report = json.loads((second.dir / "burnin-report.json").read_text())["summary"]
    # aws: node and fleet stage pass; gcp: the node stage passes (the far-below annotation is the launcher's), the
    # fleet stage fails; azure: no burn-in. aws and gcp each add their drift testcase (a pass).
    assert (report["pass"], report["warn"], report["fail"], report["error"]) == (5, 0, 1, 1)
    assert second.rc == 2 and second.recap() == {AWS: 0, GCP: 1, AZURE: 1}


def test_a_replayed_crash_fails_the_nodes_of_the_hosts_it_names(third):
    verdict = third.results[GCP]["verdict"]
    assert verdict["verdict"] == "fail" and third.results[GCP]["outcome"] == "Complete", third
    hosts = ["%s-%s-node-0-%d" % (ENTRY, RUN3, index) for index in range(2)]
    errors = [c for c in verdict["checks"] if c["name"] == "errors"][0]
    assert errors["verdict"] == "fail" and sorted(errors["hosts"]) == hosts and "Test NCCL failure" in errors["reason"]
    # The hosts the log names are the workers' pods: their nodes fail, by the log alone (every pod exited 0).
    pods = recorded_pods(third, GCP)
    workers = sorted(set(p["node"] for p in pods.values() if p["role"] != "launcher"))
    assert len(workers) == 2 and verdict["failed_nodes"] == workers, verdict["failed_nodes"]
    launcher = sorted((third.dir / GCP).glob("*-launcher-*.log"))[0].read_text()
    assert "HCA-1" not in launcher and "%s: Test NCCL failure common.cu:1204" % hosts[0] in launcher


def test_a_replayed_ib_plugin_log_passes_the_infiniband_transport_check(third):
    verdict = third.results[AZURE]["verdict"]
    proof = verdict["transport"]
    assert proof["verdict"] == "pass" and proof["expected"] == "ib" and proof["seen"] == "ib", proof
    assert verdict["verdict"] in ("pass", "warn") and verdict["failed_nodes"] == [], verdict["reason"]
    assert "Using network IBext" in sorted((third.dir / AZURE).glob("*-launcher-*.log"))[0].read_text()


def test_a_replayed_socket_fall_back_fails_the_efa_transport_check(third):
    verdict = third.results[AWS]["verdict"]
    proof = verdict["transport"]
    assert proof["verdict"] == "fail" and proof["expected"] == "efa" and proof["seen"] == "socket", proof
    assert verdict["verdict"] == "fail" and verdict["reason"].startswith("inter-node transport is not the expected one"), verdict["reason"]
    assert third.rc == 2 and third.recap() == {AWS: 1, GCP: 1, AZURE: 0}, third


def test_every_report_and_artifact_the_fleet_wrote_satisfies_the_verdict_schema(work, first, second, third, verdict_schema):
    # Each run wrote its report and summary.json; conftest.py's pytest_sessionfinish validates both against the schema
    # (with every other report of the session), so only the AWX artifact, which is no file, is validated here.
    # Runs 1 and 2 measured nodes, so they also saved their sibling baselines (judging/siblings.py).
    assert sorted(path.relative_to(work / "reports").as_posix() for path in (work / "reports").glob("*/*.json")) == sorted(
        ["%s/%s" % (run, name) for run in (RUN1, RUN2, RUN3) for name in ("burnin-report.json", "summary.json")]
        + ["%s/burnin-baselines.json" % run for run in (RUN1, RUN2)]
    )
    artifact = verdict_schema("awx_artifact")
    for run in (first, second, third):
        problems = [error.message for error in artifact.iter_errors({"burnin_results": run.stats()})]
        assert problems == [], (run.run_id, problems[:20])
    # Severity and action as the table maps the evidence: the fall back to sockets is a configuration fault (warning,
    # retest: no node drained); azure's nodes whose ranks were killed are retested; gcp's pass asks for nothing.
    clusters = dict((cluster["cluster"], cluster) for cluster in json.loads((third.dir / "burnin-report.json").read_text())["clusters"])
    assert (clusters[AWS]["severity"], clusters[AWS]["action"], clusters[AWS]["action_rule"]) == ("warning", "retest", "transport_fallback")
    nodes = json.loads((first.dir / "burnin-report.json").read_text())["clusters"]
    azure = [cluster for cluster in nodes if cluster["cluster"] == AZURE][0]
    failed = [node for node in azure["nodes"] if node["verdict"] == "fail"]
    assert failed and all(node["severity"] == "critical" and node["action"] in ("retest", "drain") for node in failed), failed
    gcp = [cluster for cluster in nodes if cluster["cluster"] == GCP][0]
    assert (gcp["severity"], gcp["action"]) == ("none", "none"), gcp["action_why"]
    html = (first.dir / "burnin-report.html").read_text()
    for node in failed:
        assert ('<td class="act act-%s"><a href="#' % node["action"]) in html and node["evidence_anchor"] in html
