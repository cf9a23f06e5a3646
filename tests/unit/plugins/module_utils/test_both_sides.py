# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Two-sided rules (issue 47): each rule that tells cases apart is tested on every side the documentation names,
table-driven; the three rules whose second side was untested (a mutant of each survived the whole suite):
a TrainJob that timed out after writing output, MNNVL not reported vs reported 0 vs 1, a TrainJob name at 63 and 64
characters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import stages
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import run_start
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import attribution as at
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import transport as tp
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import verdict as vd
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "nccl")
H100_AWS = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8, "mnnvl": False}


def fixture(*path):
    with open(os.path.join(FIXTURES, *path)) as handle:
        return handle.read()


# ------------------------------------------------------------------------------------------------ outcome x evidence

# docs/verdicts.md, check `job`: "the TrainJob Failed or timed out (no result at all: error)"; docs/burnin-role.md names
# the outcomes. Evidence: a complete table that passes, a table cut short with a failing host named, unreadable output,
# no output at all.
COMPLETE = "v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"
CUT = "v2.16-all-reduce-truncated-mid-row.log"
UNREADABLE = "v2.16-all-reduce-malformed.log"

OUTCOME_X_EVIDENCE = [
    # outcome, evidence, verdict, reason starts with
    (None, COMPLETE, "pass", "busbw 441.9 GB/s at 8G"),
    ("Complete", COMPLETE, "pass", "TrainJob Complete; busbw 441.9 GB/s"),
    ("Succeeded", COMPLETE, "pass", "TrainJob Succeeded; busbw 441.9 GB/s"),
    ("Failed", COMPLETE, "fail", "TrainJob Failed: why"),
    # the hung run: it printed a table and then never finished - a failure of the cluster, not a missing result
    ("Timeout", COMPLETE, "fail", "TrainJob Timeout: why"),
    ("Unreachable", COMPLETE, "error", "no result: the burn-in ended Unreachable: why"),
    ("Error", COMPLETE, "error", "no result: the burn-in ended Error: why"),
    (None, CUT, "fail", "the log names failing host(s) nccl-all-reduce-20261130t0800-node-0-1"),
    ("Complete", CUT, "fail", "the log names failing host(s) nccl-all-reduce-20261130t0800-node-0-1"),
    ("Failed", CUT, "fail", "TrainJob Failed: why; the log names failing host(s)"),
    ("Timeout", CUT, "fail", "TrainJob Timeout: why; the log names failing host(s)"),
    ("Unreachable", CUT, "error", "no result: the burn-in ended Unreachable: why"),
    (None, UNREADABLE, "error", "no complete result: line 40"),
    ("Complete", UNREADABLE, "error", "no complete result: line 40"),
    ("Failed", UNREADABLE, "fail", "TrainJob Failed: why; no complete result: line 40"),
    ("Timeout", UNREADABLE, "fail", "TrainJob Timeout: why; no complete result: line 40"),
    ("Unreachable", UNREADABLE, "error", "no result: the burn-in ended Unreachable: why"),
    ("Complete", None, "error", "no result: no nccl-tests output to judge"),
    ("Failed", None, "fail", "TrainJob Failed: why"),
    ("Timeout", None, "error", "no result: the TrainJob did not finish in time: why"),
    ("Unreachable", None, "error", "no result: the burn-in ended Unreachable: why"),
]


@pytest.mark.parametrize("outcome, evidence, verdict, reason", OUTCOME_X_EVIDENCE)
def test_every_job_outcome_with_every_kind_of_evidence(outcome, evidence, verdict, reason):
    output = fixture(evidence) if evidence else None
    result = vd.verdict_for(output, facts=H100_AWS, job={"outcome": outcome, "reason": "why" if outcome else None}, judging={"collective": "all_reduce"})
    assert result["verdict"] == verdict, result["reason"]
    assert result["reason"].startswith(reason), result["reason"]


@pytest.mark.parametrize(
    "outcome, have_output, verdict, reason",
    [
        ("Complete", True, "pass", "TrainJob Complete"),
        ("Complete", False, "pass", "TrainJob Complete"),
        ("Succeeded", False, "pass", "TrainJob Succeeded"),
        ("Failed", True, "fail", "TrainJob Failed: why"),
        ("Failed", False, "fail", "TrainJob Failed: why"),
        ("Timeout", True, "fail", "TrainJob Timeout: why"),
        ("Timeout", False, "error", "no result: the TrainJob did not finish in time: why"),
        ("Unreachable", True, "error", "no result: the burn-in ended Unreachable: why"),
        ("Unreachable", False, "error", "no result: the burn-in ended Unreachable: why"),
        ("Mismatch", True, "error", "no result: the burn-in ended Mismatch: why"),
    ],
)
def test_the_job_check_of_each_outcome_with_and_without_output(outcome, have_output, verdict, reason):
    check = at.job_check(outcome, "why", have_output, True)
    assert (check["name"], check["verdict"]) == ("job", verdict)
    assert check["reason"] == reason or check["reason"].startswith(reason + " ") or (outcome in ("Complete", "Succeeded") and check["reason"] == reason)


def test_a_timed_out_job_whose_pods_logged_a_table_fails_also_from_pod_logs():
    # the shape the role passes: the pods' logs, not one text
    logs = [{"name": "nccl-r1-node-0-0-x", "log": fixture(COMPLETE)}]
    result = vd.verdict_for(
        logs, facts=H100_AWS, job={"outcome": "Timeout", "reason": "not finished in 1800 s", "pods": []}, judging={"collective": "all_reduce"}
    )
    assert result["verdict"] == "fail" and result["reason"].startswith("TrainJob Timeout: not finished in 1800 s")
    empty = vd.verdict_for([], facts=H100_AWS, job={"outcome": "Timeout", "reason": "not finished in 1800 s", "pods": []}, judging={"collective": "all_reduce"})
    assert empty["verdict"] == "error"


# ------------------------------------------------------------------------------------------------ MNNVL unknown / 0 / 1

IB = fixture("transport", "azure-h100-ib.log")
MNNVL_LOGS = {
    # NCCL's comm line (src/init.cc) missing: the logs say nothing about MNNVL
    "unknown": "\n".join(line for line in IB.splitlines() if " MNNVL " not in line),
    "0": IB,
    "1": IB.replace(" MNNVL 0", " MNNVL 1"),
}
MNNVL_PARSED = {"unknown": None, "0": False, "1": True}


@pytest.mark.parametrize("logs", sorted(MNNVL_LOGS))
def test_mnnvl_is_read_as_unknown_false_or_true(logs):
    assert tp.parse_transport(MNNVL_LOGS[logs])["mnnvl"] is MNNVL_PARSED[logs]


def test_one_host_with_mnnvl_1_makes_the_run_use_it():
    first = True
    lines = []
    for line in IB.splitlines():
        if " MNNVL 0" in line and first and "node-0-0" in line:
            line = line.replace(" MNNVL 0", " MNNVL 1")
        lines.append(line)
    assert tp.parse_transport("\n".join(lines))["mnnvl"] is True


@pytest.mark.parametrize("enabled", [None, False, True])
@pytest.mark.parametrize("logs", sorted(MNNVL_LOGS))
@pytest.mark.parametrize("nodes", [1, 2])
def test_mnnvl_enabled_x_reported_x_nodes(enabled, logs, nodes):
    # Only a multi-node run with MNNVL enabled whose NCCL reported MNNVL 0 fails; logs silent on MNNVL prove nothing
    # either way (docs/verdicts.md, check `transport`).
    facts = {"platform": "azure", "gpu_architecture": "h100", "nodes": nodes, "mnnvl": enabled}
    check = tp.check(tp.parse_transport(MNNVL_LOGS[logs]), {"transport": "ib"}, facts)
    fails = enabled is True and logs == "0" and nodes > 1
    assert check["verdict"] == ("fail" if fails else "pass"), check["reason"]
    assert ("NCCL reported MNNVL 0" in check["reason"]) is fails
    assert ("MNNVL not used" in check["reason"]) is (logs == "0")
    assert ("MNNVL used" in check["reason"]) is (logs == "1")


def test_mnnvl_silent_logs_do_not_fail_the_whole_verdict():
    facts = dict(H100_AWS, platform="azure", mnnvl=True)
    silent = vd.verdict_for(MNNVL_LOGS["unknown"], facts=facts, job={"outcome": "Complete"}, judging={"collective": None, "expected_transport": "ib"})
    zero = vd.verdict_for(MNNVL_LOGS["0"], facts=facts, job={"outcome": "Complete"}, judging={"collective": None, "expected_transport": "ib"})
    # (the fixture's largest size is below the peak record's, so the busbw checks only warn: not comparable)
    assert "MNNVL 0" not in silent["reason"] and silent["verdict"] == "warn", silent["reason"]
    assert [check["verdict"] for check in silent["checks"] if check["name"] == "transport"] == ["pass"]
    assert "NCCL reported MNNVL 0" in zero["reason"] and zero["verdict"] == "fail", zero["reason"]
    assert [check["verdict"] for check in zero["checks"] if check["name"] == "transport"] == ["fail"]


# ------------------------------------------------------------------------------------------------ TrainJob name 63 / 64

PLAN = {
    "entry_name": "nccl",
    "image": "nvcr.io/nvidia/pytorch:26.01-py3",
    "framework": "mpi",
    "nodes": 2,
    "gpus_per_node": 8,
    "namespace": "burnin",
    "run_id": "r1",
    "platform": "aws",
    "gpu_architecture": "h100",
    "trainer": {"binary": "/usr/local/bin/all_reduce_perf"},
    "overrides": [],
}


@pytest.mark.parametrize("length, accepted", [(62, True), (63, True), (64, False)])
def test_the_workload_plans_trainjob_name_is_at_most_63_characters(length, accepted):
    entry = "e" * 40
    run_id = "r" * (length - len(entry) - 1)
    args = dict(copy.deepcopy(PLAN), entry_name=entry, run_id=run_id)
    assert len("%s-%s" % (entry, run_id)) == length
    if accepted:
        inputs.check_plan_options(args)
    else:
        with pytest.raises(ConfigError) as caught:
            inputs.check_plan_options(args)
        assert caught.value.field == "run_id" and "longer than 63 characters" in str(caught.value)


@pytest.mark.parametrize("length, accepted", [(63, True), (64, False)])
@pytest.mark.parametrize("stage_list, repeats", [(["fleet"], 0), (["node", "fleet"], 1)])
def test_the_roles_longest_trainjob_name_is_at_most_63_characters(length, accepted, stage_list, repeats):
    run_id = "20261201-101010"
    suffix = len(stages.longest_trainjob("x-%s" % run_id, stage_list, repeats)) - len("x-%s" % run_id)
    entry = "e" * (length - suffix - len(run_id) - 1)
    variables = {"burnin_entry_name": entry, "burnin_stages": stage_list, "burnin_repeats": repeats}
    started = run_start(variables, "c", run_id)
    longest = stages.longest_trainjob(started["trainjob"], stage_list, repeats)
    assert len(longest) == length
    assert (started["problem"] == "") is accepted, started["problem"]
    if not accepted:
        assert longest in started["problem"] and "at most 63 characters" in started["problem"]


@pytest.mark.parametrize("length, accepted", [(63, True), (64, False)])
def test_the_roles_namespace_is_at_most_63_characters(length, accepted):
    started = run_start({"burnin_namespace": "n" * length, "burnin_stages": ["fleet"]}, "c", "r1")
    assert (started["problem"] == "") is accepted, started["problem"]


# ------------------------------------------------------------------------------------------------ complete vs cut

NO_FOOTER = "v2.16-all-reduce-truncated-no-footer.log"
JSON_CUT = "v2.16-all-reduce-truncated.json"
JSON_WHOLE = "v2.16-all-reduce-2x8-h100.json"

# docs/verdicts.md, check `result`: output cut short is `error`, unless the job failed or timed out (then `fail`, the
# job's reason first); a whole table is judged. allow_partial keeps the rows of a cut table but never makes it complete.
COMPLETE_X_CUT = [
    (JSON_WHOLE, False, None, "pass", "busbw 487.4 GB/s at 16G"),
    (JSON_WHOLE, True, "Complete", "pass", "TrainJob Complete; busbw 487.4 GB/s at 16G"),
    (JSON_WHOLE, False, "Timeout", "fail", "TrainJob Timeout: why"),
    (NO_FOOTER, False, None, "error", "no result: nccl-tests output line 56: truncated"),
    (NO_FOOTER, True, None, "error", "no complete result: line 56: truncated"),
    (NO_FOOTER, True, "Complete", "error", "no complete result: line 56: truncated"),
    (NO_FOOTER, False, "Failed", "fail", "TrainJob Failed: why; no result: nccl-tests output line 56: truncated"),
    (NO_FOOTER, True, "Timeout", "fail", "TrainJob Timeout: why; no complete result: line 56: truncated"),
    (JSON_CUT, False, None, "error", "no result: nccl-tests output (JSON) line 1: not valid JSON (truncated -J output?)"),
    (JSON_CUT, True, "Complete", "error", "no result: nccl-tests output (JSON) line 1: not valid JSON (truncated -J output?)"),
    (JSON_CUT, False, "Timeout", "fail", "TrainJob Timeout: why; no result: nccl-tests output (JSON) line 1"),
]


@pytest.mark.parametrize("evidence, allow_partial, outcome, verdict, reason", COMPLETE_X_CUT)
def test_complete_and_cut_output_with_and_without_partial_results(evidence, allow_partial, outcome, verdict, reason):
    result = vd.verdict_for(
        fixture(evidence),
        facts=H100_AWS,
        job={"outcome": outcome, "reason": "why" if outcome else None},
        judging={"collective": "all_reduce", "allow_partial": allow_partial},
    )
    assert result["verdict"] == verdict, result["reason"]
    assert result["reason"].startswith(reason), result["reason"]


# ------------------------------------------------------------------------------------------------ recommendations


def _runtime(text):
    # a string built at run time, as from a report read back from JSON: not the module's interned literal
    return "".join(list(text))


@pytest.mark.parametrize("outcome", [None, "Complete", "Succeeded", "Pending"])
def test_an_outcome_that_ended_well_or_not_yet_recommends_nothing_by_itself(outcome):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions

    assert actions.of_result({"outcome": outcome} if outcome else {})["action_rule"] == "pass"


@pytest.mark.parametrize("outcome, rule", [("Timeout", "no_result"), ("Failed", "fail"), ("Unreachable", "unreachable")])
def test_an_outcome_that_ended_badly_without_a_verdict_recommends_by_itself(outcome, rule):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions

    assert actions.of_result({"outcome": outcome})["action_rule"] == rule
    # with a verdict, the verdict decides (a timed-out job's verdict names what failed)
    judged = actions.of_result({"outcome": outcome, "verdict": {"verdict": "pass", "checks": []}})
    assert judged["action_rule"] == ("unreachable" if outcome == "Unreachable" else "pass")


def test_verdicts_read_back_from_json_are_compared_by_value():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions

    finding = {"verdict": _runtime("fail"), "evidence": {}, "reason": "pod p-1 failed: exit 1"}
    assert actions.signals_of_finding(finding) == [("pod_failure", "")]
    verdict = {"verdict": _runtime("error"), "checks": [{"name": "result", "verdict": _runtime("error"), "reason": "x"}]}
    assert actions.of_verdict(verdict)["action_why"].startswith("result: ")


def test_an_xid_line_ends_at_its_newline():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions

    text = "NVRM: Xid (PCI:0000:65:00): 79, GPU has fallen off the bus.\nthe next line"
    assert actions.xids_in(text)[0]["line"] == "NVRM: Xid (PCI:0000:65:00): 79, GPU has fallen off the bus."
    assert actions.xids_in(text.split("\n", maxsplit=1)[0])[0]["line"] == "NVRM: Xid (PCI:0000:65:00): 79, GPU has fallen off the bus."


# ------------------------------------------------------------------------------------------------ NVLink-only pairs

CLIQUE = "nvidia.com/gpu.clique"


@pytest.mark.parametrize(
    "mnnvl, labels, reason",
    [
        (None, {"a": {CLIQUE: "c1"}, "b": {CLIQUE: "c1"}}, "the run did not enable multi-node NVLink"),
        (False, {"a": {CLIQUE: "c1"}, "b": {CLIQUE: "c1"}}, "the run did not enable multi-node NVLink"),
        (True, None, "the nodes' labels could not be read"),
        (True, {"a": {CLIQUE: "c1"}, "b": {}}, "nvidia.com/gpu.clique is not labelled on both nodes"),
        (True, {"a": {}, "b": {CLIQUE: "c1"}}, "nvidia.com/gpu.clique is not labelled on both nodes"),
        (True, {"a": {CLIQUE: "c1"}, "b": {CLIQUE: "c2"}}, "the nodes are in different NVLink domains (nvidia.com/gpu.clique c1 and c2)"),
        (True, {"a": {CLIQUE: "c1"}, "b": {CLIQUE: "c1"}}, ""),
    ],
)
def test_an_nvlink_only_pair_needs_mnnvl_enabled_and_one_domain_label(mnnvl, labels, reason):
    # docs/isolation.md: a pair gets an NVLink-only run only when the run enabled MNNVL and both nodes carry the same
    # domain label (_lib/nccl/isolation.yaml nvlink_only.domain_label)
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation_parts

    context = {"labels": labels} if mnnvl is None else {"mnnvl": mnnvl, "labels": labels}
    got = isolation_parts.nvlink_pair("a", "b", context)
    assert got.startswith(reason) and (got == "") is (reason == ""), got
    assert isolation_parts.nvlink_pair("a", "b", context, cat={"paths": {"nvlink_only": None}}) == "the catalogue has no NVLink-only recipe"


@pytest.mark.parametrize(
    "proof, reason",
    [
        (None, "its log has no NCCL INFO lines"),
        ({"info_lines": 0, "mnnvl": True, "net": {}}, "its log has no NCCL INFO lines"),
        ({"info_lines": 10, "mnnvl": True, "net": {"IB": 4}}, "its log shows network channels (via NET/IB x4)"),
        ({"info_lines": 10, "mnnvl": False, "net": {}}, "NCCL did not report multi-node NVLink used"),
        ({"info_lines": 10, "mnnvl": True, "net": {}}, ""),
    ],
)
def test_an_nvlink_only_run_is_proven_only_by_info_lines_with_mnnvl_and_no_network(proof, reason):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation_parts

    got = isolation_parts._unproven(proof)
    assert got.startswith(reason) and (got == "") is (reason == ""), got
