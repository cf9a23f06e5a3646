# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_report (documentation in plugins/modules/burnin_report.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.writer import report_argument_spec, write_reports


class ActionModule(ActionBase):
    """Writes the report files on the controller; in check mode it only says which would change."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(argument_spec=report_argument_spec())
        del validation
        try:
            written = write_reports(
                args["results"],
                args["directory"],
                formats=args["formats"],
                run_id=args["run_id"],
                title=args["title"],
                generated=args["generated"],
                basename=args["basename"],
                check_mode=bool(self._task.check_mode),
                baseline=args["baseline"] or "",
                history_dir=args["history_dir"] or "",
                regression_percent=args["regression_percent"],
                sibling_key=args["sibling_key"],
                sibling_rule=args["sibling_rule"],
                sibling_min=args["sibling_min"],
                sibling_verdict=args["sibling_verdict"],
                baseline_dir=args["baseline_dir"] or "",
                offender_failures=args["offender_failures"],
                offender_runs=args["offender_runs"],
                golden=args["golden"],
                drift_fail=args["drift_fail"],
            )
        except BurninError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        except (IOError, OSError) as exc:
            result.update(failed=True, msg="cannot write the reports into %s: %s" % (args["directory"], exc))
            return result
        result.update(
            changed=written["changed"], files=written["files"], changed_files=written["changed_files"], summary=written["summary"], baseline=written["baseline"]
        )
        if written["baseline_error"]:
            # The reports are written (without a comparison); the bad baseline still fails the task, naming the file and field.
            result.update(failed=True, msg=written["baseline_error"])
        return result
