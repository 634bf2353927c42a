# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of capi_rollout_wait: what it hands from one module call to the next."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from unittest import mock

from ansible_collections.capi.rollout.plugins.action import capi_rollout_wait

LEASE = {"name": "capi-rollout-lock", "namespace": "default", "holder": "me", "lease_duration_seconds": 30}


def unfinished(time_left, renewed=0):
    return {"finished_call": False, "progress": [], "tracking": {"started": 1.0}, "time_left": time_left,
            "lease_renewals": renewed}


def test_later_calls_get_the_time_left_and_the_lease_only_when_its_renewal_is_due(monkeypatch):
    """Each module call takes 6 s; the lease (30 s) is due every 10 s: renewed in the first call (at 100 s), not in
    the second (106 s), again in the third (112 s). Each later call gets the time left the call before returned."""
    now = {"t": 100.0}
    monkeypatch.setattr(capi_rollout_wait.time, "monotonic", lambda: now["t"])
    answers = [unfinished(20.0, renewed=1), unfinished(15.0), {"finished_call": True, "progress": [], "lease_renewals": 1}]
    calls = []

    def execute(module_name=None, module_args=None, task_vars=None):
        calls.append(dict(module_args))
        now["t"] += 6.0
        return dict(answers[len(calls) - 1])

    task = mock.MagicMock(args={"objects": [{"name": "md-0"}], "wait_timeout": 20, "lease": LEASE}, async_val=0)
    action = capi_rollout_wait.ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None,
                                            shared_loader_obj=None)
    action._execute_module = execute  # pylint: disable=protected-access
    result = action.run(task_vars={})
    assert [call.get("time_left") for call in calls] == [None, 20.0, 15.0]
    assert [call.get("tracking") for call in calls] == [None, {"started": 1.0}, {"started": 1.0}]
    assert ["lease" in call for call in calls] == [True, False, True]
    assert result["lease_renewals"] == 2 and result["tracking"] == {}
