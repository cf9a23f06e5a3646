# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.filter import detect_platform, gpu_defaults

H100_NODE = {
    "metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
    "spec": {"providerID": "aws:///us-east-1a/i-0"},
    "status": {"capacity": {"nvidia.com/gpu": "8"}},
}


def test_each_file_exports_exactly_its_filter():
    assert list(detect_platform.FilterModule().filters()) == ["detect_platform"]
    assert list(gpu_defaults.FilterModule().filters()) == ["gpu_defaults"]


def test_detect_platform_filter():
    result = detect_platform.detect_platform_filter([H100_NODE], "aws", "h100")
    assert result["ok"] and result["gpus"] == 8
    assert detect_platform.detect_platform_filter([H100_NODE])["platform"] == "aws"
    assert not detect_platform.detect_platform_filter([H100_NODE], "azure", "h100")["ok"]


def test_gpu_defaults_filter():
    assert gpu_defaults.gpu_defaults_filter("gb200") == {"gpus_per_node": 4, "mlnx_per_node": 8, "known": True}
    assert gpu_defaults.gpu_defaults_filter("gb200", "oci")["mlnx_per_node"] == 0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: detect_platform.detect_platform_filter("nodes"), "gpufleet.burnin.detect_platform: nodes: "),
        (lambda: detect_platform.detect_platform_filter([H100_NODE], ["aws"]), "gpufleet.burnin.detect_platform: platform: "),
        (lambda: detect_platform.detect_platform_filter([H100_NODE], nodes_listed="no"), "gpufleet.burnin.detect_platform: nodes_listed: "),
        (lambda: gpu_defaults.gpu_defaults_filter(8), "gpufleet.burnin.gpu_defaults: gpu_architecture: "),
        (lambda: gpu_defaults.gpu_defaults_filter("h100", 1), "gpufleet.burnin.gpu_defaults: platform: "),
    ],
)
def test_errors_are_filter_errors_naming_the_field(call, message):
    with pytest.raises(AnsibleFilterError, match=message):
        call()
