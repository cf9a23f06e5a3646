# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Repeat offenders ("lemon nodes"): a node that was bad in K of its last N runs, this run included.

A node is bad in a run when its verdict there was ``fail``, or when the sibling rule (judging/siblings.py) named it
(a finding of stage ``siblings`` that did not pass). Its last N runs are the last N runs that judged it (a run that
did not see the node does not count). Nodes are told apart by cluster and node name. Meta's reliability study of its
research clusters finds such nodes from repeated failures across jobs ("Revisiting Reliability in Large-Scale Machine
Learning Research Clusters", arXiv:2410.21680, lemon node detection); the action is the table's ``repeat_offender``
rule (_lib/actions.yaml): ``replace``. Pure: reading the earlier reports is reporting/writer.py's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

DEFAULT_FAILURES = 3
DEFAULT_RUNS = 4
MAX_RUNS = 50


def check_window(failures, runs):
    """(failures, runs) as whole numbers with 1 <= failures <= runs <= MAX_RUNS, else ConfigError naming the variable."""
    for name, value in (("burnin_offender_failures", failures), ("burnin_offender_runs", runs)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RUNS:
            raise ConfigError(name, "must be a whole number from 1 to %d, got %r" % (MAX_RUNS, value))
    if failures > runs:
        raise ConfigError("burnin_offender_failures", "must not exceed burnin_offender_runs (%d), got %d" % (runs, failures))
    return failures, runs


def node_states(report):
    """{(cluster, node): bad?} of a JSON report (its clusters' nodes entries; untrusted: anything unreadable is skipped)."""
    states = {}
    for cluster in (report or {}).get("clusters") or []:
        if not isinstance(cluster, dict) or not isinstance(cluster.get("nodes"), list):
            continue
        for row in cluster["nodes"]:
            if not isinstance(row, dict) or not row.get("node"):
                continue
            below = "siblings" in (row.get("stages") or []) and row.get("verdict") in ("warn", "fail")
            states[(str(cluster.get("cluster")), str(row["node"]))] = row.get("verdict") == "fail" or below
    return states


def find(runs, failures=DEFAULT_FAILURES, window=DEFAULT_RUNS):
    """The repeat offenders among RUNS ([(run_id, {(cluster, node): bad?})], oldest first, the current run last):
    [{cluster, node, bad_runs, runs, run_ids (the bad ones), reason}] of the nodes of the current run that were bad in
    at least FAILURES of their last WINDOW runs."""
    failures, window = check_window(failures, window)
    if not runs:
        return []
    current = runs[-1][1]
    found = []
    for key in sorted(current):
        seen = [(run_id, states[key]) for run_id, states in runs if key in states][-window:]
        bad = [run_id for run_id, state in seen if state]
        if len(bad) >= failures:
            found.append(
                {
                    "cluster": key[0],
                    "node": key[1],
                    "bad_runs": len(bad),
                    "runs": len(seen),
                    "run_ids": bad,
                    "reason": "repeat offender: failed or below its siblings in %d of its last %d runs (%s; rule: %d of %d)"
                    % (len(bad), len(seen), ", ".join(bad), failures, window),
                }
            )
    return found


__all__ = ["check_window", "find", "node_states"]
