# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Values exactly at a boundary of a threshold comparison (judging/thresholds.py and the grading of
judging/nccl_judge.py): busbw exactly at pass and at warn, a row exactly at a range's bounds or at a record's min_size,
a node count exactly at a record's bounds, numbers exactly at the limits the data checks. Each case sits on the edge
and one step beside it, so that `>=` turned into `>` (or `<` into `<=`) fails a test; the mutants these tests were
written for are listed in docs/mutation.md.

The busbw figures are those of a published nccl-tests output (tests/unit/fixtures/nccl/README.md): 2 x 8 H100,
out-of-place busbw 441.24 GB/s at 1G and 441.91 GB/s at 8G, average 148.968 GB/s.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results as nr
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import thresholds as th
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_judge

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "nccl")
H100_AWS = {"platform": "aws", "gpu_architecture": "h100", "nodes": 2, "gpus_per_node": 8, "mnnvl": False}
G = 1 << 30


def tagged():
    with open(os.path.join(FIXTURES, "v2.13-all-reduce-2x8-h100-nccl2.18-tagged.log")) as handle:
        return nr.parse_nccl_output(handle.read())


def check(name, **record):
    """The NAME check of the published run judged by one inventory record (id mine)."""
    override = dict({"id": "mine", "collective": "all_reduce", "source": "test"}, **record)
    result = nccl_judge.judge({"result": tagged()}, facts=H100_AWS, judging={"collective": "all_reduce", "overrides": [override]})
    return [item for item in result["checks"] if item["name"] == name and item["threshold"] == "mine"][0]


def test_the_figures_the_edges_are_taken_from():
    result = tagged()
    rows = dict((row["size"], row["oop"]["busbw"]) for row in result["rows"])
    assert (rows[G], rows[8 * G], max(rows), result["avg_busbw"]) == (441.24, 441.91, 8 * G, 148.968)


# --- pass / warn / fail edges ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "limits, verdict",
    [
        ({"pass": 441.91, "warn": 400}, "pass"),  # exactly at pass
        ({"pass": 441.92, "warn": 400}, "warn"),  # 0.01 below pass
        ({"pass": 450, "warn": 441.91}, "warn"),  # exactly at warn
        ({"pass": 450, "warn": 441.92}, "fail"),  # 0.01 below warn
        ({"pass": 441.92}, "fail"),  # no warning band: below pass fails
        ({"pass": 0}, "pass"),  # pass 0 is allowed and always met
    ],
)
def test_peak_edges(limits, verdict):
    got = check("peak", metric="peak", **limits)
    assert got["verdict"] == verdict and got["value"] == 441.91 and got["size"] == 8 * G


@pytest.mark.parametrize(
    "limits, verdict",
    [
        ({"pass": 148.968}, "pass"),
        ({"pass": 148.969, "warn": 148.968}, "warn"),
        ({"pass": 149, "warn": 148.969}, "fail"),
    ],
)
def test_avg_edges(limits, verdict):
    got = check("avg", metric="avg", **limits)
    assert got["verdict"] == verdict and got["value"] == 148.968


@pytest.mark.parametrize(
    "limits, verdict",
    [
        ({"pass": 441.24}, "pass"),
        ({"pass": 441.25, "warn": 441.24}, "warn"),
        ({"pass": 441.25, "warn": 441.2401}, "fail"),
    ],
)
def test_range_edges(limits, verdict):
    # one range that holds the 1G row only: min and max are both exactly that row's size
    got = check("range", sizes={"min": "1G", "max": "1G"}, **limits)
    assert got["verdict"] == verdict and [(row["size"], row["value"]) for row in got["rows"]] == [(G, 441.24)]


@pytest.mark.parametrize(
    "sizes, judged",
    [
        ({"min": "1G", "max": "8G"}, [G, 2 * G, 4 * G, 8 * G]),  # both bounds inside
        ({"min": G + 1, "max": 8 * G - 1}, [2 * G, 4 * G]),  # one byte inside each bound: the edge rows are out
        ({"min": "8G"}, [8 * G]),
        ({"max": "1K"}, [8, 16, 32, 64, 128, 256, 512, 1024]),
    ],
)
def test_range_bounds_are_inclusive(sizes, judged):
    got = check("range", sizes=sizes, **{"pass": 1})
    assert [row["size"] for row in got["rows"]] == judged


def test_peak_at_exactly_min_size_is_judged():
    assert check("peak", metric="peak", min_size="8G", **{"pass": 400})["verdict"] == "pass"
    below = check("peak", metric="peak", min_size=8 * G + 1, **{"pass": 400})
    assert below["verdict"] == "warn" and "is below the 8G" in below["reason"]


def test_peak_at_a_size_reads_exactly_that_row():
    got = check("peak", metric="peak", size="1G", **{"pass": 441.24})
    assert (got["verdict"], got["size"], got["value"]) == ("pass", G, 441.24)
    missing = check("peak", metric="peak", size=G + 1, **{"pass": 1})
    assert missing["verdict"] == "warn" and missing["value"] is None and "not measured at" in missing["reason"]


# --- selection by node count --------------------------------------------------------------------------------------
@pytest.mark.parametrize("nodes, chosen", [(1, False), (2, True), (4, True), (5, False)])
def test_a_node_range_includes_both_ends(nodes, chosen):
    override = {"id": "mine", "collective": "all_reduce", "metric": "peak", "nodes": "2-4", "pass": 1, "source": "test"}
    got = th.select_thresholds(dict(H100_AWS, nodes=nodes), "all_reduce", overrides=[override])["peak"]
    assert (got is not None and got["id"] == "mine") is chosen


@pytest.mark.parametrize("nodes, chosen", [(2, False), (3, True), (300, True)])
def test_an_open_node_range_starts_at_its_minimum(nodes, chosen):
    override = {"id": "mine", "collective": "all_reduce", "metric": "peak", "nodes": "3+", "pass": 1, "source": "test"}
    got = th.select_thresholds(dict(H100_AWS, nodes=nodes), "all_reduce", overrides=[override])["peak"]
    assert (got is not None and got["id"] == "mine") is chosen


def test_the_exact_node_count_beats_a_range_and_the_narrower_range_the_wider():
    records = [
        {"id": "wide", "collective": "all_reduce", "metric": "peak", "nodes": "2-10", "pass": 1},
        {"id": "narrow", "collective": "all_reduce", "metric": "peak", "nodes": "2-3", "pass": 1},
        {"id": "exact", "collective": "all_reduce", "metric": "peak", "nodes": 2, "pass": 1},
    ]
    for given, expected in ((records, "exact"), (records[:2], "narrow"), (records[:2][::-1], "narrow"), (records[:1], "wide")):
        assert th.select_thresholds(H100_AWS, "all_reduce", overrides=given)["peak"]["id"] == expected


# --- the limits of the data ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, span", [({"min": 1}, (1, None)), ({"min": 3, "max": 3}, (3, 3)), ("3-3", (3, 3)), (1, (1, 1))])
def test_node_bounds_at_their_limits_are_accepted(value, span):
    assert th.parse_nodes(value) == span


@pytest.mark.parametrize("value", [{"min": 0}, {"min": 3, "max": 2}, "3-2", 0])
def test_node_bounds_one_beyond_their_limits_are_refused(value):
    with pytest.raises(ConfigError, match="^nodes: must be a range of node counts >= 1 with min <= max"):
        th.parse_nodes(value)


def normalized(**values):
    return th.normalize_record(dict({"collective": "all_reduce", "metric": "peak"}, **values), "r", "inventory")


def test_warn_equal_to_pass_is_allowed_and_above_it_refused():
    got = normalized(**{"pass": 300, "warn": 300})
    assert (got["pass"], got["warn"]) == (300.0, 300.0)
    with pytest.raises(ConfigError, match=r"^r.warn: 300.01 is above pass 300.0"):
        normalized(**{"pass": 300, "warn": 300.01})


def test_zero_is_a_number_and_below_zero_is_not():
    assert normalized(**{"pass": 0})["pass"] == 0.0
    with pytest.raises(ConfigError, match=r"^r.pass: must be a number >= 0"):
        normalized(**{"pass": -0.01})


def test_gpus_per_node_one_is_allowed_and_zero_refused():
    assert normalized(gpus_per_node=1, **{"pass": 1})["gpus_per_node"] == 1
    with pytest.raises(ConfigError, match=r"^r.gpus_per_node: must be an integer >= 1, got 0"):
        normalized(gpus_per_node=0, **{"pass": 1})


def test_expected_times_ratio_is_rounded_to_two_decimals():
    got = normalized(expected=443.7, pass_ratio=0.61, warn_ratio=0.5634)
    # 443.7 x 0.61 = 270.657, 443.7 x 0.5634 = 249.98058
    assert (got["pass"], got["warn"], got["expected"], got["derived"]) == (270.66, 249.98, 443.7, True)


def ranges(*items):
    return normalized(metric="range", sizes=list(items))["ranges"]


def test_ranges_that_share_a_size_overlap_and_ranges_one_byte_apart_do_not():
    with pytest.raises(ConfigError, match=r"^r.sizes: ranges up to 1G and 1G\+ overlap"):
        ranges({"max": "1G", "pass": 1}, {"min": "1G", "pass": 2})
    got = ranges({"min": G + 1, "pass": 2}, {"max": "1G", "pass": 1})
    assert [(item["min"], item["max"], item["pass"]) for item in got] == [(0, G, 1.0), (G + 1, None, 2.0)]


def test_a_range_of_one_size_is_allowed_and_max_below_min_refused():
    assert [(item["min"], item["max"]) for item in ranges({"min": "1G", "max": "1G", "pass": 1})] == [(G, G)]
    with pytest.raises(ConfigError, match=r"^r.sizes\[0\]: max 1G is below min 1G"):
        ranges({"min": G + 1, "max": "1G", "pass": 1})


# --- what the first mutation run of judging/thresholds.py found untested (docs/mutation.md) -------------------------
@pytest.mark.parametrize("span, label", [((1, None), "any"), ((2, None), "2+"), ((3, 3), "3"), ((2, 18), "2-18"), ((1, 1), "1")])
def test_nodes_label(span, label):
    assert th.nodes_label(span) == label


def peak_record(record_id, **values):
    return dict({"id": record_id, "collective": "all_reduce", "metric": "peak", "pass": 1}, **values)


@pytest.mark.parametrize(
    "first, second, winner",
    [
        # an open range is the least specific: a bounded one of any width wins over it
        ({"nodes": "2-1000"}, {"nodes": "2+"}, 0),
        ({"nodes": "1-200000"}, {"nodes": "2+"}, 0),
        # of two bounded ranges the narrower wins (3-5: width 2; 2-6: width 4)
        ({"nodes": "2-6"}, {"nodes": "3-5"}, 1),
        # platform and GPU given (2 keys) beat one GPU-shape key, even when that one is an exact node count
        ({"platform": "aws", "gpu_architecture": "h100"}, {"gpus_per_node": 8, "nodes": 4}, 0),
    ],
)
def test_specificity_decides_between_two_matching_records(first, second, winner):
    records = [peak_record("first", **first), peak_record("second", **second)]
    for order in (records, records[::-1]):
        chosen = th.select_thresholds(dict(H100_AWS, nodes=4), "all_reduce", overrides=order)["peak"]
        assert chosen["id"] == ("first", "second")[winner], order


def test_gpus_per_node_is_compared_by_value():
    # ints built at run time (as from JSON) are distinct objects above 256: `is not` would miss the match
    count = int("1000")
    record = peak_record("wide", gpus_per_node=int("1000"))
    assert th.select_thresholds(dict(H100_AWS, gpus_per_node=count), "all_reduce", overrides=[record])["peak"]["id"] == "wide"
    assert th.select_thresholds(dict(H100_AWS, gpus_per_node=999), "all_reduce", overrides=[record])["peak"] is None


@pytest.mark.parametrize(
    "values, message",
    [
        ({"collective": 5}, r"^r.collective: is required"),
        ({"pass": "300"}, r"^r.pass: must be a number >= 0 \(GB/s or a ratio\), got '300'$"),
        ({"sweep": {}}, r"^r.sweep: must be a mapping with min and/or max sizes, got \{\}$"),
    ],
)
def test_record_type_errors_name_the_field(values, message):
    with pytest.raises(ConfigError, match=message):
        th.normalize_record(dict({"collective": "all_reduce", "metric": "peak", "pass": 1}, **values), "r", "inventory")


def test_a_thresholds_document_must_be_a_mapping():
    with pytest.raises(ConfigError, match=r"^thresholds: must be a mapping with a 'thresholds' list, got 'list'$"):
        th.validate_thresholds([])


def test_a_list_of_ranges_with_their_own_numbers_is_not_derived():
    got = normalized(metric="range", sizes=[{"max": "1G", "pass": 1}])
    assert (got["pass"], got["warn"], got["expected"], got["derived"]) == (None, None, None, False)


def test_only_collection_defaults_need_sources():
    document = {"defaults": {"pass_ratio": 0.9}, "thresholds": [{"collective": "all_reduce", "expected": 100, "source": "test"}]}
    assert th.validate_thresholds(document, origin="inventory")[0]["pass"] == 90.0
    with pytest.raises(ConfigError, match=r"^thresholds.defaults.source: is required"):
        th.validate_thresholds(document)


def test_a_record_for_any_node_count_matches_facts_without_nodes():
    record = peak_record("any")
    facts = dict(H100_AWS)
    del facts["nodes"]
    assert th.select_thresholds(facts, "all_reduce", overrides=[record])["peak"]["id"] == "any"
    # a record that names a node count needs the facts' count
    assert th.select_thresholds(facts, "all_reduce", overrides=[peak_record("two", nodes=2)])["peak"] is None


def test_nodes_label_compares_counts_by_value():
    assert th.nodes_label((int("1000"), int("1000"))) == "1000"


def test_defaults_must_be_a_mapping():
    with pytest.raises(ConfigError, match=r"^thresholds.defaults: must be a mapping$"):
        th.validate_thresholds({"defaults": [0.9], "thresholds": []})


@pytest.mark.parametrize("facts_gpus, chosen", [(8, True), (4, False), (16, False), (None, False)])
def test_gpus_per_node_must_be_equal(facts_gpus, chosen):
    facts = dict(H100_AWS, gpus_per_node=facts_gpus)
    got = th.select_thresholds(facts, "all_reduce", overrides=[peak_record("eight", gpus_per_node=8)])["peak"]
    assert (got is not None and got["id"] == "eight") is chosen


def test_a_record_at_a_size_beats_the_same_record_without_one():
    records = [peak_record("largest"), peak_record("at-1g", size="1G")]
    for order in (records, records[::-1]):
        assert th.select_thresholds(H100_AWS, "all_reduce", overrides=order)["peak"]["id"] == "at-1g"


def test_an_id_must_be_a_string():
    with pytest.raises(ConfigError, match=r"^r.id: must be a string, got 5$"):
        normalized(id=5, **{"pass": 1})


def test_the_range_checks_value_is_the_row_of_the_lowest_margin_also_beside_a_range_of_pass_0():
    # A row of a pass-0 range has no margin, its busbw stands for it: the 1G row's margin over 400, (441.24 - 400) / 400
    # = 0.10, is lower than the 16K row's 0.8 GB/s.
    got = check("range", sizes=[{"min": "16K", "max": "16K", "pass": 0}, {"min": "1G", "max": "1G", "pass": 400}])
    assert (got["size"], got["value"], got["pass"]) == (G, 441.24, 400), got
    assert nccl_judge._gb(1000) == "1000" and nccl_judge._gb(999.94) == "999.9" and nccl_judge._gb(None) == "n/a"  # pylint: disable=protected-access


def test_a_peak_below_its_min_size_reports_the_busbw_it_had():
    below = check("peak", metric="peak", min_size=8 * G + 1, **{"pass": 400})
    assert (below["verdict"], below["size"], below["value"]) == ("warn", 8 * G, 441.91), below


def test_without_the_parameters_line_an_average_compares_the_sweep_of_its_rows():
    # The run's 8..8G sweep read from its first and last rows when the "# nThread ... minBytes" line was cut off.
    result = tagged()
    result["config"] = {}

    def avg(sweep):
        override = {"id": "mine", "collective": "all_reduce", "source": "test", "metric": "avg", "pass": 100, "sweep": sweep}
        return [
            item
            for item in nccl_judge.judge({"result": result}, facts=H100_AWS, judging={"collective": "all_reduce", "overrides": [override]})["checks"]
            if item["name"] == "avg"
        ][0]

    assert avg({"min": 8, "max": "8G"})["verdict"] == "pass"
    assert "the run's sweep 8..8G differs from the 16..8G" in avg({"min": 16, "max": "8G"})["reason"]


def test_a_range_the_run_lacks_does_not_stop_the_ranges_after_it():
    # The run's rows start at 8 bytes: a range of 2 to 4 bytes has none, the 1G range after it is judged all the same.
    got = check("range", sizes=[{"min": 2, "max": 4, "pass": 1}, {"min": "1G", "max": "1G", "pass": 400}])
    assert [(row["size"], row["verdict"]) for row in got["rows"]] == [(G, "pass")] and got["verdict"] == "warn", got
    assert "the run has no size in 2..4 of mine: not judged there" in got["reason"], got["reason"]


def test_one_nics_share_divides_every_figure_and_says_so_in_its_id():
    (peak,) = th.validate_thresholds({"thresholds": [{"id": "p", "collective": "all_reduce", "pass": 400, "warn": 360, "source": "s"}]}, origin="inventory")
    share = th.nic_share(peak, 8)
    assert (share["pass"], share["warn"], share["id"]) == (50.0, 45.0, "p (one NIC of 8)") and peak["pass"] == 400
    (ranged,) = th.validate_thresholds(
        {"thresholds": [{"id": "r", "collective": "all_reduce", "sizes": [{"min": "1G", "max": "2G", "pass": 100, "warn": 80}], "source": "s"}]},
        origin="inventory",
    )
    assert [(item["pass"], item["warn"]) for item in th.nic_share(ranged, 4)["ranges"]] == [(25.0, 20.0)]
    assert th.nic_share(peak, 1) is peak and th.nic_share(None, 4) is None
    with pytest.raises(ConfigError, match="one_nic_of"):
        th.nic_share(peak, 0)
