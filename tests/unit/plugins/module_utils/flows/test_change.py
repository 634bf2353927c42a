# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared module flow against a scripted API: request counts, conflicts, check mode, refusals."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import pytest

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.capi.rollout.plugins.module_utils.client.requests import Api
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.flows import args, change, info, pause, restart, undo
from ansible_collections.capi.rollout.plugins.module_utils.flows import run as flow_run
from ansible_collections.capi.rollout.plugins.modules import capi_rollout_restart
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import DRY_RUN, FakeConnection
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.flows.fakes import Clock, Exit, ModuleStandIn
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

MDS = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments"
CLUSTERS = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters"
APIS = {"kind": "APIGroupList", "groups": [
    {"name": "cluster.x-k8s.io", "versions": [{"version": "v1beta2"}, {"version": "v1beta1"}],
     "preferredVersion": {"version": "v1beta2"}},
    {"name": "controlplane.cluster.x-k8s.io", "versions": [{"version": "v1beta2"}], "preferredVersion": {"version": "v1beta2"}},
    {"name": "infrastructure.cluster.x-k8s.io", "versions": [{"version": "v1beta2"}], "preferredVersion": {"version": "v1beta2"}},
]}
INFRA = "/apis/infrastructure.cluster.x-k8s.io/v1beta2"
TEMPLATES = INFRA + "/namespaces/default/dockermachinetemplates"
# a switch on v1beta2 asks whether CAPI may update Machines in place (client.extensions); here: not served
EXTENSION_CONFIGS = "/apis/runtime.cluster.x-k8s.io/v1beta2/extensionconfigs"
MACHINE_SETS = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinesets"


class FakeModule(ModuleStandIn):
    _name = "capi_rollout_restart"
    DEFAULTS = dict({key: value.get("default")
                     for key, value in args.argument_spec(args.AUTH_ARG_SPEC, args.TARGET_ARG_SPEC, args.WAIT_ARG_SPEC,
                                                          args.FIELD_OWNERS_ARG_SPEC).items()},
                    after=None, force=False, infrastructure_ref=None, rollout_id=None, reason=None, paused=None,
                    machine_sets=False, machines=False)


@pytest.fixture
def conn(monkeypatch):
    fake = FakeConnection()
    fake.add("GET", "/apis", body=APIS)
    fake.add("GET", EXTENSION_CONFIGS, status=404, body={"kind": "Status", "reason": "NotFound", "code": 404})
    # a restart now reads the MachineSets its trigger must replace (flows.restart._settle): none by default
    fake.add("GET", MACHINE_SETS, body={"items": []})
    monkeypatch.setattr(flow_run, "Connection", lambda params, module_name=None: fake)
    return fake


def md_list(*mds):
    items = []
    for md in mds:
        item = copy.deepcopy(md)
        item.pop("kind")
        item.pop("apiVersion")
        items.append(item)
    return {"kind": "MachineDeploymentList", "metadata": {"resourceVersion": "900"}, "items": items}


VERBS = {"restart": restart, "pause": pause, "undo": undo}


def run(module, verb="restart"):
    with pytest.raises(Exit) as done:
        if verb == "info":
            info.run_info(module)
        else:
            change.run_change(module, VERBS[verb])
    return done.value


def test_restart_one_object_costs_five_requests(conn):
    md = objs.machine_deployment()
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("PATCH", MDS + "/md-0", body=dict(md, metadata=dict(md["metadata"], resourceVersion="4712")))
    out = run(FakeModule(name="md-0", rollout_id="x"))
    assert not out.failed, out.result
    assert out.result["api_requests"] == 5 and out.result["changed"] is True
    # discovery, the MachineDeployment, its Cluster, its namespace's MachineSets (the trigger must be later than
    # their creation), the patch
    assert [(s["method"], s["path"].rsplit("/", 1)[-1]) for s in conn.sent] == [
        ("GET", "apis"), ("GET", "machinedeployments"), ("GET", "c1"), ("GET", "machinesets"), ("PATCH", "md-0")]
    assert conn.sent[1]["query"]["fieldSelector"] == "metadata.name=md-0"
    patch = conn.sent[4]["body"]
    assert conn.sent[4]["content_type"] == "application/json-patch+json"
    assert {"op": "test", "path": "/spec/rollout/after", "value": None} in patch
    (trigger,) = [op for op in patch if op["op"] == "add" and op["path"] == "/spec/rollout/after"]
    assert trigger["value"].endswith("Z")
    assert not [op for op in patch if op["path"] == "/metadata/resourceVersion"]
    assert out.result["objects"][0]["patch"] == patch
    assert out.result["objects"][0]["patch_type"] == "json"


def test_a_restart_of_a_recorded_md_keeps_the_machine_counts_of_the_revision_it_leaves(conn):
    ms = objs.machine_set(suffix="bbbbb", revision="2")
    entry = hist.make_entry(2, "2026-01-10T08:00:00Z", "restarted", None, hist.identity_of(ms), rollout_id="before")
    md = objs.annotate(objs.machine_deployment(), "rollout.capi-rollout.dev/history", hist.serialize([entry]))
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.answers.pop(("GET", MACHINE_SETS))
    conn.add("GET", MACHINE_SETS, body={"items": [ms]})
    conn.add("GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines",
             body={"items": [objs.machine(name=f"md-0-bbbbb-{n}", ms_name="md-0-bbbbb") for n in range(2)]})
    conn.add("PATCH", MDS + "/md-0", body=md)
    out = run(FakeModule(name="md-0", rollout_id="x"))
    assert not out.failed, out.result
    # one LIST of MachineSets and one of Machines for the task, then the write
    assert [(s["method"], s["path"].rsplit("/", 1)[-1]) for s in conn.sent][3:] == [
        ("GET", "machinesets"), ("GET", "machines"), ("PATCH", "md-0")]
    (written,) = [op for op in conn.sent[-1]["body"] if op["op"] != "test" and op["path"].endswith("history")]
    assert [(e["revision"], e.get("machines")) for e in json.loads(written["value"])] == [
        (2, {"replaced": 2, "updated_in_place": 0}), (3, None)]
    # a re-run that writes nothing (its rollout_id is recorded) reads neither
    conn.answers.pop(("GET", MDS))
    conn.add("GET", MDS, body=md_list(objs.annotate(md, "rollout.capi-rollout.dev/history", written["value"])))
    conn.sent.clear()
    again = run(FakeModule(name="md-0", rollout_id="x"))
    assert not again.failed and again.result["changed"] is False, again.result
    assert [s["path"].rsplit("/", 1)[-1] for s in conn.sent] == ["apis", "machinedeployments", "c1"]


@pytest.mark.parametrize("created, sleeps, action, written", [
    ("2026-03-01T11:59:58Z", [], "restarted", None),  # its trigger 11:59:59 is after it already
    ("2026-03-01T12:00:00Z", [2.0], "restarted", None),  # created in the server's second: wait 2 s, trigger 12:00:01
    # the trigger of now is there already (another restart in this second), and made this MachineSet: the same
    ("2026-03-01T12:00:00Z", [2.0], "restarted", "2026-03-01T11:59:59Z"),
    ("2026-03-01T12:00:30Z", [3], "unchanged", None),  # a creation ahead of the server's clock: bounded, nothing written
])
def test_a_restart_now_waits_by_the_server_clock_until_its_trigger_replaces_the_newest_machine_set(
        conn, monkeypatch, created, sleeps, action, written):
    clock = Clock()
    monkeypatch.setattr(flow_run, "Api", lambda connection, dry_run=False: Api(connection, dry_run=dry_run, clock=clock,
                                                                               sleep=clock.sleep))
    md = objs.set_rollout_after(objs.machine_deployment(), written) if written else objs.machine_deployment()
    date = {"Date": "Sun, 01 Mar 2026 12:00:00 GMT"}  # objs.NOW, the API server's clock; the host's is not used
    conn.add("GET", MDS, body=md_list(md), headers=date)
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster(), headers=date)
    conn.answers.pop(("GET", MACHINE_SETS))
    conn.add("GET", MACHINE_SETS, body={"items": [objs.machine_set(suffix="bbbbb", created=created)]}, headers=date)
    conn.add("PATCH", MDS + "/md-0", body=md)
    out = run(FakeModule(name="md-0"))
    assert not out.failed, out.result
    (entry,) = out.result["objects"]
    assert (clock.sleeps, entry["action"]) == (sleeps, action)
    patches = [s["body"] for s in conn.sent if s["method"] == "PATCH"]
    if action == "restarted":
        (trigger,) = [op["value"] for op in patches[0] if op["op"] in ("add", "replace") and op["path"] == "/spec/rollout/after"]
        assert trigger > created  # RFC 3339 UTC seconds sort as times
    else:
        assert patches == [] and out.result["changed"] is False
        assert "would replace no Machine" in entry["message"]


def test_conflict_rereads_replans_and_retries(conn):
    md = objs.machine_deployment()
    newer = copy.deepcopy(md)
    newer["metadata"]["resourceVersion"] = "5000"
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("PATCH", MDS + "/md-0", status=409, body={"reason": "Conflict", "message": "the object has been modified"})
    conn.add("PATCH", MDS + "/md-0", body=newer)
    conn.add("GET", MDS + "/md-0", body=newer)
    out = run(FakeModule(name="md-0"))
    assert not out.failed, out.result
    patches = [s for s in conn.sent if s["method"] == "PATCH"]
    assert len(patches) == 2 and patches[0]["body"] == patches[1]["body"]


def test_conflict_on_a_now_paused_object_stops(conn):
    md = objs.machine_deployment()
    paused = copy.deepcopy(md)
    paused["spec"]["paused"] = True
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("PATCH", MDS + "/md-0", status=409, body={"reason": "Conflict", "message": "modified"})
    conn.add("GET", MDS + "/md-0", body=paused)
    out = run(FakeModule(name="md-0"))
    assert out.failed and out.result["reason"] == "paused"
    assert len([s for s in conn.sent if s["method"] == "PATCH"]) == 1


def test_a_write_failing_part_way_names_what_was_changed_and_what_not(conn):
    mds = [objs.machine_deployment(name=name) for name in ("md-0", "md-1", "md-2")]
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("PATCH", MDS + "/md-0", body=mds[0])
    conn.add("PATCH", MDS + "/md-1", status=403, body={"reason": "Forbidden", "message": "no"})
    out = run(FakeModule(names=["md-0", "md-1", "md-2"]))
    assert out.failed and out.result["reason"] == "forbidden"
    assert out.result["msg"].startswith("machinedeployment/default/md-1: ")
    assert "1 of 3 object(s) were changed before it (machinedeployment/default/md-0); not changed: " \
        "machinedeployment/default/md-1, machinedeployment/default/md-2" in out.result["msg"]
    assert out.result["changed_objects"] == ["machinedeployment/default/md-0"]
    assert out.result["unchanged_objects"] == ["machinedeployment/default/md-1", "machinedeployment/default/md-2"]
    assert out.result["changed"] is True and [e["name"] for e in out.result["objects"]] == ["md-0"]
    assert [s["path"].rsplit("/", 1)[-1] for s in conn.sent if s["method"] == "PATCH"] == ["md-0", "md-1"]


def test_conflicts_are_retried_with_a_pause(conn):
    md = objs.machine_deployment()
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    for _conflict in range(4):
        conn.add("PATCH", MDS + "/md-0", status=409, body={"reason": "Conflict", "message": "modified"})
    conn.add("PATCH", MDS + "/md-0", body=md)
    conn.add("GET", MDS + "/md-0", body=md)
    out = run(FakeModule(name="md-0"))
    assert not out.failed, out.result
    assert len([s for s in conn.sent if s["method"] == "PATCH"]) == 5


def test_check_mode_sends_every_write_as_a_dry_run_and_returns_diff(conn):
    conn.add("GET", MDS, body=md_list(objs.machine_deployment()))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("PATCH", MDS + "/md-0", body=objs.machine_deployment())
    out = run(FakeModule(check_mode=True, diff=True, name="md-0"))
    assert out.result["changed"] is True
    writes = [s for s in conn.sent if s["method"] != "GET"]
    assert [(s["method"], s["query"]) for s in writes] == [("PATCH", DRY_RUN)]
    assert "after:" in out.result["diff"][0]["after"]
    assert out.result["objects"][0]["patch"] == writes[0]["body"]


def test_one_refusal_fails_many_before_any_write(conn):
    ok = objs.machine_deployment(name="md-0")
    paused = objs.machine_deployment(name="md-1")
    paused["spec"]["paused"] = True
    conn.add("GET", MDS, body=md_list(ok, paused))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    out = run(FakeModule(names=["md-0", "md-1"]))
    assert out.failed and out.result["reason"] == "paused"
    assert out.result["msg"].startswith("machinedeployment/default/md-1: ")
    assert not [s for s in conn.sent if s["method"] == "PATCH"]
    assert conn.sent[1]["query"].get("fieldSelector") is None


def test_not_found_single_name_lists_existing(conn):
    conn.add("GET", MDS, body=md_list())
    conn.add("GET", MDS, body=md_list(objs.machine_deployment(name="md-0"), objs.machine_deployment(name="md-1")))
    out = run(FakeModule(name="md-9"))
    assert out.failed and out.result["reason"] == "not_found"
    assert "md-0, md-1" in out.result["msg"]


def test_empty_names_selects_nothing(conn):
    out = run(FakeModule(names=[]))
    assert out.failed and out.result["reason"] == "invalid_selection"
    assert conn.sent == []
    info = run(FakeModule(names=[]), verb="info")
    assert info.result["resources"] == []


def test_pause_kcp_resume_is_a_json_patch(conn):
    kcps = "/apis/controlplane.cluster.x-k8s.io/v1beta2/namespaces/default/kubeadmcontrolplanes"
    kcp = objs.kubeadm_control_plane()
    kcp["metadata"].setdefault("annotations", {})["cluster.x-k8s.io/paused"] = "true"
    listed = copy.deepcopy(kcp)
    conn.add("GET", kcps, body={"metadata": {"resourceVersion": "9"}, "items": [listed]})
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("PATCH", kcps + "/c1-cp", body=kcp)
    out = run(FakeModule(kind="kcp", name="c1-cp", paused=False), verb="pause")
    assert not out.failed, out.result
    patch = [s for s in conn.sent if s["method"] == "PATCH"][0]
    assert patch["content_type"] == "application/json-patch+json"
    assert patch["body"] == [{"op": "test", "path": "/metadata/annotations/cluster.x-k8s.io~1paused", "value": "true"},
                             {"op": "remove", "path": "/metadata/annotations/cluster.x-k8s.io~1paused"}]


def test_info_for_many_objects_is_a_constant_number_of_requests(conn):
    mds = [objs.machine_deployment(name=f"md-{i}", cluster=f"c{i % 2}") for i in range(7)]
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS, body={"items": [objs.cluster(name="c0"), objs.cluster(name="c1", paused=True)]})
    conn.add("GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinesets", body={"items": []})
    conn.add("GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines", body={"items": []})
    out = run(FakeModule(machine_sets=True, machines=True), verb="info")
    assert not out.failed, out.result
    assert out.result["api_requests"] == 5
    assert len(out.result["resources"]) == 7
    paused = {r["name"]: r["paused"] for r in out.result["resources"]}
    assert paused["md-1"] is True and paused["md-0"] is False


@pytest.mark.parametrize("status, warned", [(404, True), (200, False), (403, False)])
def test_info_on_an_empty_namespace_says_when_it_does_not_exist(conn, status, warned):
    conn.add("GET", MDS, body=md_list())
    conn.add("GET", "/api/v1/namespaces/default", status=status, body={"reason": "x", "message": "x"})
    module = FakeModule()
    out = run(module, verb="info")
    assert not out.failed and out.result["resources"] == []
    assert any("namespace default does not exist" in text for text in module.warnings) is warned
    assert [s["path"] for s in conn.sent].count("/api/v1/namespaces/default") == 1


def test_info_asks_nothing_about_a_namespace_with_objects(conn):
    conn.add("GET", MDS, body=md_list(objs.machine_deployment()))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinesets", body={"items": []})
    out = run(FakeModule(), verb="info")
    assert not out.failed, out.result
    assert "/api/v1/namespaces/default" not in [s["path"] for s in conn.sent]


TEST_FAILED = {"kind": "Status", "code": 422, "reason": "Invalid",
               "message": "the server rejected our request due to an error in our request",
               "details": {"causes": [{"reason": "UnexpectedServerResponse",
                                       "message": "testing value /spec/template/spec/infrastructureRef failed"}]}}


def test_a_failed_test_rereads_and_replans_from_the_new_state(conn):
    """A colleague switched the template between the read and the write: the patch's test of the template
    fails (422), the object is read again and the restart planned (and recorded) from the new template."""
    md = objs.machine_deployment()
    switched = copy.deepcopy(md)
    switched["spec"]["template"]["spec"]["infrastructureRef"]["name"] = "md-0-infra-colleague"
    switched["metadata"]["resourceVersion"] = "5000"
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("PATCH", MDS + "/md-0", status=422, body=TEST_FAILED)
    conn.add("GET", MDS + "/md-0", body=switched)
    conn.add("PATCH", MDS + "/md-0", body=switched)
    out = run(FakeModule(name="md-0"))
    assert not out.failed, out.result
    first, second = [s["body"] for s in conn.sent if s["method"] == "PATCH"]
    ref = "/spec/template/spec/infrastructureRef"
    assert {"op": "test", "path": ref, "value": md["spec"]["template"]["spec"]["infrastructureRef"]} in first
    assert {"op": "test", "path": ref, "value": switched["spec"]["template"]["spec"]["infrastructureRef"]} in second
    written = objs.apply_json_patch(switched, second)
    (entry,) = json.loads(written["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])
    assert entry["to"]["infrastructureRef"]["name"] == "md-0-infra-colleague"
    assert out.result["objects"][0]["patch"] == second
    assert out.result["api_requests"] == 7  # the MachineSets are read once per task


def test_a_failed_test_on_a_now_paused_object_stops(conn):
    md = objs.machine_deployment()
    paused = copy.deepcopy(md)
    paused["spec"]["paused"] = True
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("PATCH", MDS + "/md-0", status=422, body=TEST_FAILED)
    conn.add("GET", MDS + "/md-0", body=paused)
    out = run(FakeModule(name="md-0"))
    assert out.failed and out.result["reason"] == "paused"


def test_failed_tests_are_retried_a_bounded_number_of_times(conn):
    md = objs.machine_deployment()
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    for _failure in range(change.CONFLICT_ATTEMPTS):
        conn.add("PATCH", MDS + "/md-0", status=422, body=TEST_FAILED)
    conn.add("GET", MDS + "/md-0", body=md)
    out = run(FakeModule(name="md-0"))
    assert out.failed and out.result["reason"] == "conflict"
    assert "testing value /spec/template/spec/infrastructureRef failed" in out.result["msg"]
    assert len([s for s in conn.sent if s["method"] == "PATCH"]) == change.CONFLICT_ATTEMPTS


def test_an_invalid_value_is_not_retried(conn):
    md = objs.machine_deployment()
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    invalid = {"kind": "Status", "code": 422, "reason": "Invalid",
               "message": "MachineDeployment.cluster.x-k8s.io \"md-0\" is invalid"}
    conn.add("PATCH", MDS + "/md-0", status=422, body=invalid)
    out = run(FakeModule(name="md-0"))
    assert out.failed and out.result["reason"] == "invalid"
    assert len([s for s in conn.sent if s["method"] == "PATCH"]) == 1


# ----- switches: one restart call, each object to its own template -----

def machine_template(name):
    return {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerMachineTemplate",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"template": {"spec": {"customImage": name}}}}


def switch(name, template):
    return {"name": name, "infrastructure_ref": {"name": template, "kind": None, "api_group": None, "api_version": None}}


def infra_ref_ops(patch):
    return [op for op in patch if op["op"] != "test" and op["path"].startswith("/spec/template/spec/infrastructureRef")]


def test_switches_switch_each_object_to_its_own_template_with_one_template_list(conn):
    mds = [objs.machine_deployment(name=name, infra=f"{name}-infra-v1") for name in ("md-0", "md-1")]
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", TEMPLATES, body={"items": [machine_template("md-0-v2"), machine_template("md-1-v2")]})
    conn.add("PATCH", MDS + "/md-0", body=mds[0])
    conn.add("PATCH", MDS + "/md-1", body=mds[1])
    out = run(FakeModule(switches=[switch("md-1", "md-1-v2"), switch("md-0", "md-0-v2")], rollout_id="CHG-9"))
    assert not out.failed, out.result
    # discovery, the MachineDeployments, their Cluster, the in-place check, the templates, one patch each: no
    # request per template
    assert [(s["method"], s["path"]) for s in conn.sent] == [
        ("GET", "/apis"), ("GET", MDS), ("GET", CLUSTERS + "/c1"), ("GET", EXTENSION_CONFIGS), ("GET", TEMPLATES),
        ("PATCH", MDS + "/md-0"), ("PATCH", MDS + "/md-1")]
    assert out.result["api_requests"] == 7
    assert conn.sent[1]["query"].get("fieldSelector") is None and conn.sent[4]["query"].get("fieldSelector") is None
    for sent, name in zip(conn.sent[5:], ("md-0", "md-1")):
        written = objs.apply_json_patch(mds[int(name[-1])], sent["body"])
        assert written["spec"]["template"]["spec"]["infrastructureRef"] == {
            "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": f"{name}-v2"}
        (entry,) = json.loads(written["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])
        assert entry["rollout_id"] == "CHG-9"
        assert entry["to"]["infrastructureRef"]["name"] == f"{name}-v2"
    assert [(e["name"], e["action"]) for e in out.result["objects"]] == [("md-0", "restarted"), ("md-1", "restarted")]
    assert "md-0-v2" in out.result["objects"][0]["message"] and "md-1-v2" in out.result["objects"][1]["message"]
    # no template to make: no clones in the result
    assert "clones" not in out.result


def test_switches_to_one_template_still_get_it(conn):
    """One distinct template is one GET (its plural from discovery), as with infrastructure_ref."""
    mds = [objs.machine_deployment(name=name) for name in ("md-0", "md-1")]
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", INFRA, body={"resources": [{"name": "dockermachinetemplates", "kind": "DockerMachineTemplate"}]})
    conn.add("GET", TEMPLATES + "/shared-v2", body=machine_template("shared-v2"))
    conn.add("PATCH", MDS + "/md-0", body=mds[0])
    conn.add("PATCH", MDS + "/md-1", body=mds[1])
    out = run(FakeModule(switches=[switch("md-0", "shared-v2"), switch("md-1", "shared-v2")]))
    assert not out.failed, out.result
    assert [s["path"] for s in conn.sent if s["path"].startswith(INFRA)] == [INFRA, TEMPLATES + "/shared-v2"]


def test_switches_with_a_missing_template_write_nothing(conn):
    mds = [objs.machine_deployment(name=name) for name in ("md-0", "md-1", "md-2")]
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", TEMPLATES, body={"items": [machine_template("md-0-v2"), machine_template("md-2-v2")]})
    out = run(FakeModule(switches=[switch("md-0", "md-0-v2"), switch("md-1", "md-1-v2"), switch("md-2", "md-2-v2")]))
    assert out.failed and out.result["reason"] == "template_not_found"
    assert out.result["msg"].startswith("machinedeployment/default/md-1: infrastructure template DockerMachineTemplate "
                                        "default/md-1-v2 (infrastructure.cluster.x-k8s.io) does not exist")
    assert not [s for s in conn.sent if s["method"] != "GET"]
    assert [s["path"] for s in conn.sent].count(TEMPLATES) == 1


def test_switches_to_something_that_is_no_machine_template_write_nothing(conn):
    mds = [objs.machine_deployment(name=name) for name in ("md-0", "md-1")]
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    broken = machine_template("md-1-v2")
    broken["spec"] = {"customImage": "x"}
    conn.add("GET", TEMPLATES, body={"items": [machine_template("md-0-v2"), broken]})
    out = run(FakeModule(switches=[switch("md-0", "md-0-v2"), switch("md-1", "md-1-v2")]))
    assert out.failed and out.result["reason"] == "not_a_template"
    assert out.result["msg"].startswith("machinedeployment/default/md-1: DockerMachineTemplate default/md-1-v2")
    assert not [s for s in conn.sent if s["method"] != "GET"]


def test_switches_with_one_topology_owned_object_write_nothing(conn):
    mds = [objs.machine_deployment(name=name) for name in ("md-0", "md-1")]
    mds[1]["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"] = ""
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    out = run(FakeModule(switches=[switch("md-0", "md-0-v2"), switch("md-1", "md-1-v2")]))
    assert out.failed and out.result["reason"] == "topology_owned"
    assert out.result["msg"].startswith("machinedeployment/default/md-1: ")
    # md-0 was planned (its switch asked about in-place updates) before md-1 was refused
    assert [s["method"] for s in conn.sent] == ["GET", "GET", "GET", "GET"]


FLUX_APPLY = {"manager": "kustomize-controller", "operation": "Apply", "time": "2026-03-01T11:00:00Z",
              "fieldsType": "FieldsV1",
              "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:infrastructureRef": {"f:name": {}}}}}}}


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_switch_of_a_field_flux_applies_is_refused_before_any_write(conn, check_mode):
    mds = [objs.machine_deployment(name=name) for name in ("md-0", "md-1")]
    mds[1]["metadata"]["managedFields"] = [FLUX_APPLY]
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", TEMPLATES, body={"items": [machine_template("md-0-v2"), machine_template("md-1-v2")]})
    out = run(FakeModule(check_mode=check_mode, switches=[switch("md-0", "md-0-v2"), switch("md-1", "md-1-v2")]))
    assert out.failed and out.result["reason"] == "field_owned"
    assert out.result["msg"].startswith("machinedeployment/default/md-1: spec.template.spec.infrastructureRef.name is "
                                        "owned by kustomize-controller (managedFields (Apply))")
    assert "change it in Git" in out.result["msg"]
    assert [s["method"] for s in conn.sent] == ["GET"] * 5  # with the in-place check


def test_field_owners_warn_writes_and_warns_a_restart_of_a_git_managed_object_is_allowed(conn):
    mds = [objs.machine_deployment(name=name) for name in ("md-0", "md-1")]
    mds[0]["metadata"]["managedFields"] = [FLUX_APPLY]
    mds[1]["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"] = "fleet"
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", TEMPLATES + "/md-0-v2", body=machine_template("md-0-v2"))
    conn.add("GET", INFRA, body={"resources": [{"name": "dockermachinetemplates", "kind": "DockerMachineTemplate"}]})
    conn.add("PATCH", MDS + "/md-0", body=mds[0])
    conn.add("PATCH", MDS + "/md-1", body=mds[1])
    module = FakeModule(name="md-0", field_owners="warn", infrastructure_ref={"name": "md-0-v2", "kind": "DockerMachineTemplate"})
    out = run(module)
    assert not out.failed, out.result
    assert any("kustomize-controller" in w and "written anyway" in w for w in module.warnings), module.warnings
    # a restart writes the trigger and this collection's annotations, which Git does not hold
    module = FakeModule(name="md-1")
    out = run(module)
    assert not out.failed, out.result
    assert [s["path"] for s in conn.sent if s["method"] == "PATCH"] == [MDS + "/md-0", MDS + "/md-1"]


def test_switches_naming_an_object_twice_are_refused_before_any_request(conn):
    out = run(FakeModule(switches=[switch("md-0", "md-0-v2"), switch("md-1", "md-1-v2"), switch(" md-0 ", "md-0-v3")]))
    assert out.failed and out.result["reason"] == "invalid_selection"
    assert "MachineDeployment md-0 more than once" in out.result["msg"]
    assert out.result["msg"].startswith("machinedeployment/default/md-0: ")
    assert conn.sent == [] and out.result["api_requests"] == 0


def test_empty_switches_select_nothing(conn):
    out = run(FakeModule(switches=[]))
    assert out.failed and out.result["reason"] == "invalid_selection"
    assert out.result["msg"].startswith("switches is empty: no object selected")
    assert conn.sent == []


def test_a_missing_switched_object_is_not_found(conn):
    conn.add("GET", MDS, body=md_list(objs.machine_deployment(name="md-0")))
    out = run(FakeModule(switches=[switch("md-0", "md-0-v2"), switch("md-7", "md-7-v2")]))
    assert out.failed and out.result["reason"] == "not_found"
    assert "MachineDeployment md-7 not found" in out.result["msg"] and "existing in namespace default: md-0" in out.result["msg"]
    assert [s["method"] for s in conn.sent] == ["GET", "GET"]


@pytest.fixture
def restart_spec(monkeypatch):
    """The argument spec and option rules capi_rollout_restart hands to AnsibleModule."""
    captured = {}

    class Captured(Exception):
        pass

    def fake_module(**kwargs):
        captured.update(kwargs)
        raise Captured()

    monkeypatch.setattr(capi_rollout_restart, "RolloutModule", fake_module)
    with pytest.raises(Captured):
        capi_rollout_restart.main()
    return captured


SWITCHES = [{"name": "md-0", "infrastructure_ref": {"name": "md-0-v2"}}]


@pytest.mark.parametrize("other", [{"name": "md-0"}, {"names": ["md-0"]}, {"cluster_name": "c1"},
                                   {"label_selectors": ["pool=gpu"]}, {"infrastructure_ref": {"name": "t"}}])
def test_switches_exclude_the_other_selections_and_infrastructure_ref(restart_spec, other):
    validator = ArgumentSpecValidator(restart_spec["argument_spec"], mutually_exclusive=restart_spec["mutually_exclusive"],
                                      required_one_of=restart_spec["required_one_of"])
    result = validator.validate(dict(other, switches=SWITCHES))
    assert any("mutually exclusive" in text and "switches" in text for text in result.error_messages), result.error_messages


def test_switches_alone_are_a_selection_and_need_name_and_template(restart_spec):
    validator = ArgumentSpecValidator(restart_spec["argument_spec"], mutually_exclusive=restart_spec["mutually_exclusive"],
                                      required_one_of=restart_spec["required_one_of"])
    assert validator.validate({"switches": SWITCHES}).error_messages == []
    assert validator.validate({"switches": [{"name": "md-0"}]}).error_messages
    assert validator.validate({"switches": [{"infrastructure_ref": {"name": "t"}}]}).error_messages
    assert any("one of the following is required" in text for text in validator.validate({}).error_messages)
    # pause and undo keep the shared rule, without switches
    assert "switches" not in args.TARGET_REQUIRED_ONE_OF[0]
    assert not [pair for pair in args.TARGET_MUTUALLY_EXCLUSIVE if "switches" in pair]


# ----- switches with a template: the clone and the switch in one call -----

from ansible_collections.capi.rollout.plugins.module_utils.core import template_clone  # noqa: E402

INFRA_RESOURCES = {"kind": "APIResourceList", "resources": [
    {"name": "dockermachinetemplates", "kind": "DockerMachineTemplate", "namespaced": True}]}
IMAGE = {"customImage": "kindest/node:v2"}
FORBIDDEN = {"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no create for you"}


def source_template(name):
    obj = machine_template(name)
    obj["metadata"].update(uid=f"uid-{name}", resourceVersion="7")
    return obj


def made(obj):
    out = copy.deepcopy(obj)
    out["metadata"].update(uid="uid-new", resourceVersion="12")
    return out


def templated(name):
    return {"name": name, "infrastructure_ref": None, "template": {"overrides": IMAGE, "labels": None, "annotations": None}}


def script_clones(conn, names, sources=None):
    """Two MachineDeployments on templates <name>-infra-v1; returns {name: the clone's planned object}."""
    mds = [objs.machine_deployment(name=name, infra=f"{name}-infra-v1") for name in names]
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", INFRA, body=INFRA_RESOURCES)
    sources = sources if sources is not None else names
    conn.add("GET", TEMPLATES, body={"items": [source_template(f"{name}-infra-v1") for name in sources]})
    planned = {name: template_clone.plan_clone(source_template(f"{name}-infra-v1"), IMAGE)["object"] for name in names}
    return mds, planned


def test_template_switches_make_each_template_then_switch_in_one_call(conn):
    mds, planned = script_clones(conn, ("md-0", "md-1"))
    for name in ("md-0", "md-1", "md-0", "md-1"):  # the two dry runs, then the two creates
        conn.add("POST", TEMPLATES, status=201, body=made(planned[name]))
    conn.add("PATCH", MDS + "/md-0", body=mds[0])
    conn.add("PATCH", MDS + "/md-1", body=mds[1])
    out = run(FakeModule(switches=[templated("md-0"), templated("md-1")], rollout_id="CHG-9"))
    assert not out.failed, out.result
    # the sources from one template list; every clone checked as a dry run before the first create, the creates
    # before the first patch; the new templates are not read again (this call made them)
    assert [(s["method"], s["path"], s["query"].get("dryRun")) for s in conn.sent] == [
        ("GET", "/apis", None), ("GET", MDS, None), ("GET", CLUSTERS + "/c1", None), ("GET", INFRA, None),
        ("GET", TEMPLATES, None), ("POST", TEMPLATES, "All"), ("POST", TEMPLATES, "All"), ("GET", EXTENSION_CONFIGS, None),
        ("POST", TEMPLATES, None), ("POST", TEMPLATES, None), ("PATCH", MDS + "/md-0", None),
        ("PATCH", MDS + "/md-1", None)]
    clones = out.result["clones"]
    assert [(c["ref"], c["created"], c["failed"]) for c in clones] == [
        ("machinedeployment/default/md-0", True, False), ("machinedeployment/default/md-1", True, False)]
    for sent, name, clone in zip(conn.sent[-2:], ("md-0", "md-1"), clones):
        written = objs.apply_json_patch(mds[int(name[-1])], sent["body"])
        assert written["spec"]["template"]["spec"]["infrastructureRef"]["name"] == planned[name]["metadata"]["name"]
        assert clone["infrastructure_ref"]["name"] == planned[name]["metadata"]["name"]
    assert out.result["changed"] is True
    assert [e["action"] for e in out.result["objects"]] == ["restarted", "restarted"]


def test_template_switches_in_check_mode_send_every_write_as_a_dry_run(conn):
    mds, planned = script_clones(conn, ("md-0", "md-1"))
    for name in ("md-0", "md-1"):
        conn.add("POST", TEMPLATES, status=201, body=made(planned[name]))
    conn.add("PATCH", MDS + "/md-0", body=mds[0])
    conn.add("PATCH", MDS + "/md-1", body=mds[1])
    out = run(FakeModule(check_mode=True, diff=True, switches=[templated("md-0"), templated("md-1")]))
    assert not out.failed, out.result
    writes = [(s["method"], s["query"].get("dryRun")) for s in conn.sent if s["method"] != "GET"]
    assert writes == [("POST", "All"), ("POST", "All"), ("PATCH", "All"), ("PATCH", "All")]
    assert out.result["changed"] is True
    # --diff: each new template, then each patch
    assert len(out.result["diff"]) == 4
    assert [c["message"] for c in out.result["clones"]] == [
        f"dockermachinetemplate/default/{planned[name]['metadata']['name']} would be created from "
        f"dockermachinetemplate/default/{name}-infra-v1" for name in ("md-0", "md-1")]


def test_a_template_that_cannot_be_made_switches_nothing_and_creates_nothing(conn):
    mds, planned = script_clones(conn, ("md-0", "md-1"), sources=("md-0",))
    conn.add("POST", TEMPLATES, status=201, body=made(planned["md-0"]))
    out = run(FakeModule(switches=[templated("md-0"), templated("md-1")]))
    assert out.failed and out.result["reason"] == "clone_refused"
    assert out.result["msg"].startswith("machinedeployment/default/md-1: 1 of 2 new template(s) could not be made, so no "
                                        "object was switched; nothing was changed: machinedeployment/default/md-1: ")
    # positive control: md-0's template was checked (a dry run), and nothing else was sent
    assert [(s["method"], s["query"].get("dryRun")) for s in conn.sent if s["method"] != "GET"] == [("POST", "All")]
    assert [(c["ref"], c["failed"]) for c in out.result["clones"]] == [
        ("machinedeployment/default/md-0", False), ("machinedeployment/default/md-1", True)]
    assert out.result["changed"] is False and out.result["objects"] == []


def test_a_template_switch_refused_for_a_field_git_owns_creates_no_template(conn):
    _mds, planned = script_clones(conn, ("md-0", "md-1"))
    conn.answers[("GET", MDS)][0][1]["items"][1]["metadata"]["managedFields"] = [FLUX_APPLY]  # md-1, as served
    for name in ("md-0", "md-1"):  # the dry runs of both clones
        conn.add("POST", TEMPLATES, status=201, body=made(planned[name]))
    out = run(FakeModule(switches=[templated("md-0"), templated("md-1")]))
    assert out.failed and out.result["reason"] == "field_owned"
    assert out.result["msg"].startswith("machinedeployment/default/md-1: spec.template.spec.infrastructureRef.name is "
                                        "owned by kustomize-controller")
    # the clones were checked (positive control: two dry runs) and none was created
    assert [(s["method"], s["query"].get("dryRun")) for s in conn.sent if s["method"] != "GET"] == [
        ("POST", "All"), ("POST", "All")]
    assert out.result["changed"] is False


def test_a_failed_create_switches_nothing_and_says_what_was_made(conn):
    mds, planned = script_clones(conn, ("md-0", "md-1"))
    conn.add("POST", TEMPLATES, status=201, body=made(planned["md-0"]))
    conn.add("POST", TEMPLATES, status=201, body=made(planned["md-1"]))
    conn.add("POST", TEMPLATES, status=201, body=made(planned["md-0"]))
    conn.add("POST", TEMPLATES, status=403, body=FORBIDDEN)
    out = run(FakeModule(switches=[templated("md-0"), templated("md-1")]))
    assert out.failed and out.result["reason"] == "create_failed"
    assert "1 of 2 new template(s) could not be created (1 were), so no object was switched" in out.result["msg"]
    assert not [s for s in conn.sent if s["method"] == "PATCH"]
    assert [(c["ref"], c["created"]) for c in out.result["clones"] if not c["failed"]] == [("machinedeployment/default/md-0", True)]
    # a template was made: the task changed something
    assert out.result["changed"] is True


def test_a_switch_takes_a_template_or_an_infrastructure_ref_not_both(restart_spec):
    validator = ArgumentSpecValidator(restart_spec["argument_spec"], mutually_exclusive=restart_spec["mutually_exclusive"],
                                      required_one_of=restart_spec["required_one_of"])
    assert validator.validate({"switches": [{"name": "md-0", "template": {"overrides": IMAGE}}]}).error_messages == []
    both = validator.validate({"switches": [{"name": "md-0", "template": {}, "infrastructure_ref": {"name": "t"}}]})
    assert any("mutually exclusive" in text for text in both.error_messages), both.error_messages
    neither = validator.validate({"switches": [{"name": "md-0"}]})
    assert any("one of the following is required" in text for text in neither.error_messages), neither.error_messages


def test_the_topology_is_left_to_its_guard_undo_force_still_overrides_it(conn):
    """A topology-owned object's pause is not refused as a field owner: the topology guard decides topology."""
    md = objs.machine_deployment(name="md-0")
    md["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"] = ""
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("PATCH", MDS + "/md-0", body=md)
    out = run(FakeModule(name="md-0", paused=True), verb="pause")
    assert not out.failed, out.result
