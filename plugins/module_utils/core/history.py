# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollout history of a MachineDeployment (revisions as upstream mdutil.ComputeMachineSetAnnotations
sets them, internal/controllers/machinedeployment/mdutil/util.go@v1.10.10; old MachineSets removed by cleanupDeployment,
machinedeployment_sync.go@v1.10.10; docs/history-and-undo.md): this collection's own record
merged with what the cluster still knows.

What the cluster knows: MachineSets controlled by the MD carry ``machinedeployment.clusters.x-k8s.io/
revision`` and, when reused for a later revision, ``.../revision-history``. CAPI <= v1.10 keeps
``revisionHistoryLimit`` (default 1) old MachineSets; v1.11+ deletes every old MachineSet once a
rollout completes, so the cluster alone forgets a template as soon as it is replaced.

The record (``rollout.capi-rollout.dev/history`` on the MD itself, written in the same patch as the
change): a compact JSON list, OLDEST ENTRY FIRST, newest last, at most ``history_limit`` entries and
MAX_RECORD_BYTES. One entry per template change this collection makes::

    {"revision": 4, "at": "2026-03-01T12:00:00Z", "action": "restarted",
     "rollout_id": "chg-1", "reason": "...", "actor": "alice",
     "from": {<identity replaced>}, "to": {<identity written>}, "to_revision": 2, "rollout_after": "..."}

``revision`` is the revision the change produces, numbered like CAPI (highest known revision + 1). ``machines``
(``{"replaced": N, "updated_in_place": M}``) is added to an MD's entry by the next recorded change that leaves its
revision (with_machine_counts), so the counts outlive the MachineSet CAPI v1.11+ deletes.
An identity uses CAPI's field names with references reduced to apiVersion|apiGroup, kind, name:
``{"version", "infrastructureRef", "bootstrap": {"configRef" | "dataSecretName"}, "failureDomain"}``;
``from`` is left out when it equals ``to`` (a plain restart). The ``from`` of entry N also tells the
template of revision N-1, which is how the record reaches one revision further back than its
oldest entry. KubeadmControlPlane restarts are recorded the same way (identity: version and
infrastructureRef); KCP has no CAPI revisions, so there the numbers are the record's own sequence.

The newest entry also carries ``snapshot`` and ``digest`` (core.history_events.snapshot_fields of the object as
the change left it); the record also holds change entries without ``revision`` (``{"since": N, ...}``, changes
made besides revisions, stored with the next recorded change; core.history_events). read_record returns the
revision entries only, so the revision merge and numbering never see them; read_changes returns them (plus those
seen since the snapshot and not stored yet), and change_rows shows them between the revisions.

A corrupt or hand-edited annotation never breaks anything: unreadable parts are ignored with a
warning and the next recorded change rewrites the annotation from the entries that were readable.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import history_events
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import labelselector
from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.plugins.module_utils.core import template_clone as clones
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref_of


DEFAULT_HISTORY_LIMIT = 10
# Kubernetes allows 256 KiB for ALL annotations of an object together, and CAPI copies MD annotations
# to every MachineSet; the record stays far below that whatever history_limit is.
MAX_RECORD_BYTES = 16 * 1024
# rollout_id / reason / actor longer than this are cut (with "...").
MAX_TEXT_CHARS = 200

SOURCE_MACHINE_SET = "machineset"
SOURCE_RECORD = "record"
SOURCE_BOTH = "both"

_TEXT_FIELDS = ("at", "action", "rollout_id", "reason", "actor", "rollout_after")
# What only the newest revision entry keeps (core.history_events.snapshot_fields).
_SNAPSHOT_KEYS = ("snapshot", "digest")


# ---------------------------------------------------------------------------------------------
# MachineSets of a MachineDeployment


def is_owned_by(machine_set, md):
    """clusterctl's getMachineSetsForDeployment filter: controlled by the MD (controller ownerRef;
    by uid when both have one, else by kind/name) and matched by the MD's non-empty selector."""
    md_uid = paths.get_path(md, "metadata.uid")
    md_name = paths.get_path(md, "metadata.name")
    if paths.get_path(machine_set, "metadata.namespace") != paths.get_path(md, "metadata.namespace"):
        return False
    controlled = False
    for owner in paths.get_path(machine_set, "metadata.ownerReferences", []) or []:
        if not owner.get("controller") or owner.get("kind") != apiversion.MACHINE_DEPLOYMENT:
            continue
        if md_uid and owner.get("uid"):
            controlled = owner["uid"] == md_uid
        else:
            controlled = owner.get("name") == md_name
    if not controlled:
        return False
    return labelselector.matches(paths.get_path(md, "spec.selector"), paths.get_path(machine_set, "metadata.labels", {}))


def owned_machine_sets(md, machine_sets):
    return [ms for ms in machine_sets or [] if is_owned_by(ms, md)]


def rollout_history(md, machine_sets, api_version=None):
    """{ref, revision, revisions: [...]} with one entry per owned MachineSet, oldest revision first
    (the cluster's view only; see merged_history for the view including the record).

    Entry: {revision, revision_history, machine_set, created, replicas, template, current,
    matches_spec}. ``current`` marks the MachineSet of the MD's revision annotation (or the highest
    revision); ``matches_spec`` marks MachineSets whose template equals the MD's rollout identity.
    """
    md_view = views.deployment_view(md, api_version=api_version)
    entries = []
    for ms in owned_machine_sets(md, machine_sets):
        ms_view = views.machine_set_view(ms)
        entries.append({
            "revision": ms_view["revision"],
            "revision_history": ms_view["revision_history"],
            "machine_set": ms_view["name"],
            "created": ms_view["created"],
            "replicas": ms_view["replicas"],
            "template": ms_view["template"],
            "matches_spec": tmpl.up_to_date(ms_view["template"], md_view["template"]),
            "current": False,
        })
    # MachineSets without a parsable revision sort first (revision 0 like clusterctl).
    entries.sort(key=lambda e: (e["revision"] or 0, e["created"] or "", e["machine_set"]))
    current_revision = md_view["revision"]
    if current_revision is None and entries:
        current_revision = entries[-1]["revision"]
    for entry in entries:
        entry["current"] = entry["revision"] is not None and entry["revision"] == current_revision
    return {"ref": md_view["ref"], "revision": current_revision, "revisions": entries}


# ---------------------------------------------------------------------------------------------
# the record: reading


def _is_text(value):
    return isinstance(value, str)


def _valid_ref(object_ref):
    return isinstance(object_ref, dict) and _is_text(object_ref.get("kind")) and _is_text(object_ref.get("name")) and all(
        _is_text(object_ref[key]) for key in ("apiVersion", "apiGroup") if key in object_ref)


def _valid_identity(identity):
    if not isinstance(identity, dict):
        return False
    for key in ("version", "failureDomain"):
        if key in identity and not _is_text(identity[key]):
            return False
    if "infrastructureRef" in identity and not _valid_ref(identity["infrastructureRef"]):
        return False
    bootstrap = identity.get("bootstrap", {})
    if not isinstance(bootstrap, dict):
        return False
    if "configRef" in bootstrap and not _valid_ref(bootstrap["configRef"]):
        return False
    return "dataSecretName" not in bootstrap or _is_text(bootstrap["dataSecretName"])


def valid_entry(entry):
    """Whether a record entry can be used: revision >= 1, a readable ``to`` (and ``from``), text fields."""
    if not isinstance(entry, dict):
        return False
    revision = entry.get("revision")
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
        return False
    if not _valid_identity(entry.get("to")):
        return False
    if "from" in entry and not _valid_identity(entry["from"]):
        return False
    if "to_revision" in entry and (isinstance(entry["to_revision"], bool) or not isinstance(entry["to_revision"], int)):
        return False
    return all(_is_text(entry[key]) for key in _TEXT_FIELDS if key in entry and entry[key] is not None)


def _read(obj):
    """(revision entries, change entries, warnings) of ``obj``'s history annotation; see read_record."""
    raw = (paths.get_path(obj, "metadata.annotations", {}) or {}).get(keys.HISTORY_ANNOTATION)
    if raw is None or raw == "":
        return [], [], []
    where = f"{ref_of(obj)}: annotation {keys.HISTORY_ANNOTATION}"
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        return [], [], [f"{where} is not valid JSON and was ignored; the next recorded change replaces it"]
    if not isinstance(data, list):
        return [], [], [f"{where} is not a JSON list and was ignored; the next recorded change replaces it"]
    entries = [entry for entry in data if valid_entry(entry)]
    change_entries = [entry for entry in data if history_events.valid_change_entry(entry)]
    warnings = []
    skipped = len(data) - len(entries) - len(change_entries)
    if skipped:
        noun = "entry" if skipped == 1 else "entries"
        warnings.append(f"{where}: {skipped} unreadable {noun} ignored; the next recorded change drops them")
    entries.sort(key=lambda entry: entry["revision"])
    change_entries.sort(key=_order)
    return entries, change_entries, warnings


def read_record(obj):
    """(entries, warnings): the readable revision entries of ``obj``'s history annotation, oldest first
    (ordered by revision; a hand-edited order is tolerated). Never raises: an unreadable annotation
    gives [] and a warning, unreadable entries are skipped with a warning. Change entries (no revision,
    core.history_events) are read by read_changes."""
    entries, _change_entries, warnings = _read(obj)
    return entries, warnings


def read_changes(obj):
    """The change entries of ``obj``: those stored in its record, then those seen since the newest record entry's
    snapshot and not stored yet (each marked ``stored``: False), oldest first."""
    entries, change_entries, _warnings = _read(obj)
    stored = [dict(entry, stored=True) for entry in change_entries]
    pending = history_events.changes_since(obj, entries[-1]) if entries else []
    return stored + [dict(entry, stored=False) for entry in pending]


def _order(item):
    """Record order: revision entry N, then the changes seen since it (by time), then entry N+1."""
    if "revision" in item:
        return (item["revision"], 0, "")
    return (item["since"], 1, item.get("at") or "~")


def serialize(entries):
    """The annotation value: compact JSON, non-ASCII kept as is (annotation values are UTF-8)."""
    return json.dumps(entries, separators=(",", ":"), ensure_ascii=False)


def validate_history_limit(history_limit, ref=None):
    """history_limit as an int >= 1 (None = DEFAULT_HISTORY_LIMIT); RolloutError otherwise."""
    if history_limit is None:
        return DEFAULT_HISTORY_LIMIT
    if isinstance(history_limit, bool) or not isinstance(history_limit, int):
        try:
            history_limit = int(str(history_limit).strip())
        except ValueError:
            history_limit = 0
    if history_limit < 1:
        raise RolloutError(f"history_limit must be a whole number >= 1, got {history_limit!r}", ref=ref,
                           hint=f"use the default {DEFAULT_HISTORY_LIMIT}, or record=false to write no record",
                           reason="invalid_history_limit")
    return history_limit


def trim(entries, history_limit=DEFAULT_HISTORY_LIMIT, max_bytes=MAX_RECORD_BYTES):
    """The record to write from revision and change entries: the newest ``history_limit`` revision entries, the
    newest ``history_limit`` change entries since the oldest of them, the snapshot only on the newest revision
    entry, then fewer (oldest first) while the JSON exceeds ``max_bytes`` (the newest entry is always kept)."""
    limit = max(1, int(history_limit))
    items = sorted(entries, key=_order)
    revisions = [item for item in items if "revision" in item][-limit:]
    oldest = revisions[0]["revision"] if revisions else 0
    change_entries = [item for item in items if "revision" not in item and item["since"] >= oldest][-limit:]
    newest = revisions[-1] if revisions else None
    kept = [item if item is newest else {key: value for key, value in item.items() if key not in _SNAPSHOT_KEYS}
            for item in sorted(revisions + change_entries, key=_order)]
    while len(kept) > 1 and len(serialize(kept).encode("utf-8")) > max_bytes:
        kept.pop(0)
    return kept


def _new_record(obj, entries, entry, history_limit):
    """The entries to write: ``entries`` (the revision entries as read), the change entries of ``obj`` (stored, and
    seen since its newest entry: stored now, with this write) and the new ``entry``."""
    change_entries = [{key: value for key, value in item.items() if key != "stored"} for item in read_changes(obj)]
    return trim(list(entries) + change_entries + [entry], history_limit)


def record_with_entry(obj, entry, history_limit=DEFAULT_HISTORY_LIMIT):
    """The new value of ``obj``'s history annotation with ``entry`` appended: readable old entries
    (corrupt ones dropped), bounded by ``history_limit`` and MAX_RECORD_BYTES."""
    entries, _warnings = read_record(obj)
    return serialize(_new_record(obj, entries, entry, history_limit))


# ---------------------------------------------------------------------------------------------
# the record: writing


def _short(text):
    text = str(text)
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS - 3] + "..."


def identity_of(obj, api_version=None):
    """Compact identity (record form) of an MD / MachineSet template, or of a KCP (version and
    infrastructureRef)."""
    kind = apiversion.normalize_kind(obj.get("kind"))
    if kind == apiversion.KUBEADM_CONTROL_PLANE:
        version = apiversion.version_of(obj, api_version)
        return tmpl.compact_identity({
            "version": paths.get_path(obj, "spec.version"),
            "infrastructureRef": paths.get_path(obj, apiversion.spec_path(kind, version, "infrastructure_ref")),
        })
    return tmpl.compact_identity(paths.get_path(obj, "spec.template.spec", {}))


def make_entry(revision, at, action, replaced, written, rollout_id=None, reason=None, actor=None, **details):
    """One record entry (see the module docstring); None / empty fields are left out and
    rollout_id / reason / actor are cut to MAX_TEXT_CHARS."""
    entry = {"revision": int(revision), "at": timeutil.format_time(at), "action": action}
    for key, value in (("rollout_id", rollout_id), ("reason", reason), ("actor", actor)):
        if value is not None and str(value) != "":
            entry[key] = _short(value)
    if replaced is not None and replaced != written:
        entry["from"] = copy.deepcopy(replaced)
    entry["to"] = copy.deepcopy(written)
    entry.update({key: value for key, value in details.items() if value is not None})
    return entry


def _display(entries):
    if not entries:
        return "0 entries"
    noun = "entry" if len(entries) == 1 else "entries"
    return f"{len(entries)} {noun}, revisions {entries[0]['revision']}..{entries[-1]['revision']}"


def record_change(changes, obj, entry, history_limit=DEFAULT_HISTORY_LIMIT, entries=None):
    """Record the history annotation update for ``entry`` in ChangeSet ``changes`` (same patch as the
    change itself). Diffs show a summary plus the new entry instead of the whole JSON."""
    if entries is None:
        entries, _warnings = read_record(obj)
    new_entries = _new_record(obj, entries, entry, history_limit)
    path = ("metadata", "annotations", keys.HISTORY_ANNOTATION)
    before_raw = paths.get_path(obj, path)
    before_text = _display(entries) if entries or not before_raw else f"unreadable ({len(str(before_raw))} characters)"
    shown = {key: value for key, value in entry.items() if key not in _SNAPSHOT_KEYS}
    after_text = f"{_display([item for item in new_entries if 'revision' in item])}; new: {serialize(shown)}"
    changes.add(path, before_raw, serialize(new_entries), display=(before_text, after_text))
    return new_entries


def applied_rollout(obj, rollout_id, actions, entries=None):
    """The record ({action, at}) of an earlier action with ``rollout_id`` among ``actions``, from the
    last-rollout annotation or any history entry; None when there is none."""
    if rollout_id is None:
        return None
    wanted = str(rollout_id)
    last = views.last_rollout_of(obj) or {}
    if last.get("id") == wanted and last.get("action", actions[0]) in actions:
        return {"action": last.get("action"), "at": last.get("at")}
    if entries is None:
        entries, _warnings = read_record(obj)
    for entry in reversed(entries):
        if entry.get("rollout_id") == _short(wanted) and entry.get("action") in actions:
            return {"action": entry.get("action"), "at": entry.get("at"), "revision": entry.get("revision")}
    return None


def actor_from(user=None, environ=None, hostname=None):
    """Who makes a change, for the record: the authenticated Kubernetes user when known, else the
    AWX/AAP job (JOB_ID, AWX_HOST), else user@host from the environment; None when nothing is known."""
    if user:
        return _short(user)
    environ = environ or {}
    job = environ.get("JOB_ID") or environ.get("AWX_JOB_ID") or environ.get("TOWER_JOB_ID")
    if job:
        host = environ.get("AWX_HOST") or environ.get("TOWER_HOST")
        return _short(f"awx-job/{job}" + (f" ({host})" if host else ""))
    login = environ.get("USER") or environ.get("LOGNAME")
    if login and hostname:
        return _short(f"{login}@{hostname}")
    return _short(login or hostname) if (login or hostname) else None


# ---------------------------------------------------------------------------------------------
# revisions: what is known, the next number, the merged view


def _known(obj, machine_sets, entries):
    """Every revision number known from the object annotation, owned MachineSets (revision and
    revision-history) and the record."""
    known = set()
    own = views.revision_of(obj)
    if own is not None:
        known.add(own)
    if apiversion.normalize_kind(obj.get("kind")) == apiversion.MACHINE_DEPLOYMENT:
        for ms in owned_machine_sets(obj, machine_sets):
            revision = views.revision_of(ms)
            if revision is not None:
                known.add(revision)
            known.update(views.revision_history_of(ms))
    known.update(entry["revision"] for entry in entries)
    return known


def next_revision(obj, machine_sets=None, entries=None):
    """The revision a template change made now will produce: highest known revision + 1 (CAPI gives
    the new MachineSet max(old revisions) + 1, and the current MachineSet holds the highest)."""
    if entries is None:
        entries, _warnings = read_record(obj)
    return max(_known(obj, machine_sets, entries) or {0}) + 1


def _row(revision):
    return {"revision": revision, "machine_set": None, "ms": None, "reused_as": None, "entry": None,
            "inferred": None, "duplicates": []}


def collect(md, machine_sets=None, entries=None):
    """Internal merged view: {revision: row} where a row holds the MachineSet object (``ms``; via
    revision-history: ``reused_as``), the record entry (``entry``) and the identity inferred from
    the next entry's ``from`` (``inferred``)."""
    if entries is None:
        entries, _warnings = read_record(md)
    rows = {}
    if apiversion.normalize_kind(md.get("kind")) == apiversion.MACHINE_DEPLOYMENT:
        owned = owned_machine_sets(md, machine_sets)
        for ms in owned:
            revision = views.revision_of(ms)
            if revision is None:
                continue
            row = rows.setdefault(revision, _row(revision))
            if row["ms"] is None:
                row["ms"] = ms
            else:
                row["duplicates"].append(ms)  # clusterctl: the first in list order is used
        for ms in owned:
            revision = views.revision_of(ms)
            for old in views.revision_history_of(ms):
                row = rows.setdefault(old, _row(old))
                if row["ms"] is None:
                    row["ms"], row["reused_as"] = ms, revision
    for entry in entries:
        rows.setdefault(entry["revision"], _row(entry["revision"]))["entry"] = entry
    for entry in entries:
        previous = entry["revision"] - 1
        if previous >= 1:
            row = rows.setdefault(previous, _row(previous))
            if row["inferred"] is None:
                row["inferred"] = entry.get("from", entry["to"])
    return rows


def row_identity(row):
    """Compact identity of a collected row: the MachineSet's template (authoritative), else the
    record entry's ``to``, else the identity inferred from the next entry's ``from``."""
    if row["ms"] is not None:
        return tmpl.compact_identity(paths.get_path(row["ms"], "spec.template.spec", {}))
    if row["entry"] is not None:
        return row["entry"]["to"]
    return row["inferred"]


def row_source(row):
    on_cluster = row["ms"] is not None
    recorded = row["entry"] is not None or row["inferred"] is not None
    if on_cluster and recorded:
        return SOURCE_BOTH
    return SOURCE_MACHINE_SET if on_cluster else SOURCE_RECORD


def current_revision(md, rows):
    """The revision the object's template is at: the highest revision with the object's identity,
    else the object's revision annotation when known; None otherwise."""
    mine = tmpl.identity(identity_of(md))
    matching = [revision for revision, row in rows.items() if tmpl.up_to_date(tmpl.identity(row_identity(row)), mine)]
    if matching:
        return max(matching)
    own = views.revision_of(md)
    return own if own in rows else None


def _public(row, current, full=False, machines=None):
    entry = row["entry"] or {}
    ms = row["ms"]
    identity = row_identity(row)
    counts, counted_from = revision_machine_counts(row, machines)
    out = {
        "revision": row["revision"],
        "current": row["revision"] == current,
        "source": row_source(row),
        "template": tmpl.identity(identity),
        "time": entry.get("at") or (paths.get_path(ms, "metadata.creationTimestamp") if ms is not None and row["reused_as"] is None else None),
        "action": entry.get("action"),
        "cause": _entry_cause(entry),
        "reason": entry.get("reason"),
        "rollout_id": entry.get("rollout_id"),
        "actor": entry.get("actor"),
        "machine_set": paths.get_path(ms, "metadata.name") if ms is not None else None,
        "replicas": paths.get_path(ms, "spec.replicas") if ms is not None and row["reused_as"] is None else None,
        "machine_counts": counts,
        "machines_source": counted_from,
        "machines": machines_words(counts),
    }
    if row["reused_as"] is not None:
        out["reused_as"] = row["reused_as"]
    recorded = entry.get("to") if entry else None
    if ms is not None and recorded is not None and not tmpl.up_to_date(tmpl.identity(recorded), out["template"]):
        out["note"] = (f"the record says revision {row['revision']} was {'; '.join(_identity_words(recorded))}, but MachineSet "
                       f"{out['machine_set']} has another template; the MachineSet is what CAPI uses")
    if full:
        out["record"] = copy.deepcopy(row["entry"])
        out["replaced"] = tmpl.identity(entry["from"]) if "from" in entry else (
            tmpl.identity(entry["to"]) if entry else None)
        if ms is not None:
            ms_view = views.machine_set_view(ms)
            template = copy.deepcopy(paths.get_path(ms, "spec.template", {}) or {})
            (paths.get_path(template, "metadata.labels", {}) or {}).pop(keys.MACHINE_TEMPLATE_HASH_LABEL, None)
            out.update({
                "machine_set_template": template,
                "machine_set_created": ms_view["created"],
                "machine_set_replicas": ms_view["replicas"],
                "revision_history": ms_view["revision_history"],
            })
    return out


def _identity_words(identity):
    ident = tmpl.identity(identity)
    words = [f"version {ident['version']}"] if ident["version"] else []
    if ident["infrastructure_ref"]:
        words.append(f"{ident['infrastructure_ref']['kind']} {ident['infrastructure_ref']['name']}")
    return words or ["an empty template"]


def merged_history(md, machine_sets=None, record=None, api_version=None, full=False, templates=None, machines=None):
    """History rows of MD (or KCP) ``md``, newest first, like ``kubectl rollout history``.

    ``machine_sets``: MachineSets of the namespace (ownership is decided here); ``record``: parsed
    entries (default: read from ``md``; warnings are dropped - use history_info for them).
    Row: {revision, current, source: machineset|record|both, template (normalized identity), time,
    action, cause, reason, rollout_id, actor, machine_set, replicas, machine_counts, machines_source, machines,
    previous_revision, changes, change_notes [, reused_as][, note]} (machine counts: revision_machine_counts of
    ``machines``, the Machines of the namespace; None = not read) (see revision_changes; ``templates`` as there); ``full`` adds record,
    replaced, and for MachineSets machine_set_template (hash label removed), machine_set_created,
    machine_set_replicas, revision_history. The changes made besides revisions (change_rows) sit between the
    revisions they came after and before.
    """
    del api_version  # identities do not depend on it; kept for symmetry with the other readers
    rows = collect(md, machine_sets, record)
    current = current_revision(md, rows)
    out = [_public(rows[revision], current, full=full, machines=machines) for revision in sorted(rows, reverse=True)]
    for index, row in enumerate(out):
        row.update(revision_changes(out[index + 1] if index + 1 < len(out) else None, row, templates))
        _fill_cause(row)
    pending = change_rows(md, machine_sets)
    merged = []
    for row in out:
        merged.extend(change for change in pending if change["since_revision"] >= row["revision"])
        pending = [change for change in pending if change["since_revision"] < row["revision"]]
        merged.append(row)
    return merged + pending


def _entry_cause(entry):
    """The cause class of a record entry: an undo or a switch changes the template, a restart only the trigger. A
    topology switch (``topology_after``, core.restart.plan_topology_switch) changes it through the Cluster: the
    object's own patch, which records it, leaves the template to the topology controller."""
    if not entry:
        return None
    if entry.get("in_place") == "allow":
        return history_events.IN_PLACE_UPDATE
    if entry.get("action") == "rolled_back" or "from" in entry or "topology_after" in entry:
        return history_events.TEMPLATE
    return history_events.TRIGGER


def _fill_cause(row):
    """The cause of a revision the record does not hold (a MachineSet of a change made elsewhere): the template when
    it differs from the revision before, else the trigger."""
    if row["cause"] is None and row["previous_revision"] is not None:
        row["cause"] = history_events.TEMPLATE if row["changes"] else history_events.TRIGGER


def _produced(md, machine_sets, change):
    """The MachineSet a template or trigger change made: the oldest owned one of a later revision created at or
    after it (None when unknown, e.g. deleted since on v1.11+)."""
    if change["cause"] not in (history_events.TEMPLATE, history_events.TRIGGER):
        return None
    found = []
    for ms in owned_machine_sets(md, machine_sets):
        revision, created = views.revision_of(ms), paths.get_path(ms, "metadata.creationTimestamp") or ""
        if revision is not None and revision > change["since"] and created[:19] >= (change.get("at") or "")[:19]:
            found.append((revision, paths.get_path(ms, "metadata.name")))
    return min(found)[1] if found else None


def change_rows(obj, machine_sets=None):
    """The change entries of ``obj`` (core.history_events; stored, and seen since the newest record entry) as
    history rows, newest first: {revision: None, since_revision, current: False, source (record: stored; object:
    seen on this read, stored with this collection's next write), time, action "changed", cause, actor, changes,
    machine_set, machines (the effect on the Machines, in words), note}."""
    out = []
    for change in read_changes(obj):
        stored = change["stored"]
        out.append({
            "revision": None, "since_revision": change["since"], "current": False,
            "source": SOURCE_RECORD if stored else "object", "time": change.get("at"), "action": "changed",
            "cause": change["cause"], "actor": change.get("actor"), "reason": None, "rollout_id": None,
            "changes": change["changes"], "machine_set": _produced(obj, machine_sets, change),
            "machines": history_events.machines_effect(change["cause"], change["changes"]),
            "note": f"changed {'' if change.get('actor') == owners.FIELD_MANAGER else 'outside '}"
                    f"since entry {change['since']}" + ("" if stored else " (stored with the next recorded change)"),
        })
    return list(reversed(out))


# ---------------------------------------------------------------------------------------------
# how the Machines of a revision changed

COUNTED_FROM_MACHINES = "machines"
COUNTED_FROM_RECORD = "record"
_IN_PLACE_MARKERS = (keys.PENDING_ACKNOWLEDGE_MOVE_ANNOTATION, keys.UPDATE_IN_PROGRESS_ANNOTATION)


def _controlled_by(obj, owner):
    """Whether ``owner`` (a MachineSet) is the controller of ``obj``: by uid when both have one, else by name."""
    uid, name = paths.get_path(owner, "metadata.uid"), paths.get_path(owner, "metadata.name")
    for owner_ref in paths.get_path(obj, "metadata.ownerReferences", []) or []:
        if owner_ref.get("controller") and owner_ref.get("kind") == apiversion.MACHINE_SET:
            return owner_ref["uid"] == uid if uid and owner_ref.get("uid") else owner_ref.get("name") == name
    return False


def machines_changed(machines, since, belongs):
    """{replaced, updated_in_place} of the ``machines`` that ``belongs(machine)`` (deleting ones left out), the one
    rule for a revision's counts and a switch's result. Created at or after ``since`` (a datetime: the MachineSet's
    creation, or the switch): made for the change, they replaced older ones. Created before it, or carrying
    upstream's in-place markers: CAPI v1.12+ moved them in from an older MachineSet and updated them in place - a moved
    Machine keeps its name and creation time (machinedeployment_rollout_rollingupdate.go,
    api/core/v1beta2/machine_types.go and machineset_types.go at v1.12.3 and v1.14.0)."""
    counts = {"replaced": 0, "updated_in_place": 0}
    for machine in machines:
        meta = machine.get("metadata") or {}
        if meta.get("deletionTimestamp") or not belongs(machine):
            continue
        created = timeutil.parse_optional(meta.get("creationTimestamp"))
        moved = any(key in (meta.get("annotations") or {}) for key in _IN_PLACE_MARKERS) or (
            created is not None and since is not None and created < since)
        counts["updated_in_place" if moved else "replaced"] += 1
    return counts


def machine_counts(machine_set, machines):
    """{replaced, updated_in_place} of the Machines ``machine_set`` controls now, counted from its creation."""
    since = timeutil.parse_optional(paths.get_path(machine_set, "metadata.creationTimestamp"))
    return machines_changed(machines, since, lambda machine: _controlled_by(machine, machine_set))


def _recorded_counts(entry):
    """The counts a record entry keeps (``machines``), None when it has none or they are unreadable."""
    counts = (entry or {}).get("machines")
    if not isinstance(counts, dict) or set(counts) != {"replaced", "updated_in_place"} or not all(
            isinstance(value, int) and not isinstance(value, bool) and value >= 0 for value in counts.values()):
        return None
    return dict(counts)


def revision_machine_counts(row, machines):
    """(counts, counted_from) of a collected row: from the Machines (``machines``) while its own MachineSet exists
    (not one reused for a later revision: its Machines are that revision's), else the counts its record entry kept
    (with_machine_counts); (None, None) when neither is known (a MachineSet deleted before this collection recorded
    its counts, a KubeadmControlPlane, a change made before counts were recorded)."""
    if row["ms"] is not None and row["reused_as"] is None and machines is not None:
        return machine_counts(row["ms"], machines), COUNTED_FROM_MACHINES
    recorded = _recorded_counts(row["entry"])
    return (recorded, COUNTED_FROM_RECORD) if recorded is not None else (None, None)


def machines_words(counts):
    """How the Machines of a revision changed, in words: "2 replaced, 1 updated in place", "none", "not known"."""
    if counts is None:
        return "not known"
    parts = [f"{counts['replaced']} replaced"] if counts["replaced"] else []
    if counts["updated_in_place"]:
        parts.append(f"{counts['updated_in_place']} updated in place")
    return ", ".join(parts) or "none"


def counts_wanted(obj):
    """Whether a write that records a change of ``obj`` should read its namespace's MachineSets and Machines for
    with_machine_counts: a MachineDeployment whose newest record entry is of its present template and has no counts."""
    if apiversion.normalize_kind(obj.get("kind")) != apiversion.MACHINE_DEPLOYMENT:
        return False
    entries, _warnings = read_record(obj)
    return bool(entries) and _recorded_counts(entries[-1]) is None and tmpl.up_to_date(
        tmpl.identity(entries[-1]["to"]), tmpl.identity(identity_of(obj)))


def with_machine_counts(obj, entries, machine_sets, machines):
    """``entries`` (the revision entries as read) with the counts of the revision ``obj`` is at now added to its
    entry (``machines``), from its MachineSet and ``machines``: a write that leaves that revision keeps them, so they
    outlive the MachineSet (CAPI v1.11+ deletes old MachineSets). The same entries when they cannot be counted (not
    read, no MachineSet, no entry of that revision) or the entry has counts already."""
    if machine_sets is None or machines is None or not entries:
        return entries
    rows = collect(obj, machine_sets, entries)
    current = rows.get(current_revision(obj, rows))
    if current is None or current["entry"] is None or _recorded_counts(current["entry"]) is not None:
        return entries
    counts, counted_from = revision_machine_counts(current, machines)
    if counted_from != COUNTED_FROM_MACHINES:
        return entries
    return [dict(entry, machines=counts) if entry is current["entry"] else entry for entry in entries]


# ---------------------------------------------------------------------------------------------
# what changed from one revision to the next

# (identity key, name of the template's spec in change paths, role in core.template.template_refs)
_TEMPLATE_ROLES = (("infrastructure_ref", "infrastructure_template", "infrastructure"),
                   ("bootstrap_ref", "bootstrap_template", "bootstrap"))


def history_template_refs(obj, machine_sets=None, entries=None):
    """The templates (infrastructure and bootstrap config) the revisions of ``obj`` reference, each once:
    [{role, api_group, kind, name, namespace}] (core.template.template_refs entries). What exists of them
    is the ``templates`` of history_info / revision_changes."""
    if entries is None:
        entries, _warnings = read_record(obj)
    namespace = paths.get_path(obj, "metadata.namespace")
    out, seen = [], set()
    rows = collect(obj, machine_sets, entries)
    for revision in sorted(rows):
        for template_ref in tmpl.template_refs(row_identity(rows[revision]), namespace):
            key = (template_ref["api_group"], template_ref["kind"], template_ref["name"])
            if key not in seen:
                seen.add(key)
                out.append({k: template_ref[k] for k in ("role", "api_group", "kind", "name", "namespace")})
    return out


def find_template(templates, template_ref):
    """(state, object) of template ``template_ref`` ({api_group, kind, name}) in ``templates`` ({(api_group, kind):
    [objects that exist]}, as client.templates.existing_templates reads them): ("found", obj), ("missing", None)
    when its kind was read and it is not there, ("unread", None) when its kind was not read."""
    if templates is None or (template_ref["api_group"], template_ref["kind"]) not in templates:
        return "unread", None
    for obj in templates[(template_ref["api_group"], template_ref["kind"])] or []:
        if paths.get_path(obj, "metadata.name") == template_ref["name"]:
            return "found", obj
    return "missing", None


def _ref_words(template_ref):
    return f"{template_ref['kind']} {template_ref['name']}"


def revision_changes(previous, row, templates=None):
    """What changed from history row ``previous`` (the next older revision known; None when ``row`` is the
    oldest) to history row ``row``: {previous_revision, changes, change_notes}.

    ``changes``: [{path, before, after}], only the fields that differ, with dotted paths: the template
    identity (``version``, ``infrastructure_ref.name``, ``bootstrap_ref.name``, ``data_secret_name``,
    ``failure_domain``...) and, when a template reference changed and both templates still exist, their
    specs (``infrastructure_template.spec.template.spec.image``, ``bootstrap_template.spec...``).
    ``change_notes``: why something could not be compared (a template that no longer exists, templates
    not read), that the revision kept its predecessor's template (a restart) or is the oldest known.
    ``templates``: what exists of history_template_refs (see find_template); None = not read.
    """
    notes = []
    mine = row.get("template") or {}
    for key, _label, _role in _TEMPLATE_ROLES:
        template_ref = mine.get(key)
        if template_ref and find_template(templates, template_ref)[0] == "missing":
            notes.append(f"{_ref_words(template_ref)} no longer exists")
    if previous is None:
        notes.append("oldest revision known: nothing to compare with")
        return {"previous_revision": None, "changes": [], "change_notes": notes}
    before = previous.get("template") or {}
    changes = [{"path": paths.join_path(path), "before": old, "after": new}
               for path, old, new in clones.diff_paths(before, mine)]
    for key, label, _role in _TEMPLATE_ROLES:
        old_template_ref, new_template_ref = before.get(key), mine.get(key)
        if not old_template_ref or not new_template_ref or old_template_ref == new_template_ref:
            continue
        (old_state, old_obj), (new_state, new_obj) = find_template(templates, old_template_ref), find_template(templates, new_template_ref)
        if old_state == "found" and new_state == "found":
            changes.extend({"path": paths.join_path(path), "before": old, "after": new} for path, old, new in
                           clones.diff_paths(old_obj.get("spec"), new_obj.get("spec"), (label, "spec")))
        elif "unread" in (old_state, new_state):
            notes.append(f"{label} specs not compared: the templates were not read")
        else:
            gone = [_ref_words(template_ref) for template_ref, state in ((old_template_ref, old_state), (new_template_ref, new_state)) if state == "missing"]
            notes.append(f"{label} specs not compared: {' and '.join(gone)} no longer exist{'s' if len(gone) == 1 else ''}")
    if not changes:
        notes.append(f"same template as revision {previous['revision']} (a restart)")
    return {"previous_revision": previous["revision"], "changes": changes, "change_notes": notes}


def template_specs(row, templates):
    """{infrastructure_template, bootstrap_template} of a history row for the detail of one revision:
    each {kind, name, exists, spec} (exists null and spec null when not read), or null without a reference."""
    out = {}
    for key, label, _role in _TEMPLATE_ROLES:
        template_ref = (row.get("template") or {}).get(key)
        if not template_ref:
            out[label] = None
            continue
        state, obj = find_template(templates, template_ref)
        out[label] = {"kind": template_ref["kind"], "name": template_ref["name"],
                      "exists": None if state == "unread" else state == "found",
                      "spec": copy.deepcopy(obj.get("spec")) if obj is not None else None}
    return out


def known_revisions_text(rows, current=None):
    """"5 (current), 4, 2 (record only)" for messages; "none" when empty."""
    parts = []
    for revision in sorted(rows, reverse=True):
        notes = []
        if revision == current:
            notes.append("current")
        if row_source(rows[revision]) == SOURCE_RECORD:
            notes.append("record only")
        parts.append(f"{revision} ({', '.join(notes)})" if notes else str(revision))
    return ", ".join(parts) or "none"


def history_info(obj, machine_sets=None, api_version=None, revision=None, templates=None, machines=None):
    """What capi_rollout_info returns for ``history: true``: {history: [rows newest first],
    warnings: [...]}; with ``revision`` (an int) only that revision in full (plus template_specs and changed_since,
    the change rows after it),
    RolloutError ``revision_not_found`` (listing the revisions there are) when it is unknown.
    ``templates``: what exists of history_template_refs (see revision_changes); None = not read. ``machines``: the
    Machines of the namespace, for the counts of revisions whose MachineSet exists; None = not read."""
    entries, warnings = read_record(obj)
    if revision is None:
        return {"history": merged_history(obj, machine_sets, entries, api_version=api_version, templates=templates,
                                          machines=machines),
                "warnings": warnings}
    rows = collect(obj, machine_sets, entries)
    try:
        wanted = int(revision)
    except (TypeError, ValueError):
        wanted = None
    current = current_revision(obj, rows)
    if wanted not in rows:
        raise RolloutError(f"unable to find revision {revision}", ref=ref_of(obj),
                           hint=f"revisions that exist: {known_revisions_text(rows, current)}", reason="revision_not_found")
    older = [number for number in rows if number < wanted]
    previous = _public(rows[max(older)], current) if older else None
    out = _public(rows[wanted], current, full=True, machines=machines)
    out.update(revision_changes(previous, out, templates))
    _fill_cause(out)
    out["template_specs"] = template_specs(out, templates)
    # what changed after this revision without making another (in-place fields, scale, settings)
    out["changed_since"] = [row for row in change_rows(obj, machine_sets) if row["since_revision"] == wanted]
    return {"history": [out], "warnings": warnings}
