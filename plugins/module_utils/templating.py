# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Jinja2 rendering of ``templates/`` with the ``_lib/`` fragment library.

Reproduces the original Go template helpers:

- ``lib(path)`` renders ``_lib/<path>`` with the same data (fragments may call ``lib`` again) and drops exactly
  one trailing newline; a missing fragment is an error naming the file;
- ``indent(n)`` pads every line by ``n`` spaces, the first line and blank lines included (unlike Jinja's own);
- ``to_mpi_args`` turns a YAML env list into ``- -x`` / ``- "NAME=VALUE"`` YAML list lines.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

try:
    import jinja2
    from jinja2 import pass_context
    HAS_JINJA2 = True
except ImportError:  # pragma: no cover - jinja2 ships with ansible-core on the controller
    HAS_JINJA2 = False

    def pass_context(func):
        return func

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover
    HAS_YAML = False

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils import nccl

# plugins/module_utils/ -> collection root, which holds templates/ and _lib/.
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATES_DIR = os.path.join(COLLECTION_ROOT, "templates")
LIB_DIR = os.path.join(COLLECTION_ROOT, "_lib")


def indent(text, width):
    """Original ``indent``: every line padded, first and blank lines too."""
    pad = " " * int(width)
    return pad + text.replace("\n", "\n" + pad)


def to_mpi_args_yaml(env):
    """Original ``toMpiArgs``: env (YAML text or list) -> YAML list lines ``- -x`` and ``- "NAME=VALUE"``."""
    if isinstance(env, str):
        env = load_yaml(env, "to_mpi_args input")
    args = nccl.to_mpi_args(env or [])
    lines = []
    for flag, pair in zip(args[0::2], args[1::2]):
        lines.append("- %s" % flag)
        lines.append("- %s" % json.dumps(pair))  # JSON string quoting is valid YAML, escapes '"' and '\\'
    return "\n".join(lines)


def load_yaml(text, source):
    if not HAS_YAML:
        raise RenderError("PyYAML is required to render %s; install it on the controller" % source)
    try:
        # libyaml's loader is ~15x faster than the pure-Python one; rendering runs once per host and task.
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # nosec - a safe loader
    except yaml.YAMLError as exc:
        raise RenderError("%s is not valid YAML: %s" % (source, exc))


def _bytecode_cache():
    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):  # no usable temp dir: compile every time
        return None


class TemplateLibrary(object):
    """Renders templates from ``templates_dir`` and fragments from ``lib_dir`` (one Jinja2 environment each)."""

    def __init__(self, templates_dir=TEMPLATES_DIR, lib_dir=LIB_DIR):
        if not HAS_JINJA2:
            raise RenderError("Jinja2 is required to render templates; install it on the controller")
        self.templates_dir = templates_dir
        self.lib_dir = lib_dir
        self._env = jinja2.Environment(
            # Names are "templates/<path>" and "_lib/<path>", so a fragment can never shadow a template.
            loader=jinja2.PrefixLoader({
                "templates": jinja2.FileSystemLoader(templates_dir),
                "_lib": jinja2.FileSystemLoader(lib_dir),
            }),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
            # Each Ansible worker is a fresh process: reuse compiled templates across them (per-user temp dir,
            # keyed by template name and source checksum).
            bytecode_cache=_bytecode_cache(),
        )
        self._env.filters["indent"] = indent
        self._env.filters["to_mpi_args"] = to_mpi_args_yaml
        self._env.globals["lib"] = self._lib

    @pass_context
    def _lib(self, context, path):
        if not os.path.isfile(os.path.join(self.lib_dir, path)):
            raise RenderError("fragment _lib/%s does not exist (looked in %s)" % (path, self.lib_dir))
        text = self._render_file("_lib/%s" % path, context.get_all())
        return text[:-1] if text.endswith("\n") else text

    def _render_file(self, label, data):
        try:
            template = self._env.get_template(label)
            return template.render(data)
        except RenderError:
            raise
        except jinja2.TemplateNotFound as exc:
            raise RenderError("%s does not exist: %s" % (label, exc))
        except jinja2.TemplateSyntaxError as exc:
            raise RenderError("%s line %s: template syntax error: %s" % (exc.filename or label, exc.lineno, exc.message))
        except jinja2.UndefinedError as exc:
            raise RenderError("%s: undefined variable: %s" % (label, exc))
        except Exception as exc:  # a filter raising on bad data, e.g. ConfigError from to_mpi_args
            raise RenderError("%s: %s" % (label, exc))

    def render(self, path, data):
        """Render ``templates/<path>`` with ``data`` and return the text."""
        if not os.path.isfile(os.path.join(self.templates_dir, path)):
            raise RenderError("template templates/%s does not exist (looked in %s)" % (path, self.templates_dir))
        return self._render_file("templates/%s" % path, data)

    def render_yaml(self, path, data):
        """Render ``templates/<path>`` and parse the YAML result."""
        return load_yaml(self.render(path, data), "rendered templates/%s" % path)
