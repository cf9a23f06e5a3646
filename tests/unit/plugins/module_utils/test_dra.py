# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Which resource.k8s.io version a cluster's ComputeDomain channel claims use, from its /apis answer."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.dra import served_rct_versions


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
