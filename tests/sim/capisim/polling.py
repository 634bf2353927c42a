"""Waiting in tests: poll a predicate until it returns something truthy, with a clear timeout."""

import time


def wait_for(what, predicate, timeout=60.0, interval=0.2):
    """Return the predicate's first truthy value; AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)
