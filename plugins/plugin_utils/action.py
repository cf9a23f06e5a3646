# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Shared base of the controller-side rendering action plugins: validate, call the core, report clean errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


class RenderActionBase(ActionBase):
    """Renders on the controller; never contacts a host or a cluster, so check mode behaves like a normal run."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    argument_spec = None  # set by subclasses

    def render(self, args):
        """Return the dict of result keys for validated ``args``; raise BurninError on bad input."""
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        result = super(RenderActionBase, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(argument_spec=self.argument_spec)
        del validation
        try:
            result.update(self.render(args))
        except BurninError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        result["changed"] = False
        return result
