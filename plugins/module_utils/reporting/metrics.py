# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""A burn-in run's figures as Prometheus metrics, from the run's JSON report (report.py's document, read with .get so
newer report fields change nothing here). Written with the Prometheus client library (``prometheus-client``, a
controller requirement): the text exposition for node_exporter's textfile collector and the body of a Pushgateway
push (plugins/plugin_utils/export_run.py does the writing and the pushing). Names, labels and an example:
docs/metrics-export.md.

Cardinality is bounded: label values are names (cluster, node, stage, workload, GPU index, DCGM test) cut to
LABEL_MAX characters, never reasons or messages; verdicts, outcomes and DCGM statuses come from closed lists; and a
run emits at most ``max_series`` samples, the run and cluster figures first, so a huge cluster loses its per-node
detail first (``gpufleet_burnin_metrics_dropped_series`` says how many were left out).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import math
import re
import time

try:
    from prometheus_client.core import CollectorRegistry, GaugeMetricFamily, InfoMetricFamily
    from prometheus_client.exposition import generate_latest

    HAS_PROMETHEUS_CLIENT = True
except ImportError:  # pragma: no cover - a controller requirement (requirements.txt)
    HAS_PROMETHEUS_CLIENT = False

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

PREFIX = "gpufleet_burnin_"
VERDICTS = ("pass", "warn", "fail", "error")
# The TrainJob outcomes a cluster's result carries (plugins/module_utils/judging/outcomes.py and the role's summary);
# anything else is "other", so a new outcome cannot grow the label's values unseen.
OUTCOMES = (
    "Complete",
    "Succeeded",
    "Checked",
    "Applied",
    "Cleaned",
    "Failed",
    "Mismatch",
    "Preempted",
    "Timeout",
    "Error",
    "Pending",
    "Unreachable",
    "Skipped",
)
# The verdict schema's severities and actions (_lib/actions.yaml, docs/verdict-schema.json): closed lists as well.
SEVERITIES = ("none", "info", "warning", "critical")
ACTIONS = ("none", "monitor", "retest", "reset-gpu", "reboot", "drain", "replace")
# DCGM diagnostic test statuses (plugins/module_utils/judging/dcgm.py).
DCGM_STATUSES = ("pass", "fail", "warn", "skip", "not_run")
# The bandwidth checks of a verdict (plugins/module_utils/judging/nccl_judge.py): their value and thresholds are GB/s.
BUSBW_CHECKS = ("peak", "avg")
# nccl-tests prints busbw in GB/s of 1e9 bytes: the metrics carry the base unit, bytes per second.
GB = 1e9
LABEL_MAX = 128
DEFAULT_MAX_SERIES = 20000
MAX_SERIES_LIMIT = 1000000
_CONTROL = re.compile("[\x00-\x1f\x7f]")


def _require_client():
    if not HAS_PROMETHEUS_CLIENT:
        raise ConfigError(
            "burnin_metrics_dir", "needs the Python package prometheus-client on the controller (pip install prometheus-client; requirements.txt)"
        )


def label(value, limit=LABEL_MAX):
    """A label value: text, control characters dropped, at most LIMIT characters (pod output is untrusted)."""
    text = _CONTROL.sub("", "" if value is None else "%s" % (value,))
    return text[:limit]


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _closed(value, allowed, other="other"):
    return value if value in allowed else other


def timestamp(text):
    """Seconds since the epoch of the report's ``generated`` (``%Y-%m-%dT%H:%M:%SZ``), or None."""
    try:
        return float(calendar.timegm(time.strptime("%s" % (text,), "%Y-%m-%dT%H:%M:%SZ")))
    except (TypeError, ValueError):
        return None


def _stage_of(case):
    stage = case.get("stage") or "fleet"
    workload = "%s" % (case.get("workload") or "")
    prefix = "%s stage: " % stage
    return stage, workload[len(prefix) :] if workload.startswith(prefix) else workload


class _Builder(object):
    """Collects samples family by family, refusing a duplicate label set and any sample beyond the cap."""

    def __init__(self, max_series):
        self.max_series = max_series
        self.count = 0
        self.dropped = 0
        self.families = []
        self._seen = set()

    def family(self, kind, name, documentation, labels, unit=""):
        if kind == "info":
            family = InfoMetricFamily(PREFIX + name, documentation, labels=labels)
        else:
            family = GaugeMetricFamily(PREFIX + name, documentation, labels=labels, unit=unit)
        self.families.append(family)
        return family

    def add(self, family, values, value):
        key = (family.name, tuple(values))
        if key in self._seen:
            return
        self._seen.add(key)
        if self.count >= self.max_series:
            self.dropped += 1
            return
        self.count += 1
        if isinstance(family, InfoMetricFamily):
            family.add_metric([label(item) for item in values], value)
        else:
            family.add_metric([label(item) for item in values], float(value))


def build_families(report, max_series=DEFAULT_MAX_SERIES, clusters=None):
    """The metric families of REPORT (the JSON report's document), restricted to the clusters named in CLUSTERS when
    given (a Pushgateway group per cluster). At most MAX_SERIES samples; the families are returned in a fixed order."""
    _require_client()
    if not isinstance(report, dict):
        raise ConfigError("report", "must be the run's JSON report (a mapping), got %s" % type(report).__name__)
    if isinstance(max_series, bool) or not isinstance(max_series, int) or not 1 <= max_series <= MAX_SERIES_LIMIT:
        raise ConfigError("burnin_metrics_max_series", "must be an integer from 1 to %d, got %r" % (MAX_SERIES_LIMIT, max_series))
    run_id = label(report.get("run_id"))
    entries = [entry for entry in report.get("clusters") or [] if isinstance(entry, dict)]
    if clusters is not None:
        entries = [entry for entry in entries if entry.get("cluster") in clusters]
    out = _Builder(max_series)

    # The run: when, and how many clusters per verdict.
    when = out.family("gauge", "run_timestamp_seconds", "When the burn-in run's report was written (Unix time).", ["run_id"])
    stamp = timestamp(report.get("generated"))
    if stamp is not None:
        out.add(when, [run_id], stamp)
    counted = out.family("gauge", "run_clusters", "Clusters of the run by verdict.", ["run_id", "verdict"])
    for verdict in VERDICTS:
        out.add(counted, [run_id, verdict], sum(1 for entry in entries if entry.get("verdict") == verdict))

    info = out.family("info", "cluster", "A cluster's result: platform, GPU, TrainJob outcome and verdict.", ["run_id", "cluster"])
    state = out.family("gauge", "cluster_verdict", "1 for the cluster's verdict, 0 for the others (a state gauge).", ["run_id", "cluster", "verdict"])
    seconds = out.family("gauge", "cluster_duration_seconds", "Wall time of the cluster's burn-in.", ["run_id", "cluster"])
    stage_info = out.family("info", "stage", "A stage's verdict on a cluster.", ["run_id", "cluster", "stage"])
    busbw = out.family(
        "gauge",
        "busbw_bytes_per_second",
        "Bus bandwidth a stage measured (nccl-tests busbw, GB/s x 1e9): check peak or avg.",
        ["run_id", "cluster", "stage", "workload", "collective", "check"],
    )
    threshold = out.family(
        "gauge",
        "busbw_threshold_bytes_per_second",
        "The threshold the busbw was judged against: level pass (below it warns) or warn (below it fails).",
        ["run_id", "cluster", "stage", "workload", "collective", "check", "level"],
    )
    for entry in entries:
        cluster = entry.get("cluster")
        verdict = _closed(entry.get("verdict"), VERDICTS, "error")
        out.add(
            info,
            [run_id, cluster],
            {
                "platform": label(entry.get("platform")),
                "gpu_architecture": label(entry.get("gpu_architecture")),
                "outcome": _closed(entry.get("outcome"), OUTCOMES),
                "verdict": verdict,
                "severity": _closed(entry.get("severity"), SEVERITIES),
                "action": _closed(entry.get("action"), ACTIONS),
            },
        )
        for candidate in VERDICTS:
            out.add(state, [run_id, cluster, candidate], 1 if candidate == verdict else 0)
        if _number(entry.get("seconds")):
            out.add(seconds, [run_id, cluster], entry["seconds"])
        for stage in entry.get("stages") or []:
            if isinstance(stage, dict) and stage.get("stage"):
                out.add(stage_info, [run_id, cluster, stage["stage"]], {"verdict": _closed(stage.get("verdict"), VERDICTS, "error")})
        for case in entry.get("testcases") or []:
            if not isinstance(case, dict):
                continue
            stage, workload = _stage_of(case)
            for check in case.get("checks") or []:
                if not isinstance(check, dict) or check.get("name") not in BUSBW_CHECKS or not _number(check.get("value")):
                    continue
                where = [run_id, cluster, stage, workload, case.get("collective") or "", check["name"]]
                out.add(busbw, where, check["value"] * GB)
                for level in ("pass", "warn"):
                    if _number(check.get(level)):
                        out.add(threshold, where + [level], check[level] * GB)

    # Per node, after every cluster's figures: the cap drops these first.
    node_info = out.family("info", "node", "A node's verdict over the stages that judged it.", ["run_id", "cluster", "node"])
    node_busbw = out.family(
        "gauge", "node_busbw_bytes_per_second", "Bus bandwidth of a run the node took part in, per stage (GB/s x 1e9).", ["run_id", "cluster", "node", "stage"]
    )
    node_threshold = out.family(
        "gauge",
        "node_busbw_threshold_bytes_per_second",
        "The pass threshold a node's own busbw was judged against (node stage), GB/s x 1e9.",
        ["run_id", "cluster", "node", "stage"],
    )
    dcgm_test = out.family("info", "dcgm_test", "A DCGM diagnostic test's status on a node.", ["run_id", "cluster", "node", "test"])
    dcgm_failed = out.family("gauge", "dcgm_gpu_failed_tests", "DCGM diagnostic tests that failed or warned on a GPU.", ["run_id", "cluster", "node", "gpu"])
    for entry in entries:
        cluster = entry.get("cluster")
        for row in entry.get("nodes") or []:
            if isinstance(row, dict) and row.get("node"):
                out.add(
                    node_info,
                    [run_id, cluster, row["node"]],
                    {
                        "verdict": _closed(row.get("verdict"), VERDICTS, "error"),
                        "severity": _closed(row.get("severity"), SEVERITIES),
                        "action": _closed(row.get("action"), ACTIONS),
                    },
                )
        for found in entry.get("node_findings") or []:
            if not isinstance(found, dict) or not found.get("node"):
                continue
            evidence = found.get("evidence") if isinstance(found.get("evidence"), dict) else {}
            if _number(evidence.get("busbw")):
                out.add(node_busbw, [run_id, cluster, found["node"], found.get("stage") or ""], evidence["busbw"] * GB)
            if _number(evidence.get("pass_busbw")):
                out.add(node_threshold, [run_id, cluster, found["node"], found.get("stage") or ""], evidence["pass_busbw"] * GB)
            for test in evidence.get("tests") or []:
                if isinstance(test, dict) and test.get("name"):
                    out.add(dcgm_test, [run_id, cluster, found["node"], label(test["name"], 64)], {"status": _closed(test.get("status"), DCGM_STATUSES)})
            per_gpu = {}
            for failure in evidence.get("failures") or []:
                gpu = failure.get("gpu") if isinstance(failure, dict) else None
                if isinstance(gpu, int) and not isinstance(gpu, bool) and 0 <= gpu < 1024:
                    per_gpu[gpu] = per_gpu.get(gpu, 0) + 1
            for gpu in sorted(per_gpu):
                out.add(dcgm_failed, [run_id, cluster, found["node"], str(gpu)], per_gpu[gpu])

    # The fleet judging itself (judging/siblings.py, drift.py, offenders.py): per SKU and metric the baseline, per node
    # its distance from it, the drifting keys and the repeat offenders.
    names = set(entry.get("cluster") for entry in entries)
    sibling = report.get("siblings") if isinstance(report.get("siblings"), dict) else {}
    base = out.family(
        "gauge", "sibling_baseline", "The SKU's sibling baseline of a metric, in the metric's unit (GB/s, TFLOPS).", ["run_id", "sku", "metric", "unit"]
    )
    rule = out.family("gauge", "sibling_rule_percent", "Percent below the sibling baseline a figure may be.", ["run_id", "sku", "metric"])
    siblings_count = out.family("gauge", "sibling_samples", "Samples (nodes or GPUs, earlier runs' included) behind the baseline.", ["run_id", "sku", "metric"])
    distance = out.family(
        "gauge",
        "node_sibling_distance_percent",
        "(value - baseline) / baseline of a node's (or GPU's) figure, in percent.",
        ["run_id", "cluster", "node", "gpu", "sku", "metric"],
    )
    records = [record for record in sibling.get("baselines") or [] if isinstance(record, dict)]
    for record in records:
        where = [run_id, label(record.get("sku")), label(record.get("metric"))]
        if _number(record.get("baseline")):
            out.add(base, where + [label(record.get("unit"))], record["baseline"])
        if _number(record.get("rule")):
            out.add(rule, where, record["rule"])
        if _number(record.get("count")):
            out.add(siblings_count, where, record["count"])
    for record in records:
        for row in record.get("nodes") or []:
            if isinstance(row, dict) and row.get("cluster") in names and _number(row.get("distance")):
                gpu = "" if row.get("gpu") is None else label(row.get("gpu"))
                out.add(distance, [run_id, row["cluster"], label(row.get("node")), gpu, label(record.get("sku")), label(record.get("metric"))], row["distance"])
    drifted = out.family(
        "gauge",
        "node_config_drift",
        "1 for a node whose key differs from its SKU's majority or golden versions.",
        ["run_id", "cluster", "node", "key", "scope"],
    )
    for row in (report.get("drift") or {}).get("nodes") or [] if isinstance(report.get("drift"), dict) else []:
        if isinstance(row, dict) and row.get("cluster") in names:
            # scope: the stage (and container) of a key read from the pods; one key may drift in several stages.
            out.add(drifted, [run_id, row["cluster"], label(row.get("node")), label(row.get("key")), label(row.get("scope") or "")], 1)
    offender = out.family(
        "gauge", "node_repeat_offender_runs", "Runs of its last window a repeat offender failed or fell below its siblings.", ["run_id", "cluster", "node"]
    )
    for item in report.get("repeat_offenders") or []:
        if isinstance(item, dict) and item.get("cluster") in names and _number(item.get("bad_runs")):
            out.add(offender, [run_id, item["cluster"], label(item.get("node"))], item["bad_runs"])

    dropped = out.family("gauge", "metrics_dropped_series", "Samples left out of this exposition by the series cap.", ["run_id"])
    # The cap's own sample is always written, past the cap.
    dropped.add_metric([run_id], float(out.dropped))
    return out.families


class _Families(object):
    """A collector of fixed families, for a registry of its own (never the process-wide default registry)."""

    def __init__(self, families):
        self._families = families

    def collect(self):
        return iter(self._families)


def registry(families):
    """A CollectorRegistry holding FAMILIES only (push_to_gateway and generate_latest read it)."""
    _require_client()
    own = CollectorRegistry(auto_describe=False)
    own.register(_Families(families))
    return own


def exposition(families):
    """The Prometheus text exposition (format 0.0.4, what node_exporter's textfile collector reads) of FAMILIES."""
    return generate_latest(registry(families)).decode("utf-8")


def series_count(families):
    return sum(len(family.samples) for family in families)
