# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan every verb returns: what will be sent (patch), what changes (before/after/diff), and why."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import collections
from typing import Any, Dict, List, Optional, Sequence, TypedDict, cast

from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref

UNCHANGED = "unchanged"
PATCH_JSON = "json"  # application/json-patch+json: every write (core.patch)


class Plan(TypedDict):
    """The keys every verb's plan has (``new_plan``); a verb's own keys (restart: ``rollout_after``,
    ``history_revision``, ``required_templates``; undo: ``to_revision``, ...) ride along untyped."""

    action: str
    changed: bool
    ref: str
    kind: str
    name: Optional[str]
    namespace: Optional[str]
    api_version: Optional[str]
    resource_version: Optional[str]
    patch: Optional[List[Dict[str, Any]]]
    patch_type: str
    merge_patch: Optional[Dict[str, Any]]
    before: Dict[str, Any]
    after: Dict[str, Any]
    changes: List[Dict[str, Any]]
    diff: Dict[str, str]
    message: str
    warnings: List[str]


class Observed(collections.namedtuple("Observed", ("api_version", "cluster", "machine_sets", "machines", "control_plane",
                                                   "control_plane_version", "existing_templates", "in_place_possible"),
                                      defaults=(None, None, None, None, None, None, None, None))):
    """What the flow read around the object a planner plans for (None: not read); each planner uses its part.

    ``api_version``: the API version the object was read through (default: its own apiVersion); ``cluster``: its
    Cluster (pause checks, topology); ``machine_sets`` / ``machines``: the MachineSets / Machines of its namespace
    (ownership is decided by the planner); ``control_plane`` (object) or ``control_plane_version`` (a string): the
    control plane's Kubernetes version, for the version skew check of an undo; ``existing_templates``: what exists of
    the templates a plan requires (core.template.missing_templates); ``in_place_possible``: CAPI may update
    Machines in place on this management cluster (client.extensions)."""

    __slots__ = ()


def new_plan(obj: Dict[str, Any], kind: str, version: Optional[str], action: str, changes: Optional[ChangeSet] = None,
             message: str = "", relied_on: Optional[Sequence[Sequence[str]]] = None, warnings: Optional[List[str]] = None,
             **extra: Any) -> Plan:
    """Plan dict; no changes means no patch.

    ``patch`` is the JSON patch (RFC 6902, core.patch) that is sent: ``test`` operations on the fields in
    ``relied_on`` and on every changed field, with their values in ``obj``, then the change. A concurrent
    change of any of them fails the write; the client re-reads and re-plans. ``merge_patch`` is the same
    change as an RFC 7386 merge patch (for reading and tests; never sent).

    Keys: action, changed, ref, kind, name, namespace, api_version, resource_version, patch,
    patch_type, merge_patch, before, after, changes, diff, message, warnings, plus verb-specific ``extra``.
    """
    changes = changes if changes is not None else ChangeSet()
    meta = obj.get("metadata") or {}
    ref = make_ref(kind, meta.get("namespace"), meta.get("name"))
    changed = changes.changed
    patch = patches.json_patch(obj, changes, relied_on) if changed else None
    out: Plan = {
        "action": action if changed else UNCHANGED,
        "changed": changed,
        "ref": ref,
        "kind": kind,
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "api_version": version,
        # The object's version as read (for the record; writes are guarded by the patch's tests instead).
        "resource_version": meta.get("resourceVersion"),
        "patch": patch,
        "patch_type": PATCH_JSON,
        "merge_patch": changes.merge_patch() if changed else None,
        "before": changes.before(),
        "after": changes.after(),
        "changes": changes.changes(),
        "diff": changes.diff(header=ref),
        "message": f"{ref}: {message}" if message else ref,
        "warnings": list(warnings or []),
    }
    return cast(Plan, dict(out, **extra))
