# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What capi_rollout_undo reads before core.undo.plan_undo can decide, with a constant number of
requests whatever the number of MachineDeployments:

1. the MachineSets of the namespace (one LIST; skipped when every object already records the
   ``rollout_id``);
2. a first plan of every object without control plane and templates: every refusal that needs no
   more reading (paused, topology-owned, revision not found, ...) fails here;
3. for the objects that change only: their control planes (Cluster ``spec.controlPlaneRef``; one
   GET, or one LIST when several KubeadmControlPlanes) for the version skew check, and the
   templates the target revisions reference (one LIST per template kind, with a name field
   selector when only one name is needed);
4. the final plan with all of it. A failed test of its patch (or a 409) on write re-plans with the same context.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client import targets
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import resource_path
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import undo as undos
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref as make_ref

# Kinds whose group/version is not served: the template cannot exist.
_NOT_SERVED = ("api_not_served", "kind_not_served", "api_version_unsupported")


def refuse_kind(params, now):
    """Fail before any request for kinds that have no undo (KubeadmControlPlane, anything but a
    MachineDeployment), with core.undo's message."""
    kind = params.get("kind") or apiversion.MACHINE_DEPLOYMENT
    canonical = apiversion.normalize_kind(kind)
    if canonical == apiversion.MACHINE_DEPLOYMENT:
        return
    names = params.get("names") or []
    single = params.get("name") or (names[0] if len(names) == 1 else None)
    stub = {"kind": canonical or kind, "metadata": {"namespace": params.get("namespace") or None, "name": single}}
    try:
        undos.plan_undo(stub, [], now)
    except RolloutError as err:
        if not single:
            err.ref = None
        raise
    raise RolloutError(f"invalid resource type {kind!r}, valid values are ['MachineDeployment']",
                       reason="invalid_kind")  # pragma: no cover - plan_undo always refuses other kinds


# ---------------------------------------------------------------------------------------------
# control planes


def _control_plane_ref(cluster):
    raw = paths.get_path(cluster, "spec.controlPlaneRef")
    ref = apiversion.normalize_ref(raw)
    if not ref or not ref.get("kind") or not ref.get("name"):
        return None
    ref["namespace"] = (raw or {}).get("namespace") or paths.get_path(cluster, "metadata.namespace")
    return ref


def _is_kcp(ref):
    return ref["kind"] == apiversion.KUBEADM_CONTROL_PLANE and \
        ref["api_group"] == apiversion.RESOURCES[apiversion.KUBEADM_CONTROL_PLANE]["group"]


def control_planes(api, discovery, clusters, cluster_names):
    """({cluster name: control plane object}, {cluster name: [warnings]}) for ``cluster_names``.

    KubeadmControlPlanes: one GET, or one LIST per namespace when several; other control plane
    kinds (any with ``spec.version``): one GET each. A missing control plane is a warning (the skew
    check is then skipped and the result says so)."""
    found, warnings = {}, {}
    refs = {}
    for name in sorted(set(cluster_names)):
        cluster = clusters.get(name)
        ref = _control_plane_ref(cluster) if cluster is not None else None
        if ref is not None:
            refs[name] = ref
    kcps = {name: ref for name, ref in refs.items() if _is_kcp(ref)}
    listed = {}
    namespaces = sorted({ref["namespace"] for ref in kcps.values()})
    if len(kcps) > 1:
        for namespace in namespaces:
            items, _version = targets.list_kind(api, discovery, apiversion.KUBEADM_CONTROL_PLANE, namespace)
            for item in items:
                listed[(namespace, paths.get_path(item, "metadata.name"))] = item
    for name, ref in refs.items():
        what = f"{ref['kind']} {ref['namespace']}/{ref['name']}"
        if name in kcps and len(kcps) > 1:
            obj = listed.get((ref["namespace"], ref["name"]))
        else:
            obj = _get_control_plane(api, discovery, ref, what)
        if obj is None:
            warnings.setdefault(name, []).append(f"control plane {what} (Cluster {name} spec.controlPlaneRef) not found")
        else:
            found[name] = obj
    return found, warnings


def _get_control_plane(api, discovery, ref, what):
    group = ref["api_group"]
    try:
        if _is_kcp(ref):
            version = discovery.capi_version(apiversion.KUBEADM_CONTROL_PLANE)
            plural = apiversion.RESOURCES[apiversion.KUBEADM_CONTROL_PLANE]["plural"]
        else:
            version = discovery.version_for_group(group)
            plural = discovery.plural(group, version, ref["kind"])
    except RolloutError as err:
        if err.reason in _NOT_SERVED:
            return None
        raise
    try:
        return api.get(resource_path(group, version, plural, ref["namespace"], ref["name"]))
    except ApiError as err:
        if err.status == 404:
            return None
        raise api_error(err, ref=make_ref(ref["kind"], ref["namespace"], ref["name"]), verb="get",
                        resource={"group": group, "plural": plural}, namespace=ref["namespace"], host=api.host)


# ---------------------------------------------------------------------------------------------
# templates


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
        if err.reason in _NOT_SERVED:
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
                if err.reason in _NOT_SERVED:
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


# ---------------------------------------------------------------------------------------------
# the planner


def make_planner(run, selected, clusters, now, actor):
    """plan(obj) -> the final undo plan of ``obj``, after reading what the changing objects need.
    Raises the first refusal (RolloutError) before anything is written."""
    params = run.module.params
    options = {"to_revision": params.get("to_revision"), "force": params.get("force"),
               "rollout_id": params.get("rollout_id"), "reason": params.get("reason"), "actor": actor,
               "history_limit": params.get("history_limit")}
    rollout_id = params.get("rollout_id")
    objects = selected.objects
    if rollout_id is not None and all(hist.applied_rollout(obj, rollout_id, undos.ACTIONS) for obj in objects):
        machine_sets = []
    else:
        machine_sets, _version = targets.list_kind(run.api, run.discovery, apiversion.MACHINE_SET, selected.namespace)

    def plan_with(obj, control_plane=None, existing=None):
        return undos.plan_undo(obj, machine_sets, now, api_version=selected.version,
                               cluster=clusters.get(views.cluster_name_of(obj)), control_plane=control_plane,
                               existing_templates=existing, **options)

    changing = [obj for obj in objects if plan_with(obj)["changed"]]
    if not changing:
        return plan_with
    cluster_names = {views.cluster_name_of(obj) for obj in changing} - {None}
    found, cp_warnings = control_planes(run.api, run.discovery, clusters, cluster_names)
    required = []
    for obj in changing:
        required.extend(undos.required_templates(plan_with(obj)))
    existing = existing_templates(run.api, run.discovery, required)

    def plan(obj):
        cluster_name = views.cluster_name_of(obj)
        result = plan_with(obj, found.get(cluster_name), existing)
        if result["changed"]:
            result["warnings"] = cp_warnings.get(cluster_name, []) + result["warnings"]
        return result

    return plan
