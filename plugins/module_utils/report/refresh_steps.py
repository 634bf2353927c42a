# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report entries of the objects of a hardware refresh of one management cluster, step by step, for the fleet report.

The role keeps the plan's objects (``core.refresh.plan``) as a dictionary by ``ref`` and, after each step,
merges what the step found out into them - one call per step, whatever the number of objects:

- ``switched``: when each object of a wave was switched, and the template it must stay on;
- ``rolled_out``: the objects of a wave that rolled out, with their templates read back from the cluster;
- ``wave_failed``: what failed in a wave and why (per object and for the management cluster), and which
  MachineDeployments (and control planes changed through their Cluster topology) the undo switches back;
- ``undone`` / ``undo_failed``: the outcome of that undo;
- ``result``: the management cluster's entry of the fleet report (docs/report.md).

Inputs are the registered results of the role's tasks (capi_machine_template, capi_rollout_restart,
capi_rollout_wait). Pure: no I/O, the current time is passed in.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.capi.rollout.plugins.module_utils.core import outcomes
from ansible_collections.capi.rollout.plugins.module_utils.core import refresh
from ansible_collections.capi.rollout.plugins.module_utils.core import refresh_status as statuses
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.plugins.module_utils.report import model as report_model

# fields of the plan's objects that only the role uses; the report leaves them out
PRIVATE_FIELDS = ("target_ref", "resume", "wave_name", "ref", "restart", "wait", "clone")

# the wait reasons of a rollout that went wrong on the cluster (not in this run)


def merge(base, extra):
    """``extra`` deep-merged over ``base`` as Ansible's combine(recursive=True) does: mappings merge, the rest replaces."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _apply(objects, changes):
    out = dict(objects)
    for ref, change in changes.items():
        out[ref] = merge(out.get(ref) or {}, change)
    return out


def _unique(values):
    return list(dict.fromkeys(values))


def _by_ref(resources):
    """The first resource per ref (capi_rollout_wait's ``resources``)."""
    out = {}
    for resource in resources or []:
        out.setdefault(resource.get("ref"), resource)
    return out


def _clones(switches):
    """The results of the templates a wave's capi_rollout_restart calls made (each call's ``clones``)."""
    return [clone for result in (switches or {}).get("results") or [] for clone in result.get("clones") or []]


def _holds(switches):
    """{ref: hold} of the objects the switch (or undo) calls changed through their Cluster topology (their
    ``objects[].hold``)."""
    return {entry["ref"]: entry["hold"] for result in (switches or {}).get("results") or []
            for entry in result.get("objects") or [] if entry.get("hold") and entry.get("changed")}


def _failed_clones(switches):
    """Refs of the objects whose target template could not be made (the switch calls' ``clones``)."""
    return [refresh.result_ref(result) for result in _clones(switches)
            if result.get("failed") is True and refresh.result_ref(result)]


def _switch_outcome(switches):
    """(failed refs, {switched ref: when}) of a wave's capi_rollout_restart calls (a loop over refresh.switch_calls,
    each ``item`` with the ``refs`` of its objects; when: the call's ``server_time``, as its patches were sent). A call
    that stopped part-way names what it changed and where it stopped; a call refused before any write names the
    object it refused (every object of the call when it names none); the other objects of a failed call were not
    switched."""
    failed, switched = [], {}
    for result in (switches or {}).get("results") or []:
        if "skipped" in result:
            continue
        refs = list((result.get("item") or {}).get("refs") or [])
        when = result.get("server_time")
        if result.get("failed") is not True:
            switched.update((ref, when) for ref in refs)
            continue
        if result.get("reason") == outcomes.LOCK_LOST:
            continue  # refused before any write: the wave failed on the lock, not on these objects
        changed = list(result.get("changed_objects") or [])
        switched.update((ref, when) for ref in changed)
        stopped_at = (result.get("unchanged_objects") or [result.get("ref")])[0]
        failed.extend([stopped_at] if stopped_at in refs else [ref for ref in refs if ref not in changed])
    return failed, switched


def _failed_item_msg(result, default):
    """The message of the first failed loop item (a failed loop says only "One or more items failed")."""
    failed = [item for item in (result or {}).get("results") or [] if item.get("failed")]
    return failed[0]["msg"] if failed and "msg" in failed[0] else default


def _failed_reason(result):
    """The ``reason`` of a failed task's result, or of its first failed loop item."""
    failed = [item for item in (result or {}).get("results") or [] if item.get("failed")]
    return (failed[0] if failed else result or {}).get("reason")


def switched(objects, wave_objects, switches, restart, now, wave_started=None):
    """Record when each object of the wave (``wave_objects``, records; resumed ones are not switched again) that the
    switch calls (``switches``: their registered loop result) switched was switched (their ``server_time``; ``now``
    when they have none), to the target template made for it, and the template its wait holds it to. With
    ``wave_started`` (the wave's start, before its switch calls), the wait counts the Machines made since then as
    replaced and the older ones as updated in place (capi_rollout_wait ``switched_at``): a call's ``server_time`` is
    when it ended, after Machines of its first objects may have been made."""
    cloned = {}
    for result in _clones(switches):
        cloned.setdefault(refresh.result_ref(result), result)
    _failed, switched_at = _switch_outcome(switches)
    changes = {}
    holds = _holds(switches)
    for obj in wave_objects:
        if obj.get("resume") or obj["ref"] not in switched_at:
            continue
        # with the wave's start, the wait counts the Machines made since then as replaced (capi_rollout_wait switched_at)
        counted = {"switched_at": wave_started} if wave_started else {}
        if obj["ref"] in holds:
            # switched through its Cluster topology: held to the change, the generated template's name comes later
            changes[obj["ref"]] = {"started": switched_at[obj["ref"]] or now, "wait": dict({"topology": holds[obj["ref"]]}, **counted)}
            continue
        clone = cloned.get(obj["ref"], {})
        target = clone["infrastructure_ref"] if "infrastructure_ref" in clone else obj["after"]["infrastructure_ref"]
        ref = {"kind": target.get("kind"), "name": target.get("name")}
        changes[obj["ref"]] = {"started": switched_at[obj["ref"]] or now, "after": {"infrastructure_ref": ref},
                               "wait": dict({"infrastructure_ref": None if restart else dict(ref)}, **counted)}
    out = _apply(objects, changes)
    for ref in holds.keys() & changes.keys():
        # capi_rollout_wait takes a topology change or a template, not both
        out[ref]["wait"] = {key: value for key, value in out[ref]["wait"].items() if key != "infrastructure_ref"}
    return out


def _drain_timeouts(wait):
    """{ref: [{machine, node, reason}]}: the Machines whose drain timed out in a wave (``drain_timeouts`` of
    capi_rollout_wait with undrainable), by MachineDeployment."""
    out = {}
    for entry in (wait or {}).get("drain_timeouts") or []:
        out.setdefault(entry.get("ref"), []).append({
            "machine": entry.get("machine"), "node": entry.get("node"),
            "reason": f"drain timed out (seen at {entry.get('at')}): CAPI deleted the Machine without evicting its remaining Pods"})
    return out


def rolled_out(objects, resources, wait=None):
    """Record the objects of a wave that rolled out and soaked (``resources`` of capi_rollout_wait), with the Machines
    replaced and updated in place when the wait counted them, and those whose drain timed out (``wait``: its result)."""
    drained = _drain_timeouts(wait)
    return _apply(objects, {res["ref"]: dict({"result": "succeeded", "finished": res.get("done_at"), "after": res.get("template")},
                                             **({"machines": res["machines"]} if res.get("machines") else {}),
                                             **({"drain_timeouts": drained[res["ref"]]} if drained.get(res["ref"]) else {}))
                            for res in resources or []})


def _cause(resource, default):
    """Why the wait failed an object, from its ``resource`` (capi_rollout_wait): the drift, the missing template or the
    last message, else ``default``; without a closing full stop (the entry adds its own words around it)."""
    return re.sub(r"[.]+$", "", str(resource.get("drift") or resource.get("template_missing") or resource.get("message")
                                    or default))


def wave_failed(objects, wave, wave_objects, wait, switches, failed_task, failed_result, now, refresh_id,
                settings, undo_on_failure=True, restart=False, hook=None):
    """What failed in ``wave`` and why, from the registered results of its tasks (``wait``, ``switches``: the
    switches, with the templates they made, or restarts) and of the task that failed (``failed_task``: its name,
    ``failed_result``).

    ``settings``: ``stall_timeout``, ``wait_timeout``, ``soak_seconds`` (named in the reasons). Returns ``objects``
    with the failed objects and the other switched ones recorded, ``status`` (the management cluster's result,
    failure_reason, next_step), ``failed_refs``, ``wave`` (its name) and ``undo`` (the MachineDeployments to switch
    back, and the control planes switched through their Cluster topology, whose recorded Cluster variable
    capi_rollout_undo reverts; as capi_rollout_wait objects; none for a restart, without undo_on_failure or when the
    lock was lost) with
    ``undo_refs`` and ``undo_rollout_id``. Objects the wait found deleted are ``deleted`` (when they were seen gone),
    never undone. ``hook``: the hook whose task failed ({point, file}), a failure of the wave like a failed health gate.
    """
    wait = wait or {}
    # a lock lost before the wait: a clone or switch call found another holder when it renewed the lock
    reason = wait.get("reason") or (outcomes.LOCK_LOST if _failed_reason(failed_result) == outcomes.LOCK_LOST else "")
    if hook and not reason:
        reason = outcomes.HOOK
        failed_task = f"the {hook.get('point')} hook {hook.get('file')} (its task '{failed_task}')"
    msg = _failed_item_msg(failed_result, None) or (failed_result or {}).get("msg", "failed")
    failed_switches, switched = _switch_outcome(switches)
    switched_refs = _unique(list(switched) + [obj["ref"] for obj in wave_objects or [] if obj.get("resume")])
    if reason == "not_found" and wait.get("ref") in switched_refs:
        # gone between its switch and the wait's first look, which names it not found
        reason, deleted = ws.DELETED, [wait["ref"]]
    else:
        deleted = list(wait.get("failed_refs") or []) if reason == ws.DELETED else []
    failed_refs = _unique(deleted + list(wait.get("failed_refs") or []) + _failed_clones(switches) + failed_switches)
    phrase = outcomes.phrase(reason, settings or {}, failed_task)
    resources = _by_ref(wait.get("resources"))
    stuck = wait.get("stuck") or {}
    changes = {}
    for ref in deleted:
        gone_at = wait.get("ended") or wait.get("server_time") or now
        changes[ref] = {"result": "deleted", "finished": gone_at,
                        "failure_reason": f"{phrase}: {objects[ref]['ref']} no longer exists (seen gone at {gone_at})"}
    drained = _drain_timeouts(wait)
    for ref in failed_refs:
        if ref in deleted:
            continue
        resource = resources.get(ref, {})
        machines = (stuck.get(ref) or {}).get("machines", [])
        cause = _cause(resource, msg)
        if reason == ws.DRAIN_TIMED_OUT and drained.get(ref):
            cause = "; ".join(f"Machine {m['machine']}" + (f" (Node {m['node']})" if m.get("node") else "") + f": {m['reason']}"
                              for m in drained[ref])
        machine_text = "".join(f"; machine {machine.get('name')}: {machine.get('reason')}" for machine in machines)
        changes[ref] = {"result": "failed", "finished": wait.get("ended", now),
                        "failure_reason": f"{phrase}: {cause}{machine_text}", "stuck_machines": machines,
                        # what is on the cluster, read back by the wait (the planned target otherwise)
                        "after": resource.get("template") or objects[ref].get("after")}
    for ref in switched_refs:
        if ref not in failed_refs:
            resource = resources.get(ref, {})
            changes[ref] = {"result": "succeeded" if resource.get("done") else "running", "finished": resource.get("done_at"),
                            "after": resource.get("template") or objects[ref].get("after")}
    for ref, machines in drained.items():
        if ref in changes:
            changes[ref]["drain_timeouts"] = machines
    objects = _apply(objects, changes)
    reasons = " | ".join(f"{objects[ref]['ref']}: {objects[ref].get('failure_reason')}" for ref in failed_refs)
    undo = []
    if undo_on_failure and not restart and reason != outcomes.LOCK_LOST:
        through_topology = _holds(switches)
        undo = [objects[ref] for ref in switched_refs if ref not in deleted
                and (objects[ref].get("kind") == refresh.MACHINE_DEPLOYMENT or ref in through_topology)]
    return {
        "objects": objects,
        "status": statuses.status("failed", f"wave {wave['name']} failed: {reasons or f'{phrase}: {msg}'}",
                                  outcomes.next_step(reason, refresh_id, wave.get("kind") == refresh.KUBEADM_CONTROL_PLANE)),
        "failed_refs": failed_refs,
        "wave": wave["name"],
        "undo": [{"kind": obj["kind"], "namespace": obj["namespace"], "name": obj["name"]} for obj in undo],
        "undo_refs": [obj["ref"] for obj in undo],
        # the capi_rollout_undo calls: the MDs of one rebased Cluster together (one rebase back)
        "undo_calls": refresh.undo_calls(undo),
        "undo_rollout_id": refresh.undo_id(refresh_id),
    }


def undo_waits(failure, undo_calls):
    """The capi_rollout_wait objects of the undo of a failed wave (``failure``: what wave_failed returned): a
    MachineDeployment undone through its Cluster topology is held to that change (``undo_calls``: the registered
    loop of capi_rollout_undo, its ``objects[].hold``), any other as wave_failed names it."""
    holds = _holds(undo_calls)
    return [dict(obj, topology=holds[ref]) if ref in holds else obj for obj, ref in zip(failure["undo"], failure["undo_refs"])]


def undone(objects, failure, undo_wait, started):
    """Record the undo of a failed wave (``failure``: what ``wave_failed`` returned) that rolled back
    (``undo_wait``: capi_rollout_wait's result); ``started``: when the undo began."""
    failed = failure["failed_refs"]
    resources = _by_ref(undo_wait.get("resources"))
    changes = {}
    for ref in failure["undo_refs"]:
        if ref in failed:
            result, reason = "failed", objects[ref].get("failure_reason")
        else:
            result, reason = "undone", f"switched back because {', '.join(failed)} failed in wave {failure['wave']}"
        changes[ref] = {"result": result, "failure_reason": reason, "after": resources.get(ref, {}).get("template"),
                        "undo": {"started": started, "finished": undo_wait.get("ended"), "result": "succeeded"}}
    return _apply(objects, changes)


def undo_failed(objects, refs, started, now, failed_result):
    """Record an undo that failed (``failed_result``: the result of its failed task) on the objects it switched back."""
    msg = _failed_item_msg(failed_result, (failed_result or {}).get("msg", "unknown error"))
    change = {"undo": {"started": started, "finished": now, "result": "failed"},
              "next_step": f"The undo failed too ({msg}); roll it back by hand with playbooks/rollback.yml or "
                           "capi.rollout.capi_rollout_undo."}
    return _apply(objects, {ref: change for ref in refs or []})


def end_check(objects, wait, now, refresh_id):
    """Record what the check at the end of the run found (``wait``: the registered result of capi_rollout_wait over
    the objects that succeeded in the earlier waves, each held to the template this run put it on). An object changed
    since its wave - a GitOps reconciler putting Git's template back, a colleague's edit: the wait names the field
    manager and the time - or deleted fails, and so does the management cluster; nothing is undone (that would fight
    whoever changed it). Returns {objects, status}; ``status`` is None when every object is where the run left it."""
    wait = wait or {}
    if not wait.get("failed"):
        return {"objects": objects, "status": None}
    resources = _by_ref(wait.get("resources"))
    changes = {}
    for ref in wait.get("failed_refs") or []:
        if ref not in objects:
            continue
        if wait.get("reason") == ws.DELETED:
            changes[ref] = {"result": "deleted",
                            "failure_reason": f"deleted after its wave (seen gone at {wait.get('ended') or now})"}
            continue
        resource = resources.get(ref, {})
        cause = _cause(resource, wait.get("msg"))
        changes[ref] = {"result": "failed", "failure_reason": f"changed after its wave: {cause}",
                        "after": resource.get("template") or objects[ref].get("after")}
    objects = _apply(objects, changes)
    found = " | ".join(f"{objects[ref]['ref']}: {objects[ref]['failure_reason']}" for ref in changes)
    return {"objects": objects, "status": statuses.status(
        "failed", f"the check at the end of the run failed: {found or wait.get('msg', 'failed')}",
        "Find out why it changed (the field manager named above): where Git, Helm or the Cluster topology holds the "
        f"template, change it there (docs/gitops.md). A {statuses.rerun(refresh_id)} switches it again where "
        "field_owners allows it.")}


def report_objects(objects, order):
    """The objects in plan order, as the report shows them (without the role's own fields)."""
    return [{key: value for key, value in objects[ref].items() if key not in PRIVATE_FIELDS} for ref in order or []]


def result(objects, order, status, mode, refresh_id, name, capi, lock, notes, waves, planned_waves, started, finished):
    """The management cluster's entry of the fleet report (``management_clusters`` in report format 1).

    ``status``: result, failure_reason and next_step when a step decided them (a failure, a closed window);
    ``waves``: the waves run (apply mode), ``planned_waves``: the plan's (check mode); ``started``/``finished``:
    the API server's times of the run (apply mode only).
    """
    apply = mode == "apply"
    shown = report_objects(objects, order)
    skipped = [obj for obj in shown if obj.get("action") == "skip"]
    skipped_note = apply and len(skipped) > 0
    return {
        "name": name,
        "capi_version": capi.get("capi_version"),
        "api_version": capi.get("api_version"),
        "result": report_model.cluster_result(shown, mode, stopped=status.get("result")),
        "failure_reason": status.get("failure_reason") or (
            f"{len(skipped)} object(s) skipped: {', '.join(str(obj.get('name')) for obj in skipped)}" if skipped_note else None),
        "next_step": status.get("next_step") or (
            f"Fix the blockers shown for the skipped objects, then {statuses.rerun(refresh_id)}." if skipped_note else None),
        "started": started if apply else None,
        "finished": finished if apply else None,
        "lock": lock,
        "notes": notes,
        "waves": waves if apply else [dict(wave, result="planned") for wave in planned_waves or []],
        "objects": shown,
    }
