# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reads and writes of infrastructure machine templates: where a template kind lives (group, version, plural),
get / create one, whether the targets of switches exist (one GET, or one LIST per kind for several), and which
of a list of templates exist (one LIST per kind).

``Reads`` answers "object ``name`` of this collection, or None" for the clone: by one GET each (one object),
or from one LIST per collection kept for the run (many objects: the requests do not grow with their number).

Plurals: a single template kind is looked up in discovery (one ``GET /apis/<group>/<version>``, cached per
run by client.discovery); lists of templates first try the CRD convention (lower-case kind + "s") and ask
discovery only when that path is not served.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import NOT_SERVED, ApiError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import resource_path
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import template_clone
from ansible_collections.capi.rollout.plugins.module_utils.core import topology as topologies
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
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


class Reads(object):
    """Object ``name`` of a collection (group, version, plural, namespace), or None when it does not exist.

    ``by_list=False``: one GET per question (a single clone reads exactly the objects it needs).
    ``by_list=True``: one LIST per collection, kept for the run (a clone of many objects); a failed LIST is
    kept too and raised again to every question about that collection, so it is not repeated per object.
    Items of a LIST carry no kind/apiVersion; the callers fill them in as for a GET.
    """

    def __init__(self, api, by_list=False):
        self.api = api
        self.by_list = by_list
        self._lists = {}

    def find(self, group, version, plural, namespace, name):
        """The object, or None; raises ApiError (not 404) as the API server answered."""
        if not self.by_list:
            try:
                return self.api.get(resource_path(group, version, plural, namespace, name))
            except ApiError as err:
                if err.status == 404:
                    return None
                raise
        path = resource_path(group, version, plural, namespace)
        if path not in self._lists:
            try:
                body = self.api.list(path)
                self._lists[path] = {paths.get_path(item, "metadata.name"): item for item in body.get("items") or []}
            except ApiError as err:
                self._lists[path] = err
        found = self._lists[path]
        if isinstance(found, ApiError):
            raise found
        obj = found.get(name)
        # A copy: callers fill in kind/apiVersion and may change what they were given.
        return copy.deepcopy(obj) if obj is not None else None

    def remember(self, group, version, plural, namespace, items):
        """Answer the questions about a collection from ``items``, a complete LIST of it the caller already read."""
        if self.by_list:
            self._lists[resource_path(group, version, plural, namespace)] = {
                paths.get_path(item, "metadata.name"): item for item in items}

    @property
    def verb(self):
        """The verb a failed read needs (for the permission hint)."""
        return "list" if self.by_list else "get"


def _split_api_version(api_version):
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


def source_from_object(api, discovery, namespace, from_object, reads=None):
    """(source {api_group, kind, name, api_version?}, the MD/KCP object) from a MachineDeployment's or
    control plane's current infrastructure reference. ``reads``: a Reads (default: one GET)."""
    reads = reads or Reads(api)
    kind = apiversion.rollout_kind(from_object.get("kind") or apiversion.MACHINE_DEPLOYMENT)
    name = from_object["name"]
    ref = make_ref(kind, namespace, name)
    version = discovery.capi_version(kind, ref=ref)
    res = apiversion.resource(kind, version)
    try:
        obj = reads.find(res["group"], version, res["plural"], namespace, name)
    except ApiError as err:
        raise api_error(err, ref=ref, verb=reads.verb, resource=res, namespace=namespace, host=api.host)
    if obj is None:
        raise RolloutError(f"{kind} {namespace}/{name} does not exist; nothing was changed", ref=ref,
                           reason="not_found", hint="check the name (from_object.name or objects[].name) and the namespace")
    obj.setdefault("kind", kind)
    obj.setdefault("apiVersion", res["api_version"])
    raw = views.infrastructure_ref_of(obj, kind, version)
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


def get_template(api, tkind, namespace, name, ref=None, reads=None):
    """The template object, or None when it does not exist. ``reads``: a Reads (default: one GET)."""
    reads = reads or Reads(api)
    try:
        obj = reads.find(tkind.group, tkind.version, tkind.plural, namespace, name)
    except ApiError as err:
        raise api_error(err, ref=ref, verb=reads.verb, resource=tkind.resource, namespace=namespace, host=api.host)
    if obj is None:
        return None
    obj.setdefault("kind", tkind.kind)
    obj.setdefault("apiVersion", tkind.api_version)
    return obj


def infrastructure_template(api, discovery, obj, kind):
    """The infrastructure template ``obj`` (an MD / KCP) is on now, or None when it does not exist: one GET."""
    infra = apiversion.normalize_ref(views.infrastructure_ref_of(obj, kind))
    if not infra:
        return None
    namespace = obj["metadata"]["namespace"]
    return get_template(api, template_kind(discovery, infra), namespace, infra["name"],
                        ref=make_ref(infra["kind"], namespace, infra["name"]))


def worker_class_templates(api, discovery, cclass, cluster, obj, overrides, cache, kind=apiversion.MACHINE_DEPLOYMENT):
    """{worker class: its infrastructure template, None when missing} of the other worker classes of ``cclass`` that
    the choice of a topology path for ``obj`` needs (core.topology.templates_needed); None when path (a) covers it.
    One GET per template (in the ClusterClass's namespace), kept in ``cache`` for the run."""
    namespace = cclass["metadata"]["namespace"]
    infra = views.infrastructure_ref_of(obj, kind)
    needed = topologies.templates_needed(cclass, cluster, obj, make_ref(kind, obj["metadata"]["namespace"], obj["metadata"]["name"]),
                                         (apiversion.normalize_ref(infra) or {}).get("kind"), overrides, kind=kind)
    if not needed:
        return None
    out = {}
    for worker, template_ref in needed.items():
        key = (namespace, template_ref.get("apiVersion"), template_ref.get("kind"), template_ref.get("name"))
        if key not in cache:
            tkind = template_kind(discovery, {"api_version": template_ref.get("apiVersion"), "kind": template_ref.get("kind")})
            cache[key] = get_template(api, tkind, namespace, template_ref.get("name"),
                                      ref=make_ref(template_ref.get("kind"), namespace, template_ref.get("name")))
        out[worker] = cache[key]
    return out


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


def create_class_clone(api, discovery, clone, ref, dry_run=False):
    """Create the template of a ClusterClass clone (core.topology.clone_class: topology path (c)), then the clone, for
    the object ``ref``: (whether the template was made, whether the ClusterClass was made; False: it existed; as dry
    runs: would be). One that exists already (a re-run after a failed Cluster write) is taken when it has the planned
    content: their names are hashes of it."""
    template = clone["template"]
    tkind = template_kind(discovery, {"api_version": template["api_version"], "kind": template["kind"]})
    made, existing = create_template(api, tkind, template["namespace"], template["object"], ref=template["ref"],
                                     dry_run=dry_run)
    if existing is not None:
        template["compare"](existing)
    dropped = template_clone.dropped_fields(template["object"], made or existing)
    if dropped:
        # pruned by the kind's schema (a typo in the overrides): the clone would not carry the value
        raise RolloutError(f"the API server drops {', '.join(dropped)}: {template['kind']} has no such field, so the "
                           "ClusterClass clone's template would not carry it; the Cluster was not changed",
                           ref=template["ref"], reason="pruned_fields",
                           hint=f"fix the field name in overrides (kubectl explain {template['kind'].lower()}"
                                ".spec.template.spec lists the fields the installed provider knows)")
    cclass = clone["object"]
    group, _sep, version = cclass["apiVersion"].rpartition("/")
    namespace = cclass["metadata"]["namespace"]
    class_ref = make_ref("ClusterClass", namespace, clone["name"])
    try:
        api.request("POST", resource_path(group, version, "clusterclasses", namespace), body=cclass, verb="create",
                    dry_run=dry_run)
    except ApiError as err:
        if err.status != 409:
            raise api_error(err, ref=class_ref, verb="create", resource={"group": group, "plural": "clusterclasses"},
                            namespace=namespace, host=api.host)
        found = api.get(resource_path(group, version, "clusterclasses", namespace, clone["name"]))
        digest = cclass["metadata"]["annotations"][keys.SPEC_HASH_ANNOTATION]
        if ((found.get("metadata") or {}).get("annotations") or {}).get(keys.SPEC_HASH_ANNOTATION) != digest:
            raise RolloutError(f"{class_ref} exists and is not the clone planned for {ref} (its annotation "
                               f"{keys.SPEC_HASH_ANNOTATION} is not {digest}); the Cluster was not changed", ref=class_ref,
                               reason="template_conflict", hint="delete that ClusterClass if no Cluster uses it, and re-run")
        return made is not None, False
    return made is not None, True


def template_exists(api, discovery, namespace, target, ref=None):
    """Check that infrastructure template ``target`` ({api_group, kind, name}) exists; RolloutError if not."""
    return check_templates(api, discovery, [(namespace, target, ref)])


def check_templates(api, discovery, required):
    """Check that every infrastructure template of ``required`` ([(namespace, {api_group, kind, name}, ref)],
    distinct; ``ref`` is the object that needs it) exists and is a machine template; RolloutError (for the first
    that is not) otherwise. One template costs one GET; several cost one LIST per kind, so a
    call that switches many objects to templates of their own costs no request per template."""
    if len(required) == 1:
        namespace, target, ref = required[0]
        found = {(namespace, target["api_group"], target["kind"], target["name"]):
                 _get_target(api, discovery, namespace, target, ref)}
    else:
        found = _list_targets(api, discovery, required)
    for namespace, target, ref in required:
        _refuse_unusable(found.get((namespace, target["api_group"], target["kind"], target["name"])), namespace,
                         target, ref)
    return True


def _get_target(api, discovery, namespace, target, ref):
    """The template object ``target`` (one GET, the plural from discovery), or None when it does not exist."""
    group, kind, name = target["api_group"], target["kind"], target["name"]
    version = discovery.version_for_group(group, ref=ref)
    plural = discovery.plural(group, version, kind, ref=ref)
    try:
        return api.get(resource_path(group, version, plural, namespace, name))
    except ApiError as err:
        if err.status == 404:
            return None
        raise api_error(err, ref=ref, verb="get", resource={"group": group, "plural": plural}, namespace=namespace,
                        host=api.host)


def _list_targets(api, discovery, required):
    """{(namespace, group, kind, name): template object} of what exists of ``required``: one LIST per kind
    (existing_templates)."""
    first_ref = {}
    for _namespace, target, ref in required:
        first_ref.setdefault((target["api_group"], target["kind"]), ref)
        # an unserved group fails as the GET of one template does (a LIST would find nothing)
        discovery.version_for_group(target["api_group"], ref=ref)
    listed = existing_templates(api, discovery, [dict(target, namespace=namespace) for namespace, target, _ref in required])
    found = {}
    for (group, kind), objs in listed.items():
        if not objs:
            # an unserved kind fails as the GET does, not as "does not exist" (cached when the LIST asked already)
            discovery.plural(group, discovery.version_for_group(group), kind, ref=first_ref[(group, kind)])
        for obj in objs:
            found[(paths.get_path(obj, "metadata.namespace"), group, kind, paths.get_path(obj, "metadata.name"))] = obj
    return found


def _refuse_unusable(obj, namespace, target, ref):
    """RolloutError when template ``target`` was not found (``obj`` None) or is not a machine template."""
    group, kind, name = target["api_group"], target["kind"], target["name"]
    if obj is None:
        raise RolloutError(
            f"infrastructure template {kind} {namespace}/{name} ({group}) does not exist; nothing was changed",
            ref=ref, reason="template_not_found",
            hint=f"create the {kind} first (templates are immutable: copy the current one under a new name)")
    # A machine template carries the machine spec under spec.template.spec (every provider's *MachineTemplate);
    # a Machine, a DockerMachine or a MachineDeployment named by mistake does not.
    if not isinstance(paths.get_path(obj, ("spec", "template", "spec")), dict):
        raise RolloutError(
            f"{kind} {namespace}/{name} ({group}) is not an infrastructure machine template (it has no "
            "spec.template.spec); nothing was changed", ref=ref, reason="not_a_template",
            hint="name a *MachineTemplate (for example DockerMachineTemplate, AWSMachineTemplate) in infrastructure_ref")


def _plural_guesses(kind):
    """CRD plurals of machine / config templates are the lower-case kind plus "s"
    (dockermachinetemplates, kubeadmconfigtemplates); anything else is looked up."""
    return [kind.lower() + "s"] if kind.endswith("Template") else []


def _list_templates(api, discovery, group, kind, names, namespace):
    """Objects of ``kind`` named ``names`` in ``namespace`` (None: all namespaces); [] when the kind
    is not served at all. One LIST (plus one discovery request when the plural is not the usual one)."""
    try:
        version = discovery.version_for_group(group)
    except RolloutError as err:
        if err.reason in NOT_SERVED:
            return []
        raise
    field_selector = f"metadata.name={names[0]}" if len(names) == 1 else None
    plurals = _plural_guesses(kind)
    tried = set()
    while True:
        if not plurals:
            try:
                plural = discovery.plural(group, version, kind)
            except RolloutError as err:
                if err.reason in NOT_SERVED:
                    return []
                raise
            if plural in tried:
                return []
            plurals = [plural]
        plural = plurals.pop(0)
        tried.add(plural)
        try:
            body = api.list(resource_path(group, version, plural, namespace), field_selector=field_selector)
        except ApiError as err:
            if err.status == 404:
                continue  # not this plural: ask discovery
            raise api_error(err, verb="list", resource={"group": group, "plural": plural}, namespace=namespace,
                            host=api.host)
        return [item for item in body.get("items") or [] if paths.get_path(item, "metadata.name") in names]


def existing_templates(api, discovery, required):
    """{(api_group, kind): [template objects]} for the kinds of ``required`` (core.undo.required_templates
    entries): what exists of them, for plan_undo's ``existing_templates``."""
    out = {}
    by_kind = {}
    for item in required:
        entry = by_kind.setdefault((item["api_group"], item["kind"]), {"names": [], "namespaces": set()})
        if item["name"] not in entry["names"]:
            entry["names"].append(item["name"])
        entry["namespaces"].add(item.get("namespace"))
    for (group, kind), entry in sorted(by_kind.items()):
        namespaces = sorted(ns for ns in entry["namespaces"] if ns)
        namespace = namespaces[0] if len(namespaces) == 1 else None
        out[(group, kind)] = _list_templates(api, discovery, group, kind, entry["names"], namespace)
    return out
