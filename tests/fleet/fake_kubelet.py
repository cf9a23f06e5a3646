"""Fake kubelet of the test fleet: serves container logs for the fake nodes over HTTPS on loopback.

kube-apiserver answers `pods/log` by proxying to the kubelet of the pod's node, at the node's InternalIP
(127.0.0.1 here) and `status.daemonEndpoints.kubeletEndpoint.Port`: `GET /containerLogs/<ns>/<pod>/<container>`
with `tailLines`, `limitBytes`, `timestamps`, `previous`, `follow`. Every cluster of the fleet has its own kubelet
port (recorded in state.json), so one process listening on one port per cluster tells the clusters apart.

TLS as a real kubelet: the serving certificate is signed by the fleet CA for 127.0.0.1 (the API servers verify it
with --kubelet-certificate-authority), and clients must present a certificate of that CA (the API servers' kubelet
client certificate, --kubelet-client-certificate); anything else is refused in the handshake.

Logs are files written by the test controller: DIR/kubelet/<cluster>/<namespace>/<pod>/<container>.log. A pod
or container without a file is a 404, like a kubelet that does not know it.

Usage (fleet.py starts and stops it):
    python fake_kubelet.py --dir FLEET_DIR
It writes FLEET_DIR/kubelet.ready once every port listens; SIGTERM stops it.
"""

import argparse
import json
import signal
import ssl
import sys
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

LOOPBACK = "127.0.0.1"
stop_event = threading.Event()


def log(msg):
    print(f"{datetime.now().strftime('%H:%M:%S')} [kubelet] {msg}", file=sys.stderr, flush=True)


def safe_part(text):
    """A path segment of a Kubernetes name: no traversal, no separators."""
    return bool(text) and text not in (".", "..") and "/" not in text and "\\" not in text and "\0" not in text


def select_lines(text, query):
    """Apply the kubelet's tailLines and limitBytes (in that order, as the kubelet does)."""
    tail = query.get("tailLines", [None])[0]
    if tail is not None:
        try:
            n = int(tail)
        except ValueError:
            return None, f"tailLines: invalid value {tail!r}"
        lines = text.splitlines(keepends=True)
        text = "".join(lines[-n:]) if n > 0 else ""
    limit = query.get("limitBytes", [None])[0]
    data = text.encode()
    if limit is not None:
        try:
            data = data[:max(0, int(limit))]
        except ValueError:
            return None, f"limitBytes: invalid value {limit!r}"
    return data, None


def make_handler(cluster, root):
    class Handler(BaseHTTPRequestHandler):
        server_version = "gpufleet-fake-kubelet/1"
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # noqa: A003 - BaseHTTPRequestHandler API
            log(f"{cluster}: {self.address_string()} " + (fmt % args))

        def reply(self, code, body, content_type="text/plain; charset=utf-8"):
            data = body if isinstance(body, bytes) else body.encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802 - BaseHTTPRequestHandler API
            url = urlsplit(self.path)
            if url.path in ("/healthz", "/readyz"):
                return self.reply(200, "ok")
            parts = [unquote(p) for p in url.path.split("/")[1:]]
            if len(parts) != 4 or parts[0] != "containerLogs" or not all(safe_part(p) for p in parts[1:]):
                return self.reply(404, "404 page not found\n")
            namespace, pod, container = parts[1:]
            query = parse_qs(url.query)
            if query.get("previous", ["false"])[0] == "true":
                return self.reply(400, f'previous terminated container "{container}" in pod "{pod}" not found')
            pod_dir = root / cluster / namespace / pod
            if not pod_dir.is_dir():
                return self.reply(404, f'pod "{pod}" in namespace "{namespace}" not found on this node')
            path = pod_dir / f"{container}.log"
            if not path.is_file():
                return self.reply(404, f'container "{container}" in pod "{pod}" is not available')
            data, problem = select_lines(path.read_text(errors="replace"), query)
            if problem:
                return self.reply(400, problem)
            return self.reply(200, data)

    return Handler


def serve(cluster, port, root, ctx, servers):
    httpd = ThreadingHTTPServer((LOOPBACK, port), make_handler(cluster, root))
    httpd.daemon_threads = True
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    servers.append(httpd)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.5}, name=cluster, daemon=True).start()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="fleet directory (holds state.json and pki/)")
    a = ap.parse_args(argv)
    d = Path(a.dir).resolve()
    state = json.loads((d / "state.json").read_text())
    pki = d / "pki"

    def on_signal(signum, frame):
        stop_event.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(pki / "kubelet.crt"), str(pki / "kubelet.key"))
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(cafile=str(pki / "ca.crt"))
    root = d / "kubelet"
    root.mkdir(exist_ok=True)
    servers = []
    for name, c in state["clusters"].items():
        serve(name, int(c["kubelet_port"]), root, ctx, servers)
    (d / "kubelet.ready").write_text(str(time.time()))
    log(f"serving container logs of {len(servers)} clusters on " +
        ", ".join(f"{n}:{c['kubelet_port']}" for n, c in state["clusters"].items()))
    while not stop_event.wait(1):
        pass
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()
    log("stopping")
    return 0


if __name__ == "__main__":
    sys.exit(main())
