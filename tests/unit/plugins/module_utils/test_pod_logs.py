# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Putting a TrainJob's logs together: pods there now, pods removed once the job ended, logs read early or never."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import NO_PODS, collect, has_ended_once, not_started, reads_whole


def pod(name, job="node", phase="Running", started=True, terminated=False):
    statuses = [{"name": "node", "state": {"terminated": {"exitCode": 1}} if terminated else {"running": {}}}]
    return {
        "metadata": {"name": name, "labels": {"jobset.sigs.k8s.io/replicatedjob-name": job}},
        "status": dict({"phase": phase}, **({"containerStatuses": statuses} if started else {})),
    }


LAUNCHER, WORKER0, WORKER1 = pod("tj-launcher-0-0", "launcher"), pod("tj-node-0-0"), pod("tj-node-0-1")


def test_every_pod_there_is_read():
    out = collect([LAUNCHER, WORKER0], {"tj-launcher-0-0": ("a\nb\n", None), "tj-node-0-0": ("w\n", None)})
    assert [r["item"]["metadata"]["name"] for r in out["results"]] == ["tj-launcher-0-0", "tj-node-0-0"]
    # The text once: not k8s_log's log_lines as well (it is held per cluster in the controller's memory).
    assert out["results"][0] == {"item": LAUNCHER, "log": "a\nb\n"}
    assert out["summary"]["note"] == "logs of 2 of 2 pods collected"
    assert out["summary"]["removed"] == [] and out["summary"]["errors"] == {}


def test_removed_pods_count_with_the_logs_the_wait_read():
    """JobSet removed both workers once the launcher was done: the wait read one of them. Both are counted; the one
    whose log nobody read is named (the case CI met: 2 pods, 1 log)."""
    out = collect([LAUNCHER], {"tj-launcher-0-0": ("table\n", None)}, seen=[LAUNCHER, WORKER0, WORKER1], early={"tj-node-0-0": "early\n"})
    summary = out["summary"]
    assert summary["pods"] == 3 and summary["collected"] == 2
    assert summary["removed"] == ["tj-node-0-0", "tj-node-0-1"] and summary["lost"] == ["tj-node-0-1"]
    assert summary["note"] == ("logs of 2 of 3 pods collected; 2 removed by their controllers once the job ended " "(tj-node-0-1 before its log could be read)")
    assert [p["metadata"]["name"] for p in out["pods"]] == ["tj-launcher-0-0", "tj-node-0-0", "tj-node-0-1"]
    assert summary["tails"] == {"tj-launcher-0-0": ["table"], "tj-node-0-0": ["early"]}


def test_a_failed_read_is_kept_per_pod_and_an_early_log_stands_in():
    out = collect(
        [LAUNCHER, WORKER0, WORKER1],
        {"tj-launcher-0-0": (None, "Cannot reach the server"), "tj-node-0-0": (None, "Forbidden"), "tj-node-0-1": ("w\n", None)},
        early={"tj-launcher-0-0": "read by the wait\n"},
    )
    assert out["results"][0]["log"] == "read by the wait\n"
    assert out["results"][1] == {"item": WORKER0, "failed": True, "msg": "Forbidden"}
    assert out["summary"]["errors"] == {"tj-node-0-0": "Forbidden"}
    assert out["summary"]["note"] == "logs of 2 of 3 pods collected; unreadable: tj-node-0-0"


def test_no_pods_says_why():
    assert collect([], {})["summary"] == {"pods": 0, "collected": 0, "removed": [], "lost": [], "tails": {}, "errors": {}, "note": NO_PODS}


def test_the_tail_kept_in_the_result_is_the_last_ten_lines():
    text = "".join("line %d\n" % i for i in range(25))
    assert collect([LAUNCHER], {"tj-launcher-0-0": (text, None)})["summary"]["tails"]["tj-launcher-0-0"][0] == "line 15"


def test_pod_states():
    assert not_started(pod("p", phase="Pending", started=False)) == "no container of the pod has started (phase Pending)"
    assert not_started(WORKER0) is None
    assert has_ended_once(pod("p", terminated=True)) and has_ended_once(pod("p", phase="Succeeded"))
    assert not has_ended_once(WORKER0)
    restarted = pod("p")
    restarted["status"]["containerStatuses"][0]["lastState"] = {"terminated": {"exitCode": 1}}
    assert has_ended_once(restarted)
    assert reads_whole(LAUNCHER, ["launcher"]) and not reads_whole(WORKER0, ["launcher"])
