# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Repeat offenders (plugins/module_utils/judging/offenders.py) from the run history the reports keep."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import offenders
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding, summarize
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import writer

GENERATED = "2026-01-01T00:00:00Z"


def results(bad_nodes):
    found = []
    for node in ("n1", "n2", "n3"):
        verdict = "fail" if node in bad_nodes else "pass"
        found.append(finding(node, "node", verdict, "node all_reduce", {"busbw": 100.0 if verdict == "fail" else 480.0, "size": 1 << 30, "pass_busbw": 250.0}))
    return {"a": {"platform": "aws", "gpu_architecture": "h100", "node_findings": found, "node_verdicts": summarize(found)}}


def write_run(tmp_path, run_id, bad, **options):
    out = writer.write_reports(results(bad), str(tmp_path / run_id), formats=["json"], run_id=run_id, generated=GENERATED, history_dir=str(tmp_path), **options)
    # Runs are ordered by the time their report was written: make it strictly increasing.
    stamp = 1000000000 + int(run_id[3:]) * 100
    os.utime(out["files"]["json"], (stamp, stamp))
    return json.loads(open(out["files"]["json"]).read())


def test_a_node_failing_in_3_of_its_last_4_runs_is_a_repeat_offender_with_replace(tmp_path):
    for number, bad in enumerate([["n1"], [], ["n1", "n2"]], 1):
        report = write_run(tmp_path, "run%d" % number, bad)
        assert report["repeat_offenders"] == []
    report = write_run(tmp_path, "run4", ["n1"])
    (item,) = report["repeat_offenders"]
    assert (item["cluster"], item["node"], item["bad_runs"], item["runs"]) == ("a", "n1", 3, 4)
    assert item["run_ids"] == ["run1", "run3", "run4"] and "3 of its last 4 runs" in item["reason"]
    row = [row for row in report["clusters"][0]["nodes"] if row["node"] == "n1"][0]
    assert row["action"] == "replace" and row["action_rule"] == "repeat_offender" and row["reasons"][0].startswith("repeat offender")
    assert report["clusters"][0]["action"] == "replace" and report["clusters"][0]["repeat_offenders"] == ["n1"]
    n2 = [row for row in report["clusters"][0]["nodes"] if row["node"] == "n2"][0]
    assert n2["action"] != "replace" and "repeat_offender" not in n2
    # A good run moves the window: run2..run5 hold two bad runs of n1, which is not 3 of 4, but is 2 of 4.
    assert write_run(tmp_path, "run5", [])["repeat_offenders"] == []
    assert [item["node"] for item in write_run(tmp_path, "run6", [], offender_failures=2, offender_runs=4)["repeat_offenders"]] == ["n1"]


def test_find_counts_only_the_runs_that_judged_the_node():
    runs = [("r1", {("a", "n1"): True}), ("r2", {("a", "n2"): False}), ("r3", {("a", "n1"): True}), ("r4", {("a", "n1"): True, ("a", "n2"): True})]
    (item,) = offenders.find(runs, 3, 4)
    assert item["node"] == "n1" and item["runs"] == 3 and item["run_ids"] == ["r1", "r3", "r4"]
    # Only the current run's nodes are named.
    assert offenders.find(runs[:3] + [("r4", {("a", "n2"): True})], 1, 4)[0]["node"] == "n2"


def test_below_its_siblings_counts_as_bad():
    report = {
        "clusters": [
            {
                "cluster": "a",
                "nodes": [{"node": "n1", "verdict": "warn", "stages": ["node", "siblings"]}, {"node": "n2", "verdict": "warn", "stages": ["node"]}],
            }
        ]
    }
    assert offenders.node_states(report) == {("a", "n1"): True, ("a", "n2"): False}


@pytest.mark.parametrize(
    "failures, runs, field",
    [(0, 4, "burnin_offender_failures"), (5, 4, "burnin_offender_failures"), (3, 51, "burnin_offender_runs"), (True, 4, "burnin_offender_failures")],
)
def test_bad_windows_name_the_variable(failures, runs, field):
    with pytest.raises(ConfigError) as caught:
        offenders.check_window(failures, runs)
    assert field in str(caught.value)


histories = st.lists(st.booleans(), min_size=1, max_size=12)


@settings(max_examples=100, deadline=None)
@given(histories, st.integers(min_value=1, max_value=6), st.integers(min_value=0, max_value=6))
def test_named_exactly_when_k_of_the_last_n_were_bad(states, failures, extra):
    window = failures + extra
    runs = [("r%d" % index, {("a", "n"): state}) for index, state in enumerate(states)]
    named = bool(offenders.find(runs, failures, window))
    assert named == (sum(states[-window:]) >= failures)
    # Runs older than the window never matter.
    older = [("old%d" % index, {("a", "n"): True}) for index in range(3)]
    assert bool(offenders.find(older + runs, failures, window)) == named or len(states) < window


def test_the_report_with_a_repeat_offender_follows_the_verdict_schema(tmp_path):
    import jsonschema

    schema = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "docs", "verdict-schema.json")))
    for number in range(1, 4):
        report = write_run(tmp_path, "run%d" % number, ["n1"])
    assert report["repeat_offenders"][0]["node"] == "n1"
    jsonschema.validate(report, schema)


def test_the_role_refuses_a_window_whose_k_exceeds_n_before_anything_runs():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_vars

    assert role_vars.check_role_vars({"burnin_offender_failures": 2, "burnin_offender_runs": "5"}) == {"burnin_offender_failures": 2, "burnin_offender_runs": 5}
    with pytest.raises(ConfigError) as caught:
        role_vars.check_role_vars({"burnin_offender_failures": 5})
    assert "burnin_offender_failures" in str(caught.value) and "burnin_offender_runs (4)" in str(caught.value)


# What the mutation run of judging/offenders.py (docs/mutation.md) found untested: the window's bound on both sides,
# unreadable clusters and rows of an earlier report skipped without ending the read, and only `fail` counting as bad.
@pytest.mark.parametrize("runs, allowed", [(49, True), (50, True), (51, False)])
def test_the_window_is_at_most_50_runs(runs, allowed):
    if allowed:
        assert offenders.check_window(1, runs) == (1, runs)
    else:
        with pytest.raises(ConfigError) as caught:
            offenders.check_window(1, runs)
        assert str(caught.value) == "burnin_offender_runs: must be a whole number from 1 to 50, got 51"


def test_unreadable_clusters_and_rows_are_skipped_and_the_rest_read():
    report = json.loads(
        json.dumps(
            {
                "clusters": [
                    "a",
                    {"cluster": "b", "nodes": None},
                    {"cluster": "c", "nodes": {"node": "n9"}},
                    {"cluster": "d", "nodes": ["n1", {"verdict": "fail"}, {"node": "", "verdict": "fail"}, {"node": "n2", "verdict": "fail"}]},
                ]
            }
        )
    )
    assert offenders.node_states(report) == {("d", "n2"): True}


def test_only_a_failed_verdict_is_bad_without_the_sibling_rule():
    rows = [{"node": "n-%s" % verdict, "verdict": verdict, "stages": ["node"]} for verdict in ("pass", "warn", "fail", "error")] + [{"node": "n-none"}]
    states = offenders.node_states(json.loads(json.dumps({"clusters": [{"cluster": "a", "nodes": rows}]})))
    assert states == {("a", "n-pass"): False, ("a", "n-warn"): False, ("a", "n-fail"): True, ("a", "n-error"): False, ("a", "n-none"): False}
