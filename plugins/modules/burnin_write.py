#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_write
short_description: Write files on the controller inside their directory, never through a planted link
version_added: 0.1.0
description:
  - Writes each of O(files) into O(directory) on the controller, as the collection writes every file (pod logs,
    reports, rendered manifests, the run's C(summary.json)) - through a temporary file in the directory and a rename,
    so a symbolic link or a file planted at the name is replaced, never written through; a O(directory) that is a
    symbolic link is refused. A file that already holds the content is left as it is.
  - Names are the caller's - each must be a plain file name already. Build O(directory) from names you do not control
    (inventory host names, run ids) with P(gpufleet.burnin.safe_path#filter).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - gpufleet.burnin.controller
attributes:
  check_mode:
    support: full
    description: Writes nothing; C(changed) and C(changed_files) say what would change.
  diff_mode:
    support: none
    description: No diff is shown.
options:
  directory:
    description: Directory to write into, created (with its parents) when missing.
    type: path
    required: true
  files:
    description: The files.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The file name - letters, digits, C(.), C(_) and C(-), not starting with C(.); each once.
        type: str
        required: true
      content:
        description: The text to write (UTF-8).
        type: str
        default: ""
seealso:
  - module: gpufleet.burnin.burnin_report
"""

EXAMPLES = r"""
- name: Write the cluster's manifests
  gpufleet.burnin.burnin_write:
    directory: "{{ burnin_render_dir | gpufleet.burnin.safe_path([inventory_hostname]) }}"
    files:
      - name: manifests.yaml
        content: "{{ objects | map('to_nice_yaml') | join('---\n') }}"
"""

RETURN = r"""
directory:
  description: The directory written into.
  returned: success
  type: str
files:
  description: The path of each file, in the order given.
  returned: success
  type: list
  elements: str
changed_files:
  description: The files whose content changed (or would, in check mode).
  returned: success
  type: list
  elements: str
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_write_spec, refuse_on_host


def main():
    refuse_on_host(burnin_write_spec(), "gpufleet.burnin.burnin_write", "writes on the controller")


if __name__ == "__main__":
    main()
