# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Golden tests: the original package's three test inputs, asserted against the documented facts
(NVIDIA cluster-readiness-engine pkg/platform@908cb14: BuildOverrides, overrides/workloadrun.yaml,
testdata/build-overrides/), plus the deliberate deviations with their sources (README.md, Deviations from the original).

The seed (templates/overrides/workloadrun.yaml) is asserted exactly with the platform layer off
(extended_platforms=False), and as the unchanged prefix of the default list (platform layer on)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import overrides, templating
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError, RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.overrides import build_overrides, build_overrides_with_sources

# The upstream inputs of pkg/platform/testdata/build-overrides/*.
TORCH_WITHOUT_MNNVL = dict(entry_name="test", nodes=8, gpus_per_node=8, mlnx_per_node=8, enable_mnnvl=False, framework="torch")
MPI_WITH_MNNVL = dict(entry_name="test", nodes=2, gpus_per_node=4, mlnx_per_node=2, enable_mnnvl=True, framework="mpi")
EXEC_SINGLE_NODE = dict(entry_name="test", nodes=1, gpus_per_node=1, framework="exec")

GB = {"in": ["gb200", "gb300"]}
WHEN = {
    "T1": {"gpuArchitecture": GB},
    "T2": {"platform": {"equals": "aws"}, "gpuArchitecture": GB},
    "T3": {"platform": {"equals": "gcp"}, "gpuArchitecture": GB},
    "T4": {"platform": {"equals": "azure"}, "gpuArchitecture": GB},
    # DEVIATION: T5/T6 scoped to GB300 (original: every AWS GPU).
    "T5": {"platform": {"equals": "aws"}, "gpuArchitecture": {"equals": "gb300"}},
    "T6": {"platform": {"equals": "aws"}, "gpuArchitecture": {"equals": "gb300"}},
    "T7": {"platform": {"equals": "aws"}, "gpuArchitecture": {"equals": "gb200"}},
    "T8": {"platform": {"equals": "aws"}, "gpuArchitecture": {"equals": "gb300"}},
    "T9": {"platform": {"equals": "aws"}, "gpuArchitecture": {"equals": "h100"}},
    "T10": {"platform": {"equals": "gcp"}, "gpuArchitecture": {"equals": "h100"}},
    "T11": {"platform": {"equals": "gcp"}, "gpuArchitecture": GB},
    "T12": {"platform": {"equals": "azure"}},
    "T13": {"platform": {"equals": "togetherai"}},
    "T14": {"platform": {"equals": "togetherai"}},
    "T15": {"platform": {"equals": "mistral"}, "gpuArchitecture": {"equals": "gb300"}},
    "T16": {"platform": {"equals": "mistral"}, "gpuArchitecture": {"equals": "gb300"}},
}
NON_MPI = ["T%d" % n for n in range(1, 17) if n != 6]
MPI = ["T%d" % n for n in range(1, 16) if n != 14]


def seed_overrides(config, library=None):
    """The seed alone: the original's list (platform layer off)."""
    return build_overrides(dict(config, extended_platforms=False), library)


def by_name(overrides, names):
    assert len(overrides) == len(names)
    return dict(zip(names, overrides))


def runtime_pod(dependency):
    job = dependency["spec"]["template"]["spec"]["replicatedJobs"][0]
    assert job["name"] == "node"
    return job["template"]["spec"]["template"]


def node_container(dependency):
    (container,) = runtime_pod(dependency)["spec"]["containers"]
    assert container["name"] == "node"
    return container


def trainer_env(override):
    return override["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["env"]


def env_map(env):
    return dict((item["name"], item["value"]) for item in env)


@pytest.mark.parametrize(
    "config, names",
    [
        (TORCH_WITHOUT_MNNVL, NON_MPI),
        (MPI_WITH_MNNVL, MPI),
        (EXEC_SINGLE_NODE, NON_MPI),
    ],
    ids=["torch-without-mnnvl", "mpi-with-mnnvl", "exec-framework-single-node"],
)
def test_golden_inputs_render_the_documented_entries_in_order(config, names):
    overrides = seed_overrides(config)
    assert len(overrides) == {"mpi": 14}.get(config["framework"], 15)
    for name, override in by_name(overrides, names).items():
        assert override["when"] == WHEN[name], name
        assert "jobTemplatePatch" not in override


@pytest.mark.parametrize(
    "config", [TORCH_WITHOUT_MNNVL, MPI_WITH_MNNVL, EXEC_SINGLE_NODE], ids=["torch-without-mnnvl", "mpi-with-mnnvl", "exec-framework-single-node"]
)
def test_seed_is_the_unchanged_prefix_of_the_default_list(config):
    seed = seed_overrides(config)
    full, sources = build_overrides_with_sources(config)
    assert full == build_overrides(config)
    assert full[: len(seed)] == seed
    assert sources[: len(seed)] == ["templates/overrides/workloadrun.yaml"] * len(seed)
    layer = sources[len(seed) :]
    assert layer and all(source.startswith("templates/overrides/platforms/") for source in layer)
    assert layer == sorted(layer)  # platform files in file-name order
    # every platform entry names its file's platform (plan_workload renders only the cluster's file)
    for override, source in zip(full[len(seed) :], layer):
        assert override["when"]["platform"]["equals"] == source.rsplit("/", 1)[1][: -len(".yaml")]


def test_torch_without_mnnvl_entry_contents():
    t = by_name(seed_overrides(TORCH_WITHOUT_MNNVL), NON_MPI)
    compute_domain, patch = t["T1"]["dependencies"]
    assert compute_domain["apiVersion"] == "resource.nvidia.com/v1beta1" and compute_domain["kind"] == "ComputeDomain"
    assert compute_domain["metadata"] == {"name": "test-compute-domain", "labels": {"app": "test"}}
    assert compute_domain["spec"]["channel"] == {"allocationMode": "Single", "resourceClaimTemplate": {"name": "test-channel"}}
    # DEVIATION: numNodes is deprecated in the NVIDIA DRA driver; 0 is recommended since v25.8.0 (NVIDIA/k8s-dra-driver-gpu computedomain.go).
    assert compute_domain["spec"]["numNodes"] == 0
    assert patch["metadata"]["name"] == "test-runtime"
    assert runtime_pod(patch)["spec"]["resourceClaims"] == [{"name": "compute-domain", "resourceClaimTemplateName": "test-channel"}]
    assert node_container(patch)["resources"] == {"claims": [{"name": "compute-domain"}]}

    assert t["T2"]["orchestration"] == {"topology": {"topologyKey": "topology.k8s.aws/network-node-layer-1"}}
    assert t["T3"]["orchestration"] == {"topology": {"topologyKey": "cloud.google.com/gce-topology-block"}}
    assert t["T4"]["orchestration"] == {"topology": {"topologyKey": "kubernetes.azure.com/ppg"}}
    assert t["T5"]["preCommand"] == ["rm -rf /opt/amazon", "unset NCCL_NET_PLUGIN", "unset NCCL_TUNER_PLUGIN", "unset AWS_OFI_NCCL_VERSION"]

    efa4 = node_container(t["T7"]["dependencies"][0])["resources"]
    assert efa4 == {"limits": {"vpc.amazonaws.com/efa": 4}, "requests": {"vpc.amazonaws.com/efa": 4}}
    efa32 = node_container(t["T9"]["dependencies"][0])["resources"]
    assert efa32 == {"limits": {"vpc.amazonaws.com/efa": 32}, "requests": {"vpc.amazonaws.com/efa": 32}}
    assert isinstance(efa32["limits"]["vpc.amazonaws.com/efa"], int)

    template, patch = t["T8"]["dependencies"]
    assert (template["apiVersion"], template["kind"], template["metadata"]["name"]) == ("resource.k8s.io/v1", "ResourceClaimTemplate", "test-roce")
    assert template["spec"]["spec"]["devices"]["requests"] == [{"name": "roce", "exactly": {"deviceClassName": "roce.networking.k8s.aws", "count": 8}}]
    assert runtime_pod(patch)["spec"]["resourceClaims"] == [
        {"name": "compute-domain", "resourceClaimTemplateName": "test-channel"},
        {"name": "roce-channel", "resourceClaimTemplateName": "test-roce"},
    ]
    assert node_container(patch)["resources"]["claims"] == [{"name": "compute-domain"}, {"name": "roce-channel"}]

    azure = node_container(t["T12"]["dependencies"][0])["resources"]
    assert azure == {"limits": {"nvidia.com/mlnxnics": 8}, "requests": {"nvidia.com/mlnxnics": 8}}
    together = node_container(t["T13"]["dependencies"][0])["resources"]
    assert together == {"limits": {"nvidia.com/mlnxnics": "8"}, "requests": {"nvidia.com/mlnxnics": "8"}}

    together_env = trainer_env(t["T14"])
    assert [item["name"] for item in together_env] == [
        "NCCL_DEBUG",
        "NCCL_IB_PCI_RELAXED_ORDERING",
        "NCCL_IGNORE_CPU_AFFINITY",
        "NCCL_SOCKET_IFNAME",
        "NCCL_IB_QPS_PER_CONNECTION",
        "NCCL_IB_SPLIT_DATA_ON_QPS",
        "NCCL_IB_AR_THRESHOLD",
        "NCCL_IB_HCA",
        "NCCL_NVLS_ENABLE",
        "NCCL_CUMEM_ENABLE",
    ]
    assert env_map(together_env)["NCCL_IB_HCA"] == (
        "=mlx5_7:1,mlx5_8:1,mlx5_9:1,mlx5_10:1,mlx5_11:1,mlx5_12:1," "mlx5_5:1,mlx5_6:1,mlx5_2:1,mlx5_3:1,mlx5_0:1,mlx5_1:1"
    )
    assert all(isinstance(item["value"], str) for item in together_env)

    mistral = t["T15"]["dependencies"][0]
    container = node_container(mistral)
    assert container["resources"] == {"limits": {"rdma/ib": "1"}, "requests": {"rdma/ib": "1"}}
    assert container["env"] == trainer_env(t["T16"])
    assert env_map(container["env"])["NCCL_MNNVL_ENABLE"] == "0"
    assert len(container["env"]) == 10 and env_map(container["env"])["PMIX_MCA_gds"] == "^ds12"
    assert runtime_pod(mistral)["spec"]["tolerations"] == [
        {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
    ]


def test_gcp_h100_uses_the_current_tcpxo_profile():
    # DEVIATION: container-engine-accelerators gpudirect-tcpxo README (Jan 2026) / nccl-env-profile.sh.
    env = trainer_env(by_name(seed_overrides(TORCH_WITHOUT_MNNVL), NON_MPI)["T10"])
    values = env_map(env)
    assert values["NCCL_PROTO"] == "Simple,LL128"
    assert "NCCL_ALGO" not in values and "NCCL_DYNAMIC_CHUNK_SIZE" not in values
    assert values["NCCL_NVLS_ENABLE"] == "1"
    assert values["NCCL_NVLSTREE_MAX_CHUNKSIZE"] == "131072"  # the guest-config checker aborts without it
    assert values["NCCL_FASTRAK_IFNAME"] == "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"
    assert values["NCCL_TUNER_CONFIG_PATH"] == "/usr/local/nvidia/lib64/a3plus_tuner_config.textproto"
    assert len(values) == len(env)


def test_gcp_gb200_network_annotations_on_the_pod_template():
    # DEVIATION: GKE reads multi-network annotations from pods (original put them on the Job template).
    patch = by_name(seed_overrides(TORCH_WITHOUT_MNNVL), NON_MPI)["T11"]["dependencies"][0]
    job = patch["spec"]["template"]["spec"]["replicatedJobs"][0]
    assert "metadata" not in job["template"]
    annotations = runtime_pod(patch)["metadata"]["annotations"]
    assert annotations["networking.gke.io/default-interface"] == "eth0"
    import json

    interfaces = json.loads(annotations["networking.gke.io/interfaces"])
    assert interfaces == [{"interfaceName": "eth0", "network": "default"}] + [{"interfaceName": "eth%d" % (n + 2), "network": "rdma-%d" % n} for n in range(4)]
    container = node_container(patch)
    assert container["resources"]["limits"] == dict(("networking.gke.io.networks/rdma-%d" % n, "1") for n in range(4))
    assert container["env"] == [{"name": "NCCL_NET_GDR_LEVEL", "value": "5"}, {"name": "NCCL_DEBUG", "value": "INFO"}]


def test_mpi_with_mnnvl_entry_contents():
    t = by_name(seed_overrides(MPI_WITH_MNNVL), MPI)
    args = t["T6"]["mpiArgs"]
    assert args[:2] == ["-x", "NCCL_NET_PLUGIN=none"]
    # The later upstream RoCE pins (0efef83, ADR-070), folded into T6 for GB300.
    assert args[2:] == [
        "--mca",
        "orte_keep_fqdn_hostnames",
        "true",
        "--mca",
        "pml",
        "ob1",
        "--mca",
        "btl",
        "tcp,self",
        "--mca",
        "btl_tcp_if_include",
        "eth0",
        "--mca",
        "oob",
        "tcp",
        "--mca",
        "oob_tcp_if_include",
        "eth0",
        "--mca",
        "coll_ucc_enable",
        "0",
        "--mca",
        "coll_hcoll_enable",
        "0",
        "-x",
        "NCCL_DEBUG_SUBSYS=NET,INIT",
        "-x",
        "NCCL_SOCKET_IFNAME=eth0",
        "-x",
        "NCCL_IB_GID_INDEX=3",
        "-x",
        "NCCL_NVLS_ENABLE=1",
        "-x",
        "NCCL_CUMEM_ENABLE=1",
        "-x",
        "NCCL_NET_GDR_C2C=1",
    ]
    assert node_container(t["T12"]["dependencies"][0])["resources"]["limits"] == {"nvidia.com/mlnxnics": 2}
    assert node_container(t["T13"]["dependencies"][0])["resources"]["limits"] == {"nvidia.com/mlnxnics": "2"}
    assert env_map(node_container(t["T15"]["dependencies"][0])["env"])["NCCL_MNNVL_ENABLE"] == "1"
    assert "jobTemplate" not in t["T15"]


def test_exec_single_node_zero_nics_requests_none():
    # DEVIATION (original bug 3, ADR-087): mlnx_per_node 0 emits no nvidia.com/mlnxnics request at all.
    t = by_name(seed_overrides(EXEC_SINGLE_NODE), NON_MPI)
    for name in ("T12", "T13"):
        assert node_container(t[name]["dependencies"][0]) == {"name": "node"}
    assert t["T1"]["dependencies"][0]["spec"]["numNodes"] == 0


@pytest.mark.parametrize("field, value", [("framework", "jax"), ("entry_name", "Test"), ("nodes", 0), ("mlnx_per_node", -1), ("enable_mnnvl", "true")])
def test_bad_config_names_the_field(field, value):
    with pytest.raises(ConfigError, match=field):
        build_overrides(dict(TORCH_WITHOUT_MNNVL, **{field: value}))


@pytest.fixture
def library_copy(tmp_path):
    shutil.copytree(templating.TEMPLATES_DIR, str(tmp_path / "templates"))
    shutil.copytree(templating.LIB_DIR, str(tmp_path / "_lib"))
    return tmp_path


def test_missing_fragment_is_a_clear_error(library_copy):
    os.remove(str(library_copy / "_lib" / "platforms" / "mistral" / "ib-env.yaml"))
    library = templating.TemplateLibrary(str(library_copy / "templates"), str(library_copy / "_lib"))
    with pytest.raises(RenderError, match=r"platform: render overrides: .*_lib/platforms/mistral/ib-env.yaml does not exist"):
        build_overrides(TORCH_WITHOUT_MNNVL, library)


def test_template_syntax_error_names_the_file(library_copy):
    (library_copy / "_lib" / "platforms" / "azure" / "mlnx-runtime-patch.yaml").write_text("{% if %}\n")
    library = templating.TemplateLibrary(str(library_copy / "templates"), str(library_copy / "_lib"))
    with pytest.raises(RenderError, match=r"azure/mlnx-runtime-patch.yaml line 1: template syntax error"):
        build_overrides(TORCH_WITHOUT_MNNVL, library)


def test_unknown_override_key_is_a_parse_error(library_copy):
    (library_copy / "templates" / "overrides" / "workloadrun.yaml").write_text("- when: {}\n  preComand: [x]\n")
    library = templating.TemplateLibrary(str(library_copy / "templates"), str(library_copy / "_lib"))
    with pytest.raises(ParseError, match="preComand"):
        build_overrides(TORCH_WITHOUT_MNNVL, library)


def test_lib_indent_and_to_mpi_args_helpers(library_copy):
    lib = library_copy / "_lib"
    (lib / "a.yaml").write_text("x: 1\n\ny: {{ entry_name }}\n")
    (lib / "outer.yaml").write_text("{{ lib('a.yaml') | indent(2) }}|\n")
    (lib / "env.yaml").write_text('- name: A\n  value: say "hi"\n')
    templates = library_copy / "templates"
    (templates / "t.txt").write_text("[{{ lib('outer.yaml') }}]\n{{ lib('env.yaml') | to_mpi_args }}")
    library = templating.TemplateLibrary(str(templates), str(lib))
    # lib drops exactly one trailing newline; indent pads the first and the blank lines too.
    assert library.render("t.txt", {"entry_name": "e"}) == '[  x: 1\n  \n  y: e|]\n- -x\n- "A=say \\"hi\\""'


def test_warm_loads_every_template_and_leaves_broken_ones_to_the_render(library_copy):
    (library_copy / "_lib" / "platforms" / "azure" / "mlnx-runtime-patch.yaml").write_text("{% if %}\n")
    library = templating.TemplateLibrary(str(library_copy / "templates"), str(library_copy / "_lib"))
    library.warm()  # a broken fragment does not fail the warm-up
    loaded = set(library._env.cache.keys()) if library._env.cache is not None else set()
    names = {key[1] for key in loaded}
    assert "templates/overrides/workloadrun.yaml" in names
    assert "_lib/platforms/mistral/ib-env.yaml" in names
    assert "_lib/platforms/azure/mlnx-runtime-patch.yaml" not in names
    assert library._sources is not None
    with pytest.raises(RenderError, match=r"azure/mlnx-runtime-patch.yaml line 1: template syntax error"):
        build_overrides(TORCH_WITHOUT_MNNVL, library)


def test_shared_library_is_one_per_process_and_renders_like_a_fresh_one():
    assert templating.shared_library() is templating.shared_library()
    assert build_overrides(TORCH_WITHOUT_MNNVL) == build_overrides(TORCH_WITHOUT_MNNVL, templating.TemplateLibrary())


# --- What the mutation run of rendering/overrides.py found untested (issue 47, fourth round) ---------------------
# Each rule on both sides: the entry an error names (the first and the second of a list), every refusal's whole
# text, which keys take a JSON string, the keys dropped when empty, a seed or a platform file rendering nothing,
# the platform an entry of a platform file must name, the DRA check, the options' bounds and defaults.


def write_library(root, seed=None, platforms=None):
    """A copy of the collection's templates with the seed and the platform layer replaced (``platforms``: file
    name -> text; None keeps the collection's own files)."""
    if seed is not None:
        (root / "templates" / "overrides" / "workloadrun.yaml").write_text(seed)
    if platforms is not None:
        layer = root / "templates" / "overrides" / "platforms"
        shutil.rmtree(str(layer))
        layer.mkdir()
        for name, text in platforms.items():
            (layer / name).write_text(text)
    return templating.TemplateLibrary(str(root / "templates"), str(root / "_lib"))


@pytest.mark.parametrize(
    "item, index, message",
    [
        ([], 0, "platform: parse overrides: override #1 is not a mapping"),
        ("when: {}", 1, "platform: parse overrides: override #2 is not a mapping"),
        ({"preCommand": ["x"]}, 0, "platform: parse overrides: override #1 needs a 'when' mapping"),
        ({"when": []}, 1, "platform: parse overrides: override #2 needs a 'when' mapping"),
        (
            {"when": {}, "preComand": [], "zz": 1},
            2,
            "platform: parse overrides: override #3 has unknown keys preComand, zz; allowed: " + ", ".join(overrides.OVERRIDE_KEYS),
        ),
        ({"when": {}, "dependencies": {"kind": "ConfigMap"}}, 0, "platform: parse overrides: override #1 dependencies must be a list"),
        ({"when": {}, "mpiArgs": "-x A=1"}, 1, "platform: parse overrides: override #2 mpiArgs must be a list"),
    ],
)
def test_a_refused_entry_is_named_by_its_place_in_the_list_counted_from_one(item, index, message):
    with pytest.raises(ParseError) as caught:
        overrides.parse_override(item, index)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "key, text, parsed",
    [
        # As the original: only jobTemplatePatch takes its JSON Patch document as a string.
        ("jobTemplatePatch", '[{"op": "add", "path": "/a", "value": 1}]', [{"op": "add", "path": "/a", "value": 1}]),
        ("dependencies", '[{"kind": "ConfigMap"}]', None),  # sorts before jobTemplatePatch
        ("preCommand", '["echo a"]', None),  # sorts after it
        ("mpiArgs", '["-x", "A=1"]', None),
    ],
)
def test_only_jobtemplatepatch_takes_a_json_string(key, text, parsed):
    if parsed is not None:
        assert overrides.parse_override({"when": {}, key: text}, 0) == {"when": {}, key: parsed}
        return
    with pytest.raises(ParseError) as caught:
        overrides.parse_override({"when": {}, key: text}, 0)
    assert str(caught.value) == "platform: parse overrides: override #1 %s must be a list" % key


@pytest.mark.parametrize("text", ['[{"op": "add"', "not json", ""])
def test_a_jobtemplatepatch_string_that_is_no_json_is_a_parse_error_naming_the_entry(text):
    with pytest.raises(ParseError) as caught:
        overrides.parse_override({"when": {}, "jobTemplatePatch": text}, 1)
    assert str(caught.value).startswith("platform: parse overrides: override #2 jobTemplatePatch is not JSON: ")


def test_empty_values_are_dropped_but_an_empty_when_is_kept():
    item = {"when": {}, "jobTemplate": {}, "jobTemplatePatch": [], "dependencies": [], "orchestration": {}, "preCommand": None, "mpiArgs": []}
    assert overrides.parse_override(item, 0) == {"when": {}}  # an empty when matches every cluster
    full = {"when": {"platform": {"equals": "aws"}}, "orchestration": {"topology": {}}, "preCommand": [1, "b"], "mpiArgs": ["-x"]}
    assert overrides.parse_override(full, 0) == dict(full, preCommand=["1", "b"])


def test_only_a_platform_file_may_render_nothing(library_copy):
    # A platform file whose entries are all conditional renders no YAML at all: no entries. The seed must be a list.
    library = write_library(library_copy, platforms={"zz.yaml": "{% if false %}\n- when: {}\n{% endif %}\n"})
    assert build_overrides_with_sources(TORCH_WITHOUT_MNNVL, library)[1] == ["templates/overrides/workloadrun.yaml"] * 15
    library = write_library(library_copy, seed="# nothing\n", platforms={})
    with pytest.raises(ParseError) as caught:
        build_overrides(TORCH_WITHOUT_MNNVL, library)
    assert str(caught.value) == "platform: parse overrides: templates/overrides/workloadrun.yaml must render a YAML list, got NoneType"
    library = write_library(library_copy, seed="- when: {}\n", platforms={"aa.yaml": "when: {}\n"})
    with pytest.raises(ParseError) as caught:
        build_overrides(TORCH_WITHOUT_MNNVL, library)
    assert str(caught.value) == "platform: parse overrides: templates/overrides/platforms/aa.yaml must render a YAML list, got dict"


@pytest.mark.parametrize("equals", ["aaa", "zzz", None])
def test_every_entry_of_a_platform_file_names_that_platform(library_copy, equals):
    # The second entry names a platform sorting before the file's, after it, or none.
    when = "{platform: {equals: %s}}" % equals if equals else "{gpuArchitecture: {equals: h100}}"
    text = "- when: {platform: {equals: mid}}\n- when: %s\n" % when
    library = write_library(library_copy, seed="- when: {}\n", platforms={"mid.yaml": text})
    with pytest.raises(ParseError) as caught:
        build_overrides(TORCH_WITHOUT_MNNVL, library)
    assert str(caught.value) == "platform: parse overrides: override #2 of templates/overrides/platforms/mid.yaml must have when.platform.equals: mid"
    # the first entry of a file is #1, and the same entry naming its platform is taken
    library = write_library(library_copy, seed="- when: {}\n", platforms={"mid.yaml": "- when: %s\n" % when})
    with pytest.raises(ParseError, match="override #1 of templates/overrides/platforms/mid.yaml"):
        build_overrides(TORCH_WITHOUT_MNNVL, library)
    library = write_library(library_copy, seed="- when: {}\n", platforms={"mid.yaml": "- when: {platform: {equals: mid}}\n"})
    assert build_overrides(TORCH_WITHOUT_MNNVL, library) == [{"when": {}}, {"when": {"platform": {"equals": "mid"}}}]


def test_a_refused_entry_of_a_file_names_the_file(library_copy):
    library = write_library(library_copy, seed="- when: {}\n- 3\n", platforms={})
    with pytest.raises(ParseError) as caught:
        build_overrides(TORCH_WITHOUT_MNNVL, library)
    assert str(caught.value) == "platform: parse overrides: override #2 is not a mapping (templates/overrides/workloadrun.yaml)"


@pytest.mark.parametrize(
    "obj, needs",
    [
        ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "spec": {}}, True),
        ({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain"}, True),
        # the API version a DRA object gets on a server without DRA, read back as text built at run time
        ({"apiVersion": "".join(["resource.k8s.io/", "UNAVAILABLE"]), "kind": "Anything"}, True),
        (
            {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "spec": {"a": [{"resourceClaims": [{"name": "x"}]}]}},
            True,
        ),  # a runtime whose pods claim devices
        ({"apiVersion": "batch/v1", "kind": "Job", "spec": {}}, False),  # an API version sorting before DRA's
        ({"apiVersion": "v1", "kind": "ConfigMap", "data": {"resourceClaims": "x"}}, False),  # claims outside the spec
        ({"apiVersion": "resource.k8s.io/UNAVAILABLF", "kind": "Job"}, False),  # sorting just after it
        ({"kind": "ConfigMap", "spec": None}, False),
    ],
)
def test_what_needs_dra(obj, needs):
    assert overrides.needs_dra(obj) is needs


@pytest.mark.parametrize(
    "dependency, refused",
    [
        ("{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: b}}", False),
        ("{apiVersion: resource.nvidia.com/v1beta1, kind: ComputeDomain, metadata: {name: d}}", True),
    ],
)
def test_a_server_without_dra_refuses_only_overrides_with_a_dra_dependency(library_copy, dependency, refused):
    seed = "- when: {}\n  preCommand: [a]\n- when: {}\n  dependencies:\n  - %s\n" % dependency
    library = write_library(library_copy, seed=seed, platforms={})
    config = dict(TORCH_WITHOUT_MNNVL, server_version="v1.31.2")
    if not refused:
        assert len(build_overrides(config, library)) == 2
        return
    with pytest.raises(ConfigError, match=r"^server_version: Kubernetes v1\.31\.2 has no resource\.k8s\.io DRA API"):
        build_overrides(config, library)


def test_the_platform_layer_is_on_by_default(library_copy):
    library = write_library(library_copy, platforms={"aa.yaml": "[]\n", "bb.yaml": "[]\n"})
    assert overrides.override_templates(library) == ["overrides/workloadrun.yaml", "overrides/platforms/aa.yaml", "overrides/platforms/bb.yaml"]
    assert overrides.override_templates(library, extended=False) == ["overrides/workloadrun.yaml"]
    assert overrides.override_templates(library, platforms=["bb"]) == ["overrides/workloadrun.yaml", "overrides/platforms/bb.yaml"]


BASE = dict(entry_name="e")


@pytest.mark.parametrize(
    "field, value, ok",
    [
        ("nodes", 1, True),
        ("nodes", 0, False),
        ("gpus_per_node", 0, True),
        ("gpus_per_node", -1, False),
        ("mlnx_per_node", 0, True),
        ("mlnx_per_node", -1, False),
        ("efa_per_node", 0, True),
        ("efa_per_node", -1, False),
        ("rdma_per_node", 0, True),
        ("rdma_per_node", -1, False),
        ("gpus_per_node", True, False),
        ("nodes", "2", False),
    ],
)
def test_the_counts_at_their_bound_and_one_past_it(field, value, ok):
    if ok:
        assert overrides.normalize_override_config(dict(BASE, **{field: value}))[field] == value
        return
    with pytest.raises(ConfigError) as caught:
        overrides.normalize_override_config(dict(BASE, **{field: value}))
    minimum = 1 if field == "nodes" else 0
    assert str(caught.value) == "%s: must be an integer >= %d, got %r" % (field, minimum, value)


def test_the_options_defaults():
    data = overrides.normalize_override_config(dict(BASE))
    assert (data["nodes"], data["gpus_per_node"], data["mlnx_per_node"]) == (1, 0, 0)
    assert (data["enable_mnnvl"], data["framework"], data["extended_platforms"]) == (False, "torch", True)
    assert (data["efa_per_node"], data["rdma_resource"], data["rdma_per_node"], data["server_version"]) == (None, None, None, None)
    assert data["compute_domain_num_nodes"] == 0 and data["rct_api_version"] == "resource.k8s.io/v1"


@pytest.mark.parametrize(
    "given, expected",
    [
        # plugins/doc_fragments/render.py: rdma_per_node is 1 when rdma_resource is given alone; 0 requests none.
        (dict(rdma_resource="rdma/ib"), ("rdma/ib", 1)),
        (dict(rdma_resource="rdma/ib", rdma_per_node=0), ("rdma/ib", 0)),
        (dict(rdma_resource="rdma/ib", rdma_per_node=4), ("rdma/ib", 4)),
        (dict(rdma_resource=""), (None, None)),
        (dict(rdma_per_node=2), (None, 2)),
    ],
)
def test_rdma_per_node_is_one_when_the_resource_is_given_alone(given, expected):
    data = overrides.normalize_override_config(dict(BASE, **given))
    assert (data["rdma_resource"], data["rdma_per_node"]) == expected


def test_the_warm_up_leaves_a_broken_catalogue_to_the_render(monkeypatch):
    def broken(lib_dir=None):
        raise ConfigError("platform_catalog", "broken")

    monkeypatch.setattr(overrides, "load_platform_catalog", broken)
    assert overrides.warm_up() is None
