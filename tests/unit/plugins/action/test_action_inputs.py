# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The action plugins' own argument handling, run as a task runs them (no host, no cluster): controller code, so in
ansible-test's controller unit context (tests/unit/plugins/module_utils/ may import only module_utils)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.files import safe_join, write_files
from ansible_collections.gpufleet.burnin.plugins.module_utils import validate

PLAN = {
    "entry_name": "nccl",
    "image": "nvcr.io/nvidia/pytorch:26.01-py3",
    "framework": "mpi",
    "nodes": 2,
    "gpus_per_node": 8,
    "namespace": "burnin",
    "run_id": "r1",
    "platform": "aws",
    "gpu_architecture": "h100",
    "trainer": {"binary": "/usr/local/bin/all_reduce_perf"},
    "overrides": [],
}


def _action(module, args):
    """Run the action plugin gpufleet.burnin.MODULE as a task would, with ARGS (no host, no cluster)."""
    import importlib
    from unittest import mock

    from ansible.playbook.task import Task

    action = importlib.import_module("ansible_collections.gpufleet.burnin.plugins.action.%s" % module).ActionModule
    task = Task()
    task.args = copy.deepcopy(args)
    return action(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None).run(task_vars={})


RUNTIME = {"entry_name": "nccl", "image": "nvcr.io/nvidia/pytorch:26.01-py3", "gpus_per_node": 8}


@pytest.mark.parametrize("module, base", [("training_runtime", RUNTIME), ("workload_plan", PLAN)])
@pytest.mark.parametrize("version", [2.10, 2.3, 2, True])
def test_the_plugins_refuse_a_trainer_version_that_is_not_a_string(module, base, version):
    # The argument spec would turn 2.10 into "2.1" (a release) and plan it; the task's own value is checked first.
    result = _action(module, dict(base, trainer_version=version))
    assert result.get("failed") and result["msg"].startswith("trainer_version: must be a string such as v2.3"), result
    assert not _action(module, dict(base, trainer_version="v2.3")).get("failed")


@pytest.mark.parametrize("module, base", [("training_runtime", RUNTIME), ("workload_plan", PLAN)])
def test_the_plugins_refuse_duplicate_and_too_many_env_names(module, base):
    result = _action(module, dict(base, env=[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]))
    assert result.get("failed") and result["msg"].startswith("env[1].name: repeats A (already env[0])"), result
    many = [{"name": "V%d" % index, "value": "x"} for index in range(validate.ENV_MAX + 1)]
    result = _action(module, dict(base, env=many))
    assert result.get("failed") and result["msg"] == "env: has %d entries; at most %d allowed" % (validate.ENV_MAX + 1, validate.ENV_MAX), result
    assert not _action(module, dict(base, env=many[: validate.ENV_MAX])).get("failed")


def test_an_inventory_host_named_dot_dot_renders_inside_the_render_dir(tmp_path):
    from ansible_collections.gpufleet.burnin.plugins.filter.safe_path import safe_path_filter

    base = str(tmp_path / "rendered")
    for host in ("../../victim", "..", "a/../../b"):
        directory = safe_path_filter(base, [host])
        assert os.path.dirname(directory) == base, directory
        write_files(directory, [{"name": "manifests.yaml", "content": "kind: List\n"}])
    assert sorted(os.listdir(str(tmp_path))) == ["rendered"]
    assert safe_path_filter(base, ["aws-a"]) == os.path.join(base, "aws-a")
    assert safe_join(base, ["r1", "aws-a", ""]) == os.path.join(base, "r1", "aws-a")


def test_the_burnin_write_action_writes_through_files_py(tmp_path):
    from unittest import mock

    from ansible.playbook.task import Task

    from ansible_collections.gpufleet.burnin.plugins.action.burnin_write import ActionModule

    target = tmp_path / "victim"
    target.write_text("precious")
    os.symlink(str(target), str(tmp_path / "summary.json"))
    task = Task()
    task.args = {"directory": str(tmp_path), "files": [{"name": "summary.json", "content": "{}"}]}
    result = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None).run(task_vars={})
    assert result["changed"] and result["files"] == [str(tmp_path / "summary.json")], result
    assert target.read_text() == "precious" and (tmp_path / "summary.json").read_text() == "{}"
    task.args = {"directory": str(tmp_path), "files": [{"name": "../summary.json"}]}
    result = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None).run(task_vars={})
    assert result["failed"] and result["msg"].startswith("files[0].name: must be a plain file name"), result
