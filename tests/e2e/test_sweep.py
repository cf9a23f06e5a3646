# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The sweep (playbooks/sweep.yml, docs/sweep.md) on a fleet of its own: one AWS H100 cluster of six KWOK GPU nodes
and its real kube-apiserver and kube-scheduler, the nodes set up as a fleet finds them between burn-ins:

- sweep-gpu-0 verified an hour ago (fresh), sweep-gpu-1 marked 30 h ago (expired), sweep-gpu-2 marked 20 h ago with a
  48 h mark (stale for burnin_sweep_max_age_hours=12), sweep-gpu-3 never marked, sweep-gpu-4 cordoned, sweep-gpu-5
  busy (a workload pod holds its 8 GPUs); sweep-gpu-0 also carries the hold taint of a sweep cancelled earlier.

The first sweep (at most 2 nodes, hold taint) picks exactly sweep-gpu-3 and sweep-gpu-1 (stalest first), runs the
node stage's pods only there under the collection's PriorityClass, renews their marks, releases every hold (its own and
the cancelled one) and reports the coverage (JSON, HTML, Prometheus). The second sweep (1 node, no hold, its pods kept
running) picks sweep-gpu-2; a workload pod arriving there is bound by the real kube-scheduler after it preempts the
sweep's pod, and the sweep records sweep-gpu-2 as preempted, not failed, its mark left as it was.

GPUFLEET_SWEEP_FLEET_DIR reuses a fleet started by hand with the SPEC below (left running).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import threading
import time
from pathlib import Path

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import sweep
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_marks as nm
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import node_records
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import remediation as rem
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report
from conftest import ansible_playbook

REPO = Path(__file__).resolve().parent.parent.parent
SWEEP = REPO / "playbooks" / "sweep.yml"
CLUSTER = "sweep"
NAMESPACE = "sweep-e2e"
SPEC = {
    "restricted_namespace": "burnin-restricted",
    "clusters": [
        {
            "name": CLUSTER,
            "platform": "aws",
            "gpu_architecture": "h100",
            "kubernetes_version": "1.37",
            "nodes": 6,
            "node_naming": "indexed",
            "trainjob_outcome": "Complete",
        }
    ],
}
HOUR = 3600
N = ["%s-gpu-%d" % (CLUSTER, index) for index in range(6)]


@pytest.fixture(scope="module")
def sweep_fleet(own_fleet):
    return own_fleet("sweep", SPEC, "GPUFLEET_SWEEP_FLEET_DIR")


def core(state):
    from kubernetes import client, config

    return client.CoreV1Api(config.new_client_from_config(config_file=state["kubeconfig"], context=CLUSTER))


def mark(api, name, hours_ago, ttl_hours):
    """The collection's own marks (node_marks.plan_mark) as a run HOURS_AGO would have left them."""
    node = api.read_node(name).to_dict()
    obj = {"metadata": {"name": name, "labels": node["metadata"]["labels"] or {}, "annotations": node["metadata"]["annotations"] or {}}, "spec": {}}
    at = int(time.time()) - int(hours_ago * HOUR)
    entry = report.cluster_node_entries(CLUSTER, {"node_verdicts": {name: {"verdict": "pass", "reasons": [], "stages": ["node"]}}})[0]
    options = rem.check_options(False, "gpufleet.burnin/verified", "none", None)
    options.update(nm.check_options(True, ttl_hours, False))
    state = nm.plan_mark(rem.node_state(obj), entry, "old-%d" % at, at, options)
    api.patch_node(name, {"metadata": {"labels": state["labels"], "annotations": state["annotations"]}})
    # And in the record, which the sweep reads (cluster/node_records.py), as the remediation writes it.
    from kubernetes.client.rest import ApiException

    try:
        api.create_namespace({"metadata": {"name": NAMESPACE}})
    except ApiException as exc:
        if exc.status != 409:
            raise
    record = {
        "records": dict((key, state["annotations"][key]) for key in node_records.RECORD_KEYS if key in state["annotations"]),
        "run_id": "old-%d" % at,
        "at": at,
    }
    patch = {"data": {name: node_records.entry_text(record)}}
    try:
        api.patch_namespaced_config_map(node_records.RECORD_NAME, NAMESPACE, patch)
    except ApiException as exc:
        if exc.status != 404:
            raise
        api.create_namespaced_config_map(NAMESPACE, node_records.configmap(NAMESPACE, patch))


def workload_pod(name, node):
    """A team's pod holding all 8 GPUs of NODE, at the default priority (0)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [{"name": "train", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "8"}}}],
        },
    }


def wait_for(what, check, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        found = check()
        if found:
            return found
        time.sleep(1)
    raise AssertionError("timed out waiting for %s" % what)


def run_sweep(state, work, run_id, *options, check=True):
    return ansible_playbook(
        SWEEP,
        "-i",
        state["inventory"],
        "--limit",
        CLUSTER,
        "-e",
        "burnin_run_id=%s" % run_id,
        "-e",
        "burnin_namespace=%s" % NAMESPACE,
        "-e",
        "burnin_report_dir=%s" % (work / "reports"),
        "-e",
        "burnin_metrics_dir=%s" % (work / "metrics"),
        "-e",
        "burnin_poll_interval=1",
        "-e",
        "burnin_timeout=180",
        "-e",
        "burnin_sweep_max_age_hours=12",
        "-e",
        json.dumps({"burnin_sweep_stages": ["node"]}),
        *options,
        check=check,
    )


@pytest.fixture(scope="module")
def first(sweep_fleet):
    state, work = sweep_fleet
    api = core(state)
    mark(api, N[0], 1, 24)
    mark(api, N[1], 30, 24)
    mark(api, N[2], 20, 48)
    api.patch_node(N[4], {"spec": {"unschedulable": True}})
    api.patch_node(N[0], {"spec": {"taints": [sweep.hold_taint("cancelled-run")]}})
    api.create_namespaced_pod("default", workload_pod("team-train", N[5]))
    wait_for("the team's pod on %s" % N[5], lambda: api.read_namespaced_pod("team-train", "default").status.phase == "Running")
    marks_before = dict((name, (api.read_node(name).metadata.labels or {}).get(nm.RUN_LABEL)) for name in N)
    # Where the sweep's pods ran (its TrainJobs and their pods are gone at its end): a look every second meanwhile.
    seen, done = {}, threading.Event()

    def look():
        while not done.is_set():
            for p in api.list_namespaced_pod(NAMESPACE).items:
                if p.spec.node_name:
                    seen[p.metadata.name] = (
                        p.spec.node_name,
                        (p.metadata.labels or {}).get("jobset.sigs.k8s.io/replicatedjob-name"),
                        p.spec.priority_class_name,
                    )
            done.wait(1)

    looker = threading.Thread(target=look)
    looker.start()
    try:
        # Both bounds: 2 nodes, and 50 % of 6 GPU nodes (3).
        proc = run_sweep(state, work, "sweep-1", "-e", "burnin_sweep_max_nodes=2", "-e", "burnin_sweep_max_percent=50", "-e", "burnin_sweep_hold=taint")
    finally:
        done.set()
        looker.join(30)
    pods = api.list_namespaced_pod(NAMESPACE).items
    return dict(state=state, work=work, api=api, proc=proc, pods=pods, marks_before=marks_before, seen=seen)


def test_the_sweep_picks_exactly_the_idle_stale_nodes_stalest_first_within_the_bound(first):
    results = json.loads((first["work"] / "reports" / "sweep-1" / "summary.json").read_text())
    swept = results[CLUSTER]["sweep"]
    assert swept["picked"] == [N[3], N[1]], first["proc"].stdout[-3000:]
    assert swept["limit"] == 2
    reasons = dict((row["node"], row["reason"]) for row in swept["skipped"])
    assert reasons == {N[2]: "over_limit", N[4]: "cordoned", N[5]: "busy"}
    assert "default/team-train" in [row for row in swept["skipped"] if row["node"] == N[5]][0]["detail"]


def test_the_node_stage_ran_only_on_the_picked_nodes_under_the_sweeps_priority_class(first):
    results = json.loads((first["work"] / "reports" / "sweep-1" / "summary.json").read_text())
    # The node stage judges each pod by the node it ran on (spec.nodeName).
    assert sorted(results[CLUSTER]["node_verdicts"]) == sorted([N[1], N[3]]), first["proc"].stdout[-3000:]
    from kubernetes import client, dynamic

    runtimes = (
        dynamic.DynamicClient(first["api"].api_client)
        .resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainingRuntime")
        .get(namespace=NAMESPACE)
        .to_dict()["items"]
    )

    # The node stage's runtime (the sweep removes TrainJobs, not the entry's shared runtime).
    def pinned_spec(one):
        return [job for job in one["spec"]["template"]["spec"]["replicatedJobs"] if job["name"] == "node"]

    runtime = [one for one in runtimes if pinned_spec(one)]
    assert runtime, [one["metadata"]["name"] for one in runtimes]
    runtime = runtime[0]
    jobs = dict((job["name"], job["template"]["spec"]["template"]["spec"]) for job in runtime["spec"]["template"]["spec"]["replicatedJobs"])
    assert set(spec["priorityClassName"] for spec in jobs.values()) == {sweep.PRIORITY_CLASS}
    terms = jobs["node"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert all({"key": "kubernetes.io/hostname", "operator": "In", "values": sorted([N[1], N[3]])} in t["matchExpressions"] for t in terms)
    owned = client.SchedulingV1Api(first["api"].api_client).read_priority_class(sweep.PRIORITY_CLASS)
    assert owned.value < 0 and owned.preemption_policy == "Never" and not owned.global_default
    # The sweep removed its TrainJobs at its end.
    assert not [
        p for p in first["pods"] if (p.metadata.labels or {}).get("jobset.sigs.k8s.io/replicatedjob-name") == "node" and not p.metadata.deletion_timestamp
    ]


def test_two_picked_nodes_run_the_pairs_on_exactly_them_and_the_report_holds_their_verdict(first):
    """The issue's "pairs when two or more are picked": the isolation's pair TrainJob, pinned to the two picked nodes,
    under the sweep's PriorityClass; its verdict is a stage of the cluster's result and each node's finding."""
    results = json.loads((first["work"] / "reports" / "sweep-1" / "summary.json").read_text())[CLUSTER]
    stages = dict((one["stage"], one) for one in results["stages"])
    assert sorted(stages) == ["isolation", "node"], first["proc"].stdout[-3000:]
    assert stages["isolation"]["verdict"] == "pass", stages["isolation"]
    (round_one,) = results["isolation"]["rounds"]
    assert round_one["pairs"] == [[N[1], N[3]]] and [r["verdict"] for r in round_one["results"]] == ["pass"]
    (pair_job,) = round_one["trainjobs"]
    # The pair's GPU pods ran on the two picked nodes and nowhere else, under the sweep's PriorityClass.
    pair_pods = [seen for name, seen in first["seen"].items() if name.startswith(pair_job + "-")]
    assert sorted(seen[0] for seen in pair_pods if seen[1] == "node") == [N[1], N[3]], first["seen"]
    assert set(seen[2] for seen in pair_pods) == {sweep.PRIORITY_CLASS}
    found = [(f["node"], f["verdict"]) for f in results["node_findings"] if f["stage"] == "isolation"]
    assert sorted(found) == [(N[1], "pass"), (N[3], "pass")]


def test_the_picked_nodes_marks_are_renewed_and_the_others_left_alone(first):
    api = first["api"]
    runs = dict((name, (api.read_node(name).metadata.labels or {}).get(nm.RUN_LABEL)) for name in N)
    assert runs[N[1]] == runs[N[3]] == "sweep-1", first["proc"].stdout[-3000:]
    for name in (N[0], N[2], N[4], N[5]):
        assert runs[name] == first["marks_before"][name], name
    assert (api.read_node(N[3]).metadata.labels or {}).get(nm.RESULT_LABEL) == "pass"


def test_every_hold_is_released_the_sweeps_own_and_a_cancelled_ones(first):
    for name in N:
        taints = first["api"].read_node(name).spec.taints or []
        assert not [taint for taint in taints if taint.key == sweep.HOLD_TAINT_KEY], (name, taints)
    assert "Release the holds an earlier sweep left" in first["proc"].stdout


def test_the_coverage_is_reported_per_cluster_and_fleet_wide_in_json_html_and_prometheus(first):
    run_dir = first["work"] / "reports" / "sweep-1"
    coverage = json.loads((run_dir / "coverage.json").read_text())
    one = coverage["clusters"][CLUSTER]
    # Verified within their expiry after the sweep: sweep-gpu-0 (1 h), sweep-gpu-2 (20 h of 48), and the two swept.
    assert (one["gpu_nodes"], one["verified"], one["verified_percent"]) == (6, 4, 66.7)
    assert one["never_verified"] == [N[4], N[5]]
    assert one["skipped"] == {"busy": 1, "cordoned": 1, "over_limit": 1}
    assert one["oldest_verified_at"] is not None and coverage["verified"] == 4 and coverage["gpu_nodes"] == 6
    prom = (run_dir / "coverage.prom").read_text()
    assert 'gpufleet_burnin_nodes_verified_ratio{cluster="sweep"} 0.666667' in prom
    assert 'gpufleet_burnin_nodes_verified_ratio{cluster=""} 0.666667' in prom
    assert prom.count("gpufleet_burnin_node_verified_timestamp_seconds{") == 4
    assert (first["work"] / "metrics" / "gpufleet_burnin_sweep.prom").read_text() == prom
    html = (run_dir / "coverage.html").read_text()
    assert "<td>sweep</td>" in html and "66.7" in html


def test_a_workload_arriving_on_a_swept_node_preempts_the_sweeps_pod(first):
    state, work, api = first["state"], first["work"], first["api"]
    mark_before = (api.read_node(N[2]).metadata.labels or {}).get(nm.RUN_LABEL)
    out = {}
    # The sweep's pods run 900 s (the stand-in agent's delay), its stage would wait 400 s: the workload arrives
    # meanwhile, and the preemption ends the wait (the preempted pod's replacement cannot start on the node).
    thread = threading.Thread(
        target=lambda: out.update(
            proc=run_sweep(
                state,
                work,
                "sweep-2",
                "-e",
                "burnin_sweep_max_nodes=1",
                "-e",
                "burnin_timeout=400",
                "-e",
                json.dumps({"burnin_trainjob_annotations": {"gpufleet.test/delay-seconds": "900"}}),
                "-e",
                "burnin_fail_on_error=false",
                check=False,
            )
        )
    )
    thread.start()
    try:

        def sweep_pod_running():
            pods = api.list_namespaced_pod(NAMESPACE).items
            return [p for p in pods if p.spec.node_name == N[2] and p.status.phase == "Running" and p.spec.priority_class_name == sweep.PRIORITY_CLASS]

        victims = wait_for("the sweep's pod running on %s" % N[2], sweep_pod_running, timeout=180)
        arrived = time.time()
        api.create_namespaced_pod("default", workload_pod("team-arrives", N[2]))
        # The real kube-scheduler preempts the sweep's pod (priority -1000) and binds the workload (priority 0).
        wait_for("the workload bound to %s" % N[2], lambda: api.read_namespaced_pod("team-arrives", "default").spec.node_name == N[2])
        events = api.list_namespaced_event(NAMESPACE, field_selector="reason=Preempted").items
        assert [e for e in events if e.involved_object.name == victims[0].metadata.name], [(e.involved_object.name, e.message) for e in events]
    finally:
        thread.join(timeout=600)
    ended = time.time()
    proc = out["proc"]
    results = json.loads((work / "reports" / "sweep-2" / "summary.json").read_text())
    swept = results[CLUSTER]["sweep"]
    assert swept["picked"] == [N[2]], proc.stdout[-3000:]
    assert swept["coverage"]["preempted"] == [N[2]] and swept["coverage"]["skipped"].get("preempted") == 1, proc.stdout[-3000:]
    # The preemption ended the node stage's wait: not its 400 s timeout.
    (node_stage,) = [one for one in results[CLUSTER]["stages"] if one["stage"] == "node"]
    assert node_stage["attempts"][-1]["outcome"] == "Preempted", node_stage
    assert "the scheduler preempted pod" in json.dumps(node_stage), node_stage
    assert ended - arrived < 200, ended - arrived
    # One picked node: no pair.
    assert [one["stage"] for one in results[CLUSTER]["stages"]] == ["node"] and "isolation" not in results[CLUSTER]
    # Preempted, not failed: no fail mark, no quarantine; the node keeps its old mark and is stale for the next sweep.
    labels = api.read_node(N[2]).metadata.labels or {}
    assert labels.get(nm.RUN_LABEL) == mark_before and labels.get(nm.RESULT_LABEL) == "pass"
    assert api.read_namespaced_pod("team-arrives", "default").status.phase == "Running"


def test_the_awx_schedule_runs_the_sweep_job_template_as_awx_runs_it(first):
    """examples/awx: the schedule names the sweep's job template and fires every 4 hours; the template's playbook runs
    through ansible-runner (AWX's job engine) with the template's extra vars and reverifies the node the preemption
    left stale, now that the workload left it."""
    import shutil

    import ansible_runner
    import yaml
    from dateutil.rrule import rrulestr

    awx = REPO / "examples" / "awx"
    template = json.loads((awx / "sweep-job-template.json").read_text())
    schedule = json.loads((awx / "sweep-schedule.json").read_text())
    assert schedule["unified_job_template"] == template["name"] and template["playbook"] == "sweep.yml"
    rule = rrulestr(schedule["rrule"].replace(" RRULE:", "\nRRULE:"))
    a, b = rule[0], rule[1]
    assert (b - a).total_seconds() == 4 * HOUR

    state, work, api = first["state"], first["work"], first["api"]
    for name in ("team-arrives",):
        try:
            api.delete_namespaced_pod(name, "default", grace_period_seconds=0)
        except Exception:  # noqa: BLE001 - absent when the preemption test did not run
            pass
    wait_for("the workload gone", lambda: not [p for p in api.list_namespaced_pod("default").items if p.metadata.name == "team-arrives"])
    # The earlier sweep removed its TrainJobs; their pods go with the garbage collector.
    wait_for("the earlier sweeps' pods gone", lambda: not api.list_namespaced_pod(NAMESPACE).items, timeout=180)
    pdd = work / "awx"
    (pdd / "project").mkdir(parents=True)
    (pdd / "inventory").mkdir()
    (pdd / "env").mkdir()
    shutil.copy(str(awx / "project" / "sweep.yml"), str(pdd / "project" / "sweep.yml"))
    shutil.copy(state["inventory"], str(pdd / "inventory" / "hosts.yml"))
    extra = dict(
        template["extra_vars"],
        burnin_poll_interval=1,
        burnin_timeout=120,
        burnin_sweep_max_nodes=1,
        burnin_sweep_max_age_hours=12,
        burnin_sweep_stages=["node"],
        burnin_run_id="sweep-awx",
        burnin_namespace=NAMESPACE,
    )
    (pdd / "env" / "extravars").write_text(yaml.safe_dump(extra))
    runner = ansible_runner.run(
        private_data_dir=str(pdd),
        ident="sweep",
        playbook="sweep.yml",
        limit=CLUSTER,
        quiet=True,
        settings={"suppress_ansible_output": True, "job_timeout": 600},
    )
    stdout = (pdd / "artifacts" / "sweep" / "stdout").read_text()
    assert runner.status == "successful", stdout[-5000:]
    stats = [e for e in runner.events if e.get("event") == "playbook_on_stats"][0]["event_data"]
    swept = stats["artifact_data"]["burnin_results"][CLUSTER]["sweep"]
    assert swept["picked"] == [N[2]] and swept["coverage"]["preempted"] == [], stdout[-3000:]
    assert (api.read_node(N[2]).metadata.labels or {}).get(nm.RUN_LABEL) == "sweep-awx"
    assert swept["coverage"]["verified"] == 4


def test_the_hold_is_released_when_the_swept_nodes_stage_fails(first):
    """burnin_sweep_hold: taint on a sweep whose node stage fails (the stand-in's pods exit 1): the hold was on the
    node while the stage ran, and is gone after the failed sweep (the role's always)."""
    state, work, api = first["state"], first["work"], first["api"]
    # sweep-gpu-0's mark expired (30 h old, 24 h valid): the one stale idle node now.
    mark(api, N[0], 30, 24)
    held, done = set(), threading.Event()

    def look():
        while not done.is_set():
            for node in api.list_node().items:
                if [t for t in node.spec.taints or [] if t.key == sweep.HOLD_TAINT_KEY and t.value == "sweep-3"]:
                    held.add(node.metadata.name)
            done.wait(1)

    looker = threading.Thread(target=look)
    looker.start()
    try:
        proc = run_sweep(
            state,
            work,
            "sweep-3",
            "-e",
            "burnin_sweep_max_nodes=1",
            "-e",
            "burnin_sweep_hold=taint",
            "-e",
            json.dumps({"burnin_trainjob_annotations": {"gpufleet.test/outcome": "Failed"}}),
            check=False,
        )
    finally:
        done.set()
        looker.join(30)
    summary = work / "reports" / "sweep-3" / "summary.json"
    assert summary.exists(), proc.stdout[-5000:]
    results = json.loads(summary.read_text())[CLUSTER]
    assert results["sweep"]["picked"] == [N[0]], proc.stdout[-3000:]
    assert proc.returncode != 0 and [one["verdict"] for one in results["stages"]] == ["fail"], proc.stdout[-3000:]
    assert held == {N[0]}, held
    for name in N:
        assert not [t for t in api.read_node(name).spec.taints or [] if t.key == sweep.HOLD_TAINT_KEY], name
