# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan every verb returns: what will be sent (patch), what changes (before/after/diff), and why."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref

UNCHANGED = "unchanged"
PATCH_MERGE = "merge"  # application/merge-patch+json
PATCH_JSON = "json"    # application/json-patch+json


def new_plan(obj, kind, version, action, changes=None, message="", patch=None, patch_type=PATCH_MERGE, warnings=None, **extra):
    """Plan dict. ``patch`` defaults to the ChangeSet's merge patch; no changes means no patch.

    Keys: action, changed, ref, kind, name, namespace, api_version, resource_version, patch,
    patch_type, before, after, changes, diff, message, warnings, plus verb-specific ``extra``.
    """
    changes = changes if changes is not None else ChangeSet()
    meta = obj.get("metadata") or {}
    ref = make_ref(kind, meta.get("namespace"), meta.get("name"))
    changed = changes.changed
    if changed and patch is None:
        patch = changes.merge_patch()
    out = {
        "action": action if changed else UNCHANGED,
        "changed": changed,
        "ref": ref,
        "kind": kind,
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "api_version": version,
        # For optimistic concurrency the client may send the patch with this resourceVersion, so the
        # guards checked here hold for the object that is patched.
        "resource_version": meta.get("resourceVersion"),
        "patch": patch if changed else None,
        "patch_type": patch_type,
        "before": changes.before(),
        "after": changes.after(),
        "changes": changes.changes(),
        "diff": changes.diff(header=ref),
        "message": f"{ref}: {message}" if message else ref,
        "warnings": list(warnings or []),
    }
    out.update(extra)
    return out


def record_entry(now_text, action, rollout_id=None, reason=None, actor=None, **details):
    """Compact JSON for the last-rollout annotation; None fields are left out."""
    entry = {"id": None if rollout_id is None else str(rollout_id), "at": now_text, "action": action,
             "reason": reason, "actor": actor}
    entry.update(details)
    return json.dumps({k: v for k, v in entry.items() if v is not None}, sort_keys=True, separators=(",", ":"))


def record_path():
    return ("metadata", "annotations", keys.LAST_ROLLOUT_ANNOTATION)


def current_record_raw(obj):
    return apiversion.get_path(obj, record_path())
