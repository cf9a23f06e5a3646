# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.filter import base_nccl_env, merge_env, to_mpi_args


def test_each_file_exports_exactly_its_filter():
    assert list(base_nccl_env.FilterModule().filters()) == ["base_nccl_env"]
    assert list(merge_env.FilterModule().filters()) == ["merge_env"]
    assert list(to_mpi_args.FilterModule().filters()) == ["to_mpi_args"]


def test_base_then_merge_then_mpi_args():
    env = base_nccl_env.base_nccl_env_filter(True)
    merged = merge_env.merge_env_filter(env, [{"name": "NCCL_DEBUG", "value": "WARN"}])
    args = to_mpi_args.to_mpi_args_filter(merged)
    assert args[-2:] == ["-x", "NCCL_DEBUG=WARN"] and "NCCL_MNNVL_ENABLE=1" in args and len(args) == 20


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: base_nccl_env.base_nccl_env_filter("true"), "gpufleet.burnin.base_nccl_env: enable_mnnvl"),
        (lambda: merge_env.merge_env_filter([], "A=1"), "gpufleet.burnin.merge_env: user"),
        (lambda: to_mpi_args.to_mpi_args_filter([{"value": "1"}]), r"gpufleet.burnin.to_mpi_args: env\[0\]"),
    ],
)
def test_errors_are_filter_errors_naming_the_field(call, message):
    with pytest.raises(AnsibleFilterError, match=message):
        call()
