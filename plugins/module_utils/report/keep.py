# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Whether the fleet report already written for a refresh still tells the outcome of a run that changed nothing.

A re-run with the same refresh id after the refresh succeeded finds every object on its target template and
changes nothing on any management cluster (no switch, no wait, no lock). Writing its report over the one of the
run that did the work would lose what was switched, when and in which wave, and would change
three files for a run that changed nothing. Such a run keeps the existing report instead - but only when that
report is of the same refresh, succeeded, and names exactly the same management clusters and objects on the same
target templates; anything else (a failed or partial earlier run, another selection, check mode, a slice) is
written as before.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json


def _objects(cluster):
    return {(o.get("kind"), o.get("namespace"), o.get("name")): o for o in cluster.get("objects") or []}


def _changed_nothing(cluster):
    """True when this run's entry of a management cluster says nothing was done there and all is on target."""
    objects = cluster.get("objects") or []
    return (cluster.get("result") == "succeeded" and cluster.get("lock") is None and bool(objects)
            and all(o.get("action") == "unchanged" and o.get("result") == "succeeded" for o in objects))


def _done(cluster):
    objects = cluster.get("objects") or []
    return (cluster.get("result") == "succeeded" and bool(objects)
            and all(o.get("action") in ("switch", "unchanged") and o.get("result") == "succeeded" for o in objects))


def still_holds(new, existing_text):
    """(keep, reason): keep is True when ``existing_text`` (the report.json found where ``new`` would be written)
    already tells the outcome of the run that made ``new``, so ``new`` need not replace it."""
    if not isinstance(new, dict) or not existing_text:
        return False, "no earlier report"
    try:
        existing = json.loads(existing_text)
    except ValueError:
        return False, "the earlier report.json is not JSON"
    if not isinstance(existing, dict):
        return False, "the earlier report.json is not a report"
    for key in ("report_version", "refresh_id", "mode"):
        if existing.get(key) != new.get(key):
            return False, "the earlier report has another %s" % key
    if new.get("mode") != "apply" or new.get("slice") or existing.get("slice"):
        return False, "only the report of a whole applied run is kept"
    new_clusters = {c.get("name"): c for c in new.get("management_clusters") or []}
    old_clusters = {c.get("name"): c for c in existing.get("management_clusters") or []}
    if not new_clusters or set(new_clusters) != set(old_clusters):
        return False, "the earlier report is of other management clusters"
    for name, cluster in new_clusters.items():
        if not _changed_nothing(cluster):
            return False, "%s: this run did something or found something to do" % name
        old = old_clusters[name]
        if not _done(old):
            return False, "%s: the earlier report is not of a finished, successful refresh" % name
        new_objects, old_objects = _objects(cluster), _objects(old)
        if set(new_objects) != set(old_objects):
            return False, "%s: the earlier report is of other objects" % name
        for key, obj in new_objects.items():
            if (obj.get("after") or None) != (old_objects[key].get("after") or None):
                return False, "%s: %s/%s/%s has another target than in the earlier report" % ((name,) + key)
    return True, ("every object is still where the earlier report of %s put it and this run changed nothing"
                  % new.get("refresh_id"))
