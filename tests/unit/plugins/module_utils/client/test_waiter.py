# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError
from ansible_collections.capi.rollout.plugins.module_utils.client.waiter import Waiter, WaitFailed
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

PATH = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments"


class Clock(object):
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class FakeApi(object):
    """watch() answers from a script: each entry is a list of (type, obj, seconds_elapsed_before) or an exception."""

    host = "https://fake"

    def __init__(self, clock, script, lists=None):
        self.clock = clock
        self.script = list(script)
        self.lists = list(lists or [])
        self.watch_calls = []
        self.list_calls = 0

    def watch(self, path, rv, timeout, label_selector=None, field_selector=None):
        self.watch_calls.append({"rv": rv, "timeout": timeout, "field_selector": field_selector})
        if not self.script:
            raise AssertionError("no more watch answers")
        entry = self.script.pop(0)
        if isinstance(entry, Exception):
            raise entry
        return self._events(entry, timeout)

    def _events(self, entry, timeout):
        for event_type, obj, elapsed in entry:
            self.clock.now += elapsed
            yield event_type, obj
        self.clock.now += 0  # the server ends the stream

    def list(self, path, label_selector=None, field_selector=None):
        self.list_calls += 1
        return self.lists.pop(0)


def rolling(rv, up_to_date, current=3, available=3, generation=3, observed=3):
    md = objs.machine_deployment(generation=generation)
    md["metadata"]["resourceVersion"] = str(rv)
    md = objs.set_counts(md, replicas=current, up_to_date=up_to_date, available=available)
    md["status"]["observedGeneration"] = observed
    if up_to_date < 3 or current != 3:
        return objs.set_condition(md, "RollingOut", "True", "RollingOut", generation=generation,
                                  message=f"Rolling out {3 - up_to_date} not up-to-date replicas")
    return objs.set_condition(md, "RollingOut", "False", "NotRollingOut", generation=generation)


def make_waiter(api, clock, wait_timeout=100, stall_timeout=50):
    return Waiter(api, "MachineDeployment", "v1beta2", "default", PATH, wait_timeout, stall_timeout, clock=clock,
                  now=lambda: datetime.datetime(2026, 3, 1, 12, 0, int(clock.now) % 60, tzinfo=datetime.timezone.utc))


def test_completes_from_one_watch_and_records_progress():
    clock = Clock()
    script = [[("MODIFIED", rolling(11, 1, current=4), 1), ("BOOKMARK", {"metadata": {"resourceVersion": "12"}}, 1),
               ("MODIFIED", rolling(13, 2, current=4), 1), ("MODIFIED", rolling(14, 3), 1)]]
    api = FakeApi(clock, script)
    waiter = make_waiter(api, clock)
    final = waiter.wait([rolling(10, 0, observed=2)], "10")
    assert final[0]["metadata"]["resourceVersion"] == "14"
    assert len(api.watch_calls) == 1 and api.watch_calls[0]["rv"] == "10"
    assert api.watch_calls[0]["field_selector"] == "metadata.name=md-0"
    assert waiter.progress[0].startswith("2026-03-01T12:00:00Z Waiting for machinedeployment/default/md-0")
    assert "successfully rolled out" in waiter.progress[-1]
    assert len(waiter.progress) == 4


def test_already_complete_opens_no_watch():
    clock = Clock()
    api = FakeApi(clock, [])
    assert make_waiter(api, clock).wait([rolling(10, 3)], "10")
    assert api.watch_calls == []


def test_reconnects_from_last_resource_version_when_stream_ends():
    clock = Clock()
    script = [[("MODIFIED", rolling(11, 1, current=4), 5)], [("MODIFIED", rolling(12, 3), 5)]]
    api = FakeApi(clock, script)
    make_waiter(api, clock).wait([rolling(10, 0)], "10")
    assert [call["rv"] for call in api.watch_calls] == ["10", "11"]


def test_gone_relists_and_continues():
    clock = Clock()
    script = [ApiError(410, {"reason": "Expired", "message": "too old resource version"}),
              [("MODIFIED", rolling(31, 3), 1)]]
    lists = [{"metadata": {"resourceVersion": "30"}, "items": [rolling(29, 2, current=4)]}]
    api = FakeApi(clock, script, lists)
    make_waiter(api, clock).wait([rolling(10, 0)], "10")
    assert api.list_calls == 1
    assert [call["rv"] for call in api.watch_calls] == ["10", "30"]


def test_stall_detected_with_message_naming_what_is_stuck():
    clock = Clock()
    stuck = rolling(11, 0, current=4, available=3)
    stuck = objs.set_condition(stuck, "ScalingUp", "True", "ScalingUp", generation=3,
                               message="Scaling up from 3 to 4 replicas")
    same = copy.deepcopy(stuck)
    same["metadata"]["resourceVersion"] = "12"
    script = [[("MODIFIED", stuck, 1), ("MODIFIED", same, 60)]]
    api = FakeApi(clock, script)
    waiter = make_waiter(api, clock, wait_timeout=1000, stall_timeout=50)
    machines = [{"name": "md-0-new-1", "ready": False, "phase": "Provisioning", "conditions": [
        {"type": "Ready", "status": "False", "reason": "NotReady", "message": "InfrastructureReady is False"}]}]
    waiter.machines_lister = lambda obj: machines
    with pytest.raises(WaitFailed) as err:
        waiter.wait([rolling(10, 0)], "10")
    text = str(err.value)
    assert err.value.reason == "stalled"
    assert "machinedeployment/default/md-0" in text
    assert "stall_timeout=50s" in text
    assert "Scaling up from 3 to 4 replicas" in text
    assert "Machine md-0-new-1 is not ready" in text
    assert err.value.objects[0]["metadata"]["resourceVersion"] == "12"


def test_overall_timeout():
    clock = Clock()
    script = [[("MODIFIED", rolling(11 + i, i % 3, current=4), 10)] for i in range(20)]
    api = FakeApi(clock, script)
    waiter = make_waiter(api, clock, wait_timeout=45, stall_timeout=30)
    with pytest.raises(WaitFailed) as err:
        waiter.wait([rolling(10, 0)], "10")
    assert err.value.reason == "wait_timeout" and "wait_timeout=45s" in str(err.value)
    # the watch timeout handed to the server never exceeds what is left
    assert all(call["timeout"] <= 45 for call in api.watch_calls)


def test_many_objects_one_stream_no_field_selector():
    clock = Clock()
    other = rolling(20, 0)
    other["metadata"]["name"] = "md-1"
    done_other = rolling(22, 3)
    done_other["metadata"]["name"] = "md-1"
    unrelated = rolling(23, 0)
    unrelated["metadata"]["name"] = "md-9"
    script = [[("MODIFIED", rolling(21, 3), 1), ("MODIFIED", unrelated, 1), ("MODIFIED", done_other, 1)]]
    api = FakeApi(clock, script)
    final = make_waiter(api, clock).wait([rolling(10, 0), other], "10")
    assert [obj["metadata"]["name"] for obj in final] == ["md-0", "md-1"]
    assert len(api.watch_calls) == 1 and api.watch_calls[0]["field_selector"] is None


def _restarted(rv, up_to_date=3, current=3, after=objs.TRIGGER_TEXT):
    return objs.set_rollout_after(rolling(rv, up_to_date, current=current), after)


def _lister(answers):
    """A MachineSet lister answering (items, list resourceVersion) from ``answers`` in turn."""
    calls = []

    def lister():
        calls.append(1)
        return answers[min(len(calls), len(answers)) - 1]
    return lister, calls


def _sets(*specs):
    return [objs.machine_set("v1beta2", suffix=suffix, created=created, infra="md-0-infra-v1", replicas=replicas)
            for suffix, created, replicas in specs]


def test_machine_sets_decide_completion_and_one_list_serves_older_events():
    """Right after a restart every counter still describes the old Machines: only the MachineSets
    tell that the rollout has not even started. A list newer than an event decides it too."""
    clock = Clock()
    old_only = (_sets(("aaaaa", objs.CREATED, 3)), "10")
    both = (_sets(("aaaaa", objs.CREATED, 3), ("bbbbb", "2026-03-01T12:00:01Z", 0)), "13")
    finished = (_sets(("aaaaa", objs.CREATED, 0), ("bbbbb", "2026-03-01T12:00:01Z", 3)), "21")
    lister, calls = _lister([old_only, both, finished])
    script = [[("MODIFIED", _restarted(11), 1),          # observed; counters unchanged: list -> new MS, old replicas
               ("MODIFIED", _restarted(12, current=4), 1),  # older than the list: no list
               ("MODIFIED", _restarted(20), 1)]]           # counters done again: list -> complete
    api = FakeApi(clock, script)
    waiter = make_waiter(api, clock)
    waiter.machine_sets_lister = lister
    final = waiter.wait([_restarted(10)], "10")
    assert final[0]["metadata"]["resourceVersion"] == "20"
    assert len(calls) == 3 and waiter.machine_set_lists == 3
    assert any("waiting for a MachineSet with the current template" in line for line in waiter.progress)
    assert any("3 old replicas are pending termination (md-0-aaaaa)" in line for line in waiter.progress)
    assert "successfully rolled out" in waiter.progress[-1]


def test_counters_alone_never_finish_a_restart():
    """Without a new MachineSet the wait goes on until the stall limit, listing once more first."""
    clock = Clock()
    lister, calls = _lister([(_sets(("aaaaa", objs.CREATED, 3)), "99")])
    api = FakeApi(clock, [[("MODIFIED", _restarted(11), 60)]])
    waiter = make_waiter(api, clock, wait_timeout=1000, stall_timeout=50)
    waiter.machine_sets_lister = lister
    with pytest.raises(WaitFailed) as err:
        waiter.wait([_restarted(10)], "10")
    assert err.value.reason == "stalled"
    assert "waiting for a MachineSet with the current template created after spec.rollout.after" in str(err.value)
    assert len(calls) == 2  # at the start, then once more before calling it a stall


def test_pending_trigger_is_waited_for_by_the_server_clock_without_stalling():
    clock = Clock()
    scheduled = objs.set_rollout_after(rolling(10, 3), "2026-03-01T12:00:30Z")
    fired = copy.deepcopy(scheduled)
    fired["metadata"]["resourceVersion"] = "40"
    new = (_sets(("aaaaa", objs.CREATED, 0), ("bbbbb", "2026-03-01T12:00:31Z", 3)), "41")
    lister, calls = _lister([(_sets(("aaaaa", objs.CREATED, 3)), "10"), new])
    # nothing happens until the trigger time, then the controller rolls the Machines
    script = [[("BOOKMARK", {"metadata": {"resourceVersion": "10"}}, 31)], [("MODIFIED", fired, 2)]]
    api = FakeApi(clock, script)
    waiter = make_waiter(api, clock, wait_timeout=1000, stall_timeout=20)
    waiter.machine_sets_lister = lister
    waiter.wait([scheduled], "10")
    # the first stream ends one second after the trigger time; no stall although 31s > stall_timeout
    assert api.watch_calls[0]["timeout"] <= 31
    assert any("has not been reached by the API server's clock" in line for line in waiter.progress)
    assert "successfully rolled out" in waiter.progress[-1]


def test_bug_13182_state_completes_with_a_warning():
    clock = Clock()
    stuck = objs.set_condition(_restarted(11, up_to_date=0), "RollingOut", "True", "RollingOut", generation=3,
                               message="* MachineDeployment spec.rolloutAfter expired")
    same_second = (_sets(("aaaaa", objs.CREATED, 0), ("bbbbb", objs.TRIGGER_TEXT, 3)), "12")
    lister, calls = _lister([same_second])
    api = FakeApi(clock, [[("MODIFIED", stuck, 1)]])
    waiter = make_waiter(api, clock)
    waiter.machine_sets_lister = lister
    final = waiter.wait([_restarted(10, up_to_date=0, current=4)], "10")
    assert final[0]["metadata"]["resourceVersion"] == "11"
    assert "successfully rolled out" in waiter.progress[-1]
