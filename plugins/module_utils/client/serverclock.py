# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API server's clock, read from the ``Date`` header of the responses a module already gets.

CAPI's controllers compare rolloutAfter and creation timestamps with the time of the management
cluster, never with the Ansible host's. A trigger computed from a host clock that runs ahead lies in
the controllers' future (acted on at the next event or resync, up to 10 minutes later); one from a
clock that runs behind is older than the current MachineSet and changes nothing (upstream
``mdutil.FindNewMachineSet``). So every time this collection writes or compares is server time.

``Date`` has second precision and is the server's time truncated when it answered, so
``Date + time elapsed since`` (measured with the monotonic clock, which no NTP step or wrong host
time affects) is a lower bound of the server's time, less than one second below it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import time
from email.utils import parsedate_to_datetime


def _date_of(headers):
    value = headers.get("Date") if headers is not None else None
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.astimezone(datetime.timezone.utc)


class ServerClock(object):
    """Tracks the newest ``Date`` seen; ``now()`` is the server's time (host time until one is seen)."""

    def __init__(self, monotonic=time.monotonic, host_now=None):
        self.monotonic = monotonic
        self.host_now = host_now or (lambda: datetime.datetime.now(datetime.timezone.utc))
        self._date = None
        self._seen_at = None

    @property
    def known(self):
        """True once a response carried a Date header."""
        return self._date is not None

    def observe(self, headers):
        """Take the Date header of a response (ignored when absent or unparsable)."""
        date = _date_of(headers)
        if date is None:
            return
        seen_at = self.monotonic()
        # Keep the reading that gives the later estimate: responses can be handled out of order.
        if self._date is None or date >= self._date + datetime.timedelta(seconds=seen_at - self._seen_at):
            self._date, self._seen_at = date, seen_at

    def now(self):
        """The server's current time (a lower bound, < 1 s below it); the host's time before any response."""
        if self._date is None:
            return self.host_now()
        return self._date + datetime.timedelta(seconds=self.monotonic() - self._seen_at)

    def skew_seconds(self):
        """Host clock minus server clock in seconds (None before any response); for warnings only."""
        if self._date is None:
            return None
        return (self.host_now() - self.now()).total_seconds()
