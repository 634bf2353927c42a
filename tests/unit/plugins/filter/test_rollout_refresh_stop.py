# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rollout_refresh_stop (core.refresh.stop_after_plan): whether a management cluster's refresh stops once planned."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_refresh_stop import rollout_refresh_stop

WAVE = {"index": 0, "name": "wave-1", "kind": "MachineDeployment", "objects": ["MachineDeployment/ns/md-0"]}
BLOCKED = {"ref": "MachineDeployment/ns/md-1", "blockers": ["paused", "strategy OnDelete"]}
OPEN = {"state": "open", "not_before": "", "not_after": ""}
CLOSED = {"state": "closed", "not_before": "", "not_after": "2026-12-03T06:00:00Z"}
NOT_YET = {"state": "not_open_yet", "not_before": "2026-12-04T22:00:00Z", "not_after": "", "seconds_until_open": 60}


def plan(waves=(WAVE,), blocked=()):
    return {"objects": [], "waves": list(waves), "blocked": list(blocked)}


def decide(the_plan, **options):
    options.setdefault("window", OPEN)
    return rollout_refresh_stop(the_plan, refresh_id="hw-1", **options)


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_cluster_blocker_fails_the_management_cluster_in_both_modes(check_mode):
    out = decide(plan(), cluster_blockers=["CAPI v1.9 is older than 1.10", "no templates"], check_mode=check_mode)
    assert out == {"stop": True, "notes": ["CAPI v1.9 is older than 1.10", "no templates"], "status": {
        "result": "failed",
        "failure_reason": "preflight: CAPI v1.9 is older than 1.10; no templates; nothing was changed",
        "next_step": "Fix what is named above (an older Cluster API: upgrade it), or leave this management cluster out of "
                     "the refresh."}}


@pytest.mark.parametrize("check_mode", [False, True])
def test_blocked_objects_fail_it_only_with_on_blocked_fail(check_mode):
    out = decide(plan(blocked=[BLOCKED, dict(BLOCKED, ref="KubeadmControlPlane/ns/cp", blockers=["unhealthy"])]),
                 on_blocked="fail", check_mode=check_mode)
    assert out["stop"] is True and out["notes"] == []
    assert out["status"]["failure_reason"] == (
        "preflight: 2 object(s) blocked: MachineDeployment/ns/md-1: paused; strategy OnDelete | KubeadmControlPlane/ns/cp: "
        "unhealthy; nothing was changed")
    assert out["status"]["next_step"].endswith("then re-run with refresh_id hw-1.")
    assert decide(plan(blocked=[BLOCKED]), on_blocked="skip", check_mode=check_mode)["stop"] is False


def test_a_real_run_stops_at_a_closed_window_with_waves_to_roll():
    out = decide(plan(), window=CLOSED)
    assert out["stop"] is True
    assert out["status"] == {"result": "stopped_window",
                             "failure_reason": "the maintenance window closed at 2026-12-03T06:00:00Z; no wave was started",
                             "next_step": "Re-run with refresh_id hw-1 in the next maintenance window."}


def test_a_real_run_before_the_window_is_skipped_unless_it_waits():
    out = decide(plan(), window=NOT_YET)
    assert out["status"]["result"] == "skipped"
    assert out["status"]["failure_reason"] == "the maintenance window opens at 2026-12-04T22:00:00Z; no wave was started"
    assert decide(plan(), window=NOT_YET, wait_for_window=True) == {"stop": False, "status": None, "notes": []}


@pytest.mark.parametrize("window", [CLOSED, NOT_YET])
def test_check_mode_shows_the_window_without_enforcing_it(window):
    assert decide(plan(), window=window, check_mode=True) == {"stop": False, "status": None, "notes": []}


def test_a_real_run_with_nothing_to_switch_stops_without_a_result_of_its_own():
    assert decide(plan(waves=()), window=CLOSED) == {"stop": True, "status": None, "notes": []}
    assert decide(plan(waves=()), check_mode=True)["stop"] is False


def test_an_open_window_goes_on():
    assert decide(plan()) == {"stop": False, "status": None, "notes": []}


def test_bad_input_is_refused():
    with pytest.raises(AnsibleFilterError, match="the input must be the plan"):
        rollout_refresh_stop([], refresh_id="x")
    with pytest.raises(AnsibleFilterError, match="refresh_id is required"):
        rollout_refresh_stop(plan())


def test_a_check_run_while_another_run_holds_the_lock_notes_blocked_objects_without_failing():
    out = decide(plan(blocked=[BLOCKED]), on_blocked="fail", check_mode=True, lock_held=True)
    assert out["stop"] is False and out["status"] is None
    assert out["notes"] == ["1 object(s) blocked now, while another run holds the lock; a real run plans again once it holds it"]
    # positive control: without the other run, the check run fails on them as the real run would
    assert decide(plan(blocked=[BLOCKED]), on_blocked="fail", check_mode=True)["stop"] is True
