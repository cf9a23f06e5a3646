# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The fleet judges itself (issue 45), on a fleet of its own: two AWS H100 clusters of three nodes (one SKU across
two clusters), their healthy nodes' own all_reduce spread 2 % either side of the H100 figure (node_spread_percent),
and three faults the fixed floors alone would not all name:

- SLOW (aws-sib-a-gpu-1) reaches 444 GB/s, 8 % below its siblings and above the node stage's floor (432): the
  sibling rule names it with its SKU, sibling count and baseline;
- SKEW (aws-sib-b-gpu-2) runs driver 570.124.06 where its siblings run 570.148 (GPU feature discovery labels), and
  its node stage's pod prints NCCL 2.27.3 where its siblings' print the image's 2.27.7 (node_nccl): the drift check
  names both against the SKU's majority and against a golden file;
- BAD (aws-sib-b-gpu-0) fails its floor (301.5 GB/s) in every run. The run history also holds two runs in which
  every node passed (their JSON reports, written beside the real ones: one older than the first run, one between
  the first and the second), so the second run sees BAD bad in 2 of its last 4 runs (pass, fail, pass, fail: not a
  repeat offender) and the third in 3 of its last 4 (fail, pass, fail, fail: a repeat offender with the action
  replace). SLOW, below its siblings in each real run, goes the same way.

Three runs of playbooks/burnin.yml with the node stage only, burnin_baseline_dir the report directory (the
second and third runs merge the earlier baselines).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.html_view import node_anchor
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.writer import earlier_runs

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOK = REPO / "playbooks" / "burnin.yml"
A, B = "aws-sib-a", "aws-sib-b"
SLOW, SKEW, BAD = A + "-gpu-1", B + "-gpu-2", B + "-gpu-0"
COMMON = {
    "platform": "aws",
    "gpu_architecture": "h100",
    "kubernetes_version": "1.34",
    "nodes": 3,
    "node_naming": "indexed",
    "node_spread_percent": 2,
    "trainjob_outcome": "Complete",
    "nccl_log": "good",
    "inventory_vars": {"burnin_nodes": 3, "burnin_stages": ["node"]},
}
SPEC = {
    "clusters": [
        dict(COMMON, name=A, node_busbw={SLOW: 444.0}),
        dict(COMMON, name=B, node_busbw={BAD: 301.5}, node_driver={SKEW: "570.124.06"}, node_nccl={SKEW: "2.27.3+cuda12.9"}),
    ]
}
GOLDEN = {"aws/h100": {"driver": ["570.148*"], "nccl": ["2.27.7+*"]}}


@pytest.fixture(scope="module")
def runs(own_fleet):
    state, work = own_fleet("siblings", SPEC, "GPUFLEET_SIBLINGS_FLEET_DIR")
    reports = work / "reports"
    golden = work / "golden.yml"
    golden.write_text(yaml.safe_dump(GOLDEN))
    done = []
    for number in (1, 2, 3):
        run_id = "sib-%d" % number
        proc = subprocess.run(
            ["ansible-playbook", str(PLAYBOOK), "-i", state["inventory"], "--forks", "10", "--limit", "%s:%s" % (A, B)]
            + ["-e", "burnin_run_id=%s" % run_id, "-e", "burnin_report_dir=%s" % reports, "-e", "burnin_poll_interval=1"]
            + ["-e", "burnin_namespace=sib-%d" % number, "-e", "burnin_timeout=120"]
            + ["-e", "burnin_baseline_dir=%s" % reports, "-e", "burnin_golden=%s" % golden],
            env=dict(os.environ, ANSIBLE_NOCOLOR="1"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            universal_newlines=True,
            timeout=900,
            check=False,
        )
        path = reports / run_id / "burnin-report.json"
        assert path.is_file(), proc.stdout[-6000:]
        done.append((proc, json.loads(path.read_text()), reports / run_id))
        if number == 1:
            # Two good runs in the history, ordered by their report's time as the history is (reporting/report.py
            # earlier_runs): one before the first run, one after it.
            written = path.stat().st_mtime
            good_run(reports, "sib-0-good", done[0][1], written - 60)
            good_run(reports, "sib-1-good", done[0][1], written + 1)
    return done


def good_run(reports, run_id, report, stamp):
    """The history's record (its JSON report) of a run of the same fleet in which every node passed, dated STAMP."""
    record = json.loads(json.dumps(report))
    record["run_id"] = run_id
    for item in record["clusters"]:
        for row in item["nodes"]:
            row.update(verdict="pass", stages=[stage for stage in row.get("stages") or [] if stage not in ("siblings", "drift")])
    path = reports / run_id / "burnin-report.json"
    path.parent.mkdir()
    path.write_text(json.dumps(record))
    os.utime(str(path), (stamp, stamp))


def cluster(report, name):
    return [item for item in report["clusters"] if item["cluster"] == name][0]


def node(report, cluster_name, name):
    return [row for row in cluster(report, cluster_name)["nodes"] if row["node"] == name][0]


def test_the_node_8_percent_below_its_siblings_is_named_with_baseline_and_count(runs):
    _proc, report, run_dir = runs[0]
    (record,) = [item for item in report["siblings"]["baselines"] if item["metric"].startswith("node/busbw@")]
    assert record["judged"] and record["count"] == 6 and record["sku"].startswith("aws/h100/")
    # The healthy four spread around the H100 figure (482.6), none equal.
    healthy = [row["value"] for row in record["nodes"] if row["node"] not in (SLOW, BAD)]
    assert len(set(healthy)) == 4 and all(470 < value < 495 for value in healthy), healthy
    assert 472 < record["baseline"] < 493 and record["floor"] == 432.0
    row = node(report, A, SLOW)
    assert row["verdict"] == "warn" and row["action_rule"] == "sibling_slow_warn", row
    reason = [text for text in row["reasons"] if text.startswith("siblings:")][0]
    assert "SKU %s" % record["sku"] in reason and "6 siblings" in reason and "baseline %.1f" % record["baseline"] in reason and "below" in reason
    # Its fixed floor passed it: the node stage's own finding.
    node_stage = [item for item in row["evidence"] if item["stage"] == "node"][0]
    assert node_stage["verdict"] == "pass"
    assert (run_dir / "burnin-baselines.json").is_file()
    # The healthy nodes are not named; the HTML page draws the plot and links SLOW.
    assert all(node(report, A, name)["verdict"] == "pass" for name in (A + "-gpu-0", A + "-gpu-2"))
    page = (run_dir / "burnin-report.html").read_text()
    assert 'class="sibling-plot"' in page and 'href="#%s"' % node_anchor(A, SLOW) in page


def test_the_driver_skew_is_named_against_its_siblings_and_the_golden_file(runs):
    _proc, report, _run_dir = runs[0]
    rows = [row for row in report["drift"]["nodes"] if row["key"] == "driver"]
    assert [(row["cluster"], row["node"], row["value"], row["majority"]) for row in rows] == [(B, SKEW, "570.124.06", "570.148")], rows
    assert "differs from the majority 570.148" in rows[0]["why"] and "5 of 6 nodes" in rows[0]["why"]
    assert "not in the golden versions 570.148*" in rows[0]["why"]
    row = node(report, B, SKEW)
    assert row["verdict"] == "warn" and "drift" in row["stages"], row
    case = [case for case in cluster(report, B)["testcases"] if case["workload"] == "drift"][0]
    assert case["verdict"] == "warn" and SKEW in case["reason"]


def test_what_the_node_stage_ran_is_recorded_per_node_and_the_nccl_skew_named(runs):
    _proc, report, run_dir = runs[0]
    # Every node's NCCL and net plugin from its own pod's INFO lines, its NCCL env from the rendered pod spec.
    skus = dict(((item["key"], item["scope"]), item) for item in report["drift"]["skus"] if item["key"] in ("nccl", "net_plugin", "nccl_env"))
    assert sorted(skus) == [("nccl", "node"), ("nccl_env", "node"), ("net_plugin", "node")]
    assert skus[("nccl", "node")]["counts"] == {"2.27.7+cuda12.9": 5, "2.27.3+cuda12.9": 1}
    assert skus[("net_plugin", "node")]["counts"] == {"Libfabric (v10)": 6}
    assert skus[("nccl_env", "node")]["nodes"] == 6 and "NCCL_DEBUG=INFO" in skus[("nccl_env", "node")]["majority"].split(" ")
    rows = [row for row in report["drift"]["nodes"] if row["key"] == "nccl"]
    assert [(row["cluster"], row["node"], row["scope"], row["value"], row["majority"]) for row in rows] == [
        (B, SKEW, "node", "2.27.3+cuda12.9", "2.27.7+cuda12.9")
    ]
    assert "differs from the majority 2.27.7+cuda12.9" in rows[0]["why"] and "not in the golden versions 2.27.7+*" in rows[0]["why"]
    # Only SKEW drifts, on these two keys.
    assert sorted((row["node"], row["key"]) for row in report["drift"]["nodes"]) == [(SKEW, "driver"), (SKEW, "nccl")]
    assert "<td>nccl (node)</td><td>2.27.3+cuda12.9</td>" in (run_dir / "burnin-report.html").read_text()


def test_a_node_bad_in_3_of_its_last_4_runs_is_a_repeat_offender_and_in_2_of_4_is_not(runs):
    (_p1, first, _d1), (_p2, second, _d2), (_p3, third, d3) = runs
    assert node(first, B, BAD)["verdict"] == "fail" and node(second, B, BAD)["verdict"] == "fail" and node(third, B, BAD)["verdict"] == "fail"
    assert first["repeat_offenders"] == []
    # The history before the third run, as the collection reads it (oldest first): the second run's last 4 runs are
    # these four (itself last): BAD and SLOW bad in 2 of them, not repeat offenders.
    history = [(run_id, states[(B, BAD)], states[(A, SLOW)]) for run_id, states in earlier_runs(str(d3.parent), current_dir=str(d3))]
    assert history == [("sib-0-good", False, False), ("sib-1", True, True), ("sib-1-good", False, False), ("sib-2", True, True)]
    assert second["repeat_offenders"] == []
    for name in (BAD, SLOW):
        row = node(second, A if name == SLOW else B, name)
        assert row["action_rule"] != "repeat_offender" and "repeat_offender" not in row, row
    # The third run: fail, pass, fail, fail. SLOW fell below its siblings in the same runs (failed or below its
    # siblings, k of n): a repeat offender too.
    assert sorted((item["cluster"], item["node"]) for item in third["repeat_offenders"]) == [(A, SLOW), (B, BAD)]
    for item in third["repeat_offenders"]:
        assert (item["bad_runs"], item["runs"], item["run_ids"]) == (3, 4, ["sib-1", "sib-2", "sib-3"]), item
        assert "in 3 of its last 4 runs" in item["reason"] and "rule: 3 of 4" in item["reason"]
    row = node(third, B, BAD)
    assert row["action"] == "replace" and row["action_rule"] == "repeat_offender" and row["reasons"][0].startswith("repeat offender")
    assert row["repeat_offender"]["bad_runs"] == 3 and row["repeat_offender"]["runs"] == 4
    assert cluster(third, B)["action"] == "replace" and cluster(third, B)["repeat_offenders"] == [BAD]
    # The healthy nodes, good in every run, are not named.
    assert all(node(third, A, name)["action_rule"] != "repeat_offender" for name in (A + "-gpu-0", A + "-gpu-2"))
    # The later runs merged the earlier baselines (the good runs' records hold no baselines): 6 samples per node,
    # the latest per node (still 6).
    assert third["siblings"]["earlier_runs"] == 2


def test_the_reports_follow_the_verdict_schema(runs, verdict_schema):
    for _proc, report, _run_dir in runs:
        problems = ["%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message) for e in verdict_schema().iter_errors(report)]
        assert problems == []
