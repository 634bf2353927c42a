# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which MDs/KCPs a task acts on: one list request (label selector) plus a post-filter.

Names and cluster_name are filtered client-side on purpose: listing with only the user's label
selectors lets the "not found" error name the objects that do exist, and the cluster of a KCP is
not always a label (KCP has no spec.clusterName; the cluster-name label is set by webhooks or the
topology controller, which a bare API server may not run).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref

# Up to this many existing names are listed in a "not found" error.
MAX_LISTED_NAMES = 10


def _as_list(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def selection(kind=None, namespace=None, name=None, names=None, cluster_name=None, label_selectors=None):
    """Normalized selection: {kind, namespace, names, cluster_name, label_selector, resource}.

    ``label_selector`` is the string for the list request (None = all); ``namespace`` None lists all
    namespaces; ``resource`` is apiversion.resource() minus the version (chosen by discovery).
    """
    kind = apiversion.rollout_kind(kind or apiversion.MACHINE_DEPLOYMENT)
    wanted = []
    for item in _as_list(name) + _as_list(names):
        item = str(item).strip()
        if not item:
            raise RolloutError("empty name in name/names", hint="remove the empty entry", reason="invalid_selection")
        if item not in wanted:
            wanted.append(item)
    selectors = []
    for item in _as_list(label_selectors):
        item = str(item).strip()
        if not item:
            raise RolloutError("empty label selector in label_selectors", hint="remove the empty entry", reason="invalid_selection")
        selectors.append(item)
    return {
        "kind": kind,
        "namespace": namespace or None,
        "names": wanted,
        "cluster_name": cluster_name or None,
        "label_selector": ",".join(selectors) or None,
        "resource": {"group": apiversion.RESOURCES[kind]["group"], "plural": apiversion.RESOURCES[kind]["plural"]},
    }


def _meta(obj, key):
    return (obj.get("metadata") or {}).get(key)


def matches(obj, sel, ignore_names=False):
    """Post-filter: namespace, cluster_name and (unless ``ignore_names``) names."""
    if sel["namespace"] and _meta(obj, "namespace") != sel["namespace"]:
        return False
    if sel["cluster_name"] and views.cluster_name_of(obj) != sel["cluster_name"]:
        return False
    if sel["names"] and not ignore_names and _meta(obj, "name") not in sel["names"]:
        return False
    return True


def _describe(sel):
    where = [f"namespace {sel['namespace']}" if sel["namespace"] else "any namespace"]
    if sel["cluster_name"]:
        where.append(f"cluster {sel['cluster_name']}")
    if sel["label_selector"]:
        where.append(f"labels {sel['label_selector']}")
    return ", ".join(where)


def not_found_error(sel, missing, existing):
    """RolloutError for names that are not there, listing the ones that are (when few)."""
    kind = sel["kind"]
    ref = make_ref(kind, sel["namespace"], missing[0]) if len(missing) == 1 else None
    what = f"{kind} {', '.join(missing)} not found" if missing else f"no {kind} found"
    existing = sorted(existing)
    if not existing:
        hint = f"no {kind} exists in {_describe(sel)}; check namespace, cluster_name and label_selectors"
    elif len(existing) <= MAX_LISTED_NAMES:
        hint = f"existing in {_describe(sel)}: {', '.join(existing)}"
    else:
        hint = f"{len(existing)} exist in {_describe(sel)}; list them with capi_rollout_info"
    return RolloutError(f"{what} in {_describe(sel)}", ref=ref, hint=hint, reason="not_found")


def select(items, sel, require_match=True):
    """Objects of ``items`` (the list response) selected by ``sel``, sorted by namespace/name.

    Raises RolloutError (reason not_found) when a requested name is missing, or when nothing
    matches and ``require_match``.
    """
    candidates = [obj for obj in items or [] if matches(obj, sel, ignore_names=True)]
    chosen = [obj for obj in candidates if matches(obj, sel)]
    found = {_meta(obj, "name") for obj in chosen}
    missing = [name for name in sel["names"] if name not in found]
    if missing or (require_match and not chosen):
        existing = sorted({_meta(obj, "name") for obj in candidates})
        raise not_found_error(sel, missing, existing)
    return sorted(chosen, key=lambda obj: (_meta(obj, "namespace") or "", _meta(obj, "name") or ""))
