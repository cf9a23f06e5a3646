# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Values exactly at the limits of plugins/module_utils/validation/validate.py and one step beyond: integer ranges,
the maximum length of each grammar, the cut of a shown value, the env list's length, the depth and size of a
structured input. Written for the mutants of `make mutate` (docs/mutation.md): a `<=` turned into `<` fails here."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import validate as v


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


@pytest.mark.parametrize("grammar, char", [("dns_label", "a"), ("dns_subdomain", "a"), ("label_value", "a"), ("env_name", "A")])
def test_a_grammar_takes_exactly_its_maximum_length(grammar, char):
    maximum = v.GRAMMARS[grammar][1]
    assert v.check_grammar("f", char * maximum, grammar) == char * maximum
    with pytest.raises(ConfigError, match=r"^f: must be .*, at most %d characters, got a string" % maximum):
        v.check_grammar("f", char * (maximum + 1), grammar)


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
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("max_depth", [1, 2, 5, v.STRUCTURE_MAX_DEPTH])
def test_a_structure_may_nest_exactly_max_depth_levels(max_depth):
    assert v.check_structure("p", nested(max_depth), max_depth=max_depth) == nested(max_depth)
    with pytest.raises(ConfigError, match="^p: nests deeper than %d levels; at most %d allowed$" % (max_depth, max_depth)):
        v.check_structure("p", nested(max_depth + 1), max_depth=max_depth)


def test_an_alias_reached_again_deeper_down_counts_by_its_height():
    inner = nested(3)
    # inner is first met at depth 2 (height 3: fits 4), then again at depth 3 under the second list: 5 levels
    value = [inner, [inner]]
    assert v.check_structure("p", [inner], max_depth=4)
    with pytest.raises(ConfigError, match="^p: nests deeper than 4 levels"):
        v.check_structure("p", [value], max_depth=4)


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
