# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.isolation import all_pairs, assess, findings, next_step
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import with_findings


def nodes_of(count):
    return ["n%d" % i for i in range(count)]


def isolate(nodes, bad, known_good=(), max_jobs=100, slow="fail", reproduces=True):
    """Run the planner to its conclusion against a fleet where a pair is slow when it holds a BAD node."""
    results, rounds = [], []
    while True:
        step = next_step(nodes, results, known_good=known_good, max_jobs=max_jobs)
        if step["state"] == "done":
            return step["conclusion"], results, rounds
        pairs = step["pairs"]
        used = [node for pair in pairs for node in pair]
        assert len(used) == len(set(used)), "a round's pairs share a node: %r" % pairs
        assert not set(frozenset(p) for p in pairs) & set(frozenset(r["nodes"]) for r in results), "a pair ran twice"
        rounds.append(pairs)
        for pair in pairs:
            is_slow = reproduces and bool(set(pair) & set(bad))
            busbw = 110.5 if is_slow else 441.9
            results.append({"nodes": pair, "verdict": slow if is_slow else "pass", "busbw": busbw, "size": 8589934592, "round": len(rounds)})


def test_one_bad_node_among_four_costs_at_most_four_jobs_not_all_six_pairs():
    for bad in nodes_of(4):
        conclusion, results, rounds = isolate(nodes_of(4), [bad])
        assert conclusion["outcome"] == "found"
        assert [c["node"] for c in conclusion["culprits"]] == [bad]
        assert len(results) <= 4 < all_pairs(4) == 6
        assert conclusion["good"] == sorted(set(nodes_of(4)) - {bad})
        assert len(rounds[0]) == 2  # both first pairs at once


def test_one_bad_node_among_eight_costs_six_jobs_at_most_of_28_pairs():
    worst = 0
    for bad in nodes_of(8):
        conclusion, results, rounds = isolate(nodes_of(8), [bad])
        assert [c["node"] for c in conclusion["culprits"]] == [bad]
        worst = max(worst, len(results))
        assert len(rounds) <= 3
    assert worst <= 6 and all_pairs(8) == 28


def test_the_first_pair_to_fail_is_resolved_with_one_job_when_its_tested_node_passes():
    # n3 bad: n0+n1 pass, n2+n3 fail, n2 passes with n0, so n3 is the culprit: 3 jobs in 2 rounds.
    conclusion, results, rounds = isolate(nodes_of(4), ["n3"])
    assert rounds == [[["n0", "n1"], ["n2", "n3"]], [["n2", "n0"]]]
    assert len(results) == 3
    evidence = conclusion["culprits"][0]["evidence"]
    assert [r["nodes"] for r in evidence] == [["n2", "n3"]]
    assert "n3 slow with a good partner" in conclusion["reason"]


def test_two_bad_nodes_in_one_pair_and_in_two_pairs():
    for bad in (["n2", "n3"], ["n1", "n2"], ["n0", "n5"]):
        conclusion, results, dummy = isolate(nodes_of(6), bad)
        assert conclusion["outcome"] == "found"
        assert [c["node"] for c in conclusion["culprits"]] == sorted(bad)
        assert len(results) < all_pairs(6)
    for bad in itertools.combinations(nodes_of(8), 2):
        conclusion, results, dummy = isolate(nodes_of(8), bad)
        assert [c["node"] for c in conclusion["culprits"]] == sorted(bad), bad
        assert len(results) <= 8


def test_odd_node_counts_test_the_odd_node_with_a_partner_the_first_round_proved():
    for count in (3, 5, 7):
        for bad in nodes_of(count):
            conclusion, results, rounds = isolate(nodes_of(count), [bad])
            assert [c["node"] for c in conclusion["culprits"]] == [bad], (count, bad)
            assert len(results) <= (count + 1) // 2 + 2  # the odd node costs its own job
    conclusion, results, rounds = isolate(nodes_of(5), ["n4"])
    assert rounds == [[["n0", "n1"], ["n2", "n3"]], [["n4", "n0"]]]


def test_known_good_partners_take_the_odd_node_at_once_and_are_never_suspects():
    conclusion, results, rounds = isolate(nodes_of(5), ["n4"], known_good=["spare"])
    assert rounds[0] == [["n0", "n1"], ["n2", "n3"], ["n4", "spare"]]
    assert len(rounds) == 1 and [c["node"] for c in conclusion["culprits"]] == ["n4"]
    assert "spare" not in conclusion["good"]  # not judged again: it was not a node of the run
    # A known-good node of the run is a partner, never a suspect.
    conclusion, results, rounds = isolate(nodes_of(4), ["n3"], known_good=["n0"])
    assert rounds == [[["n1", "n2"], ["n3", "n0"]]]  # n3 with its known-good partner: found in one round
    assert [c["node"] for c in conclusion["culprits"]] == ["n3"] and len(results) == 2


def test_a_fault_that_does_not_reproduce_in_pairs_says_so():
    conclusion, results, rounds = isolate(nodes_of(4), ["n2"], reproduces=False)
    assert conclusion["outcome"] == "not_reproduced"
    assert conclusion["culprits"] == [] and conclusion["good"] == nodes_of(4)
    assert len(results) == 2 and "does not reproduce" in conclusion["reason"]


def test_a_warned_pair_is_slow_too():
    conclusion, results, dummy = isolate(nodes_of(4), ["n1"], slow="warn")
    assert [c["node"] for c in conclusion["culprits"]] == ["n1"]


def test_every_pair_slow_is_undetermined_not_a_guess():
    conclusion, results, rounds = isolate(nodes_of(4), nodes_of(4))
    assert conclusion["outcome"] == "undetermined"
    assert conclusion["culprits"] == [] and conclusion["suspects"] == nodes_of(4)
    assert len(results) == all_pairs(4)  # nothing cheaper can tell four slow nodes apart


def test_two_bad_nodes_in_separate_pairs_without_a_good_partner_are_found_by_crossing():
    # n0+n1 and n2+n3 both fail; n0+n2 passes: n1 and n3 are the culprits.
    conclusion, results, rounds = isolate(nodes_of(4), ["n1", "n3"])
    assert rounds[1] == [["n0", "n2"], ["n1", "n3"]]
    assert [c["node"] for c in conclusion["culprits"]] == ["n1", "n3"]


def test_a_slow_pair_of_two_good_nodes_is_unexplained():
    results = [
        {"nodes": ["a", "b"], "verdict": "fail"},
        {"nodes": ["c", "d"], "verdict": "pass"},
        {"nodes": ["a", "c"], "verdict": "pass"},
        {"nodes": ["b", "d"], "verdict": "pass"},
    ]
    step = next_step(["a", "b", "c", "d"], results)
    assert step["state"] == "done" and step["conclusion"]["outcome"] == "unexplained"
    assert step["conclusion"]["unexplained"] == [["a", "b"]]


def test_a_budget_of_one_job_says_it_ran_out_and_what_is_known():
    conclusion, results, rounds = isolate(nodes_of(4), ["n2"], max_jobs=1)
    assert rounds == [[["n0", "n1"]]]
    assert conclusion["outcome"] == "budget_exhausted" and conclusion["jobs"] == 1
    assert conclusion["good"] == ["n0", "n1"] and conclusion["unknown"] == ["n2", "n3"]
    assert "ran out (1 job(s) of 1)" in conclusion["reason"] and "not cleared: n2, n3" in conclusion["reason"]
    step = next_step(nodes_of(4), [], max_jobs=0)
    assert step["conclusion"]["outcome"] == "budget_exhausted" and step["conclusion"]["jobs"] == 0


def test_the_time_budget_ends_it_too():
    step = next_step(nodes_of(4), [{"nodes": ["n0", "n1"], "verdict": "fail"}], max_minutes=30, elapsed_minutes=31)
    assert step["conclusion"]["outcome"] == "budget_exhausted"
    assert "31 minute(s) of 30" in step["conclusion"]["reason"]
    assert step["conclusion"]["suspects"] == ["n0", "n1"]


@pytest.mark.parametrize("elapsed, state", [(29.99, "run"), (30, "done"), (30.01, "done")])
def test_the_time_budget_ends_exactly_at_its_minutes(elapsed, state):
    step = next_step(nodes_of(4), [{"nodes": ["n0", "n1"], "verdict": "fail"}], max_minutes=30, elapsed_minutes=elapsed)
    assert step["state"] == state
    if state == "done":
        assert step["conclusion"]["outcome"] == "budget_exhausted" and "minute(s) of 30" in step["conclusion"]["reason"]


def test_the_job_budget_ends_exactly_at_its_jobs():
    first = [{"nodes": ["n0", "n1"], "verdict": "fail"}]
    # one job left of two: the round is cut to one pair; none left: done
    step = next_step(nodes_of(4), first, max_jobs=2)
    assert step["state"] == "run" and len(step["pairs"]) == 1
    step = next_step(nodes_of(4), first, max_jobs=1)
    assert step["state"] == "done" and step["conclusion"]["outcome"] == "budget_exhausted" and "ran out (1 job(s) of 1)" in step["conclusion"]["reason"]


def test_an_errored_pair_proves_nothing_and_is_not_run_again():
    results = [{"nodes": ["n0", "n1"], "verdict": "error"}, {"nodes": ["n2", "n3"], "verdict": "pass"}]
    step = next_step(nodes_of(4), results)
    assert step["state"] == "run"
    assert ["n0", "n1"] not in step["pairs"] and ["n1", "n0"] not in step["pairs"]
    assert sorted(n for pair in step["pairs"] for n in pair if n in ("n0", "n1")) == ["n0", "n1"]


def test_findings_fail_each_culprit_with_its_pairs_and_pass_the_cleared_nodes():
    conclusion, results, dummy = isolate(nodes_of(4), ["n2"])
    found = findings(conclusion, results)
    by_node = dict((f["node"], f) for f in found)
    assert by_node["n2"]["verdict"] == "fail" and by_node["n2"]["stage"] == "isolation"
    assert by_node["n2"]["evidence"]["busbw"] == 110.5 and by_node["n2"]["evidence"]["size"] == 8589934592
    assert [p["nodes"] for p in by_node["n2"]["evidence"]["pairs"]] == [["n2", "n3"], ["n2", "n0"]]
    assert "n2+n0 fail 110.5 GB/s" in by_node["n2"]["reason"]
    assert set(by_node) == set(nodes_of(4)) and all(by_node[n]["verdict"] == "pass" for n in ("n0", "n1", "n3"))
    merged = with_findings({"node_findings": []}, found)
    assert merged["node_verdicts"]["n2"]["verdict"] == "fail"


def test_bad_input_names_the_field():
    with pytest.raises(ConfigError, match="results.0..nodes"):
        next_step(["a", "b"], [{"nodes": ["a", "z"], "verdict": "pass"}])
    with pytest.raises(ConfigError, match="verdict"):
        next_step(["a", "b"], [{"nodes": ["a", "b"], "verdict": "maybe"}])
    with pytest.raises(ConfigError, match="max_jobs"):
        next_step(["a", "b"], [], max_jobs=-1)
    with pytest.raises(ConfigError, match="nodes"):
        next_step(["a", "a"], [])


def test_assess_uses_known_good_to_convict():
    known = assess(["a", "b"], ["g"], [{"nodes": ["a", "g"], "verdict": "fail"}])
    assert known["bad"] == ["a"] and known["unknown"] == ["b"]


def test_two_nodes_without_a_known_good_partner_run_nothing_and_with_one_are_told_apart():
    step = next_step(["a", "b"], [])
    assert step["state"] == "done" and step["conclusion"]["outcome"] == "undetermined" and step["conclusion"]["jobs"] == 0
    conclusion, results, rounds = isolate(["a", "b"], ["b"], known_good=["g"])
    assert [c["node"] for c in conclusion["culprits"]] == ["b"] and len(results) == 2


def test_only_a_slow_pair_of_two_good_nodes_is_unexplained():
    # What the mutation run of judging/isolation.py (docs/mutation.md) found untested: a slow pair with a bad node
    # is explained by it; one whose nodes both passed with other partners is not.
    results = [
        {"nodes": ["a", "b"], "verdict": "fail"},
        {"nodes": ["a", "g"], "verdict": "pass"},
        {"nodes": ["b", "h"], "verdict": "pass"},
        {"nodes": ["c", "g"], "verdict": "fail"},
    ]
    known = assess(["a", "b", "c"], ["g", "h"], results)
    assert known["bad"] == ["c"]
    assert known["unexplained"] == [{"nodes": ["a", "b"], "verdict": "fail"}]
