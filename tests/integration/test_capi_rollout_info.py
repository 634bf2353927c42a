"""capi_rollout_info against local management clusters (CAPI v1.10 / v1beta1 and v1.14 / v1beta2)."""

import pytest

from capisim.audit import shape

pytestmark = pytest.mark.needs_controller

# discovery, one list of the kind, of the Clusters and of the MachineSets (they decide completion; docs/performance.md)
INFO_REQUESTS = [("get", "/apis"), ("list", "machinedeployments"), ("list", "clusters"), ("list", "machinesets")]

ENTRY_KEYS = {"kind", "name", "namespace", "api_version", "cluster", "paused", "topology_owned", "replicas", "rollout",
              "template", "revision", "conditions"}


def test_every_machinedeployment_with_a_constant_number_of_requests(capi):
    expected = sorted(md["metadata"]["name"] for md in capi.admin.list(capi.path("MachineDeployment"))["items"])
    assert len(expected) >= 6
    mark = capi.mark()
    res = capi.run("capi_rollout_info")
    assert not res.failed, res.get("msg")
    assert res["changed"] is False
    assert sorted(r["name"] for r in res["resources"]) == expected
    requests = capi.requests(mark)
    # the same four requests whatever the number of objects (docs/performance.md)
    assert shape(requests) == INFO_REQUESTS, shape(requests)
    assert res["api_requests"] == len(requests)

    mark = capi.mark()
    res = capi.run("capi_rollout_info", machine_sets=True, machines=True)
    assert not res.failed, res.get("msg")
    requests = capi.requests(mark)
    # and one list of Machines (docs/performance.md: 5)
    assert shape(requests) == INFO_REQUESTS + [("list", "machines")], shape(requests)
    assert not capi.writes(mark)
    for entry in res["resources"]:
        assert ENTRY_KEYS <= set(entry), entry
        assert entry["api_version"] == f"cluster.x-k8s.io/{capi.version}"
        assert set(entry["replicas"]) == {"desired", "current", "ready", "available", "up_to_date"}
        assert {"complete", "message", "after", "pending", "strategy"} <= set(entry["rollout"])
        assert set(entry["template"]) == {"version", "infrastructure_ref", "bootstrap_ref", "failure_domain"}
        assert entry["machine_sets"], entry["name"]
        assert len(entry["machines"]) == entry["replicas"]["desired"]
        for machine in entry["machines"]:
            assert {"name", "phase", "node", "up_to_date", "ready"} <= set(machine)


def test_fields_of_a_settled_machinedeployment(capi):
    res = capi.run("capi_rollout_info", name="wa-md-0", machine_sets=True, machines=True)
    assert not res.failed, res.get("msg")
    (entry,) = res["resources"]
    md = capi.get("MachineDeployment", "wa-md-0")
    assert entry["kind"] == "MachineDeployment" and entry["namespace"] == "default"
    assert entry["cluster"] == "wa"
    assert entry["paused"] is False and entry["topology_owned"] is False
    assert entry["template"]["version"] == md["spec"]["template"]["spec"]["version"]
    assert entry["template"]["infrastructure_ref"]["name"] == md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    assert entry["template"]["infrastructure_ref"]["kind"] == "DockerMachineTemplate"
    assert entry["template"]["bootstrap_ref"]["kind"] == "KubeadmConfigTemplate"
    assert entry["revision"] == int(md["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"])
    for condition in entry["conditions"]:
        assert set(condition) == {"type", "status", "reason", "message"}
    current = [ms for ms in entry["machine_sets"] if ms["revision"] == entry["revision"]]
    assert len(current) == 1 and current[0]["replicas"]["desired"] == entry["replicas"]["desired"]
    assert all(m["machine_set"] == current[0]["name"] for m in entry["machines"] if not m["deleting"])


def test_control_planes_topology_and_paused_clusters(capi):
    res = capi.run("capi_rollout_info", kind="KubeadmControlPlane", machines=True)
    assert not res.failed, res.get("msg")
    by_name = {r["name"]: r for r in res["resources"]}
    assert set(by_name) == {"wa-control-plane", "wc-control-plane"}
    kcp = by_name["wa-control-plane"]
    assert kcp["api_version"] == f"controlplane.cluster.x-k8s.io/{capi.version}"
    assert kcp["cluster"] == "wa" and len(kcp["machines"]) == 1

    res = capi.run("capi_rollout_info", cluster_name="wt")
    (topo,) = res["resources"]
    assert topo["topology_owned"] is True

    res = capi.run("capi_rollout_info", label_selectors=["cluster.x-k8s.io/cluster-name=wp"])
    (paused,) = res["resources"]
    assert paused["paused"] is True
    assert any("Cluster" in reason for reason in paused["paused_reasons"])


def test_names_in_another_namespace(capi):
    res = capi.run("capi_rollout_info", namespace="team-m", names=["wm-md-0", "wm-md-2"])
    assert not res.failed, res.get("msg")
    assert [r["name"] for r in res["resources"]] == ["wm-md-0", "wm-md-2"]
    assert all(r["namespace"] == "team-m" for r in res["resources"])
