"""KubeadmControlPlane decisions (reference §6): which CP Machines are outdated and the next one-machine step.

A Machine needs rollout when its version differs from the KCP's, when it was not cloned from the KCP's current
infrastructure template (cloned-from annotations), or when rolloutAfter expired for it (``created < after < now``,
strict). The rolling update replaces one Machine at a time: with maxSurge 1 it creates the replacement first, with
maxSurge 0 it deletes first; every scale step waits until all Machines have a Node and none is being deleted.
"""

from . import fenceposts
from . import machineplan
from . import model as m
from . import names


def infrastructure_ref(kcp):
    if m.is_v1beta2(kcp):
        return m.dig(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", default={})
    return m.dig(kcp, "spec", "machineTemplate", "infrastructureRef", default={})


def rollout_after(kcp):
    return m.parse_time(m.dig(kcp, "spec", "rollout", "after") if m.is_v1beta2(kcp) else m.dig(kcp, "spec", "rolloutAfter"))


def max_surge(kcp):
    if m.is_v1beta2(kcp):
        value = m.dig(kcp, "spec", "rollout", "strategy", "rollingUpdate", "maxSurge")
    else:
        value = m.dig(kcp, "spec", "rolloutStrategy", "rollingUpdate", "maxSurge")
    return fenceposts.scaled_value(1 if value is None else value, m.replicas(kcp, 1), True)


def outdated_reasons(kcp, machine, now):
    """UpToDate=False messages for a CP Machine; [] when it is up to date."""
    reasons = []
    after = rollout_after(kcp)
    if after and m.created(machine) < after < now:
        reasons.append("KubeadmControlPlane spec.rolloutAfter expired")
    want, have = m.dig(kcp, "spec", "version", default=""), m.dig(machine, "spec", "version", default="")
    if want != have:
        reasons.append(f"Version {have}, {want} required")
    ref = infrastructure_ref(kcp)
    cloned = (m.annotations(machine).get(m.CLONED_FROM_NAME), m.annotations(machine).get(m.CLONED_FROM_GROUPKIND))
    if cloned != (ref.get("name"), f"{ref.get('kind')}.{m.ref_group(ref)}"):
        kind = m.dig(machine, "spec", "infrastructureRef", "kind", default="InfrastructureMachine")
        reasons.append(f"{kind} is not up-to-date")
    return reasons


def _scale_down_candidate(machines, outdated):
    """selectMachineForScaleDown: outdated+delete-machine, delete-machine, outdated, any; oldest first."""
    marked = [x for x in machines if m.DELETE_MACHINE in m.annotations(x)]
    for pool in ([x for x in marked if m.name(x) in outdated], marked, [x for x in machines if m.name(x) in outdated], machines):
        if pool:
            return min(pool, key=lambda x: (m.created(x), m.name(x)))
    return None


def plan(kcp, machines, now):
    """(action, machine, note): action is "create", "delete", "wait" or None (steady)."""
    if any(m.deleting(x) for x in machines):
        return "wait", None, "waiting for Machine deletion to complete"
    outdated = {m.name(x) for x in machines if outdated_reasons(kcp, x, now)}
    reps, count = m.replicas(kcp, 1), len(machines)
    if count == 0 and reps > 0:
        return "create", None, "initializing control plane"
    if outdated:
        action = "create" if count < reps + max_surge(kcp) else "delete"
    elif count < reps:
        action = "create"
    elif count > reps:
        action = "delete"
    else:
        return None, None, ""
    not_ready = sorted(m.name(x) for x in machines if not m.dig(x, "status", "nodeRef"))
    if not_ready:
        return "wait", None, f"waiting for control plane to pass preflight checks: Machine(s) {', '.join(not_ready)} without a Node"
    if action == "create":
        return "create", None, f"{len(outdated)} Machine(s) need rollout" if outdated else f"scaling up to {reps}"
    return "delete", _scale_down_candidate(machines, outdated), "rollout" if outdated else f"scaling down to {reps}"


def new_machine(kcp, cluster_name, rng):
    """A CP Machine for the KCP's current version and infrastructure template."""
    if m.is_v1beta2(kcp):
        template = m.dig(kcp, "spec", "machineTemplate", default={})
        tspec = dict(template.get("spec") or {})
        boot = {"configRef": {"apiGroup": m.BOOTSTRAP_GROUP, "kind": "KubeadmConfig", "name": "-"}}
    else:
        template = m.dig(kcp, "spec", "machineTemplate", default={})
        fields = ("readinessGates", "nodeDrainTimeout", "nodeDeletionTimeout", "nodeVolumeDetachTimeout", "infrastructureRef")
        tspec = {k: template[k] for k in fields if k in template}
        boot = {"configRef": {"apiVersion": f"{m.BOOTSTRAP_GROUP}/v1beta1", "kind": "KubeadmConfig", "name": "-"}}
    tspec.update({"version": m.dig(kcp, "spec", "version"), "bootstrap": boot})
    machine_name = names.generate_name(f"{m.name(kcp)}-", rng)[0]
    extra = {m.CLUSTER_NAME: cluster_name, m.CONTROL_PLANE: "", m.CONTROL_PLANE_NAME: m.name(kcp)}
    return machineplan.build_machine(kcp, {"metadata": template.get("metadata") or {}, "spec": tspec}, machine_name, extra)
