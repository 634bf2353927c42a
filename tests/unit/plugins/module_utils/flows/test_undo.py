# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_rollout_undo's flow and capi_rollout_info history against a scripted API: what is read
(and how often), the refusals that need the control plane or the templates, nothing written on a
refusal."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import history
from ansible_collections.capi.rollout.plugins.module_utils.flows import run as flow_run
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import DRY_RUN, FakeConnection
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.flows.test_change import (
    APIS, CLUSTERS, MDS, FakeModule, md_list, run,
)
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

MSS = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinesets"
KCPS = "/apis/controlplane.cluster.x-k8s.io/v1beta2/namespaces/default/kubeadmcontrolplanes"
MACHINES = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines"
DMTS = "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/default/dockermachinetemplates"
KCTS = "/apis/bootstrap.cluster.x-k8s.io/v1beta2/namespaces/default/kubeadmconfigtemplates"
HISTORY = "rollout.capi-rollout.dev/history"
GROUPS = copy.deepcopy(APIS)
GROUPS["groups"] += [
    {"name": "infrastructure.cluster.x-k8s.io", "versions": [{"version": "v1beta2"}], "preferredVersion": {"version": "v1beta2"}},
    {"name": "bootstrap.cluster.x-k8s.io", "versions": [{"version": "v1beta2"}], "preferredVersion": {"version": "v1beta2"}},
]


class UndoModule(FakeModule):
    _name = "capi_rollout_undo"

    def __init__(self, **params):
        params.setdefault("to_revision", 0)
        params.setdefault("history_limit", 10)
        super(UndoModule, self).__init__(**params)


@pytest.fixture
def conn(monkeypatch):
    fake = FakeConnection()
    fake.add("GET", "/apis", body=GROUPS)
    monkeypatch.setattr(flow_run, "Connection", lambda params, module_name=None: fake)
    monkeypatch.setenv("JOB_ID", "4711")
    monkeypatch.setenv("AWX_HOST", "awx.example.com")
    return fake


def _cluster():
    cluster = objs.cluster()
    cluster["spec"]["controlPlaneRef"] = {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane",
                                          "name": "c1-cp"}
    return cluster


def _scene(conn, kcp_version="v1.30.2", templates=("md-0-infra-v1",), md=None):
    """MD at revision 2 (infra v2), MachineSets of revision 2 and 1 (infra v1), Cluster -> KCP."""
    md = md or objs.machine_deployment(infra="md-0-infra-v2", revision="2")
    sets = [objs.machine_set(suffix="bbbbb", revision="2", infra="md-0-infra-v2"),
            objs.machine_set(suffix="aaaaa", revision="1", infra="md-0-infra-v1", replicas=0)]
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=_cluster())
    conn.add("GET", MSS, body={"items": sets})
    conn.add("GET", KCPS + "/c1-cp", body=objs.kubeadm_control_plane(k8s_version=kcp_version))
    conn.add("GET", DMTS, body={"items": [{"metadata": {"name": name, "namespace": "default"}} for name in templates]})
    conn.add("GET", KCTS, body={"items": [{"metadata": {"name": "md-0-bootstrap", "namespace": "default"}}]})
    conn.add("PATCH", MDS + "/md-0", body=md)
    return md, sets


def _patches(conn):
    """PATCH requests that write (not server-side dry runs)."""
    return [s for s in conn.sent if s["method"] == "PATCH" and s["query"].get("dryRun") != "All"]


def test_undo_reads_a_constant_set_and_writes_one_patch(conn):
    md, _sets = _scene(conn)
    out = run(UndoModule(name="md-0", reason="bad image"), verb="undo")
    assert not out.failed, out.result
    (entry,) = out.result["objects"]
    assert entry["action"] == "rolled_back"
    assert (entry["from_revision"], entry["to_revision"], entry["history_revision"]) == (2, 1, 3)
    assert entry["target_source"] == "machineset" and entry["target_machine_set"] == "md-0-aaaaa"
    assert [(s["method"], s["path"]) for s in conn.sent] == [
        ("GET", "/apis"), ("GET", MDS), ("GET", CLUSTERS + "/c1"), ("GET", MSS), ("GET", KCPS + "/c1-cp"),
        ("GET", KCTS), ("GET", DMTS), ("PATCH", MDS + "/md-0")]
    assert out.result["api_requests"] == 8
    assert conn.sent[6]["query"]["fieldSelector"] == "metadata.name=md-0-infra-v1"
    patch = _patches(conn)[0]["body"]
    assert _patches(conn)[0]["content_type"] == "application/json-patch+json"
    assert [op for op in patch if op["op"] != "test" and op["path"].startswith("/spec")] == [
        {"op": "replace", "path": "/spec/template/spec/infrastructureRef/name", "value": "md-0-infra-v1"}]
    # guarded by the template it was planned from, not by the resourceVersion
    assert {"op": "test", "path": "/spec/template/spec/infrastructureRef",
            "value": md["spec"]["template"]["spec"]["infrastructureRef"]} in patch
    assert not [op for op in patch if op["path"].startswith("/metadata/resourceVersion")]
    (recorded,) = json.loads(objs.apply_json_patch(md, patch)["metadata"]["annotations"][HISTORY])
    assert recorded["actor"] == "awx-job/4711 (awx.example.com)" and recorded["to_revision"] == 1
    assert recorded["reason"] == "bad image"


def test_check_mode_and_diff_write_nothing(conn):
    _scene(conn)
    out = run(UndoModule(name="md-0", check_mode=True, diff=True), verb="undo")
    assert not out.failed, out.result
    assert out.result["changed"] is True and not _patches(conn)
    assert [s["query"] for s in conn.sent if s["method"] == "PATCH"] == [DRY_RUN]
    assert "md-0-infra-v1" in out.result["diff"][0]["after"] and "md-0-infra-v2" in out.result["diff"][0]["before"]


def test_a_plain_kubeadm_control_plane_is_refused_after_its_reads_before_any_write(conn):
    """Whether a Cluster topology manages it (and its history records a change there) needs the KCP and its Cluster."""
    conn.add("GET", KCPS, body={"items": [objs.kubeadm_control_plane()]})
    conn.add("GET", CLUSTERS + "/c1", body=_cluster())
    out = run(UndoModule(kind="kcp", name="c1-cp"), verb="undo")
    assert out.failed and out.result["reason"] == "control_plane_undo"
    assert "downgrades are unsupported" in out.result["msg"]
    assert out.result["msg"].startswith("kubeadmcontrolplane/default/c1-cp: ")
    assert [(s["method"], s["path"]) for s in conn.sent] == [("GET", "/apis"), ("GET", KCPS), ("GET", CLUSTERS + "/c1")]


def test_another_kind_is_refused_before_any_request(conn):
    out = run(UndoModule(kind="MachineSet", name="c1-md-0-aaaaa"), verb="undo")
    assert out.failed and out.result["reason"] == "invalid_kind"
    assert conn.sent == [] and out.result["api_requests"] == 0


def test_a_missing_template_is_named_and_nothing_is_written(conn):
    _scene(conn, templates=())
    out = run(UndoModule(name="md-0", force=True), verb="undo")
    assert out.failed and out.result["reason"] == "template_missing"
    assert "DockerMachineTemplate default/md-0-infra-v1" in out.result["msg"]
    assert not _patches(conn)


@pytest.mark.parametrize("kcp_version", ["v1.29.4", "v1.34.0"])
def test_version_skew_against_the_control_plane_needs_force(conn, kcp_version):
    _scene(conn, kcp_version=kcp_version)
    out = run(UndoModule(name="md-0"), verb="undo")
    assert out.failed and out.result["reason"] == "version_skew"
    assert kcp_version in out.result["msg"] and not _patches(conn)
    forced = run(UndoModule(name="md-0", force=True), verb="undo")
    assert not forced.failed, forced.result
    assert any("force=true" in w for w in forced.result["objects"][0]["warnings"])


def test_an_applied_rollout_id_reads_no_machinesets(conn):
    md = objs.machine_deployment(infra="md-0-infra-v1", revision="3")
    md["metadata"]["annotations"][HISTORY] = json.dumps([{"revision": 3, "at": objs.NOW_TEXT, "action": "rolled_back",
                                                          "rollout_id": "chg-1", "to": {"version": "v1.30.2"},
                                                          "to_revision": 1}])
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=_cluster())
    out = run(UndoModule(name="md-0", rollout_id="chg-1"), verb="undo")
    assert not out.failed, out.result
    assert out.result["changed"] is False and out.result["api_requests"] == 3


def test_missing_control_plane_is_a_warning(conn):
    _scene(conn)
    conn.answers[("GET", KCPS + "/c1-cp")] = [(404, {"reason": "NotFound"}, {}, None, (None, True))]
    out = run(UndoModule(name="md-0"), verb="undo")
    assert not out.failed, out.result
    warnings = out.result["objects"][0]["warnings"]
    assert any("c1-cp" in w and "not found" in w for w in warnings)
    assert any("skew was not checked" in w for w in warnings)


def test_an_undo_of_a_recorded_md_keeps_the_machine_counts_of_the_revision_it_leaves(conn):
    switched = objs.machine_deployment(infra="md-0-infra-v2", revision="2")
    entry = history.make_entry(2, objs.NOW_TEXT, "restarted", None, history.identity_of(switched), rollout_id="switch")
    md, _sets = _scene(conn, md=objs.annotate(switched, HISTORY, history.serialize([entry])))
    conn.add("GET", MACHINES, body={"items": [objs.machine(name="md-0-bbbbb-1", ms_name="md-0-bbbbb")]})
    out = run(UndoModule(name="md-0"), verb="undo")
    assert not out.failed, out.result
    # one list of the Machines more, only because the undo writes and the entry it leaves has no counts
    assert [(s["method"], s["path"]) for s in conn.sent][:6] == [
        ("GET", "/apis"), ("GET", MDS), ("GET", CLUSTERS + "/c1"), ("GET", MSS), ("GET", MACHINES), ("GET", KCPS + "/c1-cp")]
    recorded = json.loads(objs.apply_json_patch(md, _patches(conn)[0]["body"])["metadata"]["annotations"][HISTORY])
    assert [(e["revision"], e.get("machines")) for e in recorded] == [(2, {"replaced": 1, "updated_in_place": 0}), (3, None)]


def test_restart_records_the_actor_and_keeps_the_history_bounded(conn):
    md = objs.machine_deployment()
    md["metadata"]["annotations"][HISTORY] = json.dumps(
        [{"revision": n, "at": objs.NOW_TEXT, "action": "restarted", "to": {"version": "v1.30.2"}} for n in range(1, 4)])
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", MSS, body={"items": []})
    conn.add("PATCH", MDS + "/md-0", body=md)
    out = run(FakeModule(name="md-0", history_limit=2))
    assert not out.failed, out.result
    assert out.result["api_requests"] == 5  # with the MachineSets a restart now reads
    entries = json.loads(objs.apply_json_patch(md, _patches(conn)[0]["body"])["metadata"]["annotations"][HISTORY])
    assert [e["revision"] for e in entries] == [3, 4]
    assert entries[-1]["actor"] == "awx-job/4711 (awx.example.com)"
    assert out.result["objects"][0]["history_revision"] == 4


def _dmt(name, image):
    return {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerMachineTemplate",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"template": {"spec": {"customImage": image}}}}


def test_info_history_costs_one_list_per_kind_and_revision_shows_one(conn):
    md = objs.machine_deployment(infra="md-0-infra-v2", revision="2")
    sets = [objs.machine_set(suffix="bbbbb", revision="2", infra="md-0-infra-v2"),
            objs.machine_set(suffix="aaaaa", revision="1", infra="md-0-infra-v1", replicas=0)]
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", MSS, body={"items": sets})
    conn.add("GET", DMTS, body={"items": [_dmt("md-0-infra-v1", "img:1"), _dmt("md-0-infra-v2", "img:2")]})
    conn.add("GET", KCTS, body={"items": []})
    made = objs.machine(name="md-0-bbbbb-new", ms_name="md-0-bbbbb")
    moved = objs.machine(name="md-0-aaaaa-old", ms_name="md-0-bbbbb")
    moved["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"  # before its MachineSet: moved in, updated in place
    conn.add("GET", MACHINES, body={"items": [made, moved]})
    out = run(FakeModule(history=True, revision=None), verb="info")
    assert not out.failed, out.result
    # MachineDeployments, Cluster, MachineSets, Machines, one list per template kind (the discovery fake is not counted)
    assert out.result["api_requests"] == 7
    (entry,) = out.result["resources"]
    assert [(r["revision"], r["current"], r["source"]) for r in entry["history"]] == [(2, True, "machineset"),
                                                                                      (1, False, "machineset")]
    assert [(r["machine_counts"], r["machines_source"], r["machines"]) for r in entry["history"]] == [
        ({"replaced": 1, "updated_in_place": 1}, "machines", "1 replaced, 1 updated in place"),
        ({"replaced": 0, "updated_in_place": 0}, "machines", "none")]
    assert entry["history"][0]["changes"] == [
        {"path": "infrastructure_ref.name", "before": "md-0-infra-v1", "after": "md-0-infra-v2"},
        {"path": "infrastructure_template.spec.template.spec.customImage", "before": "img:1", "after": "img:2"}]
    assert [n for n in entry["history"][0]["change_notes"] if "KubeadmConfigTemplate" in n]  # the bootstrap template is gone
    assert "machine_sets" not in entry
    one = run(FakeModule(history=False, revision=1), verb="info")
    assert [r["revision"] for r in one.result["resources"][0]["history"]] == [1]
    assert one.result["resources"][0]["history"][0]["machine_set_template"]["spec"]["infrastructureRef"]["name"] == \
        "md-0-infra-v1"
    missing = run(FakeModule(revision=7), verb="info")
    assert missing.failed and missing.result["reason"] == "revision_not_found"
    assert "2 (current), 1" in missing.result["msg"]


def test_info_history_without_the_right_to_read_templates_warns_and_shows_the_rest(conn):
    md = objs.machine_deployment(infra="md-0-infra-v2", revision="2")
    conn.add("GET", MDS, body=md_list(md))
    conn.add("GET", CLUSTERS + "/c1", body=objs.cluster())
    conn.add("GET", MSS, body={"items": [objs.machine_set(suffix="bbbbb", revision="2", infra="md-0-infra-v2")]})
    conn.add("GET", KCTS, body={"items": []})
    conn.add("GET", DMTS, status=403, body={"kind": "Status", "reason": "Forbidden", "message": "forbidden", "code": 403})
    conn.add("GET", MACHINES, body={"items": []})
    module = FakeModule(history=True, revision=None)
    out = run(module, verb="info")
    assert not out.failed, out.result
    (row,) = out.result["resources"][0]["history"]
    assert row["revision"] == 2 and row["changes"] == []
    assert any("could not be read" in warning for warning in module.warnings), module.warnings
