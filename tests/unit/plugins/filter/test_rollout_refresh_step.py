# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_refresh_step import FilterModule as StepFilters
from ansible_collections.capi.rollout.plugins.filter.rollout_refresh_result import FilterModule as ResultFilters

step = StepFilters().filters()["rollout_refresh_step"]
result = ResultFilters().filters()["rollout_refresh_result"]

REF = "machinedeployment/default/a"
OBJECTS = {REF: {"kind": "MachineDeployment", "namespace": "default", "name": "a", "ref": REF, "action": "switch",
                 "result": "pending", "resume": False, "after": {"infrastructure_ref": {"kind": "T", "name": "a-new"}}}}


def test_one_call_records_a_step():
    out = step(OBJECTS, "rolled_out", resources=[{"ref": REF, "done_at": "t", "template": {"infrastructure_ref": {"name": "b"}}}])
    assert out[REF]["result"] == "succeeded" and out[REF]["after"]["infrastructure_ref"] == {"kind": "T", "name": "b"}
    out = step(OBJECTS, "switched", wave_objects=list(OBJECTS.values()), switches={"results": [{"item": {"refs": [REF]}, "failed": False}]}, now="t0")
    assert out[REF]["started"] == "t0"


def test_a_failed_wave_then_its_undo():
    failure = step(OBJECTS, "wave_failed", wave={"name": "wave-1", "kind": "MachineDeployment"}, wave_objects=list(OBJECTS.values()),
                   wait={"reason": "stalled", "failed_refs": [REF]}, failed_result={"msg": "x"}, refresh_id="hw-1",
                   settings={"stall_timeout": 6}, now="t1")
    assert failure["status"]["failure_reason"].startswith("wave wave-1 failed: machinedeployment/default/a: stalled: ")
    assert failure["undo"] == [] and failure["undo_rollout_id"] == "hw-1-undo"
    out = step(failure["objects"], "undo_failed", failure=dict(failure, undo_refs=[REF]), started="t2", now="t3",
               failed_result={"msg": "gone"})
    assert out[REF]["undo"]["result"] == "failed" and "(gone)" in out[REF]["next_step"]


def test_the_end_check_step():
    wait = {"failed": True, "reason": "drift", "failed_refs": [REF], "resources": [{"ref": REF, "drift": "changed by x at t."}]}
    out = step(OBJECTS, "end_check", wait=wait, refresh_id="hw-1", now="t1")
    assert out["objects"][REF]["failure_reason"] == "changed after its wave: changed by x at t"
    assert out["status"]["result"] == "failed"
    assert step(OBJECTS, "end_check", wait={"failed": False}, refresh_id="hw-1", now="t1")["status"] is None


@pytest.mark.parametrize("args, kwargs, message", [
    (("nope",), {}, "step must be one of switched, rolled_out"),
    (("rolled_out",), {}, "step rolled_out needs resources"),
    (("undone",), {"failure": {}}, "step undone needs undo_wait, started"),
])
def test_wrong_use_is_refused(args, kwargs, message):
    with pytest.raises(AnsibleFilterError, match=message):
        step(OBJECTS, *args, **kwargs)
    with pytest.raises(AnsibleFilterError, match="a dictionary of objects by ref"):
        step([], "rolled_out", resources=[])


def test_the_result_filter():
    out = result(OBJECTS, order=[REF], refresh_id="hw-1", name="m1", started="t0", finished="t1")
    assert out["result"] == "partial" and out["objects"] == [{k: v for k, v in OBJECTS[REF].items() if k not in ("ref", "resume")}]
    assert result(OBJECTS, order=[REF], mode="check", refresh_id="hw-1", name="m1")["result"] == "planned"
    with pytest.raises(AnsibleFilterError, match="no record of machinedeployment/default/b"):
        result(OBJECTS, order=["machinedeployment/default/b"], refresh_id="hw-1", name="m1")
    with pytest.raises(AnsibleFilterError, match="mode must be apply or check"):
        result(OBJECTS, mode="dry", refresh_id="hw-1", name="m1")
