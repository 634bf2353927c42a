"""The examples of docs/rolling-out-machines.md (docs/examples/*.yml) and the history views of
playbooks/rollout_status.yml, run as they are against the module fleet (CAPI v1.10 / v1beta1 and v1.14 / v1beta2).

The objects are their own: workload clusters "ga" (a KubeadmControlPlane and a MachineDeployment) and "gb"
(one MachineDeployment, for the deferred rollout) in namespace team-g, created by the fixture as admin.
"""

import pytest

from hardware_refresh_support import run_playbook

pytestmark = pytest.mark.needs_controller

NS = "team-g"
VERSION = "v1.30.4"
IMAGE = "kindest/node:v1.30.4-guide"


@pytest.fixture(scope="module")
def guide(capi):
    capi.add_workload("ga", NS, VERSION, ["md-0"], control_plane=True)
    capi.add_workload("gb", NS, VERSION, ["md-0"])
    for kind in ("KubeadmControlPlane", "MachineDeployment"):
        res = capi.run("capi_rollout_info", kind=kind, namespace=NS, wait=True, wait_timeout=300, stall_timeout=120)
        assert not res.failed, res.get("msg")
    return capi


def example(capi, tmp_path, playbook, **extra_vars):
    run = run_playbook(capi.fleet.inventory, f"../docs/examples/{playbook}.yml", dict(extra_vars, capi_namespace=NS), None,
                       limit=capi.host, cwd=tmp_path)
    assert run.rc == 0, run.explain()
    return run


def shows(run, text):
    """Whether the run printed ``text``; whitespace is compared loosely (the YAML callback folds long lines)."""
    return " ".join(text.split()) in " ".join(run.stdout.split())


def status(capi, tmp_path, **extra_vars):
    return run_playbook(capi.fleet.inventory, "rollout_status.yml", dict(extra_vars, capi_namespaces=[NS]), None,
                        limit=capi.host, cwd=tmp_path)


def trigger(capi, kind, name):
    """The rollout trigger as written on this API version."""
    spec = capi.get(kind, name, NS)["spec"]
    return spec.get("rolloutAfter") if capi.version == "v1beta1" else (spec.get("rollout") or {}).get("after")


def infra(capi, name):
    return capi.get("MachineDeployment", name, NS)["spec"]["template"]["spec"]["infrastructureRef"]["name"]


def test_restart_now_workers_then_control_plane(guide, tmp_path):
    capi = guide
    run = example(capi, tmp_path, "restart-now", cluster="ga")
    assert shows(run, f"machinedeployment/{NS}/ga-md-0 successfully rolled out"), run.explain()
    assert trigger(capi, "MachineDeployment", "ga-md-0")
    run = example(capi, tmp_path, "restart-now", cluster="ga", kind="KubeadmControlPlane")
    assert shows(run, f"kubeadmcontrolplane/{NS}/ga-control-plane successfully rolled out"), run.explain()
    assert trigger(capi, "KubeadmControlPlane", "ga-control-plane")


def test_restart_later_is_pending(guide, tmp_path):
    capi = guide
    after = capi.utc_in(3600)
    run = example(capi, tmp_path, "restart-later", cluster="gb", after=after)
    assert shows(run, f"machinedeployment/{NS}/gb-md-0 rolls out after {after} (pending: True)"), run.explain()
    assert trigger(capi, "MachineDeployment", "gb-md-0") == after


def test_new_hardware_history_and_undo(guide, tmp_path):
    capi = guide
    old = infra(capi, "ga-md-0")
    run = example(capi, tmp_path, "new-hardware", name="ga-md-0", overrides={"customImage": IMAGE})
    new = infra(capi, "ga-md-0")
    assert new != old and shows(run, f"now on {new}"), run.explain()
    assert capi.get("DockerMachineTemplate", new, NS)["spec"]["template"]["spec"]["customImage"] == IMAGE

    # rollout_status.yml history=true object=...: the table, with what changed
    table = status(capi, tmp_path, history=True, object=f"{NS}/ga-md-0")
    assert table.rc == 0, table.explain()
    assert shows(table, "REVISION") and shows(table, "INFRASTRUCTURE"), table.explain()
    assert shows(table, f"infrastructure_ref.name {old} -> {new}; 1 template spec field"), table.explain()
    assert shows(table, "same template (restart)")  # the restart of the first test
    info = capi.run("capi_rollout_info", namespace=NS, name="ga-md-0", history=True)
    current = [row for row in info["resources"][0]["history"] if row["current"]][0]
    old_image = capi.get("DockerMachineTemplate", old, NS)["spec"]["template"]["spec"]["customImage"]
    assert current["changes"] == [
        {"path": "infrastructure_ref.name", "before": old, "after": new},
        {"path": "infrastructure_template.spec.template.spec.customImage", "before": old_image, "after": IMAGE}]
    assert current["reason"] == "new hardware (docs/examples/new-hardware.yml)" and current["actor"]

    # revision=N: that revision in full
    detail = status(capi, tmp_path, revision=current["revision"], object=f"MachineDeployment/{NS}/ga-md-0")
    assert detail.rc == 0, detail.explain()
    assert shows(detail, f"machinedeployment/{NS}/ga-md-0 revision {current['revision']} (current)"), detail.explain()
    assert shows(detail, f"infrastructure_template.spec.template.spec.customImage: {old_image} -> {IMAGE}"), detail.explain()
    assert shows(detail, "Reason:      new hardware (docs/examples/new-hardware.yml)"), detail.explain()

    # the control plane's history is the record's: the restart of the first test
    kcp = status(capi, tmp_path, history=True, object=f"kcp/{NS}/ga-control-plane")
    assert kcp.rc == 0 and shows(kcp, f"kubeadmcontrolplane/{NS}/ga-control-plane"), kcp.explain()
    assert shows(kcp, "restarted"), kcp.explain()

    # the example: history table, the current revision in full, undo
    run = example(capi, tmp_path, "history-and-undo", name="ga-md-0")
    assert shows(run, "CHANGES") and shows(run, "Changes from revision"), run.explain()
    assert infra(capi, "ga-md-0") == old
    assert shows(run, "spec.template restored from revision"), run.explain()


def test_rollout_status_refuses_a_revision_without_object(guide, tmp_path):
    run = status(guide, tmp_path, revision=1)
    assert run.rc != 0 and shows(run, "revision needs object"), run.explain()
