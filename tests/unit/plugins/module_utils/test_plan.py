# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import shlex

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload, wrap_pre_command
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import rank_env_args

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
