# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Path (c) of new hardware for a topology MachineDeployment (docs/clusterclass.md): a clone of the ClusterClass whose
worker class takes a new template, and a rebase of the Cluster onto it; its record and its undo."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import restart
from ansible_collections.capi.rollout.plugins.module_utils.core import topology
from ansible_collections.capi.rollout.plugins.module_utils.core import undo
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Observed
from ansible_collections.capi.rollout.plugins.module_utils.core.record import Recording
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

MD_REF = "machinedeployment/default/shop-md-0-abcde"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
HISTORY = "rollout.capi-rollout.dev/history"


def _worker(name, template, version):
    ref = {"apiVersion": INFRA, "kind": "DockerMachineTemplate", "name": template}
    if version == "v1beta2":
        return {"class": name, "infrastructure": {"templateRef": ref}}
    return {"class": name, "template": {"infrastructure": {"ref": dict(ref, namespace="default")}}}


def _class(version="v1beta2"):
    """ClusterClass "bare": no variable, worker classes small and big with their own images."""
    return {"apiVersion": f"cluster.x-k8s.io/{version}", "kind": "ClusterClass",
            "metadata": {"name": "bare", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                         "labels": {"team": "infra"}},
            "spec": {"infrastructure": {"templateRef": {"apiVersion": INFRA, "kind": "DockerClusterTemplate", "name": "dct"}},
                     "controlPlane": {"templateRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
                                                      "kind": "KubeadmControlPlaneTemplate", "name": "kcpt"}},
                     "workers": {"machineDeployments": [_worker("small", "t-small", version),
                                                        _worker("big", "t-big", version)]}}}


def _template(name, **spec):
    return {"apiVersion": INFRA, "kind": "DockerMachineTemplate",
            "metadata": {"name": name, "namespace": "default", "uid": "t1"}, "spec": {"template": {"spec": spec}}}


TEMPLATES = {"small": _template("t-small", customImage="img:1"), "big": _template("t-big", customImage="img:big")}


def _cluster(version="v1beta2"):
    topo = {"version": "v1.30.4", "workers": {"machineDeployments": [
        {"name": "md-0", "class": "small"}, {"name": "md-1", "class": "small"}, {"name": "md-2", "class": "big"}]}}
    if version == "v1beta2":
        topo["classRef"] = {"name": "bare"}
    else:
        topo["class"] = "bare"
    return dict(objs.cluster(version, name="shop", topology=topo))


def _md():
    md = objs.label(objs.machine_deployment(), "topology.cluster.x-k8s.io/owned", "")
    return objs.label(md, "topology.cluster.x-k8s.io/deployment-name", "md-0")


def _change(version="v1beta2", overrides=None, cclass=None, cluster=None, templates=None):
    return topology.change_for(cclass or _class(version), cluster or _cluster(version), _md(), MD_REF,
                               "DockerMachineTemplate", overrides or {"customImage": "img:2"},
                               worker_templates=templates or TEMPLATES)


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_no_variable_and_no_worker_class_carrying_the_values_plans_a_class_clone_and_a_rebase(version):
    change = _change(version)
    clone = change["clone"]
    assert change["path"] == "ClusterClass rebase" and change["values"] == {} and change["worker_class"] is None
    # the template: a clone of the worker class's, same kind and namespace, the value merged, named by its spec's hash
    made = clone["template"]
    assert made["kind"] == "DockerMachineTemplate" and made["namespace"] == "default"
    assert made["object"]["spec"]["template"]["spec"] == {"customImage": "img:2"} and made["name"].startswith("t-small-")
    # the class: the same spec but small's template reference, in the class's namespace, named by the hash of its spec
    cclass = clone["object"]
    assert cclass["metadata"]["namespace"] == "default" and cclass["metadata"]["labels"] == {"team": "infra"}
    assert clone["name"] == cclass["metadata"]["name"] and clone["name"].startswith("bare-") and len(clone["name"]) == 13
    assert "uid" not in cclass["metadata"] and "resourceVersion" not in cclass["metadata"]
    expected = copy.deepcopy(_class(version)["spec"])
    small = expected["workers"]["machineDeployments"][0]
    (small["infrastructure"]["templateRef"] if version == "v1beta2" else small["template"]["infrastructure"]["ref"])["name"] = \
        made["name"]
    assert cclass["spec"] == expected
    assert topology.incompatible(_class(version), cclass) == []
    # the same change, the same names: a re-run finds what it made
    again = _change(version)["clone"]
    assert again["name"] == clone["name"] and again["template"]["name"] == made["name"]
    assert _change(version, overrides={"customImage": "img:3"})["cluster_class"] != clone["name"]
    # why: no class carries it, and every MD of worker class small rolls together (md-2 is of class big)
    assert "big: its template has customImage=img:big" in change["why"]
    assert ("every MachineDeployment of worker class small of the Cluster together: "
            "spec.topology.workers.machineDeployments[md-0], spec.topology.workers.machineDeployments[md-1]") in change["why"]
    assert "md-2" not in change["why"]
    # the template field diff
    assert "img:2" in clone["diff"]["after"] and "img:1" in clone["diff"]["before"]


@pytest.mark.parametrize("version, field", [("v1beta1", "class"), ("v1beta2", "classRef")])
def test_the_rebase_writes_the_class_of_the_cluster_tested_as_read(version, field):
    change = _change(version)
    owner = topology.plan_overrides(_cluster(version), _md(), MD_REF, {}, cluster_class=change["cluster_class"])
    written = objs.apply_json_patch(_cluster(version), owner["patch"])
    assert topology.class_name(written) == change["cluster_class"]
    assert (written["spec"]["topology"][field] if version == "v1beta1" else written["spec"]["topology"][field]["name"]) == \
        change["cluster_class"]
    assert written["spec"]["topology"]["workers"] == _cluster(version)["spec"]["topology"]["workers"]
    shown = "spec.topology.class" if version == "v1beta1" else "spec.topology.classRef.name"
    assert owner["message"] == f"cluster/default/shop {shown}: {change['cluster_class']} (was bare)"
    assert shown in owner["diff"]["after"] or change["cluster_class"] in owner["diff"]["after"]
    # the class as read is tested: someone rebasing it meanwhile fails the write
    moved = topology.plan_overrides(_cluster(version), _md(), MD_REF, {}, cluster_class="other")
    with pytest.raises(objs.TestFailed):
        objs.apply_json_patch(objs.apply_json_patch(_cluster(version), moved["patch"]), owner["patch"])
    assert topology.plan_overrides(written, _md(), MD_REF, {}, cluster_class=change["cluster_class"]) is None
    # with a topology rollout.after (v1.13+): one write of both
    timed = topology.plan_overrides(_cluster(version), _md(), MD_REF, {}, cluster_class=change["cluster_class"],
                                    rollout_after="2026-01-01T00:00:00Z")
    both = objs.apply_json_patch(_cluster(version), timed["patch"])
    assert topology.class_name(both) == change["cluster_class"]
    assert both["spec"]["topology"]["workers"]["machineDeployments"][0]["rollout"] == {"after": "2026-01-01T00:00:00Z"}
    assert "rollout.after=2026-01-01T00:00:00Z" in timed["message"]


def test_a_re_run_on_the_rebased_cluster_plans_nothing():
    change = _change()
    clone = change["clone"]
    rebase = topology.plan_overrides(_cluster(), _md(), MD_REF, {}, cluster_class=change["cluster_class"])
    rebased = objs.apply_json_patch(_cluster(), rebase["patch"])
    templates = dict(TEMPLATES, small=clone["template"]["object"])
    outcome, owner = topology.refresh_outcome(clone["object"], rebased, _md(), MD_REF, "DockerMachineTemplate",
                                              {"customImage": "img:2"}, worker_templates=templates)
    assert owner is None and outcome["topology"]["held"], outcome
    # a new value on the rebased Cluster: a clone named from the first class, not a clone of a clone's name
    other = _change(overrides={"customImage": "img:3"}, cclass=clone["object"], cluster=rebased, templates=templates)
    assert other["cluster_class"].startswith("bare-") and len(other["cluster_class"]) == 13
    assert other["clone"]["template"]["name"].startswith("t-small-") and len(other["clone"]["template"]["name"]) == 16


def test_incompatible_names_what_upstream_refuses_on_a_class_change():
    current = _class()
    moved = copy.deepcopy(current)
    moved["metadata"]["namespace"] = "other"
    moved["spec"]["workers"]["machineDeployments"][1]["infrastructure"]["templateRef"]["kind"] = "AWSMachineTemplate"
    moved["spec"]["controlPlane"]["templateRef"]["kind"] = "OtherControlPlaneTemplate"
    del moved["spec"]["workers"]["machineDeployments"][0]
    assert topology.incompatible(current, moved) == [
        "the namespace differs", "spec.controlPlane is of another kind", "worker class small is missing",
        "the infrastructure template of worker class big is of another kind"]
    assert topology.incompatible(current, current) == []


def test_without_the_own_class_template_no_clone_is_planned():
    with pytest.raises(RolloutError) as err:
        _change(templates={"big": TEMPLATES["big"], "small": None})
    assert err.value.reason == "topology_no_variable" and "its own class's template cannot be cloned" in err.value.msg


def test_the_hold_and_drift_of_a_rebase():
    change = _change()
    assert topology.hold_of(change, {"customImage": "img:2"}) == {
        "overrides": {}, "template": {"customImage": "img:2"}, "cluster_class": change["cluster_class"]}
    assert topology.change_text(change) == f"ClusterClass={change['cluster_class']}"
    assert topology.overrides_lacking(_cluster(), _md(), "MachineDeployment", MD_REF, {}, None, change["cluster_class"]) == \
        [("ClusterClass", change["cluster_class"], "bare")]
    assert topology.overrides_lacking(_cluster(), _md(), "MachineDeployment", MD_REF, {}, None, "bare") == []


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_restart_records_the_rebase_and_undo_rebases_back(version):
    md, cluster = objs.label(_md(), "x", "y"), _cluster(version)
    plan = restart.plan_topology_switch(md, objs.NOW, {"customImage": "img:2"}, _class(version),
                                        observed=Observed(cluster=cluster, api_version=version),
                                        recording=Recording(rollout_id="hw-c"), worker_templates=TEMPLATES)
    name = plan["clone"]["name"]
    assert plan["changed"] and plan["hold"]["cluster_class"] == name and plan["owner"]["ref"] == "cluster/default/shop"
    assert "machineDeployments[md-1]" in plan["message"] and "rolls every MachineDeployment" in plan["message"]
    md, cluster = objs.apply_json_patch(md, plan["patch"]), objs.apply_json_patch(cluster, plan["owner"]["patch"])
    assert json.loads(md["metadata"]["annotations"][HISTORY])[-1]["topology_cluster_class"] == ["bare", name]
    back = undo.plan_undo(md, objs.NOW, observed=Observed(cluster=cluster), recording=Recording(rollout_id="hw-c-undo"),
                          undo_rollout_id="hw-c")
    assert back["changed"] and back["hold"]["cluster_class"] == "bare" and back["hold"]["not_on"]
    reverted = objs.apply_json_patch(cluster, back["owner"]["patch"])
    assert topology.class_name(reverted) == "bare"
    assert json.loads(objs.apply_json_patch(md, back["patch"])["metadata"]["annotations"][HISTORY])[-1][
        "topology_cluster_class"] == [name, "bare"]
    assert undo.plan_undo(md, objs.NOW, observed=Observed(cluster=reverted), undo_rollout_id="hw-c")["changed"] is False
    # rebased onto yet another class since: left alone, nothing written
    other = objs.apply_json_patch(cluster, topology.plan_overrides(cluster, md, MD_REF, {}, cluster_class="other")["patch"])
    with pytest.raises(RolloutError) as err:
        undo.plan_undo(md, objs.NOW, observed=Observed(cluster=other), undo_rollout_id="hw-c")
    assert err.value.reason == "changed_since_rollout" and f"ClusterClass=other (not {name})" in err.value.msg


def _kcp(version="v1beta2"):
    return objs.label(objs.kubeadm_control_plane(version), "topology.cluster.x-k8s.io/owned", "")


def _cp_class(version="v1beta2"):
    cclass = _class(version)
    ref = {"apiVersion": INFRA, "kind": "DockerMachineTemplate", "name": "t-cp"}
    cclass["spec"]["controlPlane"]["machineInfrastructure"] = {"templateRef": ref} if version == "v1beta2" else {"ref": ref}
    return cclass


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_a_control_plane_no_variable_maps_is_rebased_onto_a_clone_with_a_new_machine_template(version):
    kcp, cluster, cclass = _kcp(version), _cluster(version), _cp_class(version)
    needed = topology.templates_needed(cclass, cluster, kcp, "kcp", "DockerMachineTemplate", {"customImage": "img:2"},
                                       kind="KubeadmControlPlane")
    assert needed == {None: {"apiVersion": INFRA, "kind": "DockerMachineTemplate", "name": "t-cp"}}
    plan = restart.plan_topology_switch(kcp, objs.NOW, {"customImage": "img:2"}, cclass,
                                        observed=Observed(cluster=cluster, api_version=version),
                                        recording=Recording(rollout_id="hw-cp"),
                                        worker_templates={None: _template("t-cp", customImage="img:1")})
    clone = plan["clone"]
    keys = ("templateRef",) if version == "v1beta2" else ("ref",)
    assert clone["object"]["spec"]["controlPlane"]["machineInfrastructure"][keys[0]]["name"] == clone["template"]["name"]
    assert clone["object"]["spec"]["workers"] == cclass["spec"]["workers"]
    assert "rolls the control plane of the Cluster" in plan["message"] and plan["hold"]["cluster_class"] == clone["name"]
    rebased = objs.apply_json_patch(cluster, plan["owner"]["patch"])
    assert topology.class_name(rebased) == clone["name"]
    # a re-run: the clone's control-plane template has the values, nothing to change
    again = restart.plan_topology_switch(objs.apply_json_patch(kcp, plan["patch"]), objs.NOW, {"customImage": "img:2"},
                                         clone["object"], observed=Observed(cluster=rebased, api_version=version),
                                         worker_templates={None: clone["template"]["object"]})
    assert again["changed"] is False
    # undo rebases back
    back = undo.plan_undo(objs.apply_json_patch(kcp, plan["patch"]), objs.NOW, observed=Observed(cluster=rebased),
                          undo_rollout_id="hw-cp")
    assert topology.class_name(objs.apply_json_patch(rebased, back["owner"]["patch"])) == "bare"
    # positive control: without the control plane's template read, no variable maps it: refused as before
    with pytest.raises(RolloutError) as err:
        restart.plan_topology_switch(kcp, objs.NOW, {"customImage": "img:2"}, cclass, observed=Observed(cluster=cluster))
    assert err.value.reason == "topology_no_variable"
