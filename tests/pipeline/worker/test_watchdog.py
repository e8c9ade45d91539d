"""The watchdog thread (pipeline/worker/watchdog.py): renews at least three
times per lease, outlives a failing sweep, and stops when asked."""

import threading
import time

from pipeline.worker.watchdog import Watchdog


def test_it_renews_three_times_per_lease_at_most_every_interval():
    assert Watchdog(lambda: None, interval_s=30, lease_s=60).renew_s == 20
    assert Watchdog(lambda: None, interval_s=5, lease_s=60).renew_s == 5
    assert Watchdog(lambda: None, interval_s=9).renew_s == 9


def test_a_failing_round_does_not_end_it_and_stop_ends_it():
    calls = []
    again = threading.Event()

    def broken_context():
        calls.append(time.monotonic())
        if len(calls) >= 3:
            again.set()
        raise RuntimeError("database away")

    dog = Watchdog(broken_context, interval_s=0.01)
    dog.start()
    thread = dog._thread
    dog.start()  # one thread however often it is started
    try:
        assert dog._thread is thread
        assert again.wait(timeout=30), calls
        assert thread.is_alive()
    finally:
        dog.stop()
    assert not dog._thread.is_alive()
