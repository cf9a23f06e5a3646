# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Which kubernetes.core the e2e tests run the collection's in-process plugins on: e2e runs them on the newest
supported (GPUFLEET_KCORE_VERSION, the ansible 14 bundle's), e2e-2.19 on the ansible 12 bundle's with ansible-core
2.19 (GPUFLEET_EXPECT_KCORE). One kubernetes.core must be found, of that version (docs/kubernetes-core.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess


def test_the_expected_kubernetes_core_is_the_one_found():
    expected = os.environ.get("GPUFLEET_EXPECT_KCORE") or os.environ["GPUFLEET_KCORE_VERSION"]
    proc = subprocess.run(
        ["ansible-galaxy", "collection", "list", "kubernetes.core", "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        check=True,
    )
    found = dict((path, info["kubernetes.core"]["version"]) for path, info in json.loads(proc.stdout).items() if "kubernetes.core" in info)
    assert list(found.values()) == [expected], found
