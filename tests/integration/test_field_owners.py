"""Writes that know who owns the field (issue 27): one field manager for every write, GitOps owners refused."""

import pytest

pytestmark = pytest.mark.needs_controller

NS = "team-w"
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


APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"


def apply_as(capi, manager, name, infra_ref, labels=None):
    """Server-side apply of the "Git" state of an MD's template reference as ``manager`` (force, as Flux does)."""
    md = capi.get("MachineDeployment", name, NS)
    body = {"apiVersion": md["apiVersion"], "kind": "MachineDeployment",
            "metadata": {"name": name, "namespace": NS, "labels": labels or {}},
            "spec": {"clusterName": md["spec"]["clusterName"], "template": {"spec": {
                "clusterName": md["spec"]["clusterName"], "infrastructureRef": infra_ref,
                "bootstrap": md["spec"]["template"]["spec"]["bootstrap"]}}}}
    capi.admin.request("PATCH", capi.path("MachineDeployment", NS, name), body=body,
                       params={"fieldManager": manager, "force": "true"}, content_type=APPLY)


def edit_as(capi, manager, name, infra_name):
    """A hand edit of the template reference's name, recorded under ``manager`` (kubectl edit's name)."""
    capi.admin.request("PATCH", capi.path("MachineDeployment", NS, name),
                       body={"spec": {"template": {"spec": {"infrastructureRef": {"name": infra_name}}}}},
                       params={"fieldManager": manager}, content_type=MERGE)


def infra_of(capi, name):
    return capi.get("MachineDeployment", name, NS)["spec"]["template"]["spec"]["infrastructureRef"]


def md_writes(events):
    return [(e["verb"], e["objectRef"]["resource"]) for e in events
            if e["objectRef"].get("resource") in ("machinedeployments", "dockermachinetemplates")]


def test_a_template_flux_applies_is_refused_before_any_write(capi):
    name = "wg-md-1"
    git_ref = infra_of(capi, name)
    apply_as(capi, "kustomize-controller", name, git_ref, labels={"kustomize.toolkit.fluxcd.io/name": "fleet"})
    target = capi.copy_template(name, "-v2", namespace=NS)
    info = capi.run("capi_rollout_info", name=name, namespace=NS)
    (owner,) = info["resources"][0]["field_owners"]["infrastructure_ref"][:1]
    assert owner["manager"] == "kustomize-controller" and owner["source"] == "managedFields (Apply)", owner
    assert "rollout_after" not in info["resources"][0]["field_owners"]

    switch = {"name": name, "namespace": NS, "infrastructure_ref": {"kind": "DockerMachineTemplate", "name": target}}
    mark = capi.mark()
    for check in (True, False):
        res = capi.run("capi_rollout_restart", check=check, **switch)
        assert res.failed and res["reason"] == "field_owned", (check, res)
        assert res["msg"].startswith(f"machinedeployment/{NS}/{name}: spec.template.spec.infrastructureRef"), res["msg"]
        assert "kustomize-controller" in res["msg"] and "change it in Git" in res["msg"], res["msg"]
    plan = capi.run("capi_refresh_plan", check=True, namespaces=[NS], machine_deployments=[name], refresh_id="owners-it",
                    templates={"overrides": {"customImage": "kindest/node:owners"}})
    assert not plan.failed, plan.get("msg")
    (blocked,) = plan["plan"]["blocked"]
    assert blocked["ref"] == f"machinedeployment/{NS}/{name}" and "kustomize-controller" in " ".join(blocked["blockers"])
    log = capi.mgmt.audit_log(since=mark)
    assert md_writes(log.writes(user="rollout-operator")) == []
    assert [w for w in md_writes(log.dry_runs(user="rollout-operator")) if w[1] == "machinedeployments"] == []
    # positive control: the same switch with field_owners=warn is written (and seen by the same check), with a warning
    mark = capi.mark()
    warned = capi.run("capi_rollout_restart", field_owners="warn", rollout_id="owners-warn", **switch)
    assert not warned.failed and warned["changed"] is True, warned.get("msg")
    assert any("kustomize-controller" in w for w in warned.get("warnings") or []), warned.get("warnings")
    assert md_writes(capi.writes(mark)) == [("patch", "machinedeployments")]
    assert infra_of(capi, name)["name"] == target


def test_under_live_reconcilers_a_restart_is_allowed_a_switch_refused_and_a_revert_named(capi):
    """wg-md-3 is applied by the simulator's Flux (every 2 s), wg-md-4 tracked by its Argo CD (no selfHeal)."""
    flux, argo = "wg-md-3", "wg-md-4"
    capi.wait_for("the first apply of the simulator's Flux",
                  lambda: "kustomize-controller" in managers(capi.get("MachineDeployment", flux, NS)), timeout=30)
    owners = {entry["name"]: entry["field_owners"] for entry in
              capi.run("capi_rollout_info", names=[flux, argo], namespace=NS)["resources"]}
    assert owners[flux]["infrastructure_ref"][0]["manager"] == "kustomize-controller", owners
    assert owners[argo]["infrastructure_ref"][0]["manager"] == "argocd", owners
    assert "rollout_after" not in owners[flux] and "rollout_after" not in owners[argo]
    restart = capi.run("capi_rollout_restart", check=True, names=[flux, argo], namespace=NS)
    assert not restart.failed and restart["changed"] is True, restart.get("msg")
    target = capi.copy_template(flux, "-v2", namespace=NS)
    argo_switch = capi.run("capi_rollout_restart", check=True, name=argo, namespace=NS,
                           infrastructure_ref={"kind": "DockerMachineTemplate", "name": target})
    assert argo_switch.failed and argo_switch["reason"] == "field_owned" and "argocd" in argo_switch["msg"], argo_switch
    # field_owners=warn: switched, and Flux puts Git's template back; the wait names it
    git_name = infra_of(capi, flux)["name"]
    warned = capi.run("capi_rollout_restart", field_owners="warn", name=flux, namespace=NS,
                      infrastructure_ref={"kind": "DockerMachineTemplate", "name": target})
    assert not warned.failed and warned["changed"] is True, warned.get("msg")
    capi.wait_for("Flux's revert", lambda: infra_of(capi, flux)["name"] == git_name, timeout=30)
    waited = capi.run("capi_rollout_wait", objects=[{"kind": "MachineDeployment", "namespace": NS, "name": flux,
                                                     "infrastructure_ref": {"kind": "DockerMachineTemplate", "name": target}}],
                      wait_timeout=120)
    assert waited.failed and waited["reason"] == "drift", waited
    assert "changed by kustomize-controller at " in waited["msg"], waited["msg"]


def test_a_restart_of_an_md_flux_applies_is_allowed(capi):
    """A restart writes the trigger and this collection's annotations, which Git does not hold."""
    name = "wg-md-2"
    apply_as(capi, "kustomize-controller", name, infra_of(capi, name), labels={"kustomize.toolkit.fluxcd.io/name": "fleet"})
    mark = capi.mark()
    res = capi.run("capi_rollout_restart", name=name, namespace=NS, after=capi.utc_in(3600))
    assert not res.failed and res["changed"] is True, res.get("msg")
    assert md_writes(capi.writes(mark)) == [("patch", "machinedeployments")]


def test_undo_of_a_rollout_returns_to_the_template_before_it_or_names_who_switched_it_since(capi):
    name = "wg-md-0"
    before = infra_of(capi, name)["name"]
    target = capi.copy_template(name, "-hw", namespace=NS)
    other = capi.copy_template(name, "-hand", namespace=NS)
    switched = capi.run("capi_rollout_restart", name=name, namespace=NS, rollout_id="owners-hw",
                        infrastructure_ref={"kind": "DockerMachineTemplate", "name": target})
    assert not switched.failed, switched.get("msg")
    edit_as(capi, "kubectl-edit", name, other)  # mid-wave hand edit
    mark = capi.mark()
    undo = {"name": name, "namespace": NS, "undo_rollout_id": "owners-hw", "rollout_id": "owners-hw-undo"}
    refused = capi.run("capi_rollout_undo", **undo)
    assert refused.failed and refused["reason"] == "changed_since_rollout", refused
    assert "changed by kubectl-edit at " in refused["msg"] and other in refused["msg"], refused["msg"]
    assert md_writes(capi.writes(mark)) == [] and infra_of(capi, name)["name"] == other
    # positive control: once it is back on the rollout's template, the undo returns it to the one before the rollout
    edit_as(capi, "kubectl-edit", name, target)
    mark = capi.mark()
    undone = capi.run("capi_rollout_undo", **undo)
    assert not undone.failed and undone["changed"] is True, undone.get("msg")
    assert md_writes(capi.writes(mark)) == [("patch", "machinedeployments")]
    assert infra_of(capi, name)["name"] == before
