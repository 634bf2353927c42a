# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_report_summary import FilterModule
from ansible_collections.capi.rollout.plugins.module_utils.report import model
from ansible_collections.capi.rollout.tests.unit.plugins.filter import report_samples as samples

summary = FilterModule().filters()["rollout_report_summary"]


def test_apply_counts():
    result = summary(samples.fleet_report())
    assert result["status"] == "failed"
    assert result["mode"] == "apply"
    assert result["refresh_id"] == "hw-2026-11"
    assert result["duration_seconds"] == 3640
    assert result["started"] == "2026-11-30T06:00:00Z"
    clusters = result["management_clusters"]
    assert (clusters["total"], clusters["succeeded"], clusters["failed"], clusters["stopped_window"]) == (3, 1, 1, 1)
    mds = result["machine_deployments"]
    assert mds["total"] == 10
    assert (mds["switched"], mds["failed"], mds["undone"], mds["pending"]) == (6, 1, 1, 2)
    assert mds["reverted"] == 2  # the failed one and its wave sibling were both switched back
    cps = result["control_planes"]
    assert (cps["total"], cps["switched"]) == (3, 3)
    assert result["objects"]["total"] == 13
    assert result["machines_replaced"] == 3 + 3 + 6 + 2 + 4 + 3 + 2 + 3 + 3
    # every object is in exactly one bucket
    for key in ("machine_deployments", "control_planes", "objects"):
        counts = result[key]
        assert sum(counts[b] for b in model.BUCKETS) == counts["total"]


def test_failures_carry_reason_and_next_step_without_repeating_the_cluster():
    failures = summary(samples.fleet_report())["failures"]
    failed = [f for f in failures if f["result"] == "failed"]
    assert len(failed) == 1
    assert failed[0]["management_cluster"] == "mgmt-west"
    assert failed[0]["object"] == "machinedeployment/payments/edge-2-md-1"
    assert failed[0]["reason"].startswith("stalled for 300s")
    # the cluster-level reason repeated the object's, so the object entry takes the cluster's next step
    assert "BMC of r760-rack4-u12" in failed[0]["next_step"]
    assert not [f for f in failures if f["object"] is None]
    undone = [f for f in failures if f["result"] == "undone"]
    assert [f["object"] for f in undone] == ["machinedeployment/payments/edge-2-md-2"]


def test_attention_lists_the_stopped_cluster():
    attention = summary(samples.fleet_report())["attention"]
    south = [a for a in attention if a["management_cluster"] == "mgmt-south"][0]
    assert south["result"] == "stopped_window"
    assert "window ends" in south["reason"]
    assert south["next_step"].startswith("Re-run with refresh_id")


def test_plan_counts_and_blockers():
    result = summary(samples.plan_report())
    assert result["mode"] == "check"
    assert result["status"] == "planned"
    assert result["finished"] is None
    mds = result["machine_deployments"]
    assert (mds["total"], mds["planned"], mds["unchanged"], mds["blocked"]) == (4, 3, 1, 2)
    assert result["control_planes"]["planned"] == 2
    assert result["machines_to_replace"] == 3 + 3 + 6 + 3 + 4
    assert result["machines_replaced"] == 0
    blocked = dict((b["object"], b["blockers"]) for b in result["blocked"])
    assert blocked["machinedeployment/payments/edge-2-md-1"][1].startswith("spec.rolloutAfter is in the future")


def test_summary_is_json_serialisable():
    for report in (samples.fleet_report(), samples.plan_report(), {}):
        json.dumps(summary(report))


@pytest.mark.parametrize("report", [
    {},
    {"management_clusters": None},
    {"management_clusters": [None, "junk", {}]},
    {"management_clusters": [{"name": "m", "objects": [{}, None, {"name": "x", "replicas": "three", "started": "soon"}],
                              "waves": [None, {"objects": "not-a-list"}], "lock": "held"}]},
])
def test_missing_or_broken_fields_are_tolerated(report):
    result = summary(report)
    assert result["management_clusters"]["total"] == len(report.get("management_clusters") or [])


def test_result_derived_when_missing():
    report = {"management_clusters": [
        {"name": "a", "objects": [{"name": "x", "result": "succeeded"}]},
        {"name": "b", "objects": [{"name": "y", "result": "failed", "failure_reason": "boom"}]},
        {"name": "c", "objects": [{"name": "z", "result": "succeeded"}, {"name": "w"}]},
    ]}
    result = summary(report)
    assert result["management_clusters"]["succeeded"] == 1
    assert result["management_clusters"]["failed"] == 1
    assert result["management_clusters"]["partial"] == 1
    assert result["status"] == "failed"
    assert result["failures"][0]["reason"] == "boom"


def test_next_step_is_split_off_the_reason():
    report = {"management_clusters": [{"name": "a", "result": "failed",
                                       "failure_reason": "lock held by awx-job-1. Next step: wait for it to finish."}]}
    failure = summary(report)["failures"][0]
    assert failure["reason"] == "lock held by awx-job-1."
    assert failure["next_step"] == "wait for it to finish."


def test_mode_check_is_inferred_from_planned_clusters():
    assert summary({"management_clusters": [{"name": "a", "result": "planned"}]})["mode"] == "check"


@pytest.mark.parametrize("bad", [None, [], "report", 3])
def test_non_dict_input_is_a_filter_error(bad):
    with pytest.raises(AnsibleFilterError, match="must be a dict"):
        summary(bad)


def test_results_are_unsafe_on_cores_that_re_template():
    release = pytest.importorskip("ansible.release")
    if tuple(int(part) for part in release.__version__.split(".")[:2]) >= (2, 19):
        pytest.skip("ansible-core 2.19+ never trusts filter output as a template")
    from ansible.utils.unsafe_proxy import AnsibleUnsafeText  # pylint: disable=import-outside-toplevel
    result = summary({"management_clusters": [{"name": "m{{ x }}", "result": "failed", "failure_reason": "r{{ y }}"}]})
    assert isinstance(result["failures"][0]["reason"], AnsibleUnsafeText)
    assert isinstance(result["attention"][0]["management_cluster"], AnsibleUnsafeText)
