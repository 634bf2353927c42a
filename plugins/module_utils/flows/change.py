# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flow of the changing modules (capi_rollout_restart, capi_rollout_pause, capi_rollout_undo): connect,
select (a constant number of LISTs), plan every object with the core first (any refusal fails the task with
nothing written), then write each change as a JSON patch whose ``test`` operations guard the fields its plan
read (core.patch; a failed test or a 409: re-read, re-plan, retry), and wait. In check mode every write is
sent as a server-side dry run (client.requests), so RBAC, admission and validation answer as they would for
the real run, and nothing is waited for.

What differs per verb lives in its own file (flows/restart.py, flows/pause.py, flows/undo.py), each with the
same functions (typed as ``flows.verb.Verb``):

- ``refuse_early(params)``: refusals that need no request (raise RolloutError), run by the input gate (``gate``);
- ``planner(run, selected, clusters, now, actor)`` -> ``plan(obj)``: may read a constant number of objects
  first; ``plan`` is called again with a fresh object when a write must be retried;
- ``check_plans(run, planned)``: checks over all plans, before the first write;
- ``selection_options(params)``: the options that select its objects (its own params, or names it takes elsewhere);
- ``write_prerequisites(run, planned)``: what its writes need written first (restart's new templates), once every
  check passed.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.capi.rollout.plugins.module_utils.client import identity
from ansible_collections.capi.rollout.plugins.module_utils.client import reading
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import (
    ApiError, TransportError, api_error, transport_error,
)
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import is_write_conflict, with_conflict_retry
from ansible_collections.capi.rollout.plugins.module_utils.client.waiter import WaitFailed
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches
from ansible_collections.capi.rollout.plugins.module_utils.core import restart as restarts
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.flows import lock as locks
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import (
    Run, resource_entries, selection_check, selects_nothing, start_rv, wait_limit, warn_status,
)
from ansible_collections.capi.rollout.plugins.module_utils.flows.verb import Verb

CONFLICT_ATTEMPTS = 5


class StoppedPartWay(RolloutError):
    """A write of a multi-object call failed: ``changed_refs`` were changed before it, ``unchanged_refs``
    (the failed object first) were not."""

    def __init__(self, msg, changed_refs, unchanged_refs, **fields):
        super(StoppedPartWay, self).__init__(msg, **fields)
        self.changed_refs = changed_refs
        self.unchanged_refs = unchanged_refs


def _select_something(params):
    if selects_nothing(params):
        raise RolloutError("names is empty: no object selected; give name, names, cluster_name or label_selectors",
                           reason=inputs.INVALID_SELECTION)


def gate(verb: Verb) -> inputs.Gate:
    """The input gate of a changing module (core.inputs): something selected, the verb's ``refuse_early``, the
    selection's options, the settings' ranges."""
    return inputs.Gate((inputs.raising(_select_something, "names"), inputs.raising(verb.refuse_early),
                        selection_check(verb.selection_options), inputs.bounds()), empty={"objects": []})


def run_change(module: AnsibleModule, verb: Verb) -> None:
    """The whole task of a changing module; ``verb`` is its verb module (flows.restart, flows.pause, flows.undo)."""
    params = module.params
    run = Run(module, gate(verb))
    run.connect(wait=wait_limit(params, waits=not module.check_mode))
    results = []
    diffs = []
    selected = None
    try:
        if params.get("lease"):
            locks.renew(run, params["lease"])
        selected = run.select(verb.selection_options(params), require_match=True)
        clusters = run.clusters(selected)
        # Server time: triggers and records must be in the controllers' clock (client.serverclock).
        now = run.api.server_now()
        # Every object is planned before anything is written: one refusal fails the task untouched.
        plan_for = verb.planner(run, selected, clusters, now, identity.actor_for(run.api.connection))
        planned = [(obj, plan_for(obj)) for obj in selected.objects]
        verb.check_plans(run, planned)
        _check_owners(planned, params["field_owners"])
        # only once every check passed: a refusal leaves nothing behind
        verb.write_prerequisites(run, planned)
        final = {}
        sent = set()
        for index, (obj, plan) in enumerate(planned):
            if plan["changed"]:
                try:
                    plan, final[plan["name"]] = _write(run, selected, planned, index, plan_for, clusters, sent)
                except (RolloutError, ApiError, TransportError) as err:
                    raise _stopped_part_way(err, planned, index, results, module.check_mode)
            results.append(_result_entry(plan, verb.RESULT_KEYS))
            if plan.get("owner"):
                diffs.append(plan["owner"]["diff"])
                if plan.get("generated"):
                    # the template the topology will generate from that Cluster write (core.topology.generated_diff)
                    diffs.append(plan["generated"])
            if plan["changed"] and plan["patch"]:
                diffs.append(plan["diff"])
            for warning in plan.get("warnings") or []:
                module.warn(f"{plan['ref']}: {warning}")
        if params.get("wait") and not module.check_mode:
            objects = [final.get(obj["metadata"]["name"], obj) for obj in selected.objects]
            holds = {entry["ref"]: entry["hold"] for entry in results if entry.get("hold") and entry["changed"]}
            objects = run.wait(selected, objects, start_rv(selected, objects), holds=holds)
            statuses = resource_entries(objects, clusters, selected.version, run.api.server_now(), run.waited_machine_sets)
            warn_status(module, statuses)
            for entry, status in zip(results, statuses):
                entry["status"] = status
            _count_machine_changes(run, selected, results, now)
    except WaitFailed as err:
        last_seen = resource_entries(err.objects, {}, selected.version, run.api.server_now(), run.waited_machine_sets)
        statuses = {e["name"]: e for e in last_seen}
        for entry in results:
            entry["status"] = statuses.get(entry["name"])
        run.fail(err, changed=any(entry["changed"] for entry in results), objects=results)
    except (RolloutError, ApiError, TransportError) as err:
        extra = {}
        if isinstance(err, StoppedPartWay):
            extra = {"changed_objects": err.changed_refs, "unchanged_objects": err.unchanged_refs}
        run.fail(err, changed=_changed(run, results) and not module.check_mode, objects=results, **extra)
    out = run.result(changed=_changed(run, results), objects=results)
    if module._diff:
        out["diff"] = run.writes + diffs
    module.exit_json(**out)


def _count_machine_changes(run, selected, results, now):
    """Where CAPI could update Machines in place (a switch's ``in_place`` is set), say per object how many Machines
    were replaced and how many updated in place: one LIST of the namespace's Machines, only then."""
    switched = [entry for entry in results if entry.get("in_place") and entry["changed"]]
    if not switched:
        return
    machines, _version = reading.list_kind(run.api, run.discovery, apiversion.MACHINE, selected.namespace)
    for entry in switched:
        entry["machines"] = restarts.machine_changes(machines, entry["kind"], entry["name"], now)


def _check_owners(planned, mode):
    """``field_owners`` over every change before the first write: a field another manager owns (core.owners)
    fails the task untouched (refuse) or becomes a warning of its object (warn)."""
    for obj, plan in planned:
        if plan["changed"] and plan["patch"] and mode != "ignore":
            found = owners.outside_topology(owners.owners_of(obj, owners.written_fields(plan["patch"])))
            plan["warnings"] = list(plan.get("warnings") or []) + owners.check(plan["ref"], found, mode)


def _changed(run, results):
    """Whether the task changed an object, or wrote something of its verb's own (restart's new templates)."""
    return bool(run.writes) or any(entry["changed"] for entry in results)


# what every verb's result entry has (besides api_version, patch and owner, made below); a verb adds its RESULT_KEYS
_RESULT_KEYS = ("ref", "kind", "name", "namespace", "action", "changed", "message", "patch_type", "changes", "warnings")


def _result_entry(plan, verb_keys):
    entry = {key: plan.get(key) for key in _RESULT_KEYS + tuple(verb_keys) if key in plan}
    entry["api_version"] = apiversion.api_version_string(plan["kind"], plan["api_version"])
    # exactly what is sent (_write)
    entry["patch"] = copy.deepcopy(plan["patch"]) if plan["changed"] else None
    if plan.get("owner"):
        # the write of the object that decides its template (core.topology: the Cluster topology)
        entry["owner"] = {key: copy.deepcopy(plan["owner"][key])
                          for key in ("ref", "patch", "changes", "message", "check_mode_note") if key in plan["owner"]}
    return entry


def _stopped_part_way(err, planned, index, results, check_mode):
    """The error of the write of ``planned[index]``, saying (for several objects) which were changed before it
    and which were not: a re-run changes only what is still to change (the rollout id records the others)."""
    if isinstance(err, TransportError):
        err = transport_error(err)
    elif not isinstance(err, RolloutError):
        err = api_error(err)
    if len(planned) < 2:
        return err
    changed = [entry["ref"] for entry in results if entry["changed"]]
    untouched = [plan["ref"] for _obj, plan in planned[index:]]
    if check_mode:
        summary = f"the dry run stopped at it; nothing was changed (objects not tried: {', '.join(untouched[1:]) or 'none'})"
    else:
        summary = (f"{len(changed)} of {len(planned)} object(s) were changed before it ({', '.join(changed) or 'none'}); "
                   f"not changed: {', '.join(untouched)}")
    return StoppedPartWay(f"{err.msg}; {summary}", changed, untouched, ref=err.ref, reason=err.reason,
                          hint=err.hint or "fix the cause and re-run the task: objects already changed are not changed again")


def _owner_path(owner):
    return reading.path_of(owner["kind"], owner["api_version"], owner["namespace"], owner["name"])


def _sent_key(owner):
    return _owner_path(owner), json.dumps(owner["patch"], sort_keys=True)


def _write(run, selected, planned, index, plan_for, clusters, sent):
    """PATCH one object (``planned[index]``) with its plan's JSON patch, after the write of its ``owner`` (the Cluster
    topology that decides its template, core.topology) when the plan has one - unless this task sent that write
    already (``sent``). The owner writes of the later objects of this call to the same Cluster go with it, as one
    patch (_send_owner): planned from one read, they would fail each other's ``test``s if sent one by one (a rebase
    with each MD's own ``rollout.after`` on v1.13+), and one of them would be lost on the re-plan. When a ``test``
    fails (a field the plan read has changed) or on 409, re-read the object, its Cluster and the objects whose
    writes go with it, re-plan them and retry. Returns (plan, object after)."""
    obj, plan = planned[index]
    res = apiversion.resource(selected.kind, selected.version)
    state = {"plan": plan, "current": obj}

    def together(owner):
        """The indexes of the later objects whose owner write goes to the same Cluster and is not sent yet."""
        return [later for later in range(index + 1, len(planned))
                if planned[later][1]["changed"] and planned[later][1].get("owner")
                and _owner_path(planned[later][1]["owner"]) == _owner_path(owner)
                and _sent_key(planned[later][1]["owner"]) not in sent]

    def attempt(fresh):
        if fresh:
            current = state["current"] = reading.refetch(run.api, selected, plan["name"])
            if plan.get("owner"):
                clusters[plan["owner"]["name"]] = run.api.get(_owner_path(plan["owner"]))
                for later in together(plan["owner"]):
                    again = reading.refetch(run.api, selected, planned[later][1]["name"])
                    planned[later] = (again, plan_for(again))
            state["plan"] = plan_for(current)
            if not state["plan"]["changed"]:
                return current
        owner = state["plan"].get("owner")
        if owner and _sent_key(owner) not in sent:
            _send_owner(run, [owner] + [planned[later][1]["owner"] for later in together(owner)], sent)
        if not state["plan"]["patch"]:
            return state["current"]
        return run.api.patch_json(selected.object_path(state["plan"]["name"]), state["plan"]["patch"])

    try:
        after = with_conflict_retry(attempt, attempts=CONFLICT_ATTEMPTS, retry_on=is_write_conflict)
    except ApiError as err:
        raise api_error(err, ref=plan["ref"], verb="patch", resource=res, namespace=selected.namespace,
                        host=run.api.host)
    after.setdefault("kind", selected.kind)
    return state["plan"], after


def _send_owner(run, writes, sent):
    """One PATCH of a Cluster with the owner writes ``writes`` (the first the object's own) merged (core.patch.merged),
    remembered in ``sent``; an owner write with ``check_mode_note`` (flows.restart: a rebase onto a ClusterClass clone
    that the dry run could not make) is left out. Writes that cannot be one (two rebases onto different clones) go
    one by one: the first now, the next after its re-plan."""
    parts = [owner for owner in writes if not owner.get("check_mode_note")]
    if not parts:
        return
    try:
        patch = patches.merged([owner["patch"] for owner in parts])
    except ValueError:
        parts = parts[:1]
        patch = parts[0]["patch"]
    owner = parts[0]
    try:
        run.api.patch_json(_owner_path(owner), patch)
    except ApiError as err:
        if is_write_conflict(err):
            raise
        # named as the object that was written (the Cluster), not the one selected
        raise api_error(err, ref=owner["ref"], verb="patch", namespace=owner["namespace"], host=run.api.host,
                        resource=apiversion.resource(owner["kind"], owner["api_version"].rpartition("/")[2]))
    sent.update(_sent_key(owner) for owner in parts)
