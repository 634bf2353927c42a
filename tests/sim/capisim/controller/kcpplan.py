"""KubeadmControlPlane decisions: which CP Machines are outdated and the next one-machine step.

A Machine needs rollout (v1.10.10 controlplane/kubeadm/internal/filters.go UpToDate, v1.14.0
controlplane/kubeadm/internal/filters.go) when its certificates expire within
``rolloutBefore.certificatesExpiryDays`` (util/collections/machine_filters.go ShouldRolloutBefore), when
rolloutAfter expired for it (``created < after < now``, strict), when its version differs from the KCP's, when
its KubeadmConfig no longer matches the KCP's kubeadmConfigSpec (here: the digest the Machine was created with),
or when it was not cloned from the KCP's current infrastructure template (cloned-from annotations; a Machine
without them, older or adopted, counts as matching). The rolling update replaces one Machine at a time: with
maxSurge 1 it creates the replacement first, with maxSurge 0 it deletes first; every scale step waits until
all Machines have a Node and none is being deleted.
"""

import datetime
import hashlib
import json

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


def certificates_expiry_days(kcp):
    if m.is_v1beta2(kcp):
        return m.dig(kcp, "spec", "rollout", "before", "certificatesExpiryDays")
    return m.dig(kcp, "spec", "rolloutBefore", "certificatesExpiryDays")


def kubeadm_config_digest(kcp):
    """What the simulator remembers of the KCP's kubeadmConfigSpec on each Machine it creates."""
    spec = m.dig(kcp, "spec", "kubeadmConfigSpec", default={}) or {}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def outdated_reasons(kcp, machine, now):
    """UpToDate=False messages for a CP Machine; [] when it is up to date."""
    reasons = []
    days = certificates_expiry_days(kcp)
    expiry = m.parse_time(m.dig(machine, "status", "certificatesExpiryDate"))
    if days and expiry is not None and now + datetime.timedelta(days=int(days)) > expiry:
        reasons.append("Certificates will expire soon")
    after = rollout_after(kcp)
    if after and m.created(machine) < after < now:
        reasons.append("KubeadmControlPlane spec.rolloutAfter expired")
    want, have = m.dig(kcp, "spec", "version", default=""), m.dig(machine, "spec", "version", default="")
    if want != have:
        reasons.append(f"Version {have}, {want} required")
    created_with = m.annotations(machine).get(m.SIM_KUBEADM_CONFIG_SPEC)
    if created_with is not None and created_with != kubeadm_config_digest(kcp):
        reasons.append("KubeadmConfig is not up-to-date")
    ref = infrastructure_ref(kcp)
    cloned = (m.annotations(machine).get(m.CLONED_FROM_NAME), m.annotations(machine).get(m.CLONED_FROM_GROUPKIND))
    if None not in cloned and cloned != (ref.get("name"), f"{ref.get('kind')}.{m.ref_group(ref)}"):
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
    machine = machineplan.build_machine(kcp, {"metadata": template.get("metadata") or {}, "spec": tspec}, machine_name, extra)
    machine["metadata"]["annotations"][m.SIM_KUBEADM_CONFIG_SPEC] = kubeadm_config_digest(kcp)
    return machine
