# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Path (c) through the change flow against a scripted API: several MachineDeployments of one Cluster rebased in one
call send one Cluster write, and check mode does not dry-run a rebase onto a ClusterClass clone that does not exist."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import topology
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import DRY_RUN, WRITE
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_topology_rebase import TEMPLATES, _class
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.flows import test_change as change_flow

# the scripted API of the change flow's tests (a pytest fixture), and its names
conn = change_flow.conn
CLUSTERS, EXTENSION_CONFIGS, MDS = change_flow.CLUSTERS, change_flow.EXTENSION_CONFIGS, change_flow.MDS
FakeModule, md_list, run = change_flow.FakeModule, change_flow.md_list, change_flow.run

CLASSES = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusterclasses"
CLASS_TEMPLATES = "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/dockermachinetemplates"
IMAGE = "img:2"


def _cluster():
    topology = {"version": "v1.30.4", "classRef": {"name": "bare"}, "workers": {"machineDeployments": [
        {"name": "md-0", "class": "small"}, {"name": "md-1", "class": "small"}, {"name": "md-2", "class": "big"}]}}
    return objs.cluster(name="shop", topology=topology)


def _mds():
    out = []
    for name in ("md-0", "md-1"):
        md = objs.machine_deployment(name=f"shop-{name}", cluster="shop", infra=f"shop-{name}-abcde")
        md["spec"]["template"]["spec"]["infrastructureRef"] = {
            "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": f"shop-{name}-abcde"}
        md = objs.label(md, "topology.cluster.x-k8s.io/owned", "")
        out.append(objs.label(md, "topology.cluster.x-k8s.io/deployment-name", name))
    return out


def _script(conn, class_exists=False, in_place=False):
    """The reads of a rebase of shop-md-0 and shop-md-1, and the answers to its writes."""
    mds = _mds()
    conn.add("GET", "/apis/infrastructure.cluster.x-k8s.io/v1beta1", body={"resources": [
        {"name": "dockermachinetemplates", "kind": "DockerMachineTemplate", "namespaced": True}]})
    conn.add("GET", MDS, body=md_list(*mds))
    conn.add("GET", CLUSTERS + "/shop", body=_cluster())
    conn.add("GET", CLASSES + "/bare", body=_class())
    for template in TEMPLATES.values():
        conn.add("GET", f"{CLASS_TEMPLATES}/{template['metadata']['name']}", body=template)
    # with --diff, the template each MD is on now (core.topology.generated_diff), in the group's served version
    conn.add("GET", change_flow.INFRA, body={"resources": [
        {"name": "dockermachinetemplates", "kind": "DockerMachineTemplate", "namespaced": True}]})
    for md in mds:
        name = md["metadata"]["name"]
        conn.add("GET", f"{change_flow.INFRA}/namespaces/default/dockermachinetemplates/{name}-abcde",
                 body={"metadata": {"name": f"{name}-abcde"}, "spec": {"template": {"spec": {"customImage": "img:1"}}}})
    conn.add("POST", CLASS_TEMPLATES, status=201, body={"metadata": {}, "spec": {"template": {"spec": {"customImage": IMAGE}}}})
    if class_exists:
        conn.add("POST", CLASSES, status=409, body={"reason": "AlreadyExists"})
    else:
        conn.add("POST", CLASSES, status=201, body={})
    if in_place:
        # CAPI may update Machines in place (client.extensions), and the Cluster topology has rollout.after (v1.13+)
        conn.answers.pop(("GET", EXTENSION_CONFIGS))
        conn.add("GET", EXTENSION_CONFIGS, body={"items": [{"status": {"handlers": [{"requestHook": {"hook": "UpdateMachine"}}]}}]})
        conn.add("PATCH", CLUSTERS + "/shop", body=objs.cluster(topology={"controlPlane": {"rollout": {"after": "2000-01-01T00:00:00Z"}}}))
    else:
        conn.add("PATCH", CLUSTERS + "/shop", body=_cluster())
    for md in mds:
        conn.add("PATCH", f"{MDS}/{md['metadata']['name']}", body=md)
    return mds


def _switches(mds):
    return [{"name": md["metadata"]["name"], "infrastructure_ref": None, "template": {"overrides": {"customImage": IMAGE}}}
            for md in mds]


def _cluster_writes(conn):
    return [sent for sent in conn.sent if sent["method"] == "PATCH" and sent["path"] == CLUSTERS + "/shop"
            and sent["content_type"] == "application/json-patch+json"]


def test_check_mode_dry_runs_the_creates_but_not_a_rebase_onto_a_clone_that_does_not_exist(conn):
    mds = _script(conn)
    out = run(FakeModule(check_mode=True, diff=True, switches=_switches(mds), rollout_id="hw"))
    assert not out.failed, out.result
    writes = [(sent["method"], sent["path"], sent["query"]) for sent in conn.sent if sent["method"] != "GET"]
    assert writes == [("POST", CLASS_TEMPLATES, DRY_RUN), ("POST", CLASSES, DRY_RUN),
                      ("PATCH", f"{MDS}/shop-md-0", DRY_RUN), ("PATCH", f"{MDS}/shop-md-1", DRY_RUN)]
    for entry in out.result["objects"]:
        note = entry["owner"]["check_mode_note"]
        assert note.startswith("cluster/default/shop: the rebase onto ClusterClass bare-") and "not sent as a dry run" in note
        assert note in entry["warnings"]
        # what the real run would write is still shown
        assert any(op["path"] == "/spec/topology/classRef/name" for op in entry["owner"]["patch"])
    assert any("classRef" in (diff.get("after") or "") for diff in out.result["diff"]), out.result["diff"]


def test_check_mode_dry_runs_the_rebase_when_the_clone_exists(conn):
    # positive control of the test above: a re-run after the clone was made
    mds = _script(conn, class_exists=True)
    clone = topology.clone_class(_class(), "small", TEMPLATES["small"], {"customImage": IMAGE})
    conn.add("GET", f"{CLASSES}/{clone['name']}", body=clone["object"])
    out = run(FakeModule(check_mode=True, switches=_switches(mds), rollout_id="hw"))
    assert not out.failed, out.result
    (written,) = _cluster_writes(conn)
    assert written["query"] == DRY_RUN
    assert all("check_mode_note" not in entry["owner"] for entry in out.result["objects"])


@pytest.mark.parametrize("in_place", [False, True])
def test_mds_of_one_cluster_rebased_in_one_call_send_one_cluster_write(conn, in_place):
    """With in-place updates possible on v1.13+ each MD's Cluster write carries its own rollout.after: merged into one
    patch (every test first), not two writes of which the second fails the first one's class test."""
    mds = _script(conn, in_place=in_place)
    out = run(FakeModule(switches=_switches(mds), rollout_id="hw"))
    assert not out.failed, out.result
    (written,) = _cluster_writes(conn)
    assert written["query"] == WRITE
    ops = written["body"]
    kinds = [op["op"] for op in ops]
    assert kinds == sorted(kinds, key=lambda op: op != "test"), ops
    class_ops = [op for op in ops if op["path"] == "/spec/topology/classRef/name"]
    assert [op["op"] for op in class_ops] == ["test", "replace"] and class_ops[0]["value"] == "bare"
    afters = sorted(op["path"] for op in ops if op["op"] != "test" and "rollout" in op["path"])
    if in_place:
        assert afters == ["/spec/topology/workers/machineDeployments/0/rollout",
                          "/spec/topology/workers/machineDeployments/1/rollout"], ops
        assert [entry["in_place"] for entry in out.result["objects"]] == ["replace", "replace"]
    else:
        assert afters == [], ops
    # the Cluster as it becomes: on the clone, each MD's entry with its trigger
    after = objs.apply_json_patch(_cluster(), ops)
    assert after["spec"]["topology"]["classRef"]["name"] == out.result["objects"][0]["hold"]["cluster_class"]
    assert [entry["changed"] for entry in out.result["objects"]] == [True, True]
    assert [sent["path"] for sent in conn.sent if sent["method"] == "PATCH" and sent["path"].startswith(MDS)] == [
        f"{MDS}/shop-md-0", f"{MDS}/shop-md-1"]
