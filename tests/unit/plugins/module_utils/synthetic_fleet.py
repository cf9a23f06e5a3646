# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Synthetic fleet results for the report at scale (not a test module): ``synthetic_results(200)`` is 200 clusters over
eight platform/GPU pairs with pass, warn, fail and error verdicts and a spread of margins, seeded, built without a
fixture log. Loaded by path from tests/unit and tests/e2e (and tests/bench/bench_report_html.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

# (platform, GPU, peak pass threshold in GB/s); the warn threshold is 90 % of it.
PAIRS = (
    ("aws", "h100", 270.0),
    ("aws", "b200", 600.0),
    ("gcp", "h200", 330.0),
    ("azure", "h100", 270.0),
    ("oci", "gb200", 700.0),
    ("coreweave", "h200", 330.0),
    ("nebius", "b200", 600.0),
    ("onprem", "gb300", 800.0),
)
SIZES = [1 << exponent for exponent in range(20, 34)]  # 1M .. 8G


def _verdict(platform, gpu, threshold, peak):
    warn = threshold * 0.9
    verdict = "pass" if peak >= threshold else "warn" if peak >= warn else "fail"
    threshold_id = "%s-%s-all-reduce-peak" % (platform, gpu)
    reason = "busbw %.1f GB/s at 8G (out-of-place) %s %s (>= %g GB/s, warn >= %g)" % (
        peak,
        "meets" if verdict == "pass" else "is below",
        threshold_id,
        threshold,
        warn,
    )
    series = [[size, round(peak * (1 - 0.7 ** (position + 1)), 2), round(peak * 0.98 * (1 - 0.7 ** (position + 1)), 2)] for position, size in enumerate(SIZES)]
    series[-1][1] = round(peak, 2)
    check = {
        "name": "peak",
        "threshold": threshold_id,
        "pass": threshold,
        "warn": warn,
        "value": round(peak, 2),
        "size": SIZES[-1],
        "verdict": verdict,
        "reason": reason,
    }
    return {
        "verdict": verdict,
        "reason": reason,
        "collective": "all_reduce",
        "workload": "nccl-all-reduce",
        "checks": [check],
        "series": series,
        "metrics": {"peak_busbw": round(peak, 2), "avg_busbw": round(peak * 0.55, 2), "largest_size": SIZES[-1]},
        "thresholds": [
            {"id": threshold_id, "metric": "peak", "pass": threshold, "warn": warn, "expected": threshold * 1.4, "size": None, "source": "synthetic"}
        ],
        "nodes": ["node-a", "node-b"],
        "succeeded_nodes": ["node-a", "node-b"] if verdict != "fail" else ["node-a"],
        "failed_nodes": [] if verdict != "fail" else ["node-b"],
        "errors": [],
    }


def synthetic_results(count=200, seed=15):
    """COUNT cluster results keyed by name: about 5 % unreachable or timed out (error, no measurement), 10 % below the
    warn threshold (fail), 12 % in the warning band, the rest passing by up to 45 %."""
    rng = random.Random(seed)
    results = {}
    for index in range(count):
        platform, gpu, threshold = PAIRS[index % len(PAIRS)]
        name = "%s-%s-%03d" % (platform, gpu, index)
        roll = rng.random()
        if roll < 0.05:
            results[name] = {
                "platform": platform,
                "gpu_architecture": gpu,
                "outcome": rng.choice(["Unreachable", "Timeout"]),
                "reason": "no answer from the API server",
            }
            continue
        if roll < 0.15:
            peak = threshold * rng.uniform(0.4, 0.88)
        elif roll < 0.27:
            peak = threshold * rng.uniform(0.9, 0.995)
        else:
            peak = threshold * rng.uniform(1.0, 1.45)
        verdict = _verdict(platform, gpu, threshold, peak)
        results[name] = {
            "platform": platform,
            "gpu_architecture": gpu,
            "outcome": "Failed" if verdict["verdict"] == "fail" else "Complete",
            "run_id": "synthetic-%d" % count,
            "namespace": "burnin",
            "trainjob": "nccl-all-reduce-%03d" % index,
            "started": "2026-12-01T10:00:00Z",
            "finished": "2026-12-01T10:06:00Z",
            "verdicts": [verdict],
        }
    return results
