# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import lease as leases

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def at(seconds):
    return NOW + datetime.timedelta(seconds=seconds)


def a_lease(holder="awx-job-1", renewed=-10, duration=60, acquired=-100, transitions=2, info=None, rv="42"):
    spec = {"leaseDurationSeconds": duration, "leaseTransitions": transitions}
    if holder is not None:
        spec["holderIdentity"] = holder
    if renewed is not None:
        spec["renewTime"] = leases.format_micro(at(renewed))
    if acquired is not None:
        spec["acquireTime"] = leases.format_micro(at(acquired))
    meta = {"name": "capi-rollout-lock", "namespace": "default", "resourceVersion": rv,
            "managedFields": [{"manager": "x"}], "creationTimestamp": "2026-03-01T10:00:00Z"}
    if info is not None:
        meta["annotations"] = {keys.LOCK_INFO_ANNOTATION: json.dumps(info)}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}


def test_format_micro_is_what_the_api_server_accepts():
    assert leases.format_micro(NOW) == "2026-03-01T12:00:00.000000Z"
    assert leases.format_micro("2026-03-01T13:00:00.5+01:00") == "2026-03-01T12:00:00.500000Z"


@pytest.mark.parametrize("duration", [0, -1, "x", None, True, 1.5e-3])
def test_validate_duration_rejects(duration):
    with pytest.raises(ValueError):
        leases.validate_duration(duration)


def test_view_of_missing_lease():
    got = leases.view(None, NOW)
    assert got["exists"] is False and got["held"] is False and got["holder"] is None


def test_view_of_held_lease():
    got = leases.view(a_lease(info={"refresh_id": "hw-1"}), NOW)
    assert got["held"] is True and got["stale"] is False
    assert got["holder"] == "awx-job-1"
    assert got["expires"] == "2026-03-01T12:00:50Z" and got["seconds_left"] == 50
    assert got["renew_time"] == "2026-03-01T11:59:50Z"
    assert got["info"] == {"refresh_id": "hw-1"}
    assert got["resource_version"] == "42"


def test_view_of_stale_lease():
    got = leases.view(a_lease(renewed=-61, duration=60), NOW)
    assert got["held"] is False and got["stale"] is True and got["seconds_left"] == -1


def test_lease_expiring_exactly_now_is_still_held():
    assert leases.view(a_lease(renewed=-60, duration=60), NOW)["held"] is True


def test_holder_without_times_is_stale():
    got = leases.view(a_lease(renewed=None, acquired=None), NOW)
    assert got["stale"] is True


def test_renew_time_falls_back_to_acquire_time():
    got = leases.view(a_lease(renewed=None, acquired=-30, duration=60), NOW)
    assert got["held"] is True and got["seconds_left"] == 30


def test_released_lease_is_free():
    got = leases.view(a_lease(holder=None), NOW)
    assert got["holder"] is None and got["held"] is False and got["stale"] is False


def test_unreadable_info_is_ignored():
    lease = a_lease()
    lease["metadata"]["annotations"] = {keys.LOCK_INFO_ANNOTATION: "{not json"}
    assert leases.view(lease, NOW)["info"] == {}
    lease["metadata"]["annotations"] = {keys.LOCK_INFO_ANNOTATION: "[1, 2]"}
    assert leases.view(lease, NOW)["info"] == {}


def test_acquire_creates_missing_lease():
    plan = leases.plan_acquire(None, "me", NOW, 120, name="lock", namespace="ops", info={"refresh_id": "hw-1"})
    assert plan["action"] == leases.CREATE
    body = plan["body"]
    assert body["metadata"]["name"] == "lock" and body["metadata"]["namespace"] == "ops"
    assert "resourceVersion" not in body["metadata"]
    assert body["spec"] == {"holderIdentity": "me", "leaseDurationSeconds": 120,
                            "acquireTime": "2026-03-01T12:00:00.000000Z", "renewTime": "2026-03-01T12:00:00.000000Z",
                            "leaseTransitions": 0}
    assert json.loads(body["metadata"]["annotations"][keys.LOCK_INFO_ANNOTATION]) == {"holder": "me", "refresh_id": "hw-1"}


def test_acquire_renews_own_lease_and_keeps_resource_version():
    lease = a_lease(holder="me", renewed=-50, duration=60)
    plan = leases.plan_acquire(lease, "me", NOW, 90)
    assert plan["action"] == leases.RENEW
    spec = plan["body"]["spec"]
    assert spec["renewTime"] == "2026-03-01T12:00:00.000000Z"
    assert spec["acquireTime"] == lease["spec"]["acquireTime"]
    assert spec["leaseDurationSeconds"] == 90 and spec["leaseTransitions"] == 2
    assert plan["body"]["metadata"]["resourceVersion"] == "42"
    assert "managedFields" not in plan["body"]["metadata"]
    assert "creationTimestamp" not in plan["body"]["metadata"]


def test_own_stale_lease_is_renewed_not_taken_over():
    plan = leases.plan_acquire(a_lease(holder="me", renewed=-500), "me", NOW, 60)
    assert plan["action"] == leases.RENEW


def test_acquire_refuses_a_valid_lease_of_another_holder():
    lease = a_lease(info={"refresh_id": "hw-7", "run_by": "awx-job-1"})
    plan = leases.plan_acquire(lease, "me", NOW, 60)
    assert plan["action"] == leases.HELD and plan["body"] is None
    assert plan["previous_holder"] == "awx-job-1"
    assert "held by awx-job-1" in plan["message"]
    assert "refresh_id hw-7" in plan["message"] and "expires in 50s" in plan["message"]


def test_acquire_takes_over_a_stale_lease():
    lease = a_lease(renewed=-61, duration=60)
    before = copy.deepcopy(lease)
    plan = leases.plan_acquire(lease, "me", NOW, 60)
    assert lease == before  # never mutates the input
    assert plan["action"] == leases.TAKE_OVER and plan["previous_holder"] == "awx-job-1"
    spec = plan["body"]["spec"]
    assert spec["holderIdentity"] == "me" and spec["leaseTransitions"] == 3
    assert spec["acquireTime"] == spec["renewTime"] == "2026-03-01T12:00:00.000000Z"
    assert plan["body"]["metadata"]["resourceVersion"] == "42"
    assert plan["message"] == ("lease default/capi-rollout-lock taken over by me from awx-job-1 "
                               "(its lease expired 1s ago)")


def test_force_takes_over_a_valid_lease():
    plan = leases.plan_acquire(a_lease(), "me", NOW, 60, force=True)
    assert plan["action"] == leases.TAKE_OVER and "forced; it was valid for another 50s" in plan["message"]


def test_acquire_a_released_lease():
    plan = leases.plan_acquire(a_lease(holder=None, transitions=4), "me", NOW, 60)
    assert plan["action"] == leases.ACQUIRE
    assert plan["body"]["spec"]["leaseTransitions"] == 4
    assert plan["body"]["spec"]["holderIdentity"] == "me"


def test_acquire_needs_a_holder():
    with pytest.raises(ValueError):
        leases.plan_acquire(None, "", NOW, 60)


def test_info_annotation_is_compact_and_bounded():
    plan = leases.plan_acquire(None, "me", NOW, 60, info={"reason": "x" * 500, "n": 3, "skip": None, "d": {"a": 1}})
    info = json.loads(plan["body"]["metadata"]["annotations"][keys.LOCK_INFO_ANNOTATION])
    assert len(info["reason"]) == 200 and info["n"] == 3 and "skip" not in info and info["d"] == '{"a":1}'


def test_release_own_lease():
    lease = a_lease(holder="me", info={"refresh_id": "hw-1", "holder": "me"})
    plan = leases.plan_release(lease, "me", NOW)
    assert plan["action"] == leases.RELEASE
    spec = plan["body"]["spec"]
    assert "holderIdentity" not in spec
    assert spec["renewTime"] == "2026-03-01T12:00:00.000000Z"
    assert spec["leaseDurationSeconds"] == 60
    assert plan["body"]["metadata"]["resourceVersion"] == "42"
    info = json.loads(plan["body"]["metadata"]["annotations"][keys.LOCK_INFO_ANNOTATION])
    assert info == {"refresh_id": "hw-1", "released_by": "me"}
    assert leases.view(plan["body"], NOW)["holder"] is None


def test_release_leaves_other_holders_alone():
    plan = leases.plan_release(a_lease(), "me", NOW)
    assert plan["action"] == leases.NOT_HELD and plan["body"] is None
    assert "held by awx-job-1, not by me" in plan["message"]
    assert leases.plan_release(a_lease(holder=None), "me", NOW)["action"] == leases.NOT_HELD
    assert leases.plan_release(None, "me", NOW)["action"] == leases.ABSENT


def test_describe():
    assert leases.describe(leases.view(None, NOW), "l", "ns") == "lease ns/l does not exist (the lock is free)"
    assert leases.describe(leases.view(a_lease(holder=None), NOW), "l", "ns") == "lease ns/l is free (released)"
    text = leases.describe(leases.view(a_lease(renewed=-70), NOW), "l", "ns")
    assert text.startswith("lease ns/l is held by awx-job-1 (stale)") and "expired 10s ago" in text


def test_seconds_left_rounds_down():
    lease = a_lease(renewed=-60, duration=60)
    got = leases.view(lease, NOW + datetime.timedelta(milliseconds=500))
    assert got["seconds_left"] == -1 and got["stale"] is True


def test_renewal_keeps_the_holder_facts():
    lease = a_lease(holder="me", info={"holder": "me", "refresh_id": "hw-1"})
    plan = leases.plan_acquire(lease, "me", NOW, 60)
    info = json.loads(plan["body"]["metadata"]["annotations"][keys.LOCK_INFO_ANNOTATION])
    assert info == {"holder": "me", "refresh_id": "hw-1"}
    plan = leases.plan_acquire(lease, "me", NOW, 60, info={"wave": "canary"})
    info = json.loads(plan["body"]["metadata"]["annotations"][keys.LOCK_INFO_ANNOTATION])
    assert info == {"holder": "me", "refresh_id": "hw-1", "wave": "canary"}
