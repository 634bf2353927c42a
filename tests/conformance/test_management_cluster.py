"""A local management cluster of each CAPI release behaves like a real one where our modules care:
TLS, RBAC, audit, CRD printer columns, pruning, served versions, the objects the fleet loader creates."""

import copy
import json
import subprocess
from pathlib import Path

import pytest
import urllib3
import yaml
from kubernetes import config as kube_config
from kubernetes.dynamic import DynamicClient

from capisim import readiness
from capisim.cluster import kubectl_binary
from capisim.fleetspec import load_fleet
from capisim.kubeapi import ApiError, KubeAPI, resource_path
from capisim.objects import object_path, workload_objects
from capisim.pki import write_pki

FLEETS = Path(__file__).resolve().parents[1] / "fleets"
MD_NAME, NAMESPACE = "wl-1-md-0", "default"


@pytest.fixture(scope="module", params=["v1.10", "v1.14"])
def fleet(request, fleet_factory):
    return fleet_factory(str(FLEETS / f"single-{request.param}.yml"))


@pytest.fixture(scope="module")
def mgmt(fleet):
    return fleet.cluster()


def md_path(mgmt, name=MD_NAME):
    return resource_path("cluster.x-k8s.io", mgmt.api_version, "machinedeployments", NAMESPACE, name)


def _token(mgmt, user):
    return yaml.safe_load(Path(mgmt.kubeconfig(user)).read_text(encoding="utf-8"))["users"][0]["user"]["token"]


def test_kubeconfigs_embed_the_ca_and_name_the_context_after_the_cluster(mgmt):
    for user in ("admin", "rollout-operator", "viewer", "capi-controller-manager"):
        cfg = yaml.safe_load(Path(mgmt.kubeconfig(user)).read_text(encoding="utf-8"))
        assert cfg["current-context"] == mgmt.name
        assert cfg["contexts"][0]["name"] == mgmt.name
        assert cfg["clusters"][0]["cluster"]["certificate-authority-data"]
        # named per management cluster, so that kubeconfigs merged by kubectl keep every cluster's token (docs/awx.md)
        assert cfg["users"][0]["name"] == f"{user}@{mgmt.name}"
        assert cfg["contexts"][0]["context"]["user"] == f"{user}@{mgmt.name}"


def test_tls_is_verified_against_the_cluster_ca(mgmt, tmp_path):
    token = _token(mgmt, "viewer")
    assert KubeAPI(mgmt.server, token=token, ca_file=mgmt.ca_file).get("/version")["gitVersion"] == "v1.20.2"
    other_ca = write_pki(tmp_path / "other", "other")["ca.crt"]
    for ca_file in (None, other_ca):  # system trust store, then a CA that did not sign the server
        with pytest.raises(urllib3.exceptions.SSLError):
            KubeAPI(mgmt.server, token=token, ca_file=ca_file).get("/version")


def test_viewer_reads_but_cannot_patch(mgmt):
    viewer = mgmt.api("viewer")
    assert viewer.get(md_path(mgmt))["metadata"]["name"] == MD_NAME
    with pytest.raises(ApiError) as err:
        viewer.patch_merge(md_path(mgmt), {"metadata": {"annotations": {"capisim.test/viewer": "x"}}})
    assert err.value.status == 403


def test_operator_role_allows_patch_but_not_delete(mgmt):
    operator = mgmt.api("rollout-operator")
    patched = operator.patch_merge(md_path(mgmt), {"metadata": {"annotations": {"capisim.test/operator": "x"}}})
    assert patched["metadata"]["annotations"]["capisim.test/operator"] == "x"
    for call in (lambda: operator.delete(md_path(mgmt)),
                 lambda: operator.create(md_path(mgmt).rsplit("/", 1)[0], {"apiVersion": "x", "kind": "MachineDeployment"})):
        with pytest.raises(ApiError) as err:
            call()
        assert err.value.status == 403
    assert mgmt.api("admin").get(md_path(mgmt))["metadata"]["name"] == MD_NAME
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": f"capisim-test-{mgmt.name}"}}
    operator.create(resource_path("coordination.k8s.io", "v1", "leases", NAMESPACE), lease)


def test_audit_log_records_user_verb_and_code_once_per_request(mgmt):
    mark = mgmt.audit_mark()
    viewer, operator = mgmt.api("viewer"), mgmt.api("rollout-operator")
    viewer.get(md_path(mgmt))
    with pytest.raises(ApiError):
        viewer.patch_merge(md_path(mgmt), {"metadata": {"labels": {"x": "y"}}})
    operator.patch_merge(md_path(mgmt), {"metadata": {"annotations": {"capisim.test/audit": "1"}}})
    rv = viewer.list(md_path(mgmt).rsplit("/", 1)[0])["metadata"]["resourceVersion"]
    assert not list(viewer.watch(md_path(mgmt).rsplit("/", 1)[0], rv, timeout_seconds=1))
    log = mgmt.audit_log(since=mark)
    gets = log.requests(user="viewer", verbs=["get"], resource="machinedeployments")
    assert [(e["objectRef"]["name"], e["responseStatus"]["code"], e["userAgent"]) for e in gets] == [(MD_NAME, 200, "capisim")]
    assert [e["responseStatus"]["code"] for e in log.requests(user="viewer", verbs=["patch"])] == [403]
    assert [e["verb"] for e in log.writes("rollout-operator")] == ["patch"]
    assert len(log.requests(user="viewer", verbs=["watch"])) == 1
    assert log.writes("admin") == []


def test_watch_replays_from_a_resource_version_and_reports_expiry(mgmt):
    """The KubeAPI.watch contract: events after resource_version, ApiError(410) when it is too old."""
    viewer, operator = mgmt.api("viewer"), mgmt.api("rollout-operator")
    collection = md_path(mgmt).rsplit("/", 1)[0]
    rv = viewer.list(collection)["metadata"]["resourceVersion"]
    operator.patch_merge(md_path(mgmt), {"metadata": {"annotations": {"capisim.test/watch": rv}}})
    events = [(kind, obj["metadata"]["name"]) for kind, obj in viewer.watch(collection, rv, timeout_seconds=1)
              if obj.get("metadata", {}).get("annotations", {}).get("capisim.test/watch") == rv]
    assert ("MODIFIED", MD_NAME) in events
    with pytest.raises(ApiError) as err:
        list(viewer.watch(collection, "1", timeout_seconds=1))
    assert err.value.status == 410


def test_kubectl_shows_the_capi_printer_columns(mgmt, tmp_path):
    kubectl = kubectl_binary()  # v1.20.2, built with the API server (scripts/build-kube.sh)

    def header(*extra):
        out = subprocess.run([kubectl, "--kubeconfig", str(mgmt.kubeconfig("admin")), "--cache-dir", str(tmp_path),
                              "get", "machinedeployments", "-n", NAMESPACE, *extra],
                             check=True, capture_output=True, text=True).stdout
        assert out.splitlines()[1].split()[:2] == [MD_NAME, "wl-1"]
        return out.splitlines()[0].split()

    if mgmt.api_version == "v1beta1":  # Desired has priority 10: only with -o wide
        assert header() == ["NAME", "CLUSTER", "REPLICAS", "READY", "UPDATED", "UNAVAILABLE", "PHASE", "AGE", "VERSION"]
        assert header("-o", "wide") == ["NAME", "CLUSTER", "DESIRED", "REPLICAS", "READY", "UPDATED", "UNAVAILABLE",
                                        "PHASE", "AGE", "VERSION"]
    else:  # Paused has priority 10
        assert header() == ["NAME", "CLUSTER", "AVAILABLE", "DESIRED", "CURRENT", "READY", "AVAILABLE", "UP-TO-DATE",
                            "PHASE", "AGE", "VERSION"]
        assert "PAUSED" in header("-o", "wide")


def test_only_the_release_storage_version_is_served(mgmt):
    group = mgmt.api("viewer").get("/apis/cluster.x-k8s.io")
    assert [v["version"] for v in group["versions"]] == [mgmt.api_version]


def test_unknown_fields_are_pruned_as_on_a_real_server(mgmt, tmp_path):
    """The kubernetes client sees the server drop the field the other API version would have."""
    admin = mgmt.api("admin")
    probe = copy.deepcopy(admin.get(md_path(mgmt)))
    probe["metadata"] = {"name": "prune-probe", "namespace": NAMESPACE, "labels": probe["metadata"]["labels"]}
    probe["spec"]["replicas"] = 0
    probe.pop("status", None)
    admin.create(md_path(mgmt).rsplit("/", 1)[0], probe)
    try:
        client = DynamicClient(kube_config.new_client_from_config(config_file=str(mgmt.kubeconfig("admin"))),
                               cache_file=str(tmp_path / "discovery.json"))
        mds = client.resources.get(api_version=f"cluster.x-k8s.io/{mgmt.api_version}", kind="MachineDeployment")
        after = "2099-01-01T00:00:00Z"  # in the future: no rollout starts
        patched = mds.patch(name="prune-probe", namespace=NAMESPACE, content_type="application/merge-patch+json",
                            body={"spec": {"rolloutAfter": after, "rollout": {"after": after}}}).to_dict()
        if mgmt.api_version == "v1beta2":
            assert patched["spec"]["rollout"]["after"] == after
            assert "rolloutAfter" not in patched["spec"]
        else:
            assert patched["spec"]["rolloutAfter"] == after
            assert "rollout" not in patched["spec"]
        assert patched["metadata"]["generation"] == 2
    finally:
        admin.delete(md_path(mgmt, "prune-probe"))


def _contains(stored, sent, path="") -> list:
    """Paths where `sent` is not found unchanged in `stored` (pruned or rewritten by the server)."""
    if isinstance(sent, dict):
        if not isinstance(stored, dict):
            return [path]
        return [p for key, value in sent.items() for p in _contains(stored.get(key), value, f"{path}.{key}")]
    return [] if stored == sent else [path]


def test_the_objects_of_the_fleet_loader_are_stored_unchanged(fleet, mgmt):
    admin = mgmt.api("admin")
    spec = json.loads((fleet.state / "fleet.json").read_text(encoding="utf-8"))
    for wc in spec["management_clusters"][0]["workload_clusters"]:
        for obj in workload_objects(wc, mgmt.api_version):
            stored = admin.get(object_path(obj))
            sent = {"spec": obj.get("spec"), "labels": obj["metadata"].get("labels"),
                    "annotations": obj["metadata"].get("annotations")}
            stored_view = {"spec": stored.get("spec"), "labels": stored["metadata"].get("labels"),
                           "annotations": stored["metadata"].get("annotations")}
            assert _contains(stored_view, {k: v for k, v in sent.items() if v is not None}) == [], obj["kind"]


def test_topology_owned_objects_keep_their_empty_label_values(fleet_factory):
    """Real CAPI puts topology.cluster.x-k8s.io/owned: "" into selectors; the server must accept "" in a CR."""
    spec = load_fleet(str(FLEETS / "single-v1.14.yml"))
    wc = copy.deepcopy(spec["management_clusters"][0]["workload_clusters"][0])
    wc.update(name="classy", topology_owned=True)
    mgmt = fleet_factory(str(FLEETS / "single-v1.14.yml")).cluster()
    admin = mgmt.api("admin")
    objects = [o for o in workload_objects(wc, mgmt.api_version) if o["kind"] != "Cluster"]
    try:
        for obj in objects:
            admin.create(object_path(obj).rsplit("/", 1)[0], obj)
        md = admin.get(md_path(mgmt, "classy-md-0"))
        assert md["spec"]["selector"]["matchLabels"]["topology.cluster.x-k8s.io/owned"] == ""
    finally:
        for obj in reversed(objects):
            admin.delete(object_path(obj))


def test_inventory_points_at_the_operator_kubeconfig(fleet, mgmt):
    inventory = yaml.safe_load(Path(fleet.inventory).read_text(encoding="utf-8"))
    host = inventory["all"]["children"]["management_clusters"]["hosts"][mgmt.name]
    assert host["ansible_connection"] == "local"
    assert host["ansible_python_interpreter"] == "{{ ansible_playbook_python }}"
    assert host["capi_context"] == mgmt.name and host["capi_version"] == mgmt.capi_version
    assert host["capi_kubeconfig"] == str(mgmt.kubeconfig("rollout-operator"))
    assert Path(host["capi_audit_log"]).is_file()
    assert KubeAPI.from_kubeconfig(host["capi_kubeconfig"], host["capi_context"]).get(md_path(mgmt))


@pytest.mark.needs_controller
def test_every_rollout_is_complete_after_up(mgmt):
    admin = mgmt.api("admin")
    for kind, plural, group in (("MachineDeployment", "machinedeployments", "cluster.x-k8s.io"),
                                ("KubeadmControlPlane", "kubeadmcontrolplanes", "controlplane.cluster.x-k8s.io")):
        items = admin.list(resource_path(group, mgmt.api_version, plural))["items"]
        assert items, kind
        for obj in items:
            assert readiness.is_complete(obj, mgmt.api_version), readiness.describe(obj, mgmt.api_version)
