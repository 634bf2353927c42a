"""MachineDeployment decisions (reference §3): which MachineSet is new, revisions, and how far to scale each MachineSet.

Pure functions over the objects as the API returns them. The rollout maths is that of CAPI v1.10
(``machinedeployment_rolling.go``: imperative, new MS first) or of v1.14 (the rollout planner, with its worst-case
availability check and deadlock breaker), selected by ``capi_version``; both produce the golden traces of §3.7.
"""

import copy

from . import fenceposts
from . import model as m
from . import names

# MD annotations that are not copied to MachineSets (mdutil annotationsToSkip).
_ANNOTATIONS_TO_SKIP = (m.LAST_APPLIED, m.REVISION, m.REVISION_HISTORY, m.DESIRED_REPLICAS, m.MAX_REPLICAS,
                        m.CONVERSION_DATA)


def spec_replicas(ms):
    return m.replicas(ms)


def status_replicas(ms):
    return m.status_int(ms, "replicas")


def _by_creation(mss):
    return sorted(mss, key=lambda ms: (m.created(ms), m.name(ms)))


def _by_decreasing_replicas(mss):
    return sorted(mss, key=lambda ms: (-spec_replicas(ms), m.created(ms), m.name(ms)))


def _surge_unavailable(md):
    strategy_type, surge, unavailable = m.md_strategy(md)
    reps = m.replicas(md, 1)
    return (fenceposts.max_surge(strategy_type, surge, unavailable, reps),
            fenceposts.max_unavailable(strategy_type, surge, unavailable, reps))


# --- §3.2 template comparison -------------------------------------------------------------------------------------

def _ref_text(ref):
    return f"{ref[1]} {ref[2]}" if ref else " "


def template_up_to_date(current_spec, desired_spec):
    """(up_to_date, log_messages, condition_messages) for two machine template specs (MachineTemplateUpToDate)."""
    cur, des = m.rollout_identity(current_spec), m.rollout_identity(desired_spec)
    logs, conds = [], []
    if cur["version"] != des["version"]:
        logs.append(f"spec.version {cur['version']}, {des['version']} required")
        conds.append(f"Version {cur['version']}, {des['version']} required")
    if cur["bootstrap"] != des["bootstrap"]:
        if "configRef" in cur["bootstrap"]:
            cur_ref, des_ref = cur["bootstrap"]["configRef"], des["bootstrap"].get("configRef")
            logs.append(f"spec.bootstrap.configRef {_ref_text(cur_ref)}, {_ref_text(des_ref)} required")
            conds.append(f"{cur_ref[1].removesuffix('Template')} is not up-to-date")
        else:
            text = (f"spec.bootstrap.dataSecretName {cur['bootstrap'].get('dataSecretName') or 'nil'}, "
                    f"{des['bootstrap'].get('dataSecretName') or 'nil'} required")
            logs.append(text)
            conds.append(text)
    if cur["infrastructureRef"] != des["infrastructureRef"]:
        cur_ref, des_ref = cur["infrastructureRef"], des["infrastructureRef"]
        logs.append(f"spec.infrastructureRef {_ref_text(cur_ref)}, {_ref_text(des_ref)} required")
        conds.append(f"{(cur_ref or ('', '', ''))[1].removesuffix('Template')} is not up-to-date")
    if cur["failureDomain"] != des["failureDomain"]:
        logs.append(f"spec.failureDomain {cur['failureDomain']}, {des['failureDomain']} required")
        conds.append(f"Failure domain {cur['failureDomain']}, {des['failureDomain']} required")
    return not logs, logs, conds


def rollout_after_expired(md, ms, now, same_second_expires=False):
    """True when spec.rolloutAfter / spec.rollout.after has passed and ``ms`` was created before it.

    ``same_second_expires``: an MS created in the rolloutAfter second counts as created before it, as
    the Machine UpToDate check of releases with upstream bug #13182 does (capisim.releases bug_13182)."""
    after = m.md_rollout_after(md)
    if not after or not after < now:
        return False
    return m.created(ms) <= after if same_second_expires else m.created(ms) < after


def find_new_and_old(md, mss, now):
    """(new_ms or None, old_mss, create_reason) per FindNewAndOldMachineSets (reference §3.2/§3.3)."""
    if not mss:
        return None, [], "no MachineSets exist for the MachineDeployment"
    desired = m.template_spec(md)
    after = m.md_rollout_after(md)
    candidates, old, diffs = [], [], []
    for ms in _by_decreasing_replicas(mss):
        up_to_date, logs = template_up_to_date(m.template_spec(ms), desired)[:2]
        if up_to_date:
            candidates.append(ms)
            continue
        old.append(ms)
        if rollout_after_expired(md, ms, now):
            logs = logs + ["MachineDeployment spec.rolloutAfter expired"]
        diffs.append(f"MachineSet {m.name(ms)} needs rollout: {', '.join(logs)}")
    if not candidates:
        return None, old, f"couldn't find MachineSet matching MachineDeployment spec template: {'; '.join(diffs)}"
    if after is None or now < after:
        return candidates[0], old + candidates[1:], ""
    new = None
    for ms in candidates:
        # ">=": a MachineSet created in the same second as rolloutAfter counts as new (#12260).
        if new is None and m.created(ms) >= after:
            new = ms
        else:
            old.append(ms)
    if new is None:
        field = "spec.rollout.after" if m.is_v1beta2(md) else "RolloutAfter"
        return None, old, f"{field} on MachineDeployment set to {m.format_time(after)}, no MachineSet has been created afterwards"
    return new, old, ""


# --- §3.5 revisions -----------------------------------------------------------------------------------------------

def _revision(ms):
    try:
        return int(m.annotations(ms).get(m.REVISION, "0"))
    except ValueError:
        return 0  # unparsable revisions are skipped (MaxRevision logs and ignores them)


def compute_revision_annotations(new_ms, old_mss):
    """({revision, revision-history}, revision) for the new MS: max(old)+1, never decreased, history appended."""
    new_revision = str(max([0] + [_revision(ms) for ms in old_mss]) + 1)
    out = {}
    if new_ms is not None:
        current = m.annotations(new_ms).get(m.REVISION)
        if current is not None and int(new_revision) < int(current):
            new_revision = current
        history = m.annotations(new_ms).get(m.REVISION_HISTORY)
        if history is not None:
            out[m.REVISION_HISTORY] = history
        if current is not None and current != new_revision:
            out[m.REVISION_HISTORY] = f"{history},{current}" if history else current
    out[m.REVISION] = new_revision
    return out, new_revision


def ms_annotations_from_md(md):
    """MD annotations minus the skip list, plus desired-replicas and max-replicas."""
    out = {k: v for k, v in m.annotations(md).items() if k not in _ANNOTATIONS_TO_SKIP}
    surge = _surge_unavailable(md)[0]
    reps = m.replicas(md, 1)
    out[m.DESIRED_REPLICAS] = str(reps)
    out[m.MAX_REPLICAS] = str(reps + surge)
    return out


# --- §3.4 / §3.6 desired MachineSets ------------------------------------------------------------------------------

def _set_in_place_fields(md, ms):
    """Copy the in-place mutable fields of the MD onto ``ms`` (labels, annotations, timeouts, minReadySeconds ...)."""
    spec = ms.setdefault("spec", {})
    md_tmpl = m.dig(md, "spec", "template", default={})
    tmpl_meta = md_tmpl.get("metadata") or {}
    hash_value = m.labels(ms)[m.TEMPLATE_HASH]
    ms_labels = dict(tmpl_meta.get("labels") or {})
    ms_labels[m.TEMPLATE_HASH] = hash_value
    ms_labels[m.DEPLOYMENT_NAME] = m.name(md)
    ms["metadata"]["labels"] = ms_labels
    tmpl_labels = dict(tmpl_meta.get("labels") or {})
    tmpl_labels[m.TEMPLATE_HASH] = hash_value
    template = spec.setdefault("template", {})
    template["metadata"] = {"labels": tmpl_labels}
    if tmpl_meta.get("annotations"):
        template["metadata"]["annotations"] = dict(tmpl_meta["annotations"])
    md_spec = md_tmpl.get("spec") or {}
    ms_spec = template.setdefault("spec", {})
    if m.is_v1beta2(md):
        fields = ("minReadySeconds", "readinessGates", "deletion", "taints")
        m.copy_or_drop(m.dig(md, "spec", "deletion", "order"), spec.setdefault("deletion", {}), "order")
        if not spec["deletion"]:
            del spec["deletion"]
        m.copy_or_drop(m.dig(md, "spec", "machineNaming"), spec, "machineNaming")
    else:
        fields = ("readinessGates", "nodeDrainTimeout", "nodeDeletionTimeout", "nodeVolumeDetachTimeout")
        m.copy_or_drop(m.dig(md, "spec", "minReadySeconds"), spec, "minReadySeconds")
        m.copy_or_drop(m.md_deletion_order(md), spec, "deletePolicy")
        m.copy_or_drop(m.dig(md, "spec", "machineNamingStrategy"), spec, "machineNamingStrategy")
    for field in fields:
        m.copy_or_drop(md_spec.get(field), ms_spec, field)


def new_machine_set(md, now, rng):
    """The MS to create for the MD's current template (§3.4); replicas are set by the caller's plan."""
    ms_name, suffix = names.generate_name(f"{m.name(md)}-", rng)
    hash_value = f"{names.template_hash(m.rollout_identity(m.template_spec(md)))}-{suffix}"
    ms = {
        "apiVersion": md["apiVersion"],
        "kind": "MachineSet",
        "metadata": {
            "name": ms_name,
            "namespace": m.namespace(md),
            "labels": {m.TEMPLATE_HASH: hash_value},
            "annotations": {},
            "ownerReferences": [m.owner_reference(md, controller=True)],
            # Only used by the planner until the server sets the real one.
            "creationTimestamp": m.format_time(now),
        },
        "spec": {
            "clusterName": m.dig(md, "spec", "clusterName"),
            "replicas": 0,
            "selector": m.selector_with(m.dig(md, "spec", "selector"), m.TEMPLATE_HASH, hash_value),
            "template": {"spec": copy.deepcopy(m.template_spec(md))},
        },
    }
    _set_in_place_fields(md, ms)
    return ms


def desired_machine_sets(md, new_ms, old_mss, capi_version, now, rng, create=True):
    """(new, olds, revision): desired copies of the MSs with in-place fields and annotations applied.

    When no MS matches the template, ``new`` is a MachineSet to create (without ``metadata.uid``), or None if
    ``create`` is false (paused MD). v1.10 propagates in-place fields and MD annotations to the new MS only; v1.14
    to every MS. ``revision`` is what the MD's revision annotation becomes."""
    on_delete = m.md_strategy(md)[0] == "OnDelete"
    olds = []
    for ms in old_mss:
        desired = copy.deepcopy(ms)
        ann = desired["metadata"].setdefault("annotations", {})
        if capi_version == "v1.14":
            _set_in_place_fields(md, desired)
            keep = {k: ann[k] for k in (m.REVISION, m.REVISION_HISTORY, m.ACKNOWLEDGED_MOVE) if k in ann}
            ann = desired["metadata"]["annotations"] = {**ms_annotations_from_md(md), **keep}
            ann[m.DISABLE_MACHINE_CREATE] = "true" if on_delete else "false"
        elif on_delete:
            ann[m.DISABLE_MACHINE_CREATE] = "true"
        olds.append(desired)
    if new_ms is None and not create:
        # v1.14 surfaces the (empty) revision of the missing new MS on the MD; v1.10 leaves the MD alone.
        return None, olds, "" if capi_version == "v1.14" else m.annotations(md).get(m.REVISION)
    desired_new = new_machine_set(md, now, rng) if new_ms is None else copy.deepcopy(new_ms)
    _set_in_place_fields(md, desired_new)
    revision_annotations, revision = compute_revision_annotations(new_ms, old_mss)
    if capi_version == "v1.14":
        acknowledged = m.annotations(desired_new).get(m.ACKNOWLEDGED_MOVE)
        ann = desired_new["metadata"]["annotations"] = ms_annotations_from_md(md)
        ann[m.DISABLE_MACHINE_CREATE] = "false"
        if acknowledged:
            ann[m.ACKNOWLEDGED_MOVE] = acknowledged
    else:
        ann = desired_new["metadata"].setdefault("annotations", {})
        ann.pop(m.REVISION_HISTORY, None)
        ann.update(ms_annotations_from_md(md))
        ann.pop(m.DISABLE_MACHINE_CREATE, None)
    ann.update(revision_annotations)
    return desired_new, olds, revision


def apply_intents(md, mss, intents, capi_version):
    """Put the planned replicas on the desired MSs; v1.10's scaleMachineSet also refreshes desired/max-replicas."""
    replica_annotations = {k: v for k, v in ms_annotations_from_md(md).items() if k in (m.DESIRED_REPLICAS, m.MAX_REPLICAS)}
    for ms in mss:
        if m.name(ms) not in intents:
            continue
        ms["spec"]["replicas"] = intents[m.name(ms)]
        if capi_version == "v1.10":
            ms["metadata"].setdefault("annotations", {}).update(replica_annotations)


# --- §3.7 RollingUpdate -------------------------------------------------------------------------------------------

def total_replica_sum(mss, intents=None):
    """Σ max(spec, status): never exceed spec.replicas + maxSurge while Machines are still coming or going."""
    intents = intents or {}
    return sum(max(intents.get(m.name(ms), spec_replicas(ms)), status_replicas(ms)) for ms in mss)


def new_ms_new_replicas(md, all_mss, new_replicas):
    """NewMSNewReplicas: how far the new MS may grow now (RollingUpdate: up to replicas+maxSurge machines)."""
    strategy_type, surge = m.md_strategy(md)[:2]
    reps = m.replicas(md, 1)
    current = total_replica_sum(all_mss)
    if strategy_type == "OnDelete":
        return new_replicas if current >= reps else new_replicas + reps - current
    max_total = reps + fenceposts.scaled_value(surge, reps, True)
    if current >= max_total:
        return new_replicas
    return new_replicas + min(max_total - current, reps - new_replicas)


def _scale_new(md, new_ms, all_mss):
    reps = m.replicas(md, 1)
    current = spec_replicas(new_ms)
    if current == reps:
        return current
    if current > reps:
        return reps
    return new_ms_new_replicas(md, all_mss, current)


def plan_rolling_update(md, new_ms, old_mss, capi_version):
    """{ms name: new spec.replicas} for one RollingUpdate reconcile; names absent keep their replicas."""
    all_mss = old_mss + [new_ms]
    intents = {}
    target = _scale_new(md, new_ms, all_mss)
    if target != spec_replicas(new_ms):
        intents[m.name(new_ms)] = target
    if capi_version == "v1.14":
        _old_rolling_v114(md, new_ms, old_mss, intents)
        _deadlock_breaker(new_ms, old_mss, intents)
    else:
        _old_rolling_v110(md, new_ms, old_mss, intents)
    return intents


def _old_rolling_v110(md, new_ms, old_mss, intents):
    """reconcileOldMachineSets (v1.10): clean up unhealthy replicas, then scale down within maxUnavailable."""
    spec = {m.name(ms): intents.get(m.name(ms), spec_replicas(ms)) for ms in old_mss + [new_ms]}
    if sum(spec[m.name(ms)] for ms in old_mss) == 0:
        return
    unavailable = _surge_unavailable(md)[1]
    min_available = m.replicas(md, 1) - unavailable
    new_unavailable = spec[m.name(new_ms)] - m.ms_available(new_ms)
    max_scaled_down = sum(spec.values()) - min_available - new_unavailable
    if max_scaled_down <= 0:
        return
    olds = _by_creation(old_mss)
    cleaned = 0
    for ms in olds:
        current, available = spec[m.name(ms)], m.ms_available(ms)
        if cleaned >= max_scaled_down:
            break
        if current == 0 or current <= available:
            continue
        step = min(max_scaled_down - cleaned, current - available)
        spec[m.name(ms)] = current - step
        cleaned += step
    total_available = sum(m.ms_available(ms) for ms in old_mss + [new_ms])
    if total_available > min_available:
        budget, done = total_available - min_available, 0
        for ms in olds:
            if done >= budget:
                break
            if spec[m.name(ms)] == 0:
                continue
            step = min(spec[m.name(ms)], budget - done)
            spec[m.name(ms)] -= step
            done += step
    for ms in old_mss:
        if spec[m.name(ms)] != spec_replicas(ms):
            intents[m.name(ms)] = spec[m.name(ms)]


def _old_rolling_v114(md, new_ms, old_mss, intents):
    """reconcileOldMachineSetsRollingUpdate (v1.12+): assume the worst case, i.e. that deletions hit available Machines."""
    if sum(spec_replicas(ms) for ms in old_mss) == 0:
        return
    unavailable = _surge_unavailable(md)[1]
    min_available = max(m.replicas(md, 1) - unavailable, 0)
    all_mss = old_mss + [new_ms]
    total_spec = sum(spec_replicas(ms) for ms in all_mss)
    total_available = sum(m.ms_available(ms) for ms in all_mss)
    pending = 0
    for ms in all_mss:
        intent = min(spec_replicas(ms), intents.get(m.name(ms), spec_replicas(ms)))
        if intent < status_replicas(ms):
            pending += status_replicas(ms) - intent
    new_unavailable = max(spec_replicas(new_ms) - m.ms_available(new_ms), 0)
    budget = max(total_spec - pending - min_available - new_unavailable, 0)
    if budget <= 0:
        return
    olds = _by_creation(old_mss)
    budget, total_available = _scale_down_old(olds, intents, budget, total_available, min_available, True)
    _scale_down_old(olds, intents, budget, total_available, min_available, False)


def _scale_down_old(olds, intents, budget, total_available, min_available, only_unavailable):
    for ms in olds:
        if budget <= 0:
            break
        current = intents.get(m.name(ms), spec_replicas(ms))
        if current <= 0:
            continue
        available, existing = m.ms_available(ms), status_replicas(ms)
        step = min(max(current - available, 0) if only_unavailable else current, budget)
        if step == 0:
            continue
        if available > 0:
            to_delete = max(existing - max(current - step, 0), 0)
            if to_delete > 0:
                if total_available - min_available < to_delete:
                    revisited = min(existing - max(total_available - min_available, 0), current)
                    step = max(current - revisited, 0)
                    to_delete = max(existing - revisited, 0)
                total_available -= min(available, to_delete)
        if step > 0:
            intents[m.name(ms)] = max(current - step, 0)
            budget = max(budget - step, 0)
    return budget, total_available


def _deadlock_breaker(new_ms, old_mss, intents):
    """v1.12+: old MSs stuck with unavailable Machines while nothing scales: scale the first one down by 1."""
    old_existing = sum(status_replicas(ms) for ms in old_mss)
    if old_existing == 0 or old_existing == sum(m.ms_available(ms) for ms in old_mss):
        return
    for ms in old_mss + [new_ms]:
        if spec_replicas(ms) != status_replicas(ms) or m.name(ms) in intents:
            return
    if m.ms_available(new_ms) != status_replicas(new_ms):
        return
    for ms in _by_creation(old_mss):
        if m.ms_available(ms) == status_replicas(ms) or spec_replicas(ms) == 0:
            continue
        intents[m.name(ms)] = max(spec_replicas(ms) - 1, 0)
        return


# --- in-place updates (v1.12+, feature gate InPlaceUpdates) ------------------------------------------------------

def in_place_candidates(md, new_ms, old_mss, now, accepts):
    """Names of the old MSs whose Machines may be moved to ``new_ms`` and updated in place (v1.12.3
    machinedeployment_rollout_rollingupdate.go reconcileInPlaceUpdateIntent): only while the new MS lacks replicas,
    old MSs that still have Machines, not created before an expired rollout trigger (FindNewAndOldMachineSets in
    mdutil/util.go: ``!ms.CreationTimestamp.After(rollout.after)``, so the trigger's own second counts as before)
    and whose difference to the MD's template the update extension accepts (CanUpdateMachineSet: here every changed
    template field is in ``accepts``; a failure-domain change never is)."""
    if spec_replicas(new_ms) >= m.replicas(md, 1):
        return []
    desired = m.rollout_identity(m.template_spec(md))
    names_ = []
    for ms in old_mss:
        if status_replicas(ms) <= 0 or rollout_after_expired(md, ms, now, same_second_expires=True):
            continue
        current = m.rollout_identity(m.template_spec(ms))
        changed = {field for field in desired if current[field] != desired[field]}
        if changed and changed <= set(accepts):
            names_.append(m.name(ms))
    return sorted(names_)


def _updates_in_progress(new_ms, old_mss, intents, machines):
    """scalingOrInPlaceUpdateInProgress: an MS scaling, or a Machine still updating in place."""
    if spec_replicas(new_ms) != status_replicas(new_ms):
        return True
    for ms in old_mss:
        if spec_replicas(ms) < status_replicas(ms) or intents.get(m.name(ms), spec_replicas(ms)) < spec_replicas(ms):
            return True
    return any(m.UPDATE_IN_PROGRESS in m.annotations(x) for x in machines)


def plan_in_place(md, new_ms, old_mss, intents, candidates, machines):
    """Mark the move (old MS: move-machines-to-machineset, new MS: receive-machines-from-machinesets) and give
    in-place updates priority over surge Machines: a scale up of the new MS that uses maxSurge is dropped, or cut to
    one Machine when nothing else moves (reconcileInPlaceUpdateIntent). Changes the desired MSs and ``intents``."""
    if not candidates:
        return
    for ms in old_mss:
        if m.name(ms) in candidates:
            ms["metadata"].setdefault("annotations", {})[m.MOVE_MACHINES_TO] = m.name(new_ms)
    new_ms["metadata"].setdefault("annotations", {})[m.RECEIVE_MACHINES_FROM] = ",".join(candidates)
    current = spec_replicas(new_ms)
    scale_up = intents.get(m.name(new_ms), current) - current
    if scale_up <= 0:
        return
    without_surge = max(scale_up - _surge_unavailable(md)[0], 0)
    if scale_up == without_surge:
        return
    if without_surge == 0 and not _updates_in_progress(new_ms, old_mss, intents, machines):
        without_surge = 1
    if without_surge == 0:
        del intents[m.name(new_ms)]
    else:
        intents[m.name(new_ms)] = current + without_surge


def acknowledge_moves(new_ms, machines):
    """Count the Machines moved into ``new_ms`` (pending-acknowledge-move) into its replicas once, and list them in
    its acknowledged-move annotation; names no longer pending leave the list (v1.12.3 machineset_types.go
    AcknowledgedMoveAnnotation, machine_types.go PendingAcknowledgeMoveAnnotation)."""
    ann = new_ms["metadata"].setdefault("annotations", {})
    known = [x for x in (ann.get(m.ACKNOWLEDGED_MOVE) or "").split(",") if x]
    pending = sorted(m.name(x) for x in machines if m.PENDING_ACKNOWLEDGE_MOVE in m.annotations(x))
    fresh = [x for x in pending if x not in known]
    new_ms["spec"]["replicas"] = spec_replicas(new_ms) + len(fresh)
    if pending:
        ann[m.ACKNOWLEDGED_MOVE] = ",".join(pending)
    else:
        ann.pop(m.ACKNOWLEDGED_MOVE, None)


# --- §3.8 OnDelete ------------------------------------------------------------------------------------------------

def plan_on_delete(md, new_ms, old_mss, capi_version, live_machines):
    """{ms name: replicas}: grow the new MS into freed slots; shrink old MSs to the Machines that still exist.

    ``live_machines`` maps an MS name to its Machines without a deletionTimestamp (v1.10 counts those)."""
    intents = {}
    target = _scale_new(md, new_ms, old_mss + [new_ms])
    if target != spec_replicas(new_ms):
        intents[m.name(new_ms)] = target
    old_total = sum(spec_replicas(ms) for ms in old_mss)
    if old_total == 0:
        return intents
    new_replicas = intents.get(m.name(new_ms), spec_replicas(new_ms))
    excess = max(old_total + new_replicas - m.replicas(md, 1), 0)
    olds = _by_creation(old_mss)
    for ms in olds:
        if spec_replicas(ms) <= 0:
            continue
        existing = len(live_machines.get(m.name(ms), [])) if capi_version == "v1.10" else status_replicas(ms)
        step = max(spec_replicas(ms) - existing, 0)
        if step > 0:
            intents[m.name(ms)] = spec_replicas(ms) - step
            excess -= step
    for ms in olds:
        if excess <= 0:
            break
        current = intents.get(m.name(ms), spec_replicas(ms))
        if current <= 0:
            continue
        step = min(current, excess)
        # v1.14 subtracts from spec.replicas, not from the first loop's intent (kept as upstream does).
        base = spec_replicas(ms) if capi_version == "v1.14" else current
        intents[m.name(ms)] = max(base - step, 0)
        excess -= step
    return intents


# --- §3.9 spec.paused: proportional scaling only ------------------------------------------------------------------

def _is_saturated(md, new_ms):
    if new_ms is None:
        return False
    reps = m.replicas(md, 1)
    desired = m.annotations(new_ms).get(m.DESIRED_REPLICAS)
    return spec_replicas(new_ms) == reps and desired == str(reps) and m.ms_available(new_ms) == reps


def plan_scale(md, new_ms, old_mss):
    """{ms name: replicas} for mdutil ``scale()``: what a paused MD still does when spec.replicas changes."""
    reps = m.replicas(md, 1)
    all_mss = old_mss + ([new_ms] if new_ms is not None else [])
    active = [ms for ms in all_mss if spec_replicas(ms) > 0]
    if not all_mss:
        return {}
    if len(active) <= 1:
        target = active[0] if active else (new_ms if new_ms is not None else _by_creation(old_mss)[-1])
        return {} if spec_replicas(target) == reps else {m.name(target): reps}
    if _is_saturated(md, new_ms):
        return {m.name(ms): 0 for ms in old_mss if spec_replicas(ms) > 0}
    if m.md_strategy(md)[0] != "RollingUpdate":
        return {}
    surge = _surge_unavailable(md)[0]
    allowed = reps + surge if reps > 0 else 0
    to_add = allowed - sum(spec_replicas(ms) for ms in active)
    if to_add == 0:
        return {}
    # Bigger first; ties: newer first when growing, older first when shrinking.
    newest_first = to_add > 0
    active.sort(key=lambda ms: (-spec_replicas(ms), -m.created(ms).timestamp() if newest_first else m.created(ms).timestamp()))
    sizes, added = {}, 0
    for ms in active:
        proportion = _proportion(md, ms, to_add, added, surge)
        sizes[m.name(ms)] = spec_replicas(ms) + proportion
        added += proportion
    first = m.name(active[0])
    sizes[first] = max(sizes[first] + to_add - added, 0)
    return {m.name(ms): sizes[m.name(ms)] for ms in active if sizes[m.name(ms)] != spec_replicas(ms)}


def _proportion(md, ms, to_add, added, surge):
    if spec_replicas(ms) == 0 or to_add == added:
        return 0
    reps = m.replicas(md, 1)
    if reps == 0:
        fraction = -spec_replicas(ms)
    else:
        try:
            annotated = int(m.annotations(ms).get(m.MAX_REPLICAS, ""))
        except ValueError:
            annotated = m.status_int(md, "replicas")
        fraction = _round_half_away(spec_replicas(ms) * (reps + surge) / annotated) - spec_replicas(ms) if annotated else 0
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _round_half_away(value):
    """integer.RoundToInt32: halves round away from zero (Python's round() goes to even)."""
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)


# --- §3.10 / §3.11 ------------------------------------------------------------------------------------------------

def deployment_complete(desired, replicas_, up_to_date, available, observed_generation, generation_):
    """mdutil.DeploymentComplete: every desired replica up to date and available, no old Machines left, spec observed."""
    return (up_to_date == desired and replicas_ == desired and available == desired
            and observed_generation >= generation_)


def machine_sets_to_clean_up(md, old_mss):
    """Old MSs to delete once the rollout completed: v1.10 keeps revisionHistoryLimit of them, v1.14 none."""
    alive = _by_creation([ms for ms in old_mss if not m.deleting(ms)])
    limit = m.md_revision_history_limit(md)
    window = alive if limit is None else alive[:max(len(alive) - limit, 0)]
    return [ms for ms in window
            if spec_replicas(ms) == 0 and status_replicas(ms) == 0
            and m.generation(ms) <= m.dig(ms, "status", "observedGeneration", default=0)]


# --- one reconcile ------------------------------------------------------------------------------------------------

class Plan:
    """The MachineSet side of one MD reconcile: desired MSs (replicas applied) and what the MD records."""

    def __init__(self, new, olds, created, revision, create_reason):
        self.new, self.olds, self.created = new, olds, created
        self.revision, self.create_reason = revision, create_reason

    def writes(self):
        """Desired MSs in write order: the new MS first, then old MSs oldest first (as both controllers log them)."""
        return ([self.new] if self.new is not None else []) + _by_creation(self.olds)


def plan_reconcile(md, mss, capi_version, now, rng, live_machines=None, template_exists=True, in_place_accepts=None):
    """Plan one MD reconcile over its MachineSets (§3.1 step 6): sync when spec.paused, else rollout by strategy.

    A missing new MS is created unless the MD is paused or its templates do not exist (then nothing is planned
    for it and ``create_reason`` says why a rollout is pending). ``in_place_accepts`` (a list): InPlaceUpdates is
    on and the update extension accepts changes of these template fields (RollingUpdate only, as upstream)."""
    new, old, reason = find_new_and_old(md, mss, now)
    paused = m.md_paused(md)
    create = not paused and template_exists
    desired_new, desired_olds, revision = desired_machine_sets(md, new, old, capi_version, now, rng, create=create)
    in_place = in_place_accepts is not None and desired_new is not None and capi_version == "v1.14"
    if in_place and new is not None:
        acknowledge_moves(desired_new, (live_machines or {}).get(m.name(new), []))
    if desired_new is None:
        intents = plan_scale(md, None, desired_olds) if paused else {}
    elif paused:
        intents = plan_scale(md, desired_new, desired_olds)
    elif m.md_strategy(md)[0] == "OnDelete":
        intents = plan_on_delete(md, desired_new, desired_olds, capi_version, live_machines or {})
    else:
        intents = plan_rolling_update(md, desired_new, desired_olds, capi_version)
        if in_place:
            candidates = in_place_candidates(md, desired_new, desired_olds, now, in_place_accepts)
            plan_in_place(md, desired_new, desired_olds, intents, candidates,
                          [x for xs in (live_machines or {}).values() for x in xs])
    apply_intents(md, ([desired_new] if desired_new is not None else []) + desired_olds, intents, capi_version)
    return Plan(desired_new, desired_olds, new is None and desired_new is not None, revision, reason)
