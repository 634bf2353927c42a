# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who owns the fields a write changes (no I/O).

Every write of this collection is made as one field manager, ``FIELD_MANAGER`` (client.requests sends it with
every POST, PUT and PATCH), the same for every module and release, so that ``managedFields`` tells its writes
from those of GitOps controllers, Helm, the Cluster topology controller or a person.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# Never changes: a new name would leave the fields of earlier runs to a manager nobody writes as.
FIELD_MANAGER = "capi-rollout"

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError

MODES = ("refuse", "warn", "ignore")
DEFAULT_MODE = "refuse"
TOPOLOGY_MANAGER = "capi-topology"
# Managers whose entries never make an owner: this collection, and Cluster API's controllers (controller-runtime
# names its updates after the binary, "manager"; the simulator's controller is "capisim"). The topology
# controller (capi-topology) is an owner: it re-applies what the Cluster topology says.
NOT_OWNERS = (FIELD_MANAGER, "manager", "cluster-api", "capisim", "before-first-apply")
# Reconcilers that write with Update (client-side apply) yet put the field back from Git or a chart: their
# entries count like an Apply. Any other Update (kubectl edit/patch, a script) is a change, not an owner.
RECONCILERS = ("kustomize-controller", "helm-controller", "argocd-controller", "argocd-application-controller",
               "helm", "kubectl-client-side-apply")
# The fields a rollout is triggered by, and this collection's own annotations: Git does not hold them, so only a
# managedFields entry that names exactly such a field makes an owner, never the object's GitOps labels.
TRIGGER_FIELDS = (("spec", "rolloutAfter"), ("spec", "rollout", "after"))

NEXT_STEPS = {
    "git": "change it in Git (the reconciler applies it from there)",
    "helm": "change it in the Helm release's values",
    "topology": "change the Cluster topology (Cluster spec.topology or its ClusterClass)",
}


def pointer_path(pointer):
    """Keys of an RFC 6901 pointer (``/metadata/annotations/a~1b`` -> ``("metadata", "annotations", "a/b")``)."""
    return tuple(part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:])


def written_fields(operations):
    """The fields a JSON patch writes (add / replace / remove; ``test`` only reads), each a tuple of keys; an added
    map counts as its leaves, so an added ``spec.rollout`` is ``spec.rollout.after``."""
    out = []

    def leaves(field, value):
        if isinstance(value, dict) and value:
            for key, inner in value.items():
                leaves(field + (key,), inner)
        elif field not in out:
            out.append(field)

    for operation in operations or []:
        if operation.get("op") in ("add", "replace", "remove"):
            leaves(pointer_path(operation["path"]), operation.get("value") if operation["op"] != "remove" else None)
    return out


def is_trigger(field):
    """Whether a field is one Git does not hold: the rollout trigger or an annotation of this collection."""
    field = tuple(field)
    if field in TRIGGER_FIELDS:
        return True
    return field[:2] == ("metadata", "annotations") and len(field) > 2 and field[2].startswith(keys.ROLLOUT_PREFIX)


def covers(fields_v1, field):
    """Whether a managedFields ``fieldsV1`` set holds ``field``, a part of it (a manager owning
    ``spec.template.spec.infrastructureRef.name`` owns what a write of the whole reference changes) or a map
    it sits in that is owned as a whole (an empty set: an atomic value)."""
    node = fields_v1
    for key in field:
        if not isinstance(node, dict):
            return False
        if not node and node is not fields_v1:
            return True
        # a member of a list of type map is named by its key (``k:{"name":"md-0"}``), a field by ``f:``
        node = node.get(key if str(key).startswith("k:") else f"f:{key}")
        if node is None:
            return False
    return True


def _next_step(manager):
    if manager == TOPOLOGY_MANAGER:
        return NEXT_STEPS["topology"]
    if manager.startswith("helm"):
        return NEXT_STEPS["helm"]
    return NEXT_STEPS["git"]


def _owner(manager, field, source, time=None):
    return {"manager": manager, "field": paths.join_path(field), "source": source, "time": time,
            "next_step": _next_step(manager)}


def markers(obj):
    """Owners the object's labels and annotations name: [(manager, source)]. They say the object comes from Git
    (or a chart, or a topology), not which of its fields."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations") or {}
    out = []
    helm = labels.get(keys.MANAGED_BY_LABEL) == keys.HELM_MANAGED_BY
    if keys.FLUX_HELM_NAME_LABEL in labels:
        out.append(("helm-controller", f"label {keys.FLUX_HELM_NAME_LABEL}={labels[keys.FLUX_HELM_NAME_LABEL]}"))
    elif helm:
        out.append(("helm", f"label {keys.MANAGED_BY_LABEL}={keys.HELM_MANAGED_BY}"))
    if keys.FLUX_KUSTOMIZE_NAME_LABEL in labels:
        out.append(("kustomize-controller",
                    f"label {keys.FLUX_KUSTOMIZE_NAME_LABEL}={labels[keys.FLUX_KUSTOMIZE_NAME_LABEL]}"))
    if keys.ARGOCD_TRACKING_ID_ANNOTATION in annotations:
        out.append(("argocd", f"annotation {keys.ARGOCD_TRACKING_ID_ANNOTATION}="
                              f"{annotations[keys.ARGOCD_TRACKING_ID_ANNOTATION]}"))
    elif keys.INSTANCE_LABEL in labels and not helm:
        # Argo CD's label tracking; Helm charts set the same label, hence not for them
        out.append(("argocd", f"label {keys.INSTANCE_LABEL}={labels[keys.INSTANCE_LABEL]}"))
    if keys.TOPOLOGY_OWNED_LABEL in labels:
        out.append((TOPOLOGY_MANAGER, f"label {keys.TOPOLOGY_OWNED_LABEL}"))
    return out


def owners_of(obj, fields):
    """Owners of the fields a write changes (tuples of keys, as ``written_fields`` makes them), one entry per
    manager and field: ``{manager, field, source, time, next_step}``.

    The rule, per field: a managedFields entry that holds the field makes its manager an owner when it is an
    Apply (server-side apply: the manager re-applies its state) or an Update of a known reconciler
    (``RECONCILERS``), except this collection and Cluster API's controllers (``NOT_OWNERS``). A field Git holds
    (anything but the rollout trigger and this collection's annotations: template references, version, paused)
    is also owned by every manager the object's GitOps / Helm / topology labels name (``markers``), since Argo
    CD's default apply leaves no managedFields entry.
    """
    out = []
    seen = set()

    def add(manager, field, source, time=None):
        if (manager, field) not in seen:
            seen.add((manager, field))
            out.append(_owner(manager, field, source, time))

    entries = (obj.get("metadata") or {}).get("managedFields") or []
    for field in fields:
        field = tuple(field)
        for entry in entries:
            manager = entry.get("manager") or ""
            if manager in NOT_OWNERS:
                continue
            operation = entry.get("operation")
            if operation != "Apply" and manager not in RECONCILERS:
                continue
            if covers(entry.get("fieldsV1") or {}, field):
                add(manager, field, f"managedFields ({operation})", entry.get("time"))
        if not is_trigger(field):
            for manager, source in markers(obj):
                add(manager, field, source)
    return out


# The rollout-relevant fields (apiversion.spec_path names): what capi_rollout_info shows the owners of
ROLLOUT_FIELDS = ("infrastructure_ref", "bootstrap", "version", "paused", "rollout_after")


def rollout_owners(obj, kind, version):
    """{field name: owners} of the rollout-relevant fields of an MD or KCP (names without owners left out)."""
    out = {}
    for name in ROLLOUT_FIELDS:
        path = apiversion.spec_path(kind, version, name)
        if path:
            found = owners_of(obj, [paths.split_path(path)])
            if found:
                out[name] = found
    return out


def last_change(obj, field, since=None):
    """The newest managedFields entry of another manager than this collection that holds ``field`` and is newer
    than ``since`` (an RFC 3339 time, or None): ``{manager, operation, time}`` or None. Says who changed a field
    this collection wrote (managedFields times are whole seconds, so ``since`` is compared the same way)."""
    found = None
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        manager = entry.get("manager") or ""
        if manager == FIELD_MANAGER or not covers(entry.get("fieldsV1") or {}, tuple(field)):
            continue
        time = entry.get("time") or ""
        if since is not None and time[:19] < since[:19]:
            continue
        if found is None or time > found["time"]:
            found = {"manager": manager, "operation": entry.get("operation"), "time": time}
    return found


def describe(owner):
    return f"{owner['field']} is owned by {owner['manager']} ({owner['source']})"


def next_steps(found):
    steps = []
    for owner in found:
        if owner["next_step"] not in steps:
            steps.append(owner["next_step"])
    return "; ".join(steps)


def outside_topology(found):
    """The owners ``field_owners`` decides on: the Cluster topology's are left to core.guards (refuse_topology_owned
    refuses its template changes, and undo's ``force`` overrides that), so one rule decides each owner."""
    return [owner for owner in found if owner["manager"] != TOPOLOGY_MANAGER]


def check(ref, found, mode):
    """Apply ``field_owners``: raise (refuse, the default) or return warnings (warn) for the owners ``found`` of
    the fields a write of ``ref`` changes; ``ignore`` returns none."""
    if not found or mode == "ignore":
        return []
    what = "; ".join(describe(owner) for owner in found)
    if mode == "warn":
        return [f"{what}: written anyway (field_owners=warn); it may put the field back"]
    raise RolloutError(f"{what}; a change made here would be put back by it, so nothing was written", ref=ref,
                       hint=f"{next_steps(found)}, or set field_owners=warn to write anyway", reason="field_owned")


def plan_blocker(field_owners, restart, mode):
    """What the owners in an info entry's ``field_owners`` (rollout_owners) mean for a hardware refresh of it:
    ``(blocker, note)``, at most one of them set. A switch writes the template reference, a restart the trigger.
    The topology's ownership is left to the refresh's own topology blocker."""
    found = outside_topology((field_owners or {}).get("rollout_after" if restart else "infrastructure_ref") or [])
    if not found or mode == "ignore":
        return None, None
    what = "; ".join(describe(owner) for owner in found)
    if mode == "warn":
        return None, f"{what}: switched anyway (field_owners=warn); it may put the field back"
    return f"field owner: {what}; {next_steps(found)}", None
