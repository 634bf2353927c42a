# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One fleet report from the reports of the slices of a sliced hardware refresh (AWX job slicing).

Each slice runs playbooks/hardware_refresh.yml over its own management clusters and writes its own
report (report format 1, docs/report.md). ``merge_slices(slices)`` checks that they belong together
(one refresh id, one mode, every management cluster in one slice only) and returns one report with
every management cluster, in the order of ``expected`` (the inventory) when given; a management
cluster of ``expected`` that no slice reports is listed as not run. No I/O: the caller reads the files.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import posixpath

from ansible_collections.capi.rollout.plugins.module_utils.report.fmt import as_text, as_time
from ansible_collections.capi.rollout.plugins.module_utils.report.model import REPORT_VERSION, normalize

NOT_RUN_REASON = "no slice report has this management cluster: its slice job did not run, or stopped before it wrote its report"


class MergeError(ValueError):
    """The slice reports cannot be merged; the message names the reports and the next step."""


def _iso(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def _slice_name(report, source):
    """The slice's own name (the report's ``slice``), else its directory (slices/<name>/report.json)."""
    name = as_text(report.get("slice"))
    if name:
        return name
    directory = posixpath.dirname(source or "")
    return posixpath.basename(directory) or source or "?"


def _load(entry, position):
    """(source, report dict) of one slice entry: {source, report} or {source, text}; None text = no such file."""
    if not isinstance(entry, dict):
        raise MergeError("slice %d: expected {source, text} or {source, report}, got %s" % (position + 1, type(entry).__name__))
    source = as_text(entry.get("source")) or "slice %d" % (position + 1)
    report = entry.get("report")
    if report is None:
        text = entry.get("text")
        if text is None:
            raise MergeError(
                "slice report %s does not exist: the report_dir of the sliced refresh must be on storage that every job of "
                "the workflow sees (docs/awx.md), or the slice did not get to write it" % source)
        try:
            report = json.loads(text)
        except ValueError as exc:
            raise MergeError("slice report %s is not JSON (%s): re-run that slice, or remove the file" % (source, exc))
    if not isinstance(report, dict) or not isinstance(report.get("management_clusters"), list):
        raise MergeError("slice report %s is not a fleet report (no management_clusters list)" % source)
    version = report.get("report_version", REPORT_VERSION)
    if version != REPORT_VERSION:
        raise MergeError("slice report %s has report_version %s; this collection merges version %d"
                         % (source, version, REPORT_VERSION))
    return source, report


def _one_value(slices, key, what, expected=None):
    """The one value of ``key`` across the slices; a MergeError listing the sources per value when they differ."""
    by_value = {}
    for source, report in slices:
        by_value.setdefault(as_text(report.get(key)) or "", []).append(source)
    if len(by_value) > 1:
        listed = "; ".join("%s in %s" % (value or "(none)", ", ".join(sources)) for value, sources in sorted(by_value.items()))
        raise MergeError(
            "the slice reports have different %ss: %s. Merge the slices of one run only: remove the reports of other "
            "runs from the slices directory, or give each refresh its own report_dir" % (what, listed))
    value = next(iter(by_value)) if by_value else ""
    if expected and value != expected:
        sources = ", ".join(s for s, _r in slices)
        raise MergeError("the slice reports (%s) are of %s %s, not %s (the one this merge was given): merge with that %s, "
                         "or point report_dir at the reports of %s" % (sources, what, value or "(none)", expected, what, expected))
    return value or None


def _window(slices):
    """The maintenance window: the earliest start and the latest end the slices name (window_minutes is fixed per slice)."""
    starts, ends = [], []
    for _source, report in slices:
        window = report.get("window") if isinstance(report.get("window"), dict) else {}
        starts.append(as_time(window.get("start")))
        ends.append(as_time(window.get("end")))
    starts = [s for s in starts if s is not None]
    ends = [e for e in ends if e is not None]
    if not starts and not ends:
        return None
    return {"start": _iso(min(starts)) if starts else None, "end": _iso(max(ends)) if ends else None}


def _not_run(name):
    return {"name": name, "result": "skipped", "failure_reason": NOT_RUN_REASON, "objects": [],
            "next_step": "Relaunch the slice job of %s with the same refresh_id, then run the merge again." % name}


def merge_slices(slices, expected=None, refresh_id=None, where=None):
    """The fleet report of the slice reports ``slices`` (see the module docstring). Raises MergeError.

    slices: [{source, text}] (text None: the file does not exist) or [{source, report}].
    expected: the management clusters of the whole run (inventory order), or None.
    refresh_id: the refresh the slices must belong to, or None for whichever they share.
    where: where the slices were looked for, for the message when there are none.
    """
    if not slices:
        raise MergeError("no slice reports%s: run the sliced refresh (sliced=true) with the same report_dir and refresh_id "
                         "first" % ((" in " + where) if where else ""))
    loaded = [_load(entry, i) for i, entry in enumerate(slices)]
    merged_id = _one_value(loaded, "refresh_id", "refresh id", as_text(refresh_id) or None)
    mode = _one_value(loaded, "mode", "mode")
    owners, clusters, slice_entries = {}, [], []
    for source, report in loaded:
        name = _slice_name(report, source)
        names = []
        for raw in report["management_clusters"]:
            entry = dict(raw) if isinstance(raw, dict) else {}
            cluster = as_text(entry.get("name"))
            if not cluster:
                raise MergeError("slice report %s has a management cluster without a name" % source)
            owners.setdefault(cluster, []).append(source)
            entry["slice"] = name
            clusters.append(entry)
            names.append(cluster)
        slice_entries.append({"name": name, "source": source, "run_by": as_text(report.get("run_by")),
                              "started": report.get("started"), "finished": report.get("finished"),
                              "management_clusters": names})
    duplicated = sorted(c for c, sources in owners.items() if len(sources) > 1)
    if duplicated:
        raise MergeError(
            "management cluster(s) in more than one slice report: %s. Each management cluster belongs to one slice; remove "
            "the stale slice report (one left by an earlier run with other slices), then run the merge again"
            % "; ".join("%s in %s" % (c, ", ".join(owners[c])) for c in duplicated))
    missing = [name for name in (expected or []) if name not in owners]
    order = dict((name, i) for i, name in enumerate(expected or []))
    clusters.extend(_not_run(name) for name in missing)
    # inventory order first (the report of an unsliced run has it too); clusters the inventory does not name last
    clusters.sort(key=lambda c: (order.get(c["name"], len(order)), c["name"] if c["name"] not in order else ""))
    starts = [as_time(r.get("started")) for _s, r in loaded]
    ends = [as_time(r.get("finished")) for _s, r in loaded]
    run_by = []
    for entry in slice_entries:
        if entry["run_by"] and entry["run_by"] not in run_by:
            run_by.append(entry["run_by"])
    merged = {
        "report_version": REPORT_VERSION,
        "refresh_id": merged_id,
        "mode": mode,
        "run_by": ", ".join(run_by) or None,
        "started": _iso(min([s for s in starts if s is not None], default=None)),
        # a slice without an end (still running, or check mode) leaves the whole run without one
        "finished": _iso(max(ends)) if ends and None not in ends else None,
        "window": _window(loaded),
        "management_clusters": clusters,
        "slices": slice_entries,
    }
    if missing:
        status = normalize(merged)["result"]
        if status in ("succeeded", "skipped"):
            # not every management cluster was refreshed: never "succeeded"
            merged["result"] = "partial"
    return merged
