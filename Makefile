# gpufleet.burnin developer entry points. Everything runs through scripts/;
# see scripts/test.sh for the steps and TEST_ONLY / KEEP_GOING.
SHELL := /bin/bash

.PHONY: demo test setup sanity-ignores fmt mutate

# the README's first command: a burn-in of a local default fleet (see scripts/demo.sh)
demo:
	bash scripts/demo.sh

test:
	bash scripts/test.sh

setup:
	bash scripts/setup.sh

# mutation testing of the core with cosmic-ray (not part of `test`: slow); MUTATE_FILES=judging/thresholds.py to choose
# the modules, see scripts/mutate.sh and docs/mutation.md
mutate:
	CHANGED="$(CHANGED)" bash scripts/mutate.sh

# regenerate the missing-gplv3-license lines of tests/sanity/ignore-*.txt from plugins/modules/ and plugins/inventory/
sanity-ignores:
	bash scripts/update-sanity-ignores.sh

# format the Python code (black, settings in pyproject.toml; the lint step checks it)
fmt:
	source scripts/env.sh && black --quiet .
