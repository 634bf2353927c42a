# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""core.patch: the JSON patch every write sends, its test operations on what the plan read."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import pause
from ansible_collections.capi.rollout.plugins.module_utils.core import restart
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Observed
from ansible_collections.capi.rollout.plugins.module_utils.core.record import Recording
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

LAST = "rollout.capi-rollout.dev/last"
HISTORY = "rollout.capi-rollout.dev/history"
PAUSED = "cluster.x-k8s.io/paused"


def _tests(ops):
    return {op["path"]: op["value"] for op in ops if op["op"] == "test"}


def _changes(ops):
    return [op for op in ops if op["op"] != "test"]


def test_pointer_escapes_tilde_and_slash():
    assert patches.pointer(("metadata", "annotations", "a.io/b~c")) == "/metadata/annotations/a.io~1b~0c"
    assert patches.pointer("spec.rollout.after") == "/spec/rollout/after"


def test_present_fields_are_tested_with_the_value_read():
    obj = {"metadata": {"annotations": {PAUSED: ""}}, "spec": {"version": "v1.30.2", "ref": {"name": "a", "kind": "K"}}}
    ops = patches.guard_operations(obj, ["spec.version", "spec.ref", ("metadata", "annotations", PAUSED)])
    assert ops == [{"op": "test", "path": "/spec/version", "value": "v1.30.2"},
                   {"op": "test", "path": "/spec/ref", "value": {"name": "a", "kind": "K"}},
                   {"op": "test", "path": "/metadata/annotations/cluster.x-k8s.io~1paused", "value": ""}]
    # the values are copies: changing the object read later does not change the patch
    obj["spec"]["ref"]["name"] = "b"
    assert ops[1]["value"] == {"name": "a", "kind": "K"}


def test_false_and_empty_values_are_present():
    obj = {"spec": {"paused": False, "failureDomain": ""}}
    assert patches.guard_operations(obj, ["spec.paused", "spec.failureDomain"]) == [
        {"op": "test", "path": "/spec/paused", "value": False},
        {"op": "test", "path": "/spec/failureDomain", "value": ""}]


@pytest.mark.parametrize("obj, pointer", [
    # the member is missing in a map that exists: null on the member itself
    ({"metadata": {"annotations": {"other": "x"}}}, "/metadata/annotations/rollout.capi-rollout.dev~1last"),
    # the map is missing: null on the map (the first missing member), its parent exists
    ({"metadata": {"name": "md-0"}}, "/metadata/annotations"),
    # null counts as absent, as on the API server
    ({"metadata": {"annotations": None}}, "/metadata/annotations"),
])
def test_absent_fields_are_tested_with_null_on_the_first_missing_member(obj, pointer):
    assert patches.guard_operations(obj, [("metadata", "annotations", LAST)]) == [
        {"op": "test", "path": pointer, "value": None}]


def test_a_test_covers_the_paths_under_it_and_duplicates_are_sent_once():
    obj = {"metadata": {"name": "x"}, "spec": {"ref": {"name": "a"}}}
    ops = patches.guard_operations(obj, [("metadata", "annotations", LAST), ("metadata", "annotations", HISTORY),
                                         "spec.ref.name", "spec.ref", "spec.ref.uid"])
    assert ops == [{"op": "test", "path": "/spec/ref", "value": {"name": "a"}},
                   {"op": "test", "path": "/metadata/annotations", "value": None}]


def test_a_scalar_where_a_map_is_expected_is_tested_as_it_is():
    assert patches.guard_operations({"spec": {"rollout": "odd"}}, ["spec.rollout.after"]) == [
        {"op": "test", "path": "/spec/rollout", "value": "odd"}]


def test_change_operations_add_missing_parents_replace_and_remove():
    obj = {"metadata": {"name": "x"}, "spec": {"ref": {"name": "a", "uid": "u"}}}
    changes = ChangeSet()
    changes.add("spec.ref.name", "a", "b")
    changes.add("spec.ref.uid", "u", None)
    changes.add(("metadata", "annotations", LAST), None, "{}")
    changes.add(("metadata", "annotations", HISTORY), None, "[]")
    changes.add("spec.rollout.after", None, "2026-03-01T11:59:59Z")
    ops = patches.json_patch(obj, changes, [])
    assert _changes(ops) == [
        {"op": "replace", "path": "/spec/ref/name", "value": "b"},
        {"op": "remove", "path": "/spec/ref/uid"},
        # the first add creates the map, the second adds to it
        {"op": "add", "path": "/metadata/annotations", "value": {LAST: "{}"}},
        {"op": "add", "path": "/metadata/annotations/rollout.capi-rollout.dev~1history", "value": "[]"},
        {"op": "add", "path": "/spec/rollout", "value": {"after": "2026-03-01T11:59:59Z"}}]
    # every changed field is tested too, with its value as read
    assert _tests(ops) == {"/spec/ref/name": "a", "/spec/ref/uid": "u", "/metadata/annotations": None,
                           "/spec/rollout": None}
    assert objs.apply_json_patch(obj, ops) == objs.apply_merge_patch(obj, changes.merge_patch())


def test_no_change_no_patch():
    assert patches.json_patch({"spec": {}}, ChangeSet(), ["spec.paused"]) is None


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("kind", ["MachineDeployment", "KubeadmControlPlane"])
def test_restart_tests_trigger_template_version_paused_and_records(kind, version):
    obj = objs.machine_deployment(version) if kind == "MachineDeployment" else objs.kubeadm_control_plane(version)
    obj = objs.annotate(obj, HISTORY, json.dumps([{"revision": 1, "at": objs.NOW_TEXT, "action": "restarted",
                                                   "to": {"version": "v1.30.2"}}]))
    plan = restart.plan_restart(obj, objs.NOW, recording=Recording(rollout_id="r1"), observed=Observed(api_version=version))
    tests = _tests(plan["patch"])
    if kind == "MachineDeployment":
        template = obj["spec"]["template"]["spec"]
        assert tests["/spec/template/spec/version"] == template["version"]
        assert tests["/spec/template/spec/infrastructureRef"] == template["infrastructureRef"]
        assert tests["/spec/template/spec/bootstrap"] == template["bootstrap"]
        assert tests["/spec/paused"] is None
    else:
        assert tests["/spec/version"] == obj["spec"]["version"]
        infra = apiversion.spec_path(kind, version, "infrastructure_ref")
        assert tests[patches.pointer(infra)] == paths.get_path(obj, infra)
    trigger = apiversion.spec_path(kind, version, "rollout_after")
    if paths.get_path(obj, trigger.rsplit(".", 1)[0]) is None:
        assert tests[patches.pointer(trigger.rsplit(".", 1)[0])] is None  # spec.rollout is absent
    else:
        assert tests[patches.pointer(trigger)] is None
    assert tests["/metadata/annotations/cluster.x-k8s.io~1paused"] is None
    assert tests["/metadata/annotations/rollout.capi-rollout.dev~1history"] == obj["metadata"]["annotations"][HISTORY]
    assert tests["/metadata/annotations/rollout.capi-rollout.dev~1last"] is None
    # never the resourceVersion: status writes of a busy object do not fail it
    assert not [op for op in plan["patch"] if "resourceVersion" in op["path"]]
    # the tests come first; applied to the object read, the patch makes the planned change
    assert [op["op"] for op in plan["patch"]][:len(tests)] == ["test"] * len(tests)
    assert objs.apply_json_patch(obj, plan["patch"]) == objs.apply_merge_patch(obj, plan["merge_patch"])


@pytest.mark.parametrize("path, value", [
    (("spec", "template", "spec", "infrastructureRef", "name"), "someone-elses-template"),
    (("spec", "template", "spec", "version"), "v1.31.0"),
    (("spec", "rollout", "after"), "2099-01-01T00:00:00Z"),
    (("spec", "paused"), True),
    (("metadata", "annotations", PAUSED), "true"),
    (("metadata", "annotations", LAST), '{"id":"other"}'),
    (("metadata", "annotations", HISTORY), "[]"),
])
def test_a_change_of_a_field_the_plan_read_fails_the_patch(path, value):
    md = objs.machine_deployment("v1beta2")
    plan = restart.plan_restart(md, objs.NOW, observed=Observed(api_version="v1beta2"))
    changed = copy.deepcopy(md)
    target = changed
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    with pytest.raises(objs.TestFailed):
        objs.apply_json_patch(changed, plan["patch"])


def test_unrelated_changes_do_not_fail_the_patch():
    md = objs.machine_deployment("v1beta2")
    plan = restart.plan_restart(md, objs.NOW, observed=Observed(api_version="v1beta2"))
    busy = copy.deepcopy(md)
    busy["metadata"]["resourceVersion"] = "99999"
    busy["metadata"]["annotations"]["someone.example.com/heartbeat"] = "42"
    busy["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] = "7"
    busy["spec"]["replicas"] = 5
    busy["status"] = {"replicas": 5, "observedGeneration": 12}
    written = objs.apply_json_patch(busy, plan["patch"])
    assert written["spec"]["rollout"]["after"] == objs.TRIGGER_TEXT
    assert written["metadata"]["annotations"]["someone.example.com/heartbeat"] == "42"


def test_pause_tests_only_the_paused_state_and_what_it_writes():
    md = objs.machine_deployment("v1beta2")
    plan = pause.plan_pause(md, paused=True)
    assert _tests(plan["patch"]) == {"/spec/paused": None, "/metadata/annotations/cluster.x-k8s.io~1paused": None}
    recorded = pause.plan_pause(md, paused=True, now=objs.NOW, recording=Recording())
    assert _tests(recorded["patch"])["/metadata/annotations/rollout.capi-rollout.dev~1last"] is None


def test_the_fields_plans_rely_on():
    restart_md = patches.rollout_fields("MachineDeployment", "v1beta1")
    assert ("spec", "rolloutAfter") in restart_md and ("spec", "template", "spec", "infrastructureRef") in restart_md
    assert ("metadata", "annotations", HISTORY) in restart_md
    restart_kcp = patches.rollout_fields("KubeadmControlPlane", "v1beta2")
    assert ("spec", "version") in restart_kcp and ("spec", "rollout", "after") in restart_kcp
    assert ("spec", "paused") not in restart_kcp
    assert patches.paused_fields("KubeadmControlPlane") == [("metadata", "annotations", PAUSED)]
    assert restart_md[:2] == patches.paused_fields("MachineDeployment")


@pytest.mark.parametrize("status, body, expected", [
    # kube-apiserver 1.20 (tests/integration/test_write_preconditions.py): a bare 422, the patch error dropped
    (422, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Invalid",
           "message": "the server rejected our request due to an error in our request", "details": {}, "code": 422}, True),
    # with the patch library's error as the cause
    (422, {"kind": "Status", "reason": "Invalid", "message": "the server rejected our request due to an error in our request",
           "details": {"causes": [{"reason": "UnexpectedServerResponse",
                                   "message": "testing value /spec/rollout/after failed"}]}}, True),
    (422, {"reason": "Invalid", "message": "the server rejected our request due to an error in our request",
           "details": {"causes": [{"reason": "FieldValueInvalid", "message": "Invalid value", "field": "spec.replicas"}]}},
     False),
    (422, {"message": "test operation does not apply: is missing path: /metadata/annotations/x"}, True),
    (422, {"reason": "Invalid", "message": "MachineDeployment.cluster.x-k8s.io \"md-0\" is invalid: spec.replicas"}, False),
    (409, {"reason": "Conflict", "message": "testing value /a failed"}, False),
    (422, "testing value /a failed", False),
])
def test_is_test_failure(status, body, expected):
    assert patches.is_test_failure(status, body) is expected


def test_merged_puts_every_test_first_and_each_distinct_operation_once():
    rebase = [{"op": "test", "path": "/spec/topology/classRef/name", "value": "bare"},
              {"op": "replace", "path": "/spec/topology/classRef/name", "value": "bare-1"}]
    md0 = [{"op": "test", "path": "/spec/topology/workers/machineDeployments/0/name", "value": "md-0"}] + rebase + \
        [{"op": "add", "path": "/spec/topology/workers/machineDeployments/0/rollout", "value": {"after": "t"}}]
    md1 = [{"op": "test", "path": "/spec/topology/workers/machineDeployments/1/name", "value": "md-1"}] + rebase + \
        [{"op": "add", "path": "/spec/topology/workers/machineDeployments/1/rollout", "value": {"after": "t"}}]
    assert patches.merged([md0, md1]) == [md0[0], rebase[0], md1[0], rebase[1], md0[-1], md1[-1]]
    assert patches.merged([rebase, rebase]) == rebase


def test_merged_refuses_two_ways_of_writing_one_path():
    one = [{"op": "replace", "path": "/spec/topology/classRef/name", "value": "bare-1"}]
    other = [{"op": "replace", "path": "/spec/topology/classRef/name", "value": "bare-2"}]
    with pytest.raises(ValueError):
        patches.merged([one, other])
    with pytest.raises(ValueError):
        patches.merged([[{"op": "test", "path": "/a", "value": 1}], [{"op": "test", "path": "/a", "value": 2}]])
