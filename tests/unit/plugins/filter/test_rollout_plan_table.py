# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_plan_table import FilterModule

table = FilterModule().filters()["rollout_plan_table"]


def test_empty():
    assert table([]) == ["(nothing selected)"]


def test_rows_are_aligned_and_blockers_come_last():
    rows = [
        {"cluster": "prod", "kind": "MachineDeployment", "namespace": "default", "name": "prod-md-0", "replicas": 3,
         "current": "prod-md-0-a", "target": "prod-md-0-b", "action": "switch", "wave": "canary", "blockers": []},
        {"cluster": "lab", "kind": "KubeadmControlPlane", "namespace": "x", "name": "lab-cp", "replicas": 1,
         "current": "lab-cp-a", "target": "lab-cp-a", "action": "unchanged", "wave": None,
         "blockers": ["paused: spec.paused is true", "two\nlines"]},
    ]
    lines = table(rows)
    assert lines[0].split() == ["CLUSTER", "OBJECT", "REPLICAS", "CURRENT", "TEMPLATE", "->", "TARGET", "ACTION", "WAVE",
                                "HEALTH", "CHECK", "BLOCKERS"]
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert "md/default/prod-md-0" in lines[2] and "prod-md-0-a -> prod-md-0-b" in lines[2]
    assert lines[2].endswith("canary  -             -")
    assert "kcp/x/lab-cp" in lines[3] and "lab-cp-a " in lines[3] and "->" not in lines[3]
    assert lines[3].endswith("paused: spec.paused is true; two lines")
    column = lines[0].index("ACTION")
    assert lines[2][column:].startswith("switch") and lines[3][column:].startswith("unchanged")


def test_long_cells_are_cut():
    lines = table([{"cluster": "c" * 80, "name": "n"}], width=10)
    assert "ccccccccc~" in lines[2] and "c" * 11 not in lines[2]


def test_bad_input():
    with pytest.raises(AnsibleFilterError):
        table("x")


def test_plan_objects_work_as_rows():
    obj = {"cluster": "c", "kind": "MachineDeployment", "namespace": "n", "name": "c-md-0", "replicas": 2,
           "before": {"infrastructure_ref": {"kind": "DockerMachineTemplate", "name": "old"}},
           "after": {"infrastructure_ref": {"kind": "DockerMachineTemplate", "name": "new"}},
           "action": "switch", "resume": True, "wave": 1, "wave_name": "canary", "blockers": []}
    line = table([obj])[2]
    assert "old -> new" in line and "resume" in line and "canary" in line
    obj["after"] = {"infrastructure_ref": None}
    assert "old " in table([obj])[2] and "->" not in table([obj])[2]


def test_the_machine_health_checks_of_a_pool_are_shown_with_their_limits_pause_and_remediation():
    health = {"health_checks": [{"name": "workers", "limits": {"maxUnhealthy": "40%"}, "paused": False},
                                {"name": "gpu", "limits": {}, "paused": True}],
              "in_flight": [{"machine": "m-1", "condition": "OwnerRemediated", "reason": "WaitingForRemediation", "message": ""}],
              "skipped": ["m-2"]}
    lines = table([{"cluster": "c", "kind": "MachineDeployment", "namespace": "n", "name": "c-md-0", "health": health}], width=200)
    assert "workers (maxUnhealthy 40%); gpu paused; 1 Machine(s) skip remediation; remediating m-1" in lines[2], lines
    assert table([{"name": "c-md-0", "health": {"health_checks": [], "in_flight": [], "skipped": []}}])[2].split()[-2:] == ["-", "-"]
