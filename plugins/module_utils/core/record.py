# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The records a change writes in the same JSON patch as the change itself: the last-rollout annotation (what
was done last, when by the API server's clock, by whom, why, under which rollout id) and, for a rollout, a new
entry of the history annotation (core.history). Restart and undo record both (``record_rollout``); a pause
records only the last-rollout annotation (``record_last_rollout``)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil

LAST_ROLLOUT_PATH = ("metadata", "annotations", keys.LAST_ROLLOUT_ANNOTATION)


def last_rollout_value(at_text, action, rollout_id=None, reason=None, actor=None, **details):
    """Compact JSON for the last-rollout annotation; None fields are left out."""
    entry = {"id": None if rollout_id is None else str(rollout_id), "at": at_text, "action": action,
             "reason": reason, "actor": actor}
    entry.update(details)
    return json.dumps({k: v for k, v in entry.items() if v is not None}, sort_keys=True, separators=(",", ":"))


def record_last_rollout(changes, obj, now, action, rollout_id=None, reason=None, actor=None, **details):
    """Record the new last-rollout annotation of ``obj`` in ChangeSet ``changes``."""
    changes.record(LAST_ROLLOUT_PATH, paths.get_path(obj, LAST_ROLLOUT_PATH),
                   last_rollout_value(timeutil.format_time(now), action, rollout_id, reason, actor, **details))


def record_rollout(changes, obj, written, now, action, revision, entries, history_limit, api_version=None,
                   rollout_id=None, reason=None, actor=None, last_details=None, entry_details=None):
    """Record a rollout of ``obj`` (``written``: the object as the change leaves it) in ChangeSet ``changes``:
    the last-rollout annotation (with ``last_details``) and history entry ``revision`` (with ``entry_details``)
    appended to ``entries``, the history as read. Returns the history entry."""
    record_last_rollout(changes, obj, now, action, rollout_id, reason, actor, **(last_details or {}))
    entry = hist.make_entry(revision, now, action, hist.identity_of(obj, api_version), hist.identity_of(written, api_version),
                            rollout_id=rollout_id, reason=reason, actor=actor, **(entry_details or {}))
    hist.record_change(changes, obj, entry, history_limit, entries)
    return entry
