# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.report.keep import still_holds


def keep(new, existing_text):
    held, reason = still_holds(new, existing_text)
    return {"keep": held, "reason": reason}


AFTER = {"infrastructure_ref": {"kind": "DockerMachineTemplate", "name": "a-md-0-1f2e-0a1b2c3d"}}


def report(action, lock, result="succeeded", after=None, **extra):
    after = AFTER if after is None else after
    obj = {"kind": "MachineDeployment", "namespace": "default", "name": "a-md-0", "action": action, "result": result,
           "after": after}
    out = {"report_version": 1, "refresh_id": "hw-1", "mode": "apply", "started": "2026-12-02T10:00:00Z",
           "management_clusters": [{"name": "mgmt", "result": result, "lock": lock, "objects": [obj]}]}
    out.update(extra)
    return out


FIRST = report("switch", {"holder": "me", "released": "2026-12-02T10:05:00Z"})
RERUN = report("unchanged", None)


def test_a_rerun_that_changed_nothing_keeps_the_report_of_the_run_that_did_the_work():
    result = keep(RERUN, json.dumps(FIRST))
    assert result["keep"] is True, result


def test_a_second_no_op_rerun_keeps_it_too():
    # the report kept is still FIRST; and a report of a no-op run (all unchanged) is a finished refresh too
    assert keep(RERUN, json.dumps(RERUN))["keep"] is True


@pytest.mark.parametrize("existing", ["", "not json", "[1]", json.dumps(dict(FIRST, refresh_id="hw-2")),
                                      json.dumps(dict(FIRST, mode="check")), json.dumps(dict(FIRST, slice="mgmt")),
                                      json.dumps(report("switch", None, result="failed")),
                                      json.dumps(report("switch", None, after={"infrastructure_ref": {"name": "other"}})),
                                      json.dumps(dict(FIRST, management_clusters=[]))],
                         ids=["none", "text", "list", "other-id", "check", "slice", "failed-before", "other-target",
                              "other-clusters"])
def test_anything_but_a_finished_successful_report_of_the_same_refresh_is_replaced(existing):
    assert keep(RERUN, existing)["keep"] is False


@pytest.mark.parametrize("new", [report("switch", {"holder": "me"}), report("unchanged", {"holder": "me"}),
                                 report("skip", None, result="skipped"), dict(RERUN, mode="check")],
                         ids=["switched", "took-the-lock", "skipped", "check"])
def test_a_run_that_did_or_found_something_writes_its_report(new):
    assert keep(new, json.dumps(FIRST))["keep"] is False


def test_another_set_of_objects_is_written():
    new = copy.deepcopy(RERUN)
    new["management_clusters"][0]["objects"][0]["name"] = "a-md-1"
    assert keep(new, json.dumps(FIRST))["keep"] is False
