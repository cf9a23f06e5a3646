# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_export (documentation in plugins/modules/burnin_export.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import export
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.export_run import run_export


class ActionModule(ActionBase):
    """Writes the run's metrics file, pushes them and posts the JSON report (plugin_utils/export_run.py)."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(argument_spec=export.export_argument_spec())
        del validation
        result.update(run_export(args, check_mode=self._task.check_mode))
        return result
