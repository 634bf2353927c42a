"""`make demo` refreshes its ClusterClass (topology) clusters (issue 26 §4): scripts/demo.sh, as `make demo` runs it, over
the demo fleet's topology clusters (tests/fleets/demo.yml: shop-prod on mgmt-west, lab-dev on mgmt-lab). The rest of the
demo fleet is plain clusters that other tests cover; leaving them out keeps this test to two small management clusters.

No object is blocked by its topology, every Machine of both clusters is new, the template references stay the topology
controller's (field manager capi-topology), and the topology controller, made to reconcile again, puts nothing back."""

import json
import subprocess

import pytest
import yaml

from conftest import CapiEnv
from hardware_refresh_support import REPO, PlaybookRun, playbook_env

pytestmark = [pytest.mark.needs_controller, pytest.mark.xdist_group("demo-topology")]

DEMO = REPO / "tests" / "fleets" / "demo.yml"
# (management cluster, namespace, workload cluster) of the demo's topology clusters
TOPOLOGY_CLUSTERS = (("mgmt-west", "shop", "shop-prod"), ("mgmt-lab", "default", "lab-dev"))
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"
OWNED = "topology.cluster.x-k8s.io/owned"


def demo_topology_fleet():
    """demo.yml's management clusters that declare ClusterClasses, with their topology clusters only."""
    spec = yaml.safe_load(DEMO.read_text(encoding="utf-8"))
    mgmts = [dict(mgmt, workload_clusters=[wc for wc in mgmt.get("workload_clusters", []) if wc.get("topology")])
             for mgmt in spec["management_clusters"] if mgmt.get("cluster_classes")]
    assert [m["name"] for m in mgmts] == ["mgmt-west", "mgmt-lab"], "demo.yml changed: update TOPOLOGY_CLUSTERS"
    return dict(spec, management_clusters=mgmts)


@pytest.fixture(scope="module")
def demo(fleet_factory):
    fleet = fleet_factory(demo_topology_fleet())
    yield {mgmt: CapiEnv(fleet, "v1.14", namespace, management_cluster=mgmt) for mgmt, namespace, _cluster in TOPOLOGY_CLUSTERS}
    fleet.fleet.down()


def _run_demo(state, report_dir):
    """scripts/demo.sh as `make demo` runs it (the plan in check mode, then the refresh)."""
    return subprocess.run(["scripts/demo.sh", str(REPO / ".venv"), str(state)], cwd=str(REPO), check=False, timeout=1200,
                          env=dict(playbook_env(), REFRESH_ID="demo-topology", REPORT_DIR=str(report_dir)),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _objects(env, cluster):
    """The cluster's KubeadmControlPlane and MachineDeployments, by name."""
    found = {}
    for kind in ("KubeadmControlPlane", "MachineDeployment"):
        for obj in env.admin.list(env.path(kind), label_selector=f"{CLUSTER_NAME}={cluster}")["items"]:
            found[obj["metadata"]["name"]] = obj
    return found


def _template_ref(obj):
    spec = obj["spec"]
    holder = spec["template"]["spec"] if obj["kind"] == "MachineDeployment" else spec["machineTemplate"]["spec"]
    return holder["infrastructureRef"]["name"]


def _machines(env, cluster):
    return {name: m["metadata"]["uid"] for name, m in env.machines(f"{CLUSTER_NAME}={cluster}").items()}


def test_the_demo_refreshes_its_topology_clusters(demo, tmp_path):
    before = {cluster: _machines(demo[mgmt], cluster) for mgmt, _ns, cluster in TOPOLOGY_CLUSTERS}
    proc = _run_demo(demo["mgmt-west"].fleet.state, tmp_path / "report")
    run, plan = PlaybookRun(proc.returncode, proc.stdout, tmp_path / "report"), \
        PlaybookRun(proc.returncode, proc.stdout, tmp_path / "report" / "plan")
    assert proc.returncode == 0, run.explain()
    for mgmt, _ns, cluster in TOPOLOGY_CLUSTERS:
        env = demo[mgmt]
        objects = _objects(env, cluster)
        assert len(objects) == {"shop-prod": 3, "lab-dev": 2}[cluster], sorted(objects)
        for name, obj in objects.items():
            # the plan (check mode) names the way through the topology, not a blocker
            planned = plan.obj(mgmt, name)
            assert planned["blockers"] == [] and planned["result"] == "planned", planned
            done = run.obj(mgmt, name)
            assert done["result"] == "succeeded", done
            # the new image reached the template the topology generated, and that reference is still the topology's
            template = env.get("DockerMachineTemplate", _template_ref(obj))
            assert template["spec"]["template"]["spec"]["customImage"] == "kindest/node:gen2", (name, template["metadata"])
            owners = [f["manager"] for f in obj["metadata"]["managedFields"] if "f:infrastructureRef" in json.dumps(f.get("fieldsV1"))]
            assert owners == ["capi-topology"], (name, owners)
        after = _machines(env, cluster)
        assert len(after) == len(before[cluster]) and not set(after.values()) & set(before[cluster].values()), cluster
        assert run.cluster(mgmt)["result"] == "succeeded", run.cluster(mgmt)
    assert "topology" not in json.dumps([o["blockers"] for mgmt, _ns, _c in TOPOLOGY_CLUSTERS
                                         for o in plan.cluster(mgmt)["objects"]])

    # Nothing put back: the topology controller is made to reconcile the Cluster again (a hand edit of a label it sets on
    # an MD, which it puts back: no rollout either way); once it has, every template reference is the one the refresh
    # left (no template rotated back) and no Machine changed.
    for mgmt, _ns, cluster in TOPOLOGY_CLUSTERS:
        env = demo[mgmt]
        objects = _objects(env, cluster)
        refs = {name: _template_ref(obj) for name, obj in objects.items()}
        machines = _machines(env, cluster)
        md = sorted(name for name, obj in objects.items() if obj["kind"] == "MachineDeployment")[0]
        env.admin.patch_merge(env.path("MachineDeployment", name=md), {"metadata": {"labels": {OWNED: "hand-edit"}}})
        env.wait_for(f"the topology controller of {mgmt} puts {md}'s label {OWNED} back",
                     lambda: env.get("MachineDeployment", md)["metadata"]["labels"][OWNED] == "")
        assert {name: _template_ref(obj) for name, obj in _objects(env, cluster).items()} == refs
        assert _machines(env, cluster) == machines
