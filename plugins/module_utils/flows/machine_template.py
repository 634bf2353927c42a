# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_machine_template: read the source infrastructure template, plan the clone with the core
(core/template_clone.py), then create it unless it exists with the same content.

Requests: the MachineDeployment / control plane when the source is taken from one (one GET, after
``GET /apis``), ``GET /apis`` when the source gives only an API group, one ``GET /apis/<group>/<version>``
for the plural of the template kind, the source (GET), the target (GET) and - when it is missing - one
POST as a server-side dry run (what the API server would prune or refuse), then, unless in check mode,
the POST. Nothing is written before every check passed: a clone that would lose fields to pruning, or
whose overrides change nothing, is refused.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, TransportError
from ansible_collections.capi.rollout.plugins.module_utils.client.templates import (
    create_template, get_template, source_from_object, template_kind,
)
from ansible_collections.capi.rollout.plugins.module_utils.core import template_clone as clones
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref as make_ref
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import Run


def _ref_text(source, namespace):
    return make_ref(source.get("kind"), namespace, source.get("name"))


def run_machine_template(module):
    """The whole capi_machine_template task."""
    params = module.params
    namespace = params["namespace"]
    run = Run(module)
    run.connect()
    warnings = []
    referenced_by = plan = template = None
    created = False
    message = ""
    try:
        if params.get("from_object"):
            source, referenced_by = source_from_object(run.api, run.discovery, namespace, params["from_object"])
        else:
            source = dict(params["source"])
        source_ref = _ref_text(source, namespace)
        where = ""
        if referenced_by is not None:
            where = f" (the infrastructure template of {make_ref(referenced_by['kind'], namespace, params['from_object']['name'])})"
        tkind = template_kind(run.discovery, source, ref=source_ref)
        source_obj = get_template(run.api, tkind, namespace, source["name"], ref=source_ref)
        if source_obj is None:
            raise RolloutError(f"{source['kind']} {namespace}/{source['name']}{where} does not exist; nothing was changed",
                               ref=source_ref, reason="source_not_found",
                               hint="check the source name, kind and namespace")
        plan = clones.plan_clone(source_obj, params.get("overrides"), name=params.get("name"),
                                 labels=params.get("labels"), annotations=params.get("annotations"),
                                 force=params.get("force"), referenced_by=referenced_by)
        warnings.extend(plan["warnings"])
        if plan["name"] == source["name"]:
            existing = source_obj
        else:
            existing = get_template(run.api, tkind, namespace, plan["name"], ref=plan["ref"])
        template = plan["object"]
        message = f"{plan['ref']} created from {source_ref}"
        if existing is None:
            # What the API server would make of the clone (pruned fields, admission, RBAC), before it is made.
            made, existing = create_template(run.api, tkind, namespace, plan["object"], ref=plan["ref"], dry_run=True)
            if existing is None:
                clones.refuse_ineffective(plan, source_obj, made)
                if module.check_mode:
                    created, template = True, made
                    message = f"{plan['ref']} would be created from {source_ref}"
                else:
                    made, existing = create_template(run.api, tkind, namespace, plan["object"], ref=plan["ref"])
                    created, template = existing is None, made
        if existing is not None:
            outcome = plan["compare"](existing)
            if plan["name"] != source["name"]:
                clones.refuse_ineffective(plan, source_obj, existing)
            warnings.extend(outcome["warnings"])
            message = outcome["message"]
            template = existing
    except (RolloutError, ApiError, TransportError) as err:
        run.fail(err, changed=False)
    for warning in warnings:
        module.warn(warning)
    out = {
        "changed": created,
        "created": created,
        "message": message,
        "infrastructure_ref": plan["infrastructure_ref"],
        "source_ref": plan["source_ref"],
        "template": clones.trimmed(template),
        "hash": plan["hash"],
        "changes": plan["changes"],
        "api_requests": run.api.count,
    }
    if referenced_by is not None:
        out["source_ref"]["from_object"] = make_ref(referenced_by["kind"], namespace, params["from_object"]["name"])
    if module._diff and created:
        out["diff"] = plan["diff"]
    module.exit_json(**out)
