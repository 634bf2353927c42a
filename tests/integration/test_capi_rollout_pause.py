"""capi_rollout_pause, and the guards of capi_rollout_restart, against local management clusters."""

import pytest

pytestmark = pytest.mark.needs_controller

PAUSED = "cluster.x-k8s.io/paused"


def test_pause_and_resume_machinedeployment_idempotently(capi):
    mark = capi.mark()
    res = capi.run("capi_rollout_pause", name="wc-md-0", paused=True)
    assert not res.failed, res.get("msg")
    assert res["changed"] is True and res["objects"][0]["action"] == "paused"
    assert capi.get("MachineDeployment", "wc-md-0")["spec"]["paused"] is True
    assert len(capi.writes(mark)) == 1

    mark = capi.mark()
    again = capi.run("capi_rollout_pause", name="wc-md-0", paused=True)
    assert again["changed"] is False and again["objects"][0]["action"] == "unchanged"
    refused = capi.run("capi_rollout_restart", name="wc-md-0")
    assert refused.failed and refused["reason"] == "paused"
    assert refused["msg"].startswith("machinedeployment/default/wc-md-0: ")
    assert "capi_rollout_pause" in refused["msg"]
    assert not capi.writes(mark)

    res = capi.run("capi_rollout_pause", name="wc-md-0", paused=False)
    assert res["changed"] is True and res["objects"][0]["action"] == "resumed"
    assert capi.get("MachineDeployment", "wc-md-0")["spec"].get("paused") in (False, None)
    assert capi.run("capi_rollout_pause", name="wc-md-0", paused=False)["changed"] is False


def test_pause_and_resume_control_plane_with_the_annotation(capi):
    res = capi.run("capi_rollout_pause", kind="KubeadmControlPlane", name="wc-control-plane", paused=True,
                   rollout_id="freeze-1", reason="change freeze")
    assert not res.failed, res.get("msg")
    assert res["objects"][0]["action"] == "paused"
    kcp = capi.get("KubeadmControlPlane", "wc-control-plane")
    assert PAUSED in kcp["metadata"]["annotations"]
    mark = capi.mark()
    assert capi.run("capi_rollout_pause", kind="kcp", name="wc-control-plane", paused=True)["changed"] is False
    refused = capi.run("capi_rollout_restart", kind="kcp", name="wc-control-plane")
    assert refused.failed and refused["reason"] == "paused"
    assert refused["msg"].startswith("kubeadmcontrolplane/default/wc-control-plane: ")
    assert not capi.writes(mark)

    res = capi.run("capi_rollout_pause", kind="kcp", name="wc-control-plane", paused=False, diff=True)
    assert res["changed"] is True and res["objects"][0]["patch_type"] == "json"
    assert "cluster.x-k8s.io/paused" in res["diff"][0]["before"]
    assert PAUSED not in (capi.get("KubeadmControlPlane", "wc-control-plane")["metadata"].get("annotations") or {})


def test_guard_paused_annotation_on_machinedeployment(capi):
    capi.annotate("MachineDeployment", "wc-md-1", PAUSED, "true")
    try:
        mark = capi.mark()
        refused = capi.run("capi_rollout_restart", name="wc-md-1")
        assert refused.failed and refused["reason"] == "paused"
        assert PAUSED in refused["msg"]
        assert not capi.writes(mark)
    finally:
        capi.annotate("MachineDeployment", "wc-md-1", PAUSED, None)


def test_guard_paused_cluster(capi):
    mark = capi.mark()
    refused = capi.run("capi_rollout_restart", name="wp-md-0")
    assert refused.failed and refused["reason"] == "cluster_paused"
    assert refused["msg"].startswith("machinedeployment/default/wp-md-0: Cluster default/wp is paused")
    assert not capi.writes(mark)


def test_guard_future_trigger_and_force(capi):
    later = capi.utc_in(86400)
    res = capi.run("capi_rollout_restart", name="wc-md-2", after=later)
    assert res["objects"][0]["action"] == "scheduled"
    mark = capi.mark()
    refused = capi.run("capi_rollout_restart", name="wc-md-2")
    assert refused.failed and refused["reason"] == "rollout_scheduled"
    assert later in refused["msg"] and "force" in refused["msg"]
    assert capi.run("capi_rollout_restart", name="wc-md-2", after=later)["changed"] is False
    assert not capi.writes(mark)
    even_later = capi.utc_in(2 * 86400)
    res = capi.run("capi_rollout_restart", name="wc-md-2", after=even_later, force=True)
    assert res["changed"] is True and res["objects"][0]["rollout_after"] == even_later
    info = capi.run("capi_rollout_info", name="wc-md-2")["resources"][0]
    assert info["rollout"]["after"] == even_later and info["rollout"]["pending"] is True


def test_topology_owned_template_switch_refused_plain_restart_allowed(capi):
    new_template = capi.copy_template("wt-md-0", "-v2")
    mark = capi.mark()
    refused = capi.run("capi_rollout_restart", name="wt-md-0", infrastructure_ref={"name": new_template})
    assert refused.failed and refused["reason"] == "topology_owned"
    assert "topology" in refused["msg"] and refused["msg"].startswith("machinedeployment/default/wt-md-0: ")
    assert not capi.writes(mark)
    res = capi.run("capi_rollout_restart", name="wt-md-0", wait=True, wait_timeout=300, stall_timeout=120)
    assert not res.failed, res.get("msg")
    assert res["objects"][0]["action"] == "restarted"
    assert res["objects"][0]["status"]["rollout"]["complete"] is True
