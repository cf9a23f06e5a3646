# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The report for CI: JUnit XML of the report document (report.py build_report), a testsuite per cluster with a
testcase per workload and stage and one per node; fail is a failure, error an error, warn passes and says so in its
system-out.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import xml.etree.ElementTree as ET

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.nccl_results import size_label
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.report import heading, xml_text


def _case_details(case):
    lines = ["verdict: %s" % case["verdict"], "reason: %s" % case["reason"]]
    for check in case["checks"]:
        lines.append("  [%s] %s: %s" % (check.get("verdict"), check.get("name"), check.get("reason")))
    metrics = case["metrics"]
    if metrics.get("peak_busbw") is not None:
        lines.append("peak busbw: %s GB/s at %s" % (metrics["peak_busbw"], size_label(metrics.get("largest_size"))))
    if metrics.get("avg_busbw") is not None:
        lines.append("avg busbw: %s GB/s" % metrics["avg_busbw"])
    for key in ("succeeded_nodes", "failed_nodes"):
        if case.get(key):
            lines.append("%s: %s" % (key.replace("_", " "), ", ".join(case[key])))
    for error in case.get("errors") or []:
        lines.append("error: %s" % error)
    return "\n".join(lines)


def render_junit(report):
    summary = report["summary"]
    total_time = sum(cluster["seconds"] or 0.0 for cluster in report["clusters"])
    node_rows = [row for cluster in report["clusters"] for row in cluster.get("nodes") or []]
    suites = ET.Element(
        "testsuites",
        {
            "name": xml_text("gpufleet.burnin " + heading(report)),
            "tests": str(summary["testcases"] + len(node_rows)),
            "failures": str(summary["fail"] + sum(1 for row in node_rows if row["verdict"] == "fail")),
            "errors": str(summary["error"]),
            "skipped": "0",
            "time": "%.3f" % total_time,
            "timestamp": report["generated"],
        },
    )
    for cluster in report["clusters"]:
        cases = cluster["testcases"]
        nodes = cluster.get("nodes") or []
        suite = ET.SubElement(
            suites,
            "testsuite",
            {
                "name": xml_text(cluster["cluster"]),
                "tests": str(len(cases) + len(nodes)),
                "failures": str(sum(1 for case in cases if case["verdict"] == "fail") + sum(1 for row in nodes if row["verdict"] == "fail")),
                "errors": str(sum(1 for case in cases if case["verdict"] == "error")),
                "skipped": "0",
                "time": "%.3f" % (cluster["seconds"] or 0.0),
                "timestamp": cluster["started"] or report["generated"],
                "hostname": xml_text(cluster["cluster"]),
            },
        )
        properties = ET.SubElement(suite, "properties")
        for key in ("platform", "gpu_architecture", "outcome", "namespace", "trainjob", "severity", "action"):
            ET.SubElement(properties, "property", {"name": key, "value": xml_text(cluster.get(key))})
        ET.SubElement(properties, "property", {"name": "run_id", "value": xml_text(report["run_id"])})
        compared = cluster.get("baseline")
        if compared:
            # A regression is a warning: the testcase passes, these properties and its system-out say so.
            for key, value in (
                ("baseline_run_id", compared["run_id"]),
                ("baseline_regressed", "true" if compared["regressed"] else "false"),
                ("baseline_change_percent", "" if compared["change_percent"] is None else "%.2f" % compared["change_percent"]),
                ("baseline_note", compared["note"]),
                ("baseline_regressed_nodes", ", ".join(compared.get("regressed_nodes") or [])),
            ):
                if value:
                    ET.SubElement(properties, "property", {"name": key, "value": xml_text(value)})
        for case in cases:
            element = ET.SubElement(
                suite,
                "testcase",
                {
                    "classname": xml_text("gpufleet.burnin.%s" % cluster["cluster"]),
                    "name": xml_text(case["workload"]),
                    "time": "%.3f" % ((cluster["seconds"] or 0.0) / max(len(cases), 1)),
                },
            )
            details = xml_text(_case_details(case))
            message = xml_text(case["reason"])[:1000]
            if case["verdict"] == "fail":
                ET.SubElement(element, "failure", {"message": message, "type": "fail"}).text = details
            elif case["verdict"] == "error":
                ET.SubElement(element, "error", {"message": message, "type": "error"}).text = details
            ET.SubElement(element, "system-out").text = details if case["verdict"] in ("pass", "warn") else xml_text("verdict: %s" % case["verdict"])
        for stage in cluster.get("stages") or []:
            ET.SubElement(properties, "property", {"name": "stage_%s" % xml_text(stage["stage"]), "value": xml_text(_stage_text(stage))})
        # A testcase per node (its worst finding over the stages): the failing node is a failure of its own.
        for row in nodes:
            element = ET.SubElement(
                suite, "testcase", {"classname": xml_text("gpufleet.burnin.%s.nodes" % cluster["cluster"]), "name": xml_text(row["node"]), "time": "0.000"}
            )
            text = xml_text(
                "verdict: %s\nseverity: %s\naction: %s (%s)\nstages: %s\n%s"
                % (row["verdict"], row.get("severity"), row.get("action"), row.get("action_why") or "", ", ".join(row["stages"]), "\n".join(row["reasons"]))
            )
            if row["verdict"] == "fail":
                ET.SubElement(element, "failure", {"message": xml_text("; ".join(row["reasons"]))[:1000], "type": "fail"}).text = text
            ET.SubElement(element, "system-out").text = text
    if hasattr(ET, "indent"):
        ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _stage_text(stage):
    """One line per stage: its verdict and each attempt's TrainJob and verdict."""
    return "%s: %s" % (
        stage["verdict"],
        ", ".join(
            "attempt %s %s %s" % (attempt.get("attempt"), attempt.get("trainjob") or "-", attempt.get("verdict") or "-") for attempt in stage["attempts"]
        ),
    )
