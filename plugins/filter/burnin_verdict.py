# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_verdict
short_description: Judge a burn-in - nccl-tests busbw against per-platform thresholds, job outcome, failed nodes
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Returns C(pass), C(warn), C(fail) or C(error) (no result), with the reason and every check that led to it.
  - Bandwidth - the busbw at the largest message size (C(peak)) and the C(# Avg bus bandwidth) (C(avg)) are compared
    with the most specific record of the collection's published thresholds (C(_lib/thresholds.yaml)) for the
    cluster's platform, GPU architecture, collective, node count, GPUs per node and MNNVL; O(judging.overrides) from the
    inventory win over them. At or above C(pass) passes, down to C(warn) warns, below fails.
  - A record with C(metric=range) and C(sizes) judges every row inside its range of message sizes (C(range) check),
    naming each size that fell short.
  - Also fails on C(#wrong) elements, nccl-tests' own C(NCCL_TESTS_MIN_BW) check, test failures in the output and a
    Failed TrainJob; a result that cannot be read or a TrainJob that never finished is an error.
  - With O(job.pods), says which nodes and pods took part and which failed (pod phases, container exits and restarts,
    failure lines in the logs naming a host), like the original operator's succeeded and failed node lists.
  - A workload without a collective (torch or exec) is judged by its TrainJob's outcome.
  - With O(judging.results=dcgm-diag) (the catalogue's C(dcgm-diag) workload) every pod's log is read as NVIDIA DCGM's
    C(dcgmi diag -j) JSON (DCGM 3.x and 4.x shapes) - a GPU failing a test fails the run, a warning warns it, naming
    node, GPU, test and DCGM's message; a pod whose log holds no DCGM JSON is an C(error). Each judged node gets a
    C(dcgm) finding (RV(_value.findings)) with its failing GPUs and tests as evidence. It may be called with the logs
    of the whole run or of one pod.
  - Transport proof - the NCCL INFO lines of the logs say which network NCCL used (C(Using network ...), the channels'
    C(via NET/...)), the plugin (aws-ofi-nccl, gIB, FasTrak, GPUDirectTCPX) and whether NVLS and MNNVL were used; a
    multi-node run whose transport is not the one the platform catalogue (C(_lib/platforms/<platform>/platform.yaml),
    C(transport) of the shape) expects fails the C(transport) check, naming both and the hosts, pods and nodes. Logs
    without NCCL INFO lines (C(NCCL_DEBUG) not C(INFO)) leave the transport C(unknown), a note that never fails.
options:
  _input:
    description:
      - The nccl-tests output - the launcher's log text, a result of P(gpufleet.burnin.nccl_results#filter), the C(-J)
        JSON (text or loaded), or the results of a M(kubernetes.core.k8s_log) loop over the TrainJob's pods (the log
        holding the table is picked, the launcher's first). Null or empty when there is none.
    type: raw
    required: true
  facts:
    version_added: 0.2.0
    description:
      - What the cluster is - the keys that pick the thresholds and the expected transport.
      - A key not listed below is an error naming it and the allowed keys.
    type: dict
    default: {}
    suboptions:
      platform:
        description: The cluster's platform (C(aws), C(gcp), C(azure), C(oci), C(coreweave), C(nebius), ...).
        type: str
      gpu_architecture:
        description: The cluster's GPU architecture (C(h100), C(h200), C(b200), C(gb200), C(gb300), C(a100), ...).
        type: str
      nodes:
        description: Number of nodes of the run.
        type: int
      gpus_per_node:
        description: GPUs per node.
        type: int
      mnnvl:
        description: Whether multi-node NVLink was enabled.
        type: bool
      instance_type:
        description: The nodes' instance / machine type; picks the catalogue shape whose C(transport) is expected.
        type: str
  job:
    version_added: 0.2.0
    description:
      - How the TrainJob ended and its pods.
      - A key not listed below is an error naming it and the allowed keys.
    type: dict
    default: {}
    suboptions:
      outcome:
        description: The TrainJob's outcome (C(Complete), C(Failed), C(Timeout), ...), as the role records it.
        type: str
      reason:
        description: Why the TrainJob ended so, added to the reason of a failed job.
        type: str
      pods:
        description: The TrainJob's pods, the C(resources) of M(kubernetes.core.k8s_info) (with C(spec.nodeName)), for node attribution.
        type: list
        elements: dict
      pod_logs:
        description: The pods' logs for attribution - the results of a M(kubernetes.core.k8s_log) loop, or a mapping of pod name to text.
        type: raw
  judging:
    version_added: 0.2.0
    description:
      - What is judged and against what.
      - A key not listed below is an error naming it and the allowed keys.
    type: dict
    default: {}
    suboptions:
      workload:
        description: The workload's name, carried into the verdict and the reports.
        type: str
      collective:
        description: The collective (C(all_reduce), C(all_gather)); defaults to the one the output names. Empty for torch or exec.
        type: str
      results:
        description:
          - How the output is read, the workload's C(results) in the catalogue (C(templates/workloads/)) - C(nccl-tests)
            (also when empty), C(dcgm-diag) (every pod's DCGM diagnostic JSON) or C(gpu-burn) (every pod's per-GPU
            lines, judged per GPU against C(_lib/gpu-thresholds.yaml) and the node's other GPUs).
        type: str
        choices: [nccl-tests, dcgm-diag, gpu-burn, '']
      thresholds:
        description: A thresholds document replacing the collection's (same schema as C(_lib/thresholds.yaml)).
        type: dict
      overrides:
        description:
          - Threshold records from the inventory, same keys as C(_lib/thresholds.yaml) (C(source) optional); they win over the
            collection's for the same metric. C(disabled=true) turns a metric off.
        type: list
        elements: dict
        default: []
      on_missing:
        description: The verdict when no threshold matches the cluster.
        type: str
        choices: [pass, warn, fail]
        default: warn
      expected_transport:
        description:
          - The transport the logs must show, instead of the catalogue's - C(efa), C(ib), C(gib), C(tcpxo), C(tcpx) or C(socket).
        type: str
      allow_partial:
        description: Judge truncated output as a failed or missing result instead of failing the filter (always safe to keep).
        type: bool
        default: true
      sibling_percent:
        description:
          - With O(judging.results=gpu-burn) - how far (percent, above 0 and below 100) a GPU's figure may fall below
            the median of its node's GPUs before it fails; empty for C(_lib/gpu-thresholds.yaml)'s default (the
            C(gpu-burn) workload's C(sibling_percent) parameter, which the catalogue renders as C(judging)).
        type: float
        version_added: 0.3.0
notes:
  - In 0.1.0 the filter took the sub-options above as keyword arguments (C(platform=...), C(job_outcome=...),
    C(pods=...)); passing one of them now is an error naming the key it became (C(facts.platform), C(job.outcome), ...).
"""

EXAMPLES = r"""
- name: Judge the burn-in from the pods' logs
  ansible.builtin.set_fact:
    verdict: >-
      {{ pod_logs.results | gpufleet.burnin.burnin_verdict(
           facts={'platform': 'aws', 'gpu_architecture': 'h100', 'nodes': 2, 'gpus_per_node': 8, 'mnnvl': false},
           job={'outcome': 'Complete', 'pods': pods.resources},
           judging={'workload': 'nccl-all-reduce', 'collective': 'all_reduce', 'overrides': burnin_thresholds | default([])}) }}

- name: Stricter peak for this fleet
  vars:
    cluster:
      platform: aws
      gpu_architecture: h100
      nodes: 2
      gpus_per_node: 8
    stricter:
      collective: all_reduce
      overrides:
        - {platform: aws, gpu_architecture: h100, collective: all_reduce, metric: peak, pass: 420, warn: 380}
  ansible.builtin.set_fact:
    verdict: "{{ launcher_log.log | gpufleet.burnin.burnin_verdict(facts=cluster, judging=stricter) }}"
"""

RETURN = r"""
_value:
  description: The verdict.
  type: dict
  contains:
    verdict:
      description: C(pass), C(warn), C(fail) or C(error).
      type: str
      sample: pass
    reason:
      description: Why, from the checks with that verdict (a failed transport check's reason first).
      type: str
      sample: "TrainJob Complete; busbw 441.9 GB/s at 8G (out-of-place) meets aws-h100-all-reduce-peak (>= 270.0 GB/s, warn >= 250.0);
        busbw (in-place) meets aws-h100-all-reduce-sizes at all 4 sizes in 1G..16G (>= 250.0 GB/s) (lowest 440.9 GB/s at 1G)"
    workload:
      description: O(judging.workload).
      type: str
    collective:
      description: The collective judged.
      type: str
    checks:
      description: Each check - C(name) (job, result, peak, avg, range, wrong, min_bw, errors, threshold, transport), C(verdict),
        C(reason), and C(value), C(size), C(threshold) (record id), C(pass), C(warn) where they apply (a range check's are
        its lowest-margin row's, and C(rows) holds every judged row - size, value, pass, warn, range, verdict); the transport check
        adds C(expected), C(seen), C(nvls), C(mnnvl) and C(evidence) (per host - pod, node, network, the log lines).
        A check with C(note=true) never decides the verdict.
      type: list
      elements: dict
    notes:
      description: The reasons of the checks that are notes (for example an unknown transport).
      type: list
      elements: str
    transport:
      description: The transport check in short - verdict, expected, expected_source, seen (a transport id, C(unknown) or C(mixed)), nvls, mnnvl.
      type: dict
    thresholds:
      description: The threshold records used, with their sources.
      type: list
      elements: dict
    metrics:
      description: peak_busbw, largest_size, peak_busbw_in_place, avg_busbw, max_busbw, wrong_total, nccl_version, hosts, ...
      type: dict
    series:
      description: The plot data, C([size, out-of-place busbw, in-place busbw]) per row.
      type: list
      elements: list
    output_pod:
      description: The pod whose log held the output, when O(_input) was a list of pod logs.
      type: str
    nodes:
      description: Nodes that ran the TrainJob's pods (with O(job.pods)).
      type: list
      elements: str
    succeeded_nodes:
      description: Nodes whose pods all succeeded (with O(job.pods)).
      type: list
      elements: str
    failed_nodes:
      description: Nodes with a failed pod (with O(job.pods)).
      type: list
      elements: str
    attribution:
      description: Per pod - name, node, role, phase, status (succeeded, failed, unknown, running, pending), reasons; and
        succeeded_pods, failed_pods, unscheduled_pods, unknown_nodes (with O(job.pods)).
      type: dict
    results:
      description: C(dcgm-diag) when O(judging.results=dcgm-diag).
      type: str
    dcgm:
      description:
        - With O(judging.results=dcgm-diag) - per node its DCGM judgement - verdict, reason, pod, gpus (per GPU index its verdict
          and tests with their status and message), failures (gpu, test, category, message), tests (name, category,
          status), dcgm_version, driver_version.
      type: dict
    findings:
      description:
        - With O(judging.results=dcgm-diag) - one C(dcgm) finding per judged node (node, stage, verdict, reason, evidence with pod,
          failed_gpus, failures, tests, dcgm_version), as plugins/module_utils/judging/node_findings.py records them.
      type: list
      elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError

PREFIX = "gpufleet.burnin.burnin_verdict"
GROUPS = ("facts", "job", "judging")
_OPTIONS = []  # DOCUMENTATION's options, parsed on first use: the one list of the filter's parameters


def options():
    """{group: {key: its documented sub-option}} from DOCUMENTATION (parsed once per process)."""
    if not _OPTIONS:
        import yaml

        documented = yaml.safe_load(DOCUMENTATION)["options"]
        _OPTIONS.append(dict((group, documented[group]["suboptions"]) for group in GROUPS))
    return _OPTIONS[0]


def _fail(where, message):
    raise AnsibleFilterError("%s: %s: %s" % (PREFIX, where, message))


def _checked(where, value, spec):
    """VALUE as its sub-option SPEC types it (None stays None; an empty string is None, as before the mappings)."""
    kind = spec.get("type", "str")
    if value is None or (value == "" and kind in ("str", "int", "float")):
        return None
    if kind == "int":
        if isinstance(value, bool):
            _fail(where, "must be an integer, got %r" % (value,))
        try:
            return int(value)
        except (TypeError, ValueError):
            _fail(where, "must be an integer, got %r" % (value,))
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            _fail(where, "must be a number, got %r" % (value,))
        try:
            return float(value)
        except ValueError:
            _fail(where, "must be a number, got %r" % (value,))
    if kind == "bool" and not isinstance(value, bool):
        _fail(where, "must be true or false, got %r" % (value,))
    if kind == "str":
        if not isinstance(value, str):
            _fail(where, "must be a string, got %s" % type(value).__name__)
        if "choices" in spec and value not in spec["choices"]:
            _fail(where, "must be one of %s, got %r" % (", ".join(c for c in spec["choices"] if c), value))
    if kind == "dict" and not isinstance(value, dict):
        _fail(where, "must be a dict, got %s" % type(value).__name__)
    if kind == "list":
        if not isinstance(value, list):
            _fail(where, "must be a list, got %s" % type(value).__name__)
        if spec.get("elements") == "dict" and not all(isinstance(item, dict) for item in value):
            _fail(where, "must be a list of dicts")
    return value


def core_arguments(facts=None, job=None, judging=None):
    """The three mappings checked against DOCUMENTATION, as verdict_for's keyword arguments (facts, job, judging)."""
    out = {}
    for group, given in (("facts", facts), ("job", job), ("judging", judging)):
        spec = options()[group]
        if given is None:
            given = {}
        if not isinstance(given, dict):
            _fail(group, "must be a mapping of %s, got %s" % (", ".join(sorted(spec)), type(given).__name__))
        unknown = sorted(str(key) for key in given if key not in spec)
        if unknown:
            _fail(group, "unknown key%s %s; allowed: %s" % ("s" if len(unknown) > 1 else "", ", ".join(unknown), ", ".join(sorted(spec))))
        out[group] = dict((key, _checked("%s.%s" % (group, key), given.get(key, sub.get("default")), sub)) for key, sub in spec.items())
    judged = out["judging"]
    judged["allow_partial"] = bool(judged["allow_partial"] if judged["allow_partial"] is not None else True)
    judged["on_missing"] = judged["on_missing"] or "warn"
    judged["overrides"] = judged["overrides"] or None
    return out


def burnin_verdict_filter(output, facts=None, job=None, judging=None, **others):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import verdict_for

    if others:
        # The keyword arguments of 0.1.0: say which key each one became.
        where = dict((key, "%s.%s" % (group, key)) for group in GROUPS for key in options()[group])
        # 0.1.0 prefixed the job's outcome and reason.
        where.update(job_outcome="job.outcome", job_reason="job.reason")
        name = sorted(others)[0]
        _fail(name, "not an argument; burnin_verdict takes facts, job and judging%s" % ((" (use %s)" % where[name]) if name in where else ""))
    arguments = core_arguments(facts, job, judging)
    try:
        return verdict_for(output, arguments["facts"], arguments["job"], arguments["judging"])
    except BurninError as exc:
        raise AnsibleFilterError("%s: %s" % (PREFIX, exc))


class FilterModule(object):
    def filters(self):
        return {"burnin_verdict": burnin_verdict_filter}
