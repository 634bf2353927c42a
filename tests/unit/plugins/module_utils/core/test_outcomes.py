# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import outcomes
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws

WAIT_REASONS = (ws.STALLED, ws.WAIT_TIMEOUT, ws.SOAK_FAILED, ws.DELETED, ws.DRIFT, ws.TEMPLATE_MISSING,
                ws.DRAIN_TIMED_OUT)
SETTINGS = {"stall_timeout": 600, "wait_timeout": 3600, "soak_seconds": 120}


@pytest.mark.parametrize("reason", WAIT_REASONS)
def test_every_reason_a_wait_decides_has_a_hint_and_a_phrase(reason):
    assert outcomes.hint(reason)
    phrase = outcomes.phrase(reason, SETTINGS, "capi_rollout_wait")
    assert phrase and "{" not in phrase and "None" not in phrase


@pytest.mark.parametrize("reason,words", [
    (ws.STALLED, "for 600s"), (ws.WAIT_TIMEOUT, "after 3600s"), (ws.SOAK_FAILED, "the 120s soak")])
def test_a_phrase_names_the_setting_it_is_about(reason, words):
    assert words in outcomes.phrase(reason, SETTINGS, "x")


def test_a_reason_without_a_phrase_names_the_task_that_failed():
    assert outcomes.phrase("not_found", SETTINGS, "Switch the templates") == "Switch the templates failed"
    assert outcomes.phrase(outcomes.HOOK, SETTINGS, "the after_wave hook smoke.yml") == "the after_wave hook smoke.yml failed"
    assert outcomes.hint(outcomes.LOCK_LOST) is None and outcomes.hint("not_found") is None


def test_the_next_step_says_how_the_refresh_goes_on_and_whether_the_undo_switched_objects_back():
    step = outcomes.next_step(ws.STALLED, "r-1")
    assert step.startswith("Look at the Machines") and "re-run with refresh_id r-1" in step
    assert step.endswith("objects switched back by the undo need a new refresh_id.")
    deleted = outcomes.next_step(ws.DELETED, "r-1")
    assert "not undone" in deleted and deleted.endswith("the waves that were not started.")
    assert outcomes.next_step(outcomes.LOCK_LOST, "r-1") == "Fix the cause named above, then re-run with refresh_id r-1."
    assert outcomes.next_step(ws.DRIFT, "r-1", control_plane=True).endswith(
        "roll it forward onto a template that works.")
