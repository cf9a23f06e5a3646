# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The polling rule of plugins/module_utils/cluster/polling.py under a fake clock: the 1, 2, 4 ... s back-off capped
at poll_interval, the timeout, and the unreachable grace (never given up before it, given up once it is reached).

The clock starts at 1000 s, not 0, so a rule that measured from 0 instead of from the first poll would be seen.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.polling import delays, poll_until

REFUSED = "HTTPSConnectionPool(host='10.0.0.1', port=6443): Max retries exceeded (Caused by NewConnectionError: [Errno 111] Connection refused)"
# The kubernetes client's ApiException text for a 403, as kubernetes.core puts it in msg.
FORBIDDEN = (
    "Failed to retrieve requested object: (403)\nReason: Forbidden\nHTTP response headers: HTTPHeaderDict({})\n"
    'HTTP response body: {"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods is forbidden: User '
    '\\"runner\\" cannot list resource \\"pods\\"","reason":"Forbidden","code":403}\n'
)


class FakeClock:
    """Time that moves only when the code under test sleeps (or a read says it took time)."""

    def __init__(self, start=1000.0):
        self.now = start
        self.start = start
        self.sleeps = []
        self.poll_times = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        assert seconds >= 0, "slept a negative time: %r" % seconds
        # A wait that never ends fails here instead of hanging the run.
        assert len(self.sleeps) < 1000, "still waiting after 1000 sleeps"
        self.sleeps.append(seconds)
        self.now += seconds

    def reader(self, outcomes, took=0.0):
        """A READ that returns (or raises) the next of OUTCOMES, each call taking TOOK seconds; the last repeats."""
        source = itertools.chain(outcomes, itertools.repeat(outcomes[-1]))

        def read():
            self.poll_times.append(self.now - self.start)
            self.now += took
            outcome = next(source)
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

        return read

    def poll(self, outcomes, done=lambda value: value == "done", timeout=60, poll_interval=5, unreachable_grace=30, took=0.0, **kwargs):
        return poll_until(self.reader(outcomes, took), done, timeout, poll_interval, unreachable_grace, clock=self.clock, sleep=self.sleep, **kwargs)


class ResultError(Exception):
    """The form kubernetes.core's action helpers raise: the message in .result['msg'], not in str()."""

    def __init__(self, msg):
        super(ResultError, self).__init__("see result")
        self.result = {"msg": msg}


def take(generator, count):
    return list(itertools.islice(generator, count))


# --- delays -------------------------------------------------------------------


def test_delays_double_from_one_second_up_to_the_poll_interval():
    assert take(delays(10), 7) == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0]


def test_delays_cap_at_a_poll_interval_between_the_doublings():
    assert take(delays(3), 4) == [1.0, 2.0, 3.0, 3.0]


def test_delays_never_below_one_second():
    assert take(delays(0), 3) == [1.0, 1.0, 1.0]
    assert take(delays(0.25), 3) == [1.0, 1.0, 1.0]


def test_delays_take_a_string_interval():
    # poll_interval comes from task arguments; float() is what lets "8" through.
    assert take(delays("8"), 5) == [1.0, 2.0, 4.0, 8.0, 8.0]


# --- done, back-off, timeout ----------------------------------------------------


def test_done_at_the_first_poll_does_not_sleep():
    fake = FakeClock()
    result = fake.poll(["done"])
    assert result == {"state": "done", "value": "done", "error": None, "polls": 1}
    assert fake.sleeps == []


def test_back_off_sequence_between_polls_until_done():
    fake = FakeClock()
    result = fake.poll(["running"] * 6 + ["done"], poll_interval=5, timeout=600)
    assert result["state"] == "done" and result["polls"] == 7
    assert fake.sleeps == [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]
    assert fake.poll_times == [0.0, 1.0, 3.0, 7.0, 12.0, 17.0, 22.0]


# A clock started at 7 s as well as at 1000: now % start equals now - start for every time below 2000 (a mutant
# that survived the first mutation run of cluster/polling.py).
@pytest.mark.parametrize("start", [1000.0, 7.0])
def test_timeout_ends_the_wait_exactly_at_the_timeout_with_the_last_value(start):
    fake = FakeClock(start)
    result = fake.poll(["pending", "running"], timeout=10, poll_interval=5)
    # Polls at 0, 1, 3, 7; the last sleep is cut to the 3 s left, so the fifth poll is at exactly 10 s and the wait
    # ends there, not one poll later.
    assert fake.poll_times == [0.0, 1.0, 3.0, 7.0, 10.0]
    assert fake.sleeps == [1.0, 2.0, 4.0, 3.0]
    assert result == {"state": "timeout", "value": "running", "error": None, "polls": 5}


def test_timeout_is_measured_from_the_first_poll_including_slow_reads():
    fake = FakeClock()
    result = fake.poll(["running"], timeout=10, poll_interval=5, took=2.0)
    # Reads take 2 s each: poll 1 at 0 (ends 2), sleep 1 -> poll 2 at 3 (ends 5), sleep 2 -> poll 3 at 7 (ends 9),
    # sleep min(4, 1 s left) -> poll 4 at 10 (ends 12 >= 10).
    assert fake.poll_times == [0.0, 3.0, 7.0, 10.0]
    assert fake.sleeps == [1.0, 2.0, 1.0]
    assert result["state"] == "timeout" and result["polls"] == 4


def test_the_last_sleep_is_cut_to_the_time_left_even_below_a_second():
    fake = FakeClock()
    result = fake.poll(["running"], timeout=1.5, poll_interval=5)
    assert fake.sleeps == [1.0, 0.5]
    assert result["state"] == "timeout" and result["polls"] == 3


def test_a_read_past_the_timeout_sleeps_nothing_more():
    fake = FakeClock()
    result = fake.poll(["running"], timeout=1, poll_interval=5, took=3.0)
    assert result["state"] == "timeout" and result["polls"] == 1
    assert fake.sleeps == []


def test_zero_timeout_polls_once():
    fake = FakeClock()
    result = fake.poll(["running"], timeout=0)
    assert result["state"] == "timeout" and result["polls"] == 1 and fake.sleeps == []


def test_done_is_asked_about_every_value_read():
    fake = FakeClock()
    seen = []

    def done(value):
        seen.append(value)
        return value == 3

    result = fake.poll([1, 2, 3], done=done, timeout=60)
    assert seen == [1, 2, 3] and result["value"] == 3 and result["polls"] == 3


# --- errors ---------------------------------------------------------------------


def test_an_error_that_is_not_unreachable_ends_the_wait_at_once():
    fake = FakeClock()
    result = fake.poll(["running", Exception(FORBIDDEN)])
    assert result["state"] == "error" and result["polls"] == 2
    assert result["error"]["category"] == "Forbidden"
    # The value read before the error is kept.
    assert result["value"] == "running"
    assert fake.sleeps == [1.0]


def test_the_message_of_a_kubernetes_core_error_is_its_result_msg():
    fake = FakeClock()
    result = fake.poll([ResultError(FORBIDDEN)])
    assert result["state"] == "error" and result["error"]["category"] == "Forbidden"


def test_context_and_server_reach_the_classified_error():
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED)], unreachable_grace=0, context="gpu-a", server="https://10.0.0.1:6443")
    assert "https://10.0.0.1:6443" in result["error"]["message"]
    assert "gpu-a" in result["error"]["message"]


# --- the unreachable grace ------------------------------------------------------


@pytest.mark.parametrize("start", [1000.0, 7.0])
def test_unreachable_gives_up_exactly_at_the_grace_never_before(start):
    fake = FakeClock(start)
    result = fake.poll([Exception(REFUSED)], timeout=600, poll_interval=5, unreachable_grace=12)
    # Failed polls at 0, 1, 3, 7 (7 s < 12: go on), 12 (12 s >= 12: give up).
    assert fake.poll_times == [0.0, 1.0, 3.0, 7.0, 12.0]
    assert result["state"] == "unreachable" and result["polls"] == 5
    assert result["unreachable_seconds"] == 12.0
    assert result["error"]["category"] == "Unreachable"
    assert result["value"] is None


def test_unreachable_a_moment_short_of_the_grace_polls_again():
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED)], timeout=600, poll_interval=5, unreachable_grace=12.5)
    assert fake.poll_times == [0.0, 1.0, 3.0, 7.0, 12.0, 17.0]
    assert result["state"] == "unreachable" and result["unreachable_seconds"] == 17.0


def test_zero_grace_gives_up_at_the_first_failed_poll():
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED)], unreachable_grace=0)
    assert result["state"] == "unreachable" and result["polls"] == 1 and result["unreachable_seconds"] == 0.0


def test_unreachable_seconds_is_rounded_to_a_tenth():
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED)], unreachable_grace=1, took=0.04)
    # Poll 1 fails at 0.04, poll 2 at 1.04 + 0.04: 1.04 s failing.
    assert result["unreachable_seconds"] == 1.0


def test_unreachable_seconds_keeps_its_tenths():
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED)], unreachable_grace=1, took=0.3)
    # The first failure is seen at 0.3, the second at 1.3 + 0.3: 1.3 s failing, not 1.0.
    assert result["unreachable_seconds"] == 1.3


def test_the_grace_starts_again_after_a_successful_poll():
    fake = FakeClock()
    refused = Exception(REFUSED)
    result = fake.poll([refused, refused, "running", refused, refused, refused, refused], timeout=600, poll_interval=4, unreachable_grace=6)
    # Fails at 0 and 1, reads at 3, fails at 7, 11, 15 (8 s after 7 >= 6: gives up). Measured from the first
    # failure it would have given up at 7.
    assert fake.poll_times == [0.0, 1.0, 3.0, 7.0, 11.0, 15.0]
    assert result["state"] == "unreachable" and result["unreachable_seconds"] == 8.0
    assert result["value"] == "running"


def test_the_grace_is_measured_from_the_first_failed_poll_not_the_last():
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED)], timeout=600, poll_interval=2, unreachable_grace=5)
    # Fails at 0, 1, 3, 5: 5 s since the first failure.
    assert fake.poll_times == [0.0, 1.0, 3.0, 5.0]
    assert result["unreachable_seconds"] == 5.0


def test_timeout_while_unreachable_reports_the_last_error():
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED)], timeout=5, poll_interval=5, unreachable_grace=60)
    assert result["state"] == "timeout"
    assert result["error"]["category"] == "Unreachable"
    assert "unreachable_seconds" not in result


def test_a_successful_poll_clears_the_last_error():
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED), "running"], timeout=5, poll_interval=5, unreachable_grace=60)
    assert result["state"] == "timeout" and result["error"] is None


def test_unreachable_then_done_is_done():
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED), Exception(REFUSED), "done"], unreachable_grace=60)
    assert result == {"state": "done", "value": "done", "error": None, "polls": 3}


def test_tls_errors_have_the_grace_too():
    fake = FakeClock()
    tls = Exception("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate")
    result = fake.poll([tls, "done"], unreachable_grace=60)
    assert result["state"] == "done" and result["polls"] == 2


@pytest.mark.parametrize("grace", [1, 2, 3, 4, 7, 8, 30])
def test_never_gives_up_before_the_grace(grace):
    fake = FakeClock()
    result = fake.poll([Exception(REFUSED)], timeout=600, poll_interval=5, unreachable_grace=grace)
    assert result["state"] == "unreachable"
    # The give-up poll is the first at or past the grace; the one before it was short of it.
    assert fake.poll_times[-1] >= grace > fake.poll_times[-2]
