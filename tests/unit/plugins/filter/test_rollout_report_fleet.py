# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_report_fleet import rollout_report_fleet
from ansible_collections.capi.rollout.plugins.module_utils.report.fleet import NOT_STARTED_REASON


def cluster(name, started=None, finished=None):
    return {"name": name, "result": "succeeded", "started": started, "finished": finished, "objects": []}


def test_every_host_in_the_order_of_hosts_and_one_that_left_no_result_is_not_started():
    a, c = cluster("a", "2026-12-03T10:00:05Z", "2026-12-03T10:20:00Z"), cluster("c", "2026-12-03T10:00:01Z", "2026-12-03T10:09:00Z")
    report = rollout_report_fleet([c, a], hosts=["a", "b", "c"], refresh_id="hw-1", mode="apply", run_by="ops")
    assert [entry["name"] for entry in report["management_clusters"]] == ["a", "b", "c"]
    assert report["management_clusters"][1] == {"name": "b", "result": "skipped", "failure_reason": NOT_STARTED_REASON,
                                                "objects": []}
    # the run's times are its management clusters' (their API servers' clocks): earliest start, latest end
    assert (report["started"], report["finished"]) == ("2026-12-03T10:00:01Z", "2026-12-03T10:20:00Z")
    assert (report["report_version"], report["refresh_id"], report["mode"], report["run_by"]) == (1, "hw-1", "apply", "ops")
    assert report["window"] is None and "slice" not in report


def test_a_check_run_has_no_times_and_the_window_and_slice_are_kept_when_set():
    report = rollout_report_fleet([cluster("a", "2026-12-03T10:00:05Z")], hosts=["a"], refresh_id="hw-1", mode="check",
                                  run_by="ops", window={"start": "", "end": "2026-12-03T12:00:00Z"}, slice="a")
    assert (report["started"], report["finished"]) == (None, None)
    assert report["window"] == {"start": None, "end": "2026-12-03T12:00:00Z"} and report["slice"] == "a"
    assert rollout_report_fleet([], hosts=[], refresh_id="x", mode="apply", window={"start": "", "end": ""})["window"] is None


def test_results_that_do_not_match_the_hosts_or_a_bad_mode_are_refused():
    with pytest.raises(AnsibleFilterError, match="as a list"):
        rollout_report_fleet({"a": None}, hosts=["a", "b"], refresh_id="x", mode="apply")
    with pytest.raises(AnsibleFilterError, match="mode must be apply or check"):
        rollout_report_fleet([None], hosts=["a"], refresh_id="x", mode="plan")
