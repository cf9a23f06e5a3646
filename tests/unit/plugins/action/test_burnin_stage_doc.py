# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""gpufleet.burnin.burnin_stage: its documented options are its argument spec's (module_utils/validation/argspec.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import yaml

from ansible_collections.gpufleet.burnin.plugins.modules import burnin_stage
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import BURNIN_STAGE_OWN


def test_the_documented_options_are_the_argument_spec():
    documented = yaml.safe_load(burnin_stage.DOCUMENTATION)["options"]
    assert sorted(documented) == sorted(BURNIN_STAGE_OWN)
    for name, spec in BURNIN_STAGE_OWN.items():
        doc = documented[name]
        assert doc["type"] == spec["type"], name
        assert bool(doc.get("required")) == bool(spec.get("required")), name
        assert doc.get("choices") == spec.get("choices"), name
        assert doc.get("default") == spec.get("default"), name
