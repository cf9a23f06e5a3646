# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Shared bases of the controller-side action plugins that render or write: validate, call the core, report clean
errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os

from ansible.plugins.action import ActionBase
from ansible.plugins.loader import filter_loader

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.validate import check_numbers
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.overrides import warm_up as warm_templates

_PLUGINS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE = "ansible_collections.gpufleet.burnin.plugins"


def _plugin_names(subdir):
    directory = os.path.join(_PLUGINS_DIR, subdir)
    return sorted(name[:-3] for name in os.listdir(directory) if name.endswith(".py") and not name.startswith("_"))


def _module_utils_names():
    """The core's modules, by dotted name under module_utils (its stages are subpackages)."""
    names = []
    root = os.path.join(_PLUGINS_DIR, "module_utils")
    for folder, dummy, files in sorted(os.walk(root)):
        prefix = os.path.relpath(folder, root).replace(os.sep, ".")
        names.extend(
            (name[:-3] if prefix == "." else "%s.%s" % (prefix, name[:-3])) for name in sorted(files) if name.endswith(".py") and not name.startswith("_")
        )
    return names


def warm_up():
    """Load the collection's core, filters and templates into this process once.

    Ansible's strategy imports an action plugin in its main process (to read its class) before it forks one worker
    per host and task. A worker inherits what the main process has loaded and loses what it loads itself: without
    this, every worker compiles the core's modules again (the collection loader keeps no bytecode) and loads every
    filter file of the collection to resolve one filter name. Failures are left for the real call to report.
    """
    for name in _module_utils_names():
        try:
            importlib.import_module("%s.module_utils.%s" % (_PACKAGE, name))
        except ImportError:
            pass
    for name in _plugin_names("filter"):
        try:
            filter_loader.get("gpufleet.burnin.%s" % name)
        except Exception:  # pylint: disable=broad-except
            pass
    warm_templates()
    for module, function in (
        # The allowed platforms (a render of the seed) and the Trainer releases' rules, so no worker reads them again.
        ("validation.inputs", "known_platforms"),
        ("rendering.trainer_rules", "load_trainer_versions"),
    ):
        try:
            getattr(importlib.import_module("%s.module_utils.%s" % (_PACKAGE, module)), function)()
        except Exception:  # pylint: disable=broad-except
            pass


warm_up()


class ControllerActionBase(ActionBase):
    """Runs on the controller alone: no connection to the host, no file transfer, check mode supported."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False


class RenderActionBase(ControllerActionBase):
    """Renders on the controller; never contacts a host or a cluster, so check mode behaves like a normal run."""

    argument_spec = None  # set by subclasses
    check = None  # set by subclasses: the core's check of all the options (module_utils/validation/inputs.py), run first
    # Optional: a check of the options as the task gave them, before the argument spec converts them (a YAML number
    # given for a string option becomes its text there: trainer_version 2.10 would be "2.1").
    raw_check = None

    def render(self, args):
        """Return the dict of result keys for validated ``args``; raise BurninError on bad input."""
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        result = super(RenderActionBase, self).run(tmp, task_vars)
        del tmp
        try:
            check_numbers(self.argument_spec, self._task.args)
            if self.raw_check is not None:
                self.raw_check(self._task.args)
            validation, args = self.validate_argument_spec(argument_spec=self.argument_spec)
            del validation
            self.check(args)
            result.update(self.render(args))
        except BurninError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        result["changed"] = False
        return result


class WriteActionBase(ControllerActionBase):
    """Writes on the controller (files, reports, metrics) with one call into the core, which in check mode only says
    what would change. A subclass sets ``argument_spec`` (a function returning the spec) and ``write(args,
    check_mode)`` (the result's keys); a BurninError or a place that cannot be written fails the task with its
    message, never a traceback."""

    argument_spec = None  # set by subclasses

    def write(self, args, check_mode):
        raise NotImplementedError

    def unwritable(self, args, exc):
        """The message of an OSError while writing."""
        return "cannot write into %s: %s" % (args.get("directory"), exc)

    def run(self, tmp=None, task_vars=None):
        result = super(WriteActionBase, self).run(tmp, task_vars)
        del tmp
        try:
            check_numbers(self.argument_spec(), self._task.args)
        except BurninError as exc:
            return dict(result, failed=True, msg=str(exc))
        validation, args = self.validate_argument_spec(argument_spec=self.argument_spec())
        del validation
        try:
            result.update(self.write(args, bool(self._task.check_mode)))
        except BurninError as exc:
            result.update(failed=True, msg=str(exc))
        except (IOError, OSError) as exc:
            result.update(failed=True, msg=self.unwritable(args, exc))
        return result
