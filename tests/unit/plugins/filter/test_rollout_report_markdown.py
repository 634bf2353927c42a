# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_report_markdown import FilterModule
from ansible_collections.capi.rollout.tests.unit.plugins.filter import report_samples as samples

render = FilterModule().filters()["rollout_report_markdown"]


def _tables(text):
    """Every GFM table as a list of rows (lists of cells); checks all rows have the header's width."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(_split_row(line))
        elif current:
            width = len(current[0])
            assert all(len(row) == width for row in current), current
            tables.append(current)
            current = []
    return tables


def _split_row(line):
    cells, cell, escaped = [], "", False
    for ch in line.strip()[1:-1]:
        if ch == "|" and not escaped:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += ch
        escaped = ch == "\\" and not escaped
    cells.append(cell.strip())
    return cells


def test_apply_report():
    text = render(samples.fleet_report())
    assert text.startswith("# Hardware refresh hw-2026-11: \u274c failed\n")
    assert ("**Management clusters:** 1 of 3 ok (1 failed, 1 stopped at window end) \u00b7 "
            "**MachineDeployments:** 6 of 10 switched (1 failed, 2 undone, 2 not started)") in text
    tables = _tables(text)
    overview = [t for t in tables if t[0][0] == "Management cluster"][0]
    assert [row[0] for row in overview[2:]] == ["mgmt-east", "mgmt-west", "mgmt-south"]
    assert overview[3][2] == "\u274c failed"
    assert overview[4][2] == "\u23f0 stopped: window"
    objects = [t for t in tables if t[0][0] == "Object"]
    assert len(objects) == 3
    assert objects[0][2][4] == "prod-1-cp-r640 \u2192 **prod-1-cp-r760**<br>v1.30.6"


def test_failures_section_has_reason_stuck_machine_undo_and_next_step():
    text = render(samples.fleet_report())
    section = text[text.index("## Needs attention"):text.index("## Management clusters")]
    assert "### \u274c mgmt-west \u203a MachineDeployment payments/edge-2-md-1 (workload cluster edge-2, wave 2 \u00b7 bulk)" in section
    assert "- **Reason:** stalled for 300s" in section
    assert "- **Stuck:** machine edge-2-md-1-7f9c-xk2lp (no node yet): InfrastructureReady=False" in section
    assert "- **Undone:** switched back to edge-2-md-1-r640 in 7m 45s; also undone: MD payments/edge-2-md-2" in section
    assert "- **Next step:** Check the BMC of r760-rack4-u12" in section
    assert "### \u23f0 mgmt-south: stopped: window" in section
    assert "- **Not started:** MD team-a/dc-3-md-1, MD team-b/dc-3-md-2" in section


def test_plan_report_has_plan_tables_with_blockers():
    text = render(samples.plan_report())
    assert text.startswith("# Plan for hardware refresh hw-2026-11: \U0001f4dd dry run, \u26d4 2 blocked\n")
    plans = [t for t in _tables(text) if t[0][0] == "Workload cluster"]
    assert len(plans) == 2
    assert plans[0][0] == ["Workload cluster", "Object", "Replicas", "Current template \u2192 target template", "Action",
                           "Wave", "Blockers"]
    blocked = [row for row in plans[0] if row[1] == "MD team-a/prod-1-md-1"][0]
    assert blocked[6].startswith("\u26d4 MachineDeployment is paused")
    assert [row for row in plans[0] if row[1] == "MD team-b/prod-1-gpu-md-0"][0][4] == "none (already on target)"
    assert "## Management clusters" not in text
    assert "Would switch 3 of 4 objects (12 machines to replace) in 3 waves, 1 already on target, **1 blocked**." in text


def test_markdown_escaping():
    evil = "a|b <img src=x> *bold* {{ lookup('pipe','id') }}\nnext"
    obj = {"name": evil, "result": "failed", "failure_reason": evil}
    cluster = {"name": evil, "result": "failed", "failure_reason": evil, "objects": [obj]}
    text = render({"refresh_id": evil, "management_clusters": [cluster]})
    assert "<img" not in text
    assert "{{" not in text
    assert "*bold*" not in text
    assert "a\\|b" in text
    for table in _tables(text):
        assert table  # widths checked by _tables


@pytest.mark.parametrize("report", [{}, {"management_clusters": [{"name": "m"}]},
                                    {"management_clusters": [{"objects": [{}]}]}])
def test_missing_fields_are_tolerated(report):
    text = render(report)
    assert text.startswith("# Hardware refresh")
    _tables(text)


def test_non_dict_input_is_a_filter_error():
    with pytest.raises(AnsibleFilterError):
        render("nope")


def test_undone_objects_need_attention_when_no_object_failed():
    report = samples.fleet_report()
    for cluster in report["management_clusters"]:
        for obj in cluster["objects"]:
            if obj["result"] == "failed":
                obj.update(result="succeeded", failure_reason=None)
    section = render(report)
    section = section[section.index("## Needs attention"):section.index("## Management clusters")]
    assert "### \u274c mgmt-west \u203a MachineDeployment payments/edge-2-md-2 (workload cluster edge-2, wave 2 \u00b7 bulk)" in section


def test_a_deleted_object_is_shown_deleted_not_running_nor_switched():
    text = render(samples.deleted_report())
    assert "**MachineDeployments:** 0 of 2 switched (1 deleted, 1 undone)" in text
    (objects,) = [t for t in _tables(text) if t[0][0] == "Object"]
    row = [r for r in objects if "edge-1-md-1" in r[0]][0]
    assert "\U0001f5d1\ufe0f deleted" in row and "running" not in " ".join(row)
    section = text[text.index("## Needs attention"):text.index("## Management clusters")]
    assert "### \U0001f5d1\ufe0f mgmt-del \u203a MachineDeployment team-a/edge-1-md-1" in section
    assert "no longer exists (seen gone at 2026-11-30T06:03:00Z)" in section


def test_objects_updated_in_place_say_so_and_the_summary_counts_them():
    report = samples.fleet_report()
    report["management_clusters"][0]["objects"][1]["machines"] = {"replaced": 0, "updated_in_place": 3}
    text = render(report)
    objects = [t for t in _tables(text) if t[0][0] == "Object"][0]
    assert "3 updated in place" in objects[3][5] and "3 updated in place" not in objects[4][5]
    assert "**Machines updated in place:** 3" in text
    assert "Machines updated in place" not in render(samples.fleet_report())
