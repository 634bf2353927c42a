"""capi_rollout_undo, the history record and capi_rollout_info history against local management
clusters (both CAPI versions), as the rollout-operator user.

The MachineDeployments live in their own namespace (team-u) of workload cluster "ua" (a
KubeadmControlPlane on v1.30.4 plus one MachineDeployment per test), created by the fixture with
the admin API, so that nothing here touches the objects of the other module tests. The version skew
cases add MachineDeployments on other Kubernetes versions to the same Cluster: its control plane is
the one they are checked against.
"""

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from capisim.audit import shape
from playbook import ANSIBLE_PLAYBOOK, REPO

pytestmark = pytest.mark.needs_controller

NS = "team-u"
CP_VERSION = "v1.30.4"
REVISION = "machinedeployment.clusters.x-k8s.io/revision"
REVISION_HISTORY = "machinedeployment.clusters.x-k8s.io/revision-history"
HISTORY = "rollout.capi-rollout.dev/history"
TOPOLOGY_OWNED = "topology.cluster.x-k8s.io/owned"
WAIT = {"wait": True, "wait_timeout": 300, "stall_timeout": 120}
MDS = ("cycle", "record", "extern", "fresh", "paused", "topo", "deleted", "dry", "bound")
SKEW = {  # rule -> (worker version, words of the refusal)
    "newer_than_control_plane": ("v1.31.0", "is a newer minor than the control plane"),
    "too_old": ("v1.26.3", "4 minors older than the control plane"),
    "kubeadm_minor_mismatch": ("v1.29.2", "is not on the control plane minor"),
}


@pytest.fixture(scope="module")
def env(capi):
    capi.add_workload("ua", NS, CP_VERSION, MDS, control_plane=True)
    for rule, (version, _words) in SKEW.items():
        capi.add_workload("ua", NS, version, [f"skew-{rule.split('_', maxsplit=1)[0]}"])
    for kind in ("KubeadmControlPlane", "MachineDeployment"):
        res = capi.run("capi_rollout_info", kind=kind, namespace=NS, **WAIT)
        assert not res.failed, res.get("msg")
    return capi


# ---------------------------------------------------------------------------------------------
# helpers


def md_of(capi, name):
    return capi.get("MachineDeployment", name, NS)


def infra_of(obj):
    return obj["spec"]["template"]["spec"]["infrastructureRef"]["name"]


def record_of(capi, name):
    return json.loads(md_of(capi, name)["metadata"].get("annotations", {}).get(HISTORY, "[]"))


def sets_of(capi, name):
    return capi.machine_sets(name, NS)


def settle(capi, name):
    """Wait until CAPI has cleaned up after a completed rollout: v1.14 deletes every old MachineSet,
    v1.10 keeps one (revisionHistoryLimit 1)."""
    keep = 1 if capi.capi_version == "v1.14" else 2
    capi.wait_for(f"old MachineSets of {name} to be cleaned up", lambda: len(sets_of(capi, name)) <= keep, 60)


def switch(capi, name, suffix, wait=True):
    """capi_rollout_restart onto a copy of the current infrastructure template; returns its name."""
    new = capi.copy_template(name, suffix, namespace=NS)
    res = capi.run("capi_rollout_restart", namespace=NS, name=name, infrastructure_ref={"name": new},
                   **(WAIT if wait else {}))
    assert not res.failed, res.get("msg")
    assert res["objects"][0]["action"] == "restarted"
    if wait:
        settle(capi, name)
    return new


# an undo of one MachineDeployment, without its wait: discovery, the MachineDeployment, its Cluster, its control plane
# (version skew), one list per template kind, the patch (docs/performance.md: 7, and the MachineSets)
UNDO_REQUESTS = [("get", "/apis"), ("list", "machinedeployments"), ("get", "clusters"), ("get", "kubeadmcontrolplanes"),
                 ("list", "dockermachinetemplates"), ("list", "kubeadmconfigtemplates"), ("patch", "machinedeployments")]


def undo(capi, name, **params):
    return capi.run("capi_rollout_undo", namespace=NS, name=name, **params)


def refused(res, reason):
    assert res.failed, res
    assert res["reason"] == reason, res.get("msg")
    assert not res.get("changed")
    return res["msg"]


def non_watch(requests):
    return [e for e in requests if e["verb"] != "watch"]


def run_looped(capi, module, params, count, pause=1):
    """One ansible-playbook run of ``module`` ``count`` times (loop_control.pause seconds apart)."""
    with tempfile.TemporaryDirectory(prefix="capi-rollout-it-") as tmp:
        out_file = Path(tmp) / "result.json"
        args = dict(params, kubeconfig="{{ capi_kubeconfig }}")
        play = [{"hosts": capi.host, "gather_facts": False, "tasks": [
            {"name": module, f"capi.rollout.{module}": args, "register": "out", "loop": list(range(count)),
             "loop_control": {"pause": pause}},
            {"name": "save", "ansible.builtin.copy": {"content": "{{ out | to_json }}", "dest": str(out_file)}},
        ]}]
        playbook = Path(tmp) / "play.yml"
        playbook.write_text(yaml.safe_dump(play, sort_keys=False), encoding="utf-8")
        env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
        proc = subprocess.run([str(ANSIBLE_PLAYBOOK), "-i", str(capi.fleet.inventory), str(playbook)], cwd=str(REPO),
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
                              check=False)
        assert out_file.exists(), proc.stdout
        return json.loads(out_file.read_text(encoding="utf-8"))["results"]


# ---------------------------------------------------------------------------------------------
# undo: back, and back again; the record is what remains on v1.11+


def test_switch_undo_and_undo_again(env):
    capi, name = env, "ua-cycle"
    template_a = infra_of(md_of(capi, name))
    template_b = switch(capi, name, "-b")
    if capi.capi_version == "v1.14":
        assert [infra_of(ms) for ms in sets_of(capi, name).values()] == [template_b]  # A's MachineSet is gone

    mark = capi.mark()
    res = undo(capi, name, reason="bad image", environment={"JOB_ID": "77", "AWX_HOST": "awx.example.com"}, **WAIT)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["action"] == "rolled_back" and res["changed"] is True
    assert (entry["from_revision"], entry["to_revision"], entry["history_revision"]) == (2, 1, 3)
    assert entry["target_source"] == ("record" if capi.capi_version == "v1.14" else "machineset")
    assert entry["target_template"]["infrastructure_ref"]["name"] == template_a
    assert entry["status"]["rollout"]["complete"] is True
    assert entry["status"]["template"]["infrastructure_ref"]["name"] == template_a
    # labels/annotations of the template untouched
    assert all(op["path"].startswith("/spec/template/spec/") for op in entry["patch"]
               if op["op"] != "test" and op["path"].startswith("/spec/"))
    assert infra_of(md_of(capi, name)) == template_a

    requests = capi.requests(mark)
    others = non_watch(requests)
    machine_set_lists = [e for e in others if e.get("objectRef", {}).get("resource") == "machinesets"]
    # discovery, MachineDeployment, Cluster, KubeadmControlPlane, one list per template kind, patch (docs/performance.md),
    # and the Machines: the undo keeps the Machine counts of the revision it leaves (the switch's) in its entry
    sent = sorted(r for r in shape(others) if r != ("list", "machinesets"))
    assert sent == sorted(UNDO_REQUESTS + [("list", "machines")]), sent
    # the plan's MachineSet list, and the wait's (they decide completion: start, new MachineSet, end)
    assert 1 <= len(machine_set_lists) <= 4, [e["requestURI"] for e in machine_set_lists]
    assert [e["verb"] for e in others].count("patch") == 1
    for plural in ("dockermachinetemplates", "kubeadmconfigtemplates"):
        assert len([e for e in others if e.get("objectRef", {}).get("resource") == plural]) == 1
    assert res["api_requests"] == len(requests)

    record = record_of(capi, name)
    assert [(e["revision"], e["action"]) for e in record] == [(2, "restarted"), (3, "rolled_back")]
    assert record[-1]["to_revision"] == 1 and record[-1]["reason"] == "bad image"
    assert record[-1]["actor"] == "awx-job/77 (awx.example.com)"
    assert record[-1]["from"]["infrastructureRef"]["name"] == template_b
    assert record[-1]["to"]["infrastructureRef"]["name"] == template_a

    settle(capi, name)
    if capi.capi_version == "v1.10":
        reused = [ms for ms in sets_of(capi, name).values() if infra_of(ms) == template_a]
        assert len(reused) == 1 and reused[0]["metadata"]["annotations"][REVISION] == "3"
        assert reused[0]["metadata"]["annotations"][REVISION_HISTORY] == "1"
    again = undo(capi, name, **WAIT)
    assert not again.failed, again.get("msg")
    (entry,) = again["objects"]
    assert (entry["from_revision"], entry["to_revision"], entry["history_revision"]) == (3, 2, 4)
    assert entry["target_source"] == ("record" if capi.capi_version == "v1.14" else "machineset")
    assert infra_of(md_of(capi, name)) == template_b
    assert entry["status"]["rollout"]["complete"] is True


def test_to_revision_known_only_from_the_record_and_history_info(env):
    capi, name = env, "ua-record"
    template_a = infra_of(md_of(capi, name))
    template_b = switch(capi, name, "-b")
    template_c = switch(capi, name, "-c")

    mark = capi.mark()
    info = capi.run("capi_rollout_info", namespace=NS, history=True)
    assert not info.failed, info.get("msg")
    # discovery, MachineDeployments, Clusters, MachineSets, Machines (how each revision's Machines changed), one list per
    # template kind (infrastructure, bootstrap) for what changed between revisions (docs/performance.md: 7)
    sent = shape(capi.requests(mark))
    assert sent == [("get", "/apis"), ("list", "machinedeployments"), ("get", "clusters"), ("list", "machinesets"),
                    ("list", "machines"), ("list", "kubeadmconfigtemplates"), ("list", "dockermachinetemplates")], sent
    (entry,) = [r for r in info["resources"] if r["name"] == name]
    rows = entry["history"]
    assert [r["revision"] for r in rows] == [3, 2, 1]  # newest first
    assert [r["current"] for r in rows] == [True, False, False]
    assert [r["template"]["infrastructure_ref"]["name"] for r in rows] == [template_c, template_b, template_a]
    sources = ["both", "record", "record"] if capi.capi_version == "v1.14" else ["both", "both", "record"]
    assert [r["source"] for r in rows] == sources
    assert [r["action"] for r in rows] == ["restarted", "restarted", None]
    assert rows[0]["machine_set"] and rows[0]["replicas"] == 1 and rows[0]["time"].endswith("Z")
    assert rows[2]["machine_set"] is None and rows[2]["replicas"] is None
    assert all(set(r) >= {"revision", "current", "source", "template", "time", "reason", "rollout_id"} for r in rows)

    detail = capi.run("capi_rollout_info", namespace=NS, name=name, revision=3)
    assert not detail.failed, detail.get("msg")
    (row,) = detail["resources"][0]["history"]
    assert row["revision"] == 3 and row["record"]["action"] == "restarted"
    assert row["replaced"]["infrastructure_ref"]["name"] == template_b
    assert row["machine_set_template"]["spec"]["infrastructureRef"]["name"] == template_c
    assert "machine-template-hash" not in row["machine_set_template"]["metadata"].get("labels", {})
    oldest = capi.run("capi_rollout_info", namespace=NS, name=name, revision=1)
    (row,) = oldest["resources"][0]["history"]
    assert row["source"] == "record" and row["template"]["infrastructure_ref"]["name"] == template_a
    unknown = capi.run("capi_rollout_info", namespace=NS, name=name, revision=9)
    assert refused(unknown, "revision_not_found")
    assert "revisions that exist: 3 (current), 2" in unknown["msg"]

    mark = capi.mark()
    missing = undo(capi, name, to_revision=9)
    msg = refused(missing, "revision_not_found")
    assert "unable to find specified MachineDeployment revision: 9" in msg
    assert "revisions that exist: 3 (current), 2" in msg and "1 (record only)" in msg
    assert not capi.writes(mark)

    res = undo(capi, name, to_revision=1, **WAIT)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["to_revision"] == 1 and entry["target_source"] == "record"
    assert infra_of(md_of(capi, name)) == template_a
    assert entry["status"]["rollout"]["complete"] is True


# ---------------------------------------------------------------------------------------------
# clusterctl's rollback cases (reference 4.8), black-box


def test_clusterctl_cases_without_history(env):
    capi, name = env, "ua-fresh"
    mark = capi.mark()
    msg = refused(undo(capi, name), "no_history")
    assert "no rollout history found for MachineDeployment" in msg and "revisions that exist: 1 (current)" in msg
    msg = refused(undo(capi, name, to_revision=999), "revision_not_found")
    assert "unable to find specified MachineDeployment revision: 999" in msg
    msg = refused(undo(capi, name, to_revision=-1), "invalid_revision")
    assert "revision number cannot be negative: -1" in msg
    assert not capi.writes(mark)


def test_clusterctl_case_of_a_change_made_outside_the_collection(env):
    """A kubectl edit of version and infrastructureRef: v1.10 still has revision 1's MachineSet and
    rolls back to it, reusing it (clusterctl's case 1); v1.14 deleted it and nothing recorded it."""
    capi, name = env, "ua-extern"
    before = md_of(capi, name)
    template_a = infra_of(before)
    template_b = capi.copy_template(name, "-b", namespace=NS)
    capi.admin.patch_merge(capi.path("MachineDeployment", NS, name), {"spec": {"template": {
        "metadata": {"labels": {"team": "blue"}},
        "spec": {"version": "v1.30.5", "infrastructureRef": {"name": template_b}}}}})
    res = capi.run("capi_rollout_info", namespace=NS, name=name, **WAIT)
    assert not res.failed, res.get("msg")
    settle(capi, name)

    if capi.capi_version == "v1.14":
        mark = capi.mark()
        msg = refused(undo(capi, name), "no_history")
        assert "CAPI v1.11+ deletes old MachineSets" in msg
        msg = refused(undo(capi, name, to_revision=1), "revision_not_found")
        assert "revisions that exist: 2 (current)" in msg
        assert not capi.writes(mark)
        return
    sets_before = sets_of(capi, name)
    res = undo(capi, name, to_revision=1, **WAIT)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["target_source"] == "machineset" and entry["to_revision"] == 1
    after = md_of(capi, name)
    assert after["spec"]["template"]["spec"]["version"] == before["spec"]["template"]["spec"]["version"]
    assert infra_of(after) == template_a
    assert after["spec"]["template"]["metadata"]["labels"]["team"] == "blue"  # propagated in place, left alone
    assert set(sets_of(capi, name)) == set(sets_before)  # the old MachineSet became current again
    assert entry["status"]["rollout"]["complete"] is True


# ---------------------------------------------------------------------------------------------
# refusals


def test_paused_machinedeployment_annotation_and_cluster_are_refused(env):
    capi, name = env, "ua-paused"
    switch(capi, name, "-b", wait=False)
    assert not capi.run("capi_rollout_pause", namespace=NS, name=name, paused=True).failed
    mark = capi.mark()
    msg = refused(undo(capi, name), "paused")
    assert "spec.paused is true" in msg and "a rollback would not roll out" in msg and "capi_rollout_pause" in msg
    assert not capi.writes(mark)

    assert not capi.run("capi_rollout_pause", namespace=NS, name=name, paused=False).failed
    capi.annotate("MachineDeployment", name, "cluster.x-k8s.io/paused", "", namespace=NS)
    mark = capi.mark()
    msg = refused(undo(capi, name), "paused")
    assert "cluster.x-k8s.io/paused" in msg and "kubectl annotate" in msg
    msg = refused(capi.run("capi_rollout_undo", name="wp-md-0"), "cluster_paused")
    assert "Cluster default/wp is paused" in msg and "unpause" in msg
    assert not capi.writes(mark)


def test_a_plain_kubeadm_control_plane_is_refused_before_any_write(env):
    """Read with its Cluster (only a control plane a Cluster topology manages has an undo: its recorded topology change,
    test_topology_objects.py), then refused; a kind without undo is refused without a request."""
    capi = env
    mark = capi.mark()
    res = capi.run("capi_rollout_undo", kind="KubeadmControlPlane", namespace=NS, name="ua-control-plane")
    msg = refused(res, "control_plane_undo")
    assert msg.startswith("kubeadmcontrolplane/team-u/ua-control-plane: ")
    assert "control-plane and etcd downgrades are unsupported" in msg and "roll the control plane forward" in msg
    assert capi.requests(mark) and not capi.writes(mark)
    mark = capi.mark()
    other = capi.run("capi_rollout_undo", kind="MachineSet", namespace=NS, name="ua-control-plane")
    refused(other, "invalid_kind")
    assert other["api_requests"] == 0 and not capi.requests(mark)


def test_topology_owned_is_refused_unless_forced(env):
    capi, name = env, "ua-topo"
    msg = refused(capi.run("capi_rollout_undo", name="wt-md-0"), "topology_owned")
    assert "managed by a Cluster topology" in msg and "force=true" in msg

    template_a = infra_of(md_of(capi, name))
    switch(capi, name, "-b", wait=False)
    capi.admin.patch_merge(capi.path("MachineDeployment", NS, name), {"metadata": {"labels": {TOPOLOGY_OWNED: ""}}})
    mark = capi.mark()
    msg = refused(undo(capi, name), "topology_owned")
    assert "#8392" in msg and "spec.topology.workers.machineDeployments" in msg
    assert not capi.writes(mark)
    res = undo(capi, name, force=True)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["action"] == "rolled_back" and infra_of(md_of(capi, name)) == template_a
    assert any("topology controller reverts" in w for w in entry["warnings"])


@pytest.mark.parametrize("rule", sorted(SKEW))
def test_version_skew_against_the_control_plane_is_refused_unless_forced(env, rule):
    """Revision 1 of the MachineDeployment ran a version that breaks a skew rule against the control
    plane (v1.30.4); the current revision runs the control plane version."""
    capi = env
    version, words = SKEW[rule]
    name = f"ua-skew-{rule.split('_', maxsplit=1)[0]}"
    template_a = infra_of(md_of(capi, name))
    switch(capi, name, "-b", wait=False)
    capi.admin.patch_merge(capi.path("MachineDeployment", NS, name), {"spec": {"template": {"spec": {"version": CP_VERSION}}}})

    mark = capi.mark()
    msg = refused(undo(capi, name, to_revision=1), "version_skew")
    assert f"revision 1 breaks the Kubernetes version skew policy: version {version} " in msg
    assert words in msg and CP_VERSION in msg and "force=true" in msg
    assert not capi.writes(mark)

    res = undo(capi, name, to_revision=1, force=True)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["action"] == "rolled_back"
    assert any(w.startswith("ignored because force=true: ") and words in w for w in entry["warnings"])
    after = md_of(capi, name)
    assert after["spec"]["template"]["spec"]["version"] == version and infra_of(after) == template_a


def test_deleted_templates_are_named_and_nothing_is_written(env):
    capi, name = env, "ua-deleted"
    md = md_of(capi, name)
    template_a = infra_of(md)
    bootstrap = md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"]
    switch(capi, name, "-b")
    capi.admin.delete(capi.path("DockerMachineTemplate", NS, template_a))
    capi.admin.delete(capi.path("KubeadmConfigTemplate", NS, bootstrap))

    mark = capi.mark()
    for force in (False, True):
        msg = refused(undo(capi, name, force=force), "template_missing")
        assert f"revision 1 references DockerMachineTemplate {NS}/{template_a}, KubeadmConfigTemplate {NS}/{bootstrap}, " \
               "which no longer exist(s)" in msg
        assert "recreate the template" in msg
    requests = capi.requests(mark)
    for plural in ("dockermachinetemplates", "kubeadmconfigtemplates"):
        assert len([e for e in requests if e.get("objectRef", {}).get("resource") == plural]) == 2  # once per run
    assert not capi.writes(mark)


# ---------------------------------------------------------------------------------------------
# check mode, idempotence, the size bound of the history


def test_check_mode_writes_nothing_and_rollout_id_is_idempotent(env):
    capi, name = env, "ua-dry"
    template_a = infra_of(md_of(capi, name))
    template_b = switch(capi, name, "-b")
    md = md_of(capi, name)

    mark = capi.mark()
    res = undo(capi, name, rollout_id="undo-1", check=True, diff=True)
    assert not res.failed, res.get("msg")
    assert res["changed"] is True
    (entry,) = res["objects"]
    assert entry["action"] == "rolled_back" and entry["to_revision"] == 1
    assert {"op": "test", "path": "/spec/template/spec/infrastructureRef",
            "value": md["spec"]["template"]["spec"]["infrastructureRef"]} in entry["patch"]
    assert not [op for op in entry["patch"] if "resourceVersion" in op["path"]]
    (diff,) = res["diff"]
    assert template_b in diff["before"] and template_a in diff["after"]
    assert "new: " in diff["after"] and '"action":"rolled_back"' in diff["after"]  # history as a one-line summary
    assert not capi.writes(mark)
    assert md_of(capi, name)["metadata"]["resourceVersion"] == md["metadata"]["resourceVersion"]

    first = undo(capi, name, rollout_id="undo-1", reason="ticket")
    assert not first.failed and first["changed"] is True
    assert not capi.run("capi_rollout_restart", namespace=NS, name=name, rollout_id="undo-1").failed  # ids are per verb
    mark = capi.mark()
    again = undo(capi, name, rollout_id="undo-1")
    assert not again.failed, again.get("msg")
    assert again["changed"] is False
    assert again["objects"][0]["action"] == "unchanged" and "undo-1 was already applied" in again["objects"][0]["message"]
    assert not capi.writes(mark)
    sent = sorted(shape(capi.requests(mark)))
    assert sent == sorted(UNDO_REQUESTS[:3]), sent  # discovery, the MachineDeployment, its Cluster (docs/performance.md: 3)
    assert infra_of(md_of(capi, name)) == template_a
    assert [e["action"] for e in record_of(capi, name)] == ["restarted", "rolled_back", "restarted"]


def test_history_stays_within_history_limit(env):
    capi, name = env, "ua-bound"
    results = run_looped(capi, "capi_rollout_restart", {"namespace": NS, "name": name, "history_limit": 10}, 12)
    assert len(results) == 12
    assert all(not r.get("failed") and r["objects"][0]["action"] == "restarted" for r in results), \
        [r.get("msg") or r["objects"][0]["message"] for r in results]
    record = record_of(capi, name)
    assert len(record) == 10
    revisions = [e["revision"] for e in record]
    assert revisions == list(range(revisions[0], revisions[0] + 10)) and revisions[-1] == 13
    assert all(e["action"] == "restarted" and e.get("actor") for e in record)
    assert len(md_of(capi, name)["metadata"]["annotations"][HISTORY].encode("utf-8")) < 16 * 1024
    assert results[-1]["objects"][0]["history_revision"] == 13

    res = capi.run("capi_rollout_restart", namespace=NS, name=name, history_limit=3)
    assert not res.failed, res.get("msg")
    assert [e["revision"] for e in record_of(capi, name)] == [12, 13, 14]
    info = capi.run("capi_rollout_info", namespace=NS, name=name, history=True)
    rows = info["resources"][0]["history"]
    assert rows[0]["revision"] == 14 and rows[0]["current"] is True
    assert [r["revision"] for r in rows] == sorted((r["revision"] for r in rows), reverse=True)
