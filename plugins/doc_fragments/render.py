# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Options shared by the rendering plugins: gpufleet.burnin.render.runtime (training_runtime, workload_plan) and
    gpufleet.burnin.render.overrides (platform_overrides, workload_plan). The argument specs are in
    plugins/module_utils/validation/argspec.py."""

    DOCUMENTATION = r"""
options: {}
"""

    RUNTIME = r"""
options:
  image:
    description: Container image of the trainer (and, for MPI, of the workers and launcher).
    type: str
    required: true
  env:
    description:
      - Env of the GPU container, usually C(base_nccl_env | gpufleet.burnin.merge_env(user_env)).
      - Each item is a Kubernetes C(EnvVar), C(valueFrom) included; each name once, a string C(value), at most 256
        entries (more is refused before anything is rendered).
    type: list
    elements: dict
    default: []
  volumes:
    description: Extra pod volumes, appended after the C(dshm) shared-memory volume.
    type: list
    elements: dict
    default: []
  volume_mounts:
    description: Extra mounts of the C(node) container, appended after C(/dev/shm).
    type: list
    elements: dict
    default: []
  init_containers:
    description: Init containers of the worker pods.
    type: list
    elements: dict
    default: []
  resources:
    description:
      - Resources of the GPU container, used as given, plus C(nvidia.com/gpu) unless named.
      - When omitted only the GPUs are requested.
    type: dict
  image_pull_secrets:
    description:
      - Pull secrets (C({name}) references). The runtime never holds them - the TrainJob sets them on every pod
        through its C(runtimePatches) (M(gpufleet.burnin.workload_plan)); M(gpufleet.burnin.training_runtime) accepts
        them so that one set of variables feeds every plugin.
    type: list
    elements: dict
    default: []
  trainer_version:
    description:
      - Kubeflow Trainer version the runtime targets, for example C(v2.3) or C(v2.1).
      - Before v2.2 the torch runtime sets C(mlPolicy.torch.numProcPerNode).
      - A string naming a release from v2.0 to v2.4 (patch releases too); a YAML number such as C(2.10), read as 2.1, is refused.
      - Each release's rules (C(_lib/trainer-versions.yaml)) - env variables its plugins set refused in O(env) with the reason (torchrun's
        C(PET_*), from v2.3 mpirun's C(OMPI_MCA_orte_*), from v2.4 Open MPI 5's C(PRTE_MCA_*)); from v2.4 replicatedJob names of at most 20
        characters, and the MPI workers' image must be the TrainJob's (v2.4 sets it on launcher and nodes).
      - v2.3 is tested on a real Trainer controller; v2.4 is rendered by these rules only (docs/trainer-versions.md).
    type: str
    default: v2.3
  allow_secret_env:
    description:
      - Accept env entries (of O(env) and O(init_containers)) whose C(valueFrom) reads a Secret (C(secretKeyRef)).
      - Refused by default - whoever sets the env (an AWX survey, an inventory) could read any Secret of the burn-in
        namespace, the registry credential included, through the pod's logs.
    type: bool
    default: false
"""

    OVERRIDES = r"""
options:
  mlnx_per_node:
    description: Mellanox NICs per node (C(nvidia.com/mlnxnics)); 0 requests none.
    type: int
    default: 0
  enable_mnnvl:
    description: Whether multi-node NVLink is enabled (drives C(NCCL_MNNVL_ENABLE) in fragments).
    type: bool
    default: false
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
"""
