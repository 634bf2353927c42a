"""The fleet refresh as AWX runs it: through ansible-runner in AWX's private data directory (tests/integration/
awx_runner.py), as one job and as a sliced job (three slices at once, one management cluster each) followed by the
merge job node, against the three management clusters of tests/fleets/awx-slices.yml (one fleet for the module).
The connection comes only from the credential's K8S_AUTH_KUBECONFIG and each host's capi_context.
"""

import json
import os
import shutil
import subprocess

import pytest
import yaml

from awx_runner import AwxJob, inventory_script_data, operator_kubeconfig, run_concurrently, workflow_artifacts
from capisim.cluster import kubectl_binary
from hardware_refresh_support import REPO, Mgmt
from playbook import run_modules

pytestmark = pytest.mark.xdist_group("awx-runner")

FLEET_SPEC = REPO / "tests" / "fleets" / "awx-slices.yml"
HOSTS = ("awx-a", "awx-b", "awx-c")

# Survey answers as AWX passes them: text questions give strings (and integer questions may too, from a schedule's
# prompt or the API), textareas YAML text; the role takes them as they are.
SURVEY = {
    "template_overrides": "customImage: kindest/node:awx\n",
    "max_in_flight": "50%", "canary": "yes", "soak_seconds": "1", "stall_timeout": "30", "wait_timeout": "240",
    "undo_on_failure": "yes", "on_blocked": "fail", "batch_size": "100%", "failure_budget_percent": "100",
    "lock_wait_timeout": "0", "control_plane": "false", "allow_empty": "no", "poll_interval": "1", "lock_duration": "30",
}


@pytest.fixture(scope="module")
def awx(fleet_factory, tmp_path_factory):
    fleet = fleet_factory(str(FLEET_SPEC))
    base = tmp_path_factory.mktemp("awx")
    kubeconfig = operator_kubeconfig(fleet, base / "credential-kubeconfig")
    yield fleet, base, kubeconfig
    fleet.fleet.down()


@pytest.mark.needs_controller
def test_kubeconfigs_whose_users_share_a_name_merge_into_401s_that_name_the_shared_user(awx, tmp_path):
    """What docs/awx.md warns about, as kubectl does it: per-cluster kubeconfigs named after their clusters but all
    calling their user rollout-operator, merged with `kubectl config view --flatten`, keep the first cluster's token."""
    fleet, _base, _kubeconfig = awx
    sources = []
    for name in HOSTS:
        own = yaml.safe_load(fleet.cluster(name).kubeconfig("rollout-operator").read_text(encoding="utf-8"))
        own["users"][0]["name"] = own["contexts"][0]["context"]["user"] = "rollout-operator"
        (tmp_path / name).write_text(yaml.safe_dump(own), encoding="utf-8")
        sources.append(str(tmp_path / name))
    merged = subprocess.run([kubectl_binary(), "config", "view", "--flatten"], check=True, capture_output=True, text=True,
                            env=dict(os.environ, KUBECONFIG=os.pathsep.join(sources))).stdout
    (tmp_path / "merged").write_text(merged, encoding="utf-8")
    first, second = run_modules(fleet.inventory, HOSTS[0], [
        ("capi_rollout_info", {"kubeconfig": str(tmp_path / "merged"), "context": name, "namespace": "default"}, False)
        for name in HOSTS[:2]], kubeconfig=None)
    # the first cluster's context works (positive control); the second sends the first cluster's token
    assert not first.failed, first.get("msg")
    assert second.failed and second["reason"] == "unauthorized", second
    assert "rollout-operator of context awx-b is the user of 3 API servers" in second["hint"], second
    assert "docs/awx.md" in second["hint"]


def mgmts(fleet):
    return {name: Mgmt(fleet.cluster(name)) for name in HOSTS}


def md_refs(report_cluster):
    return {(o["namespace"], o["name"]): o for o in report_cluster["objects"]}


@pytest.mark.needs_controller
def test_one_awx_job_refreshes_the_fleet_and_leaves_the_artifacts_awx_reads(awx):
    fleet, base, kubeconfig = awx
    clusters = mgmts(fleet)
    marks = {name: m.mark() for name, m in clusters.items()}
    before = {name: m.infra_template("MachineDeployment", "j1-md-0") for name, m in clusters.items()}
    job = AwxJob(base, 101, "hardware_refresh", inventory_script_data(fleet.inventory),
                 dict(SURVEY, refresh_id="awx-one", clusters="j1", report_dir=str(base / "reports" / "awx-one")),
                 kubeconfig).run()
    assert (job.status, job.rc) == ("successful", 0), job.explain()
    artifacts = job.artifacts()
    # the summary a workflow branches on, where the report is, and one entry per management cluster
    assert artifacts["rollout_report"]["status"] == "succeeded", artifacts
    assert artifacts["rollout_report"]["management_clusters"]["total"] == 3
    assert artifacts["rollout_report"]["machine_deployments"]["switched"] == 3
    assert artifacts["rollout_report_dir"] == str(base / "reports" / "awx-one")
    assert sorted(artifacts["hardware_refresh_results"]) == sorted(HOSTS)
    for name in HOSTS:
        stats = artifacts["hardware_refresh_results"][name]
        assert (stats["result"], stats["switched"], stats["failed"]) == ("succeeded", 1, 0), stats
    # ansible-runner's own record of the same (artifacts/<ident>/status and rc)
    assert (job.artifacts_dir / "status").read_text(encoding="utf-8").strip() == "successful"
    assert (job.artifacts_dir / "rc").read_text(encoding="utf-8").strip() == "0"
    report = json.loads((base / "reports" / "awx-one" / "report.json").read_text(encoding="utf-8"))
    assert report["run_by"] == "awx-job-101" and "slice" not in report
    for entry in report["management_clusters"]:
        name = entry["name"]
        obj = md_refs(entry)[("default", "j1-md-0")]
        now = clusters[name].infra_template("MachineDeployment", "j1-md-0")
        assert now != before[name] and obj["after"]["infrastructure_ref"]["name"] == now, (name, obj)
        assert entry["lock"]["holder"].startswith(f"awx-job-101/{name}/"), entry["lock"]
        # the credential's kubeconfig (no host has one of its own) reached every management cluster as the operator
        assert clusters[name].writes(marks[name]), name
        assert clusters[name].lease_holder() is None, name


def slice_jobs(fleet, base, kubeconfig, survey, first_job_id, workflow_job_id, count=3):
    return [AwxJob(base, first_job_id + n, "hardware_refresh", inventory_script_data(fleet.inventory, n + 1, count),
                   survey, kubeconfig, workflow_job_id=workflow_job_id) for n in range(count)]


@pytest.mark.needs_controller
def test_three_slices_at_once_then_the_merge_job_make_one_fleet_report(awx):
    fleet, base, kubeconfig = awx
    clusters = mgmts(fleet)
    report_dir = base / "reports" / "awx-sliced"
    survey = dict(SURVEY, refresh_id="awx-sliced", clusters="s1", report_dir=str(report_dir), sliced="true")
    before = {(name, ns, md): m.infra_template("MachineDeployment", md, ns)
              for name, m in clusters.items() if name != "awx-c"
              for ns, md in ([("default", "s1-md-0")] if name == "awx-a" else [("team-s", "s1-md-0"), ("team-s", "s1-md-1")])}
    jobs = slice_jobs(fleet, base, kubeconfig, survey, 201, 200)
    finished = run_concurrently(jobs)
    for job in jobs:
        # awx-c's slice matches nothing: no failure, the merge judges the selection over every slice
        assert (job.status, job.rc) == ("successful", 0), job.explain()
    # each slice wrote its own report, of its own management cluster, and published it under its own key
    for job, name in zip(jobs, HOSTS):
        own = json.loads((report_dir / "slices" / name / "report.json").read_text(encoding="utf-8"))
        assert [c["name"] for c in own["management_clusters"]] == [name] and own["slice"] == name
        assert own["run_by"] == f"awx-job-{job.job_id}"
        artifact = job.artifacts()[f"rollout_report_slice_{name.replace('-', '_')}"]
        assert artifact["report"] == str(report_dir / "slices" / name / "report.json")
        assert artifact["management_clusters"] == [name] and artifact["refresh_id"] == "awx-sliced"
        assert "rollout_report" not in job.artifacts(), "a slice's summary would hide the others' in the workflow"
    assert not (report_dir / "report.json").exists()
    handed_on = workflow_artifacts(finished)
    assert sorted(k for k in handed_on if k.startswith("rollout_report_slice_")) == [
        "rollout_report_slice_awx_a", "rollout_report_slice_awx_b", "rollout_report_slice_awx_c"]

    # the merge node: the same inventory, not sliced; the workflow's survey answers win over the artifacts
    merge = AwxJob(base, 204, "merge_reports", inventory_script_data(fleet.inventory), dict(handed_on, **survey), kubeconfig,
                   workflow_job_id=200).run()
    assert (merge.status, merge.rc) == ("successful", 0), merge.explain()
    assert merge.artifacts()["rollout_report"]["status"] == "succeeded"
    assert merge.artifacts()["rollout_report"]["management_clusters"]["total"] == 3
    assert merge.artifacts()["rollout_report_dir"] == str(report_dir)
    merged = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in merged["management_clusters"]] == list(HOSTS)
    assert sorted(s["name"] for s in merged["slices"]) == list(HOSTS)
    assert [c["slice"] for c in merged["management_clusters"]] == list(HOSTS)
    assert sorted(merged["run_by"].split(", ")) == ["awx-job-201", "awx-job-202", "awx-job-203"]
    # the merged report against the management clusters themselves
    for (name, ns, md), old in before.items():
        entry = [c for c in merged["management_clusters"] if c["name"] == name][0]
        obj = md_refs(entry)[(ns, md)]
        now = clusters[name].infra_template("MachineDeployment", md, ns)
        assert obj["result"] == "succeeded" and now != old and obj["after"]["infrastructure_ref"]["name"] == now, obj
    awx_c = [c for c in merged["management_clusters"] if c["name"] == "awx-c"][0]
    assert awx_c["objects"] == [] and awx_c["slice"] == "awx-c"
    for suffix in ("md", "html"):
        text = (report_dir / f"report.{suffix}").read_text(encoding="utf-8")
        assert all(name in text for name in HOSTS), suffix


@pytest.mark.needs_controller
def test_a_slice_that_matches_nothing_fails_when_it_is_not_told_it_is_a_slice(awx):
    """The positive control of the slices' allow_empty: awx-c alone, with the same selection, unsliced."""
    fleet, base, kubeconfig = awx
    job = AwxJob(base, 301, "hardware_refresh", inventory_script_data(fleet.inventory, 3, 3),
                 dict(SURVEY, refresh_id="awx-control", clusters="s1", report_dir=str(base / "reports" / "control")),
                 kubeconfig, check=True).run()
    assert (job.status, job.rc) == ("failed", 2), job.explain()
    assert "the selection matched no MachineDeployment or control plane on any of the 1 management cluster(s)" in job.stdout()


def crafted_slice(report_dir, name, clusters, refresh_id="awx-crafted"):
    path = report_dir / "slices" / name / "report.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"report_version": 1, "refresh_id": refresh_id, "mode": "apply", "slice": name,
                                "management_clusters": [{"name": c, "result": "skipped", "objects": []} for c in clusters]}),
                    encoding="utf-8")
    return path


def crafted_inventory(names):
    group_vars = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
    return {"all": {"children": ["management_clusters"]}, "management_clusters": {"hosts": list(names), "vars": group_vars},
            "_meta": {"hostvars": {}}}


def test_the_merge_job_refuses_a_management_cluster_in_two_slices_and_an_empty_selection(tmp_path):
    """No management cluster is needed: the merge reads files only. Without artifacts it takes every slices/*/report.json."""
    report_dir = tmp_path / "reports"
    crafted_slice(report_dir, "m-a", ["m-a"])
    crafted_slice(report_dir, "m-b", ["m-b"])
    survey = {"refresh_id": "awx-crafted", "report_dir": str(report_dir)}
    empty = AwxJob(tmp_path, 401, "merge_reports", crafted_inventory(["m-a", "m-b"]), survey, tmp_path / "none").run()
    assert (empty.status, empty.rc) == ("failed", 2), empty.explain()
    assert "the selection matched no MachineDeployment or control plane on any of the 2 management cluster(s) of the 2" \
        in empty.stdout()
    assert (report_dir / "report.json").exists(), "the report is written before the selection fails the job"
    allowed = AwxJob(tmp_path, 402, "merge_reports", crafted_inventory(["m-a", "m-b"]), dict(survey, allow_empty="yes"),
                     tmp_path / "none").run()
    assert (allowed.status, allowed.rc) == ("successful", 0), allowed.explain()
    # a slice directory left from an earlier run with other slices
    shutil.copytree(report_dir / "slices" / "m-a", report_dir / "slices" / "m-old")
    twice = AwxJob(tmp_path, 403, "merge_reports", crafted_inventory(["m-a", "m-b"]), dict(survey, allow_empty="yes"),
                   tmp_path / "none").run()
    assert (twice.status, twice.rc) == ("failed", 2), twice.explain()
    out = " ".join(twice.stdout().split())
    assert f"m-a in {report_dir}/slices/m-a/report.json, {report_dir}/slices/m-old/report.json" in out, out[-3000:]
    # and one of another refresh
    shutil.rmtree(report_dir / "slices" / "m-old")
    crafted_slice(report_dir, "m-c", ["m-c"], refresh_id="awx-older")
    other = AwxJob(tmp_path, 404, "merge_reports", crafted_inventory(["m-a", "m-b", "m-c"]), dict(survey, allow_empty="yes"),
                   tmp_path / "none").run()
    assert (other.status, other.rc) == ("failed", 2), other.explain()
    assert "the slice reports have different refresh ids: awx-crafted in" in " ".join(other.stdout().split())
