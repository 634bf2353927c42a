"""OnDelete pools in the hardware refresh (issue 29 point 2), on both CAPI versions, as the rollout-operator user
(docs/rbac.yml: delete on machines): with on_delete=skip (the default) the pool is blocked as before; with
on_delete=replace the refresh switches it and deletes its old Machines one at a time, each replacement waited for;
a run killed mid-wave is resumed by a re-run with the same refresh id, and no Machine is deleted twice.

The pool is workload cluster "od" in a namespace of its own (team-od) on the module fleet, made by this file, so
nothing here touches the objects of the other tests; the playbook is limited to it (namespaces, clusters).
"""

import pytest

from capisim.polling import wait_for
from hardware_refresh_support import FAST, Background, run_playbook

pytestmark = pytest.mark.needs_controller

NS = "team-od"
MD = "od-pool"
UNDO = "od-undo"
PROVISION_SECONDS = 4  # a replacement takes a few seconds: the run can be killed between two deletions


@pytest.fixture(scope="module")
def pool(capi):
    """od-pool (2 Machines) and od-undo (1 Machine), both OnDelete, their Machines a few seconds to provision."""
    capi.add_workload("od", NS, "v1.30.4", ["pool", "undo"])
    strategy = {"strategy": {"type": "OnDelete"}}
    for name, replicas in ((MD, 2), (UNDO, 1)):
        capi.admin.patch_merge(capi.path("MachineDeployment", NS, name),
                               {"spec": dict(strategy if capi.version == "v1beta1" else {"rollout": strategy}, replicas=replicas)})
        # on its template, so on the refresh's clone of it too
        capi.slow_machines(name, PROVISION_SECONDS, namespace=NS)
    res = capi.run("capi_rollout_info", kind="MachineDeployment", namespace=NS, wait=True, wait_timeout=120, stall_timeout=60)
    assert not res.failed, res.get("msg")
    return capi


def machines(capi, md=MD):
    return capi.machines(f"cluster.x-k8s.io/deployment-name={md}", namespace=NS)


def deleting(names, live):
    """The Machines of ``names`` that are gone or being deleted."""
    return [name for name in names if name not in live or live[name]["metadata"].get("deletionTimestamp")]


def extra(refresh_id, **more):
    return dict(FAST, refresh_id=refresh_id, template_overrides={"customImage": f"kindest/node:{refresh_id}"},
                namespaces=[NS], clusters=["od"], **more)


def template_of(capi, machine, md):
    """The infrastructure template of a Machine: that of its MachineSet."""
    ms = capi.machine_sets(md, namespace=NS)[machine["metadata"]["labels"]["cluster.x-k8s.io/set-name"]]
    return ms["spec"]["template"]["spec"]["infrastructureRef"]["name"]


def machine_deletes(capi, mark):
    """Every DELETE of a Machine the runs sent (whatever the answer: a request cut by the kill counts too)."""
    return [e["objectRef"]["name"] for e in capi.writes(mark)
            if e["verb"] == "delete" and e["objectRef"].get("resource") == "machines"]


def test_an_on_delete_pool_is_blocked_by_default_and_replaced_one_machine_at_a_time_across_a_kill(pool, tmp_path):
    capi = pool
    # on_delete=skip (the default): blocked as before, nothing written
    mark = capi.mark()
    skipped = run_playbook(capi.fleet.inventory, "hardware_refresh.yml", extra("od-skip", on_blocked="skip"),
                           tmp_path / "skip", limit=capi.host)
    assert skipped.rc == 0, skipped.explain()
    obj = skipped.obj(capi.host, MD)
    assert obj["result"] == "skipped" and any("strategy OnDelete" in b and "on_delete=replace" in b for b in obj["blockers"]), obj
    assert [e for e in capi.writes(mark) if e["objectRef"].get("resource") != "leases"] == []

    old = machines(capi)
    assert len(old) == 2 and all(m["metadata"].get("deletionTimestamp") is None for m in old.values())
    mark = capi.mark()
    settings = extra(f"od-{capi.capi_version.replace('.', '-')}", on_delete="replace", lock_duration=8, machine_deployments=[MD])
    with Background(capi.fleet.inventory, "hardware_refresh.yml", settings, tmp_path / "first", limit=capi.host) as first:
        # killed once the first old Machine is deleted: the other one is still there, on the old template
        wait_for("the first old Machine to be deleted", lambda: deleting(old, machines(capi)), 180)
        first.kill()  # its wait would otherwise go on deleting
    assert "PLAY RECAP" not in first.output()
    left = machines(capi)
    assert [name for name in old if name in left and not deleting([name], left)], "the killed run should have left an old Machine"

    again = run_playbook(capi.fleet.inventory, "hardware_refresh.yml", dict(settings, lock_wait_timeout=60),
                         tmp_path / "again", limit=capi.host)
    assert again.rc == 0, again.explain()
    obj = again.obj(capi.host, MD)
    assert again.cluster(capi.host)["result"] == "succeeded" and obj["result"] == "succeeded", obj
    target = obj["after"]["infrastructure_ref"]["name"]
    # done, from the Machines: both new (their MachineSet on the target template), ready, none of the old left
    now = machines(capi)
    assert len(now) == 2 and not set(old) & set(now), sorted(now)
    for machine in now.values():
        assert template_of(capi, machine, MD) == target
        assert machine["metadata"].get("deletionTimestamp") is None and machine["status"].get("nodeRef")
    # each old Machine deleted once, by the runs (positive control: the deletions are in the audit log), none twice
    # and no other Machine
    deletes = machine_deletes(capi, mark)
    assert sorted(deletes) == sorted(old), deletes
    assert sum(1 for line in again.stdout.splitlines() if "deleted Machine" in line) >= 1, again.explain()
    assert capi.get("MachineDeployment", MD, NS)["spec"]["template"]["spec"]["infrastructureRef"]["name"] == target


def test_a_failed_on_delete_pool_is_undone_and_its_failed_machine_replaced_on_the_old_template(pool, tmp_path):
    capi = pool
    original = capi.get("MachineDeployment", UNDO, NS)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    (old,) = machines(capi, UNDO)
    mark = capi.mark()
    run = run_playbook(capi.fleet.inventory, "hardware_refresh.yml",
                       extra(f"od-undo-{capi.capi_version.replace('.', '-')}", on_delete="replace", machine_deployments=[UNDO],
                             stall_timeout=8,
                             object_templates={UNDO: {"annotations": {"sim.capi-rollout.dev/fail-provisioning": "true"}}}),
                       tmp_path / "report", limit=capi.host)
    assert run.rc != 0, run.explain()
    failed = run.obj(capi.host, UNDO)
    assert failed["result"] == "failed" and failed["failure_reason"].startswith("stalled"), failed
    assert failed["undo"]["result"] == "succeeded", failed["undo"]
    # from the Machines: one, on the original template, ready; the old one and the one that never came up deleted
    (machine,) = machines(capi, UNDO).values()
    assert template_of(capi, machine, UNDO) == original and machine["status"].get("nodeRef"), machine["metadata"]["name"]
    deletes = machine_deletes(capi, mark)
    assert len(deletes) == 2 and deletes[0] == old and machine["metadata"]["name"] not in deletes, deletes
