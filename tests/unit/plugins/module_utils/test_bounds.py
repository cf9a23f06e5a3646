# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every documented limit at its bound and one past it (issue 47, item 2), table-driven: the role's integer and
percentage variables (roles/burnin/meta/argument_specs.yml, docs/input-validation.md), name lengths (validate.GRAMMARS,
the entry name, the field manager, generated names), counts (env entries, structure values and depth), the node
stages' workload parameters (templates/workloads/*.yaml), the pod log cap and the bounded evidence of the verdicts.
Each row names its bound once; a mutant that moves a bound by one, or flips a comparison at it, fails a row."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils import validate
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_vars, stages
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.isolation_run import NAME_MAX, pair_name
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import inventory, pod_logs
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import names
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import export
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs


def accepted(name, value):
    return role_vars.check_role_vars({name: value})[name]


def refused(name, value, field=None):
    with pytest.raises(ConfigError) as caught:
        role_vars.check_role_vars({name: value})
    assert caught.value.field == (field or name), str(caught.value)
    return str(caught.value)


def description(name):
    text = role_vars.argument_specs()["main"]["options"][name]["description"]
    return " ".join(text) if isinstance(text, list) else text


# ------------------------------------------------------------------------------------------------ role integers

# name, low, high, how argument_specs.yml or docs/input-validation.md states the range ("" : stated elsewhere, below)
ROLE_INTEGERS = [
    ("burnin_nodes", 1, 100000, "from 1 to 100000"),
    ("burnin_gpus_per_node", 0, 64, ""),
    ("burnin_mlnx_per_node", 0, 64, ""),
    ("burnin_efa_per_node", 0, 64, ""),
    ("burnin_rdma_per_node", 0, 64, ""),
    ("burnin_repeats", 0, 10, "(0 to 10)"),
    ("burnin_timeout", 1, 7 * 24 * 3600, ""),
    ("burnin_poll_interval", 1, 3600, ""),
    ("burnin_unreachable_grace", 0, 7 * 24 * 3600, ""),
    ("burnin_log_tail_lines", 1, 1000000, ""),
    ("burnin_log_max_bytes", 65536, 1 << 34, ""),
    ("burnin_isolation_max_jobs", 1, 1000, "(1 to 1000"),
    ("burnin_isolation_max_minutes", 1, 1440, "(1 to 1440)"),
    ("burnin_metrics_max_series", 1, 1000000, "(1 to 1000000)"),
    ("burnin_export_attempts", 1, 10, "(1 to 10)"),
    ("burnin_mark_ttl_hours", 1, 8784, "(1 to 8784)"),
]


@pytest.mark.parametrize("name, low, high, stated", ROLE_INTEGERS, ids=[row[0] for row in ROLE_INTEGERS])
def test_each_role_integer_at_its_bounds_and_one_past(name, low, high, stated):
    assert accepted(name, low) == low
    assert accepted(name, high) == high
    assert accepted(name, str(high)) == high  # a survey's text
    for past in (low - 1, high + 1):
        message = refused(name, past)
        assert "from %d to %d" % (low, high) in message, message
    if stated:
        assert stated in description(name), description(name)


def test_the_documented_summary_ranges_are_the_checked_ones():
    # docs/input-validation.md: "nodes 1-100000, per-node counts 0-64, timeouts 1 s-7 days"
    assert (validate.NODES_MAX, validate.PER_NODE_MAX, validate.TIMEOUT_MAX) == (100000, 64, 604800)
    with open(role_vars.os.path.join(role_vars.COLLECTION_ROOT, "docs", "input-validation.md")) as handle:
        text = handle.read()
    assert "nodes 1-100000, per-node counts 0-64, timeouts 1 s-7 days" in text


def test_the_poll_interval_may_equal_the_timeout_and_not_exceed_it():
    assert role_vars.check_role_vars({"burnin_timeout": 60, "burnin_poll_interval": 60})["burnin_poll_interval"] == 60
    with pytest.raises(ConfigError) as caught:
        role_vars.check_role_vars({"burnin_timeout": 60, "burnin_poll_interval": 61})
    assert caught.value.field == "burnin_poll_interval" and "must not exceed burnin_timeout (60)" in str(caught.value)


@pytest.mark.parametrize(
    "low, high, past_low, past_high",
    [(1, stages.REPEATS_MAX, 0, stages.REPEATS_MAX + 1)],
)
def test_the_isolation_budget_helper_has_the_variables_bounds(low, high, past_low, past_high):
    assert role_vars.check_isolation_budget(1, 1) == (1, 1)
    assert role_vars.check_isolation_budget(1000, 1440) == (1000, 1440)
    for jobs, minutes, field in ((0, 1, "max_jobs"), (1001, 1, "max_jobs"), (1, 0, "max_minutes"), (1, 1441, "max_minutes")):
        with pytest.raises(ConfigError) as caught:
            role_vars.check_isolation_budget(jobs, minutes)
        assert caught.value.field == field
    assert stages.check_repeats("r", high) == high and stages.check_repeats("r", low - 1) == 0
    for value in (past_low - 1, past_high):
        with pytest.raises(ConfigError):
            stages.check_repeats("r", value)


# ------------------------------------------------------------------------------------------------ percentages, seconds

# name, value, accepted; the percentage is "From 0 to 100", the backoff "at most 60 (0 to 60)"
ROLE_NUMBERS = [
    ("burnin_regression_percent", 0, True),
    ("burnin_regression_percent", 100, True),
    ("burnin_regression_percent", 100.0, True),
    ("burnin_regression_percent", "100", True),
    ("burnin_regression_percent", -0.001, False),
    ("burnin_regression_percent", -1, False),
    ("burnin_regression_percent", 100.001, False),
    ("burnin_regression_percent", 101, False),
    ("burnin_regression_percent", "101", False),
    ("burnin_export_backoff", 0, True),
    ("burnin_export_backoff", 60, True),
    ("burnin_export_backoff", "60", True),
    ("burnin_export_backoff", -0.001, False),
    ("burnin_export_backoff", 60.001, False),
    ("burnin_export_backoff", 61, False),
]


@pytest.mark.parametrize("name, value, ok", ROLE_NUMBERS)
def test_each_percentage_and_wait_at_its_bounds_and_one_past(name, value, ok):
    if ok:
        assert accepted(name, value) == float(value)
    else:
        refused(name, value)


def test_the_percentage_and_backoff_ranges_are_documented():
    assert "From 0 to 100" in description("burnin_regression_percent")
    assert "at most 60 (0 to 60)" in description("burnin_export_backoff")
    assert export.MAX_BACKOFF == 60
    # the waits are capped at the same 60 s
    assert export.delays(8, 1.0) == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0]


# ------------------------------------------------------------------------------------------------ name lengths

# grammar, a valid name of the bound's length, the same one character longer
GRAMMAR_BOUNDS = [
    ("dns_label", "a" * 63, "a" * 64),
    ("dns_subdomain", ".".join(["a" * 63] * 3) + "." + "a" * 61, ".".join(["a" * 63] * 3) + "." + "a" * 62),
    ("label_value", "A" * 63, "A" * 64),
    ("qualified_name", "a" * 253 + "/" + "n" * 63, "a" * 253 + "/" + "n" * 64),
    ("kind", "K" * 63, "K" * 64),
    ("quantity", "1" * 64, "1" * 65),
    ("resource_name", "a" * 253, "a" * 254),
]


@pytest.mark.parametrize("grammar, at_bound, past", GRAMMAR_BOUNDS, ids=[row[0] for row in GRAMMAR_BOUNDS])
def test_each_name_grammar_at_its_length_and_one_past(grammar, at_bound, past):
    assert validate.check_grammar("f", at_bound, grammar) == at_bound
    with pytest.raises(ConfigError) as caught:
        validate.check_grammar("f", past, grammar)
    assert caught.value.field == "f"


@pytest.mark.parametrize(
    "value, ok",
    [
        ("n" * 63, True),
        ("n" * 64, False),
        ("example.com/" + "n" * 63, True),
        ("example.com/" + "n" * 64, False),  # within the 317 characters in all, but the name is too long
        ("a" * 253 + "/n", True),
        ("a" * 254 + "/n", False),
    ],
)
def test_a_qualified_names_prefix_is_at_most_253_characters_and_its_name_63(value, ok):
    # apimachinery's IsQualifiedName, as validate.GRAMMARS' message says: "name at most 63 characters"; a longer
    # annotation key or label name was accepted and refused by the API server (a bug this test found)
    if ok:
        assert validate.check_grammar("f", value, "qualified_name") == value
    else:
        with pytest.raises(ConfigError):
            validate.check_grammar("f", value, "qualified_name")


# role variable, value at the bound, one past
NAME_VARIABLES = [
    ("burnin_entry_name", "e" * 52, "e" * 53),
    ("burnin_run_id", "r" * 63, "r" * 64),
    ("burnin_namespace", "n" * 63, "n" * 64),
    ("burnin_field_manager", "m" * 128, "m" * 129),
    ("burnin_pushgateway_job", "j" * 63, "j" * 64),
    ("burnin_verified_label", "example.com/" + "v" * 63, "example.com/" + "v" * 64),
]


@pytest.mark.parametrize("name, at_bound, past", NAME_VARIABLES, ids=[row[0] for row in NAME_VARIABLES])
def test_each_name_variable_at_its_length_and_one_past(name, at_bound, past):
    assert accepted(name, at_bound) == at_bound
    refused(name, past)


def test_the_entry_name_is_at_most_52_characters_as_documented():
    assert "at most 52 characters" in description("burnin_entry_name")
    assert names.check_entry_name("e" * names.ENTRY_NAME_MAX) == "e" * 52
    with pytest.raises(ConfigError, match="at most 52 characters"):
        names.check_entry_name("e" * 53)
    assert inputs.check_field_manager("m", "m" * 128) == "m" * 128
    with pytest.raises(ConfigError, match="at most 128 characters"):
        inputs.check_field_manager("m", "m" * 129)


@pytest.mark.parametrize("length", [NAME_MAX - 1, NAME_MAX, NAME_MAX + 1, NAME_MAX + 20])
def test_an_isolation_pair_jobs_name_is_kept_at_most_47_characters(length):
    suffix = "-iso-1-2"
    base = "b" * (length - len(suffix))
    name = pair_name(base, 1, 2)
    assert len(name) <= NAME_MAX == 47
    if length <= NAME_MAX:
        assert name == base + suffix
    else:
        assert name.endswith(suffix) and name != base + suffix and len(name) == NAME_MAX
        assert pair_name(base + "x", 1, 2) != name  # the hash keeps two long bases apart


@pytest.mark.parametrize("length", [62, 63, 64, 80])
def test_an_inventory_host_name_is_at_most_63_characters(length):
    name = inventory.safe_host_name("c" * length)
    assert name == "c" * min(length, 63)
    taken = inventory.safe_host_name("c" * length, taken={name})
    assert len(taken) <= 63 and taken.endswith("-2")


# ------------------------------------------------------------------------------------------------ counts


@pytest.mark.parametrize("count, ok", [(validate.ENV_MAX, True), (validate.ENV_MAX + 1, False)])
def test_an_env_holds_at_most_256_entries(count, ok):
    env = [{"name": "V%d" % index, "value": "1"} for index in range(count)]
    assert validate.ENV_MAX == 256
    if ok:
        validate.check_env("env", env)
    else:
        with pytest.raises(ConfigError, match="has 257 entries; at most 256 allowed"):
            validate.check_env("env", env)


@pytest.mark.parametrize("depth, ok", [(32, True), (33, False)])
def test_a_structure_nests_at_most_32_levels(depth, ok):
    value = "leaf"
    for dummy in range(depth):
        value = [value]
    if ok:
        validate.check_structure("v", value)
    else:
        with pytest.raises(ConfigError, match="nests deeper than 32 levels"):
            validate.check_structure("v", value)


@pytest.mark.parametrize("values, ok", [(validate.ROLE_VAR_MAX_VALUES, True), (validate.ROLE_VAR_MAX_VALUES + 1, False)])
def test_a_role_variable_holds_at_most_100000_values(values, ok):
    # a list of n scalars is n + 1 values (the list itself)
    value = list(range(values - 1))
    if ok:
        validate.check_structure("burnin_overrides", value, max_values=validate.ROLE_VAR_MAX_VALUES)
    else:
        with pytest.raises(ConfigError, match="holds more than 100000 values"):
            validate.check_structure("burnin_overrides", value, max_values=validate.ROLE_VAR_MAX_VALUES)


def test_the_role_checks_its_variables_against_100000_values():
    with pytest.raises(ConfigError) as caught:
        role_vars.check_role_vars({"burnin_overrides": list(range(validate.ROLE_VAR_MAX_VALUES))})
    assert caught.value.field == "burnin_overrides" and "more than 100000 values" in str(caught.value)


# ------------------------------------------------------------------------------------------------ node stage parameters

# stage, parameter, value, accepted (templates/workloads/gpu-burn.yaml and dcgm-diag.yaml; argument_specs.yml)
STAGE_PARAMS = [
    ("gpu", "matrix_size", 1024, True),
    ("gpu", "matrix_size", 768, False),  # one multiple of 256 below
    ("gpu", "matrix_size", 1023, False),
    ("gpu", "matrix_size", 32768, True),
    ("gpu", "matrix_size", 33024, False),  # one multiple of 256 above
    ("gpu", "matrix_size", 1280, True),
    ("gpu", "matrix_size", 1281, False),
    ("gpu", "seconds", 1, True),
    ("gpu", "seconds", 0, False),
    ("gpu", "seconds", 86400, True),
    ("gpu", "seconds", 86401, False),
    ("gpu", "memory_percent", 10, True),
    ("gpu", "memory_percent", 9, False),
    ("gpu", "memory_percent", 95, True),
    ("gpu", "memory_percent", 96, False),
    ("gpu", "copy_bytes", 1048576, True),
    ("gpu", "copy_bytes", 1048575, False),
    # h100's 80 GiB: the two copy buffers at most a quarter of it, an eighth each (gpu-burn.yaml's _GPU_MEMORY_GIB)
    ("gpu", "copy_bytes", 10737418240, True),
    ("gpu", "copy_bytes", 10737418241, False),
    ("gpu", "copy_iters", 1, True),
    ("gpu", "copy_iters", 0, False),
    ("gpu", "copy_iters", 10000, True),
    ("gpu", "copy_iters", 10001, False),
    ("gpu", "sibling_percent", 0, False),
    ("gpu", "sibling_percent", 0.001, True),
    ("gpu", "sibling_percent", 99.999, True),
    ("gpu", "sibling_percent", 100, False),
    ("gpu", "sibling_percent", "99.5", True),
    ("dcgm", "level", 0, False),
    ("dcgm", "level", 1, True),
    ("dcgm", "level", 2, True),
    ("dcgm", "level", 5, False),
    ("dcgm", "timeout", 0, False),
    ("dcgm", "timeout", 1, True),
    ("dcgm", "timeout", 86400, True),
    ("dcgm", "timeout", 86401, False),
]


@pytest.mark.parametrize("stage, param, value, ok", STAGE_PARAMS)
def test_each_stage_parameter_at_its_bounds_and_one_past(stage, param, value, ok):
    given = {"burnin_stage_params": {stage: {param: value}}, "burnin_gpu_architecture": "h100"}
    if ok:
        assert role_vars.check_role_vars(given)["burnin_stage_params"][stage][param] == value
    else:
        with pytest.raises(ConfigError) as caught:
            role_vars.check_role_vars(given)
        assert caught.value.field.startswith("burnin_stage_params.%s" % stage), str(caught.value)
        assert param in str(caught.value)


def test_the_gpu_stage_bounds_are_the_documented_ones():
    text = description("burnin_stage_params")
    for stated in ("a multiple of 256 from 1024 to 32768", "1 to 3600", "1048576 to 68719476736", "1 to 10000", "above 0 and below 100"):
        assert stated in re.sub(r"\s+", " ", text), stated


# ------------------------------------------------------------------------------------------------ the pod log cap

LINES = {
    "table rows": b"  1048576  262144  float  sum  -1  100.0  10.49  19.66  0\n",
    "nccl info": b"nccl-x-node-0-0:57:97 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n",
    "short": b"ab\n",
}


def _log(line, size):
    return (line * (size // len(line) + 1))[:size]


@pytest.mark.parametrize("cap", [pod_logs.MIN_LOG_BYTES, 100000, 1 << 20])
@pytest.mark.parametrize("kind", sorted(LINES))
@pytest.mark.parametrize("chunk", [None, 4096])
def test_a_log_of_exactly_the_cap_is_whole_and_one_byte_more_is_cut(cap, kind, chunk):
    # argument_specs.yml, burnin_log_max_bytes: "At most this many bytes of each pod's log are read"; "A longer log
    # keeps its first eighth, its last half and ... what fits of the lines that are not NCCL INFO lines".
    for size, whole in ((cap - 1, True), (cap, True), (cap + 1, False)):
        text = _log(LINES[kind], size)
        bound = pod_logs.LogBound(cap)
        for start in range(0, size, chunk or size):
            bound.feed(text[start : start + (chunk or size)])
        got, cut = bound.result()
        if whole:
            assert cut is None and got.encode() == text, (size, cut)
        else:
            assert cut is not None and cut["size"] == size and cut["max_bytes"] == cap
            assert len(got.encode()) == cut["kept"] <= cap


@pytest.mark.parametrize("given, cap", [(pod_logs.MIN_LOG_BYTES - 1, 65536), (65536, 65536), (65537, 65537), (1, 65536)])
def test_the_log_cap_has_a_floor_of_65536_bytes(given, cap):
    assert pod_logs.LogBound(given).max_bytes == cap
    assert "Below 65536" in description("burnin_log_max_bytes") or "65536" in description("burnin_log_max_bytes")


def _expected_cut(text, cap, chunk):
    """What LogBound keeps of TEXT, all NCCL INFO lines, over CAP (argument_specs.yml: its first eighth, its last
    half): the head is the whole chunks that fit in cap // 8, then the next chunk's whole lines that still fit; the
    tail the longest suffix of whole lines within cap // 2; nothing between (INFO lines only)."""
    head_budget, tail_budget = cap // 8, cap // 2
    whole = (head_budget // chunk) * chunk if chunk <= head_budget else 0
    newline = text.rfind(b"\n", whole, head_budget)
    head = text[: newline + 1] if newline >= 0 else text[:whole]
    start = len(text) - tail_budget
    start = text.find(b"\n", start - 1) + 1
    return head + text[start:]


@pytest.mark.parametrize("line_length, chunk", [(64, 1024), (64, 4096), (64, 8192), (40, 1000), (40, 65536), (100, 3000), (100, 700)])
@pytest.mark.parametrize("size", [4 * 65536, 65536 + 1000])
def test_a_longer_log_keeps_its_first_eighth_and_its_last_half_and_bounded_memory(line_length, chunk, size):
    # NCCL INFO lines only: what stays is exactly the head and the tail; memory stays within twice the cap and one
    # chunk (LogBound's docstring) while the log is fed, the head within its eighth.
    cap = pod_logs.MIN_LOG_BYTES
    line = b"h:1:1 [0] NCCL INFO " + b"x" * (line_length - 21) + b"\n"
    text = line * (size // line_length + 1)
    bound = pod_logs.LogBound(cap)
    for start in range(0, len(text), chunk):
        bound.feed(text[start : start + chunk])
        assert len(bound.head) + len(bound.middle) + len(bound.tail) <= 2 * cap + chunk
        assert len(bound.head) <= cap // 8
    got, cut = bound.result()
    assert got.encode() == _expected_cut(text, cap, chunk)
    assert cut["size"] == len(text) and cut["kept"] == len(got.encode()) <= cap
    assert cut["lines_dropped"] == text.count(b"\n") - got.encode().count(b"\n")


# ------------------------------------------------------------------------------------------------ bounded evidence

GPU_PREFIX = "# gpufleet-burnin gpu-burn on host-a: "


@pytest.mark.parametrize("lines, kept, problem", [(63, 63, False), (64, 64, False), (65, 64, True)])
def test_the_gpu_reader_keeps_at_most_64_gpu_lines(lines, kept, problem):
    # docs/gpu-stage.md: "at most 64 GPU lines"
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import gpu

    text = "".join(GPU_PREFIX + "gpu %d uuid U tflops 795.0 gbps 2500.0 errors 0\n" % index for index in range(lines))
    parsed = gpu.parse_gpu_output(text)
    assert len(parsed["gpus"]) == kept
    assert parsed["problems"] == (["more than 64 GPU lines: the rest are not read"] if problem else [])


@pytest.mark.parametrize("codes, kept", [(19, 19), (20, 20), (21, 20)])
def test_the_xid_scan_keeps_at_most_20_codes(codes, kept):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions

    text = "\n".join("NVRM: Xid (PCI:0000:%02x:00): %d, x" % (index, index) for index in range(1, codes + 1))
    assert [item["xid"] for item in actions.xids_in(text)] == list(range(1, kept + 1))


@pytest.mark.parametrize("pad, found", [(65536 - 60, True), (65536, False)])
def test_the_xid_scan_reads_the_first_65536_characters(pad, found):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions

    line = "NVRM: Xid (PCI:0000:65:00): 79, GPU has fallen off the bus."
    assert [item["xid"] for item in actions.xids_in("x" * pad + line)] == ([79] if found else [])


# ------------------------------------------------------------------------------------------------ node marks


def _nm():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks

    return node_marks


def _state(name="n1", annotations=None, labels=None):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import remediation

    node = {"metadata": {"name": name, "labels": dict(labels or {}), "annotations": dict(annotations or {})}, "spec": {}, "status": {"conditions": []}}
    return remediation.node_state(node)


@pytest.mark.parametrize("hours, ok", [(0, False), (1, True), (8784, True), (8785, False)])
def test_a_node_marks_ttl_is_1_to_8784_hours(hours, ok):
    # argument_specs.yml, burnin_mark_ttl_hours: "(1 to 8784)"; the module's own check, not only the role's
    if ok:
        assert _nm().check_options(True, hours, False)["mark_ttl_hours"] == hours
    else:
        with pytest.raises(ConfigError) as caught:
            _nm().check_options(True, hours, False, names={"mark_ttl_hours": "burnin_mark_ttl_hours"})
        assert caught.value.field == "burnin_mark_ttl_hours"


@pytest.mark.parametrize("now, ok", [(-1, False), (0, True), (1, True), (1 << 40, True), ((1 << 40) + 1, False)])
def test_the_fake_clock_is_0_to_2_to_the_40(now, ok):
    if ok:
        assert _nm().check_now("now", now) == now
    else:
        with pytest.raises(ConfigError):
            _nm().check_now("now", now)


@pytest.mark.parametrize("length, readable", [(1023, True), (1024, True), (1025, False)])
def test_a_marks_record_is_read_up_to_1024_characters(length, readable):
    nm = _nm()
    bare = json.dumps({"run_id": "", "marked_at": 1, "expires": 2, "condition": ""}, sort_keys=True, separators=(",", ":"))
    text = bare.replace('"run_id":""', '"run_id":"%s"' % ("r" * (length - len(bare))))
    assert len(text) == length
    record = nm.read_record(_state(annotations={nm.MARKS_RECORD: text}))
    assert (record is not None) is readable
    if readable:
        assert record["run_id"] == "r" * (length - len(bare))


@pytest.mark.parametrize("length", [511, 512, 513, 600])
def test_a_conditions_message_is_at_most_512_characters(length):
    nm = _nm()
    head = nm.condition_for("fail", "r1", 0, ["x"], 0)["message"]
    reason = "y" * (length - len(head) + 1)
    message = nm.condition_for("fail", "r1", 0, [reason, "not shown"], 0)["message"]
    full = "run r1: fail; expires 1970-01-01T00:00:00Z; " + reason
    assert len(full) == length
    if length <= 512:
        assert message == full
    else:
        assert message == full[:509] + "..." and len(message) == 512


def test_a_conditions_status_reads_the_result_by_value():
    assert _nm().condition_for("".join(["pa", "ss"]), "r1", 0, [], 0)["status"] == "True"
    assert _nm().condition_for("warn", "r1", 0, [], 0)["status"] == "False"


@pytest.mark.parametrize("earlier_run, kept", [("r1", True), ("r0", False), ("r2", False)])
def test_a_mark_keeps_its_first_time_only_for_the_same_run(earlier_run, kept):
    nm = _nm()
    record = json.dumps({"condition": "", "expires": 1000 + 3600, "marked_at": 1000, "run_id": earlier_run})
    after = nm.plan_mark(_state(annotations={nm.MARKS_RECORD: record}), {"node": "n1", "verdict": "pass"}, "r1", 5000, nm.check_options(True, 1, False))
    assert json.loads(after["annotations"][nm.MARKS_RECORD])["marked_at"] == (1000 if kept else 5000)
    # the same record in another key order is kept as it was written
    if kept:
        assert after["annotations"][nm.MARKS_RECORD] == record


def test_the_verdict_annotation_is_sorted_compact_json_and_long_scalars_are_cut_to_80():
    nm = _nm()
    assert nm.bounded_entry({"verdict": "pass", "node": "n1"}) == '{"node":"n1","verdict":"pass"}'
    big = dict(("k%02d" % index, "v" * 1000) for index in range(40))
    big.update(verdict="fail", gpus=8)
    text = nm.bounded_entry(big)
    shown = json.loads(text)
    assert len(text.encode("utf-8")) <= nm.VERDICT_MAX_BYTES == 8192 and set(shown) == set(big)
    assert shown["k00"] == "v" * 80 and shown["gpus"] == 8 and shown["verdict"] == "fail"


@pytest.mark.parametrize("other_marked_at, superseded", [(1000, False), (999, True)])
def test_only_an_earlier_runs_mark_is_superseded(other_marked_at, superseded):
    nm = _nm()

    def marked(name, run, at):
        record = {"run_id": run, "marked_at": at, "expires": at + 10**6, "condition": ""}
        return _state(name, annotations={nm.MARKS_RECORD: json.dumps(record)}, labels={nm.RESULT_LABEL: "pass", nm.EXPIRES_LABEL: str(at + 10**6)})

    states = [marked("n1", "r2", 1000), marked("n2", "r1", other_marked_at)]
    expected = {"n2": "superseded by run r2"} if superseded else {}
    assert nm.plan_expire(states, 2000) == expected


def test_a_chunk_that_exactly_fills_the_head_is_kept_whole():
    # The head takes every chunk that fits, the last one exactly (len(chunk) == room), even when it ends mid-line.
    cap = pod_logs.MIN_LOG_BYTES
    text = b"".join(b"h:1:1 [0] NCCL INFO %06d " % index + b"x" * 72 + b"\n" for index in range(4 * cap // 100))
    bound = pod_logs.LogBound(cap)
    for start in range(0, len(text), cap // 8):
        bound.feed(text[start : start + cap // 8])
    got, cut = bound.result()
    assert got.encode().startswith(text[: cap // 8]) and cut is not None


# ------------------------------------------------------------------------------------------------ API errors


@pytest.mark.parametrize(
    "code, cls",
    [
        (0, "Error"),
        (399, "Error"),
        (400, "Invalid"),
        (401, "Unauthorized"),
        (402, "Error"),
        (403, "Forbidden"),
        (404, "NotFound"),
        (405, "Error"),
        (408, "Error"),
        (409, "Conflict"),
        (410, "Error"),
        (421, "Error"),
        (422, "Invalid"),
        (423, "Error"),
        (499, "Error"),
        (500, "ServerError"),
        (503, "ServerError"),
    ],
)
def test_each_http_status_and_its_neighbours_has_its_class(code, cls):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import k8s_errors

    assert k8s_errors._class_of(code) == cls


@pytest.mark.parametrize("length, cut", [(399, False), (400, False), (401, True)])
def test_an_api_error_message_is_at_most_400_characters(length, cut):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import k8s_errors

    text = "m" * length
    assert k8s_errors.MAX_MESSAGE == 400
    assert k8s_errors._one_line(text) == (text[:397] + "..." if cut else text)


# What the drift check reads of one pod (judging/drift.py pod_runtime, judging/transport.py versions).
@pytest.mark.parametrize("count", [15, 16, 17])
def test_a_pods_images_are_read_for_16_containers_at_most(count):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift

    pod = {"status": {"containerStatuses": [{"name": "c%02d" % index, "imageID": "i%02d" % index} for index in range(count)]}}
    assert len(drift.pod_runtime(pod)["images"]) == min(count, drift.MAX_CONTAINERS) == min(count, 16)


@pytest.mark.parametrize("count", [63, 64, 65])
def test_a_containers_nccl_env_is_read_for_64_entries_at_most(count):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift

    env = [{"name": "NCCL_V%02d" % index, "value": "1"} for index in range(count)]
    pod = {"spec": {"containers": [{"name": "c", "env": env}]}}
    assert len(drift.pod_runtime(pod)["nccl_env"].split(" ")) == min(count, drift.MAX_ENV) == min(count, 64)


@pytest.mark.parametrize("length, cut", [(1999, False), (2000, False), (2001, True)])
def test_the_nccl_env_text_is_at_most_2000_characters(length, cut):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift

    # Ten NCCL_Vnn=<value> joined by spaces, LENGTH characters in all (each value under the 200 a value is cut at).
    rest = length - 9 - 10 * len("NCCL_V00=")
    sizes = [rest // 10 + (1 if index < rest % 10 else 0) for index in range(10)]
    env = [{"name": "NCCL_V%02d" % index, "value": "x" * size} for index, size in enumerate(sizes)]
    full = " ".join("%s=%s" % (item["name"], item["value"]) for item in env)
    assert len(full) == length and max(sizes) <= drift.MAX_TEXT
    got = drift.pod_runtime({"spec": {"containers": [{"name": "c", "env": env}]}})["nccl_env"]
    assert (got != full) == cut and got == full[: drift.MAX_ENV_TEXT] and drift.MAX_ENV_TEXT == 2000


@pytest.mark.parametrize("count", [3, 4, 5])
def test_a_pods_net_plugins_are_kept_4_at_most(count):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import transport

    text = "\n".join("h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin P%d (v9)" % index for index in range(count))
    assert len(transport.versions(text)["net_plugin"].split(", ")) == min(count, transport.MAX_VERSIONS) == min(count, 4)


@pytest.mark.parametrize("pad, whole", [(0, True), (1, False)])
def test_a_verdict_annotation_of_8192_bytes_is_kept_whole_and_one_more_is_cut(pad, whole):
    nm = _nm()
    # an evidence list of short texts (under TEXT_MAX_CHARS: nothing to cut but the list), 8192 bytes in all, or 8193
    entry = {"node": "n1", "verdict": "fail", "evidence": ["e" * 100] * 78}
    entry["evidence"][0] = "e" * (100 + 8192 - len(nm._compact(entry)) + pad)
    assert len(entry["evidence"][0]) <= nm.TEXT_MAX_CHARS
    assert len(nm._compact(entry).encode("utf-8")) == 8192 + pad and nm.VERDICT_MAX_BYTES == 8192
    shown = json.loads(nm.bounded_entry(entry))
    assert shown == (entry if whole else dict(entry, evidence=entry["evidence"][:39]))


@pytest.mark.parametrize("ahead, counted", [(299, True), (300, True), (301, False)])
def test_a_mark_or_record_at_most_300_seconds_ahead_of_the_clock_counts(ahead, counted):
    # docs/remediation.md and docs/rbac.md: a record written more than 300 s ahead of the controller's clock is ignored
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_records

    nm = _nm()
    now = 1764770004

    def marked(name, run, at):
        record = {"run_id": run, "marked_at": at, "expires": at + 10**6, "condition": ""}
        return _state(name, annotations={nm.MARKS_RECORD: json.dumps(record)}, labels={nm.RESULT_LABEL: "pass", nm.EXPIRES_LABEL: str(at + 10**6)})

    states = [marked("n1", "r1", now - 60), marked("n2", "r2", now + ahead)]
    assert nm.plan_expire(states, now) == ({"n1": "superseded by run r2"} if counted else {})
    assert node_records.from_the_future({"at": now + ahead, "records": {}}, now) is not counted
