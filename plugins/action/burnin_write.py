# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_write (documentation in plugins/modules/burnin_write.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import write_files
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_write_spec


class ActionModule(ActionBase):
    """Writes the files on the controller; in check mode it only says which would change."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(argument_spec=burnin_write_spec())
        del validation
        try:
            written = write_files(args["directory"], args["files"], check_mode=bool(self._task.check_mode))
        except BurninError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        except (IOError, OSError) as exc:
            result.update(failed=True, msg="cannot write into %s: %s" % (args["directory"], exc))
            return result
        result.update(written)
        return result
