"""Fleet spec validation: every mistake reported by its path; defaults filled in; shipped fleets valid."""

import copy
from pathlib import Path

import pytest
import yaml

from capisim.fleetspec import FleetSpecError, load_fleet, validate

FLEETS = Path(__file__).resolve().parents[1] / "fleets"

BASE = {
    "defaults": {"provision_seconds": 2},
    "management_clusters": [
        {"name": "mgmt-a", "capi_version": "v1.10", "workload_clusters": []},
        {"name": "mgmt-b", "capi_version": "v1.14", "workload_clusters": [{
            "name": "prod-1", "namespace": "team-a", "kubernetes_version": "v1.30.4",
            "control_plane": {"replicas": 3, "max_surge": 1},
            "machine_deployments": [{"name": "md-0", "replicas": 1}, {"name": "md-1", "replicas": 2},
                                    {"name": "md-2", "replicas": 3}],
        }]},
    ],
}
WC = ("management_clusters", 1, "workload_clusters", 0)
MD2 = WC + ("machine_deployments", 2)
P_WC = "management_clusters[1].workload_clusters[0]"
P_MD2 = P_WC + ".machine_deployments[2]"


def _set(spec, path, value):
    node = spec
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _del(spec, path):
    node = spec
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]


CASES = [
    # (id, mutation path, value (DELETE = remove the key), expected error line)
    ("negative replicas", MD2 + ("replicas",), -1, f"{P_MD2}.replicas: must be an integer >= 0"),
    ("bool replicas", MD2 + ("replicas",), True, f"{P_MD2}.replicas: must be an integer >= 0"),
    ("unknown top key", ("extra",), 1, "spec.extra: unknown key"),
    ("zero sync period", ("defaults", "sync_period_seconds"), 0, "defaults.sync_period_seconds: must be an integer >= 1"),
    ("unknown md key", MD2 + ("replica",), 3, f"{P_MD2}.replica: unknown key"),
    ("unknown template key", MD2 + ("template",), {"img": "x"}, f"{P_MD2}.template.img: unknown key"),
    ("missing management_clusters", ("management_clusters",), "DELETE", "spec.management_clusters: is required"),
    ("empty management_clusters", ("management_clusters",), [], "management_clusters: must have at least 1 item(s)"),
    ("bad capi_version", ("management_clusters", 0, "capi_version"), "v1.15",
     "management_clusters[0].capi_version: must be one of v1.10, v1.11, v1.12.3, v1.12, v1.13, v1.14"),
    ("duplicate mgmt name", ("management_clusters", 1, "name"), "mgmt-a",
     "management_clusters[1].name: duplicate management cluster name 'mgmt-a'"),
    ("bad mgmt name", ("management_clusters", 0, "name"), "Mgmt_A", "management_clusters[0].name: must be a DNS label"),
    ("bad namespace", WC + ("namespace",), "team.a", f"{P_WC}.namespace: must be a DNS label"),
    ("bad version", WC + ("kubernetes_version",), "1.30", f"{P_WC}.kubernetes_version: must be a Kubernetes version"),
    ("missing version", WC + ("kubernetes_version",), "DELETE", f"{P_WC}.kubernetes_version: is required"),
    ("paused not bool", WC + ("paused",), "yes", f"{P_WC}.paused: must be true or false"),
    ("duplicate md", MD2 + ("name",), "md-0", f"{P_WC}.machine_deployments[2].name: duplicate machine deployment name 'md-0'"),
    ("strategy type", MD2 + ("strategy",), {"type": "Recreate"}, f"{P_MD2}.strategy.type: must be RollingUpdate or OnDelete"),
    ("OnDelete with surge", MD2 + ("strategy",), {"type": "OnDelete", "max_surge": 1},
     f"{P_MD2}.strategy.max_surge: is only allowed with type RollingUpdate"),
    ("both zero", MD2 + ("strategy",), {"type": "RollingUpdate", "max_surge": 0, "max_unavailable": "0%"},
     f"{P_MD2}.strategy: max_surge and max_unavailable cannot both be 0"),
    ("bad percent", MD2 + ("strategy",), {"type": "RollingUpdate", "max_surge": "x%"},
     f"{P_MD2}.strategy.max_surge: must be an integer >= 0 or a percentage"),
    ("cp surge", WC + ("control_plane",), {"replicas": 3, "max_surge": 2}, f"{P_WC}.control_plane.max_surge: must be 0 or 1"),
    ("cp scale-in needs 3", WC + ("control_plane",), {"replicas": 1, "max_surge": 0},
     f"{P_WC}.control_plane: max_surge 0 (scale in) needs replicas >= 3"),
    ("cp zero replicas", WC + ("control_plane",), {"replicas": 0}, f"{P_WC}.control_plane.replicas: must be an integer >= 1"),
    ("md name too long", MD2 + ("name",), "x" * 60, f"{P_MD2}.name: must be a DNS label"),
    ("failure domain", MD2 + ("failure_domain",), 3, f"{P_MD2}.failure_domain: must be a non-empty string or null"),
    ("provision string", ("defaults", "provision_seconds"), "2", "defaults.provision_seconds: must be an integer >= 0"),
    ("gitops reconciler", MD2 + ("gitops",), {"reconciler": "fleet"}, f"{P_MD2}.gitops.reconciler: must be flux or argo"),
    ("gitops interval", MD2 + ("gitops",), {"reconciler": "flux", "interval_seconds": 0},
     f"{P_MD2}.gitops.interval_seconds: must be an integer >= 1"),
    ("flux self_heal", MD2 + ("gitops",), {"reconciler": "flux", "self_heal": False},
     f"{P_MD2}.gitops.self_heal: is only allowed with reconciler argo"),
    ("unknown feature", ("management_clusters", 1, "features"), ["MachinePool"],
     "management_clusters[1].features[0]: unknown feature gate 'MachinePool' (simulated: InPlaceUpdates)"),
    # InPlaceUpdates came with v1.12 (v1.12.3 feature/feature.go); v1.11.11's feature/feature.go has no such gate
    ("in-place before v1.12", ("management_clusters", 0, "features"), ["InPlaceUpdates"],
     "management_clusters[0].features: InPlaceUpdates does not exist in CAPI v1.10 (it came with v1.12)"),
    ("in-place accepts failure domain", ("management_clusters", 1, "in_place_accepts"), ["failureDomain"],
     "management_clusters[1].in_place_accepts: needs features: [InPlaceUpdates]"),
    ("workload not a list", ("management_clusters", 0, "workload_clusters"), {}, "management_clusters[0].workload_clusters: must be a list"),
]


@pytest.mark.parametrize("path,value,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_mistakes_are_reported_by_path(path, value, expected):
    spec = copy.deepcopy(BASE)
    if value == "DELETE":
        _del(spec, path)
    else:
        _set(spec, path, value)
    with pytest.raises(FleetSpecError) as err:
        validate(spec)
    assert any(line.startswith(expected) for line in err.value.errors), err.value.errors


def test_in_place_updates_on_v1_12_and_later():
    spec = copy.deepcopy(BASE)
    mgmt = spec["management_clusters"][1]
    assert validate(spec)["management_clusters"][1]["features"] == []
    assert validate(spec)["management_clusters"][1]["in_place_accepts"] == []
    mgmt["features"] = ["InPlaceUpdates"]
    filled = validate(spec)["management_clusters"][1]
    assert filled["in_place_accepts"] == ["infrastructureRef", "version", "bootstrap"]
    assert filled["in_place_seconds"] == 1
    mgmt["in_place_accepts"] = ["version", "failureDomain"]
    with pytest.raises(FleetSpecError) as err:
        validate(spec)
    assert err.value.errors == ["management_clusters[1].in_place_accepts[1]: 'failureDomain' is not a template field "
                                "updatable in place (one of infrastructureRef, version, bootstrap)"]
    for version in ("v1.12.3", "v1.12", "v1.13"):
        mgmt["capi_version"], mgmt["in_place_accepts"] = version, ["version"]
        assert validate(spec)["management_clusters"][1]["in_place_accepts"] == ["version"]


def test_all_mistakes_at_once():
    spec = copy.deepcopy(BASE)
    _set(spec, MD2 + ("replicas",), -1)
    _set(spec, ("management_clusters", 0, "capi_version"), "v2")
    with pytest.raises(FleetSpecError) as err:
        validate(spec)
    assert len(err.value.errors) == 2
    assert str(err.value).startswith("invalid fleet spec:\n  ")


def test_defaults_are_filled_in():
    spec = copy.deepcopy(BASE)
    _set(spec, WC + ("kubernetes_version",), "1.30.4")
    _set(spec, WC + ("provision_seconds",), 5)
    _set(spec, MD2 + ("provision_seconds",), 0)
    wc = validate(spec)["management_clusters"][1]["workload_clusters"][0]
    assert wc["kubernetes_version"] == "v1.30.4"  # "v" added as CAPI's webhook does
    assert (wc["topology_owned"], wc["paused"], wc["provision_seconds"]) == (False, False, 5)
    md0, md2 = wc["machine_deployments"][0], wc["machine_deployments"][2]
    assert md0["strategy"] == {"type": "RollingUpdate", "max_surge": 1, "max_unavailable": 0}
    assert md0["image"] == "kindest/node:v1.30.4"
    assert (md0["provision_seconds"], md2["provision_seconds"]) == (5, 0)
    plain = validate({"management_clusters": [{"name": "m", "capi_version": "v1.14", "workload_clusters": [
        {"name": "c", "kubernetes_version": "v1.31.0"}]}]})
    # CAPI's --sync-period default; deleted Machines go at once unless a delay is asked for
    assert plain["defaults"] == {"provision_seconds": 2, "deletion_seconds": 0, "sync_period_seconds": 600}
    only = plain["management_clusters"][0]["workload_clusters"][0]
    assert only["deletion_seconds"] == 0
    _set(spec, WC + ("deletion_seconds",), 3)
    assert validate(spec)["management_clusters"][1]["workload_clusters"][0]["deletion_seconds"] == 3
    _set(spec, WC + ("deletion_seconds",), -1)
    with pytest.raises(FleetSpecError) as err:
        validate(spec)
    assert "workload_clusters[0].deletion_seconds: must be an integer >= 0" in str(err.value)
    assert (only["namespace"], only["control_plane"], only["machine_deployments"]) == ("default", None, [])


@pytest.mark.parametrize("path", sorted(FLEETS.glob("*.yml")), ids=lambda p: p.name)
def test_shipped_fleets_are_valid(path):
    assert load_fleet(str(path))["management_clusters"]


TOPOLOGY = FLEETS / "topology.yml"
P_TWC = "management_clusters[0].workload_clusters[0]"


@pytest.mark.parametrize("change,expected", [
    (lambda s: s["management_clusters"][0]["workload_clusters"][0]["topology"].update({"class": "nope"}),
     f"{P_TWC}.topology.class: no ClusterClass 'nope' in namespace 'default' among this management cluster's "
     "cluster_classes (quick-start)"),
    (lambda s: s["management_clusters"][0]["workload_clusters"][0]["machine_deployments"][0].update({"class": "gpu"}),
     f"{P_TWC}.machine_deployments[0].class: 'gpu' is not a worker class of ClusterClass 'quick-start' "
     "(its classes: default-worker, large-worker)"),
    (lambda s: s["management_clusters"][0]["workload_clusters"][0]["machine_deployments"][1]["variables"]["overrides"][0]
     .update({"name": "osImage"}),
     f"{P_TWC}.machine_deployments[1].variables.overrides[0].name: 'osImage' is not a variable of the ClusterClass "
     "(its variables: workerImage)"),
    (lambda s: s["management_clusters"][0]["workload_clusters"][0]["machine_deployments"][0].update({"strategy": None}),
     f"{P_TWC}.machine_deployments[0].strategy: unknown key (allowed: name, class, replicas, variables, provision_seconds)"),
    (lambda s: s["management_clusters"][0]["workload_clusters"][0].update({"topology_owned": True}),
     f"{P_TWC}.topology_owned: labels-only topology_owned cannot be combined with a real topology"),
    (lambda s: s["management_clusters"][0]["cluster_classes"][0]["variables"][0]["patch"].update({"path": "customImage"}),
     "management_clusters[0].cluster_classes[0].variables[0].patch.path: must be a JSON pointer into the template's "
     "spec, like /spec/template/spec/customImage"),
    (lambda s: s["management_clusters"][0]["cluster_classes"][0]["variables"][0]["patch"].update({"worker_classes": ["x"]}),
     "management_clusters[0].cluster_classes[0].variables[0].patch.worker_classes: 'x' is not a worker class of this "
     "ClusterClass"),
])
def test_topology_mistakes_are_reported_by_path(change, expected):
    spec = yaml.safe_load(TOPOLOGY.read_text(encoding="utf-8"))
    change(spec)
    with pytest.raises(FleetSpecError) as err:
        validate(spec)
    assert expected in err.value.errors


def test_topology_fleet_is_filled_in():
    mgmt = load_fleet(str(TOPOLOGY))["management_clusters"][0]
    (cclass,) = mgmt["cluster_classes"]
    assert [w["class"] for w in cclass["workers"]] == ["default-worker", "large-worker"]
    assert cclass["variables"][0]["default"] == "kindest/node:v1.30.4"
    wc = mgmt["workload_clusters"][0]
    assert wc["topology"] == {"class": "quick-start", "variables": []}
    assert [(md["name"], md["class"], md["replicas"], md["overrides"]) for md in wc["machine_deployments"]] == [
        ("md-0", "default-worker", 2, []),
        ("md-1", "default-worker", 1, [{"name": "workerImage", "value": "kindest/node:v1.30.4-custom"}])]
