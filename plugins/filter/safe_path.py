# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: safe_path
short_description: A directory below a base directory, each part one plain file name
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Joins the input directory with each non-empty part as one path component. A part that is a plain file name
    (letters, digits, C(.), C(_), C(-), not starting with C(.)) of at most 184 characters is kept, so a DNS name
    stays as it is; any other (C(../x), C(a/b)) becomes its plain-name form plus C(-) and 8 hex digits of its
    SHA-256, so it can neither leave the base directory nor meet another name's directory.
  - The role builds every directory it writes into with it (plugins/module_utils/files.py C(safe_join)) - the
    render's C(<burnin_render_dir>/<host>), the report's C(<burnin_report_dir>/<run id>) and the logs'
    C(<burnin_report_dir>/<run id>/<host>[/<stage>]).
options:
  _input:
    description: The base directory, taken as given.
    type: str
    required: true
  parts:
    description: The components below it (inventory host names, run ids, stage names); empty ones are skipped.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: The cluster's render directory
  ansible.builtin.debug:
    msg: "{{ burnin_render_dir | gpufleet.burnin.safe_path([inventory_hostname]) }}"
"""

RETURN = r"""
_value:
  description: The directory.
  type: str
"""

from ansible.errors import AnsibleFilterError


def safe_path_filter(base, parts):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.files import safe_join

    if not isinstance(base, str) or not base:
        raise AnsibleFilterError("gpufleet.burnin.safe_path: the input must be a directory path, got %r" % (base,))
    if isinstance(parts, str) or not isinstance(parts, (list, tuple)):
        raise AnsibleFilterError("gpufleet.burnin.safe_path: parts must be a list of names, got %r" % (parts,))
    return safe_join(base, parts)


class FilterModule(object):
    def filters(self):
        return {"safe_path": safe_path_filter}
