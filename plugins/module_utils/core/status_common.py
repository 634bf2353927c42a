# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pieces shared by the per-kind rollout status viewers: the result shape, kubectl's progress
messages and the RollingOut condition check."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil


def result(ref, done, message, waiting_for=None, observed=True, replicas=None, paused_reasons=None, warnings=None):
    """Status result shared by the per-kind viewers; ``warnings`` say what the user should know even
    though the status is decided (an upstream bug worked around, a trigger that is not acted on)."""
    return {
        "ref": ref,
        "done": done,
        "observed": observed,
        "message": message,
        "waiting_for": waiting_for,
        "replicas": replicas or {},
        "paused_reasons": paused_reasons or [],
        "warnings": list(warnings or []),
    }


def pending_wait(ref, after_path, after, now):
    """(waiting_for, message) while a rolloutAfter is still in the future by the server's clock, else None.

    CAPI acts on it at the first reconcile after that time: the next event or the periodic resync
    (``--sync-period``, 10 minutes by default; v1.14 main.go), not exactly then."""
    if after is None or now is None:
        return None
    now = timeutil.to_utc(now)
    if after <= now:
        return None
    seconds = int((after - now).total_seconds())
    return ("pending", f"Waiting for {ref} rollout: {after_path} {timeutil.format_time(after)} has not been reached "
                       f"by the API server's clock ({seconds}s to go)...")


def smallest(*values):
    present = [value for value in values if value is not None]
    return min(present) if present else None


def rolling_out_wait(ref, metav1_conditions, generation):
    """(waiting_for, message) when the RollingOut condition says "not finished", else None."""
    cond = conds.find(metav1_conditions, "RollingOut")
    if cond is None:
        # Controllers older than v1.9 do not set it; the counters alone decide then.
        return None
    if not conds.is_current(cond, generation):
        return ("rolling_out_condition",
                f"Waiting for {ref} rollout to finish: RollingOut condition was computed for generation "
                f"{cond['observed_generation']}, not {generation} yet...")
    if cond["status"] != conds.FALSE:
        detail = conds.first_lines(cond["message"]) or f"RollingOut is {cond['status']}"
        return ("rolling_out_condition", f"Waiting for {ref} rollout to finish: {detail}...")
    return None


def counter_wait(ref, desired, current, updated, available, available_word="available"):
    """kubectl's progress messages, in kubectl's order; (waiting_for, message) or None when complete."""
    prefix = f"Waiting for {ref} rollout to finish: "
    if updated < desired:
        return "updated_replicas", f"{prefix}{updated} out of {desired} new replicas have been updated..."
    if current > updated:
        return "old_replicas", f"{prefix}{current - updated} old replicas are pending termination..."
    if current > desired:
        return "old_replicas", f"{prefix}{current - desired} surplus replicas are pending termination..."
    if current < desired:
        return "updated_replicas", f"{prefix}{current} of {desired} replicas exist..."
    if available < updated:
        return "available_replicas", f"{prefix}{available} of {updated} updated replicas are {available_word}..."
    return None
