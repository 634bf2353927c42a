# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What holds up the deletion of a Machine, and what to do about it (issue 29 point 1), from CAPI's v1beta2 Deleting
condition: its reasons WaitingForPreDrainHook, DrainingNode and WaitingForVolumeDetach (api/core/v1beta2/machine_types.go
v1.14.0, api/v1beta1/machine_types.go v1.10.0 ...V1Beta2Reason) and their messages (core/reconcilers/machine/
machine_controller.go and drain/drain.go ``ConditionMessage`` v1.14.0: "Drain not completed yet (started at ...):" and
one line per group of Pods, such as "* Pod ns/p: cannot evict pod as it would violate the pod's disruption budget.").
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet

DELETING = "Deleting"
_BUDGET = "disruption budget"

# reason -> (what blocks, what to do)
_BLOCKERS = {
    "WaitingForPreDrainHook": (
        "a pre-drain hook",
        "the hook's owner removes its pre-drain.delete.hook.machine.cluster.x-k8s.io annotation from the Machine once it "
        "is done; remove it yourself only if that owner is gone"),
    "DrainingNode": (
        "the drain",
        "make the Pods named evictable (scale the workload or relax its budget), or give the pool a node drain timeout "
        "(nodeDrainTimeout; v1beta2 deletion.nodeDrainTimeoutSeconds) after which CAPI deletes the Machine anyway"),
    "WaitingForVolumeDetach": (
        "volumes still attached",
        "check the storage driver and the Node's VolumeAttachments, or give the pool a node volume detach timeout "
        "(nodeVolumeDetachTimeout; v1beta2 deletion.nodeVolumeDetachTimeoutSeconds)"),
}


DRAINING = "draining"
DRAINED = "drained"
TIMED_OUT = "timed_out"
_NO_TIMEOUT = (None, 0, "", "0s")


def drain_phase(machine):
    """Where the drain of a Machine view stands: DRAINED (v1beta1 DrainingSucceeded True), DRAINING (being deleted,
    Deleting reason DrainingNode), TIMED_OUT (its drain started and it went on without DrainingSucceeded: CAPI skips
    the drain once the node drain timeout has passed since nodeDrainStartTime - isNodeDrainAllowed /
    nodeDrainTimeoutExceeded, v1.10.10 internal/controllers/machine/machine_controller.go, v1.14.0
    core/reconcilers/machine/machine_controller.go), or None (no drain, or not yet). A timed-out drain leaves no other
    trace: the Machine is deleted next, so a Machine seen DRAINING that is gone counts as TIMED_OUT too
    (core.waitstate.note_machine)."""
    if machine.get("drained") is True:
        return DRAINED
    if not machine.get("deleting") or not machine.get("drain_started"):
        return None
    cond = conds.find(machine.get("conditions"), DELETING) or {}
    if cond.get("reason") == "DrainingNode":
        return DRAINING
    if cond.get("reason") == "WaitingForPreDrainHook" or machine.get("node_drain_timeout") in _NO_TIMEOUT:
        return None
    return TIMED_OUT


def deletion_blocker(machine):
    """For a Machine view that is being deleted: {reason, blocks, message, pdb, next_step} when CAPI's Deleting
    condition says a hook, a drain or volumes hold it up, else None. ``pdb``: a PodDisruptionBudget refused an
    eviction (drain.go's own wording)."""
    if not machine.get("deleting"):
        return None
    cond = conds.find(machine.get("conditions"), DELETING)
    if not cond or cond.get("status") != conds.TRUE or cond.get("reason") not in _BLOCKERS:
        return None
    blocks, next_step = _BLOCKERS[cond["reason"]]
    message = " ".join(str(cond.get("message") or "").split())
    return {"reason": cond["reason"], "blocks": blocks, "message": message, "pdb": _BUDGET in message,
            "next_step": next_step}


def describe(machine):
    """One line for a Machine whose deletion is held up (deletion_blocker), or None."""
    found = deletion_blocker(machine)
    if found is None:
        return None
    node = f" on Node {machine['node']}" if machine.get("node") else ""
    text = f"being deleted, held up by {found['blocks']}{node} ({found['reason']}"
    text += f": {found['message'][:400]})" if found["message"] else ")"
    return f"{text}; to go on: {found['next_step']}"


# The pool's node drain timeout, set for a wave (issue 29 point 1). It is an in-place field: a MachineSet passes it to
# its Machines without a rollout (MachineSet computeDesiredMachine, v1.10.10 internal/controllers/machineset/
# machineset_controller.go; v1.14.0 core/reconcilers/machineset/), and a MachineDeployment passes it to its newest
# MachineSet only on v1.10/v1.11 (getNewMachineSet, v1.10.10 machinedeployment_sync.go), to every one from v1.12
# (computeDesiredOldMS, v1.12.3 machinedeployment_rollout_planner.go): so it is written with the switch, while the
# current MachineSet is still the newest. The value it had is recorded on the object (DRAIN_TIMEOUT_ANNOTATION).


def _field_value(version, seconds):
    """The field's value for ``seconds``: v1beta1 a metav1.Duration string, v1beta2 an int32 of seconds."""
    return seconds if version == apiversion.V1BETA2 else f"{seconds}s"


def recorded(obj):
    """The record of a drain timeout a refresh set on ``obj``: {id, before} or None (none, or unreadable)."""
    raw = paths.get_path(obj, ("metadata", "annotations", keys.DRAIN_TIMEOUT_ANNOTATION))
    try:
        found = json.loads(raw) if raw else None
    except ValueError:
        return None
    return found if isinstance(found, dict) and "before" in found else None


def set_drain_timeout(obj, kind, version, seconds, rollout_id, changes):
    """Record in ``changes`` (core.diff.ChangeSet) the node drain timeout ``seconds`` on MachineDeployment ``obj`` and
    the record of the value it had. A record already there (an earlier wave or a killed run of the same refresh) keeps
    its ``before``, so the value restored is the one from before the refresh. Nothing for None or another kind."""
    path = apiversion.spec_path(kind, version, "node_drain_timeout")
    if seconds is None or path is None:
        return
    current = paths.get_path(obj, path)
    found = recorded(obj)
    before = found["before"] if found is not None else current
    changes.add(path, current, _field_value(version, seconds))
    annotation = ("metadata", "annotations", keys.DRAIN_TIMEOUT_ANNOTATION)
    changes.add(annotation, paths.get_path(obj, annotation),
                json.dumps({"id": rollout_id, "before": before}, sort_keys=True, separators=(",", ":")))


def carry_to_machine_sets(md, version, machine_sets):
    """[(MachineSet, ChangeSet)]: the MachineSets of MachineDeployment ``md`` (with a recorded drain timeout) that still
    have Machines and lack its node drain timeout, each with the change that gives it. CAPI v1.10/v1.11 pass an MD's
    in-place fields to its newest MachineSet only (getNewMachineSet, v1.10.10 machinedeployment_sync.go), so the older
    ones, whose Machines drain during the rollout, would keep draining for ever; a MachineSet passes the field on to its
    Machines, the ones being deleted included (syncMachines, v1.10.10 internal/controllers/machineset/
    machineset_controller.go). From v1.12 the MD controller syncs every MachineSet itself (computeDesiredOldMS,
    v1.12.3 machinedeployment_rollout_planner.go) and this finds nothing to change."""
    if recorded(md) is None:
        return []
    wanted = paths.get_path(md, apiversion.spec_path(apiversion.MACHINE_DEPLOYMENT, version, "node_drain_timeout"))
    path = apiversion.spec_path(apiversion.MACHINE_SET, version, "node_drain_timeout")
    name = paths.get_path(md, "metadata.name")
    out = []
    for ms in machine_sets:
        owned = paths.get_path(ms, ("metadata", "labels", keys.DEPLOYMENT_NAME_LABEL)) == name
        has_machines = (paths.get_path(ms, "spec.replicas") or 0) > 0 or (paths.get_path(ms, "status.replicas") or 0) > 0
        changes = ChangeSet()
        if owned and has_machines and changes.add(path, paths.get_path(ms, path), wanted):
            out.append((ms, changes))
    return out


def restore_drain_timeout(obj, kind, version, changes):
    """Record in ``changes`` the node drain timeout of ``obj`` put back as its record says (null: unset) and the record
    removed; returns the record ({id, before}), or None without one (nothing to do)."""
    found = recorded(obj)
    path = apiversion.spec_path(kind, version, "node_drain_timeout")
    if found is None or path is None:
        return None
    keys_of = paths.split_path(path)
    parent = paths.get_path(obj, keys_of[:-1]) or {}
    if found["before"] is None and not [key for key in parent if key != keys_of[-1]]:
        # the v1beta2 deletion struct must not be left empty (MachineDeletionSpec MinProperties=1,
        # api/core/v1beta2/machine_types.go v1.14.0)
        changes.add(keys_of[:-1], paths.get_path(obj, keys_of[:-1]), None)
    else:
        changes.add(path, paths.get_path(obj, path), found["before"])
    annotation = ("metadata", "annotations", keys.DRAIN_TIMEOUT_ANNOTATION)
    changes.add(annotation, paths.get_path(obj, annotation), None)
    return found
