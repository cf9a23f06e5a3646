# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The nccl-tests judge: grading a parsed nccl-tests result against its thresholds (:func:`judge`), a whole run from
its output and pod logs (:func:`nccl_verdict`), one pod of a node stage (:func:`judge_nccl_pod`).

A verdict is ``pass``, ``warn``, ``fail`` or ``error`` (no result), always with a reason. The thresholds (their
data, checking and selection) are in plugins/module_utils/judging/thresholds.py, the node and pod attribution in
plugins/module_utils/judging/attribution.py; plugins/module_utils/judging/verdict.py dispatches a run to this judge
or to another kind's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import nccl_results, transport
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.attribution import (
    _log_items,
    attribute,
    cut_notes,
    find_nccl_output,
    job_check,
    pod_for_host,
)
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import worst
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.thresholds import nic_share, nodes_label, range_label, select_thresholds
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import platform_catalog

# Checks that are evidence of a fault when they fail (wrong elements, nccl-tests' own checks, failure lines naming
# hosts, a known wrong transport, a failed job that left output).
EVIDENCE_CHECKS = ("wrong", "min_bw", "errors", "transport", "job")


def _gb(value):
    return "n/a" if value is None else ("%.1f" % value if value < 1000 else "%.0f" % value)


def _grade(value, record):
    if value >= record["pass"]:
        return "pass"
    if record["warn"] is not None and value >= record["warn"]:
        return "warn"
    return "fail"


def _bounds(record):
    text = ">= %s GB/s" % _gb(record["pass"])
    if record["warn"] is not None:
        text += ", warn >= %s" % _gb(record["warn"])
    return text


def _threshold_summary(record):
    return {
        "id": record["id"],
        "metric": record["metric"],
        "origin": record["origin"],
        "pass": record["pass"],
        "warn": record["warn"],
        "expected": record["expected"],
        "derived": record["derived"],
        "size": record["size"],
        "min_size": record["min_size"],
        "side": record["side"],
        "sweep": record["sweep"],
        "nodes": nodes_label(record["nodes"]),
        "source": record["source"],
        "note": record["note"],
        "ranges": [dict(item, label=range_label(item)) for item in record.get("ranges") or []],
    }


def _side_value(row, side):
    oop, ip = (row.get("oop") or {}).get("busbw"), (row.get("ip") or {}).get("busbw")
    if side == "in_place":
        return ip, "in-place"
    if side == "both":
        values = [value for value in (oop, ip) if value is not None]
        return (min(values) if values else None), "lower of out-of-place and in-place"
    if oop is None:
        return ip, "in-place (no out-of-place column)"
    return oop, "out-of-place"


def _peak_check(result, record):
    rows = sorted(result.get("rows") or [], key=lambda row: row["size"])
    check = {"name": "peak", "threshold": record["id"], "pass": record["pass"], "warn": record["warn"], "value": None, "size": None}
    label = "%s (%s)" % (record["id"], _bounds(record))
    if not rows:
        check.update(verdict="error", reason="no result rows to judge against %s" % label)
        return check
    if record["size"] is not None:
        matching = [row for row in rows if row["size"] == record["size"]]
        if not matching:
            check.update(
                verdict="warn",
                reason="busbw not measured at %s (the run covers %s..%s): %s not judged"
                % (nccl_results.size_label(record["size"]), nccl_results.size_label(rows[0]["size"]), nccl_results.size_label(rows[-1]["size"]), record["id"]),
            )
            return check
        row = matching[-1]
    else:
        row = rows[-1]
        if record["min_size"] is not None and row["size"] < record["min_size"]:
            check.update(
                size=row["size"],
                value=_side_value(row, record["side"])[0],
                verdict="warn",
                reason="largest size %s is below the %s that %s was measured at: not comparable"
                % (nccl_results.size_label(row["size"]), nccl_results.size_label(record["min_size"]), record["id"]),
            )
            return check
    value, side_text = _side_value(row, record["side"])
    check.update(size=row["size"], side=side_text, value=value)
    if value is None:
        check.update(verdict="error", reason="no busbw at %s to judge against %s" % (nccl_results.size_label(row["size"]), label))
        return check
    verdict = _grade(value, record)
    where = "busbw %s GB/s at %s (%s)" % (_gb(value), nccl_results.size_label(row["size"]), side_text)
    if verdict == "warn":
        reason = "%s is below %s GB/s but above %s GB/s, in the warning band of %s" % (where, _gb(record["pass"]), _gb(record["warn"]), record["id"])
    else:
        reason = "%s %s %s" % (where, "meets" if verdict == "pass" else "is below", label)
    check.update(verdict=verdict, reason=reason)
    return check


_SIDE_TEXT = {"out_of_place": "out-of-place", "in_place": "in-place", "both": "lower of out-of-place and in-place"}


def _sizes_values(rows):
    return ", ".join("%s %s" % (nccl_results.size_label(row["size"]), _gb(row["value"])) for row in rows) + " GB/s"


def _range_check(result, record):
    """Every row whose size lies in one of the record's ranges is judged against that range's pass/warn; the check's
    value, size, pass and warn are those of the row with the lowest margin; the reason names each size that fell
    short. A range the run has no row in is not judged (warn), like a peak measured at a size the run lacks."""
    rows = sorted(result.get("rows") or [], key=lambda row: row["size"])
    side_text = _SIDE_TEXT[record["side"]]
    check = {"name": "range", "threshold": record["id"], "pass": None, "warn": None, "value": None, "size": None, "side": side_text, "rows": []}
    if not rows:
        check.update(verdict="error", reason="no result rows to judge against %s" % record["id"])
        return check
    parts, uncovered = [], []
    for item in record["ranges"]:
        label = range_label(item)
        inside = [row for row in rows if row["size"] >= item["min"] and (item["max"] is None or row["size"] <= item["max"])]
        judged = []
        for row in inside:
            value = _side_value(row, record["side"])[0]
            if value is not None:
                judged.append({"size": row["size"], "value": value, "pass": item["pass"], "warn": item["warn"], "range": label, "verdict": _grade(value, item)})
        if not judged:
            uncovered.append(label)
            continue
        check["rows"].extend(judged)
        failed = [row for row in judged if row["verdict"] == "fail"]
        warned = [row for row in judged if row["verdict"] == "warn"]
        if failed:
            parts.append("busbw (%s) below %s in %s (%s) at %s" % (side_text, record["id"], label, _bounds(item), _sizes_values(failed)))
        if warned:
            parts.append("busbw (%s) in the warning band of %s in %s (%s) at %s" % (side_text, record["id"], label, _bounds(item), _sizes_values(warned)))
    if not check["rows"]:
        check.update(
            verdict="warn",
            reason="no size of the run (%s..%s) lies in %s of %s: not judged"
            % (nccl_results.size_label(rows[0]["size"]), nccl_results.size_label(rows[-1]["size"]), ", ".join(uncovered), record["id"]),
        )
        return check
    lowest = min(check["rows"], key=lambda row: (row["value"] - row["pass"]) / row["pass"] if row["pass"] else row["value"])
    check.update(value=lowest["value"], size=lowest["size"], warn=lowest["warn"])
    check["pass"] = lowest["pass"]
    verdict = worst(row["verdict"] for row in check["rows"])
    if uncovered:
        verdict = worst((verdict, "warn"))
        parts.append("the run has no size in %s of %s: not judged there" % (", ".join(uncovered), record["id"]))
    if not parts:
        parts.append(
            "busbw (%s) meets %s at all %d sizes in %s (lowest %s GB/s at %s)"
            % (
                side_text,
                record["id"],
                len(check["rows"]),
                ", ".join("%s (%s)" % (range_label(item), _bounds(item)) for item in record["ranges"]),
                _gb(lowest["value"]),
                nccl_results.size_label(lowest["size"]),
            )
        )
    check.update(verdict=verdict, reason="; ".join(parts))
    return check


def _avg_check(result, record):
    check = {"name": "avg", "threshold": record["id"], "pass": record["pass"], "warn": record["warn"], "value": result.get("avg_busbw")}
    label = "%s (%s)" % (record["id"], _bounds(record))
    value = result.get("avg_busbw")
    if value is None:
        check.update(verdict="error", reason="no '# Avg bus bandwidth' value to judge against %s" % label)
        return check
    sweep = record["sweep"] or {}
    config = result.get("config") or {}
    rows = sorted(result.get("rows") or [], key=lambda row: row["size"])
    run_min = config.get("min_bytes", rows[0]["size"] if rows else None)
    run_max = config.get("max_bytes", rows[-1]["size"] if rows else None)
    for key, actual in (("min", run_min), ("max", run_max)):
        if key in sweep and actual is not None and actual != sweep[key]:
            check.update(
                verdict="warn",
                reason="the run's sweep %s..%s differs from the %s..%s that %s averages over: not comparable"
                % (
                    nccl_results.size_label(run_min),
                    nccl_results.size_label(run_max),
                    nccl_results.size_label(sweep.get("min")) if "min" in sweep else "?",
                    nccl_results.size_label(sweep.get("max")) if "max" in sweep else "?",
                    record["id"],
                ),
            )
            return check
    verdict = _grade(value, record)
    if verdict == "warn":
        reason = "average busbw %s GB/s is below %s GB/s but above %s GB/s, in the warning band of %s" % (
            _gb(value),
            _gb(record["pass"]),
            _gb(record["warn"]),
            record["id"],
        )
    else:
        reason = "average busbw %s GB/s %s %s" % (_gb(value), "meets" if verdict == "pass" else "is below", label)
    check.update(verdict=verdict, reason=reason)
    return check


def _sizes_text(sizes):
    return ", ".join(nccl_results.size_label(size) for size in sizes[:6]) + (", ..." if len(sizes) > 6 else "")


def judge(output, facts=None, job=None, judging=None):
    """Judge one burn-in: what was read of its nccl-tests output, the TrainJob's outcome, the thresholds.

    ``output``: {result: a parsed nccl-tests result or None, error: why there is no result (a parse error, reported as
    the ``error`` verdict), transport: what :func:`transport.parse_transport` read from the logs, judged as the
    ``transport`` check, or None}. ``facts``: platform, gpu_architecture, nodes, gpus_per_node, mnnvl, instance_type;
    one_nic_of (a run limited to one of the node's that many NICs, the isolation's NIC runs: held to one NIC's share of
    the thresholds). ``job``: outcome, reason, pods (the pod and node of each host of the transport evidence).
    ``judging``: collective (all_reduce, all_gather, ...; default: the result's; None with no result judges a non-NCCL
    workload by its job outcome only), thresholds, overrides, on_missing (the verdict when no threshold matches: warn,
    pass or fail), workload, expected_transport (a transport id; None: what the platform catalogue expects).
    Returns {workload, collective, verdict, reason, checks, notes, thresholds, metrics, series, facts, errors, warnings,
    problems, transport}; each check has name, verdict, reason (and value, size, threshold where they apply); a check
    with ``note: true`` is information that never decides the verdict (its reason is in ``notes``, not ``reason``).
    """
    output, job, judging = output or {}, job or {}, judging or {}
    result, error = output.get("result"), output.get("error")
    job_outcome, job_reason = job.get("outcome"), job.get("reason")
    on_missing, thresholds, overrides = judging.get("on_missing", "warn"), judging.get("thresholds"), judging.get("overrides")
    facts = dict(facts or {})
    if on_missing not in ("pass", "warn", "fail"):
        raise ConfigError("on_missing", "must be pass, warn or fail, got %r" % (on_missing,))
    if result is not None and not isinstance(result, dict):
        raise ConfigError("result", "must be a parsed nccl-tests result (gpufleet.burnin.nccl_results), got %s" % type(result).__name__)
    collective = nccl_results.program_collective(judging.get("collective") or (result or {}).get("collective"))
    checks = []
    if job_outcome:
        checks.append(job_check(job_outcome, job_reason, result is not None or error is not None, bool(collective)))
    if error:
        checks.append({"name": "result", "verdict": "error", "reason": "no result: %s" % error})
    elif result is None and collective:
        checks.append({"name": "result", "verdict": "error", "reason": "no result: no nccl-tests output to judge"})
    chosen = {}
    if result is not None:
        checks.extend(_result_checks(result))
        if result.get("complete", True) and collective:
            chosen = select_thresholds(facts, collective, thresholds, overrides)
            if facts.get("one_nic_of"):
                chosen = dict((metric, nic_share(record, facts["one_nic_of"])) for metric, record in chosen.items())
            judged = False
            for metric, builder in (("peak", _peak_check), ("avg", _avg_check), ("range", _range_check)):
                if chosen.get(metric):
                    checks.append(builder(result, chosen[metric]))
                    judged = True
            if not judged:
                checks.append(
                    {
                        "name": "threshold",
                        "verdict": on_missing,
                        "reason": "no threshold for %s/%s %s on %s node(s)%s: busbw not judged"
                        % (
                            facts.get("platform") or "?",
                            facts.get("gpu_architecture") or "?",
                            collective,
                            facts.get("nodes") or "?",
                            "" if facts.get("mnnvl") is None else (" with MNNVL" if facts.get("mnnvl") else " without MNNVL"),
                        ),
                    }
                )
        elif collective is None:
            checks.append({"name": "threshold", "verdict": on_missing, "reason": "the output does not name its collective: busbw not judged"})
    if output.get("transport") is not None:
        expected = _expected_transport(facts, judging.get("expected_transport"))
        checks.append(transport.check(output["transport"], expected, facts, _locator(job.get("pods"))))
    if not [check for check in checks if not check.get("note")]:
        checks.append({"name": "result", "verdict": "error", "reason": "no result and no job outcome to judge"})
    rank_evidence(checks)
    verdict = worst(check["verdict"] for check in checks)
    # A wrong transport explains the busbw that comes with it (a fall back to sockets misses every threshold): it leads;
    # a missing result explained by evidence (rank_evidence) comes last.
    deciding = sorted(
        (check for check in checks if check["verdict"] == verdict and not check.get("note")),
        key=lambda check: (check["name"] != "transport", check["name"] == "result"),
    )
    reasons = [check["reason"] for check in deciding]
    proof = [check for check in checks if check["name"] == "transport"]
    return {
        "workload": judging.get("workload"),
        "collective": collective,
        "verdict": verdict,
        "reason": "; ".join(reasons),
        "checks": checks,
        "notes": [check["reason"] for check in checks if check.get("note")],
        "transport": dict((key, proof[0].get(key)) for key in ("verdict", "expected", "expected_source", "seen", "nvls", "mnnvl")) if proof else None,
        "thresholds": [_threshold_summary(record) for metric, record in sorted(chosen.items()) if record],
        "metrics": _metrics(result),
        "series": nccl_results.series(result),
        "facts": facts,
        "errors": list((result or {}).get("errors") or [])[:10],
        "warnings": len((result or {}).get("warnings") or []),
        "problems": list((result or {}).get("problems") or []),
    }


def _expected_transport(facts, given):
    """{transport, source} the logs must show: GIVEN (a transport id) or what the platform catalogue expects for FACTS."""
    if given is not None:
        return {"transport": given, "source": "given"}
    return platform_catalog.expected_transport(facts.get("platform"), facts.get("gpu_architecture"), facts.get("instance_type"))


def _locator(pods):
    """host -> {pod, node} of the PODS, for the transport check's evidence."""

    def locate(host):
        name = pod_for_host(pods or [], host)
        nodes = [(pod.get("spec") or {}).get("nodeName") for pod in pods or [] if (pod.get("metadata") or {}).get("name") == name]
        return {"pod": name, "node": nodes[0] if nodes else None}

    return locate


def rank_evidence(checks):
    """The ranking of a verdict's checks, written once: evidence of a fault outranks a missing result.

    ``worst`` orders pass < warn < fail < error. A ``result`` check is ``error`` (could not judge) only while no
    other check is evidence of a fault (EVIDENCE_CHECKS failing, not as a note): a run that crashed part-way, whose
    table stops and whose log names the failing hosts, is a failed run, not an unjudged one. CHECKS is changed in place.
    """
    evidence = [check for check in checks if check["name"] in EVIDENCE_CHECKS and check["verdict"] == "fail" and not check.get("note")]
    if evidence:
        for check in checks:
            if check["name"] == "result" and check["verdict"] == "error":
                check["verdict"] = "fail"
                check["reason"] += " (explained by: %s)" % evidence[0]["reason"][:200]
    return checks


def _hosts_text(hosts):
    names = sorted(hosts)
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")


def _result_checks(result):
    checks = []
    if not result.get("complete", True):
        problems = result.get("problems") or ["the output is incomplete"]
        if result.get("rows") or result.get("format") != "text":
            checks.append({"name": "result", "verdict": "error", "reason": "no complete result: %s" % problems[0]})
        else:
            # a log without a table: what it holds (versions, hosts, failing hosts) is its result, no bandwidth is
            checks.append({"name": "result", "verdict": "error", "reason": "no result: %s: %s" % (nccl_results.SOURCE, problems[0])})
    wrong = result.get("wrong_total") or 0
    if wrong:
        checks.append(
            {
                "name": "wrong",
                "verdict": "fail",
                "value": wrong,
                "reason": "%d wrong elements (#wrong) at %s" % (wrong, _sizes_text(result.get("wrong_sizes") or [])),
            }
        )
    elif result.get("out_of_bounds"):
        checks.append(
            {
                "name": "wrong",
                "verdict": "fail",
                "value": result["out_of_bounds"],
                "reason": "%d out-of-bounds values reported by nccl-tests" % result["out_of_bounds"],
            }
        )
    if result.get("avg_busbw_check") == "FAILED":
        checks.append(
            {
                "name": "min_bw",
                "verdict": "fail",
                "value": result.get("avg_busbw"),
                "reason": "nccl-tests' own NCCL_TESTS_MIN_BW check failed (average %s GB/s)" % _gb(result.get("avg_busbw")),
            }
        )
    failed_hosts = result.get("failed_hosts") or {}
    if failed_hosts:
        first = failed_hosts[sorted(failed_hosts)[0]]
        checks.append(
            {
                "name": "errors",
                "verdict": "fail",
                "hosts": sorted(failed_hosts),
                "reason": "the log names failing host(s) %s: %s" % (_hosts_text(failed_hosts), first[:300]),
            }
        )
    elif result.get("errors"):
        checks.append({"name": "errors", "verdict": "fail", "reason": "the test reported: %s" % result["errors"][0]})
    return checks


def _metrics(result):
    if not result:
        return {}
    return dict(
        (key, result.get(key))
        for key in (
            "program",
            "largest_size",
            "peak_busbw",
            "peak_busbw_in_place",
            "avg_busbw",
            "max_busbw",
            "max_busbw_size",
            "wrong_total",
            "out_of_bounds",
            "nccl_version",
            "nccl_tests_version",
            "cuda_version",
            "complete",
            "hosts",
        )
    )


def nccl_verdict(output, facts=None, job=None, judging=None):
    """The verdict of an nccl-tests run (or of a torch or exec run, by its job outcome and failure lines).

    ``output``: nccl-tests output as text, a parsed result, the ``-J`` JSON (text or dict), k8s_log loop results
    (the log holding the table is found), or None (no output, e.g. a torch or exec workload). ``job``: outcome, reason,
    pods, pod_logs; ``judging``: collective, thresholds, overrides, on_missing, workload, allow_partial,
    expected_transport. The logs' NCCL INFO lines are the transport proof, judged against ``expected_transport`` (a
    transport id of :data:`transport.TRANSPORTS`) or, when it is None, what the platform catalogue expects for the
    facts' platform, gpu_architecture and instance_type.
    """
    facts, job, judging = dict(facts or {}), job or {}, judging or {}
    pods, pod_logs, collective = job.get("pods"), job.get("pod_logs"), judging.get("collective")
    expected_transport = judging.get("expected_transport")
    if expected_transport is not None and expected_transport not in transport.TRANSPORTS:
        raise ConfigError("expected_transport", "must be one of %s, got %r" % (", ".join(sorted(transport.TRANSPORTS)), expected_transport))
    texts = None
    if isinstance(pod_logs, (dict, list)) and pod_logs:
        texts = dict((name, text) for name, (text, dummy) in _log_items(pod_logs).items())
    elif isinstance(output, list) and output and all(isinstance(item, dict) for item in output):
        texts = dict((name, text) for name, (text, dummy) in _log_items(output).items())
    elif isinstance(output, str) and output:
        texts = {"output": output}
    result = None
    error = None
    source_pod = None
    if isinstance(output, list) and output and all(isinstance(item, dict) for item in output):
        if pod_logs is None:
            pod_logs = output
        logs = output
        source_pod, output = find_nccl_output(logs, pods, require_table=not collective)
        if output is None and collective:
            error = "no pod log holds nccl-tests output"
        elif output is None:
            # A torch or exec run: no table to judge, but a log that names failing hosts (NCCL WARN faults, Cuda
            # failures, watchdog timeouts) is evidence of a fault all the same (tests/fixtures/real/nccl).
            source_pod, result = _failure_evidence(logs)
    if isinstance(output, dict) and "rows" in output and "format" in output:
        result = output
    elif result is None and output is not None and output != "" and output != []:
        try:
            result = nccl_results.parse_nccl_output(output, collective=collective, allow_partial=judging.get("allow_partial", True))
        except nccl_results.NcclParseError as exc:
            error = str(exc)
        except ConfigError as exc:
            if exc.field != "collective":
                raise
            error = str(exc)
    # No pod log at all (a job that timed out before any pod ran) is no output, like None: not unreadable output,
    # which would count as output and make a timed-out job a failed one.
    if output not in (None, "", []) and error is None and result is None:
        error = "nccl-tests output could not be read"
    evidence = transport.parse_transport(texts) if texts is not None else None
    verdict = judge({"result": result, "error": error, "transport": evidence}, facts, job, judging)
    verdict["output_pod"] = source_pod
    verdict["notes"] = list(verdict.get("notes") or []) + cut_notes(pod_logs)
    if pods is not None or pod_logs is not None:
        attribution = attribute(pods or [], pod_logs, result, job.get("outcome"))
        verdict["attribution"] = attribution
        for key in ("nodes", "succeeded_nodes", "failed_nodes"):
            verdict[key] = attribution[key]
    return verdict


def judge_nccl_pod(output, facts, job, judging):
    """One pod's single-node nccl-tests output (OUTPUT, its log text) judged as a 1-node run: the verdict of
    :func:`judge` (peak and avg checks against the ``nodes: 1`` thresholds of JUDGING's collective, thresholds,
    overrides, on_missing), or None when the log holds no nccl-tests output."""
    text = output
    if not text or not ("# Avg bus bandwidth" in text or "Collective test starting" in text or "#       size" in text or '"results"' in text):
        return None
    error = result = None
    collective = judging.get("collective")
    try:
        result = nccl_results.parse_nccl_output(text, collective=collective, allow_partial=True)
    except (nccl_results.NcclParseError, ConfigError) as exc:
        error = str(exc)
    one_node = {
        "collective": collective,
        "thresholds": judging.get("thresholds"),
        "overrides": judging.get("overrides"),
        "on_missing": judging.get("on_missing", "warn"),
    }
    return judge({"result": result, "error": error}, dict(facts, nodes=1), {}, one_node)


def _failure_evidence(pod_logs):
    """(pod name, partial nccl_results result) of the first log (by pod name) whose failure lines name hosts, or
    (None, None): what a run without a table still proves."""
    for name, (text, dummy) in sorted(_log_items(pod_logs).items()):
        if not text:
            continue
        try:
            parsed = nccl_results.parse_nccl_output(text, allow_partial=True)
        except (nccl_results.NcclParseError, ConfigError):
            continue
        if parsed.get("errors"):
            return name, parsed
    return None, None


__all__ = ["EVIDENCE_CHECKS", "judge", "judge_nccl_pod", "nccl_verdict", "rank_evidence"]
