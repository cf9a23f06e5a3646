# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_start (documentation in plugins/modules/burnin_start.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import run_start
from ansible_collections.gpufleet.burnin.plugins.module_utils import validate
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_start_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars, given_names
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.action import RenderActionBase


def _check(args):
    if args["run_id"]:
        validate.check_grammar("run_id", args["run_id"], "dns_label")


class ActionModule(RenderActionBase):
    argument_spec = burnin_start_spec()
    check = staticmethod(_check)

    def run(self, tmp=None, task_vars=None):
        self._host_variables = task_vars or {}
        return super(ActionModule, self).run(tmp, task_vars)

    def given(self):
        """The host's burnin_* variables (role_vars.given_names), each templated here: one value at a time costs a
        third of what a task argument holding them all does (docs/benchmarks.md)."""
        given = {}
        for name in given_names(self._host_variables):
            try:
                given[name] = self._templar.template(self._host_variables[name])
            except AnsibleError as exc:
                raise ConfigError(name, "cannot be templated: %s" % exc.message)
        return given

    def render(self, args):
        variables = check_role_vars(self.given() if args["variables"] is None else args["variables"])
        # burnin_run_id wins; empty or null (AWX's unanswered text question) takes the run's generated one.
        run_id = variables.get("burnin_run_id") or args["run_id"]
        if not run_id:
            raise BurninError("run_id: empty, and burnin_run_id is not set: give one of them")
        run = run_start(variables, args["host"], run_id, check_mode=bool(self._task.check_mode))
        if run["problem"]:
            raise BurninError(run["problem"])
        return {"variables": variables, "run_id": run_id, "namespace": run["namespace"], "trainjob": run["trainjob"], "result": run["result"]}
