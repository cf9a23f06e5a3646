# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.burnin_write (documentation in plugins/modules/burnin_write.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.files import write_files
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_write_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.action import WriteActionBase


class ActionModule(WriteActionBase):
    """Writes the files on the controller; in check mode it only says which would change."""

    argument_spec = staticmethod(burnin_write_spec)

    def write(self, args, check_mode):
        return write_files(args["directory"], args["files"], check_mode=check_mode)
