# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""group/gpufleet.burnin.k8s (meta/runtime.yml) lists every plugin that talks to a cluster: those whose docs take
kubernetes.core's authentication options, so one module_defaults entry reaches them all (issue 44, item 4)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _documentation(path):
    with open(path) as handle:
        text = handle.read()
    return yaml.safe_load(text.split('DOCUMENTATION = r"""', 1)[1].split('"""', 1)[0])


def test_the_k8s_group_lists_every_cluster_facing_plugin_and_only_those():
    with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
        group = yaml.safe_load(handle)["action_groups"]["k8s"]
    assert group[0] == {"metadata": {"extend_group": ["kubernetes.core.k8s"]}}
    members = group[1:]
    cluster_facing = []
    for path in sorted(glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))):
        if "kubernetes.core.k8s_auth_options" in (_documentation(path).get("extends_documentation_fragment") or []):
            cluster_facing.append(os.path.basename(path)[:-3])
    assert len(cluster_facing) >= 9 and len(members) == len(set(members))
    assert sorted(members) == cluster_facing
