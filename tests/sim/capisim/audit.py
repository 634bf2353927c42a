"""Reading a management cluster's audit log: which user sent which requests, and how many.

The apiserver logs each request once (see cluster.AUDIT_POLICY) as one JSON line. It writes an
event when the request completes, which can be a moment after the client got its answer, so a
reader first sends a *mark* request of its own and waits for it to appear: everything received
before the mark is then in the file. Marks (GETs of a configmap named ``capisim-audit-mark-*``)
are never part of the results.
"""

import json
import secrets
import time

from .kubeapi import ApiError, resource_path

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
_MARK_PREFIX = "capisim-audit-mark-"


def _is_mark(event):
    return _MARK_PREFIX in event.get("requestURI", "")


def is_dry_run(event):
    """A server-side dry run (``?dryRun=All``): authorized, admitted and validated, never stored."""
    return "dryRun=All" in event.get("requestURI", "")


def shape(events):
    """Requests as (verb, what) pairs in the order sent, for exact request-count assertions: ``what`` is the
    resource plural (with ``/<subresource>``, ``name`` for a GET of one object, ``?dryRun`` for a dry run),
    or the path for non-resource requests (discovery: ``/apis``, ``/api``)."""
    out = []
    for event in events:
        ref = event.get("objectRef") or {}
        if not ref.get("resource"):
            out.append((event.get("verb"), event.get("requestURI", "").split("?")[0]))
            continue
        what = ref["resource"] + (f"/{ref['subresource']}" if ref.get("subresource") else "")
        if is_dry_run(event):
            what += "?dryRun"
        out.append((event.get("verb"), what))
    return out


class AuditLog:
    """A list of audit events (dicts as the apiserver wrote them) with filters."""

    def __init__(self, events):
        self.events = events

    def __len__(self):
        return len(self.events)

    def __iter__(self):
        return iter(self.events)

    def requests(self, user=None, verbs=None, resource=None):
        """Events of one user (name as in the token file, e.g. "rollout-operator") / verbs / resource plural."""
        return [e for e in self.events
                if (user is None or e.get("user", {}).get("username") == user)
                and (verbs is None or e.get("verb") in verbs)
                and (resource is None or e.get("objectRef", {}).get("resource") == resource)]

    def writes(self, user=None):
        """create/update/patch/delete(collection) requests that change the cluster (server-side dry runs
        left out), optionally of one user."""
        return [e for e in self.requests(user=user, verbs=WRITE_VERBS) if not is_dry_run(e)]

    def dry_runs(self, user=None):
        """Writes sent as server-side dry runs, optionally of one user."""
        return [e for e in self.requests(user=user, verbs=WRITE_VERBS) if is_dry_run(e)]


class AuditReader:
    """Marks and reads one audit log file; admin is a KubeAPI used to send the mark requests."""

    def __init__(self, path, admin):
        self.path = path
        self.admin = admin

    def _events(self):
        with open(self.path, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    def mark(self, timeout=10.0):
        """Send a mark request and wait until it is logged; returns the mark's audit event."""
        name = _MARK_PREFIX + secrets.token_hex(6)
        try:
            self.admin.get(resource_path("", "v1", "configmaps", "default", name))
        except ApiError as err:
            if err.status != 404:
                raise
        deadline = time.monotonic() + timeout
        while True:
            found = [e for e in self._events() if name in e.get("requestURI", "")]
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise TimeoutError(f"audit mark {name} not logged in {self.path} within {timeout}s")
            time.sleep(0.02)

    def read(self, since=None):
        """Every event received up to now (after the mark `since`, when given), marks left out."""
        end = self.mark()["requestReceivedTimestamp"]
        start = since["requestReceivedTimestamp"] if since else ""
        # Fixed-width RFC 3339 timestamps with microseconds (UTC): string order is time order.
        return AuditLog([e for e in self._events() if not _is_mark(e)
                         and start < e["requestReceivedTimestamp"] <= end])
