# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan a restart (or scheduled restart, or infrastructure template switch) of an MD or KCP.

Like clusterctl's ObjectRestarter (rollout_restarter.go): a patch that sets rolloutAfter
(v1beta1 ``spec.rolloutAfter``, v1beta2 ``spec.rollout.after``) to now, refused for paused objects and
while a future trigger is pending. Additions: scheduling a future time, switching the
infrastructure template, ``force`` to replace a pending trigger, Cluster pause checks,
idempotence by ``rollout_id`` recorded in an annotation, and a rollout history entry
(core.history) written in the same patch.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import collections
import datetime

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import diff as diffs
from ansible_collections.capi.rollout.plugins.module_utils.core import drains
from ansible_collections.capi.rollout.plugins.module_utils.core import guards
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import inplace
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import plan as plans
from ansible_collections.capi.rollout.plugins.module_utils.core import record as records
from ansible_collections.capi.rollout.plugins.module_utils.core import resource_info
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import topology as topologies
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref

RESTARTED = "restarted"
SCHEDULED = "scheduled"
# Recorded actions a repeated rollout_id of a restart matches.
ACTIONS = (RESTARTED, SCHEDULED)


def means_now(after):
    """True for an ``after`` that asks for a restart now (None or "now")."""
    return after is None or (isinstance(after, str) and after.strip().lower() == "now")


def trigger_for_now(now):
    """The rolloutAfter that means "now": one whole second before the server's current second.

    ``now`` is the API server's time (client.serverclock). CAPI v1.10.x-v1.12.3 never mark the
    Machines of a MachineSet created in the rolloutAfter second up to date while the field is set
    (upstream #13182: v1.10.10 internal/controllers/machineset/machineset_controller.go
    ``!ms.CreationTimestamp.After(rolloutAfter)``, fixed in v1.12.4/v1.13 by PR #13404), so the
    rollout would never finish there; a MachineSet created after this write is always in a later second.
    """
    return timeutil.truncate_seconds(now) - datetime.timedelta(seconds=1)


def effective_from(obj, machine_sets, machines):
    """The earliest server time at which trigger_for_now replaces every MachineSet (MachineDeployment) or Machine
    (KubeadmControlPlane) ``obj`` owns; None when it owns none (or they were not read).

    Every supported release keeps what was created at or after the trigger, at second precision: the MachineSet
    with the current template as the new one (``ms.CreationTimestamp.Sub(after) >= 0`` in FindNewMachineSet,
    cluster-api v1.10.10 internal/controllers/machinedeployment/mdutil/util.go, and in FindNewAndOldMachineSets,
    v1.12.3 there and v1.14.0 core/reconcilers/machinedeployment/mdutil/util.go ``!ms.CreationTimestamp.Before(after)``),
    an older MachineSet as eligible for in-place updates (``!ms.CreationTimestamp.After(after)`` makes it ineligible,
    v1.12.3; ``Before`` in v1.14.0), and the Machines of a KubeadmControlPlane (ShouldRolloutAfter:
    ``machine.CreationTimestamp.Before(rolloutAfter)``, util/collections/machine_filters.go, v1.10.10 and v1.14.0).
    So the trigger must lie a whole second after the newest creation, and as it is one second before the server's
    second, the server must be two seconds past it. Objects being deleted need no replacing."""
    kind = apiversion.rollout_kind(obj.get("kind"))
    if kind == apiversion.MACHINE_DEPLOYMENT:
        owned = hist.owned_machine_sets(obj, machine_sets)
    else:
        owned = resource_info.owned_machines(obj, kind, machines)
    created = [timeutil.parse_optional(paths.get_path(item, "metadata.creationTimestamp")) for item in owned
               if not paths.get_path(item, "metadata.deletionTimestamp")]
    created = [when for when in created if when is not None]
    return max(created) + datetime.timedelta(seconds=2) if created else None


def is_past(after, now):
    """True for an explicit RFC 3339 ``after`` at or before ``now`` (False for None, "now" and bad input)."""
    if means_now(after):
        return False
    parsed = timeutil.parse_optional(after)
    return parsed is not None and parsed <= timeutil.to_utc(now)


def parse_after(after, ref=None):
    """The explicit trigger time ``after`` asks for, to the second; None for None and "now"; RolloutError for anything
    else. It needs no object: the input gate runs it before any request (flows.restart.refuse_early)."""
    if means_now(after):
        return None
    try:
        return timeutil.truncate_seconds(timeutil.parse_time(after))
    except ValueError:
        raise RolloutError(f"after {after!r} is neither 'now' nor an RFC 3339 time", ref=ref,
                           hint="give after: 'now' or an RFC 3339 time such as 2026-01-02T03:04:05Z", reason=inputs.INVALID_AFTER)


def _resolve_after(after, now, ref):
    """Target trigger time: trigger_for_now for None/"now", else the parsed RFC 3339 time (second precision)."""
    explicit = parse_after(after, ref)
    return trigger_for_now(now) if explicit is None else explicit


def refuse_reference(requested, option="infrastructure_ref", ref=None):
    """RolloutError for what is wrong with the template reference ``requested`` (a name or {name, kind?, api_group?,
    ...}) whatever the object: no name, or an ``api_group`` of Cluster API itself. The input gate runs it for
    ``infrastructure_ref`` and each ``switches[].infrastructure_ref`` before any request; what defaults from the
    object's current reference (kind, api_group) is checked per object (_target_ref)."""
    name = requested if isinstance(requested, str) else requested.get("name") if isinstance(requested, dict) else None
    if not name:
        raise RolloutError(f"{option} {requested!r} has no name", ref=ref, reason=inputs.INVALID_INFRASTRUCTURE_REF,
                           hint=f"give {option}.name, the template's name (kind and api_group default to the object's current ones)")
    if isinstance(requested, dict):
        _refuse_capi_group(requested.get("kind"), name, requested.get("api_group"), ref, option)


def _refuse_capi_group(kind, name, group, ref, option="infrastructure_ref"):
    if group in apiversion.CAPI_OWN_GROUPS:
        raise RolloutError(
            f"{option} names {kind} {name} ({group}), which is no infrastructure machine template: {group} is a group of "
            "Cluster API itself", ref=ref, reason=inputs.NOT_A_TEMPLATE,
            hint="give a *MachineTemplate of the infrastructure provider (api_group infrastructure.cluster.x-k8s.io, for "
                 f"example DockerMachineTemplate or AWSMachineTemplate) in {option}")


def _target_ref(requested, current, ref):
    """Normalized {api_group, kind, name[, api_version]} the user asked for; kind/group default to current."""
    refuse_reference(requested, ref=ref)
    if isinstance(requested, str):
        requested = {"name": requested}
    current = current or {}
    target = {
        "api_group": requested.get("api_group") or current.get("api_group"),
        "kind": requested.get("kind") or current.get("kind"),
        "name": requested["name"],
    }
    # these need the object: kind and group default to its current reference
    if not target["kind"] or target["api_group"] is None:
        raise RolloutError("infrastructure_ref needs kind and api_group: the object has no current reference to copy them from",
                           ref=ref, hint="give infrastructure_ref.kind and infrastructure_ref.api_group",
                           reason=inputs.INVALID_INFRASTRUCTURE_REF)
    _refuse_capi_group(target["kind"], target["name"], target["api_group"], ref)
    if requested.get("api_version"):
        target["api_version"] = requested["api_version"]
    return target


def _topology_after_warning(obj, kind, cluster):
    """On v1.13+ a Cluster topology may set rollout.after itself; its value then wins over ours."""
    if cluster is None:
        return None
    topology = paths.get_path(cluster, "spec.topology", {}) or {}
    if kind == apiversion.KUBEADM_CONTROL_PLANE:
        after = paths.get_path(topology, "controlPlane.rollout.after")
    else:
        topo_name = (paths.get_path(obj, "metadata.labels", {}) or {}).get(keys.TOPOLOGY_DEPLOYMENT_NAME_LABEL)
        after = None
        for entry in paths.get_path(topology, "workers.machineDeployments", []) or []:
            if entry.get("name") == topo_name:
                after = paths.get_path(entry, "rollout.after")
    if after:
        return (f"the Cluster topology sets rollout.after={after} for this object and the topology controller re-applies it; "
                "set it in Cluster spec.topology instead")
    return None


def _switch_template(obj, kind, version, ref, changes, infrastructure_ref):
    """Record the infrastructureRef change; returns the new normalized reference or None when equal."""
    path = apiversion.spec_path(kind, version, "infrastructure_ref")
    current_raw = paths.get_path(obj, path, {}) or {}
    current = apiversion.normalize_ref(current_raw)
    target = _target_ref(infrastructure_ref, current, ref)
    wanted = {k: target[k] for k in ("api_group", "kind", "name")}
    if wanted == current:
        return None
    guards.refuse_topology_owned(obj, kind, ref)
    try:
        new_raw = apiversion.ref_for_api(target, version, current=current_raw)
    except ValueError as exc:
        raise RolloutError(str(exc), ref=ref, hint="give infrastructure_ref.api_version (group/version) for v1beta1 objects",
                           reason=inputs.INVALID_INFRASTRUCTURE_REF)
    for key, value in new_raw.items():
        changes.add(paths.split_path(path) + (key,), current_raw.get(key), value)
    # Identity fields of an ObjectReference belong to the old object; leaving them would point at it.
    for stale in ("uid", "resourceVersion", "fieldPath"):
        if current_raw.get(stale) is not None:
            changes.add(paths.split_path(path) + (stale,), current_raw.get(stale), None)
    return wanted


def _rolls_nothing(obj, kind, version, after, machine_sets, machines):
    """Why a past ``after`` rolls no Machine, or None when it does (or it cannot be told).

    CAPI replaces only what was created before rolloutAfter: an MD keeps the MachineSet with the
    current template created at or after it (mdutil.FindNewMachineSet, v1.10.10 mdutil/util.go), a KCP
    the Machines created at or after it (v1.10.10 controlplane/kubeadm/internal/filters.go)."""
    if kind == apiversion.MACHINE_DEPLOYMENT:
        if machine_sets is None:
            return None
        desired = tmpl.identity(paths.get_path(obj, "spec.template.spec", {}))
        for ms in hist.owned_machine_sets(obj, machine_sets):
            created = timeutil.parse_optional(paths.get_path(ms, "metadata.creationTimestamp"))
            if created is not None and created >= after and \
                    tmpl.up_to_date(tmpl.identity(paths.get_path(ms, "spec.template.spec", {})), desired):
                return (f"MachineSet {paths.get_path(ms, 'metadata.name')} with the current template was created at "
                        f"{timeutil.format_time(created)}, not before {timeutil.format_time(after)}")
        return None
    if machines is None:
        return None
    owned = resource_info.owned_machines(obj, kind, machines)
    created = [timeutil.parse_optional(paths.get_path(m, "metadata.creationTimestamp")) for m in owned]
    if owned and all(when is not None and when >= after for when in created):
        return f"all {len(owned)} control plane Machines were created at or after {timeutil.format_time(after)}"
    return None


def _replace_pending(entries, current_after, now, new_infra_ref):
    """(entries, revision): a scheduled restart that has not fired yet and is being replaced never
    produces a MachineSet, so its entry is dropped and its revision reused; else (entries, None)."""
    if new_infra_ref is not None or current_after is None or current_after <= now or not entries:
        return entries, None
    last = entries[-1]
    if last.get("action") == SCHEDULED and last.get("rollout_after") == timeutil.format_time(current_after):
        return entries[:-1], last["revision"]
    return entries, None


def _template_drift(obj, kind, version, infrastructure_ref):
    """Why the object is not on the requested template although its rollout_id was applied (someone changed
    it since), or None. A repeated id may only skip an object that is still where it put it."""
    if not infrastructure_ref:
        return None
    wanted = infrastructure_ref if isinstance(infrastructure_ref, dict) else {"name": infrastructure_ref}
    current = paths.get_path(obj, apiversion.spec_path(kind, version, "infrastructure_ref")) or {}
    if current.get("name") == wanted.get("name") and wanted.get("kind") in (None, current.get("kind")):
        return None
    return f"infrastructure template is {current.get('kind')} {current.get('name')}, not {wanted.get('name')}"


def _already_scheduled(current_after, target_after, explicit_after, now, force, after_path, ref):
    """A trigger already set in the future: the message of an unchanged plan when it is the one asked for, None
    when ``force`` replaces it; else RolloutError (upstream restart would overwrite it silently)."""
    if current_after is None or current_after <= now:
        return None
    if explicit_after and target_after == current_after:
        return f"a rollout is already scheduled for {timeutil.format_time(current_after)}"
    if force:
        return None
    raise RolloutError(
        f"a rollout is already scheduled for {timeutil.format_time(current_after)} ({after_path})", ref=ref,
        hint=f"wait for it to fire, or set force=true to replace it (clusterctl: remove '{after_path}' first)",
        reason="rollout_scheduled")


def _required_infrastructure(written, kind, version, namespace):
    """The infrastructure template the switched object points at, for the existence check before any write."""
    template_spec = paths.get_path(written, "spec.template.spec", {}) if kind == apiversion.MACHINE_DEPLOYMENT else {
        "infrastructureRef": paths.get_path(written, apiversion.spec_path(kind, version, "infrastructure_ref"))}
    return [item for item in tmpl.template_refs(template_spec, namespace) if item["role"] == "infrastructure"]


def _message(new_infra_ref, action, target_after, after_path):
    if new_infra_ref is not None:
        return f"infrastructure template switched to {new_infra_ref['kind']} {new_infra_ref['name']}, a rollout follows"
    if action == SCHEDULED:
        return f"rollout scheduled for {timeutil.format_time(target_after)} ({after_path})"
    return f"rollout triggered ({after_path}={timeutil.format_time(target_after)})"


# What plan_restart read of the object: the rolloutAfter path of its kind and API version, with its value as read.
_Read = collections.namedtuple("_Read", ("obj", "kind", "version", "ref", "after_path", "after_raw", "after"))


def _read(obj, api_version):
    """The _Read of ``obj``, read through ``api_version`` (default: its own); RolloutError for another kind."""
    kind = apiversion.rollout_kind(obj.get("kind"))
    version = apiversion.version_of(obj, api_version)
    meta = obj.get("metadata") or {}
    after_path = apiversion.spec_path(kind, version, "rollout_after")
    after_raw = paths.get_path(obj, after_path)
    return _Read(obj, kind, version, make_ref(kind, meta.get("namespace"), meta.get("name")), after_path, after_raw,
                 timeutil.parse_optional(after_raw))


def _guards(read, cluster, after, now, force):
    """Refuse a paused object or Cluster, a bad ``after`` and a trigger pending in the future (unless ``force``).
    Returns (the trigger time asked for, the message of an unchanged plan when it is already scheduled, else None)."""
    guards.refuse_paused(read.obj, read.kind, read.ref, cluster)
    target_after = _resolve_after(after, now, read.ref)
    return target_after, _already_scheduled(read.after, target_after, not means_now(after), now, force, read.after_path,
                                            read.ref)


def _replaces_nothing(read, after, target_after, now, observed):
    """(message, warning) of an unchanged plan when a past trigger (explicit, or the one of a restart now against the
    MachineSets / Machines read) would replace no Machine, else None."""
    if target_after > now:
        return None
    why = _rolls_nothing(read.obj, read.kind, read.version, target_after, observed.machine_sets, observed.machines)
    if not why:
        return None
    hint = ("re-run the task: a restart now replaces them once the API server's clock is 2 s past their creation"
            if means_now(after) else "use after=now to roll every Machine")
    return (f"{read.after_path}={timeutil.format_time(target_after)} would replace no Machine: {why}",
            f"no rollout: CAPI only replaces Machines created before {read.after_path}; {hint}")


def _trigger(read, changes, target_after):
    """Record the rolloutAfter change in ``changes`` (nothing when it is already ``target_after``)."""
    if read.after != target_after:
        changes.add(read.after_path, read.after_raw, timeutil.format_time(target_after))


def _change_warnings(read, cluster, rollout_id, applied, drift, own_field=True):
    """Warnings of a planned change: a rollout_id applied before whose template was changed since, and a Cluster
    topology that sets rollout.after itself (when the object's own field is written, ``own_field``)."""
    warnings = []
    if drift:
        warnings.append(f"rollout_id {rollout_id} was applied at {applied['at']}, but the template was changed since "
                        f"({drift}): switching again")
    if own_field and keys.TOPOLOGY_OWNED_LABEL in (paths.get_path(read.obj, "metadata.labels", {}) or {}):
        warning = _topology_after_warning(read.obj, read.kind, cluster)
        if warning:
            warnings.append(warning)
    return warnings


def _record(read, changes, written, now, action, target_after, new_infra_ref, entries, recording, observed,
            owner=None, in_place=None):
    """Record the restart (last-rollout annotation and history entry) in ``changes``; returns the recorded revision.
    ``owner``: the Cluster topology write that makes it (core.topology), named in the entry as ``topology``;
    ``in_place`` "allow": a switch CAPI may apply in place, so the history calls it an in-place update."""
    details = {"infrastructure_ref": new_infra_ref["name"]} if new_infra_ref else {}
    if action == SCHEDULED:
        details["after"] = timeutil.format_time(target_after)
    kept, revision = _replace_pending(entries, read.after, now, new_infra_ref)
    if revision is None:
        revision = hist.next_revision(read.obj, observed.machine_sets, entries)
    entry = records.record_rollout(
        changes, read.obj, written, now, action, revision, kept, recording,
        api_version=read.version, last_details=details,
        entry_details={"rollout_after": timeutil.format_time(target_after) if action == SCHEDULED else None,
                       "topology": owner["message"] if owner else None,
                       "in_place": in_place if in_place == inplace.ALLOW else None}, observed=observed)
    return entry["revision"]


def _through_topology(read, cluster, target_after, topology_rollout):
    """How a trigger of a topology-managed object is written: (the Cluster topology's field (display path) or None to
    write the object's own; the Cluster topology write, None when that field already holds it; a note for the
    message). On CAPI v1.13+ (``topology_rollout``) the topology's rollout.after
    is copied into the MD / KCP and owns it there, so the Cluster is written; before, the topology has no such field
    and does not own the object's, which is written and stays (docs/clusterclass.md)."""
    if not topologies.manages(read.obj, cluster):
        return None, None, ""
    if not topology_rollout:
        return None, None, (f" on the {read.kind} itself: the Cluster topology of this CAPI release (before v1.13) has "
                            "no rollout.after and does not own this field")
    field = (f"{topologies.cluster_ref(cluster)} "
             f"{topologies.display_path(cluster, read.obj, read.kind, read.ref, 'rollout.after')}")
    return field, topologies.plan_rollout_after(cluster, read.obj, read.kind, read.ref,
                                                timeutil.format_time(target_after)), ""


def _relied_on(read, owner):
    """The fields the object's patch tests; with a topology write (``owner``) core.patch.beside_owner_write."""
    fields = patches.rollout_fields(read.kind, read.version)
    return fields if owner is None else patches.beside_owner_write(fields)


def _drain_timeout(read, cluster, seconds, rollout_id, changes):
    """Set the MD's node drain timeout ``seconds`` for the rollout in ``changes`` (core.drains); a warning instead when
    a Cluster topology owns the field (it would write it back)."""
    if seconds is None or read.kind != apiversion.MACHINE_DEPLOYMENT:
        return []
    if topologies.manages(read.obj, cluster):
        return [f"drain_timeout={seconds}s not set: the Cluster topology owns the node drain timeout of this "
                "MachineDeployment; set it in the Cluster's topology if it needs one"]
    drains.set_drain_timeout(read.obj, read.kind, read.version, seconds, rollout_id, changes)
    return []


def plan_restart(obj, now, after=None, infrastructure_ref=None, force=False, recording=None, observed=None,
                 topology_rollout=False, in_place="replace", drain_timeout=None):
    """Plan a restart of MachineDeployment / KubeadmControlPlane ``obj``.

    ``now``: datetime or RFC 3339 string (injected, second precision is used).
    ``after``: None or "now" (restart now) or an RFC 3339 time (scheduled if in the future).
    ``infrastructure_ref``: None, a name, or {name, kind?, api_group?, api_version?} to switch the
    infrastructure template (kind/group default to the current ones); with it and no ``after``,
    the template change alone triggers the rollout.
    ``force``: replace a trigger that is already scheduled in the future.
    ``recording`` (core.record.Recording; default: record without an id): a repeated call with the
    ``rollout_id`` of an earlier restart (last-rollout annotation or history record) plans nothing; when
    enabled, the last-rollout annotation {id, at, action, reason, actor} and a history entry (core.history:
    revision, from/to template identity, time, rollout_id, reason, actor; the history keeps ``history_limit``
    entries, default 10) are written in the same patch as the change.
    ``observed`` (core.plan.Observed; default: nothing read): ``api_version`` the object was read through,
    its ``cluster`` (pause check, topology warning); ``machine_sets`` of the namespace so the recorded
    revision also counts their revisions (without them the MD revision annotation and the record are used);
    ``machines`` of the namespace (KCPs): with them, or with ``machine_sets`` for MDs, a past trigger
    (an explicit ``after``, or now) that would replace nothing is planned as unchanged with a warning; ``in_place_possible``: CAPI may
    update Machines in place (v1.12+ with an update extension): a bool, or a callable returning one, called only
    when a switch is planned.
    ``in_place``: with ``in_place_possible``, "replace" writes the rollout trigger (now, unless ``after`` says
    otherwise) in the same patch as a switch, so every Machine is replaced (a MachineSet created before an expired
    trigger is not eligible for in-place updates: FindNewAndOldMachineSets, cluster-api v1.12.3
    internal/controllers/machinedeployment/mdutil/util.go; for KubeadmControlPlanes UpToDate in
    controlplane/kubeadm/internal/filters.go); "allow" lets CAPI update them in place.
    ``drain_timeout``: seconds set as a MachineDeployment's node drain timeout in the same patch as the change, with
    the value it had recorded so it can be put back (core.drains.set_drain_timeout); None leaves it as it is.

    ``topology_rollout``: the Cluster topology has rollout.after (CAPI v1.13+): the trigger of an object a Cluster
    topology manages is then written there (the plan's ``owner``: core.topology's write of the Cluster, sent before the
    object's own patch, which then carries only the record).

    Returns a plan (see core.plan.new_plan) with action restarted | scheduled | unchanged plus
    ``rollout_after`` (value after the patch), ``in_place`` (for a switch where in-place updates are possible:
    "replace" or "allow", else None), ``trigger_now`` (the plan is of the trigger of a restart now, written or
    already there, which replaces every Machine only once the server's clock is at effective_from), ``revision_before`` (MD revision annotation),
    ``history_revision`` (revision recorded, None when nothing is recorded) and
    ``required_templates`` (the template a switch needs, for an existence check).
    Raises RolloutError (nothing planned) on paused objects, pending triggers, bad input and template
    switches on topology-owned objects.
    """
    recording = recording or records.Recording()
    observed = observed or plans.Observed()
    read = _read(obj, observed.api_version)
    now = timeutil.truncate_seconds(now)
    extra = {"rollout_after": read.after_raw, "revision_before": views.revision_of(obj), "history_revision": None,
             "required_templates": [], "in_place": None, "trigger_now": False}
    recording = recording._replace(history_limit=hist.validate_history_limit(recording.history_limit, ref=read.ref))
    entries, record_warnings = hist.read_record(obj)

    def unchanged(message, *warnings):
        return plans.new_plan(obj, read.kind, read.version, plans.UNCHANGED, message=message,
                              warnings=record_warnings + list(warnings), **extra)

    applied = hist.applied_rollout(obj, recording.rollout_id, ACTIONS, entries)
    drift = _template_drift(obj, read.kind, read.version, infrastructure_ref) if applied else None
    if applied and not drift:
        return unchanged(f"rollout_id {recording.rollout_id} was already applied ({applied['action']} at {applied['at']})")
    target_after, scheduled = _guards(read, observed.cluster, after, now, force)
    if scheduled:
        return unchanged(scheduled)

    changes = ChangeSet()
    new_infra_ref = _switch_template(obj, read.kind, read.version, read.ref, changes, infrastructure_ref) \
        if infrastructure_ref else None
    if new_infra_ref is None:
        replaces_nothing = _replaces_nothing(read, after, target_after, now, observed)
        if replaces_nothing:
            return unchanged(*replaces_nothing)
    # A template switch triggers the rollout by itself; rolloutAfter is only added when asked for, or to force
    # replacement where CAPI could update the Machines in place instead.
    if new_infra_ref is not None:
        extra["in_place"] = inplace.mode(observed.in_place_possible, in_place)
    triggers = new_infra_ref is None or after is not None or extra["in_place"] == inplace.REPLACE
    extra["trigger_now"] = triggers and means_now(after)
    field, owner, note = _through_topology(read, observed.cluster, target_after, topology_rollout) if triggers \
        else (None, None, "")
    if triggers and field is None:
        _trigger(read, changes, target_after)
    if owner is None and (field is not None or not changes.changed):
        return unchanged(f"{field or read.after_path} is already {timeutil.format_time(target_after)}")

    action = SCHEDULED if target_after > now and new_infra_ref is None else RESTARTED
    warnings = record_warnings + _change_warnings(read, observed.cluster, recording.rollout_id, applied, drift,
                                                  owner is None)
    # with the change, while the current MachineSet is still the newest one (core.drains)
    warnings += _drain_timeout(read, observed.cluster, drain_timeout, recording.rollout_id, changes)
    written = diffs.apply_merge_patch(obj, changes.merge_patch() or {})
    if owner is not None:
        # what the topology controller copies into the object: the recorded target
        paths.set_path(written, paths.split_path(read.after_path), timeutil.format_time(target_after))
    if new_infra_ref is not None:
        extra["required_templates"] = _required_infrastructure(written, read.kind, read.version,
                                                               (obj.get("metadata") or {}).get("namespace"))
    if recording.enabled:
        extra["history_revision"] = _record(read, changes, written, now, action, target_after, new_infra_ref, entries,
                                            recording, observed, owner, extra["in_place"])
    if triggers:
        extra["rollout_after"] = timeutil.format_time(target_after)
    plan = plans.new_plan(obj, read.kind, read.version, action, changes=changes,
                          message=_message(new_infra_ref, action, target_after, field or read.after_path) + note,
                          warnings=warnings,
                          relied_on=_relied_on(read, owner), **extra)
    if owner is not None:
        # the Cluster write is the change; the object's own patch (None without recording) only records it
        plan.update(owner=owner, changed=True, action=action)
    return plan


def plan_topology_switch(obj, now, overrides, cclass, recording=None, observed=None, worker_templates=None,
                         topology_rollout=False, in_place="replace", template=None):
    """Plan new hardware for an MD a Cluster topology manages, by path (a) (docs/clusterclass.md): the per-MD
    ``variables.overrides`` entries of the variables ``cclass`` (its ClusterClass) patches onto the fields of
    ``overrides`` (spec.template.spec fields of its infrastructure template, as ``switches[].template.overrides``).
    The topology controller then generates a template with them and rolls this MD alone. When the class maps not every
    field, path (b): a switch of the MD's worker ``class`` to one whose template carries them (``worker_templates``,
    core.topology.change_for).

    When no worker class carries them either, path (c): a rebase of the Cluster onto a clone of its ClusterClass with
    a new template for the MD's worker class (the plan's ``clone``: core.topology.clone_class, to create first).

    The plan's ``owner`` is the Cluster write (core.topology); the MD's own patch records it (history entry with
    ``topology``); a repeated ``rollout_id`` or a topology that already holds the values plans nothing. RolloutError
    for a paused object or Cluster, and for a field no class variable maps (reason topology_no_variable).

    ``in_place`` as in plan_restart, when ``observed.in_place_possible``: the topology rotates only the template whose
    values change (v1.12.3 internal/controllers/topology/cluster/reconcile_state.go reconcileReferencedTemplate; v1.14.0
    core/reconcilers/topology/cluster/reconcile_state.go), and the MD controller may move its Machines to the new
    MachineSet and update them in place (mdutil/util.go MachineTemplateUpToDate, EligibleForInPlaceUpdate), so
    "replace" writes the trigger with the change: in the same Cluster write on v1.13+ (``topology_rollout``), on the
    object's own field before (the topology does not own it there). ``topology_rollout`` may be a callable, called
    only for a trigger.

    ``template``: the object's current infrastructure template as read (for ``--diff``): the plan's ``generated`` is
    then the field diff of the template the topology will generate (core.topology.generated_diff, paths (a) and (b))."""
    recording = recording or records.Recording()
    observed = observed or plans.Observed()
    read = _read(obj, observed.api_version)
    now = timeutil.truncate_seconds(now)
    recording = recording._replace(history_limit=hist.validate_history_limit(recording.history_limit, ref=read.ref))
    entries, record_warnings = hist.read_record(obj)
    extra = {"revision_before": views.revision_of(obj), "history_revision": None, "required_templates": [],
             "in_place": None}

    def unchanged(message):
        return plans.new_plan(obj, read.kind, read.version, plans.UNCHANGED, message=message, warnings=record_warnings,
                              **extra)

    applied = hist.applied_rollout(obj, recording.rollout_id, ACTIONS, entries)
    guards.refuse_paused(read.obj, read.kind, read.ref, observed.cluster)
    template_kind = apiversion.normalize_ref(
        paths.get_path(obj, apiversion.spec_path(read.kind, read.version, "infrastructure_ref"), {}) or {}).get("kind")
    change = topologies.change_for(cclass, observed.cluster, obj, read.ref, template_kind, overrides, kind=read.kind,
                                   worker_templates=worker_templates)
    values, why = change["values"], change["why"]
    owner = topologies.plan_overrides(observed.cluster, obj, read.ref, values, kind=read.kind,
                                      worker_class=change["worker_class"], cluster_class=change.get("cluster_class"))
    if owner is None:
        return unchanged(f"the Cluster topology already holds {topologies.change_text(change)}"
                         + (f" (rollout_id {recording.rollout_id} applied at {applied['at']})" if applied else ""))
    extra["in_place"] = inplace.mode(observed.in_place_possible, in_place)
    changes = ChangeSet()
    note = ""
    if extra["in_place"] == inplace.REPLACE:
        # a restart now's trigger, settled by the flow as one (trigger_now: effective_from)
        target_after = trigger_for_now(now)
        extra.update(rollout_after=timeutil.format_time(target_after), trigger_now=True)
        if topology_rollout() if callable(topology_rollout) else topology_rollout:
            owner = topologies.plan_overrides(observed.cluster, obj, read.ref, values, kind=read.kind,
                                              worker_class=change["worker_class"], rollout_after=extra["rollout_after"],
                                              cluster_class=change.get("cluster_class"))
        else:
            _trigger(read, changes, target_after)
            note = (f"; {read.after_path}={extra['rollout_after']} on the {read.kind} itself, so its Machines are replaced, "
                    "not updated in place: the Cluster topology of this CAPI release (before v1.13) has no rollout.after "
                    "and does not own this field")
    # what undo puts back (core.undo.plan_topology_undo): the overrides before (None for none), the class before
    details = {"topology": owner["message"], "topology_after": values,
               "topology_before": {name: topologies.override_of(observed.cluster, obj, read.ref, name, kind=read.kind)
                                   for name in values}}
    if change["worker_class"] is not None:
        details["topology_class"] = [topologies.worker_class_of(observed.cluster, obj, read.ref), change["worker_class"]]
    if change.get("cluster_class") is not None:
        # path (c): undo rebases the Cluster back onto the class from before (the clone is kept)
        details["topology_cluster_class"] = [topologies.class_name(observed.cluster), change["cluster_class"]]
    if extra["in_place"] == inplace.ALLOW:
        details["in_place"] = inplace.ALLOW
    if recording.enabled:
        written = diffs.apply_merge_patch(obj, changes.merge_patch() or {})
        entry = records.record_rollout(
            changes, obj, written, now, RESTARTED, hist.next_revision(obj, observed.machine_sets, entries), entries,
            recording, api_version=read.version, last_details={"topology": owner["message"]}, entry_details=details,
            observed=observed)
        extra["history_revision"] = entry["revision"]
    plan = plans.new_plan(obj, read.kind, read.version, RESTARTED, changes=changes, warnings=record_warnings,
                          message=f"new hardware through {owner['message']} ({why}): the topology controller generates "
                                  f"the new template and rolls this {read.kind}" + note,
                          relied_on=_relied_on(read, owner), **extra)
    # what a wait holds it to: the generated template's name is not known yet, its values are
    plan.update(owner=owner, changed=True, action=RESTARTED, hold=topologies.hold_of(change, overrides))
    if change.get("clone") is not None:
        # path (c): the ClusterClass clone and its template, created (flows.restart) before the Cluster write
        plan["clone"] = change["clone"]
    generated = topologies.generated_diff(change, template, overrides, worker_templates)
    if generated is not None:
        plan["generated"] = generated
    return plan


def machine_changes(machines, kind, name, switched_at):
    """{replaced, updated_in_place} for the Machines of MachineDeployment / KubeadmControlPlane ``name`` once its
    switch has rolled out, read from the Machines themselves (not MachineSets: with in-place updates a Machine keeps
    its name and creation time in the new MachineSet, cluster-api v1.12.3 machinedeployment_rollout_rollingupdate.go):
    created at or after ``switched_at`` (the task's server time before its patch) is a replacement; an older one that
    still belongs to the object was updated in place. Deleting Machines are not counted."""
    label = keys.DEPLOYMENT_NAME_LABEL if kind == apiversion.MACHINE_DEPLOYMENT else keys.CONTROL_PLANE_NAME_LABEL
    return hist.machines_changed(machines, timeutil.truncate_seconds(switched_at),
                                 lambda machine: ((machine.get("metadata") or {}).get("labels") or {}).get(label) == name)
