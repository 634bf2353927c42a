# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout history record (annotation rollout.capi-rollout.dev/history), its bounds, its
tolerance of corrupt values, the merged history view and the restart/pause recording."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import history
from ansible_collections.capi.rollout.plugins.module_utils.core import history_events
from ansible_collections.capi.rollout.plugins.module_utils.core import pause
from ansible_collections.capi.rollout.plugins.module_utils.core import restart
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Observed
from ansible_collections.capi.rollout.plugins.module_utils.core.record import Recording
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_revisions as capi

KEY = "rollout.capi-rollout.dev/history"
LAST = "rollout.capi-rollout.dev/last"


def _record(obj):
    raw = obj["metadata"].get("annotations", {}).get(KEY)
    return json.loads(raw) if raw else []


def _identity(version, k8s="v1.30.2", infra="md-0-infra-v1"):
    md = objs.machine_deployment(version, k8s_version=k8s, infra=infra)
    return history.identity_of(md)


def _ident(infra):
    return {"version": "v1.30.2",
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": infra}}


def _entry(revision, infra="md-0-infra-v1", previous=None, **extra):
    entry = {"revision": revision, "at": objs.NOW_TEXT, "action": "restarted", "to": _ident(infra)}
    if previous:
        entry["from"] = _ident(previous)
    entry.update(extra)
    return entry


# ---------------------------------------------------------------------------------------------
# format


@pytest.mark.parametrize("version, infra_ref", [
    ("v1beta1", {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "md-0-infra-v1"}),
    ("v1beta2", {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "md-0-infra-v1"}),
])
def test_identity_uses_capi_field_names_and_compact_refs(version, infra_ref):
    ident = _identity(version)
    assert ident["version"] == "v1.30.2"
    assert ident["infrastructureRef"] == infra_ref  # namespace dropped
    assert ident["bootstrap"]["configRef"]["kind"] == "KubeadmConfigTemplate"
    assert "failureDomain" not in ident


def test_identity_of_kcp():
    for version in objs.VERSIONS:
        ident = history.identity_of(objs.kubeadm_control_plane(version))
        assert ident["version"] == "v1.30.2" and ident["infrastructureRef"]["name"] == "c1-cp-infra-v1"
        assert set(ident) == {"version", "infrastructureRef"}


def test_make_entry_leaves_out_empty_fields_and_equal_from():
    same = _identity("v1beta2")
    entry = history.make_entry(3, objs.NOW, "restarted", same, same)
    assert entry == {"revision": 3, "at": objs.NOW_TEXT, "action": "restarted", "to": same}
    other = _identity("v1beta2", infra="md-0-infra-v2")
    entry = history.make_entry(4, objs.NOW_TEXT, "rolled_back", same, other, rollout_id=7, reason="", actor="alice",
                               to_revision=2, rollout_after=None)
    assert list(entry) == ["revision", "at", "action", "rollout_id", "actor", "from", "to", "to_revision"]
    assert entry["rollout_id"] == "7" and entry["from"] == same and entry["to"] == other


def test_long_texts_are_cut():
    entry = history.make_entry(1, objs.NOW, "restarted", {}, {}, reason="x" * 1000, actor="y" * 300)
    assert len(entry["reason"]) == history.MAX_TEXT_CHARS and entry["reason"].endswith("...")
    assert len(entry["actor"]) == history.MAX_TEXT_CHARS


def test_record_entry_appends_newest_last_as_compact_json():
    md = objs.machine_deployment()
    value = history.record_with_entry(md, _entry(3), history_limit=10)
    assert value == json.dumps([_entry(3)], separators=(",", ":"))
    md = objs.annotate(md, KEY, value)
    value = history.record_with_entry(md, _entry(4, previous="md-0-infra-v1"), 10)
    assert [e["revision"] for e in json.loads(value)] == [3, 4]
    assert " " not in value.replace("md-0", "")  # compact


@pytest.mark.parametrize("limit, kept", [(1, [12]), (3, [10, 11, 12]), (10, list(range(3, 13))), (50, list(range(1, 13)))])
def test_record_is_bounded_by_history_limit(limit, kept):
    md = objs.annotate(objs.machine_deployment(), KEY, json.dumps([_entry(n) for n in range(1, 12)]))
    value = history.record_with_entry(md, _entry(12), history_limit=limit)
    assert [e["revision"] for e in json.loads(value)] == kept


def test_record_is_bounded_by_bytes():
    big = [_entry(n, reason="r" * history.MAX_TEXT_CHARS, actor="a" * history.MAX_TEXT_CHARS,
                  rollout_id="i" * history.MAX_TEXT_CHARS) for n in range(1, 200)]
    kept = history.trim(big, history_limit=1000)
    assert len(json.dumps(kept, separators=(",", ":")).encode("utf-8")) <= history.MAX_RECORD_BYTES
    assert kept[-1]["revision"] == 199 and 1 < len(kept) < 199
    assert history.trim(big[:1], 10, max_bytes=10) == big[:1]  # the newest entry is always kept


@pytest.mark.parametrize("value", [None, 0, -1, "x", True, 1.5j])
def test_invalid_history_limit(value):
    if value is None:
        assert history.validate_history_limit(value) == 10
        return
    with pytest.raises(RolloutError) as exc:
        history.validate_history_limit(value)
    assert exc.value.reason == "invalid_history_limit"


def test_history_limit_accepts_numeric_strings():
    assert history.validate_history_limit("5") == 5


# ---------------------------------------------------------------------------------------------
# corrupt / hand-edited annotations


@pytest.mark.parametrize("raw, readable, warning", [
    ("", [], None),
    ("not json", [], "is not valid JSON"),
    ('{"revision": 1}', [], "is not a JSON list"),
    ("[]", [], None),
    (json.dumps([_entry(2), "junk", {"revision": "3", "to": {}}, {"revision": 0, "to": {}}, {"revision": 4}]), [2],
     "4 unreadable entries ignored"),
    (json.dumps([_entry(5), _entry(2), {"revision": True, "to": {}}]), [2, 5], "1 unreadable entry ignored"),
    (json.dumps([_entry(2, reason=5)]), [], "1 unreadable entry"),
    (json.dumps([dict(_entry(2), to={"bootstrap": "x"})]), [], "1 unreadable entry"),
    (json.dumps([dict(_entry(2), to={"infrastructureRef": {"kind": "K"}})]), [], "1 unreadable entry"),
    (json.dumps([dict(_entry(2), to={"version": 1})]), [], "1 unreadable entry"),
    (json.dumps([dict(_entry(2), to={"bootstrap": {"configRef": "x"}})]), [], "1 unreadable entry"),
    (json.dumps([dict(_entry(2), to={"bootstrap": {"dataSecretName": 3}})]), [], "1 unreadable entry"),
    (json.dumps([dict(_entry(2), to_revision="1")]), [], "1 unreadable entry"),
    (json.dumps([dict(_entry(2), **{"from": []})]), [], "1 unreadable entry"),
])
def test_corrupt_annotation_is_tolerated(raw, readable, warning):
    md = objs.annotate(objs.machine_deployment(), KEY, raw)
    entries, warnings = history.read_record(md)
    assert [e["revision"] for e in entries] == readable
    if warning:
        assert len(warnings) == 1 and warning in warnings[0] and warnings[0].startswith("machinedeployment/default/md-0: ")
    else:
        assert warnings == []
    # every reader keeps working
    history.merged_history(md, [])
    history.history_info(md, [])
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(rollout_id="r1"))
    assert plan["action"] == "restarted"
    assert plan["warnings"] == warnings
    rewritten = json.loads(plan["merge_patch"]["metadata"]["annotations"][KEY])
    assert [e["revision"] for e in rewritten] == readable + [history.next_revision(md, [], entries)]
    assert "unreadable" in plan["diff"]["before"] if raw not in ("", "[]") and not readable else True


# ---------------------------------------------------------------------------------------------
# revision numbers


def test_next_revision_counts_annotation_machine_sets_and_record():
    md = objs.machine_deployment(revision="3")
    assert history.next_revision(md) == 4
    sets = [objs.machine_set(suffix="aaaaa", revision="5", revision_history="1,2"),
            objs.machine_set(suffix="zzzzz", revision="9", owner_uid="someone-else")]
    assert history.next_revision(md, sets) == 6
    md = objs.annotate(md, KEY, json.dumps([_entry(7)]))
    assert history.next_revision(md, sets) == 8
    bare = objs.bare("MachineDeployment", "md-0")
    assert history.next_revision(bare) == 1


def test_next_revision_for_kcp_is_the_record_sequence():
    kcp = objs.kubeadm_control_plane()
    assert history.next_revision(kcp) == 1
    assert history.next_revision(objs.annotate(kcp, KEY, json.dumps([_entry(4)]))) == 5


# ---------------------------------------------------------------------------------------------
# restart records in the same patch


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_md_restart_records_history_in_the_same_patch(version):
    md = objs.machine_deployment(version, revision="2")
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(rollout_id="chg-1", reason="CVE", actor="alice"))
    annotations = plan["merge_patch"]["metadata"]["annotations"]
    assert set(annotations) == {LAST, KEY}
    assert "metadata" not in plan["merge_patch"]["spec"].get("template", {})  # never inside spec.template
    assert plan["history_revision"] == 3
    written = objs.apply_merge_patch(md, plan["merge_patch"])
    assert json.loads(annotations[KEY]) == [{
        "revision": 3, "at": objs.NOW_TEXT, "action": "restarted", "rollout_id": "chg-1", "reason": "CVE", "actor": "alice",
        "to": history.identity_of(md), **history_events.snapshot_fields(written)}]
    # the snapshot is of the object as the patch leaves it: the trigger written with it
    assert json.loads(annotations[KEY])[0]["snapshot"] == history_events.snapshot(written) != history_events.snapshot(md)
    assert "snapshot" not in plan["diff"]["after"]
    # the diff shows a summary and the new entry, not the whole JSON
    assert "rollout.capi-rollout.dev/history: " in plan["diff"]["after"]
    assert "1 entry, revisions 3..3; new: " in plan["diff"]["after"]
    assert KEY not in plan["diff"]["before"]


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_template_switch_records_from_and_to(version):
    md = objs.machine_deployment(version, revision="2")
    sets = [objs.machine_set(version, suffix="aaaaa", revision="2")]
    plan = restart.plan_restart(md, objs.NOW, infrastructure_ref="md-0-infra-v2", observed=Observed(machine_sets=sets))
    entry = json.loads(plan["merge_patch"]["metadata"]["annotations"][KEY])[-1]
    assert entry["from"]["infrastructureRef"]["name"] == "md-0-infra-v1"
    assert entry["to"]["infrastructureRef"]["name"] == "md-0-infra-v2"
    assert entry["revision"] == 3
    assert plan["required_templates"] == [dict(
        {"role": "infrastructure", "api_group": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate",
         "name": "md-0-infra-v2", "namespace": "default"},
        **({"api_version": "infrastructure.cluster.x-k8s.io/v1beta1"} if version == "v1beta1" else {}))]


def test_scheduled_restart_records_rollout_after_and_a_replacement_reuses_its_revision():
    md = objs.machine_deployment(revision="2")
    first = restart.plan_restart(md, objs.NOW, after=objs.HOUR_LATER, recording=Recording(rollout_id="a"))
    entry = json.loads(first["merge_patch"]["metadata"]["annotations"][KEY])[-1]
    assert (entry["revision"], entry["action"], entry["rollout_after"]) == (3, "scheduled", objs.HOUR_LATER)
    md = objs.apply_merge_patch(md, first["merge_patch"])
    # replaced before it fired: it never produces a MachineSet, so revision 3 is reused
    second = restart.plan_restart(md, objs.NOW, force=True, recording=Recording(rollout_id="b"))
    assert [(e["revision"], e["action"]) for e in json.loads(second["merge_patch"]["metadata"]["annotations"][KEY])] == [
        (3, "restarted")]
    # a template switch leaves the scheduled trigger (and its entry) in place
    third = restart.plan_restart(md, objs.NOW, force=True, infrastructure_ref="md-0-infra-v2",
                                 recording=Recording(rollout_id="c"))
    assert [(e["revision"], e["action"]) for e in json.loads(third["merge_patch"]["metadata"]["annotations"][KEY])] == [
        (3, "scheduled"), (4, "restarted")]


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_kcp_restart_records_too(version):
    kcp = objs.kubeadm_control_plane(version)
    plan = restart.plan_restart(kcp, objs.NOW, infrastructure_ref="c1-cp-infra-v2")
    entry = json.loads(plan["merge_patch"]["metadata"]["annotations"][KEY])[-1]
    assert entry["revision"] == 1
    assert (entry["from"]["infrastructureRef"]["name"], entry["to"]["infrastructureRef"]["name"]) == (
        "c1-cp-infra-v1", "c1-cp-infra-v2")
    kcp = objs.apply_merge_patch(kcp, plan["merge_patch"])
    rows = history.merged_history(kcp, [])
    assert [(r["revision"], r["current"], r["source"]) for r in rows] == [(1, True, "record")]


def test_no_record_means_no_history():
    plan = restart.plan_restart(objs.machine_deployment(), objs.NOW, recording=Recording(enabled=False))
    assert "metadata" not in plan["merge_patch"] and plan["history_revision"] is None


def test_restart_history_limit_is_validated_before_anything():
    with pytest.raises(RolloutError) as exc:
        restart.plan_restart(objs.machine_deployment(), objs.NOW, recording=Recording(history_limit=0))
    assert exc.value.reason == "invalid_history_limit"


@pytest.mark.parametrize("kind", ["MachineDeployment", "KubeadmControlPlane"])
def test_pause_never_records_history(kind):
    obj = objs.machine_deployment() if kind == "MachineDeployment" else objs.kubeadm_control_plane()
    for paused in (True, False):
        if not paused:
            obj = objs.apply_merge_patch(obj, {"spec": {"paused": True}}) if kind == "MachineDeployment" else objs.annotate(
                obj, "cluster.x-k8s.io/paused", "true")
        plan = pause.plan_pause(obj, paused=paused, now=objs.NOW, recording=Recording(rollout_id="p"))
        assert KEY not in json.dumps(plan["merge_patch"])


def test_rollout_id_idempotence_is_per_verb_and_reads_the_history():
    md = objs.machine_deployment()
    # the same id used for a pause does not swallow the restart
    md = objs.annotate(md, LAST, '{"action":"paused","at":"2026-03-01T11:00:00Z","id":"x"}')
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(rollout_id="x"))
    assert plan["action"] == "restarted"
    md = objs.apply_merge_patch(md, plan["merge_patch"])
    # an unrelated later action replaces the last-rollout record; the history still knows "x"
    md = objs.annotate(md, LAST, '{"action":"resumed","at":"2026-03-01T12:10:00Z","id":"y"}')
    again = restart.plan_restart(md, objs.NOW + datetime.timedelta(hours=1), recording=Recording(rollout_id="x"))
    assert again["action"] == "unchanged" and "rollout_id x was already applied (restarted at 2026-03-01T12:00:00Z)" in again["message"]


def test_history_stays_bounded_after_50_restarts():
    md = objs.machine_deployment(revision="1")
    sets = [objs.machine_set(suffix="first", revision="1")]
    for n in range(50):
        now = objs.NOW + datetime.timedelta(minutes=n + 1)
        plan = restart.plan_restart(md, now, recording=Recording(rollout_id=f"r{n}", reason=f"run {n}", actor="awx-job/1"),
                                    observed=Observed(machine_sets=sets))
        assert plan["history_revision"] == n + 2
        md = objs.apply_merge_patch(md, plan["merge_patch"])
        md, sets = capi.complete_rollout(md, sets, now=now.strftime("%Y-%m-%dT%H:%M:%SZ"))
        assert md["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] == str(n + 2)
    entries = _record(md)
    assert [e["revision"] for e in entries] == list(range(42, 52))
    assert len(md["metadata"]["annotations"][KEY]) < 4096 + 1024  # ten entries and one snapshot of the spec
    assert ["snapshot" in e for e in entries] == [False] * 9 + [True]
    rows = history.merged_history(md, sets)
    assert rows[0]["revision"] == 51 and rows[0]["current"] and rows[0]["source"] == "both"
    assert [r["revision"] for r in rows] == list(range(51, 40, -1))  # 41 inferred from the oldest entry's "from"
    small = restart.plan_restart(md, objs.NOW + datetime.timedelta(days=1), recording=Recording(history_limit=3),
                                 observed=Observed(machine_sets=sets))
    assert [e["revision"] for e in json.loads(small["merge_patch"]["metadata"]["annotations"][KEY])] == [50, 51, 52]


# ---------------------------------------------------------------------------------------------
# merged history


def _v110_history():
    """v1.10: A (rev 1) -> B (rev 2, recorded) -> undo to A: MS-A reused as rev 3 (history "1"), recorded."""
    md = objs.machine_deployment("v1beta1", revision="3", infra="md-0-infra-a")
    ms_a = objs.machine_set("v1beta1", suffix="aaaaa", revision="3", revision_history="1", infra="md-0-infra-a",
                            created="2026-01-01T00:00:00Z")
    ms_b = objs.machine_set("v1beta1", suffix="bbbbb", revision="2", replicas=0, infra="md-0-infra-b",
                            created="2026-02-01T00:00:00Z")
    ident_a, ident_b = history.identity_of(ms_a), history.identity_of(ms_b)
    record = [history.make_entry(2, "2026-02-01T00:00:00Z", "restarted", ident_a, ident_b, rollout_id="switch", reason="new infra"),
              history.make_entry(3, "2026-02-02T00:00:00Z", "rolled_back", ident_b, ident_a, rollout_id="back", to_revision=1)]
    md = objs.annotate(md, KEY, history.serialize(record))
    return md, [ms_b, ms_a]


def test_merged_history_newest_first_with_sources():
    md, sets = _v110_history()
    rows = history.merged_history(md, sets)
    assert [(r["revision"], r["current"], r["source"], r["machine_set"], r["template"]["infrastructure_ref"]["name"])
            for r in rows] == [
        (3, True, "both", "md-0-aaaaa", "md-0-infra-a"),
        (2, False, "both", "md-0-bbbbb", "md-0-infra-b"),
        (1, False, "both", "md-0-aaaaa", "md-0-infra-a"),   # via revision-history; also the "from" of entry 2
    ]
    assert rows[0]["action"] == "rolled_back" and rows[0]["rollout_id"] == "back" and rows[0]["time"] == "2026-02-02T00:00:00Z"
    assert [r["cause"] for r in rows] == ["template", "template", None]  # an undo, a switch; the oldest unknown
    assert rows[1]["reason"] == "new infra" and rows[1]["replicas"] == 0
    assert rows[2]["reused_as"] == 3 and rows[2]["time"] is None and rows[2]["replicas"] is None
    assert set(rows[0]) == {"revision", "current", "source", "template", "time", "action", "cause", "reason", "rollout_id", "actor",
                            "machine_set", "replicas", "machine_counts", "machines_source", "machines", "previous_revision",
                            "changes", "change_notes"}


def test_merged_history_machine_sets_only_and_record_only():
    md, sets = _v110_history()
    cluster_only = objs.machine_deployment("v1beta1", revision="3", infra="md-0-infra-a")
    assert [(r["revision"], r["source"]) for r in history.merged_history(cluster_only, sets)] == [
        (3, "machineset"), (2, "machineset"), (1, "machineset")]
    assert history.merged_history(cluster_only, sets)[0]["time"] == "2026-01-01T00:00:00Z"  # MachineSet creation
    assert [(r["revision"], r["source"], r["current"]) for r in history.merged_history(md, [])] == [
        (3, "record", True), (2, "record", False), (1, "record", False)]


def test_merged_history_flags_a_record_the_cluster_contradicts():
    md, sets = _v110_history()
    record = _record(md)
    record[0]["to"]["infrastructureRef"]["name"] = "something-else"
    md = objs.annotate(md, KEY, json.dumps(record))
    row = [r for r in history.merged_history(md, sets) if r["revision"] == 2][0]
    assert row["template"]["infrastructure_ref"]["name"] == "md-0-infra-b"  # the MachineSet wins
    assert "the MachineSet is what CAPI uses" in row["note"]


def test_current_falls_back_to_the_revision_annotation():
    md, sets = _v110_history()
    md["spec"]["template"]["spec"]["version"] = "v1.31.0"  # edited outside, not reconciled yet
    rows = history.merged_history(md, sets)
    assert [r["revision"] for r in rows if r["current"]] == [3]
    md["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] = "7"
    assert [r["revision"] for r in history.merged_history(md, sets) if r["current"]] == []


def test_history_info_one_revision_in_full():
    md, sets = _v110_history()
    info = history.history_info(md, sets, revision=2)
    assert info["warnings"] == [] and len(info["history"]) == 1
    row = info["history"][0]
    assert row["revision"] == 2 and row["record"]["rollout_id"] == "switch"
    assert row["replaced"]["infrastructure_ref"]["name"] == "md-0-infra-a"
    assert "machine-template-hash" not in row["machine_set_template"]["metadata"]["labels"]
    assert row["machine_set_template"]["spec"]["infrastructureRef"]["name"] == "md-0-infra-b"
    assert row["revision_history"] == [] and row["machine_set_created"] == "2026-02-01T00:00:00Z"
    record_only = history.history_info(md, [], revision="1")["history"][0]
    assert record_only["source"] == "record" and "machine_set_template" not in record_only and record_only["record"] is None
    assert sets == _v110_history()[1]  # inputs untouched (hash label removed from a copy)


@pytest.mark.parametrize("revision", [9, "x", 0])
def test_history_info_unknown_revision_lists_the_existing_ones(revision):
    md, sets = _v110_history()
    with pytest.raises(RolloutError) as exc:
        history.history_info(md, sets, revision=revision)
    assert exc.value.reason == "revision_not_found"
    assert "revisions that exist: 3 (current), 2, 1" in exc.value.hint


def test_history_info_warns_about_a_corrupt_record():
    md, sets = _v110_history()
    md = objs.annotate(md, KEY, "{oops")
    info = history.history_info(md, sets)
    assert [r["source"] for r in info["history"]] == ["machineset"] * 3 and "not valid JSON" in info["warnings"][0]


def test_record_entries_do_not_show_up_for_foreign_machine_sets():
    md, sets = _v110_history()
    foreign = objs.machine_set("v1beta1", suffix="zzzzz", revision="8", owner_uid="uid-other")
    assert 8 not in [r["revision"] for r in history.merged_history(md, sets + [foreign])]


# ---------------------------------------------------------------------------------------------
# actor


@pytest.mark.parametrize("user, environ, hostname, expected", [
    ("system:serviceaccount:ops:rollout", {"JOB_ID": "1"}, "h", "system:serviceaccount:ops:rollout"),
    (None, {"JOB_ID": "4711", "AWX_HOST": "https://awx.example.com"}, "ee-pod", "awx-job/4711 (https://awx.example.com)"),
    (None, {"JOB_ID": "4711"}, None, "awx-job/4711"),
    (None, {"TOWER_JOB_ID": "12", "TOWER_HOST": "tower"}, None, "awx-job/12 (tower)"),
    (None, {"USER": "alice"}, "laptop", "alice@laptop"),
    (None, {}, "laptop", "laptop"),
    (None, {"LOGNAME": "bob"}, None, "bob"),
    (None, None, None, None),
])
def test_actor_from(user, environ, hostname, expected):
    assert history.actor_from(user, environ, hostname) == expected


def test_readers_do_not_modify_inputs():
    md, sets = _v110_history()
    before = copy.deepcopy((md, sets))
    history.merged_history(md, sets, full=True)
    history.history_info(md, sets, revision=3)
    history.record_with_entry(md, _entry(4), 10)
    assert (md, sets) == before


def test_a_topology_switch_is_a_template_change_though_its_own_patch_leaves_the_template():
    """core.restart.plan_topology_switch records on the MD, whose template the topology controller changes afterwards:
    the entry has no ``from``, its ``topology_after`` says it changed the template; a topology restart (a trigger
    through the Cluster) has ``topology`` only."""
    md = objs.machine_deployment("v1beta2", revision="2", infra="md-0-infra-a")
    ident = history.identity_of(md)
    switched = history.make_entry(2, "2026-02-01T00:00:00Z", "restarted", ident, ident, topology="cluster/default/c ...",
                                  topology_after={"workerImage": "img:2"}, topology_before={"workerImage": None})
    by_class = history.make_entry(2, "2026-02-01T00:00:00Z", "restarted", ident, ident, topology="cluster/default/c ...",
                                  topology_after={}, topology_class=["small", "big"])
    restarted = history.make_entry(2, "2026-02-01T00:00:00Z", "restarted", ident, ident, topology="cluster/default/c ...")
    allowed = dict(switched, in_place="allow")
    causes = [history.merged_history(objs.annotate(md, KEY, history.serialize([entry])), [])[0]["cause"]
              for entry in (switched, by_class, restarted, allowed)]
    assert causes == ["template", "template", "trigger", "in-place update"]
