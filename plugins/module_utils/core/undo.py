# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan an undo of a MachineDeployment to an earlier revision, on every CAPI version.

Like clusterctl's ObjectRollbacker (rollout_rollbacker.go, v0.4 - v1.10; removed in v1.11): the
revision choice (to_revision 0 = the second-highest revision; ties with the highest count as the
previous one) and its refusals (paused MD, negative revision, missing revision, no history).

Different on purpose (upstream cmd/clusterctl/client/alpha/rollout_rollbacker.go@v1.10.10;
cluster-api #8408 / #8392; docs/history-and-undo.md):
- the target comes from a MachineSet that still has the revision (as clusterctl), else from this
  collection's history record (core.history), so undo also works after CAPI v1.11+ deleted the
  old MachineSets;
- only the template identity changes (version, infrastructureRef, bootstrap configRef /
  dataSecretName, failureDomain): labels, annotations and other fields CAPI propagates in place
  stay as they are, nothing else is copied or stripped;
- refusals for KubeadmControlPlane (control-plane / etcd downgrades are unsupported; only the revert of a control
  plane's recorded topology change, a Cluster variable, is planned), topology-owned
  MachineDeployments and Kubernetes version skew violations (the last two unless ``force``), and
  for a target whose templates no longer exist;
- idempotence by ``rollout_id``; the undo is recorded in the history like any other change, in the
  same patch, so an undo can itself be undone.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import diff as diffs
from ansible_collections.capi.rollout.plugins.module_utils.core import guards
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import history_events
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import plan as plans
from ansible_collections.capi.rollout.plugins.module_utils.core import record as records
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import topology as topologies
from ansible_collections.capi.rollout.plugins.module_utils.core import versionskew
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref

ROLLED_BACK = "rolled_back"
# Recorded actions a repeated rollout_id of an undo matches.
ACTIONS = (ROLLED_BACK,)
_NO_HISTORY_HINT = ("CAPI v1.11+ deletes old MachineSets once a rollout completes (v1.10 keeps revisionHistoryLimit of them), "
                    "so a revision is only known while its MachineSet exists or when this collection recorded it "
                    f"(annotation {keys.HISTORY_ANNOTATION}); capi_rollout_info with history=true lists them")
_SPEC = ("spec", "template", "spec")
_STALE_REF_KEYS = ("uid", "resourceVersion", "fieldPath")


# ---------------------------------------------------------------------------------------------
# the target revision


def _validate_revision(to_revision, ref):
    try:
        if isinstance(to_revision, bool):
            raise ValueError(to_revision)
        value = int(str(to_revision).strip()) if to_revision is not None else None
    except ValueError:
        value = None
    if value is None:
        raise RolloutError(f"invalid revision {to_revision!r}", ref=ref,
                           hint="use 0 for the previous revision or a revision number listed by capi_rollout_info",
                           reason="invalid_revision")
    if value < 0:
        raise RolloutError(f"revision number cannot be negative: {value}", ref=ref,
                           hint="use 0 for the previous revision or a revision listed by capi_rollout_info", reason="invalid_revision")
    return value


def _target(revision, row, ms=None):
    ms = ms if ms is not None else row["ms"]
    identity = tmpl.compact_identity(paths.get_path(ms, "spec.template.spec", {})) if ms is not None else hist.row_identity(row)
    return {"revision": revision, "machine_set": ms, "source": hist.SOURCE_MACHINE_SET if ms is not None else hist.SOURCE_RECORD,
            "identity": identity}


def find_target(md, machine_sets, to_revision, ref, entries=None):
    """The revision to roll back to: {revision, machine_set (object or None), source: machineset |
    record, identity (compact)}.

    to_revision > 0: that revision - from a MachineSet that has it (also through revision-history),
    else from the record. to_revision == 0: the second-highest known revision (clusterctl: the
    highest is taken as current; a MachineSet tied with the highest counts as the previous one).
    Raises RolloutError revision_not_found (listing the revisions there are) / no_history.
    """
    rows = hist.collect(md, machine_sets, entries)
    if to_revision > 0:
        row = rows.get(to_revision)
        if row is None:
            known = hist.known_revisions_text(rows, hist.current_revision(md, rows))
            raise RolloutError(f"unable to find specified MachineDeployment revision: {to_revision}", ref=ref,
                               hint=f"revisions that exist: {known}. {_NO_HISTORY_HINT}", reason="revision_not_found")
        return _target(to_revision, row)
    candidates = []
    for ms in hist.owned_machine_sets(md, machine_sets):
        revision = views.revision_of(ms)
        if revision is not None:
            candidates.append((revision, ms))
    for revision, row in rows.items():
        if row["ms"] is None or row["reused_as"] is not None:
            candidates.append((revision, None))
    if len(candidates) < 2:
        raise RolloutError("no rollout history found for MachineDeployment", ref=ref,
                           hint=f"revisions that exist: {hist.known_revisions_text(rows, hist.current_revision(md, rows))}. "
                                f"{_NO_HISTORY_HINT}", reason="no_history")
    candidates.sort(key=lambda item: item[0], reverse=True)  # stable: MachineSets in list order first
    revision, ms = candidates[1]
    return _target(revision, rows[revision], ms)


def find_before(md, entries, undo_rollout_id, ref):
    """The target of an undo of the rollout ``undo_rollout_id``: what the object was before it (the ``from`` of its
    first recorded entry), as find_target returns targets; None when that rollout changed no template of it. Raises
    RolloutError changed_since_rollout when the template is no longer what the rollout wrote (its last entry's
    ``to``): someone changed it since, and the undo does not fight that change."""
    mine = [entry for entry in entries or [] if entry.get("rollout_id") == undo_rollout_id and "from" in entry]
    if not mine:
        return None
    current = tmpl.identity(paths.get_path(md, "spec.template.spec", {}))
    before = mine[0]["from"]
    revision = mine[0].get("revision")
    target = {"revision": revision - 1 if isinstance(revision, int) and revision > 1 else None, "machine_set": None,
              "source": hist.SOURCE_RECORD, "identity": before}
    if tmpl.up_to_date(current, tmpl.identity(before)) or tmpl.up_to_date(current, tmpl.identity(mine[-1]["to"])):
        return target
    changed = owners.last_change(md, _SPEC + ("infrastructureRef", "name"), since=mine[-1].get("at"))
    who = f"{changed['manager']} at {changed['time']}" if changed else "someone else"
    written = (mine[-1]["to"].get("infrastructureRef") or {}).get("name")
    now_on = (current.get("infrastructure_ref") or {}).get("name")
    raise RolloutError(
        f"its template was changed by {who} after rollout {undo_rollout_id} switched it (it is on {now_on}, not on "
        f"{written}); the undo leaves it there instead of fighting that change", ref=ref,
        hint="find out why it was changed; to move it anyway, run capi_rollout_undo with to_revision "
             "(capi_rollout_info with history=true lists the revisions)",
        reason="changed_since_rollout")


# ---------------------------------------------------------------------------------------------
# writing the identity


def _api_version_hints(md, machine_sets, entries):
    """{api group: apiVersion} seen in refs of the MD, its MachineSets and the record (v1beta1 refs
    need a full apiVersion; CAPI ignores its version part)."""
    hints = {}

    def add(identity):
        identity = identity or {}
        for raw in (identity.get("infrastructureRef"), (identity.get("bootstrap") or {}).get("configRef")):
            if isinstance(raw, dict) and raw.get("apiVersion"):
                hints.setdefault(apiversion.group_of(raw["apiVersion"]), raw["apiVersion"])

    add(paths.get_path(md, "spec.template.spec", {}))
    for ms in hist.owned_machine_sets(md, machine_sets):
        add(paths.get_path(ms, "spec.template.spec", {}))
    for entry in reversed(entries):
        add(entry.get("to"))
        add(entry.get("from"))
    return hints


def _write_ref(changes, path, current_raw, target_compact, version, hints, ref):
    if not target_compact:
        if current_raw is not None:
            changes.add(path, current_raw, None)
        return
    target = apiversion.normalize_ref(target_compact)
    if apiversion.normalize_ref(current_raw) == target:
        return  # CAPI ignores the version part of references (#2183)
    wanted = dict(target)
    if version == apiversion.V1BETA1:
        api_version = target_compact.get("apiVersion") or hints.get(target["api_group"])
        if api_version:
            wanted["api_version"] = api_version
    current = current_raw if isinstance(current_raw, dict) else None
    try:
        raw = apiversion.ref_for_api(wanted, version, current=current)
    except ValueError as exc:
        raise RolloutError(f"cannot write the reference to {target['kind']} {target['name']}: {exc}", ref=ref,
                           hint="read and patch the MachineDeployment through the cluster.x-k8s.io/v1beta2 API (CAPI v1.11+)",
                           reason="invalid_reference")
    if current is None:
        changes.add(path, current_raw, raw)
        return
    for key, value in raw.items():
        changes.add(path + (key,), current.get(key), value)
    # Identity fields of an ObjectReference belong to the old object; leaving them would point at it.
    for stale in _STALE_REF_KEYS:
        if current.get(stale) is not None:
            changes.add(path + (stale,), current[stale], None)


def identity_changes(md, version, target_identity, ref, hints=None):
    """ChangeSet turning the MD's template identity into ``target_identity`` (compact form); only
    version, infrastructureRef, bootstrap.configRef / dataSecretName and failureDomain are touched."""
    changes = ChangeSet()
    hints = hints or {}
    current = paths.get_path(md, "spec.template.spec", {}) or {}
    target = target_identity or {}
    changes.add(_SPEC + ("version",), current.get("version"), target.get("version"))
    _write_ref(changes, _SPEC + ("infrastructureRef",), current.get("infrastructureRef"), target.get("infrastructureRef"),
               version, hints, ref)
    current_bootstrap = current.get("bootstrap") or {}
    target_bootstrap = target.get("bootstrap") or {}
    _write_ref(changes, _SPEC + ("bootstrap", "configRef"), current_bootstrap.get("configRef"), target_bootstrap.get("configRef"),
               version, hints, ref)
    changes.add(_SPEC + ("bootstrap", "dataSecretName"), current_bootstrap.get("dataSecretName"),
                target_bootstrap.get("dataSecretName"))
    changes.add(_SPEC + ("failureDomain",), current.get("failureDomain"), target.get("failureDomain"))
    return changes


# ---------------------------------------------------------------------------------------------
# templates the plan needs


def required_templates(plan):
    """Template refs the planned template needs ([{role, api_group, kind, name, namespace[,
    api_version]}]); group them with core.template.templates_by_kind to list each kind once and
    pass what exists as ``existing_templates`` to plan_undo."""
    return [dict(item) for item in (plan or {}).get("required_templates") or []]


def refuse_missing_templates(required, existing_templates, revision, ref):
    """RolloutError template_missing naming every required template that does not exist; returns
    the refs whose kind was not checked (mapping form of ``existing_templates``)."""
    missing, unchecked = tmpl.missing_templates(required, existing_templates)
    if missing:
        names = ", ".join(f"{item['kind']} {item['namespace']}/{item['name']}" if item.get("namespace")
                          else f"{item['kind']} {item['name']}" for item in missing)
        raise RolloutError(f"revision {revision} references {names}, which no longer exist(s): the rollout could never finish",
                           ref=ref, hint="recreate the template with its old content, or pick another revision",
                           reason="template_missing")
    return unchecked


# ---------------------------------------------------------------------------------------------
# version skew


def _skew(target_identity, revision, control_plane, control_plane_version, force, ref):
    """Warnings; RolloutError version_skew when the target version breaks a rule and not ``force``."""
    cp = versionskew.control_plane_versions(control_plane, control_plane_version)
    if not cp["spec"] and not cp["status"]:
        return ["control plane version unknown: Kubernetes version skew was not checked"]
    config_ref = apiversion.normalize_ref((target_identity.get("bootstrap") or {}).get("configRef")) or {}
    kubeadm = config_ref.get("kind") == "KubeadmConfigTemplate"
    problems = versionskew.check(target_identity.get("version"), cp["spec"], cp["status"], kubeadm=kubeadm)
    if problems and not force:
        raise RolloutError(
            f"revision {revision} breaks the Kubernetes version skew policy: "
            + "; ".join(problem["message"] for problem in problems), ref=ref,
            hint="pick another revision or move the control plane first (control-plane downgrades are unsupported); "
                 "force=true rolls back anyway, but CAPI's MachineSet preflight checks will then hold the new Machines "
                 f"(unless {keys.SKIP_PREFLIGHT_CHECKS_ANNOTATION} is set)",
            reason="version_skew")
    return [f"ignored because force=true: {problem['message']}" for problem in problems]


# ---------------------------------------------------------------------------------------------
# the plan


def refuse_kind(given_kind, ref):
    """The kind of an object to undo: a MachineDeployment, or a KubeadmControlPlane (only its recorded topology change:
    plan_undo refuses the rest with refuse_control_plane); RolloutError for any other. Needs no request: the undo module
    calls it before reading anything."""
    kind = apiversion.normalize_kind(given_kind)
    if kind not in (apiversion.MACHINE_DEPLOYMENT, apiversion.KUBEADM_CONTROL_PLANE):
        raise RolloutError(f"invalid resource type {given_kind!r}, valid values are ['MachineDeployment'] (and "
                           "'KubeadmControlPlane' for a topology change this collection recorded)", ref=ref,
                           hint="only MachineDeployments have revisions", reason="invalid_kind")
    return kind


def refuse_control_plane(ref):
    """The refusal of an undo of a KubeadmControlPlane that is not the revert of its recorded topology change: a KCP
    keeps no revisions (no MachineSets; upstream's rollback, clusterctl alpha rollout undo, takes MachineDeployments
    only: cmd/clusterctl/client/alpha/rollout_rollbacker.go@v1.10.10), and going back is what kubeadm cannot do."""
    raise RolloutError(
        "undo of a KubeadmControlPlane is refused: control-plane and etcd downgrades are unsupported by kubeadm and "
        "Kubernetes, and a KubeadmControlPlane keeps no revisions; only the topology change capi_rollout_restart recorded "
        "on a control plane a Cluster topology manages (a Cluster variable) is undone, without to_revision or force",
        ref=ref,
        hint="roll the control plane forward instead (set spec.version / the infrastructure template, or "
             "capi_rollout_restart); going back to an older minor needs an etcd backup restore",
        reason="control_plane_undo")


def _guards(md, kind, ref, cluster, force):
    """Refuse a paused MachineDeployment or Cluster, and a topology-owned one unless ``force``; the warnings."""
    guards.refuse_paused(md, kind, ref, cluster, verb="rollback")
    if not guards.is_topology_owned(md):
        return []
    if not force:
        guards.refuse_topology_owned(
            md, kind, ref, what="a rollback of spec.template (#8392)",
            hint="change the version / templates in the Cluster topology (spec.topology.workers.machineDeployments "
                 "or the ClusterClass) instead; force=true patches the MachineDeployment anyway")
    return ["force=true on a topology-owned MachineDeployment: the topology controller reverts spec.template "
            "on its next reconcile unless the Cluster topology is changed too"]


def _target_fields(md, machine_sets, entries, target, revision_before):
    """The plan's fields that say where the undo goes from and to."""
    current = hist.current_revision(md, hist.collect(md, machine_sets, entries))
    ms_name = paths.get_path(target["machine_set"], "metadata.name") if target["machine_set"] is not None else None
    return {"from_revision": revision_before if current is None else current, "to_revision": target["revision"],
            "target_revision": target["revision"], "target_machine_set": ms_name, "target_source": target["source"],
            "target_template": tmpl.identity(target["identity"])}


def _newer_rollout_after(md, kind, version, target, now):
    """A past rollout.after newer than the target MachineSet makes CAPI create a new MachineSet instead of reusing it
    (FindNewMachineSet takes only a MachineSet created at rollout.after or later, once that time has passed:
    internal/controllers/machinedeployment/mdutil/util.go@v1.10.10); say so."""
    after = timeutil.parse_optional(paths.get_path(md, apiversion.spec_path(kind, version, "rollout_after")))
    created = timeutil.parse_optional(paths.get_path(target["machine_set"], "metadata.creationTimestamp"))
    if after is None or after > now or created is None or created >= after:
        return []
    ms_name = paths.get_path(target["machine_set"], "metadata.name")
    return [f"{apiversion.spec_path(kind, version, 'rollout_after')} ({timeutil.format_time(after)}) is newer than "
            f"MachineSet {ms_name}: CAPI creates a new MachineSet with its template instead of reusing it"]


def _checks(md, kind, version, written, target, observed, force, now, ref):
    """Refuse a missing template of the target (unless ``observed.existing_templates`` is None: not checked) and a
    version skew violation (unless ``force``). Returns (the templates the restored identity references, warnings)."""
    required = tmpl.template_refs(paths.get_path(written, "spec.template.spec", {}), paths.get_path(md, "metadata.namespace"))
    warnings = []
    if observed.existing_templates is not None:
        unchecked = refuse_missing_templates(required, observed.existing_templates, target["revision"], ref)
        warnings.extend(f"{item['kind']} {item['name']} was not checked for existence" for item in unchecked)
    warnings.extend(_skew(target["identity"], target["revision"], observed.control_plane, observed.control_plane_version,
                          force, ref))
    warnings.extend(_newer_rollout_after(md, kind, version, target, now))
    return required, warnings


def _record(md, changes, written, now, target, entries, recording, observed):
    """Record the undo (last-rollout annotation and history entry) in ``changes``; returns the recorded revision."""
    entry = records.record_rollout(
        changes, md, written, now, ROLLED_BACK, hist.next_revision(md, observed.machine_sets, entries), entries, recording,
        last_details={"to_revision": target["revision"]},
        entry_details={"to_revision": target["revision"]}, observed=observed)
    return entry["revision"]


def _not_restored_text(fields):
    """The message's word on the fields changed since the target revision that an undo leaves as they are."""
    if not fields:
        return ""
    named = ", ".join(f"{field['path']} ({field['actor'] or 'unknown writer'} at {field['at'] or 'an unknown time'})"
                      for field in fields)
    return f"; not restored (an undo writes the template identity only): {named}"


def _topology_changes(entries, undo_rollout_id, kind, ref):
    """(the first, the last) history entry of the topology change to revert: every entry of ``undo_rollout_id``, or the
    newest topology change; (None, None) when that rollout changed no topology of it."""
    mine = [entry for entry in entries or [] if "topology_before" in entry
            and (undo_rollout_id is None or entry.get("rollout_id") == undo_rollout_id)]
    if undo_rollout_id is not None:
        return (mine[0], mine[-1]) if mine else (None, None)
    if not mine and kind == apiversion.KUBEADM_CONTROL_PLANE:
        refuse_control_plane(ref)
    if not mine:
        # the refusal of an undo of an object the topology manages (reason topology_owned, as before an undo could
        # revert a topology change), saying why there is nothing to revert through the Cluster
        raise RolloutError("managed by a Cluster topology (ClusterClass), and no topology change of it is recorded in its "
                           "history (capi_rollout_restart records the ones it makes), so there is nothing to revert in its "
                           "Cluster topology; nothing was changed", ref=ref,
                           hint="change the Cluster topology by hand, or run capi_rollout_undo with to_revision and "
                                "force=true (the topology controller puts a template changed on the object back)",
                           reason="topology_owned")
    return mine[-1], mine[-1]


def plan_topology_undo(md, kind, version, ref, now, entries, warnings, extra, recording, observed, undo_rollout_id):
    """Undo of an MD or KCP a Cluster topology manages: the topology change recorded in its history (an MD's variable
    overrides, a control plane's Cluster variables: ``topology_before`` / ``topology_after`` of
    core.restart.plan_topology_switch; a worker class switch, ``topology_class``; a rebase onto a ClusterClass clone,
    ``topology_cluster_class``) is reverted in the Cluster, not the object (the topology controller would put its
    template back, docs/clusterclass.md), and recorded on the object. A Cluster topology changed since by someone else is
    left alone (reason changed_since_rollout, naming who)."""
    cluster = observed.cluster
    first, last = _topology_changes(entries, undo_rollout_id, kind, ref)
    if first is None:
        return plans.new_plan(md, kind, version, plans.UNCHANGED, warnings=warnings, **extra,
                              message=f"rollout {undo_rollout_id} changed no topology of it: nothing to undo")
    before, after = first["topology_before"], last["topology_after"]
    # a worker class switch (path (b)) is undone by switching back: [class before, class after]
    class_before = (first.get("topology_class") or [None])[0]
    class_after = (last.get("topology_class") or [None, None])[1]
    # a rebase onto a ClusterClass clone (path (c)) is undone by rebasing back; the clone stays (docs/clusterclass.md)
    cclass_before = (first.get("topology_cluster_class") or [None])[0]
    cclass_after = (last.get("topology_cluster_class") or [None, None])[1]
    if not topologies.overrides_lacking(cluster, md, kind, ref, before, class_before, cclass_before):
        return plans.new_plan(md, kind, version, plans.UNCHANGED, warnings=warnings, **extra,
                              message=f"{topologies.cluster_ref(cluster)} holds the overrides from before already")
    lacking = topologies.overrides_lacking(cluster, md, kind, ref, after, class_after, cclass_after)
    if lacking:
        changed = owners.last_change(cluster, topologies.entry_field(md, kind), since=last.get("at"))
        who = f"{changed['manager']} at {changed['time']}" if changed else "someone else"
        shown = ", ".join(f"{name}={found} (not {wanted})" for name, wanted, found in lacking)
        raise RolloutError(
            f"its Cluster topology was changed by {who} after rollout {last.get('rollout_id')} wrote it ({shown}); the "
            "undo leaves it there instead of fighting that change", ref=ref, reason="changed_since_rollout",
            hint="find out why it was changed; change the Cluster topology by hand to move it anyway")
    owner = topologies.plan_overrides(cluster, md, ref, before, kind=kind, worker_class=class_before,
                                      cluster_class=cclass_before)
    changes = ChangeSet()
    target_revision = first.get("revision") - 1 if isinstance(first.get("revision"), int) and first["revision"] > 1 else None
    extra.update(from_revision=extra["revision_before"], to_revision=target_revision, target_revision=target_revision,
                 target_source=hist.SOURCE_RECORD)
    if recording.enabled:
        entry = records.record_rollout(
            changes, md, md, now, ROLLED_BACK, hist.next_revision(md, observed.machine_sets, entries), entries, recording,
            api_version=version, last_details={"topology": owner["message"]},
            entry_details=dict({"topology": owner["message"], "topology_before": after, "topology_after": before},
                               **({"topology_class": [class_after, class_before]} if class_before else {}),
                               **({"topology_cluster_class": [cclass_after, cclass_before]} if cclass_before else {})),
            observed=observed)
        extra["history_revision"] = entry["revision"]
    template = paths.get_path(md, apiversion.spec_path(kind, version, "infrastructure_ref"), {}) or {}
    plan = plans.new_plan(md, kind, version, ROLLED_BACK, changes=changes, warnings=warnings,
                          relied_on=patches.beside_owner_write(patches.rollout_fields(kind, version)),
                          message=f"the topology change of rollout {last.get('rollout_id')} reverted through "
                                  f"{owner['message']}: the topology controller generates the template and rolls this "
                                  f"{kind}", **extra)
    # what a wait holds it to: the overrides from before, and off the template of the change
    hold = {"overrides": before, "template": {}, "not_on": template.get("name")}
    if class_before:
        hold["class"] = class_before
    if cclass_before:
        hold["cluster_class"] = cclass_before
    plan.update(owner=owner, changed=True, hold=hold)
    return plan


def plan_undo(md, now, to_revision=0, force=False, recording=None, observed=None, undo_rollout_id=None):
    """Plan to restore MachineDeployment ``md`` to the template identity of an earlier revision, or (with
    ``undo_rollout_id``) to what it was before that rollout (find_before), never onto another template. An MD or
    KubeadmControlPlane a Cluster topology manages has its recorded topology change reverted in the Cluster instead
    (plan_topology_undo); any other KubeadmControlPlane is refused (refuse_control_plane).

    ``force``: allow topology-owned MDs and skew violations.
    ``recording`` (core.record.Recording; default: record without an id): a repeated ``rollout_id`` of an
    earlier undo plans nothing; when enabled, the last-rollout annotation and a history entry (keeping
    ``history_limit`` entries) are written in the same patch.
    ``observed`` (core.plan.Observed; default: nothing read): ``api_version`` the MD was read through, its
    ``cluster`` (pause check); ``machine_sets`` of the MD's namespace (ownership/selector filtering is done
    here); ``control_plane`` (the control plane object, KCP: spec.version / status.version) or
    ``control_plane_version`` (a string) enables the version skew check (skipped with a warning when neither
    is known); ``existing_templates``: what exists of required_templates(plan) (see
    core.template.missing_templates for the accepted forms), None skips the check.

    Returns a plan with action rolled_back | unchanged plus from_revision (current revision),
    to_revision (the revision restored), target_revision (same), target_machine_set,
    target_source (machineset | record), target_template, history_revision (revision the rollout
    produces, recorded), not_restored (core.history_events.not_restored: fields changed since the target
    that the undo leaves as they are; the message names them), revision_before (MD annotation) and required_templates. Raises RolloutError
    with nothing planned otherwise (reasons: control_plane_undo, invalid_kind, invalid_revision,
    paused, cluster_paused, topology_owned, revision_not_found, no_history, template_missing,
    version_skew, invalid_history_limit, invalid_reference).
    """
    recording = recording or records.Recording()
    observed = observed or plans.Observed()
    machine_sets = observed.machine_sets
    meta = md.get("metadata") or {}
    ref = make_ref(md.get("kind") or "object", meta.get("namespace"), meta.get("name"))
    kind = refuse_kind(md.get("kind"), ref)
    version = apiversion.version_of(md, observed.api_version)
    now = timeutil.truncate_seconds(now)
    recording = recording._replace(history_limit=hist.validate_history_limit(recording.history_limit, ref=ref))
    entries, warnings = hist.read_record(md)
    extra = {"revision_before": views.revision_of(md), "from_revision": None, "to_revision": None, "target_revision": None,
             "target_machine_set": None, "target_source": None, "target_template": None, "history_revision": None,
             "required_templates": [], "not_restored": []}

    def unchanged(message):
        return plans.new_plan(md, kind, version, plans.UNCHANGED, warnings=warnings, message=message, **extra)

    applied = hist.applied_rollout(md, recording.rollout_id, ACTIONS, entries)
    if applied:
        return unchanged(f"rollout_id {recording.rollout_id} was already applied ({applied['action']} at {applied['at']})")
    to_revision = _validate_revision(to_revision, ref)
    through_topology = topologies.manages(md, observed.cluster) and not force and not to_revision
    if kind == apiversion.KUBEADM_CONTROL_PLANE and not through_topology:
        refuse_control_plane(ref)
    if through_topology:
        guards.refuse_paused(md, kind, ref, observed.cluster, verb="undo")
        return plan_topology_undo(md, kind, version, ref, now, entries, warnings, extra, recording, observed,
                                  undo_rollout_id)
    warnings.extend(_guards(md, kind, ref, observed.cluster, force))
    if undo_rollout_id is not None:
        target = find_before(md, entries, undo_rollout_id, ref)
        if target is None:
            return unchanged(f"rollout {undo_rollout_id} changed no template of it: nothing to undo")
    else:
        target = find_target(md, machine_sets, to_revision, ref, entries)
    extra.update(_target_fields(md, machine_sets, entries, target, extra["revision_before"]))
    ms_name = extra["target_machine_set"]

    changes = identity_changes(md, version, target["identity"], ref, _api_version_hints(md, machine_sets, entries))
    if not changes.changed:
        return unchanged(f"spec.template already equals revision {target['revision']} ({ms_name or 'from the history record'})")
    written = diffs.apply_merge_patch(md, changes.merge_patch())
    extra["required_templates"], checked = _checks(md, kind, version, written, target, observed, force, now, ref)
    warnings.extend(checked)
    if recording.enabled:
        extra["history_revision"] = _record(md, changes, written, now, target, entries, recording, observed)
    origin = f"MachineSet {ms_name}" if ms_name else "the history record"
    extra["not_restored"] = history_events.not_restored(hist.read_changes(md), target["revision"])
    return plans.new_plan(md, kind, version, ROLLED_BACK, changes=changes,
                          message=f"spec.template restored from revision {target['revision']} ({origin})"
                                  + _not_restored_text(extra["not_restored"]),
                          relied_on=patches.rollout_fields(kind, version), warnings=warnings, **extra)
