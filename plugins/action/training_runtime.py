# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.training_runtime (documentation in plugins/modules/training_runtime.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import training_runtime_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.runtime import build_runtime
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.action import RenderActionBase


class ActionModule(RenderActionBase):
    argument_spec = training_runtime_spec()
    check = staticmethod(inputs.check_runtime_options)
    raw_check = staticmethod(inputs.check_raw_options)

    def render(self, args):
        return {"runtime": build_runtime(args["framework"], args)}
