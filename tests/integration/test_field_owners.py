"""Writes that know who owns the field (issue 27): one field manager for every write, GitOps owners refused."""

import pytest

pytestmark = pytest.mark.needs_controller

NS = "team-g"
MANAGER = "fieldManager=capi-rollout"


def managers(obj):
    return {entry["manager"] for entry in obj["metadata"].get("managedFields") or []}


def test_every_write_of_a_run_names_the_one_field_manager(capi):
    """A clone, a switch and the lock of a wave: each persisted write (and each dry run) carries
    fieldManager=capi-rollout, and the objects' managedFields name it (never the module's User-Agent)."""
    lease = {"name": "it-owners", "namespace": NS, "holder": "it/owners", "lease_duration_seconds": 60}
    mark = capi.mark()
    assert capi.run("capi_rollout_lock", **lease)["acquired"] is True
    cloned = capi.run("capi_machine_template", namespace=NS, from_object={"name": "wg-md-0"},
                      overrides={"customImage": "kindest/node:owners"}, lease=lease)
    assert not cloned.failed, cloned.get("msg")
    target = cloned["infrastructure_ref"]["name"]
    switched = capi.run("capi_rollout_restart", name="wg-md-0", namespace=NS, lease=lease,
                        infrastructure_ref=cloned["infrastructure_ref"])
    assert not switched.failed and switched["changed"] is True, switched.get("msg")
    assert capi.run("capi_rollout_lock", state="released", **lease)["changed"] is True
    log = capi.mgmt.audit_log(since=mark)
    writes = log.writes(user="rollout-operator")
    # positive control: the check sees the run's writes - template, MD and the Lease (create, renewals, release)
    assert {(e["verb"], e["objectRef"]["resource"]) for e in writes} >= {
        ("create", "dockermachinetemplates"), ("patch", "machinedeployments"), ("create", "leases"), ("update", "leases")}
    assert [e["requestURI"] for e in writes + log.dry_runs(user="rollout-operator") if MANAGER not in e["requestURI"]] == []
    assert "force=" not in " ".join(e["requestURI"] for e in writes)
    md = capi.get("MachineDeployment", "wg-md-0", NS)
    assert "capi-rollout" in managers(md) and not [m for m in managers(md) if m.startswith("capi.rollout")], managers(md)
    assert "capi-rollout" in managers(capi.get("DockerMachineTemplate", target, NS))
