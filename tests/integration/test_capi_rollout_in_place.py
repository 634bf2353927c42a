"""Template switches on a CAPI v1.12.3 management cluster with InPlaceUpdates on (issue 28): capi_rollout_restart's
``in_place`` option. The cluster's update extension accepts infrastructure-template changes (tests/sim, fleet spec
``features``; the fleet is conftest.IN_PLACE_FLEET); its MachineDeployments roll with maxSurge 0 / maxUnavailable 1, so CAPI would keep every Machine."""

import pytest

from conftest import CapiEnv
from hardware_refresh_support import FAST, run_playbook
from history_support import outside_changes_are_kept

# one worker runs them all, in order (make integration: -n 3 --dist loadgroup): one fleet, and the refresh goes first
pytestmark = pytest.mark.xdist_group("in-place")


@pytest.fixture(scope="module")
def inplace(in_place_fleet):
    return CapiEnv(in_place_fleet, "v1.12.3")


def _machines(env, md):
    return {name: m["metadata"]["uid"] for name, m in env.machines(f"cluster.x-k8s.io/deployment-name={md}").items()}


def test_a_hardware_refresh_ends_with_every_machine_new(inplace, tmp_path):
    """Runs first: refreshes every object of namespace default (the playbook's default in_place: replace; namespace
    topology is test_topology_objects.py's)."""
    mds = ("wi-replace", "wi-allow")
    before = {md: _machines(inplace, md) for md in mds}
    run = run_playbook(inplace.fleet.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-inplace", namespaces=["default"], template_overrides={"customImage": "kindest/node:ip"}),
                       tmp_path / "report")
    assert run.rc == 0, run.explain()
    after = {md: _machines(inplace, md) for md in mds}
    for md in mds:
        assert len(after[md]) == 2 and not set(after[md]) & set(before[md]), md
        # read from the Machines by the wave's wait (switched_at), not from the replicas
        assert run.obj("it-inplace", md)["machines"] == {"replaced": 2, "updated_in_place": 0}
    assert "updated in place" not in (run.report_dir / "report.md").read_text(encoding="utf-8")
    # the playbook variable in_place reaches the switches: allowed, CAPI keeps the Machines
    run = run_playbook(inplace.fleet.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-inplace-allow", in_place="allow", namespaces=["default"],
                            template_overrides={"customImage": "kindest/node:ip2"}), tmp_path / "report-allow")
    assert run.rc == 0, run.explain()
    assert {md: _machines(inplace, md) for md in mds} == after
    for md in mds:
        assert run.obj("it-inplace", md)["machines"] == {"replaced": 0, "updated_in_place": 2}
    markdown = (run.report_dir / "report.md").read_text(encoding="utf-8")
    assert "2 updated in place" in markdown and "**Machines updated in place:** 4" in markdown


def test_a_switch_replaces_every_machine_by_default(inplace):
    before = _machines(inplace, "wi-replace")
    template = inplace.copy_template("wi-replace", "-v2")
    res = inplace.run("capi_rollout_restart", name="wi-replace", infrastructure_ref={"name": template}, wait=True,
                      wait_timeout=120, stall_timeout=60)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["in_place"] == "replace"
    # the trigger goes with the switch, in the same patch
    assert {op["path"] for op in entry["patch"] if op["op"] != "test"} >= {
        "/spec/template/spec/infrastructureRef/name", "/spec/rollout/after"}
    after = _machines(inplace, "wi-replace")
    assert len(after) == 2 and not set(after) & set(before)  # every Machine new
    assert entry["machines"] == {"replaced": 2, "updated_in_place": 0}


def test_in_place_allow_keeps_the_machines_and_says_so(inplace):
    before = _machines(inplace, "wi-allow")
    template = inplace.copy_template("wi-allow", "-v2")
    res = inplace.run("capi_rollout_restart", name="wi-allow", infrastructure_ref={"name": template}, in_place="allow",
                      wait=True, wait_timeout=120, stall_timeout=60)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert entry["in_place"] == "allow" and entry["status"]["rollout"]["complete"]
    assert not [op for op in entry["patch"] if op["path"] == "/spec/rollout/after" and op["op"] != "test"]
    assert _machines(inplace, "wi-allow") == before  # the same Machines, updated in place
    assert entry["machines"] == {"replaced": 0, "updated_in_place": 2}
    for machine in inplace.machines("cluster.x-k8s.io/deployment-name=wi-allow").values():
        assert machine["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"] == template
        assert "in-place-updates.internal.cluster.x-k8s.io/update-in-progress" not in machine["metadata"]["annotations"]


def test_history_calls_the_allowed_switch_an_in_place_update_and_keeps_outside_changes(inplace):
    """After the switches above: the history's cause per switch; then kubectl edits on a workload cluster of its own
    (history_support.py) on v1.12.3."""
    causes = {}
    for md in ("wi-replace", "wi-allow"):
        res = inplace.run("capi_rollout_info", name=md, history=True)
        assert not res.failed, res.get("msg")
        causes[md] = res["resources"][0]["history"][0]["cause"]
    assert causes == {"wi-replace": "template", "wi-allow": "in-place update"}
    # how the Machines changed per revision: counted from the current MachineSet's Machines, and for the revision the
    # switch left (the refresh with in_place allow; its MachineSet is gone) kept in the record by the switch
    for md, current in (("wi-replace", {"replaced": 2, "updated_in_place": 0}), ("wi-allow", {"replaced": 0, "updated_in_place": 2})):
        rows = [row for row in inplace.run("capi_rollout_info", name=md, history=True)["resources"][0]["history"]
                if row["revision"] is not None]
        assert [(row["machine_counts"], row["machines_source"]) for row in rows[:2]] == [
            (current, "machines"), ({"replaced": 0, "updated_in_place": 2}, "record")], (md, rows[:2])
    outside_changes_are_kept(inplace, "team-hist-ip")
