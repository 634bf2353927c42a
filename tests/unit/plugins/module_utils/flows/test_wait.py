# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""flows/wait.py read_groups: an object missing from the first list is not found; missing on a later call of the
same wait (the action plugin calls the module again and again) it is gone, and the wait fails it as deleted."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client import targets
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.flows import wait as waits

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

    monkeypatch.setattr(targets, "select", select)
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

    monkeypatch.setattr(targets, "list_kind", list_kind)
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
