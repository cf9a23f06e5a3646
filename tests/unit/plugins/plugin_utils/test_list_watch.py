# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""plugins/plugin_utils/k8s_in_process.py's ListWatch against a fake dynamic client: what a list and a watch ask the
API server (selectors, resourceVersion, the watch's timeout on both sides, bookmarks), the fields a wait does not
keep taken out, the stream read line by line, and stop() ending a stream read in another thread."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import threading

import pytest

from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import ListWatch


class Response(object):
    """A urllib3 response: DATA whole, or CHUNKS streamed; BLOCK, when given, is waited for after the chunks (a quiet
    stream) until close()."""

    def __init__(self, data=b"", chunks=(), block=False):
        self.data, self.chunks, self.block = data, list(chunks), block
        self.closed = threading.Event()

    def stream(self, amt=None, decode_content=False):
        yield from self.chunks
        if self.block:
            assert self.closed.wait(10), "never closed"
            raise RuntimeError("Response ended prematurely")

    def close(self):
        self.closed.set()

    def release_conn(self):
        pass


class Resource(object):
    def path(self, namespace=None):
        return "/apis/trainer.kubeflow.org/v1alpha1/namespaces/%s/trainjobs" % namespace


class Service(object):
    def __init__(self, responses):
        self.client = self
        self.responses = list(responses)
        self.requests = []

    # service.client.client (the dynamic client) is this object too.

    def find_resource(self, kind, api_version, fail=False):
        return Resource()

    def request(self, method, path, **params):
        self.requests.append((method, path, params))
        return self.responses.pop(0)


def job(name, version):
    return {"metadata": {"name": name, "resourceVersion": version, "managedFields": [{"big": 1}]}, "spec": {"x": 1}, "status": {}}


def line(kind, obj):
    return (json.dumps({"type": kind, "object": obj}) + "\n").encode()


def read_in_thread(source):
    """SOURCE's watch from resourceVersion 1, read in a daemon thread: (the thread, the objects of its events, the error
    that ended it (str), an Event set at the first event and at the end)."""
    seen, ended, first = [], [], threading.Event()

    def read():
        try:
            for event in source.watch("1", 60):
                seen.append(event["object"])
                first.set()
        except Exception as exc:  # pylint: disable=broad-except
            ended.append(str(exc))
        first.set()

    thread = threading.Thread(target=read)
    thread.daemon = True
    thread.start()
    return thread, seen, ended, first


def names(objects):
    return [obj["metadata"]["name"] for obj in objects]


def test_list_and_watch_ask_what_the_watch_rule_needs_and_keep_no_hidden_field():
    listed = {"items": [job("a", "5")], "metadata": {"resourceVersion": "7"}}
    data = line("MODIFIED", job("a", "8"))
    # An event split over two chunks, and a bookmark.
    chunks = [data[:10], data[10:] + line("BOOKMARK", {"metadata": {"resourceVersion": "9"}})]
    service = Service([Response(json.dumps(listed).encode()), Response(chunks=chunks)])
    source = ListWatch(
        service, "TrainJob", "trainer.kubeflow.org/v1alpha1", "ns", field_selector="metadata.name=a", hidden_fields=["metadata.managedFields", "spec"]
    )
    got = source.list()
    assert got["items"] == [{"metadata": {"name": "a", "resourceVersion": "5"}, "status": {}}]
    events = list(source.watch("7", 60))
    assert [e["type"] for e in events] == ["MODIFIED", "BOOKMARK"]
    assert events[0]["object"] == {"metadata": {"name": "a", "resourceVersion": "8"}, "status": {}}
    (m1, path, listing), (m2, dummy, watching) = service.requests
    assert (m1, m2, path) == ("get", "get", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs")
    assert listing["field_selector"] == "metadata.name=a" and "watch" not in listing
    assert watching["watch"] is True and watching["resource_version"] == "7" and watching["timeout_seconds"] == 60
    assert watching["allow_watch_bookmarks"] is True and watching["field_selector"] == "metadata.name=a"
    # The client's read timeout lies past the server's end of the watch: a dead link ends the read, a quiet watch not.
    assert watching["_request_timeout"][1] > 60
    assert watching["serialize"] is False


@pytest.mark.parametrize("seconds, read_timeout", [(1, 16), (59, 74), (60, 75), (61, 75), (300, 75), (3600, 75)])
def test_a_watch_reads_for_one_bookmark_period_and_slack_at_most(seconds, read_timeout):
    # The server ends the watch after SECONDS and sends a bookmark about every minute before that (its watch cache): a
    # read silent for longer than a minute and the slack is a dead link, whatever the watch's length.
    service = Service([Response(chunks=[line("BOOKMARK", {"metadata": {"resourceVersion": "9"}})])])
    source = ListWatch(service, "TrainJob", "trainer.kubeflow.org/v1alpha1", "ns")
    assert [e["type"] for e in source.watch("7", seconds)] == ["BOOKMARK"]
    ((verb, path, watching),) = service.requests
    assert (verb, path) == ("get", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs")
    assert watching["timeout_seconds"] == seconds and watching["_request_timeout"] == (ListWatch.CONNECT_SECONDS, read_timeout)


def test_stop_ends_a_stream_read_in_another_thread_and_any_later_watch():
    response = Response(chunks=[line("ADDED", job("p", "3"))], block=True)
    service = Service([response, Response(chunks=[line("ADDED", job("q", "4"))])])
    source = ListWatch(service, "Pod", "v1", "ns", label_selector="jobset.sigs.k8s.io/jobset-name in (a)")
    thread, seen, ended, first = read_in_thread(source)
    # Bounded: a reader that fails before its first event ends the test with its error, never a wait without end.
    assert first.wait(10) and names(seen) == ["p"], ended
    source.stop()
    thread.join(5)
    assert not thread.is_alive() and names(seen) == ["p"] and ended == ["Response ended prematurely"]
    assert list(source.watch("3", 60)) == []


def test_interrupt_ends_the_stream_being_read_or_the_next_one_but_not_the_ones_after():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import POD_HIDDEN

    victim = {
        "metadata": {"name": "p", "resourceVersion": "3"},
        "spec": {"nodeName": "n1", "affinity": {"big": 1}},
        "status": {"phase": "Running", "conditions": [{"type": "DisruptionTarget", "reason": "PreemptionByScheduler"}]},
    }
    response = Response(chunks=[line("MODIFIED", victim)], block=True)
    service = Service([response, Response(chunks=[line("ADDED", job("q", "4"))]), Response(chunks=[line("ADDED", job("r", "5"))])])
    source = ListWatch(service, "Pod", "v1", "ns", hidden_fields=POD_HIDDEN)
    thread, seen, ended, first = read_in_thread(source)
    assert first.wait(10), ended
    # What a wait keeps of a pod says that the scheduler preempted it (cluster/trainjobs.py settled_by_preemption).
    assert seen[0]["status"]["conditions"][0]["reason"] == "PreemptionByScheduler" and "affinity" not in seen[0]["spec"]
    source.interrupt()
    thread.join(5)
    assert not thread.is_alive() and ended == ["Response ended prematurely"]
    # Interrupted with no stream open: the next watch ends at once, the one after streams again.
    source.interrupt()
    assert list(source.watch("4", 60)) == []
    assert [e["object"]["metadata"]["name"] for e in source.watch("4", 60)] == ["r"]


class Pool(object):
    def __init__(self):
        self.put = []

    def _put_conn(self, conn):
        self.put.append(conn)


def test_a_watchs_connection_never_goes_back_to_the_shared_pool():
    # urllib3 releases a connection to its pool itself when the stream ends, in the reader's thread; another thread
    # could then take it while stop() shuts its socket down. So the response has no pool while it is read, its socket is
    # closed at the end, and the pool only gets its slot back (None), never the connection.
    pool = Pool()
    response = Response(chunks=[line("ADDED", job("a", "2"))])
    response._pool = pool  # pylint: disable=protected-access
    source = ListWatch(Service([response]), "TrainJob", "trainer.kubeflow.org/v1alpha1", namespace="burnin")
    events = source.watch("1", 60)
    assert response._pool is None  # pylint: disable=protected-access
    assert [event["object"]["metadata"]["name"] for event in events] == ["a"]
    assert response.closed.is_set() and pool.put == [None]
    # a watch opened after stop() is closed at once, its slot given back too
    stopped = Response(chunks=[line("ADDED", job("b", "3"))])
    stopped._pool = pool  # pylint: disable=protected-access
    source = ListWatch(Service([stopped]), "TrainJob", "trainer.kubeflow.org/v1alpha1", namespace="burnin")
    source.stop()
    assert list(source.watch("1", 60)) == [] and stopped.closed.is_set() and pool.put == [None, None]


def streaming_server(body):
    """A local HTTP server that answers one request with BODY as a chunk and then holds the stream open (a quiet watch)
    until the returned Event is set: (its URL, the Event)."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    done = threading.Event()

    def serve():
        conn, dummy = server.accept()
        with conn:
            while b"\r\n\r\n" not in conn.recv(65536):
                pass
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            conn.sendall(b"%x\r\n%s\r\n" % (len(body), body))
            done.wait(10)
        server.close()

    thread = threading.Thread(target=serve)
    thread.daemon = True
    thread.start()
    return "http://127.0.0.1:%d" % server.getsockname()[1], done


def test_stop_and_interrupt_end_a_stream_whose_connection_urllib3_already_closed():
    # A read that fails (a cut stream, a read timeout) makes urllib3 close the connection in the reader's thread
    # (HTTPResponse._error_catcher), before the reader reaches _events' lock. A stop() or interrupt() from another thread
    # in between met a response whose socket was closed, and its shutdown() raised [Errno 9] out of that thread's stage.
    import urllib3

    for end in ("stop", "interrupt"):
        url, done = streaming_server(line("ADDED", job("a", "2")))
        manager = urllib3.PoolManager()

        class RealService(Service):
            def request(self, method, path, **params):
                return manager.request("GET", url + path, preload_content=False, timeout=urllib3.Timeout(connect=5, read=10))

        source = ListWatch(RealService([]), "TrainJob", "trainer.kubeflow.org/v1alpha1", namespace="burnin")
        events = source.watch("1", 60)
        assert next(events)["object"]["metadata"]["name"] == "a"
        response = source._response  # pylint: disable=protected-access
        response._connection.close()  # pylint: disable=protected-access
        getattr(source, end)()
        assert response.closed
        events.close()
        assert source._response is None  # pylint: disable=protected-access
        done.set()
