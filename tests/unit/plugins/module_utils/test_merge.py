# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.merge import apply_json_patch, check_when, matches_when, merge_named, merge_objects

FACTS = {"platform": "aws", "gpuArchitecture": "gb200", "framework": "mpi"}


@pytest.mark.parametrize(
    "when, expected",
    [
        ({}, True),
        (None, True),
        ({"platform": {"equals": "aws"}}, True),
        ({"platform": {"equals": "AWS"}}, False),  # case-sensitive (ADR-012)
        ({"gpuArchitecture": {"in": ["gb200", "gb300"]}}, True),
        ({"gpuArchitecture": {"in": ["h100"]}}, False),
        ({"gpuArchitecture": {"notIn": ["gb200"]}}, False),
        ({"gpuArchitecture": {"notIn": ["h100"]}}, True),
        ({"platform": {"equals": "aws"}, "gpuArchitecture": {"equals": "h100"}}, False),
        ({"gpuArchitecture": {"in": ["gb200"], "notIn": ["gb200"]}}, False),
        ({"framework": {"equals": "torch"}}, False),
        ({"framework": {"in": ["mpi", "exec"]}}, True),
        ({"workloadKind": "TrainJob"}, True),
        ({"workloadKind": "Job"}, False),
    ],
)
def test_matches_when(when, expected):
    assert matches_when(when, FACTS) is expected


@pytest.mark.parametrize(
    "when, instance_type, expected",
    [
        ({"instanceType": {"equals": "p5.48xlarge"}}, "p5.48xlarge", True),
        ({"instanceType": {"equals": "p5.48xlarge"}}, "p5en.48xlarge", False),
        ({"instanceType": {"in": ["p5.48xlarge", "p5e.48xlarge"]}}, "p5e.48xlarge", True),
        ({"instanceType": {"notIn": ["p5.48xlarge"]}}, "p5en.48xlarge", True),
        ({"instanceType": {"notIn": ["p5.48xlarge"]}}, "p5.48xlarge", False),
        # an entry with instanceType never matches when the instance type is unknown, not even notIn
        ({"instanceType": {"equals": "p5.48xlarge"}}, None, False),
        ({"instanceType": {"notIn": ["p5.48xlarge"]}}, None, False),
        ({"instanceType": {"notIn": ["p5.48xlarge"]}}, "", False),
        ({"platform": {"equals": "aws"}}, None, True),
        ({"platform": {"equals": "aws"}, "instanceType": {"in": ["P5.48XLARGE"]}}, "p5.48xlarge", False),  # case-sensitive
    ],
)
def test_matches_instance_type(when, instance_type, expected):
    assert matches_when(when, dict(FACTS, instanceType=instance_type)) is expected


def test_malformed_instance_type_condition_is_an_error_even_when_unknown():
    with pytest.raises(ConfigError, match="when.instanceType"):
        matches_when({"instanceType": {"is": "p5.48xlarge"}}, FACTS)
    with pytest.raises(ConfigError, match="when.instanceType"):
        matches_when({"instanceType": "p5.48xlarge"}, dict(FACTS, instanceType="p5.48xlarge"))


def test_unsupported_condition_is_named():
    with pytest.raises(ConfigError, match="expression"):
        matches_when({"expression": "true"}, FACTS)
    with pytest.raises(ConfigError, match="when.platform"):
        matches_when({"platform": {"eq": "aws"}}, FACTS)


def test_merge_maps_named_lists_and_replaced_lists():
    base = {
        "spec": {
            "containers": [{"name": "node", "image": "a", "args": ["1", "2"], "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}],
            "tolerations": [{"key": "x"}],
        }
    }
    patch = {
        "spec": {
            "containers": [
                {"name": "node", "args": ["3"], "env": [{"name": "B", "value": "9"}, {"name": "C", "value": "3"}]},
                {"name": "sidecar", "image": "s"},
            ],
            "tolerations": [{"key": "y"}],
            "new": {"k": 1},
        }
    }
    merged = merge_named(base, patch)
    node = merged["spec"]["containers"][0]
    assert node["image"] == "a" and node["args"] == ["3"]
    assert node["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "9"}, {"name": "C", "value": "3"}]
    assert merged["spec"]["containers"][1] == {"name": "sidecar", "image": "s"}
    assert merged["spec"]["tolerations"] == [{"key": "y"}]
    assert merged["spec"]["new"] == {"k": 1}
    assert base["spec"]["containers"][0]["args"] == ["1", "2"]  # inputs untouched


def test_null_in_a_patch_deletes_the_key():
    # RFC 7386: the platform layer takes seed values back this way (e.g. GKE A4X Max has no multi-networking).
    base = {
        "metadata": {"annotations": {"a": "1", "b": "2"}},
        "containers": [{"name": "node", "resources": {"limits": {"nvidia.com/gpu": "4", "x/rdma-0": "1"}}}],
    }
    patch = {
        "metadata": {"annotations": {"a": None, "missing": None}},
        "containers": [{"name": "node", "resources": {"limits": {"x/rdma-0": None}, "claims": [{"name": "rdma"}]}}],
        "fresh": {"keep": 1, "drop": None},
    }
    merged = merge_named(base, patch)
    assert merged["metadata"] == {"annotations": {"b": "2"}}
    assert merged["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "4"}, "claims": [{"name": "rdma"}]}
    assert merged["fresh"] == {"keep": 1}
    assert base["metadata"]["annotations"] == {"a": "1", "b": "2"}  # inputs untouched
    # the first object of a key is kept without its nulls too
    (only,) = merge_objects([{"apiVersion": "v", "kind": "K", "metadata": {"name": "n", "labels": None}, "spec": {"a": None, "b": 1}}])
    assert only == {"apiVersion": "v", "kind": "K", "metadata": {"name": "n"}, "spec": {"b": 1}}


def test_json_patch_after_merge_and_errors():
    doc = {"spec": {"trainer": {"args": ["a"]}}}
    patched = apply_json_patch(doc, [{"op": "add", "path": "/spec/trainer/args/-", "value": "b"}])
    assert patched == {"spec": {"trainer": {"args": ["a", "b"]}}} and doc == {"spec": {"trainer": {"args": ["a"]}}}
    with pytest.raises(ConfigError, match="jobTemplatePatch"):
        apply_json_patch(doc, [{"op": "test", "path": "/spec/trainer/args/0", "value": "z"}])


def test_merge_objects_by_api_kind_name():
    a = {"apiVersion": "v", "kind": "K", "metadata": {"name": "r"}, "spec": {"x": [{"name": "c", "v": 1}]}}
    b = {"apiVersion": "v", "kind": "Other", "metadata": {"name": "r"}}
    c = {"apiVersion": "v", "kind": "K", "metadata": {"name": "r"}, "spec": {"x": [{"name": "d"}]}}
    merged = merge_objects([a, b, c])
    assert [o["kind"] for o in merged] == ["K", "Other"]
    assert merged[0]["spec"]["x"] == [{"name": "c", "v": 1}, {"name": "d"}]


def test_a_map_patch_onto_null_drops_its_nulls():
    # Found by the long fuzz profile: resources {limits: null} then AWS's "efa_per_node 0 takes back the request"
    # (limits: {vpc.amazonaws.com/efa: null}) rendered `vpc.amazonaws.com/efa: null`, which the CRD refuses.
    assert merge_named({"limits": None}, {"limits": {"vpc.amazonaws.com/efa": None, "cpu": "1"}}) == {"limits": {"cpu": "1"}}
    assert merge_named({"limits": "x"}, {"limits": {"a": {"b": None}}}) == {"limits": {"a": {}}}


# What the mutation run of rendering/merge.py (docs/mutation.md) found untested: each malformed condition's error
# under its own field, the conditions that ask nothing (an empty equals, in or notIn), an unknown fact other than the
# instance type, the workload kind's default, and the lists that are not merged by name.


@pytest.mark.parametrize(
    "when, field, message",
    [
        ("aws", "o.when", "must be a mapping of conditions (platform, gpuArchitecture, instanceType, framework, workloadKind), got 'aws'"),
        (
            {"zz": 1, "aa": 2, "platform": {}},
            "o.when",
            "unsupported condition(s) aa, zz; supported: platform, gpuArchitecture, instanceType, framework, workloadKind",
        ),
        ({"workloadKind": 1}, "o.when.workloadKind", "must be a string such as TrainJob, got 1"),
        # a good workloadKind first does not end the check of the conditions after it
        ({"workloadKind": "TrainJob", "platform": "aws"}, "o.when.platform", "must be a mapping with keys from equals, in, notIn, got 'aws'"),
        ({"platform": "aws"}, "o.when.platform", "must be a mapping with keys from equals, in, notIn, got 'aws'"),
        ({"platform": {"equals": 1}}, "o.when.platform.equals", "must be a string, got 1"),
        ({"platform": {"in": "aws"}}, "o.when.platform.in", "must be a list of strings such as [aws, gcp], got 'aws'"),
        ({"platform": {"in": ["aws", 1]}}, "o.when.platform.in", "must be a list of strings such as [aws, gcp], got ['aws', 1]"),
        ({"platform": {"notIn": "aws"}}, "o.when.platform.notIn", "must be a list of strings such as [aws, gcp], got 'aws'"),
        ({"gpuArchitecture": {"in": ["h100"], "notIn": [None]}}, "o.when.gpuArchitecture.notIn", "must be a list of strings such as [aws, gcp], got [None]"),
    ],
)
def test_a_malformed_condition_is_refused_under_its_own_field(when, field, message):
    with pytest.raises(ConfigError) as raised:
        check_when(when, "o.when")
    assert raised.value.field == field
    assert str(raised.value) == "%s: %s" % (field, message)


@pytest.mark.parametrize(
    "when",
    [
        {"platform": {"equals": None, "in": None, "notIn": None}, "workloadKind": None},
        {"platform": {"equals": "", "in": [], "notIn": []}, "workloadKind": ""},
        {"platform": {"equals": "aws", "in": [], "notIn": ["gcp"]}, "workloadKind": "TrainJob"},
    ],
)
def test_a_condition_that_asks_nothing_matches_and_is_no_error(when):
    assert check_when(when) is when
    assert matches_when(when, FACTS) is True


@pytest.mark.parametrize(
    "when, expected",
    [
        # only the instance type is an optional fact; another unknown fact is just a value none of equals or in names
        ({"platform": {"notIn": ["aws"]}}, True),
        ({"platform": {"in": ["aws"]}}, False),
        ({"platform": {"equals": "aws"}}, False),
        ({"framework": {"notIn": ["mpi"]}}, True),
    ],
)
def test_an_unknown_fact_other_than_the_instance_type_is_compared_as_it_is(when, expected):
    assert matches_when(when, {"gpuArchitecture": "gb200"}) is expected


@pytest.mark.parametrize(
    "kind, wanted, expected", [(None, "TrainJob", True), (None, "JobSet", False), ("JobSet", "JobSet", True), ("JobSet", "TrainJob", False)]
)
def test_the_workload_kind_is_trainjob_unless_the_facts_say_otherwise(kind, wanted, expected):
    facts = dict(FACTS, workloadKind=kind) if kind else dict(FACTS)
    assert matches_when({"workloadKind": wanted}, facts) is expected


@pytest.mark.parametrize(
    "base, patch, merged",
    [
        # an empty list names nothing: it replaces the list, it is not merged into it
        ([{"name": "a", "v": 1}], [], []),
        ([], [{"name": "a"}], [{"name": "a"}]),
        # one item without a name: the whole list is replaced
        ([{"name": "a", "v": 1}], [{"name": "a", "w": 2}, {"v": 3}], [{"name": "a", "w": 2}, {"v": 3}]),
        ([{"name": "a", "v": 1}, "x"], [{"name": "a", "w": 2}], [{"name": "a", "w": 2}]),
        # named lists: an item of the same name merges in place, a new name goes last
        (
            [{"name": "a", "v": 1}, {"name": "b", "v": 2}],
            [{"name": "b", "v": 3}, {"name": "c"}, {"name": "a", "w": 4}],
            [{"name": "a", "v": 1, "w": 4}, {"name": "b", "v": 3}, {"name": "c"}],
        ),
        # a patch item named twice: the second merges into the first one added
        ([{"name": "a", "v": 1}], [{"name": "c", "v": 1}, {"name": "c", "w": 2}], [{"name": "a", "v": 1}, {"name": "c", "v": 1, "w": 2}]),
        # a scalar or a list onto a map replaces it
        ({"a": 1}, 5, 5),
        ({"a": 1}, [1], [1]),
    ],
)
def test_which_lists_merge_by_name(base, patch, merged):
    assert merge_named(base, patch) == merged


def test_the_merge_result_shares_nothing_with_the_patch():
    patch = {"spec": {"args": ["a"], "containers": [{"name": "n", "env": [{"name": "A"}]}]}}
    merged = merge_named({"spec": {"containers": [{"name": "m"}]}}, patch)
    merged["spec"]["args"].append("b")
    merged["spec"]["containers"][1]["env"].append({"name": "B"})
    assert patch == {"spec": {"args": ["a"], "containers": [{"name": "n", "env": [{"name": "A"}]}]}}
    first = {"apiVersion": "v", "kind": "K", "metadata": {"name": "r"}, "spec": {"x": [1]}}
    (only,) = merge_objects([first])
    only["spec"]["x"].append(2)
    assert first["spec"]["x"] == [1]


def test_objects_without_metadata_share_a_key_by_api_and_kind():
    a = {"apiVersion": "v", "kind": "K", "spec": {"a": 1}}
    b = {"apiVersion": "v", "kind": "K", "metadata": None, "spec": {"b": 2}}
    c = {"apiVersion": "v2", "kind": "K", "spec": {"c": 3}}
    assert merge_objects([a, b, c]) == [{"apiVersion": "v", "kind": "K", "spec": {"a": 1, "b": 2}}, c]


@pytest.mark.parametrize(
    "operations, why",
    [
        ("x", "Document is expected to be sequence of operations"),
        ([{"op": "add"}], "Operation must have a 'path' member"),
        ([{"op": "remove", "path": "/nope"}], "can't remove a non-existent object 'nope'"),
    ],
)
def test_a_json_patch_that_cannot_apply_is_an_error_of_its_field(operations, why):
    with pytest.raises(ConfigError) as raised:
        apply_json_patch({"a": 1}, operations, "o.jobTemplatePatch")
    assert raised.value.field == "o.jobTemplatePatch"
    # the library's own words after ours (their exact text is jsonpatch's)
    assert str(raised.value).startswith("o.jobTemplatePatch: cannot apply JSON Patch: ") and why in str(raised.value)


def test_conditions_and_facts_read_from_yaml_or_json_match_as_literals_do():
    # the overrides and the facts reach the module as new strings (keys and values), not this file's literals
    when = json.loads('{"platform": {"equals": "aws"}, "gpuArchitecture": {"in": ["gb200"]}, "workloadKind": "TrainJob"}')
    facts = json.loads('{"platform": "aws", "gpuArchitecture": "gb200", "framework": "mpi", "workloadKind": "TrainJob"}')
    assert check_when(when) is when
    assert matches_when(when, facts) is True
    assert matches_when(when, dict(facts, platform="gcp")) is False


def test_objects_of_one_kind_with_other_names_stay_apart():
    a = {"apiVersion": "v", "kind": "K", "metadata": {"name": "r1"}, "spec": {"a": 1}}
    b = {"apiVersion": "v", "kind": "K", "metadata": {"name": "r2"}, "spec": {"b": 2}}
    assert merge_objects([a, b]) == [a, b]
