# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.nccl_env import base_nccl_env, merge_env, to_mpi_args

BASE_NAMES = [
    "NCCL_DEBUG",
    "NCCL_DEBUG_SUBSYS",
    "NCCL_NVLS_ENABLE",
    "NCCL_CUMEM_ENABLE",
    "NCCL_NET_GDR_C2C",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_P2P_NET_CHUNKSIZE",
    "NCCL_SHM_DISABLE",
    "NCCL_MNNVL_ENABLE",
    "NCCL_SOCKET_IFNAME",
]


def test_base_env_has_the_ten_original_variables_in_order():
    env = base_nccl_env(False)
    assert [item["name"] for item in env] == BASE_NAMES
    assert [item["value"] for item in env] == ["INFO", "NET,INIT", "1", "1", "1", "PHB", "2097152", "1", "0", "eth0"]
    assert all(set(item) == {"name", "value"} and isinstance(item["value"], str) for item in env)


@pytest.mark.parametrize("enable, value", [(True, "1"), (False, "0")])
def test_base_env_mnnvl_toggle(enable, value):
    assert {item["name"]: item["value"] for item in base_nccl_env(enable)}["NCCL_MNNVL_ENABLE"] == value


def test_base_env_rejects_non_bool():
    with pytest.raises(ConfigError, match="enable_mnnvl"):
        base_nccl_env("yes")


def test_merge_empty_user_returns_base_itself():
    base = base_nccl_env(False)
    assert merge_env(base, []) is base
    assert merge_env(base, None) is base


def test_merge_documented_worked_example():
    user = [{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "FOO", "value": "1"}, {"name": "FOO", "value": "2"}]
    merged = merge_env(base_nccl_env(False), user)
    assert [item["name"] for item in merged] == BASE_NAMES[1:] + ["NCCL_DEBUG", "FOO", "FOO"]
    assert merged[-3:] == user


def test_merge_all_overridden_equals_user():
    base = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    user = [{"name": "B", "value": "x"}, {"name": "A", "value": "y"}]
    assert merge_env(base, user) == user


def test_merge_is_case_sensitive_and_keeps_value_from():
    base = [{"name": "nccl_debug", "value": "INFO"}]
    user = [{"name": "NCCL_DEBUG", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]
    assert merge_env(base, user) == base + user


def test_merge_duplicate_base_names_kept_or_dropped_together():
    base = [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}, {"name": "B", "value": "3"}]
    assert merge_env(base, [{"name": "C", "value": "4"}])[:2] == base[:2]
    assert merge_env(base, [{"name": "A", "value": "9"}]) == [base[2], {"name": "A", "value": "9"}]


def test_merge_rejects_items_without_name():
    with pytest.raises(ConfigError, match=r"user\[1\]"):
        merge_env([], [{"name": "A", "value": "1"}, {"value": "2"}])


def test_to_mpi_args_pairs_and_quotes_nothing():
    assert to_mpi_args([{"name": "A", "value": "x y"}, {"name": "B", "value": 3}]) == ["-x", "A=x y", "-x", "B=3"]


def test_to_mpi_args_refuses_value_from():
    with pytest.raises(ConfigError, match="valueFrom"):
        to_mpi_args([{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}])


# What the mutation run of rendering/nccl_env.py (issue 47) left untested: the refusals' fields and texts, a value
# that is no string, and a base without entries.
@pytest.mark.parametrize("value", ["yes", 1, 0, None, "true"])
def test_base_env_refuses_what_is_no_boolean_with_what_was_given(value):
    with pytest.raises(ConfigError) as err:
        base_nccl_env(value)
    assert str(err.value) == "enable_mnnvl: must be a boolean (true or false), got %r" % (value,)


def test_base_env_defaults_to_mnnvl_off_and_gives_new_entries_each_call():
    first = base_nccl_env()
    assert dict((item["name"], item["value"]) for item in first)["NCCL_MNNVL_ENABLE"] == "0"
    first[0]["value"] = "WARN"
    assert base_nccl_env()[0] == {"name": "NCCL_DEBUG", "value": "INFO"}


@pytest.mark.parametrize("env, kind", [("A=1", "str"), ({"name": "A"}, "dict"), (("A",), "tuple")])
def test_an_env_that_is_no_list_is_refused_with_its_type(env, kind):
    for call, field in ((lambda: merge_env(env, []), "base"), (lambda: merge_env([], env), "user"), (lambda: to_mpi_args(env), "env")):
        with pytest.raises(ConfigError) as err:
            call()
        assert str(err.value) == "%s: must be a list of {name, value} mappings, got %s" % (field, kind)


@pytest.mark.parametrize("item", ["A=1", {"value": "1"}, {"name": ""}, {"name": 3, "value": "1"}, {"name": None}])
def test_an_entry_without_a_name_is_refused_at_its_index(item):
    good = {"name": "A", "value": "1"}
    with pytest.raises(ConfigError) as err:
        merge_env([good, good, item], [good])
    assert str(err.value) == "base[2]: must be a mapping with a non-empty string 'name', got %r" % (item,)
    with pytest.raises(ConfigError, match=r"^env\[1\]: "):
        to_mpi_args([good, item])


def test_merge_over_an_empty_or_missing_base_is_the_users_list():
    user = [{"name": "A", "value": "1"}]
    assert merge_env(None, user) == user and merge_env([], user) == user
    assert merge_env(None, None) == [] and merge_env(None, []) == []


@pytest.mark.parametrize(
    "value, word",
    [(True, "true"), (False, "false"), ("", ""), (0, "0"), (1.5, "1.5"), ("a=b c", "a=b c")],
)
def test_mpi_args_give_each_value_as_its_text(value, word):
    assert to_mpi_args([{"name": "X", "value": value}]) == ["-x", "X=" + word]


def test_mpi_args_of_an_entry_without_a_value_give_an_empty_one():
    assert to_mpi_args([{"name": "X"}, {"name": "Y", "value": "1"}]) == ["-x", "X=", "-x", "Y=1"]
    assert to_mpi_args(None) == [] and to_mpi_args([]) == []


@pytest.mark.parametrize("value", [None, ["1"], {"a": 1}])
def test_mpi_args_refuse_a_value_that_is_no_text_at_its_index(value):
    with pytest.raises(ConfigError) as err:
        to_mpi_args([{"name": "A", "value": "1"}, {"name": "B", "value": value}])
    assert str(err.value) == "env[1]: value of B must be a string, got %r" % (value,)


def test_mpi_args_refuse_value_from_at_its_index_naming_the_variable():
    with pytest.raises(ConfigError) as err:
        to_mpi_args([{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {}}])
    assert str(err.value) == "env[1]: B uses valueFrom, which mpirun -x cannot pass; give a plain value"
