# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Text from pods and clusters made safe once, where it enters: a log's bytes decoded with replacement
(cluster/pod_logs.py), the pods' and TrainJobs' fields read from the API server (cluster/pod_logs.py collect,
cluster/trainjobs.py outcome_of) and the JSON a log holds (judging/dcgm.py, judging/nccl_results.py), whose escapes
(``\\udcff``, ``\\u0000``) make characters the bytes never held.

What is replaced, each by U+FFFD: lone surrogates (no UTF-8 encoder, so no JSON, XML, HTML or metrics file, takes
them), control characters other than tab, line feed and carriage return (XML 1.0 forbids C0; C1 and DEL are terminal
commands in a summary), and U+FFFE and U+FFFF (not characters in XML 1.0). Everything else is kept, so a parser sees
the same lines and numbers.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

REPLACEMENT = "\ufffd"
# In a Python str a surrogate is always lone: a pair decodes (UTF-8, JSON) to one character above U+FFFF.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def clean(text):
    """TEXT with what no report can hold replaced by U+FFFD; bytes are decoded as UTF-8 with replacement first. Anything
    that is not text is returned as it is."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if not isinstance(text, str):
        return text
    return _UNSAFE.sub(REPLACEMENT, text)


def clean_tree(value):
    """VALUE (parsed JSON or an API object: dicts, lists, text, numbers) with every text, keys too, clean()ed. A new
    structure; iterative, so a deeply nested value needs no deep recursion."""
    if not isinstance(value, (dict, list, tuple)):
        return clean(value)
    root = [None]
    stack = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, dict):
            copy = {}
            parent[key] = copy
            for name, inner in item.items():
                name = clean(name)
                copy[name] = None
                stack.append((inner, copy, name))
        elif isinstance(item, (list, tuple)):
            copy = [None] * len(item)
            parent[key] = copy
            for index, inner in enumerate(item):
                stack.append((inner, copy, index))
        else:
            parent[key] = clean(item)
    return root[0]
