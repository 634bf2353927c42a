# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import outcomes
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects

T0 = 1796000000.0  # 2026-11-30T...Z
A = "machinedeployment/default/a"
B = "machinedeployment/default/b"


def snap(done, message=None, signature=None):
    return {"done": done, "message": message or ("done" if done else "rolling"), "signature": signature or message}


def test_stamp():
    assert ws.stamp(None) is None
    assert ws.stamp(0) == "1970-01-01T00:00:00Z"


def test_rollout_then_success_without_soak():
    state = ws.new_state([A, B], T0)
    lines = ws.observe(state, T0, {A: snap(False, "a 0/2"), B: snap(True, "b ok")}, 100, 50)
    assert [line.split(" ", 1)[1] for line in lines] == ["a 0/2", "b ok"]
    assert state["phase"] == ws.ROLLOUT and state["done_at"] == {B: T0}
    # the same state again prints nothing
    assert ws.observe(state, T0 + 1, {A: snap(False, "a 0/2"), B: snap(True, "b ok")}, 100, 50) == []
    lines = ws.observe(state, T0 + 5, {A: snap(True, "a ok"), B: snap(True, "b ok")}, 100, 50)
    assert [line.split(" ", 1)[1] for line in lines] == ["a ok"]
    assert state["phase"] == ws.SUCCEEDED and state["rollout_finished"] == T0 + 5 and state["ended"] == T0 + 5
    assert state["done_at"] == {A: T0 + 5, B: T0}
    summary = ws.summary(state)
    assert summary["phase"] == "succeeded" and summary["soak_finished"] is None
    assert summary["done_at"][A] == ws.stamp(T0 + 5)


def test_soak_passes():
    state = ws.new_state([A], T0)
    ws.observe(state, T0, {A: snap(True)}, 100, 50, soak_seconds=10)
    assert state["phase"] == ws.SOAK and state["soak_until"] == T0 + 10
    ws.observe(state, T0 + 5, {A: snap(True)}, 100, 50, soak_seconds=10)
    assert state["phase"] == ws.SOAK
    lines = ws.observe(state, T0 + 10, {A: snap(True)}, 100, 50, soak_seconds=10)
    assert state["phase"] == ws.SUCCEEDED and state["soak_finished"] == T0 + 10
    assert "soak passed" in lines[-1]


def test_soak_fails_when_an_object_turns_unhealthy():
    state = ws.new_state([A, B], T0)
    ws.observe(state, T0, {A: snap(True), B: snap(True)}, 100, 50, soak_seconds=10)
    lines = ws.observe(state, T0 + 4, {A: snap(True), B: snap(False, "b: 1 of 2 available")}, 100, 50, soak_seconds=10)
    assert state["phase"] == ws.FAILED and state["reason"] == ws.SOAK_FAILED
    assert state["failed_refs"] == [B]
    assert state["message"] == "health gate failed after 4s of soak: b: 1 of 2 available"
    assert lines[-1].endswith(state["message"])


def test_stall_counts_from_the_last_signature_change():
    state = ws.new_state([A], T0)
    ws.observe(state, T0, {A: snap(False, "m", "s1")}, 100, 10)
    ws.observe(state, T0 + 8, {A: snap(False, "m", "s2")}, 100, 10)  # counters moved, same message
    assert state["last_change"] == T0 + 8
    ws.observe(state, T0 + 17, {A: snap(False, "m", "s2")}, 100, 10)
    assert state["phase"] == ws.ROLLOUT
    ws.observe(state, T0 + 18, {A: snap(False, "m", "s2")}, 100, 10)
    assert state["phase"] == ws.FAILED and state["reason"] == ws.STALLED
    assert state["message"].startswith("rollout stalled: no replica count or condition changed for 10s (stall_timeout=10s): m")


def test_wait_timeout_wins_over_stall():
    state = ws.new_state([A], T0)
    ws.observe(state, T0, {A: snap(False, "m", "s1")}, 5, 5)
    ws.observe(state, T0 + 5, {A: snap(False, "m", "s1")}, 5, 5)
    assert state["reason"] == ws.WAIT_TIMEOUT
    assert "rollout not complete after 5s (wait_timeout=5s)" in state["message"]


def test_deleted_object_fails():
    state = ws.new_state([A, B], T0)
    ws.observe(state, T0, {A: snap(False)}, 100, 50)
    assert state["phase"] == ws.FAILED and state["reason"] == ws.DELETED and state["failed_refs"] == [B]


def test_finished_state_ignores_further_observations():
    state = ws.new_state([A], T0)
    ws.observe(state, T0, {A: snap(True)}, 100, 50)
    assert ws.observe(state, T0 + 1, {A: snap(False, "x")}, 100, 50) == []
    assert state["phase"] == ws.SUCCEEDED


def test_next_check_never_oversleeps_a_deadline():
    state = ws.new_state([A], T0)
    assert ws.next_check(state, T0, 100, 50, 10) == 10
    assert ws.next_check(state, T0 + 45, 100, 50, 10) == 5
    assert ws.next_check(state, T0 + 60, 100, 50, 10) == 0
    state.update(phase=ws.SOAK, soak_until=T0 + 3)
    assert ws.next_check(state, T0, 100, 50, 10) == 3


def test_drift_fails_at_once_even_when_done():
    """An object on another template than the one it must be on fails the wait at once, complete or not:
    its rollout is not the one the caller asked for."""
    state = ws.new_state([A, B], T0)
    ws.observe(state, T0, {A: snap(False, "a 0/2"), B: snap(True, "b ok")}, 100, 50)
    drifted = dict(snap(True, "a ok"), drift="machinedeployment/default/a is on DockerMachineTemplate a-old, not on the target a-new")
    lines = ws.observe(state, T0 + 2, {A: drifted, B: snap(True, "b ok")}, 100, 50)
    assert state["phase"] == ws.FAILED and state["reason"] == ws.DRIFT and state["failed_refs"] == [A]
    assert lines and "not on the target a-new" in lines[-1]
    assert state["rollout_finished"] is None


def test_a_template_that_is_gone_fails_the_objects_on_it_even_when_done():
    """Machines cannot be created from a template that no longer exists: a complete rollout on it is no success."""
    state = ws.new_state([A, B], T0)
    ws.observe(state, T0, {A: snap(False, "a 0/2"), B: snap(True, "b ok")}, 100, 50)
    missing = ws.template_missing(A, {"kind": "DockerMachineTemplate", "name": "a-new"}, "default")
    gone = dict(snap(True, "a ok"), template_missing=missing)
    lines = ws.observe(state, T0 + 2, {A: gone, B: snap(True, "b ok")}, 100, 50, soak_seconds=10)
    assert state["phase"] == ws.FAILED and state["reason"] == ws.TEMPLATE_MISSING and state["failed_refs"] == [A]
    assert state["message"] == (f"{A} is on DockerMachineTemplate default/a-new, which no longer exists: its MachineSet "
                                "cannot create Machines from it (replacements and scale-ups fail)")
    assert lines[-1].endswith(state["message"]) and state["rollout_finished"] is None
    assert "create it again under the same name" in outcomes.hint(ws.TEMPLATE_MISSING)


def test_deciding_is_each_observation_that_may_end_the_wait_or_start_its_soak():
    state = ws.new_state([A, B], T0)
    rolling, done = {A: snap(False), B: snap(True)}, {A: snap(True), B: snap(True)}
    assert ws.deciding(state, T0, rolling, 100, 50)  # the first observation
    ws.observe(state, T0, rolling, 100, 50, soak_seconds=10)
    assert not ws.deciding(state, T0 + 1, rolling, 100, 50)
    assert ws.deciding(state, T0 + 50, rolling, 100, 50)  # a stall is due
    assert ws.deciding(state, T0 + 1, done, 100, 50)  # every rollout done: the soak or the end begins
    assert ws.deciding(state, T0 + 100, rolling, 100, 200)  # wait_timeout
    ws.observe(state, T0 + 1, done, 100, 50, soak_seconds=10)
    assert state["phase"] == ws.SOAK
    assert not ws.deciding(state, T0 + 5, done, 100, 50)
    assert ws.deciding(state, T0 + 11, done, 100, 50)  # the end of the soak
    ws.observe(state, T0 + 11, done, 100, 50, soak_seconds=10)
    assert state["phase"] == ws.SUCCEEDED and not ws.deciding(state, T0 + 12, done, 100, 50)


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_drift_names_who_changed_the_template_and_when(version):
    md = capi_objects.machine_deployment(version=version, infra="md-0-infra-v1")
    name_set = {"f:spec": {"f:template": {"f:spec": {"f:infrastructureRef": {"f:name": {}}}}}}
    md["metadata"]["managedFields"] = [
        {"manager": "capi-rollout", "operation": "Update", "time": "2026-03-01T11:59:00Z", "fieldsV1": {}},
        {"manager": "kubectl-edit", "operation": "Update", "time": "2026-03-01T12:00:05Z", "fieldsV1": name_set}]
    found = ws.snapshot(md, version, [], None, expected={"name": "md-0-infra-v2"})["drift"]
    assert found.endswith("not on the target md-0-infra-v2: its template was changed by kubectl-edit at "
                          "2026-03-01T12:00:05Z during the rollout"), found
    md["metadata"]["managedFields"] = md["metadata"]["managedFields"][:1]
    assert "changed by someone else" in ws.snapshot(md, version, [], None, expected={"name": "md-0-infra-v2"})["drift"]
    assert ws.snapshot(md, version, [], None, expected={"name": "md-0-infra-v1"})["drift"] is None
