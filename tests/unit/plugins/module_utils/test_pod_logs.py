# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Putting a TrainJob's logs together: pods there now, pods removed once the job ended, logs read early or never."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

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


# What the mutation run of cluster/pod_logs.py whole (issue 47, fifth round) left.


@pytest.mark.parametrize(
    "text, lines, want",
    [("a\nb\nc\n", None, "a\nb\nc\n"), ("a\nb\nc\n", 2, "b\nc\n"), ("a\nb\nc", "1", "c"), ("a\nb\nc\n", 5, "a\nb\nc\n"), ("a\n", 0, ""), (None, 3, None)],
)
def test_a_tail_of_lines_as_the_api_gives_it(text, lines, want):
    assert pod_logs.tail_of(text, lines) == want


@pytest.mark.parametrize("status, ended", [({"phase": "Succeeded"}, True), ({"phase": "Failed"}, True), ({"phase": "Running"}, False), (None, False)])
def test_a_pod_has_ended_for_good_in_a_final_phase_only(status, ended):
    assert pod_logs.has_ended_for_good({"status": status} if status is not None else {}) is ended


def test_a_log_of_a_few_mebibytes_is_read_whole_by_default():
    text = b"".join(b"line %07d of a long but ordinary log\n" % index for index in range(100000))  # 3.7 MiB
    assert pod_logs.LogBound().max_bytes == 16 << 20
    assert pod_logs.bound_text(text) == (text.decode("utf-8"), None)


def fed_in_chunks(text, cap=pod_logs.MIN_LOG_BYTES, chunk=4096):
    """LogBound(CAP)'s result of TEXT fed CHUNK bytes at a time, as a pod's log stream arrives."""
    bound = pod_logs.LogBound(cap)
    for start in range(0, len(text), chunk):
        bound.feed(text[start : start + chunk])
    return bound.result()


def test_every_spill_keeps_its_lines_that_are_not_nccl_info_and_counts_the_dropped_ones():
    # 3000 lines, 3 in 40 not NCCL INFO (the middle's share holds them all), fed in 4 KiB chunks under the smallest
    # cap: the tail spills several times, and each spill adds its lines to the middle after the earlier ones.
    lines = [
        (b"h:1:1 [0] WARN line %04d kept\n" % index) if index % 40 in (7, 19, 33) else (b"h:1:1 [0] NCCL INFO Channel %04d via P2P/CUMEM\n" % index)
        for index in range(3000)
    ]
    text = b"".join(lines)
    got, cut = fed_in_chunks(text)
    kept = got.encode("utf-8").splitlines(True)
    assert cut["size"] == len(text) and len(got.encode("utf-8")) <= pod_logs.MIN_LOG_BYTES
    assert [line for line in lines if b"WARN" in line] == [line for line in kept if b"WARN" in line]
    assert cut["lines_dropped"] == len(lines) - len(kept) > 0


def test_a_log_without_nccl_info_lines_fills_its_cap_up_to_a_line_in_each_part():
    lines = [b"rank %05d: a table row or a warning, nothing of NCCL's INFO\n" % index for index in range(4000)]
    got, cut = pod_logs.bound_text(b"".join(lines), pod_logs.MIN_LOG_BYTES)
    kept = got.encode("utf-8")
    # head, middle and tail each end on a line: less than three lines short of the cap
    assert pod_logs.MIN_LOG_BYTES - 3 * len(lines[0]) < len(kept) <= pod_logs.MIN_LOG_BYTES
    # whole lines of the log, in its order
    assert kept.splitlines(True) == sorted(kept.splitlines(True)) and set(kept.splitlines(True)) <= set(lines)
    assert cut["lines_dropped"] == len(lines) - len(kept.splitlines(True))


def test_the_logs_are_written_one_file_a_pod(tmp_path):
    results = [
        {"item": {"metadata": {"name": "job-node-0-0"}}, "log": "NCCL version 2.21.5\n"},
        {"item": {"metadata": {"name": "job-node-0-1"}}, "failed": True, "msg": "pod gone"},
        {"item": {"metadata": {"name": "job-node-0-2"}}, "log": None},
    ]
    paths, changed = pod_logs.write_logs(str(tmp_path / "logs"), results)
    assert [os.path.basename(path) for path in paths] == ["job-node-0-0.log", "job-node-0-2.log"] and changed
    assert (tmp_path / "logs" / "job-node-0-0.log").read_text() == "NCCL version 2.21.5\n"
    assert (tmp_path / "logs" / "job-node-0-2.log").read_text() == ""
    assert pod_logs.write_logs(str(tmp_path / "logs"), results) == (paths, False)


def test_a_last_line_longer_than_the_tail_counts_as_one_line_dropped():
    head = b"".join(b"NCCL version line %03d\n" % index for index in range(400))  # over the head's eighth
    got, cut = pod_logs.bound_text(head + b"#" * (200 << 10), pod_logs.MIN_LOG_BYTES)
    kept = got.encode("utf-8")
    assert kept.endswith(b"#" * (pod_logs.MIN_LOG_BYTES // pod_logs.TAIL_SHARE)) and not kept.endswith(
        b"#" * (pod_logs.MIN_LOG_BYTES // pod_logs.TAIL_SHARE + 1)
    )
    # the head's lines that did not fit, and the one long line whose start is gone
    assert cut["lines_dropped"] == 400 - kept.count(b"\n") + 1


def test_a_middle_that_fills_at_a_later_spill_stays_full():
    # Lines that are not NCCL INFO few at first (the middle takes them), then only such lines (the middle fills at a
    # later spill, not the first): what is kept stays within the cap, whole lines in order.
    lines = [
        (b"%05d [0] NCCL INFO Channel via P2P/CUMEM\n" % index) if index < 1500 and index % 40 else (b"%05d [0] a row or a warning\n" % index)
        for index in range(6000)
    ]
    got, cut = fed_in_chunks(b"".join(lines))
    kept = got.encode("utf-8").splitlines(True)
    assert pod_logs.MIN_LOG_BYTES - 3 * len(lines[-1]) < len(got.encode("utf-8")) <= pod_logs.MIN_LOG_BYTES
    assert kept == sorted(kept) and set(kept) <= set(lines)
    # the few of the first part all kept (the middle took them before it filled)
    assert set(line for line in lines[:1500] if b"INFO" not in line) <= set(kept)
    assert cut["lines_dropped"] == len(lines) - len(kept)


def test_an_empty_line_before_a_line_longer_than_the_middle_is_kept():
    # The head's eighth holds exactly its 128 lines; then an empty line, a line longer than the middle's share, and
    # NCCL INFO lines: the middle keeps what fits of the lines that are not INFO, whole lines, here the empty one.
    head = b"".join(b"head line %053d\n" % index for index in range(128))
    assert len(head) == pod_logs.MIN_LOG_BYTES // pod_logs.HEAD_SHARE
    info = b"".join(b"h:1:1 [0] NCCL INFO Channel %05d via P2P/CUMEM\n" % index for index in range(3000))
    got, cut = pod_logs.bound_text(head + b"\n" + b"y" * 30000 + b"\n" + info, pod_logs.MIN_LOG_BYTES)
    kept = got.encode("utf-8")
    assert kept.startswith(head + b"\n" + b"h:1:1 [0] NCCL INFO Channel") and info.endswith(kept[len(head) + 1 :])
    assert cut["lines_dropped"] == 1 + 3000 - (kept.count(b"\n") - 129)


def test_a_line_longer_than_the_middle_right_after_the_head_is_dropped_whole():
    head = b"".join(b"head line %053d\n" % index for index in range(128))
    info = b"".join(b"h:1:1 [0] NCCL INFO Channel %05d via P2P/CUMEM\n" % index for index in range(3000))
    got, cut = pod_logs.bound_text(head + b"y" * 30000 + b"\n" + info, pod_logs.MIN_LOG_BYTES)
    kept = got.encode("utf-8")
    assert kept.startswith(head + b"h:1:1 [0] NCCL INFO Channel") and info.endswith(kept[len(head) :])
    assert cut["lines_dropped"] == 1 + 3000 - (kept.count(b"\n") - 128)


@pytest.mark.parametrize("head_lines", [400, 401, 402, 403])
def test_a_last_line_longer_than_the_tail_counts_as_one_line_dropped_after_any_number_of_lines(head_lines):
    # an odd and an even number of whole lines dropped before the long line's cut start: each counts one, and the long
    # line one more
    head = b"".join(b"NCCL version line %03d\n" % index for index in range(head_lines))
    got, cut = pod_logs.bound_text(head + b"#" * (200 << 10), pod_logs.MIN_LOG_BYTES)
    kept = got.encode("utf-8")
    assert kept.endswith(b"#" * (pod_logs.MIN_LOG_BYTES // pod_logs.TAIL_SHARE))
    assert cut["lines_dropped"] == head_lines - kept.count(b"\n") + 1


@pytest.mark.parametrize("before_tail, kept", [(1, False), (0, True)])
def test_the_tail_starts_at_the_first_line_starting_in_the_last_half_of_the_cap(before_tail, kept):
    # NCCL INFO lines of 64 bytes; a marked one starts BEFORE_TAIL bytes before the log's last cap // 2 bytes: one byte
    # before, it is not the tail's (dropped with the INFO lines between head and tail); at their start, it is the
    # tail's first line (docs/nccl-corpus.md, "What is read of each pod": the head, the tail and the lines between)
    cap = pod_logs.MIN_LOG_BYTES
    tail_budget = cap // pod_logs.TAIL_SHARE

    def line(tag, length=64):
        text = b"h:1:1 [0] NCCL INFO %s " % tag
        return text + b"x" * (length - len(text) - 1) + b"\n"

    after = tail_budget + before_tail - 64  # bytes after the marked line: whole lines and a last one of 64 to 127
    rest = [line(b"after-%04d" % index) for index in range(after // 64 - 1)]
    rest.append(line(b"last", 64 + after % 64))
    text = b"".join(line(b"before-%04d" % index) for index in range(600)) + line(b"MARKED") + b"".join(rest)
    assert len(text) - text.index(b"h:1:1 [0] NCCL INFO MARKED") == tail_budget + before_tail and len(text) > cap
    got, cut = pod_logs.bound_text(text, cap)
    assert (b"MARKED" in got.encode("utf-8")) is kept and cut["size"] == len(text)
    assert got.encode("utf-8").endswith(b"".join(rest))


@pytest.mark.parametrize("removed", [[], [WORKER0], [WORKER0, WORKER1]])
def test_the_pods_counted_are_those_there_now_and_those_removed(removed):
    # one pod there now and none, one or two removed (1 + 1: a sum, not the bits of the two counts)
    out = collect([LAUNCHER], {"tj-launcher-0-0": ("table\n", None)}, seen=[LAUNCHER] + removed)
    assert out["summary"]["pods"] == 1 + len(removed) == len(out["pods"])


def _info(index, length=64):
    text = b"h:1:1 [0] NCCL INFO Channel %05d " % index
    return text + b"x" * (length - len(text) - 1) + b"\n"


@pytest.mark.parametrize("shape", ["interleaved", "long last line"])
def test_a_line_that_is_not_nccl_info_is_kept_whatever_the_info_marks_of_its_block(shape):
    # Between the head and the tail, the lines that are not NCCL INFO lines are kept while they fit, also in a spilled
    # block with as many NCCL INFO marks as lines: two ranks' INFO lines interleaved on one line (mpirun's shared
    # stdout), or a last line longer than the tail that starts as an INFO line (its start is in the block, no newline)
    head = b"".join(b"head line %053d\n" % index for index in range(128))
    warn = b"h:2:2 [1] NCCL WARN Net : Connection closed by remote peer\n"
    if shape == "interleaved":
        between = b"h:1:1 [0] NCCL INFO Channel 00/0 : h:2:2 [1] NCCL INFO Channel 01/0\n" + warn + b"".join(_info(i) for i in range(430))
        text = head + between + b"".join(_info(i) for i in range(512))
    else:
        between = warn + b"".join(_info(i) for i in range(430))
        text = head + between + b"h:1:1 [0] NCCL INFO " + b"y" * (40 << 10)
    got, cut = pod_logs.bound_text(text, pod_logs.MIN_LOG_BYTES)
    kept = got.encode("utf-8")
    assert cut is not None and kept.startswith(head + warn)
