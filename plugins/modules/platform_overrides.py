#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: platform_overrides
short_description: Render the cloud/GPU platform overrides of a GPU burn-in
version_added: 0.1.0
description:
  - Renders the collection's C(templates/overrides/workloadrun.yaml) with the C(_lib/) fragments and returns the
    list of platform overrides, as the original burn-in operator's C(BuildOverrides) did (the seed).
  - Then, unless O(extended_platforms=false), the platform layer - C(templates/overrides/platforms/*.yaml) in
    file-name order (aws, azure, coreweave, gcp, nebius, oci, onprem), built from C(_lib/platforms/). The seed's
    entries are always first and unchanged; RV(sources) names the template of each entry.
  - Every entry is returned whatever the platform; each carries a C(when) to match against the cluster's
    platform, GPU architecture and instance type. Only O(framework) and the data (for example O(platform_vars))
    change the list at render time.
  - Runs on the controller (action plugin) and never contacts a cluster.
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
attributes:
  check_mode:
    support: full
    description: Renders the same list in check mode.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to diff.
  action:
    support: full
    description: Runs on the controller.
options:
  entry_name:
    description: Name of the burn-in entry; prefixes every object the overrides create.
    type: str
    required: true
  nodes:
    description: Number of nodes of the burn-in.
    type: int
    default: 1
  gpus_per_node:
    description: GPUs per node.
    type: int
    required: true
  mlnx_per_node:
    description: Mellanox NICs per node (C(nvidia.com/mlnxnics)); 0 requests none.
    type: int
    default: 0
  enable_mnnvl:
    description: Whether multi-node NVLink is enabled (drives C(NCCL_MNNVL_ENABLE) in fragments).
    type: bool
    default: false
  framework:
    description: Trainer framework; C(mpi) adds mpirun arguments and drops trainer-env entries that would reach only the launcher.
    type: str
    choices: [torch, mpi, exec]
    default: torch
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
  - module: gpufleet.burnin.workload_plan
"""

EXAMPLES = r"""
- name: Render the overrides of an MPI burn-in on GB200
  gpufleet.burnin.platform_overrides:
    entry_name: nccl-all-reduce
    nodes: 2
    gpus_per_node: 4
    mlnx_per_node: 8
    enable_mnnvl: true
    framework: mpi
  register: platform

- name: Only the original's entries (the seed), for a Kubernetes 1.33 cluster
  gpufleet.burnin.platform_overrides:
    entry_name: nccl-all-reduce
    gpus_per_node: 8
    extended_platforms: false
    server_version: v1.33.2
  register: seed

- name: Show the dependencies that apply to AWS clusters
  ansible.builtin.debug:
    msg: "{{ platform.overrides | selectattr('when.platform.equals', 'defined') | selectattr('when.platform.equals', '==', 'aws') }}"
"""

RETURN = r"""
overrides:
  description:
    - The overrides in template order. Each key is present only when set.
  returned: success
  type: list
  elements: dict
  contains:
    when:
      description:
        - Conditions on C(platform), C(gpuArchitecture) and C(instanceType) (C(equals), C(in), C(notIn)).
        - An C(instanceType) condition never matches a cluster whose instance type is unknown.
      type: dict
      returned: always
    jobTemplate:
      description: Patch merged into the job template (maps merge, named lists merge by name).
      type: dict
      returned: when set
    jobTemplatePatch:
      description: RFC 6902 operations applied after C(jobTemplate).
      type: list
      returned: when set
    dependencies:
      description: Objects to create first (ComputeDomain, ResourceClaimTemplate) and partial TrainingRuntime patches.
      type: list
      returned: when set
    orchestration:
      description: Orchestration changes, for example C(topology.topologyKey).
      type: dict
      returned: when set
    preCommand:
      description: Shell lines run before the trainer command.
      type: list
      returned: when set
    mpiArgs:
      description: mpirun arguments prepended to the MPI arguments.
      type: list
      returned: when set
sources:
  description:
    - For each entry of RV(overrides), the template it comes from - C(templates/overrides/workloadrun.yaml) for
      the seed, C(templates/overrides/platforms/<platform>.yaml) for the platform layer.
  returned: success
  type: list
  elements: str
  sample: [templates/overrides/workloadrun.yaml, templates/overrides/platforms/aws.yaml]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufleet.burnin.plugins.module_utils.argspec import platform_overrides_spec


def main():
    module = AnsibleModule(argument_spec=platform_overrides_spec(), supports_check_mode=True)
    module.fail_json(msg="gpufleet.burnin.platform_overrides renders on the controller through its action plugin; "
                         "it cannot run as a module on a host")


if __name__ == "__main__":
    main()
