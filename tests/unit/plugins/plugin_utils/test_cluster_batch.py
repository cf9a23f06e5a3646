# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""plugins/plugin_utils/cluster_batch.py: a batch's hosts sorted into driven, left out and broken, each cluster's entry
as the role keeps it, and a cancel by a real signal recorded and handed to the signal's own handler. The clusters'
stages are a fake run_cluster_stage (plugin_utils/cluster_stages.py has its own tests)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import threading

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.plugin_utils import cluster_batch

NAME = "gpufleet.burnin.burnin_batch"


def inputs(run_id="r1", report_dir=None, stages=("fleet",)):
    variables = {"burnin_stages": list(stages)}
    if report_dir:
        variables["burnin_report_dir"] = report_dir
    args = {"run_id": run_id, "namespace": "burnin", "variables": variables, "result": {"cluster": "x", "run_id": run_id}, "cluster": {}}
    return args, {"context": "ctx"}


def _detected(auth, name, args, progress=None):
    """cluster_stages.detect_cluster for a cluster that was read and matches its group."""
    return {"record": args["result"], "cluster": {}, "lines": [], "steps": []}


def test_hosts_are_driven_left_out_or_broken_and_counted(monkeypatch):
    calls = []

    def stage(auth, name, args, **options):
        calls.append((args["host"] if "host" in args else None, args["stage"], auth["context"]))
        diff = [{"before_header": "TrainJob/j", "after_header": "TrainJob/j"}]
        if args["run_id"] == "bad":
            return {"failed": True, "record": args["result"], "msg": "waiting: timed out", "error": None}
        return {"changed": True, "record": dict(args["result"], done=args["stage"]), "lines": [args["stage"]], "diff": diff}

    monkeypatch.setattr(cluster_batch, "run_cluster_stage", stage)
    monkeypatch.setattr(cluster_batch, "detect_cluster", _detected)

    def inputs_of(host):
        if host == "undetected":
            return None
        if host == "broken":
            raise BurninError("api_key: not a string")
        args, auth = inputs(run_id="bad" if host == "failing" else "r1", stages=("node", "fleet"))
        return dict(args, host=host), auth

    lines = []
    out = cluster_batch.drive_batch(
        NAME, ["ok", "failing", "undetected", "broken"], inputs_of, lambda host: {"run_id": "r1", "cluster": host}, lines.append, diff=True
    )
    assert out["left_out"] == ["undetected"] and out["changed"] is True
    assert out["msg"] == "4 cluster(s): 1 ran every stage, 2 failed, 1 not driven"
    assert out["clusters"]["ok"]["record"]["done"] == "fleet" and out["clusters"]["ok"]["lines"] == ["node", "fleet"]
    # a failed stage ends the cluster's stages; its record names the stage as the role's rescue does
    failing = out["clusters"]["failing"]
    assert failing["failed"] and failing["stage"] == "node" and "Run the stage node" in json.dumps(failing["record"]) and failing["detail"] == ""
    assert out["clusters"]["broken"]["msg"] == "%s: broken: api_key: not a string" % NAME and out["clusters"]["broken"]["failed"]
    # every diff headed by its host, the hosts in order
    assert [d["before_header"] for d in out["diff"]] == ["ok: TrainJob/j", "ok: TrainJob/j"]
    assert sorted(set(call[0] for call in calls)) == ["failing", "ok"] and all(call[2] == "ctx" for call in calls)
    assert lines[0] == "%s: 2 cluster(s) at once: failing, ok" % NAME
    assert "gpufleet.burnin.cleanup -e burnin_run_id=bad" in lines[1] and "burnin_run_id=r1" in lines[2]
    # each stage's lines and each failure told as they happen (the role fails the host only at the end), the broken
    # host's after the batch (the clusters' threads tell theirs in any order)
    assert sorted(lines[3:-1]) == sorted(["node", "fleet", "failing: node stage failed: waiting: timed out"])
    assert lines[-1] == "%s: broken: api_key: not a string" % NAME


def test_a_clusters_record_is_stamped_finished_as_its_stages_end_not_before(monkeypatch):
    # The stamp names the thread that made it: each cluster's own (batch_run's thread per cluster) when its last stage
    # or its failure ended it; the batch's own for a host whose options were wrong.
    monkeypatch.setattr(cluster_batch, "utc_stamp", lambda: "at the end of " + threading.current_thread().name)
    seen = []

    def stage(auth, name, args, **options):
        seen.append((args["host"], args["stage"], "finished" in args["result"]))
        if args["host"] == "failing":
            return {"failed": True, "record": args["result"], "msg": "waiting: timed out", "error": None}
        return {"record": dict(args["result"], done=args["stage"]), "lines": []}

    monkeypatch.setattr(cluster_batch, "run_cluster_stage", stage)
    monkeypatch.setattr(cluster_batch, "detect_cluster", _detected)

    def inputs_of(host):
        if host == "broken":
            raise BurninError("api_key: not a string")
        args, auth = inputs(stages=("node", "fleet"))
        return dict(args, host=host), auth

    out = cluster_batch.drive_batch(NAME, ["ok", "failing", "broken"], inputs_of, lambda host: {"run_id": "r1", "cluster": host}, lambda line: None)
    records = dict((host, entry["record"]) for host, entry in out["clusters"].items())
    assert records["ok"]["finished"] == "at the end of gpufleet-burnin-ok" and records["ok"]["done"] == "fleet"
    assert records["failing"]["finished"] == "at the end of gpufleet-burnin-failing"
    assert records["broken"]["finished"] == "at the end of " + threading.current_thread().name
    # No stage got a record stamped already: the stamp is the end of the last one.
    assert sorted(seen) == [("failing", "node", False), ("ok", "fleet", False), ("ok", "node", False)]


REMEDIATION = {"burnin_wait": True, "burnin_collect_logs": True, "burnin_label_verified": True, "burnin_quarantine": "none", "burnin_node_marks": False}


@pytest.mark.parametrize("check_mode", [False, True])
def test_the_remediation_follows_a_clusters_last_stage_when_asked_and_its_failure_is_named(monkeypatch, check_mode):
    remediated = []

    def stage(auth, name, args, **options):
        if args["host"] == "failing":
            return {"failed": True, "record": args["result"], "msg": "waiting: timed out", "error": None}
        return {"record": dict(args["result"], node_verdicts={"n1": {"verdict": "pass"}}), "lines": []}

    def remediate(auth, name, args, diff=False):
        remediated.append((args["host"], args["result"].get("node_verdicts")))
        if args["host"] == "refused":
            return {"failed": True, "record": args["result"], "msg": "patching node n1: may not patch nodes", "error": {"category": "Forbidden"}}
        return {"record": dict(args["result"], remediation={"nodes": ["n1"]}), "changed": True, "lines": ["%s: remediated 1 node(s): n1" % args["host"]]}

    monkeypatch.setattr(cluster_batch, "run_cluster_stage", stage)
    monkeypatch.setattr(cluster_batch, "detect_cluster", _detected)
    monkeypatch.setattr(cluster_batch, "remediate_cluster", remediate)

    def inputs_of(host):
        args, auth = inputs()
        variables = dict(args["variables"], **REMEDIATION) if host != "unasked" else args["variables"]
        return dict(args, host=host, variables=variables), auth

    lines = []
    out = cluster_batch.drive_batch(NAME, ["ok", "failing", "refused", "unasked"], inputs_of, dict, lines.append, check_mode=check_mode)
    if check_mode:
        # never in check mode, as the role never remediated in check mode
        assert remediated == [] and all("remediation" not in entry["record"] for entry in out["clusters"].values())
        return
    # after the last stage, with its verdicts; not after a failed stage, nor when not asked
    assert sorted(remediated) == [("ok", {"n1": {"verdict": "pass"}}), ("refused", {"n1": {"verdict": "pass"}})]
    assert out["clusters"]["ok"]["record"]["remediation"] == {"nodes": ["n1"]} and not out["clusters"]["ok"].get("failed")
    assert "remediation" not in out["clusters"]["unasked"]["record"] and not out["clusters"]["unasked"].get("failed")
    refused = out["clusters"]["refused"]
    assert refused["failed"] and refused["stage"] == "remediate" and "Label the verified nodes and quarantine the failed ones" in json.dumps(refused["record"])
    assert "ok: remediated 1 node(s): n1" in lines and "refused: remediation failed: patching node n1: may not patch nodes" in lines


@pytest.mark.parametrize(
    "changes, asked",
    [
        ({}, True),
        ({"burnin_label_verified": False}, False),
        ({"burnin_label_verified": False, "burnin_quarantine": "cordon"}, True),
        ({"burnin_label_verified": False, "burnin_node_marks": True}, True),
        ({"burnin_wait": False}, False),
        ({"burnin_collect_logs": False}, False),
    ],
)
def test_the_remediation_is_asked_by_a_mark_with_the_verdicts_at_hand(changes, asked):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.remediation_run import asked as remediation_asked

    assert remediation_asked(dict(REMEDIATION, **changes)) is asked
    assert remediation_asked(dict(REMEDIATION, **changes), check_mode=True) is False


def test_a_signal_cancels_records_what_each_cluster_created_and_runs_its_own_handler(monkeypatch, tmp_path):
    started = threading.Event()

    def stage(auth, name, args, cancel=None, **options):
        started.set()
        # the stage ends once the batch set() the cancel, as a watch stopped by it does
        while not cancel._event.is_set():  # pylint: disable=protected-access
            threading.Event().wait(0.01)
        return {"failed": True, "record": dict(args["result"], applied=["TrainJob/j"]), "msg": "waiting for TrainJob j: cancelled", "error": None}

    monkeypatch.setattr(cluster_batch, "run_cluster_stage", stage)
    monkeypatch.setattr(cluster_batch, "detect_cluster", _detected)
    got = []
    own = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        threading.Thread(target=lambda: started.wait(5) and os.kill(os.getpid(), signal.SIGINT), daemon=True).start()
        out = cluster_batch.drive_batch(NAME, ["a"], lambda host: (dict(inputs(report_dir=str(tmp_path))[0], host=host), {}), dict, lambda line: None)
        # the batch's handler is gone again, and the signal reached the handler that was there before
        assert signal.getsignal(signal.SIGINT) is not None and got == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, own)
    assert out["clusters"]["a"]["failed"]
    record = json.loads((tmp_path / "r1" / "cancelled.json").read_text())
    assert record == {
        "cancelled": True,
        "run_ids": ["r1"],
        "clusters": {"a": {"namespace": "burnin", "applied": ["TrainJob/j"], "stage": "fleet", "msg": "waiting for TrainJob j: cancelled"}},
    }


def test_a_cancel_record_stays_inside_its_report_directory(tmp_path):
    # the run id is one slugged directory name below the report directory (files.safe_join), never a path
    args, auth = inputs(run_id="../../escape", report_dir=str(tmp_path / "reports"))
    cluster_batch.record_cancel({"a": {"record": {}}}, {"a": (args, auth)})
    written = list(tmp_path.rglob("cancelled.json"))
    assert len(written) == 1 and written[0].parent.parent == tmp_path / "reports"


class _HostVars(object):
    """The facts of each host, as Ansible's HostVars.raw_get gives them."""

    def __init__(self, facts):
        self.facts = facts

    def raw_get(self, host):
        return self.facts[host]


def _templar():
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    return Templar(loader=DataLoader(), variables={})


def _facts(started=True):
    start = {"result": {"cluster": "a", "stage": "start", "platform": "", "run_id": "r1"}, "variables": {"burnin_stages": ["fleet"]}}
    start.update(run_id="r1", namespace="burnin")
    return {"burnin__start": start if started else {"failed": True, "msg": "burnin_nodes: must be an integer"}, "burnin_result": {"stale": True}}


def test_a_hosts_inputs_are_what_burnin_start_registered_templated():
    hostvars = _HostVars({"a": _facts()})
    args, auth = cluster_batch.host_inputs(hostvars, {}, _templar(), "a", lambda templar: {"context": "ctx"})
    # the result burnin_start began, not a burnin_result fact an earlier play left
    assert args["result"] == {"cluster": "a", "stage": "start", "platform": "", "run_id": "r1"}
    assert (args["host"], args["run_id"], args["namespace"], args["variables"], auth) == ("a", "r1", "burnin", {"burnin_stages": ["fleet"]}, {"context": "ctx"})


def test_a_host_that_did_not_start_is_left_out():
    assert cluster_batch.host_inputs(_HostVars({"a": _facts(started=False)}), {}, _templar(), "a", dict) is None
    without = _facts()
    del without["burnin__start"]
    assert cluster_batch.host_inputs(_HostVars({"a": without}), {}, _templar(), "a", dict) is None


def test_each_cluster_is_read_first_by_its_own_auth_and_its_stages_get_what_was_read(monkeypatch):
    calls = []

    def detect_cluster(auth, name, args, progress=None):
        calls.append(("detect", args["host"], auth["context"]))
        if args["host"] == "mismatched":
            record = dict(args["result"], stage="detect", outcome="Mismatch", reason="the nodes are gcp's, the group says aws")
            return {"failed": True, "record": record, "msg": "Mismatch: the nodes are gcp's", "error": None, "lines": [], "steps": []}
        return {"record": dict(args["result"], stage="detect", detected={"gpu_nodes": 2}), "cluster": {"nodes": [args["host"]]}, "lines": [], "steps": []}

    def stage(auth, name, args, **options):
        calls.append((args["stage"], args["host"], args["cluster"]["nodes"][0]))
        return {"record": dict(args["result"], done=args["stage"]), "lines": [args["stage"]]}

    monkeypatch.setattr(cluster_batch, "detect_cluster", detect_cluster)
    monkeypatch.setattr(cluster_batch, "run_cluster_stage", stage)

    def inputs_of(host):
        args, dummy = inputs(stages=("node", "fleet"))
        return dict(args, host=host), {"context": "ctx-%s" % host}

    told = []
    out = cluster_batch.drive_batch(NAME, ["ok", "mismatched"], inputs_of, dict, told.append)
    assert "mismatched: Mismatch: the nodes are gcp's" in told
    assert sorted(calls) == sorted([("detect", "ok", "ctx-ok"), ("node", "ok", "ok"), ("fleet", "ok", "ok"), ("detect", "mismatched", "ctx-mismatched")])
    assert out["clusters"]["ok"]["record"]["detected"] == {"gpu_nodes": 2} and out["clusters"]["ok"]["record"]["done"] == "fleet"
    # a cluster whose nodes contradict its group runs no stage; its record keeps detection's outcome and reason
    mismatched = out["clusters"]["mismatched"]
    assert mismatched["failed"] and mismatched["stage"] == "detect"
    assert (mismatched["record"]["outcome"], mismatched["record"]["reason"]) == ("Mismatch", "the nodes are gcp's, the group says aws")


def test_a_first_contact_that_failed_otherwise_names_the_reading_step_in_its_reason(monkeypatch):
    def detect_cluster(auth, name, args, progress=None):
        return {"failed": True, "record": args["result"], "msg": "burnin_platform: 'acme' is not a platform", "error": None, "lines": [], "steps": []}

    monkeypatch.setattr(cluster_batch, "detect_cluster", detect_cluster)
    out = cluster_batch.drive_batch(NAME, ["a"], lambda host: (dict(inputs()[0], host=host), {}), dict, lambda line: None)
    assert out["clusters"]["a"]["record"]["reason"].startswith(cluster_batch.DETECT_TASK + ": ")


def test_the_api_servers_own_words_are_told_only_when_verbose(monkeypatch):
    def stage(auth, name, args, **options):
        error = {"category": "Forbidden", "status": 403, "message": "Forbidden: the token may not", "detail": 'pods is forbidden: User "x"'}
        return {"failed": True, "record": args["result"], "msg": "listing Pod: Forbidden", "error": error}

    monkeypatch.setattr(cluster_batch, "run_cluster_stage", stage)
    monkeypatch.setattr(cluster_batch, "detect_cluster", _detected)
    for verbose in (False, True):
        told = []
        out = cluster_batch.drive_batch(NAME, ["a"], lambda host: (dict(inputs()[0], host=host), {}), dict, told.append, verbose=verbose)
        assert out["clusters"]["a"]["record"]["error_class"] == "Forbidden"
        words = [line for line in told if 'User "x"' in line]
        assert words == (['a: the API server\'s own words: pods is forbidden: User "x"'] if verbose else [])


def test_every_line_of_a_stage_is_told_once(monkeypatch):
    def stage(auth, name, args, progress=None, **options):
        if args["stage"] == "fleet":
            progress("a: fleet stage, attempt 1: pass")
            return {"record": args["result"], "lines": ["a: fleet stage, attempt 1: pass"]}
        # the isolation tells its rounds as they end; its last line only comes back in its lines
        progress("a: isolation round 1: 2 pairs")
        return {"record": args["result"], "lines": ["a: isolation found: node-2"]}

    monkeypatch.setattr(cluster_batch, "run_cluster_stage", stage)
    monkeypatch.setattr(cluster_batch, "detect_cluster", _detected)
    told = []
    out = cluster_batch.drive_batch(NAME, ["a"], lambda host: (dict(inputs(stages=("fleet", "isolation"))[0], host=host), {}), dict, told.append)
    assert told[2:] == ["a: fleet stage, attempt 1: pass", "a: isolation round 1: 2 pairs", "a: isolation found: node-2"]
    assert out["clusters"]["a"]["lines"] == ["a: fleet stage, attempt 1: pass", "a: isolation found: node-2"]
