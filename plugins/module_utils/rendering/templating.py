# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Jinja2 rendering of ``templates/`` with the ``_lib/`` fragment library.

Reproduces the original Go template helpers:

- ``lib(path)`` renders ``_lib/<path>`` with the same data (fragments may call ``lib`` again) and drops exactly
  one trailing newline; a missing fragment is an error naming the file;
- ``indent(n)`` pads every line by ``n`` spaces, the first line and blank lines included (unlike Jinja's own);
- ``to_mpi_args`` turns a YAML env list into ``- -x`` / ``- "NAME=VALUE"`` YAML list lines.

Added for the platform layer (templates/overrides/platforms/):

- ``lib_yaml(path)`` parses ``_lib/<path>`` as plain YAML data, without rendering it (the platform catalogues
  ``_lib/platforms/<platform>/platform.yaml``: shapes, NIC resources, variables), cached per library;
- ``to_env(mapping)`` turns a ``{NAME: value}`` mapping into ``[{name, value}]`` YAML list lines, values quoted;
- fragments may ``{% import "_lib/platforms/macros.j2" as m with context %}`` Jinja2 macros.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

try:
    import jinja2
    import jinja2.meta
    import jinja2.nodes
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

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError, RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import read_unlinked, write_file
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import nccl_env
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import images

# plugins/module_utils/ -> collection root, which holds templates/ and _lib/.
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
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
    args = nccl_env.to_mpi_args(env or [])
    lines = []
    for flag, pair in zip(args[0::2], args[1::2]):
        lines.append("- %s" % flag)
        lines.append("- %s" % json.dumps(pair))  # JSON string quoting is valid YAML, escapes '"' and '\\'
    return "\n".join(lines)


def to_env_yaml(mapping):
    """``{NAME: value}`` (or a list of pairs) -> YAML list lines ``- name: NAME`` / ``  value: "value"``."""
    items = mapping.items() if isinstance(mapping, dict) else mapping
    lines = []
    for name, value in items:
        if isinstance(value, bool):
            value = "true" if value else "false"
        lines.append("- name: %s" % name)
        lines.append("  value: %s" % json.dumps("%s" % (value,)))
    return "\n".join(lines)


def refuse(field, message):
    """For templates: refuse a bad parameter, ``{{ refuse("level", "must be 1, 2, 3 or 4, got 5") }}`` (a ConfigError
    naming the field; the render reports it with the template's name)."""
    raise ConfigError(field, message)


def load_yaml(text, source):
    if not HAS_YAML:
        raise RenderError("PyYAML is required to render %s; install it on the controller" % source)
    try:
        # libyaml's loader is ~15x faster than the pure-Python one; rendering runs once per host and task.
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # nosec - a safe loader
    except yaml.YAMLError as exc:
        raise RenderError("%s is not valid YAML: %s" % (source, exc))


def read_yaml_file(path, what):
    """Parse the plain YAML data file ``path``; a ParseError names ``what`` and the path."""
    if not HAS_YAML:
        raise ParseError("PyYAML is required to read %s; install it on the controller" % path)
    try:
        with open(path) as handle:
            text = handle.read()
    except (IOError, OSError) as exc:
        raise ParseError("cannot read %s %s: %s" % (what, path, exc))
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # nosec - a safe loader
    except yaml.YAMLError as exc:
        raise ParseError("%s %s is not valid YAML: %s" % (what, path, exc))


def _bytecode_cache():
    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):  # no usable temp dir: compile every time
        return None


# Parsed renders, keyed by the sources' fingerprint, the template and the data: JSON text, in this process and
# in the per-user directory of Jinja2's bytecode cache (0700, checked by Jinja2), so that Ansible's worker
# processes rendering the same template with the same data parse its YAML once. PyYAML is the slow part.
_RENDERED = {}
_RENDER_CACHE_PREFIX = "gpufleet-burnin-render-"
_READS_CACHE_PREFIX = "gpufleet-burnin-reads-"


def _fingerprint(*directories):
    """Paths, sizes and modification times of every file under ``directories``: changes when a source does."""
    digest = hashlib.sha256()
    for directory in directories:
        for root, dirs, files in os.walk(directory):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(root, name)
                try:
                    stat = os.stat(full)
                except OSError:
                    continue
                digest.update(("%s\0%d\0%d\n" % (full, stat.st_size, stat.st_mtime_ns)).encode("utf-8"))
    return digest.hexdigest()


class TemplateLibrary(object):
    """Renders templates from ``templates_dir`` and fragments from ``lib_dir`` (one Jinja2 environment each)."""

    def __init__(self, templates_dir=TEMPLATES_DIR, lib_dir=LIB_DIR):
        if not HAS_JINJA2:
            raise RenderError("Jinja2 is required to render templates; install it on the controller")
        self.templates_dir = templates_dir
        self.lib_dir = lib_dir
        self._env = jinja2.Environment(
            # Names are "templates/<path>" and "_lib/<path>", so a fragment can never shadow a template.
            loader=jinja2.PrefixLoader(
                {
                    "templates": jinja2.FileSystemLoader(templates_dir),
                    "_lib": jinja2.FileSystemLoader(lib_dir),
                }
            ),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
            # Each Ansible worker is a fresh process: reuse compiled templates across them (per-user temp dir,
            # keyed by template name and source checksum).
            bytecode_cache=_bytecode_cache(),
        )
        self._env.filters["indent"] = indent
        self._env.filters["to_mpi_args"] = to_mpi_args_yaml
        self._env.filters["to_env"] = to_env_yaml
        self._env.globals["lib"] = self._lib
        self._env.globals["lib_yaml"] = self.lib_yaml
        self._env.globals["refuse"] = refuse
        self._env.globals["default_image"] = self.default_image
        self._data = {}
        cache = self._env.bytecode_cache
        self._cache_dir = getattr(cache, "directory", None)
        self._sources = None  # fingerprint of templates/ and _lib/, taken at the first render_yaml

    @pass_context
    def _lib(self, context, path):
        if not os.path.isfile(os.path.join(self.lib_dir, path)):
            raise RenderError("fragment _lib/%s does not exist (looked in %s)" % (path, self.lib_dir))
        text = self._render_file("_lib/%s" % path, context.get_all())
        return text[:-1] if text.endswith("\n") else text

    def default_image(self, kind, platform, gpu_architecture):
        """The image record a workload of image KIND runs by default (rendering/images.py), with its key as ``key``,
        or None."""
        key, record = images.default_record(self.image_records()[0], kind, platform, gpu_architecture)
        return dict(record, key=key) if record is not None else None

    def image_records(self):
        """``({key: record}, {key: file})``: the image records of ``_lib/images.yaml`` and of every platform's
        ``_lib/platforms/<platform>/images.yaml`` (rendering/images.py merge_records), cached."""
        if ("image_records",) not in self._data:
            sources = [("images.yaml", None)]
            root = os.path.join(self.lib_dir, "platforms")
            for platform in sorted(os.listdir(root)) if os.path.isdir(root) else []:
                if os.path.isfile(os.path.join(root, platform, "images.yaml")):
                    sources.append(("platforms/%s/images.yaml" % platform, platform))
            self._data[("image_records",)] = images.merge_records([("_lib/" + path, platform, self.lib_yaml(path)) for path, platform in sources])
        return self._data[("image_records",)]

    def lib_yaml(self, path):
        """``_lib/<path>`` parsed as plain YAML (not rendered), cached; a missing file is an error naming it."""
        if path not in self._data:
            full = os.path.join(self.lib_dir, path)
            if not os.path.isfile(full):
                raise RenderError("data file _lib/%s does not exist (looked in %s)" % (path, self.lib_dir))
            with open(full) as handle:
                self._data[path] = load_yaml(handle.read(), "_lib/%s" % path)
        return self._data[path]

    def variables_read(self, label):
        """Names ``label`` (``templates/<path>`` or ``_lib/<path>``) reads from its data, found in its source without
        rendering it: the names Jinja2 finds undeclared, plus those of every fragment it includes with ``lib("<path>")``
        (a constant path) that the including file does not set itself; the library's globals left out."""
        key = ("reads", label)
        if key not in self._data:
            # Jinja2's analysis compiles the template (tens of ms per workload): kept, like the renders, in this process
            # and in the per-user cache directory, keyed by the sources' fingerprint, for Ansible's worker processes.
            if self._sources is None:
                self._sources = _fingerprint(self.templates_dir, self.lib_dir)
            digest = hashlib.sha256(json.dumps([self._sources, label]).encode("utf-8")).hexdigest()
            cache_name = _READS_CACHE_PREFIX + digest + ".json"
            names = None
            if self._cache_dir:
                try:
                    raw = read_unlinked(os.path.join(self._cache_dir, cache_name))
                    names = json.loads(raw.decode("utf-8")) if raw is not None else None
                except ValueError:
                    names = None
                if not (isinstance(names, list) and all(isinstance(name, str) for name in names)):
                    names = None
            if names is None:
                names = sorted(self._reads(label, set()))
                if self._cache_dir:
                    try:
                        write_file(self._cache_dir, cache_name, json.dumps(names))
                    except (IOError, OSError):
                        pass
            self._data[key] = frozenset(names)
        return set(self._data[key])

    def _reads(self, label, reading):
        if label in reading:
            return set()  # a fragment that includes itself: its render reports the loop
        reading.add(label)
        try:
            tree = self._env.parse(self._env.loader.get_source(self._env, label)[0])
        except jinja2.TemplateNotFound as exc:
            raise RenderError("%s does not exist: %s" % (label, exc))
        except jinja2.TemplateSyntaxError as exc:
            raise RenderError("%s line %s: template syntax error: %s" % (exc.filename or label, exc.lineno, exc.message))
        names = set(jinja2.meta.find_undeclared_variables(tree))
        targets = [assign.target for assign in tree.find_all(jinja2.nodes.Assign)]
        assigned = set(node.name for target in targets for node in [target] + list(target.find_all(jinja2.nodes.Name)) if isinstance(node, jinja2.nodes.Name))
        for call in tree.find_all(jinja2.nodes.Call):
            if isinstance(call.node, jinja2.nodes.Name) and call.node.name == "lib" and call.args and isinstance(call.args[0], jinja2.nodes.Const):
                path = call.args[0].value
                if not os.path.isfile(os.path.join(self.lib_dir, str(path))):
                    raise RenderError("fragment _lib/%s does not exist (looked in %s)" % (path, self.lib_dir))
                names.update(self._reads("_lib/%s" % path, reading) - assigned)
        return names - set(self._env.globals)

    def list_templates(self, directory):
        """Paths ``<directory>/<name>.yaml`` of the templates in ``templates/<directory>``, sorted by file name."""
        full = os.path.join(self.templates_dir, directory)
        if not os.path.isdir(full):
            return []
        return ["%s/%s" % (directory, name) for name in sorted(os.listdir(full)) if name.endswith(".yaml") and os.path.isfile(os.path.join(full, name))]

    def warm(self):
        """Take the sources' fingerprint and load every template and fragment into this library's Jinja2
        environment. Called once in a parent process, it spares the processes forked from it (Ansible's workers)
        that work; a broken template is left for the render that needs it to report."""
        if self._sources is None:
            self._sources = _fingerprint(self.templates_dir, self.lib_dir)
        for prefix, directory in (("templates", self.templates_dir), ("_lib", self.lib_dir)):
            for root, dummy, files in os.walk(directory):
                for name in files:
                    if name.endswith((".yaml", ".j2")):
                        label = "%s/%s" % (prefix, os.path.relpath(os.path.join(root, name), directory))
                        try:
                            self._env.get_template(label)
                        except Exception:  # pylint: disable=broad-except
                            pass

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
        """Render ``templates/<path>`` and parse the YAML result (a fresh copy each call).

        Results are cached by (fingerprint of templates/ and _lib/, path, data); data must be JSON-serialisable.
        An instance takes the fingerprint once, at its first call: create a new one to see edited sources.
        """
        if self._sources is None:
            self._sources = _fingerprint(self.templates_dir, self.lib_dir)
        try:
            key = hashlib.sha256(json.dumps([self._sources, path, data], sort_keys=True).encode("utf-8")).hexdigest()
        except (TypeError, ValueError):
            key = None
        text = _RENDERED.get(key) if key else None
        cache_file = os.path.join(self._cache_dir, _RENDER_CACHE_PREFIX + key + ".json") if key and self._cache_dir else None
        if text is None and cache_file:
            try:
                raw = read_unlinked(cache_file)  # a link planted in the cache directory is not read through
                text = raw.decode("utf-8") if raw is not None else None
                if text is not None:
                    json.loads(text)
            except (IOError, OSError, ValueError):
                text = None
        if text is None:
            result = load_yaml(self.render(path, data), "rendered templates/%s" % path)
            try:
                text = json.dumps(result)
            except (TypeError, ValueError):  # YAML values JSON cannot hold (dates, ...): no caching
                return result
            if json.loads(text) != result:  # e.g. non-string keys: JSON would change them
                return result
            if cache_file:
                try:
                    write_file(self._cache_dir, os.path.basename(cache_file), text)
                except (IOError, OSError):
                    pass
        if key:
            _RENDERED[key] = text
        return json.loads(text)


_SHARED = {}


def shared_library():
    """The process-wide library of the collection's own ``templates/`` and ``_lib/`` (created on first use).
    It keeps its fingerprint of the sources for the life of the process, as one playbook run needs."""
    if "library" not in _SHARED:
        _SHARED["library"] = TemplateLibrary()
    return _SHARED["library"]
