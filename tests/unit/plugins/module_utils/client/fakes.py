# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A scripted stand-in for client.connection.Connection: answers queued per (method, path)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.capi.rollout.plugins.module_utils.client.connection import Response
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import TransportError


class FakeStream(object):
    """An open watch stream: yields the events as JSON lines, in chunks that split lines."""

    def __init__(self, events, chunk=7):
        data = b"".join(json.dumps(event).encode("utf-8") + b"\n" for event in events)
        self.chunks = [data[i:i + chunk] for i in range(0, len(data), chunk)]
        self.closed = False
        self.released = False

    def stream(self, amt, decode_content=True):
        return iter(self.chunks)

    def close(self):
        self.closed = True

    def release_conn(self):
        self.released = True


# the error of an answer that never comes (FakeConnection.add ``hang``)
HANG = object()
# the query of every write (client.requests names the field manager) and of a write sent as a dry run
WRITE = {"fieldManager": "capi-rollout"}
DRY_RUN = dict(WRITE, dryRun="All")


class FakeConnection(object):
    host = "https://fake:6443"
    credentials_note = None

    def __init__(self, clock=None):
        self.answers = {}
        self.sent = []
        self.streams = []
        # advanced by a hung request (``hang``) by all the time it may take: its total, else its timeouts
        self.clock = clock

    def add(self, method, path, status=200, body=None, headers=None, events=None, error=None, sent=True, hang=False):
        """Queue one answer; ``events`` makes it a watch stream, ``error`` a TransportError (``sent``: whether
        the request had left, see TransportError.sent), ``hang`` an API server that accepts the connection and
        never answers (the request takes all its time, then fails)."""
        self.answers.setdefault((method, path), []).append((status, body, headers or {}, events, (HANG if hang else error, sent)))

    def send(self, method, path, query=None, body=None, content_type=None, stream=False, timeout=None, total=None):
        self.sent.append({"method": method, "path": path, "query": query or {}, "body": body,
                          "content_type": content_type, "timeout": timeout, "total": total,
                          "at": self.clock() if self.clock else None})
        queue = self.answers.get((method, path))
        if not queue:
            raise AssertionError(f"unexpected request {method} {path} {query}")
        status, payload, headers, events, (error, sent) = queue.pop(0) if len(queue) > 1 else queue[0]
        if error is HANG:
            connect, read = timeout or (10.0, 60.0)
            self.clock.t += total if total is not None else connect + read
            raise TransportError(self.host, "Read timed out.")
        if error:
            raise TransportError(self.host, error, tls="CERTIFICATE" in error, sent=sent)
        if events is not None:
            if self.clock is not None:
                self.clock.t += float((query or {}).get("timeoutSeconds") or 0)  # the server ends the stream then
            self.streams.append(FakeStream(events))
            return Response(status, headers, raw=self.streams[-1])
        return Response(status, headers, data=payload if payload is not None else {})
