# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Role variables that arrive as strings (AWX surveys, -e NAME=value) are normalised."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.filter import env_list as env_list_filter, name_refs as name_refs_filter
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.survey import env_list, name_refs


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, []),
        ([], []),
        ("", []),
        ([{"name": "A", "value": "1"}], [{"name": "A", "value": "1"}]),
        ([{"name": "A", "value": 1}], [{"name": "A", "value": "1"}]),
        (
            [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        ),
        (["A=1", "B=x=y"], [{"name": "A", "value": "1"}, {"name": "B", "value": "x=y"}]),
        ("NCCL_DEBUG=WARN,NCCL_ALGO=Ring", [{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "NCCL_ALGO", "value": "Ring"}]),
        ("A=1\nB=2\n", [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]),
        ('[{"name": "A", "value": "1"}]', [{"name": "A", "value": "1"}]),
        ({"A": 1}, [{"name": "A", "value": "1"}]),
        ("A=", [{"name": "A", "value": ""}]),
    ],
)
def test_env_list(value, expected):
    assert env_list(value) == expected


@pytest.mark.parametrize(
    "value, field",
    [
        (["NOEQUALS"], r"env\[0\]"),
        ([{"value": "1"}], r"env\[0\]"),
        ([{"name": "1 bad", "value": "1"}], r"env\[0\]"),
        ("[not json", "env"),
        (5, "env"),
    ],
)
def test_env_list_errors_name_the_item(value, field):
    with pytest.raises(ConfigError, match="^%s: " % field):
        env_list(value)


@pytest.mark.parametrize(
    "value, message",
    [
        (
            [{"name": "TOKEN", "value": {"secretKeyRef": {"name": "s", "key": "k"}}}],
            "env[0].value: must be a string, got a mapping (a Secret's or ConfigMap's key, a field or a resource goes under valueFrom, not value)",
        ),
        ({"TOKEN": {"secretKeyRef": {"name": "s", "key": "k"}}}, "env[0].value: must be a string, got a mapping"),
        ('[{"name": "A", "value": ["x"]}]', "env[0].value: must be a string, got a list"),
        ([{"name": "A", "value": True}], "env[0].value: must be a string, got a boolean (quote it in YAML: 'true' or 'false')"),
    ],
)
def test_an_env_value_that_is_not_text_is_refused_by_name(value, message):
    # Before: the mapping became its Python text ("{'secretKeyRef': ...}") in the pod's env.
    with pytest.raises(ConfigError) as caught:
        env_list(value)
    assert str(caught.value).startswith(message)


def test_the_role_refuses_a_mapping_as_an_env_value_before_any_cluster():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

    with pytest.raises(ConfigError) as caught:
        check_role_vars({"burnin_env": [{"name": "TOKEN", "value": {"secretKeyRef": {"name": "s", "key": "k"}}}]})
    assert str(caught.value).startswith("burnin_env[0].value: must be a string, got a mapping") and "valueFrom" in str(caught.value)


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, []),
        ("", []),
        ("ngc-pull, mirror", [{"name": "ngc-pull"}, {"name": "mirror"}]),
        (["a", {"name": "b"}], [{"name": "a"}, {"name": "b"}]),
        ('["a"]', [{"name": "a"}]),
    ],
)
def test_name_refs(value, expected):
    assert name_refs(value) == expected


@pytest.mark.parametrize("value, field", [([{"x": 1}], r"image_pull_secrets\[0\]"), ({"name": "a"}, "image_pull_secrets"), ([""], r"image_pull_secrets\[0\]")])
def test_name_refs_errors(value, field):
    with pytest.raises(ConfigError, match="^%s: " % field):
        name_refs(value)


def test_filters():
    assert list(env_list_filter.FilterModule().filters()) == ["env_list"]
    assert list(name_refs_filter.FilterModule().filters()) == ["name_refs"]
    assert env_list_filter.env_list_filter("A=1") == [{"name": "A", "value": "1"}]
    assert name_refs_filter.name_refs_filter("a") == [{"name": "a"}]
    with pytest.raises(AnsibleFilterError, match="gpufleet.burnin.env_list: env"):
        env_list_filter.env_list_filter(3)
    with pytest.raises(AnsibleFilterError, match="gpufleet.burnin.name_refs: image_pull_secrets"):
        name_refs_filter.name_refs_filter(3)


# What the mutation run of validation/survey.py (docs/mutation.md) found untested: the messages' formatting.


def test_the_errors_name_the_field_and_the_type_given():
    with pytest.raises(ConfigError) as failed:
        env_list(42, field="burnin_env")
    assert str(failed.value) == "burnin_env: must be a list of {name, value} mappings or NAME=value strings, got int"
    with pytest.raises(ConfigError) as failed:
        name_refs(4.5, field="burnin_image_pull_secrets")
    assert str(failed.value) == "burnin_image_pull_secrets: must be a list of names or {name: ...} mappings, got float"
    with pytest.raises(ConfigError) as failed:
        env_list([{"name": "A", "value": "1"}, {"name": "B", "value": None}], field="burnin_env")
    assert str(failed.value) == "burnin_env[1].value: is null; allowed: a string (quote it in YAML), or no value for an empty one"
