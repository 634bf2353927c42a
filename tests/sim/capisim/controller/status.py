"""Status of Machines, MachineSets, MachineDeployments, KubeadmControlPlanes and Clusters in the simulated version's shape.

CAPI v1.10 writes v1beta1 objects: CAPI-v1beta1 ``status.conditions`` plus ``status.v1beta2.{conditions,counters}``.
CAPI v1.14 writes v1beta2 objects: metav1 ``status.conditions`` plus ``status.deprecated.v1beta1.{conditions,counters}``.
Each builder returns the complete new status from the current object and its children (reference §1, §5, §6); the
caller writes it only when it differs, so lastTransitionTime and lastUpdated are carried over when nothing changed.
"""

import datetime
import hashlib

from . import conditions as c
from . import fenceposts
from . import mdplan
from . import model as m


def _shape(obj, v1beta1_conditions, v1beta2_conditions, now, legacy=None, modern=None):
    """Place both condition lists and counter sets where the object's API version keeps them.

    ``legacy`` are v1beta1-semantics counters (v1beta1: top level; v1beta2: deprecated.v1beta1), ``modern`` the
    v1beta2-semantics ones (v1beta1: status.v1beta2; v1beta2: top level)."""
    old = obj.get("status") or {}
    gen = m.generation(obj)
    legacy, modern = legacy or {}, modern or {}
    if m.is_v1beta2(obj):
        old_legacy = m.dig(old, "deprecated", "v1beta1", "conditions", default=[])
        status = dict(modern)
        status["conditions"] = c.merge_v1beta2(old.get("conditions"), v1beta2_conditions, gen, now)
        deprecated = dict(legacy)
        deprecated["conditions"] = c.merge_v1beta1(old_legacy, v1beta1_conditions, now)
        status["deprecated"] = {"v1beta1": deprecated}
    else:
        status = dict(legacy)
        status["conditions"] = c.merge_v1beta1(old.get("conditions"), v1beta1_conditions, now)
        nested = dict(modern)
        nested["conditions"] = c.merge_v1beta2(m.dig(old, "v1beta2", "conditions", default=[]), v1beta2_conditions, gen, now)
        status["v1beta2"] = nested
    status["observedGeneration"] = gen
    return status


def keep_observed_generation(new_status, obj):
    """A reconcile that failed (e.g. templates missing) patches status but not observedGeneration (upstream's
    WithStatusObservedGeneration only when reterr == nil: v1.14.0
    core/reconcilers/machinedeployment/machinedeployment_controller.go, v1.10.10
    internal/controllers/machinedeployment/machinedeployment_controller.go, and the KCP controllers)."""
    observed = m.dig(obj, "status", "observedGeneration")
    if observed is None:
        new_status.pop("observedGeneration", None)
    else:
        new_status["observedGeneration"] = observed
    return new_status


def _summary(v1beta1_conditions):
    """The v1beta1 Ready summary: True when all are True, else the first non-True one's reason/severity/message."""
    for item in v1beta1_conditions:
        if item["status"] != "True":
            return c.cond("Ready", item["status"], item["reason"], item.get("message", ""), item.get("severity"))
    return c.cond("Ready", True, "")


def _versions(machines):
    """status.versions: the Node's kubelet version where there is one, else spec.version (v1.14.0
    internal/util/version/version.go VersionsFromMachines)."""
    counts = {}
    for machine in machines:
        version = m.dig(machine, "status", "nodeInfo", "kubeletVersion") or m.dig(machine, "spec", "version")
        if version:
            counts[version] = counts.get(version, 0) + 1
    return [{"version": v, "replicas": n} for v, n in sorted(counts.items())]


def _set_versions(status, versions):
    """status.versions has minItems 1: omitted (omitempty) while there are no Machines."""
    if versions:
        status["versions"] = versions


def _scaling(current, desired, noun="replicas"):
    up = (c.cond("ScalingUp", True, "ScalingUp", f"Scaling up from {current} to {desired} {noun}") if current < desired
          else c.cond("ScalingUp", False, "NotScalingUp"))
    down = (c.cond("ScalingDown", True, "ScalingDown", f"Scaling down from {current} to {desired} {noun}")
            if current > desired else c.cond("ScalingDown", False, "NotScalingDown"))
    return [up, down]


def _rolling_out(machines):
    """RollingOut from the Machines' UpToDate=False messages, version reasons first (setRollingOutCondition)."""
    rolling, reasons = 0, set()
    for machine in machines:
        state = m.condition(machine, "UpToDate")
        if not state or state.get("status") != "False":
            continue
        rolling += 1
        if state.get("message"):
            reasons.update(state["message"].split("\n"))
    if not rolling:
        return c.cond("RollingOut", False, "NotRollingOut")
    ordered = sorted(reasons, key=lambda r: (not r.startswith("* Version"), r))
    message = f"Rolling out {rolling} not up-to-date replicas" + "".join(f"\n{r}" for r in ordered)
    return c.cond("RollingOut", True, "RollingOut", message)


def _deleting(obj, message="Deletion in progress"):
    return c.cond("Deleting", True, "Deleting", message) if m.deleting(obj) else c.cond("Deleting", False, "NotDeleting")


# --- Machine ------------------------------------------------------------------------------------------------------

def worker_up_to_date(ms, md, now, bug_13182):
    """Machine UpToDate for a worker: its MachineSet's template against the MD's, plus an expired rolloutAfter
    (``bug_13182``: the release has upstream bug #13182, capisim.releases)."""
    messages = mdplan.template_up_to_date(m.template_spec(ms), m.template_spec(md))[2]
    if mdplan.rollout_after_expired(md, ms, now, same_second_expires=bug_13182):
        messages = messages + ["MachineDeployment spec.rolloutAfter expired"]
    if messages:
        return c.cond("UpToDate", False, "NotUpToDate", "\n".join(f"* {msg}" for msg in messages))
    return c.cond("UpToDate", True, "UpToDate")


def node_name(machine):
    return m.name(machine)


def kubelet_up_to_date(up_to_date, machine, kubelet_version):
    """v1.14: an up-to-date Machine whose Node runs another kubelet version is still updating (v1.14.0
    core/reconcilers/machine/machine_controller_status.go setUpToDateCondition)."""
    wanted = m.dig(machine, "spec", "version")
    if up_to_date is None or up_to_date["status"] != "True" or not kubelet_version or kubelet_version == wanted:
        return up_to_date
    return c.cond("UpToDate", False, "Updating", f"* Node.status.nodeInfo.kubeletVersion {kubelet_version}, {wanted} required")


def machine_status(machine, life, up_to_date, min_ready_seconds, paused, now, kubelet_version=None,
                   certificates_expiry=None, updating=None, drain=None):
    """(status, next_wakeup) of a Machine from its provisioning ``life`` tuple (machineplan.lifecycle);
    its Node's kubelet runs ``kubelet_version`` (default: spec.version); a control plane Machine's
    certificates expire at ``certificates_expiry`` (status.certificatesExpiryDate, once it has a Node).
    ``updating``: the Updating condition (InPlaceUpdates on); while True the Machine is not Ready (v1.12.3
    api/core/v1beta2/machine_types.go MachineReadyCondition: "Updating condition is false").
    ``drain``: a deleted Machine's drainplan.Drain (Deleting reason and message, v1beta1 drain conditions)."""
    phase, bootstrap_ready, infra_ready, node_ready, wakeup = life
    in_place = updating is not None and updating["status"] == "True"
    old = machine.get("status") or {}
    deleting = m.deleting(machine)
    if deleting:
        phase = "Deleting"
    v1beta2 = m.is_v1beta2(machine)
    infra_kind = m.dig(machine, "spec", "infrastructureRef", "kind", default="InfraMachine")
    boot_kind = m.dig(machine, "spec", "bootstrap", "configRef", "kind")
    ready = bootstrap_ready and infra_ready and node_ready and not deleting and not in_place
    prev_ready = m.condition(machine, "Ready")
    ready_since = now
    if ready and prev_ready and prev_ready.get("status") == "True":
        ready_since = m.parse_time(prev_ready["lastTransitionTime"])
    available_at = ready_since + datetime.timedelta(seconds=min_ready_seconds)
    available = ready and now >= available_at
    if ready and not available:
        wakeup = available_at

    boot_msg = f"{boot_kind} status.initialization.dataSecretCreated is false" if boot_kind else "Waiting for bootstrap data"
    infra_msg = f"{infra_kind} status.initialization.provisioned is false"
    node_msg = f"Waiting for a Node with spec.providerID {provider_id(machine)} to exist"
    modern = [
        c.cond("BootstrapConfigReady", True, "Ready" if boot_kind else "DataSecretAvailable") if bootstrap_ready
        else c.cond("BootstrapConfigReady", False, "NotReady", boot_msg),
        c.cond("InfrastructureReady", True, "Ready") if infra_ready else c.cond("InfrastructureReady", False, "NotReady", infra_msg),
        c.cond("NodeReady", True, "NodeReady") if node_ready else c.cond("NodeReady", "Unknown", "NodeDoesNotExist", node_msg),
        c.cond("NodeHealthy", True, "NodeHealthy") if node_ready else c.cond("NodeHealthy", "Unknown", "NodeDoesNotExist", node_msg),
        c.cond("Deleting", True, drain.reason, drain.message) if drain is not None and drain.reason
        else _deleting(machine, "Machine deletion in progress"),
        paused,
    ] + ([updating] if updating is not None else [])
    if ready:
        modern.append(c.cond("Ready", True, "Ready"))
    else:
        why = [f"* {item['type']}: {item['message']}" for item in modern[:4] if item["status"] != "True"]
        if in_place:
            why.append(f"* Updating: {updating['message']}")
        if deleting:
            why.insert(0, f"* Deleting: {modern[4]['message']}")
        modern.append(c.cond("Ready", False, "NotReady", "\n".join(why)))
    if available:
        modern.append(c.cond("Available", True, "Available"))
    elif ready:
        modern.append(c.cond("Available", False, "WaitingForMinReadySeconds"))
    else:
        modern.append(c.cond("Available", False, "NotReady"))
    if up_to_date is not None:
        modern.append(up_to_date)

    legacy_conditions = [
        c.cond("BootstrapReady", True, "") if bootstrap_ready else c.cond("BootstrapReady", False, "WaitingForDataSecretFallback", "", "Info"),
        c.cond("InfrastructureReady", True, "") if infra_ready else c.cond("InfrastructureReady", False, "WaitingForInfrastructure", "", "Info"),
        c.cond("NodeHealthy", True, "") if node_ready else c.cond("NodeHealthy", False, "WaitingForNodeRef", "", "Info"),
    ]
    legacy_conditions.append(_summary(legacy_conditions))
    if deleting:
        legacy_conditions[-1] = c.cond("Ready", False, "Deleting", "", "Info")
        legacy_conditions += drain.legacy if drain is not None else []

    fields = {"phase": phase}
    if v1beta2:
        fields["initialization"] = {"bootstrapDataSecretCreated": bootstrap_ready, "infrastructureProvisioned": infra_ready}
    else:
        fields.update({"bootstrapReady": bootstrap_ready, "infrastructureReady": infra_ready})
    if node_ready:
        fields["nodeRef"] = {"name": node_name(machine)} if v1beta2 else {
            "apiVersion": "v1", "kind": "Node", "name": node_name(machine), "uid": _fake_uid(m.uid(machine), "node")}
        fields["nodeInfo"] = _node_info(machine, kubelet_version)
        if certificates_expiry is not None:
            fields["certificatesExpiryDate"] = m.format_time(certificates_expiry)
        fields["addresses"] = [{"type": "InternalIP", "address": _fake_ip(m.uid(machine))},
                               {"type": "Hostname", "address": node_name(machine)}]
    if drain is not None and drain.started is not None:
        fields["deletion"] = {"nodeDrainStartTime": m.format_time(drain.started)}
    fields["lastUpdated"] = old.get("lastUpdated") if old.get("phase") == phase and old.get("lastUpdated") else m.format_time(now)
    # v1beta1 keeps these fields next to its v1beta1 conditions; v1beta2 at the top next to the metav1 ones.
    status = _shape(machine, legacy_conditions, modern, now, legacy=None if v1beta2 else fields)
    if v1beta2:
        status.update(fields)
    return status, wakeup


def provider_id(machine):
    """What CAPD would set as spec.providerID once the infrastructure is provisioned."""
    return f"docker:////{m.name(machine)}"


def _fake_uid(seed, salt):
    digest = hashlib.sha256(f"{seed}/{salt}".encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _fake_ip(seed):
    digest = hashlib.sha256(str(seed).encode()).digest()
    return f"10.{digest[0]}.{digest[1]}.{max(digest[2], 1)}"


def _node_info(machine, kubelet_version=None):
    version = kubelet_version or m.dig(machine, "spec", "version", default="")
    return {
        "architecture": "amd64", "bootID": _fake_uid(m.uid(machine), "boot"), "containerRuntimeVersion": "containerd://1.7.24",
        "kernelVersion": "6.1.0-capisim", "kubeProxyVersion": version, "kubeletVersion": version,
        "machineID": _fake_uid(m.uid(machine), "machine").replace("-", ""), "operatingSystem": "linux",
        "osImage": "capisim simulated node", "systemUUID": _fake_uid(m.uid(machine), "system"),
    }


# --- MachineSet ---------------------------------------------------------------------------------------------------

def _count(machines, ctype):
    return sum(1 for machine in machines if m.condition_true(machine, ctype))


def _missing_template(scaling, total, desired, missing_template):
    """ScalingUp says that a missing infrastructure template blocks scaling up (v1.10.10
    internal/controllers/machineset/machineset_controller_status.go, v1.14.0 core/reconcilers/machineset/
    machineset_controller_status.go: setScalingUpCondition, calculateMissingReferencesMessage)."""
    if not missing_template:
        return scaling
    missing = f"{missing_template.get('kind')} does not exist"
    up = (c.cond("ScalingUp", True, "ScalingUp", f"Scaling up from {total} to {desired} replicas is blocked because:\n* {missing}")
          if total < desired else c.cond("ScalingUp", False, "NotScalingUp", f"Scaling up would be blocked because {missing}"))
    return [up] + [cond for cond in scaling if cond["type"] != "ScalingUp"]


def _machines_created(ms, total, desired, missing_template):
    """MachinesCreated (v1beta1 conditions): False when a Machine is due but its infrastructure template cannot be
    cloned (v1.10.10 internal/controllers/machineset/machineset_controller.go syncReplicas, v1.14.0
    core/reconcilers/machineset/machineset_controller.go: InfrastructureTemplateCloningFailed with external.Get's error)."""
    if not missing_template or total >= desired:
        return c.cond("MachinesCreated", True, "")
    kind, name = missing_template.get("kind"), missing_template.get("name")
    group = missing_template.get("apiGroup") or (missing_template.get("apiVersion") or "").split("/")[0]
    plural = f"{kind.lower()}s.{group or 'infrastructure.cluster.x-k8s.io'}"
    return c.cond("MachinesCreated", False, "InfrastructureTemplateCloningFailed",
                  f'failed to retrieve {kind} {m.namespace(ms)}/{name}: {plural} "{name}" not found', "Error")


def ms_status(ms, machines, paused, now, missing_template=None):
    """MachineSet status: replicas = Machines owned; ready/available/upToDate = Machines with that condition True.
    ``missing_template``: the infrastructure template reference when that template does not exist."""
    desired = m.replicas(ms)
    total, ready, available = len(machines), _count(machines, "Ready"), _count(machines, "Available")
    up_to_date = _count(machines, "UpToDate")
    modern_conditions = [
        c.aggregate(machines, "Ready", "Ready", "NotReady", "ReadyUnknown", "MachinesReady"),
        c.aggregate([x for x in machines if m.condition(x, "UpToDate")], "UpToDate", "UpToDate", "NotUpToDate",
                    "UpToDateUnknown", "MachinesUpToDate"),
        *_missing_template(_scaling(total, desired), total, desired, missing_template),
        c.cond("Remediating", False, "NotRemediating"),
        _deleting(ms),
        paused,
    ]
    if total < desired:
        resized = c.cond("Resized", False, "ScalingUp", f"Scaling up MachineSet to {desired} replicas (actual {total})", "Warning")
    elif total > desired:
        resized = c.cond("Resized", False, "ScalingDown", f"Scaling down MachineSet to {desired} replicas (actual {total})", "Warning")
    else:
        resized = c.cond("Resized", True, "")
    machines_ready = (c.cond("MachinesReady", True, "") if ready == total
                      else c.cond("MachinesReady", False, "Detached" if not total else "WaitingForMachinesReady", "", "Info"))
    legacy_conditions = [_machines_created(ms, total, desired, missing_template), resized, machines_ready]
    legacy_conditions.append(_summary(legacy_conditions))
    legacy = {"readyReplicas": ready, "availableReplicas": available, "fullyLabeledReplicas": total}
    modern = {"readyReplicas": ready, "availableReplicas": available, "upToDateReplicas": up_to_date}
    common = {"replicas": total, "selector": m.selector_string(m.dig(ms, "spec", "selector"))}
    if m.is_v1beta2(ms):
        status = _shape(ms, legacy_conditions, modern_conditions, now, legacy=legacy, modern={**modern, **common})
        _set_versions(status, _versions(machines))
        return status
    return _shape(ms, legacy_conditions, modern_conditions, now, legacy={**legacy, **common}, modern=modern)


def _legacy_counter(ms, field):
    """v1beta1-semantics readyReplicas/availableReplicas of an MS in either API version."""
    if m.is_v1beta2(ms):
        return int(m.dig(ms, "status", "deprecated", "v1beta1", field, default=0))
    return int(m.dig(ms, "status", field, default=0))


# --- MachineDeployment --------------------------------------------------------------------------------------------

def md_status(md, mss, new_ms, machines, paused, now):
    """MachineDeployment status from its MachineSets (after this reconcile's writes) and Machines (§1.2, §1.9)."""
    reps = m.replicas(md, 1)
    strategy_type, surge, unavailable = m.md_strategy(md)
    min_needed = reps - fenceposts.max_unavailable(strategy_type, surge, unavailable, reps)
    total = sum(m.status_int(ms, "replicas") for ms in mss)
    ready = sum(m.status_int(ms, "readyReplicas") for ms in mss)
    available = sum(m.status_int(ms, "availableReplicas") for ms in mss)
    up_to_date = sum(m.status_int(ms, "upToDateReplicas") for ms in mss)
    legacy_ready = sum(_legacy_counter(ms, "readyReplicas") for ms in mss)
    legacy_available = sum(_legacy_counter(ms, "availableReplicas") for ms in mss)
    legacy = {
        "updatedReplicas": m.status_int(new_ms, "replicas") if new_ms is not None else 0,
        "readyReplicas": legacy_ready, "availableReplicas": legacy_available,
        "unavailableReplicas": max(sum(m.replicas(ms) for ms in mss) - legacy_available, 0),
    }

    if available >= min_needed:
        available_cond = c.cond("Available", True, "Available")
    else:
        message = f"{available} available replicas, at least {min_needed} required"
        if strategy_type == "RollingUpdate":
            message += f" (spec.strategy.rollout.maxUnavailable is {unavailable}, spec.replicas is {reps})"
        available_cond = c.cond("Available", False, "NotAvailable", "Deletion in progress" if m.deleting(md) else message)
    modern_conditions = [
        available_cond,
        c.aggregate(machines, "Ready", "Ready", "NotReady", "ReadyUnknown", "MachinesReady"),
        c.aggregate([x for x in machines if m.condition(x, "UpToDate")], "UpToDate", "UpToDate", "NotUpToDate",
                    "UpToDateUnknown", "MachinesUpToDate"),
        _rolling_out(machines),
        *_scaling(total, 0 if m.deleting(md) else reps),
        c.cond("Remediating", False, "NotRemediating"),
        _deleting(md),
        paused,
    ]
    if legacy_available >= min_needed:
        legacy_available_cond = c.cond("Available", True, "")
    else:
        legacy_available_cond = c.cond("Available", False, "WaitingForAvailableMachines",
                                       f"Minimum availability requires {min_needed} replicas, current {legacy_available} available", "Warning")
    if new_ms is None:
        ms_ready = c.cond("MachineSetReady", False, "WaitingForMachineSet", "MachineSet not found", "Info")
    else:
        mirrored = next((x for x in _legacy_conditions(new_ms) if x.get("type") == "Ready"), None)
        ms_ready = (c.cond("MachineSetReady", mirrored["status"], mirrored.get("reason", ""), mirrored.get("message", ""),
                           mirrored.get("severity")) if mirrored
                    else c.cond("MachineSetReady", False, "WaitingForMachineSet", "", "Info"))
    legacy_conditions = [legacy_available_cond, ms_ready, _summary([legacy_available_cond])]

    common = {"replicas": total, "selector": m.selector_string(m.dig(md, "spec", "selector"))}
    modern = {"readyReplicas": ready, "availableReplicas": available, "upToDateReplicas": up_to_date}
    if m.is_v1beta2(md):
        status = _shape(md, legacy_conditions, modern_conditions, now, legacy=legacy, modern={**modern, **common})
        status["phase"] = _md_phase_v114(md, reps, total)
        _set_versions(status, _aggregate_versions(mss))
        return status
    status = _shape(md, legacy_conditions, modern_conditions, now, legacy={**legacy, **common}, modern=modern)
    phase = _md_phase_v110(md, reps, legacy_ready, sum(m.replicas(ms) for ms in mss) - legacy_available)
    if phase:
        status["phase"] = phase
    return status


def _legacy_conditions(obj):
    if m.is_v1beta2(obj):
        return m.dig(obj, "status", "deprecated", "v1beta1", "conditions", default=[])
    return m.dig(obj, "status", "conditions", default=[])


def _md_phase_v110(md, reps, ready, spec_minus_available):
    phase = m.dig(md, "status", "phase")
    if reps == ready:
        phase = "Running"
    if reps > ready:
        phase = "ScalingUp"
    if spec_minus_available < 0:
        phase = "ScalingDown"
    return phase


def _md_phase_v114(md, reps, total):
    if m.deleting(md) or reps < total:
        return "ScalingDown"
    return "Running" if reps == total else "ScalingUp"


def _aggregate_versions(mss):
    counts = {}
    for ms in mss:
        for item in m.dig(ms, "status", "versions", default=[]):
            counts[item["version"]] = counts.get(item["version"], 0) + int(item.get("replicas", 0))
    return [{"version": v, "replicas": n} for v, n in sorted(counts.items())]


# --- KubeadmControlPlane ------------------------------------------------------------------------------------------

def kcp_status(kcp, machines, up_to_date_names, paused, now):
    """KCP status (§1.11, §6): counters, version(s), initialization and the rollout conditions."""
    reps = m.replicas(kcp, 1)
    total = len(machines)
    ready = _count(machines, "Ready")
    available = _count(machines, "Available")
    up_to_date = sum(1 for x in machines if m.name(x) in up_to_date_names)
    initialized = bool(m.dig(kcp, "status", "initialized") or m.dig(kcp, "status", "initialization", "controlPlaneInitialized")
                       or ready > 0)
    versions = _versions(machines)
    lowest = min((v["version"] for v in versions), key=_version_key, default=None)
    outdated = total - up_to_date
    modern_conditions = [
        c.cond("Available", True, "Available") if ready > reps // 2 and initialized
        else c.cond("Available", False, "NotAvailable", "Control plane not yet available"),
        c.cond("CertificatesAvailable", True, "Available"),
        c.cond("EtcdClusterHealthy", True, "Healthy") if ready else c.cond("EtcdClusterHealthy", "Unknown", "HealthUnknown", "No etcd members yet"),
        c.cond("ControlPlaneComponentsHealthy", True, "Healthy") if ready
        else c.cond("ControlPlaneComponentsHealthy", "Unknown", "HealthUnknown", "No control plane Machines ready yet"),
        c.cond("Initialized", True, "Initialized") if initialized else c.cond("Initialized", False, "NotInitialized", "Control plane not yet initialized"),
        c.aggregate(machines, "Ready", "Ready", "NotReady", "ReadyUnknown", "MachinesReady"),
        c.aggregate(machines, "UpToDate", "UpToDate", "NotUpToDate", "UpToDateUnknown", "MachinesUpToDate"),
        _rolling_out(machines),
        *_scaling(total, 0 if m.deleting(kcp) else reps),
        c.cond("Remediating", False, "NotRemediating"),
        _deleting(kcp),
        paused,
    ]
    spec_up_to_date = (c.cond("MachinesSpecUpToDate", False, "RollingUpdateInProgress",
                              f"Rolling {outdated} replicas with outdated spec ({up_to_date} replicas up to date)", "Warning")
                       if outdated else c.cond("MachinesSpecUpToDate", True, ""))
    if total < reps:
        resized = c.cond("Resized", False, "ScalingUp", f"Scaling up control plane to {reps} replicas (actual {total})", "Warning")
    elif total > reps:
        resized = c.cond("Resized", False, "ScalingDown", f"Scaling down control plane to {reps} replicas (actual {total})", "Warning")
    else:
        resized = c.cond("Resized", True, "") if ready == total else c.cond("Resized", False, "WaitingForMachines", "", "Info")
    legacy_conditions = [
        c.cond("Available", True, "") if initialized else c.cond("Available", False, "WaitingForKubeadmInit", "", "Info"),
        c.cond("CertificatesAvailable", True, ""),
        c.cond("MachinesReady", True, "") if ready == total else c.cond("MachinesReady", False, "WaitingForMachines", "", "Info"),
        spec_up_to_date, resized,
    ]
    legacy_conditions.append(_summary(legacy_conditions))
    legacy = {"updatedReplicas": up_to_date, "readyReplicas": ready, "unavailableReplicas": max(total - ready, 0)}
    modern = {"readyReplicas": ready, "availableReplicas": available, "upToDateReplicas": up_to_date}
    selector = m.selector_string({"matchLabels": {m.CLUSTER_NAME: m.labels(kcp).get(m.CLUSTER_NAME) or _cluster_of(machines)},
                                  "matchExpressions": [{"key": m.CONTROL_PLANE, "operator": "Exists"}]})
    common = {"replicas": total, "selector": selector}
    if lowest:
        common["version"] = lowest
    if m.is_v1beta2(kcp):
        status = _shape(kcp, legacy_conditions, modern_conditions, now, legacy=legacy, modern={**modern, **common})
        _set_versions(status, versions)
        status["initialization"] = {"controlPlaneInitialized": initialized}
        return status
    status = _shape(kcp, legacy_conditions, modern_conditions, now, legacy={**legacy, **common}, modern=modern)
    status.update({"initialized": initialized, "ready": ready > 0})
    return status


def _cluster_of(machines):
    return next((m.labels(x).get(m.CLUSTER_NAME) for x in machines), "")


def _version_key(version):
    parts = []
    for piece in version.lstrip("v").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return parts


def kcp_up_to_date(messages):
    if messages:
        return c.cond("UpToDate", False, "NotUpToDate", "\n".join(f"* {msg}" for msg in messages))
    return c.cond("UpToDate", True, "UpToDate")


# --- Cluster ------------------------------------------------------------------------------------------------------

def cluster_status(cluster, kcp, mds, paused, now, topology=None):
    """Cluster status: Provisioned, control plane initialized/ready from the KCP, aggregated replica counters; the
    ``topology`` condition (TopologyReconciled) in both condition lists when given."""
    if kcp is not None:
        cp_initialized = bool(m.dig(kcp, "status", "initialized") or m.dig(kcp, "status", "initialization", "controlPlaneInitialized"))
        cp_ready = m.status_int(kcp, "readyReplicas") > 0
        cp_counters = {"desiredReplicas": m.replicas(kcp, 1), "replicas": m.status_int(kcp, "replicas"),
                       "readyReplicas": m.status_int(kcp, "readyReplicas"), "availableReplicas": m.status_int(kcp, "availableReplicas"),
                       "upToDateReplicas": m.status_int(kcp, "upToDateReplicas")}
    else:
        cp_initialized = cp_ready = True
        cp_counters = None
    workers = {"desiredReplicas": sum(m.replicas(md, 1) for md in mds)}
    for field in ("replicas", "readyReplicas", "availableReplicas", "upToDateReplicas"):
        workers[field] = sum(m.status_int(md, field) for md in mds)
    workers_available = all(m.condition_true(md, "Available") for md in mds)
    modern_conditions = [
        c.cond("Available", True, "Available") if cp_initialized and workers_available
        else c.cond("Available", False, "NotAvailable", "Control plane or workers not available"),
        c.cond("InfrastructureReady", True, "Ready"),
        c.cond("ControlPlaneInitialized", True, "Initialized") if cp_initialized
        else c.cond("ControlPlaneInitialized", False, "NotInitialized", "Control plane not yet initialized"),
        c.cond("ControlPlaneAvailable", True, "Available") if cp_ready else c.cond("ControlPlaneAvailable", False, "NotAvailable"),
        c.cond("WorkersAvailable", True, "Available") if workers_available else c.cond("WorkersAvailable", False, "NotAvailable"),
        _deleting(cluster),
        paused,
    ] + ([topology] if topology else [])
    legacy_conditions = [
        c.cond("InfrastructureReady", True, ""),
        c.cond("ControlPlaneInitialized", True, "") if cp_initialized
        else c.cond("ControlPlaneInitialized", False, "WaitingForControlPlaneProviderInitialized", "", "Info"),
        c.cond("ControlPlaneReady", True, "") if cp_ready else c.cond("ControlPlaneReady", False, "WaitingForControlPlane", "", "Info"),
    ]
    legacy_conditions.append(_summary(legacy_conditions))
    if topology:  # after the Ready summary, which does not count it (v1.10.10 topology/cluster/conditions.go)
        legacy_conditions.append(c.cond("TopologyReconciled", True, "") if topology["status"] == "True" else
                                 c.cond("TopologyReconciled", False, "TopologyReconcileFailed", topology["message"], "Error"))
    phase = "Deleting" if m.deleting(cluster) else "Provisioned"
    modern = {"workers": workers}
    if cp_counters:
        modern["controlPlane"] = cp_counters
    if m.is_v1beta2(cluster):
        status = _shape(cluster, legacy_conditions, modern_conditions, now, modern=modern)
        status["initialization"] = {"infrastructureProvisioned": True, "controlPlaneInitialized": cp_initialized}
        status["phase"] = phase
        return status
    return _shape(cluster, legacy_conditions, modern_conditions, now, modern=modern,
                  legacy={"phase": phase, "infrastructureReady": True, "controlPlaneReady": cp_ready})


def with_paused(obj, paused, now):
    """The current status with only the Paused condition refreshed: all a paused object's reconcile does (§3.1)."""
    status = dict(obj.get("status") or {})
    if m.is_v1beta2(obj):
        holder = status
    else:
        holder = status["v1beta2"] = dict(status.get("v1beta2") or {})
    existing = holder.get("conditions") or []
    refreshed = c.merge_v1beta2(existing, [paused], m.generation(obj), now)
    holder["conditions"] = c.ordered_v1beta2([x for x in existing if x.get("type") != "Paused"] + refreshed)
    return status
