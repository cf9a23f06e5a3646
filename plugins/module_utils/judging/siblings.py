# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Sibling baselines: each node judged against the nodes of its SKU across every cluster of the run (and, merged,
earlier runs), not only against a fixed published floor.

Metrics (higher is better), one sample per node or per GPU:
- ``node/busbw@<size>``: a node's own all_reduce busbw (node stage findings with ``busbw`` and ``size``), GB/s;
- ``gpu/tflops``, ``gpu/gbps``: each GPU's matmul TFLOPS and memory bandwidth (gpu stage findings, ``gpus[].figures``).

SKU: the values of ``key`` (default platform, gpu_architecture, instance_type) of the node's cluster result; the
instance type and GPU product come from the cluster's detection (``detected.instance_types``, ``gpu_products``).

The baseline is SuperBench's fix-threshold outlier detection (microsoft/superbenchmark,
superbench/analyzer/baseline_generation.py ``fix_threshold_outlier_detection``: take the average of the collection as
the baseline, drop every value that breaks the rule against it, repeat until nothing is dropped) with the median in
place of the mean, so one very slow node cannot drag the first baseline, and only values below it dropped (the
metrics are higher-is-better). The distance is SuperBench's ``variance`` rule op
(superbench/analyzer/diagnosis_rule_op.py: ``(value - baseline) / baseline``), in percent. The rule, unless given,
comes from the metric's own noise: three robust standard deviations (1.4826 x the median absolute deviation, the
normal-consistent MAD) in percent of the median, of the values the ``DEFAULT_RULE_FLOOR`` rule keeps (the slow
would widen it), and never under ``DEFAULT_RULE_FLOOR`` percent (the run-to-run noise
of nccl-tests busbw and of gpu-burn figures on healthy nodes is a few percent), nor over ``RULE_CAP``.

A sample is judged only when its SKU and metric have at least ``min_siblings`` samples (this run's and merged earlier
runs'); otherwise the rule is left out and the baseline's ``note`` says so. Earlier baselines (``burnin-baselines.json``
of earlier runs) contribute their samples: the latest value per sample id, this run's replacing an earlier one.
Everything here is pure: reading and writing files is reporting/writer.py's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.nccl_results import size_label
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding
from ansible_collections.gpufleet.burnin.plugins.module_utils.stage_table import RESULTS, scope_of

SCHEMA = "gpufleet.burnin/baselines/v1"
KEY_FIELDS = ("platform", "gpu_architecture", "instance_type", "gpu_product")
DEFAULT_KEY = ("platform", "gpu_architecture", "instance_type")
DEFAULT_MIN_SIBLINGS = 4
DEFAULT_RULE_FLOOR = 5.0
RULE_CAP = 25.0
NOISE_SIGMAS = 3.0
MAD_SCALE = 1.4826
VERDICTS = ("warn", "fail")
STAGE = "siblings"
# Bounds on what earlier runs contribute (untrusted files): samples kept per SKU and metric.
MAX_SAMPLES = 5000
GPU_FIGURES = (("tflops", "matmul TFLOPS", "TFLOPS", "tflops_pass"), ("gbps", "memory bandwidth", "GB/s", "gbps_pass"))


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def median(values):
    ordered = sorted(values)
    count = len(ordered)
    if not count:
        return None
    middle = count // 2
    return float(ordered[middle]) if count % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def check_key(value, field="burnin_sibling_key"):
    """VALUE as a tuple of key fields (a list of KEY_FIELDS, not empty), else ConfigError."""
    if value is None or value == "":
        return DEFAULT_KEY
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, (list, tuple)) or not value or any(item not in KEY_FIELDS for item in value):
        raise ConfigError(field, "must be a list of %s (at least one), got %r" % (", ".join(KEY_FIELDS), value))
    return tuple(value)


def check_rule(value, field="burnin_sibling_rule"):
    """VALUE as None (from each metric's noise) or a percent above 0 and below 100, else ConfigError."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ConfigError(field, "must be a percent above 0 and below 100, or empty (from the metric's noise), got %r" % (value,))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < value < 100:
        raise ConfigError(field, "must be a percent above 0 and below 100, or empty (from the metric's noise), got %r" % (value,))
    return float(value)


def check_min_siblings(value, field="burnin_sibling_min"):
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= 100000:
        raise ConfigError(field, "must be a whole number from 2 to 100000, got %r" % (value,))
    return value


def check_verdict(value, field="burnin_sibling_verdict"):
    if value not in VERDICTS:
        raise ConfigError(field, "must be one of %s, got %r" % (", ".join(VERDICTS), value))
    return value


def sku_of(entry, key=DEFAULT_KEY):
    """The SKU string of a cluster result ENTRY: the KEY fields' values joined by '/' (an unknown one is '?')."""
    entry = entry if isinstance(entry, dict) else {}
    detected = entry.get("detected") if isinstance(entry.get("detected"), dict) else {}
    parts = []
    for field in key:
        value = entry.get(field)
        if not value and field in ("instance_type", "gpu_product"):
            listed = detected.get(field + "s")
            if isinstance(listed, dict):
                listed = list(listed)
            if isinstance(listed, list):
                value = ",".join(sorted(str(item) for item in listed if item))
        parts.append(str(value) if value else "?")
    return "/".join(parts)


def samples_of(findings):
    """[(metric, label, unit, sample_id, node, gpu, value, floor)] of a cluster's node findings (see the module doc)."""
    out = []
    for item in findings or []:
        if not isinstance(item, dict) or not item.get("node") or not isinstance(item.get("evidence"), dict):
            continue
        node, stage, evidence = str(item["node"]), item.get("stage"), item["evidence"]
        if (
            scope_of(stage) == "node"
            and RESULTS[stage] == "nccl-tests"
            and _number(evidence.get("busbw"))
            and isinstance(evidence.get("size"), int)
            and evidence["size"] > 0
        ):
            label = "node all_reduce busbw at %s" % size_label(evidence["size"])
            floor = evidence.get("pass_busbw") if _number(evidence.get("pass_busbw")) else None
            out.append(("node/busbw@%s" % size_label(evidence["size"]), label, "GB/s", node, node, None, float(evidence["busbw"]), floor))
        elif RESULTS.get(stage) == "gpu-burn":
            for gpu in evidence.get("gpus") or []:
                if not isinstance(gpu, dict) or not isinstance(gpu.get("figures"), dict):
                    continue
                figures, index = gpu["figures"], gpu.get("index")
                for name, label, unit, floor_key in GPU_FIGURES:
                    if _number(figures.get(name)):
                        floor = figures.get(floor_key) if _number(figures.get(floor_key)) else None
                        out.append(("gpu/" + name, label, unit, "%s/gpu%s" % (node, index), node, index, float(figures[name]), floor))
    return out


def baseline(values, rule=None):
    """{baseline, mad, rule, kept, dropped} of VALUES (numbers): SuperBench's iterative reject-and-recompute with the
    median (module doc). RULE: percent below the baseline a value may be, or None (from the noise of VALUES)."""
    values = [float(value) for value in values]
    if rule is None:
        # The noise of the healthy: measured on what the floor rule keeps, so that the slow nodes (few, in a small
        # fleet) do not widen the rule that is to name them.
        healthy = _reject(values, DEFAULT_RULE_FLOOR)
        middle = median(healthy)
        spread = median([abs(value - middle) for value in healthy])
        noise = 100.0 * NOISE_SIGMAS * MAD_SCALE * spread / middle if middle else 0.0
        rule = min(RULE_CAP, max(DEFAULT_RULE_FLOOR, noise))
    kept = _reject(values, rule)
    middle = median(kept)
    mad = median([abs(value - middle) for value in kept])
    return {"baseline": middle, "mad": mad, "rule": round(rule, 3), "kept": len(kept), "dropped": len(values) - len(kept)}


def _reject(values, rule):
    """SuperBench's loop: the baseline of what is kept, every value more than RULE percent below it dropped, until
    nothing is (the median in place of the mean)."""
    kept = list(values)
    while True:
        middle = median(kept)
        still = [value for value in kept if distance(value, middle) >= -rule]
        if len(still) == len(kept) or not still:
            return kept
        kept = still


def distance(value, base):
    """SuperBench's variance, (value - baseline) / baseline, in percent."""
    return 100.0 * (value - base) / base if base else 0.0


def earlier_samples(documents):
    """{(sku, metric): {sample_id: value}} of earlier baseline DOCUMENTS (oldest first; a later one's value replaces an
    earlier one's), each checked: a document that is not a baselines file raises ConfigError naming the field."""
    merged = {}
    for index, doc in enumerate(documents or []):
        where = "burnin_baseline_dir[%d]" % index
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("baselines"), list):
            raise ConfigError(where, "must be a %s document with a 'baselines' list (burnin-baselines.json of a run)" % SCHEMA)
        for number, record in enumerate(doc["baselines"]):
            if not isinstance(record, dict) or not isinstance(record.get("samples"), dict):
                raise ConfigError("%s.baselines[%d]" % (where, number), "must have 'sku', 'metric' and 'samples' (sample id -> number)")
            slot = merged.setdefault((str(record.get("sku")), str(record.get("metric"))), {})
            for sample, value in record["samples"].items():
                # A full slot still takes a later value of a sample it holds: the bound is on ids, not on updates.
                if _number(value) and (str(sample) in slot or len(slot) < MAX_SAMPLES):
                    slot[str(sample)] = float(value)
    return merged


def judge(results, options=None):
    """Judge every node of RESULTS (the fleet's results keyed by cluster) against its SKU's baseline. OPTIONS: key
    (default DEFAULT_KEY), rule, min_siblings (default DEFAULT_MIN_SIBLINGS), verdict (default warn), each checked, and
    earlier (earlier_samples()'s answer).

    Returns {findings: {cluster: [finding]}, baselines: [record], key, rule, min_siblings, verdict}; each record
    {sku, metric, label, unit, baseline, mad, rule, count, earlier, kept, floor, judged, note, samples: {id: value},
    nodes: [{cluster, node, gpu, sample, value, distance, verdict}]}."""
    options = options or {}
    key, rule = check_key(options.get("key", DEFAULT_KEY)), check_rule(options.get("rule"))
    min_siblings, verdict = check_min_siblings(options.get("min_siblings", DEFAULT_MIN_SIBLINGS)), check_verdict(options.get("verdict", "warn"))
    earlier = options.get("earlier")
    groups = {}
    for cluster in sorted(results or {}, key=str):
        entry = results[cluster]
        if not isinstance(entry, dict):
            continue
        sku = sku_of(entry, key)
        for metric, label, unit, sample, node, gpu, value, floor in samples_of(entry.get("node_findings")):
            group = groups.setdefault((sku, metric), {"label": label, "unit": unit, "rows": [], "floors": []})
            group["rows"].append({"cluster": str(cluster), "node": node, "gpu": gpu, "sample": sample, "value": value})
            if floor is not None:
                group["floors"].append(floor)
    earlier = earlier or {}
    findings, records = {}, []
    for sku, metric in sorted(groups):
        group = groups[(sku, metric)]
        samples = dict(earlier.get((sku, metric)) or {})
        previous = len(samples)
        for row in group["rows"]:
            samples[row["sample"]] = row["value"]
        record = {
            "sku": sku,
            "metric": metric,
            "label": group["label"],
            "unit": group["unit"],
            "count": len(samples),
            "earlier": previous,
            "floor": min(group["floors"]) if group["floors"] else None,
            "samples": dict((name, round(value, 3)) for name, value in sorted(samples.items())),
            "nodes": [],
        }
        if len(samples) < min_siblings:
            record.update(baseline=None, mad=None, rule=rule, kept=None, judged=False)
            record["note"] = "sibling rule left out: %d sample(s) of SKU %s for %s, fewer than burnin_sibling_min %d" % (
                len(samples),
                sku,
                group["label"],
                min_siblings,
            )
            for row in group["rows"]:
                record["nodes"].append(dict(row, distance=None, verdict=None))
            records.append(record)
            continue
        found = baseline(samples.values(), rule)
        base = found["baseline"]
        record.update(baseline=round(base, 3), mad=round(found["mad"], 3), rule=found["rule"], kept=found["kept"], judged=True, note="")
        for row in group["rows"]:
            gone = distance(row["value"], base)
            result = verdict if gone < -found["rule"] else "pass"
            record["nodes"].append(dict(row, distance=round(gone, 2), verdict=result))
            what = group["label"] if row["gpu"] is None else "GPU %s %s" % (row["gpu"], group["label"])
            reason = "%s %.1f %s is %.1f %% %s the baseline %.1f of SKU %s (%d siblings%s, median after dropping the slow; rule %g %%)" % (
                what,
                row["value"],
                group["unit"],
                abs(gone),
                "below" if gone < 0 else "above",
                base,
                sku,
                len(samples),
                (", %d from earlier runs" % previous) if previous else "",
                found["rule"],
            )
            evidence = {
                "sku": sku,
                "metric": metric,
                "value": row["value"],
                "unit": group["unit"],
                "baseline": round(base, 3),
                "distance_percent": round(gone, 2),
                "siblings": len(samples),
                "rule_percent": found["rule"],
            }
            if row["gpu"] is not None:
                evidence["gpu"] = row["gpu"]
            if result == "pass":
                # Passing samples stay in the record (every node's distance); only the slow become node findings.
                continue
            findings.setdefault(row["cluster"], []).append(finding(row["node"], STAGE, result, reason, evidence))
        records.append(record)
    return {"findings": findings, "baselines": records, "key": list(key), "rule": rule, "min_siblings": min_siblings, "verdict": verdict}


def document(judged, run_id="", generated=""):
    """The baselines file of a run (burnin-baselines.json): what a later run merges (earlier_samples)."""
    return {
        "schema": SCHEMA,
        "run_id": run_id,
        "generated": generated,
        "key": judged["key"],
        "baselines": [
            dict((name, record[name]) for name in ("sku", "metric", "label", "unit", "baseline", "mad", "rule", "count", "floor", "samples"))
            for record in judged["baselines"]
        ],
    }


__all__ = ["baseline", "check_key", "check_min_siblings", "check_rule", "check_verdict", "document", "earlier_samples", "judge", "samples_of", "sku_of"]
