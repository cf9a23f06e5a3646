# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.filter import k8s_error as k8s_error_filter
from ansible_collections.gpufleet.burnin.plugins.filter.k8s_error import k8s_error

REFUSED = (
    "HTTPSConnectionPool(host='127.0.0.1', port=47095): Max retries exceeded with url: /version (Caused by "
    "NewConnectionError(\"HTTPSConnection(host='127.0.0.1', port=47095): Failed to establish a new connection: "
    '[Errno 111] Connection refused"))'
)


def test_the_filter_is_the_core_classifier_with_context_and_server():
    err = k8s_error(REFUSED, context="aws-use1-h100-a")
    assert err["category"] == "Unreachable" and err["status"] == 0
    assert err["message"] == ("Cannot reach https://127.0.0.1:47095 (context aws-use1-h100-a): the connection was refused " "(is the API server running?).")
    assert "Errno 111" in err["detail"]
    unauthorized = k8s_error("Unauthorized", server="https://10.0.0.1:6443")
    assert unauthorized["category"] == "Unauthorized" and "https://10.0.0.1:6443" in unauthorized["message"]


@pytest.mark.parametrize("msg", ["", None])
def test_empty_messages(msg):
    assert k8s_error(msg) == {"category": "Error", "status": 0, "message": "unknown error.", "detail": ""}


def test_bad_input_and_export():
    assert list(k8s_error_filter.FilterModule().filters()) == ["k8s_error"]
    with pytest.raises(AnsibleFilterError, match="gpufleet.burnin.k8s_error: msg: "):
        k8s_error(["x"])


def test_the_server_is_read_from_the_kubeconfig_of_the_context(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: b\nclusters:\n"
        "- {name: ca, cluster: {server: 'https://10.1.1.1:6443'}}\n"
        "- {name: cb, cluster: {server: 'https://10.2.2.2:6443'}}\n"
        "contexts:\n- {name: a, context: {cluster: ca, user: u}}\n- {name: b, context: {cluster: cb, user: u}}\n"
        "users:\n- {name: u, user: {token: secret-token}}\n"
    )
    err = k8s_error("Unauthorized", context="a", kubeconfig=str(kubeconfig))
    assert "https://10.1.1.1:6443 (context a)" in err["message"] and "secret-token" not in str(err)
    assert "https://10.2.2.2:6443" in k8s_error("Unauthorized", kubeconfig=str(kubeconfig))["message"]
    assert k8s_error("Unauthorized", context="a", kubeconfig=str(tmp_path / "missing"))["message"].startswith("The API server (context a) refused")
