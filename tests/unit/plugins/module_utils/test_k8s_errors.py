# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The one error classifier: every form in which kubernetes.core and the Python client report API errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import CLASSES, MAX_MESSAGE, classify, runtime_not_cached

SERVER = "https://127.0.0.1:6443"


def status(code, reason, message, details=None):
    return json.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "details": details or {},
            "code": code,
        }
    )


def client_exception(code, reason, body):
    """The kubernetes Python client's ApiException text, as kubernetes.core puts it in msg."""
    return (
        "Failed to retrieve requested object: (%d)\nReason: %s\nHTTP response headers: HTTPHeaderDict({'Audit-Id': "
        "'1'})\nHTTP response body: %s\n\nOriginal traceback: \n  File \"x.py\", line 1" % (code, reason, body)
    )


FORBIDDEN_PATCH = status(
    403,
    "Forbidden",
    'trainingruntimes.trainer.kubeflow.org "nccl" is forbidden: User "burnin-restricted" '
    'cannot patch resource "trainingruntimes" in API group "trainer.kubeflow.org" in the namespace '
    '"other-ns"',
)


def test_refused_timeout_and_dns_are_unreachable_naming_the_server():
    refused = classify(
        "HTTPSConnectionPool(host='127.0.0.1', port=1): Max retries exceeded with url: /version (Caused by "
        "NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))",
        context="aws-a",
    )
    assert refused["category"] == "Unreachable" and refused["status"] == 0
    assert refused["message"] == "Cannot reach https://127.0.0.1:1 (context aws-a): the connection was refused (is the API server running?)."
    timeout = classify("HTTPSConnectionPool(host='k8s.example', port=443): Max retries exceeded (Caused by ConnectTimeoutError())")
    assert timeout["category"] == "Unreachable" and "timed out" in timeout["message"]
    dns = classify(
        "HTTPSConnectionPool(host='nowhere.invalid', port=443): Max retries exceeded (Caused by NameResolutionError("
        "'Failed to resolve: [Errno -2] Name or service not known'))"
    )
    assert dns["category"] == "Unreachable" and "does not resolve" in dns["message"]


def test_an_untrusted_certificate_is_tls_not_a_generic_unreachable():
    # Before: "SSLError" was matched first, so "certificate not trusted" could never be said.
    err = classify(
        "HTTPSConnectionPool(host='127.0.0.1', port=6443): Max retries exceeded with url: /version (Caused by SSLError("
        "SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get "
        "local issuer certificate (_ssl.c:1006)')))"
    )
    assert err["category"] == "TLS"
    assert err["message"] == ("Cannot reach https://127.0.0.1:6443: its TLS certificate is not trusted (wrong or missing " "certificate-authority).")
    mismatch = classify("SSLError(SSLCertVerificationError(\"hostname 'k8s.example' doesn't match 'other'\"))", server=SERVER)
    assert mismatch["category"] == "TLS" and "does not match" in mismatch["message"]


@pytest.mark.parametrize(
    "msg",
    [
        "Unauthorized",
        client_exception(401, "Unauthorized", status(401, "Unauthorized", "Unauthorized")),
        status(401, "Unauthorized", "Unauthorized"),
    ],
)
def test_a_refused_credential_names_server_and_context(msg):
    err = classify(msg, context="gcp-a", server=SERVER)
    assert err["category"] == "Unauthorized" and err["status"] == 401
    assert err["message"] == (
        "The API server https://127.0.0.1:6443 (context gcp-a) refused the credential (HTTP 401 "
        "Unauthorized): check the token, client certificate or exec plugin of the kubeconfig."
    )


@pytest.mark.parametrize(
    "msg",
    [
        # k8s_apply / kubernetes.core.k8s: the Status JSON alone, not in the client's "HTTP response body:" form.
        "Failed to apply object: b'%s\\n'" % FORBIDDEN_PATCH,
        client_exception(403, "Forbidden", FORBIDDEN_PATCH),
    ],
)
def test_forbidden_names_user_verb_resource_namespace_and_the_rbac_manifest(msg):
    err = classify(msg, server=SERVER)
    assert err["category"] == "Forbidden" and err["status"] == 403
    assert err["message"] == (
        'Forbidden: user "burnin-restricted" may not patch trainingruntimes.trainer.kubeflow.org in '
        'namespace "other-ns" on https://127.0.0.1:6443; grant it with extras/rbac/burnin-rbac.yaml.'
    )
    assert "cannot patch" in err["detail"]


def test_cluster_scoped_forbidden():
    err = classify(
        client_exception(
            403,
            "Forbidden",
            status(403, "Forbidden", 'nodes is forbidden: User "burnin-restricted" cannot list resource "nodes" in API group "" at the cluster scope'),
        ),
        server=SERVER,
    )
    assert err["message"] == (
        'Forbidden: user "burnin-restricted" may not list nodes at cluster scope on ' "https://127.0.0.1:6443; grant it with extras/rbac/burnin-rbac.yaml."
    )


@pytest.mark.parametrize(
    "msg",
    [
        "Failed to find exact match for trainer.kubeflow.org/v1alpha1.TrainingRuntime by [kind, name, singularName, shortNames]",
        status(404, "NotFound", 'no matches for kind "TrainingRuntime" in version "trainer.kubeflow.org/v1alpha1"'),
    ],
)
def test_a_missing_api_names_the_crd_and_the_component_to_install(msg):
    err = classify(msg, server=SERVER)
    assert err["category"] == "NotFound" and err["status"] == 404
    assert err["message"] == (
        "https://127.0.0.1:6443 has no TrainingRuntime API (trainer.kubeflow.org/v1alpha1): install " "Kubeflow Trainer (v2) on the cluster."
    )


def test_a_webhook_denial_is_invalid_with_its_field_paths():
    body = status(
        403,
        "Forbidden",
        'admission webhook "validator.trainingruntime.trainer.kubeflow.org" denied the request: '
        "spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1",
    )
    err = classify("Failed to apply object: b'%s'" % body, server=SERVER)
    assert err["category"] == "Invalid"
    assert err["message"] == (
        "The admission webhook validator.trainingruntime.trainer.kubeflow.org on https://127.0.0.1:6443 "
        "rejected the object: spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always "
        "must be 1."
    )


def test_a_runtime_the_webhook_has_not_seen_yet_is_known_by_the_raw_text_not_the_shortened_message():
    # As tests/bench/bench_scale.py met it on the node stage's runtime: the classified message is cut before the words
    # that say why, so a retry keyed on it never ran (plugins/action/k8s_apply.py now reads the raw text).
    runtime = {"name": "nccl-burnin-node-runtime", "apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime"}
    body = status(
        403,
        "Forbidden",
        'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.runtimeRef: Invalid value: %s: '
        'TrainingRuntime.trainer.kubeflow.org "nccl-burnin-node-runtime" not found: specified trainingRuntime must be created before the '
        "TrainJob is created" % json.dumps(runtime, separators=(",", ":")),
    )
    raw = "Failed to apply object: b'%s'" % body
    err = classify(raw, context="scale-gcp-h100-a", server="https://127.0.0.1:30689")
    assert err["category"] == "Invalid" and len(err["message"]) <= MAX_MESSAGE
    assert "must be created before the TrainJob" not in err["message"]
    assert runtime_not_cached(raw)
    assert not runtime_not_cached(err["message"]) and not runtime_not_cached(None)
    assert not runtime_not_cached(
        "Failed to apply object: b'%s'" % status(403, "Forbidden", 'admission webhook "x" denied the request: replicas: always must be 1')
    )


def test_invalid_conflict_and_server_errors():
    invalid = classify(
        client_exception(
            422, "Unprocessable Entity", status(422, "Invalid", 'TrainJob.trainer.kubeflow.org "x" is invalid: spec.trainer.numNodes: Invalid value: -1')
        ),
        server=SERVER,
    )
    assert invalid["category"] == "Invalid" and "spec.trainer.numNodes: Invalid value: -1" in invalid["message"]
    conflict = classify(status(409, "Conflict", 'Apply failed with 1 conflict: conflict with "kubectl": .spec.x'))
    assert conflict["category"] == "Conflict" and conflict["status"] == 409
    server = classify(client_exception(500, "Internal Server Error", status(500, "InternalError", "etcdserver: leader changed")))
    assert server["category"] == "ServerError" and "HTTP 500" in server["message"]


def test_plain_text_and_ansible_prefixes():
    assert classify("Task failed: Module failed: plain failure\nsecond")["message"] == "plain failure."
    assert classify("Exception '404\nReason: Not Found\n")["category"] == "NotFound"


def test_every_result_is_short_and_classified():
    for msg in ("x" * 5000, status(500, "x", "y" * 5000), "Connection refused " + "z" * 5000):
        err = classify(msg)
        assert err["category"] in CLASSES and len(err["message"]) <= MAX_MESSAGE and len(err["detail"]) <= 2000


# What the mutation run of cluster/k8s_errors.py (docs/mutation.md) found untested: each class's own sentence (a
# mutant that sent an Invalid or an Error down the NotFound or Conflict branch kept the server's words in the
# message), what counts as a Status object, and the kubeconfig's context lookup.

CONFLICT = (
    'Operation cannot be fulfilled on trainingruntimes.trainer.kubeflow.org "nccl": the object has been modified; please apply your changes to '
    "the latest version and try again"
)


@pytest.mark.parametrize(
    "code, reason, message, category, sentence",
    [
        (
            422,
            "Invalid",
            'TrainJob.trainer.kubeflow.org "x" is invalid: spec.trainer.numNodes: Invalid value: -1',
            "Invalid",
            'The API server https://127.0.0.1:6443 rejected the object: TrainJob.trainer.kubeflow.org "x" is invalid: spec.trainer.numNodes: '
            "Invalid value: -1.",
        ),
        (
            400,
            "BadRequest",
            "the server rejected our request due to an error in our request",
            "Invalid",
            "The API server https://127.0.0.1:6443 rejected the object: the server rejected our request due to an error in our request.",
        ),
        (
            404,
            "NotFound",
            'trainjobs.trainer.kubeflow.org "x" not found',
            "NotFound",
            'Not found on https://127.0.0.1:6443: trainjobs.trainer.kubeflow.org "x" not found.',
        ),
        (409, "Conflict", CONFLICT, "Conflict", "Conflict on https://127.0.0.1:6443: %s." % CONFLICT),
        (
            500,
            "InternalError",
            "etcdserver: leader changed",
            "ServerError",
            "The API server https://127.0.0.1:6443 failed (HTTP 500): etcdserver: leader changed.",
        ),
        (
            503,
            "ServiceUnavailable",
            "the server is currently unable to handle the request",
            "ServerError",
            "The API server https://127.0.0.1:6443 failed (HTTP 503): the server is currently unable to handle the request.",
        ),
        # The Status of an EKS 1.32 API server (stackabletech/stackablectl#370: message, reason and code as printed
        # there): no class of its own, the server's words alone.
        (429, "TooManyRequests", "storage is (re)initializing", "Error", "storage is (re)initializing."),
        (
            403,
            "Forbidden",
            'pods "w-0" is forbidden: exceeded quota: gpu, requested: requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=8, '
            "limited: requests.nvidia.com/gpu=8",
            "Forbidden",
            'Forbidden on https://127.0.0.1:6443: pods "w-0" is forbidden: exceeded quota: gpu, requested: requests.nvidia.com/gpu=8, used: '
            "requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8. Grant the burn-in's rights with extras/rbac/burnin-rbac.yaml.",
        ),
    ],
)
def test_each_class_has_its_own_sentence(code, reason, message, category, sentence):
    for msg in (status(code, reason, message), client_exception(code, reason, status(code, reason, message))):
        err = classify(msg, server=SERVER)
        assert (err["category"], err["status"], err["message"], err["detail"]) == (category, code, sentence, message)


def test_without_a_server_the_sentence_says_the_api_server_and_the_context():
    invalid = status(422, "Invalid", "spec.x: Required value")
    assert classify(invalid)["message"] == "The API server rejected the object: spec.x: Required value."
    assert classify(invalid, context="aws-a")["message"] == "The API server (context aws-a) rejected the object: spec.x: Required value."
    assert classify(invalid, context="aws-a", server=SERVER)["message"] == (
        "The API server https://127.0.0.1:6443 (context aws-a) rejected the object: spec.x: Required value."
    )
    assert classify(status(409, "Conflict", CONFLICT), context="aws-a")["message"] == "Conflict on the API server (context aws-a): %s." % CONFLICT
    # the URL in the text when no server is given; the pool's host and port before the server given
    assert classify("GET https://10.0.0.1:6443/apis/x: (500)\nReason: Internal Server Error\n")["message"] == (
        "The API server https://10.0.0.1:6443 failed (HTTP 500): GET https://10.0.0.1:6443/apis/x: (500)."
    )
    pool = "HTTPSConnectionPool(host='10.0.0.2', port=443): Max retries exceeded with url: /version"
    assert classify(pool, server=SERVER)["message"] == "Cannot reach https://10.0.0.2:443: it did not answer."


def test_a_status_is_known_by_its_kind_or_its_code_and_nothing_else():
    # kind Status without a code: still the server's answer (status 0, its message)
    no_code = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": 'trainjobs "x" is gone'})
    assert classify(no_code) == {"category": "Error", "status": 0, "detail": 'trainjobs "x" is gone', "message": 'trainjobs "x" is gone.'}
    # an object that is no Status (the applied object, printed before the answer) is not the answer, whatever its kind
    for kind in ("TrainJob", "ConfigMap"):
        applied = json.dumps({"kind": kind, "apiVersion": "v1", "metadata": {"name": "x"}})
        err = classify("Failed to create object %s: %s" % (applied, status(409, "AlreadyExists", '%s "x" already exists' % kind)))
        assert (err["category"], err["status"]) == ("Conflict", 409)
    # nor is a JSON start that is no JSON: the Status after it is read
    err = classify('Failed to apply object: {"kind": Status, cut}: %s' % status(422, "Invalid", "spec.x: Required value"))
    assert (err["category"], err["status"]) == ("Invalid", 422)
    # a code that is no number is no HTTP status; a Status without a message says its reason
    assert classify(json.dumps({"kind": "Status", "code": "403", "message": "no"}))[("status")] == 0
    assert classify(status(404, "NotFound", ""), server=SERVER)["message"] == "Not found on https://127.0.0.1:6443: NotFound."
    assert classify(json.dumps({"kind": "Status", "code": 500}))["message"] == "The API server failed (HTTP 500): ."
    assert classify(json.dumps({"kind": "Status", "code": 429}))["message"] == "Unknown error."


def test_a_webhook_denial_without_its_own_words_keeps_the_whole_message_and_names_the_context():
    err = classify(status(403, "Forbidden", 'admission webhook "vjob.x" denied the request'), context="gcp-a", server=SERVER)
    assert (err["category"], err["status"]) == ("Invalid", 403)
    assert err["message"] == (
        'The admission webhook vjob.x on https://127.0.0.1:6443 (context gcp-a) rejected the object: admission webhook "vjob.x" denied the request.'
    )


def test_only_a_401_or_an_unauthorized_line_without_another_status_is_unauthorized():
    assert classify("Unauthorized: (403)\nReason: Forbidden\n")["category"] == "Forbidden"
    assert classify("Unauthorized: (400)\nReason: Bad Request\n")["category"] == "Invalid"
    assert classify("(400)\nReason: Bad Request\n")["category"] == "Invalid"
    assert classify("(401)\nReason: x\n")["category"] == "Unauthorized"
    assert classify("Unauthorized")["status"] == 401


def kubeconfig(order):
    contexts = [{"name": "aws-a", "context": {"cluster": "cluster-a"}}, {"name": "gcp-b", "context": {"cluster": "cluster-b"}}]
    clusters = [{"name": "cluster-a", "cluster": {"server": "https://a:6443"}}, {"name": "cluster-b", "cluster": {"server": "https://b:6443"}}]
    return {"current-context": "gcp-b", "contexts": contexts[::order], "clusters": clusters[::order]}


@pytest.mark.parametrize("order", [1, -1])
def test_the_kubeconfig_server_is_that_of_the_context_asked_else_the_current_one(tmp_path, order):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import kubeconfig_server

    config = kubeconfig(order)
    assert kubeconfig_server(config) == "https://b:6443"
    assert kubeconfig_server(config, "aws-a") == "https://a:6443"
    assert kubeconfig_server(config, "gcp-b") == "https://b:6443"
    assert kubeconfig_server(config, "azure-c") is None
    # read from a file: its names are new strings, equal to the ones asked for, not the same objects
    path = tmp_path / "config"
    path.write_text(json.dumps(config))
    assert kubeconfig_server(str(path), "".join(["aws", "-a"])) == "https://a:6443"
    assert kubeconfig_server(str(path)) == "https://b:6443"
    # a file that cannot be read leaves the server out, it does not fail the report
    assert kubeconfig_server(str(tmp_path / "missing")) is None
    path.write_text("contexts: [")
    assert kubeconfig_server(str(path)) is None


def test_a_kubeconfig_file_is_read_again_only_when_its_size_or_time_changes(tmp_path):
    import os

    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import kubeconfig_server

    path = tmp_path / "config"
    path.write_text(json.dumps(kubeconfig(1)))
    assert kubeconfig_server(str(path), "aws-a") == "https://a:6443"
    stat = os.stat(str(path))
    # The same size and time: the first reading answers (a batch's clusters share one file).
    path.write_text(json.dumps(kubeconfig(1)).replace("https://a:6443", "https://c:6443"))
    os.utime(str(path), ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert kubeconfig_server(str(path), "aws-a") == "https://a:6443"
    # A new time: read again.
    os.utime(str(path), ns=(stat.st_atime_ns, stat.st_mtime_ns + 1000))
    assert kubeconfig_server(str(path), "aws-a") == "https://c:6443"
    # A new size: read again, and a context whose cluster has no server, or is not listed, has none.
    path.write_text(json.dumps(dict(kubeconfig(1), clusters=[{"name": "cluster-a", "cluster": {}}])))
    assert kubeconfig_server(str(path), "aws-a") is None and kubeconfig_server(str(path), "gcp-b") is None


@pytest.mark.parametrize(
    "msg",
    [
        # the forms kubernetes.core's discovery and the API server print for a CRD nobody installed (prometheus-operator's
        # ServiceMonitor, NFD's NodeFeatureRule): the group's component is named when it is one of ours, else the group
        "Failed to find exact match for monitoring.coreos.com/v1.ServiceMonitor by [kind, name, singularName, shortNames]",
        status(404, "NotFound", 'no matches for kind "ServiceMonitor" in version "monitoring.coreos.com/v1"'),
    ],
)
def test_a_missing_api_of_another_group_names_the_group(msg):
    err = classify(msg, server=SERVER)
    assert (err["category"], err["status"]) == ("NotFound", 404)
    assert err["message"] == (
        "https://127.0.0.1:6443 has no ServiceMonitor API (monitoring.coreos.com/v1): install the component that serves monitoring.coreos.com on the cluster."
    )


def _detail_forms(filler):
    return {
        "status": status(500, "InternalError", filler),
        "webhook": status(403, "Forbidden", 'admission webhook "v.x" denied the request: ' + filler),
        "missing api": "Failed to find exact match for a.b/v1.K " + filler,
        "transport": "Connection refused " + filler,
        "unauthorized": "Unauthorized " + filler,
        "plain": "plain " + filler,
    }


@pytest.mark.parametrize("form", sorted(_detail_forms("")))
def test_the_detail_is_whole_up_to_2000_characters_and_cut_one_past(form):
    # the detail is the server's message for a Status (its words only), the raw text otherwise
    def detail_of(length):
        words = _detail_forms("")[form]
        own = json.loads(words)["message"] if words.startswith("{") else words
        filler = "d" * (length - len(own))
        return classify(_detail_forms(filler)[form])["detail"]

    whole = detail_of(2000)
    assert len(whole) == 2000 and whole.endswith("d")
    assert detail_of(2001) == whole[:1997] + "..."
