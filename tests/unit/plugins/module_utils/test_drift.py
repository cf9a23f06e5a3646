# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Configuration drift (plugins/module_utils/judging/drift.py): Node objects through detection into the report."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import recorded_detection
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import detect
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import html_view
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report as rp

GENERATED = "2026-01-01T00:00:00Z"


def node(name, driver=("570", "148", "08"), kernel="6.8.0-1015-aws", full=None):
    labels = {
        "kubernetes.io/hostname": name,
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "nvidia.com/cuda.driver.major": driver[0],
        "nvidia.com/cuda.driver.minor": driver[1],
        "nvidia.com/cuda.driver.rev": driver[2],
        "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/cuda.runtime.minor": "8",
    }
    if full:
        labels["nvidia.com/cuda.driver-version.full"] = full
    info = {"kubeletVersion": "v1.33.5-eks-1", "kernelVersion": kernel, "osImage": "Amazon Linux 2023", "containerRuntimeVersion": "containerd://1.7.27"}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"providerID": "aws:///us-east-1a/" + name},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "nodeInfo": dict(info, bootID="x", machineID="y")},
    }


def cluster(nodes):
    # What the role records of detection (cluster_detect keeps node_evidence of each Node).
    detection = detect.check_cluster([detect.node_evidence(item) for item in nodes], "aws", "h100")
    return dict(recorded_detection(detection), outcome="Succeeded", stages=[])


def fleet(skewed="b-1"):
    results = {}
    for name in ("a", "b"):
        nodes = [node("%s-%d" % (name, index)) for index in range(3)]
        results[name] = cluster([node(item["metadata"]["name"], driver=("570", "124", "06")) if item["metadata"]["name"] == skewed else item for item in nodes])
    return results


def test_node_config_reads_gfd_labels_and_node_info():
    assert drift.node_config(node("n")) == {
        "driver": "570.148.08",
        "cuda": "12.8",
        "kubelet": "v1.33.5-eks-1",
        "kernel": "6.8.0-1015-aws",
        "os_image": "Amazon Linux 2023",
        "container_runtime": "containerd://1.7.27",
    }
    # Newer GFD's full version label wins over the parts.
    assert drift.node_config(node("n", full="575.51.03"))["driver"] == "575.51.03"
    assert drift.node_config({"metadata": {"labels": "x"}, "status": {"nodeInfo": []}}) == {}


def test_a_driver_skew_is_named_against_the_sku_majority_across_clusters():
    judged = drift.judge(fleet())
    (row,) = judged["nodes"]
    assert (row["cluster"], row["node"], row["key"], row["value"], row["majority"], row["verdict"]) == (
        "b",
        "b-1",
        "driver",
        "570.124.06",
        "570.148.08",
        "warn",
    )
    assert "differs from the majority 570.148.08 of SKU aws/h100/p5.48xlarge (5 of 6 nodes)" in row["why"]
    driver = [item for item in judged["skus"] if item["key"] == "driver"][0]
    assert driver["counts"] == {"570.148.08": 5, "570.124.06": 1} and driver["nodes"] == 6


def test_the_golden_file_names_a_version_it_does_not_allow(tmp_path):
    golden = tmp_path / "golden.yml"
    golden.write_text("aws/h100:\n  driver: ['570.148.*']\n'*':\n  kubelet: ['v1.33.*']\n")
    judged = drift.judge(fleet(), golden=drift.load_golden(str(golden)), fail_keys=["driver"])
    (row,) = judged["nodes"]
    assert row["node"] == "b-1" and row["verdict"] == "fail" and "is not in the golden versions 570.148.* for SKU aws/h100/p5.48xlarge" in row["why"]
    assert "differs from the majority" in row["why"]
    # A golden file alone names every node of a SKU that runs a version it does not allow, with no majority needed.
    judged = drift.judge(fleet(skewed=""), golden={"aws": {"kernel": ["6.9.*"]}})
    assert len(judged["nodes"]) == 6 and all("is not in the golden versions 6.9.*" in row["why"] for row in judged["nodes"])


def test_the_report_shows_drift_per_cluster_and_fleet_wide():
    report = rp.build_report(fleet(), generated=GENERATED)
    b = [item for item in report["clusters"] if item["cluster"] == "b"][0]
    case = [case for case in b["testcases"] if case["workload"] == "drift"][0]
    assert case["verdict"] == "warn" and "b-1: driver 570.124.06 differs" in case["reason"]
    assert b["verdict"] == "warn" and b["action_rule"] == "config_drift_warn" and b["action"] == "retest"
    row = [row for row in b["nodes"] if row["node"] == "b-1"][0]
    assert row["verdict"] == "warn" and "drift" in row["stages"] and row["action_rule"] == "config_drift_warn"
    a = [item for item in report["clusters"] if item["cluster"] == "a"][0]
    assert [case["verdict"] for case in a["testcases"] if case["workload"] == "drift"] == ["pass"]
    assert [row["node"] for row in report["drift"]["nodes"]] == ["b-1"]
    schema = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "docs", "verdict-schema.json")))
    import jsonschema

    jsonschema.validate(json.loads(rp.render_json(report)), schema)


@pytest.mark.parametrize(
    "value, field",
    [
        ({"aws": {"firmware": ["1"]}}, "burnin_golden.aws.firmware"),
        ({"aws": {"driver": []}}, "burnin_golden.aws.driver"),
        ({"aws": "570"}, "burnin_golden.aws"),
        (["570"], "burnin_golden"),
    ],
)
def test_a_bad_golden_file_names_the_field(value, field):
    with pytest.raises(ConfigError) as caught:
        drift.check_golden(value)
    assert caught.value.args[0] == field or field in str(caught.value)


def test_a_golden_path_that_cannot_be_read_names_the_variable(tmp_path):
    with pytest.raises(ConfigError) as caught:
        drift.load_golden(str(tmp_path / "missing.yml"))
    assert "burnin_golden" in str(caught.value)
    with pytest.raises(ConfigError):
        drift.check_fail_keys(["firmware"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["570.148.08", "570.124.06", "575.51.03"]), min_size=1, max_size=15))
def test_only_nodes_unlike_a_strict_majority_drift(drivers):
    nodes = [node("n%02d" % index, driver=tuple(value.split("."))) for index, value in enumerate(drivers)]
    judged = drift.judge({"a": cluster(nodes)})
    counts = dict((value, drivers.count(value)) for value in drivers)
    top, many = max(counts.items(), key=lambda item: item[1])
    named = sorted(row["node"] for row in judged["nodes"] if row["key"] == "driver")
    if many * 2 > len(drivers):
        assert named == sorted("n%02d" % index for index, value in enumerate(drivers) if value != top)
    else:
        assert named == []


# What each node ran, per stage (drift.stage_runtime, recorded by burnin/stage_run.py as the result's node_runtime).
REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real", "nccl")


def real_log(name):
    with open(os.path.join(REAL, name)) as handle:
        return handle.read()


def pod(name, node_name, image_id="registry.example/nccl-tests@sha256:" + "a" * 64, env=None, role=None):
    labels = {"jobset.sigs.k8s.io/replicatedjob-name": role} if role else {}
    env = env if env is not None else [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "NCCL_IB_HCA", "value": "mlx5"}]
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"nodeName": node_name, "containers": [{"name": "node", "image": "registry.example/nccl-tests:1", "env": env}]},
        "status": {"containerStatuses": [{"name": "node", "image": "registry.example/nccl-tests:1", "imageID": image_id}]},
    }


def test_pod_runtime_reads_the_pulled_digest_the_nccl_env_and_the_versions_its_log_printed():
    text = real_log("gcp-fastsocket-plugin-nccl2.20.5.log")
    env = [
        {"name": "NCCL_DEBUG", "value": "INFO"},
        {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
        {"name": "NCCL_TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "OTHER", "value": "x"},
    ]
    assert drift.pod_runtime(pod("p", "n1", env=env), text) == {
        "images": {"node": "registry.example/nccl-tests@sha256:" + "a" * 64},
        "nccl_env": "NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=eth0",
        "nccl": "2.20.5+cuda12.4",
        "net_plugin": "FastSocket (v6)",
    }
    # Without a log only the pod's own fields; nothing readable, nothing.
    assert set(drift.pod_runtime(pod("p", "n1"))) == {"images", "nccl_env"}
    assert drift.pod_runtime({"spec": "x", "status": {"containerStatuses": "y"}}) == {}
    assert drift.pod_runtime(None) == {}


def test_pod_runtime_is_bounded():
    env = [{"name": "NCCL_V%03d" % index, "value": "x" * 5000} for index in range(1000)]
    many = dict(pod("p", "n1", env=env))
    many["status"] = {"containerStatuses": [{"name": "c%03d" % index, "imageID": "i" * 5000} for index in range(1000)]}
    config = drift.pod_runtime(many)
    assert len(config["nccl_env"]) == drift.MAX_ENV_TEXT and len(config["images"]) == drift.MAX_CONTAINERS
    assert all(len(value) == drift.MAX_TEXT for value in config["images"].values())


def test_stage_runtime_keys_each_node_by_its_own_pod_and_leaves_the_launcher_out():
    pods = [pod("job-node-0-0-a", "n1"), pod("job-node-0-1-b", "n2"), pod("job-launcher-0-0-c", "n1", role="launcher"), pod("pending", "")]
    logs = {"job-node-0-0-a": real_log("gcp-fastsocket-plugin-nccl2.20.5.log"), "job-launcher-0-0-c": real_log("nccl2.19.3-roce-using-network-ib.log")}
    found = drift.stage_runtime(pods, logs)
    assert sorted(found) == ["n1", "n2"]
    assert found["n1"]["nccl"] == "2.20.5+cuda12.4" and "nccl" not in found["n2"]
    # A multi-node stage's log holds every rank's lines: not read.
    assert "nccl" not in drift.stage_runtime(pods, logs, read_logs=False)["n1"]


def test_rendered_env_gives_each_replicated_job_its_nccl_env():
    runtime = {
        "kind": "TrainingRuntime",
        "spec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "launcher",
                            "template": {"spec": {"template": {"spec": {"containers": [{"name": "l", "env": [{"name": "OMPI_X", "value": "1"}]}]}}}},
                        },
                        {
                            "name": "node",
                            "template": {"spec": {"template": {"spec": {"containers": [{"name": "n", "env": [{"name": "NCCL_DEBUG", "value": "INFO"}]}]}}}},
                        },
                        {"name": "bad", "template": "x"},
                    ]
                }
            }
        },
    }
    assert drift.rendered_env([{"kind": "TrainJob"}, runtime, "TrainingRuntime/x"]) == {"node": "NCCL_DEBUG=INFO"}
    # A pod without containers (as the waits keep it) takes its replicated job's.
    bare = pod("job-node-0-0-a", "n1")
    del bare["spec"]["containers"]
    bare["metadata"]["labels"] = {"jobset.sigs.k8s.io/replicatedjob-name": "node"}
    assert drift.stage_runtime([bare], rendered={"node": "NCCL_DEBUG=INFO"})["n1"]["nccl_env"] == "NCCL_DEBUG=INFO"
    assert "nccl_env" not in drift.stage_runtime([bare], rendered={"launcher": "NCCL_DEBUG=WARN"})["n1"]


def runtime_fleet(versions, digests=None, stage="node"):
    """Cluster 'a' of three nodes whose node-stage pods printed the real fastsocket log with VERSIONS' NCCL version."""
    results = fleet(skewed="")
    text = real_log("gcp-fastsocket-plugin-nccl2.20.5.log")
    assert "NCCL version 2.20.5+cuda12.4" in text
    pods, logs = [], {}
    for index, version in enumerate(versions):
        name = "a-node-0-%d" % index
        pods.append(pod(name, "a-%d" % index, image_id=(digests or {}).get(index, "registry.example/nccl-tests@sha256:" + "a" * 64)))
        logs[name] = text.replace("NCCL version 2.20.5+cuda12.4", "NCCL version %s" % version)
    results["a"] = dict(results["a"], node_runtime={stage: drift.stage_runtime(pods, logs)})
    return results


def test_an_nccl_version_skew_is_named_with_its_stage():
    judged = drift.judge(runtime_fleet(["2.20.5+cuda12.4", "2.21.5+cuda12.4", "2.20.5+cuda12.4"]))
    (row,) = judged["nodes"]
    assert (row["node"], row["key"], row["scope"], row["value"], row["majority"]) == ("a-1", "nccl", "node", "2.21.5+cuda12.4", "2.20.5+cuda12.4")
    assert row["why"].startswith("NCCL (node) 2.21.5+cuda12.4 differs from the majority 2.20.5+cuda12.4") and "(2 of 3 nodes)" in row["why"]
    keys = sorted((item["key"], item["scope"]) for item in judged["skus"] if item["key"] in drift.RUNTIME_KEYS)
    assert keys == [("images", "node/node"), ("nccl", "node"), ("nccl_env", "node"), ("net_plugin", "node")]
    # The same versions everywhere: nothing drifts.
    assert drift.judge(runtime_fleet(["2.20.5+cuda12.4"] * 3))["nodes"] == []


def test_a_pulled_digest_skew_and_the_golden_file_on_runtime_keys():
    other = "registry.example/nccl-tests@sha256:" + "b" * 64
    judged = drift.judge(runtime_fleet(["2.20.5+cuda12.4"] * 3, digests={2: other}), golden={"aws/h100": {"nccl": ["2.21.*"]}}, fail_keys=["images"])
    rows = sorted((row["node"], row["key"], row["verdict"]) for row in judged["nodes"])
    # Every node's NCCL is outside the golden versions (warn); a-2 pulled another digest (fail, as asked).
    assert rows == [("a-0", "nccl", "warn"), ("a-1", "nccl", "warn"), ("a-2", "images", "fail"), ("a-2", "nccl", "warn")]
    image = [row for row in judged["nodes"] if row["key"] == "images"][0]
    assert image["scope"] == "node/node" and image["value"] == other and "differs from the majority" in image["why"]
    with pytest.raises(ConfigError):
        drift.check_golden({"aws": {"nccl_plugin": ["1"]}})


def test_runtime_of_a_node_that_is_not_a_gpu_node_is_not_compared():
    results = runtime_fleet(["2.20.5+cuda12.4"] * 3)
    results["a"]["node_runtime"]["node"]["cpu-0"] = {"nccl": "2.18.1+cuda12.1"}
    assert drift.judge(results)["nodes"] == []


def test_the_report_names_a_runtime_drift_and_follows_the_schema():
    report = rp.build_report(runtime_fleet(["2.20.5+cuda12.4", "2.20.5+cuda12.4", "2.19.3+cuda12.3"]), generated=GENERATED)
    a = [item for item in report["clusters"] if item["cluster"] == "a"][0]
    case = [case for case in a["testcases"] if case["workload"] == "drift"][0]
    assert case["verdict"] == "warn" and "a-2: NCCL (node) 2.19.3+cuda12.3 differs" in case["reason"]
    row = [row for row in a["nodes"] if row["node"] == "a-2"][0]
    assert row["verdict"] == "warn" and "drift" in row["stages"]
    # The fleet-wide drift table names the key with its stage.
    assert "<td>nccl (node)</td><td>2.19.3+cuda12.3</td>" in html_view.render_html(report)
    schema = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "docs", "verdict-schema.json")))
    import jsonschema

    jsonschema.validate(json.loads(rp.render_json(report)), schema)


def test_one_key_drifting_in_two_stages_is_two_series_told_apart_by_scope():
    metrics = pytest.importorskip("ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.metrics")
    pytest.importorskip("prometheus_client")
    results = runtime_fleet(["2.20.5+cuda12.4", "2.20.5+cuda12.4", "2.19.3+cuda12.3"])
    results["a"]["node_runtime"]["dcgm"] = dict((node, dict(value)) for node, value in results["a"]["node_runtime"]["node"].items())
    report = rp.build_report(results, generated=GENERATED)
    assert sorted((row["node"], row["key"], row["scope"]) for row in report["drift"]["nodes"]) == [("a-2", "nccl", "dcgm"), ("a-2", "nccl", "node")]
    text = metrics.exposition(metrics.build_families(report))
    lines = [line for line in text.splitlines() if line.startswith("gpufleet_burnin_node_config_drift{")]
    assert len(lines) == 2 and any('scope="dcgm"' in line for line in lines) and any('scope="node"' in line for line in lines)


# What the mutation run of judging/drift.py (issue 47) found untested: each bound at its value and one past it, the
# driver's parts without their first, the entries skipped without ending the read, pods by name.


def test_a_value_is_kept_up_to_200_characters():
    assert drift.MAX_TEXT == 200
    for length, kept in ((199, 199), (200, 200), (201, 200)):
        kernel = ("6.8.0-" + "x" * length)[:length]
        assert drift.node_config(node("n", kernel=kernel))["kernel"] == kernel[:kept], length


def test_the_driver_from_its_parts_needs_the_major_and_takes_what_follows():
    def driver(**parts):
        labels = dict(("nvidia.com/cuda.driver.%s" % name, value) for name, value in parts.items())
        return drift.node_config({"metadata": {"labels": labels}}).get("driver")

    assert driver(major="570", minor="148", rev="08") == "570.148.08"
    assert driver(major="570", minor="148") == "570.148"
    assert driver(minor="148", rev="08") is None and driver(rev="08") is None


def test_an_nccl_variable_name_is_kept_up_to_100_characters():
    for length, kept in ((99, 99), (100, 100), (101, 100)):
        name = ("NCCL_" + "X" * length)[:length]
        env = drift.pod_runtime(pod("p", "n1", env=[{"name": name, "value": "1"}]))["nccl_env"]
        assert env == "%s=1" % name[:kept], length


def test_a_replicated_job_without_a_template_does_not_end_the_read():
    node_job = {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "n", "env": [{"name": "NCCL_DEBUG", "value": "INFO"}]}]}}}}}
    runtime = {"kind": "TrainingRuntime", "spec": {"template": {"spec": {"replicatedJobs": [{"name": "launcher"}, node_job]}}}}
    assert drift.rendered_env([runtime]) == {"node": "NCCL_DEBUG=INFO"}


def test_a_node_that_ran_two_pods_keeps_the_first_by_name_whatever_their_order():
    first = pod("job-node-0-0-a", "n1", image_id="registry.example/nccl@sha256:" + "1" * 64)
    second = pod("job-node-0-1-b", "n1", image_id="registry.example/nccl@sha256:" + "2" * 64)
    for pods in ([first, second], [second, first]):
        assert drift.stage_runtime(pods)["n1"]["images"] == {"node": "registry.example/nccl@sha256:" + "1" * 64}
    # a pod without metadata has no name and sorts as "None"; it is still read
    bare = pod("x", "n2")
    del bare["metadata"]
    assert sorted(drift.stage_runtime([bare, first])) == ["n1", "n2"]


def test_a_sku_of_the_golden_file_must_be_a_non_empty_string():
    for sku in (5, "  ", ""):
        with pytest.raises(ConfigError) as caught:
            drift.check_golden({sku: {"driver": ["570.*"]}})
        assert str(caught.value) == "burnin_golden: a SKU must be a non-empty string, got %r" % (sku,)


def test_the_golden_wildcard_comes_first_and_the_most_specific_wins_whatever_the_names():
    # "!lab" sorts before "*": the wildcard is applied first by rule, not by name
    golden = {"!lab": {"driver": ["1"]}, "*": {"driver": ["2"], "kernel": ["6.*"]}}
    assert drift._golden_for(golden, "!lab/h100/x") == {"driver": ["1"], "kernel": ["6.*"]}
    golden = {"aws/h100": {"driver": ["3"]}, "aws": {"driver": ["4"]}, "*": {"driver": ["5"]}}
    assert drift._golden_for(golden, "aws/h100/p5.48xlarge") == {"driver": ["3"]}
    assert drift._golden_for(golden, "aws/a100/p4d.24xlarge") == {"driver": ["4"]}
    # a SKU that sorts after the pattern is no match of it, nor a pattern that sorts before "*" of another SKU
    assert drift._golden_for(golden, "aws/l40s/g6e.48xlarge") == {"driver": ["4"]}
    assert drift._golden_for({"!lab": {"driver": ["1"]}}, "aws/h100/x") == {}


def test_a_runtime_node_that_is_no_gpu_node_does_not_end_the_read():
    results = runtime_fleet(["2.20.5+cuda12.4", "2.20.5+cuda12.4", "2.19.3+cuda12.3"])
    # "0-cpu" sorts before the GPU nodes a-0 .. a-2
    results["a"]["node_runtime"]["node"]["0-cpu"] = {"nccl": "2.18.1+cuda12.1"}
    assert [(row["node"], row["key"]) for row in drift.judge(results)["nodes"]] == [("a-2", "nccl")]


def test_only_the_images_key_is_read_per_container():
    results = runtime_fleet(["2.20.5+cuda12.4"] * 3)
    for index in range(3):
        results["a"]["node_runtime"]["node"]["a-%d" % index]["nccl"] = {"node": "2.20.5+cuda12.4" if index else "2.19.3+cuda12.3"}
    judged = drift.judge(results)
    assert judged["nodes"] == [] and not [item for item in judged["skus"] if item["key"] == "nccl"]


def test_a_cluster_result_that_is_no_mapping_is_skipped_and_the_others_judged():
    results = fleet()
    results["0"] = "not a result"
    assert [(row["cluster"], row["node"]) for row in drift.judge(results)["nodes"]] == [("b", "b-1")]


def test_only_a_trainingruntime_gives_its_jobs_env():
    job = {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "n", "env": [{"name": "NCCL_DEBUG", "value": "INFO"}]}]}}}}}
    spec = {"template": {"spec": {"replicatedJobs": [job]}}}
    # ClusterTrainingRuntime sorts before TrainingRuntime, Workload after it: neither is read
    assert drift.rendered_env([{"kind": "ClusterTrainingRuntime", "spec": spec}, {"kind": "Workload", "spec": spec}]) == {}
    assert drift.rendered_env([{"kind": "TrainingRuntime", "spec": spec}]) == {"node": "NCCL_DEBUG=INFO"}


def test_only_the_launcher_is_left_out_of_a_stages_pods():
    # Kubeflow Trainer's initializer sorts before "launcher": it ran on its node and is read
    pods = [pod("job-dataset-initializer-0-0-a", "n1", role="dataset-initializer"), pod("job-launcher-0-0-b", "n2", role="launcher")]
    assert sorted(drift.stage_runtime(pods)) == ["n1"]


def test_a_golden_version_given_alone_is_a_list_of_one_and_a_boolean_is_refused():
    assert drift.check_golden({"aws": {"driver": "570.*", "kernel": 6}}) == {"aws": {"driver": ["570.*"], "kernel": ["6"]}}
    with pytest.raises(ConfigError) as caught:
        drift.check_golden({"aws": {"driver": True}})
    assert str(caught.value) == "burnin_golden.aws.driver: must be a non-empty list of allowed versions (patterns such as 570.*), got True"


def test_a_bad_golden_file_says_what_it_allows():
    keys = "driver, cuda, kubelet, kernel, os_image, container_runtime, nccl, net_plugin, images, nccl_env"
    with pytest.raises(ConfigError) as caught:
        drift.check_golden({"aws": "570"})
    assert str(caught.value) == "burnin_golden.aws: must map keys (%s) to lists of allowed versions" % keys
    with pytest.raises(ConfigError) as caught:
        drift.check_golden({"aws": {"firmware": ["1"]}})
    assert str(caught.value) == "burnin_golden.aws.firmware: is not a key the drift check reads; allowed: %s" % keys


def test_a_result_keeps_each_node_config_once_with_its_nodes():
    nodes = [node("n-%d" % index) for index in range(5)] + [node("n-9", kernel="6.8.0-1016-aws"), node("n-10", kernel="6.8.0-1016-aws")]
    detected = cluster(nodes)["detected"]
    assert "node_config" not in detected
    one, other = detected["node_configs"]
    # in the order of their first node (sorted as text: n-10 before n-9), each node once
    assert one["nodes"] == ["n-0", "n-1", "n-2", "n-3", "n-4"] and other["nodes"] == ["n-10", "n-9"]
    assert one["config"] == drift.node_config(nodes[0]) and other["config"]["kernel"] == "6.8.0-1016-aws"
    assert drift.configs_of(detected) == dict((item["metadata"]["name"], drift.node_config(item)) for item in nodes)


def test_the_drift_of_results_kept_per_node_before_is_the_same():
    # An earlier run's results (reports, baselines) hold detected.node_config, one entry per node: read the same.
    grouped = fleet()
    per_node = dict(
        (
            name,
            dict(
                entry, detected=dict(dict((k, v) for k, v in entry["detected"].items() if k != "node_configs"), node_config=drift.configs_of(entry["detected"]))
            ),
        )
        for name, entry in grouped.items()
    )
    assert "node_configs" not in per_node["a"]["detected"] and len(per_node["a"]["detected"]["node_config"]) == 3
    assert drift.judge(per_node) == drift.judge(grouped) and drift.judge(grouped)["nodes"][0]["node"] == "b-1"


@pytest.mark.parametrize(
    "detected",
    [None, "x", {}, {"node_configs": "x"}, {"node_configs": ["x", {"config": "y", "nodes": ["n"]}, {"config": {}, "nodes": "n"}]}, {"node_config": ["n"]}],
)
def test_configs_that_are_not_what_a_result_keeps_read_as_none(detected):
    assert drift.configs_of(detected) == {}


def test_a_cluster_with_runtime_but_no_node_config_is_compared_and_one_with_neither_skipped():
    results = runtime_fleet(["2.20.5+cuda12.4", "2.20.5+cuda12.4", "2.19.3+cuda12.3"])
    results["a"]["detected"] = dict(results["a"]["detected"], node_configs=[])
    # "0" (no node config, no runtime) sorts before "a" and "b"
    results["0"] = {"outcome": "Succeeded"}
    rows = [(row["cluster"], row["node"], row["key"]) for row in drift.judge(results)["nodes"]]
    assert rows == [("a", "a-2", "nccl")]


def test_a_finding_carries_the_golden_versions_it_was_judged_against():
    judged = drift.judge(fleet(), golden={"aws/h100": {"driver": ["570.148.*"]}})
    (item,) = judged["findings"]["b"]
    assert item["node"] == "b-1" and item["evidence"]["golden"] == ["570.148.*"] and item["evidence"]["majority"] == "570.148.08"
    # without a golden file the evidence holds an empty list
    (item,) = drift.judge(fleet())["findings"]["b"]
    assert item["evidence"]["golden"] == []
