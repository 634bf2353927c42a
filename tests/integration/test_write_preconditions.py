"""Writes guarded by JSON patch ``test`` operations (core.patch) on a real kube-apiserver: what the API server
answers to a failed test, null tests of absent fields, and a multi-object restart while someone else writes
one of the objects several times a second (no conflict, unlike a resourceVersion-guarded write)."""

import datetime
import threading
import time

import pytest
from capisim import audit
from capisim.kubeapi import ApiError, resource_path

from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches

pytestmark = pytest.mark.needs_controller

NS = "team-j"
NAMES = ["wj-md-0", "wj-md-1", "wj-md-2"]
# patched last of the three, so that the module's read and its patch of it lie two patches apart
BUSY = NAMES[-1]
HEARTBEAT = "example.com~1heartbeat"


def _answer(call):
    """(status, Status body) of a request: 200 and None when it was accepted."""
    try:
        call()
    except ApiError as err:
        return err.status, err.body
    return 200, None


def test_the_api_server_answers_a_failed_test_with_422_and_passes_null_for_absent(capi):
    """The semantics core.patch relies on, as kube-apiserver 1.20 (evanphx/json-patch) implements them."""
    api = capi.admin
    probe = resource_path("", "v1", "configmaps", "default", "jsonpatch-probe")
    api.create(resource_path("", "v1", "configmaps", "default"),
               {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "jsonpatch-probe"}, "data": {"a": "1"}})

    def send(test_path, value, change=None):
        change = change or {"op": "replace", "path": "/data/a", "value": "changed"}
        return _answer(lambda: api.patch_json(probe, [{"op": "test", "path": test_path, "value": value}, change]))

    seen = {
        # an absent map: a null test of it passes, and the add creates it
        "absent map": send("/metadata/annotations", None,
                           {"op": "add", "path": "/metadata/annotations", "value": {"example.com/x": "1"}}),
        # an absent member of a map that exists: passes too
        "absent member": send("/metadata/annotations/example.com~1y", None,
                              {"op": "add", "path": "/metadata/annotations/example.com~1y", "value": "2"}),
        # a member that has a value fails a null test and a test of another value
        "present, tested null": send("/metadata/annotations/example.com~1x", None),
        "present, tested other": send("/metadata/annotations/example.com~1x", "other"),
        # a parent that is gone (no labels): "missing path"
        "missing parent": send("/metadata/labels/example.com~1x", None),
        # positive control: a patch that is refused for another reason is no failed test
        "rename": _answer(lambda: api.patch_json(probe, [{"op": "replace", "path": "/metadata/name", "value": "x"}])),
    }
    stored = api.get(probe)
    api.delete(probe)
    assert [seen["absent map"][0], seen["absent member"][0]] == [200, 200], seen
    assert stored["metadata"]["annotations"] == {"example.com/x": "1", "example.com/y": "2"}
    assert stored["data"] == {"a": "1"}, seen  # nothing written by a patch whose test failed
    for case in ("present, tested null", "present, tested other"):
        status, body = seen[case]
        assert status == 422 and body["reason"] == "Invalid", seen
        assert body["message"] == "the server rejected our request due to an error in our request", seen
        # 1.20 drops the patch library's words ("testing value ... failed"): no causes, no object named
        assert not (body.get("details") or {}).get("causes") and not (body.get("details") or {}).get("name"), seen
        assert patches.is_test_failure(status, body), seen
    assert seen["missing parent"][0] == 422 and patches.is_test_failure(*seen["missing parent"]), seen
    assert seen["rename"][0] in (400, 422) and not patches.is_test_failure(*seen["rename"]), seen


class Heartbeat(threading.Thread):
    """Admin writes an annotation of one MachineDeployment ``per_second`` times a second (each write changes
    its resourceVersion, as the status writes of a busy object's controller do)."""

    def __init__(self, capi, name, per_second=8):
        super().__init__(daemon=True)
        self.api = capi.mgmt.api("admin")
        self.path = capi.path("MachineDeployment", NS, name)
        self.pause = 1.0 / per_second
        self.stop = threading.Event()
        self.writes = 0
        self.errors = []

    def run(self):
        while not self.stop.is_set():
            try:
                self.api.patch_json(self.path, [{"op": "add", "path": f"/metadata/annotations/{HEARTBEAT}",
                                                 "value": str(self.writes)}])
                self.writes += 1
            except ApiError as err:  # pragma: no cover - reported by the test
                self.errors.append(str(err))
            self.stop.wait(self.pause)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.join(10)


def _codes(events):
    return [e.get("responseStatus", {}).get("code") for e in events]


def _at(event, stage):
    return datetime.datetime.fromisoformat(event[stage].replace("Z", "+00:00"))


def _written_between_read_and_patch(events, name):
    """The heartbeat's writes (admin) of MachineDeployment ``name`` that the API server received after it had answered the
    module's last read of it (the LIST of the selection, or a GET of a retry) and answered before it received the
    module's patch of it: each changed the object between the module's read and its patch (the audit log's own
    timestamps, compared for order only)."""
    module = [e for e in events if e.get("user", {}).get("username") == "rollout-operator"
              and (e.get("objectRef") or {}).get("resource") == "machinedeployments" and not audit.is_dry_run(e)]
    patch = next(e for e in module if e["verb"] == "patch" and e["objectRef"].get("name") == name)
    read = [e for e in module if (e["verb"] == "list" or e["verb"] == "get" and e["objectRef"].get("name") == name)
            and _at(e, "stageTimestamp") <= _at(patch, "requestReceivedTimestamp")][-1]
    return [e for e in events if e.get("user", {}).get("username") == "admin" and e["verb"] == "patch"
            and (e.get("objectRef") or {}).get("name") == name
            and _at(read, "stageTimestamp") <= _at(e, "requestReceivedTimestamp")
            and _at(e, "stageTimestamp") <= _at(patch, "requestReceivedTimestamp")]


def test_restart_of_several_objects_while_one_is_written_several_times_a_second(capi):
    mark = capi.mark()
    # a write every ~20 ms plus its round trip: several land between the module's read of the object and its patch
    with Heartbeat(capi, BUSY, per_second=50) as beat:
        res = capi.run("capi_rollout_restart", namespace=NS, names=NAMES, rollout_id="busy-1")
    assert not res.failed, res.get("msg")
    assert not beat.errors, beat.errors
    assert [e["action"] for e in res["objects"]] == ["restarted"] * 3
    events = capi.mgmt.audit_log(since=mark).events
    patches_sent = [e for e in events if e.get("user", {}).get("username") == "rollout-operator" and e["verb"] == "patch"]
    # one patch per object, none refused: no 409, no failed test
    assert _codes(patches_sent) == [200, 200, 200], _codes(patches_sent)
    assert [e["objectRef"]["name"] for e in patches_sent][-1] == BUSY
    # exact: the object the module patched had been written by someone else after the module read it
    assert _written_between_read_and_patch(events, BUSY), [
        (e.get("user", {}).get("username"), e["verb"], (e.get("objectRef") or {}).get("name"), e["requestReceivedTimestamp"],
         e["stageTimestamp"]) for e in events if (e.get("objectRef") or {}).get("resource") == "machinedeployments"]
    # control: nobody else wrote the objects without a heartbeat between the module's read and its patch
    assert not _written_between_read_and_patch(events, NAMES[0])
    busy = capi.admin.get(capi.path("MachineDeployment", NS, BUSY))
    assert busy["metadata"]["annotations"]["rollout.capi-rollout.dev/last"].startswith('{"action":"restarted"')

    # positive control: under the same writer, a write guarded by the resourceVersion read a moment earlier (what
    # the modules sent before) conflicts
    operator = capi.mgmt.api("rollout-operator")
    path = capi.path("MachineDeployment", NS, BUSY)
    conflicts = 0
    with Heartbeat(capi, BUSY):
        for _try in range(10):
            read = operator.get(path)
            time.sleep(0.3)
            try:
                operator.patch_merge(path, {"metadata": {"resourceVersion": read["metadata"]["resourceVersion"],
                                                         "annotations": {"example.com/control": str(_try)}}})
            except ApiError as err:
                assert err.status == 409, err
                conflicts += 1
    assert conflicts >= 5, conflicts
