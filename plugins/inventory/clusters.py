# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: clusters
short_description: The fleet's clusters from kubeconfig contexts, grouped by cloud and GPU as their nodes say
version_added: 0.3.0
description:
  - One host per context of the kubeconfig files in O(kubeconfigs) (filtered by O(include_contexts) and
    O(exclude_contexts)), named after the context (letters, digits, C(_.-); other characters become C(-)), with
    C(burnin_context) and C(burnin_kubeconfig) set for the role P(gpufleet.burnin.burnin#role).
  - With O(detect), reads every cluster's C(/version) and nodes, O(workers) clusters at a time, each given O(timeout)
    seconds, with kubernetes.core's client as M(gpufleet.burnin.cluster_detect) reads them, and tells the platform and GPU
    architecture from the nodes as the role does. It sets C(burnin_platform), C(burnin_gpu_architecture) and
    C(burnin_cluster_kubernetes_version), C(burnin_cluster_nodes), C(burnin_cluster_gpu_nodes),
    C(burnin_cluster_gpus_per_node) (the most common count), C(burnin_cluster_gpu_architectures) (nodes per
    architecture), C(burnin_cluster_instance_types), C(burnin_cluster_server), C(burnin_cluster_warnings), and puts
    the host in the groups C(<platform>_<gpu>), C(csp_<platform>) and C(gpu_<gpu>).
  - A cluster that does not answer (or refuses the reads) is in the group C(unreachable), with
    C(burnin_cluster_reason) saying why. A cluster whose nodes do not tell the platform or GPU (or contradict
    O(platforms)) is in the group C(undetected), with the reason. A cluster whose GPU nodes are of several
    architectures is in C(gpu_mixed) and C(<platform>_mixed), without C(burnin_gpu_architecture) - set it for the host.
  - The role checks the platform and GPU against the nodes again when it runs, as for a hand-written inventory.
  - C(compose), C(groups) and C(keyed_groups) work as in Ansible's constructed inventories, on the variables above.
    With C(cache), the clusters are read once per cache period (O(cache_timeout)), through any Ansible cache plugin.
  - The inventory file's name must end with C(clusters.yml) or C(clusters.yaml).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
requirements:
  - the kubernetes.core collection and the kubernetes Python client on the controller (for O(detect))
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: The name of this plugin; it must be C(gpufleet.burnin.clusters).
    required: true
    type: str
    choices: [gpufleet.burnin.clusters]
  kubeconfigs:
    description:
      - Kubeconfig files whose contexts are the clusters. Relative paths are relative to the inventory file.
      - Empty - the environment's C(K8S_AUTH_KUBECONFIG) (an AWX kubeconfig credential sets it), else C(KUBECONFIG)
        (a colon-separated list), else C(~/.kube/config).
    type: list
    elements: path
    default: []
  include_contexts:
    description: Glob patterns (C(fnmatch)) of the contexts to take; empty takes all.
    type: list
    elements: str
    default: []
  exclude_contexts:
    description: Glob patterns of the contexts to leave out (after O(include_contexts)).
    type: list
    elements: str
    default: []
  detect:
    description: Read each cluster's nodes to set its platform, GPU and groups; false gives only the hosts and their contexts.
    type: bool
    default: true
  timeout:
    description: Seconds each cluster has to answer all its reads; one that does not is in the group C(unreachable).
    type: int
    default: 20
  workers:
    description: Clusters read at the same time.
    type: int
    default: 20
  platforms:
    description:
      - Platforms of contexts whose nodes do not say it (C(onprem), C(togetherai), C(mistral), ...), a mapping of a
        context glob pattern to the platform; the first matching pattern wins. Checked against the nodes of the clouds
        that can be detected, as the role checks a declared platform.
    type: dict
    default: {}
  exec_credentials:
    description:
      - What to do with a context whose user gets its credentials by running a command - a kubeconfig's C(exec)
        section (EKS's C(aws eks get-token), GKE's C(gke-gcloud-auth-plugin), C(kubelogin)) or a legacy
        C(auth-provider) C(cmd-path).
      - C(run) (the default) runs it, as kubectl does, when O(detect) reads the cluster - at every C(ansible-inventory),
        C(ansible-playbook) and AWX inventory update, as the user running Ansible, with that user's environment.
        Right for your own kubeconfigs; EKS and GKE kubeconfigs need it.
      - C(refuse) runs no command - such a context is a host in the group C(undetected), with
        C(burnin_cluster_reason) naming the command's file name, and is not read. Use it for kubeconfigs you did not
        write (a vendor's, a customer's), whose C(exec) could run anything on the controller.
      - The role runs the same command when it burns the cluster in; C(refuse) keeps only the inventory from running it.
    type: str
    choices: [run, refuse]
    default: run
  set_kubeconfig:
    description:
      - Set C(burnin_kubeconfig) to the kubeconfig file of the context. False where the job gets its kubeconfig
        another way (AWX's kubeconfig credential sets C(K8S_AUTH_KUBECONFIG) in the job, at another path than in the
        inventory update).
    type: bool
    default: true
  host_vars:
    description: Variables every host gets (the clusters are reached from the controller, not over SSH).
    type: dict
    default:
      ansible_connection: local
      ansible_python_interpreter: "{{ ansible_playbook_python }}"
"""

EXAMPLES = r"""
# clusters.yml: every context of ~/.kube/config, grouped by what its nodes say
plugin: gpufleet.burnin.clusters

---
# clusters.yml: two kubeconfigs, the production contexts only, on-prem clusters named, read once an hour
plugin: gpufleet.burnin.clusters
kubeconfigs: [~/.kube/fleet-a.yaml, ~/.kube/fleet-b.yaml]
include_contexts: ["prod-*"]
exclude_contexts: ["*-decommissioned"]
platforms:
  "prod-dc1-*": onprem
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/gpufleet-burnin/inventory
cache_timeout: 3600
keyed_groups:
  - key: burnin_cluster_kubernetes_version
    prefix: k8s
compose:
  burnin_nodes: burnin_cluster_gpu_nodes
# then: ansible-inventory -i clusters.yml --graph; ansible-playbook -i clusters.yml gpufleet.burnin.burnin
"""

import os

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import inventory as core

NAME = "gpufleet.burnin.clusters"


def read_kubeconfig(path):
    """The kubeconfig file PATH, parsed (once: each cluster's client gets its own context of it, see
    core.context_kubeconfig), and its context names in its order."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        with open(path) as handle:
            config = yaml.load(handle, Loader=loader) or {}  # nosec B506: a safe loader
    except (OSError, yaml.YAMLError) as exc:
        raise AnsibleParserError("%s: kubeconfig %s cannot be read: %s" % (NAME, path, exc))
    contexts = config.get("contexts") if isinstance(config, dict) else None
    if not isinstance(contexts, list):
        raise AnsibleParserError("%s: kubeconfig %s has no contexts list" % (NAME, path))
    return config, [item["name"] for item in contexts if isinstance(item, dict) and isinstance(item.get("name"), str)]


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    """Clusters from kubeconfig contexts; the choices, host variables and groups are plugins/module_utils/cluster/inventory.py's."""

    NAME = NAME

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(("clusters.yml", "clusters.yaml"))

    def kubeconfig_files(self, path):
        given = self.get_option("kubeconfigs")
        if not given:
            given = [os.environ.get("K8S_AUTH_KUBECONFIG")] if os.environ.get("K8S_AUTH_KUBECONFIG") else []
            given = given or [item for item in os.environ.get("KUBECONFIG", "").split(os.pathsep) if item] or ["~/.kube/config"]
        base = os.path.dirname(os.path.abspath(path))
        return [os.path.join(base, os.path.expanduser(item)) for item in given]

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path)
        self._read_config_data(path)
        for option in ("timeout", "workers"):
            if self.get_option(option) < 1:
                raise AnsibleParserError("%s: %s must be >= 1, got %d" % (NAME, option, self.get_option(option)))
        try:
            clusters = []
            self._configs = {}
            for kubeconfig in self.kubeconfig_files(path):
                config, contexts = read_kubeconfig(kubeconfig)
                self._configs[kubeconfig] = config
                for context in core.selected_contexts(contexts, self.get_option("include_contexts"), self.get_option("exclude_contexts")):
                    clusters.append((kubeconfig, context))
        except ValueError as exc:
            raise AnsibleParserError("%s: %s" % (NAME, exc))

        cache_key = self.get_cache_key(path)
        use_cache = self.get_option("cache") and cache
        update_cache = self.get_option("cache") and not cache
        reads = None
        if use_cache:
            try:
                reads = self._cache[cache_key]
            except KeyError:
                update_cache = True
        if reads is None:
            reads = self.read_clusters(clusters)
            if update_cache:
                self._cache[cache_key] = reads
        self.populate(clusters, reads)

    def read_clusters(self, clusters):
        """{"<kubeconfig>|<context>": (host variables, groups)} of every cluster: one read each, in parallel."""
        if not self.get_option("detect"):
            return {}
        from ansible_collections.gpufleet.burnin.plugins.plugin_utils import k8s_in_process

        if k8s_in_process.IMPORT_ERROR is not None:
            raise AnsibleParserError(
                "%s: detect needs the kubernetes.core collection and the kubernetes Python client: %s" % (NAME, k8s_in_process.IMPORT_ERROR)
            )
        platforms = self.get_option("platforms")
        items = [("%s|%s" % cluster, cluster) for cluster in clusters]

        refuse = self.get_option("exec_credentials") == "refuse"

        def read(cluster):
            kubeconfig, context = cluster
            config = core.context_kubeconfig(self._configs[kubeconfig], context, os.path.dirname(kubeconfig))
            command = core.credential_command(config)
            if refuse and command:
                host, groups = core.cluster_host(core.refused_exec(command))
                return {"host": host, "groups": groups}
            answer = k8s_in_process.read_cluster({"kubeconfig": config or kubeconfig, "context": context}, NAME)
            host, groups = core.cluster_host(answer, platform=core.declared_platform(context, platforms))
            host["burnin_cluster_server"] = answer.get("server") or ""
            return {"host": host, "groups": groups}

        return core.read_all(items, read, self.get_option("workers"), self.get_option("timeout"))

    def populate(self, clusters, reads):
        strict = self.get_option("strict")
        taken = set()
        for kubeconfig, context in clusters:
            name = core.safe_host_name(context, taken)
            taken.add(name)
            self.inventory.add_host(name)
            variables = dict(self.get_option("host_vars"), burnin_context=context)
            if self.get_option("set_kubeconfig"):
                variables["burnin_kubeconfig"] = kubeconfig
            read = reads.get("%s|%s" % (kubeconfig, context))
            groups = []
            if read:
                # A timed-out cluster's answer is read_all's error alone; cluster_host words it as any other.
                if "host" not in read:
                    read = dict(zip(("host", "groups"), core.cluster_host(read)))
                variables.update(read["host"])
                groups = read["groups"]
            for key, value in variables.items():
                self.inventory.set_variable(name, key, value)
            for group in groups:
                self.inventory.add_group(group)
                self.inventory.add_child(group, name)
            hostvars = self.inventory.get_host(name).get_vars()
            self._set_composite_vars(self.get_option("compose"), hostvars, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), hostvars, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), hostvars, name, strict=strict)
