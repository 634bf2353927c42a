# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lock on a management cluster: one coordination.k8s.io/v1 Lease, planned without I/O.

The Lease follows the conventions of client-go's leader election so that ``kubectl get lease``
reads naturally: ``spec.holderIdentity`` names the holder, ``spec.renewTime`` +
``spec.leaseDurationSeconds`` says until when the lock is valid, ``spec.acquireTime`` when the holder
took it and ``spec.leaseTransitions`` how often the holder changed. A released lock has no holder.

A lock is *held* while it has a holder and ``renewTime + leaseDurationSeconds`` is not in the past;
after that it is *stale* (its holder died or lost its connection) and anyone may take it over. Every
write carries the ``metadata.resourceVersion`` that was read, so of two runs that try at the same
moment exactly one wins (the other gets 409 Conflict, reads again and sees the winner). Free-form
facts about the holder (refresh id, AWX job, start time) go into one annotation, for messages.

Times are compared with the caller's clock; the clocks of the runs that share a lock should agree
to well within the lease duration.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime
import json
import math

from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil

API_VERSION = "coordination.k8s.io/v1"
KIND = "Lease"
GROUP = "coordination.k8s.io"
VERSION = "v1"
PLURAL = "leases"
DEFAULT_NAME = "capi-rollout-lock"

CREATE = "create"          # no Lease yet: create it, held by us
RENEW = "renew"            # we hold it: move renewTime forward
ACQUIRE = "acquire"        # it exists without a holder (released): take it
TAKE_OVER = "take_over"    # another holder's lease is stale (or force): take it
HELD = "held"              # another holder has a valid lease: wait or give up
RELEASE = "release"        # we hold it: drop the holder
NOT_HELD = "not_held"      # release asked, but we do not hold it: nothing to do
ABSENT = "absent"          # release asked, no Lease at all: nothing to do

_MAX_INFO_VALUE = 200


def format_micro(value):
    """metav1.MicroTime as the API server writes it: ``2026-03-01T12:00:00.123456Z``."""
    return timeutil.to_utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _seconds(value):
    """Whole seconds (int) of a non-negative number, or None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def validate_duration(duration):
    """The lease duration as an int of at least 1 second; ValueError otherwise."""
    number = _seconds(duration)
    if number is None or number < 1:
        raise ValueError(f"lease_duration_seconds must be a whole number of seconds >= 1, got {duration!r}")
    return number


def read_info(lease):
    """The holder facts stored in the info annotation ({} when missing or unreadable)."""
    annotations = ((lease or {}).get("metadata") or {}).get("annotations") or {}
    raw = annotations.get(keys.LOCK_INFO_ANNOTATION)
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _info_text(info):
    """Compact JSON of the info dict with short string values (annotations must stay small)."""
    clean = {}
    for key, value in sorted((info or {}).items()):
        if value is None:
            continue
        if not isinstance(value, (str, int, float, bool)):
            value = json.dumps(value, sort_keys=True, separators=(",", ":"))
        if isinstance(value, str):
            value = value[:_MAX_INFO_VALUE]
        clean[str(key)[:63]] = value
    return json.dumps(clean, sort_keys=True, separators=(",", ":"))


def view(lease, now):
    """What a Lease says at ``now``: holder, whether it is held or stale, times and the holder facts.

    ``lease`` is the Lease object or None (no Lease). Returns a dict with ``exists``, ``holder`` (None
    when released), ``held`` (a holder whose lease has not expired), ``stale`` (a holder whose lease
    expired), ``acquire_time``, ``renew_time``, ``expires`` (RFC 3339, or None), ``seconds_left``
    (until it expires; negative when stale), ``lease_duration_seconds``, ``transitions``, ``info`` and
    ``resource_version``.
    """
    now = timeutil.to_utc(now)
    if lease is None:
        return {"exists": False, "holder": None, "held": False, "stale": False, "acquire_time": None,
                "renew_time": None, "expires": None, "seconds_left": None, "lease_duration_seconds": None,
                "transitions": 0, "info": {}, "resource_version": None}
    spec = lease.get("spec") or {}
    holder = spec.get("holderIdentity") or None
    duration = _seconds(spec.get("leaseDurationSeconds"))
    acquired = timeutil.parse_optional(spec.get("acquireTime"))
    renewed = timeutil.parse_optional(spec.get("renewTime")) or acquired
    expires = None
    if renewed is not None and duration is not None:
        expires = renewed + datetime.timedelta(seconds=duration)
    # A holder without a usable renewTime/duration cannot prove it is alive: treat it as stale.
    held = bool(holder) and expires is not None and expires >= now
    return {
        "exists": True,
        "holder": holder,
        "held": held,
        "stale": bool(holder) and not held,
        "acquire_time": timeutil.format_time(acquired) if acquired else None,
        "renew_time": timeutil.format_time(renewed) if renewed else None,
        "expires": timeutil.format_time(expires) if expires else None,
        "seconds_left": int(math.floor((expires - now).total_seconds())) if expires is not None else None,
        "lease_duration_seconds": duration,
        "transitions": _seconds(spec.get("leaseTransitions")) or 0,
        "info": read_info(lease),
        "resource_version": (lease.get("metadata") or {}).get("resourceVersion"),
    }


def describe(lease_view, name, namespace):
    """One sentence about who holds the lock, for messages."""
    where = f"lease {namespace}/{name}"
    if not lease_view["exists"]:
        return f"{where} does not exist (the lock is free)"
    holder = lease_view["holder"]
    if not holder:
        return f"{where} is free (released)"
    facts = [f"{key} {value}" for key, value in sorted(lease_view["info"].items()) if key != "holder"]
    about = f" ({', '.join(facts)})" if facts else ""
    times = []
    if lease_view["acquire_time"]:
        times.append(f"since {lease_view['acquire_time']}")
    if lease_view["renew_time"]:
        times.append(f"renewed {lease_view['renew_time']}")
    if lease_view["seconds_left"] is not None:
        left = lease_view["seconds_left"]
        times.append(f"expires in {left}s" if left >= 0 else f"expired {-left}s ago")
    when = f", {', '.join(times)}" if times else ""
    state = "" if lease_view["held"] else " (stale)"
    return f"{where} is held by {holder}{state}{about}{when}"


def new_lease(name, namespace, holder, now, duration, info=None, labels=None):
    """A Lease object held by ``holder`` from ``now``."""
    stamp = format_micro(now)
    meta = {"name": name, "namespace": namespace,
            "labels": dict(labels or {keys.MANAGED_BY_LABEL: "capi.rollout"}),
            "annotations": {keys.LOCK_INFO_ANNOTATION: _info_text(info)}}
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": meta,
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration, "acquireTime": stamp,
                     "renewTime": stamp, "leaseTransitions": 0}}


def _updated(lease, info):
    """A copy of ``lease`` fit for a PUT: server-owned metadata dropped, resourceVersion kept."""
    body = copy.deepcopy(lease)
    body["apiVersion"] = API_VERSION
    body["kind"] = KIND
    meta = body.setdefault("metadata", {})
    for key in ("managedFields", "creationTimestamp", "selfLink", "generation"):
        meta.pop(key, None)
    if info is not None:
        annotations = dict(meta.get("annotations") or {})
        annotations[keys.LOCK_INFO_ANNOTATION] = _info_text(info)
        meta["annotations"] = annotations
    body.setdefault("spec", {})
    return body


def plan_acquire(lease, holder, now, duration, name=DEFAULT_NAME, namespace="default", force=False, info=None):
    """What to do to hold the lock as ``holder``.

    Returns {action, body, previous_holder, view, message}: ``action`` is one of create, renew,
    acquire, take_over (``body`` is the object to create or PUT, with the resourceVersion that was
    read) or held (``body`` None: someone else holds a valid lease). ``force`` takes over a valid lease
    of another holder. ``info`` (dict) is stored in the info annotation for other runs' messages.
    """
    if not holder:
        raise ValueError("holder must not be empty")
    duration = validate_duration(duration)
    now = timeutil.to_utc(now)
    current = view(lease, now)
    stamp = format_micro(now)
    full_info = dict(info or {}, holder=holder)
    if lease is None:
        return {"action": CREATE, "body": new_lease(name, namespace, holder, now, duration, full_info),
                "previous_holder": None, "view": current, "message": f"lease {namespace}/{name} created, held by {holder}"}
    other = current["holder"]
    if other == holder:
        # A renewal keeps what the holder said about itself when it took the lock (info adds to it).
        body = _updated(lease, dict(current["info"], **full_info))
        body["spec"].update({"holderIdentity": holder, "leaseDurationSeconds": duration, "renewTime": stamp})
        if not body["spec"].get("acquireTime"):
            body["spec"]["acquireTime"] = stamp
        return {"action": RENEW, "body": body, "previous_holder": holder, "view": current,
                "message": f"lease {namespace}/{name} renewed by {holder} for {duration}s"}
    if current["held"] and not force:
        return {"action": HELD, "body": None, "previous_holder": other, "view": current,
                "message": describe(current, name, namespace)}
    body = _updated(lease, full_info)
    body["spec"].update({"holderIdentity": holder, "leaseDurationSeconds": duration, "acquireTime": stamp,
                         "renewTime": stamp, "leaseTransitions": current["transitions"] + (1 if other else 0)})
    if other is None:
        action = ACQUIRE
        message = f"lease {namespace}/{name} acquired by {holder}"
    else:
        action = TAKE_OVER
        left = current["seconds_left"]
        if current["held"]:
            why = f"forced; it was valid for another {left}s"
        elif left is not None:
            why = f"its lease expired {-left}s ago"
        else:
            why = "its lease has no renewTime or duration"
        message = f"lease {namespace}/{name} taken over by {holder} from {other} ({why})"
    return {"action": action, "body": body, "previous_holder": other, "view": current, "message": message}


def plan_release(lease, holder, now, name=DEFAULT_NAME, namespace="default"):
    """What to do to give the lock up as ``holder``: {action: release | not_held | absent, body, view, message}.

    Only the holder releases; a lease of another holder (or none) is left alone. A released lease keeps
    its duration and transitions, loses its holder and records the release time as renewTime.
    """
    now = timeutil.to_utc(now)
    current = view(lease, now)
    if lease is None:
        return {"action": ABSENT, "body": None, "view": current, "message": f"lease {namespace}/{name} does not exist"}
    if current["holder"] != holder:
        who = current["holder"]
        text = f"held by {who}, not by {holder}" if who else "not held by anyone"
        return {"action": NOT_HELD, "body": None, "view": current,
                "message": f"lease {namespace}/{name} is {text}; nothing released"}
    info = dict(current["info"])
    info.pop("holder", None)
    info["released_by"] = holder
    body = _updated(lease, info)
    body["spec"].pop("holderIdentity", None)
    body["spec"]["renewTime"] = format_micro(now)
    return {"action": RELEASE, "body": body, "view": current, "message": f"lease {namespace}/{name} released by {holder}"}
