"""capi_machine_template against a local management cluster per CAPI version (v1beta1 and v1beta2).

Runs with the rollout-operator credentials (docs/rbac.yml) through ansible-playbook. The fleet is
this module's own (one management cluster at a time, stopped when the module's tests are done):

- ``ta`` in namespace ``tmpl``: a 1-replica control plane and MachineDeployments ``ta-md-0`` and ``ta-md-1``
  (``ta-md-1`` only for the clone of many objects);
- ``tt`` in namespace ``tmpl``: managed by a Cluster topology (ClusterClass).
"""

import copy

import pytest

from capisim import readiness
from capisim.audit import is_dry_run, shape
from capisim.fleet import Fleet
from capisim.fleetspec import load_fleet
from capisim.kubeapi import ApiError, resource_path
from capisim.objects import KINDS
from conftest import per_fleet
from playbook import run_module

pytestmark = pytest.mark.needs_controller

NS = "tmpl"
CLONED_FROM = "rollout.capi-rollout.dev/cloned-from"
SPEC_HASH = "rollout.capi-rollout.dev/spec-hash"
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"


def clone_reads(env):
    """What a clone from a MachineDeployment reads: discovery, the MachineDeployment, its infrastructure group, the
    source template, the target (absent on a first run); a first run then creates it as a dry run, then for real."""
    return [("get", "/apis"), ("get", "machinedeployments"), ("get", f"/apis/infrastructure.cluster.x-k8s.io/{env.version}"),
            ("get", "dockermachinetemplates"), ("get", "dockermachinetemplates")]


def list_reads(env, kinds=("machinedeployments",)):
    """What a clone of many objects reads, whatever their number: discovery, one list per object kind (in the
    order of their first object), the infrastructure group and one list of the templates (sources and targets)."""
    group = ("get", f"/apis/infrastructure.cluster.x-k8s.io/{env.version}")
    return [("get", "/apis"), ("list", kinds[0]), group, ("list", "dockermachinetemplates")] + \
        [("list", kind) for kind in kinds[1:]]


def fleet_spec(capi_version):
    return {
        "defaults": {"provision_seconds": 1},
        "management_clusters": [{
            "name": f"mt-{capi_version.replace('.', '-')}",
            "capi_version": capi_version,
            "workload_clusters": [
                {"name": "ta", "namespace": NS, "kubernetes_version": "v1.30.4", "control_plane": {"replicas": 1},
                 "machine_deployments": [{"name": "md-0", "replicas": 1}, {"name": "md-1", "replicas": 1}]},
                {"name": "tt", "namespace": NS, "kubernetes_version": "v1.30.4", "topology_owned": True,
                 "machine_deployments": [{"name": "md-0", "replicas": 1}]},
            ],
        }],
    }


class Env:
    """The running management cluster plus helpers: run a module, read objects as admin, audit log."""

    def __init__(self, fleet):
        self.fleet = fleet
        self.mgmt = fleet.clusters[next(iter(fleet.clusters))]
        self.host = self.mgmt.name
        self.capi_version = self.mgmt.capi_version
        self.admin = self.mgmt.api("admin")
        from capisim import crds
        self.version = crds.api_version(self.capi_version)
        from capisim.audit import AuditReader
        self.audit = AuditReader(self.mgmt.audit_log, self.admin)

    def run(self, module, check=False, diff=False, **params):
        return run_module(self.fleet.inventory, self.host, module, params, check=check, diff=diff)

    def mark(self):
        return self.audit.mark()

    def requests(self, mark):
        return self.audit.read(mark).requests(user="rollout-operator")

    def writes(self, mark):
        return self.audit.read(mark).writes(user="rollout-operator")

    def path(self, kind, name=None):
        group, plural = KINDS[kind]
        return resource_path(group, self.version, plural, NS, name)

    def get(self, kind, name):
        return self.admin.get(self.path(kind, name))

    def found(self, path):
        try:
            self.admin.get(path)
        except ApiError as err:
            if err.status == 404:
                return False
            raise
        return True

    def exists(self, kind, name):
        return self.found(self.path(kind, name))

    def exists_lease(self, name):
        return self.found(resource_path("coordination.k8s.io", "v1", "leases", NS, name))

    def current_template(self, md_name="ta-md-0"):
        return self.get("MachineDeployment", md_name)["spec"]["template"]["spec"]["infrastructureRef"]["name"]

    def kcp_template(self, name="ta-control-plane"):
        spec = self.get("KubeadmControlPlane", name)["spec"]["machineTemplate"]
        return (spec.get("spec") or spec)["infrastructureRef"]["name"]


@pytest.fixture(scope="module", params=per_fleet(("v1.10", "v1.14"), "machine-template"))
def env(request, tmp_path_factory):
    """One management cluster of the given CAPI version; stopped (by PID) after the module's tests."""
    fleet = Fleet(load_fleet(fleet_spec(request.param)), tmp_path_factory.mktemp("fleet-mt"))
    fleet.up(controller=True)
    try:
        yield Env(fleet)
    finally:
        fleet.down()


def md_complete(env, name="ta-md-0"):
    return readiness.is_complete(env.get("MachineDeployment", name), env.version)


def test_clone_from_machine_deployment_rerun_and_roll_onto_it(env):
    source_name = env.current_template()
    source = env.get("DockerMachineTemplate", source_name)
    overrides = {"customImage": "kindest/node:v1.31.0", "preLoadImages": ["registry.example/pause:3.10"]}

    mark = env.mark()
    res = env.run("capi_machine_template", namespace=NS, from_object={"kind": "MachineDeployment", "name": "ta-md-0"},
                  overrides=overrides)
    assert not res.failed, res.get("msg")
    assert res["changed"] is True and res["created"] is True
    ref = res["infrastructure_ref"]
    assert ref["api_group"] == "infrastructure.cluster.x-k8s.io" and ref["kind"] == "DockerMachineTemplate"
    assert ref["name"] == f"{source_name}-{res['hash']}" and len(res["hash"]) == 8
    assert res["source_ref"]["name"] == source_name
    assert res["source_ref"]["from_object"] == f"machinedeployment/{NS}/ta-md-0"

    clone = env.get("DockerMachineTemplate", ref["name"])
    assert clone["spec"]["template"]["spec"] == dict(source["spec"]["template"]["spec"], **overrides)
    assert clone["metadata"]["labels"][CLUSTER_NAME] == "ta"
    assert clone["metadata"]["annotations"][CLONED_FROM] == f"DockerMachineTemplate/{source_name}"
    assert clone["metadata"]["annotations"][SPEC_HASH] == res["hash"]
    # the simulator's provisioning knob is an ordinary annotation: copied
    assert clone["metadata"]["annotations"].get("sim.capi-rollout.dev/provision-seconds") == \
        source["metadata"]["annotations"]["sim.capi-rollout.dev/provision-seconds"]
    assert res["template"]["metadata"]["uid"] == clone["metadata"]["uid"]

    requests = env.requests(mark)
    # discovery, MD, group, source, target, the create as a dry run (pruning, admission), the create
    sent = shape(requests)
    creates = [("create", "dockermachinetemplates?dryRun"), ("create", "dockermachinetemplates")]
    assert sorted(sent) == sorted(clone_reads(env) + creates), sent
    assert [is_dry_run(e) for e in requests if e["verb"] == "create"] == [True, False]
    writes = env.writes(mark)
    assert [(e["verb"], e["objectRef"]["resource"]) for e in writes] == [("create", "dockermachinetemplates")]

    # rerun: found by its deterministic name, nothing written
    mark = env.mark()
    again = env.run("capi_machine_template", namespace=NS, from_object={"name": "ta-md-0"}, overrides=overrides)
    assert not again.failed, again.get("msg")
    assert again["changed"] is False and again["created"] is False
    assert again["infrastructure_ref"] == ref
    assert not env.writes(mark)
    assert sorted(shape(env.requests(mark))) == sorted(clone_reads(env)), shape(env.requests(mark))  # docs/performance.md: 5

    # the returned reference is what capi_rollout_restart takes
    restart = env.run("capi_rollout_restart", namespace=NS, name="ta-md-0", infrastructure_ref=ref, wait=True,
                      wait_timeout=300, stall_timeout=120)
    assert not restart.failed, restart.get("msg")
    assert restart["objects"][0]["status"]["rollout"]["complete"] is True
    assert env.current_template() == ref["name"]
    assert md_complete(env)

    # the MachineDeployment now uses the clone: cloning it again with the same overrides is the same template
    mark = env.mark()
    chained = env.run("capi_machine_template", namespace=NS, from_object={"name": "ta-md-0"}, overrides=overrides)
    assert not chained.failed, chained.get("msg")
    assert chained["changed"] is False and chained["infrastructure_ref"] == ref
    assert chained["source_ref"]["name"] == ref["name"]
    # ... and other overrides replace the hash suffix instead of growing the name
    other = env.run("capi_machine_template", namespace=NS, from_object={"name": "ta-md-0"},
                    overrides={"customImage": "kindest/node:v1.32.0"}, check=True)
    assert not other.failed, other.get("msg")
    assert other["infrastructure_ref"]["name"] == f"{source_name}-{other['hash']}"
    assert other["template"]["metadata"]["annotations"][CLONED_FROM] == f"DockerMachineTemplate/{ref['name']}"
    assert not env.writes(mark)


def test_check_mode_creates_nothing_and_diff_shows_the_object(env):
    mark = env.mark()
    res = env.run("capi_machine_template", namespace=NS, from_object={"name": "ta-md-0"},
                  overrides={"customImage": "kindest/node:v1.29.9"}, labels={"hardware": "gen-2026"},
                  check=True, diff=True)
    assert not res.failed, res.get("msg")
    assert res["changed"] is True and res["created"] is True
    name = res["infrastructure_ref"]["name"]
    assert res["diff"]["before"] == ""
    assert res["diff"]["after_header"] == f"dockermachinetemplate/{NS}/{name} (new)"
    assert f'name: "{name}"' in res["diff"]["after"] and "kindest/node:v1.29.9" in res["diff"]["after"]
    assert "hardware: \"gen-2026\"" in res["diff"]["after"]
    # The create went to the API server as a dry run: what a real run would get, nothing stored.
    (dry,) = [e for e in env.requests(mark) if e["verb"] == "create"]
    assert "dryRun=All" in dry["requestURI"] and dry["responseStatus"]["code"] == 201
    assert res["template"]["metadata"]["name"] == name and res["template"]["metadata"].get("creationTimestamp")
    assert not env.writes(mark)
    assert not env.exists("DockerMachineTemplate", name)


def test_conflicting_target_fails_and_writes_nothing(env):
    source = env.get("DockerMachineTemplate", env.current_template())
    taken = {"apiVersion": source["apiVersion"], "kind": "DockerMachineTemplate",
             "metadata": {"name": "ta-md-0-taken", "namespace": NS},
             "spec": {"template": {"spec": {"customImage": "kindest/node:v1.28.0"}}}}
    env.admin.create(env.path("DockerMachineTemplate"), copy.deepcopy(taken))
    mark = env.mark()
    res = env.run("capi_machine_template", namespace=NS, from_object={"name": "ta-md-0"},
                  overrides={"customImage": "kindest/node:v1.31.1"}, name="ta-md-0-taken")
    assert res.failed
    assert res["msg"].startswith(f"dockermachinetemplate/{NS}/ta-md-0-taken: already exists with a different spec")
    assert "immutable" in res["msg"] and "set name to a new template name" in res["msg"]
    assert res["reason"] == "template_conflict" and res["changed"] is False
    assert not env.writes(mark)
    assert env.get("DockerMachineTemplate", "ta-md-0-taken")["spec"] == taken["spec"]


def test_topology_owned_is_refused_unless_forced(env):
    mark = env.mark()
    res = env.run("capi_machine_template", namespace=NS, from_object={"name": "tt-md-0"},
                  overrides={"customImage": "kindest/node:v1.31.0"})
    assert res.failed and res["reason"] == "topology_owned"
    assert res["msg"].startswith("dockermachinetemplate/tmpl/tt-md-0-")
    assert "ClusterClass" in res["msg"] and "force" in res["msg"]
    forced = env.run("capi_machine_template", namespace=NS, from_object={"name": "tt-md-0"},
                     overrides={"customImage": "kindest/node:v1.31.0"}, force=True, check=True)
    assert not forced.failed, forced.get("msg")
    assert forced["changed"] is True
    labels = forced["template"]["metadata"].get("labels") or {}
    assert labels.get(CLUSTER_NAME) == "tt" and "topology.cluster.x-k8s.io/owned" not in labels
    assert not env.writes(mark)


def test_source_by_name_and_control_plane_template(env):
    kcp_template = env.kcp_template()
    group = "infrastructure.cluster.x-k8s.io"
    # the v1beta1 style (apiVersion) and the v1beta2 style (apiGroup) of naming the source
    by_version = env.run("capi_machine_template", namespace=NS, check=True, name="ta-cp-next",
                         source={"name": kcp_template, "kind": "DockerMachineTemplate",
                                 "api_version": f"{group}/{env.version}"},
                         overrides={"customImage": "kindest/node:v1.31.0"})
    assert not by_version.failed, by_version.get("msg")
    assert by_version["infrastructure_ref"] == {"api_group": group, "kind": "DockerMachineTemplate", "name": "ta-cp-next"}
    by_group = env.run("capi_machine_template", namespace=NS, check=True,
                       source={"name": kcp_template, "kind": "DockerMachineTemplate", "api_group": group},
                       overrides={"customImage": "kindest/node:v1.31.0"})
    from_kcp = env.run("capi_machine_template", namespace=NS, check=True, from_object={"kind": "kcp", "name": "ta-control-plane"},
                       overrides={"customImage": "kindest/node:v1.31.0"})
    assert not by_group.failed and not from_kcp.failed, (by_group.get("msg"), from_kcp.get("msg"))
    assert by_group["infrastructure_ref"] == from_kcp["infrastructure_ref"]
    assert from_kcp["source_ref"]["from_object"] == f"kubeadmcontrolplane/{NS}/ta-control-plane"


def test_missing_source_and_pruned_overrides(env):
    mark = env.mark()
    res = env.run("capi_machine_template", namespace=NS, source={"name": "nope", "kind": "DockerMachineTemplate"})
    assert res.failed and res["reason"] == "source_not_found"
    assert res["msg"].startswith(f"dockermachinetemplate/{NS}/nope: ")
    wrong_kind = env.run("capi_machine_template", namespace=NS, source={"name": "x", "kind": "AWSMachineTemplate"})
    assert wrong_kind.failed and wrong_kind["reason"] == "kind_not_served"
    assert not env.writes(mark)

    # a field the kind's schema does not know would be dropped by the API server: refused after the dry run
    typo = {"customImag": "kindest/node:v1.31.0"}
    mark = env.mark()
    refused = env.run("capi_machine_template", namespace=NS, from_object={"name": "ta-md-0"}, overrides=typo)
    assert refused.failed and refused["reason"] == "pruned_fields", refused.get("msg")
    assert "spec.template.spec.customImag" in refused["msg"] and "kubectl explain" in refused["msg"]
    assert len(env.audit.read(mark).dry_runs(user="rollout-operator")) == 1  # positive control: it was asked
    assert not env.writes(mark)
    # overrides equal to the template's own values, under a new name: the clone would be identical
    source_name = env.get("MachineDeployment", "ta-md-0")["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    same = {"customImage": env.get("DockerMachineTemplate", source_name)["spec"]["template"]["spec"]["customImage"]}
    unchanged = env.run("capi_machine_template", namespace=NS, name="ta-md-0-same", overrides=same,
                        source={"name": source_name, "kind": "DockerMachineTemplate"})
    assert unchanged.failed and unchanged["reason"] == "no_effect", unchanged.get("msg")
    assert "change nothing" in unchanged["msg"] and f"dockermachinetemplate/{NS}/{source_name}" in unchanged["msg"]
    assert not env.writes(mark)
    # the same overrides from the object that already uses that template: nothing to do, not an error
    again = env.run("capi_machine_template", namespace=NS, from_object={"name": "ta-md-0"}, overrides=same)
    assert not again.failed and again["changed"] is False and again["infrastructure_ref"]["name"] == source_name, again


def test_objects_clone_many_in_one_call_then_rerun(env):
    image = "kindest/node:v1.33.1"
    objects = [{"name": "ta-md-0", "overrides": {"customImage": image}},
               {"kind": "md", "name": "ta-md-1", "overrides": {"customImage": image}, "labels": {"hardware": "gen-2027"}},
               {"kind": "kcp", "name": "ta-control-plane", "overrides": {"customImage": image}}]
    sources = [env.current_template(), env.current_template("ta-md-1"), env.kcp_template()]
    refs = [f"machinedeployment/{NS}/ta-md-0", f"machinedeployment/{NS}/ta-md-1", f"kubeadmcontrolplane/{NS}/ta-control-plane"]

    mark = env.mark()
    res = env.run("capi_machine_template", namespace=NS, objects=objects)
    assert not res.failed, res.get("msg")
    assert res["changed"] is True
    assert [entry["ref"] for entry in res["results"]] == refs
    for entry, source in zip(res["results"], sources):
        assert entry["failed"] is False and entry["created"] is True and entry["changed"] is True, entry
        assert entry["source_ref"]["name"] == source and entry["source_ref"]["from_object"] == entry["ref"]
        clone = env.get("DockerMachineTemplate", entry["infrastructure_ref"]["name"])
        assert clone["spec"]["template"]["spec"]["customImage"] == image
        assert clone["metadata"]["annotations"][CLONED_FROM] == f"DockerMachineTemplate/{source}"
        assert clone["metadata"]["uid"] == entry["template"]["metadata"]["uid"]
        assert (clone["metadata"]["labels"].get("hardware") == "gen-2027") == entry["ref"].endswith("ta-md-1")
    # the reads do not grow with the objects: one list per kind; per object a dry run, then (all checked) the creates
    dry, create = ("create", "dockermachinetemplates?dryRun"), ("create", "dockermachinetemplates")
    reads = list_reads(env, ("machinedeployments", "kubeadmcontrolplanes"))
    sent = shape(env.requests(mark))
    assert sent == reads[:4] + [dry, dry] + reads[4:] + [dry] + [create] * 3, sent
    assert res["api_requests"] == len(sent) == 11
    writes = env.writes(mark)
    assert [(e["verb"], e["objectRef"]["name"]) for e in writes] == \
        [("create", entry["infrastructure_ref"]["name"]) for entry in res["results"]]

    # rerun: every target found in the one list of templates, nothing written
    mark = env.mark()
    again = env.run("capi_machine_template", namespace=NS, objects=objects)
    assert not again.failed, again.get("msg")
    assert again["changed"] is False and [entry["created"] for entry in again["results"]] == [False] * 3
    assert [entry["infrastructure_ref"] for entry in again["results"]] == \
        [entry["infrastructure_ref"] for entry in res["results"]]
    assert shape(env.requests(mark)) == reads, shape(env.requests(mark))
    assert not env.writes(mark)


def test_objects_one_typo_and_a_topology_owned_object_fail_with_nothing_written(env):
    image = "kindest/node:v1.34.2"
    objects = [{"name": "ta-md-0", "overrides": {"customImage": image}},
               {"name": "ta-md-1", "overrides": {"customImag": image}},
               {"name": "tt-md-0", "overrides": {"customImage": image}},
               {"kind": "KubeadmControlPlane", "name": "ta-control-plane", "overrides": {"customImage": image}}]
    mark = env.mark()
    res = env.run("capi_machine_template", namespace=NS, objects=objects)
    assert res.failed and res["reason"] == "clone_refused" and res["changed"] is False
    assert res["msg"].startswith(f"2 of 4 object(s) could not be cloned; nothing was created: machinedeployment/{NS}/ta-md-1: "
                                 f"dockermachinetemplate/{NS}/"), res["msg"]
    assert "spec.template.spec.customImag" in res["msg"] and f" | machinedeployment/{NS}/tt-md-0: " in res["msg"]
    assert [(entry["failed"], entry.get("reason")) for entry in res["results"]] == \
        [(False, None), (True, "pruned_fields"), (True, "topology_owned"), (False, None)]
    # positive control: the three objects that got that far were checked by the API server (dry runs) ...
    assert [(e["verb"], e["objectRef"]["resource"]) for e in env.audit.read(mark).dry_runs(user="rollout-operator")] == \
        [("create", "dockermachinetemplates")] * 3
    # ... and nothing was written, not even the templates that passed
    assert not env.writes(mark)
    for entry in (res["results"][0], res["results"][3]):
        assert entry["created"] is False and "another object failed a check" in entry["message"]
        assert not env.exists("DockerMachineTemplate", entry["infrastructure_ref"]["name"])


REFRESH_TEMPLATES = {"overrides": {"customImage": "kindest/node:v1.35.0"},
                     "objects": {"ta-md-1": {"labels": {"hardware": "gen-2028"}}}}


@pytest.mark.parametrize("check", [False, True])
def test_refresh_plan_reads_checks_and_plans_everything_in_one_call_and_writes_nothing(env, check):
    mark = env.mark()
    res = env.run("capi_refresh_plan", check=check, diff=True, namespaces=[NS], control_plane=True, templates=REFRESH_TEMPLATES,
                  refresh_id="plan-test", max_in_flight=2)
    assert not res.failed, res.get("msg")
    assert res["changed"] is False
    md_refs = [f"machinedeployment/{NS}/{name}" for name in ("ta-md-0", "ta-md-1", "tt-md-0")]
    cp_ref = f"kubeadmcontrolplane/{NS}/ta-control-plane"
    objects = {obj["ref"]: obj for obj in res["plan"]["objects"]}
    assert list(objects) == [cp_ref] + md_refs  # control planes first
    # each object as it is in the cluster (capi_rollout_info reads the same)
    info = {entry["ref"]: entry for entry in env.run("capi_rollout_info", namespace=NS)["resources"]}
    for ref in md_refs:
        assert objects[ref]["replicas"] == info[ref]["replicas"]["desired"]
        assert objects[ref]["before"]["infrastructure_ref"]["name"] == info[ref]["template"]["infrastructure_ref"]["name"]
    # a new template is planned for every object but the topology-owned one (its ClusterClass decides), with the
    # settings merged for it; none is created
    assert [obj["action"] for obj in objects.values()] == ["switch", "switch", "switch", "skip"]
    assert [obj["result"] for obj in objects.values()] == ["planned" if check else "pending"] * 3 + ["skipped"]
    assert any("ClusterClass" in blocker or "topology" in blocker for blocker in objects[md_refs[2]]["blockers"]), objects[md_refs[2]]
    for ref in (cp_ref,) + tuple(md_refs[:2]):
        target = objects[ref]["target_ref"]
        assert target["name"] != objects[ref]["before"]["infrastructure_ref"]["name"]
        assert objects[ref]["wait"]["infrastructure_ref"] == {"kind": target["kind"], "name": target["name"]}
        assert objects[ref]["clone"]["overrides"] == {"customImage": "kindest/node:v1.35.0"}
        assert not env.exists("DockerMachineTemplate", target["name"])
    assert objects[md_refs[1]]["clone"]["labels"] == {"hardware": "gen-2028"}
    assert [(wave["name"], wave["objects"]) for wave in res["plan"]["waves"]] == \
        [("control-plane-1", [cp_ref]), ("wave-1", md_refs[:2])]
    assert [obj["ref"] for obj in res["plan"]["blocked"]] == [md_refs[2]]
    # --diff shows each new template, as the API server answered its dry-run create
    assert len(res["diff"]) == 3 and all(entry["before"] == "" for entry in res["diff"]), res["diff"]
    assert all("kindest/node:v1.35.0" in str(entry["after"]) for entry in res["diff"]), res["diff"]
    labelled = [entry for entry in res["diff"] if objects[md_refs[1]]["target_ref"]["name"] in entry["before_header"]]
    assert len(labelled) == 1 and 'hardware: "gen-2028"' in labelled[0]["after"], res["diff"]
    # nothing written, in check mode or not; the API server checked each clone (positive control: the dry runs)
    assert not env.writes(mark)
    assert [(e["verb"], e["objectRef"]["resource"]) for e in env.audit.read(mark).dry_runs(user="rollout-operator")] == \
        [("create", "dockermachinetemplates")] * 3
    # reads by list only, each once (the lists of the objects also answer the clones' reads): discovery, per kind
    # its list (+ the MachineSets and Clusters that decide completion, and the MachineHealthChecks of the namespace:
    # none here, so no Machines), the infrastructure group, the templates;
    # then per new template its dry run - whatever the number of objects; last the ClusterClass of tt's topology (one
    # per class: a topology MD gets its change in its Cluster; tt's names none that exists, so it stays blocked); on
    # v1beta2 the ExtensionConfigs, which say whether the switches may update Machines in place (core.inplace)
    dry = ("create", "dockermachinetemplates?dryRun")
    expected = [("get", "/apis"), ("list", "machinedeployments"), ("list", "machinesets"), ("list", "clusters"),
                ("list", "machinehealthchecks"), ("list", "kubeadmcontrolplanes"), ("get", "clusters"),
                ("get", f"/apis/infrastructure.cluster.x-k8s.io/{env.version}"), ("list", "dockermachinetemplates"),
                dry, dry, dry, ("get", "clusterclasses")] + ([("list", "extensionconfigs")] if env.version == "v1beta2" else [])
    # none here (no InPlaceUpdates): every switch replaces its Machines, as ever
    assert all(obj["in_place"] is None for obj in objects.values())
    assert shape(env.requests(mark))[:res["api_requests"]] == expected
    assert res["api_requests"] == len(expected)


def test_refresh_plan_refuses_a_bad_max_in_flight_before_reading(env):
    mark = env.mark()
    res = env.run("capi_refresh_plan", namespaces=[NS], refresh_id="plan-test", max_in_flight="0%")
    assert res.failed and res["reason"] == "invalid_setting", res
    assert "max_in_flight" in res["msg"] and "nothing was read" in res["msg"], res["msg"]
    assert env.requests(mark) == []
    # positive control: the same call with a valid value reads
    assert not env.run("capi_refresh_plan", namespaces=[NS], refresh_id="plan-test", max_in_flight="50%").failed
    assert env.requests(mark)


def test_refresh_plan_restart_label_selectors_and_a_missing_namespace(env):
    mark = env.mark()
    res = env.run("capi_refresh_plan", namespaces=[NS, "no-such-namespace"], label_selectors=[f"{CLUSTER_NAME}=ta"],
                  control_plane=True, restart=True, refresh_id="plan-test", lock={"holder": "plan-test", "namespace": NS})
    assert not res.failed, res.get("msg")
    # the selectors narrow the MachineDeployments only; the control planes of the selected workload clusters are planned
    objects = res["plan"]["objects"]
    assert [obj["name"] for obj in objects] == ["ta-control-plane", "ta-md-0", "ta-md-1"]
    # restart: each object on its current template, no template planned (none is dry-run created, below)
    assert all(obj["action"] == "switch" and obj["restart"] for obj in objects), objects
    assert all(obj["target_ref"]["name"] == obj["before"]["infrastructure_ref"]["name"] for obj in objects), objects
    assert any("namespace no-such-namespace does not exist" in warning for warning in res.get("warnings", [])), res.get("warnings")
    # the lock is looked at as capi_rollout_lock in check mode does: free, nothing taken (its create a dry run)
    assert res["lock"]["would_acquire"] is True and res["lock"]["acquired"] is False, res["lock"]
    assert [(e["verb"], e["objectRef"]["resource"]) for e in env.audit.read(mark).dry_runs(user="rollout-operator")] == \
        [("create", "leases")]
    assert not env.writes(mark)
    assert not env.exists_lease("capi-rollout-lock")
