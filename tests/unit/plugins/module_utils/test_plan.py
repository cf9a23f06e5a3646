# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import shlex

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload, wrap_pre_command
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import rank_env_args
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import plan as plan_mod, platform_catalog, templating

MPI = dict(
    entry_name="nccl",
    namespace="burnin",
    image="img",
    framework="mpi",
    nodes=2,
    gpus_per_node=4,
    mlnx_per_node=8,
    enable_mnnvl=True,
    run_id="r1",
    trainer={"binary": "/opt/all_reduce_perf", "args": ["-b", "8"], "mpi_args": ["--user"]},
)
TORCH = dict(
    entry_name="smoke",
    namespace="burnin",
    image="img",
    framework="torch",
    nodes=2,
    gpus_per_node=8,
    run_id="r2",
    trainer={"script": "train.py", "args": ["--steps", "10"]},
)


def kinds(plan):
    return [(obj["kind"], obj["metadata"]["name"]) for obj in plan["objects"]]


def node_pod(runtime):
    return runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def test_aws_gb300_mpi_plan():
    plan = plan_workload(MPI, {"platform": "aws", "gpuArchitecture": "gb300"})
    assert kinds(plan) == [
        ("ComputeDomain", "nccl-compute-domain"),
        ("ResourceClaimTemplate", "nccl-roce"),
        ("TrainingRuntime", "nccl-runtime"),
        ("TrainJob", "nccl-r1"),
    ]
    seed = "templates/overrides/workloadrun.yaml"
    assert [m["position"] for m in plan["matched"] if m["source"] == seed] == [1, 2, 5, 6, 8]
    # the platform layer adds the RoCE HCA entry of templates/overrides/platforms/aws.yaml
    assert [m["source"] for m in plan["matched"]][5:] == ["templates/overrides/platforms/aws.yaml"]
    assert plan["instance_type"] == "p6e-gb300.36xlarge" and plan["platform_data"]["instance_type_source"] == "default"
    assert plan["topology_key"] == "topology.k8s.aws/network-node-layer-1"
    runtime = plan["objects"][2]
    pod = node_pod(runtime)
    assert [c["name"] for c in pod["resourceClaims"]] == ["compute-domain", "roce-channel"]
    worker = pod["containers"][0]
    assert worker["resources"]["claims"] == [{"name": "compute-domain"}, {"name": "roce-channel"}]
    assert worker["resources"]["limits"] == {"nvidia.com/gpu": "4"} and worker["command"] == ["sh", "-c"]
    trainer = plan["objects"][3]["spec"]["trainer"]
    assert trainer["command"] == ["/bin/bash", "-c"] and len(trainer["args"]) == 1
    lines = trainer["args"][0].split("\n")
    assert lines[:4] == ["rm -rf /opt/amazon", "unset NCCL_NET_PLUGIN", "unset NCCL_TUNER_PLUGIN", "unset AWS_OFI_NCCL_VERSION"]
    argv = shlex.split(lines[4])
    assert argv[:4] == ["exec", "timeout", "3600", "mpirun"]
    assert argv[4:14] == [
        "-N",
        "4",
        "--allow-run-as-root",
        "--mca",
        "plm_rsh_args",
        "-o StrictHostKeyChecking=no -o ConnectionAttempts=10",
        "-x",
        "NCCL_DEBUG=INFO",
        "-x",
        "NCCL_MNNVL_ENABLE=1",
    ]
    # override mpiArgs come before the user's, then binary and args; a later override's args come first (the
    # platform layer's RoCE HCA, then the seed's T6).
    assert argv[14:18] == ["-x", "NCCL_IB_HCA=rocep", "-x", "NCCL_NET_PLUGIN=none"]
    # then the workers' env the line does not pass yet, and the image's paths by name (rank_env_args), before the binary
    binary_at = argv.index("/opt/all_reduce_perf")
    assert argv[binary_at:] == ["/opt/all_reduce_perf", "-b", "8"] and argv[argv.index("--user") + 1 : binary_at][-4:] == [
        "-x",
        "PATH",
        "-x",
        "LD_LIBRARY_PATH",
    ]
    forwarded = argv[argv.index("--user") + 1 : binary_at]
    assert "NCCL_SHM_DISABLE=1" in forwarded and "NCCL_DEBUG=INFO" not in forwarded
    assert plan["objects"][3]["metadata"]["labels"]["gpufleet.burnin/run-id"] == "r1"
    assert "gpufleet.burnin/run-id" not in plan["objects"][2]["metadata"]["labels"]
    assert all(obj["metadata"]["namespace"] == "burnin" for obj in plan["objects"])


def test_aws_h100_keeps_the_efa_plugin_and_gets_32_efa():
    plan = plan_workload(MPI, {"platform": "aws", "gpuArchitecture": "h100"})
    assert kinds(plan) == [("TrainingRuntime", "nccl-runtime"), ("TrainJob", "nccl-r1")]
    trainer = plan["objects"][1]["spec"]["trainer"]
    # DEVIATION pinned: no /opt/amazon removal and no NCCL_NET_PLUGIN=none on EFA (aws-ofi-nccl needs them).
    assert trainer["command"] == ["timeout", "3600", "mpirun"] and "NCCL_NET_PLUGIN=none" not in trainer["args"]
    limits = node_pod(plan["objects"][0])["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": "4", "vpc.amazonaws.com/efa": 32}


def test_torch_gcp_h100_trainer_env_and_command():
    plan = plan_workload(TORCH, {"platform": "gcp", "gpuArchitecture": "h100"})
    trainjob = plan["objects"][-1]
    assert trainjob["spec"]["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "smoke-runtime"}
    trainer = trainjob["spec"]["trainer"]
    assert trainer["command"] == ["torchrun"] and trainer["args"] == ["train.py", "--steps", "10"]
    assert trainer["numNodes"] == 2 and trainer["numProcPerNode"] == 8 and trainer["image"] == "img"
    assert {"name": "NCCL_PROTO", "value": "Simple,LL128"} in trainer["env"]


def test_user_overrides_apply_after_platform_ones():
    user = [
        {
            "when": {"platform": {"equals": "gcp"}},
            "jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": {"env": [{"name": "NCCL_PROTO", "value": "Simple"}]}}}}},
            "jobTemplatePatch": [{"op": "add", "path": "/spec/workload/trainJob/activeDeadlineSeconds", "value": 600}],
        },
        {"when": {"platform": {"equals": "aws"}}, "preCommand": ["echo never"]},
    ]
    plan = plan_workload(dict(TORCH, overrides=user), {"platform": "gcp", "gpuArchitecture": "h100"})
    trainjob = plan["objects"][-1]
    assert {"name": "NCCL_PROTO", "value": "Simple"} in trainjob["spec"]["trainer"]["env"]
    assert trainjob["spec"]["activeDeadlineSeconds"] == 600
    assert plan["matched"][-1] == {"origin": "user", "position": 1, "source": "overrides", "when": {"platform": {"equals": "gcp"}}}
    assert trainjob["spec"]["trainer"]["command"] == ["torchrun"]


def test_image_pull_secrets_go_to_every_job_through_runtime_patches():
    plan = plan_workload(dict(MPI, image_pull_secrets=[{"name": "regcred"}]), {"platform": "other", "gpuArchitecture": "h100"})
    (patch,) = plan["objects"][-1]["spec"]["runtimePatches"]
    jobs = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert [job["name"] for job in jobs] == ["node", "launcher"]
    assert all(job["template"]["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "regcred"}] for job in jobs)


def test_pre_command_quotes_each_word_for_the_shell():
    command, args = wrap_pre_command(["echo"], ["$HOME", "a b", "it's"], ["set -e"])
    assert command == ["/bin/bash", "-c"]
    assert args == ["set -e\nexec echo '$HOME' 'a b' 'it'\"'\"'s'"]
    assert wrap_pre_command(["x"], ["y"], []) == (["x"], ["y"])


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"trainer": {"args": []}}, "trainer"),
        ({"trainer": {"script": "a", "module": "b"}}, "trainer"),
        ({"framework": "exec", "trainer": {"command": []}}, "trainer.command"),
        ({"framework": "mpi", "trainer": {}}, "trainer.binary"),
        ({"framework": "mpi", "trainer": {"binary": "b", "timeout": 0}}, "trainer.timeout"),
        ({"trainer": {"script": "a", "binary": "b"}}, "trainer"),
        ({"run_id": ""}, "run_id"),
        ({"namespace": None}, "namespace"),
        ({"overrides": [{"when": {"topology": {}}}]}, "when"),
    ],
)
def test_bad_plan_input_names_the_field(changes, field):
    with pytest.raises(ConfigError, match=field):
        plan_workload(dict(TORCH, **changes), {"platform": "gcp", "gpuArchitecture": "h100"})


def test_rank_env_args_forward_the_workers_env_once_and_the_image_paths_by_name():
    # The ranks start over ssh with none of the container's env (tests/e2e/test_mpi_launch.py proves it with sshd).
    line = ["-N", "8", "-x", "NCCL_DEBUG=INFO", "-x", "FI_PROVIDER=efa"]
    env = [
        {"name": "NCCL_DEBUG", "value": "WARN"},
        {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "NCCL_SOCKET_IFNAME", "value": "eth1"},
    ]
    assert rank_env_args(line, env) == ["-x", "NCCL_SOCKET_IFNAME=eth0", "-x", "TOKEN", "-x", "PATH", "-x", "LD_LIBRARY_PATH"]
    # a platform that sets LD_LIBRARY_PATH on the container (GCP's recipes replace the image's) passes its value
    gcp = rank_env_args([], [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}])
    assert gcp == ["-x", "LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "-x", "PATH"]


# What the mutation run of rendering/plan.py (issue 47) left untested: the trainer's command line on both sides of
# each rule, the ranks' env from the node job's node container, which override an error names, the labels and
# annotations of the stamped objects, the Trainer rules checked on the TrainJob, and the cluster's NIC source.
GCP = {"platform": "gcp", "gpuArchitecture": "h100"}


def test_a_torch_trainer_runs_a_script_or_a_module():
    assert plan_mod.trainer_command("torch", {"module": "pkg.train", "args": ["--x", 1, 2.5]}, 8, False) == (
        ["torchrun"],
        ["-m", "pkg.train", "--x", "1", "2.5"],
    )
    assert plan_mod.trainer_command("torch", {"script": "t.py"}, 8, False) == (["torchrun"], ["t.py"])
    for both_or_none in ({}, None, {"script": "t.py", "module": "m"}, {"script": "", "module": ""}):
        with pytest.raises(ConfigError, match="^trainer: torch needs exactly one of 'script' or 'module'$"):
            plan_mod.trainer_command("torch", both_or_none, 8, False)


def test_an_exec_trainer_read_from_json_runs_its_command():
    framework, trainer = json.loads(json.dumps(["exec", {"command": ["nvidia-smi", "-L"], "args": ["-q"]}]))
    assert plan_mod.trainer_command(framework, trainer, 8, False) == (["nvidia-smi", "-L"], ["-q"])


@pytest.mark.parametrize("timeout", [1, 2, 86400])
def test_an_mpi_timeout_from_one_second_is_the_commands_bound(timeout):
    command, args = plan_mod.trainer_command("mpi", {"binary": "/b", "timeout": timeout, "mpirun_path": "/opt/mpirun"}, 2, True)
    assert command == ["timeout", str(timeout), "/opt/mpirun"]
    assert args[:2] == ["-N", "2"] and args[-2:] == ["NCCL_MNNVL_ENABLE=1", "/b"]


@pytest.mark.parametrize("timeout", [0, -1, True, "60", 1.5, None])
def test_an_mpi_timeout_below_one_or_no_integer_is_refused(timeout):
    with pytest.raises(ConfigError) as err:
        plan_mod.trainer_command("mpi", {"binary": "/b", "timeout": timeout}, 2, False)
    assert str(err.value) == "trainer.timeout: must be a positive number of seconds, got %r" % (timeout,)


@pytest.mark.parametrize("value", ["-b 8", {"a": 1}, [True], [None], [["x"]]])
def test_trainer_lists_that_are_no_lists_of_strings_are_refused_with_what_was_given(value):
    with pytest.raises(ConfigError) as err:
        plan_mod.trainer_command("exec", {"command": ["x"], "args": value}, 8, False)
    assert str(err.value) == "trainer.args: must be a list of strings, got %r" % (value,)


@pytest.mark.parametrize("trainer", ["train.py", ["train.py"], 3])
def test_a_trainer_that_is_no_mapping_is_refused_with_what_was_given(trainer):
    with pytest.raises(ConfigError) as err:
        plan_mod.trainer_command("torch", trainer, 8, False)
    assert str(err.value) == "trainer: must be a mapping, got %r" % (trainer,)


def test_rank_env_args_read_every_forwarded_name_wherever_its_x_sits():
    line = ["--oversubscribe", "-x", "A=1=2", "-N", "8", "-x", "B"]
    env = [{"name": "A", "value": "9"}, {"name": "B", "value": "9"}, {"name": "C", "value": "3"}, {"value": "no name"}, {"name": ""}]
    assert rank_env_args(line, env) == ["-x", "C=3", "-x", "PATH", "-x", "LD_LIBRARY_PATH"]
    # A last -x names nothing (an mpirun line is never cut there, but the reader must not fail on it).
    assert rank_env_args(["-x"], [{"name": "A", "value": "1"}]) == ["-x", "A=1", "-x", "PATH", "-x", "LD_LIBRARY_PATH"]


def _runtime(name, *jobs):
    spec = {"replicatedJobs": [{"name": job, "template": {"spec": {"template": {"spec": {"containers": containers}}}}} for job, containers in jobs]}
    return {"kind": "TrainingRuntime", "metadata": {"name": name}, "spec": {"template": {"spec": spec}}}


def test_the_workers_env_is_that_of_the_node_container_of_the_node_job_of_the_runtime():

    def env(value):
        return [{"name": "WHO", "value": value}]

    objects = [
        {"kind": "ConfigMap", "metadata": {"name": "r"}},
        {"kind": "Workload", "metadata": {"name": "r"}},
        _runtime("other", ("node", [{"name": "node", "env": env("other runtime")}])),
        _runtime(
            "r",
            ("launcher", [{"name": "node", "env": env("launcher")}]),
            ("sidecar", [{"name": "node", "env": env("sidecar job")}]),
            ("node", [{"name": "agent", "env": env("agent")}, {"name": "sidecar", "env": env("sidecar")}, {"name": "node", "env": env("node")}]),
        ),
    ]
    assert plan_mod._worker_env(json.loads(json.dumps(objects)), "r") == env("node")
    assert plan_mod._worker_env(objects, "r") == env("node")
    assert plan_mod._worker_env(objects, "none") == []
    assert plan_mod._worker_env([_runtime("r", ("node", [{"name": "node"}]))], "r") == []


def _dependency_env(job, container, env):
    """A user override whose dependency merges ENV into container CONTAINER of replicatedJob JOB of the runtime."""
    pod = {"containers": [{"name": container, "env": env}]}
    dep = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "nccl-runtime"},
        "spec": {"template": {"spec": {"replicatedJobs": [{"name": job, "template": {"spec": {"template": {"spec": pod}}}}]}}},
    }
    return {"when": {}, "dependencies": [dep]}


def test_the_mpi_ranks_get_the_node_containers_env_also_when_the_config_is_read_from_json():
    config = json.loads(json.dumps(dict(MPI, overrides=[_dependency_env("node", "node", [{"name": "ONLY_ON_WORKERS", "value": "1"}])])))
    result = plan_workload(config, {"platform": "other", "gpuArchitecture": "h100"})
    assert result["objects"][-2]["metadata"]["name"] == "nccl-runtime"
    args = result["objects"][-1]["spec"]["trainer"]["args"]
    assert "ONLY_ON_WORKERS=1" in args and args[args.index("ONLY_ON_WORKERS=1") - 1] == "-x"
    assert args.index("ONLY_ON_WORKERS=1") < args.index("/opt/all_reduce_perf")


def test_an_overrides_error_names_it_by_its_index_or_its_platform_source():
    bad = [{"op": "remove", "path": "/spec/workload/trainJob/runtimeRef"}]
    users = [{"when": {}, "preCommand": ["true"]}, {"when": {"platform": {"equals": "aws"}}}, {"when": {}, "jobTemplatePatch": bad}]
    with pytest.raises(ConfigError) as err:
        plan_workload(dict(TORCH, overrides=users), GCP)
    assert str(err.value) == "overrides[2]: removes spec.workload.trainJob.runtimeRef, which names the TrainingRuntime"
    with pytest.raises(ConfigError, match=r"^overrides\[0\]\.jobTemplatePatch: cannot apply JSON Patch"):
        plan_workload(dict(TORCH, overrides=[{"when": {}, "jobTemplatePatch": [{"op": "remove", "path": "/nothing/here"}]}]), GCP)
    template = {"spec": {"workload": {"trainJob": {"runtimeRef": {"name": "r"}, "trainer": {}}}}}
    platform = [({"when": {}}, "templates/overrides/platforms/x.yaml"), ({"when": {}, "jobTemplatePatch": bad}, "templates/overrides/platforms/x.yaml")]
    with pytest.raises(ConfigError) as err:
        plan_mod._apply_overrides(template, platform, [], {"platform": "x"}, "torch")
    assert err.value.field == "templates/overrides/platforms/x.yaml override #2"


@pytest.mark.parametrize("key", ["trainer", "runtimeRef"])
def test_an_override_may_not_make_the_trainer_or_the_runtime_ref_something_else_than_a_mapping(key):
    patch = [{"op": "replace", "path": "/spec/workload/trainJob/%s" % key, "value": ["x"]}]
    with pytest.raises(ConfigError) as err:
        plan_workload(dict(TORCH, overrides=[{"when": {}, "jobTemplatePatch": patch}]), GCP)
    assert str(err.value) == "overrides[0]: makes spec.workload.trainJob.%s ['x']; it must stay a mapping" % key


def test_a_trainer_removed_by_an_override_is_given_back():
    patch = [{"op": "remove", "path": "/spec/workload/trainJob/trainer"}]
    trainer = plan_workload(dict(TORCH, overrides=[{"when": {}, "jobTemplatePatch": patch}]), GCP)["objects"][-1]["spec"]["trainer"]
    assert trainer["command"] == ["torchrun"] and "image" not in trainer


@pytest.mark.parametrize("gpus, procs", [(0, None), (1, 1), (8, 8)])
def test_the_trainjob_asks_for_a_process_per_gpu_only_when_there_are_gpus(gpus, procs):
    trainer = plan_workload(dict(TORCH, gpus_per_node=gpus), {"platform": "other", "gpuArchitecture": "h100"})["objects"][-1]["spec"]["trainer"]
    assert trainer.get("numProcPerNode") == procs and trainer["numNodes"] == 2


def test_stamped_objects_keep_their_own_labels_and_only_a_topology_gives_an_annotation():
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "labels": {"team": "gpu"}}, "data": {}}
    result = plan_workload(dict(TORCH, overrides=[{"when": {}, "dependencies": [config_map]}]), GCP)
    extra = [obj for obj in result["objects"] if obj["kind"] == "ConfigMap"][0]
    assert extra["metadata"]["labels"] == {"team": "gpu", "app.kubernetes.io/managed-by": "gpufleet.burnin", "gpufleet.burnin/entry": "smoke"}
    runtime_labels = result["objects"][-2]["metadata"]["labels"]
    assert runtime_labels["trainer.kubeflow.org/framework"] == "torch" and runtime_labels["gpufleet.burnin/entry"] == "smoke"
    assert result["topology_key"] is None and "annotations" not in result["objects"][-1]["metadata"]
    topology = plan_workload(dict(TORCH, overrides=[{"when": {}, "orchestration": {"topology": {"topologyKey": "rack"}}}]), GCP)
    assert topology["topology_key"] == "rack"
    assert topology["objects"][-1]["metadata"]["annotations"] == {"gpufleet.burnin/topology-key": "rack"}


def test_the_trainer_release_rules_read_the_trainjob_also_after_dependencies():
    reserved = {"when": {}, "jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": {"env": [{"name": "PRTE_MCA_plm_ssh_args", "value": "-p 2"}]}}}}}}
    config = dict(MPI, overrides=[reserved], trainer_version="v2.4")
    facts = {"platform": "aws", "gpuArchitecture": "gb300"}
    with pytest.raises(ConfigError) as err:
        plan_workload(config, facts)
    assert err.value.field.startswith("spec.trainer.env[") and "PRTE_MCA_plm_ssh_args" in str(err.value)
    assert len(plan_workload(dict(config, trainer_version="v2.3"), facts)["objects"]) == 4


@pytest.mark.parametrize(
    "given, nic_source",
    [
        ({}, None),
        ({"efa_per_node": 32}, "given"),
        ({"rdma_resource": "rdma/ib"}, "given"),
        ({"rdma_per_node": 8}, "given"),
        ({"rdma_resource": ""}, None),
    ],
)
def test_nics_given_in_any_one_field_are_the_given_source(given, nic_source):
    catalog = platform_catalog.load_platform_catalog(templating.shared_library().lib_dir)
    cluster = plan_mod.resolve_cluster(given, {"platform": "other", "gpuArchitecture": "h100"}, catalog)
    assert cluster["nic_source"] == nic_source


def test_mnnvl_is_off_in_the_templates_unless_asked():
    """The seed's Mistral GB300 env reads enable_mnnvl (_lib/platforms/mistral/ib-env.yaml): unset is off, as for the base env."""
    facts = {"platform": "mistral", "gpuArchitecture": "gb300"}

    def mnnvl(**given):
        trainer = plan_workload(dict(TORCH, gpus_per_node=4, **given), facts)["objects"][-1]["spec"]["trainer"]
        return [item["value"] for item in trainer["env"] if item["name"] == "NCCL_MNNVL_ENABLE"]

    assert mnnvl() == ["0"] and mnnvl(enable_mnnvl=False) == ["0"] and mnnvl(enable_mnnvl=True) == ["1"]
    runtime = plan_workload(TORCH, GCP)["objects"][-2]
    assert {"name": "NCCL_MNNVL_ENABLE", "value": "0"} in node_pod(runtime)["containers"][0]["env"]


def test_only_an_mpi_plan_takes_the_overrides_mpi_args_also_from_json():
    extra = {"when": {}, "mpiArgs": ["--bind-to", "none"]}
    torch = plan_workload(dict(TORCH, overrides=[extra]), GCP)
    assert torch["mpi_args"] == [] and torch["objects"][-1]["spec"]["trainer"]["args"] == ["train.py", "--steps", "10"]
    mpi = plan_workload(json.loads(json.dumps(dict(MPI, overrides=[extra]))), {"platform": "other", "gpuArchitecture": "h100"})
    assert mpi["mpi_args"] == ["--bind-to", "none"] and "--bind-to" in mpi["objects"][-1]["spec"]["trainer"]["args"]


def test_the_trainer_release_rules_read_the_runtime_also_after_dependencies():
    long_job = "a-sidecar-job-of-21ch"
    dep = _dependency_env(long_job, "side", [])
    dep["dependencies"][0]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["image"] = "img"
    facts = {"platform": "aws", "gpuArchitecture": "gb300"}
    with pytest.raises(ConfigError, match="21 characters"):
        plan_workload(dict(MPI, overrides=[dep], trainer_version="v2.4"), facts)
    assert plan_workload(dict(MPI, overrides=[dep], trainer_version="v2.3"), facts)["objects"][0]["kind"] == "ComputeDomain"


def test_nics_discovered_on_the_nodes_are_the_nodes_source():
    catalog = platform_catalog.load_platform_catalog(templating.shared_library().lib_dir)
    for platform, nic, field in (("azure", "rdma/ib", "rdma_resource"), ("aws", "vpc.amazonaws.com/efa", "efa_per_node")):
        node = {"metadata": {"labels": {}}, "status": {"allocatable": {"nvidia.com/gpu": "8", nic: "8"}}}
        cluster = plan_mod.resolve_cluster({"cluster_nodes": [node]}, {"platform": platform, "gpuArchitecture": "h100"}, catalog)
        assert cluster["nic_source"] == "nodes" and cluster[field], (platform, cluster)


def test_a_torch_trainer_read_from_json_runs_torchrun():
    framework, trainer = json.loads(json.dumps(["torch", {"script": "t.py"}]))
    assert plan_mod.trainer_command(framework, trainer, 8, False) == (["torchrun"], ["t.py"])


def test_only_an_x_forwards_a_variable_not_another_options_value():
    env = [{"name": "FOO", "value": "1"}]
    assert rank_env_args(["--bind-to", "FOO", "-N", "8"], env) == ["-x", "FOO=1", "-x", "PATH", "-x", "LD_LIBRARY_PATH"]
