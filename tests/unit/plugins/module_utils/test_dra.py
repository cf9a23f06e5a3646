# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Which resource.k8s.io version a cluster's ComputeDomain channel claims use, from its /apis answer."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.dra import (
    DRA_UNAVAILABLE,
    compute_domain_num_nodes,
    dra_unavailable_error,
    parse_driver_version,
    parse_server_version,
    resource_api_version,
    served_rct_versions,
)


def api_groups(*groups):
    return {
        "kind": "APIGroupList",
        "groups": [{"name": name, "versions": [{"groupVersion": "%s/%s" % (name, v), "version": v} for v in versions]} for name, versions in groups],
    }


def test_the_newest_served_version_comes_first():
    # Kubernetes 1.34 serves v1 and the beta versions (the fleet's dra_beta_apis clusters), in any order.
    groups = api_groups(("apps", ["v1"]), ("resource.k8s.io", ["v1beta1", "v1", "v1beta2"]))
    assert served_rct_versions(groups) == ["v1", "v1beta2", "v1beta1"]


def test_only_the_dra_group_counts_and_unknown_versions_are_left_out():
    groups = api_groups(("resource.nvidia.com", ["v1beta1"]), ("resource.k8s.io", ["v1alpha3", "v1beta1"]))
    assert served_rct_versions(groups) == ["v1beta1"]


def test_a_server_without_dra_serves_none():
    assert served_rct_versions(api_groups(("apps", ["v1"]))) == [] and served_rct_versions({}) == []


# What the mutation run of rendering/dra.py (issue 47) left untested: the server and driver versions on both sides of
# each boundary, the explicit version with and without its group, and the refusals' fields and texts.
@pytest.mark.parametrize(
    "server, expected",
    [
        ("v1.34.0", "resource.k8s.io/v1"),
        ("v2.0", "resource.k8s.io/v1"),
        ("1.33.9", "resource.k8s.io/v1beta2"),
        ("v1.33", "resource.k8s.io/v1beta2"),
        ("v1.32.11+k3s1", "resource.k8s.io/v1beta1"),
        ("v1.31.0", DRA_UNAVAILABLE),
        ("v0.34.0", DRA_UNAVAILABLE),
        ("v1.3", DRA_UNAVAILABLE),
        ("", "resource.k8s.io/v1"),
    ],
)
def test_the_claim_templates_version_follows_the_server_at_each_boundary(server, expected):
    assert resource_api_version(None, server) == expected
    assert resource_api_version("", server) == expected


@pytest.mark.parametrize("explicit", ["v1", "v1beta2", "v1beta1", "resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"])
def test_an_explicit_version_wins_over_the_server_with_or_without_its_group(explicit):
    version = explicit.split("/")[-1]
    for server in ("v1.31.0", "v1.34.0", None, "not a version"):
        assert resource_api_version(explicit, server) == "resource.k8s.io/" + version


@pytest.mark.parametrize(
    "explicit", ["v1alpha3", "resource.k8s.io/v1alpha3", "resource.k8s.iov1", "xresource.k8s.io/v1", "resource.nvidia.com/v1beta1", "/v1", 1]
)
def test_an_explicit_version_of_no_claim_template_api_is_refused_naming_the_allowed_ones(explicit):
    with pytest.raises(ConfigError) as err:
        resource_api_version(explicit, "v1.34.0")
    assert err.value.field == "rct_api_version"
    assert str(err.value) == "rct_api_version: must be one of v1, v1beta2, v1beta1 (optionally prefixed with resource.k8s.io/), got %r" % (explicit,)


@pytest.mark.parametrize("value, expected", [("v1.33.2", (1, 33)), ("1.34", (1, 34)), ("v1.34.3-gke.1318000", (1, 34)), ("v10.200.3+x", (10, 200))])
def test_a_server_version_is_its_major_and_minor(value, expected):
    assert parse_server_version(value) == expected


@pytest.mark.parametrize("value", ["1", "v1.x", "1.33.", "v1.33.2.1", "latest", None, 1.33, "va1.33"])
def test_a_server_version_that_is_none_is_refused_under_its_field(value):
    with pytest.raises(ConfigError) as err:
        parse_server_version(value, field="facts.server_version")
    assert str(err.value) == "facts.server_version: must be a Kubernetes version such as v1.33.2 or 1.34, got %r" % (value,)
    with pytest.raises(ConfigError, match="^server_version: "):
        parse_server_version(value)


def test_the_unavailable_error_names_the_server_the_need_and_the_way_out():
    err = dra_unavailable_error("v1.31.2", "the ComputeDomain")
    assert isinstance(err, ConfigError) and err.field == "server_version"
    assert str(err) == (
        "server_version: Kubernetes v1.31.2 has no resource.k8s.io DRA API, which the ComputeDomain needs; allowed: a server >= v1.32 "
        "(v1beta1 on 1.32, v1beta2 on 1.33, v1 on 1.34 and later), or set rct_api_version explicitly"
    )


@pytest.mark.parametrize("value, expected", [("v25.8.0", (25, 8, 0)), ("25.3", (25, 3, 0)), ("0.4.1-rc.2", (0, 4, 1)), ("v25.12.3+abc", (25, 12, 3))])
def test_a_driver_version_is_its_major_minor_and_patch(value, expected):
    assert parse_driver_version(value) == expected


@pytest.mark.parametrize("value", ["25", "v25.x.0", "latest", 25.8, None, "v25.8.0.1"])
def test_a_driver_version_that_is_none_is_refused_under_its_field(value):
    with pytest.raises(ConfigError) as err:
        parse_driver_version(value)
    assert str(err.value) == "dra_driver_version: must be a version such as v25.8.0 or 0.4.0, got %r" % (value,)
    with pytest.raises(ConfigError, match="^x: "):
        parse_driver_version(value, field="x")


@pytest.mark.parametrize(
    "version, expected",
    [
        ("", 0),
        ("v25.7.9", 5),
        ("v25.7", 5),
        ("v25.0.0", 5),
        ("v25.8.0-rc.1", 0),
        ("v25.8", 0),
        ("v26.1.0", 0),
        ("v24.99.99", 0),
        ("v1.0.0", 0),
    ],
)
def test_compute_domain_num_nodes_on_both_sides_of_the_dns_names_gate(version, expected):
    assert compute_domain_num_nodes(version, 5) == expected


def test_a_driver_version_that_is_no_version_is_refused_by_the_num_nodes_policy():
    with pytest.raises(ConfigError, match="^dra_driver_version: "):
        compute_domain_num_nodes("latest", 2)


def test_served_versions_read_only_the_dra_group_and_its_versions():
    groups = api_groups(("resource.k8s.io", []), ("resource.k8s.io.other", ["v1"]))
    assert served_rct_versions(groups) == []
    assert served_rct_versions({"groups": [{"name": "resource.k8s.io"}]}) == []
    assert served_rct_versions(None) == [] and served_rct_versions({"groups": None}) == []
    # The group given twice (an aggregated API beside the built-in one): the versions of both.
    groups = api_groups(("resource.k8s.io", ["v1beta1"]), ("apps", ["v1"]), ("resource.k8s.io", ["v1"]))
    assert served_rct_versions(groups) == ["v1", "v1beta1"]
