"""The simulated drain of a deleted Machine's Node (capisim/controller/drainplan.py) against upstream's Machine
controller: v1.14.0 core/reconcilers/machine/machine_controller.go (reconcileDelete, isNodeDrainAllowed,
nodeDrainTimeoutExceeded, drainNode) and core/reconcilers/machine/drain/drain.go (EvictionResult.ConditionMessage);
v1.10.10 internal/controllers/machine/ (same logic, v1beta1 spec.nodeDrainTimeout). Pure, crafted times."""

import datetime

import pytest

from capisim.controller import conditions, drainplan, machineplan, status
from capisim.controller import model as m
from capisim.fleetspec import FleetSpecError, load_fleet
from capisim.objects import workload_objects

T0 = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)


def at(seconds):
    return T0 + datetime.timedelta(seconds=seconds)


def machine(v1beta2=True, timeout=None, started=None, annotations=None):
    spec = {}
    if timeout is not None:
        spec = {"deletion": {"nodeDrainTimeoutSeconds": timeout}} if v1beta2 else {"nodeDrainTimeout": f"{timeout}s"}
    obj = {"apiVersion": f"cluster.x-k8s.io/{'v1beta2' if v1beta2 else 'v1beta1'}", "kind": "Machine",
           "metadata": {"name": "m1", "namespace": "ns", "deletionTimestamp": m.format_time(T0),
                        "annotations": annotations or {}},
           "spec": spec, "status": {}}
    if started is not None:
        obj["status"]["deletion"] = {"nodeDrainStartTime": m.format_time(started)}
    return obj


def legacy(drain, ctype):
    return next((c for c in drain.legacy if c["type"] == ctype), None)


@pytest.mark.parametrize("v1beta2", [True, False], ids=["v1beta2", "v1beta1"])
def test_pdb_blocks_forever_without_a_drain_timeout(v1beta2):
    drain = drainplan.plan(machine(v1beta2, started=T0), "node-1", True, 0, at(86400))
    assert (drain.reason, drain.done_at, drain.wake_at) == ("DrainingNode", None, None)
    assert drain.message == (
        "Drain not completed yet (started at 2026-01-01T12:00:00Z):\n"
        "* Pod default/web-node-1: cannot evict pod as it would violate the pod's disruption budget. "
        "The disruption budget web needs 1 healthy pods and has 1 currently")
    draining = legacy(drain, "DrainingSucceeded")
    assert (draining["status"], draining["reason"], draining["message"]) == ("False", "Draining", drain.message)


@pytest.mark.parametrize("v1beta2", [True, False], ids=["v1beta2", "v1beta1"])
def test_pdb_blocks_until_the_drain_timeout_then_the_drain_is_skipped(v1beta2):
    before = drainplan.plan(machine(v1beta2, timeout=30, started=T0), "node-1", True, 0, at(29))
    assert (before.reason, before.done_at, before.wake_at) == ("DrainingNode", None, at(30))
    after = drainplan.plan(machine(v1beta2, timeout=30, started=T0), "node-1", True, 0, at(30))
    # nodeDrainTimeoutExceeded: no Deleting drain reason, DrainingSucceeded left as the last attempt wrote it
    assert (after.reason, after.done_at, legacy(after, "DrainingSucceeded")) == (None, at(30), None)


def test_drain_start_is_recorded_on_the_first_reconcile():
    drain = drainplan.plan(machine(), "node-1", True, 0, at(5))
    assert drain.started == at(5) and "started at 2026-01-01T12:00:05Z" in drain.message


def test_a_slow_drain_takes_its_seconds_then_succeeds():
    during = drainplan.plan(machine(started=T0), "node-1", False, 10, at(4))
    assert (during.reason, during.wake_at) == ("DrainingNode", at(10))
    assert during.message.endswith("* Pod default/web-node-1: deletionTimestamp set, but still not removed from the Node")
    done = drainplan.plan(machine(started=T0), "node-1", False, 10, at(10))
    assert (done.reason, done.done_at, legacy(done, "DrainingSucceeded")["status"]) == (None, at(10), "True")


def test_a_drain_timeout_cuts_a_slow_drain_short():
    assert drainplan.plan(machine(timeout=3, started=T0), "node-1", False, 10, at(1)).wake_at == at(3)
    assert drainplan.plan(machine(timeout=3, started=T0), "node-1", False, 10, at(3)).done_at == at(3)


def test_pre_drain_hooks_come_first():
    hooks = {f"{drainplan.PRE_DRAIN_HOOK}/b": "", f"{drainplan.PRE_DRAIN_HOOK}/a": ""}
    drain = drainplan.plan(machine(annotations=hooks), "node-1", True, 0, at(1))
    assert drain.reason == "WaitingForPreDrainHook" and drain.started is None
    assert drain.message == (f"Waiting for pre-drain hooks to succeed (hooks: {drainplan.PRE_DRAIN_HOOK}/a,"
                             f"{drainplan.PRE_DRAIN_HOOK}/b)")
    assert legacy(drain, "PreDrainDeleteHookSucceeded")["reason"] == "WaitingExternalHook"


def test_a_machine_without_a_node_is_not_drained():
    drain = drainplan.plan(machine(), None, True, 10, at(1))
    assert (drain.reason, drain.done_at, drain.legacy) == (None, T0, [])


@pytest.mark.parametrize("value,seconds", [("1m30s", 90.0), ("2h", 7200.0), ("500ms", 0.5), ("0s", 0.0), (None, 0.0)])
def test_v1beta1_durations(value, seconds):
    obj = machine(False)
    obj["spec"]["nodeDrainTimeout"] = value
    assert drainplan.drain_timeout(obj) == seconds


@pytest.mark.parametrize("v1beta2", [True, False], ids=["v1beta2", "v1beta1"])
def test_machine_status_shows_the_drain_where_each_version_keeps_it(v1beta2):
    obj = machine(v1beta2, started=T0)
    drain = drainplan.plan(obj, "node-1", True, 0, at(1))
    new = status.machine_status(obj, ("Deleting", True, True, True, None), None, 0,
                                conditions.cond("Paused", False, "NotPaused"), at(1), drain=drain)[0]
    modern = new["conditions"] if v1beta2 else new["v1beta2"]["conditions"]
    old = new["deprecated"]["v1beta1"]["conditions"] if v1beta2 else new["conditions"]
    deleting = next(c for c in modern if c["type"] == "Deleting")
    assert (deleting["status"], deleting["reason"], deleting["message"]) == ("True", "DrainingNode", drain.message)
    assert next(c for c in old if c["type"] == "DrainingSucceeded")["severity"] == "Info"
    assert new["deletion"] == {"nodeDrainStartTime": "2026-01-01T12:00:00Z"}
    assert new["nodeRef"]["name"] == status.node_name(obj)


@pytest.mark.parametrize("v1beta2,field,value", [(True, "deletion", {"nodeDrainTimeoutSeconds": 60}),
                                                 (False, "nodeDrainTimeout", "1m0s")], ids=["v1beta2", "v1beta1"])
def test_machine_sets_pass_their_timeouts_on_in_place(v1beta2, field, value):
    ms = {"apiVersion": f"cluster.x-k8s.io/{'v1beta2' if v1beta2 else 'v1beta1'}", "kind": "MachineSet",
          "spec": {"template": {"spec": {field: value}}}}
    assert machineplan.deletion_timeouts(ms)[field] == value


def _md_template(drain):
    fleet = load_fleet({"management_clusters": [{"name": "x", "capi_version": "v1.14", "workload_clusters": [
        {"name": "w", "kubernetes_version": "v1.30.4",
         "machine_deployments": [{"name": "md", **({"drain": drain} if drain is not None else {})}]}]}]})
    wc = fleet["management_clusters"][0]["workload_clusters"][0]
    return next(o for o in workload_objects(wc, "v1beta2") if o["kind"] == "DockerMachineTemplate")


def test_fleet_spec_drain_reaches_the_template():
    template = _md_template({"blocked_by_pdb": True, "seconds": 7})
    assert machineplan.drain_blocked_by_pdb(template) and machineplan.drain_seconds(template) == 7
    plain = _md_template(None)
    assert not machineplan.drain_blocked_by_pdb(plain) and machineplan.drain_seconds(plain) == 0


@pytest.mark.parametrize("drain,expected", [({"blocked_by_pdb": "yes"}, "drain.blocked_by_pdb: must be true or false"),
                                            ({"seconds": -1}, "drain.seconds: must be an integer >= 0"),
                                            ({"pdb": 1}, "drain.pdb: unknown key")])
def test_fleet_spec_drain_mistakes(drain, expected):
    with pytest.raises(FleetSpecError, match=expected.replace(".", r"\.")):
        _md_template(drain)
