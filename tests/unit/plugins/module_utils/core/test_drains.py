# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import drains
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import status as statuses
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core import outcomes
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

# drain.go ConditionMessage (v1.14.0) for a Pod whose eviction a PodDisruptionBudget refused
PDB_MESSAGE = ("Drain not completed yet (started at 2026-03-01T11:50:00Z):\n* Pod team-a/web-7d4b9: cannot evict pod as it "
               "would violate the pod's disruption budget. The disruption budget web needs 2 healthy pods and has 2 currently")


def _deleting(version, reason, message, deleting=True):
    machine = objs.machine(version, deleting=deleting, phase="Deleting" if deleting else "Running")
    cond = {"type": "Deleting", "status": "True" if deleting else "False", "reason": reason, "message": message,
            "lastTransitionTime": objs.NOW_TEXT, "observedGeneration": 1}
    if version == "v1beta1":
        machine["status"]["v1beta2"]["conditions"].append(cond)
    else:
        machine["status"]["conditions"].append(cond)
    return views.machine_view(machine)


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_a_drain_a_disruption_budget_blocks_names_the_node_the_pod_the_budget_and_what_to_do(version):
    machine = _deleting(version, "DrainingNode", PDB_MESSAGE)
    found = drains.deletion_blocker(machine)
    assert found["reason"] == "DrainingNode" and found["pdb"] is True
    line = drains.describe(machine)
    assert line.startswith("being deleted, held up by the drain on Node node-1 (DrainingNode: Drain not completed")
    assert "Pod team-a/web-7d4b9: cannot evict pod as it would violate the pod's disruption budget" in line
    assert "nodeDrainTimeout" in line and "\n" not in line


@pytest.mark.parametrize("reason, words", [("WaitingForPreDrainHook", "pre-drain.delete.hook.machine.cluster.x-k8s.io"),
                                           ("WaitingForVolumeDetach", "nodeVolumeDetachTimeout")])
def test_a_hook_or_volumes_holding_up_the_deletion_say_so(reason, words):
    machine = _deleting("v1beta2", reason, "Waiting for pre-drain hooks to succeed (hooks: backup)")
    found = drains.deletion_blocker(machine)
    assert found["reason"] == reason and found["pdb"] is False and words in found["next_step"]
    assert f"({reason}: Waiting for pre-drain hooks" in drains.describe(machine)


def test_nothing_is_said_of_a_machine_not_being_deleted_or_deleted_for_other_reasons():
    assert drains.describe(_deleting("v1beta2", "NotDeleting", "", deleting=False)) is None
    assert drains.describe(_deleting("v1beta2", "WaitingForInfrastructureDeletion", "DockerMachine is deleting")) is None
    assert drains.describe(views.machine_view(objs.machine("v1beta2", deleting=True, phase="Deleting"))) is None


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_the_lines_of_a_stalled_wait_and_of_the_report_name_the_machine_the_node_and_what_blocks_it(version):
    machine = _deleting(version, "DrainingNode", PDB_MESSAGE)
    (line,) = statuses.stuck_reasons(views.view(objs.machine_deployment(version)), machines=[machine])
    assert line.startswith("Machine md-0-abcde-x1y2z is being deleted, held up by the drain on Node node-1 (DrainingNode"), line
    assert "disruption budget web needs 2 healthy pods" in line


# the node drain timeout a refresh sets for a wave, and puts back

DRAIN_FIELD = {"v1beta1": ("spec", "template", "spec", "nodeDrainTimeout"),
               "v1beta2": ("spec", "template", "spec", "deletion", "nodeDrainTimeoutSeconds")}
WRITTEN = {"v1beta1": "900s", "v1beta2": 900}


def _drain_field(obj, version):
    node = obj
    for key in DRAIN_FIELD[version]:
        node = (node or {}).get(key)
    return node


def _set(obj, version, seconds=900, rollout_id="hw-1"):
    changes = ChangeSet()
    drains.set_drain_timeout(obj, "MachineDeployment", version, seconds, rollout_id, changes)
    return objs.apply_merge_patch(obj, changes.merge_patch() or {}), changes


def _restore(obj, version):
    changes = ChangeSet()
    found = drains.restore_drain_timeout(obj, "MachineDeployment", version, changes)
    return objs.apply_merge_patch(obj, changes.merge_patch() or {}), found, changes


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("before", ["unset", "own"])
def test_a_drain_timeout_set_for_a_wave_is_put_back_as_it_was(version, before):
    md = objs.machine_deployment(version)
    own = {"v1beta1": "2m", "v1beta2": 120}[version]
    if before == "own":
        paths.set_path(md, DRAIN_FIELD[version], own)
    written, changes = _set(md, version)
    assert _drain_field(written, version) == WRITTEN[version]
    assert drains.recorded(written) == {"id": "hw-1", "before": own if before == "own" else None}
    restored, found, _changes = _restore(written, version)
    assert found["id"] == "hw-1"
    assert _drain_field(restored, version) == (own if before == "own" else None)
    if version == "v1beta2" and before == "unset":
        # no empty deletion struct left behind (the CRD wants at least one property in it)
        assert "deletion" not in restored["spec"]["template"]["spec"]
    assert keys.DRAIN_TIMEOUT_ANNOTATION not in (restored["metadata"].get("annotations") or {})


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_a_second_write_of_the_same_refresh_keeps_the_value_from_before_it(version):
    md = objs.machine_deployment(version)
    paths.set_path(md, DRAIN_FIELD[version], {"v1beta1": "1m", "v1beta2": 60}[version])
    once, _changes = _set(md, version, seconds=900)
    # a re-run after a kill (or another wave) writes again: the record still names the value before the refresh
    twice, _changes = _set(once, version, seconds=600)
    assert drains.recorded(twice)["before"] == {"v1beta1": "1m", "v1beta2": 60}[version]
    assert _drain_field(_restore(twice, version)[0], version) == {"v1beta1": "1m", "v1beta2": 60}[version]


def test_nothing_to_set_or_put_back_without_a_value_or_a_record():
    md = objs.machine_deployment("v1beta2")
    assert not _set(md, "v1beta2", seconds=None)[1].changed
    restored, found, changes = _restore(md, "v1beta2")
    assert found is None and not changes.changed
    # an unreadable record is no record: the field is left alone
    objs.annotate(md, keys.DRAIN_TIMEOUT_ANNOTATION, "not json")
    assert drains.recorded(md) is None and not _restore(md, "v1beta2")[2].changed


# a drain that timed out, noticed while watching (core.drains.drain_phase, core.waitstate.note_machine)

def _machine(version="v1beta2", reason="DrainingNode", drained=None, timeout=True, started=True, deleting=True):
    """A Machine being deleted whose drain is where ``reason`` (Deleting) and ``drained`` (v1beta1 DrainingSucceeded)
    say, with a node drain timeout when ``timeout``."""
    machine = objs.machine(version, deleting=deleting, phase="Deleting" if deleting else "Running")
    if started:
        machine["status"]["deletion"] = {"nodeDrainStartTime": objs.NOW_TEXT}
    if timeout:
        machine["spec"].update({"deletion": {"nodeDrainTimeoutSeconds": 60}} if version == "v1beta2" else {"nodeDrainTimeout": "60s"})
    cond = {"type": "Deleting", "status": "True", "reason": reason, "message": "", "lastTransitionTime": objs.NOW_TEXT}
    legacy = [{"type": "DrainingSucceeded", "status": "True" if drained else "False", "reason": "" if drained else "Draining",
               "lastTransitionTime": objs.NOW_TEXT}] if drained is not None else []
    if version == "v1beta1":
        machine["status"]["v1beta2"]["conditions"].append(cond)
        machine["status"]["conditions"] += legacy
    else:
        machine["status"]["conditions"].append(cond)
        machine["status"]["deprecated"] = {"v1beta1": {"conditions": legacy}}
    return views.machine_view(machine)


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_drain_phase_reads_the_deleting_reason_and_drainingsucceeded(version):
    assert drains.drain_phase(_machine(version, drained=False)) == drains.DRAINING
    assert drains.drain_phase(_machine(version, reason="WaitingForVolumeDetach", drained=True)) == drains.DRAINED
    # past the drain without DrainingSucceeded: CAPI skipped it when the node drain timeout passed
    assert drains.drain_phase(_machine(version, reason="WaitingForInfrastructureDeletion", drained=False)) == drains.TIMED_OUT
    # controls: no drain started, a pre-drain hook, no timeout to pass, not being deleted
    assert drains.drain_phase(_machine(version, reason="WaitingForInfrastructureDeletion", started=False)) is None
    assert drains.drain_phase(_machine(version, reason="WaitingForPreDrainHook")) is None
    assert drains.drain_phase(_machine(version, reason="WaitingForInfrastructureDeletion", drained=False, timeout=False)) is None
    assert drains.drain_phase(_machine(version, deleting=False)) is None


REF = "machinedeployment/default/md-0"


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_a_machine_seen_draining_then_gone_timed_out_and_the_wave_goes_on_with_continue(version):
    state = ws.new_state([REF], 0)
    assert ws.note_machine(state, 10, REF, _machine(version, drained=False)) == []
    lines = ws.note_machine(state, 70, REF, _machine(version, drained=False), gone=True)
    assert state["drain_timeouts"] == [{"ref": REF, "machine": "md-0-abcde-x1y2z", "node": "node-1",
                                        "at": ws.stamp(70)}]
    assert len(lines) == 1 and "drain of Machine md-0-abcde-x1y2z (Node node-1) timed out" in lines[0]
    assert "undrainable=continue" in lines[0] and state["phase"] == ws.ROLLOUT
    # noticed once, even when seen again
    assert ws.note_machine(state, 80, REF, _machine(version, reason="WaitingForInfrastructureDeletion", drained=False)) == []


def test_a_drain_that_succeeded_is_no_timeout_and_undrainable_fail_fails_the_wait():
    state = ws.new_state([REF], 0)
    ws.note_machine(state, 10, REF, _machine(drained=False))
    ws.note_machine(state, 20, REF, _machine(reason="WaitingForVolumeDetach", drained=True))
    assert ws.note_machine(state, 30, REF, _machine(drained=True), gone=True) == []
    assert state.get("drain_timeouts", []) == [] and state["phase"] == ws.ROLLOUT
    # a drain that went past without success, with undrainable=fail: the wait fails naming the Machine
    failing = ws.new_state([REF], 0)
    ws.note_machine(failing, 40, REF, _machine(reason="WaitingForInfrastructureDeletion", drained=False), undrainable="fail")
    assert (failing["phase"], failing["reason"], failing["failed_refs"]) == (ws.FAILED, ws.DRAIN_TIMED_OUT, [REF])
    assert "md-0-abcde-x1y2z" in failing["message"] and outcomes.hint(ws.DRAIN_TIMED_OUT)


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_the_older_machine_sets_with_machines_get_the_drain_timeout_set_for_the_wave(version):
    md, _changes = _set(objs.machine_deployment(version), version)
    old = objs.machine_set(version, suffix="old", replicas=1)
    emptied = objs.machine_set(version, suffix="gone", replicas=0)
    emptied["status"]["replicas"] = 0
    synced = objs.machine_set(version, suffix="new", replicas=1)
    paths.set_path(synced, DRAIN_FIELD[version], WRITTEN[version])
    other = objs.machine_set(version, md_name="md-1", suffix="x", replicas=1)
    carried = drains.carry_to_machine_sets(md, version, [old, emptied, synced, other])
    assert [ms["metadata"]["name"] for ms, _c in carried] == [old["metadata"]["name"]]
    assert _drain_field(objs.apply_merge_patch(old, carried[0][1].merge_patch()), version) == WRITTEN[version]
    # control: an MD without the record (drain_timeout not used) has nothing carried
    assert drains.carry_to_machine_sets(objs.machine_deployment(version), version, [old]) == []
