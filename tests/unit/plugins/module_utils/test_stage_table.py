# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The stage table (plugins/module_utils/stage_table.py) is the one place a stage is named: every list of stages a
user reads (the doc stubs' choices, the role's argument specs and defaults, docs/stages.md) says what its rows say,
and every row names a workload and results kind that exist."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import re

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils import stage_table
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import stages
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import argspec

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as handle:
        return handle.read()


def doc_stub(module):
    """The DOCUMENTATION of plugins/modules/MODULE.py, parsed (read from its source, not imported)."""
    tree = ast.parse(read("plugins", "modules", module + ".py"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", "") == "DOCUMENTATION" for target in node.targets):
            return yaml.safe_load(node.value.value)
    raise AssertionError("plugins/modules/%s.py has no DOCUMENTATION" % module)


def test_the_lists_are_read_from_the_rows():
    assert stage_table.STAGES == ("node", "fleet", "isolation", "dcgm", "gpu")
    assert stage_table.DEFAULT_STAGES == ("node", "fleet", "isolation")
    assert stage_table.JOB_STAGES == ("node", "fleet", "dcgm", "gpu")
    assert stage_table.NODE_STAGE_WORKLOADS == {"node": "nccl-all-reduce-node", "dcgm": "dcgm-diag", "gpu": "gpu-burn"}
    assert (stages.STAGES, stages.DEFAULT_STAGES, stages.JOB_STAGES) == (stage_table.STAGES, stage_table.DEFAULT_STAGES, stage_table.JOB_STAGES)
    assert [stage for stage in stage_table.STAGES if stage_table.runs_on_every_node(stage)] == ["node", "dcgm", "gpu"]
    assert not stage_table.runs_on_every_node("unknown")


@pytest.mark.parametrize("row", stage_table.STAGE_TABLE, ids=lambda row: row["stage"])
def test_every_row_is_whole(row):
    assert set(row) <= {"stage", "workload", "results", "scope", "job", "default", "after"}
    assert row["scope"] in ("node", "fleet", "pairs")
    # A node stage runs its own catalogue workload in a TrainJob of its own; pairs run inside their stage's action.
    assert row["job"] == (row["scope"] != "pairs")
    assert (row["workload"] is not None) == (row["scope"] == "node")
    if row.get("after"):
        before, why = row["after"]
        assert stage_table.STAGES.index(before) < stage_table.STAGES.index(row["stage"]) and why


@pytest.mark.parametrize("row", [row for row in stage_table.STAGE_TABLE if row["workload"]], ids=lambda row: row["stage"])
def test_a_node_stages_workload_is_in_the_catalogue_with_the_rows_results_kind(row):
    template = read("templates", "workloads", row["workload"] + ".yaml")
    assert re.search(r"^results: (\S+)$", template, re.M).group(1) == row["results"]


def test_the_plugins_choices_are_the_tables():
    assert argspec.BURNIN_STAGE_OWN["stage"]["choices"] == list(stage_table.STAGES)
    assert doc_stub("burnin_stage")["options"]["stage"]["choices"] == list(stage_table.STAGES)
    assert doc_stub("burnin_plan")["options"]["stage"]["choices"] == list(stage_table.JOB_STAGES)


def test_the_roles_argument_spec_defaults_and_docs_list_every_stage():
    spec = yaml.safe_load(read("roles", "burnin", "meta", "argument_specs.yml"))["argument_specs"]["main"]["options"]["burnin_stages"]
    assert spec["default"] == list(stage_table.DEFAULT_STAGES)
    described = [re.match(r"C\((\w+)\) - ", line).group(1) for line in spec["description"] if re.match(r"C\((\w+)\) - ", line)]
    assert described == list(stage_table.STAGES)
    assert yaml.safe_load(read("roles", "burnin", "defaults", "main.yml"))["burnin_stages"] == list(stage_table.DEFAULT_STAGES)
    doc = read("docs", "stages.md")
    assert re.findall(r"^\| `(\w+)` \|", doc, re.M) == list(stage_table.STAGES)
    assert "default `[%s]`" % ", ".join(stage_table.DEFAULT_STAGES) in doc
    assert "allowed\n`%s`" % "`, `".join(stage_table.STAGES) in doc or "allowed `%s`" % "`, `".join(stage_table.STAGES) in doc


def test_a_stage_before_the_one_it_needs_is_refused_with_the_rows_reason(monkeypatch):
    # The ordering rule is the rows': a second row that needs another stage is checked the same way.
    monkeypatch.setitem(stages.AFTER, "dcgm", ("node", "dcgm reads the node stage's findings"))
    assert stages.check_stages("burnin_stages", ["node", "dcgm"]) == ["node", "dcgm"]
    with pytest.raises(ConfigError) as caught:
        stages.check_stages("burnin_stages", ["dcgm", "node"])
    assert str(caught.value).endswith("dcgm reads the node stage's findings, so node must come before it, got dcgm, node")
    with pytest.raises(ConfigError) as caught:
        stages.check_stages("burnin_stages", ["dcgm"])
    assert "so node must come before it, got dcgm" in str(caught.value)
