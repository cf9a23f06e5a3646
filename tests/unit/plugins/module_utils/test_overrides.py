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

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import templating
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
