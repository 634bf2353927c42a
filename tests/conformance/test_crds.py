"""CRD loading and reduction for kube-apiserver 1.20 (no server needed)."""

import json

import pytest

from capisim import crds

KINDS = {"Cluster", "MachineDeployment", "MachineSet", "Machine", "MachineHealthCheck", "MachinePool", "KubeadmControlPlane",
         "KubeadmConfigTemplate", "DockerMachineTemplate"}


@pytest.mark.parametrize("capi_version,served", [("v1.10", "v1beta1"), ("v1.14", "v1beta2")])
def test_each_release_loads_reduced(capi_version, served):
    loaded = crds.load_crds(capi_version)
    assert {c["spec"]["names"]["kind"] for c in loaded} == KINDS
    for crd in loaded:
        text = json.dumps(crd)
        assert "x-kubernetes-validations" not in text
        assert '"default": ""' not in text
        assert "conversion" not in crd["spec"]
        assert [v["name"] for v in crd["spec"]["versions"] if v["served"]] == [served]
        assert [v["name"] for v in crd["spec"]["versions"] if v["storage"]] == [served]
    assert crds.api_version(capi_version) == served


@pytest.mark.parametrize("capi_version,served", [("v1.10", "v1beta1"), ("v1.11", "v1beta2"), ("v1.14", "v1beta2")])
def test_topology_crds_only_when_asked(capi_version, served):
    """ClusterClass and the template kinds a class references come only with topology=True (fleets that declare
    cluster_classes): they cost about 3 s per management cluster start."""
    loaded = crds.load_crds(capi_version, topology=True)
    topology_kinds = {"ClusterClass", "KubeadmControlPlaneTemplate", "DockerClusterTemplate"}
    assert {c["spec"]["names"]["kind"] for c in loaded} == KINDS | topology_kinds
    for crd in loaded:
        assert [v["name"] for v in crd["spec"]["versions"] if v["served"]] == [served]


def test_missing_crds_explain_where_to_get_them(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPI_CRDS_DIR", str(tmp_path))
    with pytest.raises(RuntimeError) as err:
        crds.load_crds("v1.14")
    message = str(err.value)
    assert str(tmp_path / "capi-v1.14.0") in message
    for hint in ("CAPI_CRDS_DIR", "core-components.yaml", "core/config/crd/bases", "github.com/kubernetes-sigs/cluster-api"):
        assert hint in message


def test_release_assets_with_other_objects_are_accepted(tmp_path, monkeypatch):
    """A components.yaml holds Deployments, Services ... next to the CRDs: only the CRDs are taken."""
    source = crds.crds_dir("v1.10")
    target = tmp_path / "capi-v1.10.10"
    target.mkdir()
    docs = ["apiVersion: v1\nkind: Namespace\nmetadata: {name: capi-system}\n"]
    docs += [p.read_text(encoding="utf-8") for p in sorted(source.glob("*.yaml"))
             if p.name not in crds.TOPOLOGY_FILES + crds.IN_PLACE_FILES]
    (target / "core-components.yaml").write_text("\n---\n".join(docs), encoding="utf-8")
    monkeypatch.setenv("CAPI_CRDS_DIR", str(tmp_path))
    assert len(crds.load_crds("v1.10")) == len(KINDS)


@pytest.mark.parametrize("capi_version", ["v1.12.3", "v1.14"])
def test_extension_config_crd_only_with_in_place_updates(capi_version):
    """ExtensionConfig (runtime.cluster.x-k8s.io) comes only with in_place=True (fleet spec features: [InPlaceUpdates])."""
    loaded = crds.load_crds(capi_version, in_place=True)
    assert {c["spec"]["names"]["kind"] for c in loaded} == KINDS | {"ExtensionConfig"}
    config = next(c for c in loaded if c["spec"]["names"]["kind"] == "ExtensionConfig")
    assert [v["name"] for v in config["spec"]["versions"] if v["served"]] == ["v1beta2"]
