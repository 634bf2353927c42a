"""The fleet-wide rolling hardware refresh (playbooks/hardware_refresh.yml, roles hardware_refresh and
rollout_report) against three simulated management clusters on both CAPI versions.

One fleet (tests/fleets/hardware-refresh.yml) serves every test; each test selects its own workload
clusters, so none touches another's objects. The fleet is stopped when the module is done.
"""

import datetime
import json
import re
import time

import pytest

from capisim import readiness
from capisim.kubeapi import resource_path
from capisim.polling import wait_for
from hardware_refresh_support import FAST, FLEET_SPEC, REPO, Background, Mgmt, run_playbook
from playbook import faked_clock

pytestmark = [pytest.mark.needs_controller, pytest.mark.xdist_group("hardware-refresh")]

HOSTS = ("hw-east", "hw-west", "hw-lab")
PLAN = {}


@pytest.fixture(scope="module")
def hw(fleet_factory):
    fleet = fleet_factory(str(FLEET_SPEC))
    yield fleet
    fleet.fleet.down()


def mgmts(fleet):
    return {name: Mgmt(fleet.cluster(name)) for name in HOSTS}


def overrides(tag):
    return {"customImage": f"kindest/node:{tag}"}


def test_check_mode_prints_the_plan_and_writes_nothing(hw, tmp_path):
    clusters = mgmts(hw)
    marks = {name: m.mark() for name, m in clusters.items()}
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-e2e", template_overrides=overrides("e2e"), control_plane=True,
                            max_in_flight=2), tmp_path / "report", check=True, diff=True)
    assert run.rc == 0, run.explain()
    for name, m in clusters.items():
        assert m.writes(marks[name]) == [], f"{name}: check mode wrote something"
        assert m.lease_holder() is None, f"{name}: check mode took the lock"
    # the plan table, one per management cluster, one row per object
    assert run.stdout.count("CURRENT TEMPLATE -> TARGET") == 3, run.explain()
    for row in ("kcp/default/e1-control-plane", "md/default/e1-md-0", "md/team-e/e2-md-0", "kcp/default/w1-control-plane",
                "md/default/w3-md-1", "md/default/l3-md-1"):
        assert row in run.stdout, row
    report = run.report
    assert report["mode"] == "check" and report["refresh_id"] == "it-e2e"
    for name in HOSTS:
        entry = run.cluster(name)
        assert entry["result"] == "planned", entry
        assert entry["lock"] is None
        for obj in entry["objects"]:
            assert obj["result"] in ("planned", "skipped"), obj
            if obj["action"] == "switch":
                assert obj["after"]["infrastructure_ref"]["name"] != obj["before"]["infrastructure_ref"]["name"]
                PLAN[(name, obj["name"])] = obj["after"]["infrastructure_ref"]["name"]
    # control planes form the first waves, then a canary of one MachineDeployment
    waves = run.cluster("hw-east")["waves"]
    assert waves[0]["name"] == "control-plane-1" and waves[1]["name"] == "canary" and len(waves[1]["objects"]) == 1
    for suffix in ("json", "md", "html"):
        assert (run.report_dir / f"report.{suffix}").stat().st_size > 0
    assert "dry run" in (run.report_dir / "report.md").read_text(encoding="utf-8")


def test_the_report_goes_where_the_run_says_by_default_under_the_current_directory(hw, tmp_path):
    """No report_dir: report/<refresh_id> in the directory ansible-playbook runs in, the same path printed and
    published as the rollout_report_dir artifact (never inside the collection)."""
    # survey answers are text: "yes" / "false" are booleans to the role (the positive control of "maybe")
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-where", template_overrides=overrides("where"), clusters=["l4"],
                            undo_on_failure="yes", canary="false", control_plane="no"),
                       None, check=True, limit="hw-lab", cwd=tmp_path)
    assert run.rc == 0, run.explain()
    where = tmp_path / "report" / "it-where"
    assert (where / "report.json").is_file() and (where / "report.html").is_file()
    assert f"{where}/report.html" in run.stdout, run.explain()
    assert not list((REPO / "playbooks").glob("report*")), "a report inside the collection"


def test_bad_variables_are_refused_by_the_first_play_before_any_management_cluster_is_read(hw, tmp_path):
    """Variables that used to write or to fail unclearly, all at once: the first play names each (serial and
    max_fail_percentage of the refresh play are made from batch_size and failure_budget_percent, so it must come
    first) and nothing is read, let alone written. The other bad variables are in test_bad_input_matrix.py."""
    clusters = mgmts(hw)
    marks = {name: m.mark() for name, m in clusters.items()}
    bad = {"batch_size": "abc", "failure_budget_percent": 150, "max_inflight": 2, "max_in_flight": "150%",
           "soak_seconds": "1e11", "not_after": "tomorrow", "not_before": "2026-02-30T22:00:00Z", "canary": "yes please",
           "template_overrides": {"customImage": "kindest/node:v1\u0000"}}
    run = run_playbook(hw.inventory, "hardware_refresh.yml", dict(FAST, refresh_id="it-bad", clusters=["l4"], **bad),
                       tmp_path / "report")
    assert run.rc != 0, run.explain()
    for expected in ("batch_size must be a whole number from 1 to 10000 management clusters or a whole percentage from 1% "
                     "to 100%", "got 'abc'", "failure_budget_percent must be a whole number from 0 to 100 percent",
                     "max_inflight is not a variable of playbooks/hardware_refresh.yml (its header lists them); did you "
                     "mean max_in_flight?", "max_in_flight must be", "'150%'", "soak_seconds must be a whole number from 0 "
                     "to 86400 seconds", "'1e11'", "not_after: 'tomorrow' is not an RFC 3339 time",
                     "not_before: '2026-02-30T22:00:00Z' is not an RFC 3339 time", "canary must be true or false",
                     "template_overrides.customImage contains the control character", "nothing was read or changed"):
        assert expected in " ".join(run.stdout.split()), f"{expected!r} not in:\n{run.explain()}"
    assert "PLAY [Rolling hardware refresh" not in run.stdout and "Unexpected Exception" not in run.stdout, run.explain()
    for name, m in clusters.items():
        assert m.requests(marks[name]) == [], f"{name}: read despite bad variables"
    # positive control: the same run with good variables gets past the check and reads the management cluster
    good = run_playbook(hw.inventory, "hardware_refresh.yml",
                        dict(FAST, refresh_id="it-bad", clusters=["l4"], template_overrides=overrides("bad"), batch_size="1",
                             max_in_flight="50%", soak_seconds="60", canary="yes"), tmp_path / "good", check=True,
                        limit="hw-lab")
    assert good.rc == 0, good.explain()
    assert [r for r in clusters["hw-lab"].requests(marks["hw-lab"]) if "/machinedeployments" in r["requestURI"]]


def test_the_role_refuses_its_own_bad_settings_and_an_empty_image_before_anything_is_written(hw, tmp_path):
    """The role's own check (a role variable given directly: a typo, a boolean the bool filter would take for false, a
    hook that names no file), then an empty image (the current template has one) refused in the plan, in a real run:
    nothing written."""
    clusters = mgmts(hw)
    marks = {name: m.mark() for name, m in clusters.items()}
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-bad-role", template_overrides=overrides("bad"), clusters=["l4"],
                            hardware_refresh_soak_second=5, hardware_refresh_canary="y",
                            hardware_refresh_after_wave="hooks/missing.yml"), tmp_path / "report", limit="hw-lab")
    assert run.rc != 0, run.explain()
    for expected in ("hardware_refresh_soak_second is not a setting of this role; did you mean hardware_refresh_soak_seconds?",
                     "hardware_refresh_canary must be true or false (also yes/no, on/off, 1/0), got 'y'",
                     "hardware_refresh_after_wave: 'hooks/missing.yml' is no task file on the Ansible host"):
        assert expected in " ".join(run.stdout.split()), f"{expected!r} not in:\n{run.explain()}"
    empty = run_playbook(hw.inventory, "hardware_refresh.yml",
                         dict(FAST, refresh_id="it-bad-image", template_overrides={"customImage": ""}, clusters=["l4"]),
                         tmp_path / "empty", limit="hw-lab")
    assert empty.rc != 0, empty.explain()
    assert "spec.template.spec.customImage is empty, but the current template has 'kindest/node:" in empty.stdout, empty.explain()
    for name, m in clusters.items():
        assert m.writes(marks[name]) == [], f"{name}: written despite a bad setting"
    # positive control: the empty image was refused after the plan read the management cluster
    assert [r for r in clusters["hw-lab"].requests(marks["hw-lab"]) if "/machinedeployments" in r["requestURI"]]


def test_fewer_forks_than_management_clusters_in_a_batch_are_refused_before_anything_is_read(hw, tmp_path):
    """With 2 forks for a batch of 3 the waits and soaks would run in rounds: refused, nothing read; batch_size 2 (the
    positive control) plans all three, two at a time."""
    clusters = mgmts(hw)
    marks = {name: m.mark() for name, m in clusters.items()}
    extra = dict(FAST, refresh_id="it-forks", template_overrides=overrides("forks"))
    run = run_playbook(hw.inventory, "hardware_refresh.yml", extra, tmp_path / "refused", check=True, env={"ANSIBLE_FORKS": "2"})
    assert run.rc != 0, run.explain()
    assert "forks is 2 but this batch has 3 management clusters" in run.stdout, run.explain()
    assert "Run with --forks 3" in run.stdout and "set batch_size to 2 or less" in run.stdout, run.explain()
    for name, m in clusters.items():
        assert m.requests(marks[name]) == [], f"{name}: read despite too few forks"
    run = run_playbook(hw.inventory, "hardware_refresh.yml", dict(extra, batch_size=2), tmp_path / "batched", check=True,
                       env={"ANSIBLE_FORKS": "2"})
    assert run.rc == 0, run.explain()
    for name, m in clusters.items():
        assert [r for r in m.requests(marks[name]) if "/machinedeployments" in r["requestURI"]], f"{name}: not planned"


@pytest.mark.parametrize("check", [True, False], ids=["check", "apply"])
def test_a_typo_in_the_overrides_fails_the_dry_run_as_it_fails_the_real_run(hw, tmp_path, check):
    """The API server would prune the unknown field: the clone's dry run shows it, the object is blocked and,
    with on_blocked fail, check mode fails with the real run's failure and exit code; nothing is written."""
    lab = mgmts(hw)["hw-lab"]
    mark = lab.mark()
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-typo", template_overrides={"customImag": "kindest/node:typo"}, clusters=["l4"]),
                       tmp_path / "report", check=check, limit="hw-lab")
    assert run.rc == 2, run.explain()
    entry = run.cluster("hw-lab")
    assert entry["result"] == "failed", entry
    assert "1 object(s) blocked" in entry["failure_reason"] and "l4-md-0" in entry["failure_reason"], entry
    assert "drops spec.template.spec.customImag" in entry["failure_reason"], entry
    assert lab.writes(mark) == []
    # positive control: the clone was asked of the API server, as a dry run, after the look at the lock (its take as
    # a dry run), in the same order in check mode and in a real run
    dry_runs = [e["objectRef"]["resource"] for e in lab.handle.audit_log(since=mark).dry_runs(user="rollout-operator")]
    assert dry_runs == ["leases", "dockermachinetemplates"], dry_runs
    if check:
        # on_blocked skip: the object is left out and the dry run succeeds, as the real run would
        skip = run_playbook(hw.inventory, "hardware_refresh.yml",
                            dict(FAST, refresh_id="it-typo", template_overrides={"customImag": "kindest/node:typo"},
                                 clusters=["l4"], on_blocked="skip"), tmp_path / "skip", check=True, limit="hw-lab")
        assert skip.rc == 0, skip.explain()
        (obj,) = skip.cluster("hw-lab")["objects"]
        assert obj["action"] == "skip" and "customImag" in " ".join(obj["blockers"]), obj
        assert lab.writes(mark) == []


def test_rollout_status_reads_every_object_and_writes_nothing(hw, tmp_path):
    lab = mgmts(hw)["hw-lab"]
    mark = lab.mark()
    run = run_playbook(hw.inventory, "rollout_status.yml", {}, None, limit="hw-lab", cwd=tmp_path)
    assert run.rc == 0, run.explain()
    assert "hw-lab: " in run.stdout and " objects, " in run.stdout, run.explain()
    for name in ("l1-md-0", "l4-md-0", "l5-md-0"):
        assert f"machinedeployment/default/{name}" in run.stdout, name
    assert lab.writes(mark) == []
    # positive control: it read the cluster (one list per kind) and asked about the lock as a dry run
    verbs = [e["verb"] for e in lab.requests(mark) if "/machinedeployments" in e["requestURI"]]
    assert verbs and set(verbs) == {"list"}, verbs
    assert [e["objectRef"]["resource"] for e in lab.handle.audit_log(since=mark).dry_runs(user="rollout-operator")] == ["leases"]


def test_a_selection_that_matches_nothing_anywhere_fails_unless_allowed(hw, tmp_path):
    clusters = mgmts(hw)
    marks = {name: m.mark() for name, m in clusters.items()}
    base = dict(FAST, refresh_id="it-empty", template_overrides=overrides("empty"), clusters="l4x")
    typo = run_playbook(hw.inventory, "hardware_refresh.yml", base, tmp_path / "typo", check=True)
    assert typo.rc == 2, typo.explain()
    assert "the selection matched no MachineDeployment or control plane on any of the 3 management cluster(s)" in typo.stdout
    assert "clusters l4x" in typo.stdout and "allow_empty=true" in typo.stdout
    allowed = run_playbook(hw.inventory, "hardware_refresh.yml", dict(base, allow_empty="yes"), tmp_path / "ok", check=True)
    assert allowed.rc == 0, allowed.explain()
    refused = run_playbook(hw.inventory, "hardware_refresh.yml", dict(base, allow_empty="maybe"), tmp_path / "bad", check=True)
    assert refused.rc != 0 and "allow_empty must be true or false (also yes/no, on/off, 1/0), got 'maybe'" in refused.stdout, \
        refused.explain()
    # positive control: the other runs did read every management cluster; none wrote
    for name, m in clusters.items():
        assert m.requests(marks[name]), name
        assert m.writes(marks[name]) == [], name
    # a cluster present on one management cluster only is no typo: the others rightly match nothing
    one = run_playbook(hw.inventory, "hardware_refresh.yml", dict(base, clusters="l4"), tmp_path / "one", check=True)
    assert one.rc == 0, one.explain()


def test_overrides_per_workload_cluster_and_a_note_on_another_kubernetes_version(hw, tmp_path):
    lab = mgmts(hw)["hw-lab"]
    mark = lab.mark()
    per_cluster = {"cluster:l4": {"overrides": {"customImage": "kindest/node:v1.31.9"}}}
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-per-cluster", template_overrides=overrides("global"), clusters=["l4", "l1"],
                            object_templates=per_cluster), tmp_path / "report", check=True, diff=True, limit="hw-lab")
    assert run.rc == 0, run.explain()
    l4 = run.obj("hw-lab", "l4-md-0")
    assert any("Kubernetes v1.31.9" in note and "runs v1.32.0" in note for note in l4["notes"]), l4
    assert not any("Kubernetes" in note for note in run.obj("hw-lab", "l1-md-0")["notes"])
    # --diff shows each new template (the API server's answer to the dry-run create): l4's own image, the
    # global one for l1's two pools
    assert run.stdout.count('customImage: "kindest/node:v1.31.9"') == 1, run.explain()
    assert run.stdout.count('customImage: "kindest/node:global"') == 2, run.explain()
    assert lab.writes(mark) == []


def test_rollback_refuses_a_revision_that_is_not_a_number(hw, tmp_path):
    lab = mgmts(hw)["hw-lab"]
    mark = lab.mark()
    run = run_playbook(hw.inventory, "rollback.yml", {"revision": "two", "machine_deployments": "l4-md-0"}, tmp_path / "r",
                       limit="hw-lab")
    assert run.rc != 0 and "a revision number, 0 for the previous one; got two" in run.stdout, run.explain()
    assert lab.writes(mark) == [] and lab.requests(mark) == []
    # positive control: a valid call reads the cluster
    ok = run_playbook(hw.inventory, "rollback.yml", {"revision": "0", "machine_deployments": "no-such-md"}, tmp_path / "ok",
                      limit="hw-lab")
    assert ok.rc == 0, ok.explain()
    assert lab.requests(mark) and lab.writes(mark) == []


def test_refresh_three_management_clusters_in_waves_with_soak(hw, tmp_path):
    clusters = mgmts(hw)
    selected = {"hw-east": ["e1-md-0", "e1-md-1"], "hw-west": ["w1-md-0", "w1-md-1"], "hw-lab": ["l1-md-0", "l1-md-1"]}
    before = {(h, md): clusters[h].revision(md) for h, mds in selected.items() for md in mds}
    marks = {name: m.mark() for name, m in clusters.items()}
    started = time.monotonic()
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-e2e", template_overrides=overrides("e2e"), control_plane=True,
                            clusters=["e1", "w1", "l1"], max_in_flight=2, soak_seconds=2), tmp_path / "report")
    took = time.monotonic() - started
    assert run.rc == 0, run.explain()
    report = run.report
    assert report["mode"] == "apply" and report["started"] and report["finished"]
    for host in HOSTS:
        entry = run.cluster(host)
        assert entry["result"] == "succeeded", (host, entry.get("failure_reason"), run.explain())
        assert entry["lock"]["holder"] and entry["lock"]["released"]
        assert clusters[host].lease_holder() is None, f"{host}: the lock was not released"
        for wave in entry["waves"]:
            assert wave["result"] == "succeeded"
            soak = datetime.datetime.fromisoformat(wave["soak_finished"].replace("Z", "+00:00")) - \
                datetime.datetime.fromisoformat(wave["rollout_finished"].replace("Z", "+00:00"))
            assert soak.total_seconds() >= 2, wave
    # both CAPI versions, control planes first, a canary, waves of at most two objects
    assert [w["name"] for w in run.cluster("hw-east")["waves"]] == ["control-plane-1", "canary", "wave-1"]
    assert [w["name"] for w in run.cluster("hw-west")["waves"]] == ["control-plane-1", "canary", "wave-1"]
    assert [w["name"] for w in run.cluster("hw-lab")["waves"]] == ["canary", "wave-1"]
    assert run.cluster("hw-east")["api_version"].endswith("v1beta1")
    assert run.cluster("hw-west")["api_version"].endswith("v1beta2")
    for host, mds in selected.items():
        for md in mds:
            obj = run.obj(host, md)
            assert obj["result"] == "succeeded" and obj["action"] == "switch", obj
            new = obj["after"]["infrastructure_ref"]["name"]
            assert clusters[host].infra_template("MachineDeployment", md) == new
            if PLAN:
                assert PLAN[(host, md)] == new, "the check-mode plan named another template"
            assert clusters[host].revision(md) == before[(host, md)] + 1
            assert len(clusters[host].machine_set_creates(marks[host], md)) == 1
            assert clusters[host].templates()[new]["spec"]["template"]["spec"]["customImage"] == "kindest/node:e2e"
            assert clusters[host].last_rollout("MachineDeployment", md)["id"] == "it-e2e"
    for host, kcp in (("hw-east", "e1-control-plane"), ("hw-west", "w1-control-plane")):
        obj = run.obj(host, kcp)
        assert obj["result"] == "succeeded" and obj["wave"] == 0
        assert clusters[host].infra_template("KubeadmControlPlane", kcp) == obj["after"]["infrastructure_ref"]["name"]
    # progress while waiting: one line per change of state, as it happens
    assert "hw-west | " in run.stdout and "successfully rolled out" in run.stdout and "soak passed" in run.stdout
    assert "SUCCEEDED" in run.stdout and str(run.report_dir) in run.stdout
    html = (run.report_dir / "report.html").read_text(encoding="utf-8")
    assert "e1-md-0" in html and "succeeded" in html.lower()
    print(f"end-to-end refresh of 3 management clusters took {took:.0f}s")

    # A re-run with the same refresh id finds everything on target and starts nothing.
    marks = {name: m.mark() for name, m in clusters.items()}
    again = run_playbook(hw.inventory, "hardware_refresh.yml",
                         dict(FAST, refresh_id="it-e2e", template_overrides=overrides("e2e"), control_plane=True,
                              clusters=["e1", "w1", "l1"], max_in_flight=2), tmp_path / "again")
    assert again.rc == 0, again.explain()
    for host, mds in selected.items():
        assert again.cluster(host)["result"] == "succeeded"
        for md in mds:
            assert again.obj(host, md)["action"] == "unchanged"
            assert clusters[host].switches(marks[host], "machinedeployments", md) == []


def test_failing_template_stops_its_wave_is_undone_and_the_others_finish(hw, tmp_path):
    clusters = mgmts(hw)
    west = clusters["hw-west"]
    original = west.infra_template("MachineDeployment", "w2-md-0")
    untouched = west.infra_template("MachineDeployment", "w2-md-1")
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-fail", template_overrides=overrides("fail"), clusters=["e2", "w2", "l2"],
                            stall_timeout=8,
                            object_templates={"w2-md-0": {"annotations": {"sim.capi-rollout.dev/fail-provisioning": "true"}}}),
                       tmp_path / "report")
    # the failed management cluster fails the play (max_fail_percentage), after the report is written
    assert run.rc != 0, run.explain()
    assert run.cluster("hw-east")["result"] == "succeeded"
    assert run.cluster("hw-lab")["result"] == "succeeded"
    entry = run.cluster("hw-west")
    assert entry["result"] == "failed", entry
    assert "w2-md-0" in entry["failure_reason"] and entry["next_step"]
    failed = run.obj("hw-west", "w2-md-0")
    assert failed["result"] == "failed" and failed["wave"] == 0
    assert failed["failure_reason"].startswith("stalled"), failed["failure_reason"]
    assert failed["stuck_machines"] and failed["stuck_machines"][0]["name"].startswith("w2-md-0-")
    assert "InfrastructureReady" in failed["stuck_machines"][0]["reason"]
    assert failed["undo"]["result"] == "succeeded" and failed["undo"]["finished"]
    # the report's "after" is what the cluster holds once undone, read back, not the planned target
    assert failed["after"]["infrastructure_ref"]["name"] == original
    # undone: back on its old template; the later wave never started
    assert west.infra_template("MachineDeployment", "w2-md-0") == original
    assert west.md("w2-md-0")["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"]
    assert west.last_rollout("MachineDeployment", "w2-md-0")["id"] == "it-fail-undo"
    assert run.obj("hw-west", "w2-md-1")["result"] == "pending"
    assert west.infra_template("MachineDeployment", "w2-md-1") == untouched
    assert [w["result"] for w in entry["waves"]] == ["failed"]
    assert west.lease_holder() is None
    # the report says what failed and why, at the top
    markdown = (run.report_dir / "report.md").read_text(encoding="utf-8")
    attention = markdown.split("## Needs attention", 1)[1].split("## Management clusters", 1)[0]
    assert "w2-md-0" in attention and "stalled" in attention and "w2-md-0-" in attention
    assert "w2-md-0" in (run.report_dir / "report.html").read_text(encoding="utf-8")

    # A re-run with the same id skips the undone object and finishes the wave that was not started.
    again = run_playbook(hw.inventory, "hardware_refresh.yml",
                         dict(FAST, refresh_id="it-fail", template_overrides=overrides("fail"), clusters=["w2"],
                              object_templates={"w2-md-0": {"annotations": {"sim.capi-rollout.dev/fail-provisioning": "true"}}}),
                         tmp_path / "again", limit="hw-west")
    assert again.rc == 0, again.explain()
    assert again.obj("hw-west", "w2-md-0")["action"] == "skip"
    assert again.obj("hw-west", "w2-md-1")["result"] == "succeeded"
    assert west.infra_template("MachineDeployment", "w2-md-0") == original


def test_a_hand_edit_mid_wave_is_reported_as_drift_and_a_rerun_switches_again(hw, tmp_path):
    """A colleague switches a pool back to its old template while its wave rolls out: the wave fails with the
    drift named (never SUCCEEDED), the report's "after" is the template on the cluster; a re-run with the
    same refresh id switches it again and finishes."""
    clusters = mgmts(hw)
    pools = {"hw-east": "e5-md-0", "hw-west": "w5-md-0"}
    originals = {h: clusters[h].infra_template("MachineDeployment", md) for h, md in pools.items()}
    slow = {md: {"annotations": {"sim.capi-rollout.dev/provision-seconds": "20"}} for md in pools.values()}
    extra = dict(FAST, refresh_id="it-drift", template_overrides=overrides("drift"), clusters=["e5", "w5"],
                 object_templates=slow, undo_on_failure=False)
    with Background(hw.inventory, "hardware_refresh.yml", extra, tmp_path / "first", limit="hw-east,hw-west") as first:
        for host, md in pools.items():
            wait_for(f"{md} switched", lambda h=host, m=md: clusters[h].infra_template("MachineDeployment", m) != originals[h], 120)
            hand_edit(clusters[host], md, originals[host])
        run = first.wait(300)
    assert run.rc != 0, run.explain()
    for host, md in pools.items():
        assert run.cluster(host)["result"] == "failed", run.cluster(host)
        obj = run.obj(host, md)
        assert obj["result"] == "failed", obj
        assert "changed by kubectl-edit at " in obj["failure_reason"] and originals[host] in obj["failure_reason"], obj
        assert obj["after"]["infrastructure_ref"]["name"] == originals[host], obj  # read back, not the plan
        wait_for(f"{md} back on its old MachineSet", lambda h=host, m=md: readiness.is_complete(
            clusters[h].md(m), clusters[h].version), 120)

    again = run_playbook(hw.inventory, "hardware_refresh.yml", dict(extra, object_templates={}), tmp_path / "again",
                         limit="hw-east,hw-west")
    assert again.rc == 0, again.explain()
    for host, md in pools.items():
        obj = again.obj(host, md)
        assert obj["action"] == "switch" and obj["result"] == "succeeded", obj
        assert any("switching again" in note for note in obj["notes"]), obj["notes"]
        on_cluster = clusters[host].infra_template("MachineDeployment", md)
        assert on_cluster != originals[host] and obj["after"]["infrastructure_ref"]["name"] == on_cluster


def hand_edit(mgmt, md, template):
    """Switch ``md`` to ``template`` as `kubectl edit` writes it (field manager kubectl-edit, which drift messages name)."""
    mgmt.admin.request("PATCH", mgmt.path("MachineDeployment", "default", md),
                       body={"spec": {"template": {"spec": {"infrastructureRef": {"name": template}}}}},
                       params={"fieldManager": "kubectl-edit"}, content_type="application/merge-patch+json")


def waiting(run, host, md):
    """Whether the background ``run`` printed the progress of its wait for ``md`` on ``host``."""
    return any(line.startswith(f"{host} | ") and f"Waiting for machinedeployment/default/{md} rollout" in line
               for line in run.output().splitlines())


def test_a_machine_deployment_or_a_target_template_deleted_mid_wave_is_reported_as_such(hw, tmp_path):
    """As admin while the waves roll: on hw-east one MachineDeployment of a two-object wave is deleted, on hw-west the
    target template of the switch (its Machines were made already: the rollout completes). Neither ends SUCCEEDED nor
    running: the MD is deleted, seen gone at a time, not undone, and the other MD of its wave is undone; the object
    whose template is gone fails with the template named and is switched back onto its old one, which exists."""
    east, west = mgmts(hw)["hw-east"], mgmts(hw)["hw-west"]
    gone_md, kept_md, lost = "e8-md-1", "e8-md-0", "w7-md-0"
    originals = {md: east.infra_template("MachineDeployment", md) for md in (gone_md, kept_md)}
    originals[lost] = west.infra_template("MachineDeployment", lost)

    slow = {md: {"annotations": {"sim.capi-rollout.dev/provision-seconds": "10"}} for md in originals}
    with Background(hw.inventory, "hardware_refresh.yml",
                    dict(FAST, refresh_id="it-gone", template_overrides=overrides("gone"), clusters=["e8", "w7"],
                         object_templates=slow, max_in_flight=2, canary=False),
                    tmp_path / "report", limit="hw-east,hw-west") as first:
        # once the waits have begun (their first progress lines): gone while they watch, not before
        wait_for("the waits of the wave", lambda: waiting(first, "hw-east", gone_md) and waiting(first, "hw-west", lost), 120)
        target = west.infra_template("MachineDeployment", lost)
        west.admin.delete(west.path("DockerMachineTemplate", "default", target))
        east.admin.delete(east.path("MachineDeployment", "default", gone_md))
        run = first.wait(300)
    assert run.rc == 2, run.explain()

    entry = run.cluster("hw-east")
    assert entry["result"] == "failed", entry
    deleted = run.obj("hw-east", gone_md)
    assert deleted["result"] == "deleted" and deleted["finished"], deleted
    assert f"machinedeployment/default/{gone_md} no longer exists (seen gone at {deleted['finished']})" in deleted["failure_reason"]
    assert deleted.get("undo") is None, "a deleted object is not undone"
    kept = run.obj("hw-east", kept_md)
    assert kept["result"] == "undone" and kept["undo"]["result"] == "succeeded", kept
    assert east.infra_template("MachineDeployment", kept_md) == originals[kept_md]
    markdown = (run.report_dir / "report.md").read_text(encoding="utf-8")
    assert "\U0001f5d1\ufe0f deleted" in markdown and "1 deleted" in markdown
    assert "status-deleted" in (run.report_dir / "report.html").read_text(encoding="utf-8")

    entry = run.cluster("hw-west")
    assert entry["result"] == "failed", entry
    failed = run.obj("hw-west", lost)
    assert failed["result"] == "failed", failed
    assert failed["failure_reason"].startswith("its template was deleted during the wave: "), failed
    assert f"is on DockerMachineTemplate default/{target}, which no longer exists" in failed["failure_reason"]
    assert failed["undo"]["result"] == "succeeded" and failed["after"]["infrastructure_ref"]["name"] == originals[lost]
    assert west.infra_template("MachineDeployment", lost) == originals[lost]
    assert "Find out who deleted the template" in entry["next_step"]
    for host in ("hw-east", "hw-west"):
        assert run.cluster(host)["lock"]["released"], host


def test_the_automatic_undo_leaves_a_pool_edited_mid_wave_alone_and_names_the_editor(hw, tmp_path):
    """A colleague switches a pool to a third template while its wave rolls out: the wave fails on the drift, and
    the undo neither moves it onto the refresh's own target (what "the previous revision" is then) nor reports
    success: it stops, naming the editor."""
    east = mgmts(hw)["hw-east"]
    md = "e9-md-0"
    original = east.infra_template("MachineDeployment", md)
    template = east.get("DockerMachineTemplate", original)
    hand = f"{original}-hand"
    east.admin.create(east.path("DockerMachineTemplate"), {
        "apiVersion": template["apiVersion"], "kind": "DockerMachineTemplate",
        "metadata": {"name": hand, "namespace": "default", "labels": template["metadata"].get("labels") or {}},
        "spec": template["spec"]})
    extra = dict(FAST, refresh_id="it-undo-edit", template_overrides=overrides("undo-edit"), clusters=["e9"],
                 object_templates={md: {"annotations": {"sim.capi-rollout.dev/provision-seconds": "20"}}})
    with Background(hw.inventory, "hardware_refresh.yml", extra, tmp_path / "first", limit="hw-east") as first:
        wait_for(f"{md} switched", lambda: east.infra_template("MachineDeployment", md) != original, 120)
        target = east.infra_template("MachineDeployment", md)
        hand_edit(east, md, hand)
        run = first.wait(300)
    assert run.rc != 0, run.explain()
    obj = run.obj("hw-east", md)
    assert obj["result"] == "failed" and "changed by kubectl-edit at " in obj["failure_reason"], obj
    assert obj["undo"]["result"] == "failed", obj
    assert "kubectl-edit" in obj["next_step"] and "instead of fighting that change" in obj["next_step"], obj["next_step"]
    assert east.infra_template("MachineDeployment", md) == hand != target
    assert east.last_rollout("MachineDeployment", md)["id"] == "it-undo-edit"  # no undo was written


def test_batch_size_one_rolls_one_management_cluster_at_a_time_into_one_report(hw, tmp_path):
    """serial (batch_size, the AWX survey default is 25%): every batch runs, and the report written after the
    last batch holds every management cluster, read back from the cluster."""
    clusters = mgmts(hw)
    pools = {"hw-east": "e6-md-0", "hw-west": "w6-md-0", "hw-lab": "l4-md-0"}
    originals = {h: clusters[h].infra_template("MachineDeployment", md) for h, md in pools.items()}
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-batch", template_overrides=overrides("batch"), clusters=["e6", "w6", "l4"],
                            batch_size=1), tmp_path / "report")
    assert run.rc == 0, run.explain()
    assert "reserved name" not in run.stdout, "the failure budget variable must not be a reserved name"
    assert run.report["management_clusters"] and len(run.report["management_clusters"]) == 3
    started = []
    for host, md in pools.items():
        entry = run.cluster(host)
        assert entry["result"] == "succeeded", entry
        obj = run.obj(host, md)
        on_cluster = clusters[host].infra_template("MachineDeployment", md)
        assert on_cluster != originals[host] and obj["after"]["infrastructure_ref"]["name"] == on_cluster, obj
        started.append((entry["started"], entry["finished"]))
    # one batch after the other: each management cluster started after the previous one finished
    started.sort()
    assert all(later[0] >= earlier[1] for earlier, later in zip(started, started[1:])), started

    # playbooks/rollback.yml selects exactly (a longer name is another object), from an AWX textarea
    nothing = run_playbook(hw.inventory, "rollback.yml", {"refresh_id": "it-batch", "machine_deployments": "l4-md-0x"},
                           tmp_path / "none")
    assert nothing.rc == 0, nothing.explain()
    assert "nothing to roll back on hw-lab" in nothing.stdout, nothing.explain()
    assert clusters["hw-lab"].infra_template("MachineDeployment", "l4-md-0") != originals["hw-lab"]
    back = run_playbook(hw.inventory, "rollback.yml", dict(FAST, refresh_id="it-batch",
                                                           machine_deployments="default/e6-md-0\nw6-md-0\n"), tmp_path / "back")
    assert back.rc == 0, back.explain()
    for host in ("hw-east", "hw-west"):
        assert clusters[host].infra_template("MachineDeployment", pools[host]) == originals[host], host
    assert clusters["hw-lab"].infra_template("MachineDeployment", "l4-md-0") != originals["hw-lab"], "not named: left alone"


def test_the_failure_budget_counts_every_batch_so_far_and_100_never_stops_a_batch(hw, tmp_path):
    """batch_size 1 and the first management cluster fails (a typo in its overrides blocks its object; a dry run, so
    nothing rolls): with failure_budget_percent 100 the later batches still run (Ansible alone would stop after a
    batch whose every host failed); with 0 they are not started and the run says why. Both fail the run."""
    clusters = mgmts(hw)
    marks = {name: m.mark() for name, m in clusters.items()}
    extra = dict(FAST, refresh_id="it-budget", template_overrides=overrides("budget"), clusters=["e6", "w6", "l4"],
                 object_templates={"e6-md-0": {"overrides": {"customImag": "kindest/node:typo"}}}, batch_size=1)
    spent_line = "failure budget spent: 1 of 1 management cluster(s) failed so far (hw-east)"
    run = run_playbook(hw.inventory, "hardware_refresh.yml", dict(extra, failure_budget_percent=100), tmp_path / "all",
                       check=True)
    assert run.rc == 2, run.explain()
    assert [run.cluster(host)["result"] for host in HOSTS] == ["failed", "planned", "planned"], run.explain()
    assert "customImag" in run.cluster("hw-east")["failure_reason"] and spent_line not in run.stdout
    assert re.search(r"hw-east\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=1", run.stdout), run.explain()
    # positive control: a budget of 0 stops after the first batch, naming what is not started
    strict = run_playbook(hw.inventory, "hardware_refresh.yml", dict(extra, failure_budget_percent="0"), tmp_path / "strict",
                          check=True)
    assert strict.rc == 2, strict.explain()
    assert f"{spent_line}, more than failure_budget_percent=0%; the later batches are not started: hw-west, hw-lab" \
        in " ".join(strict.stdout.split()), strict.explain()  # the message as printed, without its line breaks
    assert strict.cluster("hw-east")["result"] == "failed"
    for host in ("hw-west", "hw-lab"):
        assert strict.cluster(host)["result"] == "skipped" and "not started" in strict.cluster(host)["failure_reason"]
    for name, m in clusters.items():
        assert m.writes(marks[name]) == [], f"{name}: a dry run wrote"


def test_interrupted_run_resumes_with_one_new_machine_set_per_machine_deployment(hw, tmp_path):
    clusters = mgmts(hw)
    mds = {"hw-east": ["e3-md-0", "e3-md-1"], "hw-west": ["w3-md-0", "w3-md-1"]}
    before = {(h, md): clusters[h].revision(md) for h, names in mds.items() for md in names}
    marks = {h: clusters[h].mark() for h in mds}
    extra = dict(FAST, refresh_id="it-resume", template_overrides=overrides("resume"), clusters=["e3", "w3"],
                 max_in_flight=2, lock_duration=8)
    first = Background(hw.inventory, "hardware_refresh.yml", extra, tmp_path / "first", limit="hw-east,hw-west")

    def switched():
        return all(clusters[h].last_rollout("MachineDeployment", names[0]).get("id") == "it-resume" for h, names in mds.items())

    try:
        wait_for("the canary waves to be switched", switched, 180)
    finally:
        first.kill()  # mid-wave: the canaries are rolling out, the lock is held; nothing of the run goes on
    assert "PLAY RECAP" not in first.output()
    assert all(clusters[h].lease_holder() for h in mds), "the killed run should have left its lock behind"

    again = run_playbook(hw.inventory, "hardware_refresh.yml", dict(extra, lock_wait_timeout=60), tmp_path / "again",
                         limit="hw-east,hw-west")
    assert again.rc == 0, again.explain()
    for host, names in mds.items():
        entry = again.cluster(host)
        assert entry["result"] == "succeeded", entry
        assert any("taken over" in note for note in entry["notes"]), entry["notes"]
        for md in names:
            obj = again.obj(host, md)
            assert obj["result"] == "succeeded", obj
            # exactly one rollout per MachineDeployment over both runs
            assert clusters[host].revision(md) == before[(host, md)] + 1, md
            assert len(clusters[host].machine_set_creates(marks[host], md)) == 1, md
            # one switch that took: the killed run's, or the re-run's when the kill cut the first one off before it was
            # stored (a PATCH cut off may be stored and audited as an error: then the re-run resumes and sends none)
            assert len(clusters[host].switches(marks[host], "machinedeployments", md)) <= 1, md
            assert clusters[host].switches(marks[host], "machinedeployments", md, codes=None), f"{md}: no switch sent"
            assert [e["rollout_id"] for e in clusters[host].history("MachineDeployment", md)].count("it-resume") == 1
        assert clusters[host].lease_holder() is None


def test_second_run_on_a_locked_management_cluster_fails_clearly(hw, tmp_path):
    lab = mgmts(hw)["hw-lab"]
    first = Background(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-lock-a", template_overrides=overrides("lock-a"), clusters=["l3"], soak_seconds=15),
                       tmp_path / "first", limit="hw-lab")
    try:
        holder = wait_for("the first run to take the lock", lab.lease_holder, 120)
        # a dry run meanwhile plans as usual and says that a real run would wait for the lock (nothing is taken)
        peek = run_playbook(hw.inventory, "hardware_refresh.yml",
                            dict(FAST, refresh_id="it-lock-b", template_overrides=overrides("lock-b"), clusters=["l3"],
                                 lock_wait_timeout=30), tmp_path / "peek", check=True, limit="hw-lab")
        second = run_playbook(hw.inventory, "hardware_refresh.yml",
                              dict(FAST, refresh_id="it-lock-b", template_overrides=overrides("lock-b"), clusters=["l3"]),
                              tmp_path / "second", limit="hw-lab")
        still_held = lab.lease_holder()
    finally:
        done = first.wait(timeout=300)
    assert second.rc != 0, second.explain()
    entry = second.cluster("hw-lab")
    assert entry["result"] == "failed"
    reason = entry["failure_reason"]
    assert reason.startswith("lock: ") and f"held by {holder}" in reason and "refresh_id it-lock-a" in reason, reason
    assert "nothing was changed" in reason and "Another run" in entry["next_step"]
    assert still_held == holder, "the second run must not take or release the first run's lock"
    assert peek.rc == 0, peek.explain()
    (note,) = [note for note in peek.cluster("hw-lab")["notes"] if note.startswith("lock: ")]
    assert f"held by {holder}" in note and note.endswith(" - a run now would wait up to 30s for it"), note
    assert [obj["name"] for obj in peek.cluster("hw-lab")["objects"]] == ["l3-md-0", "l3-md-1"], peek.explain()
    for md in ("l3-md-0", "l3-md-1"):
        assert "it-lock-b" not in [e["rollout_id"] for e in lab.history("MachineDeployment", md)]
    assert not [name for name, t in lab.templates().items()
                if t["spec"]["template"]["spec"].get("customImage") == "kindest/node:lock-b"]
    assert done.rc == 0, done.explain()
    assert done.cluster("hw-lab")["result"] == "succeeded"
    assert lab.lease_holder() is None


def test_a_run_that_waited_for_the_lock_plans_again_from_what_it_finds(hw, tmp_path):
    """Two runs of the same refresh: the second finds the lock held, waits for it, plans under it and finds
    every object already on its target."""
    lab = mgmts(hw)["hw-lab"]
    mark = lab.mark()
    extra = dict(FAST, refresh_id="it-wait", template_overrides=overrides("wait"), clusters=["l6"], soak_seconds=6)
    first = Background(hw.inventory, "hardware_refresh.yml", extra, tmp_path / "first", limit="hw-lab")
    try:
        wait_for("the first run to take the lock", lab.lease_holder, 120)
        second = run_playbook(hw.inventory, "hardware_refresh.yml", dict(extra, lock_wait_timeout=240), tmp_path / "second",
                              limit="hw-lab")
    finally:
        done = first.wait(timeout=300)
    assert done.rc == 0 and done.cluster("hw-lab")["result"] == "succeeded", done.explain()
    assert second.rc == 0, second.explain()
    entry = second.cluster("hw-lab")
    assert any(note.startswith("planned after taking the lock") for note in entry["notes"]), entry["notes"]
    # planned once, under the lock: from the cluster the first run left (a plan made while it rolled would
    # have switched l6-md-1 again, or found the pools "already rolling out")
    assert second.stdout.count("CURRENT TEMPLATE -> TARGET") == 1, second.explain()
    assert [(obj["name"], obj["action"]) for obj in entry["objects"]] == [("l6-md-0", "unchanged"), ("l6-md-1", "unchanged")]
    for md in ("l6-md-0", "l6-md-1"):
        assert len(lab.switches(mark, "machinedeployments", md)) == 1, md  # the first run's switch only
    assert lab.lease_holder() is None


def test_a_lock_taken_by_someone_else_mid_run_fails_the_wave_and_the_release_is_reported(hw, tmp_path):
    """A colleague force-takes the Lease while a wave rolls out: the wait fails (lock_lost), and the release
    at the end finds the colleague's lock - reported as such in the notes, the lock never shown as released."""
    lab = mgmts(hw)["hw-lab"]
    slow = {"l5-md-0": {"annotations": {"sim.capi-rollout.dev/provision-seconds": "20"}}}
    with Background(hw.inventory, "hardware_refresh.yml",
                    dict(FAST, refresh_id="it-lost", template_overrides=overrides("lost"), clusters=["l5"],
                         object_templates=slow, undo_on_failure=False, lock_duration=6),
                    tmp_path / "first", limit="hw-lab") as first:
        wait_for("the run to switch l5-md-0", lambda: "it-lost" in [
            e["rollout_id"] for e in lab.history("MachineDeployment", "l5-md-0")], 120)
        lease = lab.lease()
        # a colleague's forced take: a fresh lease of their own (not stale, so it cannot be taken over)
        lease["spec"].update(holderIdentity="colleague/forced", leaseDurationSeconds=600,
                             renewTime=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
        lab.admin.replace(resource_path("coordination.k8s.io", "v1", "leases", "default", "capi-rollout-lock"), lease)
        run = first.wait(300)
    assert run.rc != 0, run.explain()
    entry = run.cluster("hw-lab")
    assert entry["result"] == "failed", entry
    assert "another run took the lock" in entry["failure_reason"] and "held by colleague/forced" in entry["failure_reason"]
    assert entry["objects"][0]["result"] != "succeeded", entry["objects"][0]
    # not released by this run, and said so: the colleague holds it
    assert entry["lock"]["released"] is None, entry["lock"]
    assert any(note.startswith("lock: not released by this run: ") and "colleague/forced" in note
               for note in entry["notes"]), entry["notes"]
    assert lab.lease_holder() == "colleague/forced"
    # the colleague is done: they release it (the later tests on hw-lab need the lock)
    lease = lab.lease()
    lease["spec"].pop("holderIdentity")
    lab.admin.replace(resource_path("coordination.k8s.io", "v1", "leases", "default", "capi-rollout-lock"), lease)
    assert lab.lease_holder() is None


def test_closed_maintenance_window_stops_new_waves(hw, tmp_path):
    """The window is judged by the API server's clock (the lock renewal before each wave reads it)."""
    east = mgmts(hw)["hw-east"]
    cluster = "e4"
    mds = (f"{cluster}-md-0", f"{cluster}-md-1")
    before = {md: east.infra_template("MachineDeployment", md) for md in mds}
    # the canary starts well inside the window (a loaded machine needs ~10 s to get there, CI under load once more
    # than 22 s); its soak outlasts it
    closes = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(seconds=50)
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       # survey-style text answers: a list as text, a dictionary as YAML
                       dict(FAST, refresh_id=f"it-window-{cluster}", template_overrides="customImage: kindest/node:window",
                            clusters=cluster, soak_seconds=55, not_after=closes.strftime("%Y-%m-%dT%H:%M:%SZ")),
                       tmp_path / "report", limit="hw-east")
    assert run.rc == 0, run.explain()  # a closed window is not a failure
    entry = run.cluster("hw-east")
    assert entry["result"] == "stopped_window", entry
    assert "maintenance window closed" in entry["failure_reason"] and f"it-window-{cluster}" in entry["next_step"]
    assert run.report["window"]["end"] == closes.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert [wave["result"] for wave in entry["waves"]] == ["succeeded"], entry["waves"]  # the canary ran
    for wave in entry["waves"]:
        wave_started = datetime.datetime.fromisoformat(wave["started"].replace("Z", "+00:00"))
        assert wave_started < closes, f"wave {wave['name']} started after the window closed"
    assert east.infra_template("MachineDeployment", mds[0]) != before[mds[0]]
    pending = [o for o in entry["objects"] if o["result"] == "pending"]
    assert pending and run.obj("hw-east", mds[1])["result"] == "pending"
    for obj in pending:
        assert east.infra_template("MachineDeployment", obj["name"]) == before[obj["name"]]
    assert json.loads((run.report_dir / "report.json").read_text(encoding="utf-8"))["management_clusters"][0]["name"] == "hw-east"


def _time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_the_window_and_the_reports_times_follow_the_api_servers_clock_not_the_ansible_hosts(hw, tmp_path):
    """The Ansible host's clock an hour ahead (libfaketime on ansible-playbook and everything it starts; the
    simulated API servers run on this machine's true clock). By the host's clock the window below closed long
    ago; by the API server's it opens 25 s after the run starts and is open for 10 minutes: the run waits for it,
    then refreshes. window_minutes is put on the API server's clock; every time in the report is the API server's."""
    east = mgmts(hw)["hw-east"]
    md = "e7-md-0"
    before = east.infra_template("MachineDeployment", md)
    skew = faked_clock(3600, monotonic=True)
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)

    # window_minutes, in a dry run: it ends 30 minutes after the start by the API server's clock (not 90)
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-skew-plan", template_overrides=overrides("skew"), clusters="e7",
                            window_minutes=30), tmp_path / "plan", check=True, limit="hw-east", env=skew)
    assert run.rc == 0, run.explain()
    end = _time(run.report["window"]["end"])
    assert abs((end - now).total_seconds() - 1800) < 90, (end, now)
    assert run.cluster("hw-east")["result"] == "planned"

    opens = now + datetime.timedelta(seconds=25)
    closes = now + datetime.timedelta(minutes=10)
    window = {"not_before": opens.strftime("%Y-%m-%dT%H:%M:%SZ"), "not_after": closes.strftime("%Y-%m-%dT%H:%M:%SZ")}
    run = run_playbook(hw.inventory, "hardware_refresh.yml",
                       dict(FAST, refresh_id="it-skew", template_overrides=overrides("skew"), clusters="e7", **window),
                       tmp_path / "report", limit="hw-east", env=skew)
    finished = datetime.datetime.now(datetime.timezone.utc)
    assert run.rc == 0, run.explain()
    entry = run.cluster("hw-east")
    assert entry["result"] == "succeeded", entry
    assert east.infra_template("MachineDeployment", md) != before
    assert run.obj("hw-east", md)["after"]["infrastructure_ref"]["name"] == east.infra_template("MachineDeployment", md)
    (wave,) = entry["waves"]
    # not started before the window opened by the API server's clock; every time is the API server's
    assert _time(wave["started"]) >= opens, (wave["started"], opens)
    for stamp in (entry["started"], entry["finished"], wave["started"], wave["finished"], entry["lock"]["acquired"],
                  entry["lock"]["released"], run.obj("hw-east", md)["started"]):
        assert now - datetime.timedelta(seconds=5) <= _time(stamp) <= finished + datetime.timedelta(seconds=5), stamp


def test_restart_playbook_replaces_every_machine_on_its_template_once(hw, tmp_path):
    """playbooks/restart.yml end to end: the same role without a template change; a re-run with the same
    restart_id restarts nothing again."""
    lab = mgmts(hw)["hw-lab"]
    mds = ("l2-md-0",)
    before = {md: (lab.revision(md), lab.infra_template("MachineDeployment", md)) for md in mds}
    mark = lab.mark()
    extra = dict(FAST, restart_id="it-restart", clusters="l2", soak_seconds=1)
    run = run_playbook(hw.inventory, "restart.yml", extra, tmp_path / "report", limit="hw-lab")
    assert run.rc == 0, run.explain()
    assert run.cluster("hw-lab")["result"] == "succeeded", run.cluster("hw-lab")
    for md in mds:
        revision, template = before[md]
        assert lab.revision(md) == revision + 1, md
        assert lab.infra_template("MachineDeployment", md) == template, "a restart keeps the template"
        assert lab.last_rollout("MachineDeployment", md).get("id") == "it-restart"
        assert len(lab.machine_set_creates(mark, md)) == 1, md
    again = run_playbook(hw.inventory, "restart.yml", extra, tmp_path / "again", limit="hw-lab")
    assert again.rc == 0, again.explain()
    assert [obj["action"] for obj in again.cluster("hw-lab")["objects"]] == ["unchanged"]
    for md in mds:
        assert lab.revision(md) == before[md][0] + 1 and len(lab.machine_set_creates(mark, md)) == 1, md
    assert again.report["refresh_id"] == "it-restart"

    # restart.yml is hardware_refresh.yml: a typo in the selection fails it too, allow_empty allows it
    mark = lab.mark()
    typo = run_playbook(hw.inventory, "restart.yml", dict(extra, clusters="l2x"), tmp_path / "typo", limit="hw-lab")
    assert typo.rc != 0 and "clusters l2x" in typo.stdout and "allow_empty=true" in typo.stdout, typo.explain()
    allowed = run_playbook(hw.inventory, "restart.yml", dict(extra, clusters="l2x", allow_empty="true"), tmp_path / "ok",
                           limit="hw-lab")
    assert allowed.rc == 0, allowed.explain()
    assert lab.requests(mark), "both runs read the management cluster"
    assert {w["objectRef"]["resource"] for w in lab.writes(mark)} <= {"leases"}, "nothing but the lock was written"


def test_a_pool_switched_back_after_its_wave_is_named_by_the_check_at_the_end_of_the_run(hw, tmp_path):
    """Two waves on hw-west (v1.14): while the second rolls out, a colleague puts the first wave's pool back on its old
    template. The check at the end of the run finds it: that pool fails, naming the field manager and the time, it is
    not undone (that would fight the colleague), the management cluster fails; the second wave's pool succeeded."""
    west = mgmts(hw)["hw-west"]
    first_md, second_md = "w8-md-0", "w8-md-1"
    original = west.infra_template("MachineDeployment", first_md)
    slow = {second_md: {"annotations": {"sim.capi-rollout.dev/provision-seconds": "10"}}}
    with Background(hw.inventory, "hardware_refresh.yml",
                    dict(FAST, refresh_id="it-end-check", template_overrides=overrides("end-check"), clusters=["w8"],
                         object_templates=slow, max_in_flight=1, canary=False),
                    tmp_path / "report", limit="hw-west") as run:
        wait_for("the wait of the second wave", lambda: waiting(run, "hw-west", second_md), 120)
        assert west.infra_template("MachineDeployment", first_md) != original  # positive control: the first was switched
        hand_edit(west, first_md, original)
        done = run.wait(300)
    assert done.rc == 2, done.explain()
    entry = done.cluster("hw-west")
    assert entry["result"] == "failed", entry
    assert entry["failure_reason"].startswith(f"the check at the end of the run failed: machinedeployment/default/{first_md}: ")
    assert [wave["result"] for wave in entry["waves"]] == ["succeeded", "succeeded"], entry["waves"]
    reverted = done.obj("hw-west", first_md)
    assert reverted["result"] == "failed" and reverted.get("undo") is None, reverted
    assert reverted["failure_reason"].startswith("changed after its wave: ") and "changed by kubectl-edit at " in \
        reverted["failure_reason"], reverted
    assert reverted["after"]["infrastructure_ref"]["name"] == original  # read back, not the plan
    assert west.infra_template("MachineDeployment", first_md) == original  # left to the colleague
    assert done.obj("hw-west", second_md)["result"] == "succeeded"


# A hook of the tests: one line per call in a log of its management cluster (on the Ansible host, in check mode too),
# then (after_wave) the wave's pools read back through the role's connection, and a failure after the wave hook_fail_wave.
HOOK_LOG = """\
- name: Note the hook in the log of its management cluster
  ansible.builtin.lineinfile:
    path: "{{ hook_log }}-{{ hardware_refresh_hook.management_cluster }}"
    line: >-
      {{ hardware_refresh_hook.point }} {{ hardware_refresh_hook.wave.number }}/{{ hardware_refresh_hook.wave.count }}
      {{ hardware_refresh_hook.wave.name }} {{ hardware_refresh_hook.objects | map(attribute='ref') | join(',') }}
      check={{ hardware_refresh_hook.check_mode }}
    create: true
    mode: "0644"
  delegate_to: localhost
  check_mode: false
"""
HOOK_SMOKE = HOOK_LOG + """
- name: Read the pools of the wave's namespace back
  capi.rollout.capi_rollout_info:
    namespace: "{{ hardware_refresh_hook.objects[0].namespace }}"
  register: hook_info
  check_mode: false

- name: Fail the smoke test after one wave
  ansible.builtin.fail:
    msg: "smoke test failed after {{ hardware_refresh_hook.wave.name }} ({{ hook_info.resources | length }} pools read)"
  when: hardware_refresh_hook.wave.name == hook_fail_wave
"""


def test_hooks_run_around_every_wave_and_a_failing_one_fails_its_wave_like_a_health_gate(hw, tmp_path):
    """before_wave / after_wave on v1.10 (hk1) and v1.14 (hk2), two waves each (canary, wave-1): the after_wave hook fails
    after wave-1. The dry run runs the hooks in check mode and fails as the real run does, writing nothing; the real
    run undoes wave-1 (the canary stays switched) and names the hook, its task and its message."""
    clusters = mgmts(hw)
    pools = {"hw-east": ("hooks-e", ["hk1-md-0", "hk1-md-1"]), "hw-west": ("hooks-w", ["hk2-md-0", "hk2-md-1"])}
    originals = {(host, md): clusters[host].infra_template("MachineDeployment", md, ns)
                 for host, (ns, mds) in pools.items() for md in mds}
    (tmp_path / "before.yml").write_text(HOOK_LOG, encoding="utf-8")
    (tmp_path / "after.yml").write_text(HOOK_SMOKE, encoding="utf-8")
    extra = dict(FAST, refresh_id="it-hooks", template_overrides=overrides("hooks"), clusters=["hk1", "hk2"],
                 before_wave=str(tmp_path / "before.yml"), after_wave=str(tmp_path / "after.yml"), hook_fail_wave="wave-1")

    def log(name, host):
        return (tmp_path / f"{name}-{host}").read_text(encoding="utf-8").splitlines()

    marks = {host: clusters[host].mark() for host in pools}
    dry = run_playbook(hw.inventory, "hardware_refresh.yml", dict(extra, hook_log=str(tmp_path / "check")), tmp_path / "dry",
                       check=True, limit="hw-east,hw-west")
    assert dry.rc == 2, dry.explain()
    for host, (ns, mds) in pools.items():
        assert clusters[host].writes(marks[host]) == [], f"{host}: check mode wrote"
        entry = dry.cluster(host)
        assert entry["result"] == "failed", entry
        assert "wave wave-1 failed: the after_wave hook" in entry["failure_reason"], entry["failure_reason"]
        assert f"smoke test failed after wave-1 ({len(mds)} pools read)" in entry["failure_reason"], entry["failure_reason"]
        canary, second = (w["objects"][0] for w in entry["waves"])
        assert log("check", host) == [f"before_wave 1/2 canary {canary} check=True", f"after_wave 1/2 canary {canary} check=True",
                                      f"before_wave 2/2 wave-1 {second} check=True", f"after_wave 2/2 wave-1 {second} check=True"]

    run = run_playbook(hw.inventory, "hardware_refresh.yml", dict(extra, hook_log=str(tmp_path / "apply")), tmp_path / "apply",
                       limit="hw-east,hw-west")
    assert run.rc == 2, run.explain()
    for host, (ns, mds) in pools.items():
        mgmt = clusters[host]
        entry = run.cluster(host)
        assert entry["result"] == "failed", entry
        assert entry["failure_reason"] == (
            f"wave wave-1 failed: the after_wave hook {tmp_path / 'after.yml'} (its task 'Fail the smoke test after one wave') "
            f"failed: smoke test failed after wave-1 ({len(mds)} pools read)"), entry["failure_reason"]
        assert entry["next_step"].startswith("Look at what the hook found")
        assert [w["result"] for w in entry["waves"]] == ["succeeded", "failed"], entry["waves"]
        canary_ref, second_ref = (w["objects"][0] for w in entry["waves"])
        canary, second = canary_ref.rsplit("/", 1)[1], second_ref.rsplit("/", 1)[1]
        assert log("apply", host) == [f"before_wave 1/2 canary {canary_ref} check=False",
                                      f"after_wave 1/2 canary {canary_ref} check=False",
                                      f"before_wave 2/2 wave-1 {second_ref} check=False",
                                      f"after_wave 2/2 wave-1 {second_ref} check=False"]
        # the failed wave is undone, read back from the cluster; the canary's wave passed its hook and stays switched
        assert run.obj(host, second)["undo"]["result"] == "succeeded"
        assert mgmt.infra_template("MachineDeployment", second, ns) == originals[(host, second)]
        assert mgmt.last_rollout("MachineDeployment", second, ns)["id"] == "it-hooks-undo"
        assert run.obj(host, canary)["result"] == "succeeded"
        assert mgmt.infra_template("MachineDeployment", canary, ns) != originals[(host, canary)]
        assert mgmt.last_rollout("MachineDeployment", canary, ns)["id"] == "it-hooks"
        assert mgmt.lease_holder() is None


def _hold_lock(mgmt, holder):
    """A colleague's fresh lease on ``mgmt`` (None: released), as the lock tests take and give it back."""
    path = resource_path("coordination.k8s.io", "v1", "leases", "default", "capi-rollout-lock")
    lease = mgmt.lease() or mgmt.admin.create(resource_path("coordination.k8s.io", "v1", "leases", "default"),
                                              {"metadata": {"name": "capi-rollout-lock", "namespace": "default"}, "spec": {}})
    if holder:
        lease["spec"].update(holderIdentity=holder, leaseDurationSeconds=600,
                             renewTime=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    else:
        lease["spec"].pop("holderIdentity", None)
    mgmt.admin.replace(path, lease)


def test_rollback_within_the_failure_budget_goes_on_with_the_later_batches(hw, tmp_path):
    """playbooks/rollback.yml with batch_size 1: hw-east fails (a colleague holds its lock), hw-west is rolled back in
    the next batch (its pool switched to new hardware first, so it has a revision to go back to).
    Ansible alone stops after a batch whose every host failed (so did the play's max_fail_percentage); a budget of 100
    lets hw-west run (after the first batch 1 of 1 failed: any lower budget is spent, as for the refresh) and the last
    play fails hw-east. Positive control: with 0 the first failure stops hw-west, which is not touched."""
    clusters = mgmts(hw)
    east, west = clusters["hw-east"], clusters["hw-west"]
    original = west.infra_template("MachineDeployment", "hk2-md-1", "hooks-w")
    # a switch recorded by the collection: v1.14 deletes old MachineSets, the record keeps the revision to go back to
    switch = run_playbook(hw.inventory, "../docs/examples/new-hardware.yml",
                          {"capi_namespace": "hooks-w", "name": "hk2-md-1", "overrides": overrides("rollback-budget")}, None,
                          limit="hw-west", cwd=tmp_path)
    assert switch.rc == 0, switch.explain()
    assert west.infra_template("MachineDeployment", "hk2-md-1", "hooks-w") != original
    extra = dict(FAST, revision="0", machine_deployments="hk1-md-1, hk2-md-1", batch_size=1, rollback_id="it-rb-budget")
    _hold_lock(east, "colleague/rollback-test")
    try:
        strict_mark = west.mark()
        strict = run_playbook(hw.inventory, "rollback.yml", dict(extra, failure_budget_percent=0), tmp_path / "strict",
                              limit="hw-east,hw-west")
        west_after_strict = west.writes(strict_mark)
        run = run_playbook(hw.inventory, "rollback.yml", dict(extra, failure_budget_percent="100"), tmp_path / "budget",
                           limit="hw-east,hw-west")
    finally:
        _hold_lock(east, None)
    # positive control: the first failure spends a budget of 0 and hw-west is not started
    assert strict.rc == 2, strict.explain()
    assert "failure budget spent: 1 of 1 management cluster(s) failed so far (hw-east)" in strict.stdout, strict.explain()
    assert "the later batches are not started: hw-west" in " ".join(strict.stdout.split()), strict.explain()
    assert west_after_strict == [], "hw-west was rolled back although the budget was spent"
    # within the budget: hw-west is rolled back, hw-east fails the run after the last batch, naming the lock's holder
    assert run.rc == 2, run.explain()
    assert "failure budget spent" not in run.stdout, run.explain()
    assert west.infra_template("MachineDeployment", "hk2-md-1", "hooks-w") == original, run.explain()
    assert west.last_rollout("MachineDeployment", "hk2-md-1", "hooks-w")["id"] == "it-rb-budget"
    assert re.search(r"hw-east\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=1", run.stdout), run.explain()
    assert re.search(r"hw-west\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0", run.stdout), run.explain()
    assert "Take the lock failed:" in run.stdout and "colleague/rollback-test" in run.stdout, run.explain()
    assert east.lease_holder() is None


def _remediate(mgmt, namespace, md, waiting):
    """Mark the Machine of ``md`` as the MachineHealthCheck controller does when it fails its check (``waiting``:
    OwnerRemediated False, WaitingForRemediation), or take the mark off; returns the Machine's name."""
    (machine,) = mgmt.admin.list(mgmt.path("Machine", namespace),
                                 label_selector=f"cluster.x-k8s.io/deployment-name={md}")["items"]
    status = machine.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if c["type"] != "OwnerRemediated"]
    if waiting:
        conditions.append({"type": "OwnerRemediated", "status": "False", "reason": "WaitingForRemediation",
                           "message": "Node not ready for 5m", "severity": "Warning",
                           "lastTransitionTime": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
        if mgmt.version == "v1beta2":  # metav1 conditions have no severity
            conditions[-1].pop("severity")
    status["conditions"] = conditions
    name = machine["metadata"]["name"]
    mgmt.admin.replace_status(mgmt.path("Machine", namespace, name), machine)
    return name


def test_the_plan_shows_the_machine_health_checks_of_each_pool_and_blocks_one_being_remediated(hw, tmp_path):
    """mh1 (v1.10) and mh2 (v1.14) have a MachineHealthCheck over all their Machines (limits 40% and [1-2]) and a paused
    one over md-1. md-0's Machine waits for remediation (OwnerRemediated False, set as the MachineHealthCheck controller
    sets it): md-0 is blocked naming the Machine, md-1 (the control) is planned, with its checks, limits and pause.
    The plan is read by the least-privileged user (docs/rbac.yml: list machinehealthchecks)."""
    clusters = mgmts(hw)
    pools = {"hw-east": ("mhc-e", "mh1", "maxUnhealthy 40%, unhealthyRange [1-2]"),
             "hw-west": ("mhc-w", "mh2", "unhealthyInRange [1-2], unhealthyLessThanOrEqualTo 40%")}
    machines = {host: _remediate(clusters[host], ns, f"{wc}-md-0", True) for host, (ns, wc, _limits) in pools.items()}
    try:
        wait_for("the simulator to keep the condition", lambda: all(
            any(c["type"] == "OwnerRemediated" for c in clusters[h].get("Machine", machines[h], pools[h][0])["status"]["conditions"])
            for h in pools), 30)
        run = run_playbook(hw.inventory, "hardware_refresh.yml",
                           dict(FAST, refresh_id="it-mhc", template_overrides=overrides("mhc"), clusters=["mh1", "mh2"],
                                on_blocked="skip"), tmp_path / "plan", check=True, limit="hw-east,hw-west")
    finally:
        for host, (ns, wc, _limits) in pools.items():
            _remediate(clusters[host], ns, f"{wc}-md-0", False)
    assert run.rc == 0, run.explain()
    for host, (ns, wc, limits) in pools.items():
        blocked, planned = run.obj(host, f"{wc}-md-0"), run.obj(host, f"{wc}-md-1")
        assert blocked["action"] == "skip", blocked
        assert blocked["blockers"] == [
            f"remediation in flight: Machine {machines[host]} (OwnerRemediated False: WaitingForRemediation, Node not ready "
            "for 5m); wait until its owner has replaced it (the Machine gone or the condition True), then re-run"], blocked
        assert planned["action"] == "switch" and planned["blockers"] == [], planned
        # in the API server's order (by name)
        checks = [(c["name"], c["paused"]) for c in planned["health"]["health_checks"]]
        assert checks == [(f"{wc}-gpu", True), (f"{wc}-workers", False)], checks
        assert planned["health"]["in_flight"] == []
        rows = [line for line in run.stdout.splitlines() if f"md/{ns}/{wc}-md-1" in line]
        assert rows and f"{wc}-gpu paused; {wc}-workers ({limits})" in rows[0], run.explain()
