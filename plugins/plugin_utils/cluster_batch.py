# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every cluster of a play's batch through its stages at once, behind gpufleet.burnin.burnin_batch: each host's inputs
from what gpufleet.burnin.burnin_start registered for it, the batch (module_utils/burnin/batch_run.py: each cluster
read first, cluster_stages.detect_cluster, then its stages, cluster_stages.run_cluster_stage) with SIGINT and SIGTERM
as its cancel, each cluster's result as the role's rescue keeps it, and after a cancel a record of what each cluster
created."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json
import os
import signal

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.batch_run import run_batch
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import failure_of, utc_stamp
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import safe_join
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cancel
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.remediation_run import asked as remediation_asked
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster_stages import DETECT, REMEDIATE, detect_cluster, remediate_cluster, run_cluster_stage

# What gpufleet.burnin.burnin_start registered for each host (roles/burnin/tasks/main.yml), and its fields by the
# option of burnin_stage they feed.
STARTED = "burnin__start"
FIELDS = {"result": "result", "variables": "variables", "run_id": "run_id", "namespace": "namespace"}


def started_result(raw):
    """The result burnin_start began for a host whose variables RAW (hostvars) are, or None when it did not start."""
    started = raw.get(STARTED) if isinstance(raw, dict) else None
    if not isinstance(started, dict) or started.get("failed") or not isinstance(started.get("result"), dict):
        return None
    return started


def host_inputs(hostvars, task_vars, templar, host, auth_of):
    """(burnin_stage's options but the cluster's, kubernetes.core's authentication options) of HOST from what
    burnin_start registered for it, templated with its own variables; AUTH_OF(that templar) gives the options. None
    when burnin_start did not start it in this play."""
    raw = hostvars.raw_get(host) if hostvars is not None else {}
    started = started_result(raw)
    if started is None:
        return None
    variables = dict(task_vars)
    variables.update(raw)
    templar = templar.copy_with_new_env(available_variables=variables)
    args = dict((option, templar.template(started.get(field))) for option, field in FIELDS.items())
    args["host"] = host
    return args, auth_of(templar)


@contextlib.contextmanager
def cancelled_by_signals(signums=(signal.SIGINT, signal.SIGTERM)):
    """A Cancel that SIGNUMS request while the block runs; their own handlers are back after it."""
    cancel = Cancel()
    previous = {}

    def on_signal(signum, frame):
        del frame
        cancel.request(signum)

    for signum in signums:
        previous[signum] = signal.signal(signum, on_signal)
    try:
        yield cancel
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


# What a failed first contact, or a failed remediation, names as its step in the reason (the role's tasks before the
# batch did them); a stage names itself.
DETECT_TASK = "Read the cluster and check its platform and GPU"
REMEDIATE_TASK = "Label the verified nodes and quarantine the failed ones"
STEP_TASKS = {DETECT: DETECT_TASK, REMEDIATE: REMEDIATE_TASK}
# How a failure is told as it happens, by its step.
STEP_FAILED = {DETECT: "", REMEDIATE: "remediation failed: "}


def shown(host, out, context, verbose):
    """HOST's entry: its last stage's result, every diff headed by the host, a failure's record as the role's rescue
    keeps it (cluster_result.failure_of, the failed task named by its stage), its detail (the API server's own words)
    only when VERBOSE."""
    out = dict(out)
    for diff in out.get("diff") or []:
        for header in ("before_header", "after_header"):
            if header in diff:
                diff[header] = "%s: %s" % (host, diff[header])
    if not out.get("failed"):
        return out
    failed = {"msg": out.get("msg"), "error": out.get("error")}
    task = STEP_TASKS.get(out.get("stage")) or "Run the stage %s" % out.get("stage")
    failure = failure_of(out.get("record"), {"name": task}, failed, context=context)
    out["record"] = dict(out.get("record") or {}, **failure["record"])
    out["detail"] = failure["detail"] if verbose else ""
    return out


def record_cancel(clusters, inputs):
    """What each cluster's run created, in <burnin_report_dir>/<run id>/cancelled.json of every report directory the
    clusters name (once cancelled, Ansible shows nothing more a worker prints). Returns the record."""
    created, run_ids, report_dirs = {}, set(), set()
    for host, out in clusters.items():
        args = inputs[host][0]
        record = out.get("record") or {}
        run_ids.add(args["run_id"])
        created[host] = {"namespace": args["namespace"], "applied": list(record.get("applied") or []), "stage": out.get("stage"), "msg": out.get("msg")}
        report_dir = (args["variables"] or {}).get("burnin_report_dir")
        if report_dir:
            report_dirs.add((report_dir, args["run_id"]))
    record = {"cancelled": True, "run_ids": sorted(run_ids), "clusters": created}
    for report_dir, run_id in sorted(report_dirs):
        path = safe_join(report_dir, [run_id, "cancelled.json"])
        if not os.path.isdir(os.path.dirname(path)):
            os.makedirs(os.path.dirname(path))
        with open(path, "w") as handle:
            json.dump(record, handle, indent=2, sort_keys=True)
    return record


def drive_batch(name, hosts, inputs_of, broken_record, progress, check_mode=False, diff=False, verbose=False):
    """HOSTS' stages at once. INPUTS_OF(host) -> host_inputs' pair or None (raises BurninError for a host whose options
    are wrong); BROKEN_RECORD(host) -> its burnin_result so far. PROGRESS(line) hears the batch. Returns the action's
    result: {clusters: {host: shown entry, its record's ``finished`` stamped as its stages ended}, left_out, changed, msg,
    diff (when any)}. After a cancel the record is written and the signal's own handler runs (Ansible's worker ends there)."""
    specs, inputs, left_out, broken = {}, {}, [], {}
    for host in hosts:
        try:
            found = inputs_of(host)
        except BurninError as exc:
            broken[host] = "%s: %s: %s" % (name, host, exc)
            continue
        if found is None:
            left_out.append(host)
            continue
        inputs[host] = found
        # Each cluster is read first (its version, DRA APIs, nodes and namespace, its platform and GPU checked), by the
        # client its stages then use.
        variables = found[0]["variables"] or {}
        stages = list(variables.get("burnin_stages") or ["fleet"])
        # After every stage: labels, taints or cordons by the nodes' verdicts, when asked (off by default).
        remediate = [REMEDIATE] if remediation_asked(variables, check_mode) else []
        specs[host] = {"stages": [DETECT] + stages + remediate, "record": found[0]["result"]}
    progress("%s: %d cluster(s) at once: %s" % (name, len(specs), ", ".join(sorted(specs)) or "none"))
    # Said now: once the run is cancelled, Ansible no longer shows what its workers print.
    for run_id in sorted(set(found[0]["run_id"] for found in inputs.values())):
        progress(
            "%s: if this run is stopped (Ctrl-C, an AWX cancel), what it created (label gpufleet.burnin/run-id=%s) is removed by: "
            "ansible-playbook -i <inventory> gpufleet.burnin.cleanup -e burnin_run_id=%s" % (name, run_id, run_id)
        )
    detected = {}
    with cancelled_by_signals() as cancel:

        def run_stage(host, stage, record):
            stage_args, auth = inputs[host]
            told = set()

            def tell(line):
                told.add(line)
                progress(line)

            if stage == DETECT:
                out = detect_cluster(auth, name, dict(stage_args, result=record), progress=tell)
                detected[host] = out.get("cluster") or {}
            elif stage == REMEDIATE:
                out = remediate_cluster(auth, name, dict(stage_args, result=record), diff=diff)
            else:
                out = run_cluster_stage(
                    auth,
                    name,
                    dict(stage_args, stage=stage, result=record, cluster=detected[host]),
                    check_mode=check_mode,
                    diff=diff,
                    progress=tell,
                    cancel=cancel,
                )
            # Every line of the stage is told once: a TrainJob stage tells each attempt's as it ends, the isolation and
            # the sweep's pairs their rounds; their last line (what was found, why a stage did not run) is told here.
            for line in out.get("lines") or []:
                if line not in told:
                    tell(line)
            if out.get("failed"):
                # Told as it happens: the role fails the host only at the end, after the summary.
                progress("%s: %s%s" % (host, STEP_FAILED.get(stage, "%s stage failed: " % stage), out.get("msg")))
            if out.get("failed") or stage == specs[host]["stages"][-1]:
                # The cluster's stages ended: its record's end, when they did, not when the batch's last cluster did.
                out["record"] = dict(out.get("record") or {}, finished=utc_stamp())
            return out

        outs = run_batch(specs, run_stage, cancel=cancel)
    clusters = dict((host, shown(host, out, inputs[host][1].get("context"), verbose)) for host, out in outs.items())
    for host in sorted(clusters):
        if clusters[host].get("detail"):
            progress("%s: the API server's own words: %s" % (host, clusters[host]["detail"]))
    for host, msg in sorted(broken.items()):
        # Its authentication options are wrong: nothing reached its cluster.
        progress(msg)
        record = broken_record(host)
        clusters[host] = shown(host, {"failed": True, "record": record, "msg": msg, "stage": "fleet", "error": None}, None, verbose)
        inputs[host] = ({"run_id": record.get("run_id") or "", "namespace": "", "variables": {}}, {})
    ended = utc_stamp()
    for out in clusters.values():
        # A cluster cancelled, not started or whose options were wrong ends with the batch.
        if "finished" not in (out.get("record") or {}):
            out["record"] = dict(out.get("record") or {}, finished=ended)
    if cancel.is_set():
        record_cancel(clusters, inputs)
        handler = signal.getsignal(cancel.signum or signal.SIGINT)
        if callable(handler):
            handler(cancel.signum or signal.SIGINT, None)
    result = {"clusters": clusters, "left_out": left_out, "changed": any(out.get("changed") for out in clusters.values())}
    result["msg"] = "%d cluster(s): %d ran every stage, %d failed, %d not driven" % (
        len(clusters) + len(left_out),
        sum(1 for out in clusters.values() if not out.get("failed")),
        sum(1 for out in clusters.values() if out.get("failed")),
        len(left_out),
    )
    diffs = [diff for host in sorted(clusters) for diff in clusters[host].pop("diff", [])]
    if diffs:
        result["diff"] = diffs
    return result


__all__ = ["DETECT_TASK", "STARTED", "cancelled_by_signals", "drive_batch", "host_inputs", "record_cancel", "shown", "started_result"]
