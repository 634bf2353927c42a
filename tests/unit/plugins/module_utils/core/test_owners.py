# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError

REF = "machinedeployment/team-g/wg-md-1"
INFRA = ("spec", "template", "spec", "infrastructureRef")
# managedFields as kube-apiserver 1.20 writes them (fieldsV1 sets; "." is the map itself)
FLUX_APPLY = {
    "manager": "kustomize-controller", "operation": "Apply", "apiVersion": "cluster.x-k8s.io/v1beta1",
    "time": "2026-12-04T07:00:00Z", "fieldsType": "FieldsV1",
    "fieldsV1": {"f:metadata": {"f:labels": {"f:kustomize.toolkit.fluxcd.io/name": {}}},
                 "f:spec": {"f:clusterName": {}, "f:replicas": {}, "f:template": {"f:spec": {
                     "f:bootstrap": {"f:configRef": {"f:apiVersion": {}, "f:kind": {}, "f:name": {}}},
                     "f:clusterName": {},
                     "f:infrastructureRef": {"f:apiVersion": {}, "f:kind": {}, "f:name": {}},
                     "f:version": {}}}}}}
CREATED = {
    "manager": "kubectl-create", "operation": "Update", "apiVersion": "cluster.x-k8s.io/v1beta1",
    "time": "2026-12-01T09:00:00Z", "fieldsType": "FieldsV1",
    "fieldsV1": {"f:spec": {"f:paused": {}, "f:template": {"f:spec": {"f:infrastructureRef": {".": {}, "f:name": {}}}}}}}
OURS = {
    "manager": "capi-rollout", "operation": "Update", "apiVersion": "cluster.x-k8s.io/v1beta1",
    "time": "2026-12-04T07:05:00Z", "fieldsType": "FieldsV1",
    "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:rollout.capi-rollout.dev/last": {}}},
                 "f:spec": {"f:rolloutAfter": {}, "f:template": {"f:spec": {"f:infrastructureRef": {"f:name": {}}}}}}}
CAPI = {
    "manager": "manager", "operation": "Update", "apiVersion": "cluster.x-k8s.io/v1beta1",
    "time": "2026-12-04T07:05:01Z", "fieldsType": "FieldsV1",
    "fieldsV1": {"f:metadata": {"f:annotations": {"f:machinedeployment.clusters.x-k8s.io/revision": {}}},
                 "f:spec": {"f:template": {"f:spec": {"f:infrastructureRef": {"f:namespace": {}}}}}}}
SWITCH = [
    {"op": "test", "path": "/spec/template/spec/infrastructureRef/name", "value": "wg-md-1-a"},
    {"op": "replace", "path": "/spec/template/spec/infrastructureRef",
     "value": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "wg-md-1-b"}},
    {"op": "add", "path": "/metadata/annotations/rollout.capi-rollout.dev~1last", "value": "{}"},
]
RESTART = [{"op": "add", "path": "/spec/rollout", "value": {"after": "2026-12-04T07:10:00Z"}},
           {"op": "add", "path": "/metadata/annotations", "value": {"rollout.capi-rollout.dev/history": "[]"}}]


def md(*entries, labels=None, annotations=None):
    return {"kind": "MachineDeployment",
            "metadata": {"name": "wg-md-1", "namespace": "team-g", "labels": labels or {},
                         "annotations": annotations or {}, "managedFields": copy.deepcopy(list(entries))}}


def test_written_fields_are_the_leaves_a_patch_adds_replaces_or_removes_not_its_tests():
    assert owners.written_fields(SWITCH) == [INFRA + ("apiVersion",), INFRA + ("kind",), INFRA + ("name",),
                                             ("metadata", "annotations", "rollout.capi-rollout.dev/last")]
    assert owners.written_fields(RESTART) == [("spec", "rollout", "after"),
                                              ("metadata", "annotations", "rollout.capi-rollout.dev/history")]
    assert owners.written_fields([{"op": "remove", "path": "/spec/paused"}]) == [("spec", "paused")]


def test_covers_follows_fieldsv1_into_maps_and_atomic_values():
    fields_v1 = FLUX_APPLY["fieldsV1"]
    assert owners.covers(fields_v1, INFRA + ("name",))
    assert owners.covers(fields_v1, INFRA)  # a part of it
    assert not owners.covers(fields_v1, ("spec", "rolloutAfter"))
    assert not owners.covers(fields_v1, ("spec", "template", "spec", "failureDomain"))
    # a member of a list of type map by its key (a Cluster topology's machineDeployments entry)
    listed = {"f:spec": {"f:workers": {'k:{"name":"md-0"}': {"f:variables": {}}}}}
    assert owners.covers(listed, ("spec", "workers", 'k:{"name":"md-0"}'))
    assert not owners.covers(listed, ("spec", "workers", 'k:{"name":"md-1"}'))
    assert owners.covers({"f:spec": {"f:template": {}}}, INFRA + ("name",))  # an atomic value it sits in


def test_a_flux_apply_owns_the_template_reference_not_the_trigger():
    obj = md(FLUX_APPLY, CREATED, OURS, CAPI)
    found = owners.owners_of(obj, owners.written_fields(SWITCH))
    assert [(o["manager"], o["field"], o["source"], o["time"]) for o in found] == [
        ("kustomize-controller", "spec.template.spec.infrastructureRef.apiVersion", "managedFields (Apply)", FLUX_APPLY["time"]),
        ("kustomize-controller", "spec.template.spec.infrastructureRef.kind", "managedFields (Apply)", FLUX_APPLY["time"]),
        ("kustomize-controller", "spec.template.spec.infrastructureRef.name", "managedFields (Apply)", FLUX_APPLY["time"])]
    assert found[0]["next_step"].startswith("change it in Git")
    # a restart writes the trigger and our annotations only: not Git's, even on a Flux-labelled object
    flux = md(FLUX_APPLY, labels={"kustomize.toolkit.fluxcd.io/name": "fleet"})
    assert owners.owners_of(flux, owners.written_fields(RESTART)) == []
    # ... unless Git holds the trigger itself
    applied = copy.deepcopy(FLUX_APPLY)
    applied["fieldsV1"]["f:spec"]["f:rollout"] = {"f:after": {}}
    assert [o["field"] for o in owners.owners_of(md(applied), owners.written_fields(RESTART))] == ["spec.rollout.after"]


def test_updates_of_people_capi_and_this_collection_are_no_owners():
    assert owners.owners_of(md(CREATED, OURS, CAPI), owners.written_fields(SWITCH)) == []


def test_a_client_side_apply_of_a_reconciler_is_an_owner():
    argo = dict(CREATED, manager="argocd-controller")
    (found,) = owners.owners_of(md(argo), [INFRA + ("name",)])
    assert (found["manager"], found["source"]) == ("argocd-controller", "managedFields (Update)")


@pytest.mark.parametrize("labels, annotations, manager, step", [
    ({}, {"argocd.argoproj.io/tracking-id": "fleet:cluster.x-k8s.io/MachineDeployment:team-g/wg-md-1"}, "argocd", "Git"),
    ({"app.kubernetes.io/instance": "fleet"}, {}, "argocd", "Git"),
    ({"kustomize.toolkit.fluxcd.io/name": "fleet"}, {}, "kustomize-controller", "Git"),
    ({"helm.toolkit.fluxcd.io/name": "workers", "app.kubernetes.io/managed-by": "Helm",
      "app.kubernetes.io/instance": "workers"}, {}, "helm-controller", "Helm release"),
    ({"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "workers"}, {}, "helm", "Helm release"),
    ({"topology.cluster.x-k8s.io/owned": ""}, {}, "capi-topology", "Cluster topology"),
])
def test_labels_and_annotations_name_the_owner_of_fields_git_holds(labels, annotations, manager, step):
    """Argo CD's default apply leaves no managedFields entry: its tracking metadata is all there is."""
    obj = md(labels=labels, annotations=annotations)
    found = owners.owners_of(obj, [INFRA + ("name",), ("spec", "paused"), ("spec", "rolloutAfter"),
                                   ("metadata", "annotations", "rollout.capi-rollout.dev/last")])
    assert [(o["manager"], o["field"]) for o in found] == [(manager, "spec.template.spec.infrastructureRef.name"),
                                                           (manager, "spec.paused")]
    assert step in found[0]["next_step"]


def test_refuse_names_manager_field_object_and_next_step_warn_writes_ignore_is_silent():
    found = owners.owners_of(md(FLUX_APPLY), [INFRA + ("name",)])
    with pytest.raises(RolloutError) as err:
        owners.check(REF, found, "refuse")
    message = str(err.value)
    assert message.startswith(REF + ": spec.template.spec.infrastructureRef.name is owned by kustomize-controller")
    assert "change it in Git" in message and "field_owners=warn" in message and err.value.reason == "field_owned"
    (warning,) = owners.check(REF, found, "warn")
    assert "kustomize-controller" in warning and "written anyway" in warning
    assert owners.check(REF, found, "ignore") == [] and owners.check(REF, [], "refuse") == []


def test_last_change_names_the_newest_other_writer_after_ours():
    edit = dict(CREATED, manager="kubectl-edit", time="2026-12-04T07:06:00Z")
    obj = md(OURS, CAPI, edit)
    assert owners.last_change(obj, INFRA + ("name",), since=OURS["time"]) == {
        "manager": "kubectl-edit", "operation": "Update", "time": "2026-12-04T07:06:00Z"}
    assert owners.last_change(md(OURS, CREATED), INFRA + ("name",), since=OURS["time"]) is None


@pytest.mark.parametrize("version, trigger, trigger_set", [
    ("v1beta1", "spec.rolloutAfter", {"f:rolloutAfter": {}}),
    ("v1beta2", "spec.rollout.after", {"f:rollout": {"f:after": {}}}),
])
def test_rollout_owners_name_the_owners_of_the_rollout_fields(version, trigger, trigger_set):
    applied = copy.deepcopy(FLUX_APPLY)
    applied["fieldsV1"]["f:spec"].update(trigger_set)
    got = owners.rollout_owners(md(applied, OURS), "MachineDeployment", version)
    assert sorted(got) == ["bootstrap", "infrastructure_ref", "rollout_after", "version"]
    assert got["rollout_after"][0]["field"] == trigger and got["version"][0]["manager"] == "kustomize-controller"
    argo = md(annotations={"argocd.argoproj.io/tracking-id": "fleet:x"})
    assert sorted(owners.rollout_owners(argo, "KubeadmControlPlane", version)) == ["infrastructure_ref", "version"]
    assert owners.rollout_owners(md(CREATED, OURS, CAPI), "MachineDeployment", version) == {}
