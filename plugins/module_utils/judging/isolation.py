# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Isolation: which nodes made a multi-node (fleet stage) run fail or warn, found with as few extra jobs as possible.

Pure: the caller runs the jobs (plugins/action/burnin_isolate.py) and calls :func:`next_step` again with every
result so far, until it returns a conclusion.

Why pairs, not halves. A job over half the nodes halves the suspects per job (about 2*log2(n) jobs for one bad node)
but its rounds run one after the other (log2(n) rounds), each job's thresholds are those of another node count,
and a second bad node or a fault that does not reproduce needs a new search. Pairs of two nodes are judged against
the same 2-node thresholds, all pairs of a round run at once (each node in at most one job: a job takes all of a
node's GPUs), and two rounds are usually enough:

1. every suspect node in a pair with another (disjoint pairs, n/2 jobs); an odd node out goes with a known-good
   partner, or waits for one the first round proves;
2. a pair that failed (or warned) has at least one bad node: one of its nodes runs again with a good partner. It
   passes: it is good and its first partner is the culprit. It fails: it is a culprit, and its first partner needs
   its own test (both may be bad). One node per failed pair and round, so the common case costs one job, not two.

One bad node among n: n/2 + 1 jobs, at worst n/2 + 2 (4 nodes: 3 or 4 jobs, not all 6 pairs; 8 nodes: 5 or 6, not
28). Every pass clears both of its nodes. When no good partner exists (every first-round pair failed), suspects are
paired anew with partners they have not run with; when no such pair is left the conclusion is ``undetermined``
(also at once for a run of 2 nodes without a known-good partner: its one pair is the run itself).

A pair result: {nodes: [a, b], verdict: pass | warn | fail | error, ...} (the caller adds busbw, size, reason, the
TrainJob's name, the round). warn and fail are slow; error (no result) says nothing about its nodes, and the same
pair is never run twice.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding

STAGE = "isolation"
SLOW = ("warn", "fail")
PAIR_VERDICTS = ("pass", "warn", "fail", "error")
# Conclusions: culprits found; every node passed in pairs; pairs failed although their nodes passed with others;
# the budget ran out first; no pair left to tell the suspects apart.
OUTCOMES = ("found", "not_reproduced", "unexplained", "budget_exhausted", "undetermined")


def _pair(result):
    return frozenset(result["nodes"])


def _check(nodes, known_good, results, max_jobs):
    if len(set(nodes)) != len(nodes) or not all(nodes):
        raise ConfigError("nodes", "must be distinct node names, got %r" % (list(nodes),))
    if isinstance(max_jobs, bool) or not isinstance(max_jobs, int) or max_jobs < 0:
        raise ConfigError("max_jobs", "must be an integer >= 0, got %r" % (max_jobs,))
    known = set(nodes) | set(known_good)
    for index, result in enumerate(results):
        pair = list(result.get("nodes") or [])
        if len(pair) != 2 or len(set(pair)) != 2 or not set(pair) <= known:
            raise ConfigError("results[%d].nodes" % index, "must be two distinct nodes of the run or known-good, got %r" % (pair,))
        if result.get("verdict") not in PAIR_VERDICTS:
            raise ConfigError("results[%d].verdict" % index, "must be one of %s, got %r" % (", ".join(PAIR_VERDICTS), result.get("verdict")))


def assess(nodes, known_good, results):
    """What RESULTS prove about NODES: {good, bad, unknown (sorted lists of NODES), slow_pairs (failed or warned
    pairs, in run order), unexplained (slow pairs whose nodes both passed with other partners)}. KNOWN_GOOD nodes are
    good without a test."""
    good = set(known_good)
    slow = [result for result in results if result["verdict"] in SLOW]
    for result in results:
        if result["verdict"] == "pass":
            good.update(result["nodes"])
    bad = set()
    for result in slow:
        first, second = result["nodes"]
        if first in good and second not in good:
            bad.add(second)
        elif second in good and first not in good:
            bad.add(first)
    unexplained = [result for result in slow if set(result["nodes"]) <= good]
    return {
        "good": sorted(set(nodes) & good),
        "bad": sorted(bad),
        "unknown": sorted(set(nodes) - good - bad),
        "slow_pairs": slow,
        "unexplained": unexplained,
    }


def _plan_round(nodes, known_good, results, known):
    """The next round's disjoint pairs, most telling first: one node of each slow pair whose nodes are both unknown,
    then the unknown partner of a culprit, each with a good partner; then the unknown nodes no conclusive pair has
    held, paired together (the odd one with a good partner); with no good node at all, unknown nodes paired anew."""
    ran = set(_pair(result) for result in results)
    good = [node for node in sorted(known_good) if node not in nodes] + known["good"]
    good = sorted(set(good), key=good.index)
    unknown, bad = set(known["unknown"]), set(known["bad"])
    busy, jobs = set(), []

    def take(first, second):
        busy.update((first, second))
        jobs.append([first, second])

    def good_partner(node):
        return next((g for g in good if g not in busy and frozenset((node, g)) not in ran), None)

    for result in known["slow_pairs"]:
        first, second = result["nodes"]
        pending = [node for node in (first, second) if node in unknown]
        if not pending or any(node in busy for node in pending):
            continue
        if len(pending) == 2 or (len(pending) == 1 and (first in bad or second in bad)):
            node = pending[0]
            partner = good_partner(node)
            if partner is not None:
                take(node, partner)
    in_conclusive = set()
    for result in results:
        if result["verdict"] != "error":
            in_conclusive.update(result["nodes"])
    fresh = [node for node in nodes if node in unknown and node not in in_conclusive and node not in busy]
    while len(fresh) >= 2:
        first = fresh.pop(0)
        second = next((node for node in fresh if frozenset((first, node)) not in ran), None)
        if second is None:
            partner = good_partner(first)
            if partner is not None:
                take(first, partner)
            continue
        fresh.remove(second)
        take(first, second)
    for node in fresh:
        partner = good_partner(node)
        if partner is not None:
            take(node, partner)
    if not jobs and not [g for g in good if g not in busy]:
        # No good node to compare with: suspects with partners they have not run with.
        waiting = [node for node in nodes if node in unknown]
        while waiting:
            first = waiting.pop(0)
            second = next((node for node in waiting if frozenset((first, node)) not in ran), None)
            if second is not None:
                waiting.remove(second)
                take(first, second)
    return jobs


def _pairs_of(node, results):
    return [result for result in results if node in result["nodes"]]


def _conclusion(outcome, known, results, reason):
    culprits = [{"node": node, "evidence": _pairs_of(node, results)} for node in known["bad"]]
    suspects = sorted(set(node for result in known["slow_pairs"] for node in result["nodes"]) & set(known["unknown"]))
    return {
        "outcome": outcome,
        "reason": reason,
        "culprits": culprits,
        "good": known["good"],
        "unknown": known["unknown"],
        "suspects": suspects,
        "unexplained": [list(result["nodes"]) for result in known["unexplained"]],
        "jobs": len(results),
    }


def _names(nodes):
    return ", ".join(nodes) or "none"


def next_step(nodes, results=(), known_good=(), max_jobs=8, max_minutes=None, elapsed_minutes=0, ran_together=True):
    """The next round to run, or the conclusion.

    NODES: the nodes of the failed run; RESULTS: every pair result so far, in run order; KNOWN_GOOD: nodes known to
    be good (they are partners, never suspects; outside NODES or in it); MAX_JOBS: pair jobs in all; MAX_MINUTES:
    minutes in all (None: no limit), ELAPSED_MINUTES spent; RAN_TOGETHER: NODES ran together in the run being
    isolated (false for the sweep's pairs, burnin/isolation_stage.py sweep_pairs(): no run came before them, so a pair
    of exactly two nodes is a new test, not a repeat). Returns {state: run, pairs: [[a, b], ...], known} or
    {state: done, conclusion: {outcome (OUTCOMES), reason, culprits [{node, evidence: its pair results}], good,
    unknown, suspects (unknown nodes of slow pairs), unexplained (pairs), jobs}, known}.
    """
    nodes = list(nodes)
    results = [dict(result, nodes=list(result["nodes"])) for result in results]
    known_good = list(known_good or [])
    _check(nodes, known_good, results, max_jobs)
    known = assess(nodes, known_good, results)
    jobs = len(results)

    def done(outcome, reason):
        return {"state": "done", "conclusion": _conclusion(outcome, known, results, reason), "known": known}

    if not known["unknown"]:
        if known["bad"]:
            return done("found", "%s slow with a good partner in %d job(s): %s" % (_names(known["bad"]), jobs, _culprit_lines(known, results)))
        if known["unexplained"]:
            return done(
                "unexplained",
                "no single node is at fault: pair(s) %s were slow although each node passed with another partner (a link between them?)"
                % "; ".join("+".join(result["nodes"]) for result in known["unexplained"]),
            )
        if not ran_together:
            return done("not_reproduced", "every node passed in pairs (%d job(s)): %s" % (jobs, "; ".join(_result_text(result) for result in results)))
        return done(
            "not_reproduced",
            "every node passed in pairs (%d job(s)): the fault of the run does not reproduce with two nodes (it needs more nodes, or it was transient)" % jobs,
        )
    if ran_together and len(nodes) < 3 and not [node for node in known_good if node not in nodes] and not results:
        # The only pair is the run itself: running it again tells nothing about which of its nodes is at fault.
        return done("undetermined", "a run of %d node(s) and no known-good partner: a pair job would only repeat the run" % len(nodes))
    remaining = max_jobs - jobs
    out_of_time = max_minutes is not None and elapsed_minutes >= max_minutes
    if remaining <= 0 or out_of_time:
        spent = "%d minute(s) of %d" % (elapsed_minutes, max_minutes) if out_of_time else "%d job(s) of %d" % (jobs, max_jobs)
        return done("budget_exhausted", "the isolation budget ran out (%s); %s" % (spent, _known_line(known)))
    pairs = _plan_round(nodes, known_good, results, known)
    if not pairs:
        return done("undetermined", "no pair is left to tell the suspects apart (no good partner, every pair of them ran); %s" % _known_line(known))
    return {"state": "run", "pairs": pairs[:remaining], "known": known}


def _culprit_lines(known, results):
    lines = []
    for node in known["bad"]:
        slow = [result for result in _pairs_of(node, results) if result["verdict"] in SLOW]
        lines.append("%s (%s)" % (node, "; ".join(_result_text(result) for result in slow)))
    return ", ".join(lines)


def _known_line(known):
    text = "culprits so far: %s; good: %s; not cleared: %s" % (_names(known["bad"]), _names(known["good"]), _names(known["unknown"]))
    return text


def _result_text(result):
    busbw = result.get("busbw")
    return "%s+%s %s%s" % (result["nodes"][0], result["nodes"][1], result["verdict"], " %.1f GB/s" % busbw if isinstance(busbw, (int, float)) else "")


def all_pairs(count):
    """The number of pairs of COUNT nodes, n*(n-1)/2: what testing every pair would cost."""
    return count * (count - 1) // 2


def _measure(evidence_pairs):
    """busbw and size of the slowest conclusive pair (the bandwidth evidence convention of node_findings.py)."""
    measured = [result for result in evidence_pairs if isinstance(result.get("busbw"), (int, float))]
    if not measured:
        return {}
    slowest = min(measured, key=lambda result: result["busbw"])
    out = {"busbw": float(slowest["busbw"])}
    if slowest.get("size") is not None:
        out["size"] = slowest["size"]
    return out


def _evidence_pair(result):
    return dict((key, result[key]) for key in ("nodes", "verdict", "busbw", "size", "reason", "trainjob", "round") if key in result)


def findings(conclusion, results, stage=STAGE):
    """The isolation's node findings (node_findings.py): fail for each culprit (its pair results as evidence), pass
    for each node a pair proved good (known-good partners are not judged again)."""
    found = []
    for culprit in conclusion.get("culprits") or []:
        pairs = [_evidence_pair(result) for result in culprit["evidence"]]
        slow = [result for result in pairs if result["verdict"] in SLOW]
        evidence = dict(_measure(slow), pairs=pairs)
        found.append(finding(culprit["node"], stage, "fail", "slow with a good partner: %s" % "; ".join(_result_text(result) for result in slow), evidence))
    for node in conclusion.get("good") or []:
        passed = [_evidence_pair(result) for result in _pairs_of(node, results) if result["verdict"] == "pass"]
        if not passed:
            continue
        evidence = dict(_measure(passed), pairs=passed)
        found.append(finding(node, stage, "pass", "passed in pairs: %s" % "; ".join(_result_text(result) for result in passed), evidence))
    return found
