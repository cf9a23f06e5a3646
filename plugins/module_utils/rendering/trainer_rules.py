# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""What a Kubeflow Trainer release asks of a rendered runtime and TrainJob, from ``_lib/trainer-versions.yaml``.

Per release (``trainer_version`` vX.Y; a patch release takes its minor's rules): the env variables Trainer's plugins
set themselves (refused in the user's env, with the reason), the longest replicatedJob name, and which replicatedJobs
get the TrainJob's image. The data file says where each rule comes from and whether a real controller of that release
runs in the tests.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file

TRAINER_VERSIONS_FILE = os.path.join(LIB_DIR, "trainer-versions.yaml")
DNS_LABEL_MAX = 63
TESTED = ("controller", "rule")
# The frameworks whose Trainer plugin a runtime of the collection uses: exec runs the torch mlPolicy (runtime.py).
PLUGIN_OF = {"torch": "torch", "exec": "torch", "mpi": "mpi"}
# The trainer container of every replicatedJob runtime.py builds.
TRAINER_CONTAINER = "node"
_RELEASE = re.compile(r"^v(\d+)\.(\d+)\Z")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_CACHE = {}


def _fail(path, where, message):
    raise ParseError("Trainer versions %s: %s %s" % (path, where, message))


def _check_release(path, release, rules):
    where = "releases.%s" % release
    if not _RELEASE.match(str(release)):
        _fail(path, where, "is not a release name such as v2.3")
    if not isinstance(rules, dict):
        _fail(path, where, "must be a mapping")
    unknown = sorted(set(rules) - {"source", "tested", "reserved_env", "replicated_job_name_max", "trainjob_image_on"})
    if unknown:
        _fail(path, where, "has unknown keys %s" % ", ".join(unknown))
    if not isinstance(rules.get("source"), str) or not rules["source"].strip():
        _fail(path, where + ".source", "must say where the rules were read")
    if rules.get("tested") not in TESTED:
        _fail(path, where + ".tested", "must be one of %s" % ", ".join(TESTED))
    for plugin, entry in (rules.get("reserved_env") or {}).items():
        names = entry.get("names") if isinstance(entry, dict) else None
        if plugin not in PLUGIN_OF.values() or not isinstance(names, list) or not all(isinstance(n, str) and _ENV_NAME.match(n) for n in names):
            _fail(path, "%s.reserved_env.%s" % (where, plugin), "must be a plugin (torch, mpi) with names: env variable names")
        if not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            _fail(path, "%s.reserved_env.%s" % (where, plugin), "needs a reason")
    limit = rules.get("replicated_job_name_max", DNS_LABEL_MAX)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= DNS_LABEL_MAX:
        _fail(path, where + ".replicated_job_name_max", "must be an integer from 1 to %d" % DNS_LABEL_MAX)
    for framework, jobs in (rules.get("trainjob_image_on") or {}).items():
        if framework not in PLUGIN_OF or not isinstance(jobs, list) or not all(isinstance(j, str) for j in jobs):
            _fail(path, "%s.trainjob_image_on.%s" % (where, framework), "must be a framework with a list of replicatedJob names")


def load_trainer_versions(path=TRAINER_VERSIONS_FILE):
    """{release: rules}, checked (cached per path)."""
    if path in _CACHE:
        return _CACHE[path]
    data = read_yaml_file(path, "Trainer versions")
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict) or not releases:
        raise ParseError("Trainer versions %s needs a mapping 'releases'" % path)
    for release, rules in releases.items():
        _check_release(path, release, rules)
    _CACHE[path] = releases
    return releases


def release_of(trainer_version):
    """``vX.Y`` of a version such as v2.4, 2.4 or v2.4.1."""
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.\d+)?\Z", str(trainer_version or ""))
    if not match:
        raise ConfigError("trainer_version", "must look like v2.3 or v2.2.1, got %r" % (trainer_version,))
    return "v%s.%s" % match.groups()


def rules_for(trainer_version, path=TRAINER_VERSIONS_FILE):
    """The rules of TRAINER_VERSION's release; an unknown release is refused naming the known ones."""
    releases = load_trainer_versions(path)
    release = release_of(trainer_version)
    if release not in releases:
        raise ConfigError(
            "trainer_version", "must be a Trainer release: %s (a patch release such as v2.2.1 too), got %r" % (", ".join(releases), trainer_version)
        )
    return releases[release]


def check_env(env, framework, trainer_version, field="env", path=TRAINER_VERSIONS_FILE):
    """Refuse an env entry (a mapping with ``name``) that TRAINER_VERSION's plugin for FRAMEWORK sets itself; the
    error names FIELD[index].name."""
    rules = rules_for(trainer_version, path)
    reserved = (rules.get("reserved_env") or {}).get(PLUGIN_OF.get(framework))
    if not reserved:
        return
    names = set(reserved["names"])
    for index, item in enumerate(env or []):
        name = item.get("name") if isinstance(item, dict) else None
        if name in names:
            raise ConfigError(
                "%s[%d].name" % (field, index),
                "%s is reserved by Kubeflow Trainer %s for framework %s: %s (reserved there: %s)"
                % (name, release_of(trainer_version), framework, reserved["reason"], ", ".join(reserved["names"])),
            )


def _replicated_jobs(runtime):
    return (((runtime.get("spec") or {}).get("template") or {}).get("spec") or {}).get("replicatedJobs") or []


def check_runtime(runtime, trainjob, framework, trainer_version, path=TRAINER_VERSIONS_FILE):
    """Refuse a merged TrainingRuntime (and its TrainJob) that TRAINER_VERSION would refuse or silently change: a
    replicatedJob name over the release's limit, or (where the release sets the TrainJob's image on more jobs) a
    trainer container whose image is not the TrainJob's."""
    rules = rules_for(trainer_version, path)
    release = release_of(trainer_version)
    # The TrainJob's own env (overrides put env there): the release's webhook refuses the reserved names in it.
    check_env((((trainjob or {}).get("spec") or {}).get("trainer") or {}).get("env"), framework, trainer_version, field="spec.trainer.env", path=path)
    limit = rules.get("replicated_job_name_max", DNS_LABEL_MAX)
    for index, job in enumerate(_replicated_jobs(runtime)):
        name = str(job.get("name") or "")
        if len(name) > limit:
            raise ConfigError(
                "spec.template.spec.replicatedJobs[%d].name" % index,
                "%r has %d characters: Kubeflow Trainer %s allows at most %d in a TrainingRuntime (an override or dependency names it)"
                % (name, len(name), release, limit),
            )
    jobs = (rules.get("trainjob_image_on") or {}).get(framework) or []
    image = (((trainjob or {}).get("spec") or {}).get("trainer") or {}).get("image")
    if not jobs or not image:
        return
    for index, job in enumerate(_replicated_jobs(runtime)):
        if job.get("name") not in jobs:
            continue
        containers = ((((job.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
        for container in containers:
            if container.get("name") == TRAINER_CONTAINER and container.get("image") not in (None, image):
                raise ConfigError(
                    "spec.template.spec.replicatedJobs[%d] (%s)" % (index, job.get("name")),
                    "its %s container runs %r, but Kubeflow Trainer %s sets the TrainJob's image %r on the %s of framework %s: "
                    "give both the same image (image), or pin trainer_version to an earlier release"
                    % (TRAINER_CONTAINER, container.get("image"), release, image, " and ".join(jobs), framework),
                )
