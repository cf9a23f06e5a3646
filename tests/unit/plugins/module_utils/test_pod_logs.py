# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Putting a TrainJob's logs together: pods there now, pods removed once the job ended, logs read early or never."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import pod_logs
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import NO_PODS, collect, has_ended_once, not_started, reads_whole
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import verdict


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
    assert collect([], {})["summary"] == {"pods": 0, "collected": 0, "removed": [], "lost": [], "tails": {}, "errors": {}, "cut": {}, "note": NO_PODS}


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


# ------------------------------------------------------------------------------------------ what is read of each pod


def _published(name):
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real", "nccl", name)
    with open(path, "rb") as handle:
        return handle.read()


def _huge_launcher_log(info_lines):
    """A published crashed run (NVIDIA/nccl-tests#322) after INFO_LINES published NCCL INFO lines (NVIDIA/nccl#1357):
    the shape of a launcher's log of thousands of ranks at NCCL_DEBUG=INFO."""
    info = _published("hpcx-ibext-sharp-collnet-info.log").splitlines(True)
    body = b"".join(info[i % len(info)] for i in range(info_lines))
    return _published("gcp-a3mega-all-reduce-2x8-h100-pass.log")[:600] + body + _published("hca-all-reduce-crash-test-nccl-failure.log")


def test_a_log_within_the_cap_is_read_whole_and_not_noted():
    text = _huge_launcher_log(50)
    got, cut = pod_logs.bound_text(text, 1 << 20)
    assert got == text.decode("utf-8") and cut is None


def test_a_huge_log_keeps_its_head_its_tail_and_the_lines_between_that_are_not_nccl_info():
    text = _huge_launcher_log(200000)
    bound = pod_logs.LogBound(1 << 20)
    for start in range(0, len(text), 65536):
        bound.feed(text[start : start + 65536])
    got, cut = bound.result()
    assert len(got.encode("utf-8")) <= 1 << 20 < len(text)
    assert cut == {"size": len(text), "kept": len(got.encode("utf-8")), "lines_dropped": cut["lines_dropped"], "max_bytes": 1 << 20}
    assert 0 < cut["lines_dropped"] < 200000
    # The head (nccl-tests' first lines), the whole crashed table with its failure lines (the tail), in order.
    assert got.startswith(_published("gcp-a3mega-all-reduce-2x8-h100-pass.log")[:600].decode().rsplit("\n", 1)[0])
    assert got.endswith(_published("hca-all-reduce-crash-test-nccl-failure.log").decode())
    # What a cut log gives the verdict: the failing hosts of the crash, and a note that names the pod.
    pod = {"metadata": {"name": "job-launcher-0-0-a", "labels": {}}, "spec": {"nodeName": "n0", "hostname": "job-launcher-0-0"}, "status": {"phase": "Failed"}}
    entry = {"item": pod, "log": got, "cut": cut}
    judged = verdict.verdict_for([entry], job={"pods": [pod]}, judging={"collective": "all_reduce", "on_missing": "pass"})
    assert judged["verdict"] == "fail" and judged["reason"].startswith("the log names failing host(s) HCA-107, HCA-108, HCA-128")
    assert any(note.startswith("log of pod job-launcher-0-0-a cut to %d of its %d bytes" % (cut["kept"], cut["size"])) for note in judged["notes"])


def test_the_lines_between_that_are_not_nccl_info_are_kept_while_they_fit():
    # A table whose rows NCCL INFO lines interleave (NCCL_DEBUG=INFO's Destroy lines: NVIDIA/nccl#1706), far from both ends.
    filler = b"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n" * 20000
    middle = _published("all-reduce-tail-info-lines-before-footer.log")
    got, cut = pod_logs.bound_text(filler + middle + filler, 1 << 20)
    kept = [line for line in middle.decode().splitlines(True) if " NCCL INFO " not in line]
    assert cut and "".join(kept) in got


def test_one_endless_line_is_bounded_and_linear():
    got, cut = pod_logs.bound_text(b"x" * (5 << 20), 1 << 20)
    assert len(got) <= 1 << 20 and cut["size"] == 5 << 20


def test_the_cap_has_a_floor_and_collect_notes_the_cut_pods():
    assert pod_logs.LogBound(10).max_bytes == pod_logs.MIN_LOG_BYTES
    pod = {"metadata": {"name": "p-1", "labels": {}}, "spec": {}, "status": {"containerStatuses": [{"name": "c"}]}}
    cut = {"size": 100 << 20, "kept": 16 << 20, "lines_dropped": 12, "max_bytes": 16 << 20}
    out = pod_logs.collect([pod], {"p-1": ("text\n", None)}, cuts={"p-1": cut})
    assert out["results"][0]["cut"] == cut and list(out["summary"]["cut"]) == ["p-1"]
    assert "12 lines between were not" in out["summary"]["cut"]["p-1"]
    assert out["summary"]["note"].endswith("cut at burnin_log_max_bytes: p-1")
