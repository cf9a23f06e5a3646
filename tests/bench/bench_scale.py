# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark, not a test: the role's whole burn-in (plan, apply, wait, logs, verdict, reports) of N inventory hosts
spread over a few test-fleet API servers, at several forks: wall time, controller CPU and memory, API requests per
cluster and the reports' write time.

    source scripts/env.sh && python tests/bench/bench_scale.py [--fleet-dir DIR] [--sizes 50 100 200] [--forks 10 50]
                                                               [--clusters 5] [--nodes N] [--job-seconds 10]
                                                               [--stages fleet]
                                                               [--rounds 1] [--timeout 1800] [--json PATH]
                                                               [--render-hosts 500] [--keep-namespaces] [--keep-work]

    issue 26's targets:  python tests/bench/bench_scale.py --sizes 200 --forks 50 --job-seconds 10
    issue 42's targets:  python tests/bench/bench_scale.py --sizes 50 200 --forks 10 --job-seconds 10

1. starts a fleet of --clusters clusters (aws/h100, gcp/h100, azure/h100: pods that schedule on the fleet's nodes),
   each with --nodes KWOK GPU nodes (default: 2 per host of the largest size, burnin_nodes=2, so no job queues),
   unless --fleet-dir names a running one (its first --clusters clusters in name order; they must schedule the
   role's pods, see bench_whole_run.py's note on gcp/gb200); the output says when the GPU nodes are too few for
   every host's job at once, i.e. when jobs queue and the wall time includes waiting for nodes;
2. on each cluster, makes the bench's own identity: ServiceAccount gpufleet-bench/ansible bound to cluster-admin,
   a token for it (TokenRequest) and a FlowSchema matching only it, served by the mandatory `exempt` priority level
   (no throttling, as the fleet's admin user); Ansible runs with a kubeconfig holding those tokens;
3. per size N and forks F (and round): an inventory of N hosts, host i on cluster i mod --clusters (round robin),
   each its own `burnin_namespace`; runs playbooks/burnin.yml with `burnin_stages` = --stages (default: the fleet
   stage alone; reports JSON, JUnit and HTML; TrainJobs annotated `gpufleet.test/delay-seconds` = --job-seconds) and
   checks every host's outcome; then deletes the namespaces.

Stages: the fleet stage's TrainJob takes burnin_nodes (2) nodes, so many hosts share a cluster's nodes as many
clusters would their own. A node or dcgm stage takes one pod on *every* GPU node of the cluster, as it does on a real
cluster: hosts sharing a cluster would queue their node stages behind each other, which no real fleet does (one
host per cluster). Measure the stages' cost with one host per cluster (--sizes equal to --clusters) against the
fleet stage alone at the same size; the bench refuses node-wide stages with more hosts than clusters.

Measured per run:
- wall: ansible-playbook from start to exit;
- CPU: user+sys of ansible-playbook and every descendant (workers, module processes), the delta of this process's
  resource.getrusage(RUSAGE_CHILDREN) around the run (ansible-playbook is the only child waited for meanwhile);
- peak RSS: the max over samples every 0.2 s of the sum of VmRSS (/proc/PID/status) over ansible-playbook and its
  descendants; pages the forked workers share with the main process count once per process, so this overstates the
  memory actually used. Also printed: the peak PSS sum (/proc/PID/smaps_rollup, every 1 s: shared pages split
  between their processes, what the tree really holds), the main process's own peak RSS and the most processes;
- API requests per cluster, from each kube-apiserver's /metrics (admin token) before and after the run:
  `apiserver_flowcontrol_dispatched_requests_total{flow_schema="gpufleet-bench-ansible"}` counts the requests of
  Ansible alone (the bench's ServiceAccount); `apiserver_request_total` summed by verb counts every client's (the
  cluster's controllers, KWOK, the fleet's agent, the scrape itself), for scale;
- the fleet's side, for the role's run and the floor's: the machine's busy CPU seconds (every process, /proc/stat;
  on this machine the fleet and the controller share two cores, so a run that keeps both busy takes its CPU / 2) and
  the API servers' time by request kind (apiserver_request_duration_seconds, watches left out), the ten longest;
- reports: the wall time of the role's task "Write the fleet's reports" (a callback times every task; the slowest
  tasks are printed), and the time of writer.py's write_reports on the run's summary.json, rerun here afterwards;
- task evaluations per host: every task queued for a host, skipped and includes too (tests/bench/task_count.py,
  counted from the run), median and max over the hosts;
- baseline: then, on the same inventory at the same forks, a playbook of as many empty set_fact tasks per host as
  the role evaluated (the median of the count above), its wall time and the role's multiple of it: what Ansible
  itself costs for a play of that many tasks, and how that cost grows with the hosts;
- the floor (unless --no-floor): after each of the role's runs, tests/bench/floor_client.py over as many hosts
  (new namespaces, the manifests playbooks/render.yml writes for them): one process, a thread per host, applying,
  watching each TrainJob to its end and reading its pods' logs; its wall and CPU seconds and requests per host;
- rendering (--render-hosts, 0 to skip; first, before the fleet starts): tests/bench/bench_render.py's render of
  that many hosts against its empty set_fact floor.

Targets (issue 26; each host is one cluster to the role): controller CPU <= 2 s per host, wall <= 400 s at 200 hosts
and forks 50, PSS <= 1.5 GiB at forks 50, task evaluations <= 26 per host with the default stages (node fleet
isolation; the bench's default is the fleet stage alone, see below), rendering 500 hosts <= 1.5x the set_fact floor.
Also printed: wall(largest)/wall(smallest) at equal forks (issue 15's target: wall(200)/wall(50) <= 4.5x) beside the
baseline's own, Ansible's requests per cluster per host. Compare --job-seconds 10 and 30 to see whether the requests
depend on the job's duration (trainjob_wait reads at once, then after 1, 2, 4, ... s up to burnin_poll_interval).
"""

import argparse
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

import bench_render
import floor_client
import task_count
from bench_role_apply import FLEET, REPO, log, run
from bench_whole_run import AZURE_VARS, DEFAULT_STAGES, DELAY, TASKS_TARGET

sys.path.insert(0, str(REPO / "tests" / "fleet"))
from fleet_procs import Rest  # noqa: E402

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.stages import NODE_STAGE_WORKLOADS, STAGES  # noqa: E402

# Clusters whose pods schedule on the fleet's nodes (bench_whole_run.py's note: not gcp/gb200).
CLUSTERS = [
    {"name": "scale-aws-h100-a", "platform": "aws", "gpu_architecture": "h100"},
    {"name": "scale-gcp-h100-a", "platform": "gcp", "gpu_architecture": "h100"},
    {"name": "scale-azure-h100-a", "platform": "azure", "gpu_architecture": "h100"},
    {"name": "scale-aws-h100-b", "platform": "aws", "gpu_architecture": "h100"},
    {"name": "scale-gcp-h100-b", "platform": "gcp", "gpu_architecture": "h100"},
    {"name": "scale-azure-h100-b", "platform": "azure", "gpu_architecture": "h100"},
]
NODES_PER_JOB = 2  # the role's default burnin_nodes
BENCH_NS = "gpufleet-bench"
BENCH_SA = "ansible"
FLOW_SCHEMA = "gpufleet-bench-ansible"
REPORT_TASK = "Write the fleet's reports (verdict per cluster and workload)"
SAMPLE_SECONDS = 0.2
# roles/burnin/tasks/summary.yml's tasks, run once for the whole play: what grows with the fleet on the controller.
SUMMARY_TASKS = ["Gather the fleet's results", "Write summary.json", REPORT_TASK, "Fleet summary"]
FAKE_NODES = "gpufleet.test/fake-node%3Dtrue"  # the fleet's KWOK nodes (fleet_nodes.py), URL-encoded
PSS_EVERY = 5  # PSS (smaps_rollup) every 5th sample: the kernel walks each process's page tables for it
# Issue 26's targets.
CPU_PER_HOST_TARGET = 2.0  # controller CPU seconds per host (one cluster each)
WALL_TARGET = (200, 50, 400.0)  # hosts, forks, wall seconds
PSS_TARGET_GIB = 1.5  # peak PSS sum at forks 50
# Issue 42's targets (fleet stage, TrainJobs of 10 s, forks 10).
FLOOR_WALL_TARGET = (200, 10, 1.3)  # hosts, forks, wall <= 1.3x the floor client's over the same hosts
PSS_TARGET_42_GIB = 1.0
CPU_PER_HOST_TARGET_42 = 1.0
REQUESTS_PER_HOST_TARGET_42 = 12
GROWTH_TARGET_42 = 1.2  # wall(200)/wall(50) at forks 10 <= 1.2x the floor's own ratio

# Wall time of every task, by name (from its start to its last host's result), summed over the play.
CALLBACK = """
import json, os, time
from ansible.plugins.callback import CallbackBase

class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_task_timer"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.tasks, self.current, self.start, self.end = {}, None, None, None

    def _close(self):
        if self.current is not None:
            self.tasks[self.current] = self.tasks.get(self.current, 0.0) + (self.end or time.monotonic()) - self.start

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close()
        self.current, self.start, self.end = task.get_name(), time.monotonic(), None

    v2_playbook_on_handler_task_start = v2_playbook_on_task_start

    def _result(self, result, *args, **kwargs):
        self.end = time.monotonic()

    v2_runner_on_ok = v2_runner_on_failed = v2_runner_on_skipped = v2_runner_on_unreachable = _result

    def v2_playbook_on_stats(self, stats):
        self._close()
        self.current = None
        with open(os.environ["BENCH_TASK_TIMER"], "w") as handle:
            json.dump(self.tasks, handle)
"""


# ------------------------------------------------------------------------------------------- the fleet


def start_fleet(count, nodes, work):
    spec = {"clusters": [dict(c, nodes=nodes, trainjob_outcome="Complete") for c in CLUSTERS[:count]]}
    path = work / "scale-fleet.yml"
    path.write_text(yaml.safe_dump(spec))
    fleet_dir = work / "fleet"  # fleet.py start stops what it started when it fails
    log("starting a fleet of %d clusters with %d GPU nodes each in %s" % (count, nodes, fleet_dir))
    run([sys.executable, str(FLEET), "start", "--spec", str(path), "--dir", str(fleet_dir)])
    return fleet_dir


def admin(state, name):
    c = state["clusters"][name]
    return Rest(c["server"], c["admin_token"], state["ca_file"])


def bench_identity(state, clusters, work):
    """The bench's ServiceAccount, its cluster-admin binding and FlowSchema on every cluster; returns a kubeconfig
    with one context per cluster (context = cluster name) holding the ServiceAccount's token."""
    kubeconfig = yaml.safe_load(Path(state["kubeconfig"]).read_text())
    users = dict((u["name"], u) for u in kubeconfig["users"])
    contexts = dict((c["name"], c) for c in kubeconfig["contexts"])
    for name in clusters:
        rest = admin(state, name)
        rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": BENCH_NS}})
        rest.create("/api/v1/namespaces/%s/serviceaccounts" % BENCH_NS, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": BENCH_SA}})
        rest.create(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": FLOW_SCHEMA},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                "subjects": [{"kind": "ServiceAccount", "name": BENCH_SA, "namespace": BENCH_NS}],
            },
        )
        rest.create(
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
            {
                "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
                "kind": "FlowSchema",
                "metadata": {"name": FLOW_SCHEMA},
                "spec": {
                    "matchingPrecedence": 2,
                    "priorityLevelConfiguration": {"name": "exempt"},
                    "rules": [
                        {
                            "subjects": [{"kind": "ServiceAccount", "serviceAccount": {"name": BENCH_SA, "namespace": BENCH_NS}}],
                            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True, "namespaces": ["*"]}],
                            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                        }
                    ],
                },
            },
        )
        token = rest.must(
            "POST",
            "/api/v1/namespaces/%s/serviceaccounts/%s/token" % (BENCH_NS, BENCH_SA),
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 86400}},
        )["status"]["token"]
        # The API server's FlowSchema controller picks the new schema up within a moment: wait until it counts.
        before = ansible_requests(rest)
        deadline = time.monotonic() + 30
        while True:
            Rest(state["clusters"][name]["server"], token, state["ca_file"]).must("GET", "/version")
            if ansible_requests(rest) > before:
                break
            if time.monotonic() > deadline:
                sys.exit("[bench] %s: FlowSchema %s never counted the bench's requests" % (name, FLOW_SCHEMA))
            time.sleep(0.5)
        users[contexts[name]["context"]["user"]]["user"] = {"token": token}
    path = work / "bench.kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    os.chmod(path, 0o600)
    return str(path)


def gpu_nodes(rest):
    """The cluster's KWOK nodes that offer GPUs (the fleet's system node offers none)."""
    items = rest.must("GET", "/api/v1/nodes?labelSelector=%s" % FAKE_NODES)["items"]
    return len([n for n in items if int(n.get("status", {}).get("capacity", {}).get("nvidia.com/gpu", "0")) > 0])


def scrape(rest):
    status, text = rest.request("GET", "/metrics", timeout=60)
    if status != 200 or not isinstance(text, str):
        sys.exit("[bench] GET /metrics: HTTP %s" % status)
    return text


def ansible_requests(rest, text=None):
    text = text if text is not None else scrape(rest)
    match = re.search(r'^apiserver_flowcontrol_dispatched_requests_total\{flow_schema="%s",priority_level="exempt"\} (\S+)$' % FLOW_SCHEMA, text, re.M)
    return float(match.group(1)) if match else 0.0


def counters(rest):
    """(Ansible's requests, {verb: every client's requests}) as the API server counts them now."""
    text = scrape(rest)
    by_verb = {}
    for match in re.finditer(r"^apiserver_request_total\{([^}]*)\} (\S+)$", text, re.M):
        verb = re.search(r'verb="([^"]*)"', match.group(1)).group(1)
        by_verb[verb] = by_verb.get(verb, 0.0) + float(match.group(2))
    return ansible_requests(rest, text), by_verb


# apiserver_request_duration_seconds' sum and count per request kind; watches (and CONNECT) are left out: their
# duration is how long they stayed open, not what they cost.
DURATION = re.compile(r"^apiserver_request_duration_seconds_(sum|count)\{([^}]*)\} (\S+)$", re.M)
LABEL = re.compile(r'(\w+)="([^"]*)"')


def served(rests):
    """{"VERB resource[/subresource]": [requests, seconds]} the API servers RESTS answered so far, summed over them."""
    kinds = {}
    for rest in rests:
        for match in DURATION.finditer(scrape(rest)):
            labels = dict(LABEL.findall(match.group(2)))
            if labels.get("verb") in ("WATCH", "WATCHLIST", "CONNECT"):
                continue
            kind = "%s %s%s" % (labels.get("verb"), labels.get("resource"), "/" + labels["subresource"] if labels.get("subresource") else "")
            kinds.setdefault(kind, [0.0, 0.0])[0 if match.group(1) == "count" else 1] += float(match.group(3))
    return kinds


def served_delta(before, after, top=10):
    """The TOP request kinds by the API servers' time between two `served` readings: [kind, requests, seconds]."""
    rows = [(kind, n - before.get(kind, [0, 0])[0], s - before.get(kind, [0, 0])[1]) for kind, (n, s) in after.items()]
    return [[kind, int(n), round(s, 2)] for kind, n, s in sorted(rows, key=lambda row: -row[2])[:top] if n]


def machine_busy():
    """The machine's CPU seconds not idle so far, every process's (/proc/stat): the fleet's share shows against the
    controller's own CPU."""
    fields = [float(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def delete_namespaces(state, clusters, namespaces_by_cluster, timeout=300):
    """Delete the run's namespaces and wait until they are gone, so the next run starts on idle clusters."""
    for name in clusters:
        rest = admin(state, name)
        for ns in namespaces_by_cluster.get(name, []):
            rest.request("DELETE", "/api/v1/namespaces/%s" % ns)
    deadline = time.monotonic() + timeout
    for name in clusters:
        rest = admin(state, name)
        for ns in namespaces_by_cluster.get(name, []):
            while rest.request("GET", "/api/v1/namespaces/%s" % ns)[0] != 404:
                if time.monotonic() > deadline:
                    log("namespace %s on %s still there after %d s; going on" % (ns, name, timeout))
                    return
                time.sleep(1)


# -------------------------------------------------------------------------------------- the controller


def descendants(root):
    """PIDs of root and all its descendants, from /proc/*/stat."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(children.get(pid, []))
    return pids


def vm_rss(pid):
    try:
        with open("/proc/%d/status" % pid) as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def pss(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class RssSampler(threading.Thread):
    """Samples the VmRSS sum of a process tree every SAMPLE_SECONDS (and its PSS sum every PSS_EVERY samples); keeps
    the maxima, the root's own max RSS and the most processes seen at once."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.peak_pss, self.peak_main, self.peak_procs, self.samples = pid, 0, 0, 0, 0, 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            pids = descendants(self.pid)
            sizes = [vm_rss(pid) for pid in pids]
            self.peak = max(self.peak, sum(sizes))
            self.peak_main = max(self.peak_main, sizes[0])
            self.peak_procs = max(self.peak_procs, len([s for s in sizes if s]))
            if self.samples % PSS_EVERY == 0:
                self.peak_pss = max(self.peak_pss, sum(pss(pid) for pid in pids))
            self.samples += 1
            self.done.wait(SAMPLE_SECONDS)


def cpu_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def write_inventory(path, state, clusters, size, kubeconfig, tag):
    """N hosts, host i on cluster i mod len(clusters), each its own namespace; returns {cluster: [namespaces]}."""
    groups, namespaces = {}, {}
    for index in range(size):
        cluster = clusters[index % len(clusters)]
        c = state["clusters"][cluster]
        host = "h%03d-%s" % (index, cluster)
        namespace = "bs-%s-%03d" % (tag, index)
        hostvars = {"burnin_kubeconfig": kubeconfig, "burnin_context": c["context"], "burnin_namespace": namespace}
        if c["platform"] == "azure":
            hostvars.update(AZURE_VARS)
        group = groups.setdefault(
            "%s_%s" % (c["platform"], c["gpu_architecture"]),
            {"vars": {"burnin_platform": c["platform"], "burnin_gpu_architecture": c["gpu_architecture"]}, "hosts": {}},
        )
        group["hosts"][host] = hostvars
        namespaces.setdefault(cluster, []).append(namespace)
    common = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
    path.write_text(yaml.safe_dump({"all": {"vars": common, "children": groups}}))
    return namespaces


def time_reports(summary, work):
    """writer.py's write_reports on the run's summary.json, as the role's burnin_report task calls it."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import writer

    out = Path(tempfile.mkdtemp(prefix="reports-", dir=str(work)))
    started = time.monotonic()
    writer.write_reports(summary, str(out), formats=["json", "junit", "html"], run_id="bench", title="GPU burn-in bench")
    elapsed = time.monotonic() - started
    size = sum(p.stat().st_size for p in out.iterdir())
    shutil.rmtree(str(out), ignore_errors=True)
    return elapsed, size


RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)\s+rescued=(\d+)", re.M)


def tasks_per_host(output):
    """The tasks a host ran or skipped (each one a worker forked for it), from the play recap of OUTPUT: the median
    over the hosts, as the run_once tasks count only on the first."""
    counts = sorted(sum(int(n) for n in match.groups()[1:]) for match in RECAP.finditer(output))
    return counts[len(counts) // 2] if counts else 0


def baseline_run(inventory, forks, tasks, work, env):
    """Wall and CPU seconds of TASKS empty ``set_fact`` tasks per host over INVENTORY at FORKS: what Ansible itself
    costs for as many tasks, the floor the role's run is compared with (as tests/bench/bench_render.py does)."""
    playbook = work / ("baseline-%d.yml" % tasks)
    if not playbook.exists():
        body = [{"name": "Empty set_fact %d" % i, "ansible.builtin.set_fact": {"bench_baseline": "{{ inventory_hostname }}"}} for i in range(tasks)]
        playbook.write_text(yaml.safe_dump([{"name": "Baseline", "hosts": "all", "gather_facts": False, "tasks": body}]))
    cpu_before = cpu_children()
    started = time.monotonic()
    subprocess.run(
        ["ansible-playbook", "-i", str(inventory), str(playbook), "--forks", str(forks)],
        cwd=str(work),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.monotonic() - started, cpu_children() - cpu_before


def floor_run(args, state, clusters, kubeconfig, size, work, env):
    """The floor (tests/bench/floor_client.py) over SIZE hosts as the role's run has them (each its own namespace,
    round robin over the clusters): the manifests playbooks/render.yml writes for each, applied, watched to their end
    and their logs read by one process, a thread per host. Wall and CPU seconds, requests per host."""
    tag = "f%d%d" % (size, int(time.time()) % 100000)
    inventory = work / ("hosts-%s.yml" % tag)
    namespaces = write_inventory(inventory, state, clusters, size, kubeconfig, tag)
    rendered = work / ("rendered-%s" % tag)
    extra = {"burnin_run_id": "scale-%s" % tag, "burnin_render_dir": str(rendered), "burnin_trainjob_annotations": {DELAY: str(args.job_seconds)}}
    subprocess.run(
        ["ansible-playbook", "-i", str(inventory), str(REPO / "playbooks" / "render.yml"), "--forks", "10", "-e", json.dumps(extra)],
        cwd=str(REPO),
        env=dict((k, v) for k, v in env.items() if not k.startswith("ANSIBLE_CALLBACK")),
        stdout=subprocess.DEVNULL,
        check=True,
    )
    hosts = yaml.safe_load(inventory.read_text())["all"]["children"]
    jobs = [
        {"name": host, "kubeconfig": kubeconfig, "context": hostvars["burnin_context"], "manifests": str(rendered / host / "manifests.yaml")}
        for group in hosts.values()
        for host, hostvars in group["hosts"].items()
    ]
    rests = dict((name, admin(state, name)) for name in clusters)
    before = dict((name, ansible_requests(rest)) for name, rest in rests.items())
    served_before, busy_before = served(rests.values()), machine_busy()
    wall, cpu, dummy = floor_client.floor(jobs, args.timeout, work)
    busy = machine_busy() - busy_before
    requests = sum(ansible_requests(rest) - before[name] for name, rest in rests.items())
    kinds = served_delta(served_before, served(rests.values()))
    if not args.keep_namespaces:
        delete_namespaces(state, clusters, namespaces)
    return {
        "floor_wall_seconds": round(wall, 2),
        "floor_cpu_seconds": round(cpu, 2),
        "floor_requests_per_host": round(requests / float(size), 1),
        "floor_machine_busy_seconds": round(busy, 1),
        "floor_served": kinds,
    }


def one_run(args, state, clusters, kubeconfig, size, forks, round_index, work, env):
    tag = "%d%02d%d%d" % (size, forks % 100, round_index, int(time.time()) % 1000)
    run_id = "scale-%s" % tag
    inventory = work / ("hosts-%s.yml" % tag)
    namespaces = write_inventory(inventory, state, clusters, size, kubeconfig, tag)
    reports = work / "reports"
    timer = work / ("tasks-%s.json" % tag)
    counted = work / ("count-%s.json" % tag)
    extra = {
        "burnin_stages": args.stages,
        "burnin_run_id": run_id,
        "burnin_report_dir": str(reports),
        "burnin_report_formats": ["json", "junit", "html"],
        "burnin_trainjob_annotations": {DELAY: str(args.job_seconds)},
        "burnin_timeout": args.timeout,
    }
    command = ["ansible-playbook", "-i", str(inventory), str(REPO / "playbooks" / "burnin.yml"), "--forks", str(forks), "-e", json.dumps(extra)]
    rests = dict((name, admin(state, name)) for name in clusters)
    before = dict((name, counters(rest)) for name, rest in rests.items())
    served_before, busy_before = served(rests.values()), machine_busy()
    cpu_before = cpu_children()
    started = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=str(REPO),
        env=task_count.enable(dict(env, BENCH_TASK_TIMER=str(timer)), work / "callback_plugins", counted),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
    )
    sampler = RssSampler(proc.pid)
    sampler.start()
    output = proc.communicate()[0]
    wall = time.monotonic() - started
    sampler.done.set()
    sampler.join()
    cpu = cpu_children() - cpu_before
    busy = machine_busy() - busy_before
    after = dict((name, counters(rest)) for name, rest in rests.items())
    kinds = served_delta(served_before, served(rests.values()))
    (work / ("ansible-%s.log" % tag)).write_text(output)

    summary_path = reports / run_id / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    outcomes = {}
    for result in summary.values():
        outcomes[result.get("outcome")] = outcomes.get(result.get("outcome"), 0) + 1
    if proc.returncode != 0 or outcomes != {"Complete": size}:
        log("the role did not complete every host (rc %d, outcomes %s); log: %s" % (proc.returncode, outcomes, work / ("ansible-%s.log" % tag)))
        log(output[-3000:])
    tasks = json.loads(timer.read_text()) if timer.exists() else {}
    # Task names carry the role's prefix ("gpufleet.burnin.burnin : ...").
    report_task = next((round(v, 3) for k, v in tasks.items() if k.endswith(REPORT_TASK)), None)
    summary_tasks = dict((k.split(" : ", 1)[-1], round(v, 3)) for k, v in tasks.items() if k.split(" : ", 1)[-1] in SUMMARY_TASKS)
    report_seconds, report_bytes = time_reports(summary, work) if summary else (None, None)
    requests = {}
    for name in clusters:
        verbs = dict((verb, int(after[name][1].get(verb, 0) - before[name][1].get(verb, 0))) for verb in after[name][1])
        requests[name] = {
            "hosts": len(namespaces.get(name, [])),
            "ansible": int(after[name][0] - before[name][0]),
            "all_clients": sum(verbs.values()),
            "all_clients_by_verb": dict((v, n) for v, n in sorted(verbs.items()) if n),
        }
    if not args.keep_namespaces:
        delete_namespaces(state, clusters, namespaces)
    evaluations = task_count.summarize(task_count.read(counted))
    # The baseline runs as many empty tasks per host as the role evaluated (the play recap's count if none was written).
    tasks_run = int(round(evaluations["median"])) if evaluations["hosts"] else tasks_per_host(output)
    baseline_env = dict((k, v) for k, v in env.items() if not k.startswith("ANSIBLE_CALLBACK"))
    baseline_wall, baseline_cpu = baseline_run(inventory, forks, tasks_run, work, baseline_env) if tasks_run else (None, None)
    return {
        "size": size,
        "forks": forks,
        "round": round_index + 1,
        "job_seconds": args.job_seconds,
        "stages": args.stages,
        "run_id": run_id,
        "returncode": proc.returncode,
        "outcomes": outcomes,
        "wall_seconds": round(wall, 2),
        "tasks_per_host": tasks_run,
        "task_evaluations": evaluations,
        "baseline_wall_seconds": round(baseline_wall, 2) if baseline_wall is not None else None,
        "baseline_cpu_seconds": round(baseline_cpu, 2) if baseline_cpu is not None else None,
        "cpu_seconds": round(cpu, 2),
        "cpu_seconds_per_host": round(cpu / size, 3),
        "machine_busy_seconds": round(busy, 1),
        "served": kinds,
        "peak_rss_bytes": sampler.peak,
        "peak_pss_bytes": sampler.peak_pss,
        "peak_rss_main_bytes": sampler.peak_main,
        "peak_processes": sampler.peak_procs,
        "rss_samples": sampler.samples,
        "requests": requests,
        "report_task_seconds": report_task,
        "write_reports_seconds": round(report_seconds, 3) if report_seconds is not None else None,
        "report_bytes": report_bytes,
        "summary_tasks": summary_tasks,
        "slowest_tasks": dict(sorted(((k, round(v, 2)) for k, v in tasks.items()), key=lambda kv: -kv[1])[:8]),
    }


# ----------------------------------------------------------------------------------------------- output


def mib(n):
    return n / 1048576.0


def print_results(results, capacity):
    print("\nwhole burn-in at scale: %s" % capacity)
    print(
        "%6s %5s %5s %8s %7s %8s %6s %6s %8s %7s %9s %9s %9s %6s %10s %10s %8s %8s  %s"
        % (
            "hosts",
            "forks",
            "round",
            "wall s",
            "cpu s",
            "cpu/host",
            "tasks",
            "t max",
            "base s",
            "x base",
            "RSS MiB",
            "PSS MiB",
            "main MiB",
            "procs",
            "ans req/cl",
            "all req/cl",
            "rep task",
            "rep py",
            "outcomes",
        )
    )
    for r in results:
        per_cluster = list(r["requests"].values())
        ansible = sum(c["ansible"] for c in per_cluster) / float(len(per_cluster))
        everyone = sum(c["all_clients"] for c in per_cluster) / float(len(per_cluster))
        print(
            "%6d %5d %5d %8.1f %7.1f %8.2f %6d %6s %8s %7s %9.0f %9.0f %9.0f %6d %10.0f %10.0f %8s %8s  %s"
            % (
                r["size"],
                r["forks"],
                r["round"],
                r["wall_seconds"],
                r["cpu_seconds"],
                r["cpu_seconds_per_host"],
                r["tasks_per_host"],
                r["task_evaluations"]["max"] if r["task_evaluations"]["hosts"] else "-",
                "%.1f" % r["baseline_wall_seconds"] if r["baseline_wall_seconds"] else "-",
                "%.2f" % (r["wall_seconds"] / r["baseline_wall_seconds"]) if r["baseline_wall_seconds"] else "-",
                mib(r["peak_rss_bytes"]),
                mib(r["peak_pss_bytes"]),
                mib(r["peak_rss_main_bytes"]),
                r["peak_processes"],
                ansible,
                everyone,
                "%.2f" % r["report_task_seconds"] if r["report_task_seconds"] is not None else "-",
                "%.2f" % r["write_reports_seconds"] if r["write_reports_seconds"] is not None else "-",
                ", ".join("%s %d" % kv for kv in sorted(r["outcomes"].items(), key=str)),
            )
        )
    print("\nAPI requests per cluster and run (Ansible's: FlowSchema %s; all clients': apiserver_request_total by verb)" % FLOW_SCHEMA)
    for r in results:
        for name, c in sorted(r["requests"].items()):
            print(
                "  %4d hosts forks %2d round %d  %-20s %3d hosts: Ansible %5d (%.1f per host), all clients %6d %s"
                % (
                    r["size"],
                    r["forks"],
                    r["round"],
                    name,
                    c["hosts"],
                    c["ansible"],
                    c["ansible"] / float(max(c["hosts"], 1)),
                    c["all_clients"],
                    json.dumps(c["all_clients_by_verb"], sort_keys=True),
                )
            )
    print("\nthe fleet's side: the machine's busy CPU s (every process) and the API servers' time by request kind (no watches)")
    for r in results:
        for who, busy, kinds in (
            ("role", r.get("machine_busy_seconds"), r.get("served")),
            ("floor", r.get("floor_machine_busy_seconds"), r.get("floor_served")),
        ):
            if busy is not None:
                print(
                    "  %4d hosts forks %2d round %d %-5s: busy %.1f s; %s"
                    % (r["size"], r["forks"], r["round"], who, busy, "; ".join("%s %d %.1f s" % tuple(k) for k in kinds or []))
                )
    print("\nslowest tasks (wall time from the task's start to its last result, s)")
    for r in results:
        print(
            "  %4d hosts forks %2d round %d: %s"
            % (r["size"], r["forks"], r["round"], "; ".join("%s %.1f" % (k.split(" : ", 1)[-1], v) for k, v in r["slowest_tasks"].items()))
        )
    print("\nsummary.yml's once-per-play tasks (s)")
    for r in results:
        print("  %4d hosts forks %2d round %d: %s" % (r["size"], r["forks"], r["round"], "; ".join("%s %.2f" % kv for kv in r["summary_tasks"].items())))
    print("\ntask evaluations (tests/bench/task_count.py)")
    for r in results:
        default = sorted(r["stages"]) == sorted(DEFAULT_STAGES)
        print(
            "  %4d hosts forks %2d round %d: %s"
            % (r["size"], r["forks"], r["round"], task_count.describe(r["task_evaluations"], target=TASKS_TARGET if default else None))
        )


def targets(results, render_rows, out=print):
    """Issue 26's targets against the runs: CPU per host, wall at 200 hosts and forks 50, PSS at forks 50, task
    evaluations with the default stages, rendering 500 hosts."""

    def mark(ok):
        return "ok" if ok else "MISSED"

    out("\ntargets (issue 26)")
    for r in results:
        tag = "%d hosts, forks %d, round %d" % (r["size"], r["forks"], r["round"])
        out(
            "  controller CPU per host (one cluster each), %s: %.2f s (target <= %.1f s) %s"
            % (tag, r["cpu_seconds_per_host"], CPU_PER_HOST_TARGET, mark(r["cpu_seconds_per_host"] <= CPU_PER_HOST_TARGET))
        )
        if (r["size"], r["forks"]) == WALL_TARGET[:2]:
            out("  wall, %s: %.1f s (target <= %.0f s) %s" % (tag, r["wall_seconds"], WALL_TARGET[2], mark(r["wall_seconds"] <= WALL_TARGET[2])))
        if r["forks"] == 50:
            gib = mib(r["peak_pss_bytes"]) / 1024
            out("  peak PSS sum, %s: %.2f GiB (target <= %.1f GiB at forks 50) %s" % (tag, gib, PSS_TARGET_GIB, mark(gib <= PSS_TARGET_GIB)))
        if sorted(r["stages"]) == sorted(DEFAULT_STAGES) and r["task_evaluations"]["hosts"]:
            most = r["task_evaluations"]["max"]
            out("  task evaluations per host, default stages, %s: max %d (target <= %d) %s" % (tag, most, TASKS_TARGET, mark(most <= TASKS_TARGET)))
    if not any((r["size"], r["forks"]) == WALL_TARGET[:2] for r in results):
        out("  wall at %d hosts and forks %d: not measured (--sizes %d --forks %d)" % (WALL_TARGET[0], WALL_TARGET[1], WALL_TARGET[0], WALL_TARGET[1]))
    if results and not any(sorted(r["stages"]) == sorted(DEFAULT_STAGES) for r in results):
        out(
            "  task evaluations per host with the default stages: not measured here (--stages %s); bench_whole_run.py counts them"
            % " ".join(results[0]["stages"])
        )
    for row in render_rows:
        if row[0] == 500:
            out("  render 500 hosts / set_fact floor: %.2fx (target <= %.1fx) %s" % (row[3], bench_render.TARGET, mark(row[3] <= bench_render.TARGET)))


def targets_42(results, out=print):
    """Issue 42's targets against the runs: wall against the floor client's over the same hosts, PSS, CPU and API
    requests per cluster (host) at forks 10, and the growth from 50 to 200 hosts against the floor's own."""

    def mark(ok):
        return "ok" if ok else "MISSED"

    out("\ntargets (issue 42; fleet stage, TrainJobs of 10 s, forks 10)")
    by = {}
    for r in results:
        if r["forks"] != FLOOR_WALL_TARGET[1]:
            continue
        by.setdefault(r["size"], []).append(r)
        tag = "%d hosts, forks %d, round %d" % (r["size"], r["forks"], r["round"])
        if r.get("floor_wall_seconds"):
            ratio = r["wall_seconds"] / r["floor_wall_seconds"]
            target = " (target <= %.1fx at %d hosts) %s" % (FLOOR_WALL_TARGET[2], FLOOR_WALL_TARGET[0], mark(ratio <= FLOOR_WALL_TARGET[2]))
            out(
                "  wall role / floor client, %s: %.1f s / %.1f s = %.2fx%s; floor CPU %.1f s, %.1f requests per host"
                % (
                    tag,
                    r["wall_seconds"],
                    r["floor_wall_seconds"],
                    ratio,
                    target if r["size"] == FLOOR_WALL_TARGET[0] else "",
                    r["floor_cpu_seconds"],
                    r["floor_requests_per_host"],
                )
            )
        gib = mib(r["peak_pss_bytes"]) / 1024
        out("  peak PSS sum, %s: %.2f GiB (target <= %.1f GiB) %s" % (tag, gib, PSS_TARGET_42_GIB, mark(gib <= PSS_TARGET_42_GIB)))
        out(
            "  controller CPU per cluster, %s: %.2f s (target <= %.1f s) %s"
            % (tag, r["cpu_seconds_per_host"], CPU_PER_HOST_TARGET_42, mark(r["cpu_seconds_per_host"] <= CPU_PER_HOST_TARGET_42))
        )
        per_host = [c["ansible"] / float(c["hosts"]) for c in r["requests"].values() if c["hosts"]]
        if per_host:
            requests = sum(per_host) / len(per_host)
            out(
                "  API requests per cluster and stage, %s: %.1f (target <= %d) %s"
                % (tag, requests, REQUESTS_PER_HOST_TARGET_42, mark(requests <= REQUESTS_PER_HOST_TARGET_42))
            )
    if 50 in by and 200 in by:
        role = min(r["wall_seconds"] for r in by[200]) / min(r["wall_seconds"] for r in by[50])
        floors = [min(r.get("floor_wall_seconds") or 0 for r in by[size]) for size in (50, 200)]
        if all(floors):
            floor = floors[1] / floors[0]
            out(
                "  growth wall(200)/wall(50) at forks 10: role %.2fx, floor %.2fx: %.2fx the floor's (target <= %.1fx) %s"
                % (role, floor, role / floor, GROWTH_TARGET_42, mark(role / floor <= GROWTH_TARGET_42))
            )
    elif not by:
        out("  not measured: needs --forks 10 (and --sizes 50 200 for the growth)")


def ratios(results):
    """wall(largest)/wall(smallest) per forks, peak RSS at the largest forks, Ansible's requests per host."""
    out = {"wall_ratio": {}, "baseline_wall_ratio": {}, "peak_rss_gib": {}, "peak_pss_gib": {}, "ansible_requests_per_host": {}}
    by = {}
    for r in results:
        by.setdefault((r["forks"], r["size"]), []).append(r)
    for forks in sorted(set(f for f, _s in by)):
        sizes = sorted(s for f, s in by if f == forks)
        walls = dict((s, min(r["wall_seconds"] for r in by[(forks, s)])) for s in sizes)
        if len(sizes) > 1:
            key = "forks %d: wall(%d)/wall(%d)" % (forks, sizes[-1], sizes[0])
            out["wall_ratio"][key] = round(walls[sizes[-1]] / walls[sizes[0]], 2)
            bases = dict((s, min(r["baseline_wall_seconds"] or 0 for r in by[(forks, s)])) for s in sizes)
            if bases[sizes[0]] and bases[sizes[-1]]:
                out["baseline_wall_ratio"][key] = round(bases[sizes[-1]] / bases[sizes[0]], 2)
        for s in sizes:
            out["peak_rss_gib"]["%d hosts, forks %d" % (s, forks)] = round(max(mib(r["peak_rss_bytes"]) for r in by[(forks, s)]) / 1024, 3)
            out["peak_pss_gib"]["%d hosts, forks %d" % (s, forks)] = round(max(mib(r["peak_pss_bytes"]) for r in by[(forks, s)]) / 1024, 3)
            per_host = [c["ansible"] / float(c["hosts"]) for r in by[(forks, s)] for c in r["requests"].values() if c["hosts"]]
            out["ansible_requests_per_host"]["%d hosts, forks %d" % (s, forks)] = round(sum(per_host) / len(per_host), 1)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fleet-dir", help="a running fleet (tests/fleet/fleet.py start); default: start one")
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200], help="inventory hosts (default 50 100 200)")
    parser.add_argument("--forks", type=int, nargs="+", default=[10, 50], help="Ansible forks (default 10 50)")
    parser.add_argument("--clusters", type=int, default=5, help="API servers the hosts are spread over (default 5)")
    parser.add_argument(
        "--nodes",
        type=int,
        help="GPU nodes per cluster when starting the fleet (default: %d per host " "of the largest size, so every job runs at once)" % NODES_PER_JOB,
    )
    parser.add_argument("--job-seconds", type=int, default=10, help="how long each TrainJob runs (default 10)")
    parser.add_argument("--stages", nargs="+", default=["fleet"], choices=STAGES, help="burnin_stages (default: fleet)")
    parser.add_argument("--timeout", type=int, default=1800, help="burnin_timeout (default 1800)")
    parser.add_argument("--rounds", type=int, default=1, help="runs per size and forks (default 1)")
    parser.add_argument("--json", help="write the results to this file as JSON")
    parser.add_argument(
        "--render-hosts", type=int, default=500, help="first, bench_render.py's render of this many hosts against its set_fact floor (default 500; 0: skip)"
    )
    parser.add_argument("--keep-namespaces", action="store_true", help="leave each run's namespaces on the clusters")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor client's run after each of the role's (tests/bench/floor_client.py)")
    parser.add_argument("--keep-work", action="store_true", help="keep the work dir (inventories, Ansible's output, reports)")
    args = parser.parse_args()
    if not shutil.which("ansible-playbook"):
        sys.exit("[bench] ansible-playbook is not on PATH: source scripts/env.sh first")
    if args.clusters > len(CLUSTERS):
        sys.exit("[bench] at most %d clusters" % len(CLUSTERS))
    node_wide = sorted(set(args.stages) & set(NODE_STAGE_WORKLOADS))
    if node_wide and max(args.sizes) > args.clusters:
        sys.exit(
            "[bench] stages %s run on every GPU node of a cluster: with more hosts (%d) than clusters (%d) their jobs queue "
            "behind each other, which no real fleet does; use --sizes %d (see the docstring)"
            % (", ".join(node_wide), max(args.sizes), args.clusters, args.clusters)
        )

    # Before the fleet starts, so its processes do not share the 2 cores with the render.
    render_rows = []
    if args.render_hosts:
        log("rendering %d hosts against the set_fact floor (tests/bench/bench_render.py)" % args.render_hosts)
        render_rows = bench_render.measure([args.render_hosts])

    work = Path(tempfile.mkdtemp(prefix="gpufleet-scale-"))
    own_fleet = not args.fleet_dir
    hosts_per_cluster = int(math.ceil(max(args.sizes) / float(args.clusters)))
    fleet_dir = None
    try:
        fleet_dir = Path(args.fleet_dir) if args.fleet_dir else start_fleet(args.clusters, args.nodes or NODES_PER_JOB * hosts_per_cluster, work)
        state = json.loads((fleet_dir / "state.json").read_text())
        clusters = sorted(state["clusters"])[: args.clusters]
        if len(clusters) < args.clusters:
            sys.exit("[bench] the fleet has %d clusters, --clusters asks for %d" % (len(clusters), args.clusters))
        nodes = min(gpu_nodes(admin(state, name)) for name in clusters)
        slots = nodes // NODES_PER_JOB
        capacity = "%d clusters, %d GPU nodes each: %d jobs of %d nodes at once per cluster; largest size puts %d hosts on a cluster%s" % (
            len(clusters),
            nodes,
            slots,
            NODES_PER_JOB,
            hosts_per_cluster,
            "" if slots >= hosts_per_cluster else " - JOBS QUEUE for nodes, the wall time includes waiting for capacity",
        )
        capacity += "; burnin_stages %s" % json.dumps(args.stages)
        log(capacity)
        kubeconfig = bench_identity(state, clusters, work)
        callbacks = work / "callback_plugins"
        callbacks.mkdir()
        (callbacks / "bench_task_timer.py").write_text(CALLBACK)
        env = dict(os.environ, ANSIBLE_CALLBACK_PLUGINS=str(callbacks), ANSIBLE_CALLBACKS_ENABLED="bench_task_timer", ANSIBLE_FORCE_COLOR="0")
        results = []
        for size in args.sizes:
            for forks in args.forks:
                for round_index in range(args.rounds):
                    log("%d hosts, forks %d, round %d" % (size, forks, round_index + 1))
                    results.append(one_run(args, state, clusters, kubeconfig, size, forks, round_index, work, env))
                    r = results[-1]
                    if not args.no_floor:
                        r.update(floor_run(args, state, clusters, kubeconfig, size, work, env))
                        log("  floor client: wall %.1f s, cpu %.1f s" % (r["floor_wall_seconds"], r["floor_cpu_seconds"]))
                    log(
                        "  wall %.1f s, cpu %.1f s, peak RSS %.0f MiB, outcomes %s"
                        % (r["wall_seconds"], r["cpu_seconds"], mib(r["peak_rss_bytes"]), r["outcomes"])
                    )
        print_results(results, capacity)
        summary = ratios(results)
        print("\nratios")
        for key, value in summary["wall_ratio"].items():
            print("  %s = %.2fx (issue 15's target <= 4.5x for 200/50) %s" % (key, value, "ok" if value <= 4.5 else "MISSED"))
            if key in summary["baseline_wall_ratio"]:
                print("    the baseline's (as many empty set_fact tasks per host): %.2fx" % summary["baseline_wall_ratio"][key])
        for key, value in summary["peak_rss_gib"].items():
            print("  peak RSS sum %s: %.2f GiB, PSS sum %.2f GiB" % (key, value, summary["peak_pss_gib"][key]))
        for key, value in summary["ansible_requests_per_host"].items():
            print("  Ansible's API requests per host, %s: %.1f (TrainJobs of %d s)" % (key, value, args.job_seconds))
        lines = []
        targets(results, render_rows, out=lambda line: (print(line), lines.append(line.strip())))
        targets_42(results, out=lambda line: (print(line), lines.append(line.strip())))
        if args.json:
            Path(args.json).write_text(
                json.dumps(
                    {
                        "capacity": capacity,
                        "job_seconds": args.job_seconds,
                        "machine": os.uname().nodename,
                        "cpus": os.cpu_count(),
                        "results": results,
                        "ratios": summary,
                        "render": [
                            dict(zip(("hosts", "set_fact_s", "render_s", "ratio", "set_fact_cpu_s", "render_cpu_s", "cpu_ratio"), row)) for row in render_rows
                        ],
                        "targets": lines,
                    },
                    indent=2,
                    sort_keys=True,
                )
                + "\n"
            )
            log("results written to %s" % args.json)
    finally:
        if own_fleet and fleet_dir is not None:
            run([sys.executable, str(FLEET), "stop", "--dir", str(fleet_dir)], check=False)
        if args.keep_work:
            log("work dir kept: %s" % work)
        else:
            shutil.rmtree(str(work), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
