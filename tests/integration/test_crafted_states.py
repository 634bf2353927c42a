"""The completion rules against states real CAPI releases produce, crafted with the controller simulator off:
the objects, MachineSets and statuses are written with the admin credentials, exactly as upstream would
leave them (docs/rollout-completion.md), then read by capi_rollout_info and capi_rollout_wait as the
rollout-operator user. Both API versions: v1beta1 (a CAPI v1.10 cluster) and v1beta2 (v1.14 CRDs; the
v1beta2 states stand for v1.11-v1.14 controllers, #13182 for v1.11-v1.12.3).

- #13182: every replica on the MachineSet created in the rolloutAfter second, up-to-date counters stuck at 0,
  RollingOut True: complete, with a warning naming the bug and the fix;
- counters and conditions all finished, but no MachineSet created after an expired trigger (the controller has
  not acted on it yet): not complete, waiting for the new MachineSet;
- counters finished without status.deprecated.v1beta1 while an old MachineSet still has replicas: not complete;
- a trigger in the future by the API server's clock: pending;
- a v1beta1 KubeadmControlPlane whose Node-based readyReplicas was reset to 0 by an unreachable workload
  cluster, its Machines ready: complete.
"""

import copy
import datetime
import secrets
import time

import pytest

from conftest import CapiEnv, per_fleet

VERSIONS = ("v1.10", "v1.14")
T0 = "2026-01-01T00:00:00Z"


def _fleet(capi_version):
    return {"defaults": {"provision_seconds": 1}, "management_clusters": [{
        "name": f"crafted-{capi_version.replace('.', '-')}", "capi_version": capi_version,
        "workload_clusters": [{"name": "cs", "kubernetes_version": "v1.30.4", "control_plane": {"replicas": 1},
                               "machine_deployments": [{"name": name, "replicas": 3} for name in
                                                       ("bug", "behind", "old", "pending", "done")]}]}]}


@pytest.fixture(scope="module", params=per_fleet(VERSIONS, "crafted"))
def crafted(request, fleet_factory):
    fleet = fleet_factory(_fleet(request.param), controller=False)
    yield CapiEnv(fleet, request.param)
    fleet.fleet.down()


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _text(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _cond(ctype, status, reason, generation=None):
    cond = {"type": ctype, "status": status, "reason": reason, "message": "", "lastTransitionTime": T0}
    if generation is not None:
        cond["observedGeneration"] = generation
    return cond


class Crafter:
    """Writes what the CAPI controllers would: MachineSets and the statuses of MDs, MSs and KCPs."""

    def __init__(self, env):
        self.env = env
        self.v1beta2 = env.version == "v1beta2"

    def md(self, name):
        return self.env.get("MachineDeployment", f"cs-{name}")

    def set_trigger(self, name, when):
        field = {"rollout": {"after": when}} if self.v1beta2 else {"rolloutAfter": when}
        return self.env.admin.patch_merge(self.env.path("MachineDeployment", "default", f"cs-{name}"), {"spec": field})

    def machine_set(self, md, suffix, replicas, template_name=None):
        """A MachineSet owned by the MD, with its template (or another infrastructure template name)."""
        template = copy.deepcopy(md["spec"]["template"])
        if template_name:
            template["spec"]["infrastructureRef"]["name"] = template_name
        meta = md["metadata"]
        ms = {"apiVersion": md["apiVersion"], "kind": "MachineSet",
              "metadata": {"name": f"{meta['name']}-{suffix}-{secrets.token_hex(2)}", "namespace": meta["namespace"],
                           "labels": dict(md["spec"]["selector"]["matchLabels"]),
                           "ownerReferences": [{"apiVersion": md["apiVersion"], "kind": "MachineDeployment",
                                                "name": meta["name"], "uid": meta["uid"], "controller": True,
                                                "blockOwnerDeletion": True}]},
              "spec": {"clusterName": md["spec"]["clusterName"], "replicas": replicas,
                       "selector": copy.deepcopy(md["spec"]["selector"]), "template": template}}
        ms = self.env.admin.create(self.env.path("MachineSet"), ms)
        ms["status"] = {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                        "observedGeneration": ms["metadata"]["generation"]}
        return self.env.admin.replace_status(self.env.path("MachineSet", "default", ms["metadata"]["name"]), ms)

    def md_status(self, md, replicas, up_to_date, legacy_updated, rolling_out, deprecated=True):
        """The MD status upstream writes: v1beta2 counters (upToDate from the Machines' UpToDate condition),
        v1beta1 ones (updatedReplicas = the new MachineSet's replicas) and the conditions."""
        gen = md["metadata"]["generation"]
        modern = {"readyReplicas": replicas, "availableReplicas": replicas, "upToDateReplicas": up_to_date}
        conditions = [_cond("Available", "True", "Available", gen),
                      _cond("RollingOut", "True" if rolling_out else "False",
                            "RollingOut" if rolling_out else "NotRollingOut", gen)]
        legacy = {"updatedReplicas": legacy_updated, "readyReplicas": replicas, "availableReplicas": replicas,
                  "unavailableReplicas": 0}
        legacy_conditions = [{"type": "Ready", "status": "True", "lastTransitionTime": T0},
                             {"type": "Available", "status": "True", "lastTransitionTime": T0}]
        if self.v1beta2:
            status = dict(modern, replicas=replicas, observedGeneration=gen, conditions=conditions)
            if deprecated:
                status["deprecated"] = {"v1beta1": dict(legacy, conditions=legacy_conditions)}
        else:
            status = dict(legacy, replicas=replicas, observedGeneration=gen, conditions=legacy_conditions,
                          v1beta2=dict(modern, conditions=conditions))
        md["status"] = status
        return self.env.admin.replace_status(self.env.path("MachineDeployment", "default", md["metadata"]["name"]), md)

    def next_second(self, after_text):
        """Wait until the clock is in a later second than ``after_text`` (API server and host share it)."""
        while _text(_now()) <= after_text:
            time.sleep(0.05)


def _info(env, name, kind="MachineDeployment"):
    res = env.run("capi_rollout_info", kind=kind, name=name)
    assert not res.failed, res.get("msg")
    (resource,) = res["resources"]
    return resource["rollout"]


def _wait(env, name):
    return env.run("capi_rollout_wait", objects=[{"name": name}], wait_timeout=6, stall_timeout=4, poll_interval=1)


def test_bug_13182_state_is_complete_with_a_warning(crafted):
    craft = Crafter(crafted)
    md = craft.md("bug")
    old = craft.machine_set(md, "old", 0, template_name="cs-bug-previous")
    new = craft.machine_set(md, "new", 3)
    # the trigger in the new MachineSet's own second (what clusterctl's time.Now() makes likely)
    md = craft.set_trigger("bug", new["metadata"]["creationTimestamp"])
    craft.md_status(md, 3, up_to_date=0, legacy_updated=3, rolling_out=True)
    rollout = _info(crafted, "cs-bug")
    assert rollout["complete"] is True, rollout
    (warning,) = [w for w in rollout["warnings"] if "kubernetes-sigs/cluster-api#13182" in w]
    assert new["metadata"]["name"] in warning and "v1.12.4" in warning
    res = _wait(crafted, "cs-bug")
    assert not res.failed, res.get("msg")
    assert any(w.startswith("machinedeployment/default/cs-bug: ") and "13182" in w for w in res.get("warnings") or [])
    assert old["status"]["replicas"] == 0

    # positive control: the same counters with the MachineSet created a second after the trigger are a
    # rollout in progress, not the bug
    newer_trigger = _text(datetime.datetime.strptime(new["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
                          - datetime.timedelta(seconds=1))
    md = craft.set_trigger("bug", newer_trigger)
    craft.md_status(md, 3, up_to_date=0, legacy_updated=3, rolling_out=True)
    rollout = _info(crafted, "cs-bug")
    assert rollout["complete"] is False and not [w for w in rollout["warnings"] if "13182" in w], rollout


def test_finished_counters_without_a_machine_set_after_the_trigger_are_not_complete(crafted):
    craft = Crafter(crafted)
    md = craft.md("behind")
    ms = craft.machine_set(md, "current", 3)
    craft.next_second(ms["metadata"]["creationTimestamp"])
    # an expired trigger the controller has not acted on yet: every counter and condition still says "done"
    md = craft.set_trigger("behind", _text(_now()))
    craft.next_second(md["spec"]["rollout"]["after"] if craft.v1beta2 else md["spec"]["rolloutAfter"])
    craft.md_status(md, 3, up_to_date=3, legacy_updated=3, rolling_out=False)
    rollout = _info(crafted, "cs-behind")
    assert rollout["complete"] is False and rollout["waiting_for"] == "new_machine_set", rollout
    res = _wait(crafted, "cs-behind")
    assert res.failed and "waiting for a MachineSet with the current template" in res["msg"], res.get("msg")
    assert "machinedeployment/default/cs-behind" in res["msg"]
    # nothing changes: the output still says every progress_interval what is waited for (a heartbeat)
    quiet = crafted.run("capi_rollout_wait", objects=[{"name": "cs-behind"}], wait_timeout=60, stall_timeout=15,
                        progress_interval=1)
    assert quiet.failed and quiet["reason"] == "stalled", quiet.get("msg")
    beats = [line for line in quiet.stdout.splitlines() if "still waiting (rollout): 0 of 1 complete" in line]
    assert len(beats) >= 2 and "waiting for a MachineSet with the current template" in beats[0], quiet.stdout


def test_finished_counters_with_old_replicas_and_no_deprecated_counters_are_not_complete(crafted):
    craft = Crafter(crafted)
    md = craft.md("old")
    old = craft.machine_set(md, "old", 1, template_name="cs-old-previous")
    craft.machine_set(md, "new", 3)
    craft.md_status(md, 3, up_to_date=3, legacy_updated=3, rolling_out=False, deprecated=False)
    rollout = _info(crafted, "cs-old")
    assert rollout["complete"] is False and rollout["waiting_for"] == "old_replicas", rollout
    res = _wait(crafted, "cs-old")
    assert res.failed and old["metadata"]["name"] in res["msg"], res.get("msg")
    # positive control: once the old MachineSet is scaled down, the same status is complete
    crafted.admin.patch_merge(crafted.path("MachineSet", "default", old["metadata"]["name"]), {"spec": {"replicas": 0}})
    old = crafted.get("MachineSet", old["metadata"]["name"])
    old["status"]["replicas"] = 0
    crafted.admin.replace_status(crafted.path("MachineSet", "default", old["metadata"]["name"]), old)
    assert _info(crafted, "cs-old")["complete"] is True
    assert not _wait(crafted, "cs-old").failed


def test_future_trigger_is_pending(crafted):
    craft = Crafter(crafted)
    md = craft.md("pending")
    craft.machine_set(md, "current", 3)
    when = _text(_now() + datetime.timedelta(hours=1))
    md = craft.set_trigger("pending", when)
    craft.md_status(md, 3, up_to_date=3, legacy_updated=3, rolling_out=False)
    rollout = _info(crafted, "cs-pending")
    assert rollout["pending"] is True and rollout["complete"] is False and rollout["waiting_for"] == "pending", rollout
    res = _wait(crafted, "cs-pending")
    assert res.failed and "machinedeployment/default/cs-pending" in res["msg"], res.get("msg")
    assert any("has not been reached by the API server's clock" in line for line in res["progress"]), res.get("progress")


def test_kubeadm_control_plane_ready_from_its_machines(crafted):
    kcp = crafted.get("KubeadmControlPlane", "cs-control-plane")
    gen = kcp["metadata"]["generation"]
    version = kcp["spec"]["version"]
    conditions = [_cond("Available", "True", "Available", gen), _cond("RollingOut", "False", "NotRollingOut", gen)]
    selector = "cluster.x-k8s.io/cluster-name=cs,cluster.x-k8s.io/control-plane"
    if crafted.version == "v1beta1":
        # the workload cluster was unreachable at the last reconcile: readyReplicas reset to 0, Machines ready
        status = {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 0, "unavailableReplicas": 1, "version": version,
                  "observedGeneration": gen, "initialized": True, "ready": False, "selector": selector,
                  "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": T0}],
                  "v1beta2": {"readyReplicas": 1, "availableReplicas": 1, "upToDateReplicas": 1, "conditions": conditions}}
    else:
        status = {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "upToDateReplicas": 1, "version": version,
                  "observedGeneration": gen, "selector": selector, "conditions": conditions,
                  "initialization": {"controlPlaneInitialized": True}}
    kcp["status"] = status
    crafted.admin.replace_status(crafted.path("KubeadmControlPlane", "default", "cs-control-plane"), kcp)
    rollout = _info(crafted, "cs-control-plane", kind="KubeadmControlPlane")
    assert rollout["complete"] is True, rollout
    # positive control: Machines that are not ready hold it
    kcp = crafted.get("KubeadmControlPlane", "cs-control-plane")
    (kcp["status"]["v1beta2"] if crafted.version == "v1beta1" else kcp["status"])["readyReplicas"] = 0
    crafted.admin.replace_status(crafted.path("KubeadmControlPlane", "default", "cs-control-plane"), kcp)
    assert _info(crafted, "cs-control-plane", kind="KubeadmControlPlane")["complete"] is False


def test_wait_reads_the_template_back_and_fails_on_drift(crafted):
    craft = Crafter(crafted)
    md = craft.md("done")
    craft.machine_set(md, "current", 3)
    md = craft.md_status(md, 3, up_to_date=3, legacy_updated=3, rolling_out=False)
    current = md["spec"]["template"]["spec"]["infrastructureRef"]
    res = crafted.run("capi_rollout_wait", objects=[{"name": "cs-done", "infrastructure_ref": {"name": current["name"]}}],
                      wait_timeout=10, stall_timeout=10)
    assert not res.failed, res.get("msg")
    (resource,) = res["resources"]
    assert resource["template"]["infrastructure_ref"] == {"kind": current["kind"], "name": current["name"]}
    assert resource["template"]["version"] == md["spec"]["template"]["spec"]["version"] and resource["drift"] is None
    started = time.monotonic()
    mark = crafted.mark()
    res = crafted.run("capi_rollout_wait", objects=[{"name": "cs-done", "infrastructure_ref": {"name": "cs-done-target"}}],
                      wait_timeout=60, stall_timeout=60)
    assert res.failed and res["reason"] == "drift", res.get("msg")
    assert time.monotonic() - started < 30, "drift must fail at once, not at a timeout"
    assert f"machinedeployment/default/cs-done is on {current['kind']} {current['name']}, not on the target cs-done-target" \
        in res["msg"]
    assert res["resources"][0]["drift"] and res["failed_refs"] == ["machinedeployment/default/cs-done"]
    assert crafted.requests(mark) and not crafted.writes(mark)
