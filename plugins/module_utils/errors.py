# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Exceptions raised by the rendering core.

Plugins turn them into clean task failures; they never escape as tracebacks.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class BurninError(Exception):
    """Base class of every error the core raises on purpose."""


class ConfigError(BurninError):
    """A caller-supplied value is invalid. The message names the field and the allowed values."""

    def __init__(self, field, message):
        self.field = field
        super(ConfigError, self).__init__("%s: %s" % (field, message))


class RenderError(BurninError):
    """A template or fragment could not be rendered (missing file, template error)."""


class ParseError(BurninError):
    """Rendered YAML is not the expected shape."""
