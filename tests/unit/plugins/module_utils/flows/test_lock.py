# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.flows.lock import Lock, LockFailed
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import Api
from ansible_collections.capi.rollout.plugins.module_utils.core import lease as leases
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import DRY_RUN, WRITE, FakeConnection
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.flows.fakes import Clock

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
COLLECTION = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
PATH = COLLECTION + "/capi-rollout-lock"


def lease(holder, renewed=-5, duration=60, rv="5"):
    spec = {"leaseDurationSeconds": duration, "renewTime": leases.format_micro(NOW + datetime.timedelta(seconds=renewed)),
            "acquireTime": leases.format_micro(NOW - datetime.timedelta(seconds=100)), "leaseTransitions": 1}
    if holder:
        spec["holderIdentity"] = holder
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "capi-rollout-lock", "namespace": "default", "resourceVersion": rv}, "spec": spec}


def make_lock(conn, clock=None, dry_run=False):
    clock = clock or Clock()
    return Lock(Api(conn, sleep=lambda s: None, dry_run=dry_run), "capi-rollout-lock", "default", now=lambda: NOW,
                sleep=clock.sleep, clock=clock)


def methods(conn):
    return [(sent["method"], sent["path"]) for sent in conn.sent]


def test_create_when_there_is_no_lease():
    conn = FakeConnection()
    conn.add("GET", PATH, status=404, body={"reason": "NotFound"})
    conn.add("POST", COLLECTION, status=201, body=lease("me"))
    got = make_lock(conn).acquire("me", 60, info={"refresh_id": "hw-1"})
    assert got["acquired"] is True and got["action"] == "create" and got["held_by"] == "me" and got["changed"] is True
    # the create is tried as a dry run first (a missing namespace fails there, with nothing attempted)
    assert methods(conn) == [("GET", PATH), ("POST", COLLECTION), ("POST", COLLECTION)]
    assert [s["query"] for s in conn.sent[1:]] == [DRY_RUN, WRITE]
    assert conn.sent[2]["body"]["spec"]["holderIdentity"] == "me"


def test_a_missing_namespace_fails_in_the_dry_run():
    conn = FakeConnection()
    conn.add("GET", PATH, status=404, body={"reason": "NotFound"})
    conn.add("POST", COLLECTION, status=404, body={"reason": "NotFound", "message": 'namespaces "default" not found'})
    with pytest.raises(RolloutError) as err:
        make_lock(conn).acquire("me", 60)
    assert err.value.reason == "not_found" and "namespace default does not exist" in str(err.value)
    assert [s["query"] for s in conn.sent if s["method"] == "POST"] == [DRY_RUN]


def test_losing_the_create_race_shows_the_winner():
    conn = FakeConnection()
    conn.add("GET", PATH, status=404, body={"reason": "NotFound"})
    conn.add("GET", PATH, body=lease("winner"))
    conn.add("POST", COLLECTION, status=409, body={"reason": "AlreadyExists", "message": "leases \"capi-rollout-lock\" already exists"})
    with pytest.raises(LockFailed) as caught:
        make_lock(conn).acquire("me", 60)
    err = caught.value
    assert err.reason == "lock_held" and "held by winner" in err.msg
    assert err.result["held_by"] == "winner" and err.result["acquired"] is False
    assert methods(conn) == [("GET", PATH), ("POST", COLLECTION), ("GET", PATH)]


def test_losing_the_take_over_race_shows_the_winner():
    conn = FakeConnection()
    conn.add("GET", PATH, body=lease("dead", renewed=-120))
    conn.add("GET", PATH, body=lease("winner", rv="6"))
    conn.add("PUT", PATH, status=409, body={"reason": "Conflict", "message": "the object has been modified"})
    with pytest.raises(LockFailed) as caught:
        make_lock(conn).acquire("me", 60)
    assert caught.value.result["held_by"] == "winner"
    put = conn.sent[1]
    assert put["method"] == "PUT" and put["body"]["metadata"]["resourceVersion"] == "5"
    assert put["body"]["spec"]["holderIdentity"] == "me"


def test_waits_for_a_held_lease_then_takes_it():
    conn = FakeConnection()
    conn.add("GET", PATH, body=lease("other"))
    conn.add("GET", PATH, body=lease(None, rv="7"))
    conn.add("PUT", PATH, body=lease("me", rv="8"))
    clock = Clock()
    got = make_lock(conn, clock).acquire("me", 60, wait_timeout=30, poll_interval=4)
    assert got["acquired"] is True and got["action"] == "acquire" and got["waited_seconds"] == 4
    assert clock.sleeps == [4]
    assert conn.sent[-1]["body"]["metadata"]["resourceVersion"] == "7"


def test_gives_up_after_the_wait():
    conn = FakeConnection()
    conn.add("GET", PATH, body=lease("other"))
    clock = Clock()
    with pytest.raises(LockFailed) as caught:
        make_lock(conn, clock).acquire("me", 60, wait_timeout=10, poll_interval=4)
    assert clock.sleeps == [4, 4, 2]
    assert "waited 10s" in caught.value.msg and "stale 55s from now" in caught.value.hint
    assert all(sent["method"] == "GET" for sent in conn.sent)


def test_endless_conflicts_give_up():
    conn = FakeConnection()
    conn.add("GET", PATH, body=lease("me"))
    conn.add("PUT", PATH, status=409, body={"reason": "Conflict"})
    with pytest.raises(LockFailed) as caught:
        make_lock(conn).acquire("me", 60)
    assert caught.value.reason == "conflict"


def test_check_mode_writes_nothing():
    conn = FakeConnection()
    conn.add("GET", PATH, body=lease("other"))
    got = make_lock(conn).acquire("me", 60, check_mode=True)
    assert got["would_acquire"] is False and got["acquired"] is False and got["changed"] is False
    assert "held by other" in got["message"] and "could not take it now (check mode)" in got["message"]
    assert methods(conn) == [("GET", PATH)]


def test_check_mode_sends_the_take_and_the_release_as_dry_runs():
    conn = FakeConnection()
    conn.add("GET", PATH, status=404, body={"kind": "Status", "code": 404})
    conn.add("POST", COLLECTION, status=201, body=lease("me"))
    got = make_lock(conn, dry_run=True).acquire("me", 60, check_mode=True)
    assert got["would_acquire"] is True and got["acquired"] is False and got["changed"] is True
    assert [(s["method"], s["query"]) for s in conn.sent] == [("GET", {}), ("POST", DRY_RUN)]

    conn = FakeConnection()
    conn.add("GET", PATH, body=lease("me"))
    conn.add("PUT", PATH, body=lease(None))
    got = make_lock(conn, dry_run=True).release("me", check_mode=True)
    assert got["changed"] is True and got["held_by"] == "me"
    assert [(s["method"], s["query"]) for s in conn.sent] == [("GET", {}), ("PUT", DRY_RUN)]


def test_check_mode_refused_by_rbac_fails_like_the_real_run():
    conn = FakeConnection()
    conn.add("GET", PATH, status=404, body={"kind": "Status", "code": 404})
    conn.add("POST", COLLECTION, status=403, body={"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no"})
    with pytest.raises(RolloutError) as err:
        make_lock(conn, dry_run=True).acquire("me", 60, check_mode=True)
    assert err.value.reason == "forbidden" and "cannot create leases" in str(err.value)


def test_release_only_by_the_holder():
    conn = FakeConnection()
    conn.add("GET", PATH, body=lease("other"))
    got = make_lock(conn).release("me")
    assert got["action"] == "not_held" and got["changed"] is False and methods(conn) == [("GET", PATH)]

    conn = FakeConnection()
    conn.add("GET", PATH, body=lease("me"))
    conn.add("PUT", PATH, body=lease(None))
    got = make_lock(conn).release("me")
    assert got["action"] == "release" and got["held_by"] is None and got["changed"] is True
    assert "holderIdentity" not in conn.sent[1]["body"]["spec"]


def test_missing_namespace_is_named():
    conn = FakeConnection()
    conn.add("GET", PATH, status=404, body={"reason": "NotFound"})
    conn.add("POST", COLLECTION, status=404, body={"reason": "NotFound", "message": "namespaces \"default\" not found"})
    with pytest.raises(Exception) as caught:
        make_lock(conn).acquire("me", 60)
    assert "namespace default does not exist" in str(caught.value)
