"""capi_rollout_restart of MachineDeployments / KubeadmControlPlanes that a Cluster topology (ClusterClass) manages
(issue 26 §2): on CAPI v1.13+ the trigger is written in the Cluster topology (rollout.after), before v1.13 on the
object itself (v1.14: the release after the one that brought rollout.after); new hardware by a per-MD variable override.
A tiny fleet of its own per release (the topology controller runs only where a class is declared): one management
cluster, one topology Cluster "tr" with a 1-replica control plane and one 1-replica MachineDeployment, and a plain Cluster
"plain" of the same size."""

import json

import pytest

from conftest import (
    IN_PLACE_TOPOLOGY_NAMESPACE, REBASE_NAMESPACE, TOPOLOGY_IMAGE as IMAGE, CapiEnv, per_fleet, rebase_class_and_cluster,
    topology_class, topology_cluster,
)
from playbook import run_module

pytestmark = pytest.mark.needs_controller

TOPOLOGY_VERSIONS = ("v1.10", "v1.13", "v1.14")
# v1.12.3 runs on the in-place fleet (conftest.IN_PLACE_FLEET, its namespace "topology"), and only the cases whose
# code differs per release: the trigger's place (the MD/KCP field before v1.13), path (a), undo, check mode and the
# positive control. What is the same code on every release (the roles, the drift wait, the control plane) runs on
# the fleets above only.
PER_RELEASE = per_fleet(TOPOLOGY_VERSIONS, "topology") + [pytest.param("v1.12.3", marks=pytest.mark.xdist_group("in-place"))]
per_release = pytest.mark.parametrize("topo", PER_RELEASE, indirect=True)
DEPLOYMENT_NAME = "topology.cluster.x-k8s.io/deployment-name"
PATHS_NS = "topo-paths"
BIG_IMAGE = "kindest/node:v1.30.4-big"
MERGE_NS = "topo-rebase-merge"


def topology_fleet(capi_version):
    return {
        # a resync every 10 s, as the modules fleet: a put-back of a hand edit shows within seconds
        "defaults": {"provision_seconds": 1, "sync_period_seconds": 10},
        "management_clusters": [{
            "name": f"itt-{capi_version.replace('.', '-')}",
            "capi_version": capi_version,
            "cluster_classes": [
                topology_class(),
                # path (b): no variable, two worker classes with their own images, for Cluster "tb" (its namespace)
                {"name": "bare", "namespace": PATHS_NS, "control_plane_image": IMAGE,
                 "workers": [{"class": "small", "image": IMAGE}, {"class": "big", "image": BIG_IMAGE}]},
                # path (c): Cluster "tc" (its namespace); on v1.10 and v1.14 Cluster "tm" too, in a namespace of its own
                rebase_class_and_cluster()[0]] + [pair[0] for pair in _merge_cluster(capi_version)],
            "workload_clusters": [
                topology_cluster(),
                # a plain cluster beside it: a wave whose other object fails (the role's automatic undo)
                {"name": "plain", "kubernetes_version": "v1.30.4", "control_plane": {"replicas": 1},
                 "machine_deployments": [{"name": "md-0", "replicas": 1}]},
                {"name": "tb", "namespace": PATHS_NS, "kubernetes_version": "v1.30.4", "topology": {"class": "bare"},
                 "control_plane": {"replicas": 1}, "machine_deployments": [{"name": "md-0", "class": "small", "replicas": 1}]},
                rebase_class_and_cluster()[1]] + [pair[1] for pair in _merge_cluster(capi_version)],
        }],
    }


# CAPI v1.14 with InPlaceUpdates, for the one test of a topology switch CAPI may update in place where the topology has
# rollout.after (v1.13+): Cluster tr alone, its update extension accepting infrastructure-template changes
IN_PLACE_V114 = "v1.14-in-place"
IN_PLACE_V114_FLEET = {
    "defaults": {"provision_seconds": 1},
    "management_clusters": [{
        "name": "itt-inplace-v1-14", "capi_version": "v1.14", "features": ["InPlaceUpdates"],
        "in_place_accepts": ["infrastructureRef", "version"], "in_place_seconds": 2,
        "cluster_classes": [topology_class()], "workload_clusters": [topology_cluster()]}],
}


def _merge_cluster(capi_version):
    """Path (c) of two MDs in one call and through the role (v1.10 and v1.14): ClusterClass lone-m, Cluster tm."""
    return [rebase_class_and_cluster(MERGE_NS, "tm", "lone-m")] if capi_version in ("v1.10", "v1.14") else []


@pytest.fixture(scope="module", params=per_fleet(TOPOLOGY_VERSIONS, "topology"))
def topo(request, fleet_factory):
    if request.param == "v1.12.3":
        yield CapiEnv(request.getfixturevalue("in_place_fleet"), request.param, IN_PLACE_TOPOLOGY_NAMESPACE)
        return
    spec = IN_PLACE_V114_FLEET if request.param == IN_PLACE_V114 else topology_fleet(request.param)
    fleet = fleet_factory(spec)
    yield CapiEnv(fleet, spec["management_clusters"][0]["capi_version"])
    fleet.fleet.down()


def _ref(topo, kind, name):
    return f"{kind}/{topo.namespace}/{name}"


def _md(topo):
    items = topo.admin.list(topo.path("MachineDeployment"), label_selector=f"{DEPLOYMENT_NAME}=md-0")["items"]
    assert len(items) == 1, items
    return items[0]


def _kcp(topo):
    return topo.get("KubeadmControlPlane", topo.get("Cluster", "tr")["spec"]["controlPlaneRef"]["name"])


def _topology_after(topo, entry):
    topology = topo.get("Cluster", "tr")["spec"]["topology"]
    node = topology.get("controlPlane") if entry is None else topology["workers"]["machineDeployments"][entry]
    return ((node or {}).get("rollout") or {}).get("after")


def _own_after(topo, obj):
    spec = obj["spec"]
    return spec.get("rolloutAfter") if topo.version == "v1beta1" else (spec.get("rollout") or {}).get("after")


def _through_topology(topo):
    return topo.capi_version >= "v1.13"


@per_release
def test_check_mode_sends_the_cluster_write_as_a_dry_run_and_diffs_the_topology(topo):
    md = _md(topo)
    mark = topo.mark()
    res = topo.run("capi_rollout_restart", name=md["metadata"]["name"], check=True, diff=True)
    assert not res.failed, res.get("msg")
    assert res["changed"] is True
    assert not topo.writes(mark)
    dry = [(e["verb"], e["objectRef"]["resource"]) for e in topo.dry_runs(mark)]
    # the probe (does the topology have rollout.after?) then the write itself
    assert dry.count(("patch", "clusters")) == (2 if _through_topology(topo) else 1), dry
    assert _topology_after(topo, 0) is None and _own_after(topo, _md(topo)) is None
    texts = " ".join(str(d.get("after")) for d in res["diff"])
    if _through_topology(topo):
        assert res["objects"][0]["owner"]["ref"] == _ref(topo, "cluster", "tr")
        assert "machineDeployments[md-0]" in texts
    else:
        assert "owner" not in res["objects"][0] and "machineDeployments[md-0]" not in texts


@per_release
def test_restart_now_writes_the_cluster_topology_from_v1_13_and_the_md_before(topo):
    md = _md(topo)
    name = md["metadata"]["name"]
    machines_before = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
    assert machines_before
    mark = topo.mark()
    res = topo.run("capi_rollout_restart", name=name, rollout_id="topo-1", wait=True, wait_timeout=300,
                   stall_timeout=120)
    assert not res.failed, res.get("msg")
    entry = res["objects"][0]
    assert entry["action"] == "restarted" and entry["status"]["rollout"]["complete"] is True, entry["message"]
    writes = [(e["verb"], e["objectRef"]["resource"]) for e in topo.writes(mark)]
    after = entry["rollout_after"]
    if _through_topology(topo):
        assert _topology_after(topo, 0) == after
        # the topology controller copied it into the MD (it owns the field there)
        assert _own_after(topo, _md(topo)) == after
        assert ("patch", "clusters") in writes, writes
        assert f"{_ref(topo, 'cluster', 'tr')} spec.topology.workers.machineDeployments[md-0].rollout.after" in entry["message"]
    else:
        assert _topology_after(topo, 0) is None
        assert _own_after(topo, _md(topo)) == after
        assert ("patch", "clusters") not in writes, writes  # positive control of the v1.13 branch above
        assert "before v1.13" in entry["message"]
    # new Machines, and the history of the MD names the topology change

    def replaced():
        machines = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
        return machines and not machines & machines_before
    topo.wait_for("every Machine replaced", replaced)
    info = topo.run("capi_rollout_info", name=name, history=True)
    assert not info.failed, info.get("msg")
    record = topo.get("MachineDeployment", name)["metadata"]["annotations"]["rollout.capi-rollout.dev/history"]
    assert ("spec.topology.workers.machineDeployments[md-0].rollout.after" in record) == _through_topology(topo)
    # a repeated rollout_id changes nothing
    again = topo.run("capi_rollout_restart", name=name, rollout_id="topo-1")
    assert not again.failed and again["changed"] is False


def test_new_hardware_of_the_control_plane_by_a_cluster_variable(topo):
    """Path (a) for a control plane: the class patches controlPlaneImage onto its machine infrastructure template only,
    so a template override of customImage becomes a Cluster-level variable; the topology rotates the control plane's
    template alone and rolls it; the wait holds it by values and is done on new Machines."""
    kcp = _kcp(topo)
    name = kcp["metadata"]["name"]
    md_template = _md(topo)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    image = "kindest/node:v1.30.4-cp"
    switch = [{"name": name, "template": {"overrides": {"customImage": image}}}]
    mark = topo.mark()
    checked = topo.run("capi_rollout_restart", kind="KubeadmControlPlane", switches=switch, rollout_id="cp-hw",
                       check=True, diff=True)
    _checked_by_a_cluster_dry_run(topo, mark, checked, "spec.topology.variables")

    selector = f"cluster.x-k8s.io/control-plane-name={name}"
    machines_before = set(topo.machines(selector))
    assert machines_before
    res = topo.run("capi_rollout_restart", kind="KubeadmControlPlane", switches=switch, rollout_id="cp-hw", wait=True,
                   wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    entry = res["objects"][0]
    assert entry["owner"]["ref"] == _ref(topo, "cluster", "tr") and "controlPlaneImage" in entry["message"], entry
    assert entry["hold"] == {"overrides": {"controlPlaneImage": image}, "template": {"customImage": image}}
    assert entry["status"]["rollout"]["complete"] is True, entry["status"]
    assert {"name": "controlPlaneImage", "value": image} in topo.get("Cluster", "tr")["spec"]["topology"]["variables"]
    infra = _kcp_template(topo, _kcp(topo))
    assert topo.get("DockerMachineTemplate", infra)["spec"]["template"]["spec"]["customImage"] == image
    machines = set(topo.machines(selector))
    assert machines and not machines & machines_before
    # the workers' template is not the control plane's variable's
    assert _md(topo)["spec"]["template"]["spec"]["infrastructureRef"]["name"] == md_template
    again = topo.run("capi_rollout_restart", kind="KubeadmControlPlane", switches=switch, rollout_id="cp-hw")
    assert not again.failed and again["changed"] is False, again.get("msg")


def _checked_by_a_cluster_dry_run(topo, mark, checked, shown):
    """A check-mode run since ``mark``: changed, nothing written, the Cluster write sent as a server-side dry run, and its
    diff shows ``shown``."""
    assert not checked.failed and checked["changed"] is True, checked.get("msg")
    assert not topo.writes(mark)
    assert ("patch", "clusters") in [(e["verb"], e["objectRef"]["resource"]) for e in topo.dry_runs(mark)]
    assert shown in json.dumps(checked["diff"]), checked["diff"]


def _kcp_template(topo, kcp):
    """The name of the KCP's infrastructure machine template, where each API version keeps it."""
    template = kcp["spec"]["machineTemplate"]
    return (template.get("spec") or template)["infrastructureRef"]["name"]


def test_the_hardware_refresh_role_refreshes_a_topology_control_plane_through_its_cluster(topo, tmp_path):
    """playbooks/hardware_refresh.yml with control_plane=true, workers=false over Cluster tr: the plan names the Cluster
    variable instead of a topology blocker; the control-plane wave writes the Cluster (no template of its own), its
    wait holds the KCP to the generated template, and every control-plane Machine is new."""
    from hardware_refresh_support import FAST, run_playbook
    name = _kcp(topo)["metadata"]["name"]
    image = "kindest/node:v1.30.4-cp-role"
    selector = f"cluster.x-k8s.io/control-plane-name={name}"
    machines_before = set(topo.machines(selector))
    mark = topo.mark()
    run = run_playbook(topo.fleet.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="topo-cp-role", template_overrides={"customImage": image}, clusters=["tr"],
                            canary=False, control_plane=True, workers=False), tmp_path / "run")
    assert run.rc == 0, run.explain()
    refreshed = run.obj(topo.host, name)
    assert refreshed["result"] == "succeeded", refreshed
    assert any("through its Cluster topology (Cluster variable)" in note and "controlPlaneImage" in note
               for note in refreshed["notes"]), refreshed["notes"]
    writes = {(e["verb"], e["objectRef"]["resource"]) for e in topo.writes(mark)}
    assert ("patch", "clusters") in writes and ("create", "dockermachinetemplates") not in writes, writes
    assert topo.get("DockerMachineTemplate", _kcp_template(topo, _kcp(topo)))["spec"]["template"]["spec"][
        "customImage"] == image
    machines = set(topo.machines(selector))
    assert machines and not machines & machines_before


def test_undo_of_a_control_plane_reverts_its_cluster_variable(topo):
    """capi_rollout_undo of the control-plane refresh above: its Cluster variable (the topology change its history
    records) is put back as it was before, check mode sending that Cluster write as a dry run; the topology rolls the
    control plane onto a template with the image from before. A plain control plane is still refused, nothing written."""
    name = _kcp(topo)["metadata"]["name"]
    record = json.loads(_kcp(topo)["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])
    wrote = [e for e in record if e.get("rollout_id") == "topo-cp-role"][0]
    old = wrote["topology_before"]["controlPlaneImage"]
    assert old == "kindest/node:v1.30.4-cp" and _cluster_variable(topo) == wrote["topology_after"]["controlPlaneImage"]
    mark = topo.mark()
    plain = topo.run("capi_rollout_undo", kind="KubeadmControlPlane", name=topo.get("Cluster", "plain")["spec"][
        "controlPlaneRef"]["name"], undo_rollout_id="topo-cp-role")
    assert plain.failed and plain["reason"] == "control_plane_undo", plain.get("msg")
    checked = topo.run("capi_rollout_undo", kind="KubeadmControlPlane", name=name, undo_rollout_id="topo-cp-role",
                       rollout_id="topo-cp-role-undo", check=True, diff=True)
    _checked_by_a_cluster_dry_run(topo, mark, checked, "spec.topology.variables")

    selector = f"cluster.x-k8s.io/control-plane-name={name}"
    machines_before = set(topo.machines(selector))
    res = topo.run("capi_rollout_undo", kind="KubeadmControlPlane", name=name, undo_rollout_id="topo-cp-role",
                   rollout_id="topo-cp-role-undo", wait=True, wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    entry = res["objects"][0]
    assert entry["action"] == "rolled_back" and entry["owner"]["ref"] == _ref(topo, "cluster", "tr"), entry
    assert entry["status"]["rollout"]["complete"] is True, entry["status"]
    assert _cluster_variable(topo) == old
    assert topo.get("DockerMachineTemplate", _kcp_template(topo, _kcp(topo)))["spec"]["template"]["spec"]["customImage"] == old
    machines = set(topo.machines(selector))
    assert machines and not machines & machines_before
    last = json.loads(_kcp(topo)["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])[-1]
    assert last["action"] == "rolled_back" and f"controlPlaneImage={old}" in last["topology"], last
    again = topo.run("capi_rollout_undo", kind="KubeadmControlPlane", name=name, undo_rollout_id="topo-cp-role",
                     rollout_id="topo-cp-role-undo")
    assert not again.failed and again["changed"] is False, again.get("msg")


def _cluster_variable(topo):
    return {v["name"]: v["value"] for v in topo.get("Cluster", "tr")["spec"]["topology"].get("variables") or []}.get(
        "controlPlaneImage")


# a health check after each wave that fails: the wave fails after its objects rolled out, and is undone
FAILING_HOOK = """\
- name: Fail the health check after the wave
  ansible.builtin.fail:
    msg: "health check failed after {{ hardware_refresh_hook.wave.name }}"
"""


def test_a_failed_control_plane_wave_undoes_its_cluster_variable(topo, tmp_path):
    """playbooks/hardware_refresh.yml with control_plane=true, workers=false over Cluster tr and a failing after-wave
    hook: the control-plane wave fails after the control plane rolled, and the automatic undo reverts its Cluster
    variable (a plain control plane is never undone), its wait held to that change."""
    from hardware_refresh_support import FAST, run_playbook
    name = _kcp(topo)["metadata"]["name"]
    before = _cluster_variable(topo)
    hook = tmp_path / "after.yml"
    hook.write_text(FAILING_HOOK, encoding="utf-8")
    run = run_playbook(topo.fleet.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="topo-cp-undo", template_overrides={"customImage": "kindest/node:v1.30.4-cp-undo"},
                            clusters=["tr"], canary=False, control_plane=True, workers=False, after_wave=str(hook)),
                       tmp_path / "run")
    assert run.rc != 0, run.explain()
    assert run.cluster(topo.host)["result"] == "failed", run.explain()
    undone = run.obj(topo.host, name)
    assert undone["undo"]["result"] == "succeeded", undone
    assert _cluster_variable(topo) == before
    assert topo.get("DockerMachineTemplate", _kcp_template(topo, _kcp(topo)))["spec"]["template"]["spec"][
        "customImage"] == (before or IMAGE)
    last = json.loads(_kcp(topo)["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])[-1]
    assert last["rollout_id"] == "topo-cp-undo-undo" and last["action"] == "rolled_back" and "topology" in last, last


def test_control_plane_restart_later_through_the_topology(topo):
    kcp = _kcp(topo)
    when = topo.utc_in(3600)
    res = topo.run("capi_rollout_restart", kind="KubeadmControlPlane", name=kcp["metadata"]["name"], after=when)
    assert not res.failed, res.get("msg")
    assert res["objects"][0]["action"] == "scheduled", res["objects"][0]["message"]
    if _through_topology(topo):
        assert _topology_after(topo, None) == when
        topo.wait_for("rollout.after copied into the KCP", lambda: _own_after(topo, _kcp(topo)) == when)
    else:
        assert _topology_after(topo, None) is None and _own_after(topo, _kcp(topo)) == when
    # the same time again plans nothing
    again = topo.run("capi_rollout_restart", kind="KubeadmControlPlane", name=kcp["metadata"]["name"], after=when)
    assert not again.failed and again["changed"] is False, again


@per_release
def test_positive_control_a_direct_md_template_edit_is_put_back(topo):
    """Why the collection writes the Cluster: a template switch made on the MD itself does not last."""
    md = _md(topo)
    name = md["metadata"]["name"]
    template = topo.get("DockerMachineTemplate", md["spec"]["template"]["spec"]["infrastructureRef"]["name"])
    image = template["spec"]["template"]["spec"].get("customImage")
    # a template of someone's own: without the topology's labels, which would make it the topology's to delete
    copy_name = f"{name}-hand"
    topo.admin.create(topo.path("DockerMachineTemplate"), {
        "apiVersion": template["apiVersion"], "kind": "DockerMachineTemplate",
        "metadata": {"name": copy_name, "namespace": topo.namespace},
        "spec": {"template": {"spec": dict(template["spec"]["template"]["spec"], customImage="kindest/node:v1.31.0-hand")}}})
    topo.admin.patch_merge(topo.path("MachineDeployment", name=name),
                           {"spec": {"template": {"spec": {"infrastructureRef": {"name": copy_name}}}}})

    def put_back():
        ref = topo.get("MachineDeployment", name)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
        return ref != copy_name and \
            topo.get("DockerMachineTemplate", ref)["spec"]["template"]["spec"].get("customImage") == image
    topo.wait_for("the topology controller puts the class's template back", put_back)


@per_release
def test_new_hardware_by_a_variable_override_of_the_md(topo):
    """Path (a): the class patches variable workerImage onto customImage of default-worker, so a template override of
    customImage becomes a per-MD override in the Cluster topology; the topology generates the template and rolls."""
    md = _md(topo)
    name = md["metadata"]["name"]
    image = "kindest/node:v1.30.4-gen2"
    switch = [{"name": name, "template": {"overrides": {"customImage": image}}}]
    mark = topo.mark()
    # no variable maps "extra" and quick-start has no other worker class: path (c), whose template clone's dry run
    # (before any write) shows the API server would drop the unknown field
    unmapped = topo.run("capi_rollout_restart", switches=[{"name": name, "template": {"overrides": {"extra": "x"}}}])
    assert unmapped.failed and unmapped["reason"] == "pruned_fields", unmapped.get("msg")
    assert "spec.template.spec.extra" in unmapped["msg"] and "was not changed" in unmapped["msg"], unmapped["msg"]
    checked = topo.run("capi_rollout_restart", switches=switch, rollout_id="hw-1", check=True, diff=True)
    assert not checked.failed and checked["changed"] is True, checked.get("msg")
    assert not topo.writes(mark)
    assert ("patch", "clusters") in [(e["verb"], e["objectRef"]["resource"]) for e in topo.dry_runs(mark)]
    # --diff: the Cluster topology change, then the field of the template the topology will generate from it (the MD's
    # current template, as read, with customImage as the class's patch sets it)
    current = md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    old_image = topo.get("DockerMachineTemplate", current)["spec"]["template"]["spec"]["customImage"]
    (generated,) = [d for d in checked["diff"] if d.get("before_header", "").startswith(f"dockermachinetemplate/{topo.namespace}/{current} ")]
    assert f'customImage: "{old_image}"' in generated["before"] and f'customImage: "{image}"' in generated["after"], generated
    assert "variables.overrides" in " ".join(str(d["after"]) for d in checked["diff"] if d is not generated), checked["diff"]

    machines_before = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
    res = topo.run("capi_rollout_restart", switches=switch, rollout_id="hw-1")
    assert not res.failed, res.get("msg")
    entry = res["objects"][0]
    assert "variable workerImage" in entry["message"] and "customImage" in entry["message"], entry["message"]
    assert entry["owner"]["ref"] == _ref(topo, "cluster", "tr")
    assert ("patch", "clusters") in [(e["verb"], e["objectRef"]["resource"]) for e in topo.writes(mark)]
    overrides = topo.get("Cluster", "tr")["spec"]["topology"]["workers"]["machineDeployments"][0]["variables"]["overrides"]
    assert {"name": "workerImage", "value": image} in overrides

    def switched():
        current = _md(topo)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
        machines = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
        return topo.get("DockerMachineTemplate", current)["spec"]["template"]["spec"].get("customImage") == image \
            and machines and not machines & machines_before
    topo.wait_for("the generated template carries the image, every Machine new", switched, timeout=120)
    again = topo.run("capi_rollout_restart", switches=switch, rollout_id="hw-1")
    assert not again.failed and again["changed"] is False, again.get("msg")


def test_a_topology_switch_is_done_on_the_generated_template_and_a_reverted_topology_is_drift(topo):
    """The wait of a topology MD holds it to its change by values (its template's name is generated): done when the
    template it is on carries them and every Machine is new; someone putting the old value back in the Cluster
    topology is drift, named with the field manager that wrote it."""
    md = _md(topo)
    name = md["metadata"]["name"]
    image = "kindest/node:v1.30.4-gen3"
    machines_before = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
    res = topo.run("capi_rollout_restart", switches=[{"name": name, "template": {"overrides": {"customImage": image}}}],
                   rollout_id="hw-3", wait=True, wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    entry = res["objects"][0]
    assert entry["hold"] == {"overrides": {"workerImage": image}, "template": {"customImage": image}}
    assert entry["status"]["rollout"]["complete"] is True, entry["status"]
    # done means done on the generated template: read back, it carries the image, and no Machine is from before
    current = _md(topo)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    assert topo.get("DockerMachineTemplate", current)["spec"]["template"]["spec"]["customImage"] == image
    machines = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
    assert machines and not machines & machines_before

    # the next change, reverted in the Cluster topology by someone else before the wait
    hold = {"overrides": {"workerImage": image + "-b"}, "template": {"customImage": image + "-b"}}
    switched = topo.run("capi_rollout_restart", rollout_id="hw-4",
                        switches=[{"name": name, "template": {"overrides": {"customImage": image + "-b"}}}])
    assert not switched.failed and switched["objects"][0]["hold"] == hold, switched.get("msg")
    index = [e["name"] for e in topo.get("Cluster", "tr")["spec"]["topology"]["workers"]["machineDeployments"]].index("md-0")
    topo.admin.request("PATCH", topo.path("Cluster", name="tr"), params={"fieldManager": "kubectl-edit"},
                       content_type="application/json-patch+json",
                       body=[{"op": "replace", "path": f"/spec/topology/workers/machineDeployments/{index}/variables/overrides",
                              "value": [{"name": "workerImage", "value": image}]}])
    waited = topo.run("capi_rollout_wait", objects=[{"name": name, "topology": hold}], wait_timeout=120, stall_timeout=60)
    assert waited.failed and waited["reason"] == "drift", waited.get("msg")
    assert f"{_ref(topo, 'cluster', 'tr')} no longer holds its topology change workerImage={image}-b (now {image})" in waited["msg"]
    assert "changed by kubectl-edit" in waited["msg"], waited["msg"]
    # positive control: the same wait held to what the topology now holds does not fail on drift
    settled = topo.run("capi_rollout_wait", wait_timeout=300, stall_timeout=120,
                       objects=[{"name": name, "topology": {"overrides": {"workerImage": image},
                                                            "template": {"customImage": image}}}])
    assert not settled.failed, settled.get("msg")


@per_release
def test_the_hardware_refresh_role_refreshes_a_topology_md_through_its_cluster(topo, tmp_path):
    """playbooks/hardware_refresh.yml over Cluster tr: the plan names the path (a variable override) instead of a
    topology blocker, check mode sends the Cluster write as a dry run only; the run writes the Cluster (not a template
    of its own), waits on the generated template, and every Machine of the MD is new."""
    from hardware_refresh_support import FAST, run_playbook
    md = _md(topo)
    name = md["metadata"]["name"]
    image = "kindest/node:v1.30.4-role"
    settings = dict(FAST, refresh_id="topo-role", template_overrides={"customImage": image}, clusters=["tr"],
                    namespaces=[topo.namespace], canary=False)
    mark = topo.mark()
    checked = run_playbook(topo.fleet.inventory, "hardware_refresh.yml", settings, tmp_path / "check", check=True,
                           diff=True)
    assert checked.rc == 0, checked.explain()
    # --diff shows the topology change the wave would write
    assert f"+++ after: {_ref(topo, 'cluster', 'tr')} (after)" in checked.stdout, checked.explain()
    planned = checked.obj(topo.host, name)
    assert planned["blockers"] == [] and planned["action"] == "switch", planned
    assert any("through its Cluster topology (variable override)" in note and "workerImage" in note
               for note in planned["notes"]), planned["notes"]
    assert not topo.writes(mark)
    assert ("patch", "clusters") in [(e["verb"], e["objectRef"]["resource"]) for e in topo.dry_runs(mark)]

    machines_before = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
    mark = topo.mark()
    run = run_playbook(topo.fleet.inventory, "hardware_refresh.yml", settings, tmp_path / "run")
    assert run.rc == 0, run.explain()
    assert run.cluster(topo.host)["result"] == "succeeded", run.explain()
    assert run.obj(topo.host, name)["result"] == "succeeded"
    writes = {(e["verb"], e["objectRef"]["resource"]) for e in topo.writes(mark)}
    assert ("patch", "clusters") in writes and ("create", "dockermachinetemplates") not in writes, writes
    md = _md(topo)
    current = md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    assert topo.get("DockerMachineTemplate", current)["spec"]["template"]["spec"]["customImage"] == image
    # the template reference is the topology's, as every field it computes
    owners = [f["manager"] for f in md["metadata"]["managedFields"]
              if "f:infrastructureRef" in json.dumps(f.get("fieldsV1"))]
    assert owners == ["capi-topology"], owners
    machines = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
    assert machines and not machines & machines_before


@per_release
def test_undo_reverts_the_topology_change_in_the_cluster_not_the_md(topo):
    """capi_rollout_undo of the refresh above (undo_rollout_id, as the role's auto-undo calls it): check mode sends the
    Cluster write as a dry run and diffs the topology; the run puts the override from before back, the topology rolls
    the MD onto a template with the old image, and its history names the topology change."""
    md = _md(topo)
    name = md["metadata"]["name"]
    before = _override(topo)
    record = json.loads(md["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])
    wrote = [e for e in record if e.get("rollout_id") == "topo-role"][0]
    assert wrote["topology_after"] == {"workerImage": before}
    old = wrote["topology_before"]["workerImage"]
    mark = topo.mark()
    checked = topo.run("capi_rollout_undo", name=name, undo_rollout_id="topo-role", rollout_id="topo-role-undo",
                       check=True, diff=True)
    assert not checked.failed and checked["changed"] is True, checked.get("msg")
    assert not topo.writes(mark) and _override(topo) == before
    assert ("patch", "clusters") in [(e["verb"], e["objectRef"]["resource"]) for e in topo.dry_runs(mark)]
    assert "machineDeployments[md-0].variables.overrides" in " ".join(str(d.get("after")) + str(d.get("after_header"))
                                                                      for d in checked["diff"]), checked["diff"]

    machines_before = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
    res = topo.run("capi_rollout_undo", name=name, undo_rollout_id="topo-role", rollout_id="topo-role-undo", wait=True,
                   wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    entry = res["objects"][0]
    assert entry["action"] == "rolled_back" and entry["owner"]["ref"] == _ref(topo, "cluster", "tr"), entry
    assert _override(topo) == old
    current = _md(topo)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    # no override before: the class's default of the variable
    assert topo.get("DockerMachineTemplate", current)["spec"]["template"]["spec"]["customImage"] == (old or IMAGE)
    machines = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}"))
    assert machines and not machines & machines_before
    last = json.loads(_md(topo)["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])[-1]
    assert last["action"] == "rolled_back" and (f"workerImage={old}" if old else "no workerImage") in last["topology"], last
    again = topo.run("capi_rollout_undo", name=name, undo_rollout_id="topo-role", rollout_id="topo-role-undo")
    assert not again.failed and again["changed"] is False


def _override(topo):
    entry = [e for e in topo.get("Cluster", "tr")["spec"]["topology"]["workers"]["machineDeployments"] if e["name"] == "md-0"][0]
    return {o["name"]: o["value"] for o in (entry.get("variables") or {}).get("overrides") or []}.get("workerImage")


def test_a_failed_wave_undoes_its_topology_md_through_the_cluster(topo, tmp_path):
    """One wave with the topology MD and a plain MD whose new template never provisions: the wave fails on the plain MD
    and the automatic undo switches both back - the topology MD by putting its override from before back in the
    Cluster, its undo wait held to that change."""
    from hardware_refresh_support import FAST, run_playbook
    name = _md(topo)["metadata"]["name"]
    before = _override(topo)
    run = run_playbook(topo.fleet.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="topo-undo", template_overrides={"customImage": "kindest/node:v1.30.4-undo"},
                            clusters=["tr", "plain"], canary=False, max_in_flight=2, stall_timeout=8,
                            object_templates={"plain-md-0": {"annotations": {"sim.capi-rollout.dev/fail-provisioning": "true"}}}),
                       tmp_path / "run")
    assert run.rc != 0, run.explain()
    assert run.cluster(topo.host)["result"] == "failed", run.explain()
    assert run.obj(topo.host, "plain-md-0")["result"] == "failed"
    undone = run.obj(topo.host, name)
    assert undone["wave"] == run.obj(topo.host, "plain-md-0")["wave"], undone
    assert undone["undo"]["result"] == "succeeded", undone
    # the Cluster holds the override from before again, and the MD is on a template with that image
    assert _override(topo) == before
    current = _md(topo)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    assert topo.get("DockerMachineTemplate", current)["spec"]["template"]["spec"]["customImage"] == (before or IMAGE)
    last = json.loads(_md(topo)["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])[-1]
    assert last["rollout_id"] == "topo-undo-undo" and last["action"] == "rolled_back" and "topology" in last, last


# --- path (b): a switch to another worker class (Cluster "tb" in namespace topo-paths, ClusterClass "bare") ---------

def _tb_md(topo):
    items = topo.admin.list(topo.path("MachineDeployment", PATHS_NS), label_selector=f"{DEPLOYMENT_NAME}=md-0")["items"]
    assert len(items) == 1, items
    return items[0]


def _tb_class(topo):
    return topo.get("Cluster", "tb", PATHS_NS)["spec"]["topology"]["workers"]["machineDeployments"][0]["class"]


def _tb_rolled(topo, name, image, machines_before):
    current = _tb_md(topo)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    machines = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}", PATHS_NS))
    return topo.get("DockerMachineTemplate", current, PATHS_NS)["spec"]["template"]["spec"].get("customImage") == image \
        and machines and not machines & machines_before


def test_new_hardware_by_a_worker_class_switch_and_its_undo(topo):
    """Path (b): ClusterClass "bare" patches no variable, and its worker class "big" has a template with the image asked
    for, so the MD's entry switches class "small" -> "big" in the Cluster topology (check mode: a dry run, nothing
    written, the diff shows the class); the topology generates the new template from big's and rolls the MD (every
    Machine new); the undo switches the class back."""
    name = _tb_md(topo)["metadata"]["name"]
    switch = [{"name": name, "template": {"overrides": {"customImage": BIG_IMAGE}}}]
    mark = topo.mark()
    # a value no worker class carries takes path (c) instead (test_new_hardware_by_a_class_clone_and_a_rebase_and_its_undo)
    none_fits = topo.run("capi_rollout_restart", namespace=PATHS_NS, check=True,
                         switches=[{"name": name, "template": {"overrides": {"customImage": "kindest/node:v9"}}}])
    assert not none_fits.failed, none_fits.get("msg")
    assert f"big: its template has customImage={BIG_IMAGE}" in none_fits["objects"][0]["message"], none_fits["objects"]
    assert "spec.topology.classRef.name: bare-" in none_fits["objects"][0]["message"] or topo.version == "v1beta1"
    checked = topo.run("capi_rollout_restart", namespace=PATHS_NS, switches=switch, rollout_id="hw-b", check=True, diff=True)
    assert not checked.failed and checked["changed"] is True, checked.get("msg")
    assert not topo.writes(mark) and _tb_class(topo) == "small"
    assert ("patch", "clusters") in [(e["verb"], e["objectRef"]["resource"]) for e in topo.dry_runs(mark)]
    assert "machineDeployments[md-0].class" in " ".join(str(d.get("after")) for d in checked["diff"]), checked["diff"]
    # and the field diff of the template the topology will generate: big's image instead of small's
    (generated,) = [d for d in checked["diff"] if "of worker class big)" in d.get("after_header", "")]
    assert f'customImage: "{IMAGE}"' in generated["before"] and f'customImage: "{BIG_IMAGE}"' in generated["after"], generated

    # the refresh plan picks the same path and sends its Cluster write as a dry run
    planned = topo.run("capi_refresh_plan", check=True, diff=True, namespaces=[PATHS_NS], refresh_id="plan-b",
                       templates={"overrides": {"customImage": BIG_IMAGE}})
    assert not planned.failed and not planned["plan"]["blocked"], planned.get("msg") or planned["plan"]["blocked"]
    (planned_md,) = [obj for obj in planned["plan"]["objects"] if obj["ref"] == f"machinedeployment/{PATHS_NS}/{name}"]
    notes = " ".join(planned_md["notes"])
    assert "(worker class switch)" in notes and "class=big (was small)" in notes, notes
    assert planned_md["wait"]["topology"] == {"overrides": {}, "template": {"customImage": BIG_IMAGE}, "class": "big"}
    assert [d["after"] for d in planned["diff"] if "of worker class big)" in d.get("after_header", "")] == \
        [generated["after"]], planned["diff"]
    assert not topo.writes(mark) and _tb_class(topo) == "small"

    machines_before = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}", PATHS_NS))
    res = topo.run("capi_rollout_restart", namespace=PATHS_NS, switches=switch, rollout_id="hw-b", wait=True,
                   wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    entry = res["objects"][0]
    assert "worker class big" in entry["message"] and entry["owner"]["ref"] == f"cluster/{PATHS_NS}/tb", entry["message"]
    assert entry["hold"] == {"overrides": {}, "template": {"customImage": BIG_IMAGE}, "class": "big"}
    assert entry["status"]["rollout"]["complete"] is True, entry["status"]
    writes = [e for e in topo.writes(mark) if e["objectRef"]["resource"] == "clusters"]
    assert writes and all("fieldManager=capi-rollout" in e["requestURI"] for e in writes), writes
    # read back: the Cluster holds the class, the generated template carries big's image, every Machine is new
    assert _tb_class(topo) == "big" and _tb_rolled(topo, name, BIG_IMAGE, machines_before)
    again = topo.run("capi_rollout_restart", namespace=PATHS_NS, switches=switch, rollout_id="hw-b")
    assert not again.failed and again["changed"] is False, again.get("msg")

    machines_before = set(topo.machines(f"cluster.x-k8s.io/deployment-name={name}", PATHS_NS))
    mark = topo.mark()
    undone = topo.run("capi_rollout_undo", name=name, namespace=PATHS_NS, undo_rollout_id="hw-b", rollout_id="hw-b-undo",
                      wait=True, wait_timeout=300, stall_timeout=120)
    assert not undone.failed, undone.get("msg")
    entry = undone["objects"][0]
    assert entry["action"] == "rolled_back" and entry["hold"]["class"] == "small", entry["message"]
    assert [(e["verb"], e["objectRef"]["resource"]) for e in topo.writes(mark)] == [
        ("patch", "clusters"), ("patch", "machinedeployments")]
    last = json.loads(_tb_md(topo)["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])[-1]
    assert last["action"] == "rolled_back" and last["topology_class"] == ["big", "small"], last
    assert _tb_class(topo) == "small" and _tb_rolled(topo, name, IMAGE, machines_before)


REBASE_IMAGE = "kindest/node:v1.30.4-rebase"


def _tc_mds(topo, namespace=REBASE_NAMESPACE, cluster="tc"):
    """{topology name: MD} of Cluster tc."""
    items = topo.admin.list(topo.path("MachineDeployment", namespace), label_selector=f"cluster.x-k8s.io/cluster-name={cluster}")
    return {item["metadata"]["labels"][DEPLOYMENT_NAME]: item for item in items["items"]}


def _tc_class(topo, namespace=REBASE_NAMESPACE, cluster="tc"):
    topology = topo.get("Cluster", cluster, namespace)["spec"]["topology"]
    return topology["class"] if topo.version == "v1beta1" else topology["classRef"]["name"]


def _tc_machines(topo, namespace=REBASE_NAMESPACE, cluster="tc"):
    """{MD topology name: {Machine name: Machine}} of Cluster tc's MDs."""
    return {entry: topo.machines(f"cluster.x-k8s.io/deployment-name={md['metadata']['name']}", namespace)
            for entry, md in _tc_mds(topo, namespace, cluster).items()}


def _tc_rolled(topo, image, before, written_at, namespace=REBASE_NAMESPACE, cluster="tc"):
    """Every MD of tc on a template the topology generated with ``image``, and every Machine new: not one of
    ``before`` and created at or after ``written_at`` (the Cluster write's time, RFC 3339 seconds)."""
    for entry, md in _tc_mds(topo, namespace, cluster).items():
        template = topo.get("DockerMachineTemplate", md["spec"]["template"]["spec"]["infrastructureRef"]["name"], namespace)
        machines = _tc_machines(topo, namespace, cluster)[entry]
        if template["spec"]["template"]["spec"].get("customImage") != image or not machines or set(machines) & before[entry] \
                or any(m["metadata"]["creationTimestamp"] < written_at for m in machines.values()):
            return False
    return True


def _written_at(topo, namespace=REBASE_NAMESPACE, cluster="tc"):
    """When capi-rollout last wrote Cluster tc (its managedFields entry)."""
    fields = topo.get("Cluster", cluster, namespace)["metadata"]["managedFields"]
    return max(f["time"] for f in fields if f["manager"] == "capi-rollout")


@per_release
def test_new_hardware_by_a_class_clone_and_a_rebase_and_its_undo(topo):
    """Path (c): ClusterClass "lone" patches no variable and has one worker class, whose template lacks the image asked
    for, so the collection creates a clone of the class whose worker class small takes a clone of its template with the
    image, and rebases Cluster tc onto it (check mode: dry runs of both creates, not of the rebase onto the clone they
    did not make - CAPI's webhook refuses it - which the result says, nothing written; once the clone exists the rebase
    is dry-run too; the diff shows the class and the template field; md-0's message names md-1, which rolls with it; the
    refresh plan puts both in one wave). Both MDs in one call: one Cluster write, both recorded, every Machine new on
    templates the topology generated; a re-run changes nothing; the undo rebases tc back onto "lone" (the clone is
    kept). Without create on clusterclasses (docs/rbac.yml) nothing is written."""
    mds = _tc_mds(topo)
    assert sorted(mds) == ["md-0", "md-1"], mds
    switch = [{"name": mds["md-0"]["metadata"]["name"], "template": {"overrides": {"customImage": REBASE_IMAGE}}}]

    # least privilege: the role without create on clusterclasses fails before any write (docs/rbac.yml has it)
    role_path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/capi-rollout-operator"
    role = topo.admin.get(role_path)
    rules = [dict(rule, verbs=[verb for verb in rule["verbs"] if verb != "create"])
             if rule.get("resources") == ["clusterclasses"] else rule for rule in role["rules"]]
    assert rules != role["rules"]
    mark = topo.mark()
    topo.admin.request("PATCH", role_path, content_type="application/merge-patch+json", body={"rules": rules})
    try:
        denied = topo.run("capi_rollout_restart", namespace=REBASE_NAMESPACE, switches=switch, rollout_id="hw-c")
    finally:
        topo.admin.request("PATCH", role_path, content_type="application/merge-patch+json", body={"rules": role["rules"]})
    assert denied.failed and denied["reason"] == "forbidden" and "clusterclasses" in denied["msg"], denied.get("msg")
    assert not topo.writes(mark) and _tc_class(topo) == "lone"
    # positive control of the audit log: the dry run of the template create was recorded
    assert ("create", "dockermachinetemplates") in [(e["verb"], e["objectRef"]["resource"]) for e in topo.dry_runs(mark)]

    mark = topo.mark()
    checked = topo.run("capi_rollout_restart", namespace=REBASE_NAMESPACE, switches=switch, rollout_id="hw-c", check=True,
                       diff=True)
    assert not checked.failed and checked["changed"] is True, checked.get("msg")
    assert not topo.writes(mark) and _tc_class(topo) == "lone"
    dry = [(e["verb"], e["objectRef"]["resource"]) for e in topo.dry_runs(mark)]
    assert {("create", "dockermachinetemplates"), ("create", "clusterclasses")} <= set(dry), dry
    # not the rebase onto the clone that only the dry run "made": CAPI's Cluster webhook refuses a class it cannot get
    # (docs/clusterclass.md); the result says so. Where in-place updates are possible (v1.12.3 here) the release is
    # asked by one dry-run probe of the Cluster (a merge patch).
    probes = 1 if topo.capi_version == "v1.12.3" else 0
    assert dry.count(("patch", "clusters")) == probes, dry
    note = checked["objects"][0]["owner"]["check_mode_note"]
    assert note.startswith(f"cluster/{REBASE_NAMESPACE}/tc: the rebase onto ClusterClass lone-") and \
        "not sent as a dry run" in note, note
    texts = json.dumps(checked["diff"])
    class_field = "class" if topo.version == "v1beta1" else "classRef"
    assert class_field in texts and "lone-" in texts and REBASE_IMAGE in texts, checked["diff"]

    # the message of md-0 alone names md-1: the rebase rolls both
    message = checked["objects"][0]["message"]
    assert "rolls every MachineDeployment of worker class small" in message, message
    assert "machineDeployments[md-0]" in message and "machineDeployments[md-1]" in message

    # the refresh plan: both MDs one unit, in one wave (max_in_flight 1)
    # (run_module: CapiEnv.run would add the env's namespace, which capi_refresh_plan has not)
    planned = run_module(topo.fleet.inventory, topo.host, "capi_refresh_plan", {
        "namespaces": [REBASE_NAMESPACE], "refresh_id": "plan-c", "max_in_flight": 1,
        "templates": {"overrides": {"customImage": REBASE_IMAGE}}}, check=True, kubeconfig="{{ capi_kubeconfig }}")
    assert not planned.failed and not planned["plan"]["blocked"], planned.get("msg") or planned["plan"]["blocked"]
    refs = sorted(f"machinedeployment/{REBASE_NAMESPACE}/{md['metadata']['name']}" for md in mds.values())
    assert [sorted(wave["objects"]) for wave in planned["plan"]["waves"]] == [refs], planned["plan"]["waves"]
    # and says that the rebase onto the clone, which does not exist yet, was not dry-run
    for obj in planned["plan"]["objects"]:
        assert any("was not sent as a dry run" in note for note in obj["notes"]), obj["notes"]
    assert not topo.writes(mark)

    # both in one call, as a wave of the role does: one Cluster write, both recorded
    before = {entry: set(machines) for entry, machines in _tc_machines(topo).items()}
    both = [dict(switch[0], name=md["metadata"]["name"]) for md in mds.values()]
    mark = topo.mark()
    res = topo.run("capi_rollout_restart", namespace=REBASE_NAMESPACE, switches=both, rollout_id="hw-c", wait=True,
                   wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    assert [entry["changed"] for entry in res["objects"]] == [True, True], res["objects"]
    entry = res["objects"][0]
    clone = entry["hold"]["cluster_class"]
    assert entry["hold"] == {"overrides": {}, "template": {"customImage": REBASE_IMAGE}, "cluster_class": clone}
    assert res["objects"][1]["hold"] == entry["hold"]
    assert clone.startswith("lone-") and entry["owner"]["ref"] == f"cluster/{REBASE_NAMESPACE}/tc", entry
    writes = [e for e in topo.writes(mark) if e["objectRef"]["resource"] in ("clusters", "clusterclasses", "dockermachinetemplates")]
    # the clone and its template once, and one Cluster write for both MDs
    assert [(e["verb"], e["objectRef"]["resource"]) for e in writes] == [
        ("create", "dockermachinetemplates"), ("create", "clusterclasses"), ("patch", "clusters")], writes
    assert all("fieldManager=capi-rollout" in e["requestURI"] for e in writes), writes
    # read back: the Cluster on the clone, same namespace and worker classes; both MDs rolled together
    assert _tc_class(topo) == clone
    cloned = topo.get("ClusterClass", clone, REBASE_NAMESPACE)
    assert [w["class"] for w in cloned["spec"]["workers"]["machineDeployments"]] == ["small"]
    written_at = _written_at(topo)
    topo.wait_for("every Machine of md-0 and md-1 replaced", lambda: _tc_rolled(topo, REBASE_IMAGE, before, written_at))
    for md in _tc_mds(topo).values():
        # the template reference is the topology's, on a template it generated
        owners = [f["manager"] for f in md["metadata"]["managedFields"] if "f:infrastructureRef" in json.dumps(f.get("fieldsV1"))]
        assert owners == ["capi-topology"], owners
        template = topo.get("DockerMachineTemplate", md["spec"]["template"]["spec"]["infrastructureRef"]["name"],
                            REBASE_NAMESPACE)
        assert "topology.cluster.x-k8s.io/owned" in template["metadata"]["labels"], template["metadata"]
    again = topo.run("capi_rollout_restart", namespace=REBASE_NAMESPACE, switches=both, rollout_id="hw-c")
    assert not again.failed and again["changed"] is False, again.get("msg")

    before = {entry: set(machines) for entry, machines in _tc_machines(topo).items()}
    mark = topo.mark()
    undone = topo.run("capi_rollout_undo", names=[md["metadata"]["name"] for md in mds.values()], namespace=REBASE_NAMESPACE,
                      undo_rollout_id="hw-c", rollout_id="hw-c-undo", wait=True, wait_timeout=300, stall_timeout=120)
    assert not undone.failed, undone.get("msg")
    for entry in undone["objects"]:
        assert entry["action"] == "rolled_back" and entry["hold"]["cluster_class"] == "lone", entry["message"]
    assert [(e["verb"], e["objectRef"]["resource"]) for e in topo.writes(mark)] == [
        ("patch", "clusters"), ("patch", "machinedeployments"), ("patch", "machinedeployments")]
    for md in _tc_mds(topo).values():
        last = json.loads(md["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])[-1]
        assert last["action"] == "rolled_back" and last["topology_cluster_class"] == [clone, "lone"], last
    assert _tc_class(topo) == "lone" and topo.get("ClusterClass", clone, REBASE_NAMESPACE)
    written_at = _written_at(topo)
    topo.wait_for("every Machine of md-0 and md-1 replaced again", lambda: _tc_rolled(topo, IMAGE, before, written_at))

    # positive control of the check mode above: the clone exists now (the undo keeps it), so the rebase is dry-run
    mark = topo.mark()
    rechecked = topo.run("capi_rollout_restart", namespace=REBASE_NAMESPACE, switches=switch, rollout_id="hw-c2", check=True)
    assert not rechecked.failed and rechecked["changed"] is True, rechecked.get("msg")
    assert "check_mode_note" not in rechecked["objects"][0]["owner"], rechecked["objects"][0]["owner"]
    dry = [(e["verb"], e["objectRef"]["resource"]) for e in topo.dry_runs(mark)]
    assert dry.count(("patch", "clusters")) == probes + 1 and not topo.writes(mark), dry


EXTENSION_CONFIG_CRD = "extensionconfigs.runtime.cluster.x-k8s.io"


@pytest.mark.parametrize("topo", per_fleet(("v1.14",), "topology"), indirect=True)
def test_mds_of_one_cluster_rebased_with_their_triggers_are_one_cluster_write(topo):
    """Path (c) for md-0 and md-1 of Cluster tm (namespace topo-rebase-merge, its ClusterClass lone-m) in one call where CAPI may update
    Machines in place, on v1.14: each MD's Cluster write carries the rebase and its own topology rollout.after, and
    they go as one JSON patch (planned from one read, a second write would fail the first one's test of the class
    and, re-planned on a Cluster already on the clone, lose its trigger). Crafted: the update extension's
    ExtensionConfig (CRD and object, removed at the end), which is how the collection tells that in-place updates are
    possible; this fleet runs without InPlaceUpdates, so CAPI replaces the Machines either way."""
    from capisim.crds import CRD_PATH, install_crds, load_crds
    from capisim.objects import collection_path, in_place_extension_config, object_path

    mds = _tc_mds(topo, MERGE_NS, "tm")
    before = {entry: set(machines) for entry, machines in _tc_machines(topo, MERGE_NS, "tm").items()}
    install_crds(topo.admin, [crd for crd in load_crds(topo.capi_version, in_place=True)
                              if crd["metadata"]["name"] == EXTENSION_CONFIG_CRD])
    config, status = in_place_extension_config()
    created = topo.admin.create(collection_path(config), config)
    try:
        topo.admin.replace_status(object_path(created), dict(created, status=status))
        both = [{"name": md["metadata"]["name"], "template": {"overrides": {"customImage": REBASE_IMAGE}}} for md in mds.values()]
        mark = topo.mark()
        res = topo.run("capi_rollout_restart", namespace=MERGE_NS, switches=both, rollout_id="hw-merge", wait=True,
                       wait_timeout=300, stall_timeout=120)
    finally:
        topo.admin.delete(object_path(created))
        topo.admin.delete(f"{CRD_PATH}/{EXTENSION_CONFIG_CRD}")
    assert not res.failed, res.get("msg")
    assert [(entry["changed"], entry["in_place"]) for entry in res["objects"]] == [(True, "replace")] * 2, res["objects"]
    writes = [(e["verb"], e["objectRef"]["resource"], (e.get("responseStatus") or {}).get("code")) for e in topo.writes(mark)]
    # positive control of the audit log: the clone was created; then one Cluster write, answered 200
    assert ("create", "clusterclasses", 201) in writes, writes
    assert [w for w in writes if w[1] == "clusters"] == [("patch", "clusters", 200)], writes
    # read back: the Cluster on the clone, each MD's entry with the trigger of its own result
    clone = res["objects"][0]["hold"]["cluster_class"]
    assert _tc_class(topo, MERGE_NS, "tm") == clone
    entries = {entry["name"]: entry for entry in topo.get("Cluster", "tm", MERGE_NS)["spec"]["topology"]["workers"]["machineDeployments"]}
    by_md = {md["metadata"]["name"]: name for name, md in mds.items()}
    for entry in res["objects"]:
        assert entries[by_md[entry["name"]]]["rollout"]["after"] == entry["rollout_after"], (entries, entry)
    written_at = _written_at(topo, MERGE_NS, "tm")
    topo.wait_for("every Machine of md-0 and md-1 replaced",
                  lambda: _tc_rolled(topo, REBASE_IMAGE, before, written_at, namespace=MERGE_NS, cluster="tm"))


@pytest.mark.parametrize("topo", per_fleet(("v1.10", "v1.14"), "topology"), indirect=True)
def test_a_failed_wave_with_a_rebased_cluster_undoes_it_by_one_rebase_back(topo, tmp_path):
    """playbooks/hardware_refresh.yml over Cluster tm (namespace topo-rebase-merge): md-0 and md-1 need path (c), so
    the plan makes them one unit in one wave (max_in_flight 1), the wave rebases tm once, a failing after-wave hook
    fails it, and the automatic undo rebases tm back once (one capi_rollout_undo call for the unit) and records the
    undo on both MDs; every Machine is new, on the image from before."""
    from hardware_refresh_support import FAST, run_playbook
    mds = _tc_mds(topo, MERGE_NS, "tm")
    class_before = _tc_class(topo, MERGE_NS, "tm")
    image_before = topo.get("DockerMachineTemplate", mds["md-0"]["spec"]["template"]["spec"]["infrastructureRef"]["name"],
                            MERGE_NS)["spec"]["template"]["spec"]["customImage"]
    machines_before = {entry: set(machines) for entry, machines in _tc_machines(topo, MERGE_NS, "tm").items()}
    hook = tmp_path / "after.yml"
    hook.write_text(FAILING_HOOK, encoding="utf-8")
    mark = topo.mark()
    run = run_playbook(topo.fleet.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="topo-unit", template_overrides={"customImage": "kindest/node:v1.30.4-unit"},
                            namespaces=[MERGE_NS], clusters=["tm"], canary=False, max_in_flight=1, after_wave=str(hook)),
                       tmp_path / "run")
    assert run.rc != 0, run.explain()
    assert run.cluster(topo.host)["result"] == "failed", run.explain()
    reported = [run.obj(topo.host, md["metadata"]["name"]) for md in mds.values()]
    assert reported[0]["wave"] == reported[1]["wave"], reported
    for entry in reported:
        assert entry["result"] == "undone" and entry["undo"]["result"] == "succeeded", entry
    writes = [(e["verb"], e["objectRef"]["resource"]) for e in topo.writes(mark)]
    # one rebase and one rebase back; positive control: the MDs' records were written (switch and undo)
    assert writes.count(("patch", "clusters")) == 2, writes
    assert writes.count(("patch", "machinedeployments")) >= 4, writes
    # read back: tm on its class from before, both MDs recorded as rolled back, every Machine new on the old image
    assert _tc_class(topo, MERGE_NS, "tm") == class_before
    for md in _tc_mds(topo, MERGE_NS, "tm").values():
        last = json.loads(md["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])[-1]
        assert last["action"] == "rolled_back" and last["rollout_id"] == "topo-unit-undo", last
        assert last["topology_cluster_class"][1] == class_before, last
    topo.wait_for("every Machine of md-0 and md-1 new, on the image from before", lambda: _tc_rolled(
        topo, image_before, machines_before, _written_at(topo, MERGE_NS, "tm"), namespace=MERGE_NS, cluster="tm"))


def _tc_kcp(topo):
    return topo.get("KubeadmControlPlane", topo.get("Cluster", "tc", REBASE_NAMESPACE)["spec"]["controlPlaneRef"]["name"],
                    REBASE_NAMESPACE)


def _kcp_image(topo, kcp):
    spec = kcp["spec"]["machineTemplate"]
    ref = spec["infrastructureRef"] if topo.version == "v1beta1" else spec["spec"]["infrastructureRef"]
    return topo.get("DockerMachineTemplate", ref["name"], REBASE_NAMESPACE)["spec"]["template"]["spec"].get("customImage")


@pytest.mark.parametrize("topo", per_fleet(("v1.10", "v1.14"), "topology"), indirect=True)
def test_new_hardware_for_a_control_plane_by_a_class_clone_and_a_rebase(topo):
    """Path (c) for a control plane (the same code on every release: v1beta1 and v1beta2): no variable of "lone" maps
    the control plane's machine template, so tc is rebased onto a clone whose control plane takes a clone of that
    template with the image; the control plane rolls (every control-plane Machine new), the MDs keep their Machines;
    the undo rebases tc back onto "lone", where the MD case starts and ends too."""
    kcp = _tc_kcp(topo)
    name = kcp["metadata"]["name"]
    selector = f"cluster.x-k8s.io/control-plane-name={name}"
    before, workers = set(topo.machines(selector, REBASE_NAMESPACE)), _tc_machines(topo)
    switch = [{"name": name, "template": {"overrides": {"customImage": REBASE_IMAGE}}}]
    res = topo.run("capi_rollout_restart", kind="KubeadmControlPlane", namespace=REBASE_NAMESPACE, switches=switch,
                   rollout_id="hw-c-cp", wait=True, wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    entry = res["objects"][0]
    clone = entry["hold"]["cluster_class"]
    assert clone.startswith("lone-") and _tc_class(topo) == clone, entry
    assert "rolls the control plane of the Cluster" in entry["message"], entry["message"]
    assert _kcp_image(topo, _tc_kcp(topo)) == REBASE_IMAGE
    machines = set(topo.machines(selector, REBASE_NAMESPACE))
    assert machines and not machines & before
    # the MachineDeployments kept their templates and Machines (positive control of "only the control plane")
    assert {k: set(v) for k, v in _tc_machines(topo).items()} == {k: set(v) for k, v in workers.items()}

    before = machines
    undone = topo.run("capi_rollout_undo", kind="KubeadmControlPlane", name=name, namespace=REBASE_NAMESPACE,
                      undo_rollout_id="hw-c-cp", wait=True, wait_timeout=300, stall_timeout=120)
    assert not undone.failed, undone.get("msg")
    assert undone["objects"][0]["hold"]["cluster_class"] == "lone" and _tc_class(topo) == "lone"
    assert _kcp_image(topo, _tc_kcp(topo)) == IMAGE
    machines = set(topo.machines(selector, REBASE_NAMESPACE))
    assert machines and not machines & before


def _newest_revision(topo, name):
    """The newest revision row of the MD's history. The rows above it are changes besides revisions: the topology's
    rotation of the MD's template, made after the switch recorded its change (docs/history-and-undo.md)."""
    rows = topo.run("capi_rollout_info", name=name, history=True)["resources"][0]["history"]
    above = rows[:next(index for index, row in enumerate(rows) if row["revision"] is not None)]
    assert all(row["actor"] == "capi-topology" for row in above), rows
    return next(row for row in rows if row["revision"] is not None)


@pytest.mark.parametrize("topo", [pytest.param("v1.12.3", marks=pytest.mark.xdist_group("in-place")),
                                  pytest.param(IN_PLACE_V114, marks=pytest.mark.xdist_group("topology-in-place-v1.14"))],
                         indirect=True)
def test_a_topology_switch_where_in_place_is_possible_replaces_every_machine_by_default(topo):
    """Issue 28 §1 for topology MDs: the topology rotates only the infrastructure template, which the in-place fleet's
    update extension accepts, so CAPI moves md-0's Machine to the new MachineSet and updates it in place
    (in_place allow, first: the positive control; the refresh plan says so beforehand, and the history after); the
    default (in_place replace) writes the trigger with the change, on v1.12 on the MD itself, from v1.13 in the same
    Cluster write (the topology's rollout.after), and the Machine is replaced. With maxSurge 0 / maxUnavailable 1, set
    here and put back after (with the default maxSurge 1 the one surge Machine already fills a 1-replica MD, so even
    upstream replaces it). Runs last in the module: it leaves the Cluster's workerImage override changed."""
    md = _md(topo)
    name = md["metadata"]["name"]
    rollout = md["spec"].get("rollout")  # none: CAPI's defaults (maxSurge 1, maxUnavailable 0)
    selector = f"cluster.x-k8s.io/deployment-name={name}"
    topo.admin.request("PATCH", topo.path("MachineDeployment", name=name), content_type="application/merge-patch+json",
                       body={"spec": {"rollout": {"strategy": {"type": "RollingUpdate",
                                                               "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}}}})
    try:
        kept = {m["metadata"]["uid"] for m in topo.machines(selector).values()}
        names = set(topo.machines(selector))
        # the refresh plan says beforehand what the switch does with the Machines, as for a plain MD (core.inplace)
        # (run_module: CapiEnv.run would add the env's namespace, which capi_refresh_plan has not)
        preview = {mode: run_module(topo.fleet.inventory, topo.host, "capi_refresh_plan", {
            "namespaces": [topo.namespace], "refresh_id": f"preview-{mode}", "in_place": mode,
            "templates": {"overrides": {"customImage": "kindest/node:v1.30.4-ip"}}}, check=True, kubeconfig="{{ capi_kubeconfig }}")
            for mode in ("allow", "replace")}
        for mode, planned in preview.items():
            assert not planned.failed, planned.get("msg")
            (planned_md,) = [obj for obj in planned["plan"]["objects"] if obj["ref"] == _ref(topo, "machinedeployment", name)]
            assert planned_md["action"] == "switch" and planned_md["in_place"] == mode, planned_md
            assert "through its Cluster topology (variable override)" in planned_md["notes"][0], planned_md["notes"]
            assert ("may update its Machines in place" if mode == "allow" else "its Machines are replaced") in \
                " ".join(planned_md["notes"]), planned_md["notes"]
        allowed = topo.run("capi_rollout_restart", in_place="allow", wait=True, wait_timeout=300, stall_timeout=120,
                           switches=[{"name": name, "template": {"overrides": {"customImage": "kindest/node:v1.30.4-ip"}}}])
        assert not allowed.failed, allowed.get("msg")
        assert kept and {m["metadata"]["uid"] for m in topo.machines(selector).values()} == kept
        assert allowed["objects"][0]["machines"] == {"replaced": 0, "updated_in_place": 1}
        assert allowed["objects"][0].get("in_place") == "allow"
        # read back: the same Machines (by name), now made from the template the topology generated for the change
        current = _md(topo)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
        assert topo.get("DockerMachineTemplate", current)["spec"]["template"]["spec"]["customImage"] == "kindest/node:v1.30.4-ip"
        moved = topo.machines(selector)
        assert set(moved) == names and all(
            m["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"] == current for m in moved.values()), moved
        # the history says how the Machines changed - updated in place, not replaced - and names the topology change
        newest = _newest_revision(topo, name)
        assert newest["cause"] == "in-place update" and newest["machines"] == "1 updated in place", newest
        (full,) = topo.run("capi_rollout_info", name=name, revision=newest["revision"])["resources"][0]["history"]
        assert "variables.overrides: workerImage=kindest/node:v1.30.4-ip" in full["record"]["topology"], full["record"]

        switch = [{"name": name, "template": {"overrides": {"customImage": "kindest/node:v1.30.4-ip2"}}}]
        mark = topo.mark()
        checked = topo.run("capi_rollout_restart", switches=switch, check=True, diff=True)
        assert not checked.failed and not topo.writes(mark), checked.get("msg")
        # the trigger: in the Cluster write from v1.13 (the entry's rollout.after), on the MD's own field before
        written = checked["objects"][0]["owner"]["patch"] if _through_topology(topo) else checked["objects"][0]["patch"]
        trigger = checked["objects"][0]["rollout_after"]
        assert trigger and trigger in json.dumps([op for op in written if op["op"] != "test"]), written
        assert trigger in json.dumps(checked["diff"]), checked["diff"]

        res = topo.run("capi_rollout_restart", switches=switch, wait=True, wait_timeout=300, stall_timeout=120)
        assert not res.failed, res.get("msg")
        (entry,) = res["objects"]
        after = {m["metadata"]["uid"] for m in topo.machines(selector).values()}
        assert after and not after & kept  # every Machine new
        assert entry["machines"] == {"replaced": 1, "updated_in_place": 0}
        assert entry.get("in_place") == "replace", entry
        if _through_topology(topo):
            # one Cluster write: the override and the trigger, which the topology copies into the MD
            assert entry["owner"]["ref"] == _ref(topo, "cluster", "tr") and "before v1.13" not in entry["message"], entry
            assert _topology_after(topo, 0) == entry["rollout_after"] == _own_after(topo, _md(topo))
        else:
            assert "before v1.13" in entry["message"] and _own_after(topo, _md(topo)) == entry["rollout_after"], entry
        newest = _newest_revision(topo, name)
        assert newest["cause"] == "template" and newest["machines"] == "1 replaced", newest
    finally:
        topo.admin.request("PATCH", topo.path("MachineDeployment", name=name), content_type="application/merge-patch+json",
                           body={"spec": {"rollout": rollout}})
