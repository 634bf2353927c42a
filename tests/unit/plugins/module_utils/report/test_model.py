# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decisions of the report model that both renderers and the hardware_refresh role rely on."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.report import model


def objs(*pairs):
    return [{"action": action, "result": result} for action, result in pairs]


@pytest.mark.parametrize("objects, mode, stopped, expected", [
    # the result the run stopped with wins over everything the objects say
    (objs(("switch", "succeeded")), "apply", "stopped_window", "stopped_window"),
    (objs(("switch", "pending")), "apply", "failed", "failed"),
    (objs(("switch", "planned")), "check", "skipped", "skipped"),
    (objs(("switch", "failed"), ("switch", "succeeded")), "apply", None, "failed"),
    (objs(("switch", "undone"), ("switch", "succeeded")), "apply", None, "failed"),
    (objs(("switch", "planned"), ("skip", "skipped")), "check", None, "planned"),
    ([], "check", None, "planned"),
    (objs(("plan", "planned")), "apply", None, "planned"),
    # objects still to do: partial, whether they wait or roll out
    (objs(("switch", "succeeded"), ("switch", "pending")), "apply", None, "partial"),
    (objs(("switch", "pending")), "apply", None, "partial"),
    (objs(("switch", "running")), "apply", None, "partial"),
    (objs(("switch", "succeeded"), ("skip", "skipped")), "apply", None, "partial"),
    (objs(("skip", "skipped"), ("skip", "skipped")), "apply", None, "skipped"),
    ([], "apply", None, "skipped"),
    (objs(("switch", "succeeded"), ("unchanged", "succeeded")), "apply", None, "succeeded"),
])
def test_cluster_result(objects, mode, stopped, expected):
    assert model.cluster_result(objects, mode, stopped=stopped) == expected


def test_cluster_result_is_what_a_report_without_one_gets():
    report = {"management_clusters": [{"name": "m", "objects": [
        {"name": "a", "result": "succeeded"}, {"name": "b", "result": "running"}]}]}
    assert model.normalize(report)["management_clusters"][0]["result"] == "partial"
    report["management_clusters"][0]["result"] = "running"  # a recorded result is kept
    assert model.normalize(report)["management_clusters"][0]["result"] == "running"


@pytest.mark.parametrize("results, expected", [
    (["succeeded", "undone"], "failed"),
    (["succeeded", "running"], "running"),
    (["pending", "pending"], "pending"),
    (["succeeded", "pending"], "partial"),
    (["planned", "skipped"], "planned"),
    (["skipped"], "skipped"),
    (["succeeded", "skipped"], "succeeded"),
])
def test_wave_result(results, expected):
    assert model.wave_result([{"result": r} for r in results]) == expected


def cluster_of(*objects, waves=()):
    report = {"management_clusters": [{"name": "m", "waves": list(waves), "objects": list(objects)}]}
    return model.normalize(report)["management_clusters"][0]


UNDO_DONE = {"started": "2026-11-30T06:05:00Z", "finished": "2026-11-30T06:07:00Z", "result": "succeeded"}


@pytest.mark.parametrize("undo, reverted", [
    (None, False),
    (UNDO_DONE, True),
    (dict(UNDO_DONE, result=None), True),
    (dict(UNDO_DONE, result="failed"), False),
    (dict(UNDO_DONE, result="running"), False),
    (dict(UNDO_DONE, finished=None), False),
])
def test_is_reverted(undo, reverted):
    obj = cluster_of({"name": "a", "result": "failed", "undo": undo})["objects"][0]
    assert model.is_reverted(obj) is reverted


def test_summary_and_cluster_counts_agree_on_what_was_undone():
    report = {"management_clusters": [{"name": "m", "objects": [
        {"name": "a", "result": "failed", "undo": UNDO_DONE},
        {"name": "b", "result": "failed", "undo": dict(UNDO_DONE, result="running")},
        {"name": "c", "result": "undone", "undo": dict(UNDO_DONE, result=None)},
    ]}]}
    summary = model.summarize(report)
    stats = model.cluster_stats(model.normalize(report)["management_clusters"][0])
    assert summary["objects"]["reverted"] == stats["reverted"] == 2


@pytest.mark.parametrize("obj, outcome", [
    ({"action": "switch", "result": "succeeded"}, [("succeeded", "switched")]),
    ({"action": "unchanged", "result": "succeeded"}, [("skipped", "already on target")]),
    ({"action": "switch", "result": "pending"}, [("pending", "not started")]),
    ({"action": "switch", "result": "stopped_window"}, [("stopped_window", "stopped: window")]),
    ({"action": "switch", "result": "failed"}, [("failed", "failed")]),
    ({"action": "switch", "result": "failed", "undo": UNDO_DONE}, [("failed", "failed"), ("undone", "undone")]),
    ({"action": "switch", "result": "failed", "undo": dict(UNDO_DONE, result="failed")}, [("failed", "failed")]),
    ({"action": "switch", "result": "undone", "undo": UNDO_DONE}, [("undone", "undone")]),
])
def test_object_outcome(obj, outcome):
    assert model.object_outcome(cluster_of(dict(obj, name="a"))["objects"][0]) == outcome


def test_names_and_wave_labels():
    cluster = cluster_of({"kind": "KubeadmControlPlane", "namespace": "ns", "name": "cp", "wave": 0},
                         {"name": "md", "wave": 1}, {"name": "loose"},
                         waves=[{"index": 0, "name": "control-plane"}, {"index": 1}])
    cp, md, loose = cluster["objects"][1], cluster["objects"][2], cluster["objects"][0]
    assert (model.object_name(cp), model.object_label(cp)) == ("ns/cp", "KCP ns/cp")
    assert (model.object_name(md), model.object_label(md)) == ("md", "MD md")
    assert model.wave_label(cluster, cp["wave"]) == "0 \u00b7 control-plane"
    assert model.wave_label(cluster, md["wave"]) == "1"
    assert model.wave_label(cluster, loose["wave"]) == "\u2014"
    assert model.wave_of(cluster, md) is cluster["waves"][1]
    assert model.wave_of(cluster, loose) is None


@pytest.mark.parametrize("action, text", [
    ("switch", "switch template"), ("plan", "switch template"), ("unchanged", "none (already on target)"),
    ("skip", "skip"), ("undo", "undo"), ("rewire", "rewire"),
])
def test_action_text(action, text):
    assert model.action_text({"action": action}) == text


def test_soak_only_for_objects_that_rolled_out_in_a_soaked_wave():
    wave = {"index": 0, "rollout_finished": "2026-11-30T06:10:00Z", "soak_finished": "2026-11-30T06:15:00Z"}
    cluster = cluster_of({"name": "a", "wave": 0, "result": "succeeded"}, {"name": "b", "wave": 0, "result": "undone"},
                         {"name": "c", "wave": 0, "result": "failed"}, {"name": "d", "result": "succeeded"}, waves=[wave])
    soaks = dict((o["name"], model.soak_seconds(cluster, o)) for o in cluster["objects"])
    assert soaks == {"a": 300, "b": 300, "c": None, "d": None}


def test_not_started():
    cluster = cluster_of({"name": "a", "result": "succeeded"}, {"name": "b"}, {"name": "c", "result": "running"})
    assert [o["name"] for o in model.not_started(cluster)] == ["b"]


@pytest.mark.parametrize("result, label", [
    ("stopped_window", "stopped: window"), ("pending", "not started"), ("unchanged", "already on target"),
    ("undo_failed", "undo failed"), (None, "unknown"),
])
def test_result_label(result, label):
    assert model.result_label(result) == label


def failed_cluster(reason):
    """A failed management cluster: a failed object, its undone wave sibling and a blocked object."""
    report = {"management_clusters": [{
        "name": "m", "result": "failed", "failure_reason": reason, "next_step": "fix it",
        "waves": [{"index": 1, "name": "bulk"}],
        "objects": [
            {"name": "a", "namespace": "ns", "wave": 1, "cluster": "wl", "result": "failed", "failure_reason": "stalled",
             "undo": UNDO_DONE},
            {"name": "b", "result": "undone", "failure_reason": "switched back", "undo": UNDO_DONE},
            {"name": "c", "blockers": ["paused"]},
        ]}]}
    return model.normalize(report)["management_clusters"][0]


def test_attention_tells_a_repeated_reason_on_the_object_with_the_clusters_next_step():
    cluster = failed_cluster("ns/a: stalled")
    needs = model.attention(cluster)
    assert needs["show_cluster"] is False
    [failure] = needs["failures"]
    assert failure["object"]["name"] == "a" and failure["next_step"] == "fix it"
    assert [o["name"] for o in failure["also_undone"]] == ["b"]
    assert [o["name"] for o in needs["blocked"]] == ["c"]
    assert model.object_location(cluster, failure["object"]) == "workload cluster wl, wave 1 \u00b7 bulk"


def test_attention_keeps_a_cluster_reason_of_its_own():
    needs = model.attention(failed_cluster("lock lost"))
    assert needs["show_cluster"] is True
    assert needs["failures"][0]["next_step"] is None  # the cluster entry carries it


def _failed_report(reason):
    return {"management_clusters": [{
        "name": "m", "result": "failed", "failure_reason": reason, "next_step": "fix it",
        "objects": [{"name": "a", "namespace": "ns", "result": "failed", "failure_reason": "stalled", "undo": UNDO_DONE},
                    {"name": "b", "namespace": "ns", "result": "undone", "failure_reason": "switched back", "undo": UNDO_DONE}]}]}


@pytest.mark.parametrize("reason", ["ns/a: stalled", None])
def test_summary_and_attention_tell_a_repeated_failure_on_the_same_object(reason):
    report = _failed_report(reason)
    needs = model.attention(model.normalize(report)["management_clusters"][0])
    failures = model.summarize(report)["failures"]
    assert needs["show_cluster"] is False and [f["next_step"] for f in needs["failures"]] == ["fix it"]
    assert [(f["object"], f["next_step"]) for f in failures] == [
        ("machinedeployment/ns/a", "fix it"), ("machinedeployment/ns/b", None)]


def test_summary_and_attention_keep_a_cluster_reason_of_their_own():
    report = _failed_report("lock lost")
    assert model.attention(model.normalize(report)["management_clusters"][0])["show_cluster"] is True
    failures = model.summarize(report)["failures"]
    assert [(f["object"], f["next_step"]) for f in failures] == [
        (None, "fix it"), ("machinedeployment/ns/a", None), ("machinedeployment/ns/b", None)]


def test_attention_prefers_the_next_step_of_a_failed_undo():
    cluster = cluster_of({"name": "a", "result": "failed", "next_step": "retry",
                          "undo": dict(UNDO_DONE, result="failed", next_step="roll back by hand")})
    [failure] = model.attention(cluster)["failures"]
    assert failure["next_step"] == "roll back by hand" and failure["also_undone"] == []


def test_attention_shows_undone_objects_when_no_object_failed():
    cluster = cluster_of({"name": "a", "result": "succeeded"}, {"name": "b", "result": "undone", "undo": UNDO_DONE})
    assert [f["object"]["name"] for f in model.attention(cluster)["failures"]] == ["b"]
    cluster = cluster_of({"name": "a", "result": "failed"}, {"name": "b", "result": "undone", "undo": UNDO_DONE})
    assert [f["object"]["name"] for f in model.attention(cluster)["failures"]] == ["a"]


@pytest.mark.parametrize("result, reason, next_step, shown", [
    ("stopped_window", "window closed", None, True),
    ("partial", None, None, True),
    ("skipped", None, None, False),
    ("skipped", "lock held", None, True),
    ("succeeded", "odd", "odd", False),
])
def test_attention_lists_clusters_that_did_not_finish(result, reason, next_step, shown):
    cluster = model.normalize({"management_clusters": [
        {"name": "m", "result": result, "failure_reason": reason, "next_step": next_step}]})["management_clusters"][0]
    assert model.attention(cluster)["show_cluster"] is shown


def test_cluster_reason_falls_back_to_the_first_failed_object():
    assert model.cluster_reason(failed_cluster("lock lost")) == "lock lost"
    assert model.cluster_reason(failed_cluster(None)) == "machinedeployment/ns/a: stalled"
    assert model.cluster_reason(cluster_of({"name": "a", "result": "succeeded"})) == ""


def test_a_deleted_object_is_deleted_a_failure_of_its_wave_and_cluster_and_counted_as_such():
    from ansible_collections.capi.rollout.tests.unit.plugins.filter import report_samples as samples

    raw = samples.deleted_report()
    assert model.cluster_result(raw["management_clusters"][0]["objects"], "apply") == "failed"
    norm = model.normalize(raw)
    (cluster,) = norm["management_clusters"]
    deleted = [o for o in cluster["objects"] if o["result"] == "deleted"][0]
    assert model.object_bucket(deleted) == "deleted"
    assert model.object_outcome(deleted) == [("deleted", "deleted")]
    assert deleted["finished"].strftime("%H:%M:%S") == "06:03:00"  # when the wait saw it gone
    assert model.wave_result(cluster["objects"]) == "failed"
    assert model.failed_objects(cluster) == [deleted]
    assert model.cluster_reason(cluster).startswith("wave canary failed")
    summary = model.summarize(raw)
    mds = summary["machine_deployments"]
    assert (mds["deleted"], mds["undone"], mds["running"], mds["switched"], mds["total"]) == (1, 1, 0, 0, 2)
    assert [(f["object"], f["result"]) for f in summary["failures"]] == [
        ("machinedeployment/team-a/edge-1-md-0", "undone"), ("machinedeployment/team-a/edge-1-md-1", "deleted")]
    assert ("1 deleted", "red") in model.cluster_sentence_parts(cluster, "apply")


@pytest.mark.parametrize("undo, state", [
    (None, None),
    ({"started": "2026-12-03T05:00:00Z", "finished": "2026-12-03T05:09:00Z", "result": "failed"}, "failed"),
    ({"started": "2026-12-03T05:00:00Z", "result": "failed"}, "failed"),
    ({"started": "2026-12-03T05:00:00Z", "finished": "2026-12-03T05:09:00Z", "result": "succeeded"}, "undone"),
    ({"started": "2026-12-03T05:00:00Z", "finished": "2026-12-03T05:09:00Z"}, "undone"),
    ({"started": "2026-12-03T05:00:00Z"}, "undoing"),
    ({}, None),
])
def test_the_undo_state_is_decided_once_and_is_reverted_reads_it(undo, state):
    raw = {"management_clusters": [{"name": "mc", "objects": [
        dict({"kind": "MachineDeployment", "namespace": "ns", "name": "md", "action": "switch", "result": "failed",
              "failure_reason": "stalled"}, **({"undo": undo} if undo is not None else {}))]}]}
    (obj,) = model.normalize(raw)["management_clusters"][0]["objects"]
    assert (obj["undo"] or {}).get("state") == state
    assert model.is_reverted(obj) is (state == "undone")
