# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Property-based tests (Hypothesis) over every plugin's options and the role's variables: each input either renders
objects that validate against the CRD schemas (test_crd_schemas.py) or fails with a ConfigError naming a field (or
Ansible's argument-spec error), never another exception.

Profiles: ``ci`` (default, seconds) and ``long`` (``HYPOTHESIS_PROFILE=long``: 10,000 examples per test)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import re

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, example, given, settings, strategies as st  # noqa: E402

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # noqa: E402

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import argspec  # noqa: E402

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import defaults

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import nccl_env

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_vars

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import runtime

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.module_utils.validate import check_finite, check_number_text  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.module_utils import validate  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import COLLECTION_ROOT, read_yaml_file  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.overrides import build_overrides_with_sources  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload  # noqa: E402

import importlib.util  # noqa: E402

# The CRD validator of test_crd_schemas.py (a sibling test file, not a package module).
_SPEC = importlib.util.spec_from_file_location("crd_schemas", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_crd_schemas.py"))
crd = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(crd)

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("long", max_examples=10000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
HAVE_CRDS = crd.MANIFESTS is not None and os.path.isdir(crd.STAND_INS)

# Garbage of every type, and text at the edges of the grammars.
TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", " ", "a b", "A", "-a", "a" * 64, "5GB", "{{ lookup('pipe', 'id') }}", "aws,gcp", "v2.10", "1e3", "\n", "x: y", "[1]", "null", "0"]),
)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**40), max_value=2**40), st.floats(allow_nan=False), TEXT)
ANY = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)), max_leaves=8)
INTS = st.one_of(st.integers(min_value=-2, max_value=70), st.sampled_from([10**5, 10**5 + 1, 10**9, 2**31]), ANY)


_PARTS = {}


def maybe(good, bad=ANY):
    """Mostly well-formed values (7 in 8), sometimes garbage; options() takes the two parts apart again."""
    strategy = st.one_of(*([good] * 7 + [bad]))
    _PARTS[strategy] = (good, bad)
    return strategy


def pick(good, bad):
    return maybe(st.sampled_from(good), st.sampled_from(bad))


NAMES = st.sampled_from(["nccl", "a", "x-1", "data", "shm"])
WHEN = st.dictionaries(
    st.sampled_from(["platform", "gpuArchitecture", "instanceType", "framework", "workloadKind", "other"]),
    maybe(
        st.dictionaries(
            st.sampled_from(["equals", "in", "notIn", "like"]),
            maybe(
                st.one_of(st.sampled_from(["aws", "azure", "h100", "mpi", "TrainJob"]), st.lists(st.sampled_from(["aws", "gcp", "h100", "torch"]), max_size=2))
            ),
            max_size=2,
        )
    ),
    max_size=2,
)
PATCH_OP = st.fixed_dictionaries(
    {
        "op": maybe(st.sampled_from(["add", "remove", "replace", "test", "move", "copy"])),
        "path": maybe(st.sampled_from(["/spec/workload/trainJob/suspend", "/spec/workload", "/spec", "/spec/workload/trainJob/trainer", "", "/x/y"])),
    },
    optional={"value": maybe(st.booleans()), "from": st.sampled_from(["/spec", "/nope"])},
)
OBJECT = st.fixed_dictionaries(
    {
        "apiVersion": maybe(st.just("v1")),
        "kind": maybe(st.just("ConfigMap")),
        "metadata": maybe(st.fixed_dictionaries({"name": maybe(NAMES)}, optional={"labels": maybe(st.dictionaries(NAMES, NAMES, max_size=2))})),
    },
    optional={"data": maybe(st.dictionaries(NAMES, NAMES, max_size=2))},
)
OVERRIDE = st.fixed_dictionaries(
    {"when": maybe(WHEN)},
    optional={
        "jobTemplate": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "spec": maybe(
                        st.fixed_dictionaries(
                            {},
                            optional={
                                "workload": maybe(
                                    st.fixed_dictionaries(
                                        {},
                                        optional={
                                            "trainJob": maybe(
                                                st.fixed_dictionaries(
                                                    {},
                                                    optional={
                                                        "suspend": st.booleans(),
                                                        "trainer": maybe(st.fixed_dictionaries({}, optional={"numNodes": st.integers(1, 4)})),
                                                    },
                                                )
                                            )
                                        },
                                    )
                                )
                            },
                        )
                    )
                },
            )
        ),
        "jobTemplatePatch": maybe(st.lists(maybe(PATCH_OP), max_size=2)),
        "dependencies": maybe(st.lists(maybe(OBJECT), max_size=2)),
        "orchestration": maybe(
            st.fixed_dictionaries({}, optional={"topology": maybe(st.fixed_dictionaries({"topologyKey": maybe(st.just("kubernetes.io/hostname"))}))})
        ),
        "preCommand": maybe(st.lists(st.sampled_from(["echo hi", "ulimit -l unlimited"]), max_size=2)),
        "mpiArgs": maybe(st.lists(st.sampled_from(["-x", "A=1"]), max_size=2)),
        "preComand": st.just([]),
    },
)
ENV = st.lists(
    maybe(st.fixed_dictionaries({"name": maybe(st.sampled_from(["NCCL_DEBUG", "A_B", "a.b-c"]), st.sampled_from(["1X", "A=B", ""])), "value": maybe(TEXT)})),
    max_size=3,
)
RESOURCE_NAMES = st.sampled_from(["cpu", "memory", "hugepages-2Mi", "nvidia.com/gpu", "bad name"])
RESOURCES = st.fixed_dictionaries(
    {}, optional={"limits": maybe(st.dictionaries(RESOURCE_NAMES, maybe(st.sampled_from(["1", "2Gi", "500m", "5GB", 4])), max_size=2))}
)
NODE = st.fixed_dictionaries(
    {},
    optional={
        "metadata": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "labels": maybe(
                        st.dictionaries(
                            st.sampled_from(["node.kubernetes.io/instance-type"]), maybe(st.sampled_from(["Standard_ND96isr_H100_v5", "p5.48xlarge"]))
                        )
                    )
                },
            )
        ),
        "status": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "allocatable": maybe(
                        st.dictionaries(st.sampled_from(["nvidia.com/gpu", "rdma/ib", "vpc.amazonaws.com/efa"]), maybe(st.sampled_from(["8", 4, "x"])))
                    )
                },
            )
        ),
    },
)

RUNTIME = {
    "entry_name": pick(["nccl", "torch-smoke", "a" * 52], ["Nccl", "a" * 53, "nccl_1"]),
    "image": pick(["busybox", "nvcr.io/nvidia/pytorch:26.01-py3"], ["a b", "Upper:1", "{{ lookup('pipe', 'id') }}"]),
    "framework": maybe(st.sampled_from(["torch", "mpi", "exec"])),
    "nodes": maybe(st.integers(1, 4), INTS),
    "gpus_per_node": maybe(st.integers(0, 8), INTS),
    "env": maybe(ENV),
    "volumes": maybe(st.lists(st.fixed_dictionaries({"name": maybe(NAMES), "emptyDir": st.just({})}), max_size=2)),
    "volume_mounts": maybe(st.lists(st.fixed_dictionaries({"name": maybe(NAMES), "mountPath": pick(["/data", "/mnt/x"], ["a:b", ""])}), max_size=2)),
    "init_containers": maybe(st.lists(st.fixed_dictionaries({"name": maybe(NAMES), "image": maybe(st.just("busybox"))}), max_size=1)),
    "resources": maybe(RESOURCES),
    "image_pull_secrets": maybe(st.lists(st.fixed_dictionaries({"name": maybe(NAMES)}), max_size=2)),
    "trainer_version": maybe(
        st.sampled_from(["v2.0", "v2.1", "v2.2.1", "v2.3", "2.3"]), st.one_of(st.sampled_from(["2.10", "v9", "v2.4"]), st.floats(0, 3), ANY)
    ),
}
PLATFORMS = st.sampled_from(["aws", "gcp", "azure", "oci", "coreweave", "nebius", "onprem", "togetherai", "mistral", "unknown"])
OVERRIDE_OPTS = {
    "entry_name": RUNTIME["entry_name"],
    "nodes": RUNTIME["nodes"],
    "gpus_per_node": RUNTIME["gpus_per_node"],
    "mlnx_per_node": maybe(st.integers(0, 8), INTS),
    "enable_mnnvl": maybe(st.booleans()),
    "framework": RUNTIME["framework"],
    "extended_platforms": maybe(st.booleans()),
    "server_version": pick(["v1.34.1", "1.33", "v1.32.0-gke.1", "v1.31.0"], ["x", "1", "v1"]),
    "rct_api_version": pick(["v1", "v1beta2", "v1beta1"], ["v2", "v1alpha3"]),
    "dra_driver_version": pick(["v25.8.0", "25.3.0", "0.4.0"], ["new"]),
    "efa_per_node": maybe(st.integers(0, 32), INTS),
    "rdma_resource": pick(["rdma/ib", "nvidia.com/hostdev"], ["ib", "rdma ib", "/x"]),
    "rdma_per_node": maybe(st.integers(0, 8), INTS),
    "platform_vars": maybe(
        st.dictionaries(
            st.sampled_from(["azure_topology_configmap", "azure_sharp", "gcp_rdma_mode", "aws_hugepages_2mi", "nope"]),
            maybe(st.sampled_from(["topo", True, "dranet", "2Gi"]), ANY),
            max_size=2,
        )
    ),
}
PLAN = dict(RUNTIME, **OVERRIDE_OPTS)
PLAN.update(
    {
        "namespace": pick(["burnin", "gpufleet-burnin"], ["Burn In", "-x", "a" * 64]),
        "run_id": pick(["r1", "20260101-000000"], ["R", "r_1", "a" * 60]),
        "platform": maybe(PLATFORMS),
        "gpu_architecture": pick(["h100", "h200", "b200", "gb200", "gb300", "unknown"], ["h1000", "H100", ""]),
        "trainer": maybe(
            st.one_of(
                st.fixed_dictionaries(
                    {"binary": st.just("/bin/x")}, optional={"args": maybe(st.lists(TEXT, max_size=2)), "timeout": maybe(st.integers(1, 100), INTS)}
                ),
                st.fixed_dictionaries({"script": maybe(st.just("train.py"))}),
                st.fixed_dictionaries({"command": maybe(st.just(["true"]))}),
            )
        ),
        "overrides": maybe(st.lists(maybe(OVERRIDE), max_size=3)),
        "instance_type": pick(["p5.48xlarge", "Standard_ND96isr_H100_v5", "a3-megagpu-8g", "gpu-h200-sxm"], ["bad type", "p5.48xlarg"]),
        "cluster_nodes": maybe(st.lists(maybe(NODE), max_size=2)),
    }
)


def options(table, required):
    """Options of a plugin, in three equal shares: every option well-formed (nested values still sometimes not), one
    option garbage, or each option garbage 1 in 8."""

    def build(values):
        return st.fixed_dictionaries(
            dict((key, values[key]) for key in required), optional=dict((key, value) for key, value in values.items() if key not in required)
        )

    good = dict((key, _PARTS.get(value, (value, ANY))[0]) for key, value in table.items())
    one_bad = st.sampled_from(sorted(table)).flatmap(lambda key: build(dict(good, **{key: _PARTS.get(table[key], (None, ANY))[1]})))
    return st.one_of(build(good), one_bad, build(table))


def through_argspec(spec, args):
    """Ansible's own argument-spec validation and conversion, as the action plugins run it first."""
    try:
        # The plugins refuse non-finite numbers before ansible-core's int conversion, which raises OverflowError on them.
        check_finite("", args)
        check_number_text(spec, args)
    except ConfigError:
        event("refused as not finite")
        return None
    result = ArgumentSpecValidator(spec).validate(copy.deepcopy(args))
    if result.error_messages:
        event("refused by the argument spec")
        return None
    return result.validated_parameters


def assert_valid(objects, trainer_version=None):
    """Valid against the Trainer v2.3 CRDs; for releases before v2.2 the one field they still have is left out
    (mlPolicy.torch.numProcPerNode, README deviation 1)."""
    if not HAVE_CRDS:
        return
    event("rendered and valid against the CRDs")
    for obj in objects:
        if (
            (obj["apiVersion"], obj["kind"]) not in crd.CRD_FILES
            and obj["kind"] not in ("ResourceClaimTemplate", "ConfigMap")
            or obj["kind"] == "ConfigMap"
            and "data" not in obj
        ):
            # A user's dependency of a kind without a schema here (or a ConfigMap without data, which the hand check
            # of test_crd_schemas.py does not take): the object checks of k8s_apply.
            inputs.check_apply_options({"objects": [obj], "field_manager": "m"})
            continue
        if obj["kind"] == "TrainingRuntime" and runtime.parse_trainer_version(trainer_version or "v2.3") < (2, 2):
            obj = copy.deepcopy(obj)
            ((obj["spec"]["mlPolicy"].get("torch") or {}).pop("numProcPerNode", None))
        assert not crd.errors_of(obj), (obj["kind"], crd.errors_of(obj)[:3])


def refused_cleanly(call, *args):
    """The call's result, or None when it refused with a ConfigError naming a field (counted per field, shown by
    --hypothesis-show-statistics). Any other exception fails the test."""
    try:
        return call(*args)
    except ConfigError as exc:
        assert exc.field and "Traceback" not in str(exc)
        event("refused: %s" % re.sub(r"\[[^]]*\]", "[]", exc.field.split(".")[0]))
        return None


@given(options(RUNTIME, ("entry_name", "image", "gpus_per_node")))
def test_training_runtime(args):
    args = through_argspec(argspec.training_runtime_spec(), args)
    if args is not None and refused_cleanly(inputs.check_runtime_options, args) is not None:
        assert_valid([runtime.build_runtime(args["framework"], args)], args["trainer_version"])


@given(options(dict(OVERRIDE_OPTS, platform=maybe(PLATFORMS)), ("entry_name", "gpus_per_node")))
# Found here (2026-12-07): text ansible-core's int conversion makes infinite raised OverflowError (validate.check_number_text).
@example({"entry_name": "nccl", "gpus_per_node": "INFINITY"})
def test_platform_overrides(args):
    args = through_argspec(argspec.platform_overrides_spec(), args)
    if args is not None and refused_cleanly(inputs.check_override_options, args) is not None:
        if refused_cleanly(build_overrides_with_sources, args) is not None:  # only "DRA needs a newer server" remains
            event("rendered")


TRAINERS = {"mpi": {"binary": "/usr/local/bin/all_reduce_perf", "args": ["-b", "8"]}, "torch": {"script": "train.py"}, "exec": {"command": ["sleep", "1"]}}


def _fitting_trainer(pair):
    """Half the plans get the trainer of their framework, so most well-formed plans render."""
    args, fit = pair
    framework = args.get("framework", "torch")
    if fit and isinstance(framework, str) and framework in TRAINERS and isinstance(args.get("trainer"), dict):
        return dict(args, trainer=dict(TRAINERS[framework]))
    return args


@given(
    st.tuples(options(PLAN, ("entry_name", "image", "gpus_per_node", "namespace", "run_id", "platform", "gpu_architecture", "trainer")), st.booleans()).map(
        _fitting_trainer
    )
)
def test_workload_plan(args):
    args = through_argspec(argspec.workload_plan_spec(), args)
    if args is None or refused_cleanly(inputs.check_plan_options, args) is None:
        return
    facts = {"platform": args.pop("platform"), "gpuArchitecture": args.pop("gpu_architecture")}
    out = refused_cleanly(plan_workload, args, facts)
    if out is not None:
        assert_valid(out["objects"], args["trainer_version"])


def _namespaced(obj):
    if isinstance(obj.get("metadata"), dict):
        return dict(obj, metadata=dict(obj["metadata"], namespace="n"))
    return obj


APPLY = {
    "objects": maybe(st.lists(maybe(OBJECT.map(_namespaced)), max_size=3)),
    "field_manager": pick(["gpufleet.burnin", "m"], ["", " ", "a" * 129, "a\tb"]),
    "force_conflicts": maybe(st.booleans()),
}


@given(options(APPLY, ("objects",)))
def test_k8s_apply(args):
    args = through_argspec(dict(argspec.K8S_APPLY_OWN), args)
    if args is not None and refused_cleanly(inputs.check_apply_options, args) is not None:
        event("accepted")


# The role's variables as an inventory or a survey gives them: the defaults, text as AWX sends it, and the plugins'
# well-formed values; garbage as options() mixes it in. burnin_nodse: a misspelling.
ROLE_DEFAULTS = read_yaml_file(os.path.join(COLLECTION_ROOT, "roles", "burnin", "defaults", "main.yml"), "role defaults")
ROLE_TABLE = dict((name, maybe(st.just(ROLE_DEFAULTS.get(name)), st.one_of(ANY, INTS))) for name in role_vars.CHECKS)
ROLE_TABLE.update(
    {
        "burnin_platform": maybe(PLATFORMS),
        "burnin_gpu_architecture": PLAN["gpu_architecture"],
        "burnin_nodes": pick([1, 2, "4"], [0, "0", 10**9]),
        "burnin_gpus_per_node": pick([None, "", 4, "8"], [-1, 65, "eight"]),
        "burnin_framework": pick(["", "mpi", "torch"], ["jax"]),
        "burnin_workload": pick(["nccl-all-reduce", "nccl-all-gather", "torch-smoke", "exec-example", "dcgm-diag"], ["nccl"]),
        # A parameter the workload does not have (a typo, another workload's, a data key) is refused, naming it.
        "burnin_workload_params": pick([{}, {"image": "nvcr.io/nvidia/pytorch:26.01-py3"}], [{"levle": 3}, {"gpus_per_rank": 8}, {"nodes": 4}, {"lib": 1}]),
        "burnin_env": pick(["", "NCCL_DEBUG=WARN", "A=1,B=2", '[{"name": "A", "value": "1"}]'], ["=x", '[{"value": 1}]']),
        "burnin_volumes": pick(["", "[]", '[{"name": "data", "emptyDir": {}}]'], ['["scratch"]', '[{"name": 1']),
        "burnin_overrides": maybe(st.lists(maybe(OVERRIDE), max_size=2)),
        "burnin_report_formats": pick(["json", "json,html", ["junit"]], ["pdf"]),
        "burnin_trainer_version": RUNTIME["trainer_version"],
        "burnin_image": RUNTIME["image"],
        "burnin_namespace": PLAN["namespace"],
        "burnin_run_id": pick(["", "r1"], ["R 1"]),
        "burnin_timeout": pick([60, "600"], [0, 10**7]),
        "burnin_thresholds": pick(
            ["", "[]", [{"collective": "all_reduce", "pass": 420, "warn": 380}]], ["{}", [{"pass": "fast"}], [{"collective": "all_redcue", "pass": 1}]]
        ),
        "burnin_resources": maybe(RESOURCES),
        "burnin_platform_vars": PLAN["platform_vars"],
        "burnin_instance_type": PLAN["instance_type"],
        "burnin_nodse": st.just(2),
    }
)
ROLE_VARS = options(ROLE_TABLE, ())


@given(ROLE_VARS)
# Found by hypothesis: the dcgm workload with a PyTorch burnin_image (burnin_image is the nccl-tests workloads' only).
@example({"burnin_workload": "dcgm-diag", "burnin_image": "nvcr.io/nvidia/pytorch:26.01-py3"})
def test_role_vars(given_vars):
    # The role passes gpufleet.burnin.burnin_start every burnin_* variable of the host: the role's defaults with the inventory's over them.
    checked = refused_cleanly(role_vars.check_role_vars, dict(ROLE_DEFAULTS, **given_vars))
    if checked is None:
        return
    event("accepted")
    # Then plan as each stage does, for the declared platform and GPU: what the check accepted must
    # plan (a later refusal would come after cluster_detect has contacted the cluster).
    values = checked
    platform, arch = values["burnin_platform"] or "unknown", values["burnin_gpu_architecture"] or "unknown"
    counts = defaults.gpu_defaults(arch, platform)
    gpus = counts["gpus_per_node"] if values["burnin_gpus_per_node"] is None else values["burnin_gpus_per_node"]
    # burnin_image is the nccl-tests workloads' image only, as the role plans (burnin/role_plan.py).
    params = workload_catalog.with_burnin_image(values["burnin_workload"], values["burnin_workload_params"], values["burnin_image"])
    data = dict(params, nodes=values["burnin_nodes"], gpus_per_node=gpus, platform=platform, gpu_architecture=arch)
    workload = workload_catalog.render_workload(values["burnin_workload"], data)
    framework = values["burnin_framework"] or workload["framework"]
    args = {
        "entry_name": values["burnin_entry_name"],
        "image": workload["image"],
        "framework": framework,
        "nodes": values["burnin_nodes"],
        "gpus_per_node": gpus,
        "enable_mnnvl": values["burnin_enable_mnnvl"],
        "namespace": values["burnin_namespace"],
        "mlnx_per_node": counts["mlnx_per_node"] if values["burnin_mlnx_per_node"] is None else values["burnin_mlnx_per_node"],
        "env": nccl_env.merge_env(workload.get("env") or [], values["burnin_env"]),
        "volumes": values["burnin_volumes"],
        "volume_mounts": values["burnin_volume_mounts"],
        "init_containers": values["burnin_init_containers"],
        "resources": values["burnin_resources"] or None,
        "image_pull_secrets": values["burnin_image_pull_secrets"],
        "trainer_version": values["burnin_trainer_version"],
        "run_id": values["burnin_run_id"] or "20260101-000000",
        "platform": platform,
        "gpu_architecture": arch,
        "trainer": values["burnin_trainer"] or workload["trainer"],
        "overrides": values["burnin_overrides"],
        "extended_platforms": values["burnin_extended_platforms"],
        "instance_type": values["burnin_instance_type"] or None,
        "platform_vars": values["burnin_platform_vars"],
        "server_version": values["burnin_server_version"] or None,
        "rct_api_version": values["burnin_rct_api_version"] or None,
        "dra_driver_version": values["burnin_dra_driver_version"] or None,
        "efa_per_node": values["burnin_efa_per_node"],
        "rdma_resource": values["burnin_rdma_resource"] or None,
        "rdma_per_node": values["burnin_rdma_per_node"],
    }
    try:
        inputs.check_plan_options(args)
    except ConfigError as exc:
        # Only what spans two variables may still be refused here, and it names a plugin option the role sets.
        assert exc.field.split("[")[0].split(".")[0] in ("run_id", "server_version"), str(exc)
        event("accepted, refused by workload_plan: %s" % exc.field)
        return
    facts = {"platform": args.pop("platform"), "gpuArchitecture": args.pop("gpu_architecture")}
    out = refused_cleanly(plan_workload, args, facts)
    if out is not None:
        assert_valid(out["objects"], args["trainer_version"])


# --- YAML aliases and deep nesting (validate.check_structure) -------------------------------------------------------
# Loaded by Ansible's own YAML loader, as an inventory or `-e @file` is: aliases arrive as one object referenced many
# times, so the bound must count them without walking the expansion (10 levels of 10 aliases: 10**10 values).
ALIAS_BOMB = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    "a%d: &a%d [%s]\n" % (level, level, ", ".join(["*a%d" % (level - 1)] * 10)) for level in range(1, 10)
)


def ansible_yaml(text):
    # PyYAML's safe loader, on which Ansible's AnsibleLoader is built: an alias is the anchored object itself. (The
    # controller's ansible.parsing is not importable in ansible-test's module_utils unit context.)
    return yaml.safe_load(text)


@pytest.mark.parametrize(
    "variable", ["burnin_workload_params", "burnin_trainer", "burnin_platform_vars", "burnin_overrides", "burnin_thresholds", "burnin_env"]
)
def test_an_alias_bomb_is_refused_naming_the_variable_and_the_limit(variable):
    bomb = ansible_yaml(ALIAS_BOMB)
    with pytest.raises(ConfigError) as info:
        role_vars.check_role_vars({variable: bomb if variable != "burnin_env" else [bomb]})
    assert info.value.field == variable
    assert "at most %d" % validate.ROLE_VAR_MAX_VALUES in str(info.value)


def deep(levels, leaf="x"):
    value = leaf
    for _level in range(levels):
        value = {"k": value}
    return value


@pytest.mark.parametrize("levels", [validate.STRUCTURE_MAX_DEPTH + 1, 5000])
def test_deep_nesting_is_refused_naming_the_limit_without_a_recursion_error(levels):
    with pytest.raises(ConfigError) as info:
        role_vars.check_role_vars({"burnin_workload_params": deep(levels)})
    assert info.value.field == "burnin_workload_params" and "at most %d" % validate.STRUCTURE_MAX_DEPTH in str(info.value)


def test_nesting_within_the_limit_passes_the_bound():
    assert validate.check_structure("burnin_trainer", deep(validate.STRUCTURE_MAX_DEPTH)) is not None


def test_an_alias_reached_again_deeper_counts_its_height():
    shared = deep(20)
    value = {"shallow": shared, "deep": deep(15, shared)}
    with pytest.raises(ConfigError, match="deeper than"):
        validate.check_structure("burnin_platform_vars", value)


def test_a_recursive_alias_is_refused():
    loop = []
    loop.append(loop)
    with pytest.raises(ConfigError, match="contains itself"):
        role_vars.check_role_vars({"burnin_workload_params": {"a": loop}})


def test_plugin_options_are_bounded_too():
    with pytest.raises(ConfigError) as info:
        inputs.check_runtime_options({"entry_name": "nccl", "image": "i:1", "gpus_per_node": 8, "env": [ansible_yaml(ALIAS_BOMB)]})
    assert info.value.field == "env"
