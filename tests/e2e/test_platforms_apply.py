# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The platform layer against real API servers: plan one burn-in per platform with
plugins/module_utils/rendering/plan.py (plan_workload), apply every planned object with server-side apply through the
kubernetes dynamic client, and read each back: nothing may be pruned or changed.

Uses the `fleet_crds` fixture of conftest.py (the loopback test fleet of tests/fleet: Kubernetes 1.34 and 1.37 with
the upstream CRDs, resource.k8s.io/v1, and Trainer's and JobSet's webhooks). A plan goes to a fleet cluster of its
platform when the fleet has one (its Node objects are then read for discovery, as the role does), otherwise to the
first cluster: API servers do not care which cloud an object is meant for. Server-side apply drops unknown fields
of custom resources with a warning only, so what is read back is compared with what was sent.

The second part (CLOUDS) runs the collection as a user does, one cluster per cloud on its own platform and GPU: AWS,
GCP and Azure on the default fleet, OCI, CoreWeave, Nebius and on-prem on the clouds fleet (`clouds_fleet` fixture,
tests/fleet/clouds-fleet.yml). ansible-playbook lists each cluster's nodes with kubernetes.core, detects its platform
and GPU with gpufleet.burnin.detect_platform, plans with gpufleet.burnin.workload_plan and applies server-side with
kubernetes.core.k8s; the tests read the objects back and check each platform's key facts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import uuid

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload

pytest.importorskip("kubernetes")

FIELD_MANAGER = "gpufleet-burnin-platforms"
TRAINERS = {
    "torch": {"script": "/workspace/smoke.py", "args": ["--steps", "10"]},
    "mpi": {"binary": "/usr/local/bin/all_reduce_perf", "args": ["-b", "8", "-e", "8G", "-f", "2"]},
}
# (platform, gpu, framework, extra plan config): one or more per platform, chosen for what they create.
CASES = [
    ("aws", "h100", "mpi", {}),  # EFA x 32, IPC_LOCK, -x env
    ("aws", "gb300", "torch", {"rct_api_version": "v1beta1"}),  # ComputeDomain, flat RoCE claim
    ("gcp", "h100", "torch", {}),  # A3 Mega: tcpxo-daemon sidecar
    ("gcp", "h100", "mpi", {"instance_type": "a3-highgpu-8g"}),  # A3 High: tcpx-daemon, trainer env patch
    ("gcp", "gb300", "torch", {"rct_api_version": "v1beta2"}),  # A4X Max: mrdma claim, seed keys deleted
    ("gcp", "h200", "mpi", {"platform_vars": {"gcp_rdma_mode": "dranet"}}),  # A3 Ultra over managed DRANET
    ("azure", "gb200", "mpi", {}),  # ND GB200 v6, ComputeDomain
    ("azure", "h100", "torch", {"platform_vars": {"azure_topology_configmap": "ndv5-topo"}}),
    ("oci", "h100", "mpi", {}),  # host network, sshd port ConfigMap
    ("oci", "h200", "torch", {"platform_vars": {"oci_network_mode": "sriov"}}),  # SR-IOV VFs and multus
    ("coreweave", "gb200", "mpi", {}),
    ("coreweave", "h100", "torch", {}),
    ("nebius", "h100", "torch", {}),
    ("onprem", "b200", "mpi", {"platform_vars": {"onprem_networks": ["rdma-net-ipam"]}}),
]


def pruned_paths(sent, got, path=""):
    """Paths present in `sent` that are missing or different in `got` (extra server-side fields are fine)."""
    out = []
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return ["%s: sent a mapping, read back %s" % (path or ".", type(got).__name__)]
        for key, value in sent.items():
            here = "%s.%s" % (path, key)
            if key not in got:
                out.append("%s: pruned" % here)
            else:
                out.extend(pruned_paths(value, got[key], here))
    elif isinstance(sent, list):
        if not isinstance(got, list) or len(got) != len(sent):
            return ["%s: sent %d items, read back %.200r" % (path, len(sent), got)]
        for index, (a, b) in enumerate(zip(sent, got)):
            out.extend(pruned_paths(a, b, "%s[%d]" % (path, index)))
    elif sent != got:
        out.append("%s: sent %r, read back %r" % (path, sent, got))
    return out


def target_cluster(fleet, platform):
    """(cluster, True) for a fleet cluster of `platform` whose nodes match it, else (the first cluster, False)."""
    for name in fleet.clusters:
        record = fleet.cluster(name)
        if record.get("platform") == platform and record.get("nodes_match_group", True):
            return name, True
    return fleet.clusters[0], False


@pytest.fixture(scope="module")
def platforms_namespace(fleet_crds):
    name = "platforms-%s" % uuid.uuid4().hex[:8]
    for cluster in fleet_crds.clusters:
        namespaces = fleet_crds.dynamic(cluster).resources.get(api_version="v1", kind="Namespace")
        namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    for cluster in fleet_crds.clusters:
        namespaces = fleet_crds.dynamic(cluster).resources.get(api_version="v1", kind="Namespace")
        namespaces.delete(name=name)


def list_nodes(fleet, cluster):
    return [item.to_dict() for item in fleet.dynamic(cluster).resources.get(api_version="v1", kind="Node").get().items]


def server_version(fleet, cluster):
    from kubernetes import client

    return client.VersionApi(fleet.api_client(cluster)).get_code().git_version


@pytest.mark.parametrize("platform, gpu, framework, extra", CASES, ids=["%s-%s-%s-%d" % (c[0], c[1], c[2], i) for i, c in enumerate(CASES)])
def test_planned_objects_apply_and_read_back_unpruned(fleet_crds, platforms_namespace, platform, gpu, framework, extra):
    cluster, native = target_cluster(fleet_crds, platform)
    config = dict(
        entry_name=("%s-%s-%s" % (platform, gpu, framework)),
        namespace=platforms_namespace,
        image="nvcr.io/nvidia/pytorch:26.01-py3",
        framework=framework,
        nodes=2,
        gpus_per_node=4 if gpu.startswith("gb") else 8,
        enable_mnnvl=gpu.startswith("gb"),
        run_id="e2e",
        trainer=TRAINERS[framework],
        env=[{"name": "NCCL_DEBUG", "value": "WARN"}],
    )
    config.update(extra)
    facts = {"platform": platform, "gpuArchitecture": gpu}
    if native and fleet_crds.cluster(cluster).get("gpu_architecture") == gpu:
        config["cluster_nodes"] = list_nodes(fleet_crds, cluster)  # discovery, as the role does
    plan = plan_workload(config, facts)
    assert plan["objects"][-1]["kind"] == "TrainJob"
    problems = []
    for obj in plan["objects"]:
        resource, applied = fleet_crds.apply(cluster, obj, platforms_namespace, FIELD_MANAGER, force_conflicts=True)
        applied = applied.to_dict()
        problems.extend("%s %s (apply): %s" % (obj["kind"], obj["metadata"]["name"], p) for p in pruned_paths(obj, applied))
        again = resource.get(name=obj["metadata"]["name"], namespace=platforms_namespace).to_dict()
        problems.extend("%s %s (read back): %s" % (obj["kind"], obj["metadata"]["name"], p) for p in pruned_paths(obj, again))
    assert not problems, "%s on %s:\n%s" % (platform, cluster, "\n".join(problems))


def test_discovery_reads_the_fleet_nodes(fleet_crds, platforms_namespace):
    """On fleet clusters of the platform layer's clouds, what the nodes offer reaches the plan."""
    seen = 0
    for cluster in fleet_crds.clusters:
        record = fleet_crds.cluster(cluster)
        if not record.get("nodes_match_group", True) or record.get("platform") not in ("aws", "gcp", "azure", "oci", "coreweave"):
            continue
        nodes = list_nodes(fleet_crds, cluster)
        gpu = record["gpu_architecture"]
        plan = plan_workload(
            dict(
                entry_name="discovery",
                namespace=platforms_namespace,
                image="img",
                nodes=1,
                gpus_per_node=4 if gpu.startswith("gb") else 8,
                run_id="d",
                trainer=TRAINERS["torch"],
                cluster_nodes=nodes,
            ),
            {"platform": record["platform"], "gpuArchitecture": gpu},
        )
        labels = [(n["metadata"].get("labels") or {}).get("node.kubernetes.io/instance-type") for n in nodes]
        if any(labels):
            assert plan["instance_type"] in labels and plan["platform_data"]["instance_type_source"] == "nodes", cluster
        allocatable = {}
        for n in nodes:
            allocatable.update((n.get("status") or {}).get("allocatable") or (n.get("status") or {}).get("capacity") or {})
        if record["platform"] == "aws" and "vpc.amazonaws.com/efa" in allocatable:
            assert plan["platform_data"]["efa_per_node"] == int(allocatable["vpc.amazonaws.com/efa"]), cluster
            assert plan["platform_data"]["nic_source"] == "nodes"
        seen += 1
    if not seen:
        pytest.skip("the fleet has no cluster of the platform layer's clouds")


def test_server_version_of_the_fleet_drives_the_dra_policy(fleet_crds, platforms_namespace):
    """Each cluster's own version (the default fleet spans 1.34 and 1.37) decides the ResourceClaimTemplate API: v1,
    which the server serves, applied and read back; an older server_version renders v1beta1 (1.32), which a current
    server serves only when its admin opts in (dra_beta_apis in the fleet spec)."""
    from kubernetes.dynamic.exceptions import ResourceNotFoundError

    versions = set()
    for cluster in fleet_crds.clusters:
        version = server_version(fleet_crds, cluster)
        versions.add(version.rsplit(".", 1)[0])
        config = dict(
            entry_name="dra-policy",
            namespace=platforms_namespace,
            image="img",
            nodes=2,
            gpus_per_node=4,
            run_id="p",
            trainer=TRAINERS["torch"],
            server_version=version,
        )
        plan = plan_workload(config, {"platform": "aws", "gpuArchitecture": "gb300"})
        rcts = [o for o in plan["objects"] if o["kind"] == "ResourceClaimTemplate"]
        assert rcts and {o["apiVersion"] for o in rcts} == {"resource.k8s.io/v1"}, cluster
        dyn = fleet_crds.dynamic(cluster)
        for obj in rcts:
            resource = fleet_crds.apply(cluster, obj, platforms_namespace, FIELD_MANAGER)[0]
            got = resource.get(name=obj["metadata"]["name"], namespace=platforms_namespace).to_dict()
            assert not pruned_paths(obj, got), (cluster, pruned_paths(obj, got))
        old = plan_workload(dict(config, server_version="v1.32.4"), {"platform": "aws", "gpuArchitecture": "gb300"})
        assert {o["apiVersion"] for o in old["objects"] if o["kind"] == "ResourceClaimTemplate"} == {"resource.k8s.io/v1beta1"}
        if fleet_crds.cluster(cluster)["dra_beta_apis"]:
            assert dyn.resources.get(api_version="resource.k8s.io/v1beta1", kind="ResourceClaimTemplate")
        else:
            with pytest.raises(ResourceNotFoundError):
                dyn.resources.get(api_version="resource.k8s.io/v1beta1", kind="ResourceClaimTemplate")
    assert len(versions) >= 2, "the default fleet spans two Kubernetes minor versions: %s" % sorted(versions)


# ------------------------------------------------------------------------------------------------------------------
# One cluster per cloud, each with its own platform and GPU: AWS, GCP and Azure on the default fleet, OCI, CoreWeave,
# Nebius and on-prem on the clouds fleet (tests/fleet/clouds-fleet.yml). Through ansible-playbook as a user runs the
# collection: kubernetes.core lists the nodes, gpufleet.burnin.detect_platform tells the platform and GPU,
# gpufleet.burnin.workload_plan plans from the nodes and the served APIs, kubernetes.core.k8s applies server-side.
# The tests then read the objects back from each API server and check the platform's key facts.

CLOUD_FIELD_MANAGER = "gpufleet-burnin-clouds-e2e"
# cloud -> (fleet, cluster, gpu, framework, platform_vars)
CLOUDS = {
    "aws": ("default", "aws-use1-h100-a", "h100", "mpi", {}),
    "gcp": ("default", "gcp-usc1-h100-a", "h100", "torch", {}),
    "azure": ("default", "azure-eus-gb200-a", "gb200", "mpi", {}),
    "oci": ("clouds", "oci-iad-h100-a", "h100", "torch", {"oci_network_mode": "sriov"}),
    "coreweave": ("clouds", "coreweave-use04-gb200-a", "gb200", "mpi", {}),
    "nebius": ("clouds", "nebius-eun1-h200-a", "h200", "torch", {}),
    "onprem": ("clouds", "onprem-dc1-b200-a", "b200", "mpi", {}),
}
# Platforms whose nodes say who they are; an on-prem node does not (no providerID, cloud label or instance type).
DETECTED_FROM_NODES = ("aws", "gcp", "azure", "oci", "coreweave", "nebius")

CLOUDS_PLAYBOOK = r"""
- name: Detect, plan and apply one burn-in per cluster, on its own platform and GPU
  hosts: all
  gather_facts: false
  vars:
    cloud_case: "{{ cloud_cases[inventory_hostname] }}"
  tasks:
    - name: Read the API server's version and APIs
      kubernetes.core.k8s_cluster_info:
        kubeconfig: "{{ burnin_kubeconfig }}"
        context: "{{ burnin_context }}"
      register: cloud_cluster

    - name: List the nodes
      kubernetes.core.k8s_info:
        kubeconfig: "{{ burnin_kubeconfig }}"
        context: "{{ burnin_context }}"
        kind: Node
      register: cloud_nodes

    - name: Detect the platform and GPU from the nodes, with nothing declared and with the group's values
      ansible.builtin.set_fact:
        cloud_detected: "{{ cloud_nodes.resources | gpufleet.burnin.detect_platform }}"
        cloud_checked: >-
          {{ cloud_nodes.resources | gpufleet.burnin.detect_platform(platform=burnin_platform,
                                                                     gpu_architecture=burnin_gpu_architecture) }}

    - name: Plan the burn-in for the cluster's platform and GPU, from its nodes and served APIs
      gpufleet.burnin.workload_plan:
        entry_name: "{{ cloud_case.entry_name }}"
        namespace: "{{ cloud_namespace }}"
        run_id: clouds
        image: nvcr.io/nvidia/pytorch:26.01-py3
        framework: "{{ cloud_case.framework }}"
        trainer: "{{ cloud_case.trainer }}"
        nodes: 2
        gpus_per_node: "{{ (cloud_checked.gpu_architecture | gpufleet.burnin.gpu_defaults(platform=cloud_checked.platform)).gpus_per_node }}"
        enable_mnnvl: "{{ cloud_checked.gpu_architecture in ['gb200', 'gb300'] }}"
        platform: "{{ cloud_checked.platform }}"
        gpu_architecture: "{{ cloud_checked.gpu_architecture }}"
        cluster_nodes: "{{ cloud_nodes.resources }}"
        server_version: "{{ cloud_cluster.version.server.kubernetes.gitVersion }}"
        rct_api_version: "{{ cloud_served | first | default(omit) }}"
        platform_vars: "{{ cloud_case.platform_vars if cloud_case.platform_vars else omit }}"
      vars:
        cloud_served: >-
          {{ ['v1', 'v1beta2', 'v1beta1'] | select('in', cloud_cluster.apis.keys() | select('match', '^resource\.k8s\.io/')
             | map('regex_replace', '^resource\.k8s\.io/', '') | list) | list }}
      register: cloud_plan

    - name: Create the namespace
      kubernetes.core.k8s:
        kubeconfig: "{{ burnin_kubeconfig }}"
        context: "{{ burnin_context }}"
        definition:
          apiVersion: v1
          kind: Namespace
          metadata:
            name: "{{ cloud_namespace }}"

    - name: Apply the planned objects (server-side apply)
      kubernetes.core.k8s:
        kubeconfig: "{{ burnin_kubeconfig }}"
        context: "{{ burnin_context }}"
        definition: "{{ cloud_plan.objects }}"
        apply: true
        server_side_apply:
          field_manager: "{{ cloud_field_manager }}"
          force_conflicts: true
      register: cloud_applied
      # Trainer's webhook may not have the runtime in its cache yet (plugins/action/k8s_apply.py says more).
      retries: 5
      delay: 2
      until: cloud_applied is not failed or 'must be created before the TrainJob' not in (cloud_applied.msg | default(''))

    - name: Record what was detected, planned and applied
      ansible.builtin.copy:
        dest: "{{ cloud_out }}/{{ inventory_hostname }}.json"
        mode: "0600"
        content: >-
          {{ {'detected': cloud_detected, 'checked': cloud_checked, 'plan': cloud_plan,
              'applied_changed': cloud_applied.changed} | to_json }}
"""


class CloudRun:
    """What the playbook recorded for one cluster, and its objects as the API server holds them."""

    def __init__(self, cloud, fleet, cluster, namespace, record):
        self.cloud, self.fleet, self.cluster, self.namespace = cloud, fleet, cluster, namespace
        self.detected, self.checked, self.plan = record["detected"], record["checked"], record["plan"]
        self.applied_changed = record["applied_changed"]

    def server(self, kind):
        """The applied objects of `kind`, read back from the cluster's API server."""
        out = []
        for obj in self.plan["objects"]:
            if obj["kind"] == kind:
                resource = self.fleet.dynamic(self.cluster).resources.get(api_version=obj["apiVersion"], kind=kind)
                out.append(resource.get(name=obj["metadata"]["name"], namespace=self.namespace).to_dict())
        return out

    def worker(self):
        """(pod template, worker container) of the TrainingRuntime on the server: the replicated job named node."""
        runtime = self.server("TrainingRuntime")[0]
        jobs = {job["name"]: job for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]}
        pod = jobs["node"]["template"]["spec"]["template"]
        return pod, pod["spec"]["containers"][0]

    def trainjob(self):
        return self.server("TrainJob")[0]


def env_of(container):
    return dict((item["name"], item.get("value")) for item in container.get("env") or [])


def mpi_exports(trainjob):
    """The VAR=value pairs that mpirun exports (-x) in the TrainJob's trainer args, in order."""
    args = trainjob["spec"]["trainer"].get("args") or []
    return [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "-x"]


def limits(container):
    return dict((key, str(value)) for key, value in ((container.get("resources") or {}).get("limits") or {}).items())


def capabilities(container):
    return ((container.get("securityContext") or {}).get("capabilities") or {}).get("add") or []


def host_paths(pod):
    return dict((v["name"], v["hostPath"]["path"]) for v in pod["spec"].get("volumes") or [] if "hostPath" in v)


def run_cloud_playbook(fleet, clouds, namespace, work):
    work.mkdir(parents=True, exist_ok=True)
    playbook = work / "clouds.yml"
    playbook.write_text(CLOUDS_PLAYBOOK)
    cases = {}
    for cloud in clouds:
        cluster, framework, platform_vars = CLOUDS[cloud][1], CLOUDS[cloud][3], CLOUDS[cloud][4]
        cases[cluster] = {"entry_name": "clouds-%s" % cloud, "framework": framework, "trainer": TRAINERS[framework], "platform_vars": platform_vars}
    extra = work / "vars.yml"
    extra.write_text(yaml.safe_dump({"cloud_cases": cases, "cloud_namespace": namespace, "cloud_out": str(work), "cloud_field_manager": CLOUD_FIELD_MANAGER}))
    command = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        str(playbook),
        "-i",
        fleet.inventory,
        "--limit",
        ":".join(sorted(cases)),
        "-e",
        "@%s" % extra,
        "--forks",
        "4",
    ]
    env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=900)
    assert proc.returncode == 0, proc.stdout[-6000:]
    out = {}
    for cloud in clouds:
        cluster = CLOUDS[cloud][1]
        out[cloud] = CloudRun(cloud, fleet, cluster, namespace, json.loads((work / ("%s.json" % cluster)).read_text()))
    return out


def skip_unless_every_cloud(fleets):
    """Skip when a fleet lacks its clusters of CLOUDS (another spec through GPUFLEET_FLEET_SPEC)."""
    missing = ["%s (%s fleet)" % (spec[1], spec[0]) for spec in CLOUDS.values() if spec[1] not in fleets[spec[0]].clusters]
    if missing:
        pytest.skip("the fleets lack the clusters of CLOUDS: %s" % ", ".join(missing))


@pytest.fixture(scope="module")
def cloud_runs(fleet_crds, clouds_fleet, tmp_path_factory):
    """Both fleets: one ansible-playbook run each over its clusters of CLOUDS; the namespace is removed afterwards."""
    namespace = "clouds-%s" % uuid.uuid4().hex[:8]
    fleets = {"default": fleet_crds, "clouds": clouds_fleet}
    skip_unless_every_cloud(fleets)
    runs = {}
    try:
        for name, one in fleets.items():
            clouds = [cloud for cloud, spec in CLOUDS.items() if spec[0] == name]
            runs.update(run_cloud_playbook(one, clouds, namespace, tmp_path_factory.mktemp("clouds-%s" % name)))
        yield runs
    finally:
        for one in fleets.values():
            for cluster in one.clusters:
                namespaces = one.dynamic(cluster).resources.get(api_version="v1", kind="Namespace")
                try:
                    namespaces.delete(name=namespace)
                except Exception:  # noqa: BLE001 - not created on every cluster
                    pass


def test_every_cloud_has_its_own_cluster(fleet, clouds_fleet):
    """The two fleets hold one cluster per cloud of the platform layer, each of its cloud and GPU."""
    fleets = {"default": fleet, "clouds": clouds_fleet}
    skip_unless_every_cloud(fleets)
    for cloud, spec in CLOUDS.items():
        which, cluster, gpu = spec[:3]
        record = fleets[which].cluster(cluster)
        assert (record["platform"], record["gpu_architecture"], record["nodes_match_group"]) == (cloud, gpu, True), cluster
    assert not set(fleet.clusters) & set(clouds_fleet.clusters)


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_cloud_plan_applies_unpruned(cloud_runs, cloud):
    """Every planned object is on the server, as sent, under the field manager of the apply."""
    run = cloud_runs[cloud]
    assert run.applied_changed
    assert (run.plan["objects"][-1]["kind"], run.checked["platform"], run.checked["gpu_architecture"]) == ("TrainJob", cloud, CLOUDS[cloud][2])
    problems = []
    for sent in run.plan["objects"]:
        got = run.server(sent["kind"])
        got = [g for g in got if g["metadata"]["name"] == sent["metadata"]["name"]][0]
        problems.extend("%s %s: %s" % (sent["kind"], sent["metadata"]["name"], p) for p in pruned_paths(sent, got))
        managers = [entry.get("manager") for entry in got["metadata"].get("managedFields") or []]
        assert CLOUD_FIELD_MANAGER in managers, (sent["kind"], managers)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_cloud_plan_reads_the_cluster_nodes(cloud_runs, cloud):
    """Instance type and NIC resources come from the cluster's own fake nodes, as they would on the cloud."""
    run = cloud_runs[cloud]
    data = run.plan["platform_data"]
    expected = {
        "aws": ("p5.48xlarge", {"efa_per_node": 32, "nic_source": "nodes"}),
        "gcp": ("a3-megagpu-8g", {}),
        "azure": ("Standard_ND128isr_NDR_GB200_v6", {"rdma_resource": "rdma/rdma_shared_device_a", "rdma_per_node": 1, "nic_source": "nodes"}),
        "oci": ("BM.GPU.H100.8", {"rdma_resource": "nvidia.com/rdma-vf", "rdma_per_node": 16, "nic_source": "nodes"}),
        "coreweave": ("gb200-4x", {"rdma_resource": "rdma/ib", "rdma_per_node": 1, "nic_source": "nodes"}),
        "nebius": ("gpu-h200-sxm", {"rdma_resource": None, "nic_source": None}),
        "onprem": (None, {"rdma_resource": "rdma/rdma_shared_device_a", "rdma_per_node": 1, "nic_source": "nodes"}),
    }[cloud]
    assert run.plan["instance_type"] == expected[0]
    if expected[0]:
        assert data["instance_type_source"] == "nodes"
    assert dict((key, data[key]) for key in expected[1]) == expected[1]


def test_aws_on_the_server(cloud_runs):
    run = cloud_runs["aws"]
    worker = run.worker()[1]
    assert limits(worker)["vpc.amazonaws.com/efa"] == "32"
    assert env_of(worker)["FI_PROVIDER"] == "efa" and "FI_PROVIDER=efa" in mpi_exports(run.trainjob())
    assert "IPC_LOCK" in capabilities(worker)


def test_gcp_on_the_server(cloud_runs):
    run = cloud_runs["gcp"]
    pod, worker = run.worker()
    annotations = pod["metadata"]["annotations"]
    interfaces = json.loads(annotations["networking.gke.io/interfaces"])
    assert [i["network"] for i in interfaces] == ["default"] + ["vpc%d" % n for n in range(1, 9)]
    assert "/dev/nvidia7" in annotations["devices.gke.io/container.tcpxo-daemon"]
    daemon = [c for c in pod["spec"]["initContainers"] if c["name"] == "tcpxo-daemon"][0]
    assert daemon["restartPolicy"] == "Always"  # a native sidecar
    assert "NET_ADMIN" in capabilities(daemon) and "NET_ADMIN" not in capabilities(worker)
    assert host_paths(pod)["aperture-devices"] == "/dev/aperture_devices"
    assert pod["spec"]["nodeSelector"]["cloud.google.com/gke-accelerator"] == "nvidia-h100-mega-80gb"
    assert env_of(worker)["NCCL_FASTRAK_IFNAME"] == ",".join("eth%d" % n for n in range(1, 9))


def test_azure_on_the_server(cloud_runs):
    run = cloud_runs["azure"]
    pod, worker = run.worker()
    assert limits(worker)["rdma/rdma_shared_device_a"] == "1" and limits(worker)["nvidia.com/gpu"] == "4"
    env = env_of(worker)
    assert (env["NCCL_MNNVL_ENABLE"], env["NCCL_IB_SL"], env["NCCL_SOCKET_IFNAME"]) == ("1", "1", "eth0")
    assert "NCCL_IB_SL=1" in mpi_exports(run.trainjob())
    assert "IPC_LOCK" in capabilities(worker)
    domain = run.server("ComputeDomain")[0]
    assert domain["spec"]["numNodes"] == 0
    template = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
    assert [c["resourceClaimTemplateName"] for c in pod["spec"]["resourceClaims"]] == [template]
    assert run.plan["topology_key"] == "kubernetes.azure.com/ppg"


def test_oci_on_the_server(cloud_runs):
    run = cloud_runs["oci"]
    pod, worker = run.worker()
    assert limits(worker)["nvidia.com/rdma-vf"] == "16"
    assert pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].split(",") == ["default/rdma-vf"] * 16
    env = env_of(worker)
    assert (env["NCCL_IB_HCA"], env["NCCL_IB_GID_INDEX"], env["NCCL_IB_TC"]) == ("mlx5", "3", "41")
    assert host_paths(pod)["devinf"] == "/dev/infiniband"
    assert "/dev/infiniband" in [m["mountPath"] for m in worker["volumeMounts"]]
    assert worker["securityContext"]["privileged"] is True and "IPC_LOCK" in capabilities(worker)


def test_coreweave_on_the_server(cloud_runs):
    run = cloud_runs["coreweave"]
    pod, worker = run.worker()
    assert limits(worker)["rdma/ib"] == "1" and limits(worker)["nvidia.com/gpu"] == "4"
    env = env_of(worker)
    assert (env["NCCL_IB_HCA"], env["NVIDIA_IMEX_CHANNELS"], env["UCX_NET_DEVICES"]) == ("ibp", "0", "eth0")
    assert {"NCCL_IB_HCA=ibp", "NCCL_MNNVL_ENABLE=1"} <= set(mpi_exports(run.trainjob()))
    domain = run.server("ComputeDomain")[0]
    assert [c["resourceClaimTemplateName"] for c in pod["spec"]["resourceClaims"]] == [domain["spec"]["channel"]["resourceClaimTemplate"]["name"]]
    assert run.plan["topology_key"] == "ds.coreweave.com/nvlink.domain"


def test_nebius_on_the_server(cloud_runs):
    run = cloud_runs["nebius"]
    worker = run.worker()[1]
    assert limits(worker) == {"nvidia.com/gpu": "8"}  # Nebius shows no RDMA resource
    env = env_of(worker)
    assert env["NCCL_IB_HCA"] == "mlx5"
    assert env["UCX_NET_DEVICES"].split(",") == ["mlx5_%d:1" % n for n in range(8)]
    assert "IPC_LOCK" in capabilities(worker)
    assert run.plan["topology_key"] == "topology.nebius.com/gpu-cluster-id"


def test_onprem_on_the_server(cloud_runs):
    run = cloud_runs["onprem"]
    pod, worker = run.worker()
    assert limits(worker)["rdma/rdma_shared_device_a"] == "1"
    assert env_of(worker)["NCCL_IB_HCA"] == "mlx5" and "NCCL_IB_HCA=mlx5" in mpi_exports(run.trainjob())
    assert "IPC_LOCK" in capabilities(worker)
    assert "k8s.v1.cni.cncf.io/networks" not in ((pod.get("metadata") or {}).get("annotations") or {})


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_detection_on_each_cloud(cloud_runs, cloud):
    """detect_platform on the cluster's nodes: the GPU always, the platform where the nodes name it; the group's
    declared values are confirmed."""
    run = cloud_runs[cloud]
    gpu = CLOUDS[cloud][2]
    assert (run.checked["ok"], run.checked["errors"]) == (True, [])
    assert (run.checked["detected_gpu_architecture"], run.detected["gpu_architecture"]) == (gpu, gpu)
    assert run.detected["gpu_nodes"] == 2
    if cloud in DETECTED_FROM_NODES:
        assert (run.detected["ok"], run.detected["platform"], run.detected["platform_source"]) == (True, cloud, "detected")
        assert run.checked["platform_source"] == "declared" and run.checked["detected_platform"] == cloud
    elif cloud == "onprem":
        # Nothing on an on-prem node names a platform: undeclared, detection asks for burnin_platform.
        assert run.detected["platform"] == "unknown" and not run.detected["ok"]
        assert "set burnin_platform" in run.detected["message"]


def test_nebius_nodes_are_detected_as_nebius(cloud_runs):
    run = cloud_runs["nebius"]
    assert (run.detected["platform"], run.detected["ok"]) == ("nebius", True)


def test_oci_sriov_mpirun_exports_one_nccl_ib_hca(clouds_fleet):
    nodes = list_nodes(clouds_fleet, "oci-iad-h100-a")
    plan = plan_workload(
        dict(
            entry_name="oci-sriov",
            namespace="ns",
            image="img",
            framework="mpi",
            nodes=2,
            gpus_per_node=8,
            run_id="x",
            trainer=TRAINERS["mpi"],
            cluster_nodes=nodes,
            rct_api_version="v1",
            platform_vars={"oci_network_mode": "sriov"},
        ),
        {"platform": "oci", "gpuArchitecture": "h100"},
    )
    exports = [value for value in mpi_exports(plan["objects"][-1]) if value.startswith("NCCL_IB_HCA=")]
    assert exports == ["NCCL_IB_HCA=mlx5"]
