# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The workload catalog: templates/workloads/*.yaml rendered with the _lib/ fragments, and planned."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import plan

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError, ParseError, RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import TemplateLibrary

NAMES = ["dcgm-diag", "exec-example", "gpu-burn", "nccl-all-gather", "nccl-all-reduce", "nccl-all-reduce-node", "torch-smoke"]


def data(**extra):
    base = {"nodes": 2, "gpus_per_node": 8, "platform": "aws", "gpu_architecture": "h100"}
    base.update(extra)
    return base


def test_catalog():
    assert workload_catalog.available_workloads() == NAMES


def test_unknown_workload_lists_the_available_ones():
    with pytest.raises(
        ConfigError,
        match="^workload: unknown workload 'nccl-alltoall'; available: %s$" % ", ".join(NAMES),
    ):
        workload_catalog.render_workload("nccl-alltoall", data())
    with pytest.raises(ConfigError, match="^workload: unknown workload None"):
        workload_catalog.render_workload(None, data())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("platform, arch, gpus", [("aws", "h100", 8), ("gcp", "h200", 8), ("azure", "a100", 8), ("oci", "b200", 8), ("", "", 4)])
def test_every_workload_renders_a_plan_input(name, platform, arch, gpus):
    rendered = workload_catalog.render_workload(name, data(platform=platform, gpu_architecture=arch, gpus_per_node=gpus))
    assert rendered["workload"] == name and rendered["framework"] in ("mpi", "torch", "exec")
    assert set(rendered) <= {"workload", "framework", "image", "image_kind", "trainer", "collective", "env", "results"}
    assert rendered["image_kind"] in ("nccl-tests", "pytorch", "dcgm")
    assert rendered["results"] == ("nccl-tests" if rendered.get("collective") else ({"dcgm-diag": "dcgm-diag", "gpu-burn": "gpu-burn"}.get(name)))
    assert set(rendered["trainer"]) <= set(plan.TRAINER_KEYS[rendered["framework"]])
    planned = plan.plan_workload(
        dict(
            entry_name=name,
            namespace="burnin",
            run_id="r1",
            image=rendered["image"],
            framework=rendered["framework"],
            nodes=2,
            gpus_per_node=gpus,
            trainer=rendered["trainer"],
            env=rendered.get("env", []),
        ),
        {"platform": platform, "gpuArchitecture": arch},
    )
    trainjob = planned["objects"][-1]
    assert trainjob["kind"] == "TrainJob" and trainjob["spec"]["trainer"]["image"] == rendered["image"]


def test_nccl_all_reduce_defaults():
    rendered = workload_catalog.render_workload("nccl-all-reduce", data())
    assert rendered["collective"] == "all_reduce"
    assert rendered["image"] == "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
    assert rendered["trainer"] == {
        "binary": "/opt/nccl-tests/build/all_reduce_perf",
        "timeout": 1800,
        "args": ["-b", "1K", "-e", "16G", "-f", "2", "-g", "1", "-n", "100", "-w", "5", "-c", "1"],  # AWS: -n 100 (_lib/workloads/nccl-tests-recipes.yaml)
        "mpi_args": ["--bind-to", "none"],
        # the image's own mpirun (_lib/images.yaml): Open MPI then starts orted from the same prefix over ssh
        "mpirun_path": "/opt/amazon/openmpi/bin/mpirun",
    }


@pytest.mark.parametrize(
    "name, arch, max_bytes",
    [
        ("nccl-all-reduce", "a100", "8G"),
        ("nccl-all-reduce", "l40s", "8G"),
        ("nccl-all-reduce", "gb200", "16G"),
        ("nccl-all-gather", "h100", "8G"),
    ],
)
def test_sweep_fits_the_gpu_and_the_published_sweeps(name, arch, max_bytes):
    rendered = workload_catalog.render_workload(name, data(gpu_architecture=arch, image="example.com/nccl-tests:arm64"))
    args = rendered["trainer"]["args"]
    assert args[args.index("-e") + 1] == max_bytes and args[args.index("-b") + 1] == "1K"


def test_nccl_parameters():
    rendered = workload_catalog.render_workload(
        "nccl-all-gather",
        data(
            image="registry.example.com/nccl-tests:2.16",
            nccl_tests_dir="/usr/local/bin",
            min_bytes=8,
            max_bytes="1G",
            step_factor=4,
            iters=50,
            warmup_iters=10,
            check_iters=0,
            timeout=600,
            split_mask="0x7",
            nccl_algo="Ring",
            min_bw=300,
            json_output="/tmp/nccl.json",
            extra_args=["-a", "2"],
            env=[{"name": "NCCL_IB_HCA", "value": "=mlx5_0,mlx5_1"}],
        ),
    )
    trainer = rendered["trainer"]
    assert rendered["image"] == "registry.example.com/nccl-tests:2.16"
    assert trainer["binary"] == "/usr/local/bin/all_gather_perf" and trainer["timeout"] == 600
    assert trainer["args"] == ["-b", "8", "-e", "1G", "-f", "4", "-g", "1", "-n", "50", "-w", "10", "-c", "0", "-J", "/tmp/nccl.json", "-a", "2"]
    assert trainer["mpi_args"] == [
        "--bind-to",
        "none",
        "-x",
        "NCCL_TESTS_SPLIT_MASK=0x7",
        "-x",
        "NCCL_ALGO=Ring",
        "-x",
        "NCCL_TESTS_MIN_BW=300",
        "-x",
        "NCCL_IB_HCA==mlx5_0,mlx5_1",
    ]


def test_grace_needs_an_image():
    with pytest.raises(ConfigError, match=r"^data.image: workload nccl-all-reduce has no default image for gpu_architecture 'gb300' \(Grace"):
        workload_catalog.render_workload("nccl-all-reduce", data(gpu_architecture="gb300", gpus_per_node=4))
    assert workload_catalog.render_workload("torch-smoke", data(gpu_architecture="gb300"))["image"] == "nvcr.io/nvidia/pytorch:26.01-py3"


def test_torch_smoke_runs_python_code_under_torchrun():
    rendered = workload_catalog.render_workload("torch-smoke", data(size_bytes=1 << 20, iters=3))
    trainer = rendered["trainer"]
    assert rendered["framework"] == "torch" and "collective" not in rendered
    assert trainer["script"] == "--no-python" and trainer["args"][:2] == ["python", "-c"]
    code = trainer["args"][2]
    compile(code, "torch-smoke", "exec")
    assert "torch.ones(1048576 // 4" in code and "for _ in range(3):" in code and 'dist.init_process_group("nccl")' in code
    command, args = plan.trainer_command("torch", trainer, 8, False)
    assert command == ["torchrun"] and args[:3] == ["--no-python", "python", "-c"]


def test_exec_example_checks_the_gpu_count():
    rendered = workload_catalog.render_workload("exec-example", data(gpus_per_node=4))
    script = rendered["trainer"]["args"][0]
    assert rendered["trainer"]["command"] == ["/bin/bash", "-c"] and 'test "${found}" -ge 4' in script


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"nodes": 0}, "^data.nodes: must be an integer >= 1"),
        ({"gpus_per_node": "8"}, "^data.gpus_per_node: must be an integer >= 0"),
        ({"platform": None}, "^data.platform: must be a string"),
    ],
)
def test_data_errors(bad, message):
    with pytest.raises(ConfigError, match=message):
        workload_catalog.render_workload("exec-example", data(**bad))
    with pytest.raises(ConfigError, match="^data: must be a mapping"):
        workload_catalog.render_workload("exec-example", [])


def test_rendered_shape_is_checked(tmp_path):
    templates = tmp_path / "templates" / "workloads"
    templates.mkdir(parents=True)
    (tmp_path / "_lib").mkdir()
    cases = {
        "extra": ("framework: mpi\nimage: x\ntrainer: {binary: b}\nreplicas: 2\n", ParseError, "unknown key\\(s\\) replicas"),
        "badfw": ("framework: jax\nimage: x\ntrainer: {a: 1}\n", ParseError, "framework must be one of torch, mpi, exec"),
        "notrainer": ("framework: exec\nimage: x\ntrainer: {}\n", ParseError, "trainer must be a non-empty mapping"),
        "badenv": ("framework: exec\nimage: x\nimage_kind: pytorch\ntrainer: {command: [a]}\nenv: [A=1]\n", ParseError, "env must be a list of"),
        "nokind": ("framework: mpi\nimage: x\ntrainer: {binary: b}\n", ParseError, "image_kind must be one of nccl-tests, pytorch, dcgm, got None"),
        "badcoll": (
            "framework: mpi\nimage: x\nimage_kind: nccl-tests\ntrainer: {binary: b}\ncollective: ''\n",
            ParseError,
            "collective must be a non-empty string",
        ),
        "list": ("- a\n", ParseError, "must render a mapping"),
        "missing": ("framework: exec\nimage: x\ntrainer: {{ '{' }}command: [{{ lib('nope.yaml') }}]}\n", RenderError, "fragment _lib/nope.yaml"),
    }
    for name, (body, dummy, dummy2) in cases.items():
        (templates / ("%s.yaml" % name)).write_text(body)
    library = TemplateLibrary(str(tmp_path / "templates"), str(tmp_path / "_lib"))
    assert workload_catalog.available_workloads(library) == sorted(cases)
    for name, (body, error, message) in cases.items():
        with pytest.raises(error, match=message):
            workload_catalog.render_workload(name, data(), library)


def test_dcgm_diag_runs_dcgmi_at_the_level_and_is_judged_by_its_json():
    rendered = workload_catalog.render_workload("dcgm-diag", data())
    assert rendered["framework"] == "exec" and rendered["results"] == "dcgm-diag" and "collective" not in rendered
    assert rendered["image"].startswith("nvcr.io/nvidia/cloud-native/dcgm:")
    script = rendered["trainer"]["args"][0]
    assert "timeout -k 30 900 dcgmi diag -r 2 -j 2>&1" in script and "# gpufleet-burnin dcgm-diag on ${host}:" in script
    assert "dcgmi diag timed out after 900 s" in script and "--host" not in script
    three = workload_catalog.render_workload("dcgm-diag", data(level=3, privileged=True, image="registry.example/dcgm:4"))
    assert "timeout -k 30 3600 dcgmi diag -r 3 -j" in three["trainer"]["args"][0] and three["image"] == "registry.example/dcgm:4"
    assert "timeout -k 30 300 dcgmi diag -r 1 -j" in workload_catalog.render_workload("dcgm-diag", data(level="1"))["trainer"]["args"][0]
    four = workload_catalog.render_workload("dcgm-diag", data(level=4, privileged=True, timeout=20000, host="nvidia-dcgm.gpu-operator.svc:5555"))
    assert "timeout -k 30 20000 dcgmi diag -r 4 -j --host nvidia-dcgm.gpu-operator.svc:5555 2>&1" in four["trainer"]["args"][0]
    # Persistence mode is DCGM's to report (a CONFIG warning), never changed by the workload.
    assert "nvidia-smi" not in script and "-pm" not in script


@pytest.mark.parametrize("level", [3, 4, "3"])
@pytest.mark.parametrize("privileged", [None, False])
def test_dcgm_diag_levels_3_and_4_need_privileged_and_say_why(level, privileged):
    params = data(level=level) if privileged is None else data(level=level, privileged=privileged)
    with pytest.raises(BurninError, match=r"privileged: level %s runs DCGM's stress plugins .* which need a privileged pod" % level):
        workload_catalog.render_workload("dcgm-diag", params)


@pytest.mark.parametrize(
    "field, value",
    [
        ("privileged", "yes"),
        ("timeout", 0),
        ("timeout", "x"),
        ("timeout", 86401),
        ("timeout", True),
        ("host", "a;rm -rf /"),
        ("host", "-x"),
        ("host", ""),
        ("host", 5555),
    ],
)
def test_dcgm_diag_refuses_bad_parameters_naming_them(field, value):
    with pytest.raises(BurninError, match=r"%s: " % field):
        workload_catalog.render_workload("dcgm-diag", data(**{field: value}))


@pytest.mark.parametrize("level", [0, 5, "2; rm -rf /", True, 2.5, None])
def test_dcgm_diag_refuses_a_level_other_than_1_to_4_naming_it(level):
    with pytest.raises(BurninError, match=r"level: the dcgm-diag workload's diagnostic level \(dcgmi diag -r\) must be 1, 2, 3 or 4, got "):
        workload_catalog.render_workload("dcgm-diag", data(level=level))


def test_dcgm_diag_privileged_is_data_of_the_template_the_gpu_container_gets():
    # templates/workloads/dcgm-diag.yaml: `container` carries the securityContext (role_plan.with_container merges it).
    assert workload_catalog.render_workload("dcgm-diag", data(level=4, privileged=True))["container"] == {"securityContext": {"privileged": True}}
    assert "container" not in workload_catalog.render_workload("dcgm-diag", data(level=2))
    assert "container" not in workload_catalog.render_workload("dcgm-diag", data(level=1, privileged=False))


def test_the_parameters_are_cached_per_user_and_a_bad_cache_file_is_recomputed(tmp_path):
    first = TemplateLibrary()
    first._cache_dir = str(tmp_path)
    expected = workload_catalog.workload_parameters("dcgm-diag", first)
    cached = [name for name in os.listdir(str(tmp_path)) if name.startswith("gpufleet-burnin-reads-")]
    assert expected == ["host", "image", "kernel_log", "level", "privileged", "timeout"] and len(cached) == 1
    (tmp_path / cached[0]).write_text('{"not": "a list"}')
    second = TemplateLibrary()
    second._cache_dir = str(tmp_path)
    assert workload_catalog.workload_parameters("dcgm-diag", second) == expected
    # The file holds what the template reads (its data keys too), rewritten whole.
    assert set(expected) < set(json.loads((tmp_path / cached[0]).read_text()))


def test_dcgm_diag_reads_the_kernel_log_only_when_asked_and_only_privileged():
    off = workload_catalog.render_workload("dcgm-diag", data())["trainer"]["args"][0]
    assert "/dev/kmsg" not in off and "gpufleet-burnin kmsg" not in off
    on = workload_catalog.render_workload("dcgm-diag", data(kernel_log=True, privileged=True))["trainer"]["args"][0]
    assert "start_us=" in on and "dd if=/dev/kmsg iflag=nonblock" in on and "# gpufleet-burnin kmsg: " in on
    assert "nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader" in on and "# gpufleet-burnin gpu " in on
    with pytest.raises(BurninError, match=r"privileged: kernel_log: true reads the node's /dev/kmsg"):
        workload_catalog.render_workload("dcgm-diag", data(kernel_log=True))
    with pytest.raises(BurninError, match=r"kernel_log: must be true or false"):
        workload_catalog.render_workload("dcgm-diag", data(kernel_log="yes", privileged=True))


def test_the_kernel_log_script_keeps_the_runs_xid_records_only(tmp_path):
    # The rendered pipeline run on /dev/kmsg records (the kernel's "prio,seq,usec,flags;message" form): a record before
    # the pod's start and a record without an Xid are dropped.
    import subprocess

    script = workload_catalog.render_workload("dcgm-diag", data(kernel_log=True, privileged=True))["trainer"]["args"][0]
    awk = [line for line in script.splitlines() if line.strip().startswith("| awk")][0].strip()[2:].rstrip(" \\")
    records = "\n".join(
        [
            "3,100,5000000,-;NVRM: Xid (PCI:0000:dc:00): 79, pid=1, GPU has fallen off the bus.",
            "3,101,9000000,-;NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149",
            "6,102,9000001,-;eth0: link up",
        ]
    )
    out = subprocess.run(["bash", "-c", awk.replace("${start_us}", "8000000")], input=records, capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["# gpufleet-burnin kmsg: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149"]


def test_the_default_image_is_the_kinds_record_with_its_key_from_the_shared_file_or_the_platforms_folder(tmp_path):
    library = TemplateLibrary()
    dcgm = library.default_image("dcgm", "aws", "h100")
    assert dcgm["key"] == "dcgm" and dcgm["image"].startswith("nvcr.io/nvidia/cloud-native/dcgm:")
    # GCP's own record is in _lib/platforms/gcp/images.yaml
    assert library.default_image("nccl-tests", "gcp", "h100")["key"] == "nccl-tests-ngc-gke"
    assert library.image_records()[1]["nccl-tests-ngc-gke"] == "_lib/platforms/gcp/images.yaml"
    assert library.default_image("nccl-tests", "aws", "h100")["key"] == "nccl-tests-efa"
    assert library.default_image("no-such-kind", "aws", "h100") is None
    # a _lib without a platforms folder: the shared file's records only
    (tmp_path / "_lib").mkdir()
    (tmp_path / "_lib" / "images.yaml").write_text("k: {image: example.com/x:1, kind: dcgm, arches: [amd64], default_for: ['*']}\n")
    own = TemplateLibrary(str(tmp_path / "templates"), str(tmp_path / "_lib"))
    assert own.image_records()[1] == {"k": "_lib/images.yaml"} and own.default_image("dcgm", "aws", "h100")["image"] == "example.com/x:1"


BASE = "framework: exec\nimage: x\nimage_kind: pytorch\ntrainer: {command: [a]}\n"
NAMED = "workload t: "


@pytest.mark.parametrize(
    "body, error, message",
    [
        ("framework: exec\nimage: x\nimage_kind: pytorch\ntrainer: {}\n", ParseError, NAMED + "trainer must be a non-empty mapping"),
        (BASE + "collective: ''\n", ParseError, NAMED + "collective must be a non-empty string such as all_reduce"),
        (BASE + "results: foo\n", ParseError, NAMED + "results must be one of nccl-tests, dcgm-diag, gpu-burn (or absent), got 'foo'"),
        (BASE + "container: {name: x}\n", ParseError, NAMED + "container must be a mapping of container fields (without name) merged into the GPU container"),
        (BASE + "container: [a]\n", ParseError, NAMED + "container must be a mapping of container fields"),
        (BASE + "results: gpu-burn\njudging: [1]\n", ParseError, NAMED + "judging must be a mapping of the verdict's parameters"),
        # sibling_percent is gpu-burn's: another verdict's (sorting before and after it) or none takes no such parameter
        (
            BASE + "results: dcgm-diag\njudging: {sibling_percent: 5}\n",
            ParseError,
            NAMED + "judging.sibling_percent is not a parameter of the dcgm-diag verdict; known: sibling_percent",
        ),
        (
            BASE + "results: nccl-tests\njudging: {sibling_percent: 5}\n",
            ParseError,
            NAMED + "judging.sibling_percent is not a parameter of the nccl-tests verdict",
        ),
        (BASE + "judging: {sibling_percent: 5}\n", ParseError, NAMED + "judging.sibling_percent is not a parameter of the None verdict"),
        (BASE + "results: gpu-burn\njudging: {x: 1}\n", ParseError, NAMED + "judging.x is not a parameter of the gpu-burn verdict"),
        (BASE + "results: gpu-burn\njudging: {sibling_percent: true}\n", ParseError, NAMED + "judging.sibling_percent must be a number, got True"),
        (BASE + "results: gpu-burn\njudging: {sibling_percent: '5'}\n", ParseError, NAMED + "judging.sibling_percent must be a number, got '5'"),
        (BASE + "env: [A=1]\n", ParseError, NAMED + "env must be a list of {name, value} mappings"),
        (
            "framework: exec\nimage: ''\nimage_kind: pytorch\ntrainer: {command: [a]}\n",
            ConfigError,
            "data.image: workload t has no default image for gpu_architecture 'h100'",
        ),
        ("framework: exec\nimage: 5\nimage_kind: pytorch\ntrainer: {command: [a]}\n", ConfigError, "data.image: workload t has no default image"),
    ],
)
def test_each_rule_of_a_rendered_workload_is_refused_naming_it(tmp_path, body, error, message):
    (tmp_path / "templates" / "workloads").mkdir(parents=True)
    (tmp_path / "templates" / "workloads" / "t.yaml").write_text(body)
    with pytest.raises(error) as caught:
        workload_catalog.render_workload("t", data(), TemplateLibrary(str(tmp_path / "templates"), str(tmp_path / "_lib")))
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    "more",
    [
        "results: gpu-burn\njudging: {sibling_percent: 5}\n",
        "results: gpu-burn\njudging: {sibling_percent: 2.5}\n",
        "judging: {}\n",
        "container: {securityContext: {privileged: true}}\n",
    ],
)
def test_a_rendered_workload_within_the_rules_is_taken_without_image_records(tmp_path, more):
    # a _lib without images.yaml: no record to check the image's kind against
    (tmp_path / "templates" / "workloads").mkdir(parents=True)
    (tmp_path / "templates" / "workloads" / "t.yaml").write_text(BASE + more)
    rendered = workload_catalog.render_workload("t", data(), TemplateLibrary(str(tmp_path / "templates"), str(tmp_path / "_lib")))
    assert rendered["workload"] == "t" and rendered["image"] == "x"


# --- What the mutation run of workload_catalog.py (whole, issue 47's fourth round) found untested --------------------


def probe_library(tmp_path, workloads):
    """A library of WORKLOADS (name -> template text) and no _lib."""
    (tmp_path / "templates" / "workloads").mkdir(parents=True)
    (tmp_path / "_lib").mkdir()
    for name, text in workloads.items():
        (tmp_path / "templates" / "workloads" / ("%s.yaml" % name)).write_text(text)
    return TemplateLibrary(str(tmp_path / "templates"), str(tmp_path / "_lib"))


def test_the_catalogues_collectives_are_those_its_workloads_render_sorted():
    assert workload_catalog.catalogue_collectives() == ["all_gather", "all_reduce"]


def test_a_broken_workload_or_one_without_a_collective_adds_none(tmp_path):
    library = probe_library(
        tmp_path,
        {
            "a-broken": "collective: {{ nothing }}\n",  # sorts first: the others are still read
            "b-list": "- collective: x\n",
            "c-none": "collective: ''\n",
            "d-number": "collective: 5\n",
            "e-sendrecv": "collective: sendrecv\n",
            "f-all-reduce": "collective: all_reduce\n",
            "g-all-reduce": "collective: all_reduce\n",
        },
    )
    assert workload_catalog.catalogue_collectives(library) == ["all_reduce", "sendrecv"]


def test_a_workloads_image_kind_is_what_it_declares_and_none_when_it_does_not_render(tmp_path):
    assert [workload_catalog.image_kind(name) for name in NAMES] == ["dcgm", "pytorch", "pytorch", "nccl-tests", "nccl-tests", "nccl-tests", "pytorch"]
    library = probe_library(tmp_path, {"broken": "image_kind: {{ nothing }}\n", "list": "- image_kind: dcgm\n", "none": "framework: exec\n"})
    assert [workload_catalog.image_kind(name, library) for name in ("broken", "list", "none")] == [None, None, None]


@pytest.mark.parametrize(
    "name, params, burnin_image, expected",
    [
        ("nccl-all-reduce", {}, "reg/nccl:1", {"image": "reg/nccl:1"}),
        ("nccl-all-reduce", {"image": "mine:2"}, "reg/nccl:1", {"image": "mine:2"}),
        ("nccl-all-reduce", {"iters": 5}, None, {"iters": 5}),
        ("nccl-all-reduce", None, "", {}),
        # the gpu and dcgm stages keep their PyTorch and DCGM images
        ("dcgm-diag", {}, "reg/nccl:1", {}),
        ("gpu-burn", {}, "reg/nccl:1", {}),
        ("torch-smoke", {"x": 1}, "reg/nccl:1", {"x": 1}),
    ],
)
def test_burnin_image_is_the_image_of_the_nccl_tests_workloads_only(name, params, burnin_image, expected):
    assert workload_catalog.with_burnin_image(name, params, burnin_image) == expected


def test_a_parameter_the_workload_lacks_is_refused_naming_the_field():
    with pytest.raises(ConfigError) as caught:
        workload_catalog.check_parameters("dcgm-diag", {"levle": 3}, field="burnin_workload_params")
    allowed = ", ".join(workload_catalog.workload_parameters("dcgm-diag"))
    assert (
        str(caught.value)
        == "burnin_workload_params.levle: is not a parameter of workload dcgm-diag; its parameters: %s (templates/workloads/dcgm-diag.yaml)" % allowed
    )
    with pytest.raises(ConfigError, match="^levle: is not a parameter of workload dcgm-diag"):
        workload_catalog.check_parameters("dcgm-diag", {"levle": 3})


@pytest.mark.parametrize("key, value, ok", [("nodes", 1, True), ("nodes", 0, False), ("gpus_per_node", 0, True), ("gpus_per_node", -1, False)])
def test_the_datas_counts_at_their_bound_and_one_past_it(key, value, ok):
    if ok:
        assert workload_catalog.render_workload("exec-example", data(**{key: value}))["workload"] == "exec-example"
        return
    with pytest.raises(ConfigError) as caught:
        workload_catalog.render_workload("exec-example", data(**{key: value}))
    assert str(caught.value) == "data.%s: must be an integer >= %d, got %d" % (key, 1 if key == "nodes" else 0, value)


def test_only_yaml_files_with_a_workload_name_are_workloads(tmp_path):
    library = probe_library(tmp_path, {"good-1": "collective: x\n", "Bad_Name": "collective: y\n"})
    (tmp_path / "templates" / "workloads" / "notes.txt").write_text("")  # "note" would be a name
    (tmp_path / "templates" / "workloads" / "README").write_text("")
    assert workload_catalog.available_workloads(library) == ["good-1"]
