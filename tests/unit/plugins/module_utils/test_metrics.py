# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The run's Prometheus metrics (plugins/module_utils/reporting/metrics.py): names with their units, labels, values in
base units, a failing node with a failing GPU (judged from a published DCGM diagnostic, tests/fixtures/real/dcgm/),
and bounded cardinality. The exposition is read back with prometheus-client's own parser."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import summarize
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import metrics
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.report import build_report

HERE = os.path.dirname(os.path.abspath(__file__))
REAL_DCGM = os.path.join(HERE, "..", "..", "..", "fixtures", "real", "dcgm")
# As published (tests/fixtures/real/dcgm/PROVENANCE.md): a B200 node failing DCGM's PCIe test (dcgmi's table names no
# GPU), a passing node, and a GB10 whose GPU 0 warns (persistence mode, a configuration warning with the GPU's id).
FAILING_LOG = "dcgm-4.4.1-level2-table-pcie-fail-b200-8gpu.txt"
PASSING_LOG = "dcgm-3.3.3-level2-table-pass-8gpu.txt"
GPU_WARNING_LOG = "dcgm-4.2.3-level1-gb10-persistence-config.json"


def _synthetic():
    spec = importlib.util.spec_from_file_location("gpufleet_synthetic_fleet_metrics", os.path.join(HERE, "synthetic_fleet.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def samples(text):
    """{(name, frozenset(labels)): value} of an exposition, parsed by prometheus-client."""
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = (sample.name, frozenset(sample.labels.items()))
            assert key not in out, "duplicate series %r" % (key,)
            out[key] = sample.value
    return out


def named(parsed, name, **labels):
    return dict((key, value) for key, value in parsed.items() if key[0] == name and set(labels.items()) <= key[1])


def real(name):
    with open(os.path.join(REAL_DCGM, name)) as handle:
        return handle.read()


def pod(name, node):
    return {
        "metadata": {"name": name, "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}},
        "spec": {"nodeName": node},
        "status": {"phase": "Succeeded", "containerStatuses": [{"name": "node", "state": {"terminated": {"exitCode": 0}}}]},
    }


def dcgm_results():
    """One cluster, three nodes: n0 passes DCGM, n1 fails it, n2's GPU 0 warns (published diagnostics)."""
    pods = [pod("job-node-0-%d" % index, "n%d" % index) for index in range(3)]
    logs = [{"item": item, "log": real(name)} for item, name in zip(pods, (PASSING_LOG, FAILING_LOG, GPU_WARNING_LOG))]
    verdict = verdict_for(logs, job={"outcome": "Complete", "pods": pods}, judging={"workload": "dcgm-diag", "results": "dcgm-diag"})
    findings = verdict["findings"]
    return {
        "b200-a": {
            "cluster": "b200-a",
            "platform": "aws",
            "gpu_architecture": "b200",
            "outcome": "Complete",
            "run_id": "run-1",
            "started": "2026-12-03T07:00:00Z",
            "finished": "2026-12-03T07:05:30Z",
            "verdicts": [verdict],
            "node_findings": findings,
            "node_verdicts": summarize(findings),
            "stages": [{"stage": "fleet", "verdict": verdict["verdict"], "reason": verdict["reason"], "attempts": []}],
        }
    }


def test_every_name_has_the_prefix_and_its_unit_and_every_verdict_is_an_info_metric():
    report = build_report(_synthetic().synthetic_results(12), run_id="r1", generated="2026-12-03T07:00:00Z")
    parsed = samples(metrics.exposition(metrics.build_families(report)))
    names = set(key[0] for key in parsed)
    assert all(name.startswith("gpufleet_burnin_") for name in names)
    assert {"gpufleet_burnin_cluster_info", "gpufleet_burnin_busbw_bytes_per_second", "gpufleet_burnin_run_timestamp_seconds"} <= names
    # Every sample carries the run id: the files of several runs never collide in node_exporter.
    assert all(("run_id", "r1") in key[1] for key in parsed)
    assert parsed[("gpufleet_burnin_run_timestamp_seconds", frozenset({("run_id", "r1")}))] == 1796281200.0
    for key in named(parsed, "gpufleet_burnin_cluster_info"):
        assert dict(key[1])["verdict"] in metrics.VERDICTS
    # The state gauge: exactly one verdict is 1 per cluster.
    for cluster in report["clusters"]:
        states = named(parsed, "gpufleet_burnin_cluster_verdict", cluster=cluster["cluster"])
        assert sorted(states.values()) == [0, 0, 0, 1]
        assert states[("gpufleet_burnin_cluster_verdict", frozenset({("run_id", "r1"), ("cluster", cluster["cluster"]), ("verdict", cluster["verdict"])}))] == 1


def test_busbw_and_its_thresholds_are_bytes_per_second():
    report = build_report(_synthetic().synthetic_results(3), run_id="r1")
    parsed = samples(metrics.exposition(metrics.build_families(report)))
    cluster = report["clusters"][0]
    check = cluster["testcases"][0]["checks"][0]
    where = dict(run_id="r1", cluster=cluster["cluster"], stage="fleet", workload="nccl-all-reduce", collective="all_reduce", check="peak")
    assert named(parsed, "gpufleet_burnin_busbw_bytes_per_second", **where) == {
        ("gpufleet_burnin_busbw_bytes_per_second", frozenset(where.items())): pytest.approx(check["value"] * 1e9)
    }
    levels = named(parsed, "gpufleet_burnin_busbw_threshold_bytes_per_second", **where)
    assert sorted(levels.values()) == [pytest.approx(check["warn"] * 1e9), pytest.approx(check["pass"] * 1e9)]


def test_a_failing_node_is_named_with_its_failing_gpu_and_test():
    report = build_report(dcgm_results(), generated="2026-12-03T07:06:00Z")
    assert report["clusters"][0]["verdict"] == "fail"
    text = metrics.exposition(metrics.build_families(report))
    parsed = samples(text)
    nodes = dict((dict(key[1])["node"], dict(key[1])["verdict"]) for key in named(parsed, "gpufleet_burnin_node_info"))
    assert nodes == {"n0": "pass", "n1": "fail", "n2": "warn"}
    # n1's failure names no GPU (dcgmi's table does not): no GPU series; n2's warning names GPU 0.
    assert not named(parsed, "gpufleet_burnin_dcgm_gpu_failed_tests", node="n1")
    assert not named(parsed, "gpufleet_burnin_dcgm_gpu_failed_tests", node="n0")
    warned = named(parsed, "gpufleet_burnin_dcgm_gpu_failed_tests", node="n2")
    assert [dict(key[1])["gpu"] for key in warned] == ["0"] and list(warned.values()) == [1]
    statuses = dict((dict(key[1])["test"], dict(key[1])["status"]) for key in named(parsed, "gpufleet_burnin_dcgm_test_info", node="n1"))
    assert "fail" in statuses.values() and set(statuses.values()) <= set(metrics.DCGM_STATUSES)
    assert parsed[("gpufleet_burnin_cluster_duration_seconds", frozenset({("run_id", "run-1"), ("cluster", "b200-a")}))] == 330
    # The reasons (free text) are no label values.
    reason = report["clusters"][0]["testcases"][0]["reason"]
    assert reason and all(reason not in dict(key[1]).values() for key in parsed)


def test_a_cap_keeps_the_cluster_figures_and_counts_what_it_drops():
    report = build_report(dcgm_results())
    full = metrics.series_count(metrics.build_families(report))
    families = metrics.build_families(report, max_series=12)
    parsed = samples(metrics.exposition(families))
    # The cap's own sample comes on top of the 12.
    assert len(parsed) == 13
    assert parsed[("gpufleet_burnin_metrics_dropped_series", frozenset({("run_id", "run-1")}))] == full - 1 - 12
    assert named(parsed, "gpufleet_burnin_cluster_info") and not named(parsed, "gpufleet_burnin_node_info")


def test_label_values_are_bounded_and_unknown_values_are_other():
    results = dcgm_results()
    entry = results["b200-a"]
    long_node = "n" * 500
    entry["node_findings"][0] = dict(entry["node_findings"][0], node=long_node)
    entry["node_findings"][0]["evidence"] = dict(entry["node_findings"][0]["evidence"], tests=[{"name": "x\n" * 100, "status": "exploded"}])
    entry["outcome"] = "Something new"
    report = build_report(results)
    parsed = samples(metrics.exposition(metrics.build_families(report)))
    values = [value for key in parsed for _unused, value in key[1]]
    assert max(len(value) for value in values) <= metrics.LABEL_MAX
    assert not any("\n" in value for value in values)
    assert dict(list(named(parsed, "gpufleet_burnin_cluster_info"))[0][1])["outcome"] == "other"
    tests = named(parsed, "gpufleet_burnin_dcgm_test_info", node="n" * metrics.LABEL_MAX)
    assert [dict(key[1])["status"] for key in tests] == ["other"] and len(dict(list(tests)[0][1])["test"]) == 64


def test_a_push_group_holds_one_cluster():
    report = build_report(_synthetic().synthetic_results(4), run_id="r1")
    name = report["clusters"][1]["cluster"]
    parsed = samples(metrics.exposition(metrics.build_families(report, clusters=[name])))
    clusters = set(dict(key[1]).get("cluster") for key in parsed) - {None}
    assert clusters == {name}


@pytest.mark.parametrize("value", [0, -1, True, "10", metrics.MAX_SERIES_LIMIT + 1])
def test_a_bad_cap_names_the_variable(value):
    with pytest.raises(ConfigError, match="burnin_metrics_max_series: must be an integer from 1 to 1000000"):
        metrics.build_families({"clusters": []}, max_series=value)


def test_a_report_that_is_no_mapping_is_refused():
    with pytest.raises(ConfigError, match="report: must be the run's JSON report"):
        metrics.build_families(["no"])


def test_missing_and_odd_fields_are_read_defensively():
    odd = {
        "run_id": "r",
        "generated": "yesterday",
        "clusters": [{"cluster": "c", "verdict": "maybe", "testcases": [None, {"checks": [None, {"name": "peak", "value": "fast"}]}]}, "x"],
    }
    parsed = samples(metrics.exposition(metrics.build_families(odd)))
    assert not named(parsed, "gpufleet_burnin_run_timestamp_seconds") and not named(parsed, "gpufleet_burnin_busbw_bytes_per_second")
    assert dict(list(named(parsed, "gpufleet_burnin_cluster_info"))[0][1])["verdict"] == "error"


def test_a_node_stage_finding_gives_the_nodes_busbw_and_its_threshold():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding

    slow = finding("n1", "node", "fail", "slow", {"busbw": 301.5, "size": 1 << 34, "threshold": "h100-single-node-all-reduce-peak", "pass_busbw": 432.0})
    results = {"c": {"cluster": "c", "outcome": "Complete", "node_findings": [slow], "node_verdicts": summarize([slow])}}
    parsed = samples(metrics.exposition(metrics.build_families(build_report(results, run_id="r"))))
    where = frozenset({("run_id", "r"), ("cluster", "c"), ("node", "n1"), ("stage", "node")})
    assert parsed[("gpufleet_burnin_node_busbw_bytes_per_second", where)] == pytest.approx(3.015e11)
    assert parsed[("gpufleet_burnin_node_busbw_threshold_bytes_per_second", where)] == pytest.approx(4.32e11)
    (info,) = [dict(key[1]) for key in named(parsed, "gpufleet_burnin_node_info", node="n1")]
    assert info["verdict"] == "fail" and info["severity"] in metrics.SEVERITIES and info["action"] in metrics.ACTIONS


def test_severity_and_action_are_labels_from_the_verdict_schemas_closed_lists():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions

    table = actions.table()
    assert list(metrics.SEVERITIES) == table["severities"] and list(metrics.ACTIONS) == table["actions"]
    report = build_report(dcgm_results(), generated="2026-12-03T07:06:00Z")
    parsed = samples(metrics.exposition(metrics.build_families(report)))
    nodes = dict((dict(key[1])["node"], dict(key[1])) for key in named(parsed, "gpufleet_burnin_node_info"))
    rows = dict((row["node"], row) for row in report["clusters"][0]["nodes"])
    assert rows["n1"]["severity"] == "critical"
    for node, labels in nodes.items():
        assert (labels["severity"], labels["action"]) == (rows[node]["severity"], rows[node]["action"]), node
    (cluster,) = [dict(key[1]) for key in named(parsed, "gpufleet_burnin_cluster_info")]
    assert (cluster["severity"], cluster["action"]) == (report["clusters"][0]["severity"], report["clusters"][0]["action"])
