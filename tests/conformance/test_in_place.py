"""In-place updates (CAPI v1.12+, feature gate InPlaceUpdates) on a simulated management cluster.

Upstream (cluster-api v1.12.3): feature/feature.go (InPlaceUpdates, alpha), the hooks an update extension registers
(docs/book/src/tasks/experimental-features/runtime-sdk/implement-in-place-update-hooks.md), the MachineDeployment
rollout planner's in-place intent (internal/controllers/machinedeployment/machinedeployment_rollout_rollingupdate.go
reconcileInPlaceUpdateIntent) and its eligibility (internal/controllers/machinedeployment/mdutil/util.go
FindNewAndOldMachineSets, MachineTemplateUpToDate).
"""

from pathlib import Path

import pytest

from capisim.kubeapi import resource_path

FLEET = str(Path(__file__).resolve().parents[1] / "fleets" / "in-place-v1.12.3.yml")


@pytest.fixture(scope="module")
def inplace(fleet_factory):
    return fleet_factory(FLEET).cluster()


def test_the_update_extension_is_registered_with_the_three_hooks(inplace):
    configs = inplace.api("viewer").list(resource_path("runtime.cluster.x-k8s.io", "v1beta2", "extensionconfigs"))["items"]
    assert [c["metadata"]["name"] for c in configs] == ["capisim-in-place"]
    hooks = [(h["name"], h["requestHook"]["hook"]) for h in configs[0]["status"]["handlers"]]
    assert hooks == [("canUpdateMachineSet.capisim-in-place", "CanUpdateMachineSet"),
                     ("canUpdateMachine.capisim-in-place", "CanUpdateMachine"),
                     ("updateMachine.capisim-in-place", "UpdateMachine")]
