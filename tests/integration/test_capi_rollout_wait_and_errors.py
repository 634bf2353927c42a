"""Stall detection, wait timeout, outages and error messages against local management clusters."""

import threading
import time

import pytest

FAIL = "sim.capi-rollout.dev/fail-provisioning"


@pytest.mark.needs_controller
def test_stall_and_wait_timeout_with_a_failing_template(capi):
    broken = capi.copy_template("wf-md-0", "-broken", annotations={FAIL: "true"})
    res = capi.run("capi_rollout_restart", name="wf-md-0", infrastructure_ref={"name": broken}, wait=True,
                   wait_timeout=300, stall_timeout=15)
    assert res.failed
    assert res["reason"] == "stalled", res["msg"]
    assert "machinedeployment/default/wf-md-0" in res["msg"]
    assert "stall_timeout=15s" in res["msg"]
    assert "not ready" in res["msg"] or "ScalingUp" in res["msg"] or "RollingOut" in res["msg"], res["msg"]
    assert res["changed"] is True and res["objects"][0]["action"] == "restarted"
    assert res["objects"][0]["status"]["rollout"]["complete"] is False
    assert res["progress"]

    res = capi.run("capi_rollout_info", name="wf-md-0", wait=True, wait_timeout=5, stall_timeout=300)
    assert res.failed and res["reason"] == "wait_timeout", res["msg"]
    assert "wait_timeout=5s" in res["msg"] and "machinedeployment/default/wf-md-0" in res["msg"]


@pytest.mark.needs_controller
def test_a_kubelet_on_another_version_holds_the_rollout_on_v1_14(capi):
    """CAPI v1.14 counts a Machine whose Node's kubelet differs from spec.version as not up to date
    (Updating); the wait names that, and v1.10 (which does not look) completes."""
    skewed = capi.copy_template("wv-md-0", "-kubelet", annotations={"sim.capi-rollout.dev/kubelet-version": "v1.30.3"})
    res = capi.run("capi_rollout_restart", name="wv-md-0", infrastructure_ref={"name": skewed}, wait=True,
                   wait_timeout=300, stall_timeout=15)
    if capi.capi_version == "v1.14":
        assert res.failed and res["reason"] == "stalled", res.get("msg")
        assert "Node.status.nodeInfo.kubeletVersion v1.30.3, v1.30.4 required" in res["msg"], res["msg"]
        assert res["objects"][0]["status"]["rollout"]["complete"] is False
    else:
        assert not res.failed, res.get("msg")
        assert res["objects"][0]["status"]["rollout"]["complete"] is True


def test_errors_name_the_object_and_the_next_step(capi):
    mark = capi.mark()
    missing = capi.run("capi_rollout_restart", name="nope")
    assert missing.failed and missing["reason"] == "not_found"
    assert missing["msg"].startswith("machinedeployment/default/nope: ")
    assert "wa-md-0" in missing["msg"]

    kind = capi.run("capi_rollout_restart", kind="MachinePool", name="wa-md-0")
    assert kind.failed and kind["reason"] == "invalid_kind"

    bad_after = capi.run("capi_rollout_restart", name="wa-md-0", after="tomorrow")
    assert bad_after.failed and bad_after["reason"] == "invalid_after"
    assert bad_after["msg"].startswith("machinedeployment/default/wa-md-0: ")
    # refused by the input gate, before any request
    assert bad_after["api_requests"] == 0 and "after 'tomorrow'" in bad_after["msg"], bad_after

    template = capi.run("capi_rollout_restart", name="wa-md-0", infrastructure_ref={"name": "does-not-exist"})
    assert template.failed and template["reason"] == "template_not_found"
    # a MachineDeployment is not a machine template
    refused = capi.run("capi_rollout_restart", name="wa-md-0",
                       infrastructure_ref={"api_group": "cluster.x-k8s.io", "kind": "MachineDeployment", "name": "wa-md-0"})
    assert refused.failed and refused["reason"] == "not_a_template", refused
    assert refused["msg"].startswith("machinedeployment/default/wa-md-0: ") and "DockerMachineTemplate" in refused["msg"]
    assert "does-not-exist" in template["msg"]
    assert not capi.writes(mark)

    viewer = str(capi.mgmt.kubeconfig("viewer"))
    denied = capi.run("capi_rollout_restart", name="wa-md-0", kubeconfig=viewer)
    assert denied.failed and denied["reason"] == "forbidden"
    assert "cannot patch machinedeployments" in denied["msg"] and "docs/rbac.yml" in denied["msg"]
    assert denied["msg"].startswith("machinedeployment/default/wa-md-0: ")

    tls = capi.run("capi_rollout_info", ca_cert="/etc/ssl/certs/ca-certificates.crt")
    assert tls.failed and tls["reason"] == "tls", tls["msg"]
    assert "ca_cert" in tls["msg"]

    down = capi.run("capi_rollout_info", host="https://127.0.0.1:1", api_key="not-a-real-token")
    assert down.failed and down["reason"] == "unreachable", down["msg"]
    assert "127.0.0.1:1" in down["msg"]


def _in_background(call):
    """Run ``call`` in a thread; returns a function that joins it and returns its result (or raises its error)."""
    box = {}

    def target():
        try:
            box["result"] = call()
        except Exception as err:  # pylint: disable=broad-except  # handed to the test thread
            box["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def join(timeout):
        thread.join(timeout)
        assert not thread.is_alive(), f"still running after {timeout}s"
        if "error" in box:
            raise box["error"]
        return box["result"]
    return join


def _until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout}s"
        time.sleep(0.2)


@pytest.mark.needs_controller
@pytest.mark.api_server_fault
def test_an_api_server_restart_during_the_wait_does_not_fail_it(capi):
    """15 s without an API server in the middle of a rollout: the watch and the lists wait it out."""
    capi.slow_machines("wo-md-0", 10, namespace="team-o")
    before = capi.get("MachineDeployment", "wo-md-0", namespace="team-o")["metadata"]["resourceVersion"]
    join = _in_background(lambda: capi.run("capi_rollout_restart", namespace="team-o", name="wo-md-0", rollout_id="outage",
                                           wait=True, wait_timeout=300, stall_timeout=120))
    _until(lambda: capi.get("MachineDeployment", "wo-md-0", namespace="team-o")["metadata"]["resourceVersion"] != before, 60, "the restart")
    time.sleep(2)
    capi.mgmt.restart_apiserver(down_seconds=15)
    res = join(400)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["action"] == "restarted" and entry["status"]["rollout"]["complete"] is True, entry


@pytest.mark.needs_controller
@pytest.mark.api_server_fault
def test_wait_timeout_holds_while_the_api_server_hangs(capi):
    capi.slow_machines("wh-md-0", 60, namespace="team-o")
    before = capi.get("MachineDeployment", "wh-md-0", namespace="team-o")["metadata"]["resourceVersion"]
    started = time.monotonic()
    join = _in_background(lambda: capi.run("capi_rollout_restart", namespace="team-o", name="wh-md-0", rollout_id="hang",
                                           wait=True, wait_timeout=12, stall_timeout=300))
    _until(lambda: capi.get("MachineDeployment", "wh-md-0", namespace="team-o")["metadata"]["resourceVersion"] != before, 60, "the restart")
    capi.mgmt.freeze_apiserver()
    try:
        res = join(120)
        took = time.monotonic() - started
    finally:
        capi.mgmt.thaw_apiserver()
    assert res.failed, res
    assert res["reason"] in ("wait_timeout", "unreachable"), res
    assert "machinedeployment/team-o/wh-md-0" in res["msg"] or "no answer" in res["msg"], res["msg"]
    # wait_timeout (12 s) + the request grace (5 s) + ansible-playbook's start and end, not a request's 60 s
    assert took < 45, took


def _frozen_run(capi, call, freeze_after):
    """Run ``call`` in the background with the API server frozen ``freeze_after`` seconds after it starts (0: before
    it starts); the API server is thawed in any case. Returns (result, seconds the call took)."""
    started = time.monotonic()
    if not freeze_after:
        capi.mgmt.freeze_apiserver()
    try:
        join = _in_background(call)
        if freeze_after:
            time.sleep(freeze_after)
            capi.mgmt.freeze_apiserver()
        res = join(150)
        return res, time.monotonic() - started
    finally:
        capi.mgmt.thaw_apiserver()


# wait_timeout (20 s) + the request grace (5 s) + ansible-playbook's start and end on a loaded machine; was 81 s
HANG_BOUND = 50


@pytest.mark.needs_controller
@pytest.mark.api_server_fault
def test_capi_rollout_wait_ends_on_time_while_the_api_server_hangs(capi):
    """capi_rollout_wait through its action plugin, progress_interval 5 (several module calls, each handed the time
    the wait has left): the API server frozen before the task (nothing ever answers: unreachable) and in the middle
    of the wait (wait_timeout). Each names the object waited for and ends by wait_timeout + grace."""
    done = [{"kind": "MachineDeployment", "namespace": "team-o", "name": "wo-md-0"}]
    stuck = [{"kind": "MachineDeployment", "namespace": "team-o", "name": "wh-md-0"}]
    never = capi.copy_template("wh-md-0", "-never", annotations={FAIL: "true"}, namespace="team-o")
    switched = capi.run("capi_rollout_restart", namespace="team-o", name="wh-md-0", rollout_id="hang-wait",
                        infrastructure_ref={"name": never})
    assert not switched.failed, switched.get("msg")
    # positive control: answered, the same task ends on success
    ok = capi.run("capi_rollout_wait", objects=done, wait_timeout=20, progress_interval=5)
    assert not ok.failed and ok["phase"] == "succeeded", ok.get("msg")

    before, took = _frozen_run(capi, lambda: capi.run("capi_rollout_wait", objects=done, wait_timeout=20,
                                                      progress_interval=5), freeze_after=0)
    assert before.failed and before["reason"] == "unreachable", before
    assert "machinedeployment/team-o/wo-md-0" in before["msg"] and "wait_timeout=20s" in before["msg"], before["msg"]
    assert took < HANG_BOUND, took

    during, took = _frozen_run(capi, lambda: capi.run("capi_rollout_wait", objects=stuck, wait_timeout=20,
                                                      progress_interval=5), freeze_after=8)
    assert during.failed and during["reason"] == "wait_timeout", during
    assert "machinedeployment/team-o/wh-md-0" in during["msg"], during["msg"]
    assert during["progress"], during  # it was answered before the freeze
    assert took < HANG_BOUND, took


@pytest.mark.api_server_fault
def test_capi_rollout_lock_ends_on_time_while_the_api_server_hangs(capi):
    """capi_rollout_lock waiting for a lock another holder has: it takes it once that lease goes stale (positive
    control); with the API server frozen in the middle of the wait it ends by wait_timeout + grace, naming the Lease."""
    lease = {"name": "it-hang-lock", "namespace": "team-o"}
    taken = capi.run("capi_rollout_lock", holder="other", lease_duration_seconds=4, **lease)
    assert taken["acquired"] is True, taken
    ok = capi.run("capi_rollout_lock", holder="me", wait_timeout=20, poll_interval=1, **lease)
    assert not ok.failed and ok["acquired"] is True, ok

    taken = capi.run("capi_rollout_lock", holder="other", lease_duration_seconds=600, force=True, **lease)
    assert taken["acquired"] is True, taken
    try:
        res, took = _frozen_run(capi, lambda: capi.run("capi_rollout_lock", holder="me", wait_timeout=20, poll_interval=1,
                                                       **lease), freeze_after=6)
    finally:
        capi.run("capi_rollout_lock", holder="other", state="released", **lease)
    assert res.failed and res["reason"] == "unreachable", res
    assert res["msg"].startswith("lease/team-o/it-hang-lock: cannot reach the API server"), res["msg"]
    assert "wait_timeout=20s" in res["msg"], res["msg"]
    assert took < HANG_BOUND, took
