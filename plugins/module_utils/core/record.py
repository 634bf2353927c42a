# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The records a change writes in the same JSON patch as the change itself: the last-rollout annotation (what
was done last, when by the API server's clock, by whom, why, under which rollout id) and, for a rollout, a new
entry of the history annotation (core.history). Restart and undo record both (``record_rollout``); a pause
records only the last-rollout annotation (``record_last_rollout``). What a change records is a ``Recording``."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import collections
import json

from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import history_events
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil

LAST_ROLLOUT_PATH = ("metadata", "annotations", keys.LAST_ROLLOUT_ANNOTATION)


class Recording(collections.namedtuple("Recording", ("rollout_id", "reason", "actor", "enabled", "history_limit"),
                                       defaults=(None, None, None, True, None))):
    """What a change records, the same for every verb's planner: ``rollout_id`` (a repeated id plans nothing),
    ``reason`` and ``actor`` (written with it), ``enabled`` (False: write neither the last-rollout annotation nor a
    history entry) and ``history_limit`` (entries the history keeps; None: core.history's default)."""

    __slots__ = ()

    @classmethod
    def from_params(cls, params, actor, enabled=True):
        """The Recording of a verb's module ``params`` (rollout_id, reason, history_limit) made by ``actor``."""
        return cls(rollout_id=params.get("rollout_id"), reason=params.get("reason"), actor=actor, enabled=enabled,
                   history_limit=params.get("history_limit"))


def last_rollout_value(at_text, action, rollout_id=None, reason=None, actor=None, **details):
    """Compact JSON for the last-rollout annotation; None fields are left out."""
    entry = {"id": None if rollout_id is None else str(rollout_id), "at": at_text, "action": action,
             "reason": reason, "actor": actor}
    entry.update(details)
    return json.dumps({k: v for k, v in entry.items() if v is not None}, sort_keys=True, separators=(",", ":"))


def record_last_rollout(changes, obj, now, action, recording, **details):
    """Record the new last-rollout annotation of ``obj`` (id, reason and actor of Recording ``recording``) in
    ChangeSet ``changes``."""
    changes.add(LAST_ROLLOUT_PATH, paths.get_path(obj, LAST_ROLLOUT_PATH),
                last_rollout_value(timeutil.format_time(now), action, recording.rollout_id, recording.reason,
                                   recording.actor, **details))


def record_rollout(changes, obj, written, now, action, revision, entries, recording, api_version=None,
                   last_details=None, entry_details=None, observed=None):
    """Record a rollout of ``obj`` (``written``: the object as the change leaves it) in ChangeSet ``changes``:
    the last-rollout annotation (with ``last_details``) and history entry ``revision`` (with ``entry_details``)
    appended to ``entries``, the history as read. Id, reason, actor and the number of entries kept come from
    Recording ``recording`` (its history_limit validated by the planner). The entry carries the snapshot of
    ``written`` that later reads compare the object with (core.history_events); the entry of the revision the change
    leaves gets its Machine counts when ``observed`` (core.plan.Observed) holds the MachineSets and Machines
    (core.history.with_machine_counts). Returns the history entry."""
    record_last_rollout(changes, obj, now, action, recording, **(last_details or {}))
    if observed is not None:
        entries = hist.with_machine_counts(obj, entries, observed.machine_sets, observed.machines)
    details = dict(entry_details or {}, **history_events.snapshot_fields(written))
    entry = hist.make_entry(revision, now, action, hist.identity_of(obj, api_version), hist.identity_of(written, api_version),
                            rollout_id=recording.rollout_id, reason=recording.reason, actor=recording.actor, **details)
    hist.record_change(changes, obj, entry, recording.history_limit, entries)
    return entry
