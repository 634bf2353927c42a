"""Drains that hold up a rollout (issue 29 §1), against the module fleets: a PodDisruptionBudget blocks the drain of
the old Machine's Node (the simulator's `drain: {blocked_by_pdb: true}`, capisim/controller/drainplan.py), and the
stalled wait names the Machine, its Node, the budget and its Pod, and what to do."""

import pytest

NS = "team-drain"


@pytest.mark.needs_controller
def test_a_stall_on_a_blocked_drain_names_the_machine_node_and_budget(capi):
    capi.add_workload("wdr", NS, "v1.30.4", ["md-0"], drain={"blocked_by_pdb": True})
    ready = capi.run("capi_rollout_info", name="wdr-md-0", namespace=NS, wait=True, wait_timeout=120)
    assert not ready.failed, ready.get("msg")
    (machine,) = capi.machines("cluster.x-k8s.io/deployment-name=wdr-md-0", NS)
    res = capi.run("capi_rollout_restart", name="wdr-md-0", namespace=NS, wait=True, wait_timeout=300, stall_timeout=15)
    assert res.failed and res["reason"] == "stalled", res.get("msg")
    node = capi.get("Machine", machine, NS)["status"]["nodeRef"]["name"]
    assert f"machinedeployment/{NS}/wdr-md-0" in res["msg"]
    assert f"{machine} is being deleted, held up by the drain on Node {node} (DrainingNode" in res["msg"], res["msg"]
    assert f"Pod default/web-{node}: cannot evict pod as it would violate the pod's disruption budget. " \
           "The disruption budget web needs 1 healthy pods and has 1 currently" in res["msg"], res["msg"]
    assert "give the pool a node drain timeout" in res["msg"]
    # leave the pool complete for any later fleet-wide test: a node drain timeout lets CAPI delete the Machine anyway.
    # v1.10 passes the MD's in-place fields to the new MachineSet only (v1.10.10 machinedeployment_sync.go
    # getNewMachineSet), so the old Machine's MachineSet gets it by hand; v1.14 syncs every MachineSet from the MD.
    timeout = {"spec": {"template": {"spec": {"deletion": {"nodeDrainTimeoutSeconds": 1}} if capi.version == "v1beta2"
                                     else {"nodeDrainTimeout": "1s"}}}}
    capi.admin.patch_merge(capi.path("MachineDeployment", NS, "wdr-md-0"), timeout)
    old_ms = next(ref["name"] for ref in capi.get("Machine", machine, NS)["metadata"]["ownerReferences"] if ref.get("controller"))
    capi.admin.patch_merge(capi.path("MachineSet", NS, old_ms), timeout)
    done = capi.run("capi_rollout_info", name="wdr-md-0", namespace=NS, wait=True, wait_timeout=120)
    assert not done.failed, done.get("msg")
    assert machine not in capi.machines("cluster.x-k8s.io/deployment-name=wdr-md-0", NS)
