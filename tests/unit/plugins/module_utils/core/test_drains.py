# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import drains
from ansible_collections.capi.rollout.plugins.module_utils.core import status as statuses
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
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
