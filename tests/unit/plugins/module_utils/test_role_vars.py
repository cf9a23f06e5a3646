# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""burnin/role_vars.py: what the whole run of its mutants (docs/mutation.md, issue 47's sixth round) found unpinned by
test_inputs.py and test_bounds.py: bounds of the role's integers both sides, the names the start task checks, the
defaults a workload is rendered with before any cluster is read."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError


def accepted(name, value):
    return role_vars.check_role_vars({name: value})[name]


def refused(name, value):
    with pytest.raises(ConfigError) as caught:
        role_vars.check_role_vars({name: value})
    assert caught.value.field == name, str(caught.value)
    return str(caught.value)


# name, low, high: integers test_bounds.py's ROLE_INTEGERS does not hold.
INTEGERS = [
    ("burnin_offender_failures", 1, 50),
    ("burnin_offender_runs", 1, 50),
    ("burnin_sweep_max_age_hours", 1, 8784),
    ("burnin_sweep_max_nodes", 1, 100000),
    ("burnin_sweep_max_percent", 1, 100),
    ("burnin_marks_now", 0, 4102444800),
]


@pytest.mark.parametrize("name, low, high", INTEGERS, ids=[row[0] for row in INTEGERS])
def test_each_integer_at_its_bounds_and_one_past(name, low, high):
    # k of n: the other of the two is given so that k <= n holds at every bound.
    given = {"burnin_offender_failures": {"burnin_offender_runs": 50}, "burnin_offender_runs": {"burnin_offender_failures": 1}}.get(name, {})
    assert role_vars.check_role_vars(dict(given, **{name: low}))[name] == low
    assert role_vars.check_role_vars(dict(given, **{name: str(high)}))[name] == high
    for past in (low - 1, high + 1):
        with pytest.raises(ConfigError) as caught:
            role_vars.check_role_vars(dict(given, **{name: past}))
        assert caught.value.field == name and "from %d to %d" % (low, high) in str(caught.value), str(caught.value)


def test_an_unknown_variable_names_the_nearest_known_one():
    message = refused("burnin_nods", 2)
    assert "is not a variable of gpufleet.burnin.burnin; did you mean burnin_nodes?; its variables: ansible-doc" in message, message
    message = refused("burnin_zzzzzzzzzzzzzzzz", 2)
    assert "is not a variable of gpufleet.burnin.burnin; its variables: ansible-doc" in message, message


def test_the_start_task_checks_every_burnin_variable_but_the_kubeconfig_and_context():
    names = ["burnin_nodes", "ansible_host", "burnin_kubeconfig", "burnin_context", "burnin__plan", "burnin_", 3, "xburnin_nodes", "burnin_9"]
    assert role_vars.given_names(names) == ["burnin_9", "burnin_nodes"]


def test_a_stage_that_takes_no_parameters_is_named_without_its_value():
    with pytest.raises(ConfigError) as caught:
        role_vars.check_role_vars({"burnin_stage_params": {"fleet": {"secret": "value-not-shown"}}})
    message = str(caught.value)
    assert caught.value.field == "burnin_stage_params.fleet" and "value-not-shown" not in message and ", got" not in message, message


def rendered_with(monkeypatch):
    seen = []
    render = role_vars.workload_catalog.render_workload

    def recording(workload, data):
        seen.append(data)
        return render(workload, data)

    monkeypatch.setattr(role_vars.workload_catalog, "render_workload", recording)
    return seen


@pytest.mark.parametrize(
    "platform, arch, gpus",
    [
        # The architecture's defaults (_lib/gpu-defaults.yaml), then the platform's own row: oci l40s has 4, not 8.
        ("", "h100", 8),
        ("", "", 4),
        ("oci", "l40s", 4),
        ("aws", "l40s", 8),
    ],
)
def test_a_node_stages_parameters_render_with_the_declared_gpus_defaults(monkeypatch, platform, arch, gpus):
    seen = rendered_with(monkeypatch)
    role_vars.check_stage_params({"burnin_platform": platform, "burnin_gpu_architecture": arch, "burnin_stage_params": {"node": {}}})
    assert [(data["gpus_per_node"], data["nodes"]) for data in seen] == [(gpus, 1)]
    seen[:] = []
    role_vars.check_stage_params({"burnin_platform": platform, "burnin_gpus_per_node": 2, "burnin_stage_params": {"node": {}}})
    assert [data["gpus_per_node"] for data in seen] == [2]


@pytest.mark.parametrize("platform, arch, gpus", [("", "h100", 8), ("", "", 4), ("oci", "l40s", 4), ("aws", "l40s", 8)])
def test_the_workload_renders_with_the_declared_gpus_defaults_and_two_nodes(monkeypatch, platform, arch, gpus):
    seen = rendered_with(monkeypatch)
    role_vars.check_workload({"burnin_workload": "nccl-all-reduce", "burnin_platform": platform, "burnin_gpu_architecture": arch})
    assert [(data["gpus_per_node"], data["nodes"]) for data in seen] == [(gpus, 2)]
    seen[:] = []
    role_vars.check_workload({"burnin_workload": "nccl-all-reduce", "burnin_nodes": 3, "burnin_gpus_per_node": 0})
    assert [(data["gpus_per_node"], data["nodes"]) for data in seen] == [(0, 3)]


def test_the_sweeps_node_names_are_at_most_the_node_bound_and_many_distinct_ones_pass():
    names = ["node-%d" % index for index in range(300)]
    # More than 256 names: the lengths compared are equal values, not the same object.
    assert accepted("burnin_sweep_nodes", names) == names
    assert "names a node twice" in refused("burnin_sweep_nodes", names + ["node-0"])
    with pytest.raises(ConfigError) as caught:
        role_vars.check_role_vars({"burnin_sweep_nodes": ["node-1", "Bad_Name"]})
    assert caught.value.field == "burnin_sweep_nodes[1]", str(caught.value)
    check = role_vars.CHECKS["burnin_sweep_nodes"]
    # At the bound (check_role_vars' own bound of 100000 values refuses more before this check).
    assert len(check("burnin_sweep_nodes", ["n%d" % index for index in range(100000)])) == 100000
    with pytest.raises(ConfigError) as caught:
        check("burnin_sweep_nodes", ["n"] * 100001)
    assert str(caught.value) == "burnin_sweep_nodes: may name at most 100000 nodes"


@pytest.mark.parametrize("framework, ok", [("", True), ("mpi", True), ("torch", False), ("exec", False)])
def test_only_the_workloads_own_framework_fits_it(framework, ok):
    given = {"burnin_workload": "nccl-all-reduce", "burnin_framework": framework}
    if ok:
        assert role_vars.check_role_vars(given)["burnin_framework"] == framework
    else:
        with pytest.raises(ConfigError) as caught:
            role_vars.check_role_vars(given)
        assert caught.value.field == "burnin_framework" and "does not fit burnin_workload nccl-all-reduce, which runs mpi" in str(caught.value)


@pytest.mark.parametrize(
    "given, field",
    [
        ({"burnin_metrics_dir": "/m", "burnin_report_dir": "/r"}, None),
        ({"burnin_metrics_dir": "/m", "burnin_report_dir": "/r", "burnin_report_formats": ["json"]}, None),
        ({"burnin_metrics_dir": "/m"}, "burnin_metrics_dir"),
        ({"burnin_metrics_dir": "/m", "burnin_report_dir": "/r", "burnin_report_formats": ["html"]}, "burnin_metrics_dir"),
        # Credentials over plain http:// to another host: refused unless allowed.
        (
            {"burnin_export_url": "http://collector.example.com/in", "burnin_export_headers": {"Authorization": "Bearer x"}, "burnin_report_dir": "/r"},
            "burnin_export_url",
        ),
        (
            {
                "burnin_export_url": "http://collector.example.com/in",
                "burnin_export_headers": {"Authorization": "Bearer x"},
                "burnin_report_dir": "/r",
                "burnin_export_allow_insecure": True,
            },
            None,
        ),
        ({"burnin_export_headers": "{not json"}, "burnin_export_headers"),
        ({"burnin_namespace": ""}, "burnin_namespace"),
        ({"burnin_pushgateway_job": ""}, "burnin_pushgateway_job"),
        ({"burnin_threshold_on_missing": ""}, "burnin_threshold_on_missing"),
        ({"burnin_sweep_hold": ""}, "burnin_sweep_hold"),
        ({"burnin_report_formats": None}, None),
        ({"burnin_export_headers": '{"X-Scope": "a"}'}, None),
        ({"burnin_export_headers": ""}, None),
        # The first of the exports that need the report is named.
        ({"burnin_metrics_dir": "/m", "burnin_export_url": "https://c.example.com/in"}, "burnin_metrics_dir"),
        # A custom trainer takes the keys of the framework given (torch has no binary), any framework's without one.
        ({"burnin_framework": "torch", "burnin_trainer": {"binary": "/x"}}, "burnin_trainer"),
        ({"burnin_trainer": {"binary": "/x"}}, None),
        # An integer is never optional: empty survey text is refused, not taken as unset.
        ({"burnin_nodes": ""}, "burnin_nodes"),
        ({"burnin_timeout": None}, "burnin_timeout"),
        ({"burnin_verified_label": ""}, "burnin_verified_label"),
        # k of n: the failures given alone are checked against the default runs (4).
        ({"burnin_offender_failures": 5}, "burnin_offender_failures"),
        ({"burnin_offender_failures": 4}, None),
        ({"burnin_offender_runs": 2}, "burnin_offender_failures"),
    ],
)
def test_the_checks_across_variables(given, field):
    if field is None:
        role_vars.check_role_vars(given)
    else:
        with pytest.raises(ConfigError) as caught:
            role_vars.check_role_vars(given)
        assert caught.value.field == field, str(caught.value)


def test_bad_export_headers_text_is_refused_without_repeating_it():
    message = refused("burnin_export_headers", '{"Authorization": "Bearer s3cr3t"')
    assert "must be a mapping of header names to values" in message and "s3cr3t" not in message and ", got" not in message, message


def test_messages_that_do_not_repeat_the_value():
    message = refused("burnin_sweep_stages", ["node", "fleet"])
    assert message == "burnin_sweep_stages: takes node stages only (dcgm, gpu, node); fleet run(s) over the fleet", message
    message = refused("burnin_metrics_dir", "/m")
    assert message.endswith("needs the run's JSON report: set burnin_report_dir and keep json in burnin_report_formats"), message


def test_export_headers_given_as_json_text_are_checked_and_masked():
    shown = accepted("burnin_export_headers", '{"Authorization": "Bearer s3cr3t"}')
    assert list(shown) == ["Authorization"] and "s3cr3t" not in str(shown)
    assert accepted("burnin_export_headers", "  ") == {}
