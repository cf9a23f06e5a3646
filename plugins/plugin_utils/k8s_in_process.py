# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""kubernetes.core's k8s module code (client, service, runner), run inside Ansible's worker process on the controller.

Why: a kubernetes.core module is a new Python process per task and cluster, which spends about a second of CPU
importing the Kubernetes client before its first request. Ansible imports action plugins in its main process before
forking the workers, so importing kubernetes.core's module_utils here, at import time, is paid once per playbook;
every worker inherits the loaded client. The requests, the server-side apply, check mode (server dry run), diffs and
errors are kubernetes.core's own: ``ControllerModule`` only stands in for the parts of ``AnsibleModule`` its code uses.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import threading

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.parameters import remove_values
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.detect import node_evidence
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import classify, kubeconfig_server
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import MAX_LOG_BYTES, LogBound
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed  # noqa: F401 pylint: disable=unused-import
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.validate import check_numbers

try:
    from ansible.executor.module_common import _get_action_arg_defaults
except ImportError:  # not in this ansible-core: only group/gpufleet.burnin.k8s module_defaults apply
    _get_action_arg_defaults = None

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.runner import perform_action, run_module
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.resource import create_definitions
    from ansible_collections.kubernetes.core.plugins.modules.k8s import argspec as k8s_argspec
    from ansible_collections.kubernetes.core.plugins.modules.k8s_info import argspec as k8s_info_argspec
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
    from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService, decode_response

    def _apply_body(definition):
        """The body as kubernetes.core's k8s_apply sends it: JSON bytes to kubernetes clients before 25.0.0."""
        import kubernetes

        major = int(str(getattr(kubernetes, "__version__", "25")).split(".", 1)[0] or 0)
        return json.dumps(definition).encode() if major < 25 else definition

    class ServerSideApply(K8sService):
        """kubernetes.core's K8sService whose ``apply`` is the server-side apply PATCH its ``k8s_apply`` ends with,
        without the read of the object that precedes it there (``apply_object``: a client-side patch that server-side
        apply does not use; the runner's ``retrieve`` has read the object already, for the diff)."""

        def __init__(self, service, server_side_apply, absent_namespace=None):
            super(ServerSideApply, self).__init__(service.client, service.module)
            self.server_side_apply = server_side_apply
            self.absent_namespace = absent_namespace

        def retrieve(self, resource, definition):
            """The runner's read for the diff, but of the namespace ABSENT_NAMESPACE (a read just found it missing) or of
            an object in it: None, as kubernetes.core's retrieve answers for an object not found."""
            meta = definition.get("metadata") or {}
            if self.absent_namespace and (
                meta.get("namespace") == self.absent_namespace or (definition.get("kind") == "Namespace" and meta.get("name") == self.absent_namespace)
            ):
                return None
            return super(ServerSideApply, self).retrieve(resource, definition)

        def apply(self, resource, definition, existing=None):
            del existing
            try:
                return decode_response(
                    resource.server_side_apply(
                        body=_apply_body(definition),
                        name=definition["metadata"]["name"],
                        namespace=definition["metadata"].get("namespace"),
                        force_conflicts=self.server_side_apply["force_conflicts"],
                        field_manager=self.server_side_apply["field_manager"],
                        serialize=False,
                    )
                )
            except Exception as e:
                reason = e.body if hasattr(e, "body") else e
                raise CoreException("Failed to apply object: {0}".format(reason)) from e

    # The client is what costs: import it now, in the main process (the runner imports it lazily on first use).
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s import client as _client  # noqa: F401 pylint: disable=unused-import

    IMPORT_ERROR = None
except ImportError as exc:  # kubernetes.core or the kubernetes Python client is missing
    IMPORT_ERROR = exc

    def k8s_argspec():
        return {}

    k8s_info_argspec = k8s_argspec

display = Display()

# kubernetes.core's client creation (get_api_client) loads the kubeconfig into the kubernetes client's process-wide
# default configuration before copying it: two threads creating clients at once can get each other's cluster (the
# inventory benchmark saw a context of one cluster read another's nodes). One client is created at a time, here and in
# kubernetes.core's runner (its module-level name, wrapped once below); requests run in parallel.
_CLIENT_CREATION = threading.Lock()
# And one client per authentication, for the process: kubernetes.core pools its clients by their configuration, but
# reads the kubeconfig file to make that configuration at every call (a batch asked two or three times per cluster).
# The same options, kubeconfig file (its size and time) and dry run: the client kubernetes.core's pool would give.
_CLIENTS = {}


def _client_key(module):
    params = module.params
    auth = dict((name, params.get(name)) for name in sorted(AUTH_ARG_SPEC) if params.get(name) is not None)
    kubeconfig, stat = auth.get("kubeconfig"), None
    if isinstance(kubeconfig, str):
        try:
            found = os.stat(os.path.expanduser(kubeconfig))
            stat = [found.st_size, found.st_mtime_ns]
        except OSError:
            pass
    return json.dumps([auth, stat, bool(getattr(module, "server_side_dry_run", False))], sort_keys=True, default=str)


def _one_at_a_time(create):
    def created(module=None, **kwargs):
        with _CLIENT_CREATION:
            if module is None or kwargs or not isinstance(getattr(module, "params", None), dict):
                return create(module, **kwargs)
            key = _client_key(module)
            if key not in _CLIENTS:
                _CLIENTS[key] = create(module)
            return _CLIENTS[key]

    created.gpufleet_serialized = True
    return created


_one_client = _one_at_a_time(lambda module=None, **kwargs: get_api_client(module, **kwargs))

if IMPORT_ERROR is None:
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s import runner as _runner

    if not getattr(_runner.get_api_client, "gpufleet_serialized", False):
        _runner.get_api_client = _one_at_a_time(_runner.get_api_client)


class ModuleExit(Exception):
    """Raised by ``exit_json``/``fail_json``: carries the module result out of kubernetes.core's runner."""

    def __init__(self, result):
        super(ModuleExit, self).__init__(result.get("msg", ""))
        self.result = result


class ControllerModule(object):
    """The parts of ``AnsibleModule`` that kubernetes.core's K8S module code uses, for ``AnsibleK8SModule``."""

    def __init__(self, argument_spec, params, check_mode, diff, name, mutually_exclusive=None, supports_check_mode=True):
        del supports_check_mode  # the caller only passes what kubernetes.core's modules support
        validated = ArgumentSpecValidator(argument_spec, mutually_exclusive=mutually_exclusive).validate(params)
        self.no_log_values = set(validated._no_log_values)  # pylint: disable=protected-access
        if validated.error_messages:
            raise ModuleExit(self._finish({"failed": True, "msg": "; ".join(validated.error_messages)}))
        self.params = validated.validated_parameters
        self.check_mode = bool(check_mode)
        self._diff = bool(diff)
        self._name = name

    def _finish(self, result):
        return remove_values(result, self.no_log_values)

    def warn(self, warning):
        display.warning(remove_values(warning, self.no_log_values))

    def deprecate(self, msg, **kwargs):
        del kwargs
        display.warning("deprecated: %s" % remove_values(msg, self.no_log_values))

    def debug(self, msg):
        display.debug(remove_values(msg, self.no_log_values))

    def exit_json(self, **kwargs):
        raise ModuleExit(self._finish(kwargs))

    def fail_json(self, msg, **kwargs):
        kwargs.pop("exception", None)  # a traceback is not for users; kubernetes.core's message says what failed
        kwargs.update(failed=True, msg=msg)
        raise ModuleExit(self._finish(kwargs))


# As kubernetes.core.k8s's main().
K8S_MUTUALLY_EXCLUSIVE = [
    ("resource_definition", "src"),
    ("merge_type", "apply"),
    ("template", "resource_definition"),
    ("template", "src"),
    ("name", "generate_name"),
]


# kubernetes.core's dependency checks of a module (AnsibleK8SModule: requires kubernetes, has_at_least, requires pyyaml)
# each import kubernetes_validate, which is not installed: a failed import searches sys.path again every time, under
# Python's import lock, three times per client. They run for this process's first module only; until one passed, each
# module runs them.
_DEPENDENCIES = {"checked": False}


def _k8s_module(**kwargs):
    """kubernetes.core's AnsibleK8SModule with KWARGS, its dependency checks run once per process."""
    checks = {"check_k8s": False, "check_pyyaml": False} if _DEPENDENCIES["checked"] else {}
    module = AnsibleK8SModule(**dict(kwargs, **checks))
    _DEPENDENCIES["checked"] = True
    return module


def run_k8s(params, check_mode, diff, name):
    """Run kubernetes.core.k8s's code with ``params`` (its options, validated against its own argument spec) in this
    process; return the module result dict."""

    def module_class(**kwargs):
        return ControllerModule(params=copy.deepcopy(params), check_mode=check_mode, diff=diff, name=name, **kwargs)

    try:
        module = _k8s_module(module_class=module_class, argument_spec=k8s_argspec(), mutually_exclusive=K8S_MUTUALLY_EXCLUSIVE, supports_check_mode=True)
        try:
            run_module(module)
        except CoreException as exc:
            module.fail_from_exception(exc)
    except ModuleExit as done:
        return done.result
    return {"failed": True, "msg": "%s: kubernetes.core's runner returned no result" % name}


def apply_with(service, params, absent_namespace=None, again=None):
    """kubernetes.core.k8s's result of a server-side apply with PARAMS (``resource_definition``, ``server_side_apply``,
    ``hidden_fields``) through SERVICE (k8s_reader's, connected): kubernetes.core's runner as ``run_module`` runs it
    (``perform_action`` object by object: the read for the diff, the apply, the diff and the hidden fields; the
    result shaped, the first error failed, secrets removed, by the module's exit and fail), with ServerSideApply's one
    request per apply; ABSENT_NAMESPACE: a namespace a read just found missing, neither it nor its objects read again.
    AGAIN(msg, tries), when given, is asked after an object's apply failed with MSG (TRIES: its failures so far): true,
    once it has waited, applies that object again, and only it (the ones before it are applied).
    Not for check or diff mode: run_k8s."""
    service = ServerSideApply(service, params["server_side_apply"], absent_namespace)
    # As run_k8s's module does: the caller's objects are not changed (the runner sets each one's kind and apiVersion).
    module, params = service.module, dict(copy.deepcopy(params), apply=True)
    results, changed = [], False
    try:
        for definition in create_definitions(params):
            tries = 0
            while True:
                try:
                    result = perform_action(service, definition, params)
                    break
                except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                    tries += 1
                    if again is not None and again(str(exc), tries):
                        continue
                    error = dict(getattr(exc, "result", None) or {})
                    if getattr(exc.__cause__, "reason", None) is not None:
                        error["reason"] = exc.__cause__.reason
                    error["msg"] = str(exc)
                    module.fail_json(**error)
            changed |= result["changed"]
            results.append(result)
        if len(results) == 1:
            module.exit_json(**results[0])
        module.exit_json(changed=changed, result={"results": results})
    except ModuleExit as done:
        return done.result
    return {"failed": True, "msg": "kubernetes.core's runner returned no result"}


def k8s_reader(params, name):
    """kubernetes.core's K8sService (client and all) for reads with ``params`` (kubernetes.core.k8s_info's options,
    authentication included), to call repeatedly in this process. Errors of a read raise: ``ModuleExit`` (its
    ``result['msg']``), kubernetes.core's ``CoreException`` or the client's own exceptions."""

    def module_class(**kwargs):
        return ControllerModule(params=copy.deepcopy(params), check_mode=False, diff=False, name=name, **kwargs)

    module = _k8s_module(module_class=module_class, argument_spec=k8s_info_argspec(), supports_check_mode=True)
    return K8sService(_one_client(module), module)


def pod_log(dynamic, pod, tail_lines=None, max_bytes=None, cuts=None):
    """The log of every container of POD, in order, as kubernetes.core.k8s_log with all_containers reads it (through
    the DYNAMIC client, unserialized; the last TAIL_LINES lines of each, or all), streamed and bounded to MAX_BYTES for
    the whole pod (pod_logs.LogBound: head, tail and the lines between that are not NCCL INFO lines; default
    pod_logs.MAX_LOG_BYTES). A log that was cut is recorded in CUTS (a dict: pod name -> the cut), when given."""
    metadata = pod["metadata"]
    path = "/api/v1/namespaces/%s/pods/%s/log" % (metadata["namespace"], metadata["name"])
    names = [c["name"] for c in (pod.get("status") or {}).get("containerStatuses") or []]
    bound = LogBound(MAX_LOG_BYTES if max_bytes is None else max_bytes)
    for name in names:
        query = [("container", name)] + ([] if tail_lines is None else [("tailLines", tail_lines)])
        response = dynamic.request("get", path, serialize=False, query_params=query)
        try:
            while True:
                chunk = response.read(1 << 16)
                if not chunk:
                    break
                bound.feed(chunk)
        finally:
            response.release_conn()
    text, cut = bound.result()
    if cut and cuts is not None:
        cuts[metadata["name"]] = cut
    return text


def dynamic_client_of(service):
    """The kubernetes dynamic client under kubernetes.core's K8sService (its K8SClient's)."""
    return service.client.client


def configured_server(auth):
    """The API server's URL as AUTH (kubernetes.core's options, K8S_AUTH_* or the default kubeconfig) names it, before
    any client exists: for the message about a cluster that never answered."""
    kubeconfig = auth.get("kubeconfig") or os.environ.get("K8S_AUTH_KUBECONFIG") or "~/.kube/config"
    return auth.get("host") or kubeconfig_server(kubeconfig, auth.get("context") or os.environ.get("K8S_AUTH_CONTEXT"))


def server_of(service, auth):
    """The API server's URL, for error messages."""
    return getattr(getattr(service.client, "configuration", None), "host", None) or configured_server(auth)


def error_text(exc):
    """The message of a failed read: kubernetes.core's result message, or the exception's text."""
    return exc.result.get("msg") if isinstance(exc, ModuleExit) else str(exc)


def get_json(dynamic, path, **params):
    """GET PATH (not a Kubernetes object: no kind) through kubernetes.core's dynamic client, with the query PARAMS the
    client takes (limit, _continue, ...); the parsed JSON."""
    return json.loads(dynamic.request("get", path, serialize=False, **params).data.decode("utf-8"))


# A list read a page at a time: a cluster of thousands of nodes is never one response, and a server that keeps
# answering "continue" is stopped (MAX_LIST_PAGES * LIST_PAGE objects).
LIST_PAGE = 500
NODES_PATH = "/api/v1/nodes"
MAX_LIST_PAGES = 200


def list_json(dynamic, path, keep=None):
    """The items of the list at PATH (a collection's URL, /api/v1/nodes) through kubernetes.core's dynamic client,
    LIST_PAGE at a time (the API's limit and continue), each passed through KEEP as its page arrives: the JSON as the server sent
    it, not the client's objects (kubernetes.core's find makes every field an object first: a millisecond per Node).
    Raises ValueError past MAX_LIST_PAGES pages."""
    items, token, page = [], None, LIST_PAGE
    for _page in range(MAX_LIST_PAGES):
        found = get_json(dynamic, path, limit=page, _continue=token)
        items.extend(item if keep is None else keep(item) for item in found.get("items") or [])
        token = (found.get("metadata") or {}).get("continue")
        if not token:
            return items
    raise ValueError("%s: still more after %d pages of %d" % (path, MAX_LIST_PAGES, page))


def _hide(obj, paths):
    """OBJ without the fields PATHS (dotted, as kubernetes.core's hidden_fields): what a wait does not keep."""
    for path in paths:
        parent = obj
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    return obj


def _close_unpooled(response, pool):
    """Close RESPONSE, whose connection never went back to POOL, and give POOL back the slot it took."""
    response.close()
    if pool is not None:
        pool._put_conn(None)  # pylint: disable=protected-access


class ListWatch(object):
    """``list()`` and ``watch(resource_version, seconds)`` of one kind in one namespace, for
    module_utils/cluster/watching.py, through kubernetes.core's client (its dynamic client: authentication, TLS and
    proxies are kubernetes.core's). ``stop()``, from another thread, ends the watch being read."""

    CONNECT_SECONDS = 10
    # A watch with bookmarks hears from the API server about every minute (its watch cache sends a bookmark that often),
    # whatever the watch's own timeout: a stream silent for longer than that and the slack is a dead link (a server gone
    # without closing), and its read ends; module_utils/cluster/watching.py opens it again.
    BOOKMARK_SECONDS = 60
    READ_SLACK_SECONDS = 15

    def __init__(self, service, kind, api_version, namespace=None, field_selector=None, label_selector=None, hidden_fields=()):
        self._service, self._kind, self._api_version, self._namespace = service, kind, api_version, namespace
        self._selectors = dict((key, value) for key, value in (("field_selector", field_selector), ("label_selector", label_selector)) if value)
        self._hidden = [field.split(".") for field in hidden_fields]
        self._path = None
        self._lock = threading.Lock()
        self._response = None
        self._stopped = False
        self._interrupted = False

    def path(self):
        """The kind's URL path in the namespace (discovery, cached by kubernetes.core's client)."""
        if self._path is None:
            self._path = self._service.find_resource(self._kind, self._api_version, fail=True).path(namespace=self._namespace)
        return self._path

    def list(self):
        timeout = (self.CONNECT_SECONDS, 60 + self.READ_SLACK_SECONDS)
        response = self._service.client.client.request("get", self.path(), serialize=False, _request_timeout=timeout, **self._selectors)
        listed = json.loads(response.data.decode("utf-8"))
        for item in listed.get("items") or []:
            _hide(item, self._hidden)
        return listed

    def watch(self, resource_version, seconds):
        response = self._service.client.client.request(
            "get",
            self.path(),
            serialize=False,
            watch=True,
            allow_watch_bookmarks=True,
            resource_version=resource_version,
            timeout_seconds=int(seconds),
            _request_timeout=(self.CONNECT_SECONDS, min(int(seconds), self.BOOKMARK_SECONDS) + self.READ_SLACK_SECONDS),
            **self._selectors,
        )
        # Never back in the client's shared pool: urllib3 puts a connection back there itself when its stream ends, in
        # the reader's thread, and _end() could then shut down a socket another thread had taken ([Errno 9]). The
        # stream's own socket is closed when it ends, and its pool gets its slot back.
        pool = getattr(response, "_pool", None)
        response._pool = None  # pylint: disable=protected-access
        with self._lock:
            if self._stopped or self._interrupted:
                self._interrupted = False
                _close_unpooled(response, pool)
                return iter(())
            self._response = response
        return self._events(response, pool)

    def _events(self, response, pool):
        from kubernetes.watch.watch import iter_resp_lines

        try:
            for line in iter_resp_lines(response):
                if not line.strip():
                    continue
                event = json.loads(line)
                if isinstance(event.get("object"), dict) and event.get("type") != "ERROR":
                    _hide(event["object"], self._hidden)
                yield event
        finally:
            # Under the lock: _end() shuts down or closes only the response being read.
            with self._lock:
                self._response = None
                _close_unpooled(response, pool)

    def interrupt(self):
        """End the watch being read, or the next one opened (its reader sees the stream end or fail, looks at what it
        has and watches again): from another thread that has news the watched objects do not show."""
        self._end("_interrupted")

    def stop(self):
        """End the watch being read (its reader sees the stream end or fail) and any later one."""
        self._end("_stopped")

    def _end(self, flag):
        """Set FLAG (the attribute's name) and end the watch being read."""
        with self._lock:
            setattr(self, flag, True)
            # Still under the lock: the reader's connection is not back in the pool (_events) while it is ended here.
            if self._response is not None:
                try:
                    # urllib3 2.3+ can end a read blocked in another thread; close() alone may wait for it.
                    getattr(self._response, "shutdown", lambda: None)()
                except (OSError, ValueError, RuntimeError):
                    # urllib3 closed it already: a read that failed closes the connection in the reader's thread
                    # before the reader reaches _events' lock ([Errno 9] on its socket), a close() clears the shutdown.
                    pass
                self._response.close()


def read_cluster(auth, name):
    """One cluster's ``/version`` and nodes (what detection reads of each, detect.node_evidence) with kubernetes.core's
    client, as cluster_detect reads them: ``{server, kubernetes_version, nodes}``, or ``{server, error}`` with the
    error classified (k8s_errors.classify), never a traceback."""
    server = configured_server(auth)
    try:
        reader = k8s_reader(dict(auth, kind="Node", api_version="v1"), name)
        server = server_of(reader, auth)
        version = get_json(reader.client.client, "/version")
        nodes = list_json(reader.client.client, NODES_PATH, keep=node_evidence)
    # Classified: the inventory says why a cluster is in its unreachable group.
    except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
        return {"server": server, "error": classify(error_text(exc), context=auth.get("context"), server=server)}
    return {"server": server, "kubernetes_version": version.get("gitVersion", ""), "nodes": nodes}


def module_defaults_auth(task, templar, spec, own):
    """The options of SPEC other than OWN (kubernetes.core's authentication options) that TASK's module_defaults give
    kubernetes.core.k8s, templated by TEMPLAR (whose variables say for which host)."""
    if _get_action_arg_defaults is None:
        return {}
    auth = dict((name, option) for name, option in spec.items() if name not in own)
    names = set(auth)
    names.update(alias for option in auth.values() for alias in option.get("aliases", []))
    try:
        # ansible-core's own lookup (private, the same in 2.19 to 2.21), with its template engine.
        defaults = _get_action_arg_defaults("kubernetes.core.k8s", task, getattr(templar, "_engine", templar))
    except (AttributeError, TypeError):
        return {}
    defaults = dict((key, value) for key, value in defaults.items() if key in names)
    return templar.template(defaults) if defaults else {}


def host_auth(task, templar, spec, own, given):
    """kubernetes.core's authentication options for one host of a task run once for many: the task's module_defaults
    templated with that host's variables (TEMPLAR's), under the options the task GIVES itself; validated against SPEC,
    only those that are set."""
    params = dict(module_defaults_auth(task, templar, spec, own), **templar.template(given))
    auth_spec = dict((name, option) for name, option in spec.items() if name not in own)
    validated = ArgumentSpecValidator(auth_spec).validate(params)
    if validated.error_messages:
        raise BurninError("; ".join(validated.error_messages))
    return dict((key, value) for key, value in validated.validated_parameters.items() if value is not None)


class K8sActionBase(ActionBase):
    """An action plugin that talks to a cluster with kubernetes.core's code in the worker process, taking
    kubernetes.core's authentication options as its modules do."""

    _supports_async = False
    # The plugin's own options (the rest of its spec are kubernetes.core's authentication options).
    OWN = {}
    # The plugin's FQCN, for messages; its argument spec (a function); its options that are seconds or counts >= 0.
    NAME = ""
    SPEC = None
    NON_NEGATIVE = ()

    def run(self, tmp=None, task_vars=None):
        result = super(K8sActionBase, self).run(tmp, task_vars)
        del tmp
        if self.missing_requirements():
            return dict(result, failed=True, msg=self.missing_requirements())
        try:
            check_numbers(self.SPEC(), self._task.args)
        except BurninError as exc:
            return dict(result, failed=True, msg="%s: %s" % (self.NAME, exc))
        args, auth = self.validated_args(self.SPEC())
        for option in self.NON_NEGATIVE:
            if args[option] < 0:
                return dict(result, failed=True, msg="%s: must be >= 0, got %d" % (option, args[option]))
        return self.run_with(result, args, auth)

    @staticmethod
    def shown_error(error):
        """The classified ERROR as the task result shows it: the server's own words (``detail``) only at -v or more,
        since ansible-playbook prints a failed task's whole result."""
        if not error or display.verbosity >= 1:
            return error
        return dict((key, value) for key, value in error.items() if key != "detail")

    def run_with(self, result, args, auth):
        """The plugin's work, with its validated options ARGS and kubernetes.core's authentication options AUTH."""
        raise NotImplementedError

    def missing_requirements(self):
        """The failure message when kubernetes.core or the kubernetes client cannot be imported, else None."""
        if IMPORT_ERROR is None:
            return None
        return "%s needs the kubernetes.core collection and the kubernetes Python client on the controller: %s" % (self.NAME, IMPORT_ERROR)

    def kubernetes_core_defaults(self, spec):
        """The authentication options that module_defaults give kubernetes.core.k8s in this task (for example through
        group/kubernetes.core.k8s), so this plugin connects where kubernetes.core's modules in the same play do."""
        return module_defaults_auth(self._task, self._templar, spec, self.OWN)

    def validated_args(self, spec):
        """The task's options (module_defaults included) validated against SPEC; K8S_AUTH_* of the task's
        `environment:` exported as they would reach a kubernetes.core module process (this worker is forked for this
        task and host only). Returns (args, kubernetes.core's authentication options that are set)."""
        self._task.args = dict(self.kubernetes_core_defaults(spec), **self._task.args)
        validation, args = self.validate_argument_spec(argument_spec=spec)
        del validation
        environment = {}
        self._compute_environment_string(environment)
        os.environ.update((key, "%s" % value) for key, value in environment.items())
        auth = dict((key, args[key]) for key in spec if key not in self.OWN and args.get(key) is not None)
        return args, auth
