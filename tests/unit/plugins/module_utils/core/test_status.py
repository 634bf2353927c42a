# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import status
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

MD_REF = "machinedeployment/default/md-0"
KCP_REF = "kubeadmcontrolplane/default/c1-cp"

# CAPI mdutil TestDeploymentComplete: (desired, current, updated, available) -> complete
DEPLOYMENT_COMPLETE = [
    ((5, 5, 5, 4), False),
    ((5, 5, 5, 3), False),
    ((5, 5, 5, 5), True),
    ((5, 5, 4, 5), False),
    ((1, 2, 1, 1), False),  # still running old machines
    ((1, 1, 1, 0), False),
]


@pytest.mark.parametrize("counts, complete", DEPLOYMENT_COMPLETE)
def test_deployment_complete_table(counts, complete):
    assert status.deployment_complete(*counts) is complete


@pytest.mark.parametrize("generation, observed, complete", [(5, 4, False), (5, 5, True), (5, 6, True), (5, None, False)])
def test_deployment_complete_observed_generation_fencepost(generation, observed, complete):
    assert status.deployment_complete(3, 3, 3, 3, generation=generation, observed_generation=observed) is complete


def _md_with_counts(version, desired, current, updated, available):
    md = objs.machine_deployment(version, replicas=desired)
    # Both counter families follow the table, as a real controller would report them.
    return objs.set_counts(md, replicas=current, up_to_date=updated, available=available, legacy_updated=updated,
                           legacy_available=available)


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("counts, complete", DEPLOYMENT_COMPLETE)
def test_md_status_follows_deployment_complete_table(version, counts, complete):
    result = status.rollout_status(_md_with_counts(version, *counts))
    assert result["done"] is complete
    assert result["ref"] == "machinedeployment/default/md-0"


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("desired, current, updated, available, message, waiting_for", [
    (3, 3, 1, 3, f"Waiting for {MD_REF} rollout to finish: 1 out of 3 new replicas have been updated...", "updated_replicas"),
    (3, 4, 0, 3, f"Waiting for {MD_REF} rollout to finish: 0 out of 3 new replicas have been updated...", "updated_replicas"),
    (3, 5, 3, 3, f"Waiting for {MD_REF} rollout to finish: 2 old replicas are pending termination...", "old_replicas"),
    (3, 3, 3, 2, f"Waiting for {MD_REF} rollout to finish: 2 of 3 updated replicas are available...", "available_replicas"),
    (3, 4, 4, 4, f"Waiting for {MD_REF} rollout to finish: 1 surplus replicas are pending termination...", "old_replicas"),
    (3, 3, 3, 3, f"{MD_REF} successfully rolled out", None),
    (0, 0, 0, 0, f"{MD_REF} successfully rolled out", None),
])
def test_md_progress_messages(version, desired, current, updated, available, message, waiting_for):
    result = status.rollout_status(_md_with_counts(version, desired, current, updated, available))
    assert result["message"] == message
    assert result["waiting_for"] == waiting_for
    assert result["done"] is (waiting_for is None)


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_md_waits_for_spec_update_to_be_observed(version):
    md = objs.machine_deployment(version, generation=7)
    md["status"]["observedGeneration"] = 6
    result = status.rollout_status(md)
    assert result == {
        "ref": MD_REF, "done": False, "observed": False, "waiting_for": "observation",
        "message": f"Waiting for {MD_REF} spec update to be observed...",
        "replicas": {"desired": 3, "current": 3, "up_to_date": 3, "available": 3, "ready": 3}, "paused_reasons": [],
        "warnings": [],
    }


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_md_stale_rolling_out_condition_is_not_complete(version):
    """CAPI #13738: observedGeneration is bumped before the counters; the RollingOut condition
    still carries the previous generation, so the rollout must not be reported complete."""
    md = objs.machine_deployment(version, generation=3)
    md = objs.set_condition(md, "RollingOut", "False", "NotRollingOut", generation=2)
    result = status.rollout_status(md)
    assert result["done"] is False
    assert result["waiting_for"] == "rolling_out_condition"
    assert result["message"] == (f"Waiting for {MD_REF} rollout to finish: RollingOut condition was computed for generation 2, "
                                 "not 3 yet...")
    md = objs.set_condition(md, "RollingOut", "False", "NotRollingOut", generation=3)
    assert status.rollout_status(md)["done"] is True


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_md_rolling_out_true_is_not_complete(version):
    md = objs.set_condition(objs.machine_deployment(version), "RollingOut", "True", "RollingOut",
                            message="Rolling out 3 not up-to-date replicas\n* Version v1.30.2, v1.31.0 required")
    result = status.rollout_status(md)
    assert result["done"] is False
    assert result["message"] == (f"Waiting for {MD_REF} rollout to finish: Rolling out 3 not up-to-date replicas; "
                                 "* Version v1.30.2, v1.31.0 required...")


def test_md_v1beta1_up_to_date_counter_tightens_updated():
    md = objs.set_counts(objs.machine_deployment("v1beta1"), up_to_date=2, legacy_updated=3)
    result = status.rollout_status(md)
    assert result["done"] is False
    assert result["message"] == f"Waiting for {MD_REF} rollout to finish: 2 out of 3 new replicas have been updated..."


def test_md_v1beta1_uses_old_available_counter():
    md = objs.set_counts(objs.machine_deployment("v1beta1"), available=3, legacy_available=2)
    assert status.rollout_status(md)["waiting_for"] == "available_replicas"


def test_md_v1beta2_right_after_restart_is_not_complete():
    """v1.11+ right after a restart: upToDate/RollingOut still describe the old Machines (stale but
    stamped with the new generation); the new MachineSet's replicas (deprecated updatedReplicas) are 0."""
    md = objs.set_rollout_after(objs.machine_deployment("v1beta2", generation=3), objs.NOW_TEXT)
    md = objs.set_counts(md, legacy_updated=0)
    result = status.rollout_status(md)
    assert result["done"] is False
    assert result["message"] == f"Waiting for {MD_REF} rollout to finish: 0 out of 3 new replicas have been updated..."


def test_md_v1beta2_without_deprecated_counters():
    """Upstream marks status.deprecated for removal: the up-to-date counter alone lags a template
    change, so only the MachineSets can confirm completion then."""
    md = objs.machine_deployment("v1beta2")
    del md["status"]["deprecated"]
    result = status.rollout_status(md)
    assert result["done"] is False and result["waiting_for"] == "machine_sets"
    assert "status.deprecated.v1beta1.updatedReplicas" in result["message"]
    current = [objs.machine_set("v1beta2", suffix="aaaaa", created=objs.CREATED, infra="md-0-infra-v1", replicas=3)]
    assert status.rollout_status(md, machine_sets=current, now=objs.NOW)["done"] is True
    # the template changed, the counters still describe the old Machines: not complete
    stale = [objs.machine_set("v1beta2", suffix="aaaaa", created=objs.CREATED, infra="md-0-infra-v0", replicas=3)]
    assert status.rollout_status(md, machine_sets=stale, now=objs.NOW)["waiting_for"] == "new_machine_set"
    md = objs.set_counts(objs.machine_deployment("v1beta2"), legacy_available=0)
    assert status.rollout_status(md)["done"] is True  # only the updated counter is taken from there


def _sets_for(version, md, specs):
    """MachineSets owned by md: (suffix, created, infra, replicas)."""
    return [objs.machine_set(version, suffix=suffix, created=created, infra=infra, replicas=replicas, revision=str(i + 1))
            for i, (suffix, created, infra, replicas) in enumerate(specs)]


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("after, specs, waiting_for, message", [
    # restart: only the old MachineSet (created before rolloutAfter) exists yet
    (objs.NOW_TEXT, [("aaaaa", objs.CREATED, "md-0-infra-v1", 3)], "new_machine_set",
     "waiting for a MachineSet with the current template created after {path} (2026-03-01T12:00:00Z)..."),
    # new MachineSet exists, the old one still holds replicas
    (objs.NOW_TEXT, [("aaaaa", objs.CREATED, "md-0-infra-v1", 1), ("bbbbb", objs.NOW_TEXT, "md-0-infra-v1", 3)], "old_replicas",
     "1 old replicas are pending termination (md-0-aaaaa)..."),
    # done: old MachineSet scaled to 0 (kept by v1.10), new one has everything
    (objs.NOW_TEXT, [("aaaaa", objs.CREATED, "md-0-infra-v1", 0), ("bbbbb", objs.NOW_TEXT, "md-0-infra-v1", 3)], None, None),
    # template switch without rolloutAfter: the MachineSet with the old template is old
    (None, [("aaaaa", objs.CREATED, "md-0-infra-v0", 2), ("bbbbb", objs.CREATED, "md-0-infra-v1", 3)], "old_replicas",
     "2 old replicas are pending termination (md-0-aaaaa)..."),
    (None, [("aaaaa", objs.CREATED, "md-0-infra-v0", 3)], "new_machine_set",
     "waiting for a MachineSet with the current template..."),
    # a future rolloutAfter has not fired by the server's clock: pending, whatever the MachineSets say
    (objs.HOUR_LATER, [("aaaaa", objs.CREATED, "md-0-infra-v1", 3)], "pending", None),
])
def test_md_status_with_machine_sets(version, after, specs, waiting_for, message):
    md = objs.machine_deployment(version)
    if after:
        md = objs.set_rollout_after(md, after)
    result = status.rollout_status(md, machine_sets=_sets_for(version, md, specs), now=objs.NOW)
    assert result["waiting_for"] == waiting_for
    if message:
        path = "spec.rolloutAfter" if version == "v1beta1" else "spec.rollout.after"
        assert result["message"] == f"Waiting for {MD_REF} rollout to finish: " + message.format(path=path)
    assert result["done"] is (waiting_for is None)


def test_md_status_machine_sets_of_other_owners_are_ignored():
    md = objs.machine_deployment("v1beta2")
    sets = [objs.machine_set(suffix="xxxxx", owner_uid="uid-other", infra="md-0-infra-v0", replicas=3),
            objs.machine_set(suffix="bbbbb")]
    assert status.rollout_status(md, machine_sets=sets, now=objs.NOW)["done"] is True


def test_md_old_controller_without_v1beta2_status_uses_counters_only():
    md = objs.machine_deployment("v1beta1")
    del md["status"]["v1beta2"]
    assert status.rollout_status(md)["done"] is True
    md["status"]["updatedReplicas"] = 1
    assert status.rollout_status(md)["waiting_for"] == "updated_replicas"


def test_md_without_status_waits():
    result = status.rollout_status(objs.bare("MachineDeployment", "md-1"))
    assert result["done"] is False
    assert result["message"] == "Waiting for machinedeployment/default/md-1 spec.replicas to be set..."


def test_md_paused_reasons_reported():
    md = objs.machine_deployment("v1beta2")
    md["spec"]["paused"] = True
    md = objs.set_counts(md, up_to_date=0)
    result = status.rollout_status(md)
    assert result["done"] is False and result["paused_reasons"] == ["spec.paused is true"]


def _kcp_with_counts(version, desired, current, updated, ready, available):
    kcp = objs.kubeadm_control_plane(version, replicas=desired)
    return objs.set_counts(kcp, replicas=current, up_to_date=updated, ready=ready, available=available,
                           legacy_updated=updated, legacy_ready=ready)


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("counts, message", [
    ((3, 3, 3, 3, 3), f"{KCP_REF} successfully rolled out"),
    ((3, 4, 1, 3, 3), f"Waiting for {KCP_REF} rollout to finish: 1 out of 3 new replicas have been updated..."),
    ((3, 4, 3, 3, 3), f"Waiting for {KCP_REF} rollout to finish: 1 old replicas are pending termination..."),
    ((3, 3, 3, 2, 2), f"Waiting for {KCP_REF} rollout to finish: 2 of 3 updated replicas are available..."),
    ((3, 3, 3, 3, 2), f"Waiting for {KCP_REF} rollout to finish: 2 of 3 updated replicas are available..."),
])
def test_kcp_progress(version, counts, message):
    result = status.rollout_status(_kcp_with_counts(version, *counts))
    assert result["message"] == message
    assert result["done"] is message.endswith("successfully rolled out")


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_kcp_observed_generation_lag_and_stale_condition(version):
    kcp = objs.kubeadm_control_plane(version, generation=4)
    kcp["status"]["observedGeneration"] = 3
    assert status.rollout_status(kcp)["waiting_for"] == "observation"
    kcp["status"]["observedGeneration"] = 4
    kcp = objs.set_condition(kcp, "RollingOut", "False", "NotRollingOut", generation=3)
    assert status.rollout_status(kcp)["waiting_for"] == "rolling_out_condition"


def test_kcp_v1beta2_waits_for_single_version():
    kcp = objs.kubeadm_control_plane("v1beta2", k8s_version="v1.31.0")
    kcp["status"]["versions"] = [{"version": "v1.30.2", "replicas": 1}, {"version": "v1.31.0", "replicas": 2}]
    result = status.rollout_status(kcp)
    assert result["waiting_for"] == "version"
    assert result["message"] == f"Waiting for {KCP_REF} rollout to finish: machines run v1.30.2, v1.31.0, v1.31.0 required..."


def test_kcp_v1beta1_waits_for_status_version():
    kcp = objs.kubeadm_control_plane("v1beta1", k8s_version="v1.31.0")
    kcp["status"]["version"] = "v1.30.2"
    result = status.rollout_status(kcp)
    assert result["message"] == f"Waiting for {KCP_REF} rollout to finish: lowest machine version v1.30.2, v1.31.0 required..."


def test_kcp_old_controller_uses_machines_spec_up_to_date_and_ready():
    kcp = objs.kubeadm_control_plane("v1beta1")
    del kcp["status"]["v1beta2"]
    assert status.rollout_status(kcp)["done"] is True
    kcp["status"]["conditions"][2] = {"type": "MachinesSpecUpToDate", "status": "False", "severity": "Warning",
                                      "reason": "RollingUpdateInProgress", "lastTransitionTime": objs.CREATED,
                                      "message": "Rolling 3 replicas with outdated spec (0 replicas up to date)"}
    result = status.rollout_status(kcp)
    assert result["message"] == (f"Waiting for {KCP_REF} rollout to finish: Rolling 3 replicas with outdated spec "
                                 "(0 replicas up to date)...")
    kcp["status"]["conditions"][2]["status"] = "True"
    kcp["status"]["readyReplicas"] = 2
    assert status.rollout_status(kcp)["message"] == f"Waiting for {KCP_REF} rollout to finish: 2 of 3 updated replicas are ready..."


def test_kcp_v1beta1_workload_cluster_blip_does_not_undo_readiness():
    """v1.10 resets the Node-based readyReplicas to 0 on every reconcile that cannot reach the workload
    cluster; the Machine-based status.v1beta2.readyReplicas decides, so a complete KCP stays complete."""
    kcp = objs.kubeadm_control_plane("v1beta1")
    kcp["status"].update(readyReplicas=0, unavailableReplicas=3)
    result = status.rollout_status(kcp)
    assert result["done"] is True and result["replicas"]["ready"] == 3
    # positive control: Machines that really are not ready still hold the rollout
    kcp["status"]["v1beta2"]["readyReplicas"] = 2
    result = status.rollout_status(kcp)
    assert result["done"] is False and result["replicas"]["ready"] == 2
    assert result["message"] == f"Waiting for {KCP_REF} rollout to finish: 2 of 3 updated replicas are available..."


def test_rollout_status_rejects_other_kinds():
    with pytest.raises(RolloutError):
        status.rollout_status(objs.machine_set())


def _view_with(version="v1beta2", **conds):
    md = objs.machine_deployment(version)
    for cond_type, (cond_status, reason, message) in conds.items():
        md = objs.set_condition(md, cond_type, cond_status, reason, message=message)
    return views.view(md)


def test_stuck_reasons_healthy_is_empty():
    assert status.stuck_reasons(_view_with()) == []


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_stuck_reasons_from_conditions(version):
    view = _view_with(
        version,
        ScalingUp=("True", "ScalingUp", "Scaling up from 2 to 3 replicas is blocked because DockerMachineTemplate does not exist"),
        RollingOut=("True", "RollingOut", "Rolling out 1 not up-to-date replicas\n* DockerMachine is not up-to-date"),
        MachinesReady=("False", "NotReady", "* Machine md-0-abcde-x1y2z:\n  * NodeHealthy: Node not ready"),
    )
    assert status.stuck_reasons(view) == [
        "RollingOut (RollingOut): Rolling out 1 not up-to-date replicas; * DockerMachine is not up-to-date",
        "ScalingUp (ScalingUp): Scaling up from 2 to 3 replicas is blocked because DockerMachineTemplate does not exist",
        "MachinesReady (NotReady): * Machine md-0-abcde-x1y2z:; * NodeHealthy: Node not ready",
    ]


def test_stuck_reasons_paused_and_machines():
    md = objs.machine_deployment()
    md["spec"]["paused"] = True
    machines = [views.view(objs.machine(name=f"m{i}", ready=False)) for i in range(7)]
    machines.append(views.view(objs.machine(name="gone", deleting=True, phase="Deleting")))
    lines = status.stuck_reasons(views.view(md), machines=machines)
    assert lines[0] == "paused: spec.paused is true"
    assert lines[1] == "Machine m0 is not ready: * NodeHealthy: Waiting for a Node with spec.providerID docker:////m0 to exist"
    assert lines[-1] == "... and 3 more machines"
    assert len(lines) == 1 + 5 + 1


def test_a_machine_is_named_by_the_earliest_provisioning_step_that_is_not_done():
    machine = objs.machine(name="m1", ready=False)
    machine["status"]["conditions"].append({"type": "InfrastructureReady", "status": "False", "reason": "PowerOnFailed",
                                            "message": "BMC power-on timed out\non host r760-u12"})
    reason = status.machine_reason(views.view(machine))
    assert reason == "not ready: InfrastructureReady=False (PowerOnFailed): BMC power-on timed out; on host r760-u12"
    # the wait's line and the failure's stuck Machine say the same
    assert status.stuck_reasons(views.view(objs.machine_deployment()), machines=[views.view(machine)]) == [
        f"Machine m1 is {reason}"]
    assert status.machine_reason(views.view(objs.machine(name="m2"))) is None


def test_stuck_reasons_v1beta1_style_conditions():
    md = objs.machine_deployment("v1beta1")
    del md["status"]["v1beta2"]
    md["status"]["conditions"][1] = {"type": "Available", "status": "False", "severity": "Warning", "reason": "WaitingForAvailableMachines",
                                     "message": "Minimum availability requires 3 replicas, current 2 available",
                                     "lastTransitionTime": objs.CREATED}
    assert status.stuck_reasons(views.view(md)) == [
        "Available (WaitingForAvailableMachines): Minimum availability requires 3 replicas, current 2 available"]


def test_stuck_reasons_with_explicit_conditions():
    view = views.view(objs.machine_deployment())
    extra = [{"type": "ScalingDown", "status": "True", "reason": "ScalingDown",
              "message": "Scaling down from 4 to 3 replicas\n* Machine m1 is in deletion since more than 15m"}]
    assert status.stuck_reasons(view, conditions=extra) == [
        "ScalingDown (ScalingDown): Scaling down from 4 to 3 replicas; * Machine m1 is in deletion since more than 15m"]


def test_stuck_reasons_on_delete_strategy():
    md = objs.machine_deployment("v1beta2")
    md["spec"]["rollout"]["strategy"] = {"type": "OnDelete"}
    assert status.stuck_reasons(views.view(md)) == ["strategy OnDelete: old Machines are only replaced when someone deletes them"]


def _bug_13182_state(version, created):
    """All Machines on the MachineSet created at ``created``, old MachineSet at 0, rolloutAfter = TRIGGER;
    the up-to-date counter stuck at 0 and RollingOut True, as CAPI v1.10-v1.12.3 leave it."""
    md = objs.set_rollout_after(objs.machine_deployment(version), objs.TRIGGER_TEXT)
    md = objs.set_counts(md, up_to_date=0)
    md = objs.set_condition(md, "RollingOut", "True", "RollingOut", message="* MachineDeployment spec.rolloutAfter expired")
    sets = _sets_for(version, md, [("aaaaa", objs.CREATED, "md-0-infra-v1", 0), ("bbbbb", created, "md-0-infra-v1", 3)])
    return md, sets


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_md_bug_13182_state_is_complete_with_a_warning(version):
    md, sets = _bug_13182_state(version, objs.TRIGGER_TEXT)
    result = status.rollout_status(md, machine_sets=sets, now=objs.NOW)
    assert result["done"] is True and result["waiting_for"] is None
    assert len(result["warnings"]) == 1
    warning = result["warnings"][0]
    assert "kubernetes-sigs/cluster-api#13182" in warning and "md-0-bbbbb" in warning
    assert "v1.12.4" in warning and ("spec.rolloutAfter" if version == "v1beta1" else "spec.rollout.after") in warning
    # without the MachineSets the state cannot be told from a stuck rollout
    assert status.rollout_status(md, now=objs.NOW)["waiting_for"] == "updated_replicas"


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_md_counters_stuck_without_the_bug_13182_state_keep_waiting(version):
    # created a second after rolloutAfter: the counters must settle on every release, so keep waiting
    md, sets = _bug_13182_state(version, "2026-03-01T12:00:00Z")
    result = status.rollout_status(md, machine_sets=sets, now=objs.NOW)
    assert result["done"] is False and result["waiting_for"] == "updated_replicas" and result["warnings"] == []
    # old MachineSet still holding replicas: not the bug state either
    md, sets = _bug_13182_state(version, objs.TRIGGER_TEXT)
    sets[0]["spec"]["replicas"] = 1
    md = objs.set_counts(md, replicas=4)
    assert status.rollout_status(md, machine_sets=sets, now=objs.NOW)["done"] is False


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("kind", ["MachineDeployment", "KubeadmControlPlane"])
def test_future_trigger_is_pending_by_the_server_clock(version, kind):
    obj = objs.machine_deployment(version) if kind == "MachineDeployment" else objs.kubeadm_control_plane(version)
    obj = objs.set_rollout_after(obj, objs.HOUR_LATER)
    result = status.rollout_status(obj, machine_sets=[], now=objs.NOW)
    path = "spec.rolloutAfter" if version == "v1beta1" else "spec.rollout.after"
    assert result["done"] is False and result["waiting_for"] == "pending"
    assert f"{path} {objs.HOUR_LATER} has not been reached by the API server's clock (3600s to go)" in result["message"]
    # once the server's clock passes it, the trigger is no longer pending
    later = status.rollout_status(obj, machine_sets=[], now="2026-03-01T13:00:01Z")
    assert later["waiting_for"] != "pending"


def test_md_v1beta2_machines_updating_in_place_are_not_complete():
    """Crafted in-place state (CAPI v1.12+, InPlaceUpdates): every Machine was moved to the new MachineSet (the
    MachineSets alone look finished), one still updates in place: UpToDate False (reason Updating) and not Ready, so
    the up-to-date and available counters lag (v1.12.3 api/core/v1beta2/machine_types.go)."""
    md = objs.machine_deployment("v1beta2")
    sets = [objs.machine_set("v1beta2", suffix="bbbbb", created=objs.CREATED, infra="md-0-infra-v1", replicas=3)]
    updating = objs.set_counts(md, up_to_date=2, available=2, ready=2, legacy_updated=2, legacy_available=2)
    result = status.rollout_status(updating, machine_sets=sets, now=objs.NOW)
    assert result["done"] is False and result["replicas"]["up_to_date"] == 2
    # control: once the update ends, the same state is complete
    assert status.rollout_status(md, machine_sets=sets, now=objs.NOW)["done"] is True
