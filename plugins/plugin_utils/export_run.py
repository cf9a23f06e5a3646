# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""What gpufleet.burnin.burnin_export does: the run's metrics file written, its metrics pushed to a Pushgateway (one
group per cluster) and its JSON report posted (the requests: plugin_utils/_http.py; what is sent and retried:
module_utils/reporting/export.py and metrics.py). A push or post that fails is a note in the result, never a
failure."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import read_unlinked, safe_name, write_file
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import export, metrics
from ansible_collections.gpufleet.burnin.plugins.plugin_utils._http import request as _request

try:
    from prometheus_client.exposition import push_to_gateway
except ImportError:  # pragma: no cover - a controller requirement; metrics.build_families names it
    push_to_gateway = None

# A JSON report larger than this is not one of this collection's (a fleet of 1000 clusters stays well below).
MAX_REPORT_BYTES = 64 << 20


def run_export(args, check_mode=False):
    """burnin_export's options ARGS carried out: {changed, files, pushed, export, notes, series}; {failed, msg} when an
    option or the report is wrong or the metrics file cannot be written."""
    result = {"changed": False, "files": [], "pushed": [], "export": {}, "notes": []}
    try:
        checked = _check(args)
        report, body = _load(args["report"])
        if args["metrics_dir"] or args["pushgateway_url"]:
            _metrics(args, checked, report, result, check_mode)
        if args["export_url"] and not check_mode:
            _export(args, checked, body, result)
    except BurninError as exc:
        result.update(failed=True, msg=str(exc))
    except (IOError, OSError) as exc:
        result.update(failed=True, msg="cannot write the metrics into %s: %s" % (args["metrics_dir"], exc))
    return result


def _check(args):
    """The delivery options checked: URLs, headers, attempts, backoff, timeout; no secret sent over plain HTTP."""
    checked = {
        "pushgateway_url": export.check_url("pushgateway_url", args["pushgateway_url"]),
        "export_url": export.check_url("export_url", args["export_url"]),
        "headers": export.check_headers("export_headers", args["export_headers"]),
        "attempts": export.check_count("attempts", args["attempts"], 1, export.MAX_ATTEMPTS),
        "backoff": export.check_backoff("backoff", args["backoff"]),
        "timeout": export.check_count("timeout", args["timeout"], 1, export.MAX_TIMEOUT),
    }
    export.check_insecure("pushgateway_url", checked["pushgateway_url"], allow=args["allow_insecure"])
    export.check_insecure("export_url", checked["export_url"], checked["headers"], allow=args["allow_insecure"])
    return checked


def _load(path):
    """(report, its bytes) of the run's JSON report at PATH, bounded and checked."""
    data = read_unlinked(path)
    if data is None:
        raise BurninError("report: %s is not a file (the run's JSON report, burnin_report_formats: json)" % path)
    if len(data) > MAX_REPORT_BYTES:
        raise BurninError("report: %s is larger than %d bytes" % (path, MAX_REPORT_BYTES))
    try:
        report = json.loads(data.decode("utf-8"))
    except ValueError as exc:
        raise BurninError("report: %s is not JSON: %s" % (path, exc))
    if not isinstance(report, dict) or not isinstance(report.get("clusters"), list):
        raise BurninError("report: %s is not a JSON report of gpufleet.burnin (no 'clusters' list)" % path)
    return report, data


def _metrics(args, checked, report, result, check_mode):
    families = metrics.build_families(report, max_series=args["max_series"])
    result["series"] = metrics.series_count(families)
    if args["metrics_dir"]:
        name = safe_name("gpufleet-burnin-%s.prom" % args["run_id"])
        content = metrics.exposition(families)
        changed = True
        if check_mode:
            changed = read_unlinked("%s/%s" % (args["metrics_dir"], name)) != content.encode("utf-8")
        else:
            path, changed = write_file(args["metrics_dir"], name, content)
            result["files"].append(path)
        result["changed"] = result["changed"] or changed
    if args["pushgateway_url"] and not check_mode:
        if push_to_gateway is None:
            raise BurninError("pushgateway_url: needs the Python package prometheus-client on the controller")
        _push(args, checked, report, result)


def _push(args, checked, report, result):
    """One group per cluster (grouping key job + cluster), replaced by the cluster's next run (PUT). The budget is
    fleet-wide: once a group was not answered on all its attempts, the later groups are skipped (a Pushgateway that
    does not answer would otherwise cost attempts x timeout per cluster)."""
    url = checked["pushgateway_url"]
    clusters = sorted(set(str(entry.get("cluster")) for entry in report.get("clusters") or [] if isinstance(entry, dict) and entry.get("cluster")))
    failed = []
    skipped = []
    for cluster in clusters:
        if failed and export.unanswered(failed[0][1]):
            skipped.append(cluster)
            continue
        registry = metrics.registry(metrics.build_families(report, max_series=args["max_series"], clusters=[cluster]))

        def send(cluster=cluster, registry=registry):
            answer = {"status": None, "error": "not sent"}

            def handler(url, method, timeout, headers, data):
                def call():
                    answer["status"], answer["error"] = _request(url, method, data, dict(headers), timeout, args["validate_certs"])

                return call

            try:
                push_to_gateway(
                    url, job=args["pushgateway_job"], registry=registry, grouping_key={"cluster": cluster}, timeout=checked["timeout"], handler=handler
                )
            except (ValueError, OSError) as exc:  # the client's own checks (a grouping key it cannot encode)
                return None, "not sent: %s" % exc.__class__.__name__
            return answer["status"], answer["error"]

        outcome = export.deliver(send, checked["attempts"], checked["backoff"])
        result["pushed"].append(dict(outcome, cluster=cluster))
        if not outcome["ok"]:
            failed.append((cluster, outcome))
    for cluster in skipped:
        result["pushed"].append({"ok": False, "attempts": 0, "status": None, "error": "skipped", "statuses": [], "cluster": cluster})
    if failed:
        cluster, outcome = failed[0]
        more = " (and %d more cluster(s))" % (len(failed) - 1) if len(failed) > 1 else ""
        result["notes"].append(export.note("metrics push of %s%s" % (cluster, more), url, outcome))
    if skipped:
        result["notes"].append(
            "metrics push to %s: %d later cluster group(s) skipped, the Pushgateway did not answer %s" % (export.shown_url(url), len(skipped), failed[0][0])
        )
    elif clusters and not failed:
        result["notes"].append(export.note("metrics push (%d cluster group(s))" % len(clusters), url, result["pushed"][-1]))


def _export(args, checked, body, result):
    headers = export.webhook_headers(args["run_id"], checked["headers"])

    def send():
        return _request(checked["export_url"], "POST", body, headers, checked["timeout"], args["validate_certs"])

    outcome = export.deliver(send, checked["attempts"], checked["backoff"])
    result["export"] = dict(outcome, url=export.shown_url(checked["export_url"]), headers=export.shown_headers(headers))
    result["notes"].append(export.note("report export", checked["export_url"], outcome))


__all__ = ["MAX_REPORT_BYTES", "run_export"]
