# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report of one run (report format 1, docs/report.md) from the results its management clusters left
(the fact hardware_refresh_result of each host). No I/O."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

NOT_STARTED_REASON = ("not started: its batch had not run when this report was written, or the run stopped before "
                      "it")


def not_started(name):
    """The entry of a management cluster that left no result."""
    return {"name": name, "result": "skipped", "failure_reason": NOT_STARTED_REASON, "objects": []}


def fleet_report(results, hosts, refresh_id, mode, run_by, window=None, slice_name=None):
    """``results``: the hardware_refresh_result of the hosts that left one (each names its host in ``name``); the
    report lists every host of ``hosts``, in that order, a host without a result as not started.

    The run's start and end are the earliest start and the latest end of its management clusters - their API
    servers' clocks, not the Ansible host's - in an applied run (a check run has none); ``window`` ({start, end})
    is kept when either is set."""
    by_host = {result.get("name"): result for result in results if isinstance(result, dict)}
    clusters = [by_host.get(host) or not_started(host) for host in hosts]
    applied = mode == "apply"
    starts = sorted(cluster["started"] for cluster in clusters if cluster.get("started"))
    ends = sorted(cluster["finished"] for cluster in clusters if cluster.get("finished"))
    window = window or {}
    report = {"report_version": 1, "refresh_id": refresh_id, "mode": mode, "run_by": run_by,
              "started": starts[0] if applied and starts else None, "finished": ends[-1] if applied and ends else None,
              "window": ({"start": window.get("start") or None, "end": window.get("end") or None}
                         if window.get("start") or window.get("end") else None),
              "management_clusters": clusters}
    if slice_name:
        report["slice"] = slice_name
    return report
