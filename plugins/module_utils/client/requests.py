# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""REST calls with the collection's retry rules, request counting, and watch streams.

- Safe requests (GET, LIST, WATCH) are retried with exponential backoff and jitter on 429, 5xx and
  connection errors (Retry-After is honoured); writes are sent exactly once (no blind re-sends), except
  when the connection could not even be opened (nothing was sent).
- Retries: ``attempts`` tries while the API server has never answered in this run (a wrong address or
  port fails fast); once it has answered, an outage (a restarting API server) is retried for
  ``outage_seconds``, or in a waiting task until its ``deadline``.
- The deadline of a waiting task (``Api.end_by``, set before its first request: the end of its wait plus
  ``DEADLINE_GRACE_SECONDS``) bounds every request as a whole - connection, TLS handshake, answer and every
  read of a body or watch stream - so a hanging API server cannot hold a task past its own timeout. A
  request that no time is left for, or that runs out of it, raises ``OutOfTime``.
- Writes to MachineDeployments and KubeadmControlPlanes are JSON patches whose ``test`` operations guard
  the fields their plan read (core.patch): a concurrent change of one of them answers 422 (a failed
  test), unrelated writes (status, other annotations) do not conflict. The Lease is written with its
  resourceVersion (409 on a race). ``with_conflict_retry`` re-reads, re-plans and retries a bounded
  number of times.
- Every request sent is counted (``Api.count``) so a module can report what it cost.
- ``Api.dry_run`` (check mode) sends every write as a server-side dry run (``dryRun=All``): the API
  server authorizes, admits, validates, defaults and prunes it, answers as for the real write, and
  stores nothing. A single write can ask for it too (``dry_run=True``), to see a result before it is
  made.
- Every write (POST, PUT, PATCH) names the collection's one field manager (``fieldManager=capi-rollout``,
  core.owners.FIELD_MANAGER), never with ``force``: ``managedFields`` then tell its writes from others'.
- Every response's ``Date`` header feeds ``Api.clock`` (client.serverclock): times this collection
  writes or compares are the API server's, not the Ansible host's.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import random
import time

from ansible_collections.capi.rollout.plugins.module_utils.client.connection import path_quote
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, OutOfTime, TransportError
from ansible_collections.capi.rollout.plugins.module_utils.client.serverclock import ServerClock
from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches

try:
    from urllib3.exceptions import HTTPError as StreamError
except ImportError:  # the module reports the missing kubernetes/urllib3 before any request
    StreamError = OSError

RETRYABLE_STATUS = (429, 500, 502, 503, 504)
# How long an API server that has answered may be away (a restart takes 10-20 s) before a read fails.
DEFAULT_OUTAGE_SECONDS = 60.0
# (connect, read) seconds of a request, unless a caller or the deadline says otherwise.
DEFAULT_TIMEOUT = (10.0, 60.0)
# Seconds a request may run past the end of a wait, so that the wait's last observation can still be made.
DEADLINE_GRACE_SECONDS = 5.0
SAFE_METHODS = ("GET", "HEAD")
# the writes that take a fieldManager (a DELETE does not)
MANAGED_WRITES = ("POST", "PUT", "PATCH")
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def resource_path(group, version, plural, namespace=None, name=None):
    """REST path of a collection or object; group "" is the core API under /api."""
    path = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    if namespace:
        path += "/namespaces/" + path_quote(namespace)
    path += "/" + plural
    if name:
        path += "/" + path_quote(name)
    return path


class Api(object):
    """Requests against one API server through a client/connection.Connection. ``clock`` (monotonic seconds) is the
    run's: its deadline, retries and the server clock's elapsed time are measured with it."""

    def __init__(self, connection, attempts=5, backoff=0.5, max_backoff=8.0, sleep=time.sleep, dry_run=False,
                 outage_seconds=DEFAULT_OUTAGE_SECONDS, clock=time.monotonic):
        self.connection = connection
        self.dry_run = dry_run
        self.outage_seconds = outage_seconds
        self.clock_seconds = clock
        self.deadline = None  # monotonic seconds by which every request has ended; see end_by
        self.deadline_what = None  # what set it (``wait_timeout=20s``), for the error
        self.reached = False  # whether the API server answered in this run
        self.attempts = attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.sleep = sleep
        self.count = 0
        self.log = []  # (verb, path, status) per request sent, for tests and debugging
        self.clock = ServerClock(monotonic=clock)

    @property
    def host(self):
        return self.connection.host

    def _delay(self, attempt, headers=None):
        retry_after = None
        if headers is not None:
            try:
                retry_after = float(headers.get("Retry-After"))
            except (TypeError, ValueError):
                retry_after = None
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff)
        base = min(self.backoff * (2 ** attempt), self.max_backoff)
        return base * (0.5 + random.random() / 2)

    def _retry_pause(self, attempt, started, headers=None):
        """Seconds to pause before the next try, or None when no time is left for one."""
        delay = self._delay(attempt, headers)
        now = self.clock_seconds()
        if self.deadline is not None and now + delay >= self.deadline:
            return None
        # While a wait runs, an outage is waited out until the wait's own end.
        budget_end = self.deadline if self.deadline is not None else started + self.outage_seconds
        if attempt + 1 < self.attempts or (self.reached and now + delay < budget_end):
            return delay
        return None

    def end_by(self, seconds, what):
        """The deadline of a waiting task: from now on no request ends later than ``seconds`` from now plus
        DEADLINE_GRACE_SECONDS. ``what`` says what set it (``wait_timeout=20s``) for the error."""
        self.deadline = self.clock_seconds() + max(seconds, 0) + DEADLINE_GRACE_SECONDS
        self.deadline_what = what

    def _limits(self, timeout):
        """(connect, read) seconds and the total seconds of one request: all of it ends by the deadline."""
        if self.deadline is None:
            return timeout, None
        left = self.deadline - self.clock_seconds()
        if left <= 0:
            raise self._out_of_time()
        connect, read = timeout or DEFAULT_TIMEOUT
        return (min(connect, left), min(read, left)), left

    def _out_of_time(self):
        grace = int(DEADLINE_GRACE_SECONDS)
        within = f" ({self.deadline_what}, + {grace}s for the last requests)" if self.deadline_what else ""
        return OutOfTime(self.host, f"no answer before the end of the task{within}")

    def request(self, method, path, query=None, body=None, content_type=None, verb=None, stream=False, timeout=None,
                dry_run=False):
        """Send one logical request; returns the parsed body (or the Response for ``stream``)."""
        safe = method in SAFE_METHODS
        verb = verb or method.lower()
        if method in MANAGED_WRITES:
            query = dict(query or {}, fieldManager=owners.FIELD_MANAGER)
        if not safe and (dry_run or self.dry_run):
            query = dict(query or {}, dryRun="All")
            verb += " (dry run)"
        attempt = 0
        started = self.clock_seconds()
        while True:
            timeouts, total = self._limits(timeout)
            self.count += 1
            try:
                resp = self.connection.send(method, path, query=query, body=body, content_type=content_type,
                                            stream=stream, timeout=timeouts, total=total)
            except TransportError as err:
                self.log.append((verb, path, None))
                pause = self._retry_pause(attempt, started) if safe or not err.sent else None
                if pause is None:
                    # a request cut to the time left ran out: say so, as when no time was left to send it
                    if self.deadline is not None and self.clock_seconds() >= self.deadline:
                        raise self._out_of_time() from err
                    raise
                self.sleep(pause)
                attempt += 1
                continue
            self.reached = True
            self.log.append((verb, path, resp.status))
            self.clock.observe(resp.headers)
            pause = self._retry_pause(attempt, started, resp.headers) if resp.status in RETRYABLE_STATUS and safe else None
            if pause is not None:
                if resp.raw is not None:
                    resp.raw.release_conn()
                self.sleep(pause)
                attempt += 1
                continue
            if resp.status >= 400:
                raise ApiError(resp.status, resp.data, method=method, path=path, headers=resp.headers,
                               credentials_note=self.connection.credentials_note if resp.status == 401 else None)
            return resp if stream else resp.data

    def server_now(self):
        """The API server's current time (client.serverclock); the host's before any response."""
        return self.clock.now()

    # ----- verbs -----
    def get(self, path):
        return self.request("GET", path, verb="get")

    def list(self, path, label_selector=None, field_selector=None):
        return self.request("GET", path, query={"labelSelector": label_selector, "fieldSelector": field_selector},
                            verb="list")

    def patch_merge(self, path, patch):
        return self.request("PATCH", path, body=patch, content_type=MERGE_PATCH, verb="patch")

    def patch_json(self, path, operations):
        return self.request("PATCH", path, body=operations, content_type=JSON_PATCH, verb="patch")

    def watch(self, path, resource_version, timeout_seconds, label_selector=None, field_selector=None):
        """Iterator of (event_type, object) from one watch stream.

        Ends when the server closes the stream (after ``timeout_seconds``). Raises ApiError(410) when
        ``resource_version`` is too old (at open, or as an ERROR event), ApiError for other ERROR
        events, TransportError when the connection breaks.
        """
        query = {"watch": "true", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": str(int(max(timeout_seconds, 1))), "labelSelector": label_selector,
                 "fieldSelector": field_selector}
        # The read timeout only guards against a dead connection: the server ends the stream itself.
        resp = self.request("GET", path, query=query, verb="watch", stream=True,
                            timeout=(10.0, max(timeout_seconds, 1) + 30.0))
        return _events(resp.raw, self.connection.host, path)


def _events(raw, host, path):
    buffer = b""
    finished = False
    try:
        for chunk in raw.stream(16 * 1024, decode_content=True):
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                event = _parse(line, path)
                if event is not None:
                    yield event
        event = _parse(buffer, path)
        if event is not None:
            yield event
        finished = True
    except (StreamError, OSError, ValueError) as err:
        raise TransportError(host, f"watch stream broke: {err}")
    finally:
        if not finished:
            # Stopped early (or broken): the connection still carries the rest of the stream.
            raw.close()
        raw.release_conn()


def _parse(line, path):
    line = line.strip()
    if not line:
        return None
    event = json.loads(line)
    event_type = event.get("type")
    obj = event.get("object") or {}
    if event_type == "ERROR":
        raise ApiError(obj.get("code") or 500, obj, method="WATCH", path=path)
    return event_type, obj


def is_write_conflict(err):
    """Whether an ApiError says the object changed under a write: 409 Conflict, or 422 from a failed
    ``test`` operation of a JSON patch (core.patch.is_test_failure)."""
    return err.status == 409 or patches.is_test_failure(err.status, err.body)


def with_conflict_retry(attempt_fn, attempts=5, backoff=0.1, sleep=time.sleep, retry_on=None):
    """Run ``attempt_fn(fresh)`` until it does not raise a conflict (``retry_on(err)``, default: a 409);
    ``fresh`` is False on the first try and True after a conflict (the caller re-reads the object and
    re-plans). Bounded by ``attempts``, with a growing, jittered pause between them (a busy object is
    written by its controller several times a second; retrying at once mostly meets the next write)."""
    retry_on = retry_on or (lambda err: err.status == 409)
    fresh = False
    for index in range(attempts):
        try:
            return attempt_fn(fresh)
        except ApiError as err:
            if not retry_on(err) or index + 1 >= attempts:
                raise
            fresh = True
            sleep(backoff * (2 ** index) * (0.5 + random.random() / 2))
    return None  # pragma: no cover - the loop always returns or raises
