# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""flows/wait.py read_groups: an object missing from the first list is not found; missing on a later call of the
same wait (the action plugin calls the module again and again) it is gone, and the wait fails it as deleted."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client import reading
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.flows import wait as waits
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

KEPT = {"metadata": {"name": "md-0", "namespace": "default", "resourceVersion": "7"}}


class Selected(object):
    kind, version, namespace, path, list_resource_version = "MachineDeployment", "v1beta2", "default", "/mds", "7"

    def __init__(self, names):
        self.objects = [KEPT]
        self.sel = {"label_selector": None, "names": names}


class Run(object):
    api = discovery = None


@pytest.fixture
def lists(monkeypatch):
    asked = []

    def select(api, discovery, params, require_match=False):
        asked.append(params.get("names"))
        if params.get("names") and "md-1" in params["names"]:
            raise RolloutError("MachineDeployment md-1 not found in namespace default", reason="not_found")
        return Selected(params.get("names"))

    monkeypatch.setattr(reading, "select", select)
    return asked


def test_a_name_missing_from_the_first_list_is_not_found(lists):
    objects = waits._objects({"objects": [{"name": "md-0"}, {"name": "md-1"}]})
    with pytest.raises(RolloutError) as err:
        waits.read_groups(Run(), objects)
    assert err.value.reason == "not_found" and lists == [["md-0", "md-1"]]


def test_a_name_missing_on_a_later_call_is_gone_and_the_wait_fails_it_as_deleted(lists):
    objects = waits._objects({"objects": [{"name": "md-0"}, {"name": "md-1"}]})
    (group,) = waits.read_groups(Run(), objects, known=True)
    assert lists == [["md-0", "md-1"], None]  # the namespace listed again, without the names
    assert group.names == ["md-0", "md-1"] and list(group.objects) == ["md-0"]
    state = ws.new_state([group.ref(name) for name in group.names], 0)
    ws.observe(state, 1, {group.ref("md-0"): {"done": False, "message": "rolling", "signature": "s"}}, 100, 50)
    assert state["reason"] == ws.DELETED and state["failed_refs"] == [group.ref("md-1")]


def test_a_switched_at_that_is_no_time_fails_before_any_request():
    with pytest.raises(RolloutError) as err:
        waits._objects({"objects": [{"name": "md-0", "switched_at": "yesterday"}]})
    assert err.value.reason == "invalid_switched_at" and err.value.ref == "machinedeployment/default/md-0"
    assert "objects[0].switched_at" in err.value.message and "'yesterday'" in err.value.message


def test_machines_are_counted_once_per_namespace_for_the_objects_given_a_switch_time(monkeypatch):
    def machine(name, md, created):
        return {"metadata": {"name": name, "creationTimestamp": created,
                             "labels": {"cluster.x-k8s.io/deployment-name": md}}}

    listed = []

    def list_kind(api, discovery, kind, namespace):
        listed.append((kind, namespace))
        return [machine("a", "md-0", "2026-03-01T11:00:00Z"), machine("b", "md-0", "2026-03-01T12:00:05Z"),
                machine("c", "md-1", "2026-03-01T11:00:00Z")], "v1beta2"

    monkeypatch.setattr(reading, "list_kind", list_kind)
    params = {"objects": [{"name": "md-0", "switched_at": "2026-03-01T12:00:00Z"}, {"name": "md-1", "switched_at": "2026-03-01T12:00:00Z"},
                          {"name": "md-2"}]}
    resources = [{"kind": "MachineDeployment", "namespace": "default", "name": name} for name in ("md-0", "md-1", "md-2")]
    waits._count_machine_changes(Run(), params, resources)
    assert [entry.get("machines") for entry in resources] == [
        {"replaced": 1, "updated_in_place": 1}, {"replaced": 0, "updated_in_place": 1}, None]
    assert listed == [("Machine", "default")]


def test_topology_holds_by_ref_and_a_template_name_besides_is_refused_naming_the_object():
    hold = {"overrides": {"workerImage": "img:2"}, "template": {"customImage": "img:2"}}
    params = {"objects": [{"name": "md-0", "topology": hold, "infrastructure_ref": None},
                          {"name": "md-1", "infrastructure_ref": {"name": "t"}, "topology": None}]}
    assert waits._holds(params) == {"machinedeployment/default/md-0": hold}
    params["objects"][1]["topology"] = hold
    with pytest.raises(RolloutError) as err:
        waits._holds(params)
    assert err.value.reason == "invalid_input" and err.value.ref == "machinedeployment/default/md-1"
    assert "both infrastructure_ref t and topology" in err.value.msg


# restore_drain_timeout: the node drain timeout put back when the wait ends

def _with_record(before, now_value=900, rv="7"):
    return {"kind": "MachineDeployment", "apiVersion": "cluster.x-k8s.io/v1beta2",
            "metadata": {"name": "md-0", "namespace": "default", "resourceVersion": rv,
                         "annotations": {"rollout.capi-rollout.dev/drain-timeout": json.dumps({"id": "hw-1", "before": before})}},
            "spec": {"template": {"spec": {"deletion": {"nodeDrainTimeoutSeconds": now_value}}}}}


class RestoreApi(object):
    """A PATCH applied to the object it is sent for (the first one fails its test when ``conflict``); GET answers the
    object as another writer left it."""
    host = "https://fake"

    def __init__(self, fresh, conflict=False):
        self.fresh = fresh
        self.conflict = conflict
        self.patches = []

    def patch_json(self, path, operations):
        self.patches.append((path, operations))
        if self.conflict:
            self.conflict = False
            raise ApiError(422, {"message": "the server rejected our request: testing value /spec failed"})
        return objs.apply_json_patch(self.fresh, operations)

    def get(self, path):
        return self.fresh


@pytest.mark.parametrize("conflict", [False, True])
def test_the_drain_timeout_recorded_is_put_back_and_read_back(monkeypatch, conflict):
    listed = _with_record(None)
    # another writer changed the object meanwhile: the restore is planned again from it
    api = RestoreApi(_with_record(None, rv="8") if conflict else listed, conflict=conflict)

    class Listed(Selected):
        def __init__(self, names):
            super().__init__(names)
            self.objects = [listed]

        def object_path(self, name):
            return f"/mds/{name}"

    monkeypatch.setattr(reading, "select", lambda api, discovery, params, require_match=False: Listed(params["names"]))
    run = Run()
    run.api, run.progress = api, []
    restored = waits.restore_drain_timeouts(run, waits._objects({"objects": [{"name": "md-0"}, {"kind": "kcp", "name": "cp"}]}))
    assert restored == [{"ref": "machinedeployment/default/md-0", "drain_timeout": None}]
    assert len(api.patches) == (2 if conflict else 1) and api.patches[-1][0] == "/mds/md-0"
    after = objs.apply_json_patch(api.fresh, api.patches[-1][1])
    assert "rollout.capi-rollout.dev/drain-timeout" not in after["metadata"]["annotations"]
    assert run.progress == ["machinedeployment/default/md-0: node drain timeout put back to unset"]


def test_nothing_is_written_without_a_record(monkeypatch):
    plain = {"kind": "MachineDeployment", "metadata": {"name": "md-0", "namespace": "default"}}
    monkeypatch.setattr(reading, "select", lambda api, discovery, params, require_match=False: type(
        "S", (Selected,), {"objects": [plain]})(params["names"]))
    run = Run()
    run.api, run.progress = RestoreApi(plain), []
    assert waits.restore_drain_timeouts(run, waits._objects({"objects": [{"name": "md-0"}]})) == []
    assert run.api.patches == []
