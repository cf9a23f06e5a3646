# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.platform_overrides (documentation in plugins/modules/platform_overrides.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import platform_overrides_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.overrides import build_overrides_with_sources
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.action import RenderActionBase


class ActionModule(RenderActionBase):
    argument_spec = platform_overrides_spec()
    check = staticmethod(inputs.check_override_options)

    def render(self, args):
        overrides, sources = build_overrides_with_sources(args)
        return {"overrides": overrides, "sources": sources}
