# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_machine_template: read the source infrastructure template, plan the clone with the core
(core/template_clone.py), then create it unless it exists with the same content.

One object (``source`` or ``from_object``): the MachineDeployment / control plane when the source is taken
from one (one GET, after ``GET /apis``), ``GET /apis`` when the source gives only an API group, one
``GET /apis/<group>/<version>`` for the plural of the template kind, the source (GET), the target (GET) and -
when it is missing - one POST as a server-side dry run (what the API server would prune or refuse), then,
unless in check mode, the POST. Nothing is written before every check passed: a clone that would lose fields
to pruning, or whose overrides change nothing, is refused.

Many objects (``objects``): the same steps per object, in two phases. First every object is read, planned
and its create sent as a dry run; when any of them fails a check, nothing is created. Then the creates, one
by one (a failed one does not stop the others). The reads do not grow with the number of objects
(client.templates.Reads with ``by_list``): ``GET /apis``, one LIST per object kind and namespace, one plural
lookup per template group/version, one LIST per template kind and namespace (sources and targets); per object
only the dry-run POST and the POST.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client import templates
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, TransportError
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core import template_clone as clones
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref as make_ref
from ansible_collections.capi.rollout.plugins.module_utils.flows import lock as locks
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import Run

FAILURES = (RolloutError, ApiError, TransportError)

# Options that name the one object of a single clone, or apply to it as a whole: per object in ``objects``.
SINGLE_ONLY = ("source", "from_object", "name")
PER_OBJECT = ("overrides", "labels", "annotations")


class Clone(object):
    """One object's clone through the steps: what was asked (``request``: namespace, source or from_object,
    name, overrides, labels, annotations, force), what was read and planned, and what the API server said."""

    def __init__(self, request):
        self.request = request
        self.referenced_by = None   # the MachineDeployment / control plane the source was taken from
        self.source_name = None
        self.source_ref = None
        self.source_obj = None
        self.tkind = None
        self.plan = None
        self.template = None
        self.created = False
        self.pending = False        # every check passed; the real create is still to be sent
        self.message = ""
        self.warnings = []

    @property
    def from_ref(self):
        """``kind/namespace/name`` of the object the source was taken from (None for a named source)."""
        if self.referenced_by is None:
            return None
        return make_ref(self.referenced_by["kind"], self.request["namespace"], self.request["from_object"]["name"])


def prepare(run, reads, clone):
    """Read and plan one clone and send its create as a server-side dry run: every check of the clone, nothing
    written. In check mode the dry run's answer is the result; otherwise ``clone.pending`` says a create is due.
    Raises RolloutError / ApiError / TransportError."""
    request = clone.request
    namespace = request["namespace"]
    if request.get("from_object"):
        source, clone.referenced_by = templates.source_from_object(run.api, run.discovery, namespace,
                                                                   request["from_object"], reads=reads)
    else:
        source = dict(request["source"])
    clone.source_name = source["name"]
    source_ref = clone.source_ref = make_ref(source.get("kind"), namespace, source.get("name"))
    where = f" (the infrastructure template of {clone.from_ref})" if clone.from_ref else ""
    clone.tkind = templates.template_kind(run.discovery, source, ref=source_ref)
    clone.source_obj = templates.get_template(run.api, clone.tkind, namespace, source["name"], ref=source_ref, reads=reads)
    if clone.source_obj is None:
        raise RolloutError(f"{source['kind']} {namespace}/{source['name']}{where} does not exist; nothing was changed",
                           ref=source_ref, reason="source_not_found", hint="check the source name, kind and namespace")
    plan = clone.plan = clones.plan_clone(clone.source_obj, request.get("overrides"), name=request.get("name"),
                                          labels=request.get("labels"), annotations=request.get("annotations"),
                                          force=request.get("force"), referenced_by=clone.referenced_by)
    clone.warnings.extend(plan["warnings"])
    if plan["name"] == source["name"]:
        existing = clone.source_obj
    else:
        existing = templates.get_template(run.api, clone.tkind, namespace, plan["name"], ref=plan["ref"], reads=reads)
    clone.template = plan["object"]
    clone.message = f"{plan['ref']} created from {source_ref}"
    if existing is None:
        # What the API server would make of the clone (pruned fields, admission, RBAC), before it is made.
        made, existing = templates.create_template(run.api, clone.tkind, namespace, plan["object"], ref=plan["ref"],
                                                   dry_run=True)
        if existing is None:
            clones.refuse_ineffective(plan, clone.source_obj, made)
            if run.api.dry_run:
                clone.created, clone.template = True, made
                clone.message = f"{plan['ref']} would be created from {source_ref}"
            else:
                clone.pending = True
    if existing is not None:
        _settle_existing(clone, existing)


def create(run, clone):
    """Send the create of a prepared clone. Raises RolloutError / ApiError / TransportError."""
    clone.pending = False
    made, existing = templates.create_template(run.api, clone.tkind, clone.request["namespace"], clone.plan["object"],
                                               ref=clone.plan["ref"])
    if existing is None:
        clone.created, clone.template = True, made
    else:
        _settle_existing(clone, existing)


def _settle_existing(clone, existing):
    """The target exists (read, or created concurrently): the same content is the result, another is refused."""
    plan = clone.plan
    outcome = plan["compare"](existing)
    if plan["name"] != clone.source_name:
        clones.refuse_ineffective(plan, clone.source_obj, existing)
    clone.warnings.extend(outcome["warnings"])
    clone.message = outcome["message"]
    clone.template = existing


def result_entry(clone):
    """The result of one clone: the single call's result, and one entry of ``results``."""
    plan = clone.plan
    message = clone.message
    if clone.pending:
        # list mode: it passed every check, but another object did not, so no create was sent
        message = f"{plan['ref']} was not created from {clone.source_ref}: another object failed a check"
    out = {
        "changed": clone.created,
        "created": clone.created,
        "message": message,
        "infrastructure_ref": plan["infrastructure_ref"],
        "source_ref": plan["source_ref"],
        "template": clones.trimmed(clone.template),
        "hash": plan["hash"],
        "changes": plan["changes"],
    }
    if clone.from_ref:
        out["source_ref"]["from_object"] = clone.from_ref
    return out


def run_machine_template(module):
    """The whole capi_machine_template task."""
    if module.params.get("objects") is not None:
        _run_objects(module)
        return
    params = module.params
    run = Run(module, GATE)
    run.connect()
    clone = Clone({"namespace": params["namespace"], "source": params.get("source"),
                   "from_object": params.get("from_object"), "name": params.get("name"),
                   "overrides": params.get("overrides"), "labels": params.get("labels"),
                   "annotations": params.get("annotations"), "force": params.get("force")})
    try:
        _renew(run)
        prepare(run, templates.Reads(run.api), clone)
        if clone.pending:
            create(run, clone)
    except FAILURES as err:
        run.fail(err, changed=False)
    for warning in clone.warnings:
        module.warn(warning)
    out = result_entry(clone)
    out["api_requests"] = run.api.count
    if module._diff and clone.created:
        out["diff"] = clone.plan["diff"]
    module.exit_json(**out)


def _renew(run):
    """With ``lease``, the lock renewed before anything is read or written (flows.lock.renew)."""
    if run.module.params.get("lease"):
        locks.renew(run, run.module.params["lease"])


# ---------------------------------------------------------------------------------------------
# many objects


def refuse_objects(params):
    """The problems (core.inputs) of ``objects`` with the other options given; none without ``objects``."""
    if params.get("objects") is None:
        return []
    problems = []
    combined = [key for key in SINGLE_ONLY if params.get(key)]
    if combined:
        problems.append(inputs.Problem(combined[0], params[combined[0]], inputs.INVALID_INPUT,
                                       f"objects cannot be combined with {', '.join(combined)} (objects names every object "
                                       "to clone)"))
    # overrides defaults to {}: only a non-empty one was meant for the objects
    per_object = [key for key in PER_OBJECT if (params.get(key) if key == "overrides" else params.get(key) is not None)]
    if per_object:
        problems.append(inputs.Problem(per_object[0], params[per_object[0]], inputs.INVALID_INPUT,
                                       f"{', '.join(per_object)} cannot be given with objects: give them per object "
                                       f"({', '.join(f'objects[].{key}' for key in per_object)})"))
    if not problems and not params.get("objects"):
        problems.append(inputs.Problem("objects", params["objects"], inputs.INVALID_INPUT,
                                       "objects is empty: no object is selected"))
    return problems


def label_problems(params):
    """The problems (core.inputs) of the labels and annotations given, the call's and each ``objects`` entry's: values
    must be text, numbers or booleans (core.template_clone.string_map)."""
    given = [("", params)] + [(f"objects[{index}].", entry) for index, entry in enumerate(params.get("objects") or [])]
    out = []
    for prefix, options in given:
        for what in ("labels", "annotations"):
            try:
                clones.string_map(options.get(what), what)
            except RolloutError as err:
                out.append(inputs.from_error(err, prefix + what, options.get(what)))
    return out


# ``objects`` with the single call's options, the labels and annotations, the settings' ranges (core.inputs)
GATE = inputs.Gate((refuse_objects, label_problems, inputs.bounds()), empty={"results": []})


def object_ref(entry, namespace):
    """``kind/namespace/name`` of an ``objects`` entry (the kind as given when it is not a known one)."""
    kind = entry.get("kind") or apiversion.MACHINE_DEPLOYMENT
    return make_ref(apiversion.normalize_kind(kind) or kind, entry.get("namespace") or namespace, entry.get("name"))


def object_request(entry, namespace=None, force=None):
    """The clone request of one ``objects`` entry: the template of the named object (``namespace`` when the entry
    names none)."""
    return {"namespace": entry.get("namespace") or namespace, "source": None,
            "from_object": {"kind": entry.get("kind") or apiversion.MACHINE_DEPLOYMENT, "name": entry.get("name")},
            "name": None, "overrides": entry.get("overrides") or {}, "labels": entry.get("labels"),
            "annotations": entry.get("annotations"), "force": force}


def _failure_entry(ref, err):
    return {"ref": ref, "failed": True, "msg": err.message, "reason": err.reason, "hint": err.hint}


def check_objects(run, requests, reads=None):
    """The first phase for every request (see object_request): read, plan and dry-run create, nothing written.
    ``reads``: a client.templates.Reads by list, maybe holding lists already read. Returns (clones, failed):
    ``failed`` maps the index of each request that failed a check to its RolloutError."""
    reads = reads or templates.Reads(run.api, by_list=True)
    todo = [Clone(request) for request in requests]
    failed = {}
    for index, clone in enumerate(todo):
        try:
            prepare(run, reads, clone)
        except FAILURES as err:
            failed[index] = run.error(err)
    return todo, failed


def failures_named(refs, failed):
    """``ref: message`` of every failed object (``failed``: index -> RolloutError), in the given order."""
    return " | ".join(f"{refs[index]}: {failed[index].message}" for index in sorted(failed))


def object_results(module, refs, todo, failed):
    """One ``results`` entry per object (its ``ref`` first); each clone's warnings also as Ansible warnings."""
    results = []
    for index, (ref, clone) in enumerate(zip(refs, todo)):
        if index in failed:
            results.append(_failure_entry(ref, failed[index]))
            continue
        results.append(dict(result_entry(clone), ref=ref, failed=False, warnings=list(clone.warnings)))
        for warning in clone.warnings:
            module.warn(f"{ref}: {warning}")
    return results


def _run_objects(module):
    """Clone the templates of every object in ``objects``: all checked first, then created."""
    params = module.params
    run = Run(module, GATE)
    run.connect()
    try:
        _renew(run)
    except FAILURES as err:
        run.fail(err, changed=False, results=[])
    refs = [object_ref(entry, params["namespace"]) for entry in params["objects"]]
    requests = [object_request(entry, params["namespace"], params.get("force")) for entry in params["objects"]]
    todo, failed = check_objects(run, requests)
    checked = not failed
    if checked:
        for index, clone in enumerate(todo):
            if clone.pending:
                try:
                    create(run, clone)
                except FAILURES as err:
                    failed[index] = run.error(err)
    results = object_results(module, refs, todo, failed)
    created = [clone for index, clone in enumerate(todo) if index not in failed and clone.created]
    out = {"changed": bool(created) and checked, "results": results, "api_requests": run.api.count}
    if module._diff and checked:
        out["diff"] = [clone.plan["diff"] for clone in created]
    if failed:
        named = failures_named(refs, failed)
        if checked:
            done = f"{len(created)} template(s) were created"
            reason = "create_failed"
        else:
            done = "nothing was created"
            reason = "clone_refused"
        module.fail_json(**run.result(msg=f"{len(failed)} of {len(todo)} object(s) could not be cloned; {done}: {named}",
                                      reason=reason, **out))
    module.exit_json(**out)
