"""The history of every change (issue 28 §2) on one CAPI release: what test_capi_rollout_history_events.py (v1.10,
v1.14) and test_capi_rollout_in_place.py (v1.12.3 with InPlaceUpdates) run on their fleets, each on a new tiny
workload cluster in a namespace of its own."""

import json
import subprocess

from capisim.cluster import kubectl_binary

REVISION = "machinedeployment.clusters.x-k8s.io/revision"

# v1beta1 / v1beta2 names of the drain timeout (api/core/v1beta2/machine_types.go@v1.14.0)
DRAIN = {"v1beta1": ({"nodeDrainTimeout": "5m0s"}, "spec.template.spec.nodeDrainTimeout"),
         "v1beta2": ({"deletion": {"nodeDrainTimeoutSeconds": 300}}, "spec.template.spec.deletion.nodeDrainTimeoutSeconds")}
WAIT = {"wait": True, "wait_timeout": 240, "stall_timeout": 180}
REPLACED_2 = {"replaced": 2, "updated_in_place": 0}


def kubectl(env, namespace, *args):
    """kubectl (v1.20.2, built with the API server) as admin, as a person edits the object."""
    done = subprocess.run([kubectl_binary(), f"--kubeconfig={env.mgmt.kubeconfig('admin')}", "-n", namespace, *args],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _write_times(env, namespace, md):
    """{manager: time} of the MD's managedFields, as the API server recorded the edits."""
    obj = env.get("MachineDeployment", md, namespace)
    return {entry["manager"]: entry["time"] for entry in obj["metadata"].get("managedFields") or []}


def _history(env, namespace, md):
    res = env.run("capi_rollout_info", namespace=namespace, name=md, history=True)
    assert not res.failed, res.get("msg")
    return res["resources"][0]["history"]


def outside_changes_are_kept(env, namespace, cluster="wq"):
    """Restart (a record entry with a snapshot), edit in-place fields as alice and replicas as bob with kubectl, read the
    history (change rows with actor, time and cause), switch the template (the changes are stored with it), and check
    them after CAPI's clean-up; an undo's dry run names the fields it does not restore."""
    md = f"{cluster}-md-0"
    env.add_workload(cluster, namespace, "v1.30.4", ["md-0"])
    # right after the MachineSet's creation: the restart itself waits until its trigger replaces it (core.restart)
    env.wait_for("the MachineSet of the new MachineDeployment", lambda: env.machine_sets(md, namespace), 120)
    res = env.run("capi_rollout_restart", namespace=namespace, name=md, reason="baseline", **WAIT)
    assert not res.failed, res.get("msg")
    baseline = res["objects"][0]["history_revision"]
    # read back: CAPI made the baseline's MachineSet (what the undo below goes back to)
    assert env.get("MachineDeployment", md, namespace)["metadata"]["annotations"][REVISION] == str(baseline) == "2"
    assert [row["revision"] for row in _history(env, namespace, md)][0] == baseline  # positive control: nothing else yet

    drain, drain_path = DRAIN[env.version]
    kubectl(env, namespace, "patch", "machinedeployments.cluster.x-k8s.io", md, "--type=merge", "--field-manager=alice",
            "-p", json.dumps({"spec": {"template": {"metadata": {"labels": {"tier": "gold"}}, "spec": drain}}}))
    # kubectl v1.20's scale has no --field-manager, and an API server before v1.22 keeps no managedFields entry for a
    # write through /scale: the scale is a patch, as bob
    kubectl(env, namespace, "patch", "machinedeployments.cluster.x-k8s.io", md, "--type=merge", "--field-manager=bob",
            "-p", json.dumps({"spec": {"replicas": 2}}))
    times = _write_times(env, namespace, md)

    rows = _history(env, namespace, md)
    changes = {row["cause"]: row for row in rows if row["revision"] is None}
    assert set(changes) == {"in-place field", "scale"}, rows
    edit, scale = changes["in-place field"], changes["scale"]
    assert (edit["actor"], edit["time"], edit["source"], edit["since_revision"]) == ("alice", times["alice"], "object", baseline)
    assert {c["path"] for c in edit["changes"]} == {"spec.template.metadata.labels.tier", drain_path}
    assert scale["changes"] == [{"path": "spec.replicas", "before": 1, "after": 2}]
    assert (scale["actor"], scale["time"], scale["machines"]) == ("bob", times["bob"], "scaled 1 -> 2")
    # how the baseline revision's Machines changed, counted from its MachineSet: the restart's and the scale's are new
    env.wait_for("the Machine of the scale", lambda: len([m for m in env.machines(f"cluster.x-k8s.io/deployment-name={md}", namespace).values()
                                                          if not m["metadata"].get("deletionTimestamp")]) == 2, 120)
    (row,) = [row for row in _history(env, namespace, md) if row["revision"] == baseline]
    assert (row["machine_counts"], row["machines_source"]) == (REPLACED_2, "machines"), row

    # the next change this collection records stores them, before its own entry
    template = env.copy_template(md, "-v2", namespace=namespace)
    res = env.run("capi_rollout_restart", namespace=namespace, name=md, infrastructure_ref={"name": template}, **WAIT)
    assert not res.failed, res.get("msg")
    switched = res["objects"][0]["history_revision"]
    record = json.loads(env.get("MachineDeployment", md, namespace)["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])
    assert [item.get("revision") for item in record][-4:] == [baseline, None, None, switched]
    assert {(item["cause"], item["actor"], item["at"]) for item in record[-3:-1]} == {
        (cause, row["actor"], row["time"]) for cause, row in changes.items()}
    assert ["snapshot" in item for item in record] == [False] * (len(record) - 1) + [True]
    # the switch kept the counts of the revision it left in that revision's entry, and only there
    assert [item.get("machines") for item in record if "revision" in item][-2:] == [REPLACED_2, None]
    rows = _history(env, namespace, md)
    kept = {row["cause"]: row for row in rows if row["revision"] is None}
    assert {cause: (row["actor"], row["source"]) for cause, row in kept.items()} == {
        cause: (row["actor"], "record") for cause, row in changes.items()}
    assert rows[0]["revision"] == switched and rows[0]["cause"] == "template"
    assert (rows[0]["machine_counts"], rows[0]["machines_source"]) == (REPLACED_2, "machines")
    (left,) = [row for row in rows if row["revision"] == baseline]
    if env.version == "v1beta2":
        # v1.11+: the old MachineSets are gone; the history of the changes made outside is not, nor the counts
        assert len(env.machine_sets(md, namespace)) == 1
        assert (left["machine_counts"], left["machines_source"], left["machines"]) == (REPLACED_2, "record", "2 replaced")
    else:
        assert left["machines_source"] == "machines" and left["machine_set"]  # v1.10 keeps one old MachineSet

    res = env.run("capi_rollout_undo", check=True, namespace=namespace, name=md)
    assert not res.failed, res.get("msg")
    (entry,) = res["objects"]
    assert (entry["to_revision"], entry["action"]) == (baseline, "rolled_back")
    assert {field["path"] for field in entry["not_restored"]} == {
        "spec.template.metadata.labels.tier", drain_path, "spec.replicas"}, (entry["not_restored"], _history(env, namespace, md))
    assert f"{drain_path} (alice at {times['alice']})" in entry["message"]
    return rows
