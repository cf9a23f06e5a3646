# gpufleet.burnin developer entry points. Everything runs through scripts/;
# see scripts/test.sh for the steps and TEST_ONLY / KEEP_GOING.
SHELL := /bin/bash

.PHONY: demo test setup lock sanity-ignores fmt mutate

# the README's first command: a burn-in of a local default fleet (see scripts/demo.sh)
demo:
	bash scripts/demo.sh

test:
	bash scripts/test.sh

setup:
	bash scripts/setup.sh

# re-resolve the locks of tests/locks/ (every venv is installed from them, with hashes) to today's newest versions;
# commit the result in one commit with `make test` run on it (docs/testing.md)
lock:
	bash scripts/lock.sh

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
