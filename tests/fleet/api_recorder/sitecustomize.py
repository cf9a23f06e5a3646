"""Test tooling: records every HTTP request the Kubernetes Python client makes in this process and its children.

Put this directory on PYTHONPATH and set GPUFLEET_API_RECORD to a file: each request the client's REST layer
(kubernetes.client.rest.RESTClientObject.request, which kubernetes.core's client and the collection's actions use)
sends is appended as one JSON line {method, url, status}. tests/e2e/test_rbac_manifest.py derives from these lines
the rights a burn-in used. Nothing is recorded without the variable; a failure to record never fails the request.
"""

import json
import os

RECORD = os.environ.get("GPUFLEET_API_RECORD")


def _install():
    try:
        from kubernetes.client import rest
    except ImportError:
        return
    original = rest.RESTClientObject.request
    if getattr(original, "_gpufleet_recorded", False):
        return

    def request(self, method, url, *args, **kwargs):
        status = None
        try:
            response = original(self, method, url, *args, **kwargs)
            status = getattr(response, "status", None)
            return response
        except rest.ApiException as exc:
            status = exc.status
            raise
        finally:
            # The URL carries the query (the client encodes it before this layer).
            line = json.dumps({"method": method, "url": url, "status": status})
            try:
                fd = os.open(RECORD, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, (line + "\n").encode())
                finally:
                    os.close(fd)
            except OSError:
                pass

    request._gpufleet_recorded = True
    rest.RESTClientObject.request = request


if RECORD:
    _install()
