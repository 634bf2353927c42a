# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report data model: normalisation of a (possibly partial) report and its summary counts.

``normalize(report)`` accepts the documented report dict (see docs/report.md) with any optional
field missing, mistyped or unknown and returns a complete structure the renderers can rely on:
times become aware UTC datetimes or None, lists are lists, unknown results stay as given.
``summarize(report)`` returns plain counts (ints, strings, lists of dicts) for set_stats.
What the reports say is decided here, once: a management cluster's result (``cluster_result``, the
rule the hardware_refresh role applies), an object's name, wave, result words and action text, what
was undone (``is_reverted``) and what needs attention (``attention``). The Markdown and HTML
renderers only format it. No I/O.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref

from ansible_collections.capi.rollout.plugins.module_utils.report.fmt import (
    DASH,
    as_int,
    as_text,
    as_time,
    seconds_between,
)

REPORT_VERSION = 1

CLUSTER_RESULTS = ("succeeded", "failed", "partial", "stopped_window", "running", "planned", "skipped")
# deleted: the object disappeared while its wave rolled out (finished: when the wait saw it gone)
OBJECT_RESULTS = ("succeeded", "failed", "deleted", "undone", "running", "pending", "skipped", "planned")
ACTIONS = ("switch", "unchanged", "skip", "undo", "plan")

# Every object lands in exactly one bucket (see object_bucket). On top of that, "blocked" counts
# objects with blockers and "reverted" objects whose undo finished (failed ones included).
BUCKETS = ("switched", "unchanged", "failed", "deleted", "undone", "running", "pending", "skipped", "planned", "other")

KIND_ORDER = {"kubeadmcontrolplane": 0, "machinedeployment": 1}
KIND_SHORT = {"kubeadmcontrolplane": "KCP", "machinedeployment": "MD"}

# the object results a management cluster, a wave and the "Needs attention" section count as failures
FAILURES = ("failed", "deleted", "undone")

_NEXT_STEP = re.compile(r"\s*Next step:\s*", re.IGNORECASE)


class NormalizedReport(dict):
    """What normalize() returns; renderers accept it as is instead of normalising again."""


def _dict(value):
    return value if isinstance(value, dict) else {}


def _list(value):
    if isinstance(value, (list, tuple)):
        return list(value)
    return []


def _word(value, default=None):
    """Lower-case keyword (result, action, mode); None/empty gives ``default``."""
    text = as_text(value)
    if text is None or not text.strip():
        return default
    return text.strip().lower().replace("-", "_").replace(" ", "_")


def _strings(value):
    """List of non-empty display strings from a list (or a single string)."""
    if isinstance(value, str):
        value = [value]
    out = []
    for item in _list(value):
        if isinstance(item, dict):
            item = item.get("message") or item.get("reason") or item.get("name")
        text = as_text(item)
        if text and text.strip():
            out.append(text)
    return out


def split_next_step(reason, next_step=None):
    """(reason, next_step): a ``Next step: ...`` tail of the reason moves to next_step unless one is given."""
    reason = as_text(reason)
    next_step = as_text(next_step)
    if reason and not next_step:
        parts = _NEXT_STEP.split(reason, maxsplit=1)
        if len(parts) == 2 and parts[1].strip():
            reason = parts[0].rstrip()
            next_step = parts[1].strip()
    return (reason or None), (next_step or None)


def _template(value):
    """{'kind', 'name', 'version'} from ``{infrastructure_ref: {kind, name}, version}`` or a plain string."""
    value_dict = _dict(value)
    if isinstance(value, str):
        value_dict = {"infrastructure_ref": value}
    ref = value_dict.get("infrastructure_ref", value_dict.get("infrastructureRef", value_dict.get("template")))
    kind = name = None
    if isinstance(ref, dict):
        kind = as_text(ref.get("kind"))
        name = as_text(ref.get("name"))
    elif isinstance(ref, str) and ref:
        if "/" in ref:
            kind, name = ref.split("/", 1)
        else:
            name = ref
    return {"kind": kind or None, "name": name or None, "version": as_text(value_dict.get("version")) or None}


def object_ref(kind, namespace, name):
    """``machinedeployment/team-a/prod-1-md-0`` (namespace omitted when unknown): the ``ref`` of every message of the
    collection (core.errors.ref), so a report and the task that failed name an object alike."""
    return make_ref(kind or "Object", namespace, name or "?")


def _ref_key(ref):
    return (as_text(ref) or "").strip().lower()


def _stuck(value):
    out = []
    for item in _list(value):
        if isinstance(item, dict):
            name = as_text(item.get("name") or item.get("machine"))
            node = as_text(item.get("node") or item.get("node_name"))
            reason = as_text(item.get("reason") or item.get("message"))
            if name or node or reason:
                out.append({"name": name, "node": node, "reason": reason})
        elif as_text(item):
            out.append({"name": as_text(item), "node": None, "reason": None})
    return out


def undo_state(undo):
    """The one rule of what an object's undo came to: ``failed``, ``undone`` (finished and succeeded, or finished
    recording no result: the object is back on its template), ``undoing`` (started, not finished), or None (no undo)."""
    if not undo:
        return None
    if undo["result"] == "failed":
        return "failed"
    if undo["finished"] and undo["result"] in ("succeeded", None):
        return "undone"
    return "undoing" if undo["started"] else None


def _undo(value):
    if not isinstance(value, dict):
        return None
    reason, next_step = split_next_step(value.get("failure_reason"), value.get("next_step"))
    undo = {
        "started": as_time(value.get("started")),
        "finished": as_time(value.get("finished")),
        "result": _word(value.get("result")),
        "failure_reason": reason,
        "next_step": next_step,
    }
    undo["state"] = undo_state(undo)
    return undo


def _machines(value):
    """{replaced, updated_in_place} as the wait read them from the Machines (capi_rollout_wait), or None."""
    value = _dict(value)
    if not value:
        return None
    return {"replaced": as_int(value.get("replaced"), 0), "updated_in_place": as_int(value.get("updated_in_place"), 0)}


def _object(raw, index):
    raw = _dict(raw)
    kind = as_text(raw.get("kind")) or "MachineDeployment"
    namespace = as_text(raw.get("namespace")) or None
    name = as_text(raw.get("name")) or "?"
    reason, next_step = split_next_step(raw.get("failure_reason"), raw.get("next_step"))
    obj = {
        "kind": kind,
        "kind_short": KIND_SHORT.get(kind.lower(), kind),
        "namespace": namespace,
        "name": name,
        "ref": object_ref(kind, namespace, name),
        "cluster": as_text(raw.get("cluster")) or None,
        "replicas": as_int(raw.get("replicas")),
        "wave": as_int(raw.get("wave")),
        "before": _template(raw.get("before")),
        "after": _template(raw.get("after")),
        "action": _word(raw.get("action")),
        "result": _word(raw.get("result")),
        "started": as_time(raw.get("started")),
        "finished": as_time(raw.get("finished")),
        "undo": _undo(raw.get("undo")),
        "failure_reason": reason,
        "next_step": next_step,
        "blockers": _strings(raw.get("blockers")),
        "stuck_machines": _stuck(raw.get("stuck_machines")),
        # the Machines whose drain timed out ({name, node, reason}, as stuck_machines): deleted with Pods not evicted
        "drain_timeouts": _stuck(raw.get("drain_timeouts")),
        "machines": _machines(raw.get("machines")),
        "order": index,
    }
    if obj["result"] is None:
        obj["result"] = "planned" if obj["action"] == "plan" else "pending"
    if obj["action"] is None:
        obj["action"] = "plan" if obj["result"] == "planned" else "switch"
    if obj["result"] in FAILURES and obj["failure_reason"] is None:
        obj["failure_reason"] = "no failure reason recorded"
    return obj


def _wave(raw, position):
    raw = _dict(raw)
    index = as_int(raw.get("index"), position)
    return {
        "index": index,
        "name": as_text(raw.get("name")) or None,
        "refs": [_ref_key(r) for r in _list(raw.get("objects")) if as_text(r)],
        "started": as_time(raw.get("started")),
        "rollout_finished": as_time(raw.get("rollout_finished")),
        "soak_finished": as_time(raw.get("soak_finished")),
        "finished": as_time(raw.get("finished")),
        "result": _word(raw.get("result")),
    }


def cluster_result(objects, mode, stopped=None):
    """The result of one management cluster, as the hardware_refresh role reports it.

    ``objects``: the report objects (dicts with ``action`` and ``result``); ``mode``: ``check`` or
    ``apply``; ``stopped``: the result the run stopped with (``failed``, ``stopped_window``,
    ``skipped``), which wins. Otherwise: ``failed`` when an object failed, was deleted or was undone; ``planned``
    in check mode (and for objects that are all planned); ``partial`` while objects are pending or
    running, or when some but not all were skipped; ``skipped`` when all were (or there are none);
    else ``succeeded``.
    """
    if stopped:
        return stopped
    results = [_dict(o).get("result") for o in objects]
    if set(results) & set(FAILURES):
        return "failed"
    # a report written without a mode can still be a plan: its objects say so
    if mode == "check" or ("planned" in results and set(results) <= {"planned", "skipped"}):
        return "planned"
    skipped = [o for o in objects if _dict(o).get("action") == "skip" or _dict(o).get("result") == "skipped"]
    if "pending" in results or "running" in results or 0 < len(skipped) < len(objects):
        return "partial"
    if len(skipped) == len(objects):
        return "skipped"
    return "succeeded"


def wave_result(objects):
    """The result of a wave that recorded none, from its objects: unlike a management cluster, a wave
    is ``running`` while an object rolls out and ``pending`` until one starts."""
    results = set(o["result"] for o in objects)
    if results & set(FAILURES):
        return "failed"
    if "running" in results:
        return "running"
    if "planned" in results and results <= {"planned", "skipped"}:
        return "planned"
    if "pending" in results:
        return "partial" if results - {"pending"} else "pending"
    if results <= {"skipped"}:
        return "skipped"
    return "succeeded"


def _span(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    return min(values), max(values)


def _cluster(raw, position, mode):
    raw = _dict(raw)
    objects = [_object(o, i) for i, o in enumerate(_list(raw.get("objects")))]
    waves = [_wave(w, i) for i, w in enumerate(_list(raw.get("waves")))]
    by_ref = dict((_ref_key(o["ref"]), o) for o in objects)
    for wave in waves:
        # objects named by the wave but carrying no wave index of their own belong to it
        for ref in wave["refs"]:
            obj = by_ref.get(ref)
            if obj is not None and obj["wave"] is None:
                obj["wave"] = wave["index"]
    known = set(w["index"] for w in waves)
    for obj in objects:
        if obj["wave"] is not None and obj["wave"] not in known:
            waves.append({"index": obj["wave"], "name": None, "refs": [], "started": None, "rollout_finished": None,
                          "soak_finished": None, "finished": None, "result": None})
            known.add(obj["wave"])
    waves.sort(key=lambda w: w["index"])
    for wave in waves:
        members = [o for o in objects if o["wave"] == wave["index"]]
        wave["objects"] = members
        if wave["started"] is None:
            wave["started"] = _span([o["started"] for o in members])[0]
        if wave["rollout_finished"] is None and members and all(
                o["finished"] and o["result"] in ("succeeded", "undone") for o in members):
            wave["rollout_finished"] = _span([o["finished"] for o in members])[1]
        if wave["finished"] is None:
            wave["finished"] = wave["soak_finished"] or _span(
                [o["finished"] for o in members] + [(o["undo"] or {}).get("finished") for o in members])[1]
        if wave["result"] is None and members:
            wave["result"] = wave_result(members)
    objects.sort(key=lambda o: (
        -1 if o["wave"] is None else o["wave"],
        KIND_ORDER.get(o["kind"].lower(), 2),
        o["order"],
    ))
    reason, next_step = split_next_step(raw.get("failure_reason"), raw.get("next_step"))
    lock = _dict(raw.get("lock"))
    cluster = {
        "name": as_text(raw.get("name")) or f"management-cluster-{position + 1}",
        "capi_version": as_text(raw.get("capi_version")) or None,
        "api_version": as_text(raw.get("api_version")) or None,
        "result": _word(raw.get("result")) or cluster_result(objects, mode),
        "failure_reason": reason,
        "next_step": next_step,
        "started": as_time(raw.get("started")),
        "finished": as_time(raw.get("finished")),
        "lock": {
            "holder": as_text(lock.get("holder")) or None,
            "acquired": as_time(lock.get("acquired")),
            "released": as_time(lock.get("released")),
        } if lock else None,
        "waves": waves,
        "objects": objects,
        "notes": _strings(raw.get("notes")),
    }
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in cluster["name"])
    cluster["anchor"] = f"mc-{position + 1}-{safe}"
    times = [cluster["started"]]
    for obj in objects:
        times.extend([obj["started"], obj["finished"]])
        if obj["undo"]:
            times.extend([obj["undo"]["started"], obj["undo"]["finished"]])
    for wave in waves:
        times.extend([wave["started"], wave["rollout_finished"], wave["soak_finished"], wave["finished"]])
    times.append(cluster["finished"])
    first, last = _span(times)
    if cluster["started"] is None:
        cluster["started"] = first
    if cluster["finished"] is None and cluster["result"] not in ("running",):
        cluster["finished"] = last if last != cluster["started"] else None
    cluster["span"] = (first, last)
    cluster["duration_seconds"] = seconds_between(cluster["started"], cluster["finished"])
    return cluster


def overall_status(mode, clusters):
    """One word for the whole run: failed > stopped_window > partial > running > succeeded > planned > skipped."""
    results = [c["result"] for c in clusters]
    for status in ("failed", "stopped_window", "partial", "running", "pending"):
        if status in results:
            return "partial" if status == "pending" else status
    if mode == "check" or "planned" in results:
        return "planned"
    if "succeeded" in results:
        return "succeeded"
    if results and all(r == "skipped" for r in results):
        return "skipped"
    return results[0] if results else "skipped"


def normalize(report):
    """Complete, renderer-ready copy of ``report`` (see the module docstring). Raises TypeError for a non-dict."""
    if not isinstance(report, dict):
        raise TypeError(f"the fleet report must be a dict, got {type(report).__name__}")
    raw_clusters = _list(report.get("management_clusters"))
    mode = _word(report.get("mode"))
    if mode is None:
        planned_only = raw_clusters and all(_word(_dict(c).get("result")) == "planned" for c in raw_clusters)
        mode = "check" if planned_only else "apply"
    clusters = [_cluster(c, i, mode) for i, c in enumerate(raw_clusters)]
    window = _dict(report.get("window"))
    out = {
        "report_version": as_int(report.get("report_version"), REPORT_VERSION),
        "refresh_id": as_text(report.get("refresh_id")) or None,
        "mode": mode,
        "started": as_time(report.get("started")),
        "finished": as_time(report.get("finished")),
        "window": {"start": as_time(window.get("start")), "end": as_time(window.get("end"))} if window else None,
        "run_by": as_text(report.get("run_by")) or None,
        "management_clusters": clusters,
    }
    first = _span([out["started"]] + [c["span"][0] for c in clusters])[0]
    last = _span([out["finished"]] + [c["span"][1] for c in clusters])[1]
    if out["started"] is None:
        out["started"] = first
    if out["finished"] is None and mode != "check":
        out["finished"] = last if last != out["started"] else None
    out["result"] = _word(report.get("result")) or overall_status(mode, clusters)
    out["duration_seconds"] = seconds_between(out["started"], out["finished"])
    return NormalizedReport(out)


def object_bucket(obj):
    """The one count an object adds to (see BUCKETS)."""
    action, result = obj["action"], obj["result"]
    if action == "unchanged" and result in ("succeeded", "planned", "skipped", "pending"):
        return "unchanged"
    if result == "undone" or (action == "undo" and result == "succeeded"):
        return "undone"
    if result == "succeeded":
        return "switched"
    if result in BUCKETS:
        return result
    return "other"


RESULT_LABELS = {
    "succeeded": "succeeded",
    "failed": "failed",
    "partial": "partial",
    "stopped_window": "stopped: window",
    "running": "running",
    "pending": "not started",
    "planned": "planned",
    "skipped": "skipped",
    "undone": "undone",
    "deleted": "deleted",
    "unchanged": "already on target",
}

ACTION_TEXTS = {
    "switch": "switch template",
    "plan": "switch template",
    "unchanged": "none (already on target)",
    "skip": "skip",
    "undo": "undo",
}


def result_label(result):
    """The words for a result (of the run, a management cluster, a wave or an object)."""
    return RESULT_LABELS.get(result, (result or "unknown").replace("_", " "))


def action_text(obj):
    """What the plan does with an object, in words."""
    return ACTION_TEXTS.get(obj["action"], obj["action"])


def object_name(obj):
    """``team-a/prod-1-md-0`` (no namespace when unknown)."""
    return f"{obj['namespace']}/{obj['name']}" if obj["namespace"] else obj["name"]


def object_label(obj):
    """``MD team-a/prod-1-md-0``: the short kind and the name."""
    return f"{obj['kind_short']} {object_name(obj)}"


def wave_of(cluster, obj):
    """The wave an object belongs to, or None."""
    for wave in cluster["waves"]:
        if wave["index"] == obj["wave"]:
            return wave
    return None


def wave_label(cluster, index):
    """``2 \u00b7 bulk``, or just the index when the wave has no name; a dash for no wave."""
    if index is None:
        return DASH
    for wave in cluster["waves"]:
        if wave["index"] == index and wave["name"]:
            return f"{index} \u00b7 {wave['name']}"
    return str(index)


def is_reverted(obj):
    """True when the object's undo finished and succeeded (or recorded no result): it is back on its template."""
    return bool(obj["undo"] and obj["undo"]["state"] == "undone")


def awx_stats(raw):
    """What the hardware_refresh role publishes to AWX for one management cluster (artifact
    ``hardware_refresh_results``; ``raw`` its report entry): its result, reason and next step, and its objects counted
    as the report counts them (cluster_stats; ``undone`` is the reverted count, so a failed object that was switched
    back counts as failed and undone)."""
    cluster = _cluster(raw, 0, "apply")
    stats = cluster_stats(cluster)
    return {"result": cluster["result"], "failure_reason": _dict(raw).get("failure_reason"),
            "next_step": _dict(raw).get("next_step"), "switched": stats["switched"], "unchanged": stats["unchanged"],
            "failed": stats["failed"], "deleted": stats["deleted"], "undone": stats["reverted"],
            "pending": stats["pending"] + stats["running"], "skipped": stats["skipped"],
            # Machines deleted when their node drain timeout passed, their Pods not evicted (undrainable)
            "drain_timeouts": sum(len(obj["drain_timeouts"]) for obj in cluster["objects"])}


def object_outcome(obj):
    """[(result, label)] for an object's result cell: one pair, and a second (undone) for a failed object
    that was switched back. ``result`` picks the icon or colour, ``label`` is the words."""
    bucket = object_bucket(obj)
    if bucket == "switched":
        in_place = (obj.get("machines") or {}).get("updated_in_place")
        return [("succeeded", "switched")] + ([("succeeded", f"{in_place} updated in place")] if in_place else [])
    if bucket == "unchanged":
        return [("skipped", result_label("unchanged"))]
    outcome = [(obj["result"], result_label(obj["result"]))]
    if obj["result"] == "failed" and is_reverted(obj):
        outcome.append(("undone", result_label("undone")))
    return outcome


def soak_seconds(cluster, obj):
    """How long the object's wave soaked after the object rolled out; None when it did not soak."""
    wave = wave_of(cluster, obj)
    if wave and object_bucket(obj) in ("switched", "undone") and wave["rollout_finished"] and wave["soak_finished"]:
        return seconds_between(wave["rollout_finished"], wave["soak_finished"])
    return None


def not_started(cluster):
    """The objects of a management cluster that were never started."""
    return [o for o in cluster["objects"] if o["result"] == "pending"]


def failed_objects(cluster):
    """The objects a management cluster's failure is told on: those that failed, were deleted or whose undo failed;
    without any, those switched back (all that is left of a failure the report does not show)."""
    objects = cluster["objects"]
    failed = [o for o in objects if o["result"] in ("failed", "deleted") or (o["undo"] and o["undo"]["state"] == "failed")]
    return failed or [o for o in objects if o["result"] == "undone"]


def told_on_object(cluster):
    """The one rule, for the rendered "Needs attention" section (attention) and the AWX summary (summarize), on a
    failed management cluster whose failure its failed objects already tell: its own entry is left out when it has
    no reason or its reason only repeats one of theirs, and its next step goes with the first failed object
    (failed_objects) unless that one has a next step of its own. Returns that object, or None when the cluster
    keeps an entry of its own (it did not fail, no object failed, or its reason says more)."""
    if cluster["result"] != "failed":
        return None
    failed = failed_objects(cluster)
    reason = cluster["failure_reason"]
    if not failed or (reason and not any(o["failure_reason"] and o["failure_reason"] in reason for o in failed)):
        return None
    return failed[0]


def cluster_reason(cluster):
    """The reason in a management cluster's overview row: its own, else its first failed object's ('' for none)."""
    if cluster["failure_reason"]:
        return cluster["failure_reason"]
    failed = [o for o in cluster["objects"] if o["result"] in ("failed", "deleted")]
    return f"{failed[0]['ref']}: {failed[0]['failure_reason']}" if failed else ""


def object_location(cluster, obj):
    """``workload cluster edge-2, wave 2 \u00b7 bulk`` (the parts that are known; '' when none is)."""
    where = []
    if obj["cluster"]:
        where.append("workload cluster " + obj["cluster"])
    if obj["wave"] is not None:
        where.append("wave " + wave_label(cluster, obj["wave"]))
    return ", ".join(where)


def attention(cluster):
    """What needs attention in one management cluster (normalised), for the report's "Needs attention" section.

    ``show_cluster``: whether the management cluster gets an entry of its own (its result, reason, next step
    and the objects not started); ``failures``: [{object, next_step, also_undone}] for the objects that failed
    or whose undo failed, with the next step to show and the other objects that were switched back;
    ``blocked``: the objects with blockers. A failed cluster whose failure its objects tell is shown on them
    (told_on_object, the same rule as summarize's ``failures``). Unlike summarize's ``attention`` (every management
    cluster that is not fully done, for AWX), this is what the rendered panel lists.
    """
    objects = cluster["objects"]
    carrier = told_on_object(cluster)
    show_cluster = carrier is None and cluster["result"] in ("failed", "stopped_window", "partial", "skipped") and bool(
        cluster["failure_reason"] or cluster["next_step"] or cluster["result"] != "skipped")
    failures = []
    for obj in failed_objects(cluster):
        next_step = obj["next_step"] or (cluster["next_step"] if obj is carrier else None)
        also_undone = []
        undo = obj["undo"]
        if undo and undo["state"] == "failed":
            next_step = undo["next_step"] or next_step
        elif undo and undo["state"] in ("undone", "undoing"):
            also_undone = [o for o in objects if o is not obj and o["undo"] and o["undo"]["state"] in ("undone", "undoing")]
        failures.append({"object": obj, "next_step": next_step, "also_undone": also_undone})
    return {"show_cluster": show_cluster, "failures": failures, "blocked": [o for o in objects if o["blockers"]]}


def _zero_counts():
    counts = dict((bucket, 0) for bucket in BUCKETS)
    counts.update({"total": 0, "blocked": 0, "reverted": 0, "replicas": 0})
    return counts


def _iso(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def summarize(report):
    """Counts for headers and set_stats. Accepts a raw or an already normalised report.

    ``failures``: the failed management clusters that keep an entry of their own, then the failed, undone and
    undo-failed objects; a failed cluster whose failure its objects tell is left out and its next step goes with
    its first failed object (told_on_object, the same rule as the rendered "Needs attention" section).
    ``attention``: every management cluster that is not fully done (failed, stopped by the window, partial, or
    with a reason), for AWX; a different view by design from the rendered panel (attention), which leaves out
    what the object entries already tell."""
    norm = report if isinstance(report, NormalizedReport) else normalize(report)
    clusters = norm["management_clusters"]
    cluster_counts = dict((r, 0) for r in CLUSTER_RESULTS)
    cluster_counts["total"] = len(clusters)
    per_kind = {"machine_deployments": _zero_counts(), "control_planes": _zero_counts(), "objects": _zero_counts()}
    machines_replaced = machines_to_replace = machines_updated_in_place = 0
    cluster_failures, failures, blocked, attention = [], [], [], []
    for cluster in clusters:
        cluster_counts[cluster["result"]] = cluster_counts.get(cluster["result"], 0) + 1
        if cluster["failure_reason"] or cluster["result"] in ("failed", "stopped_window", "partial"):
            attention.append({
                "management_cluster": cluster["name"],
                "object": None,
                "result": cluster["result"],
                "reason": cluster["failure_reason"],
                "next_step": cluster["next_step"],
            })
        carrier = told_on_object(cluster)
        if cluster["result"] == "failed" and cluster["failure_reason"] and carrier is None:
            cluster_failures.append(attention[-1])
        for obj in cluster["objects"]:
            cluster_next_step = cluster["next_step"] if obj is carrier else None
            bucket = object_bucket(obj)
            kinds = ["objects"]
            if obj["kind"].lower() == "machinedeployment":
                kinds.append("machine_deployments")
            elif obj["kind"].lower().endswith("controlplane"):
                kinds.append("control_planes")
            for key in kinds:
                counts = per_kind[key]
                counts["total"] += 1
                counts[bucket] += 1
                counts["replicas"] += obj["replicas"] or 0
                if obj["blockers"]:
                    counts["blocked"] += 1
                if is_reverted(obj):
                    counts["reverted"] += 1
            if bucket == "switched" and obj["machines"]:
                # counted from the Machines: CAPI v1.12+ may have updated some in place
                machines_replaced += obj["machines"]["replaced"]
                machines_updated_in_place += obj["machines"]["updated_in_place"]
            elif bucket == "switched":
                machines_replaced += obj["replicas"] or 0
            if obj["result"] == "planned" and obj["action"] in ("switch", "plan", "undo"):
                machines_to_replace += obj["replicas"] or 0
            if obj["result"] in FAILURES and obj["failure_reason"]:
                failures.append({
                    "management_cluster": cluster["name"],
                    "object": obj["ref"],
                    "result": obj["result"],
                    "reason": obj["failure_reason"],
                    "next_step": obj["next_step"] or cluster_next_step,
                })
            if obj["undo"] and obj["undo"]["state"] == "failed":
                failures.append({
                    "management_cluster": cluster["name"],
                    "object": obj["ref"],
                    "result": "undo_failed",
                    "reason": obj["undo"]["failure_reason"] or "undo failed",
                    "next_step": obj["undo"]["next_step"] or cluster_next_step,
                })
            if obj["blockers"]:
                blocked.append({"management_cluster": cluster["name"], "object": obj["ref"], "blockers": list(obj["blockers"])})
    summary = {
        "report_version": norm["report_version"],
        "refresh_id": norm["refresh_id"],
        "mode": norm["mode"],
        "status": norm["result"],
        "started": _iso(norm["started"]),
        "finished": _iso(norm["finished"]),
        "duration_seconds": int(norm["duration_seconds"]) if norm["duration_seconds"] is not None else None,
        "management_clusters": cluster_counts,
        "machine_deployments": per_kind["machine_deployments"],
        "control_planes": per_kind["control_planes"],
        "objects": per_kind["objects"],
        "machines_replaced": machines_replaced,
        "machines_updated_in_place": machines_updated_in_place,
        "machines_to_replace": machines_to_replace,
        "failures": cluster_failures + failures,
        "attention": attention,
        "blocked": blocked,
    }
    return summary


def cluster_stats(cluster):
    """Per management cluster counts for sentences and overview rows (normalised cluster in)."""
    objs = cluster["objects"]
    stats = dict((bucket, 0) for bucket in BUCKETS)
    for obj in objs:
        stats[object_bucket(obj)] += 1
    to_switch = [o for o in objs if o["action"] in ("switch", "plan", "undo") and o["result"] == "planned"]
    stats.update({
        "total": len(objs),
        "reverted": len([o for o in objs if is_reverted(o)]),
        "blocked": len([o for o in objs if o["blockers"]]),
        "to_switch": len(to_switch),
        "machines_to_replace": sum(o["replicas"] or 0 for o in to_switch),
        "waves_total": len(cluster["waves"]),
        "waves_done": len([w for w in cluster["waves"] if w["result"] == "succeeded"]),
    })
    return stats


def plural(count, word, words=None):
    """``1 machine`` / ``3 machines``."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def cluster_sentence_parts(cluster, mode):
    """[(text, tone)] for the one-line summary of a management cluster; tone is '', 'red', 'orange' or 'amber'."""
    stats = cluster_stats(cluster)
    if mode == "check":
        parts = [(f"Would switch {stats['to_switch']} of {plural(stats['total'], 'object')} "
                  f"({plural(stats['machines_to_replace'], 'machine')} to replace) in {plural(stats['waves_total'], 'wave')}", "")]
        if stats["unchanged"]:
            parts.append((f"{stats['unchanged']} already on target", ""))
        if stats["blocked"]:
            parts.append((f"{stats['blocked']} blocked", "amber"))
        return parts
    parts = [(f"{stats['switched']} of {plural(stats['total'], 'object')} switched", "")]
    for key, text, tone in (
        ("unchanged", "already on target", ""),
        ("failed", "failed", "red"),
        ("deleted", "deleted", "red"),
        ("reverted", "undone", "orange"),
        ("pending", "not started", ""),
        ("running", "still rolling out", ""),
        ("skipped", "skipped", ""),
    ):
        if stats[key]:
            parts.append((f"{stats[key]} {text}", tone))
    if stats["waves_total"]:
        parts.append((f"{stats['waves_done']} of {plural(stats['waves_total'], 'wave')} completed", ""))
    return parts
