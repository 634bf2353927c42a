# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion as av
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

MD, KCP = av.MACHINE_DEPLOYMENT, av.KUBEADM_CONTROL_PLANE


@pytest.mark.parametrize("kind, version, field, path", [
    (MD, "v1beta1", "rollout_after", "spec.rolloutAfter"),
    (MD, "v1beta2", "rollout_after", "spec.rollout.after"),
    (KCP, "v1beta1", "rollout_after", "spec.rolloutAfter"),
    (KCP, "v1beta2", "rollout_after", "spec.rollout.after"),
    (MD, "v1beta1", "strategy", "spec.strategy"),
    (MD, "v1beta2", "strategy", "spec.rollout.strategy"),
    (KCP, "v1beta1", "strategy", "spec.rolloutStrategy"),
    (KCP, "v1beta2", "strategy", "spec.rollout.strategy"),
    (MD, "v1beta1", "paused", "spec.paused"),
    (MD, "v1beta2", "paused", "spec.paused"),
    (KCP, "v1beta1", "paused", None),
    (KCP, "v1beta2", "paused", None),
    (MD, "v1beta2", "version", "spec.template.spec.version"),
    (KCP, "v1beta2", "version", "spec.version"),
    (MD, "v1beta1", "infrastructure_ref", "spec.template.spec.infrastructureRef"),
    (MD, "v1beta2", "infrastructure_ref", "spec.template.spec.infrastructureRef"),
    (KCP, "v1beta1", "infrastructure_ref", "spec.machineTemplate.infrastructureRef"),
    (KCP, "v1beta2", "infrastructure_ref", "spec.machineTemplate.spec.infrastructureRef"),
    (MD, "v1beta2", "bootstrap", "spec.template.spec.bootstrap"),
    (MD, "v1beta2", "failure_domain", "spec.template.spec.failureDomain"),
    (KCP, "v1beta2", "bootstrap", None),
])
def test_spec_paths(kind, version, field, path):
    assert av.spec_path(kind, version, field) == path


@pytest.mark.parametrize("kind, version, field, path", [
    (MD, "v1beta1", "up_to_date", "status.v1beta2.upToDateReplicas"),
    (MD, "v1beta2", "up_to_date", "status.upToDateReplicas"),
    (MD, "v1beta1", "available", "status.v1beta2.availableReplicas"),
    (MD, "v1beta2", "available", "status.availableReplicas"),
    (MD, "v1beta1", "v1beta1_updated", "status.updatedReplicas"),
    (MD, "v1beta2", "v1beta1_updated", "status.deprecated.v1beta1.updatedReplicas"),
    (MD, "v1beta1", "v1beta1_available", "status.availableReplicas"),
    (KCP, "v1beta1", "v1beta1_available", None),
    (MD, "v1beta1", "conditions", "status.v1beta2.conditions"),
    (MD, "v1beta2", "conditions", "status.conditions"),
    (MD, "v1beta1", "v1beta1_conditions", "status.conditions"),
    (MD, "v1beta2", "v1beta1_conditions", "status.deprecated.v1beta1.conditions"),
])
def test_status_paths(kind, version, field, path):
    assert av.status_path(kind, version, field) == path


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_paths_resolve_in_realistic_objects(version):
    """Every path the core reads exists in a schema-shaped object of that version."""
    md = objs.machine_deployment(version)
    kcp = objs.kubeadm_control_plane(version)
    for obj, kind in ((md, MD), (kcp, KCP)):
        for field in ("replicas", "version", "infrastructure_ref", "strategy"):
            assert paths.has_path(obj, av.spec_path(kind, version, field)), (kind, field)
        for field in ("replicas", "up_to_date", "ready", "available", "v1beta1_updated", "conditions", "v1beta1_conditions"):
            assert paths.has_path(obj, av.status_path(kind, version, field)), (kind, field)


@pytest.mark.parametrize("text, kind", [
    ("MachineDeployment", MD), ("machinedeployment", MD), ("md", MD), ("MachineDeployments", MD),
    ("kcp", KCP), ("KubeadmControlPlane", KCP), ("ms", av.MACHINE_SET), ("foo", None), ("", None), (None, None),
])
def test_normalize_kind(text, kind):
    assert av.normalize_kind(text) == kind


def test_rollout_kind_rejects_other_kinds():
    with pytest.raises(RolloutError) as exc:
        av.rollout_kind("MachineSet")
    assert exc.value.reason == "invalid_kind"
    assert "valid values are ['MachineDeployment', 'KubeadmControlPlane']" in str(exc.value)


@pytest.mark.parametrize("obj, explicit, expected", [
    ({"apiVersion": "cluster.x-k8s.io/v1beta1"}, None, "v1beta1"),
    ({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2"}, None, "v1beta2"),
    ({"apiVersion": "cluster.x-k8s.io/v1beta1"}, "v1beta2", "v1beta2"),
    ({}, "cluster.x-k8s.io/v1beta1", "v1beta1"),
])
def test_version_of(obj, explicit, expected):
    assert av.version_of(obj, explicit) == expected


@pytest.mark.parametrize("obj", [{"apiVersion": "cluster.x-k8s.io/v1alpha4"}, {}])
def test_version_of_unsupported(obj):
    with pytest.raises(RolloutError) as exc:
        av.version_of(obj)
    assert exc.value.reason == "unsupported_api_version"


def test_get_set_paths():
    obj = {"metadata": {"annotations": {"cluster.x-k8s.io/paused": "true"}}, "spec": {"replicas": 0, "paused": None}}
    assert paths.get_path(obj, "spec.replicas") == 0
    assert paths.get_path(obj, "spec.paused", "dflt") == "dflt"
    assert paths.get_path(obj, "spec.missing.deep") is None
    assert paths.get_path(obj, ("metadata", "annotations", "cluster.x-k8s.io/paused")) == "true"
    assert paths.has_path(obj, "spec.paused") and not paths.has_path(obj, "spec.nope")
    patch = paths.set_path({}, "spec.rollout.after", "X")
    paths.set_path(patch, ("metadata", "annotations", "a.b/c"), None)
    assert patch == {"spec": {"rollout": {"after": "X"}}, "metadata": {"annotations": {"a.b/c": None}}}
    assert paths.merge_patch([("spec.paused", True), ("spec.replicas", 2)]) == {"spec": {"paused": True, "replicas": 2}}


def test_json_pointer_escapes_rfc6901():
    assert paths.json_pointer(("metadata", "annotations", "cluster.x-k8s.io/paused")) == "/metadata/annotations/cluster.x-k8s.io~1paused"
    assert paths.json_pointer(("a", "b~c")) == "/a/b~0c"


def test_join_path():
    assert paths.join_path("spec.rollout.after") == "spec.rollout.after"
    assert paths.join_path(("metadata", "annotations", "cluster.x-k8s.io/paused")) == "metadata.annotations[cluster.x-k8s.io/paused]"


@pytest.mark.parametrize("ref, expected", [
    ({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "t", "namespace": "ns"},
     {"api_group": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "t"}),
    ({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "t"},
     {"api_group": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "t"}),
    ({"apiVersion": "v1", "kind": "Secret", "name": "s"}, {"api_group": "", "kind": "Secret", "name": "s"}),
    (None, None),
    ({}, None),
])
def test_normalize_ref(ref, expected):
    assert av.normalize_ref(ref) == expected


def test_ref_for_api_shapes():
    target = {"api_group": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "t2"}
    assert av.ref_for_api(target, "v1beta2") == {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "t2"}
    current = {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "t1"}
    # same group: the current apiVersion (with its version) is preserved
    assert av.ref_for_api(target, "v1beta1", current) == {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                                          "kind": "DockerMachineTemplate", "name": "t2"}
    other = {"api_group": "infrastructure.example.com", "kind": "FooMachineTemplate", "name": "f"}
    with pytest.raises(ValueError):
        av.ref_for_api(other, "v1beta1", current)
    other["api_version"] = "infrastructure.example.com/v1alpha1"
    assert av.ref_for_api(other, "v1beta1", current)["apiVersion"] == "infrastructure.example.com/v1alpha1"


def test_resource():
    assert av.resource(KCP, "v1beta2") == {"group": "controlplane.cluster.x-k8s.io", "version": "v1beta2",
                                           "plural": "kubeadmcontrolplanes", "api_version": "controlplane.cluster.x-k8s.io/v1beta2"}
    assert av.api_version_string(MD, "v1beta1") == "cluster.x-k8s.io/v1beta1"
