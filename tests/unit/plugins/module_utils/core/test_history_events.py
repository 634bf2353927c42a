"""core.history_events and the change rows of core.history: what changed outside this collection since its newest
record entry, with actor and time from managedFields, and how those changes are stored with the next write."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import history
from ansible_collections.capi.rollout.plugins.module_utils.core import history_events as events
from ansible_collections.capi.rollout.plugins.module_utils.core import restart
from ansible_collections.capi.rollout.plugins.module_utils.core import undo
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Observed
from ansible_collections.capi.rollout.plugins.module_utils.core.record import Recording
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

KEY = "rollout.capi-rollout.dev/history"
DRAIN = {"v1beta1": ("spec", "template", "spec", "nodeDrainTimeout"),
         "v1beta2": ("spec", "template", "spec", "deletion", "nodeDrainTimeoutSeconds")}
DRAIN_VALUE = {"v1beta1": "5m0s", "v1beta2": 300}


@pytest.mark.parametrize("path, cause", [
    (("spec", "template", "spec", "infrastructureRef", "name"), "template"),
    (("spec", "template", "spec", "version"), "template"),
    (("spec", "rolloutAfter"), "trigger"),
    (("spec", "rollout", "after"), "trigger"),
    (("spec", "template", "metadata", "labels", "tier"), "in-place field"),
    (("spec", "template", "spec", "deletion", "nodeDrainTimeoutSeconds"), "in-place field"),
    (("spec", "template", "spec", "taints"), "in-place field"),
    (("spec", "minReadySeconds"), "in-place field"),
    (("spec", "replicas"), "scale"),
    (("spec", "rollout", "strategy", "rollingUpdate", "maxSurge"), "md-setting"),
    (("spec", "deletion", "order"), "md-setting"),
    (("spec", "paused"), "md-setting"),
])
def test_cause_of_a_machine_deployment_field(path, cause):
    assert events.cause_of("MachineDeployment", path) == cause


def test_cause_of_a_control_plane_field():
    assert events.cause_of("KubeadmControlPlane", ("spec", "kubeadmConfigSpec")) == "template"
    assert events.cause_of("KubeadmControlPlane", ("spec", "machineTemplate", "spec", "infrastructureRef", "name")) == "template"
    assert events.cause_of("KubeadmControlPlane", ("spec", "machineTemplate", "metadata", "labels", "a")) == "in-place field"
    assert events.cause_of("KubeadmControlPlane", ("spec", "replicas")) == "scale"


def test_in_place_since_names_the_release_of_the_field_not_of_a_label_named_like_one():
    assert events.in_place_since(("spec", "template", "spec", "readinessGates")) == "v1.9"
    assert events.in_place_since(("spec", "template", "spec", "taints")) == "v1.12"
    assert events.in_place_since(("spec", "template", "metadata", "labels", "taints")) == "v1.4"
    assert events.in_place_since(("spec", "replicas")) is None


def test_snapshot_leaves_out_what_never_changes_and_digests_a_kubeadm_config_spec():
    kcp = objs.kubeadm_control_plane()
    kcp["spec"]["kubeadmConfigSpec"] = {"files": [{"path": "/etc/x", "content": "y" * 4000}]}
    snap = events.snapshot(kcp)
    assert snap["kubeadmConfigSpec"].startswith("sha256:") and len(json.dumps(snap)) < 1000
    md = objs.machine_deployment()
    assert "selector" not in events.snapshot(md) and "clusterName" not in events.snapshot(md)
    assert md["spec"]["selector"]  # the object itself is left as it is


def _restarted(version, minutes=0):
    """An MD restarted once by this collection (record with a snapshot)."""
    md = objs.machine_deployment(version, revision="2")
    plan = restart.plan_restart(md, objs.NOW + datetime.timedelta(minutes=minutes), recording=Recording(actor="ops"))
    return objs.apply_merge_patch(md, plan["merge_patch"])


def _edit(md, manager, time, path, value, subresource=None):
    """What a kubectl edit / scale with --field-manager leaves: the value and its managedFields entry."""
    node = md
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    fields = {}
    leaf = fields
    for key in path:
        leaf = leaf.setdefault(f"f:{key}", {})
    entry = {"manager": manager, "operation": "Update", "time": time, "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    md["metadata"].setdefault("managedFields", []).append(entry)
    return md


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_outside_changes_show_with_actor_time_and_cause_then_are_stored_with_the_next_write(version):
    md = _restarted(version)
    md = _edit(md, "alice", "2026-03-01T12:05:00Z", DRAIN[version], DRAIN_VALUE[version])
    md = _edit(md, "bob", "2026-03-01T12:07:00Z", ("spec", "replicas"), 5, subresource="scale")
    rows = history.merged_history(md, [])
    changes = [row for row in rows if row["revision"] is None]
    assert [(r["cause"], r["actor"], r["time"], r["source"], r["since_revision"]) for r in changes] == [
        ("scale", "bob", "2026-03-01T12:07:00Z", "object", 3),
        ("in-place field", "alice", "2026-03-01T12:05:00Z", "object", 3)]
    assert changes[0]["changes"] == [{"path": "spec.replicas", "before": 3, "after": 5}]
    assert changes[0]["machines"] == "scaled 3 -> 5"
    assert changes[1]["changes"][0]["path"] == ".".join(DRAIN[version]) and changes[1]["changes"][0]["after"] == DRAIN_VALUE[version]
    assert "propagated to the Machines in place" in changes[1]["machines"]
    assert changes[1]["note"] == "changed outside since entry 3 (stored with the next recorded change)"
    # newest first: the changes above the revision they came after
    assert [row["revision"] for row in rows] == [None, None, 3, 2]  # 2: the "from" of entry 3

    # the next write of this collection stores them before its own entry, and takes a new snapshot
    plan = restart.plan_restart(md, objs.NOW + datetime.timedelta(minutes=10), recording=Recording(actor="ops"))
    stored = json.loads(plan["merge_patch"]["metadata"]["annotations"][KEY])
    assert [(item.get("revision"), item.get("cause")) for item in stored] == [(3, None), (None, "in-place field"), (None, "scale"), (4, None)]
    assert ["snapshot" in item for item in stored] == [False, False, False, True]
    md = objs.apply_merge_patch(md, plan["merge_patch"])
    rows = history.merged_history(md, [])
    assert [(row["revision"], row["cause"], row["source"], row["actor"]) for row in rows] == [
        (4, "trigger", "record", "ops"), (None, "scale", "record", "bob"), (None, "in-place field", "record", "alice"),
        (3, "trigger", "record", "ops"), (2, None, "record", None)]


def test_a_record_without_a_snapshot_shows_no_changes_and_a_revision_detail_lists_the_changes_after_it():
    md = _restarted("v1beta2")
    old = [{key: value for key, value in entry.items() if key not in ("snapshot", "digest")}
           for entry in json.loads(md["metadata"]["annotations"][KEY])]
    edited = _edit(objs.annotate(md, KEY, history.serialize(old)), "alice", "2026-03-01T12:05:00Z", ("spec", "replicas"), 4)
    assert [row["revision"] for row in history.merged_history(edited, [])] == [3, 2]  # the old format: nothing to compare
    edited = _edit(md, "alice", "2026-03-01T12:05:00Z", ("spec", "replicas"), 4)
    (detail,) = history.history_info(edited, [], revision=3)["history"]
    assert [(row["cause"], row["actor"]) for row in detail["changed_since"]] == [("scale", "alice")]


def test_own_writes_without_an_entry_are_named_as_this_collections():
    md = _restarted("v1beta2")
    md = _edit(md, "capi-rollout", "2026-03-01T12:05:00Z", ("spec", "paused"), True)
    change = history.merged_history(md, [])[0]
    assert (change["cause"], change["actor"], change["note"]) == (
        "md-setting", "capi-rollout", "changed since entry 3 (stored with the next recorded change)")


def test_trim_keeps_the_changes_since_the_oldest_revision_kept():
    entries = [{"revision": n, "at": "t", "action": "restarted", "to": {}} for n in (1, 2, 3)]
    changes = [{"since": n, "at": f"2026-03-01T12:0{n}:00Z", "cause": "scale", "changes": []} for n in (1, 2)]
    kept = history.trim(entries + changes, history_limit=2)
    assert [(item.get("revision"), item.get("since")) for item in kept] == [(2, None), (None, 2), (3, None)]


def test_undo_says_which_changes_since_the_target_it_does_not_restore():
    md = _restarted("v1beta2")
    md = _edit(md, "alice", "2026-03-01T12:05:00Z", DRAIN["v1beta2"], 300)
    md = _edit(md, "bob", "2026-03-01T12:07:00Z", ("spec", "template", "spec", "infrastructureRef", "name"), "md-0-infra-v2")
    sets = [objs.machine_set(suffix="aaaaa", revision="2")]
    plan = undo.plan_undo(md, objs.NOW + datetime.timedelta(minutes=20), to_revision=2, observed=Observed(machine_sets=sets))
    assert plan["action"] == "rolled_back"
    assert plan["not_restored"] == [{"path": "spec.template.spec.deletion.nodeDrainTimeoutSeconds", "actor": "alice",
                                     "at": "2026-03-01T12:05:00Z", "cause": "in-place field"}]
    assert plan["message"].endswith("; not restored (an undo writes the template identity only): "
                                    "spec.template.spec.deletion.nodeDrainTimeoutSeconds (alice at 2026-03-01T12:05:00Z)")


def test_not_restored_keeps_each_field_once_with_its_last_writer():
    change_entries = [{"since": 2, "at": "a", "actor": "x", "cause": "scale", "changes": [{"path": "spec.replicas"}]},
                      {"since": 3, "at": "b", "actor": "y", "cause": "scale", "changes": [{"path": "spec.replicas"}]},
                      {"since": 3, "at": "c", "actor": "z", "cause": "template", "changes": [{"path": "spec.template.spec.version"}]}]
    assert events.not_restored(change_entries, 3) == [{"path": "spec.replicas", "actor": "y", "at": "b", "cause": "scale"}]
    assert events.not_restored(change_entries, 4) == []
