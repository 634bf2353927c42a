"""The objects the fleet loader creates carry what CAPI's webhooks would have set (no server needed;
test_management_cluster.py checks that a real server stores them unchanged)."""

from pathlib import Path

import pytest

from capisim.fleetspec import load_fleet
from capisim.objects import workload_objects

DEMO = load_fleet(str(Path(__file__).resolve().parents[1] / "fleets" / "demo.yml"))


def _wc(mgmt, name):
    spec = next(m for m in DEMO["management_clusters"] if m["name"] == mgmt)
    return next(w for w in spec["workload_clusters"] if w["name"] == name)


def _by_kind(objects, kind):
    return [o for o in objects if o["kind"] == kind]


def test_v1beta1_machine_deployment_defaults():
    objects = workload_objects(_wc("mgmt-east", "edge-eu-1"), "v1beta1")
    assert [o["kind"] for o in objects] == ["Namespace", "Cluster", "DockerMachineTemplate", "KubeadmControlPlane",
                                            "KubeadmConfigTemplate", "DockerMachineTemplate", "MachineDeployment"]
    md = _by_kind(objects, "MachineDeployment")[0]
    spec = md["spec"]
    assert md["metadata"]["name"] == "edge-eu-1-gateways"
    assert spec["strategy"] == {"type": "OnDelete"}
    assert (spec["revisionHistoryLimit"], spec["minReadySeconds"], spec["progressDeadlineSeconds"]) == (1, 0, 600)
    labels = {"cluster.x-k8s.io/cluster-name": "edge-eu-1", "cluster.x-k8s.io/deployment-name": "edge-eu-1-gateways"}
    assert spec["selector"]["matchLabels"] == labels == spec["template"]["metadata"]["labels"]
    tmpl = spec["template"]["spec"]
    assert tmpl["failureDomain"] == "eu-1a" and tmpl["version"] == "v1.29.8"
    infra = tmpl["infrastructureRef"]
    assert infra["apiVersion"] == "infrastructure.cluster.x-k8s.io/v1beta1" and infra["namespace"] == "edge"
    assert infra["name"].startswith("edge-eu-1-gateways-") and len(infra["name"]) == len("edge-eu-1-gateways-") + 5
    assert tmpl["bootstrap"]["configRef"]["kind"] == "KubeadmConfigTemplate"
    dmt = next(o for o in objects if o["metadata"]["name"] == infra["name"])
    assert dmt["metadata"]["annotations"] == {"sim.capi-rollout.dev/provision-seconds": "2"}
    assert dmt["metadata"]["labels"] == {"cluster.x-k8s.io/cluster-name": "edge-eu-1"}
    kcp = _by_kind(objects, "KubeadmControlPlane")[0]
    assert kcp["spec"]["rolloutStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    assert kcp["spec"]["machineTemplate"]["infrastructureRef"]["kind"] == "DockerMachineTemplate"
    cluster = _by_kind(objects, "Cluster")[0]
    assert cluster["spec"]["controlPlaneRef"] == {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
                                                  "kind": "KubeadmControlPlane", "name": "edge-eu-1-control-plane",
                                                  "namespace": "edge"}
    assert "infrastructureRef" not in cluster["spec"] and "topology" not in cluster["spec"]


# labels only (topology_owned): what the demo's shop-prod was before it became a real topology cluster
LABELS_ONLY = load_fleet({"management_clusters": [{"name": "mgmt-west", "capi_version": "v1.14", "workload_clusters": [{
    "name": "shop-prod", "namespace": "shop", "kubernetes_version": "v1.31.1", "topology_owned": True,
    "control_plane": {"replicas": 3},
    "machine_deployments": [{"name": "md-0", "replicas": 3},
                            {"name": "md-1", "replicas": 3,
                             "strategy": {"type": "RollingUpdate", "max_surge": "34%", "max_unavailable": 0}}]}]}]})


def test_v1beta2_topology_owned_cluster():
    objects = workload_objects(LABELS_ONLY["management_clusters"][0]["workload_clusters"][0], "v1beta2")
    for obj in objects[1:]:
        assert obj["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"] == ""
    md0, md1 = _by_kind(objects, "MachineDeployment")
    assert md1["spec"]["rollout"] == {"strategy": {"type": "RollingUpdate",
                                                   "rollingUpdate": {"maxSurge": "34%", "maxUnavailable": 0}}}
    assert md0["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"] == "md-0"
    assert md0["spec"]["selector"]["matchLabels"]["topology.cluster.x-k8s.io/deployment-name"] == "md-0"
    tmpl = md0["spec"]["template"]["spec"]
    assert tmpl["minReadySeconds"] == 0 and "minReadySeconds" not in md0["spec"]
    assert tmpl["infrastructureRef"].keys() == {"apiGroup", "kind", "name"}
    assert tmpl["bootstrap"]["configRef"]["apiGroup"] == "bootstrap.cluster.x-k8s.io"
    kcp = _by_kind(objects, "KubeadmControlPlane")[0]
    assert kcp["spec"]["machineTemplate"]["spec"]["infrastructureRef"]["apiGroup"] == "infrastructure.cluster.x-k8s.io"
    topology = _by_kind(objects, "Cluster")[0]["spec"]["topology"]
    assert topology["classRef"] == {"name": "capisim-clusterclass"} and topology["version"] == "v1.31.1"
    assert [m["name"] for m in topology["workers"]["machineDeployments"]] == ["md-0", "md-1"]


@pytest.mark.parametrize("api_version", ["v1beta1", "v1beta2"])
def test_template_names_follow_the_spec(api_version):
    wc = _wc("mgmt-lab", "lab-perf")
    first = [o["metadata"]["name"] for o in workload_objects(wc, api_version)]
    assert first == [o["metadata"]["name"] for o in workload_objects(wc, api_version)]  # deterministic
    changed = dict(wc, machine_deployments=[dict(md, image="other:v1") for md in wc["machine_deployments"]])
    second = [o["metadata"]["name"] for o in workload_objects(changed, api_version)]
    assert len(set(first) ^ set(second)) == 4  # the two workers' DockerMachineTemplates got new names
