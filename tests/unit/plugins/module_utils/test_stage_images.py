# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every stage's program finds itself and its libraries on every platform and GPU, read off the rendered plan.

For each (platform, GPU, stage, workload) the role's plan is rendered as the stage runs it; its image must be a record
of _lib/images.yaml of the kind the workload declares; the program (nccl-tests' binary by its absolute path, python or
dcgmi by name along the rendered PATH) and each soname the record says it needs are resolved as ld.so would, along
the rendered LD_LIBRARY_PATH (the MPI ranks': ``mpirun -x``; else the container's; else the image's own), then the
multiarch directories, then what the record places in the loader's cache (``loader``) or on the image's own path
(``image_path``, only while the platform keeps that path). tests/e2e/test_mpi_launch.py runs the same for the MPI
ranks for real. The GCP H100 node stage once ran AWS's EFA image with GCP's replaced path: libmpi.so.40 did not
resolve (README deviations).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_plan
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import images
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.platform_catalog import load_platform_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import templating

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
# _lib/images.yaml and every platform's _lib/platforms/<platform>/images.yaml.
IMAGES = templating.shared_library().image_records()[0]
# Every platform of _lib/platforms/ but Mistral, whose seed entries are GB300 only and need burnin_image there
# (docs/platforms/mistral.md): its other GPUs are no configuration the seed knows.
PLATFORMS = sorted(set(load_platform_catalog()) - {"mistral"})
GPUS = ["h100", "h200", "b200", "gb200", "gb300"]
# stage -> the workloads it runs (the fleet stage: every catalogue workload a user may pick that a record serves)
STAGE_WORKLOADS = [
    ("node", "nccl-all-reduce-node"),
    ("fleet", "nccl-all-reduce"),
    ("fleet", "nccl-all-gather"),
    ("fleet", "torch-smoke"),
    ("dcgm", "dcgm-diag"),
    ("gpu", "gpu-burn"),
]
DOCKER_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MULTIARCH = {"amd64": ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"], "arm64": ["/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"]}
CASES = [(p, g, s, w) for p in PLATFORMS for g in GPUS for s, w in STAGE_WORKLOADS]


def _given(platform, gpu, stage, workload, **more):
    with open(os.path.join(ROOT, "roles", "burnin", "defaults", "main.yml")) as fh:
        given = yaml.safe_load(fh)
    given.update(burnin_platform=platform, burnin_gpu_architecture=gpu, burnin_nodes=2, burnin_stages=["node", "fleet", "dcgm", "gpu"])
    if stage == "fleet":
        given["burnin_workload"] = workload
    given.update(more)
    return given


def plan(platform, gpu, stage, workload, **more):
    """(the node container, the trainer's words, the TrainJob's image) of the stage's plan."""
    out = role_plan.role_plan(check_role_vars(_given(platform, gpu, stage, workload, **more)), platform, gpu, "r1", "burnin", stage=stage)
    runtime = [obj for obj in out["objects"] if obj["kind"] == "TrainingRuntime"][0]
    trainjob = [obj for obj in out["objects"] if obj["kind"] == "TrainJob"][0]
    jobs = dict((job["name"], job["template"]["spec"]["template"]["spec"]) for job in runtime["spec"]["template"]["spec"]["replicatedJobs"])
    container = [c for c in jobs["node"]["containers"] if c["name"] == "node"][0]
    trainer = trainjob["spec"]["trainer"]
    return container, list(trainer.get("command") or []) + list(trainer.get("args") or []), trainer.get("image")


def _forwarded(words, name):
    """``mpirun -x NAME=value``: the value; ``-x NAME``: None (the launcher's); not forwarded: KeyError."""
    for flag, word in zip(words, words[1:]):
        if flag == "-x" and (word == name or word.startswith(name + "=")):
            return word.split("=", 1)[1] if "=" in word else None
    raise KeyError(name)


def rendered_path(name, container, words, record):
    """(the value of NAME the program runs with, whether it is the image's own)."""
    env = dict((item["name"], item.get("value")) for item in container.get("env") or [])
    try:
        forwarded = _forwarded(words, name)
    except KeyError:
        forwarded = None
    if forwarded is not None:
        return forwarded, False
    if name in env:
        return env[name], False
    own = (record.get("env") or {}).get(name)
    if name == "PATH" and own is None:
        own = DOCKER_DEFAULT_PATH
    return own or "", True


def program_of(record, words):
    if record["kind"] == "nccl-tests":
        return [word for word in words if isinstance(word, str) and word.startswith(record["nccl_tests_dir"] + "/")][0]
    program = "python" if record["kind"] == "pytorch" else "dcgmi"
    assert any(program in word.split() or word == program or ("%s " % program) in word for word in words), (program, words)
    return program


def unresolved(platform, gpu, container, words, record):
    """What does not resolve: [(what, why)]."""
    problems = []
    cpu = images.cpu_of(gpu)
    program = program_of(record, words)
    path = rendered_path("PATH", container, words, record)[0]
    if not program.startswith("/"):
        where = (record.get("executables") or {}).get(program)
        if not where or where not in path.split(":"):
            problems.append((program, "not on PATH=%r (the record puts it in %r)" % (path, where)))
    library_path, own = rendered_path("LD_LIBRARY_PATH", container, words, record)
    dirs = [d for d in library_path.split(":") if d]
    needs = (record.get("platforms") or {}).get(platform) or {}
    places = dict(record.get("libraries_arm64" if cpu == "arm64" and "libraries_arm64" in record else "libraries") or {})
    places.update(needs.get("host_libraries") or {})
    for soname in record.get("needs") or []:
        where = places.get(soname)
        if where and (where in dirs or where in MULTIARCH[cpu]):
            continue
        if soname in (record.get("loader") or []):
            continue
        if soname in (record.get("image_path") or []) and own:
            continue
        problems.append((soname, "LD_LIBRARY_PATH=%r; the record puts it in %r" % (library_path, where)))
    return problems


@pytest.mark.parametrize("platform, gpu, stage, workload", CASES, ids=["-".join(case) for case in CASES])
def test_every_stage_program_and_library_resolves(platform, gpu, stage, workload):
    try:
        container, words, image = plan(platform, gpu, stage, workload)
    except ConfigError as exc:
        # No recorded arm64 nccl-tests image for the platform: refused before any cluster, naming burnin_image ...
        assert images.cpu_of(gpu) == "arm64" and "set burnin_image" in str(exc), str(exc)
        if workload.startswith("nccl-"):
            return
        # ... which, once set, leaves the PyTorch and DCGM stages their own images.
        container, words, image = plan(platform, gpu, stage, workload, burnin_image="registry.example.com/gpu/nccl-tests:2.16.9-arm64")
    assert container["image"] == image
    key, record = images.record_of(IMAGES, image)
    assert record is not None, "%s runs %s, which _lib/images.yaml does not record" % (workload, image)
    assert images.cpu_of(gpu) in record["arches"], (key, gpu)
    assert unresolved(platform, gpu, container, words, record) == []


def test_the_gcp_h100_node_stage_runs_gcp_image_and_resolves_libmpi():
    container, words, image = plan("gcp", "h100", "node", "nccl-all-reduce-node")
    assert image == IMAGES["nccl-tests-ngc-gke"]["image"] and "/usr/local/bin/all_reduce_perf_mpi" in words
    # the EFA image the node stage ran before, under GCP's replaced path, does not resolve libmpi
    efa = IMAGES["nccl-tests-efa"]
    replaced = dict(container, env=[{"name": "LD_LIBRARY_PATH", "value": "/usr/lib/x86_64-linux-gnu:/usr/local/nvidia/lib64"}])
    efa_words = [efa["nccl_tests_dir"] + "/all_reduce_perf"]
    assert [problem[0] for problem in unresolved("gcp", "h100", replaced, efa_words, efa)] == ["libmpi.so.40"]


def test_a_platform_path_is_prepended_to_the_image_path_unless_the_record_replaces_it():
    efa = IMAGES["nccl-tests-efa"]
    # the EFA image on GCP (its node stage given that image): the platform's path first, then the image's, on the
    # container and on the ranks alike
    container, words, image = plan("gcp", "h100", "node", "nccl-all-reduce-node", burnin_stage_params={"node": {"image": efa["image"]}})
    value = dict((item["name"], item["value"]) for item in container["env"])["LD_LIBRARY_PATH"]
    assert value == "/usr/lib/x86_64-linux-gnu:/usr/local/nvidia/lib64:" + efa["env"]["LD_LIBRARY_PATH"]
    assert unresolved("gcp", "h100", container, words, efa) == []
    container, words, image = plan("gcp", "h100", "fleet", "nccl-all-reduce", burnin_image=efa["image"])
    assert _forwarded(words, "LD_LIBRARY_PATH") == "/usr/lib/x86_64-linux-gnu:/usr/local/nvidia/lib64:" + efa["env"]["LD_LIBRARY_PATH"]
    # the NGC image, whose record says GCP's recipe replaces the path: left as the recipe sets it
    container, words, image = plan("gcp", "h100", "fleet", "nccl-all-reduce")
    assert _forwarded(words, "LD_LIBRARY_PATH") == "/usr/lib/x86_64-linux-gnu:/usr/local/nvidia/lib64"
    # the rule itself
    assert images.path_value(efa, "aws", "PATH", "/x") == "/x:" + efa["env"]["PATH"]
    assert images.path_value(efa, "aws", "PATH", "/x:" + efa["env"]["PATH"]) == "/x:" + efa["env"]["PATH"]
    assert images.path_value(IMAGES["nccl-tests-ngc-gke"], "gcp", "LD_LIBRARY_PATH", "/x") == "/x"
    assert images.path_value(None, "gcp", "LD_LIBRARY_PATH", "/x") == "/x"


@pytest.mark.parametrize("platform, gpu", [("aws", "gb200"), ("azure", "gb200"), ("togetherai", "gb300")])
def test_burnin_image_is_the_nccl_tests_image_only(platform, gpu):
    mine = "registry.example.com/gpu/nccl-tests:2.16.9-arm64"
    for stage, workload in STAGE_WORKLOADS:
        container, words, image = plan(platform, gpu, stage, workload, burnin_image=mine)
        if workload.startswith("nccl-"):
            assert image == mine, (stage, workload)
        else:
            kind = "pytorch" if workload in ("torch-smoke", "gpu-burn") else "dcgm"
            assert image == images.default_record(IMAGES, kind, platform, gpu)[1]["image"], (stage, workload)


def test_a_workload_refuses_an_image_of_another_kind_naming_both():
    efa = IMAGES["nccl-tests-efa"]["image"]
    with pytest.raises(
        ConfigError,
        match=r"burnin_stage_params\.gpu: .*workload gpu-burn needs a pytorch image, but %s is _lib/images.yaml's nccl-tests-efa, a nccl-tests image"
        % efa.replace(".", r"\."),
    ):
        check_role_vars(_given("aws", "h100", "gpu", "gpu-burn", burnin_stage_params={"gpu": {"image": efa}}))
    with pytest.raises(ConfigError, match=r"workload nccl-all-reduce needs a nccl-tests image, but \S+ is _lib/images.yaml's dcgm, a dcgm image"):
        check_role_vars(_given("aws", "h100", "fleet", "nccl-all-reduce", burnin_image=IMAGES["dcgm"]["image"]))


# What the mutation run of rendering/images.py (issue 47) left untested: the functions called on small records of the
# test's own, each rule on both sides.
RECORDS = {
    "any-x86": {"kind": "nccl-tests", "image": "r/any:1", "arches": ["amd64"], "default_for": ["*"]},
    "own-x86": {"kind": "nccl-tests", "image": "r/own:1", "arches": ["amd64"], "default_for": ["gcp"]},
    "own-arm": {"kind": "nccl-tests", "image": "r/own-arm:1", "arches": ["arm64"], "default_for": ["gcp"], "default_gpus": ["gb300"]},
    "torch": {"kind": "pytorch", "image": "r/torch:1", "arches": ["amd64", "arm64"], "default_for": ["*"]},
    "unlisted": {"kind": "dcgm", "image": "r/dcgm:1", "arches": ["amd64"]},
    "any-arm": {"kind": "nccl-tests", "image": "r/any-arm:1", "arches": ["arm64"], "default_for": ["*"], "default_gpus": ["gb200"]},
}


@pytest.mark.parametrize("gpu, cpu", [("gb200", "arm64"), ("gb300", "arm64"), ("h100", "amd64"), ("b200", "amd64"), ("gb2000", "amd64"), (None, "amd64")])
def test_the_cpu_of_a_gpu_is_arm64_for_grace_only(gpu, cpu):
    assert images.cpu_of(gpu) == cpu


@pytest.mark.parametrize(
    "kind, platform, gpu, key",
    [
        ("nccl-tests", "gcp", "h100", "own-x86"),  # the platform's own before the any-platform record, in any order
        ("nccl-tests", "aws", "h100", "any-x86"),
        ("nccl-tests", "gcp", "gb300", "own-arm"),
        ("nccl-tests", "gcp", "gb200", "any-arm"),  # GCP's arm record is for gb300 only: the next record is looked at
        ("nccl-tests", "aws", "gb300", None),
        ("nccl-tests", "aws", "gb200", "any-arm"),
        ("pytorch", "gcp", "gb200", "torch"),
        ("dcgm", "aws", "h100", None),  # a record no platform runs by default
        ("jax", "aws", "h100", None),
    ],
)
def test_the_default_record_is_the_platforms_own_else_the_any_platform_one(kind, platform, gpu, key):
    for records in (RECORDS, dict(reversed(list(RECORDS.items())))):
        found = images.default_record(records, kind, platform, gpu)
        assert found == ((key, RECORDS[key]) if key else (None, None))
    assert images.default_record(None, kind, platform, gpu) == (None, None)


def test_a_record_is_found_by_its_image_only():
    assert images.record_of(RECORDS, "r/torch:1") == ("torch", RECORDS["torch"])
    assert images.record_of(RECORDS, "r/torch:2") == (None, None)
    assert images.record_of(None, "r/torch:1") == (None, None)
    records = dict(RECORDS, later={"kind": "dcgm", "image": "r/torch:1"})
    assert images.record_of(records, "r/torch:1")[0] == "torch"


def test_check_kind_refuses_only_a_recorded_image_of_another_kind():
    images.check_kind(RECORDS, "r/torch:1", "pytorch", "torch-smoke")
    images.check_kind(RECORDS, "r/mine:1", "pytorch", "torch-smoke")
    with pytest.raises(ConfigError) as err:
        images.check_kind(RECORDS, "r/torch:1", "dcgm", "dcgm-diag", field="data.image")
    assert str(err.value) == (
        "data.image: workload dcgm-diag needs a dcgm image, but r/torch:1 is _lib/images.yaml's torch, a pytorch image: set the workload's image "
        "(burnin_stage_params or burnin_workload_params) to a dcgm image, or leave it unset for the default"
    )
    with pytest.raises(ConfigError, match="^image: "):
        images.check_kind(RECORDS, "r/torch:1", "dcgm", "dcgm-diag")


OWN = {"env": {"LD_LIBRARY_PATH": "/opt/lib", "PATH": "/opt/bin"}, "platforms": {"gcp": {"ld_library_path": "replace"}, "aws": {}}}


@pytest.mark.parametrize(
    "record, platform, name, value, expected",
    [
        (OWN, "aws", "LD_LIBRARY_PATH", "/x", "/x:/opt/lib"),
        (OWN, "aws", "PATH", "/x:/y", "/x:/y:/opt/bin"),
        (OWN, "azure", "PATH", "/x", "/x:/opt/bin"),
        (OWN, "aws", "LD_LIBRARY_PATH", "", "/opt/lib"),
        (OWN, "aws", "LD_LIBRARY_PATH", "/opt/lib", "/opt/lib"),
        (OWN, "aws", "LD_LIBRARY_PATH", "/x:/opt/lib", "/x:/opt/lib"),
        (OWN, "aws", "LD_LIBRARY_PATH", "/x/opt/lib", "/x/opt/lib:/opt/lib"),  # ends with the path, not with ":" and it
        (OWN, "aws", "LD_LIBRARY_PATH", "/opt/lib:/x", "/opt/lib:/x:/opt/lib"),
        (OWN, "gcp", "LD_LIBRARY_PATH", "/x", "/x"),
        (OWN, "gcp", "PATH", "/x", "/x"),
        (OWN, "aws", "PYTHONPATH", "/x", "/x"),
        ({"env": {"PATH": "/opt/bin"}}, "aws", "LD_LIBRARY_PATH", "/x", "/x"),
        ({"env": {"PATH": ""}}, "aws", "PATH", "/x", "/x"),
        ({}, "aws", "PATH", "/x", "/x"),
        ({"platforms": {"aws": {"ld_library_path": "keep"}}, "env": {"PATH": "/b"}}, "aws", "PATH", "/x", "/x:/b"),
        (None, "aws", "PATH", "/x", "/x"),
    ],
)
def test_a_platforms_path_comes_before_the_images_own_unless_replaced(record, platform, name, value, expected):
    assert images.path_value(record, platform, name, value) == expected


def _runtime(*containers, **init):
    pod = {"containers": list(containers)}
    pod.update(init)
    return {
        "kind": "TrainingRuntime",
        "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": pod}}}}]}}},
    }


def test_with_image_paths_applies_the_rule_to_every_container_by_its_own_image_and_to_the_ranks_by_the_trainjobs():
    records = {"a": {"image": "a:1", "env": {"PATH": "/a/bin", "LD_LIBRARY_PATH": "/a/lib"}}, "b": {"image": "b:1", "env": {"PATH": "/b/bin"}}}
    runtime = _runtime(
        {"name": "node", "image": "a:1", "env": [{"name": "PATH", "value": "/p"}, {"name": "LD_LIBRARY_PATH", "valueFrom": {}}, {"name": "X", "value": "/p"}]},
        {"name": "side", "image": "b:1", "env": [{"name": "PATH", "value": "/p"}, {"name": "LD_LIBRARY_PATH", "value": 3}]},
        initContainers=[{"name": "init", "image": "b:1", "env": [{"name": "PATH", "value": "/i"}]}, {"name": "bare", "image": "a:1"}],
    )
    trainjob = {
        "kind": "TrainJob",
        "spec": {
            "trainer": {
                "image": "a:1",
                "command": ["-x", "mpirun", "-x", "PATH=/p", "-x", "LD_LIBRARY_PATH", "-x", "X=/p", "PATH=/q", "-d", "PATH=/r", 7, "-x", 8],
                "args": ["-x", "LD_LIBRARY_PATH=/l=m", "-x"],
                "env": [{"name": "LD_LIBRARY_PATH", "value": "/e"}],
            }
        },
    }
    other = {"kind": "ConfigMap", "data": {"PATH": "/p"}}
    # Another kind with a trainer's fields (Kueue's Workload sorts after both kinds the rule reads) is left alone.
    workload = {"kind": "Workload", "spec": {"trainer": {"image": "a:1", "env": [{"name": "PATH", "value": "/w"}]}}}
    given = [runtime, trainjob, other, {"kind": "TrainJob", "spec": {"trainer": {"image": "zz", "command": "-x PATH=/p"}}}, {"kind": "TrainJob"}, workload]
    before = repr(given)
    out = images.with_image_paths(given, records, "aws")
    assert repr(given) == before  # the objects given are not changed
    pod = out[0]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["env"] == [{"name": "PATH", "value": "/p:/a/bin"}, {"name": "LD_LIBRARY_PATH", "valueFrom": {}}, {"name": "X", "value": "/p"}]
    assert pod["containers"][1]["env"] == [{"name": "PATH", "value": "/p:/b/bin"}, {"name": "LD_LIBRARY_PATH", "value": 3}]
    assert pod["initContainers"] == [{"name": "init", "image": "b:1", "env": [{"name": "PATH", "value": "/i:/b/bin"}]}, {"name": "bare", "image": "a:1"}]
    trainer = out[1]["spec"]["trainer"]
    assert trainer["command"] == ["-x", "mpirun", "-x", "PATH=/p:/a/bin", "-x", "LD_LIBRARY_PATH", "-x", "X=/p", "PATH=/q", "-d", "PATH=/r", 7, "-x", 8]
    assert trainer["args"] == ["-x", "LD_LIBRARY_PATH=/l=m:/a/lib", "-x"]
    assert trainer["env"] == [{"name": "LD_LIBRARY_PATH", "value": "/e:/a/lib"}]
    assert out[2:] == given[2:]
    # On a platform whose recipe the record says replaces the path: nothing changes.
    records["a"]["platforms"] = {"gcp": {"ld_library_path": "replace"}}
    assert images.with_image_paths([trainjob], records, "gcp") == [trainjob]


def test_a_forwarded_word_first_in_the_list_is_no_forwarded_variable():
    records = {"a": {"image": "a:1", "env": {"PATH": "/a/bin"}}}
    trainjob = {"kind": "TrainJob", "spec": {"trainer": {"image": "a:1", "args": ["PATH=/p", "-x", "PATH=/p", "-x"]}}}
    assert images.with_image_paths([trainjob], records, "aws")[0]["spec"]["trainer"]["args"] == ["PATH=/p", "-x", "PATH=/p:/a/bin", "-x"]


def test_a_trainjob_read_from_json_gets_the_rule_too():
    """The role's objects come back from YAML or JSON: their kinds are new strings, not the module's literals."""
    records = {"a": {"image": "a:1", "env": {"PATH": "/a/bin"}}}
    trainjob = json.loads(json.dumps({"kind": "TrainJob", "spec": {"trainer": {"image": "a:1", "args": ["-x", "PATH=/p"]}}}))
    runtime = json.loads(json.dumps(_runtime({"name": "node", "image": "a:1", "env": [{"name": "PATH", "value": "/p"}]})))
    out = images.with_image_paths([trainjob, runtime], records, "aws")
    assert out[0]["spec"]["trainer"]["args"] == ["-x", "PATH=/p:/a/bin"]
    assert out[1]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == "/p:/a/bin"


def test_the_path_rule_compares_a_record_read_from_yaml_by_value():
    """_lib/images.yaml is read at run time: its words are new strings, not the module's literals."""
    record = json.loads(json.dumps(OWN))
    assert images.path_value(record, "gcp", "LD_LIBRARY_PATH", "/x") == "/x"
    assert images.path_value(record, "aws", "LD_LIBRARY_PATH", json.loads('"/opt/lib"')) == "/opt/lib"
    assert images.path_value(record, "aws", "PATH", "".join(["/opt", "/bin"])) == "/opt/bin"


def test_only_a_trainjobs_trainer_gets_the_rule():
    """Kinds sorting below TrainJob (a JobSet) with a trainer's fields are left alone, as Kueue's Workload above it."""
    records = {"a": {"image": "a:1", "env": {"PATH": "/a/bin"}}}
    jobset = {"kind": "JobSet", "spec": {"trainer": {"image": "a:1", "args": ["-x", "PATH=/p"], "env": [{"name": "PATH", "value": "/p"}]}}}
    assert images.with_image_paths([jobset], records, "aws") == [jobset]
