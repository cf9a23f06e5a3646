# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""nccl-tests output parser over real-shaped outputs (tests/unit/fixtures/nccl/, see its README)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results as nr
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "nccl")

HEADER = [
    "#                                                              out-of-place                       in-place          ",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
]
ROW_1G = "  1073741824     268435456     float     sum      -1   4562.7  235.33  441.24      0   4566.0  235.16  440.93      0"
ROW_2G = "  2147483648     536870912     float     sum      -1   9079.3  236.53  443.48      0   9107.0  235.81  442.13      0"
FOOTER = ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 442.1 ", "#"]


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def text(*lines):
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log",
            dict(
                program=None,
                collective=None,
                nccl_version="2.18.5",
                cuda_version="12.2",
                nccl_tests_version=None,
                rows=31,
                largest_size=8589934592,
                peak_busbw=441.91,
                peak_busbw_in_place=444.78,
                avg_busbw=148.968,
                hosts=2,
                devices=16,
            ),
        ),
        (
            "v2.16-all-gather-2x8-h200-nccl2.27.log",
            dict(
                program="all_gather_perf",
                collective="all_gather",
                nccl_version="2.27.7",
                cuda_version="12.9",
                nccl_tests_version="2.16.9",
                rows=24,
                largest_size=8589934592,
                peak_busbw=328.92,
                peak_busbw_in_place=329.06,
                avg_busbw=144.016,
                hosts=2,
                devices=16,
            ),
        ),
        (
            "v2.16-all-reduce-cputime-timestamps-minbw-failed.log",
            dict(
                program="all_reduce_perf",
                collective="all_reduce",
                nccl_version="2.25.3",
                cuda_version=None,
                nccl_tests_version="2.16.4",
                rows=7,
                largest_size=4294967296,
                peak_busbw=351.44,
                peak_busbw_in_place=352.09,
                avg_busbw=341.429,
                hosts=2,
                devices=8,
            ),
        ),
        (
            "v2.10-all-reduce-nccl2.7-no-root.log",
            dict(
                program=None,
                collective=None,
                nccl_version="2.7.8",
                cuda_version="11.0",
                nccl_tests_version=None,
                rows=28,
                largest_size=1073741824,
                peak_busbw=26.62,
                peak_busbw_in_place=26.63,
                avg_busbw=10.2737,
                hosts=2,
                devices=16,
            ),
        ),
        (
            "v2.17-all-reduce-per-iteration.log",
            dict(
                program="all_reduce_perf",
                collective="all_reduce",
                nccl_version="2.28.3",
                cuda_version=None,
                nccl_tests_version="2.17.1",
                rows=3,
                largest_size=4294967296,
                peak_busbw=701.21,
                peak_busbw_in_place=700.92,
                avg_busbw=699.189,
                hosts=1,
                devices=8,
            ),
        ),
        (
            "v2.16-all-reduce-tail-no-header.log",
            dict(
                program="all_reduce_perf",
                collective="all_reduce",
                nccl_version=None,
                cuda_version=None,
                nccl_tests_version=None,
                rows=14,
                largest_size=17179869184,
                peak_busbw=488.52,
                peak_busbw_in_place=485.91,
                avg_busbw=171.674,
                hosts=0,
                devices=0,
            ),
        ),
    ],
)
def test_complete_outputs(name, expected):
    result = nr.parse_nccl_output(fixture(name))
    assert result["complete"] is True and result["problems"] == [] and result["format"] == "text"
    assert len(result["rows"]) == expected.pop("rows")
    assert len(result["hosts"]) == expected.pop("hosts")
    assert len(result["devices"]) == expected.pop("devices")
    for key, value in expected.items():
        assert result[key] == value, key
    assert result["wrong_total"] == 0 and result["out_of_bounds"] == 0
    sizes = [row["size"] for row in result["rows"]]
    assert sizes == sorted(sizes)


def test_rows_carry_every_column_of_both_sides():
    result = nr.parse_nccl_output(fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"))
    row = result["rows"][-1]
    assert row == {
        "size": 8589934592,
        "count": 2147483648,
        "type": "float",
        "redop": "sum",
        "root": -1,
        "oop": {"time_us": 36447.0, "algbw": 235.68, "busbw": 441.91, "wrong": 0},
        "ip": {"time_us": 36211.0, "algbw": 237.22, "busbw": 444.78, "wrong": 0},
    }
    assert result["config"] == {
        "nthreads": 1,
        "ngpus": 1,
        "min_bytes": 8,
        "max_bytes": 8589934592,
        "warmup_iters": 5,
        "iters": 20,
        "agg_iters": 1,
        "validation": 1,
        "graph": 0,
        "step_factor": 2,
    }
    assert result["devices"][8] == {
        "rank": 8,
        "group": 0,
        "pid": 388,
        "host": "nccl-all-reduce-20261130t0700-node-0-1",
        "device": 0,
        "pci": "0x18",
        "name": "NVIDIA H100 80GB HBM3",
    }
    assert result["max_busbw"] == 444.78 and result["max_busbw_size"] == 8589934592


def test_interleaved_nccl_info_lines_are_not_rows():
    result = nr.parse_nccl_output(fixture("v2.16-all-gather-2x8-h200-nccl2.27.log"))
    assert [row["size"] for row in result["rows"][:3]] == [1024, 2048, 4096]
    assert all(row["redop"] == "none" and row["root"] == -1 for row in result["rows"])
    assert result["warnings"] == [] and result["errors"] == []


def test_legacy_layout_without_root_and_with_an_error_column():
    result = nr.parse_nccl_output(fixture("v2.10-all-reduce-nccl2.7-no-root.log"))
    row = result["rows"][-1]
    assert row["root"] is None and row["redop"] == "sum"
    assert row["oop"] == {"time_us": 75641.0, "algbw": 14.2, "busbw": 26.62, "error": 2e-06, "wrong": None}
    assert result["columns"][:5] == ["size", "count", "type", "redop", "time"]


def test_cputime_timestamps_and_the_min_bw_check():
    result = nr.parse_nccl_output(fixture("v2.16-all-reduce-cputime-timestamps-minbw-failed.log"))
    assert result["rows"][0]["timestamp"] == "2026-11-30 07:12:00"
    assert result["rows"][0]["oop"]["time_us"] == 372.45
    assert result["avg_busbw_check"] == "FAILED"
    assert result["nccl_version_code"] == 22503


def test_per_iteration_columns():
    result = nr.parse_nccl_output(fixture("v2.17-all-reduce-per-iteration.log"))
    side = result["rows"][0]["oop"]
    assert set(side) == {"time_us", "algbw", "busbw", "wrong", "i_min_us", "i_max_us", "i_p99_us", "i_cv_pct"}
    assert side["i_cv_pct"] == 1.21


def test_wrong_elements_and_nccl_warnings():
    result = nr.parse_nccl_output(fixture("v2.16-all-reduce-wrong.log"))
    assert result["complete"] is True
    assert result["wrong_total"] == 12 and result["wrong_sizes"] == [268435456, 536870912] and result["out_of_bounds"] == 12
    in_place = dict((row["size"], row["ip"]["wrong"]) for row in result["rows"])
    assert in_place[268435456] == 3 and in_place[536870912] == 9
    assert result["warning_hosts"] == {"nccl-all-reduce-20261130t0730-node-0-1": 1}
    assert "NCCL WARN NET/IB : Got completion from peer" in result["warnings"][0]


def test_truncated_mid_row_names_the_line():
    with pytest.raises(nr.NcclParseError) as caught:
        nr.parse_nccl_output(fixture("v2.16-all-reduce-truncated-mid-row.log"))
    assert caught.value.line == 65
    assert str(caught.value) == "nccl-tests output line 65: truncated: result row has 6 columns, the header at line 35 has 13"
    assert isinstance(caught.value, ParseError)


def test_truncated_mid_row_with_partial_results():
    result = nr.parse_nccl_output(fixture("v2.16-all-reduce-truncated-mid-row.log"), allow_partial=True)
    assert result["complete"] is False and len(result["rows"]) == 28 and result["avg_busbw"] is None
    assert result["problems"][0].startswith("line 65: truncated")
    assert "without the '# Avg bus bandwidth' footer" in result["problems"][1]
    assert result["failed_hosts"] == {
        "nccl-all-reduce-20261130t0800-node-0-1": (
            "mpirun noticed that process rank 11 with PID 0 on node nccl-all-reduce-20261130t0800-node-0-1 exited on signal 9 (Killed)."
        )
    }
    assert result["largest_size"] == 1073741824


def test_truncated_without_footer():
    with pytest.raises(
        nr.NcclParseError,
        match=r"^nccl-tests output line 56: truncated: the table ends after 20 result rows " r"\(last size 4194304\) without the '# Avg bus bandwidth' footer$",
    ):
        nr.parse_nccl_output(fixture("v2.16-all-reduce-truncated-no-footer.log"))


def test_malformed_value_names_line_and_column():
    with pytest.raises(nr.NcclParseError) as caught:
        nr.parse_nccl_output(fixture("v2.16-all-reduce-malformed.log"))
    assert caught.value.line == 40
    assert "column 'busbw' (out-of-place) is '4.1e+0x', not a number" in str(caught.value)


def test_failure_before_the_table_is_quoted():
    with pytest.raises(nr.NcclParseError) as caught:
        nr.parse_nccl_output(fixture("v2.16-all-reduce-init-failure.log"))
    assert caught.value.line is None
    assert "no result table found in 28 lines; the test failed before it" in str(caught.value)
    assert "Test NCCL failure common.cu:1279 'unhandled system error" in str(caught.value)


def test_two_tests_in_one_log():
    log = fixture("v2.16-two-tests-4x4-gb200.log")
    runs = nr.parse_nccl_runs(log)
    assert [run["collective"] for run in runs] == ["all_reduce", "all_gather"]
    assert [len(run["rows"]) for run in runs] == [8, 8] and all(run["complete"] for run in runs)
    with pytest.raises(ConfigError, match=r"^collective: the output holds 2 tests \(all_reduce, all_gather\)"):
        nr.parse_nccl_output(log)
    assert nr.parse_nccl_output(log, collective="all_gather_perf")["peak_busbw"] == 639.22
    with pytest.raises(ConfigError, match="no broadcast test in the output; found: all_reduce, all_gather"):
        nr.parse_nccl_output(log, collective="broadcast")


def test_collective_given_for_an_unnamed_run():
    result = nr.parse_nccl_output(fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log"), collective="all_reduce")
    assert result["collective"] is None and len(result["rows"]) == 31


def test_tail_cut_log_notes_the_assumed_layout():
    result = nr.parse_nccl_output(fixture("v2.16-all-reduce-tail-no-header.log"))
    assert result["assumed_layout"] is True
    assert result["warnings"] == ["line 2: no table header before the first result row (log cut at the start?); read with the default column layout"]


def test_json_output():
    result = nr.parse_nccl_output(fixture("v2.16-all-reduce-2x8-h100.json"))
    assert result["format"] == "json" and result["complete"] is True
    assert result["program"] == "all_reduce_perf" and result["collective"] == "all_reduce" and result["nccl_version"] == "2.27.7"
    assert [row["size"] for row in result["rows"]] == [1 << 30, 2 << 30, 4 << 30, 8 << 30, 16 << 30]
    assert result["rows"][0]["root"] == -1 and result["rows"][0]["oop"]["wrong"] == 0
    assert result["peak_busbw"] == pytest.approx(487.42, abs=0.01) and result["avg_busbw"] == pytest.approx(486.41, abs=0.01)
    assert result["config"]["max_bytes"] == 16 << 30 and len(result["hosts"]) == 2
    loaded = json.loads(fixture("v2.16-all-reduce-2x8-h100.json"))
    assert nr.parse_nccl_output(loaded)["rows"] == result["rows"]


def test_truncated_json():
    with pytest.raises(nr.NcclParseError, match=r"^nccl-tests output \(JSON\) line 1: not valid JSON \(truncated -J output\?\)"):
        nr.parse_nccl_output(fixture("v2.16-all-reduce-truncated.json"))


def test_json_without_the_average_is_incomplete():
    loaded = json.loads(fixture("v2.16-all-reduce-2x8-h100.json"))
    del loaded["average_bus_bandwidth"]
    with pytest.raises(nr.NcclParseError, match=r"truncated: no 'average_bus_bandwidth' after 5 results \(last size 17179869184\)"):
        nr.parse_nccl_json(loaded)
    partial = nr.parse_nccl_json(loaded, allow_partial=True)
    assert partial["complete"] is False and len(partial["rows"]) == 5


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda doc: doc.update(results={"size": 1}), "no 'results' list"),
        (lambda doc: doc["results"][0].update(size="big"), r"results\[0\] must be an object with an integer size"),
        (lambda doc: doc["results"][1]["out_of_place"].update(bus_bw=True), r"results\[1\].out_of_place.bus_bw must be a number"),
        (lambda doc: doc["results"][2].update(root="x"), r"results\[2\].root is 'x', not an integer"),
        (lambda doc: doc.update(results=[]), "no result rows"),
    ],
)
def test_malformed_json(change, message):
    loaded = json.loads(fixture("v2.16-all-reduce-2x8-h100.json"))
    change(loaded)
    with pytest.raises(nr.NcclParseError, match=message):
        nr.parse_nccl_json(loaded)


def test_json_nan_and_unchecked_values():
    loaded = json.loads(fixture("v2.16-all-reduce-2x8-h100.json"))
    loaded["results"][0]["in_place"]["bus_bw"] = "nan"
    loaded["results"][0]["out_of_place"]["nwrong"] = None
    result = nr.parse_nccl_json(loaded)
    assert result["rows"][0]["ip"]["busbw"] is None and result["rows"][0]["oop"]["wrong"] is None
    assert result["avg_busbw_check"] is None


def test_launcher_prefixes_are_stripped():
    lines = HEADER + [ROW_1G, ROW_2G] + FOOTER
    tagged = ["[1,0]<stdout>:" + line for line in lines]
    prefixed = ["[pod/nccl-launcher-abc12/node] 2026-11-30T07:00:00.123456789Z " + line for line in lines]
    for variant in (tagged, prefixed, ["0: " + line for line in lines]):
        result = nr.parse_nccl_output(text(*variant))
        assert [row["size"] for row in result["rows"]] == [1 << 30, 2 << 30] and result["avg_busbw"] == 442.1


def test_not_applicable_wrong_counts_when_checks_are_off():
    row = ROW_1G.replace("      0", "    N/A")
    result = nr.parse_nccl_output(text(*(HEADER + [row] + FOOTER)))
    assert result["rows"][0]["oop"]["wrong"] is None and result["wrong_total"] == 0


def test_out_of_place_may_be_absent():
    row = "  1073741824     268435456     float     sum      -1" + " " * 32 + "   4566.0  235.16  440.93      0"
    result = nr.parse_nccl_output(text(*(HEADER + [row] + FOOTER)))
    assert result["rows"][0]["oop"] is None and result["peak_busbw"] == 440.93


def test_nan_average_is_none():
    result = nr.parse_nccl_output(text(*(HEADER + [ROW_1G] + ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : -nan "])))
    assert result["avg_busbw"] is None and result["complete"] is True


@pytest.mark.parametrize(
    "lines, line, message",
    [
        (HEADER + [ROW_1G[:40], ROW_2G] + FOOTER, 4, "result row has 3 columns, the header at line 2 has 13"),
        (HEADER + [ROW_1G, ROW_2G + "  7"] + FOOTER, 5, "result row has 14 columns"),
        (HEADER + [ROW_1G.replace("float", "float  x")] + FOOTER, 4, "result row has 14 columns"),
        (HEADER + [ROW_1G.replace("   -1 ", "   x1 ")] + FOOTER, 4, "column 'root' is 'x1', not an integer"),
        (HEADER + FOOTER, 2, "the table at line 2 has a footer but no result rows"),
        (HEADER + [ROW_1G.replace("      0", "     -1", 1)] + FOOTER, 4, "column '#wrong' (out-of-place) is '-1', not a count"),
        (HEADER + [ROW_1G] + FOOTER + [ROW_2G], 8, "result row after the footer of the table at line 2"),
        (HEADER, 2, "truncated: the table header at line 2 has no result rows"),
        (HEADER + [ROW_1G, "# Avg bus bandwidth    : fast"], 5, "'# Avg bus bandwidth' value 'fast' is not a number"),
        (["# size count type redop root algbw busbw"] + [ROW_1G] + FOOTER, 1, "no recognisable time/algbw/busbw groups"),
    ],
)
def test_malformed_lines(lines, line, message):
    with pytest.raises(nr.NcclParseError) as caught:
        nr.parse_nccl_output(text(*lines))
    assert caught.value.line == line and message in str(caught.value)


def test_partial_mode_skips_malformed_rows():
    result = nr.parse_nccl_output(text(*(HEADER + [ROW_1G.replace("235.33", "abc"), ROW_2G] + FOOTER)), allow_partial=True)
    assert [row["size"] for row in result["rows"]] == [2 << 30] and result["complete"] is False
    assert result["problems"] == ["line 4: column 'algbw' (out-of-place) is 'abc', not a number"]


def test_chatter_starting_with_numbers_is_ignored():
    lines = ["2 nodes ready", "8 GPUs per node"] + HEADER + [ROW_1G, "3 ranks connected", ROW_2G] + FOOTER
    assert len(nr.parse_nccl_output(text(*lines))["rows"]) == 2


@pytest.mark.parametrize("value", ["", "nothing to see\n", "NCCL version 2.27.7+cuda12.9\n"])
def test_no_table(value):
    with pytest.raises(nr.NcclParseError, match=r"^nccl-tests output: no result table found in \d+ lines$"):
        nr.parse_nccl_output(value)


def test_preamble_only_is_called_truncated():
    with pytest.raises(nr.NcclParseError, match="the output stops after the preamble"):
        nr.parse_nccl_output("# nccl-tests version 2.16.9 nccl-headers=22707 nccl-library=22707\n# Collective test starting: all_reduce_perf\n")


@pytest.mark.parametrize("value", [None, 5, b"bytes"])
def test_bad_input_type(value):
    with pytest.raises(ConfigError, match="^output: "):
        nr.parse_nccl_output(value)


def test_list_of_lines():
    assert len(nr.parse_nccl_output(HEADER + [ROW_1G] + FOOTER)["rows"]) == 1


@pytest.mark.parametrize("code, version", [(22707, "2.27.7"), (21805, "2.18.5"), (2708, "2.7.8"), (None, None)])
def test_nccl_version_codes(code, version):
    assert nr.nccl_version_from_code(code) == version


@pytest.mark.parametrize(
    "value, size", [(1024, 1024), ("1K", 1024), ("8G", 8 << 30), ("16GiB", 16 << 30), ("512M", 512 << 20), ("1.5K", 1536), (" 2 g ", 2 << 30), (4.0, 4)]
)
def test_parse_size(value, size):
    assert nr.parse_size(value) == size


@pytest.mark.parametrize("value", ["", "1X", -1, True, None, "G"])
def test_parse_size_rejects(value):
    with pytest.raises(ConfigError, match="^size: "):
        nr.parse_size(value)


@pytest.mark.parametrize("size, label", [(8, "8"), (1024, "1K"), (1536, "1.5K"), (8 << 30, "8G"), (None, "?")])
def test_size_label(size, label):
    assert nr.size_label(size) == label


@pytest.mark.parametrize(
    "program, collective", [("./build/all_reduce_perf", "all_reduce"), ("all_reduce_perf_mpi", "all_reduce"), ("all_gather", "all_gather"), (None, None)]
)
def test_program_collective(program, collective):
    assert nr.program_collective(program) == collective


def test_series():
    result = nr.parse_nccl_output(text(*(HEADER + [ROW_2G, ROW_1G] + FOOTER)))
    assert nr.series(result) == [[1 << 30, 441.24, 440.93], [2 << 30, 443.48, 442.13]]
    assert nr.series(None) == []


def test_nccl_tests_2_19_text_output_is_read():
    """nccl-tests v2.19.6 (NVIDIA/nccl-tests a0b82b2): the version and "Collective test starting" header lines,
    `unalign` on the parameters line (nccl-tests#389's output), a number in exponent form when its column is narrow
    (src/util.cu getFloatStr falls back from %.2f to %.1f, %.0f, then %e), and mpirun's `[1,0]<stdout>:` prefixes."""
    text = open(os.path.join(FIXTURES, "v2.16-all-gather-2x8-h200-nccl2.27.log")).read()
    text = text.replace("# nccl-tests version 2.16.9", "# nccl-tests version 2.19.6").replace("graph: 0\n", "graph: 0 unalign: 0\n", 1)
    plain = nr.parse_nccl_output(text)
    lines, done = [], False
    for line in text.splitlines():
        fields = line.split()
        if not done and len(fields) > 8 and fields[0].isdigit() and fields[1].isdigit():
            line, done = line.replace(fields[5], "%.1e" % float(fields[5]), 1), True
        lines.append("[1,0]<stdout>:" + line)
    result = nr.parse_nccl_output("\n".join(lines) + "\n")
    assert done and result["nccl_tests_version"] == "2.19.6" and result["complete"]
    assert (result["peak_busbw"], result["avg_busbw"]) == (plain["peak_busbw"], plain["avg_busbw"])


# What the mutation run of judging/nccl_results.py (docs/mutation.md) found untested.

REAL = os.path.join(os.path.dirname(FIXTURES), "..", "..", "fixtures", "real", "nccl")


def real(name):
    with open(os.path.join(REAL, name)) as handle:
        return handle.read()


def test_a_step_in_bytes_is_no_step_factor():
    # nccl-tests#287's one-GPU alltoall (tests/fixtures/real/nccl/PROVENANCE.md): "step: 1048576(bytes)".
    config = nr.parse_nccl_output(real("alltoall-rtx5090-1gpu-avg-zero.log"))["config"]
    assert config["step_bytes"] == 1048576 and "step_factor" not in config, config
    assert (
        nr.parse_nccl_output(text(*(["# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20"] + HEADER + [ROW_1G] + FOOTER)))[
            "config"
        ]["step_factor"]
        == 2
    )


def test_devices_of_nccl_tests_before_the_group_column_are_in_group_0():
    # The NCCL 2.9.6 broadcast of tests/fixtures/real/nccl/PROVENANCE.md prints "#   Rank  0 Pid  14926 on v100-gpu-1
    # device  0 [0x00] ...": no Group column, one thread group (0), as the later "Rank  0 Group  0 Pid ..." lines say.
    devices = nr.parse_nccl_output(real("nccl2.9.6-broadcast-socket-warn-libibverbs.log"), allow_partial=True)["devices"]
    assert [(device["rank"], device["group"], device["pid"], device["host"]) for device in devices] == [(0, 0, 14926, "v100-gpu-1"), (1, 0, 9210, "v100-gpu-5")]
    grouped = nr.parse_nccl_output(real("alltoall-rtx5090-1gpu-avg-zero.log"))["devices"]
    assert [(device["rank"], device["group"], device["pid"]) for device in grouped] == [(0, 0, 2181762)]


def test_nccl_version_codes_at_the_widest_minor_and_patch():
    # NCCL_VERSION(X, Y, Z) is X*10000 + Y*100 + Z from 2.9 (X*1000 + Y*100 + Z before): every Y.Z reads back.
    for minor in range(9, 100):
        for patch in range(100):
            assert nr.nccl_version_from_code(20000 + minor * 100 + patch) == "2.%d.%d" % (minor, patch)
    assert nr.nccl_version_from_code(30000) == "3.0.0" and nr.nccl_version_from_code(2408) == "2.4.8"


def test_a_json_side_that_is_no_object_is_a_parse_error_naming_it():
    loaded = json.loads(fixture("v2.16-all-reduce-2x8-h100.json"))
    loaded["results"][1]["in_place"] = [1, 2]
    with pytest.raises(nr.NcclParseError, match=r"results\[1\]\.in_place must be an object, got \[1, 2\]") as raised:
        nr.parse_nccl_json(loaded)
    assert "(JSON)" in str(raised.value)


def test_the_old_layouts_alltoall_row_with_a_blank_redop_is_read():
    # nccl-tests#78's alltoall (before 2.10): "float           520935 ..." - the redop is blank, one token fewer.
    result = nr.parse_nccl_output(real("nt-old-layout-alltoall-8x8-v100-ib-footer.log"))
    assert [(row["size"], row["count"], row["type"], row["redop"], row["oop"]["busbw"], row["ip"]["time_us"]) for row in result["rows"]] == [
        (268435456, 1048576, "float", "", 0.51, 519562.0),
        (536870912, 2097152, "float", "", 0.51, 1041299.0),
    ]
    assert result["avg_busbw"] == 0.507636 and result["complete"] is True


def test_na_is_unchecked_only_in_the_wrong_and_error_columns():
    # nccl-tests prints N/A for a check it did not make (#wrong, error); a time or bandwidth N/A is no number.
    unchecked = nr.parse_nccl_output(text(*(HEADER + [ROW_1G.replace("      0   4566.0", "    N/A   4566.0")] + FOOTER)))
    assert unchecked["rows"][0]["oop"]["wrong"] is None and unchecked["rows"][0]["ip"]["wrong"] == 0
    for good, bad in (("4562.7", "   N/A"), ("235.33", "   N/A"), ("441.24", "   N/A")):
        with pytest.raises(nr.NcclParseError, match=r"\(out-of-place\) is 'N/A', not a number"):
            nr.parse_nccl_output(text(*(HEADER + [ROW_1G.replace(good, bad, 1)] + FOOTER)))


def test_a_size_of_zero_given_as_a_float_is_zero():
    assert nr.parse_size(0.0) == 0 and nr.parse_size(1024.0) == 1024 and nr.parse_size(0) == 0


def test_an_error_column_of_na_is_unchecked():
    # nccl-tests#82's broadcast (NCCL 2.9.6): the "error" column says N/A on both sides.
    rows = nr.parse_nccl_output(real("nccl2.9.6-broadcast-socket-warn-libibverbs.log"), allow_partial=True)["rows"]
    assert rows and all(row["oop"]["error"] is None and row["ip"]["error"] is None for row in rows), rows[:2]


def test_a_json_document_counts_no_text_lines():
    assert nr.parse_nccl_json(json.loads(fixture("v2.16-all-reduce-2x8-h100.json")))["lines"] == 0
    assert nr.parse_nccl_output(text(*(HEADER + [ROW_1G] + FOOTER)))["lines"] == 7


def test_the_last_of_two_tests_cut_short_is_incomplete_and_the_first_is_not():
    lines = fixture("v2.16-two-tests-4x4-gb200.log").splitlines()
    cut = "\n".join(lines[:70]) + "\n"  # the all_gather table without its footer
    first, second = nr.parse_nccl_runs(cut, allow_partial=True)
    assert (first["collective"], first["complete"]) == ("all_reduce", True)
    assert (second["collective"], second["complete"]) == ("all_gather", False), second["problems"]
    assert "truncated: the table ends after" in second["problems"][0]


def test_without_any_table_the_error_describes_the_last_test_started():
    # Two tests started, neither printed a table: the error's facts are the last one's.
    lines = fixture("v2.16-two-tests-4x4-gb200.log").splitlines()
    with pytest.raises(nr.NcclParseError, match="no result table") as raised:
        nr.parse_nccl_output("\n".join(lines[:19] + lines[39:41]) + "\n")
    assert raised.value.facts["program"] == "all_gather_perf", raised.value.facts


def test_json_errors_are_kept_with_their_text():
    loaded = json.loads(fixture("v2.16-all-reduce-2x8-h100.json"))
    loaded["errors"] = ["cudaMalloc failed: out of memory"]
    assert nr.parse_nccl_json(loaded)["errors"] == ["nccl-tests: cudaMalloc failed: out of memory"]
    with pytest.raises(nr.NcclParseError, match=r"not valid JSON \(truncated -J output\?\): Expecting ',' delimiter$"):
        nr.parse_nccl_json('{"results": [1 2]}')


def test_at_most_max_messages_errors_are_kept_per_run():
    # 60 hosts of tests/fixtures/real/nccl/ib-completion-error-4-three-hosts.log's fault line
    line = real("ib-completion-error-4-three-hosts.log").splitlines()
    fault = [item for item in line if "NCCL WARN NET/IB : Got completion" in item][0].split(" ", 1)[1]
    faults = ["H100-%d:9821:9920 %s" % (index, fault) for index in range(60)]
    result = nr.parse_nccl_output(text(*(HEADER + [ROW_1G] + faults + FOOTER)), allow_partial=True)
    assert len(result["errors"]) == nr.MAX_MESSAGES == 50, len(result["errors"])


def test_a_cut_row_of_the_old_alltoall_layout_counts_the_columns_it_has():
    lines = real("nt-old-layout-alltoall-8x8-v100-ib-footer.log").splitlines()
    cut = "\n".join(lines[:5] + ["   536870912       2097152     float          1041974    0.52"]) + "\n"
    result = nr.parse_nccl_output(cut, allow_partial=True)
    assert result["complete"] is False and result["problems"][0] == "line 6: truncated: result row has 5 columns, the header at line 3 has 12", result[
        "problems"
    ]


def test_a_bad_value_names_its_side_and_a_bad_timestamp_its_text():
    for good, bad, side in (("4562.7", "  x4.7", "out-of-place"), ("4566.0", "  x6.0", "in-place")):
        with pytest.raises(nr.NcclParseError, match=r"column 'time_us' \(%s\) is 'x\d\.\d', not a number" % side):
            nr.parse_nccl_output(text(*(HEADER + [ROW_1G.replace(good, bad, 1)] + FOOTER)))
    stamped = [HEADER[0], HEADER[1] + "           timestamp", HEADER[2], ROW_1G + "  2026-11-30 07:00:0x"] + FOOTER
    with pytest.raises(nr.NcclParseError, match=r"timestamp column is '2026-11-30 07:00:0x', not YYYY-mm-dd HH:MM:SS$"):
        nr.parse_nccl_output(text(*stamped))


def test_an_error_line_before_any_table_is_named_in_the_error():
    preamble = fixture("v2.16-two-tests-4x4-gb200.log").splitlines()[:19]
    with pytest.raises(nr.NcclParseError, match=r"no result table found in 20 lines; the test failed before it: nccl-tests: cudaMalloc failed$"):
        nr.parse_nccl_output("\n".join(preamble + ["# error: cudaMalloc failed "]) + "\n")


def test_of_two_tests_of_the_collective_asked_for_the_last_is_read():
    lines = fixture("v2.16-two-tests-4x4-gb200.log").splitlines()
    again = [line.replace(" 87.47 ", " 97.47 ") for line in lines[:39]]
    result = nr.parse_nccl_output("\n".join(lines[:39] + again) + "\n", collective="all_reduce")
    assert result["rows"][0]["oop"]["busbw"] == 97.47, result["rows"][0]


def test_json_checks_and_a_side_without_bus_bw():
    loaded = json.loads(fixture("v2.16-all-reduce-2x8-h100.json"))
    result = nr.parse_nccl_json(loaded)
    assert result["avg_busbw_check"] is None  # "okay": "unchecked"
    for okay, check in ((True, "OK"), ("true", "OK"), (False, "FAILED")):
        loaded["average_bus_bandwidth"]["okay"] = okay
        assert nr.parse_nccl_json(loaded)["avg_busbw_check"] == check, okay
    del loaded["results"][0]["out_of_place"]["bus_bw"]
    with pytest.raises(nr.NcclParseError, match=r"results\[0\]\.out_of_place has no bus_bw$"):
        nr.parse_nccl_json(loaded)


def test_a_json_error_names_the_callers_source():
    with pytest.raises(nr.NcclParseError, match=r"^launcher pod log line 1: not valid JSON"):
        nr.parse_nccl_output(fixture("v2.16-all-reduce-truncated.json"), source="launcher pod log")


def test_a_wrong_count_that_is_no_number_is_refused():
    with pytest.raises(nr.NcclParseError, match=r"column '#wrong' \(out-of-place\) is 'x', not a count"):
        nr.parse_nccl_output(text(*(HEADER + [ROW_1G.replace("      0   4566.0", "      x   4566.0")] + FOOTER)))


def test_an_nccl_version_line_without_a_version_is_skipped():
    result = nr.parse_nccl_output(text(*(["NCCL version unknown"] + HEADER + [ROW_1G] + FOOTER)))
    assert result["nccl_version"] is None and len(result["rows"]) == 1


def test_a_new_header_after_rows_without_a_footer_starts_a_new_test():
    runs = nr.parse_nccl_runs(text(*(HEADER + [ROW_1G] + HEADER + [ROW_2G] + FOOTER)), allow_partial=True)
    assert [(len(run["rows"]), run["complete"]) for run in runs] == [(1, False), (1, True)], runs


def test_only_a_line_starting_with_size_is_a_header():
    result = nr.parse_nccl_output(text(*(["# elements count 5 per rank"] + HEADER + [ROW_1G] + FOOTER)))
    assert len(result["rows"]) == 1 and result["complete"] is True


def test_a_header_whose_first_group_does_not_start_with_time_is_refused_naming_it():
    bad = HEADER[1].replace("root     time   algbw   busbw #wrong     time", "root    algbw    time   busbw #wrong     time", 1)
    with pytest.raises(nr.NcclParseError, match="table header has no recognisable time/algbw/busbw groups: size count type"):
        nr.parse_nccl_output(text(*([HEADER[0], bad, HEADER[2], ROW_1G] + FOOTER)))
    nobusbw = HEADER[1].replace("busbw #wrong     time", "bw    #wrong     time", 1)
    with pytest.raises(nr.NcclParseError, match=r"table header has a group without busbw: size count type redop root time algbw bw #wrong time"):
        nr.parse_nccl_output(text(*([HEADER[0], nobusbw, HEADER[2], ROW_1G] + FOOTER)))


def test_at_most_eight_prefixes_are_stripped_from_a_line():
    assert nr._strip_prefixes("0: " * 8 + "x") == "x" and nr._strip_prefixes("0: " * 9 + "x") == "0: x"  # pylint: disable=protected-access


def test_a_failing_hosts_line_is_kept_to_300_characters():
    fault = [line for line in real("ib-completion-error-4-three-hosts.log").splitlines() if "NCCL WARN NET/IB : Got completion" in line][0]
    long_line = fault + " " + "y" * 400
    result = nr.parse_nccl_output(text(*(HEADER + [ROW_1G] + [long_line] + FOOTER)), allow_partial=True)
    message = result["failed_hosts"]["H100-1"]
    assert message.endswith(long_line[:300]) and not message.endswith(long_line[:301]), message


def test_size_labels_switch_unit_at_1024():
    assert [nr.size_label(size) for size in (1023, 1024, 1023 << 10, 1 << 20, 1023 << 30, 1 << 40)] == ["1023", "1K", "1023K", "1M", "1023G", "1T"]


def test_a_log_whose_only_evidence_is_an_error_line_is_a_partial_result_when_allowed():
    preamble = fixture("v2.16-two-tests-4x4-gb200.log").splitlines()[:19]
    result = nr.parse_nccl_output("\n".join(preamble + ["# error: cudaMalloc failed"]) + "\n", allow_partial=True)
    assert result["rows"] == [] and result["errors"] == ["nccl-tests: cudaMalloc failed"], result["errors"]
