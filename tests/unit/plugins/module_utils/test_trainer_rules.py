# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The render's rules per Kubeflow Trainer release (_lib/trainer-versions.yaml, rendering/trainer_rules.py): the
reserved env variables, the replicatedJob name limit and the TrainJob's image on the MPI jobs of v2.4."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import runtime, trainer_rules
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
PRTE = ("PRTE_MCA_prte_default_hostfile", "PRTE_MCA_prte_keep_fqdn_hostnames", "PRTE_MCA_prte_set_default_slots", "PRTE_MCA_plm_ssh_args")
ORTE = ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args", "OMPI_MCA_orte_keep_fqdn_hostnames", "OMPI_MCA_orte_set_default_slots")
TORCHRUN = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")
MPI = dict(
    entry_name="nccl",
    namespace="burnin",
    image="img",
    framework="mpi",
    nodes=2,
    gpus_per_node=8,
    mlnx_per_node=8,
    run_id="r1",
    trainer={"binary": "/opt/all_reduce_perf", "args": ["-b", "8"]},
)
TORCH = dict(MPI, framework="torch", trainer={"script": "train.py"})
FACTS = {"platform": "aws", "gpuArchitecture": "h100"}


def runtime_patch(job, container):
    """A user override whose dependency merges into the runtime (by name) a replicatedJob JOB with CONTAINER."""
    spec = {"template": {"spec": {"template": {"spec": {"containers": [container]}}}}}
    dep = {
        "apiVersion": runtime.API_VERSION,
        "kind": "TrainingRuntime",
        "metadata": {"name": "nccl-runtime"},
        "spec": {"template": {"spec": {"replicatedJobs": [dict({"name": job}, **spec)]}}},
    }
    return [{"when": {}, "dependencies": [dep]}]


def test_the_data_names_the_releases_the_render_knows_and_only_the_fleets_is_tested_on_a_controller():
    releases = trainer_rules.load_trainer_versions()
    assert tuple(releases) == runtime.TRAINER_RELEASES
    with open(os.path.join(ROOT, "tests", "fleet", "components.env")) as fh:
        fleet = re.search(r"^TRAINER_VERSION=v?(\d+\.\d+)\.\d+", fh.read(), re.M)
    assert fleet, "tests/fleet/components.env names no TRAINER_VERSION"
    assert [r for r, rules in releases.items() if rules["tested"] == "controller"] == ["v" + fleet.group(1)]
    assert releases["v2.4"]["tested"] == "rule"


@pytest.mark.parametrize("name", PRTE + ORTE)
@pytest.mark.parametrize("version", ["v2.4", "v2.4.0", "2.4.1"])
def test_v24_refuses_the_mpi_plugins_variables_in_user_env_with_the_reason(name, version):
    env = [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": name, "value": "x"}]
    with pytest.raises(ConfigError) as err:
        runtime.build_runtime("mpi", dict(MPI, env=env, trainer_version=version))
    assert err.value.field == "env[1].name"
    message = str(err.value)
    assert name in message and "Kubeflow Trainer v2.4" in message and "MPI plugin sets it on the launcher" in message


def test_open_mpi_5_names_are_reserved_from_v24_and_the_orte_ones_from_v23():
    for name in PRTE:
        runtime.build_runtime("mpi", dict(MPI, env=[{"name": name, "value": "x"}], trainer_version="v2.3"))
    for name in ORTE:
        runtime.build_runtime("mpi", dict(MPI, env=[{"name": name, "value": "x"}], trainer_version="v2.2"))
        with pytest.raises(ConfigError):
            runtime.build_runtime("mpi", dict(MPI, env=[{"name": name, "value": "x"}], trainer_version="v2.3"))


@pytest.mark.parametrize("framework", ["torch", "exec"])
@pytest.mark.parametrize("version", runtime.TRAINER_RELEASES)
def test_torchrun_variables_are_refused_for_the_torch_mlpolicy_on_every_release(framework, version):
    for name in TORCHRUN:
        with pytest.raises(ConfigError, match="torch plugin sets it for torchrun"):
            runtime.build_runtime(framework, dict(TORCH, env=[{"name": name, "value": "1"}], trainer_version=version))
    # MPI's plugin does not set them, nor does torch's set the MPI ones.
    runtime.build_runtime("mpi", dict(MPI, env=[{"name": "PET_NNODES", "value": "1"}], trainer_version=version))
    runtime.build_runtime(framework, dict(TORCH, env=[{"name": PRTE[0], "value": "1"}], trainer_version=version))


def test_the_plan_refuses_reserved_names_in_the_trainjobs_env_from_an_override():
    override = [
        {"when": {}, "jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": {"env": [{"name": "PRTE_MCA_plm_ssh_args", "value": "-p 2222"}]}}}}}}
    ]
    plan_workload(dict(MPI, overrides=override, trainer_version="v2.3"), FACTS)
    with pytest.raises(ConfigError) as err:
        plan_workload(dict(MPI, overrides=override, trainer_version="v2.4"), FACTS)
    assert err.value.field.startswith("spec.trainer.env[") and "PRTE_MCA_plm_ssh_args" in str(err.value)


def test_v24_limits_replicated_job_names_to_20_characters():
    long_name, fits = "a-sidecar-job-of-21ch", "a-sidecar-job-of-20c"
    assert (len(long_name), len(fits)) == (21, 20)
    container = {"name": "side", "image": "img"}
    plan = plan_workload(dict(MPI, overrides=runtime_patch(long_name, container), trainer_version="v2.3"), FACTS)
    assert long_name in [j["name"] for j in plan["objects"][-2]["spec"]["template"]["spec"]["replicatedJobs"]]
    plan_workload(dict(MPI, overrides=runtime_patch(fits, container), trainer_version="v2.4"), FACTS)
    with pytest.raises(ConfigError) as err:
        plan_workload(dict(MPI, overrides=runtime_patch(long_name, container), trainer_version="v2.4"), FACTS)
    assert err.value.field == "spec.template.spec.replicatedJobs[2].name"
    assert "21 characters" in str(err.value) and "at most 20" in str(err.value)


def test_every_rendered_workload_keeps_within_the_v24_rules():
    """The collection's own runtimes (node, launcher) pass v2.4's rules on every platform the plan matrix renders."""
    planned = 0
    for facts in ({"platform": p, "gpuArchitecture": g} for p in ("aws", "gcp", "azure", "oci", "coreweave") for g in ("h100", "gb200")):
        for config in (MPI, TORCH, dict(TORCH, framework="exec", trainer={"command": ["true"]})):
            gpus = 4 if facts["gpuArchitecture"] == "gb200" else 8
            try:
                plan = plan_workload(dict(config, gpus_per_node=gpus, trainer_version="v2.4"), facts)
            except ConfigError as exc:
                assert "Trainer v2.4" not in str(exc), (facts, config["framework"], exc)
                continue
            names = [j["name"] for j in plan["objects"][-2]["spec"]["template"]["spec"]["replicatedJobs"]]
            assert names and all(len(n) <= 20 for n in names)
            planned += 1
    assert planned >= 20


def test_v24_sets_the_trainjobs_image_on_the_mpi_launcher_and_nodes_so_a_different_worker_image_is_refused():
    other = runtime_patch("node", {"name": "node", "image": "other-img"})
    # v2.3 sets it on the trainer-labelled launcher only: the workers keep their own image.
    plan = plan_workload(dict(MPI, overrides=other, trainer_version="v2.3"), FACTS)
    jobs = dict((j["name"], j) for j in plan["objects"][-2]["spec"]["template"]["spec"]["replicatedJobs"])
    assert jobs["node"]["template"]["spec"]["template"]["spec"]["containers"][0]["image"] == "other-img"
    with pytest.raises(ConfigError) as err:
        plan_workload(dict(MPI, overrides=other, trainer_version="v2.4"), FACTS)
    assert err.value.field == "spec.template.spec.replicatedJobs[0] (node)"
    assert "'other-img'" in str(err.value) and "TrainJob's image 'img'" in str(err.value) and "launcher and node" in str(err.value)
    # Same image everywhere (the collection's render): accepted, and the launcher runs the TrainJob's image.
    plan = plan_workload(dict(MPI, trainer_version="v2.4"), FACTS)
    for job in plan["objects"][-2]["spec"]["template"]["spec"]["replicatedJobs"]:
        assert [c["image"] for c in job["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == "node"] == ["img"]
    # A torch runtime is not concerned (only the trainer-labelled job gets the image on any release).
    plan_workload(dict(TORCH, overrides=other, trainer_version="v2.4"), FACTS)


def test_an_unknown_release_is_refused_naming_the_known_ones():
    with pytest.raises(ConfigError, match="v2.0, v2.1, v2.2, v2.3, v2.4"):
        trainer_rules.rules_for("v2.5")


@pytest.mark.parametrize(
    "text, problem",
    [
        ("releases: {}", "needs a mapping 'releases'"),
        ("releases: {v2.4: {tested: rule}}", "source must say where"),
        ("releases: {v2.4: {source: s, tested: maybe}}", "tested must be one of"),
        ("releases: {2.4: {source: s, tested: rule}}", "is not a release name"),
        ("releases: {v2.4: {source: s, tested: rule, replicated_job_name_max: 64}}", "from 1 to 63"),
        ("releases: {v2.4: {source: s, tested: rule, reserved_env: {mpi: {names: [A-B], reason: r}}}}", "env variable names"),
        ("releases: {v2.4: {source: s, tested: rule, reserved_env: {mpi: {names: [A]}}}}", "needs a reason"),
        ("releases: {v2.4: {source: s, tested: rule, limit: 3}}", "unknown keys limit"),
    ],
)
def test_a_malformed_data_file_is_refused_naming_the_key(tmp_path, text, problem):
    path = tmp_path / "trainer-versions.yaml"
    path.write_text(text)
    with pytest.raises(ParseError, match=re.escape(problem)):
        trainer_rules.load_trainer_versions(str(path))


# What the mutation run of rendering/trainer_rules.py (issue 47) left untested: each rule of the data file's check on
# both sides, the release names read, and check_env/check_runtime called directly on a data file of the test's own.
GOOD = "releases: {v2.4: {source: s, tested: rule%s}}"


def data_file(directory, text):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "trainer-versions.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("releases: [v2.4]", "needs a mapping 'releases'"),
        ("[1]", "needs a mapping 'releases'"),
        ("releases: {v2.4: [source]}", ": releases.v2.4 must be a mapping"),
        ("releases: {v2.4: {source: 3, tested: rule}}", "releases.v2.4.source must say where the rules were read"),
        ("releases: {v2.4: {source: ' ', tested: rule}}", "releases.v2.4.source must say where the rules were read"),
        ("releases: {v2.4: {source: s}}", "releases.v2.4.tested must be one of controller, rule"),
        ("releases: {v2.4.1: {source: s, tested: rule}}", ": releases.v2.4.1 is not a release name such as v2.3"),
        ("releases: {V2.4: {source: s, tested: rule}}", "is not a release name"),
        ("releases: {v2.4: {source: s, tested: rule, x: 1, a: 2}}", "releases.v2.4 has unknown keys a, x"),
        (GOOD % ", reserved_env: {exec: {names: [A], reason: r}}", "releases.v2.4.reserved_env.exec must be a plugin (torch, mpi)"),
        (GOOD % ", reserved_env: {mpi: {names: A, reason: r}}", "releases.v2.4.reserved_env.mpi must be a plugin"),
        (GOOD % ", reserved_env: {mpi: {names: [3], reason: r}}", "releases.v2.4.reserved_env.mpi must be a plugin"),
        (GOOD % ", reserved_env: {mpi: {names: [A, 1B], reason: r}}", "releases.v2.4.reserved_env.mpi must be a plugin"),
        (GOOD % ", reserved_env: {mpi: [A]}", "releases.v2.4.reserved_env.mpi must be a plugin"),
        (GOOD % ", reserved_env: {mpi: {names: [A], reason: ' '}}", "releases.v2.4.reserved_env.mpi needs a reason"),
        (GOOD % ", reserved_env: {mpi: {names: [A], reason: 1}}", "releases.v2.4.reserved_env.mpi needs a reason"),
        (GOOD % ", replicated_job_name_max: 0", "releases.v2.4.replicated_job_name_max must be an integer from 1 to 63"),
        (GOOD % ", replicated_job_name_max: true", "must be an integer from 1 to 63"),
        (GOOD % ", replicated_job_name_max: '20'", "must be an integer from 1 to 63"),
        (GOOD % ", trainjob_image_on: {jax: [node]}", "releases.v2.4.trainjob_image_on.jax must be a framework with a list of replicatedJob names"),
        (GOOD % ", trainjob_image_on: {mpi: node}", "releases.v2.4.trainjob_image_on.mpi must be a framework"),
        (GOOD % ", trainjob_image_on: {mpi: [node, 1]}", "releases.v2.4.trainjob_image_on.mpi must be a framework"),
    ],
)
def test_each_rule_of_the_data_file_is_refused_under_its_key(tmp_path, text, problem):
    path = data_file(tmp_path, text)
    with pytest.raises(ParseError) as err:
        trainer_rules.load_trainer_versions(path)
    assert str(err.value).startswith("Trainer versions %s" % path) and problem in str(err.value)


@pytest.mark.parametrize(
    "extra",
    [
        "",
        ", replicated_job_name_max: 1",
        ", replicated_job_name_max: 63",
        ", reserved_env: {torch: {names: [_A9, b], reason: r}, mpi: {names: [], reason: r}}",
        ", trainjob_image_on: {exec: [node], torch: [], mpi: [launcher]}",
        ", reserved_env: null, trainjob_image_on: null",
    ],
)
def test_the_data_files_rules_at_their_bounds_are_accepted(tmp_path, extra):
    releases = trainer_rules.load_trainer_versions(data_file(tmp_path, GOOD % extra))
    assert list(releases) == ["v2.4"] and releases["v2.4"]["source"] == "s"


def test_a_data_file_is_read_once_per_path(tmp_path):
    path = data_file(tmp_path, GOOD % "")
    first = trainer_rules.load_trainer_versions(path)
    (tmp_path / "trainer-versions.yaml").write_text("releases: {}")
    assert trainer_rules.load_trainer_versions(path) is first
    other = data_file(tmp_path / "other", "releases: {v2.4: {source: s, tested: controller}}")
    assert trainer_rules.load_trainer_versions(other)["v2.4"]["tested"] == "controller"


@pytest.mark.parametrize("version, release", [("v2.4", "v2.4"), ("2.4", "v2.4"), ("v2.4.1", "v2.4"), ("2.10.0", "v2.10"), ("v12.3", "v12.3")])
def test_a_release_is_the_major_and_minor_of_a_version(version, release):
    assert trainer_rules.release_of(version) == release


@pytest.mark.parametrize("version", [None, "", "v2", "2", "v2.4.1.2", "v2.4.x", "x2.4", "v2.4 ", "latest", 2])
def test_a_version_that_is_no_release_is_refused(version):
    with pytest.raises(ConfigError) as err:
        trainer_rules.release_of(version)
    assert err.value.field == "trainer_version"
    if version is not None:
        assert "got %r" % (version,) in str(err.value)
    else:
        assert "got None" in str(err.value)


def test_an_unknown_release_names_the_version_given(tmp_path):
    with pytest.raises(ConfigError) as err:
        trainer_rules.rules_for("2.5.1")
    assert err.value.field == "trainer_version" and "got '2.5.1'" in str(err.value) and "patch release" in str(err.value)
    assert trainer_rules.rules_for("v2.4.7")["replicated_job_name_max"] == 20


RESERVED = GOOD % ", reserved_env: {mpi: {names: [A, B], reason: set by the plugin}}, replicated_job_name_max: 5, trainjob_image_on: {mpi: [launcher]}"


def test_check_env_names_the_field_index_the_reason_and_every_reserved_name(tmp_path):
    path = data_file(tmp_path, RESERVED)
    env = [{"name": "C"}, "not a mapping", {"value": "no name"}, {"name": "B", "value": "1"}]
    with pytest.raises(ConfigError) as err:
        trainer_rules.check_env(env, "mpi", "2.4.3", field="spec.env", path=path)
    assert err.value.field == "spec.env[3].name"
    assert str(err.value) == "spec.env[3].name: B is reserved by Kubeflow Trainer v2.4 for framework mpi: set by the plugin (reserved there: A, B)"
    # Another framework, a framework of no plugin, no env: nothing is reserved.
    for framework, items in (("torch", env), ("jax", env), ("mpi", None), ("mpi", [])):
        assert trainer_rules.check_env(items, framework, "v2.4", path=path) is None


def runtime_of(*jobs):
    return {"spec": {"template": {"spec": {"replicatedJobs": list(jobs)}}}}


def job(name, *containers):
    return {"name": name, "template": {"spec": {"template": {"spec": {"containers": list(containers)}}}}}


def trainjob(image=None, env=None):
    trainer = {}
    if image is not None:
        trainer["image"] = image
    if env is not None:
        trainer["env"] = env
    return {"spec": {"trainer": trainer}}


def test_check_runtime_limits_names_at_the_releases_maximum_and_one_past(tmp_path):
    path = data_file(tmp_path, RESERVED)
    trainer_rules.check_runtime(runtime_of(job("abcde"), {"name": None}, {}), trainjob(), "mpi", "v2.4", path=path)
    with pytest.raises(ConfigError) as err:
        trainer_rules.check_runtime(runtime_of(job("abcde"), job("abcdef")), trainjob(), "mpi", "v2.4", path=path)
    assert err.value.field == "spec.template.spec.replicatedJobs[1].name"
    assert "'abcdef' has 6 characters: Kubeflow Trainer v2.4 allows at most 5" in str(err.value)


def test_check_runtime_defaults_to_the_dns_label_limit(tmp_path):
    path = data_file(tmp_path, GOOD % "")
    trainer_rules.check_runtime(runtime_of(job("a" * 63)), trainjob(), "mpi", "v2.4", path=path)
    with pytest.raises(ConfigError, match="64 characters"):
        trainer_rules.check_runtime(runtime_of(job("a" * 64)), trainjob(), "mpi", "v2.4", path=path)
    for empty in ({}, {"spec": None}, {"spec": {"template": {"spec": {}}}}):
        trainer_rules.check_runtime(empty, None, "mpi", "v2.4", path=path)


def test_check_runtime_refuses_reserved_names_in_the_trainjobs_env(tmp_path):
    path = data_file(tmp_path, RESERVED)
    with pytest.raises(ConfigError) as err:
        trainer_rules.check_runtime(runtime_of(), trainjob(env=[{"name": "A"}]), "mpi", "v2.4", path=path)
    assert err.value.field == "spec.trainer.env[0].name"


def test_check_runtime_refuses_another_image_only_on_the_trainer_container_of_the_listed_jobs(tmp_path):
    path = data_file(tmp_path, RESERVED.replace("replicated_job_name_max: 5", "replicated_job_name_max: 8"))
    listed = job("launcher", {"name": "node", "image": "img"}, {"name": "sidecar", "image": "other"}, {"name": "init", "image": "other"}, {"name": "node"})
    unlisted = job("node", {"name": "node", "image": "other"})
    trainer_rules.check_runtime(runtime_of(unlisted, listed), trainjob("img"), "mpi", "v2.4", path=path)
    # No TrainJob image, or a framework the release sets no image for: nothing to compare.
    bad = job("launcher", {"name": "node", "image": "other"})
    trainer_rules.check_runtime(runtime_of(bad), trainjob(), "mpi", "v2.4", path=path)
    trainer_rules.check_runtime(runtime_of(bad), trainjob("img"), "torch", "v2.4", path=path)
    trainer_rules.check_runtime(runtime_of(bad), trainjob("img"), "mpi", "v2.4", path=data_file(tmp_path / "plain", GOOD % ""))
    with pytest.raises(ConfigError) as err:
        trainer_rules.check_runtime(runtime_of(unlisted, listed, bad), trainjob("img"), "mpi", "2.4.0", path=path)
    assert err.value.field == "spec.template.spec.replicatedJobs[2] (launcher)"
    assert str(err.value) == (
        "spec.template.spec.replicatedJobs[2] (launcher): its node container runs 'other', but Kubeflow Trainer v2.4 sets the TrainJob's image 'img' "
        "on the launcher of framework mpi: give both the same image (image), or pin trainer_version to an earlier release"
    )


def test_the_trainer_container_is_found_by_name_in_a_runtime_read_from_json(tmp_path):
    """An override's runtime comes from YAML or JSON: its container names are new strings, not the module's literal."""
    path = data_file(tmp_path, RESERVED.replace("replicated_job_name_max: 5", "replicated_job_name_max: 8"))
    read = json.loads(json.dumps(runtime_of(job("launcher", {"name": "node", "image": "other"}))))
    with pytest.raises(ConfigError, match=r"replicatedJobs\[0\] \(launcher\): its node container runs 'other'"):
        trainer_rules.check_runtime(read, json.loads(json.dumps(trainjob("img"))), "mpi", "v2.4", path=path)
