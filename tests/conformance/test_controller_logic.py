"""The simulator's pure decision logic against the reference's tables and golden traces (no API server).

Tables: TestResolveFenceposts, TestMaxUnavailable, TestNewMSNewReplicas, TestDeploymentComplete,
TestComputeMachineSetAnnotations, TestMachineTemplateUpToDate and TestFindNewAndOldMachineSets (rolloutAfter
cases) from CAPI's mdutil tests; the RollingUpdate golden traces of reference §3.7 replayed in a tiny in-memory world
where Machines become available immediately, for both simulated CAPI versions.
"""

import copy
import datetime
import random

import pytest

from capisim.controller import conditions, fenceposts, kcpplan, machineplan, mdplan, status
from capisim.controller import model as m
from capisim.releases import RELEASES

T0 = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
VERSIONS = ("v1.10", "v1.14")


def at(minutes=0, seconds=0):
    return T0 + datetime.timedelta(minutes=minutes, seconds=seconds)


def ref(capi_version, group, kind, name):
    if capi_version == "v1.14":
        return {"apiGroup": group, "kind": kind, "name": name}
    return {"apiVersion": f"{group}/v1beta1", "kind": kind, "name": name, "namespace": "ns"}


def make_md(capi_version, replicas=3, surge=1, unavailable=0, strategy="RollingUpdate", version="v1.30.0", infra="infra-a"):
    v1beta2 = capi_version == "v1.14"
    selector = {m.CLUSTER_NAME: "c1", m.DEPLOYMENT_NAME: "md"}
    tspec = {"clusterName": "c1", "version": version,
             "bootstrap": {"configRef": ref(capi_version, m.BOOTSTRAP_GROUP, "KubeadmConfigTemplate", "boot-a")},
             "infrastructureRef": ref(capi_version, m.INFRA_GROUP, "DockerMachineTemplate", infra)}
    rollout = {"type": strategy}
    if strategy == "RollingUpdate":
        rollout["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    spec = {"clusterName": "c1", "replicas": replicas, "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": dict(selector)}, "spec": tspec}}
    if v1beta2:
        spec["rollout"] = {"strategy": rollout}
    else:
        spec.update({"strategy": rollout, "revisionHistoryLimit": 1, "minReadySeconds": 0})
    return {"apiVersion": f"cluster.x-k8s.io/{'v1beta2' if v1beta2 else 'v1beta1'}", "kind": "MachineDeployment",
            "metadata": {"name": "md", "namespace": "ns", "uid": "md-uid", "generation": 1, "annotations": {},
                         "creationTimestamp": m.format_time(T0)},
            "spec": spec}


def make_ms(md, name, replicas=0, created=T0, annotations=None, **template_changes):
    ms = {"apiVersion": md["apiVersion"], "kind": "MachineSet",
          "metadata": {"name": name, "namespace": "ns", "uid": f"{name}-uid", "creationTimestamp": m.format_time(created),
                       "labels": {m.TEMPLATE_HASH: f"1-{name}"}, "annotations": dict(annotations or {}),
                       "ownerReferences": [m.owner_reference(md, controller=True)]},
          "spec": {"replicas": replicas, "template": copy.deepcopy(md["spec"]["template"])},
          "status": {"replicas": replicas, "availableReplicas": replicas}}
    ms["spec"]["template"]["spec"].update(template_changes)
    return ms


# --- tables -------------------------------------------------------------------------------------------------------

class TestResolveFenceposts:
    @pytest.mark.parametrize("surge, unavailable, desired, expected", [
        ("0%", "0%", 0, (0, 1)),
        ("39%", "39%", 10, (4, 3)),
        ("25%", "25%", 3, (1, 0)),
        (1, 0, 3, (1, 0)),
        (0, 0, 5, (0, 1)),
        ("100%", "100%", 7, (7, 7)),
    ])
    def test_resolves(self, surge, unavailable, desired, expected):
        assert fenceposts.resolve_fenceposts(surge, unavailable, desired) == expected

    @pytest.mark.parametrize("surge, unavailable", [("oops", "39%"), ("55", "oops"), ("39%", "55"), ("5", "0%"), (None, 0)])
    def test_bad_values_are_errors(self, surge, unavailable):
        with pytest.raises(ValueError):
            fenceposts.resolve_fenceposts(surge, unavailable, 10)


class TestMaxUnavailable:
    @pytest.mark.parametrize("replicas, unavailable, expected", [
        (10, 5, 5), (10, 10, 10), (5, 10, 5), (0, 10, 0), (10, "50%", 5), (10, "100%", 10), (5, "100%", 5),
    ])
    def test_max_unavailable(self, replicas, unavailable, expected):
        assert fenceposts.max_unavailable("RollingUpdate", 1, unavailable, replicas) == expected

    def test_on_delete_has_no_budget(self):
        assert fenceposts.max_unavailable("OnDelete", 1, 5, 10) == 0
        assert fenceposts.max_surge("OnDelete", 1, 5, 10) == 0


class TestNewMSNewReplicas:
    @pytest.mark.parametrize("strategy, md_replicas, new_replicas, surge, old_replicas, expected", [
        ("RollingUpdate", 1, 5, 1, 5, 5),
        ("RollingUpdate", 6, 2, 10, 5, 6),
        ("RollingUpdate", 3, 0, 1, 3, 1),
        ("RollingUpdate", 3, 0, 0, 3, 0),
        ("OnDelete", 3, 0, 1, 3, 0),
        ("OnDelete", 3, 0, 1, 2, 1),
    ])
    def test_new_ms_new_replicas(self, strategy, md_replicas, new_replicas, surge, old_replicas, expected):
        md = make_md("v1.14", replicas=md_replicas, surge=surge, strategy=strategy)
        new = make_ms(md, "new", new_replicas)
        old = make_ms(md, "old", old_replicas, version="v1.29.0")
        assert mdplan.new_ms_new_replicas(md, [new, old], new_replicas) == expected


class TestDeploymentComplete:
    @pytest.mark.parametrize("desired, current, updated, available, expected", [
        (5, 5, 5, 4, False), (5, 5, 5, 3, False), (5, 5, 5, 5, True), (5, 5, 4, 5, False),
        (1, 2, 1, 1, False), (1, 1, 1, 0, False),
    ])
    def test_complete(self, desired, current, updated, available, expected):
        assert mdplan.deployment_complete(desired, current, updated, available, 1, 1) is expected

    def test_unobserved_generation_is_not_complete(self):
        assert mdplan.deployment_complete(3, 3, 3, 3, 1, 2) is False


class TestComputeMachineSetAnnotations:
    def _ms(self, revision=None, history=None):
        annotations = {}
        if revision is not None:
            annotations[m.REVISION] = revision
        if history is not None:
            annotations[m.REVISION_HISTORY] = history
        return {"metadata": {"annotations": annotations}}

    def test_reused_ms_gets_next_revision_and_history(self):
        out, revision = mdplan.compute_revision_annotations(self._ms("2", "1"), [self._ms("3"), self._ms("4")])
        assert (revision, out) == ("5", {m.REVISION: "5", m.REVISION_HISTORY: "1,2"})

    def test_first_history_entry(self):
        out, revision = mdplan.compute_revision_annotations(self._ms("1"), [self._ms("1"), self._ms("2")])
        assert (revision, out) == ("3", {m.REVISION: "3", m.REVISION_HISTORY: "1"})

    def test_revision_never_decreases(self):
        out, revision = mdplan.compute_revision_annotations(self._ms("4"), [self._ms("1"), self._ms("2")])
        assert (revision, out) == ("4", {m.REVISION: "4"})

    def test_new_ms_without_olds_is_revision_1(self):
        assert mdplan.compute_revision_annotations(None, []) == ({m.REVISION: "1"}, "1")

    def test_replica_annotations_and_skip_list(self):
        md = make_md("v1.10", replicas=3, surge=1)
        md["metadata"]["annotations"] = {m.LAST_APPLIED: "{}", m.REVISION: "7", "team": "a"}
        assert mdplan.ms_annotations_from_md(md) == {"team": "a", m.DESIRED_REPLICAS: "3", m.MAX_REPLICAS: "4"}


class TestMachineTemplateUpToDate:
    BASE = {"clusterName": "c1", "version": "v1.25.0", "failureDomain": "fd1", "minReadySeconds": 10,
            "infrastructureRef": {"apiGroup": m.INFRA_GROUP, "kind": "InfrastructureMachineTemplate", "name": "infra1"},
            "bootstrap": {"configRef": {"apiGroup": m.BOOTSTRAP_GROUP, "kind": "BootstrapConfigTemplate", "name": "bootstrap1"}},
            "deletion": {"nodeDrainTimeoutSeconds": 10}}

    def changed(self, **changes):
        spec = copy.deepcopy(self.BASE)
        spec.update(changes)
        return spec

    @pytest.mark.parametrize("desired", [
        {"minReadySeconds": 20, "deletion": {"nodeDrainTimeoutSeconds": 20}, "readinessGates": [{"conditionType": "foo"}],
         "taints": [{"key": "k", "effect": "NoSchedule", "propagation": "Always"}]},
        {"clusterName": "cluster2"},
    ])
    def test_in_place_fields_do_not_count(self, desired):
        assert mdplan.template_up_to_date(self.BASE, self.changed(**desired))[0]

    @pytest.mark.parametrize("changes, log, condition", [
        ({"version": "v1.26.0"}, "spec.version v1.25.0, v1.26.0 required", "Version v1.25.0, v1.26.0 required"),
        ({"failureDomain": "fd2"}, "spec.failureDomain fd1, fd2 required", "Failure domain fd1, fd2 required"),
        ({"infrastructureRef": {"apiGroup": m.INFRA_GROUP, "kind": "InfrastructureMachineTemplate", "name": "infra2"}},
         "spec.infrastructureRef InfrastructureMachineTemplate infra1, InfrastructureMachineTemplate infra2 required",
         "InfrastructureMachine is not up-to-date"),
        ({"bootstrap": {"configRef": {"apiGroup": m.BOOTSTRAP_GROUP, "kind": "BootstrapConfigTemplate", "name": "bootstrap2"}}},
         "spec.bootstrap.configRef BootstrapConfigTemplate bootstrap1, BootstrapConfigTemplate bootstrap2 required",
         "BootstrapConfig is not up-to-date"),
        ({"bootstrap": {"dataSecretName": "data-secret1"}},
         "spec.bootstrap.configRef BootstrapConfigTemplate bootstrap1,   required", "BootstrapConfig is not up-to-date"),
    ])
    def test_rollout_fields(self, changes, log, condition):
        up_to_date, logs, conds = mdplan.template_up_to_date(self.BASE, self.changed(**changes))
        assert (up_to_date, logs, conds) == (False, [log], [condition])

    def test_data_secret_names(self):
        current = self.changed(bootstrap={"dataSecretName": "data-secret1"})
        assert mdplan.template_up_to_date(current, self.changed(bootstrap={"dataSecretName": "data-secret2"}))[1] == [
            "spec.bootstrap.dataSecretName data-secret1, data-secret2 required"]
        assert mdplan.template_up_to_date(current, self.BASE)[1] == ["spec.bootstrap.dataSecretName data-secret1, nil required"]

    def test_v1beta1_refs_compare_by_group_only(self):
        v1 = self.changed(infrastructureRef={"apiVersion": f"{m.INFRA_GROUP}/v1beta1", "kind": "InfrastructureMachineTemplate",
                                             "name": "infra1", "namespace": "ns"})
        v2 = self.changed(infrastructureRef={"apiVersion": f"{m.INFRA_GROUP}/v1beta2", "kind": "InfrastructureMachineTemplate",
                                             "name": "infra1"})
        assert mdplan.template_up_to_date(v1, v2)[0]
        assert mdplan.template_up_to_date(v1, self.BASE)[0]


class TestFindNewMachineSet:
    """TestFindNewAndOldMachineSets: minutes 0..5 are three-before .. two-after rolloutAfter (at minute 3)."""

    def setup_method(self):
        self.md = make_md("v1.14", infra="new-infra-ref")
        self.md_after = copy.deepcopy(self.md)
        self.md_after["spec"]["rollout"]["after"] = m.format_time(at(3))
        self.old = make_ms(self.md, "old", 0, created=at(0), infrastructureRef={
            "apiGroup": m.INFRA_GROUP, "kind": "DockerMachineTemplate", "name": "old-infra-ref"})

    def test_no_machine_sets(self):
        assert mdplan.find_new_and_old(self.md, [], at(0)) == (None, [], "no MachineSets exist for the MachineDeployment")

    def test_no_match(self):
        new, old, reason = mdplan.find_new_and_old(self.md, [self.old], at(0))
        assert (new, old) == (None, [self.old])
        assert reason == ("couldn't find MachineSet matching MachineDeployment spec template: MachineSet old needs rollout: "
                          "spec.infrastructureRef DockerMachineTemplate old-infra-ref, DockerMachineTemplate new-infra-ref required")

    def test_highest_replicas_wins(self):
        low, high = make_ms(self.md, "a", 0), make_ms(self.md, "b", 2)
        new, old = mdplan.find_new_and_old(self.md, [self.old, low, high], at(0))[:2]
        assert m.name(new) == "b" and sorted(map(m.name, old)) == ["a", "old"]

    def test_in_place_only_difference_still_matches(self):
        ms = make_ms(self.md, "a", 1, minReadySeconds=20, deletion={"nodeDrainTimeoutSeconds": 20})
        assert mdplan.find_new_and_old(self.md, [self.old, ms], at(0))[0] is ms

    def test_rollout_after_expired_no_ms_after(self):
        new, old, reason = mdplan.find_new_and_old(self.md_after, [self.old], at(4))
        assert new is None and old == [self.old]
        assert reason.endswith(", MachineDeployment spec.rolloutAfter expired")

    def test_old_ms_created_at_rollout_after_has_no_expired_note(self):
        old = make_ms(self.md, "old", 0, created=at(3), infrastructureRef={
            "apiGroup": m.INFRA_GROUP, "kind": "DockerMachineTemplate", "name": "old-infra-ref"})
        assert "expired" not in mdplan.find_new_and_old(self.md_after, [old], at(4))[2]

    def test_before_rollout_after_keeps_the_matching_ms(self):
        two, three = make_ms(self.md, "two", 0, created=at(1)), make_ms(self.md, "three", 0, created=at(0))
        new, old, reason = mdplan.find_new_and_old(self.md_after, [two, three], at(2))
        assert (new, old, reason) == (three, [two], "")

    def test_after_rollout_after_without_newer_ms_creates_one(self):
        two, three = make_ms(self.md, "two", 0, created=at(1)), make_ms(self.md, "three", 0, created=at(0))
        new, old, reason = mdplan.find_new_and_old(self.md_after, [two, three, self.old], at(4))
        assert new is None and sorted(map(m.name, old)) == ["old", "three", "two"]
        assert reason == "spec.rollout.after on MachineDeployment set to 2026-01-01T12:03:00Z, no MachineSet has been created afterwards"

    def test_v1beta1_reason_wording(self):
        md = make_md("v1.10")
        md["spec"]["rolloutAfter"] = m.format_time(at(3))
        reason = mdplan.find_new_and_old(md, [make_ms(md, "two", 0, created=at(1))], at(4))[2]
        assert reason == "RolloutAfter on MachineDeployment set to 2026-01-01T12:03:00Z, no MachineSet has been created afterwards"

    @pytest.mark.parametrize("created", [4, 3], ids=["after", "exactly-at"])
    def test_ms_created_at_or_after_rollout_after_is_new(self, created):
        early, late = make_ms(self.md, "early", 0, created=at(1)), make_ms(self.md, "late", 0, created=at(created))
        for order in ([late, early], [early, late]):
            new, old = mdplan.find_new_and_old(self.md_after, order, at(5))[:2]
            assert (new, old) == (late, [early])


# --- golden traces ------------------------------------------------------------------------------------------------

class World:
    """An MD with its MSs; the MS "controller" makes every Machine exist and be available at once."""

    def __init__(self, capi_version, replicas, surge, unavailable, strategy="RollingUpdate"):
        self.capi_version = capi_version
        self.md = make_md(capi_version, replicas, surge, unavailable, strategy)
        self.mss = {}
        self.now = T0
        self.rng = random.Random(7)
        self.new_name = None  # the MS created last: "new"; all others are "old"
        self.recording = False
        self.writes = []  # (old spec.replicas, new spec.replicas) after every MS write that changes replicas

    def old_new(self):
        old = sum(m.replicas(ms) for n, ms in self.mss.items() if n != self.new_name)
        new = m.replicas(self.mss[self.new_name]) if self.new_name in self.mss else 0
        return old, new

    def md_reconcile(self):
        self.now += datetime.timedelta(seconds=1)
        plan = mdplan.plan_reconcile(self.md, list(self.mss.values()), self.capi_version, self.now, self.rng)
        for desired in plan.writes():
            current = self.mss.get(m.name(desired))
            if current is None:
                desired["metadata"]["uid"] = f"{m.name(desired)}-uid"
                desired["metadata"]["creationTimestamp"] = m.format_time(self.now)
                self.mss[m.name(desired)] = desired
                self.new_name = m.name(desired)
                if self.recording:
                    self.writes.append(self.old_new())
            elif m.replicas(current) != m.replicas(desired):
                self.mss[m.name(desired)] = desired
                if self.recording:
                    self.writes.append(self.old_new())
            else:
                self.mss[m.name(desired)] = desired
        self.md["metadata"]["annotations"][m.REVISION] = plan.revision
        return plan

    def ms_reconcile(self):
        for ms in self.mss.values():
            reps = m.replicas(ms)
            ms["status"] = {"replicas": reps, "availableReplicas": reps, "readyReplicas": reps, "observedGeneration": 1}

    def settle(self):
        for dummy in range(20):
            before = copy.deepcopy(self.mss)
            self.md_reconcile()
            self.ms_reconcile()
            if before == self.mss:
                return
        raise AssertionError("did not settle")

    def change_template(self):
        self.md["spec"]["template"]["spec"]["version"] = "v1.31.0"
        self.md["metadata"]["generation"] += 1
        self.recording = True

    def iterate(self):
        """One golden-trace iteration: MD reconcile, then every MS reconciles; returns the replica pairs written."""
        start = len(self.writes)
        self.md_reconcile()
        self.ms_reconcile()
        return self.writes[start:]


GOLDEN = {
    # reference §3.7; each iteration lists the (old, new) spec.replicas after each MS write, new MS first.
    "3 replicas, maxSurge 1, maxUnavailable 0": (3, 1, 0, [
        [(3, 1)], [(2, 1)], [(2, 2)], [(1, 2)], [(1, 3)], [(0, 3)], []]),
    "3 replicas, maxSurge 0, maxUnavailable 1": (3, 0, 1, [
        [(3, 0), (2, 0)], [(2, 1)], [(1, 1)], [(1, 2)], [(0, 2)], [(0, 3)], []]),
    "6 replicas, maxSurge 3, maxUnavailable 1": (6, 3, 1, [
        [(6, 3), (5, 3)], [(5, 4), (2, 4)], [(2, 6), (1, 6)], [(0, 6)], []]),
}


@pytest.mark.parametrize("capi_version", VERSIONS)
@pytest.mark.parametrize("scenario", sorted(GOLDEN))
def test_golden_trace(scenario, capi_version):
    replicas, surge, unavailable, expected = GOLDEN[scenario]
    world = World(capi_version, replicas, surge, unavailable)
    world.settle()
    assert world.old_new() == (0, replicas) and len(world.mss) == 1
    world.change_template()
    traces = [world.iterate() for dummy in expected]
    assert traces == expected


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_golden_end_state_and_cleanup(capi_version):
    world = World(capi_version, 3, 1, 0)
    world.settle()
    world.change_template()
    world.settle()
    old = [ms for name, ms in world.mss.items() if name != world.new_name]
    new = world.mss[world.new_name]
    assert m.replicas(new) == 3 and [m.replicas(ms) for ms in old] == [0]
    assert m.annotations(new)[m.REVISION] == "2" and world.md["metadata"]["annotations"][m.REVISION] == "2"
    # complete: v1.10 keeps revisionHistoryLimit (1) old MS, v1.14 deletes every old MS at 0 replicas
    doomed = mdplan.machine_sets_to_clean_up(world.md, old)
    assert len(doomed) == (1 if capi_version == "v1.14" else 0)


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_template_a_b_a_reuses_a_with_revision_3(capi_version):
    world = World(capi_version, 2, 1, 0)
    world.settle()
    first = world.new_name
    world.change_template()
    world.settle()
    world.md["spec"]["template"]["spec"]["version"] = "v1.30.0"
    world.settle()
    assert len(world.mss) == 2
    assert m.annotations(world.mss[first])[m.REVISION] == "3"
    assert m.annotations(world.mss[first])[m.REVISION_HISTORY] == "1"
    assert m.replicas(world.mss[first]) == 2


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_rollout_after_creates_exactly_one_new_ms(capi_version):
    world = World(capi_version, 2, 1, 0)
    world.settle()
    key = ("rollout", "after") if capi_version == "v1.14" else ("rolloutAfter",)
    target = world.md["spec"].setdefault("rollout", {}) if capi_version == "v1.14" else world.md["spec"]
    target[key[-1]] = m.format_time(world.now + datetime.timedelta(seconds=1))
    world.settle()
    assert len(world.mss) == 2
    world.settle()
    assert len(world.mss) == 2
    assert sorted(m.replicas(ms) for ms in world.mss.values()) == [0, 2]


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_paused_md_scales_but_does_not_roll_out(capi_version):
    world = World(capi_version, 3, 1, 0)
    world.settle()
    world.md["spec"]["paused"] = True
    world.change_template()
    world.md["spec"]["replicas"] = 5
    world.settle()
    assert len(world.mss) == 1 and m.replicas(next(iter(world.mss.values()))) == 5
    world.md["spec"]["paused"] = False
    world.settle()
    assert len(world.mss) == 2 and sorted(m.replicas(ms) for ms in world.mss.values()) == [0, 5]


def test_paused_proportional_scaling_mid_rollout():
    md = make_md("v1.14", replicas=10, surge=3, unavailable=1)
    md["spec"]["paused"] = True
    old = make_ms(md, "old", 6, created=at(0), annotations={m.MAX_REPLICAS: "13"}, version="v1.29.0")
    new = make_ms(md, "new", 7, created=at(1), annotations={m.MAX_REPLICAS: "13", m.DESIRED_REPLICAS: "10"})
    md["spec"]["replicas"] = 20  # allowed 23, to add 10: proportional to 6:7, larger first
    intents = mdplan.plan_scale(md, new, [old])
    assert intents == {"new": 12, "old": 11}
    assert sum(intents.values()) == 23


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_on_delete_only_replaces_deleted_machines(capi_version):
    md = make_md(capi_version, 3, strategy="OnDelete")
    old = make_ms(md, "old", 3, created=at(0), version="v1.29.0")
    plan = mdplan.plan_reconcile(md, [old], capi_version, at(1), random.Random(1), live_machines={"old": [1, 2, 3]})
    assert plan.created and m.replicas(plan.new) == 0
    assert m.annotations(plan.olds[0])[m.DISABLE_MACHINE_CREATE] == "true"
    assert m.replicas(plan.olds[0]) == 3
    new = plan.new
    new["metadata"].update({"uid": "new-uid", "creationTimestamp": m.format_time(at(1))})
    old = plan.olds[0]
    old["status"] = {"replicas": 2, "availableReplicas": 2}  # the user deleted one Machine
    plan = mdplan.plan_reconcile(md, [old, new], capi_version, at(2), random.Random(1), live_machines={"old": [1, 2]})
    assert m.replicas(plan.olds[0]) == 2 and m.replicas(plan.new) == 0
    old = plan.olds[0]
    plan = mdplan.plan_reconcile(md, [old, plan.new], capi_version, at(3), random.Random(1), live_machines={"old": [1, 2]})
    assert m.replicas(plan.new) == 1


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_in_place_propagation(capi_version):
    md = make_md(capi_version, 2)
    old = make_ms(md, "old", 1, created=at(0), version="v1.29.0")
    new = make_ms(md, "new", 1, created=at(1))
    md["spec"]["template"]["metadata"]["labels"]["tier"] = "gold"
    md["spec"]["template"]["metadata"]["annotations"] = {"note": "x"}
    plan = mdplan.plan_reconcile(md, [old, new], capi_version, at(2), random.Random(1))
    assert m.labels(plan.new)["tier"] == "gold"
    assert plan.new["spec"]["template"]["metadata"]["annotations"] == {"note": "x"}
    propagated_to_old = m.labels(plan.olds[0]).get("tier") == "gold"
    assert propagated_to_old is (capi_version == "v1.14")


def test_v110_cleanup_keeps_revision_history_limit():
    md = make_md("v1.10")
    md["spec"]["revisionHistoryLimit"] = 1
    olds = [make_ms(md, f"o{i}", 0, created=at(i)) for i in range(3)]
    for ms in olds:
        ms["status"] = {"replicas": 0, "observedGeneration": 0}
    assert [m.name(x) for x in mdplan.machine_sets_to_clean_up(md, olds)] == ["o0", "o1"]
    md14 = make_md("v1.14")
    assert len(mdplan.machine_sets_to_clean_up(md14, olds)) == 3


def test_v111_is_the_v110_controller_on_v1beta2():
    """v1.11.11 internal/controllers/machinedeployment/machinedeployment_sync.go: the v1.10 rolling update and
    revision annotations (getNewMachineSet / SetDeploymentRevision), but cleanupDeployment deletes every
    0-replica old MachineSet (v1beta2 has no revisionHistoryLimit); machineset_controller.go: any
    disable-machine-create value blocks creation, as on v1.10."""
    profile = RELEASES["v1.11"]
    assert (profile.api_version, profile.logic, profile.crds) == ("v1beta2", "v1.10", "capi-v1.11.11")
    md = make_md("v1.14")  # a v1beta2 object
    current = make_ms(md, "a", 3, annotations={m.REVISION: "1"})
    md["spec"]["template"]["spec"]["infrastructureRef"]["name"] = "infra-b"
    plan = mdplan.plan_reconcile(md, [current], profile.logic, at(5), random.Random(1))
    assert plan.created and plan.revision == "2" and m.annotations(plan.new)[m.REVISION] == "2"
    assert m.DISABLE_MACHINE_CREATE not in m.annotations(plan.new)
    # the v1.10 rolling update: grow the new MachineSet by maxSurge, keep the old one (maxUnavailable 0)
    assert m.replicas(plan.new) == 1 and m.replicas(plan.olds[0]) == 3
    olds = [make_ms(md, f"o{i}", 0, created=at(i)) for i in range(3)]
    for ms in olds:
        ms["status"] = {"replicas": 0, "observedGeneration": 0}
    assert [m.name(x) for x in mdplan.machine_sets_to_clean_up(md, olds)] == ["o0", "o1", "o2"]

# --- KCP ----------------------------------------------------------------------------------------------------------


def make_kcp(capi_version, replicas=3, surge=1, version="v1.30.0", infra="cp-a"):
    infra_ref = ref(capi_version, m.INFRA_GROUP, "DockerMachineTemplate", infra)
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge}}
    spec = {"replicas": replicas, "version": version}
    if capi_version == "v1.14":
        spec.update({"machineTemplate": {"spec": {"infrastructureRef": infra_ref}}, "rollout": {"strategy": strategy}})
    else:
        spec.update({"machineTemplate": {"infrastructureRef": infra_ref}, "rolloutStrategy": strategy})
    api = "v1beta2" if capi_version == "v1.14" else "v1beta1"
    return {"apiVersion": f"controlplane.cluster.x-k8s.io/{api}", "kind": "KubeadmControlPlane",
            "metadata": {"name": "cp", "namespace": "ns", "uid": "cp-uid", "generation": 1,
                         "labels": {m.CLUSTER_NAME: "c1"}}, "spec": spec}


def kcp_world(kcp, machines, start, steps=20):
    """Run the KCP plan from ``machines`` until steady; created Machines get a Node at once.

    Returns (machines, most Machines at any time, fewest Machines at any time)."""
    rng = random.Random(3)
    machines = list(machines)
    most = fewest = len(machines)
    for step in range(steps):
        now = start + datetime.timedelta(seconds=step)
        action, victim = kcpplan.plan(kcp, machines, now)[:2]
        if action == "create":
            machine = kcpplan.new_machine(kcp, "c1", rng)
            machine["metadata"].update({"uid": f"u{now.timestamp()}", "creationTimestamp": m.format_time(now)})
            machine["status"] = {"nodeRef": {"name": m.name(machine)}}
            machines.append(machine)
        elif action == "delete":
            machines.remove(victim)
        elif action is None:
            break
        most, fewest = max(most, len(machines)), min(fewest, len(machines))
    return machines, most, fewest


def set_kcp_infra(kcp, name):
    holder = kcp["spec"]["machineTemplate"]
    (holder["spec"] if "spec" in holder else holder)["infrastructureRef"]["name"] = name


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_kcp_scale_up_first_one_at_a_time(capi_version):
    kcp = make_kcp(capi_version)
    machines = kcp_world(kcp, [], at(10))[0]
    assert len(machines) == 3
    kcp["spec"]["version"] = "v1.31.0"
    machines, most, fewest = kcp_world(kcp, machines, at(20))
    assert most == 4 and fewest == 3
    assert {x["spec"]["version"] for x in machines} == {"v1.31.0"} and len(machines) == 3


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_kcp_max_surge_0_deletes_first(capi_version):
    kcp = make_kcp(capi_version, surge=0)
    machines = kcp_world(kcp, [], at(10))[0]
    set_kcp_infra(kcp, "cp-b")
    machines, most, fewest = kcp_world(kcp, machines, at(20))
    assert most == 3 and fewest == 2
    assert {m.annotations(x)[m.CLONED_FROM_NAME] for x in machines} == {"cp-b"}


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_kcp_rollout_after_is_per_machine_and_strict(capi_version):
    kcp = make_kcp(capi_version)
    machine = kcpplan.new_machine(kcp, "c1", random.Random(1))
    machine["metadata"]["creationTimestamp"] = m.format_time(at(0))
    key = ("rollout", "after") if capi_version == "v1.14" else ("rolloutAfter",)
    target = kcp["spec"].setdefault("rollout", {}) if capi_version == "v1.14" else kcp["spec"]
    target[key[-1]] = m.format_time(at(1))
    assert kcpplan.outdated_reasons(kcp, machine, at(2)) == ["KubeadmControlPlane spec.rolloutAfter expired"]
    assert kcpplan.outdated_reasons(kcp, machine, at(1)) == []  # after < now is strict
    machine["metadata"]["creationTimestamp"] = m.format_time(at(1))
    assert kcpplan.outdated_reasons(kcp, machine, at(2)) == []  # creation < after is strict too


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_kcp_up_to_date_rules(capi_version):
    """v1.10.10 / v1.14.0 controlplane/kubeadm/internal/filters.go UpToDate: a Machine without cloned-from
    annotations (older or adopted) matches any template; a changed kubeadmConfigSpec outdates every Machine
    (matchesKubeadmBootstrapConfig); certificates that expire within rolloutBefore.certificatesExpiryDays
    outdate it (util/collections/machine_filters.go ShouldRolloutBefore)."""
    kcp = make_kcp(capi_version)
    kcp["spec"]["kubeadmConfigSpec"] = {"files": [{"path": "/etc/a", "content": "a"}]}
    machine = kcpplan.new_machine(kcp, "c1", random.Random(1))
    machine["metadata"]["creationTimestamp"] = m.format_time(at(0))
    assert kcpplan.outdated_reasons(kcp, machine, at(2)) == []
    set_kcp_infra(kcp, "cp-b")
    assert kcpplan.outdated_reasons(kcp, machine, at(2)) == ["DockerMachine is not up-to-date"]
    adopted = copy.deepcopy(machine)
    for key in (m.CLONED_FROM_NAME, m.CLONED_FROM_GROUPKIND):
        del adopted["metadata"]["annotations"][key]
    assert kcpplan.outdated_reasons(kcp, adopted, at(2)) == []
    set_kcp_infra(kcp, "cp-a")
    kcp["spec"]["kubeadmConfigSpec"]["files"][0]["content"] = "b"
    assert kcpplan.outdated_reasons(kcp, machine, at(2)) == ["KubeadmConfig is not up-to-date"]
    kcp["spec"]["kubeadmConfigSpec"]["files"][0]["content"] = "a"
    machine["status"] = {"certificatesExpiryDate": m.format_time(at(0) + datetime.timedelta(days=20))}
    before = kcp["spec"].setdefault("rollout", {}).setdefault("before", {}) if capi_version == "v1.14" \
        else kcp["spec"].setdefault("rolloutBefore", {})
    before["certificatesExpiryDays"] = 21
    assert kcpplan.outdated_reasons(kcp, machine, at(2)) == ["Certificates will expire soon"]
    before["certificatesExpiryDays"] = 7
    assert kcpplan.outdated_reasons(kcp, machine, at(2)) == []


def test_kcp_preflight_waits_for_nodes():
    kcp = make_kcp("v1.14")
    machine = kcpplan.new_machine(kcp, "c1", random.Random(1))
    machine["metadata"]["creationTimestamp"] = m.format_time(at(0))
    action, dummy, note = kcpplan.plan(kcp, [machine], at(1))
    assert action == "wait" and "without a Node" in note


# --- Machines and status shapes -----------------------------------------------------------------------------------

def test_lifecycle_phases():
    start = at(0)
    assert machineplan.lifecycle(at(0), start, 3, False)[0] == "Pending"
    assert machineplan.lifecycle(at(0, 1), start, 3, False)[0] == "Provisioning"
    assert machineplan.lifecycle(at(0, 2), start, 3, False)[0] == "Provisioned"
    assert machineplan.lifecycle(at(0, 3), start, 3, False)[:4] == ("Running", True, True, True)
    assert machineplan.lifecycle(at(9), start, 3, True)[:4] == ("Provisioning", True, False, False)
    assert machineplan.lifecycle(at(0), start, 0, False)[0] == "Running"


def test_deletion_order_prefers_marked_and_unready():
    def machine(name, created, ready=True, marked=False):
        obj = {"metadata": {"name": name, "creationTimestamp": m.format_time(at(created)),
                            "annotations": {m.DELETE_MACHINE: ""} if marked else {}}, "status": {}}
        if ready:
            obj["status"]["nodeRef"] = {"name": name}
        return obj
    machines = [machine("a", 0), machine("b", 1), machine("c", 2, ready=False), machine("d", 3, marked=True)]
    assert [m.name(x) for x in machineplan.machines_to_delete(machines, 3, "Oldest")] == ["d", "c", "a"]
    assert [m.name(x) for x in machineplan.machines_to_delete(machines, 3, "Newest")] == ["d", "c", "b"]


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_md_status_shape_rolling_out(capi_version):
    md = make_md(capi_version, 3)
    md["spec"]["template"]["spec"]["version"] = "v1.31.0"
    old = make_ms(md, "old", 3, version="v1.30.0")
    machines = []
    for i in range(3):
        cond = status.worker_up_to_date(old, md, at(1), capi_version)
        machine = {"apiVersion": md["apiVersion"], "kind": "Machine", "metadata": {"name": f"m{i}", "generation": 1}}
        key = ("status", "conditions") if capi_version == "v1.14" else ("status", "v1beta2", "conditions")
        machine.setdefault("status", {})
        holder = machine["status"] if capi_version == "v1.14" else machine["status"].setdefault("v1beta2", {})
        holder["conditions"] = [dict(cond, lastTransitionTime=m.format_time(at(0)))]
        assert key
        machines.append(machine)
    out = status.md_status(md, [old], None, machines, {"type": "Paused", "status": "False", "reason": "NotPaused", "message": ""}, at(2))
    conds = out["conditions"] if capi_version == "v1.14" else out["v1beta2"]["conditions"]
    rolling = next(x for x in conds if x["type"] == "RollingOut")
    assert rolling["status"] == "True"
    assert rolling["message"] == "Rolling out 3 not up-to-date replicas\n* Version v1.30.0, v1.31.0 required"
    assert out["observedGeneration"] == 1
    if capi_version == "v1.14":
        deprecated = set(out["deprecated"]["v1beta1"])
        assert deprecated >= {"conditions", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"}
        assert out["phase"] == "Running"
    else:
        assert set(out["v1beta2"]) >= {"conditions", "readyReplicas", "availableReplicas", "upToDateReplicas"}
        assert {"updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"} <= set(out)
        assert all("severity" not in x or x["status"] == "False" for x in out["conditions"])


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_ms_status_names_a_missing_infrastructure_template(capi_version):
    """v1.10.10 and v1.14.0 machineset_controller(_status).go: a Machine that is due cannot be made from a template that
    is gone (MachinesCreated False, InfrastructureTemplateCloningFailed; ScalingUp is blocked and says why)."""
    ms = make_ms(make_md(capi_version), "new", replicas=1)
    infra_ref = ms["spec"]["template"]["spec"]["infrastructureRef"]
    not_paused = {"type": "Paused", "status": "False", "reason": "NotPaused", "message": ""}
    out = status.ms_status(ms, [], not_paused, at(1), missing_template=infra_ref)
    v1beta2 = capi_version == "v1.14"
    modern = out["conditions"] if v1beta2 else out["v1beta2"]["conditions"]
    legacy = out["deprecated"]["v1beta1"]["conditions"] if v1beta2 else out["conditions"]
    scaling_up = next(x for x in modern if x["type"] == "ScalingUp")
    assert (scaling_up["status"], scaling_up["message"]) == (
        "True", "Scaling up from 0 to 1 replicas is blocked because:\n* DockerMachineTemplate does not exist")
    created = next(x for x in legacy if x["type"] == "MachinesCreated")
    assert (created["status"], created["reason"], created["severity"]) == ("False", "InfrastructureTemplateCloningFailed", "Error")
    assert created["message"] == ('failed to retrieve DockerMachineTemplate ns/infra-a: '
                                  'dockermachinetemplates.infrastructure.cluster.x-k8s.io "infra-a" not found')
    # its Machines made already: nothing is due, scaling up would be blocked
    full = status.ms_status(ms, [{"metadata": {"name": "m0"}, "status": {}}], not_paused, at(1), missing_template=infra_ref)
    modern = full["conditions"] if v1beta2 else full["v1beta2"]["conditions"]
    legacy = full["deprecated"]["v1beta1"]["conditions"] if v1beta2 else full["conditions"]
    assert next(x for x in modern if x["type"] == "ScalingUp")["message"] == \
        "Scaling up would be blocked because DockerMachineTemplate does not exist"
    assert next(x for x in legacy if x["type"] == "MachinesCreated")["status"] == "True"
    # positive control: with the template there, nothing is said of it
    fine = status.ms_status(ms, [], not_paused, at(1))
    modern = fine["conditions"] if v1beta2 else fine["v1beta2"]["conditions"]
    assert next(x for x in modern if x["type"] == "ScalingUp")["message"] == "Scaling up from 0 to 1 replicas"


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_machine_available_after_min_ready_seconds(capi_version):
    api = "v1beta2" if capi_version == "v1.14" else "v1beta1"
    machine = {"apiVersion": f"cluster.x-k8s.io/{api}", "kind": "Machine",
               "metadata": {"name": "m1", "uid": "m1-uid", "generation": 1, "creationTimestamp": m.format_time(at(0))},
               "spec": {"version": "v1.30.0", "infrastructureRef": {"kind": "DockerMachine", "name": "m1"}}}
    running = machineplan.lifecycle(at(0, 1), at(0), 1, False)
    not_paused = {"type": "Paused", "status": "False", "reason": "NotPaused", "message": ""}
    first, wakeup = status.machine_status(machine, running, None, 5, not_paused, at(0, 1))
    machine["status"] = first
    assert m.condition(machine, "Ready")["status"] == "True"
    assert (m.condition(machine, "Available")["status"], m.condition(machine, "Available")["reason"]) == ("False", "WaitingForMinReadySeconds")
    assert wakeup == at(0, 6)
    assert first["phase"] == "Running" and first["nodeRef"]["name"] == "m1"
    assert first["nodeInfo"]["kubeletVersion"] == "v1.30.0"
    later, wakeup = status.machine_status(machine, running, None, 5, not_paused, at(0, 6))
    machine["status"] = later
    assert m.condition(machine, "Available")["status"] == "True" and wakeup is None
    assert later["lastUpdated"] == first["lastUpdated"]  # no phase change


@pytest.mark.parametrize("capi_version", VERSIONS)
def test_paused_reconcile_only_touches_the_paused_condition(capi_version):
    md = make_md(capi_version)
    md["metadata"]["annotations"][m.PAUSED] = ""
    md["metadata"]["generation"] = 4
    old = {"type": "RollingOut", "status": "True", "reason": "RollingOut", "message": "x", "observedGeneration": 3,
           "lastTransitionTime": m.format_time(at(0))}
    if capi_version == "v1.14":
        md["status"] = {"conditions": [old], "replicas": 3}
    else:
        md["status"] = {"v1beta2": {"conditions": [old]}, "replicas": 3}
    out = status.with_paused(md, conditions.paused(md, {"spec": {"paused": True}}), at(1))
    conds = out["conditions"] if capi_version == "v1.14" else out["v1beta2"]["conditions"]
    assert conds[0] == dict(old, type="Paused", status="True", reason="Paused", observedGeneration=4,
                            lastTransitionTime=m.format_time(at(1)),
                            message="Cluster spec.paused is set to true, MachineDeployment has the cluster.x-k8s.io/paused annotation")
    assert conds[1] == old and out["replicas"] == 3


# Upstream #13182 per release: present in v1.10.x-v1.12.3, fixed by PR #13404 in v1.12.4 and v1.13.0.
BUG_13182_EXPECTED = {"v1.10": True, "v1.11": True, "v1.12.3": True, "v1.12": False, "v1.13": False, "v1.14": False}


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_bug_13182_machine_up_to_date_per_release(release):
    """Upstream #13182 (v1.10.10 machineset_controller.go, v1.12.3 machine_controller_status.go): a MachineSet
    created in the rolloutAfter second keeps its Machines UpToDate=False on the buggy releases only; one
    created a second later is up to date everywhere, one created before is outdated everywhere."""
    profile = RELEASES[release]
    capi_version = profile.logic
    md = make_md(capi_version, 3)
    after = at(1)
    if capi_version == "v1.14":
        md["spec"]["rollout"] = {"after": m.format_time(after)}
    else:
        md["spec"]["rolloutAfter"] = m.format_time(after)
    same_second = make_ms(md, "same", 3, created=after)
    later = make_ms(md, "later", 3, created=at(1, 1))
    before = make_ms(md, "before", 3, created=at(0, 59))
    now = at(5)
    buggy = profile.bug_13182
    assert buggy is BUG_13182_EXPECTED[release]
    cond = status.worker_up_to_date(same_second, md, now, buggy)
    assert cond["status"] == ("False" if buggy else "True")
    if buggy:
        assert "MachineDeployment spec.rolloutAfter expired" in cond["message"]
    assert status.worker_up_to_date(later, md, now, buggy)["status"] == "True"
    assert status.worker_up_to_date(before, md, now, buggy)["status"] == "False"
    # FindNewMachineSet (>=) takes the same-second MachineSet as the new one on every release (#12261)
    new, _old, _reason = mdplan.find_new_and_old(md, [same_second, before], now)
    assert m.name(new) == "same"


# --- in-place updates (v1.12.3 machinedeployment_rollout_rollingupdate.go reconcileInPlaceUpdateIntent) -----------

class TestInPlace:
    ACCEPTS = ["infrastructureRef", "version"]

    def _md_and_sets(self, **md_args):
        md = make_md("v1.14", replicas=2, **md_args)
        old = make_ms(md, "old", replicas=2, created=at(0))
        old["spec"]["template"]["spec"]["infrastructureRef"]["name"] = "infra-old"
        new = make_ms(md, "new", replicas=0, created=at(2))
        new["status"] = {"replicas": 0, "availableReplicas": 0}
        return md, old, new

    def test_candidates_are_old_sets_with_machines_and_an_accepted_change(self):
        md, old, new = self._md_and_sets()
        assert mdplan.in_place_candidates(md, new, [old], at(3), self.ACCEPTS) == ["old"]
        assert mdplan.in_place_candidates(md, new, [old], at(3), ["version"]) == []  # the extension says no
        empty = copy.deepcopy(old)
        empty["status"]["replicas"] = 0
        assert mdplan.in_place_candidates(md, new, [empty], at(3), self.ACCEPTS) == []
        new["spec"]["replicas"] = 2  # the new MS has every replica already
        assert mdplan.in_place_candidates(md, new, [old], at(3), self.ACCEPTS) == []

    def test_an_expired_trigger_makes_older_sets_ineligible_from_its_own_second(self):
        md, old, new = self._md_and_sets()
        md["spec"]["rollout"]["after"] = m.format_time(at(0))  # the old MS's own second: not After -> ineligible
        assert mdplan.in_place_candidates(md, new, [old], at(3), self.ACCEPTS) == []
        md["spec"]["rollout"]["after"] = m.format_time(at(5))  # not expired yet
        assert mdplan.in_place_candidates(md, new, [old], at(3), self.ACCEPTS) == ["old"]

    def test_a_restart_in_the_second_of_the_current_set_keeps_it_with_in_place_updates_on(self):
        """A trigger at the creation second of the MS with the current template keeps that MS as the new one, with
        InPlaceUpdates on too (FindNewAndOldMachineSets, v1.12.3 mdutil/util.go ``CreationTimestamp.Sub(after) >= 0``):
        no MS, no revision, nothing rolls. A restart within 2 s of an MS's creation is such a trigger
        (core.restart.trigger_for_now: one second before the server's second)."""
        md = make_md("v1.14", replicas=1)
        current = make_ms(md, "current", replicas=1, created=at(0, 10), annotations={m.REVISION: "1"})
        md["spec"]["rollout"]["after"] = m.format_time(at(0, 10))
        plan = mdplan.plan_reconcile(md, [current], "v1.14", at(0, 11), random.Random(1), {"current": [{}]},
                                     in_place_accepts=self.ACCEPTS)
        assert (m.name(plan.new), plan.created, plan.olds, plan.revision) == ("current", False, [], "1")
        md["spec"]["rollout"]["after"] = m.format_time(at(0, 11))  # positive control: a second later, it rolls
        plan = mdplan.plan_reconcile(md, [current], "v1.14", at(0, 12), random.Random(1), {"current": [{}]},
                                     in_place_accepts=self.ACCEPTS)
        assert (plan.created, [m.name(ms) for ms in plan.olds], plan.revision) == (True, ["current"], "2")

    def test_surge_gives_way_to_in_place_updates(self):
        md, old, new = self._md_and_sets()
        intents = {"new": 1}  # the rolling update would use maxSurge 1
        mdplan.plan_in_place(md, new, [old], intents, ["old"], [])
        # nothing else moves yet: one surge Machine is kept to create availability
        assert intents == {"new": 1}
        assert m.annotations(old)[m.MOVE_MACHINES_TO] == "new" and m.annotations(new)[m.RECEIVE_MACHINES_FROM] == "old"
        updating = {"metadata": {"name": "x", "annotations": {m.UPDATE_IN_PROGRESS: ""}}}
        intents = {"new": 1}
        mdplan.plan_in_place(md, new, [old], intents, ["old"], [updating])
        assert intents == {}  # an update in progress: no surge Machine

    def test_moved_machines_are_counted_into_the_new_set_once(self):
        md, old, new = self._md_and_sets()
        moved = {"metadata": {"name": "m1", "annotations": {m.PENDING_ACKNOWLEDGE_MOVE: ""}}}
        mdplan.acknowledge_moves(new, [moved])
        assert (new["spec"]["replicas"], m.annotations(new)[m.ACKNOWLEDGED_MOVE]) == (1, "m1")
        mdplan.acknowledge_moves(new, [moved])
        assert new["spec"]["replicas"] == 1
        mdplan.acknowledge_moves(new, [{"metadata": {"name": "m1", "annotations": {}}}])
        assert new["spec"]["replicas"] == 1 and m.ACKNOWLEDGED_MOVE not in m.annotations(new)


def test_the_machine_controller_keeps_the_conditions_the_machine_health_check_controller_set():
    """Upstream's patch helper writes only the conditions a controller owns (v1.14.0 util/patch, the Machine controller's
    owned conditions): OwnerRemediated set by the MachineHealthCheck controller survives a Machine status write, in both
    shapes; a condition the Machine controller computes itself is still replaced."""
    now = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)
    remediated = {"type": "OwnerRemediated", "status": "False", "reason": "WaitingForRemediation",
                  "lastTransitionTime": "2026-11-30T00:00:00Z"}
    stale_ready = {"type": "Ready", "status": "False", "reason": "Old", "lastTransitionTime": "2026-11-30T00:00:00Z"}
    computed = [conditions.cond("Ready", True, "Ready")]
    for merged in (conditions.merge_v1beta1([remediated, stale_ready], computed, now),
                   conditions.merge_v1beta2([dict(remediated, message=""), stale_ready], computed, 1, now)):
        assert [(c["type"], c["status"]) for c in merged] == [("Ready", "True"), ("OwnerRemediated", "False")], merged
    # positive control: a condition type no other controller owns is dropped when the Machine controller no longer sets it
    assert conditions.merge_v1beta1([dict(remediated, type="Gone")], computed, now) == \
        conditions.merge_v1beta1([], computed, now)
