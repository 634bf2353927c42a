# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.report import markdown
from ansible_collections.capi.rollout.plugins.module_utils.report import refresh_steps
from ansible_collections.capi.rollout.plugins.module_utils.report import model as report_model

NOW = "2026-11-30T06:00:00Z"
SETTINGS = {"stall_timeout": 900, "wait_timeout": 3600, "soak_seconds": "300"}


def obj(name, kind="MachineDeployment", resume=False, action="switch", result="pending"):
    short = kind.lower()
    ref = f"{short}/default/{name}"
    return {"kind": kind, "namespace": "default", "name": name, "ref": ref, "action": action, "result": result,
            "resume": resume, "blockers": [], "started": None, "wave": 1, "wave_name": "wave-1", "restart": False,
            "before": {"infrastructure_ref": {"kind": "DockerMachineTemplate", "name": f"{name}-old"}, "version": "v1.30.4"},
            "after": {"infrastructure_ref": {"kind": "DockerMachineTemplate", "name": f"{name}-new"}, "version": "v1.30.4"},
            "target_ref": {"kind": "DockerMachineTemplate", "name": f"{name}-new"}, "notes": [], "clone": {},
            "wait": {"kind": kind, "namespace": "default", "name": name,
                     "infrastructure_ref": {"kind": "DockerMachineTemplate", "name": f"{name}-new"}}}


def by_ref(*objs):
    return {o["ref"]: o for o in objs}


def cloned(objs, failed=(), **extra):
    """The registered loop result of one capi_rollout_restart call that made the templates of ``objs``
    (switches[].template): its ``clones``, one per object named by ``ref``; with ``failed``, the call failed on them
    before any write (clone_refused)."""
    clones = [dict({"ref": o["ref"], "failed": o["ref"] in failed, "msg": "pruned" if o["ref"] in failed else ""}, **extra)
              for o in objs]
    result = {"item": {"refs": [o["ref"] for o in objs]}, "failed": bool(failed), "clones": clones}
    if failed:
        result.update(reason="clone_refused", ref=failed[0], msg="1 of 2 new template(s) could not be made: pruned")
    return {"results": [result]}


def switch_call(objs, changed=None, stopped_at=None, **extra):
    """The registered loop result of one capi_rollout_restart call over ``objs`` (an item of refresh.switch_calls): it
    failed at ``stopped_at`` after changing ``changed`` (part-way), or, with ``ref`` in ``extra``, before any write."""
    refs = [o["ref"] for o in objs]
    result = dict({"item": {"refs": refs}, "failed": bool(stopped_at or extra)}, **extra)
    if stopped_at:
        at = refs.index(stopped_at)
        result.update(msg=f"{stopped_at}: 403 forbidden.", changed_objects=refs[:at], unchanged_objects=refs[at:])
    return {"results": [result]}


def resource(o, done=True, template=None, message=None, **extra):
    return dict({"ref": o["ref"], "done": done, "done_at": NOW if done else None, "message": message,
                 "template": template or {"infrastructure_ref": {"kind": "DockerMachineTemplate", "name": f"{o['name']}-read"},
                                          "version": "v1.30.4"}}, **extra)


def test_merge_is_ansibles_recursive_combine():
    base = {"a": {"b": 1, "c": {"d": 2}}, "l": [1, 2], "n": None}
    assert refresh_steps.merge(base, {"a": {"c": {"e": 3}}, "l": [3], "n": {"x": 1}}) == {
        "a": {"b": 1, "c": {"d": 2, "e": 3}}, "l": [3], "n": {"x": 1}}
    assert refresh_steps.merge(base, {"a": None}) == {"a": None, "l": [1, 2], "n": None}
    assert base["a"]["c"] == {"d": 2}, "the input was changed"


def test_switched_records_the_template_made_and_leaves_resumed_objects_alone():
    a, b, c = obj("a"), obj("b"), obj("c", resume=True)
    switches = cloned([a, b], infrastructure_ref={"kind": "DockerMachineTemplate", "name": "cloned", "api_group": "x"})
    out = refresh_steps.switched(by_ref(a, b, c), [a, b, c], switches, False, NOW)
    assert out[a["ref"]]["started"] == NOW
    assert out[a["ref"]]["after"] == {"infrastructure_ref": {"kind": "DockerMachineTemplate", "name": "cloned"}, "version": "v1.30.4"}
    assert out[a["ref"]]["wait"]["infrastructure_ref"] == {"kind": "DockerMachineTemplate", "name": "cloned"}
    assert out[a["ref"]]["wait"]["name"] == "a"
    assert out[c["ref"]] == c


def test_a_restart_keeps_the_planned_template_and_waits_on_no_template():
    a = obj("a")
    restarted = {"results": [{"item": {"refs": [a["ref"]]}, "failed": False, "server_time": "2026-11-30T06:00:07Z"}]}
    out = refresh_steps.switched(by_ref(a), [a], restarted, True, NOW)
    assert out[a["ref"]]["after"]["infrastructure_ref"] == {"kind": "DockerMachineTemplate", "name": "a-new"}
    assert out[a["ref"]]["wait"]["infrastructure_ref"] is None
    # when: the call's own time (its patches), not the moment it is recorded
    assert out[a["ref"]]["started"] == "2026-11-30T06:00:07Z"
    # the wait counts the Machines made since the wave started (before its switch calls), when told when that was
    assert "switched_at" not in out[a["ref"]]["wait"]
    out = refresh_steps.switched(by_ref(a), [a], restarted, True, NOW, wave_started="2026-11-30T06:00:01Z")
    assert out[a["ref"]]["wait"]["switched_at"] == "2026-11-30T06:00:01Z"


def test_an_object_switched_through_its_cluster_topology_waits_on_the_change_not_on_a_template_name():
    a, b = obj("a"), obj("b")
    hold = {"overrides": {"workerImage": "img:2"}, "template": {"customImage": "img:2"}}
    switches = {"results": [{"item": {"refs": [a["ref"], b["ref"]]}, "failed": False, "server_time": NOW,
                             "objects": [{"ref": a["ref"], "changed": True, "hold": hold}, {"ref": b["ref"], "changed": True}]}]}
    out = refresh_steps.switched(by_ref(a, b), [a, b], switches, False, NOW)
    assert out[a["ref"]]["wait"] == {"kind": "MachineDeployment", "namespace": "default", "name": "a", "topology": hold}
    assert out[a["ref"]]["started"] == NOW
    # positive control: the other object of the call is held to its template
    assert out[b["ref"]]["wait"]["infrastructure_ref"] == {"kind": "DockerMachineTemplate", "name": "b-new"}


def test_only_what_the_switch_calls_switched_is_recorded_as_switched():
    a, b, c = obj("a"), obj("b"), obj("c")
    part_way = switch_call([a, b, c], stopped_at=b["ref"])
    out = refresh_steps.switched(by_ref(a, b, c), [a, b, c], part_way, False, NOW)
    assert out[a["ref"]]["started"] == NOW
    assert out[b["ref"]] == b and out[c["ref"]] == c
    # a call refused before any write (the lock was lost) switched nothing
    lost = {"results": [{"item": {"refs": [a["ref"]]}, "failed": True, "reason": "lock_lost"}]}
    assert refresh_steps.switched(by_ref(a), [a], lost, False, NOW) == by_ref(a)


def test_rolled_out_takes_the_templates_read_back():
    a = obj("a")
    out = refresh_steps.rolled_out(by_ref(a), [resource(a)])
    assert out[a["ref"]]["result"] == "succeeded" and out[a["ref"]]["finished"] == NOW
    assert out[a["ref"]]["after"]["infrastructure_ref"]["name"] == "a-read"
    assert out[a["ref"]]["before"] == a["before"]
    assert "machines" not in out[a["ref"]]
    # with the Machines counted by the wait (switched_at), the report says how many were updated in place
    counted = refresh_steps.rolled_out(by_ref(a), [resource(a, machines={"replaced": 1, "updated_in_place": 2})])
    assert counted[a["ref"]]["machines"] == {"replaced": 1, "updated_in_place": 2}
    reported = report_model.normalize({"management_clusters": [{"name": "m", "objects": [counted[a["ref"]]]}]})
    (in_report,) = reported["management_clusters"][0]["objects"]
    assert report_model.object_outcome(in_report) == [("succeeded", "switched"), ("succeeded", "2 updated in place")]
    summary = report_model.summarize(reported)
    assert (summary["machines_replaced"], summary["machines_updated_in_place"]) == (1, 2)


def failed_wave(objs, wait, switched=None, failed_result=None, kind="MachineDeployment", **kwargs):
    switched = objs if switched is None else switched
    switches = kwargs.pop("switches", None) or switch_call(switched, stopped_at=kwargs.pop("stopped_at", None))
    return refresh_steps.wave_failed(by_ref(*objs), {"name": "wave-1", "kind": kind}, objs, wait, switches,
                                     kwargs.pop("failed_task", "Wait for the rollouts of the wave, then soak"),
                                     failed_result or {"msg": "wave failed"}, NOW, "hw-1", SETTINGS, **kwargs)


def test_a_stalled_wave_names_the_stuck_machines_and_undoes_every_switched_machine_deployment():
    a, b = obj("a"), obj("b")
    wait = {"reason": "stalled", "failed_refs": [a["ref"]], "ended": "2026-11-30T06:30:00Z",
            "resources": [resource(a, done=False, message="a is stuck..."), resource(b)],
            "stuck": {a["ref"]: {"machines": [{"name": "m1", "reason": "not provisioned"}, {"name": "m2", "reason": "x"}]}}}
    out = failed_wave([a, b], wait)
    rec = out["objects"][a["ref"]]
    assert rec["result"] == "failed" and rec["finished"] == "2026-11-30T06:30:00Z"
    assert rec["failure_reason"] == ("stalled: no replica count or condition changed for 900s: a is stuck"
                                     "; machine m1: not provisioned; machine m2: x")
    assert rec["stuck_machines"][0]["name"] == "m1" and rec["after"]["infrastructure_ref"]["name"] == "a-read"
    assert out["objects"][b["ref"]]["result"] == "succeeded" and out["objects"][b["ref"]]["finished"] == NOW
    assert out["status"]["failure_reason"] == f"wave wave-1 failed: {a['ref']}: {rec['failure_reason']}"
    assert out["status"]["next_step"].startswith("Look at the Machines named above")
    assert out["undo"] == [{"kind": "MachineDeployment", "namespace": "default", "name": n} for n in ("a", "b")]
    assert out["undo_refs"] == [a["ref"], b["ref"]] and out["undo_rollout_id"] == "hw-1-undo"
    assert out["failed_refs"] == [a["ref"]] and out["wave"] == "wave-1"
    # one capi_rollout_undo call each
    assert [call["names"] for call in out["undo_calls"]] == [["a"], ["b"]]


def test_the_mds_of_one_rebased_cluster_are_undone_by_one_call():
    """A unit (core.refresh.plan_waves: the MDs of one Cluster rebased onto a ClusterClass clone) is switched back by
    one rebase of the Cluster: one capi_rollout_undo call for its MDs, another for an object outside it."""
    unit = "cluster/default/shop onto bare-1a2b3c4d"
    a, b, c = dict(obj("a"), unit=unit), obj("b"), dict(obj("c"), unit=unit)
    out = failed_wave([a, b, c], {"reason": "stalled", "failed_refs": [b["ref"]], "resources": [resource(a), resource(c)]})
    assert out["undo_calls"] == [
        {"kind": "MachineDeployment", "namespace": "default", "names": ["a", "c"], "refs": [a["ref"], c["ref"]]},
        {"kind": "MachineDeployment", "namespace": "default", "names": ["b"], "refs": [b["ref"]]}]
    assert out["undo_refs"] == [a["ref"], b["ref"], c["ref"]]


def test_a_refused_switch_is_the_failure_and_its_message_the_cause():
    a, b = obj("a"), obj("b")
    failed_result = {"msg": "One or more items failed", "results": [{"failed": True, "msg": "b: 403 forbidden."}]}
    out = failed_wave([a, b], {}, stopped_at=b["ref"], failed_result=failed_result,
                      failed_task="Switch to the target templates")
    rec = out["objects"][b["ref"]]
    assert rec["failure_reason"] == "Switch to the target templates failed: b: 403 forbidden"
    assert rec["finished"] == NOW and rec["after"] == b["after"] and rec["stuck_machines"] == []
    # the other switched object did not finish: it is still rolling out
    assert out["objects"][a["ref"]]["result"] == "running" and out["objects"][a["ref"]]["finished"] is None
    assert out["undo_refs"] == [a["ref"]]
    assert out["status"]["next_step"] == "Fix the cause named above, then re-run with refresh_id hw-1."


def test_a_switch_refused_before_any_write_switches_none_of_its_objects():
    a, b = obj("a"), obj("b")
    failed_result = {"msg": "One or more items failed", "results": [{"failed": True, "msg": "b is paused."}]}
    out = failed_wave([a, b], {}, switches=switch_call([a, b], ref=b["ref"], msg="b is paused."), failed_result=failed_result,
                      failed_task="Switch to the target templates")
    assert out["failed_refs"] == [b["ref"]] and out["objects"][b["ref"]]["failure_reason"].endswith("b is paused")
    # nothing of that call was written: a was not switched, so it is neither running nor switched back
    assert out["objects"][a["ref"]]["result"] == "pending" and out["undo_refs"] == []
    # an error that names none of the call's objects (a lost connection) fails them all
    out = failed_wave([a, b], {}, switches=switch_call([a, b], ref=None, msg="connection refused"),
                      failed_result={"msg": "connection refused"})
    assert out["failed_refs"] == [a["ref"], b["ref"]] and out["undo_refs"] == []


def test_a_template_that_could_not_be_made_is_the_failure_and_nothing_of_its_call_was_switched():
    a, b, c = obj("a"), obj("b"), obj("c")
    out = failed_wave([a, b, c], {}, switches=cloned([a, b, c], failed=(b["ref"], c["ref"])),
                      failed_result={"msg": "One or more items failed", "results": [{"failed": True, "msg": "pruned"}]},
                      failed_task="Make the target templates and switch to them")
    assert out["failed_refs"] == [b["ref"], c["ref"]] and out["undo_refs"] == []
    assert out["objects"][b["ref"]]["failure_reason"] == "Make the target templates and switch to them failed: pruned"
    # positive control: a's template could be made, but the call switched nothing
    assert out["objects"][a["ref"]]["result"] == "pending"


def test_without_failed_objects_the_reason_is_the_phrase_and_the_message():
    a = obj("a", kind="KubeadmControlPlane")
    out = failed_wave([a], {"reason": "lock_lost"}, failed_result={"msg": "lease gone"}, kind="KubeadmControlPlane")
    assert out["status"]["failure_reason"] == "wave wave-1 failed: another run took the lock of this management cluster: lease gone"
    assert out["status"]["next_step"].endswith("roll it forward onto a template that works.")
    assert out["undo"] == [] and out["objects"][a["ref"]]["result"] == "running"


def test_a_lock_lost_when_a_switch_call_renewed_it_fails_the_wave_on_the_lock():
    a, b = obj("a"), obj("b")
    lost = {"failed": True, "reason": "lock_lost", "msg": "lost the lock: held by colleague/run; nothing was written"}
    # the switch call found another holder: its objects were not switched, and are not failed either
    out = failed_wave([a, b], {}, switches={"results": [dict(lost, item={"refs": [a["ref"], b["ref"]]}, ref="lease/default/x")]},
                      failed_result={"msg": "One or more items failed", "results": [lost]},
                      failed_task="Switch to the target templates")
    assert out["status"]["failure_reason"].startswith("wave wave-1 failed: another run took the lock"), out["status"]
    assert out["failed_refs"] == [] and out["undo"] == []
    # positive control: another refusal of the same call fails its objects
    refused = dict(lost, reason="forbidden", msg="forbidden")
    out = failed_wave([a, b], {}, switches={"results": [dict(refused, item={"refs": [a["ref"], b["ref"]]}, ref="lease/default/x")]},
                      failed_result={"msg": "One or more items failed", "results": [refused]},
                      failed_task="Switch to the target templates")
    assert out["failed_refs"] == [a["ref"], b["ref"]]


def test_nothing_is_undone_for_a_lost_lock_a_restart_or_without_undo_on_failure():
    a = obj("a")
    assert failed_wave([a], {"reason": "lock_lost"})["undo"] == []
    assert failed_wave([a], {}, restart=True)["undo"] == []
    assert failed_wave([a], {}, undo_on_failure=False)["undo"] == []
    assert failed_wave([a], {})["undo_refs"] == [a["ref"]]


def test_a_resumed_object_counts_as_switched_and_a_control_plane_is_never_undone():
    a, cp = obj("a", resume=True), obj("cp", kind="KubeadmControlPlane")
    out = failed_wave([a, cp], {"reason": "wait_timeout", "failed_refs": [cp["ref"]]}, switched=[cp])
    assert out["undo_refs"] == [a["ref"]]
    assert out["objects"][cp["ref"]]["failure_reason"] == "not rolled out after 3600s (wait_timeout): wave failed"


def test_a_control_plane_switched_through_its_cluster_topology_is_undone():
    """Its switch call's hold says it went through the Cluster topology (a Cluster variable): capi_rollout_undo reverts
    that variable, so the automatic undo takes it; a plain control plane of the same wave is not undone."""
    cp, plain = obj("cp", kind="KubeadmControlPlane"), obj("plain", kind="KubeadmControlPlane")
    call = switch_call([cp, plain])
    call["results"][0]["objects"] = [{"ref": cp["ref"], "changed": True, "hold": {"overrides": {"controlPlaneImage": "img:2"}}},
                                     {"ref": plain["ref"], "changed": True}]
    out = failed_wave([cp, plain], {"reason": "wait_timeout", "failed_refs": [cp["ref"]]}, switches=call,
                      kind="KubeadmControlPlane")
    assert out["undo_refs"] == [cp["ref"]]
    assert out["undo"] == [{"kind": "KubeadmControlPlane", "namespace": "default", "name": "cp"}]
    assert "unless its change went through its Cluster topology" in out["status"]["next_step"]


def test_a_machine_deployment_deleted_mid_wave_is_deleted_when_seen_gone_and_never_undone():
    a, b = obj("a"), obj("b")
    gone_at = "2026-11-30T06:31:00Z"
    wait = {"reason": "deleted", "failed_refs": [b["ref"]], "ended": gone_at,
            "resources": [resource(a, done=False, message="a rolling"), {"ref": b["ref"], "done": False, "template": None}],
            "stuck": {b["ref"]: {"lines": ["the object no longer exists"], "machines": []}}}
    out = failed_wave([a, b], wait)
    rec = out["objects"][b["ref"]]
    assert rec["result"] == "deleted" and rec["finished"] == gone_at
    assert rec["failure_reason"] == f"deleted while rolling out: {b['ref']} no longer exists (seen gone at {gone_at})"
    assert out["undo_refs"] == [a["ref"]], "a deleted object is not undone; the rest of its wave is"
    assert out["objects"][a["ref"]]["result"] == "running"
    assert out["status"]["failure_reason"] == f"wave wave-1 failed: {b['ref']}: {rec['failure_reason']}"
    assert "a deleted object is not undone" in out["status"]["next_step"]
    undone = refresh_steps.undone(out["objects"], out, {"ended": NOW, "resources": [resource(a)]}, gone_at)
    assert undone[a["ref"]]["result"] == "undone" and undone[b["ref"]]["result"] == "deleted"


def test_a_machine_deployment_gone_before_the_wait_first_looked_is_deleted_too():
    """Deleted between its switch and the wait's first list: the wait names it not found (a name it never saw)."""
    a, b = obj("a"), obj("b")
    wait = {"failed": True, "reason": "not_found", "ref": b["ref"], "server_time": "2026-11-30T06:31:00Z",
            "msg": f"{b['ref']}: MachineDeployment b not found in namespace default."}
    out = failed_wave([a, b], wait, failed_result=wait)
    assert out["objects"][b["ref"]]["result"] == "deleted" and out["objects"][b["ref"]]["finished"] == "2026-11-30T06:31:00Z"
    assert out["undo_refs"] == [a["ref"]] and out["failed_refs"] == [b["ref"]]
    # a name the wave did not switch stays a failure of the task
    other = failed_wave([a], dict(wait, ref="machinedeployment/default/typo"), failed_result=wait)
    assert other["objects"][a["ref"]]["result"] == "running" and other["undo_refs"] == [a["ref"]]


def test_a_template_deleted_mid_wave_fails_its_object_with_the_template_named_and_it_is_undone():
    a = obj("a")
    missing = f"{a['ref']} is on DockerMachineTemplate default/a-new, which no longer exists: its MachineSet cannot create Machines from it"
    wait = {"reason": "template_missing", "failed_refs": [a["ref"]], "ended": NOW,
            "resources": [resource(a, message="a successfully rolled out", template_missing=missing)]}
    out = failed_wave([a], wait)
    rec = out["objects"][a["ref"]]
    assert rec["result"] == "failed"
    assert rec["failure_reason"] == f"its template was deleted during the wave: {missing}"
    assert out["undo_refs"] == [a["ref"]]
    assert out["status"]["next_step"].startswith("Find out who deleted the template named above")


def test_undone_and_undo_failed():
    a, b = obj("a"), obj("b")
    wait = {"reason": "soak_failed", "failed_refs": [a["ref"]], "resources": [resource(a, message="gate.")], "ended": NOW}
    failure = failed_wave([a, b], wait)
    objects = failure["objects"]
    undo_wait = {"ended": "2026-11-30T07:00:00Z",
                 "resources": [resource(a, template={"infrastructure_ref": {"name": "a-old"}}),
                               resource(b, template={"infrastructure_ref": {"name": "b-old"}})]}
    out = refresh_steps.undone(objects, failure, undo_wait, "2026-11-30T06:40:00Z")
    assert out[a["ref"]]["result"] == "failed"
    assert out[a["ref"]]["failure_reason"] == "health gate failed during the 300s soak: gate"
    assert out[b["ref"]]["result"] == "undone"
    assert out[b["ref"]]["failure_reason"] == f"switched back because {a['ref']} failed in wave wave-1"
    assert out[b["ref"]]["after"]["infrastructure_ref"] == {"kind": "DockerMachineTemplate", "name": "b-old"}
    assert out[b["ref"]]["undo"] == {"started": "2026-11-30T06:40:00Z", "finished": "2026-11-30T07:00:00Z", "result": "succeeded"}
    bad = refresh_steps.undo_failed(objects, failure["undo_refs"], "s", NOW, {"msg": "x", "results": [{"failed": True, "msg": "403"}]})
    assert bad[b["ref"]]["undo"] == {"started": "s", "finished": NOW, "result": "failed"}
    assert bad[b["ref"]]["next_step"].startswith("The undo failed too (403); roll it back by hand")
    assert refresh_steps.undo_failed(objects, [a["ref"]], "s", NOW, {})[a["ref"]]["next_step"].startswith("The undo failed too (unknown error)")


def test_cluster_result_is_the_report_models_rule():
    # refresh_steps.result records report.model.cluster_result; the role's objects give these results
    done, skip, pending = obj("a", result="succeeded"), obj("b", action="skip", result="skipped"), obj("c")
    assert report_model.cluster_result([done], "apply") == "succeeded"
    assert report_model.cluster_result([done, pending], "apply") == "partial"
    assert report_model.cluster_result([done, skip], "apply") == "partial"
    assert report_model.cluster_result([skip], "apply") == "skipped"
    assert report_model.cluster_result([], "apply") == "skipped"


def result(objs, status=None, mode="apply"):
    return refresh_steps.result(by_ref(*objs), [o["ref"] for o in objs], status or {}, mode, "hw-1", "mgmt-1",
                                {"capi_version": "v1.10.0", "api_version": "cluster.x-k8s.io/v1beta1"}, None, ["n"],
                                [{"name": "wave-1", "result": "succeeded"}], [{"name": "wave-1"}], "t0", "t1")


def test_the_result_of_the_management_cluster():
    done, skip = obj("a", result="succeeded"), obj("b", action="skip", result="skipped")
    out = result([done, skip])
    assert out["result"] == "partial" and out["failure_reason"] == "1 object(s) skipped: b"
    assert out["next_step"] == "Fix the blockers shown for the skipped objects, then re-run with refresh_id hw-1."
    assert (out["started"], out["finished"], out["name"], out["capi_version"]) == ("t0", "t1", "mgmt-1", "v1.10.0")
    assert out["waves"] == [{"name": "wave-1", "result": "succeeded"}]
    assert [o["name"] for o in out["objects"]] == ["a", "b"]
    assert not set(refresh_steps.PRIVATE_FIELDS) & set(out["objects"][0])
    assert out["objects"][0]["before"] == done["before"]
    failed = result([done], {"result": "failed", "failure_reason": "boom", "next_step": "fix"})
    assert (failed["result"], failed["failure_reason"], failed["next_step"]) == ("failed", "boom", "fix")
    assert result([done])["failure_reason"] is None and result([done])["next_step"] is None


def test_check_mode_shows_the_plan():
    out = result([obj("a", result="planned"), obj("b", action="skip", result="skipped")], mode="check")
    assert out["result"] == "planned" and out["failure_reason"] is None
    assert out["started"] is None and out["finished"] is None
    assert out["waves"] == [{"name": "wave-1", "result": "planned"}]


def test_the_end_check_fails_an_object_changed_after_its_wave_naming_who_and_undoes_nothing():
    a, b = obj("a", result="succeeded"), obj("b", result="succeeded")
    objects = by_ref(a, b)
    assert refresh_steps.end_check(objects, {"failed": False, "resources": [resource(a), resource(b)]}, NOW, "r1") == \
        {"objects": objects, "status": None}
    drift = ("machinedeployment/default/a is on DockerMachineTemplate a-old, not on the target a-new: its template was "
             "changed by kustomize-controller at 2026-11-30T05:59:00Z during the rollout.")
    back = {"infrastructure_ref": {"kind": "DockerMachineTemplate", "name": "a-old"}, "version": "v1.30.4"}
    wait = {"failed": True, "reason": "drift", "failed_refs": [a["ref"]], "msg": "1 of 2 failed",
            "resources": [resource(a, done=False, template=back, drift=drift), resource(b)]}
    out = refresh_steps.end_check(objects, wait, NOW, "r1")
    changed = out["objects"][a["ref"]]
    assert changed["result"] == "failed" and changed["after"] == back  # read back by the check, not the plan
    assert changed["failure_reason"].startswith("changed after its wave: machinedeployment/default/a is on")
    assert "changed by kustomize-controller at 2026-11-30T05:59:00Z" in changed["failure_reason"]
    assert "undo" not in changed and out["objects"][b["ref"]] == b
    assert out["status"]["result"] == "failed"
    assert out["status"]["failure_reason"].startswith("the check at the end of the run failed: machinedeployment/default/a: ")
    assert "refresh_id r1" in out["status"]["next_step"] and "docs/gitops.md" in out["status"]["next_step"]


def test_the_end_check_records_an_object_deleted_after_its_wave_and_a_failure_without_objects():
    a = obj("a", result="succeeded")
    out = refresh_steps.end_check(by_ref(a), {"failed": True, "reason": "deleted", "failed_refs": [a["ref"]],
                                              "ended": NOW}, NOW, "r1")
    assert out["objects"][a["ref"]]["result"] == "deleted"
    assert out["objects"][a["ref"]]["failure_reason"] == f"deleted after its wave (seen gone at {NOW})"
    unreachable = refresh_steps.end_check(by_ref(a), {"failed": True, "reason": "unreachable",
                                                      "msg": "cannot reach the API server"}, NOW, "r1")
    assert unreachable["objects"] == by_ref(a)
    assert unreachable["status"]["failure_reason"] == "the check at the end of the run failed: cannot reach the API server"


def test_a_failed_after_wave_hook_fails_the_wave_names_the_hook_and_undoes_it():
    a, b = obj("a"), obj("b")
    wait = {"ended": NOW, "resources": [resource(a), resource(b)]}
    hook = {"point": "after_wave", "file": "/srv/hooks/smoke.yml"}
    out = failed_wave([a, b], wait, failed_task="Query Prometheus", failed_result={"msg": "error rate 7% > 1%"}, hook=hook)
    assert out["status"]["failure_reason"] == ("wave wave-1 failed: the after_wave hook /srv/hooks/smoke.yml (its task "
                                               "'Query Prometheus') failed: error rate 7% > 1%")
    assert out["status"]["next_step"].startswith("Look at what the hook found")
    assert out["undo_refs"] == [a["ref"], b["ref"]] and out["failed_refs"] == []
    # positive control: the same failure without a hook is a task's failure, not the hook's
    plain = failed_wave([a, b], wait, failed_task="Query Prometheus", failed_result={"msg": "error rate 7% > 1%"})
    assert plain["status"]["failure_reason"] == "wave wave-1 failed: Query Prometheus failed: error rate 7% > 1%"


def test_a_failed_before_wave_hook_fails_the_wave_with_nothing_switched_or_undone():
    a = obj("a")
    out = failed_wave([a], {}, switches={"results": []}, failed_task="Ask for approval", failed_result={"msg": "denied"},
                      hook={"point": "before_wave", "file": "/srv/hooks/approve.yml"})
    assert out["status"]["failure_reason"].startswith("wave wave-1 failed: the before_wave hook /srv/hooks/approve.yml")
    assert out["undo"] == [] and out["objects"][a["ref"]]["result"] == "pending"


def test_the_undo_wait_holds_an_md_undone_through_its_cluster_topology_to_that_change():
    a, b = obj("a"), obj("b")
    failure = {"undo": [{"kind": "MachineDeployment", "namespace": "default", "name": n} for n in ("a", "b")],
               "undo_refs": [a["ref"], b["ref"]]}
    hold = {"overrides": {"workerImage": None}, "template": {}, "not_on": "a-gen2"}
    calls = {"results": [{"item": failure["undo"][0], "objects": [{"ref": a["ref"], "changed": True, "hold": hold}]},
                         {"item": failure["undo"][1], "objects": [{"ref": b["ref"], "changed": True}]}]}
    waits = refresh_steps.undo_waits(failure, calls)
    assert waits == [dict(failure["undo"][0], topology=hold), failure["undo"][1]]
    # positive control: without the undo calls' holds, the objects as wave_failed names them
    assert refresh_steps.undo_waits(failure, {}) == failure["undo"]


def test_the_machines_whose_drain_timed_out_are_named_on_their_object_in_the_report():
    a, b = obj("a"), obj("b")
    timed_out = [{"ref": a["ref"], "machine": "a-x1", "node": "a-x1", "at": NOW}]
    out = refresh_steps.rolled_out(by_ref(a, b), [resource(a), resource(b)], wait={"drain_timeouts": timed_out})
    assert [m["machine"] for m in out[a["ref"]]["drain_timeouts"]] == ["a-x1"] and "drain_timeouts" not in out[b["ref"]]
    reported = report_model.normalize({"management_clusters": [{"name": "m", "objects": [out[a["ref"]], out[b["ref"]]]}]})
    cluster = reported["management_clusters"][0]
    assert cluster["objects"][0]["drain_timeouts"][0]["name"] == "a-x1" and cluster["objects"][1]["drain_timeouts"] == []
    assert "**drain timed out**: a-x1 on node a-x1" in markdown.render_markdown(reported)
    assert report_model.awx_stats(dict(cluster, objects=[out[a["ref"]], out[b["ref"]]]))["drain_timeouts"] == 1
    # undrainable=fail: the wave fails on the drain, named, with what to do
    wait = {"reason": "drain_timed_out", "failed_refs": [a["ref"]], "ended": NOW, "drain_timeouts": timed_out,
            "resources": [resource(a, done=False, message="a is rolling out"), resource(b)]}
    failed = failed_wave([a, b], wait)
    rec = failed["objects"][a["ref"]]
    assert rec["failure_reason"].startswith("the drain of a Machine timed out (undrainable=fail): Machine a-x1 (Node a-x1): "
                                            "drain timed out")
    assert rec["drain_timeouts"][0]["machine"] == "a-x1"
    assert "undrainable=continue" in failed["status"]["next_step"]
