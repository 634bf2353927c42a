# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What CAPI's MachineDeployment controller does to MachineSets and revisions once a rollout has
completed (reference §3.2, §3.3, §3.5, §3.10), reduced to what history and undo read. Written from
the reference, independently of the core, so the core is checked against it:

- the "new" MachineSet is the one whose template equals the MD's on version, bootstrap,
  infrastructureRef (group/kind/name) and failureDomain, and (with an expired rolloutAfter) was
  created at or after rolloutAfter; none -> a new MachineSet is created;
- its revision becomes max(revision of the other MachineSets) + 1, never decreased; a changed
  revision is appended to revision-history; the MD revision annotation copies it;
- v1.10 keeps revisionHistoryLimit (1) old MachineSets at 0 replicas, v1.11+ deletes them all.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime

from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

REVISION = "machinedeployment.clusters.x-k8s.io/revision"
HISTORY = "machinedeployment.clusters.x-k8s.io/revision-history"


def _group(ref):
    if "apiGroup" in ref:
        return ref["apiGroup"]
    return ref.get("apiVersion", "").rsplit("/", 1)[0] if "/" in ref.get("apiVersion", "") else ""


def _ref_key(ref):
    return None if not ref else (_group(ref), ref.get("kind"), ref.get("name"))


def _identity(spec):
    bootstrap = spec.get("bootstrap") or {}
    return (spec.get("version"), _ref_key(spec.get("infrastructureRef")), _ref_key(bootstrap.get("configRef")),
            bootstrap.get("dataSecretName"), spec.get("failureDomain"))


def _rev(ms):
    try:
        return int(ms["metadata"]["annotations"].get(REVISION))
    except (TypeError, ValueError):
        return 0


def _time(value):
    return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")


def _after(md):
    spec = md["spec"]
    return spec.get("rolloutAfter") or (spec.get("rollout") or {}).get("after")


def complete_rollout(md, machine_sets, release="v1.14", now=objs.NOW_TEXT, suffix=None):
    """(md, machine_sets) after the controller finished the rollout ``md`` asks for."""
    md = copy.deepcopy(md)
    version = md["apiVersion"].rsplit("/", 1)[1]
    sets = [copy.deepcopy(ms) for ms in machine_sets]
    wanted = _identity(md["spec"]["template"]["spec"])
    after = _after(md)
    expired = after is not None and _time(after) <= _time(now)
    new = None
    for ms in sets:
        if _identity(ms["spec"]["template"]["spec"]) != wanted:
            continue
        if expired and _time(ms["metadata"]["creationTimestamp"]) < _time(after):
            continue
        new = ms
        break
    if new is None:
        suffix = suffix or f"r{len(sets) + 1:04d}"[-5:]
        new = objs.machine_set(version, md_name=md["metadata"]["name"], suffix=suffix, revision="", created=now,
                               replicas=md["spec"]["replicas"])
        new["spec"]["template"]["spec"] = copy.deepcopy(md["spec"]["template"]["spec"])
        sets.append(new)
    max_old = max([_rev(ms) for ms in sets if ms is not new] or [0])
    current = _rev(new)
    target = max(max_old + 1, current)
    annotations = new["metadata"]["annotations"]
    if current and target != current:
        annotations[HISTORY] = f"{annotations[HISTORY]},{current}" if annotations.get(HISTORY) else str(current)
    annotations[REVISION] = str(target)
    md["metadata"]["annotations"][REVISION] = str(target)
    for ms in sets:
        ms["spec"]["replicas"] = md["spec"]["replicas"] if ms is new else 0
    old = sorted((ms for ms in sets if ms is not new), key=_rev)
    keep = 0 if release != "v1.10" else 1
    dropped = old[:len(old) - keep] if keep else old
    sets = [ms for ms in sets if all(ms is not gone for gone in dropped)]
    return md, sets
