"""A controller work queue: each key at most once in line, priorities, and timers (a heap) that add keys when due.

One worker takes the next key of the most urgent non-empty line (FIFO within a line). The controller gives Machines
priority over MachineSets over MachineDeployments/KCPs over Clusters, so a MachineDeployment is reconciled again
only once the MachineSets it changed have been fully reconciled: the interleaving CAPI's golden traces assume.
Timers due within GRACE of each other fire together: Machines created in one batch share a deadline but compute it
a few microseconds apart.
"""

import heapq
import itertools
import threading
import time

GRACE = 0.05


class WorkQueue:
    def __init__(self, priority=lambda key: 0, clock=time.time):
        self._priority = priority
        self._clock = clock
        self._cond = threading.Condition()
        self._lines = {}
        self._queued = set()
        self._timers = []
        self._seq = itertools.count()

    def add(self, key):
        with self._cond:
            self._add(key)
            self._cond.notify()

    def _add(self, key):
        if key not in self._queued:
            self._queued.add(key)
            self._lines.setdefault(self._priority(key), []).append(key)

    def add_at(self, key, when):
        """Add ``key`` at wall-clock time ``when`` (seconds since the epoch)."""
        with self._cond:
            heapq.heappush(self._timers, (when, next(self._seq), key))
            self._cond.notify()

    def get(self, max_wait):
        """The next key, or None after ``max_wait`` seconds without one (the caller checks for shutdown)."""
        deadline = self._clock() + max_wait
        with self._cond:
            while True:
                now = self._clock()
                while self._timers and self._timers[0][0] <= now + GRACE:
                    self._add(heapq.heappop(self._timers)[2])
                for level in sorted(self._lines):
                    if self._lines[level]:
                        key = self._lines[level].pop(0)
                        self._queued.discard(key)
                        return key
                if now >= deadline:
                    return None
                wait = deadline - now
                if self._timers:
                    wait = min(wait, self._timers[0][0] - now)
                self._cond.wait(wait)
