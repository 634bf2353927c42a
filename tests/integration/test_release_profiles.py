"""The modules on the CAPI releases between v1.10 and v1.14 (capisim/releases.py): v1.11 (the v1.10 controller
on the v1beta2 API, #13182), v1.12.3 (the last release with upstream bug #13182), v1.12 (v1.12.4 and later,
fixed) and v1.13. The other module tests
run on v1.10 and v1.14; these cover restart+wait of a MachineDeployment and a KubeadmControlPlane,
undo, pause and a small hardware refresh per release, plus the #13182 state itself: a scheduled
trigger that the controller acts on in its own second."""

import datetime

import pytest

from conftest import CapiEnv, per_fleet
from hardware_refresh_support import FAST, run_playbook
from capisim.releases import RELEASES

pytestmark = pytest.mark.needs_controller

PROFILES = ("v1.11", "v1.12.3", "v1.12", "v1.13")
WAIT = {"wait": True, "wait_timeout": 240, "stall_timeout": 90}
PAUSED = "cluster.x-k8s.io/paused"


def _fleet(release):
    workloads = [
        # restart + wait and undo (md-0), the control plane; a scheduled trigger (md-1); pause (md-2)
        {"name": "wr", "control_plane": {"replicas": 1},
         "machine_deployments": [{"name": "md-0", "replicas": 2}, {"name": "md-1", "replicas": 1},
                                 {"name": "md-2", "replicas": 1}]},
        # a small hardware refresh with the role
        {"name": "wh", "control_plane": {"replicas": 1}, "machine_deployments": [{"name": "md-0", "replicas": 1}]},
    ]
    for wc in workloads:
        wc["kubernetes_version"] = "v1.30.4"
    # deleted Machines take a second to go (drain + teardown), as on real clusters they take minutes
    return {"defaults": {"provision_seconds": 1, "deletion_seconds": 1},
            "management_clusters": [{"name": f"rp-{release.replace('.', '-')}", "capi_version": release,
                                     "workload_clusters": workloads}]}


@pytest.fixture(scope="module", params=per_fleet(PROFILES, "profile"))
def rel(request, fleet_factory):
    fleet = fleet_factory(_fleet(request.param))
    yield CapiEnv(fleet, request.param)
    fleet.fleet.down()


def _active(machine_sets):
    return {name for name, ms in machine_sets.items() if (ms["spec"].get("replicas") or 0) > 0}


def _time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


def test_restart_wait_and_undo_of_a_machine_deployment(rel):
    assert rel.version == "v1beta2"
    before = rel.machine_sets("wr-md-0")
    res = rel.run("capi_rollout_restart", name="wr-md-0", **WAIT)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["action"] == "restarted" and entry["status"]["rollout"]["complete"] is True
    after = rel.machine_sets("wr-md-0")
    new = set(after) - set(before)
    assert len(new) == 1 and _active(after) == new
    # v1.11+ delete the old MachineSet once the rollout is complete (no revisionHistoryLimit in v1beta2)
    rel.wait_for("the old MachineSets to be deleted", lambda: set(rel.machine_sets("wr-md-0")) == new, 60)
    assert _time(after[next(iter(new))]["metadata"]["creationTimestamp"]) > _time(entry["rollout_after"])
    assert not [w for w in res.get("warnings") or [] if "13182" in w]

    # a template switch, then its undo: back to the first template, from the collection's own record
    first = rel.get("MachineDeployment", "wr-md-0")["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    switched = rel.run("capi_rollout_restart", name="wr-md-0", infrastructure_ref={"name": rel.copy_template("wr-md-0", "-b")},
                       **WAIT)
    assert not switched.failed and switched["objects"][0]["status"]["rollout"]["complete"] is True, switched.get("msg")
    undone = rel.run("capi_rollout_undo", name="wr-md-0", **WAIT)
    assert not undone.failed, undone.get("msg")
    (entry,) = undone["objects"]
    assert entry["action"] == "rolled_back" and entry["target_source"] == "record"
    assert entry["status"]["rollout"]["complete"] is True
    md = rel.get("MachineDeployment", "wr-md-0")
    assert md["spec"]["template"]["spec"]["infrastructureRef"]["name"] == first
    active = _active(rel.machine_sets("wr-md-0"))
    assert len(active) == 1 and not active & new


def test_restart_and_wait_of_the_control_plane(rel):
    selector = "cluster.x-k8s.io/control-plane,cluster.x-k8s.io/cluster-name=wr"
    machines = rel.machines(selector)
    res = rel.run("capi_rollout_restart", kind="KubeadmControlPlane", name="wr-control-plane", **WAIT)
    assert not res.failed, res.get("msg")
    assert res["objects"][0]["status"]["rollout"]["complete"] is True
    now = rel.machines(selector)
    assert machines and now and not set(now) & set(machines)


def _clusterctl_restart(rel, name):
    """What `clusterctl alpha rollout restart` writes: rollout.after = the current second (host and API server
    share this machine's clock), early in that second, so that the controller's new MachineSet, created on the
    update event, falls in the same second. Returns the trigger."""
    rel.wait_for("the start of a second", lambda: datetime.datetime.now(datetime.timezone.utc).microsecond < 200000, 5)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rel.admin.patch_merge(rel.path("MachineDeployment", "default", name), {"spec": {"rollout": {"after": when}}})
    return when


def test_clusterctl_restart_on_the_same_second_is_reported_with_the_upstream_bug(rel):
    """A trigger in the new MachineSet's own second (clusterctl writes time.Now()): v1.12.3 then keeps its
    Machines UpToDate=False for as long as the field is set (#13182), so upstream never reports the rollout
    finished (v1.11 too). capi_rollout_wait reports it complete with a warning naming the bug; v1.12.4+ and v1.13 complete
    it without one."""
    buggy = RELEASES[rel.capi_version].bug_13182
    for _attempt in range(3):  # the controller may, rarely, create the MachineSet in the next second
        before = rel.machine_sets("wr-md-1")
        when = _clusterctl_restart(rel, "wr-md-1")
        (new,) = rel.wait_for("the new MachineSet", lambda: set(rel.machine_sets("wr-md-1")) - set(before), 30)
        if rel.machine_sets("wr-md-1")[new]["metadata"]["creationTimestamp"] == when:
            break
        assert not rel.run("capi_rollout_wait", objects=[{"name": "wr-md-1"}], wait_timeout=120, stall_timeout=60).failed
    else:
        pytest.fail("the controller never created the MachineSet in the trigger's second")
    res = rel.run("capi_rollout_wait", objects=[{"name": "wr-md-1"}], wait_timeout=120, stall_timeout=60)
    assert not res.failed, res.get("msg")
    assert _active(rel.machine_sets("wr-md-1")) == {new}
    md = rel.get("MachineDeployment", "wr-md-1")
    # the upstream state the warning is about (positive control on the fixed releases)
    assert rel.wait_for("the counters to settle", lambda: rel.get("MachineDeployment", "wr-md-1")["status"].get(
        "availableReplicas") == 1, 30)
    assert (rel.get("MachineDeployment", "wr-md-1")["status"].get("upToDateReplicas") or 0) == (0 if buggy else 1), md["status"]
    warned = [w for w in res.get("warnings") or [] if "kubernetes-sigs/cluster-api#13182" in w]
    assert bool(warned) is buggy, res.get("warnings")
    info = rel.run("capi_rollout_info", name="wr-md-1")["resources"][0]["rollout"]
    assert info["complete"] is True and bool([w for w in info["warnings"] if "13182" in w]) is buggy


def test_pause_and_resume(rel):
    res = rel.run("capi_rollout_pause", name="wr-md-2", paused=True)
    assert not res.failed and res["objects"][0]["action"] == "paused"
    assert rel.get("MachineDeployment", "wr-md-2")["spec"]["paused"] is True
    refused = rel.run("capi_rollout_restart", name="wr-md-2")
    assert refused.failed and refused["reason"] == "paused"
    res = rel.run("capi_rollout_pause", kind="KubeadmControlPlane", name="wr-control-plane", paused=True)
    assert PAUSED in rel.get("KubeadmControlPlane", "wr-control-plane")["metadata"]["annotations"]
    for kind, name in (("MachineDeployment", "wr-md-2"), ("KubeadmControlPlane", "wr-control-plane")):
        res = rel.run("capi_rollout_pause", kind=kind, name=name, paused=False)
        assert not res.failed and res["objects"][0]["action"] == "resumed"


def test_small_hardware_refresh(rel, tmp_path):
    image = f"kindest/node:{rel.capi_version}"
    run = run_playbook(rel.fleet.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id=f"rp-{rel.capi_version}", template_overrides={"customImage": image},
                            control_plane=True, clusters=["wh"]), tmp_path / "report")
    assert run.rc == 0, run.explain()
    entry = run.cluster(rel.host)
    assert entry["result"] == "succeeded", (entry.get("failure_reason"), run.explain())
    for kind, name in (("KubeadmControlPlane", "wh-control-plane"), ("MachineDeployment", "wh-md-0")):
        obj = run.obj(rel.host, name)
        assert obj["result"] == "succeeded" and obj["action"] == "switch", obj
        target = obj["after"]["infrastructure_ref"]["name"]
        live = rel.get(kind, name)
        ref = (live["spec"]["machineTemplate"]["spec"]["infrastructureRef"] if kind == "KubeadmControlPlane"
               else live["spec"]["template"]["spec"]["infrastructureRef"])
        assert ref["name"] == target
        assert rel.get("DockerMachineTemplate", target)["spec"]["template"]["spec"]["customImage"] == image
