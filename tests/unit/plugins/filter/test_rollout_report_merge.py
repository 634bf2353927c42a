# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_report_merge import FilterModule
from ansible_collections.capi.rollout.plugins.module_utils.report import merge, model
from ansible_collections.capi.rollout.tests.unit.plugins.filter import report_samples as samples

merge_filter = FilterModule().filters()["rollout_report_merge"]


def sliced(report, slices):
    """The sample fleet report cut into slice reports as playbooks/hardware_refresh.yml with sliced=true writes them:
    ``slices`` is a list of lists of management cluster names; each slice is named after its first one."""
    by_name = dict((c["name"], c) for c in report["management_clusters"])
    out = []
    for number, names in enumerate(slices):
        part = copy.deepcopy(report)
        part["management_clusters"] = [copy.deepcopy(by_name[n]) for n in names]
        part["slice"] = names[0]
        part["run_by"] = "awx-job-%d" % (100 + number)
        out.append({"source": "/reports/hw/slices/%s/report.json" % names[0], "text": json.dumps(part)})
    return out


def names(report):
    return [c["name"] for c in report["management_clusters"]]


def fleet():
    return samples.fleet_report()


def test_three_slices_merge_into_the_fleet_report_in_inventory_order():
    report = fleet()
    order = names(report)
    slices = sliced(report, [[order[2]], [order[0]], [order[1]]])
    merged = merge_filter(slices, expected=order, refresh_id="hw-2026-11")
    assert names(merged) == order
    assert merged["refresh_id"] == "hw-2026-11" and merged["mode"] == "apply"
    assert [c["slice"] for c in merged["management_clusters"]] == order
    assert [s["management_clusters"] for s in merged["slices"]] == [[order[2]], [order[0]], [order[1]]]
    assert merged["run_by"] == "awx-job-100, awx-job-101, awx-job-102"
    assert "result" not in merged  # derived, as for an unsliced run
    # the counts of the merged report are those of the unsliced one
    whole, parts = model.summarize(report), model.summarize(merged)
    for key in ("status", "management_clusters", "machine_deployments", "control_planes", "machines_replaced", "failures"):
        assert parts[key] == whole[key], key
    # every object came through unchanged
    for cluster in report["management_clusters"]:
        got = [c for c in merged["management_clusters"] if c["name"] == cluster["name"]][0]
        assert got["objects"] == cluster["objects"]


def test_the_run_spans_every_slice():
    report = fleet()
    order = names(report)
    slices = sliced(report, [[order[0]], order[1:]])
    first, second = json.loads(slices[0]["text"]), json.loads(slices[1]["text"])
    first.update(started="2026-11-30T05:50:00Z", finished="2026-11-30T06:30:00Z",
                 window={"start": "2026-11-30T05:50:00Z", "end": "2026-11-30T07:00:00Z"})
    second.update(started="2026-11-30T06:10:00Z", finished="2026-11-30T07:10:00Z",
                  window={"start": None, "end": "2026-11-30T07:20:00Z"})
    merged = merge.merge_slices([{"source": "a", "report": first}, {"source": "b", "report": second}])
    assert (merged["started"], merged["finished"]) == ("2026-11-30T05:50:00Z", "2026-11-30T07:10:00Z")
    assert merged["window"] == {"start": "2026-11-30T05:50:00Z", "end": "2026-11-30T07:20:00Z"}
    # a slice without an end (check mode, or one still running) leaves the run without one
    second["finished"] = None
    assert merge.merge_slices([{"source": "a", "report": first}, {"source": "b", "report": second}])["finished"] is None


def test_a_management_cluster_of_the_inventory_that_no_slice_has_is_listed_as_not_run():
    report = samples.fleet_report()
    for cluster in report["management_clusters"]:
        cluster["result"] = "succeeded"
        cluster["failure_reason"] = cluster["next_step"] = None
        for obj in cluster["objects"]:
            obj.update(result="succeeded", failure_reason=None, next_step=None, undo=None)
    order = names(report)
    assert model.summarize(report)["status"] == "succeeded"  # positive control: without the gap it succeeds
    merged = merge_filter(sliced(report, [[order[0]], [order[2]]]), expected=order + ["mgmt-new"])
    assert names(merged) == order + ["mgmt-new"]
    for name in (order[1], "mgmt-new"):
        entry = [c for c in merged["management_clusters"] if c["name"] == name][0]
        assert entry["result"] == "skipped" and entry["objects"] == []
        assert entry["failure_reason"] == merge.NOT_RUN_REASON and name in entry["next_step"]
    assert merged["result"] == "partial"
    assert model.summarize(merged)["status"] == "partial"


def test_clusters_the_inventory_does_not_name_come_last_by_name():
    report = fleet()
    order = names(report)
    merged = merge_filter(sliced(report, [[order[1]], [order[0]], [order[2]]]), expected=[order[1]])
    assert names(merged) == [order[1]] + sorted([order[0], order[2]])


def test_a_management_cluster_in_two_slices_is_refused_with_both_reports():
    report = fleet()
    order = names(report)
    slices = sliced(report, [[order[0], order[1]], [order[1], order[2]]])
    with pytest.raises(AnsibleFilterError) as err:
        merge_filter(slices)
    message = str(err.value)
    assert "%s in /reports/hw/slices/%s/report.json, /reports/hw/slices/%s/report.json" % (order[1], order[0], order[1]) in message
    assert order[0] + " in" not in message and "remove the stale slice report" in message


def test_slices_of_different_refreshes_are_refused():
    report = fleet()
    order = names(report)
    slices = sliced(report, [[order[0]], [order[1]]])
    other = json.loads(slices[1]["text"])
    other["refresh_id"] = "hw-2026-10"
    slices[1]["text"] = json.dumps(other)
    with pytest.raises(AnsibleFilterError) as err:
        merge_filter(slices)
    assert "different refresh ids: hw-2026-10 in /reports/hw/slices/%s/report.json; hw-2026-11 in" % order[1] in str(err.value)
    # one refresh, but not the one the merge is for
    with pytest.raises(AnsibleFilterError, match="are of refresh id hw-2026-11, not hw-2026-12"):
        merge_filter(sliced(report, [[order[0]]]), refresh_id="hw-2026-12")
    # positive control: the same slices merge under their own id
    assert merge_filter(sliced(report, [[order[0]], [order[1]]]), refresh_id="hw-2026-11")["refresh_id"] == "hw-2026-11"


def test_a_check_slice_and_an_apply_slice_are_refused():
    report = fleet()
    order = names(report)
    slices = sliced(report, [[order[0]], [order[1]]])
    dry = json.loads(slices[0]["text"])
    dry["mode"] = "check"
    slices[0]["text"] = json.dumps(dry)
    with pytest.raises(AnsibleFilterError, match="different modes: apply in .*; check in"):
        merge_filter(slices)


@pytest.mark.parametrize("entry, expected", [
    ({"source": "/r/slices/a/report.json", "text": None}, "slice report /r/slices/a/report.json does not exist: the "
                                                          "report_dir of the sliced refresh must be on storage"),
    ({"source": "/r/slices/a/report.json", "text": "{not json"}, "slice report /r/slices/a/report.json is not JSON"),
    ({"source": "/r/x.json", "text": "[]"}, "slice report /r/x.json is not a fleet report"),
    ({"source": "/r/x.json", "report": {"report_version": 2, "management_clusters": []}}, "has report_version 2"),
    ({"source": "/r/x.json", "report": {"management_clusters": [{"objects": []}]}}, "a management cluster without a name"),
    ("report.json", "slice 1: expected {source, text}"),
], ids=["missing", "not-json", "not-a-report", "version", "no-name", "not-a-dict"])
def test_unreadable_slice_reports_are_named(entry, expected):
    with pytest.raises(AnsibleFilterError) as err:
        merge_filter([entry])
    assert expected in str(err.value)


def test_no_slice_reports_says_where_it_looked():
    with pytest.raises(AnsibleFilterError, match=r"no slice reports in /reports/hw/slices: run the sliced refresh \(sliced=true\)"):
        merge_filter([], where="/reports/hw/slices")
    with pytest.raises(AnsibleFilterError, match="expected a list"):
        merge_filter("report.json")


def test_a_slice_without_a_slice_name_is_named_after_its_directory():
    report = fleet()
    part = dict(report, management_clusters=report["management_clusters"][:1])
    merged = merge.merge_slices([{"source": "/reports/hw/slices/east/report.json", "report": part}])
    assert merged["slices"][0]["name"] == "east" and merged["management_clusters"][0]["slice"] == "east"


def test_the_merged_report_renders():
    report = fleet()
    order = names(report)
    merged = merge_filter(sliced(report, [[order[0]], order[1:]]), expected=order)
    from ansible_collections.capi.rollout.plugins.module_utils.report.markdown import render_markdown
    from ansible_collections.capi.rollout.plugins.module_utils.report.page import render_html
    text, page = render_markdown(merged), render_html(merged)
    for name in order:
        assert name in text and name in page
