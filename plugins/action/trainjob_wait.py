# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.trainjob_wait (documentation in plugins/modules/trainjob_wait.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import TRAINJOB_WAIT_OWN, trainjob_wait_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import JOBSET_NAME, POD_HIDDEN, has_ended_once
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.polling import poll_until
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit, api_client_of, k8s_reader, pod_log, server_of

NAME = "gpufleet.burnin.trainjob_wait"
TERMINAL = ("Complete", "Failed")
KEPT_CONDITION_KEYS = ("type", "status", "reason", "message")


def terminal_conditions(trainjob):
    conditions = ((trainjob or {}).get("status") or {}).get("conditions") or []
    return [c for c in conditions if c.get("type") in TERMINAL and c.get("status") == "True"]


def outcome_of(polled, name, timeout):
    """The role's outcome record for a finished poll: outcome, reason, conditions (and error)."""
    trainjob = polled["value"]
    conditions = ((trainjob or {}).get("status") or {}).get("conditions") or []
    kept = [dict((k, c[k]) for k in KEPT_CONDITION_KEYS if k in c) for c in conditions]
    out = {"conditions": kept, "polls": polled["polls"]}
    if polled["state"] == "done":
        final = terminal_conditions(trainjob)[0]
        reason = ("%s: %s" % (final.get("reason") or "", final.get("message") or "")).strip(": ")
        out.update(outcome=final["type"], reason=reason)
    elif polled["state"] == "timeout":
        out.update(
            outcome="Timeout",
            reason="no Complete or Failed condition after %d s (conditions: %s)" % (timeout, ", ".join(c.get("type", "") for c in conditions) or "none"),
        )
    elif polled["state"] == "unreachable":
        out.update(
            outcome="Unreachable",
            reason="%s Gave up waiting for TrainJob %s after %s s without an answer." % (polled["error"]["message"], name, polled["unreachable_seconds"]),
        )
    else:
        out.update(outcome="Error", reason="reading TrainJob %s: %s" % (name, polled["error"]["message"]))
    if polled.get("error"):
        out["error"] = polled["error"]
    return out


class ActionModule(K8sActionBase):
    """Poll one TrainJob with kubernetes.core's client in the worker process until it ends."""

    _supports_check_mode = True
    OWN = TRAINJOB_WAIT_OWN
    NAME = NAME
    SPEC = staticmethod(trainjob_wait_spec)
    NON_NEGATIVE = ("timeout", "poll_interval", "unreachable_grace")

    def run_with(self, result, args, auth):
        if self._task.check_mode:
            # A dry run created no TrainJob: nothing to wait for.
            return dict(result, changed=False, skipped=True, outcome="Skipped", reason="check mode: nothing was created")
        try:
            reader = k8s_reader(dict(auth, kind="TrainJob", api_version=args["api_version"]), NAME)
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))

        seen_pods, logs, cuts = {}, {}, {}
        api_client = api_client_of(reader)

        def read():
            found = reader.find(
                "TrainJob", args["api_version"], name=args["name"], namespace=args["namespace"], hidden_fields=["metadata.managedFields", "spec"]
            )
            if not found.get("api_found", True):
                raise LookupError(found.get("msg"))
            resources = found.get("resources") or []
            if not resources:
                raise LookupError('TrainJob "%s" not found in namespace "%s" (it was deleted)' % (args["name"], args["namespace"]))
            if args["record_pods"]:
                # Controllers remove pods once a job ends (JobSet ends the MPI workers when the launcher is done, the
                # Job controller removes a failed Job's pods): the last look at each is what says where it ran.
                pods = reader.find("Pod", "v1", namespace=args["namespace"], hidden_fields=POD_HIDDEN, label_selectors=["%s=%s" % (JOBSET_NAME, args["name"])])
                for pod in pods.get("resources") or []:
                    seen_pods[pod["metadata"]["name"]] = pod
                    # A pod that ended, or crash-loops, is removed by its Job once the Job gives up: read its log now.
                    if pod["metadata"]["name"] not in logs and has_ended_once(pod):
                        try:
                            logs[pod["metadata"]["name"]] = pod_log(api_client, pod, cuts=cuts)
                        # Read again at the next look.
                        except Exception:  # noqa: BLE001 pylint: disable=broad-except
                            pass
            return resources[0]

        server = server_of(reader, auth)
        polled = poll_until(
            read,
            lambda tj: bool(terminal_conditions(tj)),
            args["timeout"],
            args["poll_interval"],
            args["unreachable_grace"],
            context=auth.get("context"),
            server=server,
        )
        result.update(
            changed=False, pods=[seen_pods[key] for key in sorted(seen_pods)], logs=logs, logs_cut=cuts, **outcome_of(polled, args["name"], args["timeout"])
        )
        return result
