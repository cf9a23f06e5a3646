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


# What the mutation run of rendering/defaults.py (issue 47) left untested: each part of the table refused on its own,
# the bounds of a count, a platform's row field by field, the cache, and the refusals' texts.
UNKNOWN = "unknown: {gpusPerNode: 4, mlnxPerNode: 0}\n"


def table(tmp_path, text):
    path = tmp_path / "gpu-defaults.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[1, 2]\n", "GPU defaults {path} needs the mappings 'architectures' and 'unknown'"),
        ("architectures: [h100]\n" + UNKNOWN, "GPU defaults {path} needs the mappings 'architectures' and 'unknown'"),
        ("architectures: {}\nunknown: [4]\n", "GPU defaults {path} needs the mappings 'architectures' and 'unknown'"),
        ("unknown: {gpusPerNode: 4, mlnxPerNode: 0}\n", "GPU defaults {path} needs the mappings 'architectures' and 'unknown'"),
        ("architectures: {h100: [8, 8]}\n" + UNKNOWN, "GPU defaults {path}: architectures.h100 must be a mapping"),
        ("architectures: {}\nunknown: {mlnxPerNode: 0}\n", "GPU defaults {path}: unknown needs gpusPerNode"),
        ("architectures: {}\nunknown: {gpusPerNode: true, mlnxPerNode: 0}\n", "GPU defaults {path}: unknown.gpusPerNode must be an integer >= 0, got True"),
        ("architectures: {}\nunknown: {gpusPerNode: '4', mlnxPerNode: 0}\n", "GPU defaults {path}: unknown.gpusPerNode must be an integer >= 0, got '4'"),
        ("architectures: {}\nunknown: {gpusPerNode: 4, mlnxPerNode: -1}\n", "GPU defaults {path}: unknown.mlnxPerNode must be an integer >= 0, got -1"),
        ("architectures: {}\n" + UNKNOWN + "platforms: [oci]\n", "GPU defaults {path}: 'platforms' must be a mapping"),
        ("architectures: {}\n" + UNKNOWN + "platforms: {oci: [gb200]}\n", "GPU defaults {path}: platforms.oci must be a mapping of architectures"),
        ("architectures: {}\n" + UNKNOWN + "platforms: {oci: {gb200: 4}}\n", "GPU defaults {path}: platforms.oci.gb200 must be a mapping"),
        ("architectures: {}\n" + UNKNOWN + "platforms: {oci: {gb200: {gpusPerNode: 2.5}}}\n", "GPU defaults {path}: platforms.oci.gb200.gpusPerNode must be"),
    ],
)
def test_each_part_of_the_table_is_refused_on_its_own(tmp_path, text, message):
    path = table(tmp_path, text)
    with pytest.raises(ParseError) as err:
        defaults.load_gpu_defaults(path)
    assert str(err.value).startswith(message.format(path=path))


def test_counts_of_zero_and_rows_a_platform_gives_in_part_are_accepted(tmp_path):
    text = (
        "architectures: {h100: {gpusPerNode: 8, mlnxPerNode: 0}, gb200: {gpusPerNode: 4, mlnxPerNode: 8}}\n"
        "unknown: {gpusPerNode: 0, mlnxPerNode: 0}\n"
        "platforms: {oci: {h100: {}, gb200: {mlnxPerNode: 0}}, aws: {h100: {gpusPerNode: 1}}, gcp: {}}\n"
    )
    path = table(tmp_path, text)
    assert defaults.gpu_defaults("gb200", "oci", path=path) == {"gpus_per_node": 4, "mlnx_per_node": 0, "known": True}
    assert defaults.gpu_defaults("gb200", "aws", path=path) == {"gpus_per_node": 4, "mlnx_per_node": 8, "known": True}
    assert defaults.gpu_defaults("gb200", "gcp", path=path) == {"gpus_per_node": 4, "mlnx_per_node": 8, "known": True}
    assert defaults.gpu_defaults("gb200", "", path=path) == {"gpus_per_node": 4, "mlnx_per_node": 8, "known": True}
    assert defaults.gpu_defaults("h100", "oci", path=path) == {"gpus_per_node": 8, "mlnx_per_node": 0, "known": True}
    assert defaults.gpu_defaults("b200", "oci", path=path) == {"gpus_per_node": 0, "mlnx_per_node": 0, "known": False}


def test_a_platforms_row_for_an_unknown_architecture_applies_over_the_unknown_row(tmp_path):
    path = table(tmp_path, "architectures: {}\n" + UNKNOWN + "platforms: {oci: {mystery: {gpusPerNode: 2}}}\n")
    assert defaults.gpu_defaults("mystery", "oci", path=path) == {"gpus_per_node": 2, "mlnx_per_node": 0, "known": False}
    assert defaults.gpu_defaults("mystery", None, path=path) == {"gpus_per_node": 4, "mlnx_per_node": 0, "known": False}


def test_the_table_is_read_once_per_path_and_its_rows_are_not_changed(tmp_path):
    path = table(tmp_path, "architectures: {h100: {gpusPerNode: 8, mlnxPerNode: 8}}\n" + UNKNOWN + "platforms: {azure: {h100: {mlnxPerNode: 0}}}\n")
    first = defaults.load_gpu_defaults(path)
    (tmp_path / "gpu-defaults.yaml").write_text("[not read again]\n")
    assert defaults.load_gpu_defaults(path) is first
    assert defaults.gpu_defaults("h100", "azure", path=path)["mlnx_per_node"] == 0
    assert defaults.gpu_defaults("h100", None, path=path)["mlnx_per_node"] == 8


@pytest.mark.parametrize(
    "arch, platform, message",
    [
        ("", None, "gpu_architecture: must be a non-empty string such as h100 or gb200, got ''"),
        (5, None, "gpu_architecture: must be a non-empty string such as h100 or gb200, got 5"),
        ("h100", ["aws"], "platform: must be a string such as aws or oci, got ['aws']"),
    ],
)
def test_bad_arguments_say_what_was_given(arch, platform, message):
    with pytest.raises(ConfigError) as err:
        defaults.gpu_defaults(arch, platform)
    assert str(err.value) == message
