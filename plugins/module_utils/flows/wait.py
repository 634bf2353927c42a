# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_rollout_wait: one call of the wait of a wave. The objects are read with one LIST per kind and
namespace and watched from there (client.waiter); the wait state (core.waitstate) comes back as ``tracking``
and is handed in again by the action plugin (plugins/action/capi_rollout_wait.py) on its next call, so a long
wait is a series of calls of at most ``progress_interval`` seconds that together behave as one.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client import reading
from ansible_collections.capi.rollout.plugins.module_utils.client import waiter as waiters
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, OutOfTime, TransportError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import is_write_conflict, resource_path, with_conflict_retry
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import drains
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import ondelete
from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import restart as restarts
from ansible_collections.capi.rollout.plugins.module_utils.core import status as statuses
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref as make_ref
from ansible_collections.capi.rollout.plugins.module_utils.flows import lock as locks
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import Run


def _objects(params):
    """[(kind, namespace, name, ref)] with normalized kinds; RolloutError for an unknown kind or a ``switched_at``
    that is no time (before any request)."""
    out = []
    for index, item in enumerate(params["objects"]):
        kind = apiversion.rollout_kind(item.get("kind") or apiversion.MACHINE_DEPLOYMENT)
        namespace = item.get("namespace") or "default"
        ref = make_ref(kind, namespace, item["name"])
        if item.get("switched_at") is not None and timeutil.parse_optional(item["switched_at"]) is None:
            raise RolloutError(f"objects[{index}].switched_at must be an RFC 3339 time, got {item['switched_at']!r}", ref=ref,
                               hint="give the switch's time as 2026-03-01T12:00:00Z, or leave switched_at out",
                               reason=inputs.INVALID_SWITCHED_AT)
        out.append((kind, namespace, item["name"], ref))
    return out


def _expected_templates(params):
    """{ref: {kind, name}} of the objects that must stay on an infrastructure template."""
    out = {}
    for (_kind, _namespace, _name, ref), item in zip(_objects(params), params["objects"]):
        if item.get("infrastructure_ref"):
            out[ref] = item["infrastructure_ref"]
    return out


def _holds(params):
    """{ref: {overrides, template}} of the objects that must stay on a Cluster topology change
    (core.waitstate.hold_topology); RolloutError for an object held to a template name too."""
    out = {}
    for (_kind, _namespace, _name, ref), item in zip(_objects(params), params["objects"]):
        if item.get("topology") and item.get("infrastructure_ref"):
            raise RolloutError(f"objects[] {ref} gives both infrastructure_ref {item['infrastructure_ref'].get('name')} "
                               "and topology: a topology object is held to its topology change, any other to a template",
                               ref=ref, reason=inputs.INVALID_INPUT,
                               hint="give objects[].topology for an object a Cluster topology manages (as "
                                    "capi_rollout_restart returns it in objects[].hold), infrastructure_ref otherwise")
        if item.get("topology"):
            out[ref] = item["topology"]
    return out


# the objects' kinds, switch times and holds, the settings' ranges (core.inputs); a failure carries the wait's keys
GATE = inputs.Gate((inputs.raising(_objects, "objects"), inputs.raising(_holds, "objects"), inputs.bounds()),
                   empty={"finished_call": True, "tracking": {}, "phase": ws.FAILED, "lease_renewals": 0, "deleted": []})


def read_groups(run, objects, known=False):
    """The client.waiter groups of ``objects``: one LIST per (kind, namespace), watched from its
    resourceVersion. An object that is not there is not found; once ``known`` (a later call of the same wait) it
    is gone, and the wait fails it as deleted."""
    names_of = {}
    for kind, namespace, name, _ref in objects:
        names = names_of.setdefault((kind, namespace), [])
        if name not in names:
            names.append(name)
    groups = []
    for (kind, namespace), names in sorted(names_of.items()):
        try:
            selected = reading.select(run.api, run.discovery, {"kind": kind, "namespace": namespace, "names": sorted(names)},
                                      require_match=False)
        except RolloutError as err:
            if err.reason != "not_found" or not known:
                raise
            selected = reading.select(run.api, run.discovery, {"kind": kind, "namespace": namespace}, require_match=False)
        groups.append(waiters.Group.of(selected, names=names))
    return groups


def _deployment_names(objects):
    """{namespace: sorted names} of the MachineDeployments among ``objects``, by namespace."""
    names_of = {}
    for kind, namespace, name, _ref in objects:
        if kind == apiversion.MACHINE_DEPLOYMENT:
            names_of.setdefault(namespace, set()).add(name)
    return {namespace: sorted(names) for namespace, names in sorted(names_of.items())}


def _deployments(run, objects):
    """The client.reading selection of the MachineDeployments among ``objects``, one LIST per namespace."""
    for namespace, names in _deployment_names(objects).items():
        yield reading.select(run.api, run.discovery, {"kind": apiversion.MACHINE_DEPLOYMENT, "namespace": namespace,
                                                      "names": names}, require_match=False)


def drain_groups(run, objects):
    """The client.waiter groups of the Machines of the MachineDeployments among ``objects`` (for ``undrainable``): one
    LIST per namespace by their deployment-name label, watched from its resourceVersion."""
    groups = []
    for namespace, names in _deployment_names(objects).items():
        selector = f"{keys.DEPLOYMENT_NAME_LABEL} in ({','.join(names)})"
        items, version, list_rv = reading.list_kind_at(run.api, run.discovery, apiversion.MACHINE, namespace,
                                                       label_selector=selector)
        res = apiversion.resource(apiversion.MACHINE, version)
        groups.append(waiters.Group(apiversion.MACHINE, version, namespace,
                                    resource_path(res["group"], version, res["plural"], namespace), items, list_rv,
                                    label_selector=selector, names=[]))
    return groups


def _delete_machine(run, machine, version, ref):
    """DELETE one Machine, only the one that was read (uid precondition); False when it is gone or was replaced."""
    meta = machine.get("metadata") or {}
    path = reading.path_of(apiversion.MACHINE, apiversion.api_version_string(apiversion.MACHINE, version), meta.get("namespace"),
                           meta.get("name"))
    try:
        run.api.request("DELETE", path, body={"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": meta.get("uid")}})
    except ApiError as err:
        if err.status in (404, 409):
            return False
        raise api_error(err, ref=ref, verb="delete", resource=apiversion.resource(apiversion.MACHINE, version),
                        namespace=meta.get("namespace"), host=run.api.host)
    return True


def replace_on_delete(run, objects, max_unavailable):
    """Delete the next old Machines of the OnDelete MachineDeployments among ``objects`` (core.ondelete decides which,
    at most ``max_unavailable`` unavailable per pool), before this call of the wait watches them: CAPI then replaces
    them. One LIST of MachineDeployments, MachineSets and Machines per namespace. Returns [{ref, machine, node}]."""
    deleted = []
    for selected in _deployments(run, objects):
        namespace = selected.namespace
        pools = [md for md in selected.objects if ondelete.is_on_delete(md, api_version=selected.version)]
        if not pools:
            continue
        machine_sets, _version = reading.list_kind(run.api, run.discovery, apiversion.MACHINE_SET, namespace)
        machines, version = reading.list_kind(run.api, run.discovery, apiversion.MACHINE, namespace)
        by_name = {(m.get("metadata") or {}).get("name"): m for m in machines}
        now = run.api.server_now()
        for md in pools:
            step = ondelete.pool_step(md, machine_sets, machines, max_unavailable=max_unavailable,
                                      api_version=selected.version, now=now)
            for name in step["delete"]:
                if _delete_machine(run, by_name[name], version, step["ref"]):
                    node = ((by_name[name].get("status") or {}).get("nodeRef") or {}).get("name")
                    deleted.append({"ref": step["ref"], "machine": name, "node": node})
                    run.progress.append(f"{step['ref']}: deleted Machine {name}" + (f" (Node {node})" if node else "")
                                        + f" - {step['message']}")
    return deleted


def carry_drain_timeouts(run, objects):
    """Give the older MachineSets of the MachineDeployments among ``objects`` that carry a drain timeout record the
    MD's node drain timeout (core.drains.carry_to_machine_sets: CAPI v1.10/v1.11 pass it to the newest only), before
    this call of the wait watches them: one LIST of MachineDeployments and, when one has a record, of MachineSets per
    namespace; one PATCH per MachineSet that lacks it (a conflict leaves it to the next call)."""
    for selected in _deployments(run, objects):
        namespace = selected.namespace
        recorded = [md for md in selected.objects if drains.recorded(md) is not None]
        if not recorded:
            continue
        machine_sets, version = reading.list_kind(run.api, run.discovery, apiversion.MACHINE_SET, namespace)
        for md in recorded:
            for ms, changes in drains.carry_to_machine_sets(md, selected.version, machine_sets):
                meta = ms["metadata"]
                ref = make_ref(apiversion.MACHINE_SET, namespace, meta["name"])
                path = reading.path_of(apiversion.MACHINE_SET, apiversion.api_version_string(apiversion.MACHINE_SET, version),
                                       namespace, meta["name"])
                try:
                    run.api.patch_json(path, patches.json_patch(ms, changes, None))
                except ApiError as err:
                    if is_write_conflict(err):
                        continue
                    raise api_error(err, ref=ref, verb="patch", resource=apiversion.resource(apiversion.MACHINE_SET, version),
                                    namespace=namespace, host=run.api.host)
                run.progress.append(f"{ref}: node drain timeout {changes.changes()[0]['after']} as its MachineDeployment's, "
                                    "for its Machines that drain during the rollout")


def _restore_one(run, selected, obj):
    """PATCH back the node drain timeout recorded on ``obj`` (core.drains.restore_drain_timeout), re-read and re-planned
    on a conflict; None when it has no record. Returns {ref, drain_timeout} as read back from the cluster."""
    name = obj["metadata"]["name"]
    ref = make_ref(selected.kind, selected.namespace, name)
    path = apiversion.spec_path(selected.kind, selected.version, "node_drain_timeout")

    def attempt(fresh):
        current = reading.refetch(run.api, selected, name) if fresh else obj
        changes = ChangeSet()
        if drains.restore_drain_timeout(current, selected.kind, selected.version, changes) is None:
            return None
        return run.api.patch_json(selected.object_path(name), patches.json_patch(current, changes, None))

    try:
        after = with_conflict_retry(attempt, retry_on=is_write_conflict)
    except ApiError as err:
        raise api_error(err, ref=ref, verb="patch", resource=apiversion.resource(selected.kind, selected.version),
                        namespace=selected.namespace, host=run.api.host)
    return None if after is None else {"ref": ref, "drain_timeout": paths.get_path(after, path)}


def restore_drain_timeouts(run, objects):
    """Put back the node drain timeout a refresh set for its wave (capi_rollout_restart ``drain_timeout``) on the
    MachineDeployments among ``objects`` that carry its record: one LIST per namespace, one PATCH per record (fieldManager
    and dry run as every write). Returns [{ref, drain_timeout}] (the value read back, None: unset)."""
    restored = []
    for selected in _deployments(run, objects):
        for obj in selected.objects:
            if drains.recorded(obj) is None:
                continue
            entry = _restore_one(run, selected, obj)
            if entry is not None:
                restored.append(entry)
                run.progress.append(f"{entry['ref']}: node drain timeout put back to "
                                    f"{'unset' if entry['drain_timeout'] is None else entry['drain_timeout']}")
    return restored


def stuck_details(waiter):
    """{ref: {lines, machines}} for the objects that made the wait fail (after ``waiter.failure()``)."""
    out = {}
    for ref in waiter.state["failed_refs"]:
        group, name = waiter.locate(ref)
        if group.objects.get(name) is None:
            out[ref] = {"lines": ["the object no longer exists"], "machines": []}
            continue
        lines, machines = waiter.stuck[ref]["lines"], waiter.stuck[ref]["machines"]
        reasons = [(m, statuses.machine_reason(m)) for m in sorted(machines, key=lambda m: m.get("name") or "")]
        out[ref] = {"lines": lines,
                    "machines": [{"name": m.get("name"), "node": m.get("node"), "reason": reason}
                                 for m, reason in reasons if reason][:10]}
    return out


def _resources(objects, waiter):
    out = []
    state = waiter.state
    for kind, namespace, name, ref in objects:
        entry = {"ref": ref, "kind": kind, "namespace": namespace, "name": name, "done": False, "message": None,
                 "replicas": {}, "warnings": [], "template": None, "drift": None, "template_missing": None,
                 "done_at": ws.stamp(state["done_at"].get(ref))}
        snap = waiter.snapshots.get(ref)
        if snap is not None:
            entry.update(done=snap["done"], message=snap["message"], replicas=snap["replicas"], warnings=snap["warnings"],
                         template=snap["template"], drift=snap["drift"], template_missing=snap.get("template_missing"))
        out.append(entry)
    return out


def _count_machine_changes(run, params, resources):
    """``machines`` ({replaced, updated_in_place}, core.restart.machine_changes) of each object given a
    ``switched_at``, after the wait succeeded: one LIST of Machines per namespace of those objects, only then."""
    switched = [(entry, item["switched_at"]) for entry, item in zip(resources, params["objects"]) if item.get("switched_at")]
    machines_of = {}
    for entry, switched_at in switched:
        namespace = entry["namespace"]
        if namespace not in machines_of:
            machines_of[namespace], _version = reading.list_kind(run.api, run.discovery, apiversion.MACHINE, namespace)
        entry["machines"] = restarts.machine_changes(machines_of[namespace], entry["kind"], entry["name"],
                                                     timeutil.parse_time(switched_at))


def wait_limit(params):
    """``wait`` of Run.connect: the time this call has left - on the action plugin's later calls what it hands in
    (``time_left``: the wait's start + wait_timeout + soak_seconds, by the API server's clock), else all of it."""
    what = f"wait_timeout={params['wait_timeout']}s" + (f" + soak_seconds={params['soak_seconds']}s" if params["soak_seconds"] else "")
    if params.get("time_left") is not None:
        return params["time_left"], what
    return params["wait_timeout"] + params["soak_seconds"], what


def run_wait(module):
    """The whole capi_rollout_wait task (one call of it, see the module docstring)."""
    params = module.params
    run = Run(module, GATE)
    run.connect(wait=wait_limit(params))
    waiter = None
    objects = []
    deleted = []
    # the lock is renewed as the wait starts, and on each later call the action plugin hands it to (every third of
    # its duration): within this call's deadline
    renewed = 1 if params.get("lease") else 0
    try:
        objects = _objects(params)
        holds = _holds(params)
        if renewed:
            locks.renew(run, params["lease"])
        deleted = replace_on_delete(run, objects, params["on_delete_max_unavailable"]) if params.get("on_delete") == "replace" else []
        if params.get("restore_drain_timeout"):
            carry_drain_timeouts(run, objects)
        if not objects:
            module.exit_json(**run.result(changed=False, phase=ws.SUCCEEDED, reason=None, resources=[], failed_refs=[],
                                          finished_call=True, tracking={}, lease_renewals=renewed, deleted=[],
                                          **{k: None for k in ("started", "rollout_finished", "soak_finished", "ended")}))
        waiter = run.waiter(read_groups(run, objects, known=bool(params.get("tracking"))), params["wait_timeout"], params["stall_timeout"],
                            soak_seconds=params["soak_seconds"], poll_interval=params["poll_interval"],
                            expected=_expected_templates(params), state=params.get("tracking") or None,
                            holds=holds, topology_reads=waiters.TopologyReads(run.api, run.discovery),
                            templates_lister=waiters.templates_lister(run.api, run.discovery),
                            drain_groups=drain_groups(run, objects) if params.get("undrainable") else None,
                            undrainable=params.get("undrainable") or "continue")
        waiter.run(call_seconds=params["progress_interval"] if params["progress_interval"] > 0 else None)
    except OutOfTime as err:
        # the API server stopped answering and the wait's time is up: a wait_timeout that names the objects
        state = waiter.state if waiter else params.get("tracking") or None
        if waiter is not None:
            run.progress.extend(waiter.progress)
        refs = [entry[3] for entry in objects]
        run.fail(run.timed_out(err, refs, state), changed=bool(deleted), finished_call=True, tracking=state or {}, phase=ws.FAILED,
                 lease_renewals=0, deleted=deleted, failed_refs=[ref for ref in refs if not (state or {}).get("done_at", {}).get(ref)])
    except (RolloutError, ApiError, TransportError) as err:
        if waiter is not None:
            run.progress.extend(waiter.progress)
        run.fail(err, changed=bool(deleted), finished_call=True, tracking=waiter.state if waiter else {}, phase=ws.FAILED,
                 lease_renewals=0, deleted=deleted)
    run.progress.extend(waiter.progress)
    state = waiter.state
    summary = ws.summary(state)
    result = run.result(changed=bool(deleted), resources=_resources(objects, waiter), finished_call=state["phase"] in ws.FINISHED,
                        tracking=state, lease_renewals=renewed, deleted=deleted, time_left=waiter.seconds_left(),
                        drain_timeouts=list(state.get("drain_timeouts") or []),
                        **{k: v for k, v in summary.items() if k != "done_at"})
    if state["phase"] == ws.SUCCEEDED:
        _count_machine_changes(run, params, result["resources"])
    if state["phase"] in ws.FINISHED and params.get("restore_drain_timeout"):
        # after the wave, and after a failed one as well (a stall, a timeout, a drift)
        try:
            result["drain_timeouts_restored"] = restore_drain_timeouts(run, objects)
        except (RolloutError, ApiError, TransportError) as err:
            run.fail(err, changed=result["changed"], resources=result["resources"], finished_call=True, tracking=state,
                     phase=ws.FAILED, lease_renewals=renewed, deleted=deleted)
        result["changed"] = result["changed"] or bool(result["drain_timeouts_restored"])
    if state["phase"] in ws.FINISHED:
        for entry in result["resources"]:
            for warning in entry["warnings"]:
                module.warn(f"{entry['ref']}: {warning}")
    if state["phase"] == ws.FAILED:
        err = waiter.failure()
        result["stuck"] = stuck_details(waiter)
        result["api_requests"] = run.api.count
        module.fail_json(msg=err.message, **result)
    module.exit_json(**result)
