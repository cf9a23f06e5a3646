# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_plan (documentation in plugins/modules/burnin_plan.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_plan import role_plan
from ansible_collections.gpufleet.burnin.plugins.module_utils import validate
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_plan_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.action import RenderActionBase


def _check(args):
    for name in ("run_id", "namespace"):
        validate.check_grammar(name, args[name], "dns_label")
    validate.check_int("attempt", args["attempt"], 1, 100)


class ActionModule(RenderActionBase):
    argument_spec = burnin_plan_spec()
    check = staticmethod(_check)

    def render(self, args):
        # The role passes what burnin_start checked; checking again costs little and names the variable for others.
        variables = check_role_vars(args["variables"])
        return role_plan(
            variables,
            args["platform"],
            args["gpu_architecture"],
            args["run_id"],
            args["namespace"],
            args["cluster"],
            stage=args["stage"],
            attempt=args["attempt"],
        )
