# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import topology
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

MD_REF = "machinedeployment/default/shop-md-1-abcde"
KCP_REF = "kubeadmcontrolplane/default/shop-xyzab"


def _cluster(control_plane=True):
    topo = {"classRef": {"name": "quick-start"}, "version": "v1.30.4",
            "workers": {"machineDeployments": [
                {"name": "md-0", "class": "default-worker", "replicas": 2},
                {"name": "md-1", "class": "default-worker", "replicas": 1,
                 "variables": {"overrides": [{"name": "other", "value": 1},
                                             {"name": "workerImage", "value": "kindest/node:v1.30.4-custom"}]}}]}}
    if control_plane:
        topo["controlPlane"] = {"replicas": 1}
    return {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "shop", "namespace": "default"}, "spec": {"topology": topo}}


def _md(topology_name="md-1"):
    return {"kind": "MachineDeployment", "metadata": {"name": "shop-md-1-abcde", "namespace": "default", "labels": {
        "topology.cluster.x-k8s.io/owned": "", "topology.cluster.x-k8s.io/deployment-name": topology_name}}}


def _kcp():
    return {"kind": "KubeadmControlPlane", "metadata": {"name": "shop-xyzab", "namespace": "default",
                                                        "labels": {"topology.cluster.x-k8s.io/owned": ""}}}


CLASS = {"spec": {"patches": [{"name": "worker-image", "definitions": [{
    "selector": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate",
                 "matchResources": {"machineDeploymentClass": {"names": ["default-worker"]}}},
    "jsonPatches": [{"op": "add", "path": "/spec/template/spec/customImage", "valueFrom": {"variable": "workerImage"}}]}]}]}}


def test_manages_needs_the_label_and_a_cluster_topology():
    assert topology.manages(_md(), _cluster())
    assert not topology.manages(_md(), {"spec": {}})
    plain = _md()
    plain["metadata"]["labels"] = {}
    assert not topology.manages(plain, _cluster())


def test_rollout_after_of_an_md_is_written_in_its_own_entry_found_by_label():
    cluster = _cluster()
    owner = topology.plan_rollout_after(cluster, _md(), "MachineDeployment", MD_REF, "2026-12-04T08:00:00Z")
    assert owner["ref"] == "cluster/default/shop"
    # the index is tested to still be this MD's entry: a reordered list fails the write
    assert owner["patch"][0] == {"op": "test", "path": "/spec/topology/workers/machineDeployments/1/name", "value": "md-1"}
    written = objs.apply_json_patch(cluster, owner["patch"])
    assert written["spec"]["topology"]["workers"]["machineDeployments"][1]["rollout"] == {"after": "2026-12-04T08:00:00Z"}
    assert "rollout" not in written["spec"]["topology"]["workers"]["machineDeployments"][0]
    assert owner["changes"] == [{"path": "spec.topology.workers.machineDeployments[md-1].rollout.after",
                                 "before": None, "after": "2026-12-04T08:00:00Z"}]
    reordered = copy.deepcopy(cluster)
    reordered["spec"]["topology"]["workers"]["machineDeployments"].reverse()
    with pytest.raises(objs.TestFailed):
        objs.apply_json_patch(reordered, owner["patch"])


def test_rollout_after_already_set_plans_nothing_and_a_changed_value_fails_the_test():
    cluster = _cluster()
    cluster["spec"]["topology"]["controlPlane"]["rollout"] = {"after": "2026-12-04T08:00:00Z"}
    assert topology.plan_rollout_after(cluster, _kcp(), "KubeadmControlPlane", KCP_REF, "2026-12-04T08:00:00Z") is None
    owner = topology.plan_rollout_after(cluster, _kcp(), "KubeadmControlPlane", KCP_REF, "2026-12-04T09:00:00Z")
    assert objs.apply_json_patch(cluster, owner["patch"])["spec"]["topology"]["controlPlane"]["rollout"]["after"] == \
        "2026-12-04T09:00:00Z"
    moved = copy.deepcopy(cluster)
    moved["spec"]["topology"]["controlPlane"]["rollout"]["after"] = "2026-12-04T08:30:00Z"
    with pytest.raises(objs.TestFailed):
        objs.apply_json_patch(moved, owner["patch"])


def test_control_plane_rollout_after_without_a_control_plane_entry_adds_it():
    cluster = _cluster(control_plane=False)
    owner = topology.plan_rollout_after(cluster, _kcp(), "KubeadmControlPlane", KCP_REF, "2026-12-04T08:00:00Z")
    written = objs.apply_json_patch(cluster, owner["patch"])
    assert written["spec"]["topology"]["controlPlane"] == {"rollout": {"after": "2026-12-04T08:00:00Z"}}


def test_an_md_without_a_topology_entry_is_refused_by_name():
    with pytest.raises(RolloutError) as err:
        topology.plan_rollout_after(_cluster(), _md("md-9"), "MachineDeployment", MD_REF, "2026-12-04T08:00:00Z")
    assert err.value.reason == "topology_entry_missing"
    assert "'md-9'" in err.value.msg and "cluster/default/shop" in err.value.msg and "md-0" in err.value.msg


def test_mapping_variable_follows_the_class_patch_selector():
    pointer = "/spec/template/spec/customImage"
    assert topology.mapping_variable(CLASS, "default-worker", "DockerMachineTemplate", pointer) == "workerImage"
    assert topology.mapping_variable(CLASS, "large-worker", "DockerMachineTemplate", pointer) is None
    assert topology.mapping_variable(CLASS, "default-worker", "DockerMachineTemplate", "/spec/template/spec/other") is None
    assert topology.mapping_variable(CLASS, "default-worker", "KubeadmConfigTemplate", pointer) is None


def test_override_replaces_only_its_variable_and_removing_it_restores_the_rest():
    cluster = _cluster()
    owner = topology.plan_override(cluster, _md(), MD_REF, "workerImage", "kindest/node:v1.31.0")
    written = objs.apply_json_patch(cluster, owner["patch"])
    overrides = written["spec"]["topology"]["workers"]["machineDeployments"][1]["variables"]["overrides"]
    assert overrides == [{"name": "other", "value": 1}, {"name": "workerImage", "value": "kindest/node:v1.31.0"}]
    assert topology.override_of(written, _md(), MD_REF, "workerImage") == "kindest/node:v1.31.0"
    assert topology.plan_override(written, _md(), MD_REF, "workerImage", "kindest/node:v1.31.0") is None
    removed = objs.apply_json_patch(written, topology.plan_override(written, _md(), MD_REF, "workerImage", None)["patch"])
    assert removed["spec"]["topology"]["workers"]["machineDeployments"][1]["variables"]["overrides"] == \
        [{"name": "other", "value": 1}]
    # an override someone else changed meanwhile fails the write
    with pytest.raises(objs.TestFailed):
        objs.apply_json_patch(removed, owner["patch"])


def test_first_override_of_an_md_adds_the_variables_member():
    cluster = _cluster()
    md0 = _md("md-0")
    owner = topology.plan_override(cluster, md0, MD_REF, "workerImage", "kindest/node:v1.31.0")
    written = objs.apply_json_patch(cluster, owner["patch"])
    assert written["spec"]["topology"]["workers"]["machineDeployments"][0]["variables"] == {
        "overrides": [{"name": "workerImage", "value": "kindest/node:v1.31.0"}]}
    # removing the last override removes the variables member too (v1beta2 refuses an empty one)
    removed = objs.apply_json_patch(written, topology.plan_override(written, md0, MD_REF, "workerImage", None)["patch"])
    assert "variables" not in removed["spec"]["topology"]["workers"]["machineDeployments"][0]
    assert topology.worker_class_of(cluster, md0, MD_REF) == "default-worker"


def test_variables_for_maps_every_leaf_or_names_the_unmapped_ones():
    values, why = topology.variables_for(CLASS, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                                         {"customImage": "kindest/node:v1.31.0"})
    assert values == {"workerImage": "kindest/node:v1.31.0"}
    assert "variable workerImage" in why and "default-worker" in why
    with pytest.raises(RolloutError) as err:
        topology.variables_for(CLASS, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                               {"customImage": "x", "extra": {"a/b": 1}})
    assert err.value.reason == "topology_no_variable"
    assert "/spec/template/spec/extra/a~1b" in err.value.msg and "customImage" not in err.value.msg


def test_plan_overrides_sets_several_and_names_them():
    owner = topology.plan_overrides(_cluster(), _md("md-0"), MD_REF, {"b": 2, "a": 1})
    written = objs.apply_json_patch(_cluster(), owner["patch"])
    assert written["spec"]["topology"]["workers"]["machineDeployments"][0]["variables"]["overrides"] == [
        {"name": "a", "value": 1}, {"name": "b", "value": 2}]
    assert owner["message"].endswith("machineDeployments[md-0].variables.overrides: a=1, b=2")


def test_template_lacks_names_each_value_the_template_does_not_carry():
    template = {"spec": {"template": {"spec": {"customImage": "img:old", "extra": {"a": 1}}}}}
    assert topology.template_lacks(template, {"customImage": "img:new", "extra": {"a": 1}}) == \
        [("/spec/template/spec/customImage", "img:new", "img:old")]
    assert topology.template_lacks(template, {"customImage": "img:old"}) == []
    assert topology.template_lacks({}, {"customImage": "img:new"}) == [("/spec/template/spec/customImage", "img:new", None)]


def test_overrides_lacking_reads_the_md_entry_by_its_deployment_name():
    md = _md("md-1")
    assert topology.overrides_lacking(_cluster(), md, "MachineDeployment", MD_REF,
                                      {"workerImage": "kindest/node:v1.30.4-custom"}) == []
    assert topology.overrides_lacking(_cluster(), md, "MachineDeployment", MD_REF, {"workerImage": "new"}) == \
        [("workerImage", "new", "kindest/node:v1.30.4-custom")]
    # md-0 has no overrides; an entry that is gone lacks every one
    assert topology.overrides_lacking(_cluster(), _md("md-0"), "MachineDeployment", MD_REF, {"workerImage": "x"}) == \
        [("workerImage", "x", None)]
    assert topology.overrides_lacking(_cluster(), _md("md-9"), "MachineDeployment", MD_REF, {"workerImage": "x"}) == \
        [("workerImage", "x", None)]


def test_entry_field_is_the_managed_fields_path_of_the_entry():
    assert topology.entry_field(_md("md-1"), "MachineDeployment") == \
        ("spec", "topology", "workers", "machineDeployments", 'k:{"name":"md-1"}')
    # a control plane's topology change is a Cluster-level variable
    assert topology.entry_field(_kcp(), "KubeadmControlPlane") == ("spec", "topology", "variables")


def test_refresh_outcome_plans_the_override_or_says_why_not():
    cluster = _cluster()
    outcome, owner = topology.refresh_outcome(CLASS, cluster, _md("md-0"), MD_REF, "DockerMachineTemplate",
                                              {"customImage": "img:2"})
    assert outcome["ok"] is True and owner["ref"] == "cluster/default/shop"
    assert outcome["topology"]["held"] is False and outcome["topology"]["hold"] == {
        "overrides": {"workerImage": "img:2"}, "template": {"customImage": "img:2"}}
    assert "variable workerImage" in outcome["topology"]["why"]
    held, none = topology.refresh_outcome(CLASS, cluster, _md("md-1"), MD_REF, "DockerMachineTemplate",
                                          {"customImage": "kindest/node:v1.30.4-custom"})
    assert none is None and held["topology"]["held"] is True and "holds workerImage=" in held["topology"]["change"]
    unmapped, none = topology.refresh_outcome(CLASS, cluster, _md("md-0"), MD_REF, "DockerMachineTemplate", {"x": 1})
    assert unmapped["ok"] is False and unmapped["topology"] is None and none is None
    assert "/spec/template/spec/x" in unmapped["msg"] and "nothing was changed" not in unmapped["msg"]


# --- path (a) for a control plane: a Cluster-level variable patched onto its machine infrastructure template only ---

def _cp_class(worker_classes=()):
    """A class patching controlPlaneImage onto the control plane's DockerMachineTemplate (and onto the templates of
    ``worker_classes`` too, when given), beside the worker patch of CLASS."""
    match = {"controlPlane": True}
    if worker_classes:
        match["machineDeploymentClass"] = {"names": list(worker_classes)}
    cclass = copy.deepcopy(CLASS)
    cclass["metadata"] = {"name": "quick-start"}
    cclass["spec"]["patches"].append({"name": "cp-image", "definitions": [{
        "selector": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate",
                     "matchResources": match},
        "jsonPatches": [{"op": "replace", "path": "/spec/template/spec/customImage",
                         "valueFrom": {"variable": "controlPlaneImage"}}]}]})
    return cclass


def test_control_plane_variable_is_the_one_selected_by_match_resources_control_plane():
    assert topology.mapping_variable(_cp_class(), None, "DockerMachineTemplate", "/spec/template/spec/customImage") == \
        "controlPlaneImage"
    # the worker patch selects no control plane
    assert topology.mapping_variable(CLASS, None, "DockerMachineTemplate", "/spec/template/spec/customImage") is None
    assert topology.worker_classes_patched(_cp_class(), "controlPlaneImage") == []
    assert topology.worker_classes_patched(_cp_class(["b", "a"]), "controlPlaneImage") == ["a", "b"]


def test_control_plane_new_hardware_sets_the_cluster_variable_and_undoes_by_removing_it():
    cluster = _cluster()
    cluster["spec"]["topology"]["variables"] = [{"name": "other", "value": 1}]
    values, why = topology.variables_for(_cp_class(), cluster, _kcp(), KCP_REF, "DockerMachineTemplate",
                                         {"customImage": "img:new"}, kind="KubeadmControlPlane")
    assert values == {"controlPlaneImage": "img:new"}
    assert "control plane's machine infrastructure" in why
    owner = topology.plan_overrides(cluster, _kcp(), KCP_REF, values, kind="KubeadmControlPlane")
    assert owner["message"] == "cluster/default/shop spec.topology.variables: controlPlaneImage=img:new"
    assert owner["patch"] == [
        {"op": "test", "path": "/spec/topology/variables", "value": [{"name": "other", "value": 1}]},
        {"op": "replace", "path": "/spec/topology/variables",
         "value": [{"name": "other", "value": 1}, {"name": "controlPlaneImage", "value": "img:new"}]}]
    # the MD overrides stay untouched; the change is held where the wait and undo look
    applied = copy.deepcopy(cluster)
    applied["spec"]["topology"]["variables"] = owner["patch"][1]["value"]
    assert topology.overrides_lacking(applied, _kcp(), "KubeadmControlPlane", KCP_REF, values) == []
    assert topology.overrides_lacking(cluster, _kcp(), "KubeadmControlPlane", KCP_REF, values) == \
        [("controlPlaneImage", "img:new", None)]
    assert topology.override_of(applied, _kcp(), KCP_REF, "controlPlaneImage", kind="KubeadmControlPlane") == "img:new"
    back = topology.plan_overrides(applied, _kcp(), KCP_REF, {"controlPlaneImage": None}, kind="KubeadmControlPlane")
    assert back["patch"][-1] == {"op": "replace", "path": "/spec/topology/variables",
                                 "value": [{"name": "other", "value": 1}]}
    assert topology.plan_overrides(applied, _kcp(), KCP_REF, values, kind="KubeadmControlPlane") is None


def test_control_plane_first_cluster_variable_adds_the_list():
    owner = topology.plan_overrides(_cluster(), _kcp(), KCP_REF, {"controlPlaneImage": "img:new"},
                                    kind="KubeadmControlPlane")
    assert owner["patch"] == [
        {"op": "test", "path": "/spec/topology/variables", "value": None},
        {"op": "add", "path": "/spec/topology/variables", "value": [{"name": "controlPlaneImage", "value": "img:new"}]}]


def test_control_plane_variable_also_patched_onto_workers_is_refused_naming_them():
    with pytest.raises(RolloutError) as err:
        topology.variables_for(_cp_class(["default-worker"]), _cluster(), _kcp(), KCP_REF, "DockerMachineTemplate",
                               {"customImage": "img:new"}, kind="KubeadmControlPlane")
    assert err.value.reason == "topology_shared_variable"
    assert "controlPlaneImage onto the templates of worker classes default-worker" in err.value.msg
    assert "matchResources.controlPlane" in err.value.hint
    # no control-plane patch at all: no variable
    outcome, owner = topology.refresh_outcome(CLASS, _cluster(), _kcp(), KCP_REF, "DockerMachineTemplate",
                                              {"customImage": "img:new"}, kind="KubeadmControlPlane")
    assert owner is None and not outcome["ok"]
    assert "of the control plane's machine infrastructure" in outcome["msg"]


def test_control_plane_refresh_outcome_holds_the_cluster_variable():
    outcome, owner = topology.refresh_outcome(_cp_class(), _cluster(), _kcp(), KCP_REF, "DockerMachineTemplate",
                                              {"customImage": "img:new"}, kind="KubeadmControlPlane")
    assert outcome["ok"] and outcome["topology"]["path"] == "Cluster variable"
    assert outcome["topology"]["hold"] == {"overrides": {"controlPlaneImage": "img:new"},
                                           "template": {"customImage": "img:new"}}
    assert owner["ref"] == "cluster/default/shop"


# --- path (b): a switch to another worker class whose template carries the values ---------------------------------

def _worker(name, template):
    return {"class": name, "infrastructure": {"templateRef": {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": template}}}


# workerImage is patched onto default-worker only; big-worker and bigger-worker take their templates' values
CLASS_B = dict(CLASS, metadata={"name": "quick-start", "namespace": "default"}, spec=dict(CLASS["spec"], workers={
    "machineDeployments": [_worker("default-worker", "t-default"), _worker("big-worker", "t-big"),
                           _worker("bigger-worker", "t-bigger")]}))


def _template(name, **spec):
    return {"kind": "DockerMachineTemplate", "metadata": {"name": name}, "spec": {"template": {"spec": spec}}}


def test_templates_needed_only_when_path_a_does_not_cover_an_md():
    # customImage maps to workerImage: path (a), no template read
    assert topology.templates_needed(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                                     {"customImage": "img:2"}) == {}
    # a field no variable maps: every worker class's template (its own: once switched, it holds the change)
    needed = topology.templates_needed(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate", {"extra": 1})
    assert sorted(needed) == ["big-worker", "bigger-worker", "default-worker"] and needed["big-worker"]["name"] == "t-big"
    # a control plane has no class to switch
    assert topology.templates_needed(CLASS_B, _cluster(), _kcp(), KCP_REF, "DockerMachineTemplate", {"extra": 1},
                                     kind="KubeadmControlPlane") == {}


def test_change_for_takes_path_a_when_a_variable_maps_every_field():
    change = topology.change_for(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                                 {"customImage": "img:2"}, worker_templates={})
    assert change["path"] == "variable override" and change["values"] == {"workerImage": "img:2"}
    assert change["worker_class"] is None


def test_change_for_switches_to_the_worker_class_whose_template_carries_the_values():
    templates = {"big-worker": _template("t-big", extra=1, customImage="img:1"),
                 "bigger-worker": _template("t-bigger", extra=2)}
    change = topology.change_for(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate", {"extra": 1},
                                 worker_templates=templates)
    assert change["path"] == "worker class switch" and change["worker_class"] == "big-worker" and change["values"] == {}
    assert "worker class big-worker's DockerMachineTemplate t-big has extra=1" in change["why"]
    owner = topology.plan_overrides(_cluster(), _md("md-0"), MD_REF, change["values"], worker_class="big-worker")
    written = objs.apply_json_patch(_cluster(), owner["patch"])
    assert written["spec"]["topology"]["workers"]["machineDeployments"][0]["class"] == "big-worker"
    assert written["spec"]["topology"]["workers"]["machineDeployments"][1]["class"] == "default-worker"
    assert owner["message"] == ("cluster/default/shop spec.topology.workers.machineDeployments[md-0].class: "
                                "class=big-worker (was default-worker)")
    # the class it was is tested: someone switching it meanwhile fails the write
    moved = _cluster()
    moved["spec"]["topology"]["workers"]["machineDeployments"][0]["class"] = "bigger-worker"
    with pytest.raises(objs.TestFailed):
        objs.apply_json_patch(moved, owner["patch"])
    assert topology.plan_overrides(written, _md("md-0"), MD_REF, {}, worker_class="big-worker") is None
    # held: the class is part of the change a wait holds it to
    assert topology.hold_of(change, {"extra": 1}) == {"overrides": {}, "template": {"extra": 1}, "class": "big-worker"}
    assert topology.overrides_lacking(written, _md("md-0"), "MachineDeployment", MD_REF, {}, "big-worker") == []
    assert topology.overrides_lacking(_cluster(), _md("md-0"), "MachineDeployment", MD_REF, {}, "big-worker") == \
        [("class", "big-worker", "default-worker")]


def test_change_for_names_every_other_fitting_class_and_takes_the_first_by_name():
    templates = {"bigger-worker": _template("t-bigger", extra=1), "big-worker": _template("t-big", extra=1)}
    change = topology.change_for(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate", {"extra": 1},
                                 worker_templates=templates)
    assert change["worker_class"] == "big-worker" and "bigger-worker would fit too" in change["why"]


def test_change_for_refuses_naming_each_class_and_why_it_does_not_fit():
    patched = copy.deepcopy(CLASS_B)
    # workerImage is patched onto big-worker too: its template's customImage would not be the one generated
    patched["spec"]["patches"][0]["definitions"][0]["selector"]["matchResources"]["machineDeploymentClass"]["names"].append(
        "big-worker")
    templates = {"big-worker": _template("t-big", customImage="img:2", extra=1), "bigger-worker": None}
    with pytest.raises(RolloutError) as err:
        topology.change_for(patched, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate", {"extra": 1},
                            worker_templates={"big-worker": _template("t-big", extra=2), "bigger-worker": None})
    assert err.value.reason == "topology_no_variable" and err.value.ref == MD_REF
    assert "big-worker: its template has extra=2" in err.value.msg and "bigger-worker: its template does not exist" in err.value.msg
    assert "nothing was changed" in err.value.msg and "worker class" in err.value.hint
    with pytest.raises(RolloutError) as err:
        topology.change_for(patched, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                            {"customImage": "img:2", "extra": 1}, worker_templates=templates)
    assert "big-worker: a class variable is patched onto /spec/template/spec/customImage" in err.value.msg
    other_kind = dict(_template("t-big", extra=1), kind="AWSMachineTemplate")
    with pytest.raises(RolloutError) as err:
        topology.change_for(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate", {"extra": 1},
                            worker_templates={"big-worker": other_kind})
    assert "its template is a AWSMachineTemplate, not a DockerMachineTemplate" in err.value.msg
    # positive control: the same class fits without the patch onto it
    assert topology.change_for(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                               {"customImage": "img:2", "extra": 1}, worker_templates=templates)["worker_class"] == "big-worker"


def test_refresh_outcome_plans_a_class_switch_with_its_hold():
    outcome, owner = topology.refresh_outcome(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                                              {"extra": 1}, worker_templates={"big-worker": _template("t-big", extra=1)})
    assert outcome["ok"] and outcome["topology"]["path"] == "worker class switch"
    assert outcome["topology"]["hold"]["class"] == "big-worker" and owner["ref"] == "cluster/default/shop"
    written = objs.apply_json_patch(_cluster(), owner["patch"])
    # a re-run: its own class now fits, before any other that would fit too
    templates = {"big-worker": _template("t-big", extra=1), "a-worker": _template("t-a", extra=1),
                 "default-worker": _template("t-default")}
    held, none = topology.refresh_outcome(CLASS_B, written, _md("md-0"), MD_REF, "DockerMachineTemplate",
                                          {"extra": 1}, worker_templates=templates)
    assert none is None and held["topology"]["held"] and held["topology"]["change"] == \
        "cluster/default/shop holds class=big-worker already"


# --- --diff: the template the topology will generate (paths (a) and (b)) ---------------------------------------------

def _current(**spec):
    return dict(_template("shop-md-0-infra-abcde", **spec), metadata={"name": "shop-md-0-infra-abcde", "namespace": "default"})


def test_the_diff_of_path_a_is_the_current_template_with_the_mapped_field_set_to_the_override():
    current = _current(customImage="img:1", extraMounts=[{"hostPath": "/a"}])
    change = topology.change_for(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                                 {"customImage": "img:2"}, worker_templates={})
    diff = topology.generated_diff(change, current, {"customImage": "img:2"})
    # only the field the variable sets: the rest of the template stays as it is
    assert (diff["before"], diff["after"]) == ('spec:\n  template:\n    spec:\n      customImage: "img:1"\n',
                                               'spec:\n  template:\n    spec:\n      customImage: "img:2"\n')
    assert diff["before_header"] == ("dockermachinetemplate/default/shop-md-0-infra-abcde as the topology regenerates it "
                                     "(workerImage=img:2) (before)")
    # a field the template lacks so far shows as added; the template as asked for already: no diff
    added = topology.generated_diff(change, _current(), {"customImage": "img:2"})
    assert added["before"] == "" and "customImage" in added["after"]
    assert topology.generated_diff(change, _current(customImage="img:2"), {"customImage": "img:2"}) is None
    # not read (no --diff): none
    assert topology.generated_diff(change, None, {"customImage": "img:2"}) is None


def test_the_diff_of_path_b_is_every_field_the_other_worker_class_template_differs_in():
    templates = {"big-worker": _template("t-big", extra=1, customImage="img:1"), "bigger-worker": _template("t-bigger")}
    change = topology.change_for(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate", {"extra": 1},
                                 worker_templates=templates)
    diff = topology.generated_diff(change, _current(customImage="img:1", memory="2Gi"), {"extra": 1}, templates)
    assert diff["before"] == 'spec:\n  template:\n    spec:\n      memory: "2Gi"\n'
    assert diff["after"] == "spec:\n  template:\n    spec:\n      extra: 1\n"
    assert "(the DockerMachineTemplate t-big of worker class big-worker)" in diff["after_header"]


def test_path_c_has_no_generated_diff_of_its_own():
    change = {"path": "ClusterClass rebase", "values": {}, "worker_class": None, "cluster_class": "quick-start-1a2b3c4d"}
    assert topology.generated_diff(change, _current(customImage="img:1"), {"customImage": "img:2"}) is None


def test_refresh_outcome_carries_the_generated_diff_when_the_template_was_read():
    outcome, owner = topology.refresh_outcome(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                                              {"customImage": "img:2"}, template=_current(customImage="img:1"))
    assert owner is not None and 'customImage: "img:2"' in outcome["topology"]["generated"]["after"]
    unread, _owner = topology.refresh_outcome(CLASS_B, _cluster(), _md("md-0"), MD_REF, "DockerMachineTemplate",
                                              {"customImage": "img:2"})
    assert unread["topology"]["generated"] is None
