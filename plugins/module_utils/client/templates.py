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

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, TransportError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import resource_path
from ansible_collections.capi.rollout.plugins.module_utils.client.runner import Run
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import template_clone as clones
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref as make_ref

DEFAULT_INFRA_GROUP = "infrastructure.cluster.x-k8s.io"


class TemplateKind(object):
    """Where the objects of one template kind live: group, version, plural."""

    def __init__(self, group, version, kind, plural):
        self.group = group
        self.version = version
        self.kind = kind
        self.plural = plural

    @property
    def api_version(self):
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self):
        return {"group": self.group, "plural": self.plural}

    def path(self, namespace, name=None):
        return resource_path(self.group, self.version, self.plural, namespace, name)


def _split_api_version(api_version):
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


def source_from_object(api, discovery, namespace, from_object):
    """(source {api_group, kind, name, api_version?}, the MD/KCP object) from a MachineDeployment's or
    control plane's current infrastructure reference."""
    kind = apiversion.rollout_kind(from_object.get("kind") or apiversion.MACHINE_DEPLOYMENT)
    name = from_object["name"]
    ref = make_ref(kind, namespace, name)
    version = discovery.capi_version(kind, ref=ref)
    res = apiversion.resource(kind, version)
    try:
        obj = api.get(resource_path(res["group"], version, res["plural"], namespace, name))
    except ApiError as err:
        if err.status == 404:
            raise RolloutError(f"{kind} {namespace}/{name} does not exist; nothing was changed", ref=ref,
                               reason="not_found", hint="check from_object.name and namespace")
        raise api_error(err, ref=ref, verb="get", resource=res, namespace=namespace, host=api.host)
    obj.setdefault("kind", kind)
    obj.setdefault("apiVersion", res["api_version"])
    raw = paths.get_path(obj, apiversion.spec_path(kind, version, "infrastructure_ref"))
    infra = apiversion.normalize_ref(raw)
    if not infra or not infra.get("kind") or not infra.get("name"):
        raise RolloutError(f"{kind} has no infrastructure machine template reference "
                           f"({apiversion.spec_path(kind, version, 'infrastructure_ref')}); nothing was changed",
                           ref=ref, reason="no_template", hint="name the template to clone with source instead")
    source = {"api_group": infra["api_group"], "kind": infra["kind"], "name": infra["name"]}
    if raw.get("apiVersion"):
        source["ref_api_version"] = raw["apiVersion"]
    return source, obj


def template_kind(discovery, source, ref=None):
    """Group, version and plural of the source's kind: an explicit api_version is used as given; else
    the version the ref names when it is still served, else the group's served version (GET /apis),
    and the plural from one GET /apis/<group>/<version>."""
    if source.get("api_version"):
        group, version = _split_api_version(source["api_version"])
    else:
        group = source.get("api_group")
        if group is None:
            group = DEFAULT_INFRA_GROUP
        version = None
        hinted = source.get("ref_api_version")
        if hinted:
            hinted_group, hinted_version = _split_api_version(hinted)
            if hinted_group == group and hinted_version in discovery.served(group):
                version = hinted_version
        if version is None:
            version = discovery.version_for_group(group, ref=ref)
    plural = discovery.plural(group, version, source["kind"], ref=ref)
    return TemplateKind(group, version, source["kind"], plural)


def get_template(api, tkind, namespace, name, ref=None):
    """The template object, or None when it does not exist."""
    try:
        obj = api.get(tkind.path(namespace, name))
    except ApiError as err:
        if err.status == 404:
            return None
        raise api_error(err, ref=ref, verb="get", resource=tkind.resource, namespace=namespace, host=api.host)
    obj.setdefault("kind", tkind.kind)
    obj.setdefault("apiVersion", tkind.api_version)
    return obj


def create_template(api, tkind, namespace, obj, ref=None, dry_run=False):
    """POST the object once; returns (created object, None), or (None, existing object) when a concurrent
    writer created the same name first (409 AlreadyExists). ``dry_run``: the API server's answer, nothing
    stored."""
    try:
        created = api.request("POST", tkind.path(namespace), body=obj, verb="create", dry_run=dry_run)
    except ApiError as err:
        if err.status == 409:
            existing = get_template(api, tkind, namespace, obj["metadata"]["name"], ref=ref)
            if existing is not None:
                return None, existing
        raise api_error(err, ref=ref, verb="create", resource=tkind.resource, namespace=namespace, host=api.host)
    created.setdefault("kind", tkind.kind)
    created.setdefault("apiVersion", tkind.api_version)
    return created, None


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
