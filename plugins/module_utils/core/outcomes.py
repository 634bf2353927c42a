# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a rollout ends badly, in one table: per failure reason, the phrase a wave's report entry uses, the hint a wait's
error gives and the next step a refresh's record gives (one vocabulary for the wait, the role and the report).

The wait decides the reasons of a rollout (core.waitstate's constants); a refresh adds its own (a lost lock, a failed
hook). The phrases read the run's settings (``stall_timeout``, ``wait_timeout``, ``soak_seconds``) where they name them.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from typing import Any, Callable, Mapping, NamedTuple, Optional

from ansible_collections.capi.rollout.plugins.module_utils.core import refresh_status as statuses
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws

# the reasons of a refresh besides a wait's (core.waitstate's)
LOCK_LOST = "lock_lost"
HOOK = "hook"


class Outcome(NamedTuple):
    """``phrase``: what happened, in a wave's report entry, from the run's settings (None: the task that failed);
    ``hint``: what to do, appended to
    the wait's error ("" for reasons no wait decides); ``next_step``: what to do before the refresh goes on ("" for the
    generic "fix the cause"); ``undone``: whether the wave's undo switched objects back (a deleted object is not)."""

    phrase: Optional[Callable[[Mapping[str, Any]], str]]
    hint: str = ""
    next_step: str = ""
    undone: bool = True


_ROLLOUT_STEP = ("Look at the Machines named above and at the infrastructure provider (image, capacity, hardware) and "
                 "fix the template overrides.")

OUTCOMES = {
    ws.STALLED: Outcome(
        lambda settings: f"stalled: no replica count or condition changed for {settings.get('stall_timeout')}s",
        "look at the Machines and the infrastructure provider (a failing machine template?); raise stall_timeout if "
        "the machines are just slow to provision",
        _ROLLOUT_STEP),
    ws.WAIT_TIMEOUT: Outcome(
        lambda settings: f"not rolled out after {settings.get('wait_timeout')}s (wait_timeout)",
        "raise wait_timeout, or check the progress lines for what is slow",
        _ROLLOUT_STEP),
    ws.SOAK_FAILED: Outcome(
        lambda settings: f"health gate failed during the {settings.get('soak_seconds')}s soak",
        "the objects rolled out but did not stay healthy; look at the Machines named here",
        _ROLLOUT_STEP),
    ws.DELETED: Outcome(
        lambda _settings: "deleted while rolling out",
        "check who deleted it (the Cluster being deleted?)",
        "Find out who deleted it (the Cluster being deleted?); a deleted object is not undone.",
        undone=False),
    ws.DRIFT: Outcome(
        # the wait names by whom (core.waitstate.drift)
        lambda _settings: "its template was changed during the wave",
        "find out who changed the template (the audit log, a GitOps tool reverting it?); rerun with the same refresh "
        "id to switch it again once it is settled"),
    ws.TEMPLATE_MISSING: Outcome(
        lambda _settings: "its template was deleted during the wave",
        "find out who deleted the template (the audit log); create it again under the same name "
        "(capi_machine_template from the same source and overrides makes the same one), or undo the rollout "
        "(capi_rollout_undo) to go back to the previous template",
        "Find out who deleted the template named above (the API server's audit log) and keep the templates of a "
        "refresh until it is done."),
    ws.DRAIN_TIMED_OUT: Outcome(
        lambda _settings: "the drain of a Machine timed out (undrainable=fail)",
        "the Pods named were not evicted (CAPI deleted the Machine when its node drain timeout passed): check their "
        "workloads; rerun with undrainable=continue to let such drains pass, or fix what blocks them (a "
        "PodDisruptionBudget that allows no disruption) and rerun with the same refresh id",
        "Look at the workloads of the Pods that were not evicted (a PodDisruptionBudget that allows no disruption?); "
        "with undrainable=continue such a drain does not stop the wave."),
    LOCK_LOST: Outcome(lambda _settings: "another run took the lock of this management cluster"),
    HOOK: Outcome(
        None,
        next_step="Look at what the hook found (its failed task and message above) and fix the cause, or the hook."),
}


def hint(reason):
    """What to do after a wait failed for ``reason`` (None when no wait decides it)."""
    outcome = OUTCOMES.get(reason)
    return (outcome.hint if outcome else "") or None


def phrase(reason, settings, failed_task):
    """What happened in a wave that failed for ``reason`` (``failed_task``: the name of the task that failed, said
    when the reason has no phrase of its own)."""
    outcome = OUTCOMES.get(reason)
    if outcome is None or outcome.phrase is None:
        return f"{failed_task} failed"
    return outcome.phrase(settings)


def _continues(refresh_id, undone):
    """How a refresh stopped by a failed wave goes on: the waves not started; what its undo switched back is not."""
    text = f"A {statuses.rerun(refresh_id)} continues with the waves that were not started"
    return text + ("; objects switched back by the undo need a new refresh_id." if undone else ".")


def next_step(reason, refresh_id, control_plane=False):
    """What the operator does before a refresh stopped by a wave that failed for ``reason`` goes on (``control_plane``:
    the wave rolled control planes, which are never undone)."""
    outcome = OUTCOMES.get(reason)
    if outcome is None or not outcome.next_step:
        text = f"Fix the cause named above, then {statuses.rerun(refresh_id)}."
    else:
        text = f"{outcome.next_step} {_continues(refresh_id, outcome.undone)}"
    if control_plane:
        text += (" A control plane is not undone (kubeadm does not support going back), unless its change went through "
                 "its Cluster topology (a Cluster variable, reverted there): roll it forward onto a template that works.")
    return text
