"""Integration tests: pytest drives ansible-playbook against local management clusters (tests/sim).

Puts tests/sim on sys.path and loads the capisim pytest plugin (fleet_factory), makes
``capi.rollout.*`` resolvable for ansible-playbook (the .build collection link, as
``make collection-link`` does), and offers ``run_module`` / ``audit`` helpers.
"""

import datetime
import os
import sys
from pathlib import Path

import pytest

from playbook import run_module

REPO = Path(__file__).resolve().parents[2]
SIM = str(REPO / "tests" / "sim")
if SIM not in sys.path:
    sys.path.insert(0, SIM)
# the core as Ansible imports it (the .build collection link, see pytest_configure)
BUILD = str(REPO / ".build")
if BUILD not in sys.path:
    sys.path.insert(0, BUILD)

from capisim.polling import wait_for  # noqa: E402  (needs tests/sim on sys.path)


def pytest_configure(config):
    config.addinivalue_line("markers", "api_server_fault: an API-server restart or hang; runs on the newest CAPI release's "
                                       "fleet only (NEWEST_RELEASE)")
    if not config.pluginmanager.hasplugin("capisim.pytest_plugin"):
        config.pluginmanager.import_plugin("capisim.pytest_plugin")
    link = REPO / ".build" / "ansible_collections" / "capi" / "rollout"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink("../../..", link)


# ---------------------------------------------------------------------------------------------
# The management clusters the module tests run against: one per CAPI version, each holding small
# workload clusters, one per group of tests, so that tests never share an object they change.
# Object names are <workload cluster>-<md>, e.g. "wa-md-0".

CAPI_VERSIONS = ("v1.10", "v1.14")

# What is the same code for every CAPI release runs against the newest release's fleet only (docs/testing.md): faults
# of the connection to the API server (a restart, a hang: the client's deadlines, retries and watch; marker
# api_server_fault, deselected on the other fleet) and the checks of core.settings before any request.
NEWEST_RELEASE = CAPI_VERSIONS[-1]


def pytest_collection_modifyitems(config, items):
    other = [item for item in items if item.get_closest_marker("api_server_fault") and hasattr(item, "callspec")
             and item.callspec.params.get("capi", NEWEST_RELEASE) != NEWEST_RELEASE]
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = [item for item in items if item not in other]


def modules_fleet(capi_version):
    tag = capi_version.replace(".", "-")
    fleet = {
        # a resync every 10 s: scheduled triggers are acted on at the next resync, as upstream (10 min there)
        "defaults": {"provision_seconds": 1, "sync_period_seconds": 10},
        "management_clusters": [{
            "name": f"it-{tag}",
            "capi_version": capi_version,
            "workload_clusters": [
                # restart + wait of a 3-replica MachineDeployment; control plane restart
                {"name": "wa", "control_plane": {"replicas": 1}, "machine_deployments": [{"name": "md-0", "replicas": 3}]},
                # deferred restart (md-0), template switch (md-1)
                {"name": "wb", "machine_deployments": [{"name": "md-0", "replicas": 1}, {"name": "md-1", "replicas": 1}]},
                # pause/resume, guards, check mode
                {"name": "wc", "control_plane": {"replicas": 1},
                 "machine_deployments": [{"name": "md-0", "replicas": 1}, {"name": "md-1", "replicas": 1},
                                         {"name": "md-2", "replicas": 1}]},
                # Cluster.spec.paused
                {"name": "wp", "paused": True, "machine_deployments": [{"name": "md-0", "replicas": 1}]},
                # ClusterClass-managed
                {"name": "wt", "topology_owned": True, "machine_deployments": [{"name": "md-0", "replicas": 1}]},
                # several objects switched to templates of their own in one call (switches), in their own namespace
                {"name": "ws", "namespace": "team-s",
                 "machine_deployments": [{"name": "md-0", "replicas": 1}, {"name": "md-1", "replicas": 1}]},
                # multi-object calls and rollout_id, in their own namespace
                {"name": "wm", "namespace": "team-m",
                 "machine_deployments": [{"name": "md-0", "replicas": 1}, {"name": "md-1", "replicas": 1},
                                         {"name": "md-2", "replicas": 1}]},
                # failing machines: stall detection and wait timeout
                {"name": "wf", "machine_deployments": [{"name": "md-0", "replicas": 1}]},
                # a Node whose kubelet runs another version than its Machine asks for (v1.14: not up to date)
                {"name": "wv", "machine_deployments": [{"name": "md-0", "replicas": 1}]},
                # restart + wait with the Ansible host's clock ahead of / behind the API server's
                {"name": "wk", "namespace": "team-k", "machine_deployments": [{"name": "ahead", "replicas": 1}, {"name": "behind", "replicas": 1}]},
                # an API-server restart during a wait; a hang. Their tests make the Machines slow (so the rollout
                # outlasts the outage) on the template, after the fleet is up: slow from the start, they held every
                # fleet start for a minute.
                {"name": "wo", "namespace": "team-o", "machine_deployments": [{"name": "md-0", "replicas": 2}]},
                {"name": "wh", "namespace": "team-o", "machine_deployments": [{"name": "md-0", "replicas": 1}]},
                # writes guarded by JSON patch tests while another writer keeps one object busy
                {"name": "wj", "namespace": "team-j",
                 "machine_deployments": [{"name": "md-0", "replicas": 1}, {"name": "md-1", "replicas": 1},
                                         {"name": "md-2", "replicas": 1}]},
                # field owners (test_field_owners.py): crafted managedFields (md-0..2), live GitOps reconcilers (md-3, md-4);
                # a namespace of its own (the guide examples wait for all of team-g)
                {"name": "wg", "namespace": "team-w",
                 "machine_deployments": [{"name": "md-0", "replicas": 1}, {"name": "md-1", "replicas": 1},
                                         {"name": "md-2", "replicas": 1},
                                         {"name": "md-3", "replicas": 1, "gitops": {"reconciler": "flux", "interval_seconds": 2}},
                                         {"name": "md-4", "replicas": 1,
                                          "gitops": {"reconciler": "argo", "self_heal": False}}]},
            ],
        }],
    }
    for wc in fleet["management_clusters"][0]["workload_clusters"]:
        wc["kubernetes_version"] = "v1.30.4"
    return fleet


class CapiEnv:
    """One management cluster of a fleet (the only one, or ``management_cluster``) plus helpers for tests."""

    def __init__(self, fleet, capi_version, namespace="default", management_cluster=None):
        self.fleet = fleet
        # the namespace of the objects a test module uses on a shared fleet, the default of the helpers below
        self.namespace = namespace
        self.mgmt = fleet.cluster(management_cluster)
        self.capi_version = capi_version
        self.version = self.mgmt.api_version  # v1beta1 | v1beta2
        self.host = self.mgmt.name
        self.admin = self.mgmt.api("admin")

    # ----- running modules -----
    def run(self, module, check=False, diff=False, kubeconfig="{{ capi_kubeconfig }}", environment=None, loop=None,
            **params):
        if self.namespace != "default":
            params.setdefault("namespace", self.namespace)
        return run_module(self.fleet.inventory, self.host, module, params, check=check, diff=diff,
                          kubeconfig=kubeconfig, environment=environment, loop=loop)

    # ----- audit log (user rollout-operator) -----
    def mark(self):
        return self.mgmt.audit_mark()

    def requests(self, mark, user="rollout-operator"):
        return self.mgmt.audit_log(since=mark).requests(user=user)

    def writes(self, mark, user="rollout-operator"):
        return self.mgmt.audit_log(since=mark).writes(user=user)

    def dry_runs(self, mark, user="rollout-operator"):
        return self.mgmt.audit_log(since=mark).dry_runs(user=user)

    # ----- reading and preparing objects as admin -----
    def path(self, kind, namespace=None, name=None):
        from capisim.kubeapi import resource_path
        from capisim.objects import KINDS
        group, plural = KINDS[kind]
        namespace = namespace or self.namespace
        version = self.version if group != "" else "v1"
        return resource_path(group, version, plural, namespace, name)

    def get(self, kind, name, namespace=None):
        return self.admin.get(self.path(kind, namespace, name))

    def machine_sets(self, md_name, namespace=None):
        items = self.admin.list(self.path("MachineSet", namespace),
                                label_selector=f"cluster.x-k8s.io/deployment-name={md_name}")["items"]
        return {item["metadata"]["name"]: item for item in items}

    def machines(self, label_selector, namespace=None):
        items = self.admin.list(self.path("Machine", namespace), label_selector=label_selector)["items"]
        return {item["metadata"]["name"]: item for item in items}

    def copy_template(self, md_name, suffix, annotations=None, namespace="default"):
        """Create a DockerMachineTemplate copied from the MD's current one; returns its name."""
        md = self.get("MachineDeployment", md_name, namespace)
        current = md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
        template = self.get("DockerMachineTemplate", current, namespace)
        meta = template["metadata"]
        new = {"apiVersion": template["apiVersion"], "kind": "DockerMachineTemplate",
               "metadata": {"name": f"{md_name}{suffix}", "namespace": namespace,
                            "labels": meta.get("labels") or {},
                            "annotations": dict(meta.get("annotations") or {}, **(annotations or {}))},
               "spec": template["spec"]}
        self.admin.create(self.path("DockerMachineTemplate", namespace), new)
        return new["metadata"]["name"]

    def add_workload(self, name, namespace, version, mds, control_plane=False, drain=None):
        """Create the objects of workload cluster ``name`` (Cluster, KubeadmControlPlane when ``control_plane``,
        one 1-replica MachineDeployment per name in ``mds``, their drains as fleet-spec ``drain`` says) in
        ``namespace`` as admin; objects that exist already (the Cluster, the namespace) are left as they are. For
        tests that need objects of their own."""
        from capisim.fleetspec import load_fleet
        from capisim.kubeapi import ApiError
        from capisim.objects import collection_path, workload_objects

        wc = {"name": name, "namespace": namespace, "kubernetes_version": version,
              "machine_deployments": [{"name": md, "replicas": 1, **({"drain": drain} if drain else {})} for md in mds]}
        if control_plane:
            wc["control_plane"] = {"replicas": 1}
        spec = load_fleet({"defaults": {"provision_seconds": 1}, "management_clusters": [
            {"name": "extra", "capi_version": self.capi_version, "workload_clusters": [wc]}]})
        for obj in workload_objects(spec["management_clusters"][0]["workload_clusters"][0], self.version):
            try:
                self.admin.create(collection_path(obj), obj)
            except ApiError as err:
                if err.status != 409:
                    raise

    def annotate(self, kind, name, key, value, namespace="default"):
        self.admin.patch_merge(self.path(kind, namespace, name), {"metadata": {"annotations": {key: value}}})

    def slow_machines(self, md_name, seconds, namespace="default"):
        """New Machines of the MD take ``seconds`` to provision (the simulator's knob on its current template)."""
        template = self.get("MachineDeployment", md_name, namespace)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
        self.annotate("DockerMachineTemplate", template, "sim.capi-rollout.dev/provision-seconds", str(seconds), namespace)

    wait_for = staticmethod(wait_for)

    @staticmethod
    def utc_in(seconds):
        moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def per_fleet(values, prefix):
    """Fixture params whose tests share one xdist worker per value (``make integration`` runs
    ``-n 3 --dist loadgroup``): each fleet is started by one worker only."""
    return [pytest.param(value, marks=pytest.mark.xdist_group(f"{prefix}-{value}")) for value in values]


@pytest.fixture(scope="session", params=per_fleet(CAPI_VERSIONS, "modules"))
def capi(request, fleet_factory):
    """A CapiEnv per CAPI version. pytest groups the tests by version and finishes one version
    before the next starts; its fleet is stopped then (CPU is scarce), not only at session end."""
    fleet = fleet_factory(modules_fleet(request.param))
    yield CapiEnv(fleet, request.param)
    fleet.fleet.down()


# The CAPI v1.12.3 fleet with InPlaceUpdates on (test_capi_rollout_in_place.py, group "in-place"). It also holds the
# v1.12.3 topology Cluster of test_topology_objects.py in a namespace of its own (the refresh of the in-place tests
# covers namespace default only), so v1.12.3 needs no fleet of its own.
IN_PLACE_STRATEGY = {"type": "RollingUpdate", "max_surge": 0, "max_unavailable": 1}
TOPOLOGY_IMAGE = "kindest/node:v1.30.4"
IN_PLACE_TOPOLOGY_NAMESPACE = "topology"


def topology_class(namespace="default"):
    """ClusterClass quick-start: one worker class; workerImage patched onto the workers' customImage, controlPlaneImage
    onto the control plane's machine infrastructure template only."""
    return {
        "name": "quick-start", "namespace": namespace, "control_plane_image": TOPOLOGY_IMAGE,
        "workers": [{"class": "default-worker", "image": TOPOLOGY_IMAGE}],
        "variables": [{"name": "workerImage", "default": TOPOLOGY_IMAGE,
                       "patch": {"path": "/spec/template/spec/customImage", "worker_classes": ["default-worker"]}},
                      {"name": "controlPlaneImage", "default": TOPOLOGY_IMAGE,
                       "patch": {"path": "/spec/template/spec/customImage", "control_plane": True}}]}


def topology_cluster(namespace="default"):
    """Topology Cluster tr: a 1-replica control plane and one 1-replica MachineDeployment md-0 of class quick-start."""
    return {"name": "tr", "namespace": namespace, "kubernetes_version": "v1.30.4", "topology": {"class": "quick-start"},
            "control_plane": {"replicas": 1},
            "machine_deployments": [{"name": "md-0", "class": "default-worker", "replicas": 1}]}


# path (c) of new hardware for topology MDs (test_topology_objects.py): a class whose one worker class no variable
# patches, and a Cluster of two MDs of that class, in a namespace of their own (the rebase changes the Cluster's class)
REBASE_NAMESPACE = "topo-rebase"


def rebase_class_and_cluster(namespace=REBASE_NAMESPACE, cluster="tc", cluster_class="lone"):
    """(ClusterClass "lone", topology Cluster "tc" with MDs md-0 and md-1 of its worker class small, 1 replica each)."""
    return ({"name": cluster_class, "namespace": namespace, "control_plane_image": TOPOLOGY_IMAGE,
             "workers": [{"class": "small", "image": TOPOLOGY_IMAGE}]},
            {"name": cluster, "namespace": namespace, "kubernetes_version": "v1.30.4", "topology": {"class": cluster_class},
             "control_plane": {"replicas": 1},
             "machine_deployments": [{"name": "md-0", "class": "small", "replicas": 1},
                                     {"name": "md-1", "class": "small", "replicas": 1}]})


IN_PLACE_FLEET = {
    "defaults": {"provision_seconds": 1},
    "management_clusters": [{
        "name": "it-inplace", "capi_version": "v1.12.3", "features": ["InPlaceUpdates"],
        "in_place_accepts": ["infrastructureRef", "version"], "in_place_seconds": 2,
        "cluster_classes": [topology_class(IN_PLACE_TOPOLOGY_NAMESPACE), rebase_class_and_cluster()[0]],
        "workload_clusters": [
            {"name": "wi", "kubernetes_version": "v1.30.4", "machine_deployments": [
                {"name": "replace", "replicas": 2, "strategy": IN_PLACE_STRATEGY},
                {"name": "allow", "replicas": 2, "strategy": IN_PLACE_STRATEGY}]},
            topology_cluster(IN_PLACE_TOPOLOGY_NAMESPACE), rebase_class_and_cluster()[1]],
    }],
}


@pytest.fixture(scope="session")
def in_place_fleet(fleet_factory):
    """The fleet of IN_PLACE_FLEET, for the test modules of xdist group "in-place" (one worker): it stays up until the
    end of that worker's session (fleet_factory stops it)."""
    return fleet_factory(IN_PLACE_FLEET)
