# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The changes of a MachineDeployment or KubeadmControlPlane that matter to a rollout besides this collection's own
template switches (issue 28; docs/history-and-undo.md "Changes made outside"): what class each changed field is
(``cause``), a compact snapshot of the fields (kept with the newest record entry only), and the changes made since
that snapshot, each with the manager and time managedFields give for it.

Why a snapshot and not MachineSets: CAPI v1.11+ deletes every old MachineSet once a rollout completes, and a field
propagated in place (labels, timeouts, ...) never makes a MachineSet at all, so the cluster forgets such changes. The
snapshot is compared on every read ("changed outside since entry N") and the changes found are stored as entries of
the record with the next write of this collection (core.history.record_change), so they outlive the MachineSets.

A change entry (``{"since": N, "at", "actor", "cause", "changes": [{path, before, after}]}``) has no ``revision``:
it belongs to no revision of CAPI's, and core.history keeps it out of the revision merge.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import hashlib
import json

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import template_clone as clones

TEMPLATE = "template"
TRIGGER = "trigger"
IN_PLACE_FIELD = "in-place field"
SCALE = "scale"
SETTING = "md-setting"
IN_PLACE_UPDATE = "in-place update"
CAUSES = (TEMPLATE, TRIGGER, IN_PLACE_FIELD, SCALE, SETTING, IN_PLACE_UPDATE)

# The release from which CAPI copies a Machine template field to the existing Machines without replacing them
# (internal/controllers/machineset/machineset_controller.go syncMachines at v1.4.0, v1.9.0, v1.11.0, v1.12.3 -
# taints only with the MachineTaintPropagation gate; api/core/v1beta2/machine_types.go@v1.14.0 for the v1beta2
# names). Keys are the field's last name in any API version (nodeDrainTimeout in v1beta1, under deletion as
# nodeDrainTimeoutSeconds in v1beta2).
IN_PLACE_SINCE = {
    "metadata": "v1.4", "nodeDrainTimeout": "v1.4", "nodeVolumeDetachTimeout": "v1.4", "nodeDeletionTimeout": "v1.4",
    "deletion": "v1.4", "readinessGates": "v1.9", "minReadySeconds": "v1.11", "taints": "v1.12",
}
# What the object's spec holds besides rollout decisions: the Cluster it belongs to and the selector never change.
_LEFT_OUT = (("spec", "clusterName"), ("spec", "selector"), ("spec", "template", "spec", "clusterName"))
# Kept as a digest only: a KubeadmConfigSpec with its files is kilobytes, the record has MAX_RECORD_BYTES in all.
_DIGESTED = (("spec", "kubeadmConfigSpec"),)
# Per kind: (path prefix, cause), first match wins; any other field of spec is a SETTING (strategy, deletion order,
# remediation, paused, revisionHistoryLimit, ...).
_TEMPLATE_PREFIXES = {
    apiversion.MACHINE_DEPLOYMENT: ((("spec", "template", "spec", "version"), TEMPLATE),
                                    (("spec", "template", "spec", "infrastructureRef"), TEMPLATE),
                                    (("spec", "template", "spec", "bootstrap"), TEMPLATE),
                                    (("spec", "template", "spec", "failureDomain"), TEMPLATE),
                                    (("spec", "template"), IN_PLACE_FIELD),
                                    (("spec", "minReadySeconds"), IN_PLACE_FIELD)),
    apiversion.KUBEADM_CONTROL_PLANE: ((("spec", "version"), TEMPLATE),
                                       (("spec", "kubeadmConfigSpec"), TEMPLATE),
                                       (("spec", "machineTemplate", "infrastructureRef"), TEMPLATE),
                                       (("spec", "machineTemplate", "spec", "infrastructureRef"), TEMPLATE),
                                       (("spec", "machineTemplate"), IN_PLACE_FIELD)),
}
_COMMON_PREFIXES = ((("spec", "rolloutAfter"), TRIGGER), (("spec", "rollout", "after"), TRIGGER), (("spec", "replicas"), SCALE))


def cause_of(kind, path):
    """The cause class of a change of field ``path`` (a tuple of keys) of an object of ``kind``."""
    path = tuple(path)
    for prefix, cause in _COMMON_PREFIXES + _TEMPLATE_PREFIXES.get(apiversion.normalize_kind(kind), ()):
        if path[:len(prefix)] == prefix:
            return cause
    return SETTING


def in_place_since(path):
    """The CAPI release from which a change of ``path`` (an IN_PLACE_FIELD) reaches the Machines in place; None for
    another field. The first key from the left decides: a label named like a field is still a label."""
    for key in tuple(path):
        if key in IN_PLACE_SINCE:
            return IN_PLACE_SINCE[key]
    return None


def digest(value):
    """A short, stable digest of a JSON value."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def snapshot(obj):
    """The rollout-relevant fields of ``obj`` as the record keeps them: its spec without _LEFT_OUT, _DIGESTED
    subtrees as their digest."""
    spec = copy.deepcopy((obj or {}).get("spec") or {})
    out = {"spec": spec}
    for path in _LEFT_OUT:
        parent = paths.get_path(out, path[:-1])
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    for path in _DIGESTED:
        value = paths.get_path(out, path)
        if value is not None:
            paths.set_path(out, path, digest(value))
    return spec


def snapshot_fields(obj):
    """What the newest record entry carries so that later reads can tell what changed: {snapshot, digest}."""
    snap = snapshot(obj)
    return {"snapshot": snap, "digest": digest(snap)}


def _writer(obj, field, since):
    """Who last wrote ``field`` after ``since``: another manager (owners.last_change), else this collection when its
    managedFields entry holds the field (a pause writes spec.paused and no history entry); None when nobody holds it
    (a removed field)."""
    found = owners.last_change(obj, field, since)
    if found is not None:
        return found
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") == owners.FIELD_MANAGER and owners.covers(entry.get("fieldsV1") or {}, tuple(field)):
            return {"manager": owners.FIELD_MANAGER, "operation": entry.get("operation"), "time": entry.get("time")}
    return None


def _leaf_changes(before, after):
    """core.template_clone.diff_paths of two snapshots down to the leaves also where a map was added or removed (a
    v1beta2 ``deletion`` map is added with its first timeout), so that every change names its field."""
    out = []
    for path, old, new in clones.diff_paths(before, after, ("spec",)):
        added_or_removed = new if old is None else old if new is None else None
        if isinstance(added_or_removed, dict) and added_or_removed:
            out.extend(clones.diff_paths(old or {}, new or {}, path))
        else:
            out.append((path, old, new))
    return out


def changes_since(obj, base_entry):
    """The changes of ``obj`` since ``base_entry`` (the newest record entry, with a snapshot): a list of change
    entries, one per (actor, time, cause), oldest first; [] when the entry has no snapshot (written before this
    existed) or nothing changed."""
    base = base_entry.get("snapshot") if isinstance(base_entry, dict) else None
    if not isinstance(base, dict):
        return []
    now = snapshot(obj)
    if digest(now) == base_entry.get("digest"):
        return []
    kind = obj.get("kind")
    groups = {}
    for path, before, after in _leaf_changes(base, now):
        writer = _writer(obj, path, base_entry.get("at")) or {}
        cause = cause_of(kind, path)
        key = (writer.get("manager"), writer.get("time"), cause)
        group = groups.setdefault(key, {"since": base_entry["revision"], "at": writer.get("time"),
                                        "actor": writer.get("manager"), "cause": cause, "changes": []})
        group["changes"].append({"path": paths.join_path(path), "before": before, "after": after})
    return sorted(groups.values(), key=lambda entry: (entry["at"] or "~", entry["cause"]))


def _valid_change(change):
    return isinstance(change, dict) and isinstance(change.get("path"), str)


def valid_change_entry(entry):
    """Whether a record item is a readable change entry (no ``revision``, a ``since`` revision, a known cause)."""
    if not isinstance(entry, dict) or "revision" in entry:
        return False
    since = entry.get("since")
    if isinstance(since, bool) or not isinstance(since, int) or since < 1 or entry.get("cause") not in CAUSES:
        return False
    if any(entry.get(key) is not None and not isinstance(entry[key], str) for key in ("at", "actor")):
        return False
    changes = entry.get("changes")
    return isinstance(changes, list) and all(_valid_change(change) for change in changes)


def machines_effect(cause, changes):
    """How the Machines are affected by a change entry, in words (the Machines themselves are not read for it)."""
    if cause in (TEMPLATE, TRIGGER):
        return "replaced by a rollout (or updated in place where CAPI v1.12+ InPlaceUpdates accepts it)"
    if cause == SCALE:
        before = changes[0]["before"] if changes else None
        after = changes[0]["after"] if changes else None
        return f"scaled {before} -> {after}"
    if cause == IN_PLACE_FIELD:
        releases = sorted({in_place_since(paths.split_path(change["path"])) for change in changes} - {None})
        return f"none replaced: propagated to the Machines in place (CAPI {', '.join(r + '+' for r in releases)})"
    if cause == IN_PLACE_UPDATE:
        return "updated in place"
    return "none: a setting of the object"


def not_restored(change_entries, since_revision):
    """The fields an undo to ``since_revision`` leaves as they are (it restores the template identity only): the
    paths of change entries after that revision other than template and trigger changes, each once, oldest first,
    with who changed it last: [{path, actor, at, cause}]."""
    out = {}
    for entry in change_entries:
        if entry["since"] < since_revision or entry["cause"] in (TEMPLATE, TRIGGER):
            continue
        for change in entry["changes"]:
            out.pop(change["path"], None)
            out[change["path"]] = {"path": change["path"], "actor": entry.get("actor"), "at": entry.get("at"),
                                   "cause": entry["cause"]}
    return list(out.values())
