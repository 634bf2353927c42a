# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deadline of a waiting task against an API server that hangs (accepts connections, answers nothing), in
every phase of the task: no request ends later than wait_timeout (+ soak) + the grace after the task's start, or
after the end of the wait once it runs. One fake monotonic clock for everything: a hung request takes all the time
it was given (its total), a watch the seconds it asked the server for."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime
from email.utils import format_datetime

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client.requests import DEADLINE_GRACE_SECONDS, Api
from ansible_collections.capi.rollout.plugins.module_utils.core import lease as leases
from ansible_collections.capi.rollout.plugins.module_utils.flows import change, lock, restart, wait
from ansible_collections.capi.rollout.plugins.module_utils.flows import run as flow_run
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import FakeConnection
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.flows.fakes import Exit, ModuleStandIn
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.flows.test_change import APIS, FakeModule, md_list

MDS = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments"
MSS = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinesets"
MACHINES = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines"
CLUSTERS = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
# the wait reads whether the objects' templates still exist (flows/wait.py) as it starts and when it may end
TEMPLATES = "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/default/dockermachinetemplates"
LEASE = LEASES + "/capi-rollout-lock"
DATE = {"Date": "Sun, 01 Mar 2026 12:00:00 GMT"}  # objs.NOW: the API server's clock
REF = "machinedeployment/default/md-0"
START = 1000.0


class Clock(object):
    """Monotonic seconds, moved only by hung requests, watches and pauses."""

    def __init__(self):
        self.t = START

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        self.t += seconds


class WaitModule(ModuleStandIn):
    _name = "capi_rollout_wait"
    DEFAULTS = {"objects": [{"kind": "MachineDeployment", "namespace": "default", "name": "md-0"}], "wait_timeout": 20,
                "stall_timeout": 600, "soak_seconds": 0, "poll_interval": 10, "progress_interval": 60,
                "progress_verbosity": 0, "lease": None, "tracking": None, "time_left": None}


class LockModule(ModuleStandIn):
    _name = "capi_rollout_lock"
    DEFAULTS = {"name": "capi-rollout-lock", "namespace": "default", "holder": "me", "lease_duration_seconds": 60,
                "state": "acquired", "wait_timeout": 20, "poll_interval": 5, "force": False, "info": None}


@pytest.fixture
def clock():
    return Clock()


class WatchConnection(FakeConnection):
    """Watches are answered apart from the lists of the same path: method ``WATCH``."""

    def send(self, method, path, query=None, **kwargs):
        return super(WatchConnection, self).send("WATCH" if (query or {}).get("watch") == "true" else method, path,
                                                 query=query, **kwargs)


@pytest.fixture
def conn(monkeypatch, clock):
    fake = WatchConnection(clock=clock)
    monkeypatch.setattr(flow_run, "Connection", lambda params, module_name=None: fake)
    monkeypatch.setattr(flow_run, "Api",
                        lambda connection, dry_run=False: Api(connection, dry_run=dry_run, clock=clock, sleep=clock.sleep))
    return fake


def rolling():
    """md-0 rolling out: 1 of 3 replicas up to date."""
    md = objs.set_counts(objs.machine_deployment(), replicas=3, up_to_date=1, available=3)
    return objs.set_condition(md, "RollingOut", "True", "RollingOut", message="Rolling out 2 not up-to-date replicas")


class ClockDate(dict):
    """A Date header that moves with the fake monotonic clock, as a real API server's does while a wait goes on."""

    def __init__(self, clock):
        super().__init__(Date="")  # not empty: an empty dict of headers counts as none
        self.clock = clock

    def get(self, key, default=None):
        if key.lower() != "date":
            return default
        moment = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.timezone.utc) + \
            datetime.timedelta(seconds=int(self.clock.t - START))
        return format_datetime(moment, usegmt=True)


def answered(conn, *paths, headers=None):
    """The API server answers these GETs (with its Date: ``headers``, DATE by default) until told otherwise."""
    bodies = {"/apis": APIS, MDS: md_list(rolling()), MSS: {"metadata": {"resourceVersion": "900"}, "items": []},
              CLUSTERS + "/c1": objs.cluster(),
              TEMPLATES: {"metadata": {"resourceVersion": "900"}, "items": [{"metadata": {"name": "md-0-infra-v1"}}]}}
    for path in paths:
        conn.add("GET", path, body=bodies[path], headers=headers or DATE)


def run_flow(flow, module):
    with pytest.raises(Exit) as done:
        flow(module)
    return done.value


def plugin_calls(**params):
    """capi_rollout_wait called as its action plugin calls it: again while a call returns unfinished, with the
    ``tracking`` and ``time_left`` of the call before. Returns the last call's Exit."""
    while True:
        out = run_flow(wait.run_wait, WaitModule(**params))
        if out.failed or out.result["finished_call"]:
            return out
        params.update(tracking=out.result["tracking"], time_left=out.result["time_left"])


def assert_bounded(conn, ends):
    """Every request was sent with a total no larger than what was left before ``ends``, and ended by then."""
    assert conn.sent, "no request was sent"
    for sent in conn.sent:
        assert sent["total"] is not None, sent
        assert sent["at"] + sent["total"] <= ends + 1e-6, (sent, ends)
        assert max(sent["timeout"]) <= sent["total"] + 1e-6, sent


def test_an_api_server_hung_before_the_task_ends_it_at_wait_timeout_plus_the_grace(conn, clock):
    """Discovery: the connection is accepted, nothing answers. Retried (never reached: 5 tries), each try cut to
    the time left: the task ends at wait_timeout + grace, unreachable, naming the object waited for."""
    conn.add("GET", "/apis", hang=True)
    out = run_flow(wait.run_wait, WaitModule())
    ends = START + 20 + DEADLINE_GRACE_SECONDS
    assert out.failed and out.result["reason"] == "unreachable", out.result
    assert_bounded(conn, ends)
    assert clock.t <= ends
    assert REF in out.result["msg"] and "wait_timeout=20s" in out.result["msg"], out.result["msg"]
    assert "check that the API server answers" in out.result["msg"]
    assert out.result["failed_refs"] == [REF]


def test_without_a_deadline_a_hung_request_takes_its_own_timeouts(conn, clock):
    """Positive control of the bound above: a task that does not wait sends requests without a total, and a hung
    discovery takes the request's own timeouts (10 s connect + 60 s read) for each of its 5 tries."""
    conn.add("GET", "/apis", hang=True)
    out = run_flow(lambda module: change.run_change(module, restart), FakeModule(name="md-0", rollout_id="x"))
    assert out.failed and out.result["reason"] == "unreachable"
    assert all(sent["total"] is None for sent in conn.sent)
    assert clock.t - START >= 5 * 70


def test_the_lease_renewal_is_bounded(conn, clock):
    conn.add("GET", LEASE, hang=True)
    out = run_flow(wait.run_wait, WaitModule(lease={"name": "capi-rollout-lock", "namespace": "default", "holder": "me",
                                                    "lease_duration_seconds": 60}))
    assert out.failed and out.result["reason"] == "unreachable", out.result
    assert [sent["path"] for sent in conn.sent] == [LEASE] * len(conn.sent)
    assert_bounded(conn, START + 20 + DEADLINE_GRACE_SECONDS)
    assert REF in out.result["msg"]


def test_the_list_of_the_objects_is_bounded_and_after_an_answer_is_a_wait_timeout(conn, clock):
    """Discovery answered, the list hangs: it is given all the time left and no more; the wait's time ran out while
    the server did not answer: wait_timeout, naming the object."""
    answered(conn, "/apis")
    conn.add("GET", MDS, hang=True)
    out = run_flow(wait.run_wait, WaitModule())
    assert out.failed and out.result["reason"] == "wait_timeout", out.result
    assert_bounded(conn, START + 20 + DEADLINE_GRACE_SECONDS)
    (listed,) = [s for s in conn.sent if s["path"] == MDS]
    assert listed["total"] == pytest.approx(20 + DEADLINE_GRACE_SECONDS)
    assert out.result["msg"].startswith(REF + ": not seen complete before the end of the wait"), out.result["msg"]
    assert "raise wait_timeout" in out.result["msg"]


def test_a_watch_that_hangs_ends_the_wait_with_wait_timeout_at_the_wait_end_plus_the_grace(conn, clock):
    """Listed, then the watch hangs: every watch is cut to what is left of the wait (+ grace), the wait state
    decides wait_timeout, and the Machine list of the failure gets no time past the same end."""
    answered(conn, "/apis", MDS, MSS, TEMPLATES)
    conn.add("WATCH", MDS, hang=True)
    conn.add("GET", MACHINES, hang=True)
    out = plugin_calls()
    assert out.failed and out.result["reason"] == "wait_timeout", out.result
    assert_bounded(conn, START + 20 + DEADLINE_GRACE_SECONDS)
    watches = [s for s in conn.sent if s["method"] == "WATCH"]
    assert watches and all(s["total"] <= 20 + DEADLINE_GRACE_SECONDS for s in watches)
    assert REF in out.result["msg"] and "wait_timeout=20s" in out.result["msg"]


def test_the_failure_reads_after_the_wait_ended_are_bounded(conn, clock):
    """Watches that end as asked (no event) until the wait's time is up; then the Machine list of the failure hangs:
    it is given no more than the grace."""
    # the first call gathers progress for a few seconds (client.waiter): the server's Date moves on meanwhile
    answered(conn, "/apis", MDS, MSS, TEMPLATES, headers=ClockDate(clock))
    conn.add("WATCH", MDS, events=[], headers=ClockDate(clock))
    conn.add("GET", MACHINES, hang=True)
    out = plugin_calls()
    assert out.failed and out.result["reason"] == "wait_timeout", out.result
    (machines,) = [s for s in conn.sent if s["path"] == MACHINES]
    assert machines["total"] <= DEADLINE_GRACE_SECONDS + 1e-6
    assert_bounded(conn, START + 20 + DEADLINE_GRACE_SECONDS)
    assert "rollout not complete after 20s (wait_timeout=20s)" in out.result["msg"], out.result["msg"]


def test_a_later_call_is_bounded_by_the_time_left_it_is_handed(conn, clock):
    """The action plugin's later call: 3 s left. Its discovery hangs: cut at 3 s + grace; wait_timeout (the wait
    had answers before), naming the object and what was last seen of it."""
    state = {"refs": [REF], "started": 0.0, "last_change": 0.0, "phase": "rollout", "reason": None, "message": None,
             "signatures": {}, "lines": {REF: f"{REF}: 1 of 3 replicas up to date"}, "done_at": {}, "pending": [],
             "rollout_finished": None, "soak_until": None, "soak_finished": None, "ended": None, "failed_refs": []}
    conn.add("GET", "/apis", hang=True)
    out = run_flow(wait.run_wait, WaitModule(tracking=copy.deepcopy(state), time_left=3.0))
    assert out.failed and out.result["reason"] == "wait_timeout", out.result
    assert_bounded(conn, START + 3 + DEADLINE_GRACE_SECONDS)
    assert f"last seen: {REF}: 1 of 3 replicas up to date" in out.result["msg"], out.result["msg"]


def test_a_call_returns_the_time_its_wait_has_left(conn, clock):
    """Positive control: answered, a call that returns early (its progress_interval) hands on the time left."""
    answered(conn, "/apis", MDS, MSS, TEMPLATES)
    conn.add("WATCH", MDS, events=[], headers=DATE)
    out = run_flow(wait.run_wait, WaitModule(progress_interval=5, wait_timeout=60))
    assert not out.failed and out.result["finished_call"] is False, out.result
    assert 50 <= out.result["time_left"] <= 60, out.result["time_left"]


def test_a_lock_waited_for_is_bounded_by_wait_timeout_plus_the_grace(conn, clock):
    """Another holder has the lock: read every poll_interval; then the API server hangs. The task ends by
    wait_timeout + grace, unreachable, naming the Lease."""
    held = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "capi-rollout-lock", "namespace": "default", "resourceVersion": "5"},
            "spec": {"holderIdentity": "other", "leaseDurationSeconds": 600,
                     "renewTime": leases.format_micro(objs.NOW), "acquireTime": leases.format_micro(objs.NOW)}}
    conn.add("GET", LEASE, body=held, headers=DATE)
    conn.add("GET", LEASE, hang=True)
    out = run_flow(lock.run_lock, LockModule())
    assert out.failed and out.result["reason"] == "unreachable", out.result
    assert_bounded(conn, START + 20 + DEADLINE_GRACE_SECONDS)
    assert out.result["msg"].startswith("lease/default/capi-rollout-lock: cannot reach the API server"), out.result["msg"]


def test_a_lock_that_does_not_wait_keeps_the_requests_own_timeouts(conn, clock):
    """Positive control: wait_timeout 0 sets no deadline."""
    conn.add("GET", LEASE, status=404, body={"reason": "NotFound"}, headers=DATE)
    conn.add("POST", LEASES, status=201, body={"metadata": {"name": "capi-rollout-lock"}}, headers=DATE)
    out = run_flow(lock.run_lock, LockModule(wait_timeout=0))
    assert not out.failed, out.result
    assert all(sent["total"] is None for sent in conn.sent)


def test_a_restart_that_waits_is_bounded_from_its_first_request(conn, clock):
    """capi_rollout_restart with wait: the write is made, then the watch hangs: cut at wait_timeout + grace."""
    md = rolling()
    answered(conn, "/apis", MDS, CLUSTERS + "/c1", MSS)
    conn.add("WATCH", MDS, hang=True)
    conn.add("GET", MACHINES, hang=True)
    conn.add("PATCH", MDS + "/md-0", body=dict(md, metadata=dict(md["metadata"], resourceVersion="4712")), headers=DATE)
    out = run_flow(lambda module: change.run_change(module, restart),
                   FakeModule(name="md-0", rollout_id="x", wait=True, wait_timeout=20))
    assert out.failed and out.result["reason"] == "wait_timeout", out.result
    assert [s["method"] for s in conn.sent].count("PATCH") == 1
    assert_bounded(conn, START + 20 + DEADLINE_GRACE_SECONDS)
