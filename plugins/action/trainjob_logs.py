# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.trainjob_logs (documentation in plugins/modules/trainjob_logs.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import TRAINJOB_LOGS_OWN, trainjob_logs_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import classify
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import (
    JOBSET_NAME,
    POD_HIDDEN,
    collect,
    not_started,
    pod_name,
    reads_whole,
    write_logs,
)
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.polling import poll_until
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase, ModuleExit, api_client_of, k8s_reader, pod_log, server_of

NAME = "gpufleet.burnin.trainjob_logs"


class ActionModule(K8sActionBase):
    """List a TrainJob's pods and read their logs with kubernetes.core's client, in the controller's worker process."""

    _supports_check_mode = True
    OWN = TRAINJOB_LOGS_OWN
    NAME = NAME
    SPEC = staticmethod(trainjob_logs_spec)
    NON_NEGATIVE = ("tail_lines", "unreachable_grace", "max_bytes")

    def run_with(self, result, args, auth):
        if self._task.check_mode:
            return dict(result, changed=False, skipped=True, results=[], pods=[], summary={}, msg="check mode: no TrainJob ran")
        try:
            reader = k8s_reader(dict(auth, kind="Pod", api_version="v1"), NAME)
        except ModuleExit as exc:
            return dict(result, failed=True, msg=exc.result.get("msg"))
        server = server_of(reader, auth)

        def list_pods():
            found = reader.find("Pod", "v1", namespace=args["namespace"], hidden_fields=POD_HIDDEN, label_selectors=["%s=%s" % (JOBSET_NAME, args["name"])])
            return sorted(found.get("resources") or [], key=pod_name)

        # A cluster that stops answering for a moment keeps the logs: the listing is retried as the wait's reads are.
        listed = poll_until(list_pods, lambda pods: True, args["unreachable_grace"], 1, args["unreachable_grace"], context=auth.get("context"), server=server)
        if listed["state"] != "done":
            error = listed["error"]
            return dict(result, failed=True, error=self.shown_error(error), msg="listing the pods of TrainJob %s: %s" % (args["name"], error["message"]))
        api_client = api_client_of(reader)
        read = {}
        cuts = dict(args["early_cuts"])
        for pod in listed["value"]:
            if not_started(pod):
                read[pod_name(pod)] = (None, not_started(pod))
                continue
            tail = None if reads_whole(pod, args["whole_logs_of"]) else args["tail_lines"]
            try:
                read[pod_name(pod)] = (pod_log(api_client, pod, tail, args["max_bytes"], cuts), None)
            # Recorded per pod: one unreadable pod does not lose the others' logs.
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                read[pod_name(pod)] = (None, classify(str(exc), context=auth.get("context"), server=server)["message"])
        result.update(changed=False, **collect(listed["value"], read, args["seen_pods"], args["early_logs"], cuts))
        if args["log_dir"]:
            try:
                result["log_files"], result["changed"] = write_logs(args["log_dir"], result["results"])
            except (IOError, OSError) as exc:
                return dict(result, failed=True, msg="cannot write the logs into %s: %s" % (args["log_dir"], exc))
        return result
