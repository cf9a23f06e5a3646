# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Values exactly at the limits of plugins/module_utils/validate.py and one step beyond: integer ranges,
the maximum length of each grammar, the cut of a shown value, the env list's length, the depth and size of a
structured input. Written for the mutants of `make mutate` (docs/mutation.md): a `<=` turned into `<` fails here."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils import validate as v


@pytest.mark.parametrize("low, high", [(0, v.INT32_MAX), (1, v.NODES_MAX), (1, v.PER_NODE_MAX), (0, v.TIMEOUT_MAX)])
def test_an_integer_range_includes_both_ends(low, high):
    assert v.check_int("f", low, low, high) == low and v.check_int("f", high, low, high) == high
    for value in (low - 1, high + 1):
        with pytest.raises(ConfigError, match=r"^f: must be an integer from %d to %d, got an integer %d$" % (low, high, value)):
            v.check_int("f", value, low, high)


def test_optional_int_none_and_bounds():
    assert v.check_optional_int("f", None) is None and v.check_optional_int("f", 0) == 0
    with pytest.raises(ConfigError, match="^f: must be an integer from 0 to"):
        v.check_optional_int("f", -1)


# The maximum lengths as literals (a test reading GRAMMARS would move with a typo in it): Kubernetes' DNS-1123 label
# and subdomain (63, 253), label values (63), resource names (a subdomain's 253); kind 63; the env name, path and
# image bounds (4096) are this collection's sanity bounds.
@pytest.mark.parametrize(
    "grammar, value, maximum",
    [
        ("dns_label", "a", 63),
        ("dns_subdomain", "a", 253),
        ("label_value", "a", 63),
        ("resource_name", "a", 253),
        ("kind", "A", 63),
        ("env_name", "A", 4096),
        ("image", "a", 4096),
    ],
)
def test_a_grammar_takes_exactly_its_maximum_length(grammar, value, maximum):
    assert v.check_grammar("f", value * maximum, grammar) == value * maximum
    with pytest.raises(ConfigError, match=r"^f: must be .*, at most %d characters, got a string" % maximum):
        v.check_grammar("f", value * (maximum + 1), grammar)


def test_an_empty_value_only_where_allowed():
    assert v.check_grammar("f", "", "dns_label", allow_empty=True) == ""
    with pytest.raises(ConfigError, match="^f: must be a DNS-1123 label"):
        v.check_grammar("f", "", "dns_label")
    assert v.check_str("f", "", allow_empty=True) == ""
    with pytest.raises(ConfigError, match=r'^f: must be a non-empty string, got a string ""$'):
        v.check_str("f", "")
    assert v.check_choice("f", None, ("a",), allow_empty=True) is None
    with pytest.raises(ConfigError, match="^f: must be one of a, b, got null null$"):
        v.check_choice("f", None, ("a", "b"))


def test_a_shown_value_is_cut_after_120_characters():
    # json.dumps adds the two quotes: 118 letters are 120 characters, shown whole; 119 are cut to 117 and "..."
    assert v.describe("x" * 118) == '"%s"' % ("x" * 118)
    assert v.describe("x" * 119) == '"' + "x" * 116 + "..."
    assert len(v.describe(list(range(1000)))) == 120


def test_the_env_list_takes_exactly_env_max_entries():
    env = [{"name": "V%d" % index, "value": "x"} for index in range(v.ENV_MAX + 1)]
    assert v.check_env("env", env[: v.ENV_MAX]) == env[: v.ENV_MAX]
    with pytest.raises(ConfigError, match="^env: has %d entries; at most %d allowed$" % (v.ENV_MAX + 1, v.ENV_MAX)):
        v.check_env("env", env)


def nested(depth):
    """A list nested DEPTH levels deep ([[...]] with DEPTH brackets)."""
    value = []
    for _level in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("max_depth", [1, 2, 5, v.STRUCTURE_MAX_DEPTH])
def test_a_structure_may_nest_exactly_max_depth_levels(max_depth):
    assert v.check_structure("p", nested(max_depth), max_depth=max_depth) == nested(max_depth)
    with pytest.raises(ConfigError, match="^p: nests deeper than %d levels; at most %d allowed$" % (max_depth, max_depth)):
        v.check_structure("p", nested(max_depth + 1), max_depth=max_depth)


def test_an_alias_reached_again_deeper_down_counts_by_its_height():
    inner = nested(3)
    # The walk (last child first) meets inner at depth 2 (levels 2-4: fits 4), then [inner] at depth 2, whose inner
    # is already counted: only its height (3, plus [inner], plus the top list: 5) shows it is 5 levels deep.
    assert v.check_structure("p", [inner, inner], max_depth=4)
    with pytest.raises(ConfigError, match="^p: nests deeper than 4 levels; at most 4 allowed$"):
        v.check_structure("p", [[inner], inner], max_depth=4)


def test_the_limits_are_the_documented_numbers():
    # pinned as literals: a test against v.INT32_MAX would move with a typo in the constant
    assert v.check_int("f", 2147483647) == 2147483647 and v.check_int("t", 604800, 0, v.TIMEOUT_MAX) == 604800
    for field, value, high in (("f", 2147483648, v.INT32_MAX), ("t", 604801, v.TIMEOUT_MAX)):
        with pytest.raises(ConfigError, match="^%s: must be an integer from 0 to" % field):
            v.check_int(field, value, 0, high)
    # DNS-1123 label: 63 characters (Kubernetes' apimachinery validation)
    assert v.check_grammar("n", "a" * 63, "dns_label")
    with pytest.raises(ConfigError, match="^n: must be a DNS-1123 label"):
        v.check_grammar("n", "a" * 64, "dns_label")


@pytest.mark.parametrize(
    "value, total",
    [
        ([], 1),
        ([1, 2, 3], 4),
        ({"a": 1}, 3),  # the mapping, its key and its value
        ([[1, 2], [3]], 6),
    ],
)
def test_a_structure_may_hold_exactly_max_values(value, total):
    assert v.check_structure("p", value, max_values=total) == value
    with pytest.raises(ConfigError, match="^p: holds more than %d values" % (total - 1)):
        v.check_structure("p", value, max_values=total - 1)


def test_aliases_count_as_expanded():
    shared = [1, 2, 3]  # 4 values
    value = [shared, shared, shared]  # 1 + 3 x 4 = 13 once expanded
    assert v.check_structure("p", value, max_values=13)
    with pytest.raises(ConfigError, match="^p: holds more than 12 values"):
        v.check_structure("p", value, max_values=12)


# --- what the first mutation run of validate.py found untested (docs/mutation.md) -----------------------
def test_a_structure_error_does_not_show_the_value():
    with pytest.raises(ConfigError, match=r"^p: holds more than 3 values \(YAML aliases counted as expanded\); at most 3 allowed$"):
        v.check_structure("p", [1, 2, 3], max_values=3)


def test_a_list_is_required_unless_none_is_allowed():
    assert v.check_list("f", None, allow_none=True) == []
    with pytest.raises(ConfigError, match="^f: must be a list, got null null$"):
        v.check_list("f", None)


OBJECT = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "burnin"}}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"apiVersion": "v 1"}, r"^objects\[0\].apiVersion: must be "),
        ({"metadata": {"name": "cm", "namespace": "Bad_NS"}}, r"^objects\[0\].metadata.namespace: must be a DNS-1123 label"),
        (
            {"kind": "Namespace", "metadata": {"name": "ns", "namespace": "burnin"}},
            r"^objects\[0\].metadata.namespace: must be absent: Namespace is not namespaced",
        ),
        ({"data": "text"}, r'^objects\[0\].data: must be a mapping, got a string "text"$'),
    ],
)
def test_object_errors_name_the_field(change, message):
    with pytest.raises(ConfigError, match=message):
        v.check_object("objects[0]", dict(OBJECT, **change))


def test_a_negative_quantity_is_refused():
    assert v.check_resources("r", {"limits": {"cpu": 0}})
    with pytest.raises(ConfigError, match=r"^r.limits.cpu: must be a quantity \(a string such as 2Gi or an integer >= 0\), got an integer -1$"):
        v.check_resources("r", {"limits": {"cpu": -1}})


def test_a_mount_path_with_a_colon_is_refused():
    assert v.check_volume_mounts("m", [{"name": "data", "mountPath": "/data"}])
    with pytest.raises(ConfigError, match=r'^m\[0\].mountPath: must be a path without \':\', got a string "/a:b"$'):
        v.check_volume_mounts("m", [{"name": "data", "mountPath": "/a:b"}])


def test_a_bad_command_word_names_its_container():
    with pytest.raises(ConfigError, match=r"^c\[0\].args\[1\]: must be a string, got null null$"):
        v.check_containers("c", [{"name": "main", "image": "nccl:1", "args": ["-b", None]}])


def test_more_limits_as_literals():
    # DNS-1123 subdomain: 253 characters; a structure: 32 levels by default
    assert v.check_grammar("n", ".".join(["a" * 63] * 3) + "." + "a" * 61, "dns_subdomain")
    with pytest.raises(ConfigError, match="^n: must be a DNS-1123 subdomain"):
        v.check_grammar("n", ".".join(["a" * 63] * 3) + "." + "a" * 62, "dns_subdomain")
    assert v.check_structure("p", nested(32)) == nested(32)
    with pytest.raises(ConfigError, match="^p: nests deeper than 32 levels"):
        v.check_structure("p", nested(33))


def test_a_shown_mapping_has_its_keys_sorted():
    assert v.describe({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'


@pytest.mark.parametrize(
    "change, message",
    [
        ({"metadata": ["cm"]}, r"^objects\[0\].metadata: must be a mapping"),
        ({"metadata": {"name": "cm", "annotations": {"a b": "x"}}}, r"^objects\[0\].metadata.annotations\[a b\]: must be a qualified name"),
    ],
)
def test_metadata_errors_name_the_field(change, message):
    with pytest.raises(ConfigError, match=message):
        v.check_object("objects[0]", dict(OBJECT, **change))


def test_requests_are_checked_when_limits_are_null():
    with pytest.raises(ConfigError, match=r"^r.requests.cpu: must be a quantity"):
        v.check_resources("r", {"limits": None, "requests": {"cpu": -1}})


def test_the_empty_json_pointer_is_the_whole_document():
    # RFC 6901: "" points at the whole document (as a survey answer parsed from JSON)
    operations = json.loads('[{"op": "replace", "path": "", "value": {}}]')
    assert v.check_json_patch("patch", operations) == operations
    with pytest.raises(ConfigError, match=r"^patch\[0\].path: must be a JSON Pointer: empty or starting with '/'"):
        v.check_json_patch("patch", [{"op": "remove", "path": "a"}])


def test_the_default_integer_range_starts_at_zero():
    assert v.check_int("f", 0) == 0
    with pytest.raises(ConfigError, match="^f: must be an integer from 0 to 2147483647, got an integer -1$"):
        v.check_int("f", -1)


def test_a_containers_volume_mounts_are_checked():
    with pytest.raises(ConfigError, match=r"^c\[0\].volumeMounts\[0\].mountPath: must be a path without ':'"):
        v.check_containers("c", [{"name": "main", "image": "nccl:1", "volumeMounts": [{"name": "data", "mountPath": "/a:b"}]}])
