# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one waiting engine (client.waiter) over scripted watch streams: what it opens, lists and decides."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime
import threading
import time

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, TransportError
from ansible_collections.capi.rollout.plugins.module_utils.client.waiter import PROGRESS_GATHER_SECONDS, Group, WaitFailed, Waiter
from ansible_collections.capi.rollout.plugins.module_utils.core import outcomes
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

PATH = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments"
START = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)


class Clock(object):
    """Epoch seconds that move only when the scripted streams say so."""

    def __init__(self):
        self.now = START.timestamp()

    def __call__(self):
        return self.now

    def server_now(self):
        return datetime.datetime.fromtimestamp(self.now, tz=datetime.timezone.utc)


class FakeApi(object):
    """watch() answers from a script: each entry is a list of (type, obj, seconds_elapsed_before) or an exception."""

    host = "https://fake"
    deadline = None  # set by the waiter while it runs (client.requests.Api.deadline)
    clock_seconds = staticmethod(time.monotonic)

    def __init__(self, clock, script, lists=None):
        self.clock = clock
        self.script = list(script)
        self.lists = list(lists or [])
        self.watch_calls = []
        self.list_calls = 0

    def watch(self, path, rv, timeout, label_selector=None, field_selector=None):
        self.watch_calls.append({"path": path, "rv": rv, "timeout": timeout, "field_selector": field_selector})
        if not self.script:
            raise AssertionError("no more watch answers")
        entry = self.script.pop(0)
        if isinstance(entry, Exception):
            raise entry
        return self._events(entry)

    def _events(self, entry):
        for event_type, obj, elapsed in entry:
            self.clock.now += elapsed
            if event_type is not None:  # None: the stream stays quiet that long
                yield event_type, obj

    def list(self, path, label_selector=None, field_selector=None):
        self.list_calls += 1
        return self.lists.pop(0)

    def server_now(self):
        return self.clock.server_now()


def rolling(rv, up_to_date, current=3, available=3, generation=3, observed=3, name="md-0"):
    md = objs.machine_deployment(generation=generation)
    md["metadata"]["resourceVersion"] = str(rv)
    md["metadata"]["name"] = name
    md = objs.set_counts(md, replicas=current, up_to_date=up_to_date, available=available)
    md["status"]["observedGeneration"] = observed
    if up_to_date < 3 or current != 3:
        return objs.set_condition(md, "RollingOut", "True", "RollingOut", generation=generation,
                                  message=f"Rolling out {3 - up_to_date} not up-to-date replicas")
    return objs.set_condition(md, "RollingOut", "False", "NotRollingOut", generation=generation)


def make_waiter(api, clock, objects, rv="10", wait_timeout=100, stall_timeout=50, **options):
    group = Group("MachineDeployment", "v1beta2", "default", PATH, objects, rv)
    return Waiter(api, [group], wait_timeout, stall_timeout, clock=clock, now=clock.server_now, sleep=lambda s: None,
                  **options)


def finish(waiter):
    """Run to the end; the failure as the restart flow raises it."""
    waiter.run()
    if waiter.state["phase"] == ws.FAILED:
        raise waiter.failure()
    return waiter.objects()


def test_completes_from_one_watch_and_records_progress():
    clock = Clock()
    script = [[("MODIFIED", rolling(11, 1, current=4), 1), ("BOOKMARK", {"metadata": {"resourceVersion": "12"}}, 1),
               ("MODIFIED", rolling(13, 2, current=4), 1), ("MODIFIED", rolling(14, 3), 1)]]
    api = FakeApi(clock, script)
    waiter = make_waiter(api, clock, [rolling(10, 0, observed=2)])
    final = finish(waiter)
    assert final[0]["metadata"]["resourceVersion"] == "14"
    assert len(api.watch_calls) == 1 and api.watch_calls[0]["rv"] == "10"
    assert api.watch_calls[0]["field_selector"] == "metadata.name=md-0"
    assert waiter.progress[0].startswith("2026-03-01T12:00:00Z Waiting for machinedeployment/default/md-0")
    assert "successfully rolled out" in waiter.progress[-1]
    assert len(waiter.progress) == 4 and waiter.state["phase"] == ws.SUCCEEDED


def test_already_complete_opens_no_watch():
    clock = Clock()
    api = FakeApi(clock, [])
    assert finish(make_waiter(api, clock, [rolling(10, 3)]))
    assert api.watch_calls == []


def test_reconnects_from_last_resource_version_when_stream_ends():
    clock = Clock()
    script = [[("MODIFIED", rolling(11, 1, current=4), 5)], [("MODIFIED", rolling(12, 3), 5)]]
    api = FakeApi(clock, script)
    finish(make_waiter(api, clock, [rolling(10, 0)]))
    assert [call["rv"] for call in api.watch_calls] == ["10", "11"]


def test_gone_relists_and_continues():
    clock = Clock()
    script = [ApiError(410, {"reason": "Expired", "message": "too old resource version"}),
              [("MODIFIED", rolling(31, 3), 1)]]
    lists = [{"metadata": {"resourceVersion": "30"}, "items": [rolling(29, 2, current=4)]}]
    api = FakeApi(clock, script, lists)
    finish(make_waiter(api, clock, [rolling(10, 0)]))
    assert api.list_calls == 1
    assert [call["rv"] for call in api.watch_calls] == ["10", "30"]


def test_a_broken_stream_is_opened_again_from_where_it_was():
    clock = Clock()
    script = [[("MODIFIED", rolling(11, 1, current=4), 1)], TransportError("https://fake", "connection refused"),
              [("MODIFIED", rolling(12, 3), 1)]]
    api = FakeApi(clock, script)
    finish(make_waiter(api, clock, [rolling(10, 0)]))
    assert [call["rv"] for call in api.watch_calls] == ["10", "11", "11"]


def test_a_refusal_right_after_an_api_server_restart_is_waited_out():
    clock = Clock()
    denied = ApiError(403, {"reason": "Forbidden", "message": "cannot watch resource"})
    script = [[("MODIFIED", rolling(11, 1, current=4), 1)], denied, denied, [("MODIFIED", rolling(12, 3), 1)]]
    api = FakeApi(clock, script)
    finish(make_waiter(api, clock, [rolling(10, 0)]))
    assert [call["rv"] for call in api.watch_calls] == ["10", "11", "11", "11"]


def test_a_watch_refused_from_the_start_fails():
    clock = Clock()
    api = FakeApi(clock, [ApiError(403, {"reason": "Forbidden", "message": "cannot watch resource"})])
    with pytest.raises(ApiError):
        make_waiter(api, clock, [rolling(10, 0)]).run()


def test_stall_detected_with_message_naming_what_is_stuck():
    clock = Clock()
    stuck = rolling(11, 0, current=4, available=3)
    stuck = objs.set_condition(stuck, "ScalingUp", "True", "ScalingUp", generation=3,
                               message="Scaling up from 3 to 4 replicas")
    same = copy.deepcopy(stuck)
    same["metadata"]["resourceVersion"] = "12"
    script = [[("MODIFIED", stuck, 1), ("MODIFIED", same, 60)]]
    api = FakeApi(clock, script)
    machines = [{"name": "md-0-new-1", "ready": False, "phase": "Provisioning", "conditions": [
        {"type": "Ready", "status": "False", "reason": "NotReady", "message": "InfrastructureReady is False"}]}]
    waiter = make_waiter(api, clock, [rolling(10, 0)], wait_timeout=1000, stall_timeout=50,
                         machines_lister=lambda group, obj: machines)
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    text = str(err.value)
    assert err.value.reason == "stalled"
    assert "machinedeployment/default/md-0" in text
    assert "stall_timeout=50s" in text
    assert "Scaling up from 3 to 4 replicas" in text
    assert "Machine md-0-new-1 is not ready" in text
    assert outcomes.hint(ws.STALLED).split(";", maxsplit=1)[0] in text  # the next step, from the one table of hints
    assert err.value.objects[0]["metadata"]["resourceVersion"] == "12"
    assert waiter.stuck["machinedeployment/default/md-0"]["machines"] == machines


def test_overall_timeout():
    clock = Clock()
    script = [[("MODIFIED", rolling(11 + i, i % 3, current=4), 10)] for i in range(20)]
    api = FakeApi(clock, script)
    waiter = make_waiter(api, clock, [rolling(10, 0)], wait_timeout=45, stall_timeout=30)
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    assert err.value.reason == "wait_timeout" and "wait_timeout=45s" in str(err.value)
    # the watch timeout handed to the server never exceeds what is left
    assert all(call["timeout"] <= 45 for call in api.watch_calls)


def test_many_objects_one_stream_no_field_selector():
    clock = Clock()
    other = rolling(20, 0, name="md-1")
    script = [[("MODIFIED", rolling(21, 3), 1), ("MODIFIED", rolling(23, 0, name="md-9"), 1),
               ("MODIFIED", rolling(22, 3, name="md-1"), 1)]]
    api = FakeApi(clock, script)
    final = finish(make_waiter(api, clock, [rolling(10, 0), other]))
    assert [obj["metadata"]["name"] for obj in final] == ["md-0", "md-1"]
    assert len(api.watch_calls) == 1 and api.watch_calls[0]["field_selector"] is None


def test_a_deleted_object_fails_the_wait_at_once():
    clock = Clock()
    api = FakeApi(clock, [[("DELETED", rolling(11, 1), 1)]])
    waiter = make_waiter(api, clock, [rolling(10, 0)])
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    assert err.value.reason == ws.DELETED
    assert "machinedeployment/default/md-0 deleted while waiting for its rollout" in str(err.value)


def test_soak_after_the_rollout_and_a_health_gate_that_fails():
    clock = Clock()
    unhealthy = rolling(13, 3, available=2)
    api = FakeApi(clock, [[("MODIFIED", rolling(11, 3), 1), ("MODIFIED", unhealthy, 5)]])
    waiter = make_waiter(api, clock, [rolling(10, 0)], soak_seconds=30)
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    assert err.value.reason == ws.SOAK_FAILED and "health gate failed after 5s of soak" in str(err.value)
    assert waiter.state["rollout_finished"] == START.timestamp() + 1


def test_soak_passes_when_nothing_happens():
    clock = Clock()

    class QuietApi(FakeApi):
        def _events(self, entry):  # the server ends a quiet stream after its timeout
            for event_type, obj, elapsed in entry:
                self.clock.now += elapsed
                yield event_type, obj
            self.clock.now += self.watch_calls[-1]["timeout"]

    api = QuietApi(clock, [[("MODIFIED", rolling(11, 3), 1)], []])
    waiter = make_waiter(api, clock, [rolling(10, 0)], soak_seconds=30)
    finish(waiter)
    assert waiter.state["phase"] == ws.SUCCEEDED and waiter.state["soak_finished"] >= START.timestamp() + 31
    assert "soak passed" in waiter.progress[-1]


def test_drift_fails_at_once():
    clock = Clock()
    moved = rolling(11, 1)
    moved["spec"]["template"]["spec"]["infrastructureRef"]["name"] = "md-0-infra-old"
    api = FakeApi(clock, [[("MODIFIED", moved, 1)]])
    waiter = make_waiter(api, clock, [rolling(10, 0)],
                         expected={"machinedeployment/default/md-0": {"name": moved["spec"]["template"]["spec"]
                                                                      ["infrastructureRef"]["name"] + "-x"}})
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    assert err.value.reason == ws.DRIFT and "changed by someone else" in str(err.value)


def _restarted(rv, up_to_date=3, current=3, after=objs.TRIGGER_TEXT):
    return objs.set_rollout_after(rolling(rv, up_to_date, current=current), after)


def _lister(answers):
    """A MachineSet lister answering (items, list resourceVersion) from ``answers`` in turn."""
    calls = []

    def lister(namespace):
        calls.append(namespace)
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
    waiter = make_waiter(api, clock, [_restarted(10)], machine_sets_lister=lister)
    final = finish(waiter)
    assert final[0]["metadata"]["resourceVersion"] == "20"
    assert calls == ["default"] * 3 and waiter.machine_set_lists == 3
    assert any("waiting for a MachineSet with the current template" in line for line in waiter.progress)
    assert any("3 old replicas are pending termination (md-0-aaaaa)" in line for line in waiter.progress)
    assert "successfully rolled out" in waiter.progress[-1]
    assert waiter.machine_sets["default"] == finished[0]


def test_counters_alone_never_finish_a_restart():
    """Without a new MachineSet the wait goes on until the stall limit, listing once more first."""
    clock = Clock()
    lister, calls = _lister([(_sets(("aaaaa", objs.CREATED, 3)), "99")])
    api = FakeApi(clock, [[("MODIFIED", _restarted(11), 60)]])
    waiter = make_waiter(api, clock, [_restarted(10)], wait_timeout=1000, stall_timeout=50, machine_sets_lister=lister)
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    assert err.value.reason == "stalled"
    assert "waiting for a MachineSet with the current template created after spec.rollout.after" in str(err.value)
    assert len(calls) == 2  # at the start, then once more before calling it a stall


def test_pending_trigger_is_waited_for_by_the_server_clock_without_stalling():
    clock = Clock()
    scheduled = objs.set_rollout_after(rolling(10, 3), "2026-03-01T12:00:30Z")
    fired = copy.deepcopy(scheduled)
    fired["metadata"]["resourceVersion"] = "40"
    new = (_sets(("aaaaa", objs.CREATED, 0), ("bbbbb", "2026-03-01T12:00:31Z", 3)), "41")
    lister, _calls = _lister([(_sets(("aaaaa", objs.CREATED, 3)), "10"), new])
    # nothing happens until the trigger time, then the controller rolls the Machines
    script = [[("BOOKMARK", {"metadata": {"resourceVersion": "10"}}, 31)], [("MODIFIED", fired, 2)]]
    api = FakeApi(clock, script)
    waiter = make_waiter(api, clock, [scheduled], wait_timeout=1000, stall_timeout=20, machine_sets_lister=lister)
    finish(waiter)
    # the first stream may last until just after the trigger time; no stall although 31s > stall_timeout
    assert api.watch_calls[0]["timeout"] <= 31
    assert any("has not been reached by the API server's clock" in line for line in waiter.progress)
    assert "successfully rolled out" in waiter.progress[-1]


def test_bug_13182_state_completes_with_a_warning():
    clock = Clock()
    stuck = objs.set_condition(_restarted(11, up_to_date=0), "RollingOut", "True", "RollingOut", generation=3,
                               message="* MachineDeployment spec.rolloutAfter expired")
    same_second = (_sets(("aaaaa", objs.CREATED, 0), ("bbbbb", objs.TRIGGER_TEXT, 3)), "12")
    lister, _calls = _lister([same_second])
    api = FakeApi(clock, [[("MODIFIED", stuck, 1)]])
    waiter = make_waiter(api, clock, [_restarted(10, up_to_date=0, current=4)], machine_sets_lister=lister)
    final = finish(waiter)
    assert final[0]["metadata"]["resourceVersion"] == "11"
    assert "successfully rolled out" in waiter.progress[-1]
    assert any("13182" in w for w in waiter.snapshots["machinedeployment/default/md-0"]["warnings"])


def test_a_call_gathers_the_lines_of_a_few_seconds_then_returns_the_state_to_carry_on():
    """capi_rollout_wait runs in slices: a call that has new progress lines goes on gathering the lines of the next
    PROGRESS_GATHER_SECONDS (a busy rollout: one module start per few seconds, not one per change), then returns; the
    next call carries on from the state, with a stream opened again from where the first one stopped."""
    clock = Clock()
    api = FakeApi(clock, [[("MODIFIED", rolling(11, 1, current=4), 1), ("MODIFIED", rolling(12, 2, current=4), 1),
                           (None, None, PROGRESS_GATHER_SECONDS)],
                          [("MODIFIED", rolling(13, 3), 1)]])
    api.clock_seconds = clock  # the call's deadlines by the scripted clock
    waiter = make_waiter(api, clock, [rolling(10, 0)])
    first = waiter.run(call_seconds=60)
    # the lines at the start and those of the next seconds, in one call that ended after gathering, not at 60 s
    assert len(first) == 3 and waiter.state["phase"] == ws.ROLLOUT and len(api.watch_calls) == 1
    assert clock.now - START.timestamp() == 2 + PROGRESS_GATHER_SECONDS
    second = waiter.run(call_seconds=60)
    assert second and waiter.state["phase"] == ws.SUCCEEDED and "successfully rolled out" in second[-1]
    assert [call["rv"] for call in api.watch_calls] == ["10", "12"]
    # a new waiter (the next module call) carries on from the state alone
    again = make_waiter(FakeApi(clock, []), clock, [rolling(13, 3)], rv="13", state=copy.deepcopy(waiter.state))
    assert again.run(call_seconds=60) == [] and again.state["phase"] == ws.SUCCEEDED


class ThreadedApi(object):
    """Two namespaces: each watch answers its script in real time (a stream blocks until its event)."""

    host = "https://fake"
    deadline = None
    clock_seconds = staticmethod(time.monotonic)

    def __init__(self, scripts):
        self.scripts = {path: list(entries) for path, entries in scripts.items()}
        self.lock = threading.Lock()
        self.watch_paths = []

    def watch(self, path, rv, timeout, label_selector=None, field_selector=None):
        with self.lock:
            self.watch_paths.append(path)
            entry = self.scripts[path].pop(0) if self.scripts[path] else None
        return self._events(entry, timeout)

    @staticmethod
    def _events(entry, timeout):
        if entry is None:
            time.sleep(min(timeout, 0.5))
            return
        for event_type, obj, delay in entry:
            time.sleep(delay)
            yield event_type, obj

    def server_now(self):
        return START


def test_several_groups_are_watched_at_once_one_stream_each():
    other_path = PATH.replace("/default/", "/team-a/")
    team = rolling(20, 0, name="md-t")
    team["metadata"]["namespace"] = "team-a"
    team_done = rolling(21, 3, name="md-t")
    team_done["metadata"]["namespace"] = "team-a"
    # the team-a object finishes first, while the default one's stream is still quiet
    api = ThreadedApi({PATH: [[("MODIFIED", rolling(11, 3), 0.6)]], other_path: [[("MODIFIED", team_done, 0.1)]]})
    groups = [Group("MachineDeployment", "v1beta2", "default", PATH, [rolling(10, 0)], "10"),
              Group("MachineDeployment", "v1beta2", "team-a", other_path, [team], "20")]
    waiter = Waiter(api, groups, 30, 30, now=api.server_now)
    started = time.monotonic()
    waiter.run()
    assert waiter.state["phase"] == ws.SUCCEEDED, waiter.progress
    assert time.monotonic() - started < 5
    assert set(api.watch_paths) == {PATH, other_path}
    done_at = waiter.state["done_at"]
    assert done_at["machinedeployment/team-a/md-t"] <= done_at["machinedeployment/default/md-0"]


class Templates(object):
    """A templates_lister: the templates that exist (a set of (namespace, kind, name)), each call recorded."""

    def __init__(self, existing):
        self.existing = set(existing)
        self.calls = []

    def __call__(self, required):
        self.calls.append(sorted((item["namespace"], item["kind"], item["name"]) for item in required))
        return set(self.existing)


def _on_template(md):
    infra_ref = md["spec"]["template"]["spec"]["infrastructureRef"]
    return ("default", infra_ref["kind"], infra_ref["name"])


def test_templates_are_read_as_the_wait_starts_and_when_it_may_end_not_per_event():
    clock = Clock()
    script = [[("MODIFIED", rolling(11, 1, current=4), 1), ("MODIFIED", rolling(12, 2, current=4), 1),
               ("MODIFIED", rolling(13, 3), 1)]]
    templates = Templates([_on_template(rolling(10, 0))])
    waiter = make_waiter(FakeApi(clock, script), clock, [rolling(10, 0)], templates_lister=templates)
    finish(waiter)
    assert waiter.state["phase"] == ws.SUCCEEDED
    # the first observation and the one that finished the rollout; none for the events in between
    assert templates.calls == [[_on_template(rolling(10, 0))]] * 2


def test_a_target_template_deleted_during_the_rollout_fails_it_when_it_completes():
    """The Machines were made before the template went: the rollout completes, yet the wait fails, naming it."""
    clock = Clock()
    templates = Templates([_on_template(rolling(10, 0))])
    api = FakeApi(clock, [[("MODIFIED", rolling(11, 1, current=4), 1), ("MODIFIED", rolling(12, 3), 1)]])
    original_events = api._events

    def events(entry):
        for item in original_events(entry):
            templates.existing.clear()  # deleted right after the switch, while the Machines roll
            yield item

    api._events = events
    waiter = make_waiter(api, clock, [rolling(10, 0)], templates_lister=templates, soak_seconds=30)
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    name = rolling(10, 0)["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    assert err.value.reason == ws.TEMPLATE_MISSING and waiter.state["failed_refs"] == ["machinedeployment/default/md-0"]
    assert f"is on DockerMachineTemplate default/{name}, which no longer exists" in str(err.value)
    assert err.value.hint == outcomes.hint(ws.TEMPLATE_MISSING) and waiter.state["rollout_finished"] is None
    assert waiter.snapshots["machinedeployment/default/md-0"]["template_missing"]


def test_a_failed_read_of_the_templates_never_hides_a_timeout_and_never_lets_a_wait_succeed():
    def unreadable(required):
        raise TransportError("https://fake", "no answer")

    clock = Clock()
    waiter = make_waiter(FakeApi(clock, [[("MODIFIED", rolling(11, 1, current=4), 10)]]), clock, [rolling(10, 0)],
                         wait_timeout=5, templates_lister=unreadable)
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    assert err.value.reason == ws.WAIT_TIMEOUT
    clock = Clock()
    waiter = make_waiter(FakeApi(clock, [[("MODIFIED", rolling(11, 3), 1)]]), clock, [rolling(10, 0)],
                         templates_lister=unreadable)
    with pytest.raises(TransportError):
        finish(waiter)
    assert waiter.state["phase"] == ws.ROLLOUT


# --- objects a Cluster topology manages: held to their topology change, not to a template name ----------------------

HOLD = {"overrides": {"workerImage": "img:new"}, "template": {"customImage": "img:new"}}
TOPOLOGY_REF = "machinedeployment/default/md-0"


def _topology_md(rv, up_to_date, template):
    md = rolling(rv, up_to_date)
    md["metadata"]["labels"].update({"topology.cluster.x-k8s.io/owned": "", "topology.cluster.x-k8s.io/deployment-name": "md-0"})
    md["spec"]["template"]["spec"]["infrastructureRef"]["name"] = template
    return md


def _topology_cluster(image, manager="capi-rollout"):
    entry = {"name": "md-0", "class": "default-worker"}
    if image:
        entry["variables"] = {"overrides": [{"name": "workerImage", "value": image}]}
    fields = {"f:spec": {"f:topology": {"f:workers": {"f:machineDeployments": {'k:{"name":"md-0"}': {"f:variables": {}}}}}}}
    return {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "default", "managedFields": [
                {"manager": manager, "operation": "Update", "time": "2026-03-01T12:00:03Z", "fieldsV1": fields}]},
            "spec": {"topology": {"classRef": {"name": "quick-start"}, "workers": {"machineDeployments": [entry]}}}}


class FakeTopologyReads(object):
    """TopologyReads over fixed templates ({name: customImage}) and a Cluster that a test may replace; reads recorded."""

    def __init__(self, images, cluster):
        self.images = images
        self.cluster = cluster
        self.reads = []

    def template(self, namespace, raw_ref):
        self.reads.append(("template", raw_ref["name"]))
        if raw_ref["name"] not in self.images:  # gone (TopologyReads.template: None)
            return None
        return {"metadata": {"name": raw_ref["name"]}, "spec": {"template": {"spec": {"customImage": self.images[raw_ref["name"]]}}}}

    def clusters(self, namespace, objects):
        self.reads.append(("clusters", namespace))
        return {"c1": self.cluster}


def test_a_topology_md_is_done_only_on_a_template_that_carries_its_values():
    """Complete on the template from before the change is not done (the topology has not rotated yet); the rotated
    template (a generated name) with the values, rolled out, is. Each template is read once, the Cluster when a new
    template shows up and when the wait may end."""
    clock = Clock()
    script = [[("MODIFIED", _topology_md(11, 0, "md-0-gen2"), 1), ("MODIFIED", _topology_md(12, 2, "md-0-gen2"), 1),
               ("MODIFIED", _topology_md(13, 3, "md-0-gen2"), 1)]]
    reads = FakeTopologyReads({"md-0-gen1": "img:old", "md-0-gen2": "img:new"}, _topology_cluster("img:new"))
    waiter = make_waiter(FakeApi(clock, script), clock, [_topology_md(10, 3, "md-0-gen1")], holds={TOPOLOGY_REF: HOLD},
                         topology_reads=reads)
    finish(waiter)
    assert waiter.state["phase"] == ws.SUCCEEDED
    assert "waits for the topology controller to generate its template with customImage=img:new (has img:old)" in \
        waiter.progress[0], waiter.progress
    assert reads.reads == [("template", "md-0-gen1"), ("clusters", "default"), ("template", "md-0-gen2"),
                           ("clusters", "default"), ("clusters", "default")]


def test_without_the_hold_the_old_template_counts_as_done():
    """Positive control of the test above: the same MD, no hold, is done at once on the template from before."""
    clock = Clock()
    waiter = make_waiter(FakeApi(clock, []), clock, [_topology_md(10, 3, "md-0-gen1")])
    finish(waiter)
    assert waiter.state["phase"] == ws.SUCCEEDED and waiter.objects()[0]["metadata"]["resourceVersion"] == "10"


def test_a_cluster_topology_reverted_during_the_wait_is_drift_naming_its_writer():
    clock = Clock()
    reads = FakeTopologyReads({"md-0-gen2": "img:new", "md-0-gen3": "img:old"}, _topology_cluster("img:new"))
    api = FakeApi(clock, [[("MODIFIED", _topology_md(11, 1, "md-0-gen2"), 1), ("MODIFIED", _topology_md(12, 0, "md-0-gen3"), 1)]])
    original_events = api._events

    def events(entry):
        for index, item in enumerate(original_events(entry)):
            if index == 1:  # someone put the old image back: the topology rotates the MD to a template of it
                reads.cluster = _topology_cluster("img:old", manager="kubectl-edit")
            yield item

    api._events = events
    waiter = make_waiter(api, clock, [_topology_md(10, 0, "md-0-gen2")], holds={TOPOLOGY_REF: HOLD}, topology_reads=reads)
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    assert err.value.reason == ws.DRIFT and waiter.state["failed_refs"] == [TOPOLOGY_REF]
    assert "cluster/default/c1 no longer holds its topology change workerImage=img:new (now img:old)" in str(err.value)
    assert "changed by kubectl-edit at 2026-03-01T12:00:03Z" in str(err.value)


def test_an_undo_is_done_only_off_the_template_of_the_change_it_reverts():
    clock = Clock()
    script = [[("MODIFIED", _topology_md(11, 0, "md-0-gen3"), 1), ("MODIFIED", _topology_md(12, 3, "md-0-gen3"), 1)]]
    reads = FakeTopologyReads({"md-0-gen2": "img:new", "md-0-gen3": "img:old"}, _topology_cluster(None))
    waiter = make_waiter(FakeApi(clock, script), clock, [_topology_md(10, 3, "md-0-gen2")], topology_reads=reads,
                         holds={TOPOLOGY_REF: {"overrides": {"workerImage": None}, "template": {}, "not_on": "md-0-gen2"}})
    finish(waiter)
    assert waiter.state["phase"] == ws.SUCCEEDED and waiter.objects()[0]["metadata"]["resourceVersion"] == "12"
    assert "move it off its template md-0-gen2" in waiter.progress[0], waiter.progress


def test_an_undo_is_not_done_on_the_template_it_reverts_when_the_topology_deleted_that_template_already():
    # the topology deletes the template an object left at once: the wait's first read of it can find it gone while the
    # object it holds, not reconciled yet, still names it and its counters say complete (a CI run ended such an undo
    # at once, the old control-plane Machine still there)
    clock = Clock()
    script = [[("MODIFIED", _topology_md(11, 0, "md-0-gen3"), 1), ("MODIFIED", _topology_md(12, 3, "md-0-gen3"), 1)]]
    reads = FakeTopologyReads({"md-0-gen3": "img:old"}, _topology_cluster(None))
    waiter = make_waiter(FakeApi(clock, script), clock, [_topology_md(10, 3, "md-0-gen2")], topology_reads=reads,
                         holds={TOPOLOGY_REF: {"overrides": {"workerImage": None}, "template": {}, "not_on": "md-0-gen2"}})
    finish(waiter)
    assert waiter.state["phase"] == ws.SUCCEEDED and waiter.objects()[0]["metadata"]["resourceVersion"] == "12"
    assert ("template", "md-0-gen2") in reads.reads
    assert "move it off its template md-0-gen2" in waiter.progress[0], waiter.progress


MACHINES = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines"


def _draining(rv, reason="DrainingNode", drained=False):
    machine = objs.machine("v1beta2", deleting=True, phase="Deleting")
    machine["metadata"]["resourceVersion"] = str(rv)
    machine["spec"]["deletion"] = {"nodeDrainTimeoutSeconds": 1}
    machine["status"]["deletion"] = {"nodeDrainStartTime": objs.NOW_TEXT}
    machine["status"]["conditions"].append({"type": "Deleting", "status": "True", "reason": reason, "message": "",
                                            "lastTransitionTime": objs.NOW_TEXT})
    machine["status"]["deprecated"] = {"v1beta1": {"conditions": [
        {"type": "DrainingSucceeded", "status": "True" if drained else "False", "lastTransitionTime": objs.NOW_TEXT}]}}
    return machine


@pytest.mark.parametrize("undrainable, phase", [("continue", ws.SUCCEEDED), ("fail", ws.FAILED)])
def test_the_machines_of_drain_groups_are_watched_and_a_drain_that_timed_out_is_named(undrainable, phase):
    # the Machine drains when the wait starts, then is deleted without DrainingSucceeded; the MD completes later
    api = ThreadedApi({PATH: [[("MODIFIED", rolling(11, 3), 0.6)]],
                       MACHINES: [[("DELETED", _draining(31), 0.1)]]})
    groups = [Group("MachineDeployment", "v1beta2", "default", PATH, [rolling(10, 0)], "10")]
    machines = Group("Machine", "v1beta2", "default", MACHINES, [_draining(30)], "30", names=[])
    waiter = Waiter(api, groups, 30, 30, now=api.server_now, drain_groups=[machines], undrainable=undrainable)
    waiter.run()
    assert set(api.watch_paths) == {PATH, MACHINES}
    assert waiter.state["phase"] == phase, waiter.progress
    assert [(e["ref"], e["machine"]) for e in waiter.state["drain_timeouts"]] == [
        ("machinedeployment/default/md-0", "md-0-abcde-x1y2z")]
    assert waiter.state["reason"] == (ws.DRAIN_TIMED_OUT if undrainable == "fail" else None)


def test_a_drain_that_succeeded_before_the_machine_went_is_no_timeout():
    api = ThreadedApi({PATH: [[("MODIFIED", rolling(11, 3), 0.6)]],
                       MACHINES: [[("MODIFIED", _draining(31, reason="WaitingForVolumeDetach", drained=True), 0.05),
                                   ("DELETED", _draining(32, reason="WaitingForVolumeDetach", drained=True), 0.05)]]})
    groups = [Group("MachineDeployment", "v1beta2", "default", PATH, [rolling(10, 0)], "10")]
    machines = Group("Machine", "v1beta2", "default", MACHINES, [_draining(30)], "30", names=[])
    waiter = Waiter(api, groups, 30, 30, now=api.server_now, drain_groups=[machines], undrainable="fail")
    waiter.run()
    assert waiter.state["phase"] == ws.SUCCEEDED and waiter.state.get("drain_timeouts", []) == []


def test_a_machine_draining_at_the_last_call_and_missing_from_this_calls_list_timed_out():
    # a later call of the same wait: the state carried says the Machine was draining; it is no longer listed
    state = ws.new_state(["machinedeployment/default/md-0"], START.timestamp())
    state["draining"] = {"default/md-0-abcde-x1y2z": {"ref": "machinedeployment/default/md-0", "node": "node-1"}}
    clock = Clock()
    machines = Group("Machine", "v1beta2", "default", MACHINES, [], "30", names=[])
    waiter = make_waiter(FakeApi(clock, []), clock, [rolling(10, 3)], state=state, drain_groups=[machines])
    assert [e["machine"] for e in waiter.state["drain_timeouts"]] == ["md-0-abcde-x1y2z"]
    assert any("timed out" in line for line in waiter.progress)


def test_a_worker_class_switched_back_during_the_wait_is_drift():
    """Path (b): the hold names the worker class switched to; the Cluster's entry back on the old class is drift, and
    the same wait with the class held is done (positive control)."""
    hold = {"overrides": {}, "template": {"customImage": "img:new"}, "class": "big-worker"}
    script = [[("MODIFIED", _topology_md(11, 3, "md-0-gen2"), 1)]]
    switched = _topology_cluster(None)
    switched["spec"]["topology"]["workers"]["machineDeployments"][0]["class"] = "big-worker"
    clock = Clock()
    reads = FakeTopologyReads({"md-0-gen1": "img:old", "md-0-gen2": "img:new"}, switched)
    waiter = make_waiter(FakeApi(clock, script), clock, [_topology_md(10, 3, "md-0-gen1")], holds={TOPOLOGY_REF: hold},
                         topology_reads=reads)
    finish(waiter)
    assert waiter.state["phase"] == ws.SUCCEEDED
    clock = Clock()
    reads = FakeTopologyReads({"md-0-gen1": "img:old", "md-0-gen2": "img:new"}, _topology_cluster(None))
    waiter = make_waiter(FakeApi(clock, [[("MODIFIED", _topology_md(11, 3, "md-0-gen2"), 1)]]), clock,
                         [_topology_md(10, 3, "md-0-gen1")], holds={TOPOLOGY_REF: hold}, topology_reads=reads)
    with pytest.raises(WaitFailed) as err:
        finish(waiter)
    assert err.value.reason == ws.DRIFT
    assert "no longer holds its topology change class=big-worker (now default-worker)" in str(err.value)
