# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.nccl_env import base_nccl_env
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.runtime import build_runtime, normalize_runtime_config, parse_trainer_version

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"


def config(**kwargs):
    base = dict(entry_name="test", image="img:1", nodes=2, gpus_per_node=8, env=base_nccl_env(False))
    base.update(kwargs)
    return base


def pod(job):
    return job["template"]["spec"]["template"]["spec"]


@pytest.mark.parametrize("framework", ["torch", "exec"])
def test_torch_and_exec_shape(framework):
    runtime = build_runtime(framework, config(volumes=[{"name": "data", "emptyDir": {}}], volume_mounts=[{"name": "data", "mountPath": "/data"}]))
    assert runtime["apiVersion"] == "trainer.kubeflow.org/v1alpha1" and runtime["kind"] == "TrainingRuntime"
    assert runtime["metadata"] == {"name": "test-runtime", "labels": {"trainer.kubeflow.org/framework": "torch", "app": "test"}}
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 2, "torch": {}}
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert [job["name"] for job in jobs] == ["node"]
    assert jobs[0]["template"]["metadata"]["labels"] == {ANCESTOR: "trainer", "app": "test"}
    spec = pod(jobs[0])
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    assert spec["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory"}}, {"name": "data", "emptyDir": {}}]
    assert "initContainers" not in spec and "restartPolicy" not in spec
    (container,) = spec["containers"]
    assert container["name"] == "node" and container["image"] == "img:1"
    assert "command" not in container and "args" not in container
    assert container["env"] == base_nccl_env(False)
    assert container["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}, {"name": "data", "mountPath": "/data"}]
    # DEVIATION pinned: GPUs only, no 800Gi memory default (original bug 1).
    assert container["resources"] == {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8"}}


def test_torch_num_proc_per_node_only_before_trainer_v2_2():
    # kubeflow/trainer#3239 removed mlPolicy.torch.numProcPerNode in v2.2.0.
    assert build_runtime("torch", config(trainer_version="v2.1"))["spec"]["mlPolicy"]["torch"] == {"numProcPerNode": 8}
    assert build_runtime("torch", config(trainer_version="v2.2.1"))["spec"]["mlPolicy"]["torch"] == {}
    assert build_runtime("torch", config())["spec"]["mlPolicy"]["torch"] == {}


def test_init_containers_only_when_given():
    init = [{"name": "prep", "image": "busybox"}]
    assert pod(build_runtime("torch", config(init_containers=init))["spec"]["template"]["spec"]["replicatedJobs"][0])["initContainers"] == init


def test_user_resources_keep_user_values_and_gain_gpus():
    resources = {"limits": {"memory": "64Gi"}, "requests": {"cpu": "8"}}
    container = pod(build_runtime("torch", config(resources=resources))["spec"]["template"]["spec"]["replicatedJobs"][0])["containers"][0]
    assert container["resources"] == {"limits": {"memory": "64Gi", "nvidia.com/gpu": "8"}, "requests": {"cpu": "8", "nvidia.com/gpu": "8"}}
    named = {"limits": {"nvidia.com/gpu": "2"}}
    container = pod(build_runtime("torch", config(resources=named))["spec"]["template"]["spec"]["replicatedJobs"][0])["containers"][0]
    assert container["resources"] == named


def test_image_pull_secrets_never_in_runtime():
    runtime = build_runtime("mpi", config(image_pull_secrets=[{"name": "regcred"}]))
    assert "regcred" not in repr(runtime)


def test_mpi_shape():
    user_env = base_nccl_env(True)
    runtime = build_runtime(
        "mpi",
        config(
            env=user_env,
            volumes=[{"name": "v", "emptyDir": {}}],
            volume_mounts=[{"name": "v", "mountPath": "/v"}],
            init_containers=[{"name": "i", "image": "x"}],
        ),
    )
    assert runtime["metadata"]["labels"] == {"trainer.kubeflow.org/framework": "mpi", "app": "test"}
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 1, "mpi": {"mpiImplementation": "OpenMPI", "numProcPerNode": 8, "sshAuthMountPath": "/tmp/mpi-ssh-raw"}}
    template = runtime["spec"]["template"]["spec"]
    assert template["network"] == {"publishNotReadyAddresses": True}
    assert template["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    worker_job, launcher_job = template["replicatedJobs"]
    assert (worker_job["name"], launcher_job["name"]) == ("node", "launcher")
    assert "metadata" not in worker_job["template"]
    assert launcher_job["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert launcher_job["template"]["metadata"] == {"labels": {ANCESTOR: "trainer"}}

    worker_pod, launcher_pod = pod(worker_job), pod(launcher_job)
    assert worker_pod["restartPolicy"] == launcher_pod["restartPolicy"] == "OnFailure"
    worker = worker_pod["containers"][0]
    assert worker["command"] == ["sh", "-c"]
    script = worker["args"][0]
    assert script.startswith("set -x && (test -x /usr/sbin/sshd || (apt-get update && apt-get install -y --no-install-recommends openssh-server))")
    assert script.endswith("chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys && /usr/sbin/sshd -De")
    assert worker["readinessProbe"] == {"initialDelaySeconds": 5, "tcpSocket": {"port": 22}}
    assert worker["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert worker["volumeMounts"][:2] == [
        {"name": "mpi-ssh-auth", "mountPath": "/tmp/mpi-ssh-raw", "readOnly": True},
        {"name": "dshm", "mountPath": "/dev/shm"},
    ]
    assert worker_pod["volumes"][0] == {"name": "dshm", "emptyDir": {"medium": "Memory"}}
    # The plugin injects mpi-ssh-auth; the runtime must not declare it.
    assert all(volume["name"] != "mpi-ssh-auth" for volume in worker_pod["volumes"] + launcher_pod["volumes"])
    # DEVIATION pinned (original bug 2, "issue #68"): env, volumes, mounts and init containers reach MPI pods.
    assert worker["env"] == user_env and launcher_pod["containers"][0]["env"] == user_env
    assert {"name": "v", "mountPath": "/v"} in worker["volumeMounts"] and {"name": "v", "emptyDir": {}} in worker_pod["volumes"]
    assert worker_pod["initContainers"] == [{"name": "i", "image": "x"}]

    launcher = launcher_pod["containers"][0]
    assert launcher["name"] == "node" and "command" not in launcher and "args" not in launcher
    assert launcher["resources"] == {"limits": {"cpu": "2", "memory": "1Gi"}}
    (fix,) = launcher_pod["initContainers"]
    assert fix["name"] == "fix-ssh-permissions" and fix["command"] == ["sh", "-c"]
    assert fix["args"] == [
        "set -x && cp /tmp/mpi-ssh-raw/* /root/.ssh/ && chmod 600 /root/.ssh/id_rsa && chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys"
    ]


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("entry_name", "Bad_Name", "entry_name"),
        ("entry_name", "x" * 53, "at most 52"),
        ("image", "", "image"),
        ("nodes", 0, "nodes"),
        ("gpus_per_node", -1, "gpus_per_node"),
        ("gpus_per_node", "8", "gpus_per_node"),
        ("trainer_version", "latest", "trainer_version"),
        ("env", {"A": "1"}, "env"),
    ],
)
def test_bad_input_names_the_field(field, value, message):
    with pytest.raises(ConfigError, match=message):
        build_runtime("torch", config(**{field: value}))


def test_bad_framework_lists_allowed_values():
    with pytest.raises(ConfigError, match="torch, mpi, exec"):
        build_runtime("jax", config())


def test_null_sides_of_the_resources_are_unset():
    # Found by the long fuzz profile: resources {limits: null} reached the runtime as `limits: null`.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.runtime import worker_resources

    assert worker_resources({"limits": None, "requests": {"cpu": "1"}}, 0) == {"requests": {"cpu": "1"}}
    assert worker_resources({"limits": None}, 8) == {"limits": {"nvidia.com/gpu": "8"}}


# --- What the mutation run of rendering/runtime.py found untested (issue 47, fourth round) -----------------------


def worker_of(runtime):
    return pod(runtime["spec"]["template"]["spec"]["replicatedJobs"][0])["containers"][0]


@pytest.mark.parametrize(
    "value, expected",
    [("v2.3", (2, 3)), ("2.2.1", (2, 2)), ("v3.1", (3, 1)), ("v10.0.7", (10, 0)), ("v1.5", (1, 5))],
)
def test_a_trainer_version_is_its_major_and_minor(value, expected):
    assert parse_trainer_version(value) == expected


@pytest.mark.parametrize(
    "field, value, ok",
    [
        # plugins/modules/training_runtime.py: nodes at least 1; gpus_per_node 0 requests none.
        ("nodes", 1, True),
        ("nodes", 0, False),
        ("gpus_per_node", 0, True),
        ("gpus_per_node", -1, False),
    ],
)
def test_the_counts_at_their_bound_and_one_past_it(field, value, ok):
    if ok:
        assert normalize_runtime_config(config(**{field: value}))[field] == value
        return
    with pytest.raises(ConfigError) as caught:
        build_runtime("torch", config(**{field: value}))
    assert str(caught.value) == "%s: must be an integer >= %d, got %d" % (field, 1 if field == "nodes" else 0, value)


def test_nodes_default_to_one_and_gpus_to_none():
    given = dict(entry_name="test", image="img:1")
    runtime = build_runtime("torch", given)
    assert runtime["spec"]["mlPolicy"]["numNodes"] == 1
    assert "resources" not in worker_of(runtime)
    normal = normalize_runtime_config(given)
    assert (normal["nodes"], normal["gpus_per_node"]) == (1, 0)


@pytest.mark.parametrize("framework", ["torch", "mpi"])
@pytest.mark.parametrize(
    "gpus, resources, expected",
    [
        (0, None, None),
        (1, None, {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}),
        (2, None, {"limits": {"nvidia.com/gpu": "2"}, "requests": {"nvidia.com/gpu": "2"}}),
        (0, {"limits": {"memory": "1Gi"}}, {"limits": {"memory": "1Gi"}}),
        (1, {"requests": {"cpu": "1"}}, {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "1", "nvidia.com/gpu": "1"}}),
    ],
)
def test_the_gpu_containers_resources_are_the_gpus_and_the_users(framework, gpus, resources, expected):
    worker = worker_of(build_runtime(framework, config(gpus_per_node=gpus, resources=resources)))
    if expected is None:
        assert "resources" not in worker
    else:
        assert worker["resources"] == expected


def test_the_mpi_workers_script_copies_the_mounted_keys():
    worker = worker_of(build_runtime("mpi", config()))
    assert worker["args"][0].split(" && ") == [
        "set -x",
        "(test -x /usr/sbin/sshd || (apt-get update",
        "apt-get install -y --no-install-recommends openssh-server))",
        "mkdir -p /var/run/sshd",
        "chmod 0755 /var/run/sshd",
        "mkdir -p /root/.ssh",
        "chmod 700 /root/.ssh",
        "cp /tmp/mpi-ssh-raw/* /root/.ssh/",
        "chmod 600 /root/.ssh/id_rsa",
        "chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys",
        "/usr/sbin/sshd -De",
    ]


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("resources", ["limits"], "resources: must be a mapping with limits/requests/claims, got ['limits']"),
        ("env", [{"name": "A", "value": "1"}, "B=2"], "env: must be a list of mappings, got [{'name': 'A', 'value': '1'}, 'B=2']"),
        ("volumes", {"name": "v"}, "volumes: must be a list of mappings, got {'name': 'v'}"),
        ("init_containers", ["x"], "init_containers: must be a list of mappings, got ['x']"),
        ("nodes", True, "nodes: must be an integer >= 1, got True"),
    ],
)
def test_refused_inputs_with_their_whole_text(field, value, message):
    with pytest.raises(ConfigError) as caught:
        build_runtime("torch", config(**{field: value}))
    assert str(caught.value) == message
