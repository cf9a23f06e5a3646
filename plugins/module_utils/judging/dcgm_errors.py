# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""DCGM's error severities, apart from judging/dcgm.py so that judging/actions.py reads them without importing the
DCGM judge (which imports actions through kernel_log and node_findings)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# DCGM's error severities (NVIDIA/DCGM dcgmlib/dcgm_errors.h, dcgmErrorSeverity_t), each warning's
# ``error_severity``: the only thing in ``dcgmi diag -j`` output that tells a warning from a failure, since dcgmi
# prints both as "Fail" (dcgmi/Diag.cpp; only its table shows WARN). name, this collection's verdict, DCGM's meaning
# (the enum's comments), the action it recommends.
SEVERITIES = {
    0: ("NONE", None, "no error", None),
    1: ("MONITOR", "warn", "can perform workload, but needs to be monitored", "monitor the GPU"),
    2: ("ISOLATE", "fail", "cannot perform workload: the GPU should be isolated", "isolate the GPU"),
    3: ("UNKNOWN", "fail", "this error code is not recognized", "triage the GPU"),
    4: ("TRIAGE", "fail", "cannot perform workload: perform further remediation", "triage the GPU"),
    5: ("CONFIG", "warn", "cannot perform workload: requires a configuration change", "fix the node's configuration"),
    6: ("RESET", "fail", "cannot perform workload: requires a GPU reset", "reset the GPU"),
}


__all__ = ["SEVERITIES"]
