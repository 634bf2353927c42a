# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flow every module shares: connect, discover, select (constant number of LISTs), plan with
the core for every object first (any refusal fails the task with nothing written), then write each
change as a JSON patch whose ``test`` operations guard the fields its plan read (core.patch; a failed test
or a 409: re-read, re-plan, retry), and wait. In check mode every write is
sent as a server-side dry run (client.requests), so RBAC, admission and validation answer as they
would for the real run, and nothing is waited for.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.capi.rollout.plugins.module_utils.client import identity
from ansible_collections.capi.rollout.plugins.module_utils.client import targets
from ansible_collections.capi.rollout.plugins.module_utils.client import undo as undo_client
from ansible_collections.capi.rollout.plugins.module_utils.client.args import auth_params
from ansible_collections.capi.rollout.plugins.module_utils.client.connection import (
    KUBERNETES_IMPORT_ERROR, Connection, ConnectionConfigError, secret_values,
)
from ansible_collections.capi.rollout.plugins.module_utils.client.discovery import Discovery
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import (
    ApiError, TransportError, api_error, transport_error,
)
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import Api, is_write_conflict, with_conflict_retry
from ansible_collections.capi.rollout.plugins.module_utils.client import waiter as waiters
from ansible_collections.capi.rollout.plugins.module_utils.client.waiter import WaitFailed
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import pause as pauses
from ansible_collections.capi.rollout.plugins.module_utils.core import resource_info
from ansible_collections.capi.rollout.plugins.module_utils.core import restart as restarts
from ansible_collections.capi.rollout.plugins.module_utils.core import settings
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError

CONFLICT_ATTEMPTS = 5


class StoppedPartWay(RolloutError):
    """A write of a multi-object call failed: ``changed_refs`` were changed before it, ``unchanged_refs``
    (the failed object first) were not."""

    def __init__(self, msg, changed_refs, unchanged_refs, **fields):
        super(StoppedPartWay, self).__init__(msg, **fields)
        self.changed_refs = changed_refs
        self.unchanged_refs = unchanged_refs


class Run(object):
    """State of one module run: the API, discovery, and what goes into the result."""

    def __init__(self, module, minimums=None):
        self.module = module
        self.minimums = minimums  # of the module's numeric options (core.settings); the wait modules' by default
        self.api = None
        self.discovery = None
        self.progress = []
        # The MachineSets the last wait decided with, so its result entries agree with it.
        self.waited_machine_sets = None

    def connect(self):
        module = self.module
        problems = settings.module_errors(module.params, self.minimums)
        if problems:
            # before any request: a wait that cannot succeed must not follow a write
            module.fail_json(msg="; ".join(problems) + "; nothing was changed", reason="invalid_setting", changed=False,
                             progress=[], api_requests=0)
        if KUBERNETES_IMPORT_ERROR:
            module.fail_json(msg=missing_required_lib("kubernetes"), exception=KUBERNETES_IMPORT_ERROR)
        kubeconfig = module.params.get("kubeconfig")
        if isinstance(kubeconfig, dict):
            module.no_log_values.update(secret_values(kubeconfig))
        try:
            self.api = Api(Connection(auth_params(module.params), module_name=module._name), dry_run=module.check_mode)
        except ConnectionConfigError as err:
            module.fail_json(msg=str(err), reason="connection_config", progress=[], api_requests=0)
        self.discovery = Discovery(self.api)

    def result(self, **extra):
        known = self.api is not None and self.api.clock.known
        out = {"progress": list(self.progress), "api_requests": self.api.count if self.api else 0,
               "server_time": timeutil.format_time(self.api.server_now()) if known else None}
        out.update(extra)
        return out

    def fail(self, err, **extra):
        """fail_json for a RolloutError / ApiError / TransportError (the ref is in the message)."""
        if isinstance(err, TransportError):
            err = transport_error(err)
        elif isinstance(err, ApiError):
            err = api_error(err, host=self.api.host if self.api else None)
        fields = err.to_dict() if isinstance(err, RolloutError) else {"msg": str(err)}
        fields.update(extra)
        self.module.fail_json(**self.result(**fields))

    # ----- reads -----
    def select(self, require_match):
        return targets.select(self.api, self.discovery, self.module.params, require_match=require_match)

    def clusters(self, selected):
        return targets.clusters_for(self.api, self.discovery, selected.objects, selected.namespace)

    def machine_sets(self, selected):
        """The MachineSets of the selection's namespace (one LIST); [] for KCPs, which have none."""
        return self.machine_sets_at(selected)[0]

    def machine_sets_at(self, selected):
        """(MachineSets of the selection's namespace, the list's resourceVersion); ([], None) for KCPs."""
        if selected.kind != apiversion.MACHINE_DEPLOYMENT:
            return [], None
        items, _version, rv = targets.list_kind_at(self.api, self.discovery, apiversion.MACHINE_SET, selected.namespace)
        return items, rv

    def wait(self, selected, objects, resource_version):
        """Wait for the rollouts of ``objects`` (client.waiter, watched from ``resource_version``);
        returns them as last seen, or raises WaitFailed."""
        params = self.module.params
        waiter = self.waiter([waiters.Group.of(selected, objects, resource_version)], params["wait_timeout"],
                             params["stall_timeout"])
        try:
            waiter.run()
        finally:
            self.progress.extend(waiter.progress)
            self.waited_machine_sets = waiter.machine_sets.get(selected.namespace)
        if waiter.state["phase"] == ws.FAILED:
            raise waiter.failure()
        return waiter.objects()

    def waiter(self, groups, wait_timeout, stall_timeout, **options):
        """The one waiting engine (client.waiter) over this run's API. Its clock is the API server's: the times it
        reports (started, rollout_finished, soak_finished, ended) line up with the cluster's own, and its state,
        carried from one call to the next, stays consistent whatever the Ansible host's clock says."""
        return waiters.Waiter(self.api, groups, wait_timeout, stall_timeout,
                              clock=lambda: self.api.server_now().timestamp(),
                              machine_sets_lister=waiters.machine_sets_lister(self.api, self.discovery),
                              machines_lister=waiters.machines_lister(self.api, self.discovery), **options)


def _start_rv(selected, objects):
    if selected.list_resource_version:
        return selected.list_resource_version
    versions = [(obj.get("metadata") or {}).get("resourceVersion") for obj in objects]
    numeric = sorted(int(v) for v in versions if v and str(v).isdigit())
    return str(numeric[0]) if numeric else None


def _entries(objects, clusters, version, now, machine_sets=None, machines=None, show_machine_sets=False):
    out = []
    for obj in objects:
        cluster = clusters.get(views.cluster_name_of(obj))
        out.append(resource_info.resource_entry(obj, now=now, cluster=cluster, api_version=version,
                                                machine_sets=machine_sets, machines=machines,
                                                show_machine_sets=show_machine_sets))
    return out


def _warn_status(module, entries):
    """Status warnings (core.status, e.g. upstream bug #13182) as Ansible warnings, once per object."""
    for entry in entries:
        for warning in (entry.get("rollout") or {}).get("warnings") or []:
            module.warn(f"{entry['ref']}: {warning}")


# ---------------------------------------------------------------------------------------------
# capi_rollout_info


def run_info(module):
    params = module.params
    if _selects_nothing(params):
        module.exit_json(changed=False, resources=[], progress=[], api_requests=0)
    run = Run(module)
    run.connect()
    resources = []
    selected = None
    try:
        selected = run.select(require_match=False)
        clusters = run.clusters(selected)
        objects = selected.objects
        if not objects and not targets.namespace_exists(run.api, selected.namespace):
            module.warn(f"namespace {selected.namespace} does not exist: nothing to show (check the namespace)")
        if params.get("wait") and objects:
            objects = run.wait(selected, objects, _start_rv(selected, objects))
        machines = None
        history = params.get("history") or params.get("revision") is not None
        # MDs: the MachineSets decide completion (core.status), so they are always read.
        machine_sets = run.machine_sets(selected) if objects else []
        if params.get("machines"):
            machines, _v = targets.list_kind(run.api, run.discovery, apiversion.MACHINE, selected.namespace)
        resources = _entries(objects, clusters, selected.version, run.api.server_now(), machine_sets, machines,
                             show_machine_sets=bool(params.get("machine_sets")))
        _warn_status(module, resources)
        if history:
            _add_history(run, objects, resources, machine_sets, selected.version, params.get("revision"))
    except WaitFailed as err:
        run.fail(err, resources=_entries(err.objects, {}, selected.version, run.api.server_now(),
                                         run.waited_machine_sets))
    except (RolloutError, ApiError, TransportError) as err:
        run.fail(err)
    module.exit_json(**run.result(changed=False, resources=resources))


def _add_history(run, objects, resources, machine_sets, version, revision):
    """``history`` of every entry (core.history.history_info): all revisions newest first, or with
    ``revision`` only that one in full (an unknown revision fails, listing those there are). The templates
    the revisions reference are read with one LIST per template kind, for the changes of their specs; when
    that is refused, the history is shown without them and a warning says so."""
    module = run.module
    required = []
    for obj in objects:
        required.extend(hist.history_template_refs(obj, machine_sets))
    templates = None
    if required:
        try:
            templates = undo_client.existing_templates(run.api, run.discovery, required)
        except (RolloutError, ApiError) as err:
            module.warn(f"the templates the revisions reference could not be read, so their spec changes are not shown: {err}")
    for obj, entry in zip(objects, resources):
        info = hist.history_info(obj, machine_sets, api_version=version, revision=revision, templates=templates)
        entry["history"] = info["history"]
        for warning in info["warnings"]:
            module.warn(f"{entry.get('ref') or entry.get('name')}: {warning}")


# ---------------------------------------------------------------------------------------------
# capi_rollout_restart / capi_rollout_pause / capi_rollout_undo


def _restart_planner(run, selected, clusters, now, actor):
    params = run.module.params
    machine_sets = machines = None
    if restarts.is_past(params.get("after"), now):
        # One LIST tells whether a past time replaces anything (core.restart._rolls_nothing).
        if selected.kind == apiversion.MACHINE_DEPLOYMENT:
            machine_sets = run.machine_sets(selected)
        else:
            machines, _v = targets.list_kind(run.api, run.discovery, apiversion.MACHINE, selected.namespace,
                                             label_selector=keys.CONTROL_PLANE_NAME_LABEL)

    def plan(obj):
        return restarts.plan_restart(obj, now, api_version=selected.version, cluster=clusters.get(views.cluster_name_of(obj)),
                                     after=params.get("after"), infrastructure_ref=params.get("infrastructure_ref"),
                                     force=params.get("force"), rollout_id=params.get("rollout_id"),
                                     reason=params.get("reason"), actor=actor, history_limit=params.get("history_limit"),
                                     machine_sets=machine_sets, machines=machines)
    return plan


def _pause_planner(run, selected, clusters, now, actor):
    params = run.module.params

    def plan(obj):
        return pauses.plan_pause(obj, paused=params["paused"], api_version=selected.version,
                                 cluster=clusters.get(views.cluster_name_of(obj)), now=now,
                                 rollout_id=params.get("rollout_id"), reason=params.get("reason"), actor=actor,
                                 record=params.get("rollout_id") is not None or params.get("reason") is not None)
    return plan


# verb -> planner factory (run, selected, clusters, now, actor) -> plan(obj). Factories may read
# more (a constant number of requests) before returning; every refusal fails before any write.
PLANNERS = {"restart": _restart_planner, "pause": _pause_planner, "undo": undo_client.make_planner}


def _check_templates(run, planned):
    """Every template a planned switch points at must exist (one GET per distinct template)."""
    seen = set()
    for _obj, plan in planned:
        if not plan["changed"]:
            continue
        for item in plan.get("required_templates") or []:
            key = (item["api_group"], item["kind"], item["name"], item.get("namespace") or plan["namespace"])
            if key in seen:
                continue
            seen.add(key)
            targets.template_exists(run.api, run.discovery, key[3],
                                    {"api_group": key[0], "kind": key[1], "name": key[2]}, ref=plan["ref"])


def _result_entry(plan):
    keep = ("ref", "kind", "name", "namespace", "action", "changed", "message", "patch_type", "changes", "warnings",
            "revision_before", "rollout_after", "history_revision", "from_revision", "to_revision", "target_source",
            "target_machine_set", "target_template")
    entry = {key: plan.get(key) for key in keep if key in plan}
    entry["api_version"] = apiversion.api_version_string(plan["kind"], plan["api_version"])
    # exactly what is sent (_write)
    entry["patch"] = copy.deepcopy(plan["patch"]) if plan["changed"] else None
    return entry


def _selects_nothing(params):
    """names: [] given explicitly (and nothing else) selects no object."""
    return params.get("names") == [] and not params.get("cluster_name") and not params.get("label_selectors")


def run_change(module, verb):
    """Shared flow of capi_rollout_restart (verb "restart"), capi_rollout_pause ("pause") and
    capi_rollout_undo ("undo")."""
    params = module.params
    if _selects_nothing(params):
        module.fail_json(msg="names is empty: no object selected; give name, names, cluster_name or label_selectors",
                         reason="invalid_selection", changed=False, objects=[], progress=[], api_requests=0)
    if verb == "undo":
        try:
            # Before any request: only the kind is checked, the time is not used.
            undo_client.refuse_kind(params, datetime.datetime.now(datetime.timezone.utc))
        except RolloutError as err:
            module.fail_json(**dict(err.to_dict(), changed=False, objects=[], progress=[], api_requests=0))
    run = Run(module)
    run.connect()
    results = []
    diffs = []
    selected = None
    try:
        selected = run.select(require_match=True)
        clusters = run.clusters(selected)
        # Server time: triggers and records must be in the controllers' clock (client.serverclock).
        now = run.api.server_now()
        # Every object is planned before anything is written: one refusal fails the task untouched.
        plan_for = PLANNERS[verb](run, selected, clusters, now, identity.actor_for(run.api.connection))
        planned = [(obj, plan_for(obj)) for obj in selected.objects]
        if verb == "restart":
            _check_templates(run, planned)
        final = {}
        for index, (obj, plan) in enumerate(planned):
            if plan["changed"]:
                try:
                    plan, final[plan["name"]] = _write(run, selected, obj, plan, plan_for)
                except (RolloutError, ApiError, TransportError) as err:
                    raise _stopped_part_way(err, planned, index, results, module.check_mode)
            results.append(_result_entry(plan))
            if plan["changed"]:
                diffs.append(plan["diff"])
            for warning in plan.get("warnings") or []:
                module.warn(f"{plan['ref']}: {warning}")
        if params.get("wait") and not module.check_mode:
            objects = [final.get(obj["metadata"]["name"], obj) for obj in selected.objects]
            objects = run.wait(selected, objects, _start_rv(selected, objects))
            entries = _entries(objects, clusters, selected.version, run.api.server_now(), run.waited_machine_sets)
            _warn_status(module, entries)
            for entry, status in zip(results, entries):
                entry["status"] = status
    except WaitFailed as err:
        statuses = {e["name"]: e for e in _entries(err.objects, {}, selected.version, run.api.server_now(),
                                                   run.waited_machine_sets)}
        for entry in results:
            entry["status"] = statuses.get(entry["name"])
        run.fail(err, changed=any(entry["changed"] for entry in results), objects=results)
    except (RolloutError, ApiError, TransportError) as err:
        extra = {}
        if isinstance(err, StoppedPartWay):
            extra = {"changed_objects": err.changed_refs, "unchanged_objects": err.unchanged_refs}
        run.fail(err, changed=any(entry["changed"] for entry in results) and not module.check_mode, objects=results,
                 **extra)
    out = run.result(changed=any(entry["changed"] for entry in results), objects=results)
    if module._diff:
        out["diff"] = diffs
    module.exit_json(**out)


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


def _write(run, selected, obj, plan, plan_for):
    """PATCH one object with its plan's JSON patch; when a ``test`` fails (a field the plan read has changed)
    or on 409, re-read it, re-plan and retry. Returns (plan, object after)."""
    res = apiversion.resource(selected.kind, selected.version)
    state = {"plan": plan}

    def attempt(fresh):
        if fresh:
            current = targets.refetch(run.api, selected, plan["name"])
            state["plan"] = plan_for(current)
            if not state["plan"]["changed"]:
                return current
        return run.api.patch_json(selected.object_path(state["plan"]["name"]), state["plan"]["patch"])

    try:
        after = with_conflict_retry(attempt, attempts=CONFLICT_ATTEMPTS, retry_on=is_write_conflict)
    except ApiError as err:
        raise api_error(err, ref=plan["ref"], verb="patch", resource=res, namespace=selected.namespace,
                        host=run.api.host)
    after.setdefault("kind", selected.kind)
    return state["plan"], after
