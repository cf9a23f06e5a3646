# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""_lib/images.yaml: the default nccl-tests image of each platform, and what the rendered MPI line gives the ranks.

The expected images, mpirun paths and binaries are the vendors' recipes as _lib/images.yaml cites them; the rank
library path is read off the rendered plan (the worker container's env and the mpirun -x list), the way
tests/e2e/test_mpi_launch.py then runs it for real.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import sys

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_plan
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import images, templating

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
sys.path.insert(0, os.path.join(ROOT, "tests", "fleet"))
import nccl_logs  # noqa: E402 pylint: disable=wrong-import-position

# _lib/images.yaml and every platform's _lib/platforms/<platform>/images.yaml.
IMAGES = templating.shared_library().image_records()[0]
PLATFORMS = sorted(name for name in os.listdir(os.path.join(ROOT, "_lib", "platforms")) if not name.endswith(".j2"))
PLATFORM_KEYS = {"plugin_dir", "net_plugin", "host_libraries", "topology_file", "ld_library_path"}

# platform, GPU, instance type ("" = the platform's default for the GPU) -> record, mpirun, binary.
DEFAULTS = [
    ("aws", "h100", "", "nccl-tests-efa", "/opt/amazon/openmpi/bin/mpirun", "/opt/nccl-tests/build/all_reduce_perf"),
    ("gcp", "h100", "", "nccl-tests-ngc-gke", "/usr/local/mpi/bin/mpirun", "/usr/local/bin/all_reduce_perf_mpi"),
    ("gcp", "h100", "a3-highgpu-8g", "nccl-tests-ngc-gke", "/usr/local/mpi/bin/mpirun", "/usr/local/bin/all_reduce_perf_mpi"),
    ("gcp", "h200", "", "nccl-tests-ngc-gke", "/usr/local/mpi/bin/mpirun", "/usr/local/bin/all_reduce_perf_mpi"),
    ("gcp", "b200", "", "nccl-tests-ngc-gke", "/usr/local/mpi/bin/mpirun", "/usr/local/bin/all_reduce_perf_mpi"),
    # Google's A4X Max recipe: its arm64 gIB image, mpirun by name.
    ("gcp", "gb300", "", "nccl-tests-gib-a4x-max", "mpirun", "/third_party/nccl-tests/build/all_reduce_perf"),
    ("azure", "h100", "", "nccl-tests-aia", "/usr/local/mpi/bin/mpirun", "/usr/local/bin/all_reduce_perf_mpi"),
    ("azure", "gb300", "", "nccl-tests-aia", "/usr/local/mpi/bin/mpirun", "/usr/local/bin/all_reduce_perf_mpi"),
    ("oci", "h100", "", "nccl-tests-oke", "/usr/local/mpi/bin/mpirun", "/workspace/nccl-tests/build/all_reduce_perf"),
    ("oci", "gb200", "", "nccl-tests-oke", "/usr/local/mpi/bin/mpirun", "/workspace/nccl-tests/build/all_reduce_perf"),
    ("coreweave", "h100", "", "nccl-tests-hpcx", "/opt/hpcx/ompi/bin/mpirun", "/opt/nccl-tests/build/all_reduce_perf"),
    ("coreweave", "gb200", "", "nccl-tests-hpcx", "/opt/hpcx/ompi/bin/mpirun", "/opt/nccl-tests/build/all_reduce_perf"),
    ("nebius", "h200", "", "nccl-tests-nebius", "mpirun", "/opt/nccl_tests/build/all_reduce_perf"),
    # Nebius' chart is for H100 (CUDA 12.2): B200 falls back to AWS's EFA build with NCCL's own IB.
    ("nebius", "b200", "", "nccl-tests-efa", "/opt/amazon/openmpi/bin/mpirun", "/opt/nccl-tests/build/all_reduce_perf"),
    ("onprem", "b200", "", "nccl-tests-efa", "/opt/amazon/openmpi/bin/mpirun", "/opt/nccl-tests/build/all_reduce_perf"),
    ("togetherai", "h100", "", "nccl-tests-efa", "/opt/amazon/openmpi/bin/mpirun", "/opt/nccl-tests/build/all_reduce_perf"),
]


def _plan(platform, gpu, instance_type=""):
    with open(os.path.join(ROOT, "roles", "burnin", "defaults", "main.yml")) as fh:
        given = yaml.safe_load(fh)
    given.update(burnin_platform=platform, burnin_gpu_architecture=gpu, burnin_nodes=2, burnin_instance_type=instance_type)
    plan = role_plan.role_plan(check_role_vars(given), platform, gpu, "r1", "burnin")
    runtime = [obj for obj in plan["objects"] if obj["kind"] == "TrainingRuntime"][0]
    trainjob = [obj for obj in plan["objects"] if obj["kind"] == "TrainJob"][0]
    jobs = dict((job["name"], job["template"]["spec"]["template"]["spec"]) for job in runtime["spec"]["template"]["spec"]["replicatedJobs"])
    worker = [c for c in jobs["node"]["containers"] if c["name"] == "node"][0]
    return worker, trainjob["spec"]["trainer"]["command"] + trainjob["spec"]["trainer"]["args"]


def _forwarded(words, name):
    """What `-x NAME[=value]` gives the ranks: the value, None for by name (the launcher's), absent: KeyError."""
    for flag, word in zip(words, words[1:]):
        if flag == "-x" and (word == name or word.startswith(name + "=")):
            return word.split("=", 1)[1] if "=" in word else None
    raise KeyError(name)


def _record(image):
    return [record for record in IMAGES.values() if record["image"] == image][0]


def test_records_are_complete():
    seen = {}
    for key, record in IMAGES.items():
        assert record["kind"] in ("nccl-tests", "pytorch", "dcgm"), key
        assert isinstance(record["image"], str) and "/" in record["image"] and ":" in record["image"], key
        assert record["arches"] and set(record["arches"]) <= {"amd64", "arm64"}, key
        assert record["mpirun"] is None or (record["mpirun"].startswith("/") and record["mpirun"].endswith("/bin/mpirun")), key
        if record["kind"] == "nccl-tests":
            assert record["nccl_tests_dir"].startswith("/"), key
            # nccl-tests built with MPI=1 (the workloads call it under mpirun and as a singleton)
            assert set(record["needs"]) == {"libnccl.so.2", "libmpi.so.40"}, key
        else:
            assert record["executables"] and all(path.startswith("/") for path in record["executables"].values()), key
        assert all(isinstance(value, str) for value in record["env"].values()), key
        assert all(path.startswith("/") for path in record["libraries"].values()), key
        # every soname the binary needs is placed: a directory, the loader's cache, or the image's own path
        for soname in record["needs"]:
            placed = [soname in record["libraries"], soname in record.get("loader", []), soname in record.get("image_path", [])]
            hosted = any(soname in (needs.get("host_libraries") or {}) for needs in record["platforms"].values())
            assert any(placed) or hosted, (key, soname)
        assert set(record.get("default_for", [])) <= set(PLATFORMS) | {"*"}, key
        for platform, needs in record["platforms"].items():
            assert platform in PLATFORMS and set(needs) <= PLATFORM_KEYS, (key, platform)
            assert needs.get("ld_library_path") in (None, "replace"), (key, platform)
            assert not (needs.get("plugin_dir") and needs.get("net_plugin")), (key, platform)
        for platform in record.get("default_for", []):
            assert platform == "*" or platform in record["platforms"], (key, platform)
            for arch in record["arches"]:
                for gpu in record.get("default_gpus", ["*"]):
                    assert (record["kind"], platform, arch, gpu) not in seen, (key, seen.get((record["kind"], platform, arch, gpu)))
                    seen[(record["kind"], platform, arch, gpu)] = key
    # Every platform that runs the any-platform x86_64 image says what it needs of it; Mistral's seed entries are GB300
    # only (docs/platforms/mistral.md), whose nodes are arm64: it never runs that image.
    assert set(PLATFORMS) - {"mistral"} <= set(IMAGES["nccl-tests-efa"]["platforms"])
    # one image of each kind for every platform without its own (x86_64 at least)
    assert set(kind for kind, platform, arch, gpu in seen if platform == "*" and arch == "amd64") == {"nccl-tests", "pytorch", "dcgm"}


@pytest.mark.parametrize("platform, gpu, shape, key, mpirun, binary", DEFAULTS, ids=["-".join(c[:3]).strip("-") for c in DEFAULTS])
def test_default_image_per_platform(platform, gpu, shape, key, mpirun, binary):
    worker, words = _plan(platform, gpu, shape)
    assert worker["image"] == IMAGES[key]["image"]
    assert words[2] == mpirun
    assert binary in words


@pytest.mark.parametrize("platform, gpu, shape, key, mpirun, binary", DEFAULTS, ids=["-".join(c[:3]).strip("-") for c in DEFAULTS])
def test_the_binary_names_its_collective(platform, gpu, shape, key, mpirun, binary):
    """The NGC images' all_reduce_perf_mpi is all_reduce for the verdict and for the test fleet's launcher stand-in."""
    worker, words = _plan(platform, gpu, shape)
    assert nccl_results.program_collective(binary) == "all_reduce"
    cmd = nccl_logs.nccl_command({"spec": {"trainer": {"command": words}}})
    assert cmd and cmd["collective"] == "all_reduce" and cmd["program"] == binary.rsplit("/", 1)[-1]


@pytest.mark.parametrize("platform, gpu", [("aws", "gb200"), ("gcp", "gb200"), ("coreweave", "gb300"), ("onprem", "gb200")])
def test_grace_without_an_arm64_record_is_refused_naming_the_variable(platform, gpu):
    with pytest.raises(ConfigError, match=r"gpu_architecture '%s' \(Grace nodes are arm64 .* for platform '%s'\): set burnin_image" % (gpu, platform)):
        workload_catalog.render_workload("nccl-all-reduce", {"nodes": 2, "gpus_per_node": 4, "platform": platform, "gpu_architecture": gpu})


def test_your_image_keeps_the_plain_defaults():
    rendered = workload_catalog.render_workload(
        "nccl-all-reduce", {"nodes": 2, "gpus_per_node": 8, "platform": "gcp", "gpu_architecture": "h100", "image": "example.com/nccl:1"}
    )
    assert rendered["trainer"]["binary"] == "/opt/nccl-tests/build/all_reduce_perf" and "mpirun_path" not in rendered["trainer"]
    assert "env" not in rendered  # no NCCL_NET_PLUGIN for an image we know nothing of


RANK_CASES = [row[:3] for row in DEFAULTS] + [("gcp", "h200", "a3-ultragpu-8g"), ("azure", "h200", ""), ("oci", "b200", "")]


@pytest.mark.parametrize("platform, gpu, shape", RANK_CASES, ids=["-".join(c).strip("-") for c in RANK_CASES])
def test_rank_library_path_prepends_or_replaces_as_the_recipe_says_and_the_plugin_comes_first(platform, gpu, shape):
    worker, words = _plan(platform, gpu, shape)
    record = _record(worker["image"])
    needs = record["platforms"][platform]
    image_path = record["env"].get("LD_LIBRARY_PATH")
    container = dict((item["name"], item.get("value")) for item in worker.get("env") or [])
    forwarded = _forwarded(words, "LD_LIBRARY_PATH")
    # By name: the launcher's, i.e. the container's value where the platform sets one, else the image's.
    rank_path = forwarded if forwarded is not None else container.get("LD_LIBRARY_PATH", image_path)
    if "LD_LIBRARY_PATH" in container:
        assert rank_path == container["LD_LIBRARY_PATH"], "the ranks and the workers' container disagree"
        if needs.get("ld_library_path") != "replace":
            assert image_path and rank_path.endswith(":" + image_path), "%s sets LD_LIBRARY_PATH=%r without the image's %r after it" % (
                platform,
                rank_path,
                image_path,
            )
    else:
        assert needs.get("ld_library_path") != "replace", "%s: the record says the recipe replaces LD_LIBRARY_PATH, the render does not" % platform
    if needs.get("plugin_dir"):
        where = dict(record["libraries"], **(needs.get("host_libraries") or {}))
        holders = [d for d in (rank_path or "").split(":") if d and d in (record["libraries"].get("libnccl-net.so"), where.get("libnccl-net.so"))]
        assert holders and holders[0] == needs["plugin_dir"], "libnccl-net.so is not first found in %s on %r" % (needs["plugin_dir"], rank_path)
    if needs.get("net_plugin"):
        assert container.get("NCCL_NET_PLUGIN") is not None and _forwarded(words, "NCCL_NET_PLUGIN") in (None, container["NCCL_NET_PLUGIN"])


def test_a_platforms_images_are_in_its_folder_and_merged_once():
    records, files = templating.shared_library().image_records()
    for key, record in records.items():
        named = set(record.get("default_for") or []) | set(record.get("platforms") or {})
        if files[key] == "_lib/images.yaml":
            # the shared file holds the images of every platform (default_for "*"), a platform's own in its folder
            assert record["default_for"] == ["*"], key
        else:
            platform = files[key].split("/")[2]
            assert files[key] == "_lib/platforms/%s/images.yaml" % platform and named == {platform}, key
    assert {files[key] for key in records} > {"_lib/images.yaml"}


@pytest.mark.parametrize(
    "sources, message",
    [
        (
            [("_lib/images.yaml", None, {"a": {"image": "x"}}), ("_lib/platforms/p/images.yaml", "p", {"a": {"image": "y"}})],
            "image record a is already in _lib/images.yaml",
        ),
        ([("_lib/platforms/p/images.yaml", "p", {"a": {"default_for": ["q"]}})], "image record a names q in default_for or platforms"),
        ([("_lib/platforms/p/images.yaml", "p", {"a": {"default_for": ["*"]}})], "image record a names * in default_for or platforms"),
        ([("_lib/platforms/p/images.yaml", "p", {"a": {"platforms": {"p": {}, "q": {}}}})], "image record a names q in default_for or platforms"),
        # named in both (the union of the two, not what only one of them names)
        ([("_lib/platforms/p/images.yaml", "p", {"a": {"default_for": ["q"], "platforms": {"q": {}}}})], "image record a names q in default_for or platforms"),
        ([("_lib/platforms/p/images.yaml", "p", ["a"])], "must be a mapping of image records, got list"),
        ([("_lib/images.yaml", None, {"a": "x"})], "image record a must be a mapping"),
    ],
)
def test_bad_image_files_are_refused_naming_the_file(sources, message):
    with pytest.raises(ParseError, match=re.escape("%s: %s" % (sources[-1][0], message))):
        images.merge_records(sources)


def test_merged_records_keep_each_file_and_a_platforms_own_names_it():
    records, files = images.merge_records(
        [
            ("_lib/images.yaml", None, {"a": {"image": "x", "default_for": ["*"], "platforms": {"q": {}}}}),
            ("_lib/platforms/p/images.yaml", "p", {"b": {"image": "y", "kind": "dcgm", "default_for": ["p"], "platforms": {"p": {}}}}),
            ("_lib/platforms/q/images.yaml", "q", None),
            # a platform's record that names no platform at all is its own too
            ("_lib/platforms/r/images.yaml", "r", {"c": {"image": "z", "kind": "pytorch"}}),
        ]
    )
    assert list(records) == ["a", "b", "c"] and files == {"a": "_lib/images.yaml", "b": "_lib/platforms/p/images.yaml", "c": "_lib/platforms/r/images.yaml"}
    with pytest.raises(ConfigError, match=re.escape("but y is _lib/platforms/p/images.yaml's b, a dcgm image")):
        images.check_kind(records, "y", "nccl-tests", "w", files=files)
