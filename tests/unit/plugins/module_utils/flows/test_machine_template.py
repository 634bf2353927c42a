# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_machine_template's flow against a scripted API: requests sent, check mode, conflicts, errors."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.flows import run as flow_run
from ansible_collections.capi.rollout.plugins.module_utils.flows import machine_template
from ansible_collections.capi.rollout.plugins.module_utils.core import template_clone as tc
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import DRY_RUN, WRITE, FakeConnection
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.flows.fakes import Exit, ModuleStandIn

INFRA = "infrastructure.cluster.x-k8s.io"
APIS = {"kind": "APIGroupList", "groups": [
    {"name": "cluster.x-k8s.io", "versions": [{"version": "v1beta2"}, {"version": "v1beta1"}],
     "preferredVersion": {"version": "v1beta2"}},
    {"name": "controlplane.cluster.x-k8s.io", "versions": [{"version": "v1beta2"}], "preferredVersion": {"version": "v1beta2"}},
    {"name": INFRA, "versions": [{"version": "v1beta2"}], "preferredVersion": {"version": "v1beta2"}},
]}
APIS_V1BETA1 = {"kind": "APIGroupList", "groups": [
    {"name": "cluster.x-k8s.io", "versions": [{"version": "v1beta1"}], "preferredVersion": {"version": "v1beta1"}},
    {"name": INFRA, "versions": [{"version": "v1beta1"}], "preferredVersion": {"version": "v1beta1"}},
]}
RESOURCES = {"kind": "APIResourceList", "groupVersion": f"{INFRA}/v1beta2", "resources": [
    {"name": "dockermachinetemplates", "kind": "DockerMachineTemplate", "namespaced": True},
    {"name": "dockermachinetemplates/status", "kind": "DockerMachineTemplate", "namespaced": True},
    {"name": "dockermachines", "kind": "DockerMachine", "namespaced": True},
]}
DISCOVERY = f"/apis/{INFRA}/v1beta2"
DMTS = f"/apis/{INFRA}/v1beta2/namespaces/default/dockermachinetemplates"
MD = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments/c1-md-0"
KCP = "/apis/controlplane.cluster.x-k8s.io/v1beta2/namespaces/default/kubeadmcontrolplanes/c1-control-plane"
NOT_FOUND = {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404, "message": "not found"}


class FakeModule(ModuleStandIn):
    _name = "capi_machine_template"
    DEFAULTS = dict({key: value.get("default") for key, value in args.AUTH_ARG_SPEC.items()},
                    namespace="default", source=None, from_object=None, overrides={}, name=None, labels=None,
                    annotations=None, force=False)


@pytest.fixture
def conn(monkeypatch):
    fake = FakeConnection()
    monkeypatch.setattr(flow_run, "Connection", lambda params, module_name=None: fake)
    return fake


def dmt(name="c1-md-0-a1b2c", version="v1beta2", spec=None, labels=None, annotations=None):
    meta = {"name": name, "namespace": "default", "uid": "u-1", "resourceVersion": "10",
            "labels": {"cluster.x-k8s.io/cluster-name": "c1"} if labels is None else labels,
            "managedFields": [{"manager": "x"}]}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": f"{INFRA}/{version}", "kind": "DockerMachineTemplate", "metadata": meta,
            "spec": {"template": {"spec": {"customImage": "kindest/node:v1.30.4"} if spec is None else spec}}}


def md(infra_ref, labels=None):
    return {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": "c1-md-0", "namespace": "default", "labels": labels or {}},
            "spec": {"clusterName": "c1", "template": {"spec": {"clusterName": "c1", "infrastructureRef": infra_ref}}}}


def run(module):
    with pytest.raises(Exit) as done:
        machine_template.run_machine_template(module)
    return done.value


def sent(conn):
    return [(entry["method"], entry["path"]) for entry in conn.sent]


OVERRIDES = {"customImage": "kindest/node:v1.31.0"}


def expected_name(source=None, overrides=None):
    return tc.plan_clone(source or dmt(), OVERRIDES if overrides is None else overrides)["name"]


def created(body):
    out = copy.deepcopy(body)
    out["metadata"].update({"uid": "u-2", "resourceVersion": "11"})
    return out


def script_from_md(conn, target_status=404, target_body=None):
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", MD, body=md({"apiGroup": INFRA, "kind": "DockerMachineTemplate", "name": "c1-md-0-a1b2c"}))
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", f"{DMTS}/c1-md-0-a1b2c", body=dmt())
    name = expected_name()
    conn.add("GET", f"{DMTS}/{name}", status=target_status, body=target_body if target_body is not None else NOT_FOUND)
    return name


def dry_run_then_create(conn, answer):
    """The create's answer twice: to the dry run, then to the create."""
    conn.add("POST", DMTS, status=201, body=answer)
    conn.add("POST", DMTS, status=201, body=answer)


def test_clone_from_machine_deployment_creates_with_seven_requests(conn):
    name = script_from_md(conn)
    plan_object = tc.plan_clone(dmt(), OVERRIDES)["object"]
    dry_run_then_create(conn, created(plan_object))
    done = run(FakeModule(from_object={"kind": "md", "name": "c1-md-0"}, overrides=OVERRIDES))
    assert not done.failed, done.result["msg"]
    res = done.result
    assert res["changed"] is True and res["created"] is True
    assert res["infrastructure_ref"] == {"api_group": INFRA, "kind": "DockerMachineTemplate", "name": name}
    assert res["source_ref"]["name"] == "c1-md-0-a1b2c"
    assert res["source_ref"]["from_object"] == "machinedeployment/default/c1-md-0"
    assert res["template"]["metadata"]["uid"] == "u-2" and "managedFields" not in res["template"]["metadata"]
    assert res["changes"] == [{"path": "spec.template.spec.customImage", "before": "kindest/node:v1.30.4",
                               "after": "kindest/node:v1.31.0"}]
    assert "diff" not in res
    assert sent(conn) == [("GET", "/apis"), ("GET", MD), ("GET", DISCOVERY), ("GET", f"{DMTS}/c1-md-0-a1b2c"),
                          ("GET", f"{DMTS}/{name}"), ("POST", DMTS), ("POST", DMTS)]
    assert [entry["query"] for entry in conn.sent[-2:]] == [DRY_RUN, WRITE]
    assert res["api_requests"] == 7
    assert conn.sent[-1]["body"] == conn.sent[-2]["body"] == plan_object


def test_check_mode_sends_the_create_as_a_dry_run_and_shows_the_diff(conn):
    name = script_from_md(conn)
    answer = created(tc.plan_clone(dmt(), OVERRIDES)["object"])
    answer["metadata"]["creationTimestamp"] = "2026-12-02T05:00:00Z"
    conn.add("POST", DMTS, status=201, body=answer)
    done = run(FakeModule(check_mode=True, diff=True, from_object={"name": "c1-md-0"}, overrides=OVERRIDES))
    res = done.result
    assert not done.failed and res["changed"] is True and res["created"] is True
    writes = [entry for entry in conn.sent if entry["method"] != "GET"]
    assert [(entry["method"], entry["query"]) for entry in writes] == [("POST", DRY_RUN)]
    # The template returned is the API server's answer to the dry run.
    assert res["template"]["metadata"]["name"] == name
    assert res["template"]["metadata"]["creationTimestamp"] == "2026-12-02T05:00:00Z"
    assert res["diff"]["before"] == "" and f"name: \"{name}\"" in res["diff"]["after"]
    assert "would be created" in res["message"]


def test_existing_target_with_same_spec_is_unchanged(conn):
    existing = created(tc.plan_clone(dmt(), OVERRIDES)["object"])
    script_from_md(conn, target_status=200, target_body=existing)
    done = run(FakeModule(diff=True, from_object={"name": "c1-md-0"}, overrides=OVERRIDES))
    assert not done.failed and done.result["changed"] is False and done.result["created"] is False
    assert "diff" not in done.result
    assert "POST" not in [method for method, _path in sent(conn)]
    assert done.result["api_requests"] == 5


def test_existing_target_with_other_spec_fails_with_nothing_written(conn):
    existing = created(tc.plan_clone(dmt(), OVERRIDES)["object"])
    existing["spec"]["template"]["spec"]["customImage"] = "kindest/node:v1.29.0"
    name = script_from_md(conn, target_status=200, target_body=existing)
    done = run(FakeModule(from_object={"name": "c1-md-0"}, overrides=OVERRIDES))
    assert done.failed
    assert done.result["msg"].startswith(f"dockermachinetemplate/default/{name}: already exists with a different spec")
    assert done.result["reason"] == "template_conflict" and "set name to a new template name" in done.result["msg"]
    assert done.result["changed"] is False
    assert "POST" not in [method for method, _path in sent(conn)]


def test_source_with_api_version_needs_no_group_list(conn):
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", f"{DMTS}/c1-md-0-a1b2c", body=dmt())
    conn.add("GET", f"{DMTS}/new", status=404, body=NOT_FOUND)
    conn.add("POST", DMTS, status=201, body=created(tc.plan_clone(dmt(), OVERRIDES, name="new")["object"]))
    done = run(FakeModule(check_mode=True, name="new", overrides=OVERRIDES,
                          source={"name": "c1-md-0-a1b2c", "kind": "DockerMachineTemplate", "api_version": f"{INFRA}/v1beta2",
                                  "api_group": None}))
    assert not done.failed, done.result["msg"]
    assert sent(conn) == [("GET", DISCOVERY), ("GET", f"{DMTS}/c1-md-0-a1b2c"), ("GET", f"{DMTS}/new"), ("POST", DMTS)]


def test_source_with_api_group_discovers_the_version(conn):
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", f"{DMTS}/c1-md-0-a1b2c", body=dmt())
    conn.add("GET", f"{DMTS}/c1-md-0-a1b2c-copy", status=404, body=NOT_FOUND)
    conn.add("POST", DMTS, status=201, body=created(tc.plan_clone(dmt(), {}, name="c1-md-0-a1b2c-copy")["object"]))
    done = run(FakeModule(check_mode=True, name="c1-md-0-a1b2c-copy",
                          source={"name": "c1-md-0-a1b2c", "kind": "DockerMachineTemplate", "api_group": None,
                                  "api_version": None}))
    assert not done.failed, done.result["msg"]
    assert sent(conn)[0] == ("GET", "/apis") and len(conn.sent) == 5


def test_v1beta1_ref_of_a_control_plane_uses_its_served_version(conn):
    apis = copy.deepcopy(APIS_V1BETA1)
    apis["groups"].append({"name": "controlplane.cluster.x-k8s.io", "versions": [{"version": "v1beta1"}],
                           "preferredVersion": {"version": "v1beta1"}})
    conn.add("GET", "/apis", body=apis)
    kcp = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
           "metadata": {"name": "c1-control-plane", "namespace": "default"},
           "spec": {"machineTemplate": {"infrastructureRef": {
               "apiVersion": f"{INFRA}/v1beta1", "kind": "DockerMachineTemplate", "name": "c1-cp-1", "namespace": "default"}}}}
    conn.add("GET", KCP.replace("v1beta2", "v1beta1"), body=kcp)
    conn.add("GET", DISCOVERY.replace("v1beta2", "v1beta1"), body=RESOURCES)
    dmts = DMTS.replace("v1beta2", "v1beta1")
    source = dmt("c1-cp-1", version="v1beta1")
    conn.add("GET", f"{dmts}/c1-cp-1", body=source)
    name = expected_name(source)
    conn.add("GET", f"{dmts}/{name}", status=404, body=NOT_FOUND)
    conn.add("POST", dmts, status=201, body=created(tc.plan_clone(source, OVERRIDES)["object"]))
    done = run(FakeModule(check_mode=True, from_object={"kind": "KubeadmControlPlane", "name": "c1-control-plane"},
                          overrides=OVERRIDES))
    assert not done.failed, done.result["msg"]
    assert done.result["template"]["apiVersion"] == f"{INFRA}/v1beta1"
    assert done.result["infrastructure_ref"]["name"] == name
    assert len(conn.sent) == 6


def test_missing_source_names_the_object_and_the_machine_deployment(conn):
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", MD, body=md({"apiGroup": INFRA, "kind": "DockerMachineTemplate", "name": "gone"}))
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", f"{DMTS}/gone", status=404, body=NOT_FOUND)
    done = run(FakeModule(from_object={"name": "c1-md-0"}))
    assert done.failed and done.result["reason"] == "source_not_found"
    assert done.result["msg"].startswith("dockermachinetemplate/default/gone: DockerMachineTemplate default/gone "
                                         "(the infrastructure template of machinedeployment/default/c1-md-0) does not exist")


def test_missing_machine_deployment(conn):
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", MD, status=404, body=NOT_FOUND)
    done = run(FakeModule(from_object={"name": "c1-md-0"}))
    assert done.failed and done.result["msg"].startswith("machinedeployment/default/c1-md-0: MachineDeployment")
    assert done.result["reason"] == "not_found"


def test_unknown_kind_lists_the_served_kinds(conn):
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", DISCOVERY, body=RESOURCES)
    done = run(FakeModule(source={"name": "x", "kind": "AWSMachineTemplate", "api_group": INFRA, "api_version": None}))
    assert done.failed and done.result["reason"] == "kind_not_served"
    assert "DockerMachineTemplate" in done.result["msg"] and done.result["msg"].startswith("awsmachinetemplate/default/x:")


def test_forbidden_create_names_the_verb_and_resource(conn):
    script_from_md(conn)
    conn.add("POST", DMTS, status=403, body={"kind": "Status", "code": 403, "reason": "Forbidden", "message": "nope"})
    done = run(FakeModule(from_object={"name": "c1-md-0"}, overrides=OVERRIDES))
    assert done.failed and done.result["reason"] == "forbidden"
    assert "cannot create dockermachinetemplates" in done.result["msg"]
    assert done.result["msg"].startswith("dockermachinetemplate/default/")


def test_concurrent_create_of_the_same_template_is_unchanged(conn):
    plan_object = tc.plan_clone(dmt(), OVERRIDES)["object"]
    name = plan_object["metadata"]["name"]
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", MD, body=md({"apiGroup": INFRA, "kind": "DockerMachineTemplate", "name": "c1-md-0-a1b2c"}))
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", f"{DMTS}/c1-md-0-a1b2c", body=dmt())
    conn.add("GET", f"{DMTS}/{name}", status=404, body=NOT_FOUND)
    conn.add("GET", f"{DMTS}/{name}", status=200, body=created(plan_object))
    conn.add("POST", DMTS, status=409, body={"kind": "Status", "code": 409, "reason": "AlreadyExists", "message": "exists"})
    done = run(FakeModule(from_object={"name": "c1-md-0"}, overrides=OVERRIDES))
    assert not done.failed, done.result["msg"]
    assert done.result["changed"] is False
    assert [m for m, _p in sent(conn)].count("POST") == 1 and conn.sent[-2]["query"] == DRY_RUN


def _clone_with_answer(conn, overrides, answer_spec):
    plan_object = tc.plan_clone(dmt(), overrides)["object"]
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", MD, body=md({"apiGroup": INFRA, "kind": "DockerMachineTemplate", "name": "c1-md-0-a1b2c"}))
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", f"{DMTS}/c1-md-0-a1b2c", body=dmt())
    conn.add("GET", f"{DMTS}/{plan_object['metadata']['name']}", status=404, body=NOT_FOUND)
    answer = created(plan_object)
    answer["spec"]["template"]["spec"] = answer_spec
    conn.add("POST", DMTS, status=201, body=answer)
    return run(FakeModule(from_object={"name": "c1-md-0"}, overrides=overrides))


def test_pruned_fields_fail_after_the_dry_run_with_nothing_written(conn):
    # The dry run's answer lacks the typo'd field: the API server prunes what the schema does not know.
    done = _clone_with_answer(conn, dict(OVERRIDES, customImag="typo"), {"customImage": "kindest/node:v1.31.0"})
    assert done.failed and done.result["reason"] == "pruned_fields"
    assert "drops spec.template.spec.customImag" in done.result["msg"] and "kubectl explain" in done.result["msg"]
    posts = [entry for entry in conn.sent if entry["method"] == "POST"]
    assert [entry["query"] for entry in posts] == [DRY_RUN]


def test_overrides_that_change_nothing_fail_with_nothing_written(conn):
    # The override repeats the source's value: the clone would be identical and replace every Machine.
    done = _clone_with_answer(conn, {"customImage": "kindest/node:v1.30.4"}, {"customImage": "kindest/node:v1.30.4"})
    assert done.failed and done.result["reason"] == "no_effect", done.result
    assert "dockermachinetemplate/default/c1-md-0-a1b2c" in done.result["msg"] and "change nothing" in done.result["msg"]
    assert [entry["query"] for entry in conn.sent if entry["method"] == "POST"] == [DRY_RUN]


def test_no_overrides_make_a_plain_copy(conn):
    done = _clone_with_answer(conn, {}, {"customImage": "kindest/node:v1.30.4"})
    assert not done.failed and done.result["created"] is True, done.result


def test_topology_owned_machine_deployment_is_refused(conn):
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", MD, body=md({"apiGroup": INFRA, "kind": "DockerMachineTemplate", "name": "c1-md-0-a1b2c"},
                                labels={"topology.cluster.x-k8s.io/owned": ""}))
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", f"{DMTS}/c1-md-0-a1b2c", body=dmt())
    done = run(FakeModule(from_object={"name": "c1-md-0"}, overrides=OVERRIDES))
    assert done.failed and done.result["reason"] == "topology_owned"
    assert "machinedeployment/default/c1-md-0" in done.result["msg"]
    assert len(conn.sent) == 4


# ----- objects: many clones in one call -----

MDS = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments"


def md_named(name, template):
    out = md({"apiGroup": INFRA, "kind": "DockerMachineTemplate", "name": template})
    out["metadata"]["name"] = name
    return out


def script_objects(conn, overrides1=None):
    """Two MachineDeployments with their own templates, read by list; returns the two plans."""
    sources = [dmt("c1-md-0-a1b2c"), dmt("c1-md-1-d4e5f", spec={"customImage": "kindest/node:v1.30.4", "extraMounts": []})]
    conn.add("GET", "/apis", body=APIS)
    items = [md_named("c1-md-0", "c1-md-0-a1b2c"), md_named("c1-md-1", "c1-md-1-d4e5f")]
    conn.add("GET", MDS, body={"kind": "MachineDeploymentList", "items": items})
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", DMTS, body={"kind": "DockerMachineTemplateList", "items": copy.deepcopy(sources)})
    return [tc.plan_clone(sources[0], OVERRIDES), tc.plan_clone(sources[1], OVERRIDES if overrides1 is None else overrides1)]


def objects(overrides1=None, **extra):
    return [{"name": "c1-md-0", "overrides": OVERRIDES},
            dict({"kind": "md", "name": "c1-md-1", "overrides": OVERRIDES if overrides1 is None else overrides1}, **extra)]


def test_objects_are_read_by_list_checked_then_created(conn):
    plans = script_objects(conn)
    answers = [created(plan["object"]) for plan in plans]
    for answer in answers + answers:  # the two dry runs, then the two creates
        conn.add("POST", DMTS, status=201, body=answer)
    done = run(FakeModule(objects=objects()))
    assert not done.failed, done.result["msg"]
    res = done.result
    assert res["changed"] is True and "diff" not in res
    # reads independent of the number of objects, then per object a dry run; the creates only after both passed
    assert sent(conn) == [("GET", "/apis"), ("GET", MDS), ("GET", DISCOVERY), ("GET", DMTS)] + [("POST", DMTS)] * 4
    assert [entry["query"] for entry in conn.sent if entry["method"] == "POST"] == [DRY_RUN] * 2 + [WRITE] * 2
    assert [entry["body"]["metadata"]["name"] for entry in conn.sent[-2:]] == [plan["name"] for plan in plans]
    assert res["api_requests"] == 8
    assert [entry["ref"] for entry in res["results"]] == ["machinedeployment/default/c1-md-0",
                                                          "machinedeployment/default/c1-md-1"]
    for entry, plan in zip(res["results"], plans):
        assert entry["failed"] is False and entry["changed"] is True and entry["created"] is True
        assert entry["infrastructure_ref"] == {"api_group": INFRA, "kind": "DockerMachineTemplate", "name": plan["name"]}
        assert entry["source_ref"]["from_object"] == entry["ref"] and entry["hash"] == plan["hash"]
        assert entry["message"] == f"{plan['ref']} created from dockermachinetemplate/default/{plan['source_ref']['name']}"
        assert entry["template"]["metadata"]["uid"] == "u-2" and entry["warnings"] == []
        assert set(entry) == {"ref", "failed", "changed", "created", "message", "infrastructure_ref", "source_ref",
                              "template", "hash", "changes", "warnings"}


def test_objects_rerun_reads_only(conn):
    plans = script_objects(conn)
    conn.answers[("GET", DMTS)][0][1]["items"].extend(created(plan["object"]) for plan in plans)
    done = run(FakeModule(objects=objects()))
    assert not done.failed, done.result["msg"]
    assert done.result["changed"] is False and [e["created"] for e in done.result["results"]] == [False, False]
    assert sent(conn) == [("GET", "/apis"), ("GET", MDS), ("GET", DISCOVERY), ("GET", DMTS)]


def test_objects_one_failing_check_creates_nothing_and_names_it(conn):
    typo = dict(OVERRIDES, customImag="typo")
    plans = script_objects(conn, overrides1=typo)
    pruned = created(plans[1]["object"])
    del pruned["spec"]["template"]["spec"]["customImag"]
    conn.add("POST", DMTS, status=201, body=created(plans[0]["object"]))
    conn.add("POST", DMTS, status=201, body=pruned)
    done = run(FakeModule(objects=objects(overrides1=typo)))
    res = done.result
    assert done.failed and res["changed"] is False and res["reason"] == "clone_refused"
    assert res["msg"].startswith("1 of 2 object(s) could not be cloned; nothing was created: machinedeployment/default/c1-md-1: "
                                 f"dockermachinetemplate/default/{plans[1]['name']}: the API server drops "
                                 "spec.template.spec.customImag"), res["msg"]
    assert "c1-md-0:" not in res["msg"]
    # both were checked, nothing was created
    assert [entry["query"] for entry in conn.sent if entry["method"] == "POST"] == [DRY_RUN] * 2
    first, second = res["results"]
    assert first["failed"] is False and first["created"] is False and first["changed"] is False
    assert first["message"].endswith("was not created from dockermachinetemplate/default/c1-md-0-a1b2c: "
                                     "another object failed a check")
    assert second == {"ref": "machinedeployment/default/c1-md-1", "failed": True, "msg": second["msg"],
                      "reason": "pruned_fields", "hint": second["hint"]}
    assert "kubectl explain" in second["hint"]


def test_objects_missing_and_topology_owned_are_each_reported(conn):
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", MDS, body={"kind": "MachineDeploymentList", "items": [
        md_named("c1-md-0", "c1-md-0-a1b2c"), dict(md_named("c1-md-2", "c1-md-0-a1b2c"),
                                                   metadata={"name": "c1-md-2", "namespace": "default",
                                                             "labels": {"topology.cluster.x-k8s.io/owned": ""}})]})
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", DMTS, body={"kind": "DockerMachineTemplateList", "items": [dmt()]})
    conn.add("POST", DMTS, status=201, body=created(tc.plan_clone(dmt(), OVERRIDES)["object"]))
    done = run(FakeModule(objects=[{"name": "c1-md-0", "overrides": OVERRIDES}, {"name": "gone"},
                                   {"name": "c1-md-2", "overrides": OVERRIDES}]))
    res = done.result
    assert done.failed and res["msg"].startswith("2 of 3 object(s) could not be cloned; nothing was created: "
                                                 "machinedeployment/default/gone: ")
    assert " | machinedeployment/default/c1-md-2: " in res["msg"]
    assert [entry.get("reason") for entry in res["results"]] == [None, "not_found", "topology_owned"]
    # one list of the MachineDeployments and one of the templates for all three
    assert [method for method, _path in sent(conn)].count("GET") == 4


def test_objects_check_mode_sends_only_dry_runs_and_a_diff_per_template(conn):
    plans = script_objects(conn)
    for plan in plans:
        conn.add("POST", DMTS, status=201, body=created(plan["object"]))
    done = run(FakeModule(check_mode=True, diff=True, objects=objects()))
    res = done.result
    assert not done.failed and res["changed"] is True, res.get("msg")
    assert [entry["query"] for entry in conn.sent if entry["method"] == "POST"] == [DRY_RUN] * 2
    assert [entry["created"] for entry in res["results"]] == [True, True]
    assert all("would be created" in entry["message"] for entry in res["results"])
    assert [diff["after_header"] for diff in res["diff"]] == [f"{plan['ref']} (new)" for plan in plans]


def test_objects_a_failed_create_does_not_stop_the_others(conn):
    plans = script_objects(conn)
    conn.add("POST", DMTS, status=201, body=created(plans[0]["object"]))
    conn.add("POST", DMTS, status=201, body=created(plans[1]["object"]))
    conn.add("POST", DMTS, status=403, body={"kind": "Status", "code": 403, "reason": "Forbidden", "message": "nope"})
    conn.add("POST", DMTS, status=201, body=created(plans[1]["object"]))
    done = run(FakeModule(objects=objects()))
    res = done.result
    assert done.failed and res["changed"] is True and res["reason"] == "create_failed"
    assert res["msg"].startswith("1 of 2 object(s) could not be cloned; 1 template(s) were created: "
                                 "machinedeployment/default/c1-md-0: ")
    assert [entry["failed"] for entry in res["results"]] == [True, False]
    assert res["results"][0]["reason"] == "forbidden" and res["results"][1]["created"] is True
    assert len([entry for entry in conn.sent if entry["method"] == "POST" and entry["query"] == WRITE]) == 2


def test_objects_warnings_are_prefixed_with_the_object(conn):
    conn.add("GET", "/apis", body=APIS)
    conn.add("GET", MDS, body={"kind": "MachineDeploymentList", "items": [
        dict(md_named("c1-md-0", "c1-md-0-a1b2c"), metadata={"name": "c1-md-0", "namespace": "default",
                                                             "labels": {"topology.cluster.x-k8s.io/owned": ""}})]})
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", DMTS, body={"kind": "DockerMachineTemplateList", "items": [dmt()]})
    conn.add("POST", DMTS, status=201, body=created(tc.plan_clone(dmt(), OVERRIDES)["object"]))
    module = FakeModule(check_mode=True, force=True, objects=[{"name": "c1-md-0", "overrides": OVERRIDES}])
    done = run(module)
    assert not done.failed, done.result["msg"]
    (entry,) = done.result["results"]
    assert entry["warnings"] and "force is set" in entry["warnings"][0]
    assert module.warnings == [f"machinedeployment/default/c1-md-0: {entry['warnings'][0]}"]


@pytest.mark.parametrize("params, words", [
    ({"objects": []}, "objects is empty: no object is selected"),
    ({"labels": {"a": "b"}}, "labels cannot be given with objects: give them per object (objects[].labels)"),
    ({"annotations": {}}, "annotations cannot be given with objects"),
    ({"overrides": OVERRIDES}, "overrides cannot be given with objects"),
    ({"from_object": {"name": "c1-md-0"}}, "objects cannot be combined with from_object"),
    ({"name": "x", "source": {"name": "s", "kind": "DockerMachineTemplate"}}, "objects cannot be combined with source, name"),
])
def test_objects_refused_combinations_before_any_request(conn, params, words):
    done = run(FakeModule(**dict({"objects": [{"name": "c1-md-0"}]}, **params)))
    assert done.failed and done.result["reason"] == "invalid_input" and done.result["api_requests"] == 0
    assert words in done.result["msg"] and done.result["msg"].endswith("; nothing was changed")
    assert conn.sent == []


@pytest.mark.parametrize("params, error", [
    ({"objects": [{"name": "a"}], "from_object": {"name": "b"}}, "mutually exclusive: source|from_object|objects"),
    ({"objects": [{"name": "a"}], "name": "x"}, "mutually exclusive: objects|name"),
    ({"objects": [{"kind": "kcp"}]}, "missing required arguments: name found in objects"),
    ({}, "one of the following is required: source, from_object, objects"),
    ({"objects": [{"name": "a"}]}, None),
])
def test_objects_argument_spec(monkeypatch, params, error):
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    from ansible_collections.capi.rollout.plugins.modules import capi_machine_template as module_file
    made = {}

    def capture(**kwargs):
        made.update(kwargs)
        raise Exit({}, False)

    monkeypatch.setattr(module_file, "RolloutModule", capture)
    with pytest.raises(Exit):
        module_file.main()
    made.pop("supports_check_mode")
    result = ArgumentSpecValidator(made.pop("argument_spec"), **made).validate(params)
    messages = [str(err) for err in result.errors]
    if error is None:
        assert not messages
        assert result.validated_parameters["objects"] == [{"kind": "MachineDeployment", "name": "a", "namespace": None,
                                                           "overrides": {}, "labels": None, "annotations": None}]
    else:
        assert any(error in message for message in messages), messages


def test_objects_sharing_a_template_create_it_once(conn):
    # MachineDeployments of one cluster often share a template: the same clone; the second create meets the
    # first (409 AlreadyExists), reads it fresh and finds the same content.
    plan = tc.plan_clone(dmt(), OVERRIDES)
    conn.add("GET", "/apis", body=APIS)
    items = [md_named("c1-md-0", "c1-md-0-a1b2c"), md_named("c1-md-1", "c1-md-0-a1b2c")]
    conn.add("GET", MDS, body={"kind": "MachineDeploymentList", "items": items})
    conn.add("GET", DISCOVERY, body=RESOURCES)
    conn.add("GET", DMTS, body={"kind": "DockerMachineTemplateList", "items": [dmt()]})
    for _dry_run in range(3):
        conn.add("POST", DMTS, status=201, body=created(plan["object"]))
    conn.add("POST", DMTS, status=409, body={"kind": "Status", "code": 409, "reason": "AlreadyExists", "message": "exists"})
    conn.add("GET", f"{DMTS}/{plan['name']}", body=created(plan["object"]))
    done = run(FakeModule(objects=[{"name": "c1-md-0", "overrides": OVERRIDES}, {"name": "c1-md-1", "overrides": OVERRIDES}]))
    assert not done.failed, done.result["msg"]
    assert [entry["created"] for entry in done.result["results"]] == [True, False]
    assert "already exists with the same spec" in done.result["results"][1]["message"]
    assert {entry["infrastructure_ref"]["name"] for entry in done.result["results"]} == {plan["name"]}
    assert sent(conn)[-1] == ("GET", f"{DMTS}/{plan['name']}")
