"""capi_rollout_restart against local management clusters (both CAPI versions)."""

import datetime
import json
import os
import pathlib
import subprocess
import sys

import pytest

from capisim.audit import shape
from playbook import faked_clock, patch_value

pytestmark = pytest.mark.needs_controller

REVISION = "machinedeployment.clusters.x-k8s.io/revision"
# a restart of one object: discovery, the list, its Cluster, the patch (docs/performance.md: 4)
RESTART_REQUESTS = [("get", "/apis"), ("list", "machinedeployments"), ("get", "clusters"), ("patch", "machinedeployments")]
# a restart now also lists the MachineSets its trigger must be later than (core.restart.effective_from): 5
RESTART_NOW_REQUESTS = RESTART_REQUESTS[:3] + [("list", "machinesets")] + RESTART_REQUESTS[3:]


def in_place_check(capi):
    """A switch on a v1beta2 cluster lists ExtensionConfigs once: may CAPI update the Machines in place (issue 28)?"""
    return [("list", "extensionconfigs")] if capi.version == "v1beta2" else []


def active_sets(machine_sets):
    return {name for name, ms in machine_sets.items() if ms["spec"].get("replicas")}


def test_restart_and_wait_creates_exactly_one_new_machineset(capi):
    before = capi.machine_sets("wa-md-0")
    revision = int(capi.get("MachineDeployment", "wa-md-0")["metadata"]["annotations"][REVISION])
    mark = capi.mark()
    res = capi.run("capi_rollout_restart", name="wa-md-0", wait=True, wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    assert res["changed"] is True
    (entry,) = res["objects"]
    assert entry["action"] == "restarted" and entry["revision_before"] == revision
    trigger = patch_value(entry["patch"], "/spec/rollout/after" if capi.version == "v1beta2" else "/spec/rolloutAfter")
    assert trigger.endswith("Z")
    assert entry["status"]["rollout"]["complete"] is True
    assert entry["status"]["replicas"]["up_to_date"] == 3

    after = capi.machine_sets("wa-md-0")
    new = set(after) - set(before)
    assert len(new) == 1, sorted(after)
    assert active_sets(after) == new
    md = capi.get("MachineDeployment", "wa-md-0")
    assert int(md["metadata"]["annotations"][REVISION]) == revision + 1

    # The trigger lies in a second before the new MachineSet's: CAPI <= v1.12.3 would never mark the
    # Machines of a MachineSet created in the trigger's second up to date (upstream #13182).
    (new_name,) = new
    assert after[new_name]["metadata"]["creationTimestamp"] > trigger
    assert not [w for w in res.get("warnings") or [] if "13182" in w]

    requests = shape(capi.requests(mark))
    written = requests.index(("patch", "machinedeployments")) + 1
    assert requests[:written] == RESTART_NOW_REQUESTS, requests
    machine_set_lists = [r for r in requests[written:] if r == ("list", "machinesets")]
    # then exactly one watch: no polling (docs/performance.md)
    assert [r for r in requests[written:] if r not in machine_set_lists] == [("watch", "machinedeployments")], requests
    # MachineSets decide completion: listed before the controller acts, once the new one shows, at the end
    assert 1 <= len(machine_set_lists) <= 4, requests
    assert res["progress"] and "successfully rolled out" in res["progress"][-1]


def test_restart_control_plane_within_request_budget(capi):
    machines = capi.machines("cluster.x-k8s.io/control-plane-name=wa-control-plane")
    mark = capi.mark()
    res = capi.run("capi_rollout_restart", kind="KubeadmControlPlane", name="wa-control-plane")
    assert not res.failed, res.get("msg")
    assert res["objects"][0]["action"] == "restarted"
    requests = capi.requests(mark)
    # its Machines: the trigger must be later than their creation (core.restart.effective_from)
    assert shape(requests) == [("get", "/apis"), ("list", "kubeadmcontrolplanes"), ("get", "clusters"), ("list", "machines"),
                               ("patch", "kubeadmcontrolplanes")], shape(requests)
    assert len(capi.writes(mark)) == 1

    res = capi.run("capi_rollout_info", kind="kcp", name="wa-control-plane", wait=True, wait_timeout=300,
                   stall_timeout=120, machines=True)
    assert not res.failed, res.get("msg")
    (kcp,) = res["resources"]
    assert kcp["rollout"]["complete"] is True
    assert {m["name"] for m in kcp["machines"]}.isdisjoint(machines)


def test_deferred_restart_fires_once_its_time_passes(capi):
    before = capi.machine_sets("wb-md-0")
    when = capi.utc_in(40)
    mark = capi.mark()
    res = capi.run("capi_rollout_restart", name="wb-md-0", after=when)
    assert not res.failed, res.get("msg")
    assert res["objects"][0]["action"] == "scheduled"
    assert res["objects"][0]["rollout_after"] == when
    assert shape(capi.requests(mark)) == RESTART_REQUESTS

    info = capi.run("capi_rollout_info", name="wb-md-0")["resources"][0]
    assert info["rollout"]["after"] == when and info["rollout"]["pending"] is True
    assert info["rollout"]["complete"] is False and info["rollout"]["waiting_for"] == "pending"
    assert set(capi.machine_sets("wb-md-0")) == set(before)

    # A wait started before the trigger fires waits for it (not a stall, although stall_timeout is
    # shorter than the time to go) and then for its rollout, which the controller starts at its next
    # resync after that time (every 10 s in this fleet; stall_timeout must exceed it, as on real clusters).
    res = capi.run("capi_rollout_info", name="wb-md-0", wait=True, wait_timeout=300, stall_timeout=20)
    assert not res.failed, res.get("msg")
    assert any("has not been reached by the API server's clock" in line for line in res["progress"])
    assert res["resources"][0]["rollout"]["complete"] is True
    assert res["resources"][0]["rollout"]["pending"] is False
    new = set(capi.machine_sets("wb-md-0")) - set(before)
    assert len(new) == 1
    (name,) = new
    assert capi.machine_sets("wb-md-0")[name]["metadata"]["creationTimestamp"] >= when


def test_template_switch(capi):
    new_template = capi.copy_template("wb-md-1", "-v2")
    before = capi.machine_sets("wb-md-1")
    res = capi.run("capi_rollout_restart", name="wb-md-1", infrastructure_ref={"name": new_template}, wait=True,
                   wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["action"] == "restarted"
    assert entry["status"]["template"]["infrastructure_ref"]["name"] == new_template
    assert entry["status"]["template"]["infrastructure_ref"]["kind"] == "DockerMachineTemplate"
    md = capi.get("MachineDeployment", "wb-md-1")
    assert md["spec"]["template"]["spec"]["infrastructureRef"]["name"] == new_template
    after = capi.machine_sets("wb-md-1")
    (new,) = set(after) - set(before)
    assert after[new]["spec"]["template"]["spec"]["infrastructureRef"]["name"] == new_template
    assert active_sets(after) == {new}


def test_rollout_id_and_many_objects_in_one_call(capi):
    mark = capi.mark()
    res = capi.run("capi_rollout_restart", namespace="team-m", cluster_name="wm", rollout_id="CHG-1",
                   reason="integration test", wait=True, wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    assert [e["name"] for e in res["objects"]] == ["wm-md-0", "wm-md-1", "wm-md-2"]
    assert all(e["action"] == "restarted" and e["status"]["rollout"]["complete"] for e in res["objects"])
    requests = capi.requests(mark)
    lists = [e for e in requests if e["verb"] == "list" and "/machinesets" not in e["requestURI"]]
    assert len(lists) == 1, [e["requestURI"] for e in lists]
    # the MachineSets that decide completion: one list serves every event it is newer than
    machine_set_lists = [e for e in requests if e["verb"] == "list" and "/machinesets" in e["requestURI"]]
    assert 1 <= len(machine_set_lists) <= 1 + 3 * 3, len(machine_set_lists)  # the restart's own, then the wait's
    # one list, one Cluster list and one watch for the three objects of the namespace; one patch each
    others = [r for r in shape(requests) if r != ("list", "machinesets")]
    assert others == RESTART_REQUESTS[:3] + [("patch", "machinedeployments")] * 3 + [("watch", "machinedeployments")], others

    mark = capi.mark()
    again = capi.run("capi_rollout_restart", namespace="team-m", cluster_name="wm", rollout_id="CHG-1")
    assert not again.failed, again.get("msg")
    assert again["changed"] is False
    assert all(e["action"] == "unchanged" and e["patch"] is None for e in again["objects"])
    subset = capi.run("capi_rollout_restart", namespace="team-m", names=["wm-md-0", "wm-md-1"], rollout_id="CHG-1")
    assert subset["changed"] is False
    assert not capi.writes(mark)

    info = capi.run("capi_rollout_info", namespace="team-m", label_selectors=["cluster.x-k8s.io/cluster-name=wm"])
    assert [r["last_rollout"]["id"] for r in info["resources"]] == ["CHG-1"] * 3
    assert info["resources"][0]["last_rollout"]["reason"] == "integration test"


def test_switches_move_each_object_to_its_own_template_in_one_call(capi):
    namespace = "team-s"
    names = ("ws-md-0", "ws-md-1")
    new = {name: capi.copy_template(name, "-gen2", namespace=namespace) for name in names}
    before = {name: capi.machine_sets(name, namespace) for name in names}
    # given out of order: the objects are reported (and patched) sorted by name, as with names
    switches = [{"name": name, "infrastructure_ref": {"name": new[name]}} for name in reversed(names)]
    mark = capi.mark()
    res = capi.run("capi_rollout_restart", namespace=namespace, switches=switches, rollout_id="HW-1",
                   reason="hardware refresh", wait=True, wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    assert [(e["name"], e["action"]) for e in res["objects"]] == [(name, "restarted") for name in names]
    for entry in res["objects"]:
        assert entry["status"]["rollout"]["complete"] is True
        assert entry["status"]["template"]["infrastructure_ref"]["name"] == new[entry["name"]]
    for name in names:
        infra_ref = capi.get("MachineDeployment", name, namespace)["spec"]["template"]["spec"]["infrastructureRef"]
        assert infra_ref["name"] == new[name] and infra_ref["kind"] == "DockerMachineTemplate", infra_ref
        after = capi.machine_sets(name, namespace)
        (created,) = set(after) - set(before[name])
        assert after[created]["spec"]["template"]["spec"]["infrastructureRef"]["name"] == new[name]
        assert active_sets(after) == {created}
    requests = capi.requests(mark)
    others = [r for r in shape(requests) if r != ("list", "machinesets")]
    # discovery, one list of the objects, their Cluster, one list of the templates (not a GET each), a patch each,
    # the wait's one watch
    assert others == RESTART_REQUESTS[:3] + in_place_check(capi) + [("list", "dockermachinetemplates")] + \
        [("patch", "machinedeployments")] * 2 + [("watch", "machinedeployments")], others
    assert [e["objectRef"]["name"] for e in capi.writes(mark)] == list(names)

    mark = capi.mark()
    again = capi.run("capi_rollout_restart", namespace=namespace, switches=switches, rollout_id="HW-1")
    assert not again.failed, again.get("msg")
    assert again["changed"] is False
    assert all(e["action"] == "unchanged" and e["patch"] is None for e in again["objects"]), again["objects"]
    assert shape(capi.requests(mark)) == RESTART_REQUESTS[:3]
    assert not capi.writes(mark)

    # one template of the call is missing: refused before the first write, the other object untouched
    third = capi.copy_template("ws-md-0", "-gen3", namespace=namespace)
    mark = capi.mark()
    refused = capi.run("capi_rollout_restart", namespace=namespace, rollout_id="HW-2", switches=[
        {"name": "ws-md-0", "infrastructure_ref": {"name": third}},
        {"name": "ws-md-1", "infrastructure_ref": {"name": "ws-md-1-does-not-exist"}}])
    assert refused.failed and refused["reason"] == "template_not_found", refused
    assert refused["msg"].startswith(f"machinedeployment/{namespace}/ws-md-1: infrastructure template DockerMachineTemplate "
                                     f"{namespace}/ws-md-1-does-not-exist"), refused["msg"]
    assert refused["changed"] is False
    assert not capi.writes(mark) and not capi.dry_runs(mark)
    # positive control: the call read the objects, the MachineSets and Machines (ws-md-0's switch would keep the Machine
    # counts of the revision it leaves: docs/history-and-undo.md) and listed the templates
    assert shape(capi.requests(mark)) == RESTART_REQUESTS[:3] + in_place_check(capi) + [
        ("list", "machinesets"), ("list", "machines"), ("list", "dockermachinetemplates")]
    for name in names:
        md = capi.get("MachineDeployment", name, namespace)
        assert md["spec"]["template"]["spec"]["infrastructureRef"]["name"] == new[name]


def test_check_mode_writes_nothing_and_shows_the_diff(capi):
    md = capi.get("MachineDeployment", "wc-md-1")
    mark = capi.mark()
    res = capi.run("capi_rollout_restart", name="wc-md-1", rollout_id="dry", check=True, diff=True)
    assert not res.failed, res.get("msg")
    assert res["changed"] is True
    (entry,) = res["objects"]
    assert entry["action"] == "restarted"
    # the JSON patch sent as the dry run: guarded by the values read, not by the resourceVersion
    assert {"op": "test", "path": "/metadata/annotations/rollout.capi-rollout.dev~1last",
            "value": md["metadata"].get("annotations", {}).get("rollout.capi-rollout.dev/last")} in entry["patch"]
    assert not [op for op in entry["patch"] if "resourceVersion" in op["path"]]
    (diff,) = res["diff"]
    after_key = "after:" if capi.version == "v1beta2" else "rolloutAfter:"
    assert after_key in diff["after"] and "rollout.capi-rollout.dev/last" in diff["after"]
    assert diff["after_header"] == "machinedeployment/default/wc-md-1 (after)"
    pause = capi.run("capi_rollout_pause", name="wc-md-1", paused=True, check=True, diff=True)
    assert pause["changed"] is True and pause["diff"][0]["after"] == "spec:\n  paused: true\n"
    assert not capi.writes(mark)
    # positive control: the restart and the pause were sent, as server-side dry runs
    assert [e["verb"] for e in capi.dry_runs(mark)] == ["patch", "patch"]
    assert capi.get("MachineDeployment", "wc-md-1")["metadata"]["resourceVersion"] == md["metadata"]["resourceVersion"]


def test_check_diff_in_a_loop_shows_every_diff(capi):
    """The modules return ``objects``, not ``results``: Ansible's callback takes a top-level ``results`` for loop
    results, which hid the diff of every looped item in ``--check --diff``."""
    mark = capi.mark()
    res = capi.run("capi_rollout_restart", namespace="default", name="{{ item }}", rollout_id="dry-loop", check=True,
                   diff=True, loop=["wc-md-0", "wc-md-1"])
    assert not res.failed, res.stdout
    assert [item["objects"][0]["name"] for item in res["results"]] == ["wc-md-0", "wc-md-1"]
    for name in ("wc-md-0", "wc-md-1"):
        assert f"machinedeployment/default/{name} (after)" in res.stdout, res.stdout
    assert not capi.writes(mark)
    assert len(capi.dry_runs(mark)) == 2  # positive control: both patches went to the API server


@pytest.mark.parametrize("skew", [150, -150])
def test_restart_and_wait_with_the_host_clock_off(capi, skew):
    """The Ansible host's clock 150 s ahead of / behind the API server's (libfaketime under the module):
    the trigger still comes from the server's clock, so exactly one new MachineSet is rolled out and the
    wait sees it through. With the host's clock, ahead would schedule the trigger 150 s into the
    controllers' future and behind would write one older than the current MachineSet (no rollout)."""
    name = "wk-ahead" if skew > 0 else "wk-behind"
    faked = faked_clock(skew)

    before = capi.machine_sets(name, "team-k")
    res = capi.run("capi_rollout_restart", namespace="team-k", name=name, wait=True, wait_timeout=90, stall_timeout=60,
                   environment=faked)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["action"] == "restarted" and entry["status"]["rollout"]["complete"] is True
    after = capi.machine_sets(name, "team-k")
    new = set(after) - set(before)
    assert len(new) == 1 and active_sets(after) == new, sorted(after)
    trigger = _parse(entry["rollout_after"])
    created = _parse(after[new.pop()]["metadata"]["creationTimestamp"])
    # in a second before the new MachineSet's (upstream #13182), and within seconds of the server's time
    assert datetime.timedelta(seconds=1) <= created - trigger <= datetime.timedelta(seconds=20)
    record = json.loads(capi.get("MachineDeployment", name, "team-k")["metadata"]["annotations"]["rollout.capi-rollout.dev/last"])
    assert abs((_parse(record["at"]) - created).total_seconds()) <= 20


def _parse(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


def test_check_mode_with_read_only_credentials_fails_as_the_real_run_would(capi):
    """The viewer may read but not patch: the dry run gets the real run's 403, not a green 'changed'."""
    viewer = str(capi.mgmt.kubeconfig("viewer"))
    res = capi.run("capi_rollout_restart", name="wc-md-0", rollout_id="dry-viewer", check=True, kubeconfig=viewer)
    assert res.failed and res["reason"] == "forbidden", res
    assert "patch" in res["msg"] and res["msg"].startswith("machinedeployment/default/wc-md-0: ")
    # positive control: the same call with the operator's credentials passes its dry run
    ok = capi.run("capi_rollout_restart", name="wc-md-0", rollout_id="dry-viewer", check=True)
    assert not ok.failed and ok["changed"] is True, ok.get("msg")


def test_lock_in_check_mode_sends_dry_runs_and_changes_nothing(capi):
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/it-lock-dry"
    lock = {"name": "it-lock-dry", "namespace": "default", "holder": "it/me"}
    mark = capi.mark()
    planned = capi.run("capi_rollout_lock", check=True, **lock)
    assert not planned.failed and planned["would_acquire"] is True and planned["acquired"] is False, planned
    taken = capi.run("capi_rollout_lock", **lock)
    assert not taken.failed and taken["acquired"] is True, taken.get("msg")
    release_planned = capi.run("capi_rollout_lock", state="released", check=True, **lock)
    assert not release_planned.failed and release_planned["changed"] is True, release_planned
    assert capi.admin.get(lease_path)["spec"]["holderIdentity"] == "it/me"
    assert [e["verb"] for e in capi.writes(mark)] == ["create"]
    # check mode's take; the real take's first create is tried as a dry run too (a missing namespace fails
    # there); check mode's release
    assert [e["verb"] for e in capi.dry_runs(mark)] == ["create", "create", "update"]
    released = capi.run("capi_rollout_lock", state="released", **lock)
    assert not released.failed and released["changed"] is True
    assert "holderIdentity" not in capi.admin.get(lease_path)["spec"]


def test_a_lease_held_by_another_run_stops_a_restart_a_clone_and_a_wait_before_they_write(capi):
    """The writes of a wave renew the lock first (option lease): when another run holds it, nothing is written."""
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/it-guard"
    theirs = capi.run("capi_rollout_lock", name="it-guard", holder="colleague/run", lease_duration_seconds=600)
    assert not theirs.failed and theirs["acquired"] is True, theirs.get("msg")
    mine = {"name": "it-guard", "namespace": "default", "holder": "it/me", "lease_duration_seconds": 60}
    mark = capi.mark()
    calls = [("capi_rollout_restart", {"name": "wc-md-0", "rollout_id": "it-guard"}),
             ("capi_machine_template", {"from_object": {"name": "wc-md-0"}, "overrides": {"customImage": "kindest/node:guard"}}),
             ("capi_rollout_wait", {"objects": [{"kind": "MachineDeployment", "namespace": "default", "name": "wc-md-0"}]})]
    for module, params in calls:
        for check in (False, True):
            res = capi.run(module, check=check, lease=mine, **params)
            assert res.failed and res["reason"] == "lock_lost", (module, check, res)
            assert "colleague/run" in res["msg"] and "nothing was written" in res["msg"], (module, res["msg"])
    # nothing written, and no dry run besides the look at the lock in check mode
    assert capi.writes(mark) == []
    assert {(e["verb"], e["objectRef"]["resource"]) for e in capi.dry_runs(mark)} <= {("update", "leases")}
    assert capi.admin.get(lease_path)["spec"]["holderIdentity"] == "colleague/run"
    # positive control: once the colleague is done, the same calls renew the lock for it/me and go on
    assert capi.run("capi_rollout_lock", name="it-guard", holder="colleague/run", state="released")["changed"] is True
    mark = capi.mark()
    planned = capi.run("capi_rollout_restart", check=True, lease=mine, **calls[0][1])
    assert not planned.failed and planned["changed"] is True, planned.get("msg")
    assert [(e["verb"], e["objectRef"]["resource"]) for e in capi.dry_runs(mark)] == \
        [("update", "leases"), ("patch", "machinedeployments")]
    waited = capi.run("capi_rollout_wait", lease=mine, **calls[2][1])
    assert not waited.failed and waited["lease_renewals"] == 1, waited
    assert [(e["verb"], e["objectRef"]["resource"]) for e in capi.writes(mark)] == [("update", "leases")]
    assert capi.admin.get(lease_path)["spec"]["holderIdentity"] == "it/me"
    assert capi.run("capi_rollout_lock", state="released", **mine)["changed"] is True


def test_switches_with_a_template_make_each_template_and_switch_in_one_call(capi):
    """The clone and the switch of a hardware refresh's wave in one task: every template checked as a dry run, then
    created, then every object switched - read back from the cluster."""
    namespace = "team-t"
    names = ("wt-md-0", "wt-md-1")
    capi.add_workload("wt", namespace, "v1.30.4", ["md-0", "md-1"])
    image = {"customImage": "kindest/node:v1.30.4-gen2"}
    switches = [{"name": name, "template": {"overrides": image, "labels": {"hardware": "gen2"}}} for name in names]
    # a field the template kind does not know (the API server would drop it): refused, nothing written at all
    mark = capi.mark()
    typo = [{"name": names[0], "template": {"overrides": image}}, {"name": names[1], "template": {"overrides": {"customImag": "x"}}}]
    refused = capi.run("capi_rollout_restart", namespace=namespace, switches=typo, rollout_id="HW-T")
    assert refused.failed and refused["reason"] == "clone_refused", refused
    assert refused["msg"].startswith(f"machinedeployment/{namespace}/wt-md-1: 1 of 2 new template(s) could not be made"), refused["msg"]
    assert "spec.template.spec.customImag" in refused["msg"]
    assert [(c["ref"], c["failed"]) for c in refused["clones"]] == [
        (f"machinedeployment/{namespace}/{name}", name == names[1]) for name in names]
    assert not capi.writes(mark) and refused["changed"] is False
    # positive control: both templates were asked, as dry runs
    assert [(e["verb"], e["objectRef"]["resource"]) for e in capi.dry_runs(mark)] == [("create", "dockermachinetemplates")] * 2

    mark = capi.mark()
    res = capi.run("capi_rollout_restart", namespace=namespace, switches=switches, rollout_id="HW-T", reason="hardware refresh",
                   wait=True, wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    made = {clone["ref"].rsplit("/", 1)[1]: clone["infrastructure_ref"]["name"] for clone in res["clones"]}
    assert all(clone["created"] for clone in res["clones"]) and sorted(made) == list(names)
    for name in names:
        template = capi.get("DockerMachineTemplate", made[name], namespace)
        assert template["spec"]["template"]["spec"]["customImage"] == image["customImage"]
        assert template["metadata"]["labels"]["hardware"] == "gen2"
        md = capi.get("MachineDeployment", name, namespace)
        assert md["spec"]["template"]["spec"]["infrastructureRef"]["name"] == made[name]
    assert [e["status"]["rollout"]["complete"] for e in res["objects"]] == [True, True]
    # every template checked before the first create, every create before the first patch; no GET of a new template
    requests = [r for r in shape(capi.requests(mark)) if r not in (("list", "machinesets"), ("watch", "machinedeployments"))]
    assert requests == RESTART_REQUESTS[:3] + [("get", "/apis/infrastructure.cluster.x-k8s.io/" + capi.version),
                                               ("list", "dockermachinetemplates")] + \
        [("create", "dockermachinetemplates?dryRun")] * 2 + in_place_check(capi) + \
        [("create", "dockermachinetemplates")] * 2 + \
        [("patch", "machinedeployments")] * 2, requests

    # a re-run finds the templates and the rollout id: nothing is written
    mark = capi.mark()
    again = capi.run("capi_rollout_restart", namespace=namespace, switches=switches, rollout_id="HW-T")
    assert not again.failed, again.get("msg")
    assert again["changed"] is False and [c["created"] for c in again["clones"]] == [False, False]
    assert not capi.writes(mark) and not capi.dry_runs(mark)


def _module_waiting_for_args(module):
    """``module`` in a process of its own, as Ansible runs it (arguments on stdin), once it has imported everything:
    the arguments sent then are acted on within a fraction of a second. An ansible-playbook task takes a second or
    more to get there under load, longer than the 2 s after a MachineSet's creation the defect needs."""
    code = ("import sys; from ansible_collections.capi.rollout.plugins.modules import " + module + " as m; "
            "print('ready', flush=True); m.main()")
    build = pathlib.Path(__file__).resolve().parents[2] / ".build"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(build)))
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    return proc


def test_a_restart_right_after_a_machine_set_was_created_replaces_its_machines(capi):
    """A restart now within a second of the creation of the MachineSet with the current template (here: right after
    a template switch): CAPI keeps a MachineSet created at or after the trigger as the new one (FindNewMachineSet /
    FindNewAndOldMachineSets, cluster-api v1.10.10 and v1.12.3 internal/controllers/machinedeployment/mdutil/util.go,
    v1.14.0 core/reconcilers/machinedeployment/mdutil/util.go), so a trigger one second before the server's second
    replaced nothing, yet was reported as restarted. The restart waits until its trigger is later than that
    MachineSet: another MachineSet replaces the switched one's Machines."""
    namespace, name = "team-now", "wn-md-0"
    label = f"cluster.x-k8s.io/deployment-name={name}"
    capi.add_workload("wn", namespace, "v1.30.4", ["md-0"])
    capi.wait_for("wn-md-0's Machine", lambda: capi.machines(label, namespace), 120)
    revision = int(capi.get("MachineDeployment", name, namespace)["metadata"]["annotations"][REVISION])
    template = capi.copy_template(name, "-v2", namespace=namespace)
    restart = _module_waiting_for_args("capi_rollout_restart")
    # the switch, as a colleague's edit a moment before; its MachineSet is created within a fraction of a second
    capi.admin.patch_merge(capi.path("MachineDeployment", namespace, name),
                           {"spec": {"template": {"spec": {"infrastructureRef": {"name": template}}}}})
    (switched,) = capi.wait_for("the switched MachineSet", lambda: [
        ms for ms in capi.machine_sets(name, namespace).values()
        if ms["spec"]["template"]["spec"]["infrastructureRef"]["name"] == template], 60, 0.02)
    args = {"kubeconfig": str(capi.mgmt.kubeconfig("rollout-operator")), "namespace": namespace, "name": name,
            "wait": True, "wait_timeout": 300, "stall_timeout": 120}
    out, err = restart.communicate(json.dumps({"ANSIBLE_MODULE_ARGS": args}), timeout=400)
    res = json.loads(out)
    assert not res.get("failed"), (res.get("msg"), err)
    (entry,) = res["objects"]
    assert entry["action"] == "restarted" and entry["status"]["rollout"]["complete"] is True, entry
    assert entry["rollout_after"] > switched["metadata"]["creationTimestamp"], (entry, switched["metadata"])

    def replaced():
        """The MD's Machines once all belong to the restart's MachineSet, of the revision after the switch's (its
        trigger did not keep the switched MachineSet); the old ones are deleted after the rollout. (The MD's own
        revision annotation may still lag when the wait ends.)"""
        sets = capi.machine_sets(name, namespace)
        machines = capi.machines(label, namespace)
        owners = {owner["name"] for machine in machines.values() for owner in machine["metadata"]["ownerReferences"]}
        if owners and all(sets.get(owner, {}).get("metadata", {}).get("annotations", {}).get(REVISION) == str(revision + 2)
                          for owner in owners):
            return sets[owners.pop()], machines
        return None

    # proved from the Machines: each belongs to the restart's MachineSet, made from the switched template after the
    # trigger (in a later second: upstream #13182)
    restarted, machines = capi.wait_for("the Machines of the restart's MachineSet alone", replaced, 120)
    assert len(machines) == 1 and switched["metadata"]["name"] not in {
        owner["name"] for machine in machines.values() for owner in machine["metadata"]["ownerReferences"]}
    assert restarted["spec"]["template"]["spec"]["infrastructureRef"]["name"] == template
    assert restarted["metadata"]["creationTimestamp"] > entry["rollout_after"]


def test_a_control_plane_restart_right_after_its_machine_was_created_replaces_it(capi):
    """The same for a KubeadmControlPlane, whose Machines created at or after the trigger are not rolled
    (ShouldRolloutAfter: ``machine.CreationTimestamp.Before(rolloutAfter)``, cluster-api v1.10.10 and v1.14.0
    util/collections/machine_filters.go): a restart now right after another one's Machine was created waits until its
    trigger is later than that Machine, which is then replaced too."""
    namespace, name = "team-now", "wnc-control-plane"
    label = f"cluster.x-k8s.io/control-plane-name={name}"
    capi.add_workload("wnc", namespace, "v1.30.4", [], control_plane=True)
    restart = _module_waiting_for_args("capi_rollout_restart")
    # the control plane rolls a Machine with a Node only, created before the trigger (the simulator runs on this
    # host's clock: the restart below is one second ago, so the Machine must be older than that)
    (first,) = capi.wait_for("the control plane's Machine with its Node", lambda: [
        machine_name for machine_name, machine in capi.machines(label, namespace).items()
        if machine.get("status", {}).get("nodeRef") and _parse(machine["metadata"]["creationTimestamp"])
        < datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=3)], 120, 0.1)
    # a restart a moment before (as another tool's), expired at once: the control plane makes a new Machine
    after = {"rolloutAfter": capi.utc_in(-1)} if capi.version == "v1beta1" else {"rollout": {"after": capi.utc_in(-1)}}
    capi.admin.patch_merge(capi.path("KubeadmControlPlane", namespace, name), {"spec": after})
    (fresh,) = capi.wait_for("the new control plane Machine", lambda: [
        machine for machine_name, machine in capi.machines(label, namespace).items() if machine_name != first], 60, 0.02)
    args = {"kubeconfig": str(capi.mgmt.kubeconfig("rollout-operator")), "kind": "KubeadmControlPlane",
            "namespace": namespace, "name": name}
    out, err = restart.communicate(json.dumps({"ANSIBLE_MODULE_ARGS": args}), timeout=400)
    res = json.loads(out)
    assert not res.get("failed"), (res.get("msg"), err)
    (entry,) = res["objects"]
    assert entry["action"] == "restarted" and entry["rollout_after"] > fresh["metadata"]["creationTimestamp"], entry

    def replaced():
        """The control plane's one Machine once it is neither the first nor the fresh one."""
        machines = capi.machines(label, namespace)
        return list(machines.values()) if len(machines) == 1 and not {first, fresh["metadata"]["name"]} & set(machines) \
            else None

    # proved from the Machines: the first one and the fresh one are both replaced by one created after the trigger
    (last,) = capi.wait_for("one control plane Machine newer than both", replaced, 180)
    assert last["metadata"]["creationTimestamp"] > entry["rollout_after"]
