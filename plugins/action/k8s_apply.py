# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.k8s_apply (documentation in plugins/modules/k8s_apply.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.plugins.action import ActionBase

try:
    from ansible.executor.module_common import _get_action_arg_defaults
except ImportError:  # not in this ansible-core: only group/gpufleet.burnin.k8s module_defaults apply
    _get_action_arg_defaults = None

from ansible_collections.gpufleet.burnin.plugins.module_utils.argspec import K8S_APPLY_OWN, k8s_apply_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.inputs import check_apply_options
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import IMPORT_ERROR, run_k8s

NAME = "gpufleet.burnin.k8s_apply"
HIDDEN_FIELDS = ["metadata.managedFields"]
# What the result keeps of each applied object: the caller has the objects it applied; echoing every spec back
# costs Ansible's main process time per cluster.
KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation")


def object_reference(obj):
    """The identity of an applied object as the server returned it."""
    if not isinstance(obj, dict):
        return obj
    metadata = obj.get("metadata") or {}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
            "metadata": dict((key, metadata[key]) for key in KEPT_METADATA if key in metadata)}


def compact(outcome):
    """kubernetes.core.k8s's result with each object reduced to its reference (diffs are kept whole)."""
    for item in (outcome.get("result") or {}).get("results") or []:
        if isinstance(item, dict) and "result" in item:
            item["result"] = object_reference(item["result"])
    if "results" not in (outcome.get("result") or {}) and "result" in outcome:
        outcome["result"] = object_reference(outcome["result"])
    return outcome


class ActionModule(ActionBase):
    """Server-side apply of a list of objects with kubernetes.core's client, in the controller's worker process."""

    _supports_check_mode = True
    _supports_async = False

    def _kubernetes_core_defaults(self):
        """The authentication options that module_defaults give kubernetes.core.k8s in this task (for example through
        group/kubernetes.core.k8s), so this plugin connects where kubernetes.core's modules in the same play do."""
        if _get_action_arg_defaults is None:
            return {}
        auth = dict((name, option) for name, option in k8s_apply_spec().items() if name not in K8S_APPLY_OWN)
        names = set(auth)
        names.update(alias for option in auth.values() for alias in option.get("aliases", []))
        try:
            # ansible-core's own lookup (private, the same in 2.19 to 2.21), with its template engine.
            defaults = _get_action_arg_defaults("kubernetes.core.k8s", self._task, getattr(self._templar, "_engine", self._templar))
        except (AttributeError, TypeError):
            return {}
        defaults = {key: value for key, value in defaults.items() if key in names}
        return self._templar.template(defaults) if defaults else {}

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        if IMPORT_ERROR is not None:
            return dict(result, failed=True, msg="%s needs the kubernetes.core collection and the kubernetes Python client "
                                                 "on the controller: %s" % (NAME, IMPORT_ERROR))
        self._task.args = dict(self._kubernetes_core_defaults(), **self._task.args)
        validation, args = self.validate_argument_spec(argument_spec=k8s_apply_spec())
        del validation
        try:
            check_apply_options(args)  # every object and the field manager, before anything connects
        except BurninError as exc:
            return dict(result, failed=True, msg="%s: %s" % (NAME, exc))
        # K8S_AUTH_* from the task's `environment:` reach kubernetes.core as they would reach its module process;
        # this worker is forked for this task and host only.
        environment = {}
        self._compute_environment_string(environment)
        os.environ.update((key, "%s" % value) for key, value in environment.items())
        # kubernetes.core's authentication options, by their own names (not aliases), where set.
        params = dict((key, args[key]) for key in k8s_apply_spec() if key not in K8S_APPLY_OWN and args.get(key) is not None)
        params.update(
            resource_definition=args["objects"],
            apply=True,
            server_side_apply={"field_manager": args["field_manager"], "force_conflicts": args["force_conflicts"]},
            hidden_fields=HIDDEN_FIELDS,
        )
        outcome = run_k8s(params, check_mode=self._task.check_mode, diff=self._task.diff, name=NAME)
        result.update(compact(outcome))
        return result
