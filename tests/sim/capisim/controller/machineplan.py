"""Machines: what a MachineSet or the KCP creates, which Machines a scale down removes, and how one provisions.

No infrastructure exists behind a simulated Machine: its refs name a DockerMachine / KubeadmConfig with the Machine's
own name (as the real clones would be named) and the template it was cloned from is recorded in the
``cluster.x-k8s.io/cloned-from-*`` annotations (on the Machine, since there is no InfraMachine to carry them).
Provisioning is a timer: Pending -> Provisioning -> Provisioned -> Running over the template's
``sim.capi-rollout.dev/provision-seconds``; ``sim.capi-rollout.dev/fail-provisioning`` stops it at Provisioning.
"""

import copy
import datetime

from . import model as m
from . import names

DEFAULT_PROVISION_SECONDS = 2.0
# Timers may fire this early (workqueue.GRACE batches them); a step that is this close counts as reached.
TOLERANCE = 0.1


def _clone_ref(ref, machine_name, v1beta2, ns):
    """A reference to the object cloned from template ``ref`` for this Machine (kind without "Template")."""
    kind = (ref.get("kind") or "").removesuffix("Template")
    if v1beta2:
        return {"apiGroup": m.ref_group(ref), "kind": kind, "name": machine_name}
    return {"apiVersion": ref.get("apiVersion"), "kind": kind, "name": machine_name, "namespace": ns}


def build_machine(owner, template, machine_name, extra_labels):
    """A Machine owned (controller) by ``owner`` from a template {metadata, spec}; spec.clusterName from the owner."""
    v1beta2 = m.is_v1beta2(owner)
    ns = m.namespace(owner)
    tmeta = template.get("metadata") or {}
    tspec = copy.deepcopy(template.get("spec") or {})
    infra = tspec.get("infrastructureRef") or {}
    labels = dict(tmeta.get("labels") or {})
    labels.update(extra_labels)
    annotations = dict(tmeta.get("annotations") or {})
    annotations[m.CLONED_FROM_NAME] = infra.get("name", "")
    annotations[m.CLONED_FROM_GROUPKIND] = f"{infra.get('kind', '')}.{m.ref_group(infra) or ''}"
    spec = tspec
    spec["clusterName"] = m.dig(owner, "spec", "clusterName") or labels.get(m.CLUSTER_NAME)
    spec["infrastructureRef"] = _clone_ref(infra, machine_name, v1beta2, ns)
    bootstrap = spec.get("bootstrap") or {}
    if m.normalized_ref(bootstrap.get("configRef")):
        spec["bootstrap"] = {"configRef": _clone_ref(bootstrap["configRef"], machine_name, v1beta2, ns)}
    spec.pop("providerID", None)
    return {
        "apiVersion": owner["apiVersion"].replace(m.CONTROLPLANE_GROUP, m.CLUSTER_GROUP),
        "kind": "Machine",
        "metadata": {
            "name": machine_name, "namespace": ns, "labels": labels, "annotations": annotations,
            "ownerReferences": [m.owner_reference(owner, controller=True)],
            # Removed by the simulator when the Machine is deleted, so watchers see the Deleting phase.
            "finalizers": [m.MACHINE_FINALIZER],
        },
        "spec": spec,
    }


def machine_for_machine_set(ms, rng):
    """The next Machine of a MachineSet: template labels + set-name/deployment-name/cluster-name (§5)."""
    machine_name = names.generate_name(f"{m.name(ms)}-", rng)[0]
    extra = {m.SET_NAME: m.name(ms), m.CLUSTER_NAME: m.dig(ms, "spec", "clusterName")}
    if m.labels(ms).get(m.DEPLOYMENT_NAME):
        extra[m.DEPLOYMENT_NAME] = m.labels(ms)[m.DEPLOYMENT_NAME]
    return build_machine(ms, m.dig(ms, "spec", "template", default={}), machine_name, extra)


def move_machine(machine, target_ms):
    """``machine`` moved to ``target_ms`` for an in-place update: owner, set-name and template-hash labels of the
    new MS; spec.version and the cloned-from template of the new MS's template, as the MachineSet controller writes
    them when it starts the update (v1.12.3 internal/controllers/machineset/machineset_controller.go); annotated
    pending-acknowledge-move and update-in-progress (the simulator starts the update with the move)."""
    moved = copy.deepcopy(machine)
    meta = moved["metadata"]
    meta["ownerReferences"] = [r for r in meta.get("ownerReferences") or [] if not r.get("controller")]
    meta["ownerReferences"].append(m.owner_reference(target_ms, controller=True))
    meta["labels"][m.SET_NAME] = m.name(target_ms)
    meta["labels"][m.TEMPLATE_HASH] = m.labels(target_ms)[m.TEMPLATE_HASH]
    tspec = m.dig(target_ms, "spec", "template", "spec", default={})
    infra = tspec.get("infrastructureRef") or {}
    meta["annotations"].update({m.CLONED_FROM_NAME: infra.get("name", ""),
                                m.CLONED_FROM_GROUPKIND: f"{infra.get('kind', '')}.{m.ref_group(infra) or ''}",
                                m.PENDING_ACKNOWLEDGE_MOVE: "", m.UPDATE_IN_PROGRESS: ""})
    if tspec.get("version"):
        moved["spec"]["version"] = tspec["version"]
    return moved


def deletion_rank(machine, order):
    """Sort key for scale down (machineset_deletion_order.go): deleting or delete-machine annotated first, then
    Machines that are not ready (no nodeRef), then by ``order``: Newest / Oldest creation, Random (by name)."""
    if m.deleting(machine) or m.DELETE_MACHINE in m.annotations(machine):
        group = 0
    elif not m.dig(machine, "status", "nodeRef"):
        group = 1
    else:
        group = 2
    stamp = m.created(machine).timestamp()
    if order == "Newest":
        within = -stamp
    elif order == "Oldest":
        within = stamp
    else:
        within = 0.0
    return (group, within, m.name(machine))


def machines_to_delete(machines, count, order):
    return sorted(machines, key=lambda machine: deletion_rank(machine, order))[:max(count, 0)]


def _seconds(key, default, template, cluster):
    """A delay in seconds: the template's annotation ``key``, else the Cluster's, else ``default``."""
    for source in (template, cluster):
        value = m.annotations(source or {}).get(key)
        if value not in (None, ""):
            try:
                return max(float(value), 0.0)
            except ValueError:
                continue
    return default


def provision_seconds(template, cluster):
    """The provisioning delay: template annotation, else the Cluster's, else 2 s."""
    return _seconds(m.SIM_PROVISION_SECONDS, DEFAULT_PROVISION_SECONDS, template, cluster)


def deletion_seconds(template, cluster):
    """How long a deleted Machine stays Deleting (drain + infrastructure teardown): template annotation, else the
    Cluster's, else 0 (gone at once)."""
    return _seconds(m.SIM_DELETION_SECONDS, 0.0, template, cluster)


def drain_seconds(template):
    """How long the drain of a deleted Machine's Node takes (drainplan): template annotation, else 0."""
    return _seconds(m.SIM_DRAIN_SECONDS, 0.0, template, None)


def drain_blocked_by_pdb(template):
    """A PodDisruptionBudget blocks the drain of the Nodes of Machines cloned from ``template`` (drainplan)."""
    return m.annotations(template or {}).get(m.SIM_DRAIN_BLOCKED_BY_PDB, "").lower() == "true"


def deletion_timeouts(ms):
    """The node drain / volume detach / deletion timeouts of the MachineSet's Machine template, as {field: value}
    of the Machine spec (v1beta2: the ``deletion`` struct; v1beta1: three top-level fields)."""
    tspec = m.dig(ms, "spec", "template", "spec", default={})
    if m.is_v1beta2(ms):
        return {"deletion": tspec.get("deletion")}
    return {key: tspec.get(key) for key in ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout")}


def kubelet_version(template):
    """The kubelet version a Machine's Node reports: the template's annotation, else None (spec.version)."""
    return m.annotations(template or {}).get(m.SIM_KUBELET_VERSION) or None


def certificates_valid_days(template):
    """How long the certificates of a control plane Machine are valid: the template's annotation, else 365
    days (kubeadm's default)."""
    return _seconds(m.SIM_CERTIFICATES_VALID_DAYS, 365.0, template, None)


def fails_provisioning(template):
    return m.annotations(template or {}).get(m.SIM_FAIL_PROVISIONING, "").lower() == "true"


def lifecycle(now, started, delay, failing):
    """(phase, bootstrap_ready, infrastructure_ready, node_ready, next_wakeup or None).

    Thirds of the delay: Pending, Provisioning (bootstrap data ready), Provisioned (infrastructure ready, providerID
    set), then Running with a Node. A failing template never gets its infrastructure."""
    elapsed = (now - started).total_seconds() + TOLERANCE
    third = delay / 3.0
    if elapsed < third:
        return "Pending", False, False, False, started + datetime.timedelta(seconds=third)
    if failing:
        return "Provisioning", True, False, False, None
    if elapsed < 2 * third:
        return "Provisioning", True, False, False, started + datetime.timedelta(seconds=2 * third)
    if elapsed < delay:
        return "Provisioned", True, True, False, started + datetime.timedelta(seconds=delay)
    return "Running", True, True, True, None
