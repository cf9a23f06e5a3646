# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The one way the collection writes a file on the controller (pod logs, reports): a name reduced to a plain file name,
written inside its directory without following a link planted there. Pod names, host names and run ids come from
inventories and API servers, so none of them may pick the path: `../x` stays a name in the directory, and a symlink
at `<dir>/<pod>.log` is replaced, never written through.

Shared by the layers (like errors.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import hashlib
import os
import re
import tempfile

# A DNS subdomain is at most 253 characters; a file name is kept under the usual 255-byte limit with its suffix.
MAX_NAME = 200
UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name):
    """NAME reduced to a plain file name: characters other than letters, digits, '.', '_' and '-' become '-', leading
    dots are dropped (no hidden file, no '..'), cut at MAX_NAME characters; never empty."""
    text = UNSAFE.sub("-", str(name if name is not None else ""))
    text = text.lstrip(".")[:MAX_NAME].rstrip(".")
    return text or "unnamed"


# A slug leaves room for a suffix (".log", ".junit.xml") within MAX_NAME.
MAX_SLUG = MAX_NAME - 16


def slug(name):
    """NAME as one path component: NAME itself when it is a plain file name already (a DNS label is) of at most
    MAX_SLUG characters, else its safe_name cut short with '-' and 8 hex digits of NAME's SHA-256, so two names that
    reduce alike (`a/b`, `a-b`) stay apart."""
    text = "%s" % (name if name is not None else "")
    safe = safe_name(text)
    if safe == text and len(text) <= MAX_SLUG:
        return safe
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return "%s-%s" % (safe[: MAX_SLUG - 9].rstrip("."), digest)


def safe_join(base, parts):
    """BASE (the user's directory, taken as given) with each non-empty part of PARTS below it as one slugged component:
    inventory host names, run ids and stage names choose a directory inside BASE, never one outside it."""
    path = "%s" % base
    for part in parts or []:
        if part is None or "%s" % part == "":
            continue
        path = os.path.join(path, slug(part))
    return path


def read_unlinked(path):
    """The bytes at PATH, or None when there is no regular file there (a symlink is not followed)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        chunks = []
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(descriptor)


def make_directory(directory):
    """Make DIRECTORY (and its parents) when missing; a directory that is a symlink is refused, since writing there
    would put the files wherever it points."""
    if os.path.islink(directory):
        raise OSError(errno.ELOOP, "refusing to write into a directory that is a symbolic link", directory)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)


def write_file(directory, name, data, mode=0o644):
    """Write DATA (bytes or text, UTF-8) to DIRECTORY/safe_name(NAME) through a temporary file in the same directory
    and os.replace, so a symlink or a file planted at the name is replaced, never followed; nothing is written when
    the file already holds DATA. Return (the path, whether it changed)."""
    if not isinstance(data, bytes):
        data = (data or "").encode("utf-8")
    make_directory(directory)
    path = os.path.join(directory, safe_name(name))
    if not os.path.islink(path) and read_unlinked(path) == data:
        return path, False
    descriptor, temporary = tempfile.mkstemp(prefix=".%s." % safe_name(name)[:40], dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise
    return path, True


def write_files(directory, files, check_mode=False):
    """Write FILES (``[{name, content}]``) into DIRECTORY with write_file (gpufleet.burnin.burnin_write): each name
    must be a plain file name already, since the caller chose it (a ConfigError naming ``files[i].name`` otherwise).
    In check mode nothing is written. Return {directory, files (the paths), changed, changed_files}."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

    if not isinstance(directory, str) or not directory:
        raise ConfigError("directory", "must be the path of the directory to write into")
    if not isinstance(files, list) or not files:
        raise ConfigError("files", "must be a non-empty list of {name, content}")
    names = []
    for index, item in enumerate(files):
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or safe_name(name) != name:
            raise ConfigError(
                "files[%d].name" % index, "must be a plain file name (letters, digits, '.', '_' and '-', not starting with '.'), got %r" % (name,)
            )
        if name in names:
            raise ConfigError("files[%d].name" % index, "repeats %s; each file once" % name)
        names.append(name)
    paths, changed = [], []
    for item in files:
        path = os.path.join(directory, item["name"])
        data = ("%s" % (item.get("content") or "")).encode("utf-8")
        if os.path.islink(path) or read_unlinked(path) != data:
            changed.append(path)
            if not check_mode:
                write_file(directory, item["name"], data)
        paths.append(path)
    return {"directory": directory, "files": paths, "changed": bool(changed), "changed_files": changed}
