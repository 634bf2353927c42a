"""MachineSet reconcile: create or delete Machines until they match spec.replicas, then count them into status.

Machines created in one reconcile share one provisioning start, so they become ready together. Machines removed
in one reconcile are deleted here; with no deletion delay they are finalized right here too, so the status written
next already has them gone, which makes the MD see the same intermediate states as in CAPI's golden traces (every
MS fully reconciled at once). With a delay they stay, Deleting, and count as upstream counts them: in
``len(machines)`` for scaling (no replacement is created before they are gone) and in ``status.replicas``
(v1.14.0 core/reconcilers/machineset/machineset_controller.go syncReplicas, machineset_controller_status.go).
"""

import copy

from . import conditions
from . import machineplan
from . import model as m
from . import reconcile_machine
from . import status


def _creation_allowed(ctx, ms):
    value = m.annotations(ms).get(m.DISABLE_MACHINE_CREATE)
    # v1.10: any value blocks creation; v1.12+: only "true" (the MD writes "false" on the new MS).
    return value is None if ctx.logic == "v1.10" else value != "true"


def _deletion_order(ms):
    if m.is_v1beta2(ms):
        return m.dig(ms, "spec", "deletion", "order")
    return m.dig(ms, "spec", "deletePolicy")


def _move_target(ctx, ms):
    """The MS this old MS moves Machines to instead of deleting them: both sides must agree ("oldMS must have: move
    to newMS" and "newMS must have: receive replicas from oldMS", v1.12.3 api/core/v1beta2/machineset_types.go)."""
    target_name = m.annotations(ms).get(m.MOVE_MACHINES_TO)
    target = ctx.store.get("MachineSet", m.namespace(ms), target_name) if target_name else None
    if target is None or m.name(ms) not in (m.annotations(target).get(m.RECEIVE_MACHINES_FROM) or "").split(","):
        return None
    return target


def _counted(ms, machines):
    """Machines moved in but not yet acknowledged by the MD are not this MS's to scale."""
    acknowledged = (m.annotations(ms).get(m.ACKNOWLEDGED_MOVE) or "").split(",")
    return [x for x in machines if m.PENDING_ACKNOWLEDGE_MOVE not in m.annotations(x) or m.name(x) in acknowledged]


def _clear_acknowledged(ctx, ms, machines):
    acknowledged = (m.annotations(ms).get(m.ACKNOWLEDGED_MOVE) or "").split(",")
    for machine in machines:
        if m.PENDING_ACKNOWLEDGE_MOVE in m.annotations(machine) and m.name(machine) in acknowledged:
            done = copy.deepcopy(machine)
            del done["metadata"]["annotations"][m.PENDING_ACKNOWLEDGE_MOVE]
            ctx.writer.update(done)


def _sync_deletion_timeouts(ctx, ms, machines):
    """syncMachines: the MachineSet writes its template's node drain / volume detach / deletion timeouts onto its
    Machines in place, deleting ones included, so a changed timeout applies to a drain under way (v1.14.0
    core/reconcilers/machineset/machineset_controller.go syncMachines, spec.deletion.*Seconds; v1.10.10
    internal/controllers/machineset/machineset_controller.go, spec.nodeDrainTimeout ...)."""
    wanted = machineplan.deletion_timeouts(ms)
    for machine in machines:
        if any(m.dig(machine, "spec", key) != value for key, value in wanted.items()):
            synced = copy.deepcopy(machine)
            for key, value in wanted.items():
                m.copy_or_drop(value, synced["spec"], key)
            ctx.writer.update(synced)


def reconcile(ctx, ms):
    cluster = ctx.cluster_of(ms)
    paused = conditions.paused(ms, cluster)
    if m.is_paused(ms, cluster):
        ctx.write_status(ms, status.with_paused(ms, paused, ctx.now()))
        return
    if m.deleting(ms):
        return
    now = ctx.now()
    _clear_acknowledged(ctx, ms, ctx.store.controlled_by("Machine", ms))
    _sync_deletion_timeouts(ctx, ms, ctx.store.controlled_by("Machine", ms))
    machines = _counted(ms, ctx.store.controlled_by("Machine", ms))
    live = [x for x in machines if not m.deleting(x)]
    missing = m.replicas(ms) - len(machines)
    infra_ref = m.dig(ms, "spec", "template", "spec", "infrastructureRef")
    missing_template = None if ctx.template_exists(infra_ref, m.namespace(ms)) else infra_ref
    if missing > 0 and _creation_allowed(ctx, ms):
        if missing_template is None:
            for dummy in range(missing):
                created = ctx.writer.create(machineplan.machine_for_machine_set(ms, ctx.rng))
                ctx.provisioning[m.uid(created)] = now
                ctx.log("created Machine %s for MachineSet %s", m.key_text(created), m.name(ms))
        else:
            ctx.log("cannot create Machines for MachineSet %s: template %s does not exist", m.key_text(ms), (infra_ref or {}).get("name"))
    elif missing < 0:
        # Machines already deleting come first in upstream's delete order: only the rest need a new delete.
        victims = machineplan.machines_to_delete(live, -missing - (len(machines) - len(live)), _deletion_order(ms))
        target = _move_target(ctx, ms) if ctx.in_place_accepts is not None else None
        if target is not None:
            for victim in victims:
                ctx.writer.update(machineplan.move_machine(victim, target))
                ctx.log("moved Machine %s from MachineSet %s to %s for an in-place update", m.key_text(victim),
                        m.name(ms), m.name(target))
            victims = []
        deleted = [ctx.writer.delete(x) for x in victims]
        for victim, answer in zip(victims, deleted):
            ctx.log("deleted Machine %s of MachineSet %s", m.key_text(victim), m.name(ms))
            if answer is not None:
                reconcile_machine.finalize(ctx, answer)
    machines = ctx.store.controlled_by("Machine", ms)
    ctx.write_status(ms, status.ms_status(ms, machines, paused, now, missing_template=missing_template))
