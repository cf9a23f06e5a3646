#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: workload_plan
short_description: Plan every object of one GPU burn-in on one cluster
version_added: 0.1.0
description:
  - Renders the TrainingRuntime and the platform overrides, keeps the overrides whose C(when) matches the
    cluster's O(platform), O(gpu_architecture), O(instance_type) and O(framework), and applies them as the original
    WorkloadRun controller did.
  - The overrides are the seed (C(templates/overrides/workloadrun.yaml), the original's) and, unless
    O(extended_platforms=false), the platform layer of the cluster's platform
    (C(templates/overrides/platforms/<platform>.yaml)), which refines the seed per instance type - see
    C(docs/platforms/).
  - Instance type, EFA devices and the RDMA resource come from the first source that has them - the options,
    O(cluster_nodes), or the platform's table in C(_lib/platforms/<platform>/platform.yaml).
  - C(jobTemplate) patches merge (maps recursively, named lists by C(name), other lists replaced), then
    C(jobTemplatePatch) (RFC 6902) runs; runtime patches merge into the runtime; other dependencies
    (ComputeDomain, ResourceClaimTemplate) come first; C(mpiArgs) are prepended to the MPI arguments;
    C(preCommand) lines wrap the trainer command in C(/bin/bash -c) with C(exec).
  - Returns the objects in apply order, ending with a TrainJob unique to O(run_id). Never contacts a cluster.
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
attributes:
  check_mode:
    support: full
    description: Plans the same objects in check mode.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to diff.
  action:
    support: full
    description: Runs on the controller.
options:
  entry_name:
    description: Name of the burn-in entry; prefixes the runtime and its dependencies.
    type: str
    required: true
  image:
    description: Container image.
    type: str
    required: true
  framework:
    description: Trainer framework.
    type: str
    choices: [torch, mpi, exec]
    default: torch
  nodes:
    description: Number of nodes.
    type: int
    default: 1
  gpus_per_node:
    description: GPUs per node.
    type: int
    required: true
  mlnx_per_node:
    description: Mellanox NICs per node; 0 requests none.
    type: int
    default: 0
  enable_mnnvl:
    description: Whether multi-node NVLink is enabled.
    type: bool
    default: false
  env:
    description: User env, merged over the base NCCL env (user wins by name).
    type: list
    elements: dict
    default: []
  volumes:
    description: Extra pod volumes.
    type: list
    elements: dict
    default: []
  volume_mounts:
    description: Extra container mounts.
    type: list
    elements: dict
    default: []
  init_containers:
    description: Init containers of the worker pods.
    type: list
    elements: dict
    default: []
  resources:
    description: Resources of the GPU container; the GPUs are added unless named.
    type: dict
  image_pull_secrets:
    description: Pull secrets, set on every pod through the TrainJob's C(runtimePatches).
    type: list
    elements: dict
    default: []
  trainer_version:
    description: Kubeflow Trainer version targeted.
    type: str
    default: v2.3
  namespace:
    description: Namespace of every object.
    type: str
    required: true
  run_id:
    description: Identifier of this run; the TrainJob is C(<entry_name>-<run_id>) and carries it as a label.
    type: str
    required: true
  platform:
    description: The cluster's platform, for example C(aws), C(gcp), C(azure), C(togetherai), C(mistral).
    type: str
    required: true
  gpu_architecture:
    description: The cluster's GPU architecture, for example C(h100), C(gb200), C(gb300).
    type: str
    required: true
  trainer:
    description:
      - What the trainer runs. torch - C(script) or C(module), C(args). mpi - C(binary), C(args), C(mpi_args),
        C(mpirun_path) (default C(mpirun)), C(timeout) (seconds, default 3600). exec - C(command), C(args).
    type: dict
    required: true
  overrides:
    description:
      - User overrides, same shape as the platform ones, applied after them.
      - A C(null) value in a C(jobTemplate) or a runtime patch deletes that key (RFC 7386).
    type: list
    elements: dict
    default: []
  instance_type:
    description:
      - The cluster's instance / machine type / shape (for example V(p5en.48xlarge), V(a3-highgpu-8g),
        V(Standard_ND96isr_H100_v5), V(BM.GPU.H100.8)), matched by the C(instanceType) condition of overrides.
      - Unset - the most common instance type of the GPU nodes in O(cluster_nodes), else the platform's default
        for O(gpu_architecture) (the C(default) shapes of C(_lib/platforms/<platform>/platform.yaml)), else unknown;
        an entry with an C(instanceType) condition never matches an unknown instance type.
    type: str
  cluster_nodes:
    description:
      - The cluster's Node objects (for example the C(resources) of C(kubernetes.core.k8s_info) with C(kind=Node)),
        read for what is not given - O(instance_type) (label C(node.kubernetes.io/instance-type), or the platform's
        own label), O(efa_per_node) (allocatable C(vpc.amazonaws.com/efa)) and O(rdma_resource) / O(rdma_per_node)
        (the first of the platform's NIC resources the GPU nodes offer; shared ones count 1).
    type: list
    elements: dict
  extended_platforms:
    description:
      - Also render the platform layer - every C(templates/overrides/platforms/<platform>.yaml), in file-name order,
        after the seed C(templates/overrides/workloadrun.yaml) (the original's entries T1-T16, unchanged). Platform
        entries merge over the seed's where both match; a C(null) in them deletes a seed key.
      - The seed's entries always come first and are exactly the original's; V(false) gives only them.
    type: bool
    default: true
  server_version:
    description:
      - Kubernetes version of the cluster's API server, for example V(v1.33.2). Chooses the C(resource.k8s.io)
        version of ResourceClaimTemplates when O(rct_api_version) is not set - V(v1) on 1.34 and later, V(v1beta2)
        on 1.33, V(v1beta1) on 1.32. Older servers have no DRA API, an error naming this option once an override
        needs it (ResourceClaimTemplates, ComputeDomain claims).
      - Neither this nor O(rct_api_version) set - V(v1).
    type: str
  rct_api_version:
    description:
      - C(resource.k8s.io) version of the ResourceClaimTemplates the overrides create, instead of choosing it from
        O(server_version). V(v1beta1) puts C(deviceClassName) and C(count) directly in the request; V(v1beta2)
        and V(v1) nest them under C(exactly).
    type: str
    choices: [v1, v1beta2, v1beta1]
  dra_driver_version:
    description:
      - Version of the NVIDIA DRA driver (Helm chart), for the ComputeDomain C(numNodes) policy - V(0) for 25.8.0
        and later (C(IMEXDaemonsWithDNSNames) on by default) and for the kubernetes-sigs C(dra-driver-nvidia-gpu)
        numbering (0.x, from v0.4.0); O(nodes) for 25.x before 25.8.0 (the daemons wait for every node).
      - Unset - V(0).
    type: str
  efa_per_node:
    description:
      - AWS EFA devices (C(vpc.amazonaws.com/efa)) per pod, for every AWS instance type. Unset - the count of the
        cluster's instance type from the table in C(_lib/platforms/aws/platform.yaml). V(0) requests none.
    type: int
  rdma_resource:
    description:
      - RDMA extended resource the workers request on Azure, OCI (C(oci_network_mode=sriov)), CoreWeave, Nebius
        and on-prem, for example V(rdma/ib), V(rdma/shared_ib), V(rdma/rdma_shared_device_a),
        V(nvidia.com/rdma-vf), V(nvidia.com/hostdev). Unset - the platform's default from its table.
      - On Azure it replaces the seed's C(nvidia.com/mlnxnics) request (one NIC resource per pod); without it, a
        positive O(mlnx_per_node) keeps the seed's request, and O(mlnx_per_node=0) uses the table (V(rdma/ib)).
    type: str
  rdma_per_node:
    description:
      - Count of O(rdma_resource), or of the platform's default RDMA resource, per pod. V(1) when O(rdma_resource)
        is given alone; V(0) requests none.
    type: int
  platform_vars:
    description:
      - Cluster-specific names and switches of the platform layer, over their defaults (declared with their sources
        in C(_lib/platforms/<platform>/platform.yaml), described in C(docs/platforms/<platform>.md)). An unknown
        name, a wrong type or a value outside the choices is an error naming the variable.
      - aws_hugepages_2mi (str, default empty) - 2 MiB huge pages requested with the EFA devices, e.g. V(5120Mi);
        empty requests none.
      - azure_topology_file (str, default V(/etc/topology/ndv5-topo.xml)) - C(NCCL_TOPO_FILE) of ND H100/H200 v5,
        a path inside the image.
      - azure_topology_configmap (str, default empty) - ConfigMap (key C(topo.xml)) mounted at
        C(/opt/nvidia-topology) and used as C(NCCL_TOPO_FILE) instead.
      - azure_sharp (bool, default V(true)) - SHARP on ND H100/H200 v5 (C(NCCL_COLLNET_ENABLE)).
      - coreweave_sharp (bool, default V(false)) - SHARP on CoreWeave InfiniBand (C(NCCL_COLLNET_ENABLE=1)).
      - coreweave_gb300_networks (list, default empty) - multus networks of GB300 RoCE pods (e.g.
        C(cw-multus/ibs0p0-macvlan)).
      - gcp_tcpx_networks (list, default V(vpc1)..V(vpc4)) - GKE networks on eth1..eth4 of A3 High pods.
      - gcp_tcpxo_networks (list, default V(vpc1)..V(vpc8)) - GKE networks on eth1..eth8 of A3 Mega pods.
      - gcp_rdma_networks (list, default V(rdma-0)..V(rdma-7)) - GKE RDMA networks on eth2.. of A3 Ultra, A4 (8)
        and A4X (4) pods.
      - gcp_gvnic_network (str, default empty) - optional gVNIC network on eth1 of gIB pods.
      - gcp_rdma_mode (str, V(multinetwork) (default) or V(dranet)) - how A3 Ultra and A4 pods get their RDMA NICs.
      - gcp_tcpx_daemon_image, gcp_tcpxo_daemon_image (str) - images of the tcpx-daemon / tcpxo-daemon sidecars
        (defaults C(...gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12), C(...gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21)).
      - oci_network_mode (str, V(host) (default) or V(sriov)) - host network, or SR-IOV VFs through multus.
      - oci_sriov_network (str, default V(default/rdma-vf)) - the VF network attachment, named once per VF.
      - oci_ssh_port (int, default V(2222)) - sshd port of MPI workers on the host network.
      - onprem_rdma_resource (str, default V(rdma/rdma_shared_device_a)) and onprem_rdma_per_node (int, default
        V(1)) - the RDMA resource requested when none is given or found on the nodes.
      - onprem_networks (list, default empty) - multus networks (C(k8s.v1.cni.cncf.io/networks)).
      - onprem_ib_hca (str, default V(mlx5)) - C(NCCL_IB_HCA).
    type: dict
    default: {}
seealso:
  - module: gpufleet.burnin.training_runtime
  - module: gpufleet.burnin.platform_overrides
"""

EXAMPLES = r"""
- name: Plan an nccl-tests all-reduce on this cluster
  gpufleet.burnin.workload_plan:
    entry_name: nccl-all-reduce
    namespace: burnin
    run_id: "20261130t0700"
    image: nvcr.io/nvidia/pytorch:26.01-py3
    framework: mpi
    nodes: 2
    gpus_per_node: 8
    platform: aws
    gpu_architecture: h100
    trainer:
      binary: /usr/local/bin/all_reduce_perf
      args: [-b, 8, -e, 8G, -f, "2"]
  register: plan

- name: Read the nodes (instance type, EFA / RDMA allocatable) and the server version
  kubernetes.core.k8s_info:
    kind: Node
  register: nodes

- name: Plan on a GKE A3 High cluster with its own network names
  gpufleet.burnin.workload_plan:
    entry_name: nccl-all-reduce
    namespace: burnin
    run_id: "20261130t0700"
    image: nvcr.io/nvidia/pytorch:26.01-py3
    framework: mpi
    nodes: 2
    gpus_per_node: 8
    platform: gcp
    gpu_architecture: h100
    cluster_nodes: "{{ nodes.resources }}"
    server_version: v1.33.4
    platform_vars:
      gcp_tcpx_networks: [a3-net-1, a3-net-2, a3-net-3, a3-net-4]
    trainer:
      binary: /usr/local/bin/all_reduce_perf
  register: plan_gcp

- name: Apply it
  kubernetes.core.k8s:
    definition: "{{ plan.objects }}"
    apply: true
    server_side_apply:
      field_manager: gpufleet.burnin
"""

RETURN = r"""
objects:
  description: Objects to apply, in order - dependencies, the TrainingRuntime, the TrainJob.
  returned: success
  type: list
  elements: dict
trainjob_name:
  description: Name of the TrainJob.
  returned: success
  type: str
  sample: nccl-all-reduce-20261130t0700
matched:
  description:
    - The overrides that matched, with C(origin) (platform or user), C(source) (the template, or C(overrides) for
      the user's), 1-based C(position) within that source, and C(when).
  returned: success
  type: list
  elements: dict
topology_key:
  description: Node label of the rack or NVLink domain, when an override sets one.
  returned: success
  type: str
orchestration:
  description: Merged orchestration overrides.
  returned: success
  type: dict
pre_command:
  description: Shell lines run before the trainer command.
  returned: success
  type: list
  elements: str
mpi_args:
  description: mpirun arguments added by overrides.
  returned: success
  type: list
  elements: str
instance_type:
  description: The instance type matched against C(instanceType) conditions (given, from the nodes, or the default).
  returned: success
  type: str
  sample: p5.48xlarge
platform_data:
  description:
    - What the platform layer used - C(instance_type) and C(instance_type_source) (given, nodes, default),
      C(efa_per_node), C(rdma_resource), C(rdma_per_node) and C(nic_source) (given, nodes, or null for the
      tables), C(rct_api_version), C(compute_domain_num_nodes), C(platform_vars).
  returned: success
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.burnin.plugins.module_utils.argspec import workload_plan_spec


def main():
    module = AnsibleModule(argument_spec=workload_plan_spec(), supports_check_mode=True)
    module.fail_json(msg="gpufleet.burnin.workload_plan renders on the controller through its action plugin; "
                         "it cannot run as a module on a host")


if __name__ == "__main__":
    main()
