# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """What the actions that run on the controller and talk to no cluster share (the renderers, burnin_start,
    burnin_plan, the report writers): the action attribute. UNCHANGED: no diff, for every action that changes
    nothing (these, and the cluster readers). A module's own attributes say what differs (its check mode)."""

    DOCUMENTATION = r"""
attributes:
  action:
    support: full
    description: Runs on the controller.
"""

    UNCHANGED = r"""
attributes:
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to show.
"""
