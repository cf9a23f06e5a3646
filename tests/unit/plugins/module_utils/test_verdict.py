# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Thresholds data, threshold selection, verdicts and node attribution."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results as nr
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import attribution as at
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import dcgm
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import thresholds as th
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_judge
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import verdict as vd
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "nccl")
H100_AWS = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8, "mnnvl": False}


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def parsed(name, **kwargs):
    return nr.parse_nccl_output(fixture(name), **kwargs)


def selected(facts, collective="all_reduce", **kwargs):
    chosen = th.select_thresholds(facts, collective, **kwargs)
    return dict((metric, record["id"] if record else None) for metric, record in chosen.items())


def record(**values):
    base = {"collective": "all_reduce", "metric": "peak", "pass": 100, "source": "test"}
    base.update(values)
    return base


# ------------------------------------------------------------------------------------------------ the data


def test_collection_thresholds_are_valid_and_sourced():
    data = th.load_thresholds()
    records = th.validate_thresholds(data)
    assert data["schema"] == "gpufleet.burnin/thresholds/v1" and len(records) >= 20
    for item, raw in zip(records, data["thresholds"]):
        assert item["origin"] == "collection"
        numbers = [key for key in ("pass", "warn", "expected", "nodes", "size", "min_size", "sweep") if raw.get(key) is not None]
        assert isinstance(raw["source"], dict) and all(raw["source"].get(key) for key in numbers), item["id"]
        assert item["pass"] is not None and (item["warn"] is None or item["warn"] <= item["pass"]), item["id"]


@pytest.mark.parametrize(
    "threshold_id, values",
    [
        ("aws-h100-all-reduce-peak", {"pass": 270.0, "warn": 250.0, "expected": 443.7, "nodes": (2, None), "min_size": 1 << 30}),
        ("aws-b200-all-reduce-1g-in-place", {"pass": 570.0, "warn": 300.0, "size": 1 << 30, "side": "in_place"}),
        ("aws-gb200-all-reduce-1g-mnnvl", {"pass": 650.0, "warn": 500.0, "side": "both", "mnnvl": True, "gpus_per_node": 4}),
        ("gcp-h200-all-gather-avg", {"pass": 100.0, "warn": None, "metric": "avg", "sweep": {"min": 1024, "max": 8 << 30}}),
        ("gcp-h200-all-gather-peak", {"pass": 296.01, "warn": 263.12, "derived": True, "expected": 328.9}),
        ("azure-h100-all-reduce-peak", {"pass": 400.0, "warn": 300.0}),
        ("azure-gb300-mnnvl-all-reduce-peak", {"pass": 800.0, "warn": 600.0, "nodes": (2, 18), "min_size": 16 << 30}),
        ("gb300-mnnvl-all-reduce-peak", {"pass": 823.0, "platform": "*"}),
        ("coreweave-gb200-2-racks-all-reduce-peak", {"nodes": (19, 36), "pass": 729.36}),
    ],
)
def test_published_numbers(threshold_id, values):
    records = dict((item["id"], item) for item in th.validate_thresholds(th.load_thresholds()))
    for key, value in values.items():
        assert records[threshold_id][key] == value, key


def test_load_is_cached_but_returns_copies():
    first = th.load_thresholds()
    first["thresholds"].clear()
    assert th.load_thresholds()["thresholds"]


def test_load_errors(tmp_path):
    with pytest.raises(ParseError, match="cannot read thresholds"):
        th.load_thresholds(str(tmp_path / "missing.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("thresholds: [")
    with pytest.raises(ParseError, match="is not valid YAML"):
        th.load_thresholds(str(bad))
    unsourced = tmp_path / "unsourced.yaml"
    unsourced.write_text("thresholds:\n  - {id: x, collective: all_reduce, metric: peak, pass: 100, warn: 90, source: {pass: somewhere}}\n")
    with pytest.raises(ParseError, match=r"thresholds\[0\].source: names no source for warn"):
        th.load_thresholds(str(unsourced))


@pytest.mark.parametrize(
    "value, span",
    [
        (None, (1, None)),
        (2, (2, 2)),
        ("2", (2, 2)),
        ("2-18", (2, 18)),
        ("2+", (2, None)),
        ("2-", (2, None)),
        ({"min": 3}, (3, None)),
        ({"min": 2, "max": 4}, (2, 4)),
    ],
)
def test_parse_nodes(value, span):
    assert th.parse_nodes(value) == span


@pytest.mark.parametrize("value", [0, "18-2", "two", True, 2.5, {"min": 2, "top": 3}, {"min": "2"}])
def test_parse_nodes_rejects(value):
    with pytest.raises(ConfigError, match="^nodes"):
        th.parse_nodes(value)


@pytest.mark.parametrize(
    "values, message",
    [
        ({"collective": None}, r"^r.collective: is required"),
        ({"metric": "median"}, r"^r.metric: must be one of peak, avg"),
        ({"warn": 120}, r"^r.warn: 120.0 is above pass 100.0"),
        ({"pass": None}, r"^r: needs 'pass'"),
        ({"pass": -1}, r"^r.pass: must be a number >= 0"),
        ({"side": "left"}, r"^r.side: must be one of"),
        ({"platform": ""}, r"^r.platform: must be a non-empty string"),
        ({"mnnvl": "yes"}, r"^r.mnnvl: must be true or false"),
        ({"gpus_per_node": 0}, r"^r.gpus_per_node: must be an integer >= 1"),
        ({"size": "big"}, r"^r.size: must be a size in bytes"),
        ({"sweep": {"from": "1K"}}, r"^r.sweep: must be a mapping with min and/or max"),
        ({"colour": "red"}, r"^r: unknown key\(s\) colour"),
    ],
)
def test_record_errors_name_the_field(values, message):
    with pytest.raises(ConfigError, match=message):
        th.normalize_record(record(**values), "r")


def test_expected_with_ratios():
    item = th.normalize_record(record(**{"pass": None, "expected": 500, "pass_ratio": 0.8}), "r", defaults={"warn_ratio": 0.7})
    assert (item["pass"], item["warn"], item["derived"]) == (400.0, 350.0, True)
    with pytest.raises(ConfigError, match="has 'expected' but no pass_ratio"):
        th.normalize_record(record(**{"pass": None, "expected": 500}), "r")


def test_duplicate_ids():
    with pytest.raises(ConfigError, match=r"thresholds\[1\].id: 'a' is already used by thresholds\[0\]"):
        th.validate_thresholds({"thresholds": [record(id="a"), record(id="a")]}, origin="inventory")


# ------------------------------------------------------------------------------------------------ selection


@pytest.mark.parametrize(
    "facts, collective, expected",
    [
        (H100_AWS, "all_reduce", {"peak": "aws-h100-all-reduce-peak", "avg": None, "range": "aws-h100-all-reduce-sizes"}),
        (dict(H100_AWS, nodes=16), "all_reduce_perf", {"peak": "aws-h100-all-reduce-peak", "avg": None, "range": "aws-h100-all-reduce-sizes"}),
        (dict(H100_AWS, gpus_per_node=4), "all_reduce", {"peak": None, "avg": None}),
        # One node: the single-node (NVLink) records of the node stage, a platform's own first.
        (dict(H100_AWS, nodes=1), "all_reduce", {"peak": "h100-single-node-all-reduce-peak", "avg": None}),
        (dict(H100_AWS, nodes=1, gpus_per_node=4), "all_reduce", {"peak": None, "avg": None}),
        (dict(H100_AWS, platform="azure", nodes=1), "all_reduce", {"peak": "azure-h100-all-reduce-single-node", "avg": None}),
        (dict(H100_AWS, platform="azure"), "all_reduce", {"peak": "azure-h100-all-reduce-peak", "avg": None}),
        (dict(H100_AWS, platform="gcp"), "all_gather", {"peak": "gcp-h100-all-gather-peak", "avg": "gcp-h100-all-gather-avg"}),
        (dict(H100_AWS, platform="gcp", nodes=4), "all_gather", {"peak": None, "avg": "gcp-h100-all-gather-avg"}),
        (
            {"platform": "aws", "gpu_architecture": "gb200", "nodes": 2, "gpus_per_node": 4, "mnnvl": True},
            "all_reduce",
            {"peak": "aws-gb200-all-reduce-1g-mnnvl", "avg": None},
        ),
        (
            {"platform": "oci", "gpu_architecture": "gb200", "nodes": 2, "gpus_per_node": 4, "mnnvl": True},
            "all_reduce",
            {"peak": "gb200-mnnvl-all-reduce-peak", "avg": None},
        ),
        (
            {"platform": "oci", "gpu_architecture": "gb200", "nodes": 2, "gpus_per_node": 4, "mnnvl": False},
            "all_reduce",
            {"peak": "gb200-network-all-reduce-peak", "avg": None},
        ),
        ({"platform": "oci", "gpu_architecture": "gb200", "nodes": 2, "gpus_per_node": 4}, "all_reduce", {"peak": None, "avg": None}),
        (
            {"platform": "coreweave", "gpu_architecture": "gb200", "nodes": 18, "gpus_per_node": 4, "mnnvl": True},
            "all_reduce",
            {"peak": "coreweave-gb200-rack-all-reduce-peak", "avg": None},
        ),
        (
            {"platform": "coreweave", "gpu_architecture": "gb200", "nodes": 30, "gpus_per_node": 4, "mnnvl": True},
            "all_reduce",
            {"peak": "coreweave-gb200-2-racks-all-reduce-peak", "avg": None},
        ),
        (
            {"platform": "coreweave", "gpu_architecture": "gb200", "nodes": 360, "gpus_per_node": 4, "mnnvl": True},
            "all_reduce",
            {"peak": "coreweave-gb200-20-racks-all-reduce-peak", "avg": None, "range": "coreweave-gb200-20-racks-all-reduce-sizes"},
        ),
        (
            {"platform": "AWS", "gpu_architecture": "H100", "nodes": 2, "gpus_per_node": 8},
            "all_reduce",
            {"peak": "aws-h100-all-reduce-peak", "avg": None, "range": "aws-h100-all-reduce-sizes"},
        ),
        ({"platform": "togetherai", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8}, "all_reduce", {"peak": None, "avg": None}),
        (H100_AWS, "broadcast", {"peak": None, "avg": None}),
    ],
)
def test_selection(facts, collective, expected):
    assert selected(facts, collective) == dict({"range": None}, **expected)


def test_inventory_overrides_win_and_can_disable():
    overrides = [
        dict(record(platform="aws"), id="mine", warn=380, **{"pass": 420}),
        dict(record(metric="avg", gpu_architecture="h100"), id="avg-off", disabled=True),
    ]
    for item in overrides:
        item.pop("source")
    chosen = th.select_thresholds(H100_AWS, "all_reduce", overrides=overrides)
    assert chosen["peak"]["id"] == "mine" and chosen["peak"]["origin"] == "inventory" and chosen["peak"]["source"] == "inventory"
    assert chosen["avg"] is None
    gcp = th.select_thresholds(
        dict(H100_AWS, platform="gcp"), "all_gather", overrides={"thresholds": [{"collective": "all_gather", "metric": "avg", "disabled": True}]}
    )
    assert gcp["avg"] is None and gcp["peak"]["id"] == "gcp-h100-all-gather-peak"


def test_overrides_and_thresholds_errors_name_the_field():
    with pytest.raises(ConfigError, match=r"^overrides.thresholds\[0\].metric: "):
        th.select_thresholds(H100_AWS, "all_reduce", overrides=[record(metric="p99")])
    with pytest.raises(ConfigError, match="^overrides: must be a list"):
        th.select_thresholds(H100_AWS, "all_reduce", overrides="pass: 1")
    with pytest.raises(ConfigError, match=r"^thresholds.thresholds: must be a list"):
        th.select_thresholds(H100_AWS, "all_reduce", thresholds={"thresholds": {}})


def test_custom_thresholds_document_replaces_the_collection():
    data = {
        "defaults": {"pass_ratio": 0.5, "source": {"pass_ratio": "test"}},
        "thresholds": [{"id": "x", "collective": "all_reduce", "expected": 300, "source": "test"}],
    }
    chosen = th.select_thresholds(H100_AWS, "all_reduce", thresholds=data)
    assert chosen["peak"]["id"] == "x" and chosen["peak"]["pass"] == 150.0 and chosen["peak"]["warn"] is None


# ------------------------------------------------------------------------------------------------ judging


def test_pass():
    result = nccl_judge.judge(
        {"result": parsed("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")},
        facts=H100_AWS,
        job={"outcome": "Complete"},
        judging={"collective": "all_reduce", "workload": "w"},
    )
    assert result["verdict"] == "pass" and result["workload"] == "w" and result["collective"] == "all_reduce"
    assert result["reason"] == (
        "TrainJob Complete; busbw 441.9 GB/s at 8G (out-of-place) meets aws-h100-all-reduce-peak (>= 270.0 GB/s, warn >= 250.0); "
        "busbw (in-place) meets aws-h100-all-reduce-sizes at all 4 sizes in 1G..16G (>= 250.0 GB/s) (lowest 440.9 GB/s at 1G)"
    )
    peak = [check for check in result["checks"] if check["name"] == "peak"][0]
    assert (peak["value"], peak["size"], peak["threshold"], peak["pass"], peak["warn"]) == (441.91, 8 << 30, "aws-h100-all-reduce-peak", 270.0, 250.0)
    assert result["thresholds"][0]["id"] == "aws-h100-all-reduce-peak" and "AICR" in result["thresholds"][0]["source"]["pass"]
    assert result["metrics"]["peak_busbw"] == 441.91 and result["metrics"]["nccl_version"] == "2.18.5"
    assert result["series"][-1] == [8 << 30, 441.91, 444.78]


@pytest.mark.parametrize(
    "limits, verdict, words",
    [
        ({"pass": 440, "warn": 400}, "pass", "meets"),
        ({"pass": 450, "warn": 400}, "warn", "is below 450.0 GB/s but above 400.0 GB/s, in the warning band of mine"),
        ({"pass": 500, "warn": 460}, "fail", "is below mine (>= 500.0 GB/s, warn >= 460.0)"),
        ({"pass": 500}, "fail", "is below mine (>= 500.0 GB/s)"),
    ],
)
def test_grades(limits, verdict, words):
    override = dict(record(id="mine"), **limits)
    result = nccl_judge.judge(
        {"result": parsed("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")}, facts=H100_AWS, judging={"collective": "all_reduce", "overrides": [override]}
    )
    assert result["verdict"] == verdict and words in result["reason"]


def test_avg_and_peak_both_judged():
    result = nccl_judge.judge({"result": parsed("v2.16-all-gather-2x8-h200-nccl2.27.log")}, facts=dict(H100_AWS, platform="gcp", gpu_architecture="h200"))
    assert result["verdict"] == "pass" and [check["name"] for check in result["checks"]] == ["peak", "avg"]
    assert result["reason"].endswith("average busbw 144.0 GB/s meets gcp-h200-all-gather-avg (>= 100.0 GB/s)")


def test_avg_sweep_must_match():
    result = parsed("v2.16-all-gather-2x8-h200-nccl2.27.log")
    result["config"]["min_bytes"] = 8
    verdict = nccl_judge.judge({"result": result}, facts=dict(H100_AWS, platform="gcp", gpu_architecture="h200"))
    assert verdict["verdict"] == "warn"
    assert "the run's sweep 8..8G differs from the 1K..8G that gcp-h200-all-gather-avg averages over: not comparable" in verdict["reason"]


def test_peak_below_min_size_is_not_comparable():
    result = nr.parse_nccl_output(fixture("v2.16-all-reduce-wrong.log").replace(" 12 FAILED", " 0 OK"))
    for row in result["rows"]:
        row["ip"]["wrong"] = 0
    result["wrong_total"], result["wrong_sizes"], result["warnings"] = 0, [], []
    result["failed_hosts"], result["errors"] = {}, []  # the fixture's IB completion error is a fault of its own
    verdict = nccl_judge.judge({"result": result}, facts=dict(H100_AWS, platform="azure"))
    assert verdict["verdict"] == "warn"
    assert verdict["reason"] == "largest size 1G is below the 8G that azure-h100-all-reduce-peak was measured at: not comparable"


def test_size_specific_threshold_reads_that_row():
    result = parsed("v2.16-all-reduce-2x8-h100.json")
    verdict = nccl_judge.judge({"result": result}, facts=dict(H100_AWS, gpu_architecture="b200"))
    peak = verdict["checks"][0]
    assert peak["size"] == 1 << 30 and peak["side"] == "in-place" and peak["value"] == result["rows"][0]["ip"]["busbw"]
    assert verdict["verdict"] == "warn" and "at 1G (in-place) is below 570.0 GB/s but above 300.0 GB/s, in the warning band" in verdict["reason"]
    truncated = copy.deepcopy(result)
    truncated["rows"] = truncated["rows"][1:]
    verdict = nccl_judge.judge({"result": truncated}, facts=dict(H100_AWS, gpu_architecture="b200"))
    assert verdict["verdict"] == "warn" and "busbw not measured at 1G (the run covers 2G..16G)" in verdict["reason"]


def test_both_sides_takes_the_lower():
    result = parsed("v2.16-two-tests-4x4-gb200.log", collective="all_reduce")
    facts = {"platform": "aws", "gpu_architecture": "gb200", "nodes": 2, "gpus_per_node": 4, "mnnvl": True}
    check = nccl_judge.judge({"result": result}, facts=facts)["checks"][0]
    row = [row for row in result["rows"] if row["size"] == 1 << 30][0]
    assert check["value"] == min(row["oop"]["busbw"], row["ip"]["busbw"]) and check["side"] == "lower of out-of-place and in-place"


# ------------------------------------------------------------------------------------------------ ranges of sizes


def with_row(result, size, busbw):
    """RESULT with the busbw of the row at SIZE (both sides) set to BUSBW."""
    result = copy.deepcopy(result)
    for row in result["rows"]:
        if row["size"] == size:
            row["oop"]["busbw"] = row["ip"]["busbw"] = busbw
    return result


@pytest.mark.parametrize(
    "values, message",
    [
        ({"sizes": {"min": "1G", "max": "16G"}, "pass": None}, r"^r: needs 'pass'"),
        ({"sizes": {"from": "1G"}}, r"^r.sizes: unknown key\(s\) from; allowed: max, min"),
        ({"sizes": {}}, r"^r.sizes: needs min and/or max"),
        ({"sizes": {"min": "8G", "max": "1G"}}, r"^r.sizes: max 1G is below min 8G"),
        ({"sizes": {"min": "huge"}}, r"^r.sizes.min: must be a size in bytes"),
        ({"sizes": []}, r"^r.sizes: must be a mapping \{min, max\}"),
        ({"sizes": ["1G"]}, r"^r.sizes\[0\]: must be a mapping with min and/or max"),
        ({"sizes": [{"min": "1G", "max": "4G", "pass": 3}, {"min": "2G", "pass": 2}]}, r"^r.sizes: ranges 1G..4G and 2G\+ overlap"),
        ({"sizes": [{"min": "1G", "warn": 3}], "pass": None}, r"^r.sizes\[0\]: has warn but no pass or expected of its own"),
        ({"sizes": [{"min": "1G", "colour": "red"}]}, r"^r.sizes\[0\]: unknown key\(s\) colour"),
        ({"sizes": [{"min": "1G", "pass": 5, "warn": 9}]}, r"^r.sizes\[0\].warn: 9.0 is above pass 5.0"),
        ({"sizes": [{"min": "1G"}], "pass": None}, r"^r.sizes\[0\]: needs pass \(GB/s\) or expected \(GB/s\): the record has none"),
        ({"sizes": {"min": "1G"}, "min_size": "1G"}, r"^r.min_size: is for metric peak or avg"),
        ({"metric": "range"}, r"^r.sizes: is required for metric range"),
        ({"metric": "peak", "sizes": {"min": "1G"}}, r"^r.sizes: is for metric range only \(metric is peak\)"),
    ],
)
def test_range_record_errors_name_the_field(values, message):
    values = dict(values)
    values.setdefault("metric", "range" if "sizes" in values else "peak")
    with pytest.raises(ConfigError, match=message):
        th.normalize_record(record(**values), "r")


def test_range_record_forms():
    one = th.normalize_record({"collective": "all_reduce", "sizes": {"min": "1G", "max": "16G"}, "pass": 300, "warn": 250}, "r", "inventory")
    assert one["metric"] == "range" and one["id"] == "inventory-*-*-all_reduce-range"
    assert [(item["min"], item["max"], item["pass"], item["warn"]) for item in one["ranges"]] == [(1 << 30, 16 << 30, 300.0, 250.0)]
    listed = th.normalize_record(
        {"collective": "all_reduce", "sizes": [{"min": "1G", "expected": 400}, {"max": "64M", "pass": 50}], "pass_ratio": 0.9}, "r", "inventory"
    )
    assert listed["pass"] is None and [(item["min"], item["max"], item["pass"], item["derived"]) for item in listed["ranges"]] == [
        (0, 64 << 20, 50.0, False),
        (1 << 30, None, 360.0, True),
    ]
    assert [th.range_label(item) for item in listed["ranges"]] == ["up to 64M", "1G+"]
    with pytest.raises(ConfigError, match=r"^r.sizes\[0\].source: is required"):
        th.normalize_record({"collective": "all_reduce", "sizes": [{"min": "1G", "pass": 1}], "source": {"sizes": "x"}}, "r")


def test_range_judges_every_row_and_names_each_size_that_fell_short():
    result = parsed("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")
    ranges = [{"min": "1M", "max": "64M", "pass": 100}, {"min": "1G", "pass": 450, "warn": 400}]
    verdict = nccl_judge.judge(
        {"result": result}, facts=H100_AWS, judging={"collective": "all_reduce", "overrides": [{"id": "mine", "collective": "all_reduce", "sizes": ranges}]}
    )
    check = [check for check in verdict["checks"] if check["name"] == "range"][0]
    assert verdict["verdict"] == "fail" and check["verdict"] == "fail"
    assert check["reason"] == (
        "busbw (out-of-place) below mine in 1M..64M (>= 100.0 GB/s) at 1M 46.5, 2M 83.8 GB/s; "
        "busbw (out-of-place) in the warning band of mine in 1G+ (>= 450.0 GB/s, warn >= 400.0) at 1G 441.2, 2G 443.5, 4G 441.8, 8G 441.9 GB/s"
    )
    judged = dict((row["size"], row["verdict"]) for row in check["rows"])
    assert judged[1 << 20] == "fail" and judged[4 << 20] == "pass" and judged[8 << 30] == "warn" and (128 << 20) not in judged
    # The check's value and pass are the lowest margin's (the fleet chart and the report's margin read them).
    assert (check["value"], check["size"], check["pass"]) == (46.5, 1 << 20, 100.0)
    assert verdict["thresholds"][-1]["ranges"][0]["label"] == "1M..64M"


def test_default_range_fails_a_dip_the_peak_does_not_see():
    result = with_row(parsed("v2.16-all-reduce-2x8-h100.json"), 2 << 30, 231.5)
    verdict = nccl_judge.judge({"result": result}, facts=H100_AWS, judging={"collective": "all_reduce"})
    peak, ranged = [check for check in verdict["checks"] if check["name"] in ("peak", "range")]
    assert peak["verdict"] == "pass" and ranged["verdict"] == "fail" and verdict["verdict"] == "fail"
    assert ranged["reason"] == "busbw (in-place) below aws-h100-all-reduce-sizes in 1G..16G (>= 250.0 GB/s) at 2G 231.5 GB/s"
    assert verdict["reason"] == ranged["reason"]


def test_range_without_rows_in_it_is_not_judged():
    result = parsed("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")
    only = [{"collective": "all_reduce", "sizes": {"min": "16G"}, "pass": 1000}]
    verdict = nccl_judge.judge({"result": result}, facts=H100_AWS, judging={"collective": "all_reduce", "overrides": only})
    check = [check for check in verdict["checks"] if check["name"] == "range"][0]
    assert check["verdict"] == "warn" and check["reason"] == "no size of the run (8..8G) lies in 16G+ of inventory-*-*-all_reduce-range: not judged"
    partly = [{"collective": "all_reduce", "sizes": [{"max": "1K", "pass": 0}, {"min": "16G", "pass": 1000}]}]
    check = [
        check
        for check in nccl_judge.judge({"result": result}, facts=H100_AWS, judging={"collective": "all_reduce", "overrides": partly})["checks"]
        if check["name"] == "range"
    ][0]
    assert check["verdict"] == "warn" and check["reason"] == "the run has no size in 16G+ of inventory-*-*-all_reduce-range: not judged there"
    off = nccl_judge.judge(
        {"result": result},
        facts=H100_AWS,
        judging={"collective": "all_reduce", "overrides": [{"collective": "all_reduce", "metric": "range", "sizes": {"min": "1G"}, "disabled": True}]},
    )
    assert "range" not in [check["name"] for check in off["checks"]]


def test_wrong_elements_fail():
    verdict = nccl_judge.judge({"result": parsed("v2.16-all-reduce-wrong.log")}, facts=H100_AWS, job={"outcome": "Complete"})
    assert verdict["verdict"] == "fail"
    assert "12 wrong elements (#wrong) at 256M, 512M" in verdict["reason"]


def test_out_of_bounds_without_rows_counts_fail():
    result = parsed("v2.16-all-reduce-2x8-h100.json")
    result["out_of_bounds"] = 3
    assert "3 out-of-bounds values reported by nccl-tests" in nccl_judge.judge({"result": result}, facts=H100_AWS)["reason"]


def test_min_bw_check_fails():
    verdict = nccl_judge.judge(
        {"result": parsed("v2.16-all-reduce-cputime-timestamps-minbw-failed.log")}, facts=dict(H100_AWS, gpu_architecture="gb200", gpus_per_node=4)
    )
    assert verdict["verdict"] == "fail" and "nccl-tests' own NCCL_TESTS_MIN_BW check failed (average 341.4 GB/s)" in verdict["reason"]


def test_no_threshold_uses_on_missing():
    facts = dict(H100_AWS, platform="togetherai")
    result = parsed("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")
    verdict = nccl_judge.judge({"result": result}, facts=facts, judging={"collective": "all_reduce"})
    assert verdict["verdict"] == "warn" and verdict["reason"] == "no threshold for togetherai/h100 all_reduce on 2 node(s) without MNNVL: busbw not judged"
    assert nccl_judge.judge({"result": result}, facts=facts, judging={"collective": "all_reduce", "on_missing": "pass"})["verdict"] == "pass"
    assert nccl_judge.judge({"result": result}, facts=facts, judging={"collective": "all_reduce", "on_missing": "fail"})["verdict"] == "fail"
    with pytest.raises(ConfigError, match="^on_missing: "):
        nccl_judge.judge({"result": result}, facts=facts, judging={"collective": "all_reduce", "on_missing": "ignore"})
    unnamed = nccl_judge.judge({"result": result}, facts=H100_AWS)
    assert unnamed["verdict"] == "warn" and "does not name its collective" in unnamed["reason"]


def test_incomplete_results():
    partial = parsed("v2.16-all-reduce-truncated-mid-row.log", allow_partial=True)
    alone = nccl_judge.judge({"result": partial}, facts=H100_AWS)
    # mpirun's 'process rank 11 ... on node ... exited on signal 9' names the host: evidence, so a failed run
    assert alone["verdict"] == "fail" and alone["reason"].startswith("the log names failing host(s) nccl-all-reduce-20261130t0800-node-0-1")
    assert "; no complete result: line 65: truncated" in alone["reason"]
    failed = nccl_judge.judge({"result": partial}, facts=H100_AWS, job={"outcome": "Failed", "reason": "JobFailed: launcher exited 137"})
    assert failed["verdict"] == "fail"
    assert failed["reason"].startswith("TrainJob Failed: JobFailed: launcher exited 137; ")
    assert "; no complete result: line 65" in failed["reason"]
    assert failed["problems"] and failed["series"]


@pytest.mark.parametrize(
    "outcome, output, verdict, reason",
    [
        ("Complete", None, "pass", "TrainJob Complete (no bandwidth to judge)"),
        ("Failed", None, "fail", "TrainJob Failed: exit 1"),
        ("Timeout", None, "error", "no result: the TrainJob did not finish in time: exit 1"),
        ("Unreachable", None, "error", "no result: the burn-in ended Unreachable: exit 1"),
        (None, None, "error", "no result and no job outcome to judge"),
    ],
)
def test_workloads_without_a_collective(outcome, output, verdict, reason):
    result = nccl_judge.judge(
        {"result": output}, facts={}, job={"outcome": outcome, "reason": "exit 1" if outcome != "Complete" else None}, judging={"collective": None}
    )
    assert (result["verdict"], result["reason"]) == (verdict, reason)


def test_parse_errors_are_error_verdicts_unless_the_job_failed():
    text = fixture("v2.16-all-reduce-init-failure.log")
    # 'Test NCCL failure' naming its host is evidence: a failed run, not an unjudged one (tests/fixtures/real/nccl)
    named = vd.verdict_for(text, facts=H100_AWS, judging={"collective": "all_reduce"})
    assert named["verdict"] == "fail" and "failing host(s) nccl-all-reduce-20261130t0815-node-0-1" in named["reason"]
    quiet = "\n".join(line for line in text.splitlines() if "failure" not in line and "WARN" not in line)
    result = vd.verdict_for(quiet, facts=H100_AWS, judging={"collective": "all_reduce"})
    assert result["verdict"] == "error" and result["reason"].startswith("no result: nccl-tests output: no result table found")
    failed = vd.verdict_for(text, facts=H100_AWS, job={"outcome": "Failed"}, judging={"collective": "all_reduce"})
    assert failed["verdict"] == "fail" and "Test NCCL failure" in failed["reason"]
    missing = vd.verdict_for(None, facts=H100_AWS, job={"outcome": "Complete"}, judging={"collective": "all_reduce"})
    assert missing["verdict"] == "error" and "no nccl-tests output to judge" in missing["reason"]


def test_a_timed_out_job_without_any_pod_log_is_unjudged_not_failed():
    # A fleet job that timed out before a pod ran (unschedulable, say) has no log: nothing to judge, so error, as a
    # timed-out job whose output is None; its logs only would make it a failure of the cluster's parts.
    for output in ([], None):
        result = vd.verdict_for(
            output, facts=H100_AWS, job={"outcome": "Timeout", "reason": "not finished in 3600 s", "pods": []}, judging={"collective": "all_reduce"}
        )
        assert result["verdict"] == "error", (output, result["reason"])
        assert result["reason"].startswith("no result: the TrainJob did not finish in time: not finished in 3600 s")
    failed = vd.verdict_for([], facts=H100_AWS, job={"outcome": "Failed", "reason": "BackoffLimitExceeded", "pods": []}, judging={"collective": "all_reduce"})
    assert failed["verdict"] == "fail" and failed["reason"].startswith("TrainJob Failed: BackoffLimitExceeded")


def test_bad_result_type():
    with pytest.raises(ConfigError, match="^result: must be a parsed nccl-tests result"):
        nccl_judge.judge({"result": "text"}, facts=H100_AWS)


@pytest.mark.parametrize("verdicts, worst", [([], "pass"), (["pass", "warn"], "warn"), (["fail", "warn"], "fail"), (["fail", "error", "pass"], "error")])
def test_worst(verdicts, worst):
    assert nccl_judge.worst(verdicts) == worst


# ------------------------------------------------------------------------------------------------ attribution

JOB = "nccl-all-reduce-20261130t0800"


def pod(name, node, phase, role="node", exit_code=None, reason=None, restarts=0, waiting=None, hostname=None, scheduled=True):
    state = {}
    if exit_code is not None:
        state = {"terminated": {"exitCode": exit_code, "reason": reason or ("Completed" if exit_code == 0 else "Error")}}
    elif waiting:
        state = {"waiting": {"reason": waiting, "message": "Back-off pulling image"}}
    elif phase == "Running":
        state = {"running": {"startedAt": "2026-11-30T08:00:00Z"}}
    status = {"phase": phase, "containerStatuses": [{"name": "node", "state": state, "restartCount": restarts}]}
    if restarts:
        status["containerStatuses"][0]["lastState"] = {"terminated": {"exitCode": 139, "reason": "Error"}}
    if not scheduled:
        status = {
            "phase": "Pending",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}
            ],
        }
    spec = {"hostname": hostname} if hostname else {}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "labels": {"jobset.sigs.k8s.io/replicatedjob-name": role}}, "spec": spec, "status": status}


def mpi_pods(worker1_exit=143, worker1_reason=None):
    return [
        pod("%s-launcher-0-0-q8x2z" % JOB, "gpu-node-a", "Succeeded", role="launcher", exit_code=0),
        pod("%s-node-0-0-7fk2m" % JOB, "gpu-node-a", "Failed", exit_code=143, hostname="%s-node-0-0" % JOB),
        pod("%s-node-0-1-x9d4c" % JOB, "gpu-node-b", "Failed", exit_code=worker1_exit, reason=worker1_reason, hostname="%s-node-0-1" % JOB),
    ]


def test_workers_stopped_at_the_end_of_a_complete_job_succeeded():
    result = at.attribute(mpi_pods(), job_outcome="Complete")
    assert result["nodes"] == ["gpu-node-a", "gpu-node-b"] and result["succeeded_nodes"] == ["gpu-node-a", "gpu-node-b"]
    assert result["failed_nodes"] == [] and len(result["succeeded_pods"]) == 3 and result["failed_pods"] == []


def test_oom_killed_worker_fails_its_node():
    result = at.attribute(mpi_pods(137, "OOMKilled"), job_outcome="Complete")
    assert result["failed_nodes"] == ["gpu-node-b"] and result["succeeded_nodes"] == ["gpu-node-a"]
    entry = [item for item in result["pods"] if item["node"] == "gpu-node-b"][0]
    assert entry["status"] == "failed" and entry["reasons"] == ["pod Failed", "container node exited 137 (OOMKilled)"]


def test_failed_job_and_log_evidence_name_the_failing_node():
    log = fixture("v2.16-all-reduce-truncated-mid-row.log")
    logs = [{"item": item, "log": log if "launcher" in item["metadata"]["name"] else "sshd started\n"} for item in mpi_pods()]
    result = at.attribute(mpi_pods(), pod_logs=logs, job_outcome="Failed")
    assert result["failed_nodes"] == ["gpu-node-a", "gpu-node-b"]  # both workers were killed by signal once the job failed
    entry = [item for item in result["pods"] if item["node"] == "gpu-node-b"][0]
    assert any(reason.startswith("log: mpirun noticed that process rank 11") for reason in entry["reasons"])


def test_log_evidence_of_a_test_failure_beats_a_clean_exit():
    pods = [
        pod("%s-launcher-0-0-q8x2z" % JOB, "gpu-node-a", "Failed", role="launcher", exit_code=1),
        pod("%s-node-0-0-7fk2m" % JOB, "gpu-node-a", "Running", hostname="%s-node-0-0" % JOB),
        pod("%s-node-0-1-x9d4c" % JOB, "gpu-node-b", "Running"),
    ]
    log = fixture("v2.16-all-reduce-init-failure.log").replace("20261130t0815", "20261130t0800")
    result = at.attribute(pods, pod_logs={pods[0]["metadata"]["name"]: log}, job_outcome="Failed")
    # The launcher's failure is the job's, not its node's: gpu-node-a's worker is only unknown.
    assert result["failed_nodes"] == ["gpu-node-b"]
    assert [item["status"] for item in result["pods"] if item["role"] == "launcher"] == ["failed"]
    worker_b = [item for item in result["pods"] if item["node"] == "gpu-node-b"][0]
    assert worker_b["warnings"] == 0 and worker_b["reasons"][0] == "still running when the TrainJob ended Failed"
    assert "Test NCCL failure common.cu:1279" in worker_b["reasons"][1]
    worker_a = [item for item in result["pods"] if item["name"].startswith(JOB + "-node-0-0")][0]
    assert worker_a["status"] == "unknown" and result["unknown_nodes"] == ["gpu-node-a"]


def test_warnings_fail_pods_only_when_the_job_failed():
    pods = [
        pod("%s-launcher-0-0-q8x2z" % JOB, "gpu-node-a", "Succeeded", role="launcher", exit_code=0),
        pod("%s-node-0-1-x9d4c" % JOB, "gpu-node-b", "Running"),
    ]
    # a WARN that is no fault (tests/fixtures/real/nccl/nccl2.9.6-broadcast-socket-warn-libibverbs.log): it fails its pod only when the job failed
    result_text = fixture("v2.16-all-reduce-wrong.log").replace("20261130t0730", "20261130t0800")
    result_text = re.sub(r"transport/net_ib.cc:1698 NCCL WARN .*", "misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]", result_text)
    parsed_result = nr.parse_nccl_output(result_text)
    logs = {pods[0]["metadata"]["name"]: result_text}
    ok = at.attribute(pods, logs, parsed_result, job_outcome="Complete")
    assert ok["failed_nodes"] == [] and [item["warnings"] for item in ok["pods"]] == [1, 0]
    bad = at.attribute(pods, logs, parsed_result, job_outcome="Failed")
    assert bad["failed_nodes"] == ["gpu-node-b"]
    assert bad["pods"][1]["reasons"][-1].startswith("NCCL warning while the job failed: %s-node-0-1:94:106 [5]" % JOB)


def test_pending_restarted_and_unscheduled_pods():
    pods = [
        pod("p-launcher-0-0-aaaaa", "n1", "Running", role="launcher"),
        pod("p-node-0-0-bbbbb", "n1", "Running", restarts=2),
        pod("p-node-0-1-ccccc", "n2", "Pending", waiting="ImagePullBackOff"),
        pod("p-node-0-2-ddddd", None, "Pending", scheduled=False),
    ]
    running = at.attribute(pods)
    assert [item["status"] for item in running["pods"]] == ["running", "failed", "failed", "pending"]
    assert running["pods"][1]["reasons"] == ["container node restarted 2 time(s), last exit 139 (Error)"]
    assert running["pods"][2]["reasons"][0] == "container node waiting: ImagePullBackOff - Back-off pulling image"
    assert running["unscheduled_pods"] == ["p-node-0-2-ddddd"] and running["failed_nodes"] == ["n1", "n2"]
    ended = at.attribute(pods, job_outcome="Timeout")
    assert ended["pods"][3]["status"] == "failed"
    assert ended["pods"][3]["reasons"] == ["never scheduled: Unschedulable - 0/4 nodes are available: 4 Insufficient nvidia.com/gpu."]


def test_pod_for_host():
    pods = mpi_pods()
    assert at.pod_for_host(pods, JOB + "-node-0-1") == JOB + "-node-0-1-x9d4c"
    assert at.pod_for_host(pods, JOB + "-node-0-1.%s.burnin.svc" % JOB) == JOB + "-node-0-1-x9d4c"
    assert at.pod_for_host(pods, JOB + "-launcher-0-0") == JOB + "-launcher-0-0-q8x2z"
    assert at.pod_for_host(pods, JOB + "-node-0") is None and at.pod_for_host(pods, "elsewhere") is None


@pytest.mark.parametrize(
    "pods, pod_logs, message",
    [
        ("pods", None, "^pods: must be the pod list"),
        ([], "log", "^pod_logs: must be the results"),
        ([], [5], r"^pod_logs\[0\]: must be a k8s_log result"),
        ([], [{"log": "x"}], r"^pod_logs\[0\]: names no pod"),
    ],
)
def test_attribution_input_errors(pods, pod_logs, message):
    with pytest.raises(ConfigError, match=message):
        at.attribute(pods, pod_logs)


def test_k8s_info_result_and_unreadable_logs():
    info = {"resources": mpi_pods()}
    logs = {"results": [{"item": info["resources"][0], "failed": True, "msg": "container not found"}]}
    result = at.attribute(info, logs, job_outcome="Complete")
    assert result["pods"][0]["log_error"] == "container not found" and result["failed_nodes"] == []


# ------------------------------------------------------------------------------------------------ one call


def test_verdict_for_pod_logs_finds_the_launcher_output():
    pods = mpi_pods()
    text = fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")
    logs = [{"item": item, "log": text if "launcher" in item["metadata"]["name"] else "Server listening on 0.0.0.0 port 2222.\n"} for item in pods]
    result = vd.verdict_for(
        logs, facts=H100_AWS, job={"outcome": "Complete", "pods": pods}, judging={"collective": "all_reduce", "workload": "nccl-all-reduce"}
    )
    assert result["verdict"] == "pass" and result["output_pod"] == pods[0]["metadata"]["name"]
    assert result["succeeded_nodes"] == ["gpu-node-a", "gpu-node-b"] and result["failed_nodes"] == []
    assert result["attribution"]["hosts"] == ["nccl-all-reduce-20261130t0700-node-0-0", "nccl-all-reduce-20261130t0700-node-0-1"]


def test_verdict_for_without_any_output_in_the_logs():
    pods = mpi_pods()
    logs = [{"item": item, "log": "nothing\n"} for item in pods]
    result = vd.verdict_for(logs, facts=H100_AWS, job={"outcome": "Failed", "pods": pods}, judging={"collective": "all_reduce"})
    assert result["verdict"] == "fail" and "no pod log holds nccl-tests output" in result["reason"]


def test_verdict_for_a_torch_workload_ignores_nccl_lines_in_its_logs():
    pods = mpi_pods()
    logs = [{"item": item, "log": "%s:1:1 [0] NCCL INFO NCCL version 2.27.7+cuda12.9\n" % JOB} for item in pods]
    result = vd.verdict_for(logs, facts={}, job={"outcome": "Complete", "pods": pods}, judging={"collective": None, "workload": "torch-smoke"})
    assert result["verdict"] == "pass" and result["output_pod"] is None and result["reason"] == "TrainJob Complete (no bandwidth to judge)"
    died = vd.verdict_for(logs, facts=H100_AWS, job={"outcome": "Failed", "pods": pods}, judging={"collective": "all_reduce"})
    assert died["verdict"] == "fail" and died["output_pod"] == pods[0]["metadata"]["name"] and "no result table found" in died["reason"]


def test_verdict_for_two_tests_needs_the_collective():
    text = fixture("v2.16-two-tests-4x4-gb200.log")
    result = vd.verdict_for(text, facts={"platform": "oci", "gpu_architecture": "gb200", "nodes": 4, "gpus_per_node": 4, "mnnvl": True})
    assert result["verdict"] == "error" and "the output holds 2 tests" in result["reason"]
    chosen = vd.verdict_for(
        text, facts={"platform": "oci", "gpu_architecture": "gb200", "nodes": 4, "gpus_per_node": 4, "mnnvl": True}, judging={"collective": "all_reduce"}
    )
    assert chosen["verdict"] == "pass" and chosen["metrics"]["peak_busbw"] == 810.13


def test_verdict_for_a_parsed_result_and_find_nccl_output():
    result = parsed("v2.16-all-reduce-2x8-h100.json")
    assert vd.verdict_for(result, facts=H100_AWS)["verdict"] == "pass"
    assert at.find_nccl_output({"a-node-0-0-x": "sshd", "b": None}) == (None, None)
    assert at.find_nccl_output({"w": "# Avg bus bandwidth : 1", "l-launcher-0-0-x": "#  size  count"}) == ("w", "# Avg bus bandwidth : 1")


def deleted(one):
    one["metadata"]["deletionTimestamp"] = "2026-11-30T08:05:00Z"
    return one


def test_workers_their_controller_deleted_after_another_failure_are_not_blamed():
    # The launcher failed; JobSet deleted the workers, SIGKILL at the end of their grace period (exit 137).
    pods = [
        pod("%s-launcher-0-0-q8x2z" % JOB, "cpu-node", "Failed", role="launcher", exit_code=1),
        deleted(pod("%s-node-0-0-7fk2m" % JOB, "gpu-node-a", "Failed", exit_code=137)),
        pod("%s-node-0-1-x9d4c" % JOB, "gpu-node-b", "Failed", exit_code=137),
    ]
    out = at.attribute(pods, job_outcome="Failed")
    by_name = dict((entry["name"], entry) for entry in out["pods"])
    assert by_name[pods[1]["metadata"]["name"]]["status"] == "stopped"
    assert "deleted while running" in by_name[pods[1]["metadata"]["name"]]["note"]
    # Not deleted: killed by something else, its node is blamed.
    assert out["failed_nodes"] == ["gpu-node-b"] and out["unknown_nodes"] == ["gpu-node-a"]


def test_a_deleted_pod_that_ran_out_of_memory_is_still_blamed():
    pods = [deleted(pod("%s-node-0-0-7fk2m" % JOB, "gpu-node-a", "Failed", exit_code=137, reason="OOMKilled"))]
    assert at.attribute(pods, job_outcome="Failed")["failed_nodes"] == ["gpu-node-a"]


# What the mutation run of judging/attribution.py (docs/mutation.md) found untested.


def from_the_api(pods):
    """PODS as the API server's JSON gives them: every string a new object, not the test's interned literals."""
    import json

    return json.loads(json.dumps(pods))


def test_an_oom_killed_worker_read_from_json_still_fails_its_node():
    result = at.attribute(from_the_api(mpi_pods(137, "OOMKilled")), job_outcome="Complete")
    assert result["failed_nodes"] == ["gpu-node-b"], result
    entry = [item for item in result["pods"] if item["node"] == "gpu-node-b"][0]
    assert entry["reasons"] == ["pod Failed", "container node exited 137 (OOMKilled)"]


def test_a_node_is_succeeded_by_its_own_pods_only():
    pods = [pod("%s-node-0-0-7fk2m" % JOB, "gpu-node-a", "Running"), pod("%s-node-0-1-x9d4c" % JOB, "gpu-node-b", "Succeeded", exit_code=0)]
    result = at.attribute(pods, job_outcome=None)
    assert result["succeeded_nodes"] == ["gpu-node-b"] and result["failed_nodes"] == [], result


def test_a_log_hostname_with_a_domain_finds_its_pod():
    pods = [pod("%s-node-0-1-x9d4c" % JOB, "gpu-node-b", "Running", hostname="%s-node-0-1.%s" % (JOB, JOB))]
    assert at.pod_for_host(pods, "%s-node-0-1" % JOB) == "%s-node-0-1-x9d4c" % JOB
    assert at.pod_for_host(pods, "%s-node-0-1.%s.burnin.svc" % (JOB, JOB)) == "%s-node-0-1-x9d4c" % JOB
    assert at.pod_for_host(pods, JOB) is None


def test_an_initializer_pod_is_not_taken_for_the_launcher():
    table = fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")
    pods = [
        pod("%s-dataset-initializer-0-0-a1b2c" % JOB, "gpu-node-a", "Succeeded", role="dataset-initializer", exit_code=0),
        pod("%s-node-0-0-7fk2m" % JOB, "gpu-node-a", "Succeeded", exit_code=0),
    ]
    logs = [{"item": item, "log": table} for item in pods]
    # two logs with the table: neither is a launcher, so the name decides (the later one sorts first)
    assert at.find_nccl_output(logs, pods)[0] == "%s-node-0-0-7fk2m" % JOB


def test_a_worker_whose_container_ended_0_but_oom_killed_is_no_clean_stop_also_read_from_json():
    # The kubelet can report reason OOMKilled with exit code 0 (the OOM killer hit a child process, the main process
    # still exited 0): such a Failed pod did not stop cleanly at the end of its job, read from the API's JSON too.
    pods = from_the_api(mpi_pods(0, "OOMKilled"))
    result = at.attribute(pods, job_outcome="Complete")
    assert result["failed_nodes"] == ["gpu-node-b"] and result["succeeded_nodes"] == ["gpu-node-a"], result
    entry = [item for item in result["pods"] if item["node"] == "gpu-node-b"][0]
    assert entry["status"] == "failed" and entry["reasons"] == ["pod Failed"], entry


# What the mutation run of judging/verdict.py (docs/mutation.md) found untested.

REAL = os.path.join(os.path.dirname(FIXTURES), "..", "..", "fixtures", "real", "nccl")


def real(name):
    with open(os.path.join(REAL, name)) as handle:
        return handle.read()


def test_the_failing_hosts_are_named_up_to_eight():
    # tests/fixtures/real/nccl/ib-completion-error-4-three-hosts.log's fault line, on 8 and on 9 hosts.
    fault = [line for line in real("ib-completion-error-4-three-hosts.log").splitlines() if "NCCL WARN NET/IB : Got completion" in line][0]
    fault = fault.split(" ", 1)[1]
    table = fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")
    for count, tail in ((8, "H100-7: "), (9, "H100-7, ...: ")):
        text = table + "".join("H100-%d:9821:9920 %s\n" % (index, fault) for index in range(count))
        check = [item for item in vd.verdict_for(text)["checks"] if item["name"] == "errors"][0]
        assert check["reason"].startswith("the log names failing host(s) H100-0, H100-1, H100-2, H100-3, H100-4, H100-5, H100-6, " + tail), check


def test_output_that_is_no_nccl_tests_output_is_an_error_naming_why():
    # No pod log at all is no output (test_a_timed_out_job_without_any_pod_log_is_unjudged_not_failed).
    assert vd.verdict_for([])["reason"] == "no result and no job outcome to judge"
    assert vd.verdict_for([], judging={"collective": "all_reduce"})["reason"] == "no result: no nccl-tests output to judge"
    assert vd.verdict_for(["a log line"])["reason"].startswith("no result: nccl-tests output: no result table found in 1 lines")
    assert vd.verdict_for({"foo": 1})["reason"].startswith("no result: nccl-tests output (JSON): no 'results' list")
    with pytest.raises(ConfigError, match=r"^result: must be a parsed nccl-tests result \(gpufleet.burnin.nccl_results\), got str$"):
        nccl_judge.judge({"result": "all_reduce"})
    with pytest.raises(ConfigError, match=r"^output: must be the pods' logs .* or a log text, got int$"):
        dcgm.dcgm_verdict(5)


def test_a_parsed_result_has_no_log_to_prove_its_transport():
    text = fixture("v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")
    assert [check["name"] for check in vd.verdict_for(nr.parse_nccl_output(text))["checks"]] == ["threshold"]
    assert [check["name"] for check in vd.verdict_for(text)["checks"]] == ["threshold", "transport"]


def test_pod_logs_given_as_the_output_are_the_pod_logs():
    logs = [
        {"item": item, "log": fixture("v2.16-all-reduce-truncated-mid-row.log") if "launcher" in item["metadata"]["name"] else "sshd started\n"}
        for item in mpi_pods()
    ]
    alone = vd.verdict_for(logs, job={"outcome": "Failed", "pods": mpi_pods()})
    both = vd.verdict_for(logs, job={"outcome": "Failed", "pods": mpi_pods(), "pod_logs": logs})
    assert alone["attribution"] == both["attribution"] and alone["notes"] == both["notes"]
    entry = [item for item in alone["attribution"]["pods"] if item["node"] == "gpu-node-b"][0]
    assert any(reason.startswith("log: mpirun noticed that process rank 11") for reason in entry["reasons"]), entry
    # Without the pod list the logs still give the attribution, and a log read in part its note.
    logs[0]["cut"] = {"kept": 4096, "size": 9000, "max_bytes": 4096, "lines_dropped": 7}
    no_pods = vd.verdict_for(logs, job={"outcome": "Failed"})
    assert "attribution" in no_pods and no_pods["notes"][-1:] == at.cut_notes(logs) and len(at.cut_notes(logs)) == 1, no_pods["notes"]


def test_a_dcgm_verdict_keeps_its_facts():
    facts = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2}
    assert dcgm.dcgm_verdict(None, facts=facts)["facts"] == facts


def test_the_wrong_sizes_are_named_up_to_six():
    result = parsed("v2.16-all-reduce-wrong.log")
    check = [item for item in nccl_judge.judge({"result": result}, facts=H100_AWS)["checks"] if item["name"] == "wrong"][0]
    assert check["reason"] == "12 wrong elements (#wrong) at 256M, 512M"
    result["wrong_sizes"] = [1 << power for power in range(20, 27)]
    check = [item for item in nccl_judge.judge({"result": result}, facts=H100_AWS)["checks"] if item["name"] == "wrong"][0]
    assert check["reason"] == "12 wrong elements (#wrong) at 1M, 2M, 4M, 8M, 16M, 32M, ..."
    result["wrong_sizes"] = result["wrong_sizes"][:6]
    assert [item for item in nccl_judge.judge({"result": result}, facts=H100_AWS)["checks"] if item["name"] == "wrong"][0]["reason"].endswith(
        "at 1M, 2M, 4M, 8M, 16M, 32M"
    )


def test_the_errors_check_quotes_the_first_failing_host_by_name():
    # ib-completion-error-4-three-hosts.log: H100-1 and H100-5 name different peers; H100-1's line is quoted.
    check = [
        item for item in vd.verdict_for(real("ib-completion-error-4-three-hosts.log"), judging={"allow_partial": True})["checks"] if item["name"] == "errors"
    ][0]
    assert check["hosts"] == ["H100-1", "H100-5"] and "H100-1:9821:9920 [1] transport/net_ib.cc:1295" in check["reason"], check["reason"]
    assert "fe80::966d:ae03:8b:df50" in check["reason"] and "9c:f5f8" not in check["reason"]
