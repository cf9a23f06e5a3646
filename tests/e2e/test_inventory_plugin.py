# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The inventory plugin gpufleet.burnin.clusters on the clouds fleet (tests/fleet/clouds-fleet.yml, shared with
test_platforms_apply.py): the groups of every platform from the clusters' own nodes, a dead cluster in `unreachable`,
the cache on the second read, and a burn-in with the plugin's inventory and no hand-written hosts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import socket
import subprocess
import uuid

import pytest
import yaml

DEAD = "dead-use1-h100-a"
# The clouds fleet's on-prem cluster: nothing on its nodes names the platform, so the inventory file does.
PLATFORMS = {"onprem-*": "onprem"}


def closed_port():
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def dead_kubeconfig(path, fleet):
    """A kubeconfig with one context whose API server is gone: the fleet's CA and user, a port nothing listens on."""
    config = yaml.safe_load(open(fleet.kubeconfig))
    cluster = dict(config["clusters"][0], name=DEAD)
    cluster["cluster"] = dict(cluster["cluster"], server="https://127.0.0.1:%d" % closed_port())
    context = {"name": DEAD, "context": {"cluster": DEAD, "user": config["contexts"][0]["context"]["user"]}}
    path.write_text(yaml.safe_dump(dict(config, clusters=[cluster], contexts=[context], **{"current-context": DEAD})))
    os.chmod(str(path), 0o600)
    return str(path)


def inventory_file(directory, **options):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "clusters.yml"
    path.write_text(yaml.safe_dump(dict({"plugin": "gpufleet.burnin.clusters", "platforms": PLATFORMS, "timeout": 10}, **options)))
    return str(path)


def inventory(path, *args):
    proc = subprocess.run(
        ["ansible-inventory", "-i", path, "--list", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "Failed to parse" not in proc.stderr, proc.stderr
    # Strings the plugin read from kubeconfigs and clusters are not templates: ansible-inventory marks them so.
    return json.loads(proc.stdout, object_hook=lambda value: value.get("__ansible_unsafe", value) if list(value) == ["__ansible_unsafe"] else value)


def hosts_of(listed, group):
    return set(listed.get(group, {}).get("hosts", []))


@pytest.fixture(scope="module")
def listed(clouds_fleet, tmp_path_factory):
    work = tmp_path_factory.mktemp("inventory-plugin")
    path = inventory_file(work / "inv", kubeconfigs=[clouds_fleet.kubeconfig, dead_kubeconfig(work / "dead.kubeconfig", clouds_fleet)])
    return inventory(path)


def test_every_platform_of_the_clouds_fleet_grouped_from_its_nodes(clouds_fleet, listed):
    from kubernetes.client import CoreV1Api

    hostvars = listed["_meta"]["hostvars"]
    for name in clouds_fleet.clusters:
        cluster = clouds_fleet.cluster(name)
        platform, gpu = cluster["platform"], cluster["gpu_architecture"]
        for group in ("%s_%s" % (platform, gpu), "csp_%s" % platform, "gpu_%s" % gpu):
            assert name in hosts_of(listed, group), (name, group, listed)
        variables = hostvars[name]
        assert variables["burnin_context"] == clouds_fleet.context(name)
        assert variables["burnin_kubeconfig"] == clouds_fleet.kubeconfig
        assert (variables["burnin_platform"], variables["burnin_gpu_architecture"]) == (platform, gpu)
        # Counted here with the kubernetes client directly, not with the collection's code.
        gpu_nodes = [n for n in CoreV1Api(clouds_fleet.api_client(name)).list_node().items if int((n.status.capacity or {}).get("nvidia.com/gpu", "0"))]
        assert variables["burnin_cluster_gpu_nodes"] == len(gpu_nodes) > 0, variables
        assert variables["burnin_cluster_nodes"] == len(CoreV1Api(clouds_fleet.api_client(name)).list_node().items)
        assert variables["burnin_cluster_gpus_per_node"] > 0
        assert variables["burnin_cluster_kubernetes_version"].startswith("v" + cluster["kubernetes_version"]), variables
        assert variables["burnin_cluster_server"] == cluster["server"]
    # The one cluster with an instance-type label on its GPU nodes per cloud that has one; on-prem has none.
    assert hostvars["oci-iad-h100-a"]["burnin_cluster_instance_types"] == ["BM.GPU.H100.8"]
    assert hostvars["onprem-dc1-b200-a"]["burnin_cluster_instance_types"] == []
    assert not hosts_of(listed, "undetected") and not hosts_of(listed, "gpu_mixed")


def test_a_dead_cluster_is_unreachable_with_its_reason(listed):
    assert hosts_of(listed, "unreachable") == {DEAD}
    reason = listed["_meta"]["hostvars"][DEAD]["burnin_cluster_reason"]
    assert reason.startswith("Unreachable: ") and "https://127.0.0.1:" in reason, reason
    assert "burnin_platform" not in listed["_meta"]["hostvars"][DEAD]


def test_the_second_read_comes_from_the_cache(clouds_fleet, tmp_path):
    # A copy of the fleet's kubeconfig, pointed at a dead port after the first read: the second read only groups the
    # clusters right if it did not read them; a flushed cache reads them again and finds them dead.
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(open(clouds_fleet.kubeconfig).read())
    path = inventory_file(
        tmp_path / "inv",
        kubeconfigs=[str(kubeconfig)],
        cache=True,
        cache_plugin="ansible.builtin.jsonfile",
        cache_connection=str(tmp_path / "cache"),
        cache_timeout=3600,
    )
    first = inventory(path)
    assert not hosts_of(first, "unreachable") and os.listdir(str(tmp_path / "cache"))
    config = yaml.safe_load(kubeconfig.read_text())
    dead = "https://127.0.0.1:%d" % closed_port()
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = dead
    kubeconfig.write_text(yaml.safe_dump(config))
    second = inventory(path)
    assert second["_meta"]["hostvars"] == first["_meta"]["hostvars"]
    for name in clouds_fleet.clusters:
        assert name in hosts_of(second, "%s_%s" % (clouds_fleet.cluster(name)["platform"], clouds_fleet.cluster(name)["gpu_architecture"]))
    flushed = inventory(path, "--flush-cache")
    assert hosts_of(flushed, "unreachable") == set(clouds_fleet.clusters)


def test_burnin_with_the_plugins_inventory_and_no_host_file(clouds_fleet, tmp_path):
    directory = tmp_path / "inv"
    path = inventory_file(directory, kubeconfigs=[clouds_fleet.kubeconfig])
    # Group variables beside the inventory file, by the plugin's groups: the Grace cluster's image (the fleet's
    # stand-in name; nothing is pulled on the test fleet).
    (directory / "group_vars").mkdir()
    (directory / "group_vars" / "gpu_gb200.yml").write_text(yaml.safe_dump({"burnin_image": "localhost/gpufleet-test/nccl-tests:arm64-stand-in"}))
    run_id = "inv-" + uuid.uuid4().hex[:8]
    namespace = "burnin-inventory-plugin"
    command = ["ansible-playbook", "-i", path, "gpufleet.burnin.burnin", "--forks", "10"]
    for variable in (
        "burnin_run_id=" + run_id,
        "burnin_namespace=" + namespace,
        "burnin_report_dir=%s" % (tmp_path / "reports"),
        "burnin_poll_interval=1",
        "burnin_timeout=90",
    ):
        command += ["-e", variable]
    env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=900)
    try:
        assert proc.returncode == 0, proc.stdout[-6000:]
        results = json.loads((tmp_path / "reports" / run_id / "summary.json").read_text())
        assert set(results) == set(clouds_fleet.clusters), results
        for name, result in results.items():
            cluster = clouds_fleet.cluster(name)
            assert result["outcome"] == "Complete", (name, result)
            # The role's own check of the nodes agreed with what the inventory told.
            assert (result["platform"], result["gpu_architecture"]) == (cluster["platform"], cluster["gpu_architecture"]), result
    finally:
        from kubernetes.client import CoreV1Api

        for name in clouds_fleet.clusters:
            try:
                CoreV1Api(clouds_fleet.api_client(name)).delete_namespace(namespace)
            except Exception:  # noqa: BLE001 - best effort: the namespace may not exist
                pass


def exec_kubeconfig(directory):
    """A kubeconfig of two contexts at a closed port: one whose user's exec command leaves a marker file (as a hostile
    kubeconfig's could do anything), one with a plain token. Needs no fleet."""
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / "exec-ran"
    script = directory / "credential.sh"
    script.write_text(
        '#!/bin/sh\necho ran >> "%s"\necho \'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "t"}}\'\n' % marker
    )
    os.chmod(str(script), 0o700)
    server = "https://127.0.0.1:%d" % closed_port()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [
            {"name": "exec", "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(script), "interactiveMode": "Never"}}},
            {"name": "token", "user": {"token": "t"}},
        ],
        "contexts": [{"name": "foreign", "context": {"cluster": "c", "user": "exec"}}, {"name": "plain", "context": {"cluster": "c", "user": "token"}}],
        "current-context": "plain",
    }
    path = directory / "foreign.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    os.chmod(str(path), 0o600)
    return str(path), marker


def test_exec_credentials_run_by_default_and_refuse_runs_none(tmp_path):
    kubeconfig, marker = exec_kubeconfig(tmp_path / "exec")
    listed = inventory(inventory_file(tmp_path / "run", kubeconfigs=[kubeconfig], timeout=5))
    # Documented: detection runs the exec command, as kubectl does (EKS and GKE kubeconfigs need it).
    assert marker.exists() and hosts_of(listed, "unreachable") == {"foreign", "plain"}
    marker.unlink()
    listed = inventory(inventory_file(tmp_path / "refuse", kubeconfigs=[kubeconfig], timeout=5, exec_credentials="refuse"))
    assert not marker.exists()
    assert hosts_of(listed, "undetected") == {"foreign"} and hosts_of(listed, "unreachable") == {"plain"}
    reason = listed["_meta"]["hostvars"]["foreign"]["burnin_cluster_reason"]
    assert reason == "Refused: not read: the kubeconfig's user runs a command for its credentials (credential.sh) and exec_credentials is refuse"
