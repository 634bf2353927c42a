# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import inplace
from ansible_collections.capi.rollout.plugins.module_utils.core import refresh


def entry(name, cluster="c1", kind="MachineDeployment", namespace="default", template=None, version="v1.30.4",
          complete=True, paused=False, topology=False, last=None, strategy="RollingUpdate", pending=False, replicas=2,
          bootstrap="KubeadmConfigTemplate"):
    short = "machinedeployment" if kind == "MachineDeployment" else "kubeadmcontrolplane"
    return {
        "kind": kind, "namespace": namespace, "name": name, "cluster": cluster, "ref": f"{short}/{namespace}/{name}",
        "replicas": {"desired": replicas}, "paused": paused, "paused_reasons": ["spec.paused is true"] if paused else [],
        "topology_owned": topology, "last_rollout": last,
        "rollout": {"complete": complete, "message": f"{name} {'done' if complete else 'rolling'}", "pending": pending,
                    "after": "2026-12-01T00:00:00Z" if pending else None, "strategy": {"type": strategy}},
        "template": {"version": version,
                     "infrastructure_ref": {"api_group": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate",
                                            "name": template or f"{name}-old"},
                     "bootstrap_ref": {"kind": bootstrap} if kind == "MachineDeployment" else None},
    }


def clone(obj, name=None, cloned_from=None, ok=True, msg=None):
    target = {"api_group": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": name or f"{obj['name']}-new"}
    annotations = {"rollout.capi-rollout.dev/cloned-from": f"DockerMachineTemplate/{cloned_from}"} if cloned_from else {}
    return {obj["ref"]: {"ok": ok, "msg": msg, "infrastructure_ref": target if ok else None,
                         "template": {"metadata": {"annotations": annotations}}}}


def plan_one(obj, clones=None, **kwargs):
    clones = clone(obj) if clones is None else clones
    (out,) = refresh.plan([obj], clones, refresh_id="hw-1", **kwargs)
    return out


# ----- selection


def test_select_everything_by_default():
    mds = [entry("a-md-0", "a"), entry("b-md-0", "b")]
    cps = [entry("a-cp", "a", kind="KubeadmControlPlane")]
    assert [e["name"] for e in refresh.select_objects(mds, cps)] == ["a-md-0", "b-md-0"]
    assert [e["name"] for e in refresh.select_objects(mds, cps, control_plane=True)] == ["a-cp", "a-md-0", "b-md-0"]
    assert [e["name"] for e in refresh.select_objects(mds, cps, control_plane=True, workers=False)] == ["a-cp"]


def test_select_by_cluster_and_name():
    mds = [entry("a-md-0", "a"), entry("a-md-1", "a"), entry("b-md-0", "b", namespace="nb")]
    cps = [entry("a-cp", "a", kind="KubeadmControlPlane"), entry("b-cp", "b", kind="KubeadmControlPlane", namespace="nb")]
    assert [e["name"] for e in refresh.select_objects(mds, cps, clusters=["b"], control_plane=True)] == ["b-cp", "b-md-0"]
    got = refresh.select_objects(mds, cps, names=["a-md-1", "nb/b-md-0"], control_plane=True)
    assert [e["name"] for e in got] == ["a-cp", "b-cp", "a-md-1", "b-md-0"]
    # narrowed by a label selector: only the control planes of the clusters of the MachineDeployments read
    got = refresh.select_objects(mds[:1], cps, control_plane=True, narrowed=True)
    assert [e["name"] for e in got] == ["a-cp", "a-md-0"]


# ----- plan


def test_healthy_object_is_switched():
    obj = plan_one(entry("a-md-0"))
    assert obj["action"] == "switch" and obj["result"] == "pending" and obj["blockers"] == []
    assert obj["before"]["infrastructure_ref"] == {"kind": "DockerMachineTemplate", "name": "a-md-0-old"}
    assert obj["after"]["infrastructure_ref"] == {"kind": "DockerMachineTemplate", "name": "a-md-0-new"}
    assert obj["target_ref"]["api_group"] == "infrastructure.cluster.x-k8s.io"
    assert obj["replicas"] == 2 and obj["resume"] is False


def test_check_mode_plans():
    obj = plan_one(entry("a-md-0"), mode="check")
    assert obj["result"] == "planned"


@pytest.mark.parametrize("kwargs, text", [
    ({"paused": True}, "paused: spec.paused is true"),
    ({"topology": True}, "managed by a Cluster topology"),
    ({"complete": False}, "not healthy or already rolling out: a-md-0 rolling"),
    ({"strategy": "OnDelete"}, "strategy OnDelete"),
    ({"pending": True}, "a rollout is already scheduled for 2026-12-01T00:00:00Z"),
])
def test_blockers(kwargs, text):
    obj = plan_one(entry("a-md-0", **kwargs))
    assert obj["action"] == "skip" and obj["result"] == "skipped"
    assert any(text in b for b in obj["blockers"]), obj["blockers"]


def test_an_on_delete_pool_is_switched_with_on_delete_replace_and_blocked_by_default():
    pool = entry("a-md-0", strategy="OnDelete")
    assert "refresh with on_delete=replace" in plan_one(pool)["blockers"][0]
    assert plan_one(pool, on_delete="skip")["action"] == "skip"
    got = plan_one(pool, on_delete="replace")
    assert got["action"] == "switch" and got["blockers"] == []


def test_a_clone_that_cannot_be_planned_blocks():
    obj = entry("a-md-0")
    got = plan_one(obj, clones=clone(obj, ok=False, msg="source template missing"))
    assert got["blockers"] == ["target template: source template missing"]


def test_version_skew_against_the_control_plane_blocks():
    cp = entry("c1-cp", kind="KubeadmControlPlane", version="v1.29.0")
    got = refresh.plan([entry("a-md-0", version="v1.30.4")], clone(entry("a-md-0")), control_planes=[cp], refresh_id="x")[0]
    assert any(b.startswith("version skew: ") and "newer minor" in b for b in got["blockers"])


def test_already_on_target_and_complete_is_unchanged():
    obj = entry("a-md-0", template="a-md-0-new", last={"id": "hw-1", "at": "2026-11-30T06:00:00Z", "action": "restarted"})
    got = plan_one(obj, clones=clone(obj, cloned_from="a-md-0-old"))
    assert got["action"] == "unchanged" and got["result"] == "succeeded"
    assert got["before"]["infrastructure_ref"]["name"] == "a-md-0-old"  # from the clone's cloned-from annotation
    assert got["started"] == "2026-11-30T06:00:00Z"


def test_switched_by_this_refresh_and_still_rolling_is_resumed():
    obj = entry("a-md-0", template="a-md-0-new", complete=False, last={"id": "hw-1", "at": "2026-11-30T06:00:00Z"})
    got = plan_one(obj)
    assert got["action"] == "switch" and got["resume"] is True and got["blockers"] == []
    assert got["started"] == "2026-11-30T06:00:00Z"


def test_recorded_by_this_refresh_but_off_target_is_switched_again():
    """Drift: this refresh switched it, then someone switched it back (or the overrides changed): the rerun
    switches it again and says so, instead of reporting it done."""
    obj = entry("a-md-0", template="a-md-0-old", last={"id": "hw-1", "at": "2026-11-30T06:00:00Z", "action": "restarted"})
    got = plan_one(obj)
    assert got["action"] == "switch" and got["result"] == "pending" and got["resume"] is False
    assert got["after"]["infrastructure_ref"]["name"] == "a-md-0-new"
    assert got["notes"] == ["switched by this refresh at 2026-11-30T06:00:00Z, but its template is now "
                            "DockerMachineTemplate a-md-0-old: switching again"]


def test_rolling_out_for_someone_else_on_target_template_blocks():
    obj = entry("a-md-0", template="a-md-0-new", complete=False, last={"id": "other"})
    assert plan_one(obj)["action"] == "skip"


def test_undone_by_this_refresh_is_skipped_without_blockers():
    obj = entry("a-md-0", last={"id": "hw-1-undo", "at": "2026-11-30T07:00:00Z"})
    got = plan_one(obj)
    assert got["action"] == "skip" and got["blockers"] == [] and "undo" in got["notes"][0]


def test_restart_plans_without_clones():
    obj = entry("a-md-0", topology=True)
    got = refresh.plan([obj], {}, refresh_id="r-1", restart=True)[0]
    assert got["action"] == "switch" and got["blockers"] == [] and got["restart"] is True
    assert got["after"]["infrastructure_ref"]["name"] == "a-md-0-old"
    done = entry("a-md-0", last={"id": "r-1", "at": "2026-11-30T06:00:00Z"})
    assert refresh.plan([done], {}, refresh_id="r-1", restart=True)[0]["action"] == "unchanged"


def test_clone_outcomes_from_loop_results():
    results = [
        {"item": {"ref": "machinedeployment/default/a"}, "failed": False,
         "infrastructure_ref": {"name": "a-new"}, "template": {}},
        {"item": {"ref": "machinedeployment/default/b"}, "failed": True, "msg": "no"},
        {"item": "junk"}, "junk",
    ]
    got = refresh.clone_outcomes(results)
    assert got["machinedeployment/default/a"]["ok"] is True
    assert got["machinedeployment/default/b"] == {"ok": False, "msg": "no", "infrastructure_ref": None, "template": None}
    assert len(got) == 2


# ----- waves


def test_plan_waves_control_planes_first_then_canary():
    objs = refresh.plan([entry("a-cp", "a", kind="KubeadmControlPlane"), entry("b-cp", "b", kind="KubeadmControlPlane"),
                         entry("a-md-0", "a"), entry("b-md-0", "b"), entry("a-md-1", "a"), entry("x-md-0", "x", paused=True)],
                        dict(item for o in ("a-cp", "b-cp", "a-md-0", "b-md-0", "a-md-1", "x-md-0")
                             for item in clone(entry(o, kind="KubeadmControlPlane" if o.endswith("cp") else "MachineDeployment")).items()),
                        refresh_id="hw-1")
    waves = refresh.plan_waves(objs, max_in_flight=2, canary=True)
    assert [(w["index"], w["name"], w["kind"]) for w in waves] == [
        (0, "control-plane-1", "KubeadmControlPlane"), (1, "canary", "MachineDeployment"), (2, "wave-1", "MachineDeployment")]
    assert waves[0]["objects"] == ["kubeadmcontrolplane/default/a-cp", "kubeadmcontrolplane/default/b-cp"]
    assert waves[1]["objects"] == ["machinedeployment/default/a-md-0"]
    assert waves[2]["objects"] == ["machinedeployment/default/b-md-0", "machinedeployment/default/a-md-1"]
    by_name = {o["name"]: o for o in objs}
    assert by_name["a-md-1"]["wave"] == 2 and by_name["a-md-1"]["wave_name"] == "wave-1"
    assert by_name["x-md-0"]["wave"] is None


def test_refresh_plan_is_the_objects_their_waves_and_the_blocked_ones():
    mds = [entry("a-md-0", "a"), entry("b-md-0", "b"), entry("x-md-0", "x", paused=True)]
    clones = dict(item for md in mds for item in clone(md).items())
    got = refresh.refresh_plan(mds, clones, refresh_id="hw-1", mode="check", max_in_flight="50%", canary=True)
    assert [obj["name"] for obj in got["objects"]] == ["a-md-0", "b-md-0", "x-md-0"]
    assert [obj["result"] for obj in got["objects"]] == ["planned", "planned", "skipped"]
    assert [(wave["name"], wave["objects"]) for wave in got["waves"]] == \
        [("canary", ["machinedeployment/default/a-md-0"]), ("wave-1", ["machinedeployment/default/b-md-0"])]
    assert [obj["name"] for obj in got["blocked"]] == ["x-md-0"]
    assert refresh.refresh_plan(mds, clones, refresh_id="hw-1")["objects"][0]["result"] == "pending"
    with pytest.raises(ValueError, match="max_in_flight must be at least 1"):
        refresh.refresh_plan(mds, clones, refresh_id="hw-1", max_in_flight=0)


def test_wave_size():
    assert refresh.wave_size("25%", 10) == 3
    assert refresh.wave_size(4, 2) == 4
    with pytest.raises(ValueError):
        refresh.wave_size("0", 3)
    with pytest.raises(ValueError):
        refresh.wave_size(False, 3)


# ----- the settings of each new template

def test_clone_settings_merge_global_cluster_name_and_namespaced_name_in_that_order():
    obj = entry("gpu", cluster="edge-1", namespace="team-a")
    settings = refresh.clone_settings(
        obj, overrides={"instanceType": "m6i.xlarge", "rootVolume": {"size": 80, "type": "gp3"}, "sshKeyName": "k"},
        labels={"hw": "2026"}, annotations={"a": "1"},
        object_templates={"cluster:edge-1": {"overrides": {"rootVolume": {"size": 100}}, "labels": {"site": "edge"}},
                          "gpu": {"overrides": {"instanceType": "g5.xlarge"}},
                          "team-a/gpu": {"overrides": {"sshKeyName": None}, "annotations": {"a": "2"}},
                          "other": {"overrides": {"instanceType": "never"}}})
    assert settings["overrides"] == {"instanceType": "g5.xlarge", "rootVolume": {"size": 100, "type": "gp3"}, "sshKeyName": None}
    assert settings["labels"] == {"hw": "2026", "site": "edge"} and settings["annotations"] == {"a": "2"}
    assert settings["warnings"] == []


def test_clone_settings_note_an_image_of_another_kubernetes_version():
    obj = entry("md-0", version="v1.30.4")
    (warning,) = refresh.clone_settings(obj, overrides={"customImage": "kindest/node:v1.31.0"})["warnings"]
    assert "Kubernetes v1.31.0" in warning and "machinedeployment/default/md-0 runs v1.30.4" in warning
    assert refresh.clone_settings(obj, overrides={"customImage": "kindest/node:v1.30.4"})["warnings"] == []
    assert refresh.clone_settings(obj, overrides={"ami": {"id": "ami-0abc"}, "size": "10.1.2.3"})["warnings"] == []
    # the plan carries the note to the report
    plan = plan_one(dict(obj, clone=refresh.clone_settings(obj, overrides={"customImage": "kindest/node:v1.31.0"})))
    assert any("Kubernetes v1.31.0" in note for note in plan["notes"])


def test_clone_outcomes_from_one_call_with_objects():
    results = [{"ref": "machinedeployment/default/a", "failed": False, "infrastructure_ref": {"name": "a-new"}, "template": {}},
               {"ref": "machinedeployment/default/b", "failed": True, "msg": "pruned: instanceTyp"}]
    got = refresh.clone_outcomes(results)
    assert got["machinedeployment/default/a"]["ok"] is True
    assert got["machinedeployment/default/b"] == {"ok": False, "msg": "pruned: instanceTyp", "infrastructure_ref": None,
                                                  "template": None}


# ----- field owners (core.owners): the plan table shows the refusal a write would meet

FLUX_OWNED = {"infrastructure_ref": [{"manager": "kustomize-controller", "field": "spec.template.spec.infrastructureRef",
                                      "source": "managedFields (Apply)", "time": "2026-11-30T05:00:00Z",
                                      "next_step": "change it in Git (the reconciler applies it from there)"}]}


def test_a_template_reference_git_owns_blocks_the_switch_names_the_owner_and_what_to_do():
    obj = dict(entry("a-md-0"), field_owners=FLUX_OWNED)
    got = plan_one(obj)
    assert got["action"] == "skip" and got["blockers"] == [
        "field owner: spec.template.spec.infrastructureRef is owned by kustomize-controller (managedFields (Apply)); "
        "change it in Git (the reconciler applies it from there)"]
    warned = plan_one(obj, field_owners="warn")
    assert warned["action"] == "switch" and "switched anyway (field_owners=warn)" in warned["notes"][0]
    assert plan_one(obj, field_owners="ignore")["notes"] == []
    # a restart writes the trigger, which Git does not hold here
    assert refresh.plan([obj], {}, refresh_id="r-1", restart=True)[0]["blockers"] == []


def test_a_rerun_does_not_switch_again_while_the_owner_holds_the_template_reference():
    """This refresh switched it, the reconciler put Git's template back: no second switch to fight it."""
    obj = dict(entry("a-md-0", last={"id": "hw-1", "at": "2026-11-30T06:00:00Z", "action": "restarted"}),
               field_owners=FLUX_OWNED)
    got = plan_one(obj)
    assert got["action"] == "skip" and "kustomize-controller" in got["blockers"][0]


def test_a_pool_with_a_remediation_in_flight_is_blocked_and_its_coverage_kept():
    found = {"health_checks": [{"name": "workers", "limits": {"maxUnhealthy": "40%"}, "paused": False}],
             "in_flight": [{"machine": "m-1", "condition": "OwnerRemediated", "reason": "WaitingForRemediation", "message": ""}],
             "skipped": []}
    healthy = dict(found, in_flight=[])
    busy, calm = entry("md-0"), entry("md-1")
    busy["health"], calm["health"] = found, healthy
    objects = refresh.plan([busy, calm], dict(clone(busy), **clone(calm)), refresh_id="hw-1")
    assert objects[0]["action"] == "skip" and objects[0]["blockers"] == [
        "remediation in flight: Machine m-1 (OwnerRemediated False: WaitingForRemediation); wait until its owner has "
        "replaced it (the Machine gone or the condition True), then re-run"]
    assert objects[1]["action"] == "switch" and objects[1]["health"] == healthy


def _through_topology(obj, held=False, ok=True):
    hold = {"overrides": {"workerImage": "img:2"}, "template": {"customImage": "img:2"}}
    topo = {"path": "variable override", "why": "ClusterClass quick-start patches variable workerImage onto ...",
            "change": "cluster/default/c1 spec.topology.workers.machineDeployments[md-0].variables.overrides: workerImage=img:2",
            "held": held, "hold": hold} if ok else None
    return {obj["ref"]: {"ok": ok, "msg": None if ok else "no variable of ClusterClass quick-start is patched onto x",
                         "infrastructure_ref": None, "topology": topo}}


def test_a_topology_md_a_path_covers_is_switched_through_its_cluster_and_waits_on_the_change():
    obj = entry("a-md-0", topology=True)
    got = refresh.plan([obj], _through_topology(obj), refresh_id="r-1")[0]
    assert got["action"] == "switch" and got["blockers"] == []
    assert got["wait"] == {"kind": "MachineDeployment", "namespace": "default", "name": "a-md-0",
                           "topology": {"overrides": {"workerImage": "img:2"}, "template": {"customImage": "img:2"}}}
    assert "through its Cluster topology (variable override)" in got["notes"][0] and "workerImage" in got["notes"][0]
    # positive control: the same object without a topology plan is still blocked
    assert refresh.plan([obj], {}, refresh_id="r-1")[0]["blockers"][0].startswith("managed by a Cluster topology")
    # one the class cannot change is blocked saying why
    blocked = refresh.plan([obj], _through_topology(obj, ok=False), refresh_id="r-1")[0]
    assert blocked["action"] == "skip" and blocked["blockers"] == [
        "target template: no variable of ClusterClass quick-start is patched onto x"]


def test_a_topology_md_whose_cluster_holds_the_change_is_done_or_resumed():
    ours = {"id": "r-1", "at": "2026-11-30T06:00:00Z"}
    done = refresh.plan([entry("a-md-0", topology=True, last=ours)],
                        _through_topology(entry("a-md-0"), held=True), refresh_id="r-1")[0]
    assert done["action"] == "unchanged" and "workerImage=img:2" in done["notes"][0]
    rolling = refresh.plan([entry("a-md-0", topology=True, last=ours, complete=False)],
                           _through_topology(entry("a-md-0"), held=True), refresh_id="r-1")[0]
    assert rolling["action"] == "switch" and rolling["resume"] is True and "topology" in rolling["wait"]


def _rebased(obj, cluster_class="bare-1a2b3c4d"):
    """The outcome of path (c) for ``obj``: a rebase of its Cluster onto ``cluster_class``."""
    outcome = _through_topology(obj)
    outcome[obj["ref"]]["topology"] = dict(outcome[obj["ref"]]["topology"], path="ClusterClass rebase", hold={
        "overrides": {}, "template": {"extra": 1}, "cluster_class": cluster_class})
    return outcome


def test_the_mds_of_one_rebased_cluster_are_one_unit_in_one_wave():
    a0, a1, b0, c0 = (entry("a-md-0", "a", topology=True), entry("a-md-1", "a", topology=True),
                      entry("b-md-0", "b", topology=True), entry("c-md-0", "c"))
    outcomes = dict(_rebased(a0), **_rebased(a1), **_rebased(b0), **clone(c0))
    plan = refresh.refresh_plan([a0, b0, a1, c0], outcomes, refresh_id="r-1", max_in_flight=1, canary=True)
    assert [wave["objects"] for wave in plan["waves"]] == [
        [a0["ref"], a1["ref"]], [b0["ref"]], [c0["ref"]]]
    assert [wave["name"] for wave in plan["waves"]] == ["canary", "wave-1", "wave-2"]
    units = {obj["ref"]: obj.get("unit") for obj in plan["objects"]}
    assert units[a0["ref"]] == units[a1["ref"]] == "cluster/default/a onto bare-1a2b3c4d" and units[c0["ref"]] is None
    # positive control: without the rebase the same objects are three units
    plain = refresh.refresh_plan([a0, b0, a1], dict(_through_topology(a0), **_through_topology(a1), **_through_topology(b0)),
                                 refresh_id="r-1", max_in_flight=1)
    assert [len(wave["objects"]) for wave in plain["waves"]] == [1, 1, 1]


@pytest.mark.parametrize("mode, said", [(None, None), ("replace", "its Machines are replaced"),
                                        ("allow", "CAPI may update its Machines in place")])
def test_a_switch_says_what_happens_to_its_machines_plain_or_through_its_cluster_topology(mode, said):
    """The preview of core.inplace (the rule capi_rollout_restart writes by) on every switch: a plain MD, a topology MD
    by a variable override (path (a)) or a rebase (path (c)), and a control plane."""
    plain, topo, rebased, cp = (entry("a-md-0"), entry("b-md-0", topology=True), entry("c-md-0", "c", topology=True),
                                entry("a-cp", kind="KubeadmControlPlane"))
    outcomes = dict(clone(plain), **_through_topology(topo), **_rebased(rebased), **clone(cp))
    objects = refresh.plan([cp, plain, topo, rebased], outcomes, refresh_id="r-1", in_place=mode)
    assert [obj["action"] for obj in objects] == ["switch"] * 4
    for obj in objects:
        assert obj["in_place"] == mode
        notes = [note for note in obj["notes"] if "Machines" in note]
        assert notes == ([] if said is None else [inplace.outlook(mode)]) and (said is None or said in notes[0]), obj
    # a restart replaces every Machine, whatever the mode; a resumed switch says nothing again
    restarted = refresh.plan([plain], {}, refresh_id="r-1", restart=True, in_place=mode)[0]
    assert restarted["in_place"] is None and not [note for note in restarted["notes"] if "Machines" in note]
    ours = {"id": "r-1", "at": "2026-11-30T06:00:00Z"}
    resumed = refresh.plan([entry("b-md-0", topology=True, last=ours, complete=False)],
                           _through_topology(topo, held=True), refresh_id="r-1", in_place=mode)[0]
    assert resumed["resume"] and not [note for note in resumed["notes"] if "in place" in note]


def test_a_rebase_not_dry_run_says_so_in_the_notes():
    obj = entry("a-md-0", "a", topology=True)
    outcome = _rebased(obj)
    outcome[obj["ref"]]["topology"]["unchecked"] = "cluster/default/a: the rebase onto ClusterClass bare-1a2b3c4d was not sent"
    got = refresh.plan([obj], outcome, refresh_id="r-1")[0]
    assert got["action"] == "switch" and got["notes"][1] == outcome[obj["ref"]]["topology"]["unchecked"]
    # positive control: a rebase that was dry-run has no such note
    assert len(refresh.plan([obj], _rebased(obj), refresh_id="r-1")[0]["notes"]) == 1
