# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client import requests
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, OutOfTime, TransportError
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import (
    DEADLINE_GRACE_SECONDS, Api, resource_path, with_conflict_retry,
)
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import DRY_RUN, WRITE, FakeConnection

PATH = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments/md-0"


def make_api(conn):
    sleeps = []
    return Api(conn, sleep=sleeps.append), sleeps


def test_resource_path_core_and_group():
    assert resource_path("", "v1", "configmaps", "ns", "a b") == "/api/v1/namespaces/ns/configmaps/a%20b"
    assert resource_path("cluster.x-k8s.io", "v1beta2", "machinedeployments") == "/apis/cluster.x-k8s.io/v1beta2/machinedeployments"


def test_get_retries_5xx_and_429_with_retry_after():
    conn = FakeConnection()
    conn.add("GET", PATH, status=503, body={"message": "busy"})
    conn.add("GET", PATH, status=429, body={"message": "slow down"}, headers={"Retry-After": "2"})
    conn.add("GET", PATH, body={"metadata": {"name": "md-0"}})
    api, sleeps = make_api(conn)
    assert api.get(PATH)["metadata"]["name"] == "md-0"
    assert api.count == 3
    assert sleeps[1] == 2.0
    assert [entry[2] for entry in api.log] == [503, 429, 200]


def test_get_retries_connection_errors_then_gives_up():
    conn = FakeConnection()
    conn.add("GET", PATH, error="connection refused")
    api, sleeps = make_api(conn)
    with pytest.raises(TransportError):
        api.get(PATH)
    assert api.count == 5 and len(sleeps) == 4
    assert sleeps == sorted(sleeps) or max(sleeps) <= 8.0


class Clock(object):
    """Monotonic seconds that advance only when the Api sleeps."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        self.t += seconds


def test_an_api_server_that_answered_is_waited_for_during_an_outage(monkeypatch):
    # the pauses' jitter at its middle: 12 jittered pauses sum to 36-72 s, more than 60 s in about 3 % of random runs
    monkeypatch.setattr(requests.random, "random", lambda: 0.5)
    conn = FakeConnection()
    conn.add("GET", PATH, body={"metadata": {"name": "md-0"}})
    for _refusal in range(12):
        conn.add("GET", PATH, error="connection refused")
    conn.add("GET", PATH, body={"metadata": {"name": "md-0"}})
    clock = Clock()
    api = Api(conn, sleep=clock.sleep, clock=clock, outage_seconds=60)
    api.get(PATH)
    assert api.get(PATH)["metadata"]["name"] == "md-0"  # 12 refusals (more than 5 attempts), within 60 s
    assert api.count == 14 and clock.t < 60


def test_an_outage_longer_than_outage_seconds_fails():
    conn = FakeConnection()
    conn.add("GET", PATH, body={})
    conn.add("GET", PATH, error="connection refused")
    clock = Clock()
    api = Api(conn, sleep=clock.sleep, clock=clock, outage_seconds=20)
    api.get(PATH)
    with pytest.raises(TransportError):
        api.get(PATH)
    assert 12 <= clock.t <= 20 and api.count > 5


def test_an_api_server_never_reached_fails_after_the_attempts():
    conn = FakeConnection()
    conn.add("GET", PATH, error="connection refused")
    clock = Clock()
    api = Api(conn, sleep=clock.sleep, clock=clock, outage_seconds=600)
    with pytest.raises(TransportError):
        api.get(PATH)
    assert api.count == 5 and clock.t < 10


def test_the_deadline_cuts_timeouts_and_retries():
    conn = FakeConnection()
    conn.add("GET", PATH, body={})
    conn.add("GET", PATH, error="read timed out")
    clock = Clock()
    api = Api(conn, sleep=clock.sleep, clock=clock, outage_seconds=600)
    api.get(PATH)
    api.deadline = 7.0
    with pytest.raises(TransportError):
        api.get(PATH)
    assert clock.t < 7.0
    assert all(sent["timeout"][1] <= 7.0 for sent in conn.sent[1:])
    clock.t = 7.0
    with pytest.raises(OutOfTime) as err:
        api.get(PATH)
    assert "no answer before the end of the task" in str(err.value)


def test_a_read_cut_to_the_deadline_that_runs_out_says_so():
    """The read timeout was cut to the time left and used it up (a hung API server): the error is the
    deadline's, not the socket's "Read timed out"."""
    conn = FakeConnection()
    conn.add("GET", PATH, body={})
    conn.add("GET", PATH, error="Read timed out. (read timeout=16.99)")
    clock = Clock()
    api = Api(conn, sleep=clock.sleep, clock=clock, outage_seconds=600)
    api.get(PATH)
    api.deadline = 7.0
    send = conn.send

    def hung(*args, **kwargs):
        clock.t = api.deadline  # the hung read takes all the time left
        return send(*args, **kwargs)

    conn.send = hung
    with pytest.raises(OutOfTime) as err:
        api.get(PATH)
    assert "no answer before the end of the task" in str(err.value)
    # positive control: a read that failed with time left keeps its own cause
    conn.send = send
    api.deadline = 100.0
    conn.add("GET", PATH, error="Read timed out. (read timeout=16.99)")
    with pytest.raises(TransportError) as err:
        api.get(PATH)
    assert "Read timed out" in str(err.value)


def test_the_task_deadline_sends_every_request_with_a_total_no_larger_than_what_is_left():
    clock = Clock()
    conn = FakeConnection(clock=clock)
    conn.add("GET", PATH, body={})
    api = Api(conn, sleep=clock.sleep, clock=clock)
    api.get(PATH)
    assert conn.sent[0]["total"] is None and conn.sent[0]["timeout"] is None  # positive control: no deadline
    api.end_by(20, "wait_timeout=20s")
    clock.t = 4.0
    api.get(PATH)
    # what is left: 20 s + the grace - the 4 s gone; connect and read are cut to it too
    assert conn.sent[1]["total"] == 20 + DEADLINE_GRACE_SECONDS - 4.0
    assert conn.sent[1]["timeout"] == (10.0, 20 + DEADLINE_GRACE_SECONDS - 4.0)


def test_a_hung_api_server_is_retried_only_within_the_deadline():
    """Answered once, then hung: each try takes all it is given, so the task ends at the deadline, saying why."""
    clock = Clock()
    conn = FakeConnection(clock=clock)
    conn.add("GET", PATH, body={})
    conn.add("GET", PATH, hang=True)
    api = Api(conn, sleep=clock.sleep, clock=clock, outage_seconds=600)
    api.get(PATH)
    api.end_by(20, "wait_timeout=20s")
    with pytest.raises(OutOfTime) as err:
        api.get(PATH)
    assert clock.t <= 20 + DEADLINE_GRACE_SECONDS
    assert all(sent["at"] + sent["total"] <= 20 + DEADLINE_GRACE_SECONDS for sent in conn.sent[1:])
    assert "no answer before the end of the task (wait_timeout=20s, + 5s for the last requests)" in str(err.value)


def test_a_write_that_could_not_connect_is_sent_again_one_that_was_sent_is_not():
    conn = FakeConnection()
    conn.add("GET", PATH, body={})
    conn.add("PATCH", PATH, error="connection refused", sent=False)
    conn.add("PATCH", PATH, body={"ok": True})
    clock = Clock()
    api = Api(conn, sleep=clock.sleep, clock=clock)
    api.get(PATH)
    assert api.patch_merge(PATH, {}) == {"ok": True}
    assert [s["method"] for s in conn.sent] == ["GET", "PATCH", "PATCH"]


def test_every_write_names_the_one_field_manager_reads_do_not():
    conn = FakeConnection()
    for method in ("GET", "POST", "PUT", "PATCH"):
        conn.add(method, PATH, body={})
    api, _sleeps = make_api(conn)
    api.get(PATH)
    api.request("POST", PATH, body={}, verb="create")
    api.request("PUT", PATH, body={}, verb="update", dry_run=True)
    api.patch_json(PATH, [])
    api.dry_run = True
    api.patch_merge(PATH, {})
    assert [(s["method"], s["query"]) for s in conn.sent] == [
        ("GET", {}), ("POST", WRITE), ("PUT", DRY_RUN), ("PATCH", WRITE), ("PATCH", DRY_RUN)]
    assert WRITE == {"fieldManager": "capi-rollout"}  # no force: ownership is never taken


def test_patch_is_never_retried():
    conn = FakeConnection()
    conn.add("PATCH", PATH, status=503, body={"message": "busy"})
    api, sleeps = make_api(conn)
    with pytest.raises(ApiError) as err:
        api.patch_merge(PATH, {"spec": {"paused": True}})
    assert err.value.status == 503 and api.count == 1 and not sleeps
    assert conn.sent[0]["content_type"] == "application/merge-patch+json"


def test_patch_transport_error_not_retried():
    conn = FakeConnection()
    conn.add("PATCH", PATH, error="connection reset")
    api, _sleeps = make_api(conn)
    with pytest.raises(TransportError):
        api.patch_merge(PATH, {})
    assert api.count == 1


def test_api_error_fields():
    conn = FakeConnection()
    conn.add("GET", PATH, status=404, body={"kind": "Status", "reason": "NotFound", "message": 'machinedeployments "md-0" not found'})
    api, _sleeps = make_api(conn)
    with pytest.raises(ApiError) as err:
        api.get(PATH)
    assert err.value.status == 404 and err.value.reason == "NotFound" and "not found" in err.value.message


def test_watch_parses_split_lines_and_ends():
    conn = FakeConnection()
    events = [{"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "5"}}},
              {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "6"}}},
              {"type": "MODIFIED", "object": {"metadata": {"name": "a", "resourceVersion": "7"}}}]
    conn.add("GET", "/c", events=events)
    api, _sleeps = make_api(conn)
    got = list(api.watch("/c", "4", 30, label_selector="x=y"))
    assert [(t, o["metadata"]["resourceVersion"]) for t, o in got] == [("ADDED", "5"), ("BOOKMARK", "6"), ("MODIFIED", "7")]
    query = conn.sent[0]["query"]
    assert query["watch"] == "true" and query["resourceVersion"] == "4" and query["timeoutSeconds"] == "30"
    assert query["labelSelector"] == "x=y" and query["allowWatchBookmarks"] == "true"
    assert api.count == 1


def test_watch_error_event_410_raises():
    conn = FakeConnection()
    gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
    conn.add("GET", "/c", events=[{"type": "ERROR", "object": gone}])
    api, _sleeps = make_api(conn)
    with pytest.raises(ApiError) as err:
        list(api.watch("/c", "1", 10))
    assert err.value.status == 410


def test_watch_closed_early_closes_connection():
    conn = FakeConnection()
    conn.add("GET", "/c", events=[{"type": "ADDED", "object": {"metadata": {"name": "a"}}},
                                  {"type": "ADDED", "object": {"metadata": {"name": "b"}}}])
    api, _sleeps = make_api(conn)
    stream = api.watch("/c", "1", 10)
    next(stream)
    stream.close()
    assert conn.streams[0].closed and conn.streams[0].released


def test_watch_read_to_end_releases_without_closing():
    conn = FakeConnection()
    conn.add("GET", "/c", events=[{"type": "ADDED", "object": {"metadata": {"name": "a"}}}])
    api, _sleeps = make_api(conn)
    assert len(list(api.watch("/c", "1", 10))) == 1
    assert conn.streams[0].released and not conn.streams[0].closed


def test_conflict_retry_replans_then_succeeds():
    calls = []

    def attempt(fresh):
        calls.append(fresh)
        if len(calls) < 3:
            raise ApiError(409, {"reason": "Conflict", "message": "the object has been modified"})
        return "ok"

    assert with_conflict_retry(attempt, attempts=3) == "ok"
    assert calls == [False, True, True]


def test_conflict_retry_is_bounded_and_other_errors_pass():
    def conflict(_fresh):
        raise ApiError(409, {"message": "modified"})

    with pytest.raises(ApiError):
        with_conflict_retry(conflict, attempts=2)

    def forbidden(_fresh):
        raise ApiError(403, {"message": "no"})

    with pytest.raises(ApiError) as err:
        with_conflict_retry(forbidden)
    assert err.value.status == 403
