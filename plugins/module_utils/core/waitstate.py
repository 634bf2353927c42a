# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for a group of rollouts, then a soak, as a state that survives between calls.

capi_rollout_wait reads the objects every few seconds and feeds what it saw (one *snapshot* per
object: done or not, a one-line message and a signature of its counters and conditions) into
``observe``. The state is plain JSON, so the action plugin can carry it from one module call to the
next and print the progress lines in between (a module cannot stream output).

Phases: ``rollout`` until every object is done, then ``soak`` for ``soak_seconds`` during which
every object must stay done (the health gate), then ``succeeded``. It ends ``failed`` with a
reason: ``wait_timeout`` (not done in time), ``stalled`` (no signature changed for
``stall_timeout`` seconds), ``soak_failed`` (an object stopped being healthy while soaking) or
``deleted``, or ``drift`` (an object is not on the template it must be on). Times are epoch seconds (the caller's clock), printed in UTC.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime

from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil

ROLLOUT = "rollout"
SOAK = "soak"
SUCCEEDED = "succeeded"
FAILED = "failed"

STALLED = "stalled"
WAIT_TIMEOUT = "wait_timeout"
SOAK_FAILED = "soak_failed"
DELETED = "deleted"
DRIFT = "drift"

FINISHED = (SUCCEEDED, FAILED)


def stamp(epoch):
    """RFC 3339 (UTC, seconds) of epoch seconds; None stays None."""
    if epoch is None:
        return None
    return timeutil.format_time(datetime.datetime.fromtimestamp(float(epoch), tz=datetime.timezone.utc))


def new_state(refs, now):
    """The state before the first observation of ``refs`` (object references) at epoch ``now``."""
    return {"refs": list(refs), "started": now, "last_change": now, "phase": ROLLOUT, "reason": None, "message": None,
            "signatures": {}, "lines": {}, "done_at": {}, "rollout_finished": None, "soak_until": None,
            "soak_finished": None, "ended": None, "failed_refs": []}


def _emit(lines, now, text):
    lines.append(f"{stamp(now)} {text}")


def _fail(state, now, reason, message, refs, lines):
    state.update(phase=FAILED, reason=reason, message=message, ended=now, failed_refs=sorted(refs))
    _emit(lines, now, message)


def observe(state, now, snapshots, wait_timeout, stall_timeout, soak_seconds=0):
    """Feed one round of snapshots ({ref: {done, message, signature, pending, drift}}; a missing ref was deleted) into
    ``state`` (changed in place) at epoch ``now``. Returns the new progress lines (timestamped).

    Nothing happens once the state is finished.
    """
    lines = []
    if state["phase"] in FINISHED:
        return lines
    missing = [ref for ref in state["refs"] if ref not in snapshots]
    if missing:
        _fail(state, now, DELETED, f"{', '.join(missing)} deleted while waiting for its rollout", missing, lines)
        return lines
    drifted = [ref for ref in state["refs"] if snapshots[ref].get("drift")]
    if drifted:
        _fail(state, now, DRIFT, "; ".join(snapshots[ref]["drift"] for ref in drifted), drifted, lines)
        return lines
    for ref in state["refs"]:
        snap = snapshots[ref]
        signature = snap.get("signature")
        if state["signatures"].get(ref) != signature:
            if ref in state["signatures"]:
                state["last_change"] = now
            state["signatures"][ref] = signature
        if state["lines"].get(ref) != snap["message"]:
            state["lines"][ref] = snap["message"]
            _emit(lines, now, snap["message"])
        if snap["done"] and state["done_at"].get(ref) is None:
            state["done_at"][ref] = now
        if snap.get("pending"):
            # A scheduled trigger the server's clock has not reached is not a stall.
            state["last_change"] = now
    not_done = [ref for ref in state["refs"] if not snapshots[ref]["done"]]

    if state["phase"] == SOAK:
        if not_done:
            detail = "; ".join(snapshots[ref]["message"] for ref in not_done)
            soaked = int(now - state["rollout_finished"])
            _fail(state, now, SOAK_FAILED, f"health gate failed after {soaked}s of soak: {detail}", not_done, lines)
        elif now >= state["soak_until"]:
            state.update(phase=SUCCEEDED, soak_finished=now, ended=now)
            _emit(lines, now, f"soak passed: {len(state['refs'])} object(s) stayed healthy for {int(soak_seconds)}s")
        return lines

    if not not_done:
        state["rollout_finished"] = now
        if soak_seconds and soak_seconds > 0:
            state.update(phase=SOAK, soak_until=now + soak_seconds)
            _emit(lines, now, f"every rollout complete; soaking {int(soak_seconds)}s (until {stamp(now + soak_seconds)}): "
                              "each object must stay healthy")
        else:
            state.update(phase=SUCCEEDED, ended=now)
        return lines
    waited = now - state["started"]
    quiet = now - state["last_change"]
    if waited >= wait_timeout:
        detail = "; ".join(snapshots[ref]["message"] for ref in not_done)
        _fail(state, now, WAIT_TIMEOUT, f"rollout not complete after {int(waited)}s (wait_timeout={int(wait_timeout)}s): "
                                        f"{detail}", not_done, lines)
    elif quiet >= stall_timeout:
        detail = "; ".join(snapshots[ref]["message"] for ref in not_done)
        _fail(state, now, STALLED, f"rollout stalled: no replica count or condition changed for {int(quiet)}s "
                                   f"(stall_timeout={int(stall_timeout)}s): {detail}", not_done, lines)
    return lines


def next_check(state, now, wait_timeout, stall_timeout, poll_interval):
    """Seconds to sleep before the next observation: the poll interval, cut so that no deadline
    (wait_timeout, stall_timeout, the end of the soak) is overslept by more than a moment."""
    deadlines = [state["started"] + wait_timeout, state["last_change"] + stall_timeout]
    if state["phase"] == SOAK:
        deadlines = [state["soak_until"]]
    until = min(deadlines) - now
    return max(0.0, min(float(poll_interval), until))


def summary(state):
    """Times and results of the state for the module result (RFC 3339 strings)."""
    return {
        "phase": state["phase"],
        "reason": state["reason"],
        "started": stamp(state["started"]),
        "rollout_finished": stamp(state["rollout_finished"]),
        "soak_finished": stamp(state["soak_finished"]),
        "ended": stamp(state["ended"]),
        "done_at": {ref: stamp(value) for ref, value in state["done_at"].items() if value is not None},
        "failed_refs": list(state["failed_refs"]),
    }
