# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""One HTTP request of the export (plugins/plugin_utils/export_run.py) that always ends: one total deadline for the
connection, the request and the whole answer, and every transport error an answer (status None) with a message
that holds neither the URL's secrets nor the server's text.

A socket timeout bounds each read only (a server sending a byte every half second never trips it), so a timer
shuts the socket down at the deadline; the blocked read then ends and the request is reported as unanswered.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import http.client
import socket
import ssl
import threading
import time

from urllib.parse import unquote, urlsplit
from urllib.request import getproxies, proxy_bypass

# The answer's body is not used; reading this much keeps the exchange orderly and bounded.
MAX_ANSWER_BYTES = 65536


class DeadlineExceeded(Exception):
    pass


def _basic(user, password):
    token = base64.b64encode(("%s:%s" % (unquote(user or ""), unquote(password or ""))).encode("utf-8")).decode("ascii")
    return "Basic %s" % token


def _proxy_for(scheme, host):
    """The proxy of the environment (http_proxy, https_proxy, no_proxy) for SCHEME and HOST, as urlsplit parts, or None."""
    try:
        if proxy_bypass(host):
            return None
        proxy = getproxies().get(scheme)
        return urlsplit(proxy if "//" in proxy else "http://" + proxy) if proxy else None
    except (ValueError, OSError):
        return None


class _Guard(object):
    """Shuts the connection's socket down when the deadline passes (the request's thread is blocked in it)."""

    def __init__(self, seconds):
        self.deadline = time.monotonic() + seconds
        self.expired = False
        self.connection = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def _expire(self):
        with self._lock:
            self.expired = True
            sock = getattr(self.connection, "sock", None)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def check(self):
        if self.expired:
            raise DeadlineExceeded()

    def remaining(self):
        return max(0.0, self.deadline - time.monotonic())

    def create_connection(self, address, timeout=None, source_address=None):
        """socket.create_connection with the name resolved within the deadline: getaddrinfo takes no timeout and
        a socket's shutdown does not end it, so it runs in a thread that is waited for only until the deadline."""
        host, port = address[0], address[1]
        answer = {}

        def resolve():
            try:
                answer["infos"] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
            except (OSError, UnicodeError) as exc:
                answer["error"] = exc

        thread = threading.Thread(target=resolve, name="gpufleet-export-resolve")
        thread.daemon = True
        thread.start()
        thread.join(self.remaining())
        if thread.is_alive():
            raise DeadlineExceeded()
        if "error" in answer:
            raise answer["error"]
        last = OSError("%s has no address" % host)
        for info in answer["infos"]:
            self.check()
            # Until the socket is made the timer cannot shut it down: the connect itself waits no longer than the deadline.
            wait = self.remaining() if timeout is None else min(timeout, self.remaining())
            try:
                return socket.create_connection(info[4][:2], max(wait, 0.001), source_address)
            except OSError as exc:
                last = exc
        raise last

    def __enter__(self):
        self._timer.start()
        return self

    def __exit__(self, *exc):
        self._timer.cancel()
        return False


def _connection(parts, timeout, validate_certs, guard):
    """The http.client connection for URL PARTS (through the environment's proxy when one applies) and the request
    target to send."""
    host, port = parts.hostname, parts.port
    https = parts.scheme == "https"
    context = None
    if https:
        context = ssl.create_default_context()
        if not validate_certs:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
    proxy = _proxy_for(parts.scheme, host)
    target = parts.path or "/"
    if parts.query:
        target = "%s?%s" % (target, parts.query)
    proxy_headers = {}
    if proxy is not None and proxy.username:
        proxy_headers["Proxy-Authorization"] = _basic(proxy.username, proxy.password)

    class Connection(http.client.HTTPSConnection if https else http.client.HTTPConnection):
        def connect(self):
            guard.check()
            super(Connection, self).connect()
            guard.check()  # the timer may have fired while the socket was being made

    kwargs = {"timeout": timeout}
    if https:
        kwargs["context"] = context
    if proxy is None:
        connection = Connection(host, port, **kwargs)
    elif https:
        connection = Connection(proxy.hostname, proxy.port or 3128, **kwargs)
        connection.set_tunnel(host, port or 443, headers=proxy_headers)
        proxy_headers = {}
    else:
        connection = Connection(proxy.hostname, proxy.port or 3128, **kwargs)
        netloc = host if ":" not in host else "[%s]" % host
        target = "http://%s%s%s" % (netloc, ":%d" % port if port else "", target)
    # http.client's own hook for making the socket: the name is resolved within the deadline too.
    connection._create_connection = guard.create_connection
    return connection, target, proxy_headers


def request(url, method, body, headers, timeout, validate_certs=True):
    """(status, error) of one request to URL, ended by TIMEOUT seconds in all; ERROR is '' on a 2xx. Status None: no
    (HTTP) answer. Credentials in the URL's user part are sent as Basic authorization. Redirects are not followed."""
    try:
        parts = urlsplit(url)
        parts.port  # pylint: disable=pointless-statement  # a bad port raises here
    except ValueError:
        return None, "not a URL"
    headers = dict(headers or {})
    if parts.username and not any(key.lower() == "authorization" for key in headers):
        headers["Authorization"] = _basic(parts.username, parts.password)
    with _Guard(timeout) as guard:
        connection = None
        try:
            connection, target, proxy_headers = _connection(parts, timeout, validate_certs, guard)
            guard.connection = connection
            headers.update(proxy_headers)
            connection.request(method, target, body=body, headers=headers)
            guard.check()
            response = connection.getresponse()
            response.read(MAX_ANSWER_BYTES)
            guard.check()
            status = response.status
            if 200 <= status < 300:
                return status, ""
            return status, ("HTTP %d %s" % (status, _printable(response.reason))).strip()
        except DeadlineExceeded:
            return None, "no answer within %g s" % timeout
        except (socket.timeout, TimeoutError):
            return None, "no answer within %g s" % timeout
        except http.client.HTTPException as exc:
            if guard.expired:
                return None, "no answer within %g s" % timeout
            # BadStatusLine, IncompleteRead, LineTooLong, RemoteDisconnected: something answered, not (whole) HTTP.
            return None, "not an HTTP answer (%s)" % exc.__class__.__name__
        except ssl.SSLError as exc:
            return None, "TLS failed (%s)" % (getattr(exc, "reason", None) or exc.__class__.__name__)
        except (OSError, ValueError) as exc:
            # ConnectionRefusedError, gaierror, OSError of a shut-down socket, UnicodeError of a header, InvalidURL.
            if guard.expired:
                return None, "no answer within %g s" % timeout
            return None, "no answer: %s" % (_printable(getattr(exc, "strerror", None) or "") or exc.__class__.__name__)
        finally:
            if connection is not None:
                connection.close()


def _printable(text):
    """At most 80 printable ASCII characters of a server's or the OS's TEXT (it ends up in the fleet summary)."""
    text = "%s" % (text or "",)
    return "".join(char if " " <= char <= "~" else "?" for char in text[:80])
