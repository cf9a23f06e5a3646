# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The rendered MPI launch, run for real: Debian's Open MPI (openmpi-bin) and OpenSSH server (scripts/setup.sh).

Per platform of the catalogue: the role's plan of the nccl-all-reduce burn-in (2 nodes, the platform's default GPU,
one user variable), two "worker" sshd processes on loopback ports started by the rendered worker script with the
rendered worker container's environment as their own (the ENV lines of its image record under it, as
PID 1 has it in the pod), the SSH key files laid out as Trainer v2.3's MPI plugin mounts them
(pkg/runtime/framework/plugins/mpi/mpi.go: id_rsa, id_rsa.pub, authorized_keys of an ECDSA P-521 key), the
launcher's init script, then the rendered trainer command and args with the hostfile and OMPI_MCA_* variables as
Trainer writes them. The nccl-tests binary is a stand-in that prints its environment and where each library the
image needs resolves. Asserted for every rank: every variable the render puts on the worker container reaches it
with that value, libnccl.so.2 resolves, and the platform's net plugin directory is the first on LD_LIBRARY_PATH
that holds libnccl-net.so (or NCCL_NET_PLUGIN=none where NCCL's own IB transport is meant).

Stand-ins, each for what cannot be real here (docs/platforms/mpi-launch.md):
- the image's file system: a temp dir ROOT; its libraries are empty files under ROOT at the paths of its image
  record, and the stand-in resolves a library by looking for ROOT/<dir>/<soname> along LD_LIBRARY_PATH (then the
  linker's default dirs): it replaces ld.so inside the image;
- the image's mpirun and orted: ROOT/<mpirun's dir>/{mpirun,orted}, symlinks to Debian's, so an absolute mpirun
  path works as Open MPI's --prefix does; the image's OPAL_PREFIX (its own install) is not set on the launcher;
- cluster DNS and port 22 in each pod's network namespace: the workers listen on 127.0.0.1 ports and an rsh agent
  (`ssh -F <config>`, set as OMPI_MCA_plm_rsh_agent) maps the hostfile's names to them;
- /root/.ssh and /tmp/mpi-ssh-raw: per-process temp dirs, substituted in the rendered scripts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import role_plan
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import templating

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODES = 2
USER_VAR = {"name": "BURNIN_USER_MARK", "value": "from burnin_env"}
# One GPU of each platform of the catalogue (_lib/platforms/*/platform.yaml), the shape it defaults to, and Together AI
# (seed only). Mistral has GB300 only: arm64, no default image.
PLATFORMS = [
    ("aws", "h100"),
    ("gcp", "h100"),
    ("gcp", "b200"),
    ("gcp", "gb300"),
    ("azure", "h100"),
    ("azure", "gb300"),
    ("oci", "h100"),
    ("oci", "gb200"),
    ("coreweave", "h100"),
    ("coreweave", "gb200"),
    ("nebius", "h200"),
    ("onprem", "b200"),
    ("togetherai", "h100"),
]
# Docker's PATH for an image whose record states no ENV PATH (the base images' own ENV lines are not recorded).
DOCKER_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TOOLS = ("/usr/bin/mpirun", "/usr/bin/orted", "/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen")
STANDIN = """#!%(python)s
# Stand-in for the nccl-tests binary (tests/e2e/test_mpi_launch.py): its environment and where each library resolves.
import json, os
root = %(root)r
default_dirs = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib"]
dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d] + default_dirs
def found(soname):
    return [d for d in dirs if os.path.exists(os.path.join(root + d, soname))]
# One file per rank: mpirun's output forwarding splits long lines.
with open(os.path.join(%(out)r, os.environ.get("OMPI_COMM_WORLD_RANK", "x") + ".json"), "w") as fh:
    json.dump({"env": dict(os.environ), "libs": dict((s, found(s)) for s in %(sonames)r)}, fh)
print("stand-in rank %%s done" %% os.environ.get("OMPI_COMM_WORLD_RANK"), flush=True)
"""


def _missing_tools():
    return [tool for tool in TOOLS if not os.access(tool, os.X_OK)]


@pytest.fixture(scope="module", autouse=True)
def tools():
    missing = _missing_tools()
    if missing:
        message = "the MPI launch test needs Debian's openmpi-bin and openssh-server (scripts/setup.sh installs them): missing %s" % ", ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _plan(platform, gpu):
    with open(os.path.join(ROOT_DIR, "roles", "burnin", "defaults", "main.yml")) as fh:
        given = yaml.safe_load(fh)
    given.update(burnin_platform=platform, burnin_gpu_architecture=gpu, burnin_nodes=NODES, burnin_env=[USER_VAR])
    plan = role_plan.role_plan(check_role_vars(given), platform, gpu, "r1", "burnin")
    runtime = [obj for obj in plan["objects"] if obj["kind"] == "TrainingRuntime"][0]
    trainjob = [obj for obj in plan["objects"] if obj["kind"] == "TrainJob"][0]
    jobs = dict((job["name"], job["template"]["spec"]["template"]["spec"]) for job in runtime["spec"]["template"]["spec"]["replicatedJobs"])
    return runtime, trainjob, jobs


def _container(pod_spec):
    return [c for c in pod_spec["containers"] if c["name"] == "node"][0]


def _plain_env(items):
    return dict((item["name"], str(item["value"])) for item in items or [] if "value" in item)


def _substitute(text, mapping):
    for old, new in mapping:
        assert old in text, "the rendered script no longer holds %r: %s" % (old, text)
        text = text.replace(old, new)
    return text


def _trainer_key_files(directory, key_dir):
    """The SSH files as Trainer's MPI plugin mounts its Secret (items and modes of mpi.go)."""
    os.makedirs(directory)
    shutil.copy(os.path.join(key_dir, "key"), os.path.join(directory, "id_rsa"))
    shutil.copy(os.path.join(key_dir, "key.pub"), os.path.join(directory, "id_rsa.pub"))
    shutil.copy(os.path.join(key_dir, "key.pub"), os.path.join(directory, "authorized_keys"))
    os.chmod(os.path.join(directory, "id_rsa"), 0o640)
    os.chmod(os.path.join(directory, "id_rsa.pub"), 0o644)
    os.chmod(os.path.join(directory, "authorized_keys"), 0o644)


def _libraries(record, gpu):
    # Grace (gb200/gb300) is arm64: the record's arm64 dirs where they differ.
    return record.get("libraries_arm64", record["libraries"]) if gpu in ("gb200", "gb300") else record["libraries"]


def _image_root(tmp, record, platform, gpu):
    root = os.path.join(tmp, "image")
    own = _libraries(record, gpu)
    libraries = dict(own, **(record["platforms"][platform].get("host_libraries") or {}))
    for soname, directory in list(own.items()) + list((record["platforms"][platform].get("host_libraries") or {}).items()):
        os.makedirs(root + directory, exist_ok=True)
        open(os.path.join(root + directory, soname), "w").close()
    if record.get("mpirun"):
        bindir = root + os.path.dirname(record["mpirun"])
        os.makedirs(bindir, exist_ok=True)
        os.symlink("/usr/bin/mpirun", os.path.join(bindir, "mpirun"))
        os.symlink("/usr/bin/orted", os.path.join(bindir, "orted"))
    for path in set((record["platforms"][platform].get("topology_file") or {}).values()):
        os.makedirs(root + os.path.dirname(path), exist_ok=True)
        open(root + path, "w").close()
    return root, sorted(libraries)


def _run_launch(tmp, platform, gpu):
    images = templating.shared_library().image_records()[0]
    runtime, trainjob, jobs = _plan(platform, gpu)
    image = _container(jobs["node"])["image"]
    records = [rec for rec in images.values() if rec["image"] == image]
    assert records, "no image record of %s (_lib/images.yaml, _lib/platforms/*/images.yaml)" % image
    record = records[0]
    root, sonames = _image_root(tmp, record, platform, gpu)
    binary = os.path.join(record["nccl_tests_dir"], "all_reduce_perf" + record.get("nccl_tests_suffix", ""))
    out = os.path.join(tmp, "ranks")
    os.makedirs(out)
    os.makedirs(root + record["nccl_tests_dir"], exist_ok=True)
    with open(root + binary, "w") as fh:
        fh.write(STANDIN % {"python": sys.executable, "root": root, "sonames": sonames or ["libnccl.so.2"], "out": out})
    os.chmod(root + binary, 0o755)

    keys = os.path.join(tmp, "keys")
    os.makedirs(keys)
    subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "521", "-N", "", "-f", os.path.join(keys, "key")], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(keys, "hostkey")], check=True)
    os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation dir, as the worker script's /var/run/sshd

    worker = _container(jobs["node"])
    image_env = dict({"PATH": DOCKER_DEFAULT_PATH}, **record["env"])
    worker_env = dict(image_env, **_plain_env(worker.get("env")))
    name = trainjob["metadata"]["name"]
    hosts, workers, ssh_config = [], [], []
    try:
        for index in range(NODES):
            wdir = os.path.join(tmp, "worker-%d" % index)
            _trainer_key_files(os.path.join(wdir, "raw"), keys)
            port = _free_port()
            with open(os.path.join(wdir, "sshd_config"), "w") as fh:
                fh.write(
                    "Port %d\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s\nPermitRootLogin yes\nStrictModes no\nUsePAM no\nPidFile none\n"
                    % (port, os.path.join(keys, "hostkey"), os.path.join(wdir, "ssh", "authorized_keys"))
                )
            script = _substitute(
                worker["args"][0],
                [
                    ("/tmp/mpi-ssh-raw", os.path.join(wdir, "raw")),
                    ("/root/.ssh", os.path.join(wdir, "ssh")),
                    ("/usr/sbin/sshd -De", "/usr/sbin/sshd -De -f %s" % os.path.join(wdir, "sshd_config")),
                ],
            )
            log = open(os.path.join(wdir, "log"), "w")
            # Its own process group: the script's shell runs sshd as a child, and both end with the test.
            workers.append(subprocess.Popen(worker["command"] + [script], env=worker_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
            host = "%s-node-0-%d.%s" % (name, index, name)
            hosts.append(host)
            ssh_config.append("Host %s\n  HostName 127.0.0.1\n  Port %d\n" % (host, port))
            for _attempt in range(100):
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.05)
            else:
                pytest.fail("worker %d's sshd did not listen: %s" % (index, open(os.path.join(wdir, "log")).read()))

        ldir = os.path.join(tmp, "launcher")
        _trainer_key_files(os.path.join(ldir, "raw"), keys)
        os.makedirs(os.path.join(ldir, "ssh"))
        launcher_pod = jobs["launcher"]
        init = [c for c in launcher_pod["initContainers"] if c["name"] == "fix-ssh-permissions"][0]
        init_script = _substitute(init["args"][0], [("/tmp/mpi-ssh-raw", os.path.join(ldir, "raw")), ("/root/.ssh", os.path.join(ldir, "ssh"))])
        subprocess.run(init["command"] + [init_script], check=True, capture_output=True)
        ssh_config.append("Host *\n  IdentityFile %s\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n" % os.path.join(ldir, "ssh", "id_rsa"))
        with open(os.path.join(ldir, "ssh_config"), "w") as fh:
            fh.write("".join(ssh_config))
        agent = os.path.join(ldir, "rsh-agent")
        with open(agent, "w") as fh:
            fh.write('#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' % os.path.join(ldir, "ssh_config"))
        os.chmod(agent, stat.S_IRWXU)
        slots = runtime["spec"]["mlPolicy"]["mpi"]["numProcPerNode"]
        with open(os.path.join(ldir, "hostfile"), "w") as fh:
            fh.write("".join("%s slots=%d\n" % (host, slots) for host in hosts))

        launcher_env = dict((k, v) for k, v in image_env.items() if k != "OPAL_PREFIX")
        launcher_env.update(_plain_env(_container(launcher_pod).get("env")))
        launcher_env.update(_plain_env(trainjob["spec"]["trainer"].get("env")))
        # Trainer's OpenMPI env on the launcher (mpi.go), the hostfile at its mounted path's stand-in.
        launcher_env.update(
            {
                "OMPI_MCA_orte_default_hostfile": os.path.join(ldir, "hostfile"),
                "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
                "OMPI_MCA_orte_set_default_slots": str(slots),
                "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
                "OMPI_MCA_plm_rsh_agent": agent,
                "HOME": os.path.join(ldir, "home"),
            }
        )
        words = trainjob["spec"]["trainer"]["command"] + trainjob["spec"]["trainer"]["args"]
        mapped = [word.replace(binary, root + binary) for word in words]
        if record.get("mpirun"):
            mapped = [word.replace(record["mpirun"], root + record["mpirun"]) for word in mapped]
        assert mapped != words, "the rendered command runs neither %s nor %s: %s" % (record["mpirun"], binary, words)
        done = subprocess.run(mapped, env=launcher_env, capture_output=True, text=True, timeout=120, check=False)
    finally:
        for proc in workers:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in workers:
            proc.wait(10)
    ranks = []
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name)) as fh:
            ranks.append(json.load(fh))
    return {
        "rc": done.returncode,
        "output": done.stdout[-2000:] + done.stderr[-3000:],
        "ranks": ranks,
        "intended": _plain_env(worker.get("env")),
        "record": record,
        "platform_needs": record["platforms"][platform],
        "command": words,
        "slots": slots,
        # An absolute mpirun path works as --prefix: Open MPI puts the prefix's lib and bin in front of the ranks'
        # LD_LIBRARY_PATH and PATH, after -x (measured here with Debian's Open MPI 4.1).
        "prefix": (
            {
                "LD_LIBRARY_PATH": root + os.path.dirname(os.path.dirname(record["mpirun"])) + "/lib:",
                "PATH": root + os.path.dirname(os.path.dirname(record["mpirun"])) + "/bin:",
            }
            if record.get("mpirun")
            else {}
        ),
        "root": root,
        "topology_file": (record["platforms"][platform].get("topology_file") or {}).get(gpu),
        "libraries_recorded": dict(_libraries(record, gpu), **(record["platforms"][platform].get("host_libraries") or {})),
    }


@pytest.mark.parametrize("platform,gpu", PLATFORMS, ids=["%s-%s" % case for case in PLATFORMS])
def test_every_rank_gets_the_platform_environment_and_libraries(tmp_path, platform, gpu):
    run = _run_launch(str(tmp_path), platform, gpu)
    assert run["rc"] == 0, "mpirun failed (%s):\n%s" % (run["rc"], run["output"])
    assert len(run["ranks"]) == NODES * run["slots"], run["output"]
    assert run["intended"].get(USER_VAR["name"]) == USER_VAR["value"]
    needs = run["platform_needs"]
    problems = []
    mpirun = run["record"]["mpirun"]
    if (mpirun or "mpirun") not in run["command"]:
        problems.append("mpirun is not called as the image's record says (%s): %s" % (mpirun or "by name", run["command"][:3]))
    for index, rank in enumerate(run["ranks"]):
        env = rank["env"]
        where = "rank %s" % env.get("OMPI_COMM_WORLD_RANK", index)
        missing = sorted(name for name, value in run["intended"].items() if env.get(name) not in (value, run["prefix"].get(name, "") + value))
        if missing:
            problems.append("%s: %s (got %s)" % (where, ", ".join(missing), dict((name, env.get(name)) for name in missing)))
        # Only where a source states the image's (or the host's) library dirs; else the record says so (_lib/images.yaml).
        if "libnccl.so.2" in run["libraries_recorded"] and not rank["libs"]["libnccl.so.2"]:
            problems.append("%s: libnccl.so.2 does not resolve (LD_LIBRARY_PATH=%r)" % (where, env.get("LD_LIBRARY_PATH")))
        if needs.get("plugin_dir"):
            first = (rank["libs"]["libnccl-net.so"] or [None])[0]
            if first != needs["plugin_dir"]:
                problems.append(
                    "%s: libnccl-net.so comes from %r, not %s (LD_LIBRARY_PATH=%r)" % (where, first, needs["plugin_dir"], env.get("LD_LIBRARY_PATH"))
                )
        topo = env.get("NCCL_TOPO_FILE")
        if run["topology_file"] and topo != run["topology_file"]:
            problems.append("%s: NCCL_TOPO_FILE=%r, not the image's %s" % (where, topo, run["topology_file"]))
        if topo and not os.path.exists(run["root"] + topo):
            problems.append("%s: NCCL_TOPO_FILE=%r is not in the image" % (where, topo))
        # The record's choice, or the platform's own value where it sets one (OCI GB200's sys): it wins by design.
        allowed = set([needs.get("net_plugin"), run["intended"].get("NCCL_NET_PLUGIN")]) - set([None])
        if needs.get("net_plugin") and env.get("NCCL_NET_PLUGIN") not in allowed:
            problems.append("%s: NCCL_NET_PLUGIN=%r, wanted one of %s" % (where, env.get("NCCL_NET_PLUGIN"), sorted(allowed)))
    assert not problems, "\n".join(problems[:6] + ["(%d problems over %d ranks)" % (len(problems), len(run["ranks"]))])
