# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read the objects a task acts on with a constant number of requests, whatever their number:

- the MDs/KCPs: one LIST (``fieldSelector=metadata.name=...`` for a single name, else the
  namespace with the user's label selectors), filtered by core.selection;
- their Clusters (pause state): one GET for one Cluster, else one LIST of the namespace;
- MachineSets / Machines (info only, on request): one LIST each.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import NOT_SERVED, ApiError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import resource_path
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import selection as selections
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref as make_ref


class Selected(object):
    """What ``select`` read: the objects, their API version and where to watch them."""

    def __init__(self, sel, version, path, objects, list_resource_version):
        self.sel = sel
        self.kind = sel["kind"]
        self.namespace = sel["namespace"]
        self.version = version
        self.path = path
        self.objects = objects
        self.list_resource_version = list_resource_version

    def object_path(self, name):
        res = apiversion.resource(self.kind, self.version)
        return resource_path(res["group"], self.version, res["plural"], self.namespace, name)


def _items(body, kind, version):
    """List items with kind/apiVersion filled in (lists leave them out)."""
    items = body.get("items") or []
    api_version = apiversion.api_version_string(kind, version)
    for item in items:
        item.setdefault("kind", kind)
        item.setdefault("apiVersion", api_version)
    return items


def _list(api, kind, version, namespace, label_selector=None, field_selector=None, ref=None):
    res = apiversion.resource(kind, version)
    path = resource_path(res["group"], version, res["plural"], namespace)
    try:
        body = api.list(path, label_selector=label_selector, field_selector=field_selector)
    except ApiError as err:
        if err.status == 400 and label_selector:
            raise RolloutError(f"label selector {label_selector!r} is not valid: {err.message}; nothing was changed",
                               ref=ref, reason="invalid_label_selector",
                               hint="write label_selectors as key=value, key!=value, key in (a,b) or key, one per entry")
        raise api_error(err, ref=ref, verb="list", resource=res, namespace=namespace, host=api.host)
    return _items(body, kind, version), (body.get("metadata") or {}).get("resourceVersion")


def selection_from_params(params):
    return selections.selection(kind=params.get("kind"), namespace=params.get("namespace"), name=params.get("name"),
                                names=params.get("names"), cluster_name=params.get("cluster_name"),
                                label_selectors=params.get("label_selectors"))


def select(api, discovery, params, require_match=False):
    """Read the selected MDs/KCPs; RolloutError (nothing written) when a named one is missing."""
    sel = selection_from_params(params)
    kind = sel["kind"]
    single = sel["names"][0] if len(sel["names"]) == 1 else None
    ref = make_ref(kind, sel["namespace"], single) if single else None
    version = discovery.capi_version(kind, ref=ref)
    res = apiversion.resource(kind, version)
    path = resource_path(res["group"], version, res["plural"], sel["namespace"])
    field_selector = f"metadata.name={single}" if single else None
    items, list_rv = _list(api, kind, version, sel["namespace"], sel["label_selector"], field_selector, ref=ref)
    try:
        objects = selections.select(items, sel, require_match=require_match)
    except RolloutError as err:
        if err.reason != "not_found" or not single:
            raise
        # Error path only: list the namespace so the message can name what does exist.
        everything, _rv = _list(api, kind, version, sel["namespace"], sel["label_selector"], ref=ref)
        selections.select(everything, sel, require_match=require_match)
        raise
    return Selected(sel, version, path, objects, list_rv)


def path_of(kind, api_version, namespace, name):
    """The API path of one object of a CAPI ``kind`` read as ``api_version`` (group/version)."""
    group, _sep, version = api_version.rpartition("/")
    return resource_path(group, version, apiversion.resource(kind, version)["plural"], namespace, name)


def refetch(api, selected, name):
    """GET one selected object again (after a failed test of a patch, or a 409 conflict)."""
    res = apiversion.resource(selected.kind, selected.version)
    ref = make_ref(selected.kind, selected.namespace, name)
    try:
        obj = api.get(selected.object_path(name))
    except ApiError as err:
        raise api_error(err, ref=ref, verb="get", resource=res, namespace=selected.namespace, host=api.host)
    obj.setdefault("kind", selected.kind)
    return obj


def clusters_for(api, discovery, objects, namespace):
    """{cluster name: Cluster object} for the clusters ``objects`` belong to (1 request at most)."""
    names = sorted({views.cluster_name_of(obj) for obj in objects} - {None})
    if not names:
        return {}
    version = discovery.capi_version(apiversion.CLUSTER)
    res = apiversion.resource(apiversion.CLUSTER, version)
    if len(names) == 1:
        ref = make_ref(apiversion.CLUSTER, namespace, names[0])
        try:
            cluster = api.get(resource_path(res["group"], version, res["plural"], namespace, names[0]))
        except ApiError as err:
            if err.status == 404:
                return {}
            raise api_error(err, ref=ref, verb="get", resource=res, namespace=namespace, host=api.host)
        return {names[0]: cluster}
    items, _rv = _list(api, apiversion.CLUSTER, version, namespace)
    return {(item.get("metadata") or {}).get("name"): item for item in items}


def cluster_class(api, cluster, classes):
    """The ClusterClass of a topology ``cluster`` (v1beta1 ``class`` / ``classNamespace``, v1beta2 ``classRef``), one GET
    per class: ``classes`` ({(namespace, name): ClusterClass}) keeps them for the run."""
    group, _sep, version = cluster["apiVersion"].rpartition("/")
    topology = cluster["spec"]["topology"]
    name = (topology.get("classRef") or {}).get("name") or topology.get("class")
    namespace = (topology.get("classRef") or {}).get("namespace") or topology.get("classNamespace") or \
        cluster["metadata"]["namespace"]
    if (namespace, name) not in classes:
        try:
            classes[(namespace, name)] = api.get(resource_path(group, version, "clusterclasses", namespace, name))
        except ApiError as err:
            raise api_error(err, ref=make_ref("ClusterClass", namespace, name), verb="get",
                            resource={"group": group, "plural": "clusterclasses"}, namespace=namespace, host=api.host)
    return classes[(namespace, name)]


def list_kind(api, discovery, kind, namespace, label_selector=None):
    """All objects of ``kind`` in ``namespace`` (MachineSets, Machines) with one LIST."""
    items, version, _rv = list_kind_at(api, discovery, kind, namespace, label_selector)
    return items, version


def list_kind_at(api, discovery, kind, namespace, label_selector=None):
    """(items, api version, the list's resourceVersion) of ``kind`` in ``namespace`` with one LIST."""
    version = discovery.capi_version(kind)
    items, rv = _list(api, kind, version, namespace, label_selector)
    return items, version, rv


def namespace_exists(api, namespace):
    """False only when the API server says ``namespace`` does not exist (404); True when it exists or when
    the credentials may not ask (403: the namespaces rule of docs/rbac.yml is optional)."""
    try:
        api.get(resource_path("", "v1", "namespaces", name=namespace))
    except ApiError as err:
        if err.status == 404:
            return False
        if err.status in (401, 403):
            return True
        raise api_error(err, verb="get", resource={"group": "", "plural": "namespaces"}, host=api.host)
    return True


def _control_plane_ref(cluster):
    raw = paths.get_path(cluster, "spec.controlPlaneRef")
    cp_ref = apiversion.normalize_ref(raw)
    if not cp_ref or not cp_ref.get("kind") or not cp_ref.get("name"):
        return None
    cp_ref["namespace"] = (raw or {}).get("namespace") or paths.get_path(cluster, "metadata.namespace")
    return cp_ref


def _is_kcp(cp_ref):
    return cp_ref["kind"] == apiversion.KUBEADM_CONTROL_PLANE and \
        cp_ref["api_group"] == apiversion.RESOURCES[apiversion.KUBEADM_CONTROL_PLANE]["group"]


def control_planes(api, discovery, clusters, cluster_names):
    """({cluster name: control plane object}, {cluster name: [warnings]}) for ``cluster_names``.

    KubeadmControlPlanes: one GET, or one LIST per namespace when several; other control plane
    kinds (any with ``spec.version``): one GET each. A missing control plane is a warning (the skew
    check is then skipped and the result says so)."""
    found, warnings = {}, {}
    cp_refs = {}
    for name in sorted(set(cluster_names)):
        cluster = clusters.get(name)
        cp_ref = _control_plane_ref(cluster) if cluster is not None else None
        if cp_ref is not None:
            cp_refs[name] = cp_ref
    kcps = {name: cp_ref for name, cp_ref in cp_refs.items() if _is_kcp(cp_ref)}
    listed = {}
    namespaces = sorted({cp_ref["namespace"] for cp_ref in kcps.values()})
    if len(kcps) > 1:
        for namespace in namespaces:
            items, _version = list_kind(api, discovery, apiversion.KUBEADM_CONTROL_PLANE, namespace)
            for item in items:
                listed[(namespace, paths.get_path(item, "metadata.name"))] = item
    for name, cp_ref in cp_refs.items():
        what = f"{cp_ref['kind']} {cp_ref['namespace']}/{cp_ref['name']}"
        if name in kcps and len(kcps) > 1:
            obj = listed.get((cp_ref["namespace"], cp_ref["name"]))
        else:
            obj = _get_control_plane(api, discovery, cp_ref, what)
        if obj is None:
            warnings.setdefault(name, []).append(f"control plane {what} (Cluster {name} spec.controlPlaneRef) not found")
        else:
            found[name] = obj
    return found, warnings


def _get_control_plane(api, discovery, cp_ref, what):
    group = cp_ref["api_group"]
    try:
        if _is_kcp(cp_ref):
            version = discovery.capi_version(apiversion.KUBEADM_CONTROL_PLANE)
            plural = apiversion.RESOURCES[apiversion.KUBEADM_CONTROL_PLANE]["plural"]
        else:
            version = discovery.version_for_group(group)
            plural = discovery.plural(group, version, cp_ref["kind"])
    except RolloutError as err:
        if err.reason in NOT_SERVED:
            return None
        raise
    try:
        return api.get(resource_path(group, version, plural, cp_ref["namespace"], cp_ref["name"]))
    except ApiError as err:
        if err.status == 404:
            return None
        raise api_error(err, ref=make_ref(cp_ref["kind"], cp_ref["namespace"], cp_ref["name"]), verb="get",
                        resource={"group": group, "plural": plural}, namespace=cp_ref["namespace"], host=api.host)
