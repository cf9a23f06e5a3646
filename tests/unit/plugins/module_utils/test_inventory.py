# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The pure parts of the inventory plugin gpufleet.burnin.clusters (plugins/module_utils/cluster/inventory.py).
The Node objects here are generated (shaped like the test fleet's KWOK nodes), not published output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import threading
import time

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import inventory
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars


def node(name, provider_id="", instance_type="", product="", gpus=0, labels=None):
    all_labels = dict(labels or {})
    if instance_type:
        all_labels["node.kubernetes.io/instance-type"] = instance_type
    if product:
        all_labels["nvidia.com/gpu.product"] = product
    result = {"metadata": {"name": name, "labels": all_labels}, "status": {"capacity": {"nvidia.com/gpu": str(gpus)} if gpus else {}}}
    if provider_id:
        result["spec"] = {"providerID": provider_id}
    return result


AWS_H100 = [node("n%d" % i, "aws:///us-east-1a/i-%d" % i, "p5.48xlarge", "NVIDIA-H100-80GB-HBM3", 8) for i in range(3)]


def test_selected_contexts_include_then_exclude_in_order_once():
    contexts = ["prod-a", "dev-a", "prod-b-old", "prod-a", "prod-c"]
    assert inventory.selected_contexts(contexts) == ["prod-a", "dev-a", "prod-b-old", "prod-c"]
    assert inventory.selected_contexts(contexts, ["prod-*"], ["*-old"]) == ["prod-a", "prod-c"]
    assert inventory.selected_contexts(contexts, "dev-*") == ["dev-a"]


def test_selected_contexts_bad_pattern_names_the_option():
    with pytest.raises(ValueError, match="exclude_contexts"):
        inventory.selected_contexts(["a"], None, [3])


def test_safe_host_name_of_eks_arn_and_gke_names_and_duplicates():
    arn = "arn:aws:eks:us-east-1:123456789012:cluster/h100-a"
    assert inventory.safe_host_name(arn) == "arn-aws-eks-us-east-1-123456789012-cluster-h100-a"
    assert inventory.safe_host_name("gke_proj_us-central1_h100-a") == "gke_proj_us-central1_h100-a"
    assert inventory.safe_host_name("a b", taken={"a-b"}) == "a-b-2"
    assert inventory.safe_host_name("a b", taken={"a-b", "a-b-2"}) == "a-b-3"
    long_name = inventory.safe_host_name("x" * 100, taken={"x" * 63})
    assert len(long_name) == 63 and long_name.endswith("-2")
    assert inventory.safe_host_name("::") == "cluster"


def test_group_name_never_starts_with_a_digit():
    assert inventory.group_name("csp_aws") == "csp_aws"
    assert inventory.group_name("k8s-1.34") == "k8s_1_34"
    assert inventory.group_name("1.34") == "_1_34"


def test_declared_platform_first_match_wins():
    platforms = {"dc1-*": "onprem", "*": "togetherai"}
    assert inventory.declared_platform("dc1-b200", platforms) == "onprem"
    assert inventory.declared_platform("other", platforms) == "togetherai"
    assert inventory.declared_platform("other", {}) == ""


def test_cluster_host_detected_groups_and_facts():
    nodes = AWS_H100 + [node("cpu", "aws:///us-east-1a/i-9", "m5.large")]
    host, groups = inventory.cluster_host({"nodes": nodes, "kubernetes_version": "v1.34.1"})
    assert groups == ["aws_h100", "csp_aws", "gpu_h100"]
    assert host["burnin_platform"] == "aws" and host["burnin_gpu_architecture"] == "h100"
    assert host["burnin_cluster_gpu_nodes"] == 3 and host["burnin_cluster_nodes"] == 4
    assert host["burnin_cluster_gpus_per_node"] == 8
    assert host["burnin_cluster_instance_types"] == ["p5.48xlarge"]
    assert host["burnin_cluster_kubernetes_version"] == "v1.34.1"
    assert "burnin_cluster_reason" not in host


def test_cluster_host_unreachable_says_why():
    host, groups = inventory.cluster_host({"error": {"category": "Unreachable", "message": "connection refused by https://127.0.0.1:1"}})
    assert groups == ["unreachable"]
    assert host == {"burnin_cluster_reason": "Unreachable: connection refused by https://127.0.0.1:1"}


def test_cluster_host_several_gpu_kinds_is_mixed_not_the_most_common():
    nodes = AWS_H100 + [node("h200", "aws:///us-east-1a/i-7", "p5en.48xlarge", "NVIDIA-H200", 8)]
    host, groups = inventory.cluster_host({"nodes": nodes})
    assert groups == ["aws_mixed", "csp_aws", "gpu_mixed"]
    assert "burnin_gpu_architecture" not in host
    assert host["burnin_cluster_gpu_architectures"] == {"h100": 3, "h200": 1}
    assert "h100 (3), h200 (1)" in host["burnin_cluster_reason"]


def test_cluster_host_undetectable_platform_declared_or_undetected():
    onprem = [node("n%d" % i, product="NVIDIA-B200", gpus=8) for i in range(2)]
    host, groups = inventory.cluster_host({"nodes": onprem})
    assert groups == ["gpu_b200", "undetected"] and "burnin_platform" not in host
    assert "platform cannot be detected" in host["burnin_cluster_reason"]
    host, groups = inventory.cluster_host({"nodes": onprem}, platform="onprem")
    assert groups == ["onprem_b200", "csp_onprem", "gpu_b200"] and host["burnin_platform"] == "onprem"


def test_cluster_host_declared_platform_contradicted_by_the_nodes():
    host, groups = inventory.cluster_host({"nodes": AWS_H100}, platform="gcp")
    assert "undetected" in groups and "platform mismatch" in host["burnin_cluster_reason"]


def test_role_accepts_the_plugins_host_variables():
    host = inventory.cluster_host({"nodes": AWS_H100, "kubernetes_version": "v1.34.1"})[0]
    host.update(burnin_cluster_server="https://127.0.0.1:6443", burnin_cluster_reason="")
    assert check_role_vars(dict(host, burnin_context="c"))["burnin_platform"] == "aws"


def test_read_all_runs_in_parallel_and_times_out_one_without_waiting_for_it():
    release = threading.Event()

    def read(argument):
        if argument == "hangs":
            release.wait(30)
        return {"nodes": [], "argument": argument}

    started = time.monotonic()
    results = inventory.read_all([("a", "a"), ("hang", "hangs"), ("b", "b")], read, workers=2, timeout=0.5)
    elapsed = time.monotonic() - started
    release.set()
    assert results["a"]["argument"] == "a" and results["b"]["argument"] == "b"
    assert results["hang"]["error"]["category"] == "Unreachable" and "0.5 s" in results["hang"]["error"]["message"]
    assert elapsed < 5


def test_read_all_bounds_the_workers_and_turns_an_exception_into_an_error():
    active, peak, lock = [0], [0], threading.Lock()

    def read(argument):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        if argument == 3:
            raise RuntimeError("boom")
        return {"nodes": []}

    results = inventory.read_all([(i, i) for i in range(8)], read, workers=3, timeout=10)
    assert peak[0] <= 3 and len(results) == 8
    assert results[3]["error"] == {"category": "Error", "message": "RuntimeError: boom"}


def test_context_kubeconfig_is_one_context_with_its_cluster_and_user_and_absolute_files():
    config = {
        "apiVersion": "v1",
        "clusters": [
            {"name": "a", "cluster": {"server": "https://a:6443", "certificate-authority": "pki/a.crt"}},
            {"name": "b", "cluster": {"server": "https://b:6443", "certificate-authority": "/etc/b.crt"}},
        ],
        "users": [{"name": "ua", "user": {"client-certificate": "a.crt", "client-key": "keys/a.key"}}, {"name": "ub", "user": {"token": "t"}}],
        "contexts": [{"name": "ctx-a", "context": {"cluster": "a", "user": "ua"}}, {"name": "ctx-b", "context": {"cluster": "b", "user": "ub"}}],
        "current-context": "ctx-b",
    }
    before = copy.deepcopy(config)
    one = inventory.context_kubeconfig(config, "ctx-a", "/home/u/.kube")
    assert one == {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "ctx-a",
        "contexts": [{"name": "ctx-a", "context": {"cluster": "a", "user": "ua"}}],
        "clusters": [{"name": "a", "cluster": {"server": "https://a:6443", "certificate-authority": "/home/u/.kube/pki/a.crt"}}],
        "users": [{"name": "ua", "user": {"client-certificate": "/home/u/.kube/a.crt", "client-key": "/home/u/.kube/keys/a.key"}}],
    }
    assert inventory.context_kubeconfig(config, "ctx-b", "/x")["clusters"][0]["cluster"]["certificate-authority"] == "/etc/b.crt"
    assert inventory.context_kubeconfig(config, "missing", "/x") is None
    assert config == before


@pytest.mark.parametrize(
    "user, command",
    [
        ({"exec": {"command": "aws", "args": ["eks", "get-token", "--cluster-name", "secret-account"]}}, "aws"),
        ({"exec": {"command": "/usr/lib/google-cloud-sdk/bin/gke-gcloud-auth-plugin"}}, "/usr/lib/google-cloud-sdk/bin/gke-gcloud-auth-plugin"),
        ({"auth-provider": {"name": "gcp", "config": {"cmd-path": "/usr/bin/gcloud"}}}, "/usr/bin/gcloud"),
        ({"exec": {}}, "exec"),
        ({"token": "t"}, ""),
        ({"client-certificate": "a.crt", "client-key": "a.key"}, ""),
    ],
)
def test_credential_command_of_a_context(user, command):
    config = {
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "clusters": [{"name": "k", "cluster": {}}],
        "users": [{"name": "u", "user": user}],
    }
    assert inventory.credential_command(inventory.context_kubeconfig(config, "c", "/tmp")) == command


def test_a_refused_exec_is_undetected_naming_the_command_file_only():
    host, groups = inventory.cluster_host(inventory.refused_exec("/opt/vendor/bin/get-token"))
    assert groups == [inventory.UNDETECTED_GROUP]
    assert host == {
        "burnin_cluster_reason": "Refused: not read: the kubeconfig's user runs a command for its credentials (get-token) and exec_credentials is refuse"
    }


# --- what the mutation run of cluster/inventory.py (issue 47) found untested ---------------------------------------
AWS_V100 = [node("v%d" % i, "aws:///us-east-1a/i-v%d" % i, "p3.16xlarge", "Tesla-V100-SXM2-16GB", 8) for i in range(2)]


def test_a_gpu_named_after_unknown_in_the_alphabet_is_grouped_too():
    # v100 sorts after "unknown": only unknown itself is left out
    host, groups = inventory.cluster_host({"nodes": AWS_V100})
    assert groups == ["aws_v100", "csp_aws", "gpu_v100"]
    assert host["burnin_gpu_architecture"] == "v100" and host["burnin_cluster_gpu_architectures"] == {"v100": 2}
    assert "burnin_cluster_reason" not in host, "one architecture, whatever its name: no reason"


def test_a_gpu_node_of_an_unknown_model_is_not_counted_as_an_architecture():
    nodes = AWS_H100 + [node("odd", "aws:///us-east-1a/i-8", "", "NVIDIA-Foo-9000", 8)]
    host, groups = inventory.cluster_host({"nodes": nodes})
    assert host["burnin_cluster_gpu_architectures"] == {"h100": 3} and groups == ["aws_h100", "csp_aws", "gpu_h100"]
    unknown = [node("odd%d" % i, "aws:///us-east-1a/i-8%d" % i, "", "NVIDIA-Foo-9000", 8) for i in range(2)]
    host, groups = inventory.cluster_host({"nodes": unknown})
    assert host["burnin_cluster_gpu_architectures"] == {} and groups == ["csp_aws", "undetected"]


@pytest.mark.parametrize(
    "counts, most",
    [
        ([8, 8, 4], 8),  # the most nodes, not the smallest count
        ([4, 8, 8, 2], 8),
        ([8, 4], 4),  # a tie: the smallest, whatever the node order
        ([4, 8], 4),
        ([0, 0], 0),  # GPU nodes that say no count: none
    ],
)
def test_the_gpus_per_node_are_those_of_most_gpu_nodes(counts, most):
    nodes = [node("g%d" % i, "aws:///us-east-1a/i-%d" % i, "p5.48xlarge", "NVIDIA-H100-80GB-HBM3", gpus) for i, gpus in enumerate(counts)]
    assert inventory.cluster_host({"nodes": nodes})[0]["burnin_cluster_gpus_per_node"] == most


def test_a_context_takes_the_first_cluster_and_user_of_its_names():
    # the kubernetes client refuses a kubeconfig list with a name twice: the context's own mapping has one of each
    config = {
        "clusters": [{"name": "a", "cluster": {"server": "https://a:6443"}}, {"name": "a", "cluster": {"server": "https://other:6443"}}],
        "users": [{"name": "u", "user": {"token": "t1"}}, {"name": "u", "user": {"token": "t2"}}],
        "contexts": [{"name": "c", "context": {"cluster": "a", "user": "u"}}],
    }
    one = inventory.context_kubeconfig(config, "c", "/x")
    assert one["clusters"] == [config["clusters"][0]] and one["users"] == [config["users"][0]]


def test_read_all_times_out_a_cluster_exactly_at_the_timeout_on_its_clock():
    # a fake clock: the read starts at 0 and the next look is at exactly 10 s, when the read is let go; at the timeout
    # the cluster is unreachable already, its late answer dropped
    release, calls = threading.Event(), [0]

    def clock():
        calls[0] += 1
        if calls[0] >= 4:
            release.set()
        return 0.0 if calls[0] <= 2 else 10.0

    def read(argument):
        release.wait(5)
        return {"nodes": [], "late": True}

    results = inventory.read_all([("slow", "slow")], read, workers=1, timeout=10, clock=clock)
    assert results["slow"]["error"]["category"] == "Unreachable" and "10 s" in results["slow"]["error"]["message"]


def test_read_all_reads_in_daemon_threads_named_after_the_cluster():
    seen = []

    def read(argument):
        thread = threading.current_thread()
        seen.append((thread.name, thread.daemon))
        return {"nodes": []}

    inventory.read_all([("prod-a", 1)], read, workers=1, timeout=10)
    assert seen == [("gpufleet-inventory-prod-a", True)]


@pytest.mark.parametrize("platform", ["vultr", "yotta", "togetherai"])
def test_a_declared_platform_of_any_name_is_grouped(platform):
    # platforms the nodes cannot name are declared by the inventory's `platforms`, some sorting after "unknown"
    onprem = [node("n%d" % i, product="NVIDIA-B200", gpus=8) for i in range(2)]
    host, groups = inventory.cluster_host({"nodes": onprem}, platform=platform)
    assert groups == ["%s_b200" % platform, "csp_%s" % platform, "gpu_b200"] and host["burnin_platform"] == platform


def test_a_platform_declared_as_unknown_in_the_inventory_file_is_none():
    # read from the inventory's YAML: a new string, equal to the module's "unknown"
    declared = json.loads('{"*": "unknown"}')["*"]
    host, groups = inventory.cluster_host({"nodes": [node("n0", product="NVIDIA-B200", gpus=8)]}, platform=declared)
    assert "burnin_platform" not in host and groups == ["gpu_b200"]


def test_several_architectures_give_the_reason_with_their_counts():
    nodes = AWS_H100 + [node("h200", "aws:///us-east-1a/i-7", "p5en.48xlarge", "NVIDIA-H200", 8)]
    assert inventory.cluster_host({"nodes": nodes})[0]["burnin_cluster_reason"] == (
        "the GPU nodes have several architectures (h100 (3), h200 (1)): set burnin_gpu_architecture for this host"
    )


@pytest.mark.parametrize("category, group", [("Refused", "undetected"), ("Error", "unreachable"), ("Forbidden", "unreachable"), ("Unreachable", "unreachable")])
def test_only_a_refused_credential_command_is_undetected_rather_than_unreachable(category, group):
    host, groups = inventory.cluster_host({"error": {"category": category, "message": "m"}})
    assert groups == [group] and host == {"burnin_cluster_reason": "%s: m" % category}


def test_a_context_is_found_by_its_name_given_at_run_time():
    # the kubeconfig parsed from its file: the context's cluster and user names are other strings than the lists' own
    text = '{"contexts": [{"name": "ctx-a", "context": {"cluster": "cluster-a", "user": "user-a"}}], "clusters": [{"name": "cluster-a", "cluster": {}}], '
    config = json.loads(text + '"users": [{"name": "user-a", "user": {"token": "t"}}]}')
    one = inventory.context_kubeconfig(config, "".join(["ctx", "-a"]), "/x")
    assert one["current-context"] == "ctx-a" and one["clusters"] == config["clusters"] and one["users"] == config["users"]


def test_read_all_waits_for_a_read_still_within_its_timeout():
    # a fake clock 0.01 s short of the timeout at every look: the slow read is waited for, its answer kept
    calls = [0]

    def clock():
        calls[0] += 1
        return 0.0 if calls[0] <= 2 else 9.99

    def read(argument):
        time.sleep(0.2)
        return {"nodes": [], "argument": argument}

    results = inventory.read_all([("slow", "slow")], read, workers=1, timeout=10, clock=clock)
    assert results == {"slow": {"nodes": [], "argument": "slow"}} and calls[0] > 4


def test_read_all_starts_the_reads_in_the_inventorys_order():
    seen = []

    def read(argument):
        seen.append(argument)
        return {"nodes": []}

    results = inventory.read_all([("a", "a"), ("b", "b"), ("c", "c")], read, workers=1, timeout=10)
    assert seen == ["a", "b", "c"] and list(results) == ["a", "b", "c"]


# --- issue 47, seventh round: the survivors of cluster/inventory.py's whole run ---------------------------------------
def test_a_context_is_found_by_its_name_not_by_one_sorting_after_it():
    # the wanted context listed after one whose name sorts after it (and before it): only its own name matches
    config = {
        "contexts": [
            {"name": "ctx-b", "context": {"cluster": "b", "user": "u"}},
            {"name": "ctx-a", "context": {"cluster": "a", "user": "u"}},
            {"name": "ctx-0", "context": {"cluster": "z", "user": "u"}},
        ],
        "clusters": [{"name": "a", "cluster": {}}, {"name": "b", "cluster": {}}, {"name": "z", "cluster": {}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }
    for context, cluster in (("ctx-a", "a"), ("ctx-b", "b"), ("ctx-0", "z")):
        one = inventory.context_kubeconfig(config, context, "/x")
        assert one["contexts"] == [entry for entry in config["contexts"] if entry["name"] == context]
        assert one["clusters"] == [{"name": cluster, "cluster": {}}]
    assert inventory.context_kubeconfig(config, "ctx-c", "/x") is None


@pytest.mark.parametrize(
    "value, made",
    [
        ("pki/a.crt", "/home/u/.kube/pki/a.crt"),  # relative: from the kubeconfig's directory
        ("/etc/a.crt", "/etc/a.crt"),  # absolute: kept
        ("~/a.crt", "~/a.crt"),  # absolute once the home is expanded (as kubectl reads it): kept as written
        ("", ""),  # empty: no file, kept empty rather than made the directory
        (None, None),
    ],
)
def test_only_a_relative_file_name_is_made_absolute(value, made):
    config = {
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "clusters": [{"name": "k", "cluster": {"certificate-authority": value}}],
        "users": [{"name": "u", "user": {"client-key": value}}],
    }
    one = inventory.context_kubeconfig(config, "c", "/home/u/.kube")
    assert one["clusters"][0]["cluster"]["certificate-authority"] == made and one["users"][0]["user"]["client-key"] == made


@pytest.mark.parametrize(
    "nodes, platform",
    [
        # undetected GPU models (the GPU "unknown" sorts after "mixed"): the detection's own reason, no mixed one
        ([node("odd%d" % i, "aws:///us-east-1a/i-8%d" % i, "", "NVIDIA-Foo-9000", 8) for i in range(2)], ""),
        # a declared platform the nodes contradict, of one GPU sorting after "mixed" (v100) and before it (h100)
        (AWS_V100, "gcp"),
        (AWS_H100, "gcp"),
    ],
)
def test_a_cluster_of_one_or_no_architecture_is_never_given_the_mixed_reason(nodes, platform):
    host, groups = inventory.cluster_host({"nodes": nodes}, platform=platform)
    assert "undetected" in groups and host["burnin_cluster_reason"]
    assert "several architectures" not in host["burnin_cluster_reason"]


def offset_clock(base, calls):
    # the inventory's clock, counted, starting at BASE (a monotonic clock may start anywhere, 0 included)
    started = time.monotonic()

    def clock():
        calls[0] += 1
        return base + time.monotonic() - started

    return clock


@pytest.mark.parametrize("base", [0.0, 1000.0])
def test_read_all_sleeps_until_a_read_answers_rather_than_polling(base):
    # one read of 0.3 s within a 10 s timeout: the clock is read to start it, to wait and once after its answer; a
    # wait shorter than the time left (a poll every 0.01 s) would read it dozens of times
    calls = [0]

    def read(argument):
        time.sleep(0.3)
        return {"nodes": [], "argument": argument}

    results = inventory.read_all([("slow", "slow")], read, workers=1, timeout=10, clock=offset_clock(base, calls))
    assert results == {"slow": {"nodes": [], "argument": "slow"}}
    assert calls[0] <= 6


@pytest.mark.parametrize("base", [0.0, 1000.0, 5.0])
def test_read_all_measures_a_reads_time_from_its_own_start_whatever_the_clock_reads(base):
    # a read of 0.3 s within 10 s answers on a clock starting at 0, 5 (half the timeout) or 1000
    def read(argument):
        time.sleep(0.3)
        return {"nodes": [], "argument": argument}

    results = inventory.read_all([("a", "a"), ("b", "b")], read, workers=1, timeout=10, clock=offset_clock(base, [0]))
    assert results == {"a": {"nodes": [], "argument": "a"}, "b": {"nodes": [], "argument": "b"}}


def test_read_all_bounds_workers_past_the_small_integers():
    # 300 workers (past CPython's cached small integers, up to 256): 301 clusters, the last waits for a free worker;
    # no read ends before 300 run at once (whatever the load), and then only after a moment a 301st would start in
    active, peak, lock, full = [0], [0], threading.Lock(), threading.Event()

    def read(argument):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            if active[0] >= 300:
                full.set()
        full.wait(30)
        time.sleep(0.2)
        with lock:
            active[0] -= 1
        return {"nodes": []}

    results = inventory.read_all([(i, i) for i in range(301)], read, workers=300, timeout=60)
    assert peak[0] == 300 and len(results) == 301 and all(value == {"nodes": []} for value in results.values())


def test_a_context_takes_its_cluster_and_user_by_name_not_one_sorting_after_it():
    # the cluster and user listed after others whose names sort after theirs
    config = {
        "contexts": [{"name": "c", "context": {"cluster": "a", "user": "ua"}}],
        "clusters": [{"name": "z", "cluster": {"server": "https://z:6443"}}, {"name": "a", "cluster": {"server": "https://a:6443"}}],
        "users": [{"name": "uz", "user": {"token": "tz"}}, {"name": "ua", "user": {"token": "ta"}}],
    }
    one = inventory.context_kubeconfig(config, "c", "/x")
    assert one["clusters"] == [config["clusters"][1]] and one["users"] == [config["users"][1]]
