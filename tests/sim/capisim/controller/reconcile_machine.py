"""Machine reconcile: provisioning on a timer (machineplan.lifecycle), UpToDate from the owner, status and phases,
and completing deletion (phase Deleting for the deletion delay, then the finalizer goes)."""

import copy
import datetime

from . import conditions
from . import drainplan
from . import kcpplan
from . import machineplan
from . import model as m
from . import status


def finalize(ctx, machine):
    """Drain the Machine's Node (drainplan), then show the Deleting phase for the deletion delay (infrastructure
    teardown: upstream counts such a Machine in its MachineSet's replicas until it is gone, v1.14.0
    core/reconcilers/machineset/machineset_controller_status.go), then drop our finalizer so the API server removes
    the Machine; until then come back when the drain's state changes or the delay ends. The Node stays (nodeRef,
    nodeInfo) until the Machine is gone: upstream deletes it last (reconcileDelete)."""
    template, cluster = _source_template(ctx, machine), ctx.cluster_of(machine)
    old = machine.get("status") or {}
    had_node = bool(old.get("nodeRef"))
    drain = drainplan.plan(machine, status.node_name(machine) if had_node else None,
                           machineplan.drain_blocked_by_pdb(template), machineplan.drain_seconds(template), ctx.now())
    life = ("Deleting", had_node, had_node, had_node, None)
    paused = conditions.paused(machine, cluster)
    new_status = status.machine_status(machine, life, m.condition(machine, "UpToDate"), 0, paused, ctx.now(),
                                       drain=drain)[0]
    for kept in ("nodeInfo", "certificatesExpiryDate"):
        if kept in old:
            new_status[kept] = old[kept]
    machine = ctx.write_status(machine, new_status)
    key = ("Machine", m.namespace(machine), m.name(machine))
    if drain.done_at is None:
        if drain.wake_at is not None:
            ctx.requeue_at(key, drain.wake_at)
        return
    delay = machineplan.deletion_seconds(template, cluster)
    gone_at = drain.done_at + datetime.timedelta(seconds=delay)
    if ctx.now() < gone_at - datetime.timedelta(seconds=machineplan.TOLERANCE):
        ctx.requeue_at(key, gone_at)
        return
    if m.MACHINE_FINALIZER in (m.meta(machine).get("finalizers") or []):
        released = copy.deepcopy(machine)
        released["metadata"]["finalizers"] = [f for f in machine["metadata"]["finalizers"] if f != m.MACHINE_FINALIZER]
        ctx.writer.update(released)
    ctx.provisioning.pop(m.uid(machine), None)


def _owner(ctx, machine):
    """(kind, owner, rollout_owner): the MachineSet and its MD, or the KCP, or (None, None, None)."""
    ms = ctx.store.controller_of(machine, "MachineSet")
    if ms is not None:
        return "MachineSet", ms, ctx.store.controller_of(ms, "MachineDeployment")
    kcp = ctx.store.controller_of(machine, "KubeadmControlPlane")
    if kcp is not None:
        return "KubeadmControlPlane", kcp, kcp
    return None, None, None


def _source_template(ctx, machine):
    """The infrastructure template the Machine was cloned from (its provisioning knobs live there)."""
    ann = m.annotations(machine)
    kind = (ann.get(m.CLONED_FROM_GROUPKIND) or "").split(".", 1)[0]
    if kind != "DockerMachineTemplate":
        return None
    return ctx.store.get(kind, m.namespace(machine), ann.get(m.CLONED_FROM_NAME))


def _in_place_update(ctx, machine, now):
    """(Updating condition, machine, when it ends or None) for InPlaceUpdates: a Machine annotated
    update-in-progress is updated by the extension (UpdateMachine hook) for ``ctx.in_place_seconds``, then the Machine
    controller removes the annotation (v1.12.3 internal/controllers/machine/machine_controller_inplace_update.go)."""
    if m.UPDATE_IN_PROGRESS not in m.annotations(machine):
        return conditions.cond("Updating", False, "NotUpdating"), machine, None
    prev = m.condition(machine, "Updating")
    started = m.parse_time(prev["lastTransitionTime"]) if prev and prev.get("status") == "True" else now
    done_at = started + datetime.timedelta(seconds=ctx.in_place_seconds)
    if now < done_at - datetime.timedelta(seconds=machineplan.TOLERANCE):
        return conditions.cond("Updating", True, "InPlaceUpdating", "In-place update in progress"), machine, done_at
    done = copy.deepcopy(machine)
    del done["metadata"]["annotations"][m.UPDATE_IN_PROGRESS]
    ctx.log("Machine %s updated in place", m.key_text(machine))
    return conditions.cond("Updating", False, "NotUpdating"), ctx.writer.update(done), None


def reconcile(ctx, machine):
    cluster = ctx.cluster_of(machine)
    paused = conditions.paused(machine, cluster)
    if m.is_paused(machine, cluster):
        ctx.write_status(machine, status.with_paused(machine, paused, ctx.now()))
        return
    if m.deleting(machine):
        finalize(ctx, machine)
        return
    now = ctx.now()
    kind, owner, rollout_owner = _owner(ctx, machine)
    up_to_date, min_ready = None, 0
    if kind == "MachineSet":
        min_ready = m.min_ready_seconds(owner)
        if rollout_owner is not None:
            up_to_date = status.worker_up_to_date(owner, rollout_owner, now, ctx.release.bug_13182)
    elif kind == "KubeadmControlPlane":
        up_to_date = status.kcp_up_to_date(kcpplan.outdated_reasons(owner, machine, now))
    template = _source_template(ctx, machine)
    kubelet = machineplan.kubelet_version(template)
    started = ctx.provisioning.get(m.uid(machine)) or m.created(machine)
    life = machineplan.lifecycle(now, started, machineplan.provision_seconds(template, cluster),
                                 machineplan.fails_provisioning(template))
    if kind == "MachineSet" and ctx.release.kubelet_up_to_date and life[3]:
        # only once there is a Node (status.nodeInfo) to compare
        up_to_date = status.kubelet_up_to_date(up_to_date, machine, kubelet)
    updating, done_at = None, None
    if kind == "MachineSet" and ctx.in_place_accepts is not None:
        updating, machine, done_at = _in_place_update(ctx, machine, now)
        if updating["status"] == "True":
            # UpToDate reason Updating: the spec matches, the update is not finished (machine_types.go)
            up_to_date = conditions.cond("UpToDate", False, "Updating", "* In-place update in progress")
    if life[2] and not m.dig(machine, "spec", "providerID"):
        machine = ctx.writer.patch(machine, {"spec": {"providerID": status.provider_id(machine)}})
    expiry = None
    if kind == "KubeadmControlPlane":
        expiry = m.created(machine) + datetime.timedelta(days=machineplan.certificates_valid_days(template))
    new_status, wakeup = status.machine_status(machine, life, up_to_date, min_ready, paused, now, kubelet, expiry, updating)
    wakeup = min(x for x in (wakeup, done_at) if x is not None) if (wakeup or done_at) else None
    old_phase = m.dig(machine, "status", "phase")
    was_ready = m.condition_true(machine, "Ready")
    machine = ctx.write_status(machine, new_status)
    if new_status.get("phase") != old_phase:
        ctx.log("Machine %s is %s", m.key_text(machine), new_status.get("phase"))
    if m.condition_true(machine, "Ready") and not was_ready:
        ctx.log("Machine %s ready (node %s)", m.key_text(machine), status.node_name(machine))
    if wakeup is not None:
        ctx.requeue_at(("Machine", m.namespace(machine), m.name(machine)), wakeup)
