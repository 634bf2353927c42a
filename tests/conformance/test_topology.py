"""The simulator's Cluster topology controller (capisim/controller/topology.py, reconcile_topology.py).

Pure cases first: upstream's table tests of the logic reimplemented, translated case by case (file and tag cited per
case), then rotation, variables, per-MD class change, rebase and rollout.after on the desired state alone. Then the
controller against real kube-apiservers of v1.10 (v1beta1), v1.13 and v1.14 (v1beta2): one small shared fleet of three
management clusters with two ClusterClasses and no workload cluster; each live test creates its own topology Cluster.
"""

import copy
import itertools
import random
import re

import pytest

from capisim import readiness
from capisim.controller import model as m
from capisim.controller import topology as t
from capisim.kubeapi import ApiError, resource_path
from capisim.objects import cluster_class_objects, collection_path, workload_objects
from capisim.polling import wait_for

CORE, CONTROLPLANE, INFRA, BOOTSTRAP = m.CLUSTER_GROUP, m.CONTROLPLANE_GROUP, m.INFRA_GROUP, m.BOOTSTRAP_GROUP
IMAGE = "kindest/node:v1.30.4"
_RANDOM = re.compile(r"^[bcdfghjklmnpqrstvwxz2456789]{5}$")


def cluster_class_spec(name="quick-start", control_plane_image=IMAGE, large_image=IMAGE + "-large"):
    """A validated fleetspec cluster class: two worker classes, a workerImage variable patched into the
    DockerMachineTemplate customImage of default-worker only (large-worker keeps its template's image)."""
    return {"name": name, "namespace": "default", "control_plane_image": control_plane_image,
            "workers": [{"class": "default-worker", "image": IMAGE}, {"class": "large-worker", "image": large_image}],
            "variables": [{"name": "workerImage", "default": IMAGE, "path": "/spec/template/spec/customImage",
                           "worker_classes": ["default-worker"], "control_plane": False}]}


def workload_spec(name, mds=(("md-0", "default-worker", 1, None),), cp_replicas=1, cclass="quick-start", variables=()):
    """A validated fleetspec topology workload cluster; mds: (name, class, replicas, workerImage override or None)."""
    return {"name": name, "namespace": "default", "kubernetes_version": "v1.30.4", "topology_owned": False, "paused": False,
            "provision_seconds": 1, "deletion_seconds": 0, "control_plane": {"replicas": cp_replicas, "max_surge": 1},
            "topology": {"class": cclass, "variables": [{"name": k, "value": v} for k, v in variables]},
            "machine_deployments": [{"name": n, "class": c, "replicas": r, "provision_seconds": 1,
                                     "overrides": [{"name": "workerImage", "value": o}] if o else []}
                                    for n, c, r, o in mds]}


# --- an in-memory world for the pure desired state ---------------------------------------------------------------

def _world(api_version, cclass_spec=None, decorate=None):
    """(ClusterClass, get_template): the fleet's class objects; ``decorate(objects)`` may change them first."""
    objects = cluster_class_objects(cclass_spec or cluster_class_spec(), api_version)
    if decorate:
        decorate(objects)
    templates = {(o["kind"], o["metadata"]["name"]): o for o in objects if o["kind"].endswith("Template")}
    cclass = next(o for o in objects if o["kind"] == "ClusterClass")
    return cclass, lambda kind, name: templates.get((kind, name))


def _cluster(api_version, wc=None):
    cluster = workload_objects(wc or workload_spec("c1"), api_version)[-1]
    cluster["metadata"]["uid"] = "uid-c1"
    return cluster


def _current_of(state):
    """The desired state as it would be served next time: every object now exists (has a uid)."""
    def served(obj):
        obj = copy.deepcopy(obj)
        obj["metadata"].setdefault("uid", "uid-" + obj["metadata"]["name"])
        return obj
    return {"control_plane": served(state.control_plane), "control_plane_infra": served(state.control_plane_infra),
            "machine_deployments": {n: (served(d.md), served(d.bootstrap), served(d.infra))
                                    for n, d in state.machine_deployments.items()}}


def _desired(api_version="v1beta2", wc=None, current=None, rollout_after=True, cclass_spec=None, seed=1, decorate=None):
    cclass, get_template = _world(api_version, cclass_spec, decorate)
    return t.desired_state(_cluster(api_version, wc), cclass, get_template, current or {}, rollout_after, random.Random(seed))


# --- internal/topology/names/names_test.go (v1.10.10 and v1.14.0) Test_templateGenerator_GenerateName ------------
# The naming-template engine itself is not reimplemented (only the default templates are), so the two error cases
# ("error on parsing template", "error on due to missing key in data") have no counterpart.

def test_names_case_simple_template():
    """case "simple template": a rendered name of at most 63 characters is kept as it is."""
    assert t.template_generated_name("some-simple-testdata", random.Random(0)) == "some-simple-testdata"


def test_names_case_trimmed_and_random_suffix():
    """case "name which gets trimmed and added a random suffix with 5 characters": 64 zeros."""
    name = t.template_generated_name("0" * 64, random.Random(0))
    assert name.startswith("0" * 58) and not name.endswith("00000") and len(name) == 63


def test_names_case_not_trimmed():
    """case "name which does not get trimmed": 63 zeros."""
    assert t.template_generated_name("0" * 63, random.Random(0)) == "0" * 63


def test_default_name_templates_and_template_prefixes():
    """desired_state.go default naming templates and names.go prefixes (v1.10.10, v1.14.0)."""
    rng = random.Random(0)
    cp, md = t.control_plane_name("c1", rng), t.machine_deployment_name("c1", "md-0", rng)
    assert cp.startswith("c1-") and _RANDOM.match(cp[3:])
    assert md.startswith("c1-md-0-") and _RANDOM.match(md[8:])
    assert t.md_template_prefix("c1", "md-0") == "c1-md-0-" and t.control_plane_template_prefix("c1") == "c1-"
    long_name = t.generate_name("x" * 70, rng)  # SimpleNameGenerator: base cut to 58, plus 5
    assert long_name.startswith("x" * 58) and len(long_name) == 63


# --- exp/topology/desiredstate/desired_state_test.go (v1.14.0), TestTemplateToTemplate (line 3544) --------------

def test_template_to_template_case_generates_a_template_from_a_template():
    """case "Generates a template from a template" (assertTemplateToTemplate): same apiVersion and kind, a name with
    the cluster's prefix, the Cluster's namespace, cluster-name and owned labels (the template's own kept),
    cloned-from annotations, no last-applied-configuration, the template's spec."""
    def decorate(objects):
        source = next(o for o in objects if o["metadata"]["name"] == "quick-start-control-plane"
                      and o["kind"] == "DockerMachineTemplate")
        source["metadata"].update(labels={"team": "a"}, annotations={m.LAST_APPLIED: "foo", "note": "kept"})
    clone = _desired(decorate=decorate).control_plane_infra
    assert (clone["apiVersion"], clone["kind"]) == (f"{INFRA}/v1beta2", "DockerMachineTemplate")
    assert clone["metadata"]["name"].startswith("c1-") and clone["metadata"]["namespace"] == "default"
    assert clone["metadata"]["labels"] == {"team": "a", m.CLUSTER_NAME: "c1", t.OWNED: ""}
    assert clone["metadata"]["annotations"] == {"note": "kept", m.CLONED_FROM_NAME: "quick-start-control-plane",
                                                m.CLONED_FROM_GROUPKIND: f"DockerMachineTemplate.{INFRA}"}
    assert clone["spec"] == {"template": {"spec": {"customImage": IMAGE}}}


def test_template_to_template_case_keeps_the_name_of_the_current_reference():
    """case "Overrides the generated name if there is already a reference": an unchanged template keeps its name."""
    first = _desired()
    assert m.name(_desired(current=_current_of(first), seed=2).control_plane_infra) == m.name(first.control_plane_infra)


# --- exp/topology/desiredstate/desired_state_test.go (v1.14.0), cases of TestComputeMachineDeployment -----------

@pytest.mark.parametrize("api_version", ["v1beta1", "v1beta2"])
def test_compute_md_case_generates_the_machine_deployment_and_the_referenced_templates(api_version):
    """case "Generates the machine deployment and the referenced templates" (line 1997): template labels and owner
    reference, replicas, clusterName, a name holding cluster and topology name, the topology labels on the MD, its
    selector and template, and refs to new templates (not the class's). The selector also holds
    cluster.x-k8s.io/deployment-name: the MD defaulting webhook adds it and none runs here."""
    state = _desired(api_version)
    want = state.machine_deployments["md-0"]
    for template in (want.bootstrap, want.infra):
        assert template["metadata"]["labels"][t.TOPOLOGY_MD_NAME] == "md-0"
        assert [(o["kind"], o["name"]) for o in template["metadata"]["ownerReferences"]] == [("Cluster", "c1")]
    md = want.md
    assert md["spec"]["replicas"] == 1 and md["spec"]["clusterName"] == "c1"
    assert "c1" in md["metadata"]["name"] and "md-0" in md["metadata"]["name"]
    topology_labels = {m.CLUSTER_NAME: "c1", t.OWNED: "", t.TOPOLOGY_MD_NAME: "md-0"}
    assert md["metadata"]["labels"] == topology_labels
    assert md["spec"]["selector"]["matchLabels"] == dict(topology_labels, **{m.DEPLOYMENT_NAME: md["metadata"]["name"]})
    assert md["spec"]["template"]["metadata"]["labels"] == md["spec"]["selector"]["matchLabels"]
    spec = md["spec"]["template"]["spec"]
    assert spec["infrastructureRef"]["name"] != "quick-start-default-worker"
    assert spec["bootstrap"]["configRef"]["name"] != "quick-start-default-worker"
    if api_version == "v1beta2":
        assert spec["infrastructureRef"] == {"apiGroup": INFRA, "kind": "DockerMachineTemplate", "name": m.name(want.infra)}
    else:
        assert spec["infrastructureRef"] == {"apiVersion": f"{INFRA}/v1beta1", "kind": "DockerMachineTemplate",
                                             "name": m.name(want.infra), "namespace": "default"}


def test_compute_md_case_existing_machine_deployment_keeps_object_and_reference_names():
    """case "If there is already a machine deployment, it preserves the object name and the reference names"
    (line 2198): with unchanged templates nothing is renamed, and replicas come from the topology."""
    first = _desired()
    current = _current_of(first)
    current["machine_deployments"]["md-0"][0]["spec"]["replicas"] = 5
    again = _desired(current=current, seed=2)
    assert again.machine_deployments["md-0"].md["metadata"]["name"] == first.machine_deployments["md-0"].md["metadata"]["name"]
    assert again.machine_deployments["md-0"].md["spec"]["replicas"] == 1
    assert m.uid(again.machine_deployments["md-0"].infra) is not None  # the current template, kept
    assert m.name(again.control_plane) == m.name(first.control_plane)
    assert m.name(again.control_plane_infra) == m.name(first.control_plane_infra)


def test_compute_md_case_unknown_topology_class_fails():
    """case "If a machine deployment references a topology class that does not exist, machine deployment generation
    fails" (line 2266); the error names the MachineDeployment topology, the class and the classes there are."""
    wc = workload_spec("c1", mds=(("md-0", "gpu-worker", 1, None),))
    with pytest.raises(LookupError) as err:
        _desired(wc=wc)
    assert "md-0" in str(err.value) and "'gpu-worker'" in str(err.value) and "default-worker, large-worker" in str(err.value)


# --- exp/topology/desiredstate/desired_state_test.go (v1.14.0), TestComputeControlPlane ------------------------

@pytest.mark.parametrize("api_version", ["v1beta1", "v1beta2"])
def test_compute_control_plane_case_adds_the_infrastructure_machine_template(api_version):
    """cases "Generates the ControlPlane from the template and adds the infrastructure machine template if required
    (v1beta1 contract)" / "(v1beta2 contract)" (lines 745, 829): the class template's spec, the topology's replicas and
    version, and the machine template ref where each contract puts it."""
    state = _desired(api_version)
    kcp = state.control_plane
    assert kcp["spec"]["kubeadmConfigSpec"] == {"format": "cloud-config"}
    assert (kcp["spec"]["replicas"], kcp["spec"]["version"]) == (1, "v1.30.4")
    where = ("machineTemplate", "spec", "infrastructureRef") if api_version == "v1beta2" else ("machineTemplate", "infrastructureRef")
    assert m.dig(kcp["spec"], *where)["name"] == m.name(state.control_plane_infra)
    assert state.control_plane_infra["spec"] == {"template": {"spec": {"customImage": IMAGE}}}


# --- rotation, variables, class changes, rollout.after (reconcile_state.go reconcileReferencedTemplate) ---------

def test_variable_override_patches_the_template_and_rotates_only_that_one():
    first = _desired()
    assert first.machine_deployments["md-0"].infra["spec"]["template"]["spec"]["customImage"] == IMAGE
    wc = workload_spec("c1", mds=(("md-0", "default-worker", 1, "img:new"),))
    again = _desired(wc=wc, current=_current_of(first), seed=2)
    new_infra = again.machine_deployments["md-0"].infra
    assert m.uid(new_infra) is None and m.name(new_infra).startswith("c1-md-0-")  # rotated: a new generated name
    assert new_infra["spec"]["template"]["spec"]["customImage"] == "img:new"
    assert m.uid(again.machine_deployments["md-0"].bootstrap) is not None  # the bootstrap template did not change
    assert again.machine_deployments["md-0"].md["spec"]["template"]["spec"]["infrastructureRef"]["name"] == m.name(new_infra)
    assert m.uid(again.control_plane_infra) is not None  # the patch selects worker classes only


def test_cluster_variable_applies_to_every_md_and_the_override_wins():
    wc = workload_spec("c1", mds=(("md-0", "default-worker", 1, None), ("md-1", "default-worker", 1, "img:md-1")),
                       variables=[("workerImage", "img:cluster")])
    state = _desired(wc=wc)
    images = {n: d.infra["spec"]["template"]["spec"]["customImage"] for n, d in state.machine_deployments.items()}
    assert images == {"md-0": "img:cluster", "md-1": "img:md-1"}


def test_control_plane_selector_patches_only_the_control_plane_machine_template():
    """json_patch_generator.go matchesSelector (v1.10.10 internal/controllers/topology/cluster/patches/inline, v1.14.0
    core/reconcilers/topology/cluster/patches/inline): ``matchResources.controlPlane`` selects the control plane's
    InfrastructureMachineTemplate (its holder field machineTemplate.infrastructureRef) and no worker template, so a
    Cluster-level value of such a variable rotates the control plane's template alone."""
    spec = cluster_class_spec()
    spec["variables"].append({"name": "cpImage", "default": IMAGE, "path": "/spec/template/spec/customImage",
                              "worker_classes": [], "control_plane": True})
    first = _desired(cclass_spec=spec)
    assert first.control_plane_infra["spec"]["template"]["spec"]["customImage"] == IMAGE
    again = _desired(wc=workload_spec("c1", variables=[("cpImage", "img:cp")]), current=_current_of(first), seed=2,
                     cclass_spec=spec)
    assert m.uid(again.control_plane_infra) is None and m.name(again.control_plane_infra).startswith("c1-")  # rotated
    assert again.control_plane_infra["spec"]["template"]["spec"]["customImage"] == "img:cp"
    assert m.uid(again.machine_deployments["md-0"].infra) is not None  # the worker template did not change
    assert again.machine_deployments["md-0"].infra["spec"]["template"]["spec"]["customImage"] == IMAGE


def test_variable_without_a_value_fails_as_upstream():
    """v1.10.10 patches/inline/json_patch_generator.go calculateValue: a patch's variable must have a value."""
    clazz = cluster_class_spec()
    clazz["variables"][0]["default"] = None
    with pytest.raises(LookupError) as err:
        _desired(cclass_spec=clazz)
    assert "'workerImage' has no value" in str(err.value) and "quick-start" in str(err.value)


def test_per_md_class_change_rotates_to_the_other_class_templates():
    first = _desired()
    wc = workload_spec("c1", mds=(("md-0", "large-worker", 1, None),))
    again = _desired(wc=wc, current=_current_of(first), seed=2)
    infra = again.machine_deployments["md-0"].infra
    assert m.uid(infra) is None and infra["spec"]["template"]["spec"]["customImage"] == IMAGE + "-large"
    assert infra["metadata"]["annotations"][m.CLONED_FROM_NAME] == "quick-start-large-worker"
    # same MD object: a class change rolls it, it does not replace it
    assert again.machine_deployments["md-0"].md["metadata"]["name"] == first.machine_deployments["md-0"].md["metadata"]["name"]


def test_rebase_to_another_class_rotates_what_differs():
    first = _desired()
    clone = cluster_class_spec("quick-start-2", control_plane_image="img:cp-2")
    again = _desired(wc=workload_spec("c1", cclass="quick-start-2"), current=_current_of(first), cclass_spec=clone, seed=2)
    assert m.uid(again.control_plane_infra) is None
    assert again.control_plane_infra["spec"]["template"]["spec"]["customImage"] == "img:cp-2"
    assert m.name(again.control_plane) == m.name(first.control_plane)
    assert m.uid(again.machine_deployments["md-0"].infra) is not None  # the workers' templates are equal: kept


@pytest.mark.parametrize("rollout_after", [True, False])
def test_topology_rollout_after_is_copied_only_where_the_release_does(rollout_after):
    """v1.13.5 desired_state.go copies topology rollout.after into the MD and KCP (PR #13391); before, no field."""
    cluster = _cluster("v1beta2")
    cluster["spec"]["topology"]["controlPlane"]["rollout"] = {"after": "2026-01-01T00:00:00Z"}
    cluster["spec"]["topology"]["workers"]["machineDeployments"][0]["rollout"] = {"after": "2026-01-02T00:00:00Z"}
    cclass, get_template = _world("v1beta2")
    state = t.desired_state(cluster, cclass, get_template, {}, rollout_after, random.Random(1))
    md_after = m.dig(state.machine_deployments["md-0"].md, "spec", "rollout", "after")
    cp_after = m.dig(state.control_plane, "spec", "rollout", "after")
    assert (md_after, cp_after) == (("2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z") if rollout_after else (None, None))


def test_contains_is_what_an_apply_would_leave_unchanged():
    assert t.contains({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": 2}})
    assert not t.contains({"a": 1, "b": {"c": 2}}, {"b": {"c": 3}})
    assert t.contains({"a": 1}, {"b": None})  # a missing field equals an unset one


# --- live: the controller against real API servers ----------------------------------------------------------------

FLEET = {"defaults": {"provision_seconds": 1},
         "management_clusters": [
             {"name": f"topo-{v.replace('.', '-')}", "capi_version": v,
              "cluster_classes": [
                  {"name": "quick-start", "control_plane_image": IMAGE,
                   "workers": [{"class": "default-worker", "image": IMAGE}, {"class": "large-worker", "image": IMAGE + "-large"}],
                   "variables": [{"name": "workerImage", "default": IMAGE,
                                  "patch": {"path": "/spec/template/spec/customImage",
                                            "worker_classes": ["default-worker"]}}]},
                  {"name": "quick-start-2", "control_plane_image": "img:cp-2",
                   "workers": [{"class": "default-worker", "image": IMAGE}, {"class": "large-worker", "image": IMAGE + "-large"}]}]}
             for v in ("v1.10", "v1.13", "v1.14")]}
_SEQ = itertools.count()


@pytest.fixture(scope="module")
def topo_fleet(fleet_factory):
    return fleet_factory(FLEET)


def _mgmt(fleet, version):
    return fleet.cluster(f"topo-{version.replace('.', '-')}")


def _path(mgmt, kind, name=None):
    group, plural = {"Cluster": (CORE, "clusters"), "MachineDeployment": (CORE, "machinedeployments"),
                     "MachineSet": (CORE, "machinesets"), "KubeadmControlPlane": (CONTROLPLANE, "kubeadmcontrolplanes"),
                     "DockerMachineTemplate": (INFRA, "dockermachinetemplates"),
                     "KubeadmConfigTemplate": (BOOTSTRAP, "kubeadmconfigtemplates")}[kind]
    return resource_path(group, mgmt.api_version, plural, "default", name)


def _topology_mds(mgmt, cluster_name):
    items = mgmt.api().list(_path(mgmt, "MachineDeployment"), label_selector=f"{m.CLUSTER_NAME}={cluster_name}")["items"]
    return {md["metadata"]["labels"][t.TOPOLOGY_MD_NAME]: md for md in items}


def _settled(mgmt, cluster_name):
    """The Cluster once a reconcile saw its current spec (status.observedGeneration: a TopologyReconciled True of the
    spec before a patch satisfied this too soon on a loaded machine), TopologyReconciled is True and its KCP and MDs
    are complete."""
    api = mgmt.api()

    def check():
        cluster = api.get(_path(mgmt, "Cluster", cluster_name))
        ref = cluster["spec"].get("controlPlaneRef")
        seen = m.dig(cluster, "status", "observedGeneration") == cluster["metadata"]["generation"]
        if not seen or not readiness.topology_reconciled(cluster, mgmt.api_version) or not ref:
            return None
        objects = list(_topology_mds(mgmt, cluster_name).values()) + [api.get(_path(mgmt, "KubeadmControlPlane", ref["name"]))]
        return cluster if all(readiness.is_complete(o, mgmt.api_version) for o in objects) else None
    return wait_for(f"topology Cluster {cluster_name} settled", check, 60)


def _create(mgmt, wc):
    api = mgmt.api()
    for obj in workload_objects(wc, mgmt.api_version):
        api.create(collection_path(obj), obj)
    return _settled(mgmt, wc["name"])


def _new_cluster(fleet, version, prefix, **spec):
    """(management cluster, name, settled Cluster) of a new topology Cluster of class quick-start."""
    mgmt = _mgmt(fleet, version)
    name = f"{prefix}{next(_SEQ)}"
    return mgmt, name, _create(mgmt, workload_spec(name, **spec))


def _patch_cluster(mgmt, name, patch):
    return mgmt.api().patch_merge(_path(mgmt, "Cluster", name), patch)


def _md_topology_patch(cluster, **changes):
    """A merge patch replacing workers.machineDeployments with the first entry changed."""
    mds = copy.deepcopy(cluster["spec"]["topology"]["workers"]["machineDeployments"])
    mds[0].update(changes)
    return {"spec": {"topology": {"workers": {"machineDeployments": mds}}}}


def _manager_of(obj, field):
    """The managers of a top-level spec field (managedFields f:spec.f:<field>)."""
    return {e["manager"] for e in obj["metadata"].get("managedFields") or []
            if f"f:{field}" in ((e.get("fieldsV1") or {}).get("f:spec") or {})}


def _infra_of(md):
    return md["spec"]["template"]["spec"]["infrastructureRef"]["name"]


@pytest.mark.needs_controller
@pytest.mark.parametrize("version", ["v1.10", "v1.14"])
def test_topology_cluster_gets_generated_objects_written_by_capi_topology(topo_fleet, version):
    mgmt, name, cluster = _new_cluster(topo_fleet, version, "gen",
                                       mds=(("md-0", "default-worker", 1, None), ("md-1", "default-worker", 1, "img:x")))
    topology = cluster["spec"]["topology"]
    assert (topology.get("class"), topology.get("classRef")) == (("quick-start", None) if version == "v1.10"
                                                                 else (None, {"name": "quick-start"}))
    mds = _topology_mds(mgmt, name)
    assert set(mds) == {"md-0", "md-1"}
    for topology_name, md in mds.items():
        assert re.match(rf"^{name}-{topology_name}-[a-z0-9]{{5}}$", md["metadata"]["name"])
        assert re.match(rf"^{name}-{topology_name}-[a-z0-9]{{5}}$", _infra_of(md))
        assert _manager_of(md, "template") >= {t.TOPOLOGY_MANAGER}
    api = mgmt.api()
    images = {n: api.get(_path(mgmt, "DockerMachineTemplate", _infra_of(md)))["spec"]["template"]["spec"]["customImage"]
              for n, md in mds.items()}
    assert images == {"md-0": IMAGE, "md-1": "img:x"}
    assert re.match(rf"^{name}-[a-z0-9]{{5}}$", cluster["spec"]["controlPlaneRef"]["name"])
    kcp = api.get(_path(mgmt, "KubeadmControlPlane", cluster["spec"]["controlPlaneRef"]["name"]))
    assert t.TOPOLOGY_MANAGER in _manager_of(kcp, "machineTemplate")
    assert _topology_conditions(cluster, version) == (("True", "ReconcileSucceeded"), ("True", ""))


def _topology_conditions(cluster, version):
    """((status, reason) of TopologyReconciled in the metav1 list, the same in the v1beta1 list)."""
    status = cluster["status"]
    modern, legacy = ((status["conditions"], status["deprecated"]["v1beta1"]["conditions"]) if version == "v1.14"
                      else (status["v1beta2"]["conditions"], status["conditions"]))
    return tuple(next((c["status"], c.get("reason", "")) for c in items if c["type"] == "TopologyReconciled")
                 for items in (modern, legacy))


@pytest.mark.needs_controller
@pytest.mark.parametrize("version", ["v1.10", "v1.14"])
def test_failed_topology_reconcile_is_reported_in_topology_reconciled(topo_fleet, version):
    """v1.10.10 internal/controllers/topology/cluster/conditions.go: False, ReconcileFailed (v1beta1:
    TopologyReconcileFailed, severity Error) with the error as message; nothing is created."""
    mgmt = _mgmt(topo_fleet, version)
    name = f"bad{next(_SEQ)}"
    cluster = workload_objects(workload_spec(name, mds=(("md-0", "gpu-worker", 1, None),)), mgmt.api_version)[-1]
    mgmt.api().create(collection_path(cluster), cluster)

    def failed():
        got = mgmt.api().get(_path(mgmt, "Cluster", name))
        return got if "TopologyReconciled" in str(got.get("status")) else None
    cluster = wait_for("TopologyReconciled", failed, 30)
    assert _topology_conditions(cluster, version) == (("False", "ReconcileFailed"), ("False", "TopologyReconcileFailed"))
    modern = cluster["status"]["conditions"] if version == "v1.14" else cluster["status"]["v1beta2"]["conditions"]
    message = next(c["message"] for c in modern if c["type"] == "TopologyReconciled")
    assert "'gpu-worker' is not a worker class of ClusterClass quick-start" in message
    assert _topology_mds(mgmt, name) == {}


@pytest.mark.needs_controller
@pytest.mark.parametrize("version", ["v1.10", "v1.14"])
def test_direct_change_of_a_computed_field_is_put_back(topo_fleet, version):
    mgmt, name, _wc = _new_cluster(topo_fleet, version, "back")
    md = _topology_mds(mgmt, name)["md-0"]
    answer = mgmt.api("rollout-operator").patch_merge(_path(mgmt, "MachineDeployment", md["metadata"]["name"]),
                                                      {"spec": {"replicas": 2}})
    assert answer["spec"]["replicas"] == 2  # positive control: the direct change was stored

    def put_back():
        current = mgmt.api().get(_path(mgmt, "MachineDeployment", md["metadata"]["name"]))
        return current if current["spec"]["replicas"] == 1 else None
    back = wait_for("replicas put back", put_back, 30)
    assert t.TOPOLOGY_MANAGER in _manager_of(back, "replicas")


@pytest.mark.needs_controller
@pytest.mark.parametrize("version", ["v1.10", "v1.14"])
def test_variable_override_rotates_the_template_and_removes_the_old_one_after_the_rollout(topo_fleet, version):
    mgmt, name, cluster = _new_cluster(topo_fleet, version, "rot")
    old = _infra_of(_topology_mds(mgmt, name)["md-0"])
    _patch_cluster(mgmt, name, _md_topology_patch(cluster, variables={"overrides": [{"name": "workerImage", "value": "img:new"}]}))
    _settled(mgmt, name)
    md = _topology_mds(mgmt, name)["md-0"]
    new = _infra_of(md)
    assert new != old and new.startswith(f"{name}-md-0-")
    api = mgmt.api()
    assert api.get(_path(mgmt, "DockerMachineTemplate", new))["spec"]["template"]["spec"]["customImage"] == "img:new"

    def old_sets_scaled_down():
        # the rollout of the new template ends with the old MachineSet at 0 (or deleted, from v1.11)
        sets = [s for s in api.list(_path(mgmt, "MachineSet"))["items"] if _infra_of(s) == old]
        return (sets,) if all(s["spec"]["replicas"] == 0 for s in sets) else None
    old_sets = wait_for("the old MachineSet scaled down", old_sets_scaled_down, 60)[0]
    if version == "v1.10":
        # v1beta1 revisionHistoryLimit 1 keeps the old MachineSet (scaled to 0), and with it its template: upstream
        # deletes a template only with the last MachineSet using it (topology/machineset DeleteTemplateIfUnused)
        assert [s["spec"]["replicas"] for s in old_sets] == [0]
        assert api.get(_path(mgmt, "DockerMachineTemplate", old))["metadata"]["name"] == old
        api.delete(_path(mgmt, "MachineSet", old_sets[0]["metadata"]["name"]))

    def old_gone():
        try:
            api.get(_path(mgmt, "DockerMachineTemplate", old))
            return False
        except ApiError as err:
            return err.status == 404
    wait_for(f"old template {old} removed", old_gone, 30)


@pytest.mark.needs_controller
@pytest.mark.parametrize("version", ["v1.10", "v1.14"])
def test_per_md_class_change_and_rebase(topo_fleet, version):
    mgmt, name, cluster = _new_cluster(topo_fleet, version, "cls")
    api = mgmt.api()
    md_name = _topology_mds(mgmt, name)["md-0"]["metadata"]["name"]
    _patch_cluster(mgmt, name, _md_topology_patch(cluster, **{"class": "large-worker"}))
    cluster = _settled(mgmt, name)
    md = _topology_mds(mgmt, name)["md-0"]
    assert md["metadata"]["name"] == md_name
    assert api.get(_path(mgmt, "DockerMachineTemplate", _infra_of(md)))["spec"]["template"]["spec"]["customImage"] == IMAGE + "-large"
    kcp_name = cluster["spec"]["controlPlaneRef"]["name"]

    def cp_template():
        kcp = api.get(_path(mgmt, "KubeadmControlPlane", kcp_name))
        return m.dig(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "name") if version == "v1.14" \
            else m.dig(kcp, "spec", "machineTemplate", "infrastructureRef", "name")
    old_cp_template = cp_template()
    rebase = {"classRef": {"name": "quick-start-2"}} if version == "v1.14" else {"class": "quick-start-2"}
    _patch_cluster(mgmt, name, {"spec": {"topology": rebase}})
    _settled(mgmt, name)
    assert cp_template() != old_cp_template
    assert api.get(_path(mgmt, "DockerMachineTemplate", cp_template()))["spec"]["template"]["spec"]["customImage"] == "img:cp-2"
    with pytest.raises(ApiError) as err:  # deleted right after the KubeadmControlPlane moved off it
        api.get(_path(mgmt, "DockerMachineTemplate", old_cp_template))
    assert err.value.status == 404


@pytest.mark.needs_controller
@pytest.mark.parametrize("version", ["v1.10", "v1.13", "v1.14"])
def test_topology_rollout_after_reaches_the_md_and_kcp_from_v1_13(topo_fleet, version):
    mgmt, name, cluster = _new_cluster(topo_fleet, version, "ra")
    after = "2030-01-01T00:00:00Z"  # in the future: nothing rolls now
    if version == "v1.10":  # v1beta1 has only a Cluster-wide topology rolloutAfter, which nothing copies
        _patch_cluster(mgmt, name, {"spec": {"topology": {"rolloutAfter": after}}})
    else:
        patch = _md_topology_patch(cluster, rollout={"after": after})
        patch["spec"]["topology"]["controlPlane"] = {"replicas": 1, "rollout": {"after": after}}
        _patch_cluster(mgmt, name, patch)
    _settled(mgmt, name)
    md = _topology_mds(mgmt, name)["md-0"]
    kcp = mgmt.api().get(_path(mgmt, "KubeadmControlPlane", cluster["spec"]["controlPlaneRef"]["name"]))
    if version == "v1.10":
        assert "rolloutAfter" not in md["spec"] and "rolloutAfter" not in kcp["spec"]
    else:
        assert (m.dig(md, "spec", "rollout", "after"), m.dig(kcp, "spec", "rollout", "after")) == (after, after)


@pytest.mark.needs_controller
def test_labels_only_topology_owned_cluster_is_left_alone(topo_fleet):
    """fleet spec topology_owned (labels only): its ClusterClass does not exist, so the topology
    controller writes nothing (upstream would report TopologyReconciled False)."""
    mgmt = _mgmt(topo_fleet, "v1.14")
    name = f"lbl{next(_SEQ)}"
    wc = dict(workload_spec(name), topology=None, topology_owned=True,
              machine_deployments=[{"name": "md-0", "replicas": 1, "provision_seconds": 1, "failure_domain": None,
                                    "image": IMAGE, "strategy": {"type": "RollingUpdate", "max_surge": 1, "max_unavailable": 0}}])
    api = mgmt.api()
    for obj in workload_objects(wc, mgmt.api_version):
        api.create(collection_path(obj), obj)

    def complete():
        current = api.get(_path(mgmt, "MachineDeployment", f"{name}-md-0"))
        return current if readiness.is_complete(current, mgmt.api_version) else None
    md = wait_for("MachineDeployment complete", complete, 30)
    assert md["metadata"]["labels"][t.OWNED] == ""  # positive control: it is a topology-labelled object
    assert all(e["manager"] != t.TOPOLOGY_MANAGER for e in md["metadata"]["managedFields"])
    cluster = api.get(_path(mgmt, "Cluster", name))
    assert "TopologyReconciled" not in str(cluster.get("status"))
    assert cluster["spec"]["controlPlaneRef"]["name"] == f"{name}-control-plane"
