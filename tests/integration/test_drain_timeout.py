"""A hardware refresh through a drain a PodDisruptionBudget blocks (issue 29 §1): ``drain_timeout`` sets the pool's
node drain timeout with the switch, so CAPI deletes the old Machine when it passes and the refresh completes; the
pool's own node drain timeout is put back when the wave's wait ends; ``undrainable`` says whether the wave goes on
(naming the Machine) or fails. On v1.10 and v1.14 (the module fleets).

The pool is workload cluster "wdt" in a namespace of its own (team-drain-to), made by this file, so nothing here
touches the objects of the other tests; the playbook is limited to it (namespaces, clusters).
"""

import pytest

from hardware_refresh_support import FAST, run_playbook

pytestmark = pytest.mark.needs_controller

NS = "team-drain-to"
MD = "wdt-md-0"
RECORD = "rollout.capi-rollout.dev/drain-timeout"
# long enough that the wave's wait is watching before the drain times out, on a loaded machine too: a Machine deleted
# before the wait first lists the Machines is never seen draining (2 s lost that race once in a CI run)
DRAIN_TIMEOUT = 15


@pytest.fixture(scope="module")
def pool(capi):
    """wdt-md-0 (1 Machine) whose Nodes' drains a PodDisruptionBudget blocks (for ever without a node drain timeout)."""
    capi.add_workload("wdt", NS, "v1.30.4", ["md-0"], drain={"blocked_by_pdb": True})
    ready = capi.run("capi_rollout_info", name=MD, namespace=NS, wait=True, wait_timeout=120)
    assert not ready.failed, ready.get("msg")
    return capi


def drain_timeout_of(capi):
    """The MachineDeployment's node drain timeout and the record of a refresh, as read back from the cluster."""
    md = capi.get("MachineDeployment", MD, NS)
    spec = md["spec"]["template"]["spec"]
    value = (spec.get("deletion") or {}).get("nodeDrainTimeoutSeconds") if capi.version == "v1beta2" else spec.get("nodeDrainTimeout")
    return value, (md["metadata"].get("annotations") or {}).get(RECORD)


def settings(capi, name, **more):
    refresh_id = f"{name}-{capi.capi_version.replace('.', '-')}"
    return dict(FAST, refresh_id=refresh_id, template_overrides={"customImage": f"kindest/node:{refresh_id}"},
                namespaces=[NS], clusters=["wdt"], drain_timeout=DRAIN_TIMEOUT, **more)


def md_patches(capi, mark):
    return [e for e in capi.writes(mark) if e["verb"] == "patch" and e["objectRef"].get("resource") == "machinedeployments"
            and e["objectRef"].get("name") == MD]


def test_a_refresh_completes_through_a_blocked_drain_thanks_to_drain_timeout_and_leaves_the_pool_as_it_was(pool, tmp_path):
    capi = pool
    assert drain_timeout_of(capi) == (None, None)
    (old,) = capi.machines(f"cluster.x-k8s.io/deployment-name={MD}", NS)
    mark = capi.mark()
    run = run_playbook(capi.fleet.inventory, "hardware_refresh.yml", settings(capi, "dt-go"), tmp_path, limit=capi.host)
    assert run.rc == 0, run.explain()
    obj = run.obj(capi.host, MD)
    assert obj["result"] == "succeeded", obj
    # the old Machine's drain timed out: CAPI deleted it anyway, and the report names it (undrainable=continue)
    assert [m["machine"] for m in obj["drain_timeouts"]] == [old], obj
    assert old not in capi.machines(f"cluster.x-k8s.io/deployment-name={MD}", NS)
    assert f"the drain of Machine {old}" in run.stdout and "undrainable=continue" in run.stdout
    # the pool's node drain timeout is as it was (unset), the record gone; both written by capi-rollout: the switch
    # with the timeout, then its restore (the positive control: the patches are there)
    assert drain_timeout_of(capi) == (None, None)
    patches = md_patches(capi, mark)
    assert len(patches) >= 2 and all("fieldManager=capi-rollout" in e["requestURI"] for e in patches), patches


def test_undrainable_fail_fails_the_wave_on_the_machine_whose_drain_timed_out_and_still_puts_the_timeout_back(pool, tmp_path):
    capi = pool
    (old,) = capi.machines(f"cluster.x-k8s.io/deployment-name={MD}", NS)
    run = run_playbook(capi.fleet.inventory, "hardware_refresh.yml",
                       settings(capi, "dt-fail", undrainable="fail", undo_on_failure=False), tmp_path, limit=capi.host)
    obj = run.obj(capi.host, MD)
    assert obj["result"] == "failed", run.explain()
    assert obj["failure_reason"].startswith("the drain of a Machine timed out (undrainable=fail)"), obj
    assert old in obj["failure_reason"] and [m["machine"] for m in obj["drain_timeouts"]] == [old]
    assert "undrainable=continue" in run.cluster(capi.host)["next_step"]
    assert drain_timeout_of(capi) == (None, None)
    # the old Machine was deleted all the same: the pool finishes its rollout (left complete for nothing else here)
    done = capi.run("capi_rollout_info", name=MD, namespace=NS, wait=True, wait_timeout=120)
    assert not done.failed, done.get("msg")


def test_a_record_left_by_a_killed_run_is_put_back_by_the_next_run_and_carries_the_timeout_meanwhile(pool, tmp_path):
    capi = pool
    # what a run killed during its wave leaves: the pool's node drain timeout set (DRAIN_TIMEOUT), and the record of the value
    # before (unset); the next run is given no drain_timeout
    timeout = ({"deletion": {"nodeDrainTimeoutSeconds": DRAIN_TIMEOUT}} if capi.version == "v1beta2"
               else {"nodeDrainTimeout": f"{DRAIN_TIMEOUT}s"})
    capi.admin.patch_merge(capi.path("MachineDeployment", NS, MD), {
        "metadata": {"annotations": {RECORD: '{"before":null,"id":"dt-killed"}'}},
        "spec": {"template": {"spec": timeout}}})
    (old,) = capi.machines(f"cluster.x-k8s.io/deployment-name={MD}", NS)
    extra = settings(capi, "dt-next")
    del extra["drain_timeout"]
    run = run_playbook(capi.fleet.inventory, "hardware_refresh.yml", extra, tmp_path, limit=capi.host)
    assert run.rc == 0, run.explain()
    # the blocked drain ended by the recorded timeout (on v1.10 the wait gave it to the old MachineSet), and the pool's
    # own value (unset) is back, the record gone
    assert [m["machine"] for m in run.obj(capi.host, MD)["drain_timeouts"]] == [old]
    assert drain_timeout_of(capi) == (None, None)
