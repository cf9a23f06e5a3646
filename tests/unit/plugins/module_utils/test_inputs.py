# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The validation layer (module_utils/validate.py, inputs.py, role_vars.py): each bad input of issue 12 is refused
with a ConfigError naming the field and the path inside it; the Azure default NIC resource."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_vars

from ansible_collections.gpufleet.burnin.plugins.module_utils import validate
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.defaults import gpu_defaults
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload

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
LITERAL = "{{ lookup('ansible.builtin.pipe', 'id') }}"


def plan(**changes):
    """The workload_plan action's pipeline: check every option, then plan."""
    args = dict(copy.deepcopy(PLAN), **changes)
    inputs.check_plan_options(args)
    facts = {"platform": args.pop("platform"), "gpuArchitecture": args.pop("gpu_architecture")}
    return plan_workload(args, facts)


def refused(field, call, *args, **kwargs):
    with pytest.raises(ConfigError) as info:
        call(*args, **kwargs)
    assert info.value.field == field, str(info.value)
    return str(info.value)


def test_a_valid_plan_passes():
    assert [obj["kind"] for obj in plan()["objects"]][-1] == "TrainJob"


@pytest.mark.parametrize(
    "changes, field",
    [
        # the crashes: a patch removing spec.workload, a jobTemplate spec null or text, a dependency or topology as text
        ({"overrides": [{"when": {}, "jobTemplatePatch": [{"op": "remove", "path": "/spec/workload"}]}]}, "overrides[0]"),
        ({"overrides": [{"when": {}, "jobTemplate": {"spec": None}}]}, "overrides[0].jobTemplate.spec"),
        ({"overrides": [{"when": {}, "jobTemplate": {"spec": "workload: {}"}}]}, "overrides[0].jobTemplate.spec"),
        ({"overrides": [{"when": {}, "dependencies": ["kind: ConfigMap"]}]}, "overrides[0].dependencies[0]"),
        ({"overrides": [{"when": {}, "orchestration": {"topology": "rack"}}]}, "overrides[0].orchestration.topology"),
        ({"overrides": [{"when": {}, "jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": "abcdefgh"}}}}}]}, "overrides[0]"),
        ({"cluster_nodes": ["node-1"]}, "cluster_nodes[0]"),
        ({"cluster_nodes": [{"status": {"allocatable": "8"}}]}, "cluster_nodes[0].status.allocatable"),
        # silently accepted before
        ({"overrides": [{"when": {"platform": {"in": "aws,gcp"}}}]}, "overrides[0].when.platform.in"),
        ({"overrides": [{"when": {"platform": {"equals": "gcp"}, "framework": {"like": "mpi"}}}]}, "overrides[0].when.framework"),
        ({"overrides": [{}, {"when": {}, "preComand": ["x"]}]}, "overrides[0].when"),
        ({"overrides": [{"when": {}}, {"when": {}, "jobTemplatePatch": [{"op": "delete", "path": "/spec"}]}]}, "overrides[1].jobTemplatePatch[0].op"),
        ({"overrides": [{"when": {}, "jobTemplatePatch": [{"op": "add", "path": "spec"}]}]}, "overrides[0].jobTemplatePatch[0].path"),
        ({"env": [{"value": "1"}]}, "env[0].name"),
        ({"env": [{"name": "A", "value": None}]}, "env[0].value"),
        ({"image": "nvcr.io/nvidia/pytorch 26.01"}, "image"),
        ({"image": LITERAL}, "image"),
        ({"trainer_version": 2.1}, "trainer_version"),
        ({"trainer_version": "v9"}, "trainer_version"),
        ({"namespace": "Burn In"}, "namespace"),
        ({"resources": {"limits": {"hugepages-2Mi": "5GB"}}}, "resources.limits.hugepages-2Mi"),
        ({"platform": "aws2"}, "platform"),
        ({"gpu_architecture": "h1000"}, "gpu_architecture"),
        ({"instance_type": "p5.48xlarg"}, "instance_type"),
        ({"nodes": 10**9}, "nodes"),
        ({"volumes": [{"name": "Data", "emptyDir": {}}]}, "volumes[0].name"),
        ({"trainer": {"binary": "/bin/x", "timeout": "soon"}}, "trainer.timeout"),
        ({"platform_vars": {"azure_topology_configmap": "a: {b}"}}, "platform_vars.azure_topology_configmap"),
        ({"platform_vars": {"aws_hugepages_2mi": "5GB"}}, "platform_vars.aws_hugepages_2mi"),
    ],
)
def test_workload_plan_refuses(changes, field):
    refused(field, plan, **changes)


def test_the_unknown_operator_is_refused_though_an_earlier_condition_does_not_match():
    message = refused("overrides[0].when.gpuArchitecture", plan, overrides=[{"when": {"platform": {"equals": "gcp"}, "gpuArchitecture": {"matches": "h1.*"}}}])
    assert "equals, in, notIn" in message


def test_platform_overrides_refuse_an_unknown_platform_and_name_the_allowed():
    message = refused("platform", inputs.check_override_options, {"entry_name": "e", "gpus_per_node": 8, "platform": "aws2"})
    assert "aws" in message and "togetherai" in message and "mistral" in message


def test_k8s_apply_checks_every_object_and_the_field_manager():
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}
    inputs.check_apply_options({"objects": [good], "field_manager": "gpufleet.burnin"})
    refused("objects[1].kind", inputs.check_apply_options, {"objects": [good, {"apiVersion": "v1", "metadata": {"name": "x"}}], "field_manager": "m"})
    refused(
        "objects[0].metadata.namespace",
        inputs.check_apply_options,
        {"objects": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}], "field_manager": "m"},
    )
    inputs.check_apply_options({"objects": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}], "field_manager": "m"})
    refused("field_manager", inputs.check_apply_options, {"objects": [good], "field_manager": ""})


def test_template_looking_values_stay_literal_text():
    out = plan(env=[{"name": "X", "value": LITERAL}], trainer={"binary": "/bin/x", "args": [LITERAL]})
    trainjob = out["objects"][-1]
    assert LITERAL in trainjob["spec"]["trainer"]["args"]
    runtime = [obj for obj in out["objects"] if obj["kind"] == "TrainingRuntime"][0]
    worker = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "X", "value": LITERAL} in worker["env"]


@pytest.mark.parametrize(
    "grammar, good, bad",
    [
        ("dns_label", ["a", "a-1", "1a"], ["A", "a_b", "-a", "a" * 64, ""]),
        ("quantity", ["8", "500m", "2Gi", "1e3", "0.5"], ["5GB", "2 Gi", "Gi", "1.2.3"]),
        ("image", ["busybox", "nvcr.io/nvidia/pytorch:26.01-py3", "localhost:5000/a/b@sha256:" + "a" * 64], ["a b", "Upper:1", "x:", "a//b"]),
        ("env_name", ["NCCL_DEBUG", "a.b-c"], ["1A", "A=B", ""]),
        ("label_value", ["", "p5.48xlarge", "A_b"], ["-x", "a" * 64, "a b"]),
    ],
)
def test_grammars(grammar, good, bad):
    for value in good:
        validate.check_grammar("f", value, grammar)
    for value in bad:
        refused("f", validate.check_grammar, "f", value, grammar)


# --- the role's variables ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "given, field",
    [
        ({"burnin_nodes": 0}, "burnin_nodes"),
        ({"burnin_nodes": "1000000000"}, "burnin_nodes"),
        ({"burnin_platform": "aws2"}, "burnin_platform"),
        ({"burnin_nodse": 2}, "burnin_nodse"),
        ({"burnin_trainer_version": "v9"}, "burnin_trainer_version"),
        ({"burnin_trainer_version": 2.1}, "burnin_trainer_version"),
        ({"burnin_overrides": [{"when": {}, "jobTemplat": {}}]}, "burnin_overrides[0]"),
        ({"burnin_volumes": '[{"name": "Bad Name"}]'}, "burnin_volumes[0].name"),
        ({"burnin_volumes": "[not json"}, "burnin_volumes"),
        ({"burnin_thresholds": '[{"collective": "all_reduce", "pass": "fast", "warn": 1}]'}, "burnin_thresholds[0].pass"),
        ({"burnin_thresholds": [{"collective": "all_reduce", "sizes": {"min": "1G", "max": "big"}, "pass": 1}]}, "burnin_thresholds[0].sizes.max"),
        ({"burnin_thresholds": '[{"collective": "all_reduce", "sizes": [{"min": "1G", "warn": 3}]}]'}, "burnin_thresholds[0].sizes[0]"),
        ({"burnin_report_formats": "json,pdf"}, "burnin_report_formats[1]"),
        ({"burnin_regression_percent": 101}, "burnin_regression_percent"),
        ({"burnin_regression_percent": "ten"}, "burnin_regression_percent"),
        ({"burnin_regression_percent": True}, "burnin_regression_percent"),
        ({"burnin_baseline": ["a"]}, "burnin_baseline"),
        ({"burnin_namespace": "Burn In"}, "burnin_namespace"),
        ({"burnin_image": "a b"}, "burnin_image"),
        ({"burnin_env": [{"value": "x"}]}, "burnin_env[0]"),
        ({"burnin_resources": {"limits": {"hugepages-2Mi": "5GB"}}}, "burnin_resources.limits.hugepages-2Mi"),
        ({"burnin_field_manager": ""}, "burnin_field_manager"),
        ({"burnin_timeout": 10, "burnin_poll_interval": 60}, "burnin_poll_interval"),
        ({"burnin_workload": "nccl-all-reduse"}, "burnin_workload"),
        ({"burnin_platform": "aws", "burnin_instance_type": "p5.48xlarg"}, "burnin_instance_type"),
        ({"burnin_entry_name": "Nccl"}, "burnin_entry_name"),
        ({"burnin_dra_driver_version": "new"}, "burnin_dra_driver_version"),
        # The cleanup entry point's own variables, and the grace of the reads.
        ({"burnin_cleanup_extra_kinds": [{"kind": "ConfigMap"}]}, "burnin_cleanup_extra_kinds[0].api_version"),
        ({"burnin_cleanup_extra_kinds": [{"api_version": "v1", "kind": "ConfigMap", "name": "x"}]}, "burnin_cleanup_extra_kinds[0]"),
        ({"burnin_cleanup_all_runs": "maybe"}, "burnin_cleanup_all_runs"),
        ({"burnin_unreachable_grace": -1}, "burnin_unreachable_grace"),
    ],
)
def test_role_vars_refuse_naming_the_users_variable(given, field):
    message = refused(field, role_vars.check_role_vars, given)
    assert "burnin__" not in message and "Traceback" not in message


def test_role_vars_parse_survey_text():
    out = role_vars.check_role_vars(
        {
            "burnin_nodes": "4",
            "burnin_wait": "false",
            "burnin_volumes": '[{"name": "data"}]',
            "burnin_env": "NCCL_DEBUG=WARN",
            "burnin_report_formats": "json\nhtml",
            "burnin_mlnx_per_node": "",
        }
    )
    assert out["burnin_nodes"] == 4 and out["burnin_wait"] is False and out["burnin_volumes"] == [{"name": "data"}]
    assert out["burnin_env"] == [{"name": "NCCL_DEBUG", "value": "WARN"}] and out["burnin_report_formats"] == ["json", "html"]
    assert out["burnin_mlnx_per_node"] is None


def test_history_variables_parse_survey_text():
    out = role_vars.check_role_vars({"burnin_regression_percent": " 12.5", "burnin_baseline": None})
    assert out == {"burnin_regression_percent": 12.5, "burnin_baseline": ""}
    assert role_vars.check_role_vars({"burnin_regression_percent": 0})["burnin_regression_percent"] == 0.0


def test_every_checked_variable_is_documented_in_the_argument_specs():
    assert set(role_vars.CHECKS) <= set(role_vars.known_names())


def test_the_role_defaults_pass():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import COLLECTION_ROOT, read_yaml_file

    role_defaults = read_yaml_file(COLLECTION_ROOT + "/roles/burnin/defaults/main.yml", "defaults")
    role_vars.check_role_vars(role_defaults)


# --- Azure's NIC resource without Node objects (README deviation 14) ------------------------------------------------
@pytest.mark.parametrize("arch, count", [("h100", 8), ("h200", 8), ("gb200", 4), ("gb300", 4)])
def test_azure_planned_without_nodes_requests_the_catalogue_rdma_ib(arch, count):
    counts = gpu_defaults(arch, "azure")  # what roles/burnin/tasks/plan.yml passes, as playbooks/render.yml runs it
    out = plan(platform="azure", gpu_architecture=arch, gpus_per_node=counts["gpus_per_node"], mlnx_per_node=counts["mlnx_per_node"])
    runtime = [obj for obj in out["objects"] if obj["kind"] == "TrainingRuntime"][0]
    worker = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert worker["resources"]["limits"].get("rdma/ib") == count
    assert "nvidia.com/mlnxnics" not in worker["resources"]["limits"]


@pytest.mark.parametrize(
    "given, field",
    [
        (
            {"burnin_workload": "nccl-all-reduce", "burnin_workload_params": {"timeout": 0}},
            "burnin_workload_params (the trainer of workload nccl-all-reduce).timeout",
        ),
        ({"burnin_workload": "nccl-all-reduce", "burnin_gpu_architecture": "gb200"}, "burnin_workload_params"),
        ({"burnin_workload": "nccl-all-reduce", "burnin_framework": "torch"}, "burnin_framework"),
    ],
)
def test_role_vars_render_the_workload_first(given, field):
    refused(field, role_vars.check_role_vars, given)


def test_a_dcgm_level_outside_1_to_4_is_refused_before_any_cluster_naming_the_parameter():
    with pytest.raises(ConfigError) as err:
        role_vars.check_role_vars({"burnin_workload": "dcgm-diag", "burnin_workload_params": {"level": 7}})
    assert err.value.field == "burnin_workload_params"
    assert "level: the dcgm-diag workload's diagnostic level (dcgmi diag -r) must be 1, 2, 3 or 4, got 7" in str(err.value)
    checked = role_vars.check_role_vars({"burnin_workload": "dcgm-diag", "burnin_workload_params": {"level": 3, "privileged": True}})
    assert checked["burnin_workload"] == "dcgm-diag"
    with pytest.raises(ConfigError) as err:
        role_vars.check_role_vars({"burnin_workload": "dcgm-diag", "burnin_workload_params": {"level": 3}})
    assert err.value.field == "burnin_workload_params" and "privileged: level 3 runs DCGM's stress plugins" in str(err.value)


def test_a_custom_trainer_may_change_the_framework():
    role_vars.check_role_vars({"burnin_workload": "nccl-all-reduce", "burnin_framework": "exec", "burnin_trainer": {"command": ["true"]}})


@pytest.mark.parametrize(
    "value, ok",
    [
        ("us-docker.pkg.dev/x/tcpx@sha256:" + "a" * 64, True),
        ("ndv5-topo", True),
        ("default/rdma-vf", True),
        ("a: b", False),
        ("-x", False),
        ("{{ x }}", False),
        ("a,b", False),
        ("x #y", False),
        ("topo ", False),
    ],
)
def test_platform_var_strings_must_survive_the_yaml_templates(value, ok):
    args = {"azure_topology_configmap": value}
    if ok:
        inputs.check_platform_vars("platform_vars", args)
    else:
        refused("platform_vars.azure_topology_configmap", inputs.check_platform_vars, "platform_vars", args)


@pytest.mark.parametrize(
    "args, field",
    [
        ({"nodes": float("inf")}, "nodes"),
        ({"timeout": float("-inf")}, "timeout"),
        ({"overrides": [{"when": {"nodes": float("nan")}}]}, "overrides[0].when.nodes"),
    ],
)
def test_non_finite_numbers_are_refused_naming_the_option(args, field):
    # YAML's .inf and .nan: ansible-core's argument spec would raise OverflowError converting them to integers.
    with pytest.raises(ConfigError) as exc:
        validate.check_finite("", args)
    assert str(exc.value).startswith(field + ": must be a finite number")


def test_finite_numbers_pass():
    validate.check_finite("", {"nodes": 2, "ratio": 0.5, "list": [1e300, "inf"]})


NUMBER_SPEC = {"nodes": {"type": "int"}, "ratio": {"type": "float"}, "name": {"type": "str"}, "files": {"type": "list", "options": {"size": {"type": "int"}}}}


@pytest.mark.parametrize(
    "args, field",
    [
        ({"nodes": "inf"}, "nodes"),
        ({"nodes": "INFINITY"}, "nodes"),  # hypothesis's find: ansible-core's int conversion raised OverflowError
        ({"ratio": " -Infinity "}, "ratio"),
        ({"nodes": "nan"}, "nodes"),
        ({"nodes": "1e19"}, "nodes"),  # 20 digits: one past the bound
        ({"nodes": "1e999999999"}, "nodes"),  # an integer of a billion digits, had it been converted
        ({"files": [{"size": 1}, {"size": "1E+19"}]}, "files[1].size"),
    ],
)
def test_number_text_that_would_be_infinite_or_huge_is_refused_naming_the_option(args, field):
    with pytest.raises(ConfigError) as exc:
        validate.check_number_text(NUMBER_SPEC, args)
    assert str(exc.value).startswith(field + ": must be a finite number of at most 19 digits"), exc.value


def test_other_number_text_is_left_to_the_argument_spec():
    # At the bound (19 digits), ordinary text, text that is no number, a string option and a missing one.
    validate.check_number_text(NUMBER_SPEC, {"nodes": "9999999999999999999", "ratio": "1e18", "files": [{"size": " 12 "}, {"size": "x"}], "name": "inf"})
    validate.check_number_text(NUMBER_SPEC, {"nodes": "two"})
    validate.check_number_text(NUMBER_SPEC, {})


SECRET_ENV = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "registry", "key": ".dockerconfigjson"}}}]


def test_secret_reference_in_env_is_refused_with_the_reason():
    message = refused("env[0].valueFrom.secretKeyRef", plan, env=SECRET_ENV)
    assert "reads a Secret" in message and "registry credential" in message and "allow_secret_env" in message


def test_secret_reference_in_an_init_containers_env_is_refused():
    init = [{"name": "prep", "image": "busybox:1", "env": SECRET_ENV}]
    refused("init_containers[0].env[0].valueFrom.secretKeyRef", plan, init_containers=init)


def test_secret_reference_is_accepted_when_allowed():
    runtime = [obj for obj in plan(env=SECRET_ENV, allow_secret_env=True)["objects"] if obj["kind"] == "TrainingRuntime"][0]
    assert "secretKeyRef" in str(runtime)


def test_role_refuses_secret_env_unless_burnin_allow_secret_env():
    message = refused("burnin_env[0].valueFrom.secretKeyRef", role_vars.check_role_vars, {"burnin_env": SECRET_ENV})
    assert "burnin_allow_secret_env" in message
    checked = role_vars.check_role_vars({"burnin_env": SECRET_ENV, "burnin_allow_secret_env": "true"})
    assert checked["burnin_env"] == SECRET_ENV and checked["burnin_allow_secret_env"] is True


def test_configmap_reference_is_not_a_secret():
    env = [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]
    assert role_vars.check_role_vars({"burnin_env": env})["burnin_env"] == env


@pytest.mark.parametrize("env", [[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}], "A=1\nA=2"])
def test_duplicate_env_names_are_refused_naming_the_first(env):
    message = refused("burnin_env[1].name", role_vars.check_role_vars, {"burnin_env": env})
    assert "burnin_env[0]" in message


def test_duplicate_env_names_are_refused_by_training_runtime():
    refused("env[1].name", plan, env=[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}])


def test_null_env_value_is_refused():
    refused("burnin_env[0].value", role_vars.check_role_vars, {"burnin_env": [{"name": "A", "value": None}]})


def test_huge_env_list_is_refused_naming_the_limit():
    env = [{"name": "V%d" % index, "value": "x"} for index in range(validate.ENV_MAX + 1)]
    message = refused("burnin_env", role_vars.check_role_vars, {"burnin_env": env})
    assert "at most %d" % validate.ENV_MAX in message
    assert role_vars.check_role_vars({"burnin_env": env[: validate.ENV_MAX]})


# --- issue 25: the last inputs refused before any API call ------------------------------------------------------------
@pytest.mark.parametrize(
    "workload, params, field",
    [
        ("dcgm-diag", {"levle": 3}, "burnin_workload_params.levle"),
        ("dcgm-diag", {"level": 2, "max_bytes": "8G"}, "burnin_workload_params.max_bytes"),
        ("nccl-all-reduce", {"level": 3}, "burnin_workload_params.level"),
        ("nccl-all-reduce", {"collective": "all_gather"}, "burnin_workload_params.collective"),
        ("nccl-all-reduce", {"gpus_per_rank": 8}, "burnin_workload_params.gpus_per_rank"),
        ("torch-smoke", {"lib": "x"}, "burnin_workload_params.lib"),
        ("exec-example", {"nodes": 4}, "burnin_workload_params.nodes"),
    ],
)
def test_a_workload_parameter_the_workload_does_not_have_is_refused_naming_its_parameters(workload, params, field):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog

    message = refused(field, role_vars.check_role_vars, {"burnin_workload": workload, "burnin_workload_params": params})
    assert "is not a parameter of workload %s; its parameters: %s" % (workload, ", ".join(workload_catalog.workload_parameters(workload))) in message
    # The catalogue's own render refuses it too (the burnin_workload filter, role_plan), naming the parameter.
    data = dict(params, nodes=2, gpus_per_node=8, platform="aws", gpu_architecture="h100")
    if field.split(".", 1)[1] != "nodes":
        refused(field.split(".", 1)[1], workload_catalog.render_workload, workload, data)


def test_each_workloads_parameters_are_those_its_template_documents():
    # Read from the templates (and the _lib/workloads fragments they include), not listed in Python: these are the
    # parameters templates/workloads/*.yaml and _lib/workloads/nccl-tests.yaml document.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog

    nccl = "image nccl_tests_dir min_bytes max_bytes step_factor iters warmup_iters check_iters timeout split_mask nccl_algo min_bw json_output extra_args env"
    node = "image nccl_tests_dir min_bytes max_bytes step_factor iters warmup_iters check_iters timeout json_output extra_args"
    expected = {
        "dcgm-diag": "image level timeout host privileged kernel_log",
        "exec-example": "image",
        "gpu-burn": "image level matrix_size seconds memory_percent copy_bytes copy_iters sibling_percent",
        "torch-smoke": "image size_bytes iters warmup_iters",
        "nccl-all-reduce": nccl,
        "nccl-all-gather": nccl,
        "nccl-all-reduce-node": node,
    }
    assert workload_catalog.available_workloads() == sorted(expected)
    for name, params in expected.items():
        assert workload_catalog.workload_parameters(name) == sorted(params.split()), name
    checked = role_vars.check_role_vars(
        {"burnin_workload": "dcgm-diag", "burnin_workload_params": {"level": 4, "privileged": True, "timeout": 99, "host": "h:1"}}
    )
    assert checked["burnin_workload_params"]["level"] == 4


@pytest.mark.parametrize("collective", ["all_redcue", "alltoall", "broadcast_perf", "*"])
def test_a_threshold_naming_a_collective_the_collection_does_not_run_is_refused(collective):
    record = {"collective": collective, "platform": "aws", "gpu_architecture": "h100", "pass": 100}
    message = refused("burnin_thresholds[1].collective", role_vars.check_role_vars, {"burnin_thresholds": [dict(record, collective="all_reduce"), record]})
    assert "allowed: all_gather, all_reduce" in message


def test_thresholds_for_the_collectives_the_catalogue_runs_pass():
    records = [{"collective": name, "pass": 100} for name in ("all_reduce", "all_gather", "all_gather_perf", "./build/all_reduce_perf")]
    assert role_vars.check_role_vars({"burnin_thresholds": records})["burnin_thresholds"] == records


# What the mutation run of validation/inputs.py (docs/mutation.md) found untested.


def test_a_platform_variable_error_is_named_under_the_users_field():
    with pytest.raises(ConfigError) as failed:
        inputs.check_platform_vars("burnin_platform_vars", {"gcp_rdma_mode": "bogus"})
    assert failed.value.field == "burnin_platform_vars.gcp_rdma_mode"
    assert str(failed.value) == "burnin_platform_vars.gcp_rdma_mode: must be one of multinetwork, dranet, got 'bogus'"


def test_an_orchestration_that_is_not_a_mapping_is_named():
    with pytest.raises(ConfigError) as failed:
        inputs.check_override_item("overrides[0]", {"when": {}, "orchestration": [1]})
    assert str(failed.value) == "overrides[0].orchestration: must be a mapping, got a list [1]"


def test_a_topology_without_a_key_is_allowed_and_a_bad_key_refused():
    item = {"when": {}, "orchestration": {"topology": {}}}
    assert inputs.check_override_item("overrides[0]", item) == item
    with pytest.raises(ConfigError) as failed:
        inputs.check_override_item("overrides[0]", {"when": {}, "orchestration": {"topology": {"topologyKey": "bad key!"}}})
    assert failed.value.field == "overrides[0].orchestration.topology.topologyKey"


@pytest.mark.parametrize("value", ["", None])
def test_the_quarantine_mode_must_be_given(value):
    with pytest.raises(ConfigError) as failed:
        role_vars.check_role_vars({"burnin_quarantine": value})
    assert failed.value.field == "burnin_quarantine"
    assert role_vars.check_role_vars({"burnin_quarantine": "cordon"})["burnin_quarantine"] == "cordon"


def test_extra_cleanup_kinds_take_api_version_and_kind_only():
    kinds = [{"api_version": "v1", "kind": "ConfigMap"}]
    assert role_vars.check_role_vars({"burnin_cleanup_extra_kinds": kinds})["burnin_cleanup_extra_kinds"] == kinds
    with pytest.raises(ConfigError) as failed:
        role_vars.check_role_vars({"burnin_cleanup_extra_kinds": [{"api_version": "v1", "kind": "ConfigMap", "name": "x"}]})
    assert str(failed.value).startswith("burnin_cleanup_extra_kinds[0]: has name; only api_version and kind are allowed")


def test_the_isolation_budget_starts_at_one_job_and_one_minute():
    assert role_vars.check_isolation_budget(1, 1) == (1, 1)
    for jobs, minutes, field in ((0, 30, "max_jobs"), (8, 0, "max_minutes")):
        with pytest.raises(ConfigError) as failed:
            role_vars.check_isolation_budget(jobs, minutes)
        assert failed.value.field == field


def test_the_log_tail_is_at_most_a_million_lines():
    assert role_vars.check_role_vars({"burnin_log_tail_lines": 1000000})["burnin_log_tail_lines"] == 1000000
    for value in (0, 1000001):
        with pytest.raises(ConfigError) as failed:
            role_vars.check_role_vars({"burnin_log_tail_lines": value})
        assert failed.value.field == "burnin_log_tail_lines"
