# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The restart verb of flows.change (capi_rollout_restart): a rollout trigger now or at ``after``, or a switch
to another infrastructure template, one for every selected object (``infrastructure_ref``) or one per object
(``switches``) (core.restart decides).

A switch may name, instead of a template, the ``template`` to make for it: a clone of the object's current one
(flows.machine_template, as capi_machine_template with ``objects``). Every clone is read, planned and sent as a
server-side dry run while the objects are planned; the templates are created only once every check of every
object passed, just before the first patch. The whole switch of a wave is then one module call.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client import reading
from ansible_collections.capi.rollout.plugins.module_utils.client import templates
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import MERGE_PATCH
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import plan as plans
from ansible_collections.capi.rollout.plugins.module_utils.core import record as records
from ansible_collections.capi.rollout.plugins.module_utils.core import restart as restarts
from ansible_collections.capi.rollout.plugins.module_utils.core import topology as topologies
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref
from ansible_collections.capi.rollout.plugins.module_utils.flows import machine_template
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import selects_nothing, single_ref


RESULT_KEYS = ("revision_before", "rollout_after", "history_revision", "in_place", "hold")


def refuse_early(params):
    """``switches`` given as [] (no object selected) or naming an object twice (which of its templates?), an ``after``
    that is no time, a template reference without a name or to a group of CAPI itself (core.restart). Run by the input
    gate (flows.change.gate), which ends the message. The rest of a template reference (kind and group defaulted from
    the object's current one, the api_version of a v1beta1 object) and every other refusal need the object."""
    if selects_nothing(params, "switches"):
        raise RolloutError("switches is empty: no object selected; give name, names, cluster_name or label_selectors, "
                           "or at least one switch", reason=inputs.INVALID_SELECTION)
    seen = set()
    for item in params.get("switches") or []:
        name = _switch_name(item)
        if name in seen:
            raise RolloutError(f"switches names {_kind(params)} {name} more than once",
                               ref=make_ref(_kind(params), params.get("namespace"), name), reason=inputs.INVALID_SELECTION,
                               hint="give each object once, with the one template it is switched to")
        seen.add(name)
    ref = single_ref(params)
    if isinstance(params.get("after"), str):  # another type is core.settings' to refuse
        restarts.parse_after(params["after"], ref)
    if params.get("infrastructure_ref") is not None:
        restarts.refuse_reference(params["infrastructure_ref"], ref=ref)
    for index, item in enumerate(params.get("switches") or []):
        if item.get("infrastructure_ref") is not None:  # else its template is made (switches[].template)
            restarts.refuse_reference(item["infrastructure_ref"], f"switches[{index}].infrastructure_ref",
                                      make_ref(_kind(params), params.get("namespace"), _switch_name(item)))


def _kind(params):
    return apiversion.rollout_kind(params.get("kind") or apiversion.MACHINE_DEPLOYMENT)


def _switch_name(item):
    # as core.selection reads names, so that the object it selects finds its template
    return str(item["name"]).strip()


def _infrastructure_refs(params, cloned):
    """{object name: the template it is switched to} of ``switches`` (``cloned``: the targets of the clones made
    for ``template`` entries); None without them (``infrastructure_ref``, if any, is every selected object's)."""
    if params.get("switches") is None:
        return None
    return {_switch_name(item): cloned.get(_switch_name(item)) or item["infrastructure_ref"] for item in params["switches"]}


class Clones(object):
    """The clones of a restart's ``switches[].template`` entries through their two steps: checked while the
    objects are planned (``check``), created after every check passed (``create``). Their results (capi_machine_template's
    ``results``) go into the task's result as ``clones``."""

    def __init__(self, run, selected, through_topology=()):
        self.run = run
        self.selected = selected
        # a topology MD gets its new template from the topology (core.topology path (a)), not from a clone
        wanted = [item for item in run.module.params.get("switches") or []
                  if item.get("template") is not None and _switch_name(item) not in through_topology]
        self.refs = [make_ref(selected.kind, selected.namespace, _switch_name(item)) for item in wanted]
        self.requests = [machine_template.object_request(
            dict(item["template"], kind=selected.kind, name=_switch_name(item)), selected.namespace) for item in wanted]
        self.todo = []
        self.failed = {}

    def check(self):
        """Read, plan and dry-run create every clone; {object name: its target template}. Nothing is written; a
        clone that fails a check fails the task (reason clone_refused) before any write."""
        if not self.requests:
            return {}
        # the selection is one LIST of the objects' collection: the clones read their sources from it
        reads = templates.Reads(self.run.api, by_list=True)
        resource = apiversion.resource(self.selected.kind, self.selected.version)
        reads.remember(resource["group"], self.selected.version, resource["plural"], self.selected.namespace,
                       self.selected.objects)
        self.todo, self.failed = machine_template.check_objects(self.run, self.requests, reads)
        if self.failed:
            self._publish()
            raise self._failure("could not be made, so no object was switched; nothing was changed", "clone_refused",
                                "fix the template settings of these objects (switches[].template)")
        return {request["from_object"]["name"]: clone.plan["infrastructure_ref"]
                for request, clone in zip(self.requests, self.todo)}

    def create(self):
        """Create the checked clones that do not exist yet (the task's first writes); a failed create fails the
        task (reason create_failed) before any object is switched."""
        if not self.requests:
            return
        for index, clone in enumerate(self.todo):
            if clone.pending:
                try:
                    machine_template.create(self.run, clone)
                except machine_template.FAILURES as err:
                    self.failed[index] = self.run.error(err)
        made = [clone for index, clone in enumerate(self.todo) if index not in self.failed and clone.created]
        self.run.writes.extend(clone.plan["diff"] for clone in made)
        self._publish()
        if self.failed:
            raise self._failure(f"could not be created ({len(made)} were), so no object was switched", "create_failed",
                                "fix the cause and re-run: templates already made are reused")

    def made(self):
        """(namespace, kind, name) of every template these clones make (not checked to exist before the switch)."""
        return {(request["namespace"], clone.plan["infrastructure_ref"]["kind"], clone.plan["infrastructure_ref"]["name"])
                for request, clone in zip(self.requests, self.todo)}

    def _failure(self, what, reason, hint):
        named = machine_template.failures_named(self.refs, self.failed)
        return RolloutError(f"{len(self.failed)} of {len(self.todo)} new template(s) {what}: {named}",
                            ref=self.refs[min(self.failed)], reason=reason, hint=hint)

    def _publish(self):
        """The clones' results into the task's result (once: each clone's warnings become Ansible warnings)."""
        self.run.extras["clones"] = machine_template.object_results(self.run.module, self.refs, self.todo, self.failed)


# Any valid time: the probe is a dry run and stores nothing.
_PROBE_AFTER = "2000-01-01T00:00:00Z"


def topology_rollout(run, selected, clusters):
    """Whether the Cluster topology of this management cluster has ``rollout.after`` (CAPI v1.13+, PR #13391),
    asked only when a selected object is topology-managed: a server-side dry run of setting
    ``spec.topology.controlPlane.rollout.after`` on its Cluster, whose answer keeps the field only where the CRD has
    it (older API servers prune it). Needs the ``patch clusters`` a topology restart needs anyway."""
    for obj in selected.objects:
        cluster = clusters.get(views.cluster_name_of(obj))
        if topologies.manages(obj, cluster):
            path = reading.path_of(apiversion.CLUSTER, cluster["apiVersion"], cluster["metadata"]["namespace"],
                                   cluster["metadata"]["name"])
            probe = {"spec": {"topology": {"controlPlane": {"rollout": {"after": _PROBE_AFTER}}}}}
            try:
                answer = run.api.request("PATCH", path, body=probe, content_type=MERGE_PATCH, verb="patch", dry_run=True)
            except ApiError as err:
                version = cluster["apiVersion"].rpartition("/")[2]
                raise api_error(err, ref=topologies.cluster_ref(cluster), verb="patch", host=run.api.host,
                                namespace=cluster["metadata"]["namespace"],
                                resource=apiversion.resource(apiversion.CLUSTER, version))
            return bool((((answer.get("spec") or {}).get("topology") or {}).get("controlPlane") or {}).get("rollout"))
    return False


def _topology_switches(run, selected, clusters):
    """{object name: (template overrides, its ClusterClass, its other worker classes' templates, its current
    infrastructure template with --diff, else None)} of the
    ``switches[].template`` entries of objects a Cluster topology manages (core.restart.plan_topology_switch); one GET
    per ClusterClass, and per template of another worker class when path (a) does not cover a switch."""
    by_name = {obj["metadata"]["name"]: obj for obj in selected.objects}
    classes, read = {}, {}
    out = {}
    for item in run.module.params.get("switches") or []:
        obj = by_name.get(_switch_name(item))
        cluster = clusters.get(views.cluster_name_of(obj)) if obj else None
        if item.get("template") is None or not topologies.manages(obj, cluster):
            continue
        overrides = item["template"].get("overrides") or {}
        cclass = reading.cluster_class(run.api, cluster, classes)
        # --diff shows the template the topology will generate against the current one: one GET of it then
        current = templates.infrastructure_template(run.api, run.discovery, obj, selected.kind) if run.module._diff else None
        out[_switch_name(item)] = (overrides, cclass, templates.worker_class_templates(
            run.api, run.discovery, cclass, cluster, obj, overrides, read, kind=selected.kind), current)
    return out


def planner(run, selected, clusters, now, actor):
    params = run.module.params
    topology_switches = _topology_switches(run, selected, clusters)
    clones = run.verb_state = Clones(run, selected, topology_switches)
    per_object = _infrastructure_refs(params, clones.check())
    recording = records.Recording.from_params(params, actor)
    through_topology = per_object is None and not params.get("infrastructure_ref") and \
        topology_rollout(run, selected, clusters)
    machine_sets = machines = None

    def in_place_possible():
        """Asked on the first switch planned (a switch on v1.12+ may keep its Machines); a re-run that plans nothing
        does not ask."""
        return run.in_place_possible(selected.version)

    def switch_through_topology():
        """Whether a topology switch's trigger goes into the Cluster topology (v1.13+): one dry run, asked by
        core.restart.plan_topology_switch only for a trigger (a switch where in-place updates are possible)."""
        if "topology" not in read:
            read["topology"] = topology_rollout(run, selected, clusters)
        return read["topology"]
    read = {}
    if restarts.is_past(params.get("after"), now):
        # One LIST tells whether a past time replaces anything (core.restart._rolls_nothing).
        if selected.kind == apiversion.MACHINE_DEPLOYMENT:
            machine_sets = run.machine_sets(selected)
        else:
            machines = _control_plane_machines(run, selected)

    def reads(counts):
        """(MachineSets, Machines) for a write, each LISTed once per task: an MD's MachineSets, and every Machine of
        the namespace for the counts (core.history.counts_wanted); a KCP's control plane Machines."""
        if selected.kind != apiversion.MACHINE_DEPLOYMENT:
            if "machines" not in read:
                read["machines"] = machines if machines is not None else _control_plane_machines(run, selected)
            return None, read["machines"]
        if "sets" not in read:
            read["sets"] = machine_sets if machine_sets is not None else run.machine_sets(selected)
        if counts and "machines" not in read:
            read["machines"] = reading.list_kind(run.api, run.discovery, apiversion.MACHINE, selected.namespace)[0]
        return read["sets"], read.get("machines")

    def plan(obj):
        """The plan of ``obj``, planned again with what it must know (core.restart): the trigger of a restart now
        with the MachineSets / Machines it must replace, after waiting until it is later than their creation
        (_settle); a write that records a change with the MachineSets and Machines, so it keeps the Machine counts of
        the revision it leaves. A re-run whose rollout_id was applied reads nothing more."""
        nonlocal now
        planned = plan_with(obj, machine_sets, machines)
        # a trigger of now already there (written in this second) may still be one that replaces nothing
        counts = planned["changed"] and recording.enabled and hist.counts_wanted(obj)
        if not (counts or planned.get("trigger_now")):
            return planned
        read_sets, read_machines = reads(counts)
        if planned.get("trigger_now"):
            now = _settle(run, restarts.effective_from(obj, read_sets, read_machines), now)
        return plan_with(obj, read_sets, read_machines)

    def plan_with(obj, read_sets, read_machines):
        if obj["metadata"]["name"] in topology_switches:
            overrides, cclass, class_templates, current = topology_switches[obj["metadata"]["name"]]
            return restarts.plan_topology_switch(obj, now, overrides, cclass, recording=recording, observed=plans.Observed(
                api_version=selected.version, cluster=clusters.get(views.cluster_name_of(obj)), machine_sets=read_sets,
                machines=read_machines, in_place_possible=in_place_possible), worker_templates=class_templates,
                topology_rollout=switch_through_topology, in_place=params.get("in_place") or "replace",
                template=current)
        if per_object is None:
            infrastructure_ref = params.get("infrastructure_ref")
        else:
            infrastructure_ref = per_object[obj["metadata"]["name"]]
        observed = plans.Observed(api_version=selected.version, cluster=clusters.get(views.cluster_name_of(obj)),
                                  machine_sets=read_sets, machines=read_machines, in_place_possible=in_place_possible)
        return restarts.plan_restart(obj, now, after=params.get("after"), infrastructure_ref=infrastructure_ref,
                                     force=params.get("force"), recording=recording, observed=observed,
                                     topology_rollout=through_topology, in_place=params.get("in_place") or "replace",
                                     drain_timeout=params.get("drain_timeout"))
    return plan


# A restart now waits at most this long for its trigger to replace everything (about 2 s after a MachineSet or
# Machine was created, core.restart.effective_from); longer only with clocks out of step, then nothing is written.
SETTLE_SECONDS = 3


def _settle(run, effective_from, now):
    """The server time to plan a restart now with: ``now``, or after waiting (by the API server's clock, at most
    SETTLE_SECONDS) until ``effective_from``, when its trigger replaces every MachineSet / Machine read."""
    if effective_from is None or effective_from <= now:
        return now
    left = (effective_from - run.api.server_now()).total_seconds()
    if left > 0:
        run.api.sleep(min(left, SETTLE_SECONDS))
    return run.api.server_now()


def _control_plane_machines(run, selected):
    return reading.list_kind(run.api, run.discovery, apiversion.MACHINE, selected.namespace,
                             label_selector=keys.CONTROL_PLANE_NAME_LABEL)[0]


def check_plans(run, planned):
    """Every template a planned switch points at must exist and be a machine template, checked before the first
    write (client.templates.check_templates: one GET for one template, one LIST per kind for several), unless a
    clone of this task makes it (write_prerequisites creates those)."""
    required = {}
    made = run.verb_state.made()
    for _obj, plan in planned:
        if not plan["changed"]:
            continue
        for item in plan.get("required_templates") or []:
            namespace = item.get("namespace") or plan["namespace"]
            if (namespace, item["kind"], item["name"]) in made:
                continue
            key = (namespace, item["api_group"], item["kind"], item["name"])
            # the first object that needs a template is named when it is missing
            required.setdefault(key, (namespace, {"api_group": key[1], "kind": key[2], "name": key[3]}, plan["ref"]))
    if required:
        templates.check_templates(run.api, run.discovery, list(required.values()))
    if not run.module.check_mode:
        # RBAC, schema and admission answer for the ClusterClass clones before anything is written (check mode
        # sends their creates as dry runs anyway)
        _class_clones(run, planned, dry_run=True)


def selection_options(params):
    """``switches`` select their objects by name, as ``names`` does."""
    if params.get("switches") is None:
        return params
    return dict(params, names=[item["name"] for item in params["switches"]])


def write_prerequisites(run, planned):
    """The new templates of the switches (the task's first writes, after every check), and the ClusterClass clones of
    topology switches by a rebase (path (c)) with their templates: a Cluster may be rebased only onto a class that
    exists (each once, however many objects need it)."""
    run.verb_state.create()
    _class_clones(run, planned)


def _class_clones(run, planned, dry_run=False):
    """Create (``dry_run``: as a server-side dry run) each ClusterClass clone the plans need, once however many
    objects need it. In check mode a rebase onto a clone that does not exist yet is not dry-run (CAPI's Cluster
    webhook would refuse it: core.topology.unchecked_rebase): its Cluster write carries ``check_mode_note`` instead,
    which flows.change does not send, and the note is a warning of each object."""
    made, new = set(), set()
    for _obj, plan in planned:
        clone = plan.get("clone") if plan["changed"] else None
        if clone is not None and clone["name"] not in made:
            template_made, class_made = templates.create_class_clone(run.api, run.discovery, clone, plan["ref"],
                                                                     dry_run=dry_run)
            if template_made and not dry_run:
                run.writes.append(clone["diff"])
            if class_made and run.module.check_mode:
                new.add(clone["name"])
            made.add(clone["name"])
    for _obj, plan in planned:
        if plan["changed"] and (plan.get("clone") or {}).get("name") in new:
            note = topologies.unchecked_rebase(plan["owner"]["ref"], plan["clone"]["name"])
            plan["owner"]["check_mode_note"] = note
            plan["warnings"] = list(plan.get("warnings") or []) + [note]
