# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_export (documentation in plugins/modules/burnin_export.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import export
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.action import WriteActionBase
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.export_run import run_export


class ActionModule(WriteActionBase):
    """Writes the run's metrics file, pushes them and posts the JSON report (plugin_utils/export_run.py, which says
    itself when the metrics directory cannot be written)."""

    argument_spec = staticmethod(export.export_argument_spec)

    def write(self, args, check_mode):
        return run_export(args, check_mode=check_mode)
