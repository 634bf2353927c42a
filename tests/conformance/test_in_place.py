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
from capisim.polling import wait_for
from test_simulator_live import Workload, now_rfc3339  # the same user-side helpers as the other live tests

UPDATE_IN_PROGRESS = "in-place-updates.internal.cluster.x-k8s.io/update-in-progress"
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


def _machines(wl):
    return {x["metadata"]["name"]: x for x in wl.items("Machine")}


def _cond(obj, ctype):
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == ctype), {})


def test_a_template_switch_moves_the_machines_and_updates_them_in_place(inplace):
    wl = Workload(inplace, machine_deployments=[{"name": "md", "replicas": 2,
                                                 "strategy": {"type": "RollingUpdate", "max_surge": 0, "max_unavailable": 1}}])
    wl.wait_complete()
    before = {name: x["metadata"]["uid"] for name, x in _machines(wl).items()}
    (old_ms,) = wl.machine_sets()
    template = wl.copy_template(wl.md_infra_name())
    seen = []
    wl.set_md_template(infrastructureRef={"name": template})
    # the move is visible on the Machine while it updates: update-in-progress, Updating True, not UpToDate
    updating = wait_for("a Machine updating in place", lambda: seen.extend(
        x for x in _machines(wl).values() if UPDATE_IN_PROGRESS in x["metadata"].get("annotations", {})
        and _cond(x, "Updating").get("status") == "True") or seen, 30)[0]
    assert _cond(updating, "Updating")["reason"] == "InPlaceUpdating"
    assert (_cond(updating, "UpToDate")["status"], _cond(updating, "UpToDate")["reason"]) == ("False", "Updating")
    assert _cond(updating, "Ready")["status"] == "False"
    wait_for("rollout complete", lambda: wl.complete() and len(wl.machine_sets()) == 1
             and wl.machine_sets()[0]["metadata"]["name"] != old_ms["metadata"]["name"], 60)
    after = _machines(wl)
    assert {name: x["metadata"]["uid"] for name, x in after.items()} == before  # same Machines, none replaced
    (new_ms,) = wl.machine_sets()
    for machine in after.values():
        annotations = machine["metadata"]["annotations"]
        assert annotations["cluster.x-k8s.io/cloned-from-name"] == template
        assert not [k for k in annotations if k.startswith("in-place-updates.internal.cluster.x-k8s.io/")]
        assert machine["metadata"]["labels"]["cluster.x-k8s.io/set-name"] == new_ms["metadata"]["name"]
        assert [(_cond(machine, t)["status"]) for t in ("Updating", "UpToDate", "Ready")] == ["False", "True", "True"]
    assert not [k for k in new_ms["metadata"]["annotations"] if k.startswith("in-place-updates.internal")]


def test_an_expired_rollout_trigger_forces_replacement(inplace):
    """A MachineSet created before an expired spec.rollout.after is not eligible for an in-place update
    (FindNewAndOldMachineSets, v1.12.3 mdutil/util.go): the trigger written with the switch replaces every Machine."""
    wl = Workload(inplace, machine_deployments=[{"name": "md", "replicas": 2,
                                                 "strategy": {"type": "RollingUpdate", "max_surge": 0, "max_unavailable": 1}}])
    wl.wait_complete()
    before = set(_machines(wl))
    template = wl.copy_template(wl.md_infra_name())
    latest = max(x["metadata"]["creationTimestamp"] for x in wl.machine_sets())
    wait_for("a new second", lambda: now_rfc3339() > latest, 5, 0.05)
    # a second back: the new MachineSet is then created after the trigger, away from upstream bug #13182 (v1.12.3)
    wl.patch("MachineDeployment", {"spec": {"rollout": {"after": now_rfc3339(-1)},
                                            "template": {"spec": {"infrastructureRef": {"name": template}}}}})
    wait_for("rollout complete", lambda: wl.complete() and len(wl.machine_sets()) == 1 and not before & set(_machines(wl)), 60)
    assert all(x["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"] == template
               for x in _machines(wl).values())
    log = (inplace.cluster.dir / "controller.log").read_text(encoding="utf-8")
    assert "for an in-place update" in log  # positive control: the first test moved Machines on this cluster
    assert not [line for line in log.splitlines() if "moved Machine" in line and f" {wl.ns}/" in line]
