# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.workload_plan (documentation in plugins/modules/workload_plan.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import workload_plan_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import plan_workload
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.action import RenderActionBase


class ActionModule(RenderActionBase):
    argument_spec = workload_plan_spec()
    check = staticmethod(inputs.check_plan_options)
    raw_check = staticmethod(inputs.check_raw_options)

    def render(self, args):
        facts = {"platform": args.pop("platform"), "gpuArchitecture": args.pop("gpu_architecture")}
        return plan_workload(args, facts)
