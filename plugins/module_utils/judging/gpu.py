# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The gpu stage's judgement: every GPU of a node by the lines of the gpu-burn workload (templates/workloads/gpu-burn.yaml,
_lib/workloads/gpu-burn.py.j2), one line per GPU:

    # gpufleet-burnin gpu-burn on <host>: gpu <index> uuid <UUID> tflops <x> gbps <y> errors <n>
    # gpufleet-burnin gpu-burn on <host>: gpu <index> uuid <UUID> error <message>

Each GPU is judged against the architecture's thresholds (_lib/gpu-thresholds.yaml: pass and warn from a published
measurement) and against its node's other GPUs: a figure more than ``sibling_percent`` below the median of the
node's GPUs fails the GPU even above the absolute pass (a straggler sets the pace of a synchronous job). A GPU whose
test raised, whose last product differs from its first, or that printed no line fails. A node's verdict is its worst
GPU's. Per GPU: {index, uuid, result, reason, figures}.

The log is untrusted: it is read line by line (one pass, str.find for the marker), each line cut at MAX_LINE
characters and matched by anchored patterns without nested repetition; at most MAX_GPUS GPU lines count.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.attribution import JOB_OK, _log_items, with_node_attribution
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import median, worst
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file

THRESHOLDS_FILE = os.path.join(LIB_DIR, "gpu-thresholds.yaml")
SCHEMA = "gpufleet.burnin/gpu-thresholds/v1"
FIGURES = ("tflops", "gbps")
UNITS = {"tflops": "TFLOPS", "gbps": "GB/s"}
LABELS = {"tflops": "bf16 matmul", "gbps": "memory copy"}
PREFIX = "# gpufleet-burnin gpu-burn on "
MAX_LINE = 1024
MAX_GPUS = 64
_NUMBER = r"(?:[0-9]{1,12}(?:\.[0-9]{1,6})?|nan|inf|-inf)"
_HEAD = re.compile(r"(?P<host>[A-Za-z0-9._-]{1,253}): (?P<rest>.*)\Z")
_GPU = re.compile(
    r"gpu (?P<index>[0-9]{1,4}) uuid (?P<uuid>[A-Za-z0-9._-]{1,80}) "
    r"(?:tflops (?P<tflops>%s) gbps (?P<gbps>%s) errors (?P<errors>[0-9]{1,15})"
    r"(?: products (?P<products>[0-9]{1,15}))?(?: mem_gib (?P<mem_gib>%s))?"
    r"(?: sm_mhz (?P<sm_mhz>%s) power_w (?P<power_w>%s) temp_c (?P<temp_c>%s) throttle (?P<throttle>[a-z_,]{1,300}))?"
    r"|error (?P<error>.{0,300}))\Z" % (_NUMBER, _NUMBER, _NUMBER, _NUMBER, _NUMBER, _NUMBER)
)
# NVML's clocks-event (throttle) reasons the script names (nvml.h nvmlClocksEventReason*): the hardware slowing the
# GPU down (HW slowdown, HW thermal slowdown, HW power brake) fails it, as DCGM's diagnostic fails clock throttling
# that is not power capping; the driver's thermal slowdown warns; power capping under a full matmul load, sync
# boost, application and display clock settings are how a loaded GPU runs.
THROTTLE_FAIL = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown")
THROTTLE_WARN = ("sw_thermal_slowdown",)
TELEMETRY = ("sm_mhz", "power_w", "temp_c")
_COUNT = re.compile(r"(?P<count>[0-9]{1,4}) GPUs, torch (?P<torch>\S{1,64})")
_DONE = re.compile(r"done, (?P<measured>[0-9]{1,4}) of (?P<count>[0-9]{1,4}) GPUs measured\Z")


class GpuParseError(BurninError):
    """The log holds no gpu-burn line."""


def parse_gpu_output(text):
    """{host, count (GPUs the pod saw, or None), torch, gpus [{index, uuid, tflops, gbps, errors, error}], done,
    problems} of one pod's log. Raises GpuParseError when it holds no gpu-burn line."""
    if not isinstance(text, str):
        raise GpuParseError("the log is not text")
    out = {"host": None, "count": None, "torch": None, "gpus": [], "done": False, "problems": []}
    seen = set()
    found = False
    start = text.find(PREFIX)
    while start >= 0:
        end = text.find("\n", start)
        line = text[start + len(PREFIX) : end if end >= 0 else len(text)]
        start = text.find(PREFIX, end) if end >= 0 else -1
        line = line[:MAX_LINE].rstrip("\r ")
        head = _HEAD.match(line)
        if not head:
            continue
        found = True
        out["host"] = out["host"] or head.group("host")
        rest = head.group("rest")
        gpu = _GPU.match(rest)
        if gpu:
            index = int(gpu.group("index"))
            if index in seen:
                out["problems"].append("GPU %d reported twice: the first line counts" % index)
                continue
            if len(out["gpus"]) >= MAX_GPUS:
                out["problems"].append("more than %d GPU lines: the rest are not read" % MAX_GPUS)
                break
            seen.add(index)
            record = {"index": index, "uuid": gpu.group("uuid"), "tflops": None, "gbps": None, "errors": None, "error": None}
            record.update(products=None, mem_gib=None, sm_mhz=None, power_w=None, temp_c=None, throttle=None)
            if gpu.group("error") is not None:
                record["error"] = gpu.group("error").strip() or "failed"
            else:
                record.update(tflops=float(gpu.group("tflops")), gbps=float(gpu.group("gbps")), errors=int(gpu.group("errors")))
                if gpu.group("products") is not None:
                    record["products"] = int(gpu.group("products"))
                if gpu.group("mem_gib") is not None:
                    record["mem_gib"] = float(gpu.group("mem_gib"))
                if gpu.group("throttle") is not None:
                    record.update((name, float(gpu.group(name))) for name in TELEMETRY)
                    record["throttle"] = [] if gpu.group("throttle") == "none" else [item for item in gpu.group("throttle").split(",") if item][:16]
            out["gpus"].append(record)
            continue
        done = _DONE.match(rest)
        if done:
            out["done"] = True
            continue
        count = _COUNT.match(rest)
        if count and out["count"] is None:
            out["count"], out["torch"] = int(count.group("count")), count.group("torch").rstrip(",")
    if not found:
        raise GpuParseError("no gpu-burn line ('%s<host>: ...') in the log" % PREFIX)
    out["gpus"].sort(key=lambda item: item["index"])
    return out


_CACHE = {}


def _number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(where, "must be a number > 0, got %r" % (value,))
    return float(value)


def load_gpu_thresholds(path=THRESHOLDS_FILE):
    """{defaults, architectures: {arch: {figure: {peak, expected, pass, warn, source}}}} of PATH, checked."""
    if path in _CACHE:
        return _CACHE[path]
    data = read_yaml_file(path, "GPU thresholds")
    where = os.path.basename(path)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ConfigError(where, "must be a mapping with schema: %s" % SCHEMA)
    defaults = data.get("defaults") or {}
    pass_ratio = _number(defaults.get("pass_ratio"), "%s defaults.pass_ratio" % where)
    warn_ratio = _number(defaults.get("warn_ratio"), "%s defaults.warn_ratio" % where)
    percent = _number(defaults.get("sibling_percent"), "%s defaults.sibling_percent" % where)
    if not warn_ratio <= pass_ratio <= 1 or percent >= 100:
        raise ConfigError(where, "defaults need warn_ratio <= pass_ratio <= 1 and sibling_percent < 100")
    architectures = {}
    for arch, figures in sorted((data.get("architectures") or {}).items()):
        if not isinstance(figures, dict) or set(figures) - set(FIGURES):
            raise ConfigError("%s architectures.%s" % (where, arch), "must map %s to records" % " and ".join(FIGURES))
        architectures[arch] = {}
        for figure, record in figures.items():
            at = "%s architectures.%s.%s" % (where, arch, figure)
            if not isinstance(record, dict) or not record.get("source"):
                raise ConfigError(at, "must be a record with peak, expected and source")
            expected = _number(record.get("expected"), at + ".expected")
            architectures[arch][figure] = {
                "id": "%s-%s" % (arch, figure),
                # a published figure of all the node's GPUs sustained (a fail floor); else the floor warns only
                "sustained": record.get("sustained") is True,
                "peak": _number(record.get("peak"), at + ".peak"),
                "expected": expected,
                "pass": round(expected * pass_ratio, 1),
                "warn": round(expected * warn_ratio, 1),
                "source": record["source"],
            }
    out = {"defaults": {"pass_ratio": pass_ratio, "warn_ratio": warn_ratio, "sibling_percent": percent}, "architectures": architectures}
    _CACHE[path] = out
    return out


def _judge_gpu(node, gpu, records, medians, siblings, percent, run=None):
    """One GPU: (result, reasons, figures). RUN: {figure: (median, GPUs)} of every GPU of the run (several nodes)."""
    figures = {"tflops": gpu["tflops"], "gbps": gpu["gbps"], "errors": gpu["errors"]}
    for name in ("products", "mem_gib", "throttle") + TELEMETRY:
        if gpu.get(name) is not None:
            figures[name] = gpu[name]
    if gpu["error"] is not None:
        return "fail", ["the test failed: %s" % gpu["error"]], figures
    results, reasons = [], []
    for figure in FIGURES:
        value = gpu[figure]
        if not math.isfinite(value):
            results.append("fail")
            reasons.append("%s is %s" % (LABELS[figure], value))
            continue
        record = records.get(figure)
        if record:
            figures.update({figure + "_pass": record["pass"], figure + "_warn": record["warn"], figure + "_expected": record["expected"]})
            if value < record["warn"] and record.get("sustained"):
                results.append("fail")
                reasons.append("%s %.1f %s below the fail threshold %.1f (%s)" % (LABELS[figure], value, UNITS[figure], record["warn"], record["id"]))
            elif value < record["warn"]:
                # A floor from a short single-GPU best-shape measurement (MAMF) or an inference, not from all GPUs
                # sustained: a healthy GPU may fall below it, so it warns; the siblings' median decides a fault.
                results.append("warn")
                reasons.append(
                    "%s %.1f %s below the fail threshold %.1f (%s; warn only: no sustained all-GPU figure is published for it)"
                    % (LABELS[figure], value, UNITS[figure], record["warn"], record["id"])
                )
            elif value < record["pass"]:
                results.append("warn")
                reasons.append("%s %.1f %s below the pass threshold %.1f (%s)" % (LABELS[figure], value, UNITS[figure], record["pass"], record["id"]))
        middle = medians.get(figure)
        if middle:
            figures[figure + "_median"] = round(middle, 1)
            # Below the median by more than the percent (exactly at it passes), in whole percent units so that a
            # figure at exactly the percent compares equal.
            if value * 100.0 < middle * (100.0 - percent):
                results.append("fail")
                reasons.append(
                    "%s %.1f %s is %.1f %% below the median %.1f of the node's %d GPUs (more than %g %%)"
                    % (LABELS[figure], value, UNITS[figure], 100.0 * (middle - value) / middle, middle, siblings, percent)
                )
        across, count = (run or {}).get(figure) or (None, 0)
        if across:
            figures[figure + "_run_median"] = round(across, 1)
            # The whole run's GPUs: a node whose GPUs are all slow alike passes its own median, not the run's.
            if value * 100.0 < across * (100.0 - percent):
                results.append("fail")
                reasons.append(
                    "%s %.1f %s is %.1f %% below the median %.1f of the run's %d GPUs (more than %g %%)"
                    % (LABELS[figure], value, UNITS[figure], 100.0 * (across - value) / across, across, count, percent)
                )
    if gpu["errors"]:
        results.append("fail")
        if gpu.get("products") is not None:
            reasons.append("%d element(s) differ from the first product over %d products of the same inputs" % (gpu["errors"], gpu["products"]))
        else:
            reasons.append("%d element(s) of the last matmul differ from the first (same inputs)" % gpu["errors"])
    throttled = [name for name in gpu.get("throttle") or [] if name in THROTTLE_FAIL + THROTTLE_WARN]
    if throttled:
        results.append("fail" if set(throttled) & set(THROTTLE_FAIL) else "warn")
        reasons.append(
            "throttled: %s (NVML clocks-event reasons while it burned; SM clock down to %d MHz, %.0f W, %d C)"
            % (", ".join(throttled), gpu["sm_mhz"], gpu["power_w"], gpu["temp_c"])
        )
    return worst(results), reasons, figures


def check_sibling_percent(value, field="sibling_percent"):
    """VALUE as a float above 0 and below 100 (the percent a GPU may fall below its node's median), else ConfigError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < value < 100:
        raise ConfigError(field, "must be a number above 0 and below 100, got %r" % (value,))
    return float(value)


def run_medians(parsed_logs):
    """{figure: (median, GPUs)} over the measured GPUs of PARSED_LOGS (parse_gpu_output() results) when they come
    from two nodes or more, else {}: the run's yardstick beside each node's own."""
    # A pod whose log held no gpu-burn line (None) is its node's error, not a yardstick.
    measured = [parsed for parsed in parsed_logs if parsed and parsed["gpus"]]
    if len(measured) < 2:
        return {}
    out = {}
    for figure in FIGURES:
        values = [g[figure] for parsed in measured for g in parsed["gpus"] if g["error"] is None and math.isfinite(g[figure])]
        if len(values) >= 2:
            out[figure] = (median(values), len(values))
    return out


def judge_node(parsed, node, facts=None, judging=None):
    """One node's GPUs: {verdict, reason, gpus [{index, uuid, result, reason, figures}], bad_gpus, checks, host,
    torch, thresholds (the records used), sibling_percent}. PARSED: parse_gpu_output()'s result. FACTS: the node's
    gpu_architecture and gpus_per_node. JUDGING: thresholds (a _lib/gpu-thresholds.yaml document), on_missing
    (default warn), sibling_percent (the workload's, templates/workloads/gpu-burn.yaml; else the thresholds' default)
    and run (run_medians()'s yardstick)."""
    facts, judging = facts or {}, judging or {}
    gpu_architecture, gpus_per_node = facts.get("gpu_architecture") or "", facts.get("gpus_per_node")
    thresholds, on_missing, sibling_percent = judging.get("thresholds"), judging.get("on_missing", "warn"), judging.get("sibling_percent")
    run = judging.get("run")
    if on_missing not in ("pass", "warn", "fail"):
        raise ConfigError("on_missing", "must be pass, warn or fail, got %r" % (on_missing,))
    table = thresholds or load_gpu_thresholds()
    percent = table["defaults"]["sibling_percent"] if sibling_percent is None else check_sibling_percent(sibling_percent)
    records = table["architectures"].get(gpu_architecture or "") or {}
    measured = [gpu for gpu in parsed["gpus"] if gpu["error"] is None]
    medians = {}
    if len(measured) >= 2:
        for figure in FIGURES:
            values = [gpu[figure] for gpu in measured if math.isfinite(gpu[figure])]
            if len(values) >= 2:
                medians[figure] = median(values)
    gpus, checks = [], []
    for gpu in parsed["gpus"]:
        result, reasons, figures = _judge_gpu(node, gpu, records, medians, len(measured), percent, run)
        reason = "; ".join(reasons) if reasons else "%.1f TFLOPS, %.1f GB/s" % (gpu["tflops"], gpu["gbps"])
        gpus.append({"index": gpu["index"], "uuid": gpu["uuid"], "result": result, "reason": reason, "figures": figures})
    expected = gpus_per_node if isinstance(gpus_per_node, int) and not isinstance(gpus_per_node, bool) and gpus_per_node > 0 else None
    count = max([value for value in (parsed["count"], expected) if value is not None] or [0])
    if count and len(gpus) < count:
        indexes = set(gpu["index"] for gpu in gpus)
        missing = [index for index in range(count) if index not in indexes][:16]
        checks.append(
            {
                "name": "gpus",
                "verdict": "fail",
                "reason": "node %s: %d of %d GPUs reported%s%s"
                % (
                    node,
                    len(gpus),
                    count,
                    " (no line for GPU %s)" % ", ".join(str(index) for index in missing) if missing else "",
                    "" if parsed["done"] else "; the output stops before its end line",
                ),
            }
        )
    if not gpus and not checks:
        checks.append({"name": "gpus", "verdict": "fail", "reason": "node %s: no GPU line in the output" % node})
    missing_figures = [figure for figure in FIGURES if figure not in records]
    if missing_figures and gpus:
        checks.append(
            {
                "name": "threshold",
                "verdict": on_missing,
                "reason": "node %s: no %s threshold for gpu_architecture %r in _lib/gpu-thresholds.yaml: judged against the node's GPUs only"
                % (node, " or ".join(UNITS[figure] for figure in missing_figures), gpu_architecture or ""),
            }
        )
    for note in parsed["problems"][:3]:
        checks.append({"name": "output", "verdict": "warn", "reason": "node %s: %s" % (node, note)})
    bad = [gpu for gpu in gpus if gpu["result"] != "pass"]
    verdict = worst([gpu["result"] for gpu in gpus] + [check["verdict"] for check in checks])
    if verdict == "pass":
        reason = "node %s: %d GPU(s) passed, %s" % (node, len(gpus), _ranges(gpus))
    else:
        # The GPUs of the node's verdict, in index order (GPUs that only warned are in the evidence, not the reason).
        parts = ["node %s GPU %d (%s): %s" % (node, gpu["index"], gpu["uuid"], gpu["reason"]) for gpu in bad if gpu["result"] == verdict]
        parts += [check["reason"] for check in checks if check["verdict"] == verdict]
        reason = "; ".join(parts)
    return {
        "verdict": verdict,
        "reason": reason,
        "gpus": gpus,
        "bad_gpus": [{"index": gpu["index"], "uuid": gpu["uuid"], "result": gpu["result"]} for gpu in bad],
        "checks": checks,
        "host": parsed["host"],
        "torch": parsed["torch"],
        "thresholds": [dict(records[figure], figure=figure, gpu_architecture=gpu_architecture) for figure in FIGURES if figure in records],
        "sibling_percent": percent,
    }


def _ranges(gpus):
    parts = []
    for figure in FIGURES:
        values = [gpu["figures"][figure] for gpu in gpus if gpu["figures"].get(figure) is not None]
        if values:
            parts.append("%s %.1f..%.1f %s" % (LABELS[figure], min(values), max(values), UNITS[figure]))
    return ", ".join(parts) or "no figures"


def gpu_verdict(output, facts=None, job=None, judging=None):
    """Judge a gpu-burn run by every pod's log (``output`` or ``job.pod_logs``: k8s_log loop results or {pod name:
    text}, or one log's text): per node judge_node() with a check (name ``gpu``, node, pod, gpus) and a finding of the
    stage whose evidence carries every GPU's figures and the thresholds; a log without gpu-burn lines is an ``error``
    check (no finding). ``job``: outcome, reason, pods, pod_logs. ``judging``: workload, stage (``gpu`` unless given),
    on_missing, thresholds (a _lib/gpu-thresholds.yaml document), sibling_percent (judge_node()'s; None: the
    thresholds' default). Returns the verdict's usual fields plus ``results`` (gpu-burn), ``gpu`` ({node:
    judge_node()}) and ``findings``."""
    job, judging = job or {}, judging or {}
    job_outcome, job_reason, pods, pod_logs = job.get("outcome"), job.get("reason"), job.get("pods"), job.get("pod_logs")
    stage, on_missing = judging.get("stage", "gpu"), judging.get("on_missing", "warn")
    facts = dict(facts or {})
    source = pod_logs if isinstance(pod_logs, (dict, list)) and pod_logs else output
    texts = {"output": (source, None)} if isinstance(source, str) and source else (_log_items(source) if source else {})
    node_of = {}
    for pod in pods or []:
        metadata, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        if metadata.get("name") and spec.get("nodeName"):
            node_of[metadata["name"]] = spec["nodeName"]
    checks, judged, found, errors, chosen = [], {}, [], [], {}
    if job_outcome:
        ok = job_outcome in JOB_OK
        checks.append(
            {
                "name": "job",
                "verdict": "pass" if ok else "fail",
                "reason": "TrainJob %s%s" % (job_outcome, (": %s" % job_reason) if job_reason and not ok else ""),
            }
        )
    gpus_per_node = facts.get("gpus_per_node")
    parsed_of, problem_of = {}, {}
    for name in sorted(texts):
        text, problem = texts[name]
        parsed = None
        if problem is None:
            try:
                parsed = parse_gpu_output(text)
            except GpuParseError as exc:
                problem = str(exc)
        parsed_of[name], problem_of[name] = parsed, problem
    across = run_medians(list(parsed_of.values()))
    for name in sorted(texts):
        parsed, problem = parsed_of[name], problem_of[name]
        node = node_of.get(name) or (parsed or {}).get("host") or name
        if parsed is None:
            reason = "node %s (pod %s): no gpu-burn result: %s" % (node, name, problem)
            errors.append(reason)
            checks.append({"name": "gpu", "verdict": "error", "node": node, "pod": name, "reason": reason})
            continue
        result = judge_node(
            parsed,
            node,
            {"gpu_architecture": facts.get("gpu_architecture") or "", "gpus_per_node": gpus_per_node},
            {"thresholds": judging.get("thresholds"), "on_missing": on_missing, "sibling_percent": judging.get("sibling_percent"), "run": across},
        )
        judged[node] = dict(result, pod=name)
        for record in result["thresholds"]:
            chosen.setdefault(record["id"], record)
        checks.append({"name": "gpu", "verdict": result["verdict"], "node": node, "pod": name, "reason": result["reason"], "gpus": result["bad_gpus"]})
        evidence = {
            "pod": name,
            "gpus": result["gpus"],
            "bad_gpus": result["bad_gpus"],
            "thresholds": result["thresholds"],
            "sibling_percent": result["sibling_percent"],
            "torch": result["torch"],
        }
        found.append(finding(node, stage, result["verdict"], result["reason"], evidence))
    if not texts:
        checks.append({"name": "gpu", "verdict": "error", "reason": "no result: no pod log to read gpu-burn output from"})
    verdict = worst(check["verdict"] for check in checks)
    gpus = sum(len(entry["gpus"]) for entry in judged.values())
    if verdict == "pass":
        reason = "%sper-GPU test passed on %d node(s), %d GPU(s)" % ("TrainJob %s; " % job_outcome if job_outcome else "", len(judged), gpus)
    else:
        reason = "; ".join(check["reason"] for check in checks if check["verdict"] == verdict)
    out = {
        "workload": judging.get("workload"),
        "collective": None,
        "results": "gpu-burn",
        "verdict": verdict,
        "reason": reason,
        "checks": checks,
        "notes": [],
        "transport": None,
        "thresholds": [chosen[key] for key in sorted(chosen)],
        "metrics": {
            "nodes_judged": len(judged),
            "gpus_judged": gpus,
            "bad_gpus": sum(len(entry["bad_gpus"]) for entry in judged.values()),
        },
        "series": [],
        "facts": facts,
        "errors": errors[:10],
        "warnings": 0,
        "problems": [],
        "output_pod": None,
        "gpu": judged,
        "findings": found,
    }
    return with_node_attribution(out, judged, found, pods, pod_logs, output, job_outcome)


def judge_gpu_pod(output, facts, job, judging):
    """One pod's gpu-burn lines (:func:`gpu_verdict`): its node's verdict with every GPU's figures and
    the thresholds as evidence, or None when the log holds no gpu-burn line. JUDGING: on_missing and the workload's
    rendered ``sibling_percent``, when set."""
    if not output or PREFIX not in output:
        return None
    verdict = gpu_verdict(output, facts, job, {"on_missing": judging.get("on_missing", "warn"), "sibling_percent": judging.get("sibling_percent")})
    found = verdict.get("findings") or []
    if found:
        verdict["evidence"] = dict(found[0].get("evidence") or {})
    return verdict


__all__ = ["GpuParseError", "check_sibling_percent", "gpu_verdict", "judge_gpu_pod", "judge_node", "load_gpu_thresholds", "parse_gpu_output"]
