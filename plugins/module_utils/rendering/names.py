# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Names and choices shared by the runtime builders and the override renderer.

Kept tiny on purpose: Ansible compiles collection module_utils afresh in every worker process.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

FRAMEWORKS = ("torch", "mpi", "exec")
# RFC 1123 label: the runtime "<entry_name>-runtime" and the TrainJob "<entry_name>-<run_id>" derive from it.
_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
# 63 minus len("-runtime"), so the runtime name stays a valid label.
ENTRY_NAME_MAX = 52


def check_entry_name(value, field="entry_name"):
    if not isinstance(value, str) or not _DNS_LABEL.match(value) or len(value) > ENTRY_NAME_MAX:
        raise ConfigError(
            field,
            "must be a DNS label (lower-case letters, digits and '-', starting with a letter, "
            "at most %d characters so '<entry_name>-runtime' stays valid), got %r" % (ENTRY_NAME_MAX, value),
        )
    return value


def check_framework(value):
    if value not in FRAMEWORKS:
        raise ConfigError("framework", "must be one of %s, got %r" % (", ".join(FRAMEWORKS), value))
    return value
