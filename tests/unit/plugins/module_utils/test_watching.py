# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The watch rule of plugins/module_utils/cluster/watching.py under a fake clock and a fake watch stream: the end seen
at the event that says so, resourceVersion carried from list to watch and from watch to watch (events and BOOKMARKs),
a re-list on 410 Gone (ERROR event or HTTP status), reconnects with back-off within the unreachable grace, the
watch's own timeout, the wait's timeout, and the fall back to polling when no watch can be opened."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.watching import WatchError, watch_until

# The polling tests' fake clock and error texts (a sibling file, not a package).
_SPEC = importlib.util.spec_from_file_location("_polling_tests", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_polling.py"))
_POLLING = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_POLLING)
FORBIDDEN, REFUSED, FakeClock = _POLLING.FORBIDDEN, _POLLING.REFUSED, _POLLING.FakeClock


class Gone(Exception):
    status = 410


def job(name, version, ended=False):
    status = {"conditions": [{"type": "Complete", "status": "True"}]} if ended else {}
    return {"metadata": {"name": name, "resourceVersion": str(version)}, "status": status}


def event(kind, obj, at=None):
    return {"type": kind, "object": obj, "at": at}


class FakeSource(object):
    """list() and watch() answering from scripts: LISTS (list JSONs or exceptions) and WATCHES (each a list of events,
    an event's ``at`` the clock's time since the start when it arrives, or an exception raised when the watch is
    opened); a watch whose script ran out waits out its seconds and ends, as the server does."""

    def __init__(self, clock, lists, watches):
        self.clock, self.lists, self.watches = clock, list(lists), list(watches)
        self.calls = []

    def list(self):
        self.calls.append(("list", self.clock.now - self.clock.start))
        outcome = self.lists.pop(0) if len(self.lists) > 1 else self.lists[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def watch(self, resource_version, seconds):
        self.calls.append(("watch", resource_version, seconds))
        script = self.watches.pop(0) if self.watches else []
        if isinstance(script, Exception):
            raise script  # pylint: disable=raising-bad-type
        return self._stream(script, seconds)

    def _stream(self, script, seconds):
        opened = self.clock.now
        for item in script:
            if isinstance(item, Exception):
                raise item
            if item.get("at") is not None:
                self.clock.now = max(self.clock.now, self.clock.start + item["at"])
            yield item
        self.clock.now = max(self.clock.now, opened + seconds)


def listed(version, *items):
    return {"items": list(items), "metadata": {"resourceVersion": str(version)}}


def ended(objects):
    return bool(objects) and all(obj["status"].get("conditions") for obj in objects.values())


def run(source, clock, timeout=600, grace=120, **kwargs):
    return watch_until(source, ended, timeout, grace, clock=clock.clock, sleep=clock.sleep, **kwargs)


def test_the_end_is_seen_at_the_event_not_at_a_poll():
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [[event("MODIFIED", job("a", 11), at=3), event("MODIFIED", job("a", 12, True), at=11.2)]])
    out = run(source, clock)
    assert out["state"] == "done"
    assert clock.now - clock.start == pytest.approx(11.2)
    assert clock.sleeps == []
    # Five minutes a watch, the least client-go's informers ask for.
    assert source.calls == [("list", 0.0), ("watch", "10", 300)]
    assert (out["polls"], out["lists"], out["watches"]) == (2, 1, 1)


def test_already_ended_at_the_list_opens_no_watch():
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9, True))], [])
    assert run(source, clock)["state"] == "done"
    assert [call[0] for call in source.calls] == ["list"]


def test_a_watch_that_ends_is_opened_again_from_the_last_version_seen():
    clock = FakeClock()
    source = FakeSource(
        clock,
        [listed(10, job("a", 9))],
        [
            [event("MODIFIED", job("a", 15), at=5)],
            [event("BOOKMARK", {"metadata": {"resourceVersion": "20"}}, at=70)],
            [event("MODIFIED", job("a", 21, True), at=130)],
        ],
    )
    out = run(source, clock, watch_seconds=60)
    assert out["state"] == "done"
    assert [call for call in source.calls if call[0] == "watch"] == [("watch", "10", 60), ("watch", "15", 60), ("watch", "20", 60)]
    assert out["lists"] == 1


@pytest.mark.parametrize("gone", [event("ERROR", {"kind": "Status", "code": 410, "reason": "Expired"}), Gone("(410) Gone")])
def test_410_gone_lists_again(gone):
    clock = FakeClock()
    source = FakeSource(
        clock,
        [listed(10, job("a", 9)), listed(500, job("a", 499))],
        [[gone] if isinstance(gone, dict) else gone, [event("MODIFIED", job("a", 501, True), at=12)]],
    )
    out = run(source, clock)
    assert out["state"] == "done"
    assert out["relists"] == 1 and out["lists"] == 2
    assert [call[:2] for call in source.calls if call[0] == "watch"] == [("watch", "10"), ("watch", "500")]


def test_a_deleted_object_leaves_the_objects_and_done_may_raise():
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [[event("DELETED", job("a", 12), at=4)]])

    def done(objects):
        if "a" not in objects:
            raise LookupError('TrainJob "a" not found in namespace "ns" (it was deleted)')
        return False

    out = watch_until(source, done, 600, 120, clock=clock.clock, sleep=clock.sleep)
    assert out["state"] == "error"
    assert "deleted" in out["error"]["message"]


def test_a_killed_api_server_is_reconnected_with_back_off_from_the_last_version():
    clock = FakeClock()
    # The stream breaks at 5 s; three reconnects are refused; the fourth resumes and sees the end.
    source = FakeSource(
        clock,
        [listed(10, job("a", 9))],
        [
            [event("MODIFIED", job("a", 14), at=5), ConnectionError(REFUSED)],
            ConnectionError(REFUSED),
            ConnectionError(REFUSED),
            ConnectionError(REFUSED),
            [event("MODIFIED", job("a", 30, True), at=25)],
        ],
    )
    out = run(source, clock, grace=120)
    assert out["state"] == "done"
    assert clock.sleeps == [1, 2, 4, 8]
    assert [call[1] for call in source.calls if call[0] == "watch"] == ["10", "14", "14", "14", "14"]
    assert out["reconnects"] == 4 and out["lists"] == 1


def test_unreachable_only_after_the_grace_as_polling():
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [[ConnectionError(REFUSED)]] + [ConnectionError(REFUSED)] * 100)
    out = run(source, clock, grace=30, backoff_cap=5)
    assert out["state"] == "unreachable"
    assert out["error"]["category"] == "Unreachable"
    assert 30 <= out["unreachable_seconds"] < 35
    assert max(clock.sleeps) == 5


def test_an_unreachable_list_keeps_the_grace_too():
    clock = FakeClock()
    source = FakeSource(clock, [ConnectionError(REFUSED), ConnectionError(REFUSED), listed(10, job("a", 9, True))], [])
    out = run(source, clock, grace=30)
    assert out["state"] == "done"
    assert clock.sleeps == [1, 2]


def test_no_watch_right_falls_back_to_polling():
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [RuntimeError(FORBIDDEN)])
    out = run(source, clock)
    assert out["state"] == "unwatchable"
    assert out["error"]["category"] == "Forbidden"


def test_a_refusal_after_a_watch_worked_is_an_error_not_a_fall_back():
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [[event("MODIFIED", job("a", 11), at=2)], RuntimeError(FORBIDDEN)])
    assert run(source, clock)["state"] == "error"


def test_the_wait_times_out_and_the_last_watch_asks_only_for_what_is_left():
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [])
    out = run(source, clock, timeout=150, watch_seconds=60)
    assert out["state"] == "timeout"
    assert [call[2] for call in source.calls if call[0] == "watch"] == [60, 60, 30]
    assert clock.now - clock.start == pytest.approx(150)


def test_a_watch_that_the_server_ends_at_once_is_not_asked_again_in_a_busy_loop():
    clock = FakeClock()

    class Cut(FakeSource):
        def _stream(self, script, seconds):
            return iter(())

    source = Cut(clock, [listed(10, job("a", 9))], [])
    out = run(source, clock, timeout=60, backoff_cap=8)
    assert out["state"] == "timeout"
    assert out["watches"] < 15
    assert clock.sleeps[:4] == [1, 2, 4, 8]


def test_other_error_event_ends_the_wait():
    clock = FakeClock()
    status = {"kind": "Status", "code": 500, "reason": "InternalError", "message": "etcd is sad"}
    source = FakeSource(clock, [listed(10, job("a", 9))], [[event("ERROR", status, at=1)]])
    out = run(source, clock)
    assert out["state"] == "error"
    assert out["error"]["status"] == 500


def test_every_event_reaches_on_event_and_the_objects_follow_them():
    clock = FakeClock()
    got = []
    source = FakeSource(
        clock,
        [listed(10, job("a", 9), job("b", 8))],
        [[event("ADDED", job("c", 11), at=1), event("DELETED", job("b", 12), at=2), event("MODIFIED", job("a", 13, True), at=3)]],
    )
    out = run(source, clock, on_event=lambda kind, obj: got.append((kind, obj["metadata"]["name"])))
    assert got == [("LISTED", "a"), ("LISTED", "b"), ("ADDED", "c"), ("DELETED", "b"), ("MODIFIED", "a")]
    assert sorted(out["value"]) == ["a", "c"]
    assert out["state"] == "timeout"


def test_a_stream_cut_while_read_is_a_lost_connection_not_an_error():
    clock = FakeClock()
    broken = RuntimeError("('Connection broken: IncompleteRead(0 bytes read, 2 more expected)', IncompleteRead(0 bytes read, 2 more expected))")
    source = FakeSource(
        clock,
        [listed(10, job("a", 9))],
        [[event("MODIFIED", job("a", 12), at=2), broken], [event("MODIFIED", job("a", 13, True), at=9)]],
    )
    out = run(source, clock)
    assert out["state"] == "done"
    assert out["reconnects"] == 1 and clock.sleeps == [1]
    assert [call[1] for call in source.calls if call[0] == "watch"] == ["10", "12"]


def test_a_stream_cut_again_and_again_ends_as_unreachable_after_the_grace():
    clock = FakeClock()
    cut = RuntimeError("Response ended prematurely")
    source = FakeSource(clock, [listed(10, job("a", 9))], [[cut]] * 200)
    out = run(source, clock, grace=20, backoff_cap=2)
    assert out["state"] == "unreachable"
    assert "The watch on" in out["error"]["message"] and "broke" in out["error"]["message"]
    assert 20 <= out["unreachable_seconds"] < 23


def test_a_proxy_that_cuts_every_stream_after_a_while_never_makes_the_cluster_unreachable():
    clock = FakeClock()
    cut = RuntimeError("Response ended prematurely")

    class Idle(FakeSource):
        def _stream(self, script, seconds):
            # 30 s without events, then the proxy cuts the stream.
            self.clock.now += 30
            for item in script:
                if isinstance(item, Exception):
                    raise item
                yield item

    source = Idle(clock, [listed(10, job("a", 9))], [[cut]] * 10 + [[event("MODIFIED", job("a", 20, True))]])
    out = run(source, clock, grace=60, backoff_cap=2)
    assert out["state"] == "done", out
    assert out["reconnects"] == 10


def test_without_a_list_first_the_watch_starts_without_a_version_and_its_added_events_fill_the_objects():
    clock = FakeClock()
    source = FakeSource(
        clock,
        [RuntimeError("no list expected")],
        [
            # the server's synthetic ADDED event of the object there already, then a change
            [event("ADDED", job("a", 7)), event("MODIFIED", job("a", 9, ended=True), at=3)],
        ],
    )
    seen = []
    out = watch_until(source, ended, 60, 30, clock=clock.clock, sleep=clock.sleep, on_event=lambda kind, obj: seen.append(kind), list_first=False)
    assert out["state"] == "done" and out["lists"] == 0 and out["watches"] == 1 and out["polls"] == 1
    assert source.calls == [("watch", None, 60)] and seen == ["ADDED", "MODIFIED"]


def test_without_a_list_first_a_410_watches_again_from_no_version_with_the_objects_forgotten():
    clock = FakeClock()
    source = FakeSource(
        clock,
        [RuntimeError("no list expected")],
        [
            [event("ADDED", job("a", 7)), event("ADDED", job("b", 8))],
            Gone("Gone"),
            [event("ADDED", job("b", 20, ended=True))],
        ],
    )
    out = watch_until(source, ended, 60, 30, watch_seconds=5, clock=clock.clock, sleep=clock.sleep, list_first=False)
    # the second watch goes on from the first's last version; after 410 the third has none, and "a" (gone meanwhile)
    # is no longer among the objects
    assert [call[1] for call in source.calls] == [None, "8", None]
    assert out["state"] == "done" and out["relists"] == 1 and out["lists"] == 0 and list(out["value"]) == ["b"]


def test_without_a_list_first_a_watch_that_cannot_be_opened_is_unwatchable():
    clock = FakeClock()
    source = FakeSource(clock, [RuntimeError("no list expected")], [RuntimeError(FORBIDDEN)])
    out = watch_until(source, ended, 60, 30, clock=clock.clock, sleep=clock.sleep, list_first=False)
    assert out["state"] == "unwatchable" and out["lists"] == 0 and source.calls == [("watch", None, 60)]


# ------------------------------------------------------------------------------------ issue 47, third round


def test_unreachable_exactly_at_the_grace():
    clock = FakeClock()
    # refused at 0, 1 and 3 s: the third try is 3 s after the first, the grace
    source = FakeSource(clock, [listed(10, job("a", 9))], [ConnectionError(REFUSED)] * 10)
    out = run(source, clock, grace=3)
    assert (out["state"], out["unreachable_seconds"], clock.sleeps) == ("unreachable", 3.0, [1, 2])


def test_an_unreachable_first_list_ends_after_the_grace_too():
    clock = FakeClock()
    source = FakeSource(clock, [ConnectionError(REFUSED)], [])
    out = run(source, clock, grace=30)
    assert out["state"] == "unreachable" and out["lists"] == len(clock.sleeps) + 1 and 30 <= out["unreachable_seconds"] < 40


def test_a_refused_first_list_is_an_error_not_a_fall_back_to_polling():
    clock = FakeClock()
    out = run(FakeSource(clock, [RuntimeError(FORBIDDEN)], []), clock)
    assert out["state"] == "error" and out["error"]["category"] == "Forbidden" and out["watches"] == 0


def test_the_last_watch_asks_for_one_second_when_less_is_left():
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [])
    out = run(source, clock, timeout=60.5, watch_seconds=60)
    assert out["state"] == "timeout" and [call[2] for call in source.calls if call[0] == "watch"] == [60, 1]


@pytest.mark.parametrize("kind", ["cut at once", "refused"])
def test_a_pause_before_trying_again_never_passes_the_waits_timeout(kind):
    clock = FakeClock()

    class Cut(FakeSource):
        def _stream(self, script, seconds):
            return iter(())

    if kind == "cut at once":
        source = Cut(clock, [listed(10, job("a", 9))], [])
    else:
        source = FakeSource(clock, [listed(10, job("a", 9))], [ConnectionError(REFUSED)] * 10)
    out = run(source, clock, timeout=1.5, grace=120)
    # 1 s, then the half second left instead of the back-off's 2 s
    assert out["state"] == "timeout" and clock.sleeps == [1, 0.5]


def test_a_watch_that_took_longer_than_what_was_left_pauses_no_negative_time():
    clock = FakeClock()

    class Slow(FakeSource):
        def _stream(self, script, seconds):
            self.clock.now += 0.6
            return iter(())

    out = run(Slow(clock, [listed(10, job("a", 9))], []), clock, timeout=0.5)
    assert out["state"] == "timeout" and clock.sleeps == [0.0]


def test_the_back_off_starts_again_after_a_watch_that_stood_and_at_a_streams_first_event():
    clock = FakeClock()

    class Scripted(FakeSource):
        def _stream(self, script, seconds):
            if script == "cut":
                return iter(())
            return FakeSource._stream(self, script, seconds)

    # two watches the server ends at once (1, 2 s), one that stands its 60 s: the next cut pauses 1 s again
    source = Scripted(clock, [listed(10, job("a", 9))], ["cut", "cut", [], "cut", [event("MODIFIED", job("a", 11, True), at=200)]])
    assert run(source, clock, timeout=600, watch_seconds=60)["state"] == "done" and clock.sleeps == [1, 2, 1]
    # refused twice (1, 2 s), then a stream with one event that breaks: the next pause is 1 s again
    clock = FakeClock()
    source = FakeSource(
        clock,
        [listed(10, job("a", 9))],
        [ConnectionError(REFUSED), ConnectionError(REFUSED), [event("MODIFIED", job("a", 12), at=4), ConnectionError(REFUSED)], ConnectionError(REFUSED)]
        + [[event("MODIFIED", job("a", 13, True), at=30)]],
    )
    assert run(source, clock)["state"] == "done" and clock.sleeps == [1, 2, 1, 2]


@pytest.mark.parametrize("server, shown", [(None, "the API server"), ("https://10.0.0.1:6443", "https://10.0.0.1:6443")])
def test_a_broken_watch_names_the_server(server, shown):
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [[RuntimeError("Response ended prematurely")]] * 50)
    out = run(source, clock, grace=5, server=server)
    assert out["state"] == "unreachable" and out["error"]["message"].startswith("The watch on %s broke: " % shown)


def test_the_default_back_off_doubles_up_to_8_seconds():
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [ConnectionError(REFUSED)] * 6 + [[event("MODIFIED", job("a", 11, True), at=100)]])
    assert run(source, clock, grace=300)["state"] == "done" and clock.sleeps == [1, 2, 4, 8, 8, 8]


@pytest.mark.parametrize("start", [1000.0, 0.0])  # a monotonic clock may start anywhere, 0 too
def test_a_stream_that_stood_a_second_before_it_broke_starts_the_grace_again(start):
    clock = FakeClock(start=start)

    class Stood(FakeSource):
        def _stream(self, script, seconds):
            # a generator, as the real stream: it runs (and breaks) when read, not when opened
            if script == "stood":
                self.clock.now += 1
                raise ConnectionError(REFUSED)
            yield from FakeSource._stream(self, script, seconds)

    # refused at 0 s, a stream standing from 1 to 2 s breaks: the grace of 2 s counts from 2 s, not from 0
    source = Stood(clock, [listed(10, job("a", 9))], [ConnectionError(REFUSED), "stood"] + [ConnectionError(REFUSED)] * 5)
    out = run(source, clock, grace=2)
    assert (out["state"], out["unreachable_seconds"], clock.sleeps) == ("unreachable", 2.0, [1, 2])


def test_a_wait_whose_list_stays_refused_times_out_before_the_grace():
    clock = FakeClock()
    out = run(FakeSource(clock, [ConnectionError(REFUSED)], []), clock, timeout=5, grace=120)
    # refused at 0, 1, 3 and 5 s, the last pause cut to the 2 s left
    assert out["state"] == "timeout" and out["lists"] == 4 and clock.sleeps == [1, 2, 2]


@pytest.mark.parametrize("code", [400, 403, 409, 411, 500])
def test_an_error_event_of_another_code_than_410_ends_the_wait(code):
    clock = FakeClock()
    status = {"kind": "Status", "code": code, "reason": "Other", "message": "no"}
    source = FakeSource(clock, [listed(10, job("a", 9))], [[event("ERROR", status, at=1)]])
    out = run(source, clock)
    assert out["state"] == "error" and out["lists"] == 1 and out["relists"] == 0


# ------------------------------------------------------------------------------------ issue 47, fourth round


class Slow(FakeSource):
    """Every list and every watch's opening takes TOOK seconds before it answers."""

    took = 0.0

    def list(self):
        self.clock.now += self.took
        return FakeSource.list(self)

    def watch(self, resource_version, seconds):
        self.clock.now += self.took
        return FakeSource.watch(self, resource_version, seconds)


@pytest.mark.parametrize(
    "took, sleeps",
    [
        (0.0, [1, 2, 2]),  # refused at 0, 1, 3 and 5 s: the last exactly at the timeout
        (0.5, [1, 2, 0.5]),  # refused at 0.5, 2, 4.5 and 5.5 s: the last past it
    ],
)
@pytest.mark.parametrize("start", [1000.0, 0.0])  # a monotonic clock may start anywhere, 0 too
def test_a_cluster_that_stays_unreachable_ends_the_wait_at_its_timeout_and_past_it(took, sleeps, start):
    clock = FakeClock(start=start)
    source = Slow(clock, [ConnectionError(REFUSED)], [])
    source.took = took
    out = run(source, clock, timeout=5, grace=120)
    assert (out["state"], out["lists"], clock.sleeps) == ("timeout", 4, sleeps)


@pytest.mark.parametrize("start", [1000.0, 0.0])
@pytest.mark.parametrize("took, seconds", [(0.3, 3.6), (0.33, 3.7)])
def test_the_unreachable_seconds_are_given_to_a_tenth(start, took, seconds):
    clock = FakeClock(start=start)
    # each try takes TOOK s: with 0.3, refused at 0.3, 1.6 and 3.9 s, the grace of 2 s passed 3.6 s after the first;
    # with 0.33, 3.66 s after it, given as 3.7
    source = Slow(clock, [listed(10, job("a", 9))], [ConnectionError(REFUSED)] * 10)
    source.took = took
    out = run(source, clock, grace=2)
    assert (out["state"], out["unreachable_seconds"], clock.sleeps) == ("unreachable", seconds, [1, 2])


# What the mutation run of cluster/watching.py whole (issue 47, fifth round) left.


@pytest.mark.parametrize(
    "status, code, shown",
    [
        ({"code": 500, "message": "etcd is down"}, 500, '"code": 500'),
        ({"message": "no code"}, None, '"message": "no code"'),
        ("a text, not a Status", None, '"message": "a text, not a Status"'),
    ],
)
def test_a_watch_error_keeps_its_status_code_and_shows_a_status_object(status, code, shown):
    error = WatchError(status)
    assert error.status == code
    assert str(error).startswith('watch ERROR event: {"kind": "Status", ') and shown in str(error)


@pytest.mark.parametrize("watch_seconds, asked", [(0, 1), (0.4, 1), (1, 1), (1.2, 2)])
def test_a_watch_asks_the_server_for_at_least_one_second(watch_seconds, asked):
    # 0 seconds would be no timeout of ours (the server's own default, minutes): a watch asks for one at least.
    clock = FakeClock()
    source = FakeSource(clock, [listed(10, job("a", 9))], [[event("MODIFIED", job("a", 11, True))]])
    assert run(source, clock, watch_seconds=watch_seconds)["state"] == "done"
    assert source.calls[1] == ("watch", "10", asked)


def test_events_read_from_json_follow_the_same_rules():
    # The real stream's events are parsed JSON: their types and codes are new objects, not this module's literals.
    clock = FakeClock()
    source = FakeSource(
        clock,
        [listed(10, job("a", 9), job("b", 8)), listed(500, job("a", 499))],
        json.loads(
            json.dumps(
                [
                    [
                        event("ADDED", job("c", 11), at=1),
                        event("DELETED", job("b", 12), at=2),
                        event("BOOKMARK", {"metadata": {"resourceVersion": "15"}}, at=3),
                    ],
                    [event("ERROR", {"kind": "Status", "code": 410, "reason": "Expired"}, at=70)],
                    [event("MODIFIED", job("a", 501, True), at=80)],
                ]
            )
        ),
    )
    asked = []

    def done(objects):
        asked.append(sorted(objects))
        return ended(objects)

    out = watch_until(source, done, 600, 120, clock=clock.clock, sleep=clock.sleep)
    assert out["state"] == "done" and out["relists"] == 1
    assert [call[1] for call in source.calls if call[0] == "watch"] == ["10", "15", "500"]
    # A BOOKMARK moves the version only: DONE is not asked again for it.
    assert asked == [["a", "b"], ["a", "b", "c"], ["a", "c"], ["a", "c"], ["a"], ["a"]]


@pytest.mark.parametrize("late, state", [(599.5, "done"), (600, "timeout"), (600.5, "timeout")])
@pytest.mark.parametrize("start", [1000.0, 100.0])  # a monotonic clock may start anywhere
def test_the_waits_timeout_ends_it_at_an_event_of_a_stream_that_goes_on(late, state, start):
    clock = FakeClock(start=start)
    source = FakeSource(
        clock,
        [listed(10, job("a", 9))],
        [[event("MODIFIED", job("a", 11), at=5), event("MODIFIED", job("a", 12), at=late), event("MODIFIED", job("a", 13, True), at=601)]],
    )
    out = run(source, clock, timeout=600, watch_seconds=1000)
    assert out["state"] == state
    assert out["watches"] == 1 and clock.now - clock.start == (601 if state == "done" else late)


@pytest.mark.parametrize("took, sleeps", [(0, [1]), (0.9, [1]), (1, []), (1.5, []), (30, [])])
@pytest.mark.parametrize("events", [[], [event("MODIFIED", job("a", 10))]])
@pytest.mark.parametrize("start", [1000.0, 0.0])  # a monotonic clock may start anywhere, 0 too
def test_a_watch_that_ended_empty_within_a_second_pauses_before_the_next(took, sleeps, events, start):
    # only an empty one: a watch that brought an event, however soon it ended, is opened again at once
    sleeps = sleeps if not events else []
    clock = FakeClock(start=start)

    class Source(object):
        def __init__(self):
            self.watches = 0

        def list(self):
            return listed(10, job("a", 9))

        def watch(self, resource_version, seconds):
            self.watches += 1
            if self.watches == 1:
                clock.now += took  # the server ended it after TOOK seconds
                return iter(events)
            return iter([event("MODIFIED", job("a", 12, True))])

    assert run(Source(), clock)["state"] == "done"
    assert clock.sleeps == sleeps
