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

from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds

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
