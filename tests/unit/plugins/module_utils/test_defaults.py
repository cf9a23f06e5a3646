# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""GPU defaults per architecture and platform, read from _lib/gpu-defaults.yaml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import defaults
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError


@pytest.mark.parametrize(
    "arch, platform, gpus, nics",
    [
        ("h100", None, 8, 8),
        ("h200", "aws", 8, 8),
        ("b200", None, 8, 8),
        ("a100", None, 8, 8),
        ("l40s", None, 8, 8),
        ("l40", None, 8, 4),
        ("gb200", "azure", 4, 0),
        ("gb300", "aws", 4, 8),
        ("h100", "azure", 8, 0),
        ("rtxpro6000", None, 8, 0),
        ("l40s", "oci", 4, 2),
        ("gb200", "oci", 4, 0),
        ("gb300", "oci", 4, 4),
        ("h100", "oci", 8, 8),
        ("mystery", None, 4, 0),
        ("mystery", "oci", 4, 0),
    ],
)
def test_table(arch, platform, gpus, nics):
    result = defaults.gpu_defaults(arch, platform)
    assert (result["gpus_per_node"], result["mlnx_per_node"]) == (gpus, nics)
    assert result["known"] == (arch != "mystery")


def test_file_is_found_relative_to_the_module():
    assert defaults.GPU_DEFAULTS_FILE.endswith("_lib/gpu-defaults.yaml")
    assert "h100" in defaults.load_gpu_defaults()["architectures"]


@pytest.mark.parametrize("arch, platform, field", [("", None, "gpu_architecture"), (None, None, "gpu_architecture"), ("h100", 5, "platform")])
def test_bad_arguments_name_the_field(arch, platform, field):
    with pytest.raises(ConfigError, match="^%s: " % field):
        defaults.gpu_defaults(arch, platform)


@pytest.mark.parametrize(
    "text, message",
    [
        ("architectures: {}\n", "needs the mappings"),
        ("architectures: {h100: {gpusPerNode: 8}}\nunknown: {gpusPerNode: 4, mlnxPerNode: 0}\n", "architectures.h100 needs mlnxPerNode"),
        ("architectures: {}\nunknown: {gpusPerNode: -1, mlnxPerNode: 0}\n", "unknown.gpusPerNode must be an integer >= 0"),
        ("architectures: {}\nunknown: {gpusPerNode: 4, mlnxPerNode: 0}\nplatforms: {oci: {gb200: {mlnxPerNode: x}}}\n", "platforms.oci.gb200.mlnxPerNode"),
        ("[unclosed\n", "not valid YAML"),
    ],
)
def test_bad_table_is_a_parse_error(tmp_path, text, message):
    path = tmp_path / "gpu-defaults.yaml"
    path.write_text(text)
    with pytest.raises(ParseError, match=message):
        defaults.gpu_defaults("h100", None, path=str(path))


def test_missing_file(tmp_path):
    with pytest.raises(ParseError, match="cannot read GPU defaults"):
        defaults.load_gpu_defaults(str(tmp_path / "nope.yaml"))
