# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The sweep's choice, pins, preemption and coverage (module_utils/burnin/sweep.py) over a fake cluster: Node and Pod
objects as the API server returns them, the nodes marked by node_marks.plan_mark itself (the real record format) and
their record ConfigMap as the remediation writes it (cluster/node_records.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import sweep
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks as nm
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_records
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import remediation as rem
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report

NOW = 1764770000
HOUR = 3600
OPTIONS = sweep.check_options(24, 10, 100, "none")


def node(name, gpus=8, marked_hours_ago=None, ttl=24, verdict="pass", ready=True, cordoned=False, taints=()):
    """A Node object; MARKED_HOURS_AGO: when the collection marked it (None: never)."""
    obj = {
        "metadata": {"name": name, "resourceVersion": "1", "labels": {}, "annotations": {}},
        "spec": {"unschedulable": cordoned, "taints": list(taints)},
        "status": {"capacity": {"nvidia.com/gpu": str(gpus)} if gpus else {}, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }
    if marked_hours_ago is not None:
        at = NOW - int(marked_hours_ago * HOUR)
        entry = report.cluster_node_entries("c1", {"node_verdicts": {name: {"verdict": verdict, "reasons": [], "stages": ["node"]}}})[0]
        options = rem.check_options(False, "gpufleet.burnin/verified", "none", None)
        options.update(nm.check_options(True, ttl, False))
        state = nm.plan_mark(rem.node_state(obj), entry, "run-%d" % at, at, options)
        obj["metadata"]["labels"], obj["metadata"]["annotations"] = state["labels"], state["annotations"]
    return obj


def recorded(nodes):
    """The record ConfigMap the remediation would have written for NODES' marks (one entry per marked node)."""
    data = {}
    for obj in nodes:
        text = obj["metadata"]["annotations"].get(nm.MARKS_RECORD)
        if text:
            at = nm.read_record({"annotations": {nm.MARKS_RECORD: text}})["marked_at"]
            data[obj["metadata"]["name"]] = node_records.entry_text({"records": {nm.MARKS_RECORD: text}, "run_id": "run-%d" % at, "at": at})
    return {"metadata": {"name": node_records.RECORD_NAME}, "data": data}


def select(nodes, pods, now, options, **kwargs):
    """sweep.select with the nodes' record."""
    return sweep.select(nodes, pods, now, options, records=sweep.records_of(recorded(nodes), now), **kwargs)


def coverage(nodes, now, selection=None, **kwargs):
    """sweep.coverage with the nodes' record."""
    return sweep.coverage(nodes, now, selection, records=sweep.records_of(recorded(nodes), now), **kwargs)


def pod(name, node_name, gpus=1, phase="Running", namespace="team", priority_class=None, claims=False):
    spec = {"nodeName": node_name, "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if claims:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpus"}]
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec, "status": {"phase": phase}}


def fleet():
    """The test fleet's shape (tests/e2e/test_sweep.py makes the same on real API servers): fresh, expired, never
    marked, busy, cordoned, not ready, quarantined, and a CPU node."""
    nodes = [
        node("fresh", marked_hours_ago=2),
        node("expired-old", marked_hours_ago=50),
        node("expired", marked_hours_ago=30),
        node("never"),
        node("stale", marked_hours_ago=20, ttl=48),
        node("busy", marked_hours_ago=40),
        node("cordoned", cordoned=True),
        node("notready", ready=False),
        node("bad", taints=[{"key": "gpufleet.burnin/bad", "value": "r1", "effect": "NoSchedule"}]),
        node("cpu", gpus=0),
    ]
    pods = [pod("train-0", "busy"), pod("web", "fresh", gpus=0), pod("done", "expired", phase="Succeeded")]
    return nodes, pods


def test_the_sweep_picks_the_idle_stale_gpu_nodes_stalest_first_and_says_why_it_skips_the_others():
    nodes, pods = fleet()
    chosen = select(nodes, pods, NOW, sweep.check_options(12, 10, 100, "none"))
    assert [row["node"] for row in chosen["picked"]] == ["never", "expired-old", "expired", "stale"]
    assert [row["why"] for row in chosen["picked"]] == ["missing", "expired", "expired", "stale"]
    assert dict((row["node"], row["reason"]) for row in chosen["skipped"]) == {
        "busy": "busy",
        "cordoned": "cordoned",
        "notready": "not_ready",
        "bad": "tainted",
    }
    assert "team/train-0" in [row for row in chosen["skipped"] if row["node"] == "busy"][0]["detail"]
    assert chosen["fresh"] == ["fresh"] and chosen["gpu_nodes"] == 9


def test_max_age_decides_what_is_stale_before_the_expiry():
    nodes, pods = fleet()
    assert "stale" not in [row["node"] for row in select(nodes, pods, NOW, sweep.check_options(24, 10, 100, "none"))["picked"]]
    assert "fresh" in [row["node"] for row in select(nodes, pods, NOW, sweep.check_options(1, 10, 100, "none"))["picked"]]


@pytest.mark.parametrize(
    "max_nodes, max_percent, expected",
    [(2, 100, 2), (10, 30, 2), (10, 1, 1), (1, 100, 1), (10, 100, 4)],
)
def test_the_bounds_cap_the_pick_and_the_rest_waits_over_the_limit(max_nodes, max_percent, expected):
    nodes, pods = fleet()
    chosen = select(nodes, pods, NOW, sweep.check_options(12, max_nodes, max_percent, "none"))
    assert len(chosen["picked"]) == expected
    assert chosen["limit"] == max(1, min(max_nodes, 9 * max_percent // 100))
    waiting = [row["node"] for row in chosen["skipped"] if row["reason"] == "over_limit"]
    assert waiting == sorted(["never", "expired-old", "expired", "stale"][expected:])


def test_a_sweep_pod_does_not_make_its_own_node_busy_and_ended_or_gpu_less_pods_do_not_either():
    nodes = [node("a"), node("b"), node("c"), node("d")]
    pods = [
        pod("sweep-0", "a", priority_class=sweep.PRIORITY_CLASS),
        pod("ended", "b", phase="Failed"),
        pod("cpu-only", "c", gpus=0),
        pod("dra", "d", gpus=0, claims=True),
        pod("pending", "", gpus=8),
    ]
    chosen = select(nodes, pods, NOW, OPTIONS)
    assert [row["node"] for row in chosen["picked"]] == ["a", "b", "c"]
    assert chosen["skipped"][0]["node"] == "d" and chosen["skipped"][0]["reason"] == "busy"


def test_a_preempted_node_is_recorded_as_preempted_not_failed_and_picked_again_next_sweep():
    nodes = [node("a"), node("b")]
    events = [
        {"reason": "Preempted", "message": "Preempted by pod 1f2e-uid on node a", "involvedObject": {"kind": "Pod", "name": "sweep-node-0"}},
        {"reason": "Preempted", "message": "Preempted by pod 9-uid on node elsewhere"},
        {"reason": "Scheduled", "message": "Successfully assigned x to b on node b"},
    ]
    victims = [{"spec": {"nodeName": "b"}, "status": {"conditions": [{"type": "DisruptionTarget", "reason": "PreemptionByScheduler"}]}}]
    assert sweep.preempted_nodes(events, [], ["a", "b"]) == ["a"]
    # An earlier sweep's event (its pod named after its run) does not count for this run.
    assert sweep.preempted_nodes(events, [], ["a", "b"], run_id="r2") == []
    own = [dict(events[0], involvedObject={"kind": "Pod", "name": "nccl-burnin-r2-node-node-0-0-x1"})]
    assert sweep.preempted_nodes(own, [], ["a", "b"], run_id="r2") == ["a"]
    assert sweep.preempted_nodes(events, victims, ["a", "b"]) == ["a", "b"]
    chosen = select(nodes, [], NOW, OPTIONS, preempted=["a"])
    assert [row["reason"] for row in chosen["skipped"]] == ["preempted"]
    cover = coverage(nodes, NOW, chosen, preempted=["a"])
    assert cover["preempted"] == ["a"] and cover["skipped"] == {"preempted": 1}
    # Nothing of the preemption stays on the node: the next sweep, without it, picks the node again.
    assert [row["node"] for row in select(nodes, [], NOW + 600, OPTIONS)["picked"]] == ["a", "b"]


def test_coverage_counts_the_valid_passes_the_oldest_and_the_never_verified():
    nodes, pods = fleet()
    nodes.append(node("warned", marked_hours_ago=1, verdict="warn"))
    chosen = select(nodes, pods, NOW, OPTIONS)
    cover = coverage(nodes, NOW, chosen)
    assert cover["gpu_nodes"] == 10
    # fresh (2 h) and stale (20 h of 48) are valid passes; a warn is not verified.
    assert cover["verified"] == 2 and cover["verified_percent"] == 20.0
    assert cover["oldest_verified_at"] == nm.iso(NOW - 20 * HOUR)
    assert cover["never_verified"] == ["bad", "cordoned", "never", "notready"]
    assert cover["expired"] == ["busy", "expired", "expired-old"]
    assert cover["skipped"] == {"busy": 1, "cordoned": 1, "not_ready": 1, "tainted": 1}


def test_the_fleet_coverage_adds_the_clusters_and_exports_the_ratio_and_timestamps():
    nodes, pods = fleet()
    one = coverage(nodes, NOW, select(nodes, pods, NOW, OPTIONS))
    two = coverage([node("x", marked_hours_ago=3), node("y")], NOW, {})
    fleet_cover = sweep.fleet_coverage({"gcp_h100": two, "aws_h100": one})
    assert list(fleet_cover["clusters"]) == ["aws_h100", "gcp_h100"]
    assert (fleet_cover["gpu_nodes"], fleet_cover["verified"], fleet_cover["never_verified"]) == (11, 3, 5)
    assert fleet_cover["oldest_verified_at"] == nm.iso(NOW - 20 * HOUR)
    text = sweep.prometheus(fleet_cover)
    assert 'gpufleet_burnin_nodes_verified_ratio{cluster="gcp_h100"} 0.5' in text
    assert 'gpufleet_burnin_nodes_verified_ratio{cluster=""} %r' % round(3 / 11.0, 6) in text
    assert 'gpufleet_burnin_node_verified_timestamp_seconds{cluster="gcp_h100",node="x"} %d' % (NOW - 3 * HOUR) in text
    assert 'gpufleet_burnin_sweep_nodes_skipped{cluster="aws_h100",reason="busy"} 1' in text
    page = sweep.html(dict(fleet_cover, clusters=dict(fleet_cover["clusters"], **{"<script>": two})))
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_the_node_stage_is_pinned_to_exactly_the_picked_nodes_under_the_sweep_priority_class():
    runtime = {
        "kind": "TrainingRuntime",
        "spec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "affinity": {
                                                "nodeAffinity": {
                                                    "requiredDuringSchedulingIgnoredDuringExecution": {
                                                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "Exists"}]}]
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            },
                        }
                    ]
                }
            }
        },
    }
    out = sweep.pinned([runtime, {"kind": "TrainJob"}], ["n2", "n1"], hold=True)
    spec = out[0]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "nvidia.com/gpu.present", "operator": "Exists"},
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1", "n2"]},
            ]
        }
    ]
    assert spec["priorityClassName"] == "gpufleet-burnin-sweep"
    assert spec["tolerations"] == [{"key": "gpufleet.burnin/sweep", "operator": "Exists", "effect": "NoSchedule"}]
    assert "priorityClassName" not in runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def test_the_priority_class_is_negative_and_never_preempts():
    obj = sweep.priority_class()
    assert obj["value"] < 0 and obj["preemptionPolicy"] == "Never" and obj["globalDefault"] is False


def test_a_cancelled_sweeps_hold_is_found_by_the_next_one():
    gke = node("g", taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])
    assert [row["node"] for row in select([gke], [], NOW, OPTIONS)["picked"]] == ["g"]
    held = node("a", taints=[sweep.hold_taint("run-1")])
    mine = node("b", taints=[sweep.hold_taint("run-2")])
    assert sweep.stale_holds([held, mine, node("c")], "run-2") == ["a"]
    # The sweep's own hold does not make a node tainted for the choice.
    assert select([held], [], NOW, OPTIONS)["picked"][0]["node"] == "a"


@pytest.mark.parametrize(
    "args, field",
    [((0, 1, 1, "none"), "max_age_hours"), ((1, 0, 1, "none"), "max_nodes"), ((1, 1, 101, "none"), "max_percent"), ((1, 1, 1, "cordon"), "hold")],
)
def test_bad_bounds_are_refused_naming_the_field(args, field):
    with pytest.raises(ConfigError) as raised:
        sweep.check_options(*args)
    assert field in str(raised.value)


NODE_KINDS = st.sampled_from(["never", "fresh", "old", "expired", "busy", "cordoned", "notready", "cpu"])


@settings(max_examples=150, deadline=None)
@given(kinds=st.lists(NODE_KINDS, min_size=0, max_size=30), max_nodes=st.integers(1, 40), max_percent=st.integers(1, 100), age=st.integers(1, 60))
def test_every_stale_gpu_node_is_picked_or_skipped_once_and_the_pick_keeps_the_bounds(kinds, max_nodes, max_percent, age):
    nodes, pods = [], []
    for index, kind in enumerate(kinds):
        name = "n%02d" % index
        hours = {"fresh": 1, "old": 23, "expired": 25 + index, "busy": 30}.get(kind)
        nodes.append(node(name, gpus=0 if kind == "cpu" else 8, marked_hours_ago=hours, cordoned=kind == "cordoned", ready=kind != "notready"))
        if kind == "busy":
            pods.append(pod("job-%d" % index, name))
    chosen = select(nodes, pods, NOW, sweep.check_options(age, max_nodes, max_percent, "none"))
    picked = [row["node"] for row in chosen["picked"]]
    skipped = [row["node"] for row in chosen["skipped"]]
    gpu = [n["metadata"]["name"] for n, kind in zip(nodes, kinds) if kind != "cpu"]
    assert len(picked) <= chosen["limit"] <= max_nodes
    assert chosen["limit"] <= max(1, len(gpu) * max_percent // 100)
    assert not set(picked) & set(skipped)
    assert sorted(picked + skipped + chosen["fresh"]) == sorted(gpu)
    busy = set(n["spec"]["nodeName"] for n in pods)
    assert not set(picked) & busy
    # Stalest first: never-marked nodes, then older marks before newer ones.
    stamps = [(row["marked_at"] is not None, row["marked_at"] or 0) for row in chosen["picked"]]
    assert stamps == sorted(stamps)
    # Nothing left over the limit is staler than something picked.
    waiting = [row["node"] for row in chosen["skipped"] if row["reason"] == "over_limit"]
    assert not waiting or len(picked) == chosen["limit"]


def _checked(**changes):
    import os

    import yaml

    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    with open(os.path.join(root, "roles", "burnin", "defaults", "main.yml")) as fh:
        given = yaml.safe_load(fh)
    given.update(changes)
    return check_role_vars(given)


@pytest.mark.parametrize("stage", ["node", "dcgm", "gpu"])
def test_the_role_plans_a_sweeps_node_stage_on_exactly_the_picked_nodes(stage):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_plan

    cluster = {"detection": {"gpu_nodes": 16}}
    out = role_plan.role_plan(_checked(burnin_sweep_nodes=["n3", "n1"], burnin_sweep_hold="taint"), "aws", "h100", "r1", "burnin", cluster, stage)
    assert out["stage"]["nodes"] == 2
    assert out["objects"][-1]["spec"]["trainer"]["numNodes"] == 2
    runtime = [obj for obj in out["objects"] if obj["kind"] == "TrainingRuntime"][0]
    pinned_jobs = []
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        spec = job["template"]["spec"]["template"]["spec"]
        assert spec["priorityClassName"] == sweep.PRIORITY_CLASS
        # JobSet would label the pod with its negative priority, an invalid label value, unless told to skip it.
        assert job["template"]["spec"]["template"]["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/node-selector"] == "true"
        terms = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
        if any({"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1", "n3"]} in term["matchExpressions"] for term in terms or []):
            assert all({"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1", "n3"]} in term["matchExpressions"] for term in terms)
            pinned_jobs.append(job["name"])
    # The GPU pods only: a launcher pinned beside them would break the one-pod-per-node anti-affinity.
    assert pinned_jobs == ["node"]
    # Without the sweep's nodes the same stage runs on every GPU node, unpinned.
    plain = role_plan.role_plan(_checked(), "aws", "h100", "r1", "burnin", cluster, stage)
    assert plain["stage"]["nodes"] == 16 and "priorityClassName" not in str(plain["objects"])


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"burnin_sweep_stages": ["fleet"]}, "burnin_sweep_stages"),
        ({"burnin_sweep_hold": "cordon"}, "burnin_sweep_hold"),
        ({"burnin_sweep_max_percent": 0}, "burnin_sweep_max_percent"),
        ({"burnin_sweep_nodes": ["Bad_Name"]}, "burnin_sweep_nodes[0]"),
        ({"burnin_sweep_nodes": ["a", "a"]}, "burnin_sweep_nodes"),
        ({"burnin_marks_now": -1}, "burnin_marks_now"),
        ({"burnin_marks_now": "soon"}, "burnin_marks_now"),
    ],
)
def test_the_role_refuses_bad_sweep_variables_naming_them(changes, field):
    with pytest.raises(ConfigError) as raised:
        _checked(**changes)
    assert raised.value.field == field if hasattr(raised.value, "field") else field in str(raised.value)


def test_the_role_takes_a_replacement_clock_for_the_sweep_as_the_expire_playbook_does():
    # playbooks/sweep.yml documents burnin_marks_now; burnin_start once refused it as "not a variable of the role".
    assert _checked(burnin_marks_now=1767225600)["burnin_marks_now"] == 1767225600
    assert _checked(burnin_marks_now="0")["burnin_marks_now"] == 0


def test_the_coverage_validates_against_the_verdict_schema():
    import json
    import os

    import jsonschema
    import referencing

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    with open(os.path.join(root, "docs", "verdict-schema.json")) as fh:
        schema = json.load(fh)
    registry = referencing.Registry().with_resource(schema["$id"], referencing.Resource.from_contents(schema))
    nodes, pods = fleet()
    chosen = select(nodes, pods, NOW, OPTIONS)
    fleet_cover = sweep.fleet_coverage({"aws_h100": coverage(nodes, NOW, chosen, preempted=["never"])})
    for definition, document in (("sweep_coverage", fleet_cover), ("sweep_cluster_coverage", fleet_cover["clusters"]["aws_h100"])):
        validator = jsonschema.Draft202012Validator({"$ref": "%s#/$defs/%s" % (schema["$id"], definition)}, registry=registry)
        assert [error.message for error in validator.iter_errors(document)] == []
    bad = dict(fleet_cover, skipped={"lunch": 1})
    validator = jsonschema.Draft202012Validator({"$ref": "%s#/$defs/sweep_coverage" % schema["$id"]}, registry=registry)
    assert list(validator.iter_errors(bad))


def test_a_node_claiming_a_fresh_mark_in_its_annotations_without_a_record_is_never_verified():
    """A kubelet may write its own annotations and unrestricted labels: a forged fresh pass does not keep the node from
    the sweep, nor count in the coverage; the same mark in the record does."""
    forged = node("forged", marked_hours_ago=1)
    honest = node("honest", marked_hours_ago=1)
    record = recorded([honest])
    chosen = sweep.select([forged, honest], [], NOW, OPTIONS, records=sweep.records_of(record, NOW))
    assert [row["node"] for row in chosen["picked"]] == ["forged"] and chosen["fresh"] == ["honest"]
    cover = sweep.coverage([forged, honest], NOW, chosen, records=sweep.records_of(record, NOW))
    assert cover["verified"] == 1 and cover["never_verified"] == ["forged"]


def test_a_record_from_the_future_is_ignored_by_the_sweep():
    ahead = node("ahead", marked_hours_ago=-1000)  # marked 1000 hours from now
    within = node("within", marked_hours_ago=-0.05)  # 3 minutes ahead: the clocks' skew
    chosen = sweep.select([ahead, within], [], NOW, sweep.check_options(24, 10, 100, "none"), records=sweep.records_of(recorded([ahead, within]), NOW))
    assert [row["node"] for row in chosen["picked"]] == ["ahead"] and chosen["fresh"] == ["within"]


def test_records_of_takes_the_object_a_k8s_info_list_or_nothing():
    record = recorded([node("a", marked_hours_ago=1)])
    assert sorted(sweep.records_of(record, NOW)) == sorted(sweep.records_of([record], NOW)) == ["a"]
    assert sweep.records_of([], NOW) == sweep.records_of(None, NOW) == {}


# What the mutation run of burnin/sweep.py (issue 47) found untested: the stale count beside the bound, preempted
# nodes of the selection and of the run added up, a hold's run id compared by value.


def test_the_stale_count_is_every_stale_gpu_node_whatever_the_bound():
    nodes, pods = fleet()
    # four idle stale nodes (picked or over the limit) and four skipped as busy, cordoned, not ready or tainted
    for max_nodes in (10, 2, 1):
        assert select(nodes, pods, NOW, sweep.check_options(12, max_nodes, 100, "none"))["stale"] == 8, max_nodes


def test_preempted_nodes_of_the_selection_and_of_the_run_add_up():
    selection = {"picked": [], "skipped": [{"node": "a", "reason": "preempted"}, {"node": "b", "reason": "busy"}]}
    got = sweep.coverage([], NOW, selection=selection, preempted=["c", "d", "c"])
    assert got["skipped"] == {"preempted": 3, "busy": 1} and got["preempted"] == ["c", "d"]


def test_a_hold_of_this_run_is_not_stale_whatever_string_object_names_it():
    held = json.loads(json.dumps({"metadata": {"name": "n1"}, "spec": {"taints": [sweep.hold_taint("run-7")]}}))
    assert sweep.stale_holds([held], run_id="".join(["run-", "7"])) == []
    assert sweep.stale_holds([held], run_id="run-8") == ["n1"]


def test_a_busy_node_names_three_of_its_gpu_pods_and_counts_on():
    def detail(count):
        nodes = [node("busy", marked_hours_ago=30)]
        pods = [pod("train-%d" % index, "busy") for index in range(count)]
        (row,) = select(nodes, pods, NOW, OPTIONS)["skipped"]
        return row["detail"]

    assert detail(3) == "GPUs held by team/train-0, team/train-1, team/train-2"
    assert detail(4) == "GPUs held by team/train-0, team/train-1, team/train-2, ..."


def test_the_verified_percent_and_only_a_verified_nodes_time():
    nodes = [node("a", marked_hours_ago=2), node("b", marked_hours_ago=30), node("c")]
    cover = coverage(nodes, NOW, {})
    assert cover["verified_percent"] == 33.3
    assert dict((row["node"], row["verified_at"]) for row in cover["nodes"]) == {"a": nm.iso(NOW - 2 * HOUR), "b": None, "c": None}


def test_the_html_page_counts_the_skipped_nodes_per_cluster_and_fleet():
    nodes, pods = fleet()
    one = coverage(nodes, NOW, select(nodes, pods, NOW, OPTIONS))
    page = sweep.html(sweep.fleet_coverage({"aws_h100": one}))
    assert page.count("<td>busy 1, cordoned 1, not_ready 1, tainted 1</td>") == 2


def test_a_cluster_without_gpu_nodes_takes_none_and_one_with_a_few_at_least_one():
    assert sweep.limit(0, 10, 100) == 0 and sweep.limit(-1, 10, 100) == 0
    assert sweep.limit(1, 10, 1) == 1 and sweep.limit(3, 10, 50) == 1


def test_skipped_nodes_of_one_reason_are_counted_and_added_up_across_clusters():
    nodes = [node("busy-%d" % index, marked_hours_ago=30) for index in range(2)]
    pods = [pod("train-%d" % index, "busy-%d" % index) for index in range(2)]
    one = coverage(nodes, NOW, select(nodes, pods, NOW, OPTIONS))
    assert one["skipped"] == {"busy": 2}
    empty = coverage([], NOW, {})
    fleet_cover = sweep.fleet_coverage({"a": one, "b": dict(one), "c": empty})
    assert fleet_cover["skipped"] == {"busy": 4}
    text = sweep.prometheus(fleet_cover)
    # a cluster without GPU nodes is at 0, and a reason it did not skip for counts 0
    assert 'gpufleet_burnin_nodes_verified_ratio{cluster="c"} 0.0' in text
    assert 'gpufleet_burnin_sweep_nodes_skipped{cluster="a",reason="busy"} 2' in text
    assert 'gpufleet_burnin_sweep_nodes_skipped{cluster="a",reason="cordoned"} 0' in text
    # no verification at all: the fleet row says so
    assert "<td>fleet</td><td>4</td><td>0</td><td>0.0</td><td>-</td>" in sweep.html(fleet_cover)


def test_one_preempted_node_of_each_side_counts_two_and_the_fleets_percent_and_ratio():
    selection = {"picked": [], "skipped": [{"node": "a", "reason": "preempted"}]}
    assert sweep.coverage([], NOW, selection=selection, preempted=["b"])["skipped"] == {"preempted": 2}
    assert coverage([], NOW, {})["verified_percent"] == 0.0
    nodes = [node("a", marked_hours_ago=2), node("b", marked_hours_ago=30), node("c")]
    fleet_cover = sweep.fleet_coverage({"x": coverage(nodes, NOW, {}), "y": coverage([], NOW, {})})
    assert fleet_cover["verified_percent"] == 33.3
    assert sweep.fleet_coverage({"y": coverage([], NOW, {})})["verified_percent"] == 0.0
    text = sweep.prometheus(fleet_cover)
    assert 'gpufleet_burnin_nodes_verified_ratio{cluster="x"} 0.333333' in text
    page = sweep.html(fleet_cover)
    assert "%s" not in page and "<tr><td>x</td><td>3</td><td>1</td><td>33.3</td>" in page and "<td>b, c</td>" not in page and "<td>c</td>" in page


# ------------------------------------------------------------------------ issue 47, third round: i47b's survivors


def test_a_nodes_gpus_are_the_sum_of_its_gpu_resources_a_missing_or_unreadable_one_counting_0():
    assert sweep.gpus_of(node("n", gpus=8)) == 8 and sweep.gpus_of(node("n", gpus=0)) == 0
    amd = {"status": {"capacity": {"amd.com/gpu": "8", "nvidia.com/gpu": "1k"}}}
    assert sweep.gpus_of(amd) == 8 and sweep.gpus_of({"status": {"capacity": {"nvidia.com/gpu": " 4 "}}}) == 4
    assert sweep.gpus_of({}) == 0 and sweep.gpus_of({"status": {"capacity": {"nvidia.com/gpu": "-1"}}}) == 0


@pytest.mark.parametrize(
    "conditions, ready",
    [
        # Read from JSON, as the API server gives them; another condition before Ready (AKS's VMEventScheduled
        # sorts after it, node-problem-detector's KernelDeadlock before) does not decide.
        ([{"type": "VMEventScheduled", "status": "False"}, {"type": "Ready", "status": "True"}], True),
        ([{"type": "KernelDeadlock", "status": "False"}, {"type": "Ready", "status": "True"}], True),
        ([{"type": "VMEventScheduled", "status": "True"}, {"type": "Ready", "status": "False"}], False),
        ([{"type": "Ready", "status": "Unknown"}], False),
        # No Ready condition: not ready.
        ([{"type": "VMEventScheduled", "status": "True"}], False),
        ([], False),
    ],
)
def test_a_node_is_ready_by_its_ready_condition_only(conditions, ready):
    obj = json.loads(json.dumps(dict(node("n", marked_hours_ago=None), status={"capacity": {"nvidia.com/gpu": "8"}, "conditions": conditions})))
    chosen = select([obj], [], NOW, OPTIONS)
    assert ([row["node"] for row in chosen["picked"]] == ["n"]) is ready
    assert ([row["reason"] for row in chosen["skipped"]] == ["not_ready"]) is not ready


def test_a_tolerated_taint_does_not_hide_a_blocking_one_after_it():
    taints = [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        sweep.hold_taint("run-1"),
        {"key": "example.com/maintenance", "effect": "NoExecute"},
    ]
    chosen = select([node("n", taints=taints)], [], NOW, OPTIONS)
    assert chosen["skipped"] == [{"node": "n", "reason": "tainted", "detail": "example.com/maintenance:NoExecute"}]


def test_only_the_preempted_events_of_the_run_name_a_preempted_node():
    def event(reason, victim="sweep-r1-node-0-0-x", message="Preempted by pod 1 on node n1"):
        return {"reason": reason, "involvedObject": {"name": victim}, "message": message}

    # Other reasons (sorting before and after Preempted) naming a node are no preemption.
    for reason in ("Killing", "FailedScheduling", "Pulled", "Scheduled", None):
        assert sweep.preempted_nodes([event(reason, message="Stopping container node on node n1")], picked=["n1"], run_id="r1") == [], reason
    assert sweep.preempted_nodes(json.loads(json.dumps([event("Killing"), event("Preempted")])), picked=["n1"], run_id="r1") == ["n1"]


def test_a_node_with_two_stale_holds_is_released_once_and_other_taints_are_no_hold():
    twice = node("a", taints=[sweep.hold_taint("run-1"), dict(sweep.hold_taint("run-1"), effect="NoExecute")])
    # keys sorting before and after the hold's, of another run's value
    others = node("b", taints=[{"key": "example.com/x", "value": "run-1", "effect": "NoSchedule"}, {"key": "nvidia.com/gpu", "value": "run-1"}])
    assert sweep.stale_holds([twice, others], "run-2") == ["a"]


def _runtime(jobs, tolerations=(), expressions=()):
    def job(name):
        spec = {"tolerations": [dict(t) for t in tolerations]}
        if expressions:
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [dict(e) for e in expressions]}]}
                }
            }
        return {"name": name, "template": {"spec": {"template": {"spec": spec}}}}

    return {"kind": "TrainingRuntime", "spec": {"template": {"spec": {"replicatedJobs": [job(name) for name in jobs]}}}}


def _pod_specs(objects):
    (runtime,) = [obj for obj in objects if obj["kind"] == "TrainingRuntime"]
    return dict((job["name"], job["template"]["spec"]["template"]["spec"]) for job in runtime["spec"]["template"]["spec"]["replicatedJobs"])


def test_only_the_gpu_job_is_pinned_past_other_kinds_and_jobs_sorting_before_and_after_it():
    objects = [{"kind": "ConfigMap", "metadata": {"name": "c"}}, _runtime(["launcher", "node", "workers"]), {"kind": "TrainJob"}]
    specs = _pod_specs(sweep.pinned(objects, ["n1"]))
    assert [name for name, spec in sorted(specs.items()) if "affinity" in spec] == ["node"]
    assert all(spec["priorityClassName"] == sweep.PRIORITY_CLASS for spec in specs.values())


def test_the_pin_replaces_only_the_hostname_expression_and_the_hold_only_the_holds_toleration():
    expressions = [
        {"key": "a.example.com/pool", "operator": "Exists"},
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["old"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]},
    ]
    tolerations = [
        {"key": "a.example.com/pool", "operator": "Exists"},
        {"key": sweep.HOLD_TAINT_KEY, "operator": "Equal", "value": "old"},
        {"key": "nvidia.com/gpu", "operator": "Exists"},
    ]
    spec = _pod_specs(sweep.pinned([_runtime(["node"], tolerations, expressions)], ["n1"], hold=True))["node"]
    (term,) = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [expressions[0], expressions[2], {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]
    assert spec["tolerations"] == [tolerations[0], tolerations[2], {"key": sweep.HOLD_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]


# ------------------------------------------------------------------------------------------------ mutation (issue 47, fifth round)


@pytest.mark.parametrize("verdict", ["warn", "fail", "error"])
def test_a_recent_mark_that_is_no_pass_is_not_stale(verdict):
    # Stale is missing, expired or older than max_age_hours: a node marked warn, fail or error an hour ago is none.
    nodes = [node("a", marked_hours_ago=1, verdict=verdict), node("b", marked_hours_ago=30, verdict=verdict)]
    chosen = select(nodes, [], NOW, OPTIONS)
    assert chosen["fresh"] == ["a"] and [(row["node"], row["why"]) for row in chosen["picked"]] == [("b", "expired")]


@pytest.mark.parametrize("max_percent, ok", [(0, False), (1, True), (100, True), (101, False)])
def test_the_sweeps_percent_at_its_bounds_and_one_past_them(max_percent, ok):
    if ok:
        assert sweep.check_options(1, 1, max_percent, "none")["max_percent"] == max_percent
    else:
        with pytest.raises(ConfigError, match="max_percent"):
            sweep.check_options(1, 1, max_percent, "none")


def test_the_priority_class_value_is_the_documented_one():
    # docs/sweep.md: value -1000, below every default (0)
    assert sweep.PRIORITY_VALUE == -1000 and sweep.priority_class()["value"] == -1000


def test_only_a_preempted_pod_on_a_picked_node_counts():
    preempted = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    pods = [
        {"spec": {"nodeName": "a"}, "status": {"conditions": [preempted]}},  # picked, preempted
        {"spec": {"nodeName": "b"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},  # picked, running
        {"spec": {"nodeName": "c"}, "status": {"conditions": [preempted]}},  # preempted, not the sweep's node
    ]
    assert sweep.preempted_nodes([], pods, ["a", "b"]) == ["a"]


def test_an_earlier_runs_event_does_not_end_the_read_of_this_runs():
    events = [
        {"reason": "Preempted", "message": "Preempted by pod u1 on node a", "involvedObject": {"name": "nccl-burnin-r1-node-node-0-0-x"}},
        {"reason": "Preempted", "message": "Preempted by pod u2 on node b", "involvedObject": {"name": "nccl-burnin-r2-node-node-0-0-y"}},
    ]
    assert sweep.preempted_nodes(events, [], ["a", "b"], run_id="r2") == ["b"]


@pytest.mark.parametrize("length, found", [(1024, ["node-1"]), (1025, [])])
def test_an_events_message_is_read_in_its_first_1024_characters(length, found):
    tail = " on node node-1"
    message = "x" * (length - len(tail)) + tail
    assert len(message) == length
    assert sweep.preempted_nodes([{"reason": "Preempted", "message": message}], [], ["node-1"]) == found


def test_the_ratio_lines_are_given_to_six_decimals():
    two = coverage([node("x", marked_hours_ago=3), node("y"), node("z")], NOW, {})
    lines = sweep.prometheus(sweep.fleet_coverage({"c1": two})).splitlines()
    assert 'gpufleet_burnin_nodes_verified_ratio{cluster="c1"} 0.333333' in lines
    assert 'gpufleet_burnin_nodes_verified_ratio{cluster=""} 0.333333' in lines


def test_the_page_shows_a_dash_for_no_picked_node_and_the_names_else():
    cover = sweep.fleet_coverage({"c1": coverage([node("x")], NOW, {"picked": ["x", "y"]}), "c2": coverage([node("z", marked_hours_ago=1)], NOW, {})})
    page = sweep.html(cover)
    assert "<td>x, y</td>" in page
    row = [part for part in page.split("<tr>") if part.startswith("<td>c2</td>")][0]
    assert row.count("<td>-</td>") >= 3  # never verified, picked, preempted


def test_by_default_the_pinned_pods_do_not_tolerate_the_hold_taint():
    spec = _pod_specs(sweep.pinned([_runtime(["node"], [], [])], ["n1"]))["node"]
    assert not [t for t in spec.get("tolerations") or [] if t.get("key") == sweep.HOLD_TAINT_KEY]


def test_the_page_shows_the_oldest_verification_and_the_preempted_nodes_else_a_dash():
    cover = sweep.fleet_coverage({"c1": coverage([node("x")], NOW, {}, preempted=["x"]), "c2": coverage([node("z", marked_hours_ago=1)], NOW, {})})
    rows = dict((part.split("</td>")[0][len("<td>") :], part) for part in sweep.html(cover).split("<tr>") if part.startswith("<td>"))

    def cells(cluster):
        return rows[cluster].split("</tr>")[0][len("<td>") : -len("</td>")].split("</td><td>")

    # cluster, GPU nodes, verified, verified %, oldest verification, never verified, picked, preempted, skipped
    assert cells("c1")[4:8] == ["-", "x", "-", "x"] and cells("c2")[4:8] == [nm.iso(NOW - HOUR), "-", "-", "-"]


def test_a_fleet_without_gpu_nodes_has_a_ratio_of_0():
    assert 'gpufleet_burnin_nodes_verified_ratio{cluster=""} 0.0' in sweep.prometheus(sweep.fleet_coverage({})).splitlines()


def test_a_hold_of_any_other_run_is_stale_whichever_sorts_first():
    nodes = [node("a", taints=[sweep.hold_taint("run-1")]), node("b", taints=[sweep.hold_taint("run-2")]), node("c", taints=[sweep.hold_taint("run-3")])]
    assert sweep.stale_holds(nodes, "run-2") == ["a", "c"]


def test_only_the_training_runtime_is_pinned_whatever_the_other_kinds_sort():
    other = {"kind": "Workload", "spec": {"podSets": []}}  # sorts after TrainingRuntime
    out = sweep.pinned([_runtime(["node"], [], []), other], ["n1"], hold=True)
    assert out[1] == other and "affinity" in _pod_specs(out)["node"]


def test_the_hold_toleration_read_back_from_json_is_replaced_not_doubled():
    tolerations = json.loads(json.dumps([{"key": sweep.HOLD_TAINT_KEY, "operator": "Equal", "value": "old"}]))
    spec = _pod_specs(sweep.pinned(json.loads(json.dumps([_runtime(["node"], tolerations, [])])), ["n1"], hold=True))["node"]
    assert spec["tolerations"] == [{"key": sweep.HOLD_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]


@pytest.mark.parametrize("seconds_ago, stale", [(24 * HOUR, True), (24 * HOUR - 1, False)])
def test_a_mark_exactly_max_age_hours_old_is_stale_and_a_second_younger_is_not(seconds_ago, stale):
    # marks of 48 hours: not expired, only old
    chosen = select([node("a", marked_hours_ago=seconds_ago / float(HOUR), ttl=48)], [], NOW, sweep.check_options(24, 10, 100, "none"))
    assert [(row["node"], row["why"]) for row in chosen["picked"]] == ([("a", "stale")] if stale else [])
    assert chosen["fresh"] == ([] if stale else ["a"])


def test_a_node_with_one_gpu_is_a_gpu_node_of_the_sweep_and_of_its_coverage():
    nodes = [node("eight"), node("one", gpus=1), node("none", gpus=0)]
    chosen = select(nodes, [], NOW, OPTIONS)
    assert chosen["gpu_nodes"] == 2 and [row["node"] for row in chosen["picked"]] == ["eight", "one"]
    cover = coverage(nodes, NOW, chosen)
    assert cover["gpu_nodes"] == 2 and cover["never_verified"] == ["eight", "one"]


@pytest.mark.parametrize("gpu_nodes, max_percent, expected", [(99, 2, 1), (100, 2, 2), (149, 2, 2), (150, 2, 3), (199, 1, 1), (200, 1, 2)])
def test_the_percent_of_the_gpu_nodes_is_rounded_down(gpu_nodes, max_percent, expected):
    # docs/sweep.md, burnin_sweep_max_percent: that percentage of the GPU nodes, rounded down (at least one)
    assert sweep.limit(gpu_nodes, 100000, max_percent) == expected


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_a_busy_node_names_its_gpu_pods_and_adds_dots_only_past_three(count):
    nodes = [node("busy", marked_hours_ago=30)]
    pods = [pod("train-%d" % index, "busy") for index in range(count)]
    (row,) = select(nodes, pods, NOW, OPTIONS)["skipped"]
    names = ", ".join("team/train-%d" % index for index in range(min(count, 3)))
    assert row["detail"] == "GPUs held by " + names + (", ..." if count > 3 else "")


def test_the_sweeps_own_pods_read_from_json_do_not_make_a_node_busy():
    # the pods as the API server returns them: their priority class a new string, not the module's constant
    pods = json.loads(json.dumps([pod("sweep-0", "a", priority_class=sweep.PRIORITY_CLASS), pod("train", "b", priority_class="high")]))
    chosen = select([node("a"), node("b")], pods, NOW, OPTIONS)
    assert [row["node"] for row in chosen["picked"]] == ["a"] and [(row["node"], row["reason"]) for row in chosen["skipped"]] == [("b", "busy")]


def test_only_an_expired_mark_is_listed_expired_and_only_a_verified_node_has_a_verification_time():
    # every state of a mark: verified, warn, fail and error (unexpired), expired, unmarked; error sorts before expired,
    # warn after verified
    nodes = [
        node("a-pass", marked_hours_ago=2),
        node("b-warn", marked_hours_ago=2, verdict="warn"),
        node("c-fail", marked_hours_ago=2, verdict="fail"),
        node("d-error", marked_hours_ago=2, verdict="error"),
        node("e-expired", marked_hours_ago=30),
        node("f-never"),
    ]
    cover = coverage(nodes, NOW, {})
    assert [row["state"] for row in cover["nodes"]] == ["verified", "warn", "fail", "error", "expired", "unmarked"]
    assert cover["expired"] == ["e-expired"] and cover["never_verified"] == ["f-never"]
    assert [row["node"] for row in cover["nodes"] if row["verified_at"] is not None] == ["a-pass"]
