# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rollout_refresh_status (core.refresh_status, report.model.cluster_stats): what the hardware_refresh role records about
a management cluster itself. The texts are the ones the role's YAML wrote before they moved here (issue 25 §1)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_refresh_status import rollout_refresh_status as status

T1, T2 = "2026-12-03T05:00:00Z", "2026-12-03T05:10:00Z"
WAVE = {"index": 2, "name": "wave-1", "kind": "MachineDeployment", "objects": ["MachineDeployment/ns/md-0"]}


def test_a_lock_held_by_another_run():
    out = status("lock_failed", message="held by bob/mc-1/1a2b3c4d until 06:15", refresh_id="hw-1", lock_duration=900)
    assert out == {
        "result": "failed",
        "failure_reason": "lock: held by bob/mc-1/1a2b3c4d until 06:15; nothing was changed",
        "next_step": "Another run is rolling this management cluster. Let it finish, or set lock_wait_timeout "
                     "(hardware_refresh_lock_wait_timeout) to wait for it; re-run with refresh_id hw-1 afterwards. If that "
                     "run is known to be dead (killed, its controller gone), its lock goes stale 900s after its last "
                     "renewal and is then taken over, or set lock_force=true (hardware_refresh_lock_force) to take it at once."}
    assert status("lock_failed", refresh_id="hw-1", lock_duration=900)["failure_reason"] == (
        "lock: the lock could not be taken; nothing was changed")


def test_a_task_that_failed_outside_a_wave():
    out = status("task_failed", task="Release the lock", failed_result={"msg": "boom"}, refresh_id="hw-1")
    assert out == {"result": "failed", "failure_reason": "Release the lock failed: boom",
                   "next_step": "Fix the cause, then re-run with refresh_id hw-1; it continues where this run stopped."}
    # a result without a message is shown whole; a task without a name is "a task"
    assert status("task_failed", failed_result={"rc": 2}, refresh_id="hw-1")["failure_reason"] == "a task failed: {'rc': 2}"


def test_the_window_closed_before_a_wave_and_before_the_first():
    window = {"state": "closed", "not_after": "2026-12-03T06:00:00Z"}
    assert status("window_closed", window=window, wave="wave-2", refresh_id="hw-1") == {
        "result": "stopped_window",
        "failure_reason": "the maintenance window closed at 2026-12-03T06:00:00Z; wave wave-2 and later waves were not started",
        "next_step": "Re-run with refresh_id hw-1 in the next maintenance window; it continues with the objects not yet switched."}
    assert status("window_closed", window=window, refresh_id="hw-1") == {
        "result": "stopped_window", "failure_reason": "the maintenance window closed at 2026-12-03T06:00:00Z; no wave was started",
        "next_step": "Re-run with refresh_id hw-1 in the next maintenance window."}


def test_a_lock_not_released():
    assert status("lock_not_released", release={"action": "release"}, refresh_id="hw-1", lock_duration=900) is None
    assert status("lock_not_released", release={"action": "none", "message": "held by another run now"}, refresh_id="hw-1",
                  lock_duration=900) == "lock: not released by this run: held by another run now"
    assert status("lock_not_released", release={"failed": True, "msg": "connection refused"}, refresh_id="hw-1",
                  lock_duration=900) == ("lock: not released by this run: connection refused; it stays held until it goes "
                                         "stale after 900s, or a re-run with refresh_id hw-1 takes it over")


@pytest.mark.parametrize("version, blocked", [
    ("v1.4.9", True), ("1.4.9", True), ("v1.5.0", False), ("1.10.3", False), ("v1.11.0-rc.1", False), ("v2.0", False),
    (None, False), ("", False), ("  ", False),
])
def test_the_capi_release_gate(version, blocked):
    out = status("capi_version", capi_version=version, min_capi_version="1.5.0")
    assert out == ([f"CAPI {version} is older than 1.5.0, the oldest release this role supports"] if blocked else [])


def test_a_capi_version_that_is_no_release_blocks_naming_the_host_variable():
    (blocker,) = status("capi_version", capi_version="latest", min_capi_version="1.5.0")
    assert blocker.startswith("capi_version 'latest' of this host is no Cluster API release")


def test_wave_entries():
    wait = {"rollout_finished": "t2", "soak_finished": "t3", "ended": "t4"}
    assert status("wave", wave=WAVE, result="succeeded", started="t1", wait=wait, soak_seconds=60) == {
        "index": 2, "name": "wave-1", "objects": WAVE["objects"], "started": "t1", "rollout_finished": "t2",
        "soak_finished": "t3", "finished": "t4", "result": "succeeded"}
    assert status("wave", wave=WAVE, result="succeeded", started="t1", wait=wait)["soak_finished"] is None
    # a wave that failed before its wait ended ends now
    assert status("wave", wave=WAVE, result="failed", started=None, wait={}, now="t9") == {
        "index": 2, "name": "wave-1", "objects": WAVE["objects"], "started": None, "rollout_finished": None,
        "finished": "t9", "result": "failed"}


def test_the_counts_published_to_awx_follow_the_reports_rules():
    def obj(name, action, result, undo=None):
        out = {"kind": "MachineDeployment", "namespace": "ns", "name": name, "action": action, "result": result}
        if undo:
            out["undo"] = undo
        return out

    drained = dict(obj("b", "switch", "succeeded"), drain_timeouts=[{"machine": "b-x", "node": "b-x"}, {"machine": "b-y"}])
    result = {"name": "mc-1", "result": "failed", "failure_reason": "wave wave-1 failed", "next_step": "Fix it.", "objects": [
        obj("a", "switch", "succeeded"), drained, obj("c", "unchanged", "succeeded"),
        obj("d", "switch", "failed", undo={"started": T1, "finished": T2, "result": "succeeded"}),
        obj("e", "switch", "undone", undo={"started": T1, "finished": T2, "result": "succeeded"}),
        obj("f", "switch", "deleted"), obj("g", "switch", "pending"), obj("h", "switch", "running"),
        obj("i", "skip", "skipped"),
        # an undo that failed did not switch it back
        obj("j", "switch", "failed", undo={"started": T1, "finished": T2, "result": "failed"}),
    ]}
    assert status("stats", result=result) == {
        "result": "failed", "failure_reason": "wave wave-1 failed", "next_step": "Fix it.",
        "switched": 2, "unchanged": 1, "failed": 2, "deleted": 1, "undone": 2, "pending": 2, "skipped": 1,
        "drain_timeouts": 2}


def test_a_step_that_is_none_or_lacks_what_it_needs_is_refused():
    with pytest.raises(AnsibleFilterError, match="must be one of lock_failed"):
        status("lock_taken")
    with pytest.raises(AnsibleFilterError, match="step window_closed needs refresh_id, window"):
        status("window_closed")
