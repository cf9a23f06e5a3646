# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_report (documentation in plugins/modules/burnin_report.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.writer import report_argument_spec, write_reports
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.action import WriteActionBase

# The options passed to write_reports as they are; the paths of the history are "" when not given.
_PASSED = ("formats", "run_id", "title", "generated", "basename", "regression_percent", "sibling_key", "sibling_rule", "sibling_min", "sibling_verdict")
_PASSED += ("offender_failures", "offender_runs", "golden", "drift_fail")
_PATHS = ("baseline", "history_dir", "baseline_dir")
_RETURNED = ("changed", "files", "changed_files", "summary", "baseline")


class ActionModule(WriteActionBase):
    """Writes the report files on the controller; in check mode it only says which would change."""

    argument_spec = staticmethod(report_argument_spec)

    def unwritable(self, args, exc):
        return "cannot write the reports into %s: %s" % (args["directory"], exc)

    def write(self, args, check_mode):
        options = dict((name, args[name]) for name in _PASSED)
        options.update((name, args[name] or "") for name in _PATHS)
        written = write_reports(args["results"], args["directory"], check_mode=check_mode, **options)
        out = dict((key, written[key]) for key in _RETURNED)
        if written["baseline_error"]:
            # The reports are written (without a comparison); the bad baseline still fails the task, naming the file and field.
            out.update(failed=True, msg=written["baseline_error"])
        return out
