"""The CAPI controller simulator against real kube-apiservers, for both simulated CAPI versions.

Each test creates its own workload cluster (Cluster, templates, MachineDeployment / KubeadmControlPlane, built like
the fleet's, i.e. as CAPI's webhooks would leave them) in its own namespace of a running management cluster, then
drives it only through the API, as a user or the collection would, and watches what the simulator does:

- the MachineSet spec.replicas sequence of a restart equals CAPI's golden RollingUpdate traces (reference §3.7);
- exactly one new MachineSet per rolloutAfter trigger, also for a rolloutAfter set in the future;
- revisions when the template goes A -> B -> A, and old-MachineSet cleanup (v1.10 keeps revisionHistoryLimit, v1.14 none);
- MD spec.paused (scaling works, no rollout), the paused annotation and Cluster spec.paused (nothing happens);
- the KubeadmControlPlane replaces one Machine at a time within maxSurge;
- Machines of a failing template never become ready and the rollout stalls.
"""

import copy
import datetime
import itertools
import secrets
import threading
import time
from pathlib import Path

import pytest

from capisim import readiness
from capisim.fleetspec import load_fleet
from capisim.kubeapi import ApiError, resource_path
from capisim.objects import collection_path, workload_objects
from capisim.polling import wait_for

pytestmark = pytest.mark.needs_controller

FLEETS = Path(__file__).resolve().parents[1] / "fleets"
CORE, CONTROLPLANE, INFRA = "cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"
PAUSED = "cluster.x-k8s.io/paused"
REVISION = "machinedeployment.clusters.x-k8s.io/revision"
REVISION_HISTORY = "machinedeployment.clusters.x-k8s.io/revision-history"
_SEQ = itertools.count()


@pytest.fixture(scope="module", params=["v1.10", "v1.14"])
def mgmt(request, fleet_factory):
    return fleet_factory(str(FLEETS / f"single-{request.param}.yml")).cluster()


def now_rfc3339(offset=0.0):
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=offset)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def conditions_of(obj):
    status = obj.get("status") or {}
    if obj["apiVersion"].endswith("/v1beta2"):
        return status.get("conditions") or []
    return (status.get("v1beta2") or {}).get("conditions") or []


def condition(obj, ctype):
    return next((c for c in conditions_of(obj) if c["type"] == ctype), None)


def _ready(machine):
    return not machine["metadata"].get("deletionTimestamp") and (condition(machine, "Ready") or {}).get("status") == "True"


class Workload:
    """One test's workload cluster in its own namespace, and the calls a user of the API would make."""

    def __init__(self, mgmt, **spec):
        self.mgmt = mgmt
        self.admin = mgmt.api("admin")
        self.v1beta2 = mgmt.api_version == "v1beta2"
        name = f"t{next(_SEQ)}-{secrets.token_hex(3)}"
        spec = {"name": name, "namespace": name, "kubernetes_version": "v1.30.4", "provision_seconds": 1, **spec}
        fleet = load_fleet({"management_clusters": [{"name": "x", "capi_version": mgmt.capi_version, "workload_clusters": [spec]}]})
        self.spec = fleet["management_clusters"][0]["workload_clusters"][0]
        self.name, self.ns = name, name
        self.objects = workload_objects(self.spec, mgmt.api_version)
        for obj in self.objects:
            self.admin.create(collection_path(obj), obj)

    def path(self, kind, name=None):
        group, plural = {"Cluster": (CORE, "clusters"), "MachineDeployment": (CORE, "machinedeployments"),
                         "MachineSet": (CORE, "machinesets"), "Machine": (CORE, "machines"),
                         "KubeadmControlPlane": (CONTROLPLANE, "kubeadmcontrolplanes"),
                         "DockerMachineTemplate": (INFRA, "dockermachinetemplates")}[kind]
        return resource_path(group, self.mgmt.api_version, plural, self.ns, name)

    def first(self, kind):
        return next(o for o in self.objects if o["kind"] == kind)

    def get(self, kind, name=None):
        return self.admin.get(self.path(kind, name or self.first(kind)["metadata"]["name"]))

    def items(self, kind):
        return self.admin.list(self.path(kind))["items"]

    def patch(self, kind, patch):
        return self.admin.patch_merge(self.path(kind, self.first(kind)["metadata"]["name"]), patch)

    def complete(self, kind="MachineDeployment"):
        obj = self.get(kind)
        return readiness.is_complete(obj, self.mgmt.api_version) and obj

    def wait_complete(self, kind="MachineDeployment", timeout=60.0):
        return wait_for(f"{kind} complete", lambda: self.complete(kind), timeout)

    def restart(self, kind="MachineDeployment", offset=0.0):
        """What `clusterctl alpha rollout restart` writes (rolloutAfter = now), optionally in the future.

        A MachineSet created in the same second as rolloutAfter counts as created after it (#12260), so a
        restart right after the previous rollout would do nothing: start from the next second."""
        children = self.items("MachineSet" if kind == "MachineDeployment" else "Machine")
        latest = max((o["metadata"]["creationTimestamp"] for o in children), default="")
        wait_for("a new second", lambda: now_rfc3339() > latest, 5, 0.05)
        field = {"rollout": {"after": now_rfc3339(offset)}} if self.v1beta2 else {"rolloutAfter": now_rfc3339(offset)}
        return self.patch(kind, {"spec": field})

    def set_md_template(self, **changes):
        return self.patch("MachineDeployment", {"spec": {"template": {"spec": changes}}})

    def copy_template(self, base_name, annotations=None):
        """A new DockerMachineTemplate with the content of ``base_name`` (templates are immutable: copy, then switch)."""
        base = self.get("DockerMachineTemplate", base_name)
        name = f"{base_name}-{secrets.token_hex(2)}"
        meta = {"name": name, "namespace": self.ns, "labels": base["metadata"].get("labels", {}),
                "annotations": {**base["metadata"].get("annotations", {}), **(annotations or {})}}
        self.admin.create(self.path("DockerMachineTemplate"), {"apiVersion": base["apiVersion"], "kind": base["kind"],
                                                               "metadata": meta, "spec": copy.deepcopy(base["spec"])})
        return name

    def md_infra_name(self):
        return self.get("MachineDeployment")["spec"]["template"]["spec"]["infrastructureRef"]["name"]

    def machine_sets(self):
        return sorted(self.items("MachineSet"), key=lambda o: (o["metadata"]["creationTimestamp"], o["metadata"]["name"]))


class Recorder:
    """Watches one kind in a namespace from "now" and keeps every event, in order."""

    def __init__(self, workload, kind):
        self.api = workload.mgmt.api("admin")
        self.path = workload.path(kind)
        listed = self.api.list(self.path)
        self.initial = {o["metadata"]["name"]: o for o in listed["items"]}
        self.version = listed["metadata"]["resourceVersion"]
        self.events = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping.is_set():
            for event_type, obj in self.api.watch(self.path, self.version, timeout_seconds=2):
                self.version = obj["metadata"].get("resourceVersion", self.version)
                if event_type != "BOOKMARK":
                    self.events.append((event_type, obj))

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        return self

    def added(self):
        return [obj["metadata"]["name"] for t, obj in self.events if t == "ADDED"]

    def replica_pairs(self):
        """(Σ old MS spec.replicas, new MS spec.replicas) after every write that changed a MachineSet's replicas."""
        replicas = {name: obj["spec"]["replicas"] for name, obj in self.initial.items()}
        new_names = self.added()
        pairs = []
        for event_type, obj in self.events:
            name = obj["metadata"]["name"]
            if event_type == "DELETED" or replicas.get(name) == obj["spec"]["replicas"]:
                continue
            replicas[name] = obj["spec"]["replicas"]
            pairs.append((sum(r for n, r in replicas.items() if n not in new_names),
                          sum(r for n, r in replicas.items() if n in new_names)))
        return pairs


# --- MachineDeployment rollouts -----------------------------------------------------------------------------------

GOLDEN = {
    # reference §3.7 golden traces, as the sequence of (old, new) spec.replicas after every MachineSet write
    "3 replicas, maxSurge 1, maxUnavailable 0": (3, 1, 0, [(3, 1), (2, 1), (2, 2), (1, 2), (1, 3), (0, 3)]),
    "3 replicas, maxSurge 0, maxUnavailable 1": (3, 0, 1, [(3, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2), (0, 3)]),
    "6 replicas, maxSurge 3, maxUnavailable 1": (6, 3, 1, [(6, 3), (5, 3), (5, 4), (2, 4), (2, 6), (1, 6), (0, 6)]),
}


@pytest.mark.parametrize("scenario", sorted(GOLDEN))
def test_restart_follows_golden_trace(mgmt, scenario):
    replicas, surge, unavailable, expected = GOLDEN[scenario]
    # The traces assume that new Machines are available at once: provision-seconds 0.
    strategy = {"type": "RollingUpdate", "max_surge": surge, "max_unavailable": unavailable}
    wl = Workload(mgmt, provision_seconds=0, machine_deployments=[{"name": "md", "replicas": replicas, "strategy": strategy}])
    wl.wait_complete()
    recorder = Recorder(wl, "MachineSet")
    wl.restart()
    wait_for("restart rolled out", lambda: wl.complete() and len(recorder.added()) == 1 and recorder.replica_pairs()[-1:] == expected[-1:])
    time.sleep(1.5)  # anything after completion would show up here
    recorder.stop()
    assert recorder.replica_pairs() == expected
    assert len(recorder.added()) == 1


def test_restart_creates_exactly_one_machine_set(mgmt):
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 2}])
    wl.wait_complete()
    for dummy in range(2):
        recorder = Recorder(wl, "MachineSet")
        wl.restart()
        wait_for("restart rolled out", lambda: len(recorder.added()) == 1 and wl.complete(), 60)
        time.sleep(2)
        assert len(recorder.stop().added()) == 1
        new = wl.get("MachineSet", recorder.added()[0])
        assert new["metadata"]["annotations"][REVISION] == wl.get("MachineDeployment")["metadata"]["annotations"][REVISION]


def test_future_rollout_after_fires_once_at_the_next_event(mgmt):
    """Upstream acts on a future rolloutAfter at its first reconcile after that time - the next event or the
    periodic resync (10 min here, the fleet's default) - never at the time itself (no requeue: v1.10.10
    internal/controllers/machinedeployment/mdutil/util.go, v1.14.0 core/reconcilers/machinedeployment)."""
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 2}])
    wl.wait_complete()
    recorder = Recorder(wl, "MachineSet")
    wl.restart(offset=2)
    time.sleep(5)
    assert recorder.added() == [], "the time passing alone must not roll out"
    wl.patch("MachineDeployment", {"metadata": {"annotations": {"example.com/touched": "1"}}})
    wait_for("the rollout on the next event", lambda: len(recorder.added()) == 1 and wl.complete(), 60)
    time.sleep(2.5)
    assert len(recorder.stop().added()) == 1


def test_template_a_b_a_revisions_and_cleanup(mgmt):
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 2}])
    wl.wait_complete()
    template_a = wl.md_infra_name()
    (ms_a,) = wl.machine_sets()
    template_b = wl.copy_template(template_a)
    wl.set_md_template(infrastructureRef={"name": template_b})
    wl.wait_complete()
    wait_for("old MachineSet cleanup", lambda: len(wl.machine_sets()) == (2 if mgmt.capi_version == "v1.10" else 1))
    time.sleep(1)
    sets = wl.machine_sets()
    if mgmt.capi_version == "v1.10":
        # revisionHistoryLimit 1: the old MachineSet stays, at 0 replicas
        assert [s["metadata"]["name"] for s in sets][0] == ms_a["metadata"]["name"]
        assert [s["spec"]["replicas"] for s in sets] == [0, 2]
    else:
        assert len(sets) == 1 and sets[0]["metadata"]["name"] != ms_a["metadata"]["name"]
    assert sets[-1]["metadata"]["annotations"][REVISION] == "2"

    recorder = Recorder(wl, "MachineSet")
    wl.set_md_template(infrastructureRef={"name": template_a})
    wait_for("rollback rolled out", lambda: wl.complete() and wl.md_infra_name() == template_a
             and all(s["spec"]["template"]["spec"]["infrastructureRef"]["name"] == template_a
                     for s in wl.machine_sets() if s["spec"]["replicas"]))
    time.sleep(1.5)
    recorder.stop()
    md = wl.get("MachineDeployment")
    assert md["metadata"]["annotations"][REVISION] == "3"
    current = next(s for s in wl.machine_sets() if s["spec"]["replicas"] == 2)
    if mgmt.capi_version == "v1.10":
        # A's MachineSet is the new one again: revision 3, its old revision in the history, no MachineSet created
        assert recorder.added() == []
        assert current["metadata"]["name"] == ms_a["metadata"]["name"]
        assert current["metadata"]["annotations"][REVISION] == "3"
        assert current["metadata"]["annotations"][REVISION_HISTORY] == "1"
        assert len(wl.machine_sets()) == 2
    else:
        # v1.14 deleted A's MachineSet at 0 replicas: a new one (revision 3, no history) was needed
        assert len(recorder.added()) == 1 and current["metadata"]["name"] == recorder.added()[0]
        assert current["metadata"]["annotations"][REVISION] == "3"
        assert REVISION_HISTORY not in current["metadata"]["annotations"]
        wait_for("cleanup", lambda: len(wl.machine_sets()) == 1)


def test_spec_paused_scales_but_does_not_roll_out(mgmt):
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 2}])
    wl.wait_complete()
    wl.patch("MachineDeployment", {"spec": {"paused": True}})
    wl.patch("MachineDeployment", {"spec": {"replicas": 3}})
    wl.wait_complete()
    assert [s["spec"]["replicas"] for s in wl.machine_sets()] == [3]
    wl.set_md_template(version="v1.30.5")
    time.sleep(3)
    (only,) = wl.machine_sets()
    assert only["spec"]["template"]["spec"]["version"] == "v1.30.4"
    md = wl.get("MachineDeployment")
    assert condition(md, "Paused")["status"] == "False", "spec.paused does not set the Paused condition"
    wl.patch("MachineDeployment", {"spec": {"paused": False}})
    wait_for("resumed rollout", lambda: wl.complete() and all(
        m["spec"]["version"] == "v1.30.5" for m in wl.items("Machine")) and len(wl.items("Machine")) == 3)


def test_paused_annotation_stops_everything(mgmt):
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 2}])
    wl.wait_complete()
    wl.patch("MachineDeployment", {"metadata": {"annotations": {PAUSED: "true"}}})
    wl.set_md_template(version="v1.30.5")
    wl.patch("MachineDeployment", {"spec": {"replicas": 3}})
    paused = wait_for("Paused condition", lambda: (condition(wl.get("MachineDeployment"), "Paused") or {}).get("status") == "True"
                      and condition(wl.get("MachineDeployment"), "Paused"))
    assert paused["message"] == f"MachineDeployment has the {PAUSED} annotation"
    time.sleep(2.5)
    assert [s["spec"]["replicas"] for s in wl.machine_sets()] == [2]
    wl.admin.patch_json(wl.path("MachineDeployment", wl.first("MachineDeployment")["metadata"]["name"]),
                        [{"op": "remove", "path": "/metadata/annotations/cluster.x-k8s.io~1paused"}])
    wait_for("rollout after unpause", lambda: wl.complete() and len(wl.items("Machine")) == 3
             and all(m["spec"]["version"] == "v1.30.5" for m in wl.items("Machine")))


def test_cluster_paused_stops_everything(mgmt):
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 2}])
    wl.wait_complete()
    wl.patch("Cluster", {"spec": {"paused": True}})
    wl.patch("MachineDeployment", {"spec": {"replicas": 3}})
    paused = wait_for("Paused condition", lambda: (condition(wl.get("MachineDeployment"), "Paused") or {}).get("status") == "True"
                      and condition(wl.get("MachineDeployment"), "Paused"))
    assert paused["message"] == "Cluster spec.paused is set to true"
    time.sleep(2.5)
    assert [s["spec"]["replicas"] for s in wl.machine_sets()] == [2]
    assert len(wl.items("Machine")) == 2
    wl.patch("Cluster", {"spec": {"paused": False}})
    wait_for("scale after unpause", lambda: wl.complete() and len(wl.items("Machine")) == 3)
    assert condition(wl.get("MachineDeployment"), "Paused")["status"] == "False"


def test_on_delete_replaces_only_deleted_machines(mgmt):
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 2, "strategy": {"type": "OnDelete"}}])
    wl.wait_complete()
    wl.set_md_template(version="v1.30.5")
    wait_for("new MachineSet", lambda: len(wl.machine_sets()) == 2)
    time.sleep(2)
    old, new = wl.machine_sets()
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (2, 0)
    assert "cluster.x-k8s.io/disable-machine-create" in old["metadata"]["annotations"]
    victim = sorted(m["metadata"]["name"] for m in wl.items("Machine"))[0]
    wl.admin.delete(wl.path("Machine", victim))
    wait_for("replacement", lambda: sorted(s["spec"]["replicas"] for s in wl.machine_sets()) == [1, 1] and sum(
        1 for m in wl.items("Machine") if m["spec"]["version"] == "v1.30.5" and _ready(m)) == 1)
    assert victim not in {m["metadata"]["name"] for m in wl.items("Machine")}
    assert len(wl.items("Machine")) == 2


def test_machine_deletion_takes_time_and_counts_in_replicas(mgmt):
    """A deleted Machine stays Deleting for the deletion delay (drain + infrastructure teardown) and counts in
    its MachineSet's status.replicas until it is gone (v1.14.0 core/reconcilers/machineset/
    machineset_controller_status.go: replicas = len(machines)); the MD is not complete meanwhile."""
    wl = Workload(mgmt, deletion_seconds=4, machine_deployments=[{"name": "md", "replicas": 2}])
    wl.wait_complete()
    wl.patch("MachineDeployment", {"spec": {"replicas": 1}})
    (deleting,) = wait_for("a Machine deleting", lambda: [
        x for x in wl.items("Machine") if x["metadata"].get("deletionTimestamp")], 20)
    started = time.monotonic()
    wait_for("its Deleting phase", lambda: (wl.get("Machine", deleting["metadata"]["name"]).get("status") or {}).get(
        "phase") == "Deleting", 10)
    (ms,) = wl.machine_sets()
    assert ms["spec"]["replicas"] == 1
    wait_for("the MachineSet to count it", lambda: wl.machine_sets()[0]["status"].get("replicas") == 2, 10)
    assert not wl.complete(), "complete while a Machine is still being deleted"
    wait_for("the Machine gone", lambda: deleting["metadata"]["name"] not in {x["metadata"]["name"] for x in wl.items("Machine")}, 30)
    assert time.monotonic() - started >= 2, "deleted before its deletion delay"
    wl.wait_complete()
    assert wl.machine_sets()[0]["status"]["replicas"] == 1 and len(wl.items("Machine")) == 1


def _v1beta1_condition(obj, ctype):
    status = obj.get("status") or {}
    found = status.get("conditions") if not obj["apiVersion"].endswith("/v1beta2") else \
        ((status.get("deprecated") or {}).get("v1beta1") or {}).get("conditions")
    return next((c for c in found or [] if c["type"] == ctype), None)


def test_pdb_blocks_the_drain_until_the_node_drain_timeout_set_in_place(mgmt):
    """A PodDisruptionBudget blocks the drain of a deleted Machine's Node (Deleting DrainingNode with drain.go's
    message naming the Pod and the budget; v1beta1 DrainingSucceeded False Draining) while no node drain timeout is
    set; a timeout set on the MD reaches the Machine in place (MD -> MS -> Machine, syncMachines) and, once
    exceeded, the drain is skipped and the Machine goes (v1.14.0 core/reconcilers/machine/machine_controller.go
    nodeDrainTimeoutExceeded; v1.10.10 internal/controllers/machine/machine_controller.go)."""
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 2, "drain": {"blocked_by_pdb": True}}])
    wl.wait_complete()
    wl.patch("MachineDeployment", {"spec": {"replicas": 1}})

    def blocked():
        found = [x for x in wl.items("Machine") if x["metadata"].get("deletionTimestamp")
                 and (condition(x, "Deleting") or {}).get("reason") == "DrainingNode"]
        return found and found[0]
    victim = wait_for("a Machine whose drain a PodDisruptionBudget blocks", blocked, 20)
    node = victim["status"]["nodeRef"]["name"]
    message = condition(victim, "Deleting")["message"]
    assert message.startswith("Drain not completed yet (started at ")
    assert f"* Pod default/web-{node}: cannot evict pod as it would violate the pod's disruption budget. " \
           "The disruption budget web needs 1 healthy pods and has 1 currently" in message
    assert _v1beta1_condition(victim, "DrainingSucceeded")["reason"] == "Draining"
    assert victim["status"]["deletion"]["nodeDrainStartTime"]
    assert not wl.complete()
    timeout = {"deletion": {"nodeDrainTimeoutSeconds": 1}} if wl.v1beta2 else {"nodeDrainTimeout": "1s"}
    wl.set_md_template(**timeout)
    name = victim["metadata"]["name"]
    wait_for("the drain timed out and the Machine gone",
             lambda: name not in {x["metadata"]["name"] for x in wl.items("Machine")}, 30)
    (survivor,) = wl.items("Machine")
    field = survivor["spec"]["deletion"]["nodeDrainTimeoutSeconds"] if wl.v1beta2 else survivor["spec"]["nodeDrainTimeout"]
    assert field in (1, "1s")
    wl.wait_complete()


def _settled(md):
    status = md.get("status") or {}
    return status.get("availableReplicas") == 1 and status.get("observedGeneration") == md["metadata"]["generation"]


def test_kubelet_version_of_the_node(mgmt):
    """A Node whose kubelet runs another version than the Machine's spec.version (the template's
    sim.capi-rollout.dev/kubelet-version): nodeInfo shows it everywhere; on v1.14 only the Machine is then
    not up to date (UpToDate=False, Updating: v1.14.0 core/reconcilers/machine/machine_controller_status.go)
    and status.versions counts the kubelet version (v1.14.0 internal/util/version/version.go)."""
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 1}])
    wl.wait_complete()
    skewed = wl.copy_template(wl.md_infra_name(), {"sim.capi-rollout.dev/kubelet-version": "v1.30.3"})
    wl.set_md_template(infrastructureRef={"name": skewed})
    new = wait_for("the new Machine with a Node", lambda: [
        x for x in wl.items("Machine") if (x.get("status") or {}).get("nodeInfo", {}).get("kubeletVersion") == "v1.30.3"
        and _ready(x) and len(wl.items("Machine")) == 1], 30)[0]
    assert new["spec"]["version"] == "v1.30.4"
    up_to_date = condition(new, "UpToDate")
    wait_for("the MachineDeployment status", lambda: _settled(wl.get("MachineDeployment")), 30)
    if mgmt.capi_version == "v1.14":
        assert (up_to_date["status"], up_to_date["reason"]) == ("False", "Updating"), up_to_date
        assert "Node.status.nodeInfo.kubeletVersion v1.30.3, v1.30.4 required" in up_to_date["message"]
        md = wait_for("the MD to count it", lambda: wl.get("MachineDeployment") if wl.get("MachineDeployment")["status"].get(
            "versions") == [{"version": "v1.30.3", "replicas": 1}] else None, 30)
        assert md["status"].get("upToDateReplicas") == 0
        assert not readiness.is_complete(md, mgmt.api_version)
    else:
        assert up_to_date["status"] == "True", up_to_date
        wl.wait_complete()


def test_max_surge_and_max_unavailable_both_0_are_refused_on_v1_11_and_later(mgmt):
    """v1.11.11 internal/webhooks/machinedeployment.go / v1.14.0 core/webhooks/admission/machinedeployment.go
    refuse integer maxSurge 0 with integer maxUnavailable 0; v1.10.10 accepts it (and resolves it to 1
    unavailable). "0%" is not an integer and passes everywhere."""
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 1}])

    def strategy(rolling):
        return ({"spec": {"rollout": {"strategy": {"rollingUpdate": rolling}}}} if wl.v1beta2
                else {"spec": {"strategy": {"rollingUpdate": rolling}}})

    def rolling_update():
        spec = wl.get("MachineDeployment")["spec"]
        return (spec["rollout"] if wl.v1beta2 else spec)["strategy"]["rollingUpdate"]

    before = rolling_update()
    if mgmt.capi_version == "v1.14":
        with pytest.raises(ApiError) as err:
            wl.patch("MachineDeployment", strategy({"maxSurge": 0, "maxUnavailable": 0}))
        assert err.value.status == 422 and "rollingUpdate" in str(err.value), err.value
        assert rolling_update() == before, "nothing stored"
    else:
        wl.patch("MachineDeployment", strategy({"maxSurge": 0, "maxUnavailable": 0}))
    wl.patch("MachineDeployment", strategy({"maxSurge": "0%", "maxUnavailable": 0}))
    wl.patch("MachineDeployment", strategy({"maxSurge": 0, "maxUnavailable": 1}))


def test_failing_template_never_gets_ready(mgmt):
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 2}])
    wl.wait_complete()
    failing = wl.copy_template(wl.md_infra_name(), {"sim.capi-rollout.dev/fail-provisioning": "true"})
    wl.set_md_template(infrastructureRef={"name": failing})
    wait_for("new MachineSet", lambda: len(wl.machine_sets()) == 2)
    time.sleep(4)  # four times the provisioning delay
    old, new = wl.machine_sets()
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (2, 1)  # maxSurge 1, maxUnavailable 0: stalled
    stuck = [m for m in wl.items("Machine") if m["metadata"]["labels"]["cluster.x-k8s.io/set-name"] == new["metadata"]["name"]]
    assert len(stuck) == 1
    assert stuck[0]["status"]["phase"] == "Provisioning"
    assert condition(stuck[0], "Ready")["status"] == "False"
    md = wl.get("MachineDeployment")
    assert condition(md, "RollingOut")["status"] == "True"
    assert not readiness.is_complete(md, mgmt.api_version)


# --- KubeadmControlPlane ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("surge, most, fewest_ready", [(1, 4, 3), (0, 3, 2)])
def test_kcp_replaces_one_machine_at_a_time(mgmt, surge, most, fewest_ready):
    wl = Workload(mgmt, control_plane={"replicas": 3, "max_surge": surge})
    wl.wait_complete("KubeadmControlPlane")
    recorder = Recorder(wl, "Machine")
    before = set(recorder.initial)
    wl.restart("KubeadmControlPlane")
    wait_for("control plane replaced", lambda: wl.complete("KubeadmControlPlane") and not before & {
        m["metadata"]["name"] for m in wl.items("Machine")}, 90)
    recorder.stop()
    machines = dict(recorder.initial)
    counts, ready = [], []
    for event_type, obj in recorder.events:
        if event_type == "DELETED":
            machines.pop(obj["metadata"]["name"], None)
        else:
            machines[obj["metadata"]["name"]] = obj
        counts.append(len(machines))
        ready.append(sum(1 for m in machines.values() if _ready(m)))
    assert max(counts) == most
    assert min(ready) == fewest_ready
    added = [obj["metadata"]["name"] for t, obj in recorder.events if t == "ADDED"]
    assert len(added) == 3
    kcp = wl.get("KubeadmControlPlane")
    assert condition(kcp, "RollingOut")["status"] == "False"
    if mgmt.capi_version == "v1.10":
        spec_up_to_date = next(c for c in kcp["status"]["conditions"] if c["type"] == "MachinesSpecUpToDate")
        assert spec_up_to_date["status"] == "True"


def test_kcp_version_change_rolls_out_with_status(mgmt):
    wl = Workload(mgmt, control_plane={"replicas": 1})
    wl.wait_complete("KubeadmControlPlane")
    wl.patch("KubeadmControlPlane", {"spec": {"version": "v1.31.0"}})
    rolling = wait_for("RollingOut", lambda: (condition(wl.get("KubeadmControlPlane"), "RollingOut") or {}).get("status") == "True"
                       and condition(wl.get("KubeadmControlPlane"), "RollingOut"), 20, 0.05)
    assert rolling["message"].startswith("Rolling out 1 not up-to-date replicas\n* Version v1.30.4, v1.31.0 required")
    kcp = wl.wait_complete("KubeadmControlPlane")
    assert kcp["status"]["version"] == "v1.31.0"
    assert [m["spec"]["version"] for m in wl.items("Machine")] == ["v1.31.0"]


def test_kcp_rolls_out_on_a_kubeadm_config_spec_change(mgmt):
    """v1.10.10 / v1.14.0 controlplane/kubeadm/internal/filters.go matchesKubeadmBootstrapConfig: Machines whose
    KubeadmConfig no longer matches spec.kubeadmConfigSpec are replaced; control plane Machines report when
    their certificates expire (status.certificatesExpiryDate, kubeadm's one year)."""
    wl = Workload(mgmt, control_plane={"replicas": 1})
    wl.wait_complete("KubeadmControlPlane")
    (first,) = wl.items("Machine")
    expiry = datetime.datetime.strptime(first["status"]["certificatesExpiryDate"], "%Y-%m-%dT%H:%M:%SZ")
    created = datetime.datetime.strptime(first["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
    assert abs((expiry - created).days - 365) <= 1
    wl.patch("KubeadmControlPlane", {"spec": {"kubeadmConfigSpec": {"files": [{"path": "/etc/motd", "content": "x"}]}}})
    rolling = wait_for("RollingOut", lambda: (condition(wl.get("KubeadmControlPlane"), "RollingOut") or {}).get("status") == "True"
                       and condition(wl.get("KubeadmControlPlane"), "RollingOut"), 20, 0.05)
    assert "KubeadmConfig is not up-to-date" in rolling["message"]
    wait_for("the Machine replaced", lambda: wl.complete("KubeadmControlPlane") and first["metadata"]["name"] not in {
        x["metadata"]["name"] for x in wl.items("Machine")}, 60)
    assert len(wl.items("Machine")) == 1


def test_kcp_paused_annotation_stops_everything(mgmt):
    wl = Workload(mgmt, control_plane={"replicas": 1})
    wl.wait_complete("KubeadmControlPlane")
    before = {m["metadata"]["name"] for m in wl.items("Machine")}
    wl.patch("KubeadmControlPlane", {"metadata": {"annotations": {PAUSED: "true"}}})
    wl.patch("KubeadmControlPlane", {"spec": {"version": "v1.31.0"}})
    paused = wait_for("Paused condition", lambda: (condition(wl.get("KubeadmControlPlane"), "Paused") or {}).get("status") == "True"
                      and condition(wl.get("KubeadmControlPlane"), "Paused"))
    assert paused["message"] == f"KubeadmControlPlane has the {PAUSED} annotation"
    time.sleep(2.5)
    assert {m["metadata"]["name"] for m in wl.items("Machine")} == before
    wl.admin.patch_json(wl.path("KubeadmControlPlane", wl.first("KubeadmControlPlane")["metadata"]["name"]),
                        [{"op": "remove", "path": "/metadata/annotations/cluster.x-k8s.io~1paused"}])
    wait_for("rollout after unpause", lambda: wl.complete("KubeadmControlPlane")
             and [m["spec"]["version"] for m in wl.items("Machine")] == ["v1.31.0"])


def test_no_machine_set_cleanup_while_paused(fleet_factory):
    """Upstream's paused path (sync) never cleans up old MachineSets; the rollout paths do (v1.10.10
    internal/controllers/machinedeployment/machinedeployment_sync.go). On v1.10, whose clean-up keeps
    revisionHistoryLimit old MachineSets, lowering the limit of a paused MD deletes nothing until it resumes."""
    wl = Workload(fleet_factory(str(FLEETS / "single-v1.10.yml")).cluster(), machine_deployments=[{"name": "md", "replicas": 1}])
    wl.wait_complete()
    wl.set_md_template(infrastructureRef={"name": wl.copy_template(wl.md_infra_name())})
    wl.wait_complete()
    wait_for("the old MachineSet kept at 0 replicas", lambda: [s["spec"]["replicas"] for s in wl.machine_sets()] == [0, 1])
    wl.patch("MachineDeployment", {"spec": {"paused": True, "revisionHistoryLimit": 0}})
    wait_for("the paused MD observed", lambda: wl.get("MachineDeployment")["status"].get("observedGeneration")
             == wl.get("MachineDeployment")["metadata"]["generation"])
    time.sleep(2)
    assert len(wl.machine_sets()) == 2, "an old MachineSet was cleaned up while the MD was paused"
    wl.patch("MachineDeployment", {"spec": {"paused": False}})
    wait_for("clean-up once resumed", lambda: len(wl.machine_sets()) == 1)


def test_missing_template_is_not_observed(mgmt):
    """A reconcile that fails (the new template does not exist: "cannot create a new MachineSet when templates do
    not exist") does not bump observedGeneration (v1.10.10 internal/controllers/machinedeployment/
    machinedeployment_controller.go, v1.14.0 core/reconcilers/machinedeployment/machinedeployment_controller.go)."""
    wl = Workload(mgmt, machine_deployments=[{"name": "md", "replicas": 1}])
    md = wl.wait_complete()
    generation, original = md["metadata"]["generation"], wl.md_infra_name()
    wl.set_md_template(infrastructureRef={"name": "missing-template"})
    time.sleep(3)
    md = wl.get("MachineDeployment")
    assert md["metadata"]["generation"] == generation + 1
    assert md["status"]["observedGeneration"] == generation, "a failed reconcile was reported as observed"
    # positive control: the same controller observes a change it can act on
    wl.set_md_template(infrastructureRef={"name": original})
    wait_for("the template change back observed",
             lambda: wl.get("MachineDeployment")["status"].get("observedGeneration") == generation + 2, 30)
    assert len(wl.machine_sets()) == 1
