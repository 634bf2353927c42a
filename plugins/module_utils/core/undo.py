# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan an undo of a MachineDeployment to an earlier revision, like clusterctl's ObjectRollbacker
(rollout_rollbacker.go, v0.4 - v1.10): copy the chosen MachineSet's template (minus the
machine-template-hash label) back into the MachineDeployment.

Kept: clusterctl's revision choice (to_revision 0 = second-highest revision) and its refusals.
Added (reference §4.5.9 / §4.9): refusal for topology-owned MDs and Kubernetes version skew
violations unless ``force``, lookup through revision-history, idempotence, a diff of only the
changed template fields.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import guards
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import plan as plans
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import versionskew
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet, create_merge_patch
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref

ROLLED_BACK = "rolled_back"
_NO_HISTORY_HINT = ("CAPI v1.11+ deletes old MachineSets once a rollout completes (v1.10 keeps revisionHistoryLimit of them), "
                    "so only revisions that still have a MachineSet can be restored; use capi_rollout_info to list them")

get = apiversion.get_path


def find_target(machine_sets, to_revision, ref):
    """The MachineSet to roll back to (clusterctl findMachineDeploymentRevision semantics).

    to_revision > 0: the MachineSet with that revision, or else the one whose revision-history
    lists it (same template, reused). to_revision == 0: the second-highest revision.
    """
    by_revision = []
    for ms in machine_sets:
        revision = views.revision_of(ms)
        if revision is not None:
            by_revision.append((revision, ms))
    if to_revision > 0:
        for revision, ms in by_revision:
            if revision == to_revision:
                return ms, revision
        for revision, ms in by_revision:
            if to_revision in views.revision_history_of(ms):
                return ms, revision
        known = ", ".join(str(r) for r in sorted({r for r, _ms in by_revision})) or "none"
        raise RolloutError(f"unable to find specified MachineDeployment revision: {to_revision}", ref=ref,
                           hint=f"revisions with a MachineSet: {known}. {_NO_HISTORY_HINT}", reason="revision_not_found")
    if len(by_revision) < 2:
        raise RolloutError("no rollout history found for MachineDeployment", ref=ref, hint=_NO_HISTORY_HINT,
                           reason="no_history")
    by_revision.sort(key=lambda item: item[0], reverse=True)
    # Highest = current; a duplicate of the highest counts as "previous" (clusterctl).
    revision, ms = by_revision[1]
    return ms, revision


def _template_from(machine_set):
    template = copy.deepcopy(get(machine_set, "spec.template", {}) or {})
    labels = get(template, "metadata.labels")
    if isinstance(labels, dict):
        labels.pop(keys.MACHINE_TEMPLATE_HASH_LABEL, None)
    return template


def _record_leaves(changes, base_path, before, patch):
    """Record each leaf of merge ``patch`` (computed from ``before``) as one change."""
    for key, value in patch.items():
        path = base_path + (key,)
        old = before.get(key) if isinstance(before, dict) else None
        if isinstance(value, dict) and isinstance(old, dict):
            _record_leaves(changes, path, old, value)
        else:
            changes.record(path, old, value)


def plan_undo(md, machine_sets, now, to_revision=0, api_version=None, cluster=None, control_plane_version=None,
              force=False, rollout_id=None, reason=None, actor=None, record=True):
    """Plan to restore MachineDeployment ``md`` to the template of an earlier revision.

    ``machine_sets``: MachineSets of the MD's namespace (ownership/selector filtering is done here).
    ``control_plane_version``: e.g. KCP spec.version; enables the version skew check (skipped with
    a warning when None). ``force``: allow topology-owned MDs and skew violations.
    Returns a plan with action rolled_back | unchanged plus target_revision, target_machine_set,
    revision_before. Raises RolloutError with nothing planned otherwise.
    """
    kind = apiversion.normalize_kind(md.get("kind"))
    meta = md.get("metadata") or {}
    ref = make_ref(md.get("kind") or "object", meta.get("namespace"), meta.get("name"))
    if kind != apiversion.MACHINE_DEPLOYMENT:
        raise RolloutError(f"invalid resource type {md.get('kind')!r}, valid values are ['MachineDeployment']", ref=ref,
                           hint="only MachineDeployments have revisions; roll a control plane with capi_rollout_restart",
                           reason="invalid_kind")
    version = apiversion.version_of(md, api_version)
    now = timeutil.truncate_seconds(now)
    extra = {"revision_before": views.revision_of(md), "target_revision": None, "target_machine_set": None}

    last = views.last_rollout_of(md) or {}
    if rollout_id is not None and last.get("id") == str(rollout_id):
        return plans.new_plan(md, kind, version, plans.UNCHANGED,
                              message=f"rollout_id {rollout_id} was already applied ({last.get('action')} at {last.get('at')})",
                              **extra)
    if to_revision is None or int(to_revision) < 0:
        raise RolloutError(f"revision number cannot be negative: {to_revision}", ref=ref,
                           hint="use 0 for the previous revision or a revision listed by capi_rollout_info", reason="invalid_revision")
    to_revision = int(to_revision)
    guards.refuse_paused(md, kind, ref, cluster, verb="rollback")
    if not force:
        guards.refuse_topology_owned(md, kind, ref, what="a rollback of spec.template (#8392)")

    target, revision = find_target(hist.owned_machine_sets(md, machine_sets), to_revision, ref)
    extra.update(target_revision=revision, target_machine_set=get(target, "metadata.name"))
    new_template = _template_from(target)
    target_identity = tmpl.identity(new_template.get("spec") or {})

    warnings = []
    if control_plane_version is None:
        warnings.append("control plane version unknown: Kubernetes version skew was not checked")
    else:
        bootstrap = target_identity.get("bootstrap_ref") or {}
        problems = versionskew.skew_problems(target_identity.get("version"), control_plane_version,
                                             kubeadm=bootstrap.get("kind") == "KubeadmConfigTemplate")
        if problems and not force:
            raise RolloutError(f"revision {revision} violates the Kubernetes version skew policy: {'; '.join(problems)}", ref=ref,
                               hint="pick another revision, upgrade the control plane first, or set force=true", reason="version_skew")
        warnings.extend(f"ignored because force=true: {problem}" for problem in problems)

    current_template = get(md, "spec.template", {}) or {}
    patch = create_merge_patch(current_template, new_template)
    changes = ChangeSet()
    if patch:
        _record_leaves(changes, ("spec", "template"), current_template, patch)
    if not changes.changed:
        return plans.new_plan(md, kind, version, plans.UNCHANGED,
                              message=f"spec.template already equals revision {revision} ({extra['target_machine_set']})", **extra)

    after = timeutil.parse_optional(get(md, apiversion.spec_path(kind, version, "rollout_after")))
    created = timeutil.parse_optional(get(target, "metadata.creationTimestamp"))
    if after is not None and after <= now and created is not None and created < after:
        warnings.append(f"{apiversion.spec_path(kind, version, 'rollout_after')} ({timeutil.format_time(after)}) is newer than "
                        f"MachineSet {extra['target_machine_set']}: CAPI creates a new MachineSet with its template instead of reusing it")
    if record:
        entry = plans.record_entry(timeutil.format_time(now), ROLLED_BACK, rollout_id, reason, actor, to_revision=revision)
        changes.record(plans.record_path(), plans.current_record_raw(md), entry)
    return plans.new_plan(md, kind, version, ROLLED_BACK, changes=changes,
                          message=f"spec.template restored from revision {revision} ({extra['target_machine_set']})",
                          warnings=warnings, **extra)
