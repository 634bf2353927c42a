# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One plain, version-independent view of a MachineDeployment, KubeadmControlPlane, MachineSet or Machine.

Modules return these views (info, results) and the other core pieces read them, so field moves
between v1beta1 and v1beta2 are handled here once.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref_of


def view(obj, now=None, cluster=None, api_version=None):
    """View of any supported kind. ``now`` enables rollout.pending; ``cluster`` adds Cluster pause."""
    kind = apiversion.normalize_kind(obj.get("kind"))
    if kind == apiversion.MACHINE_DEPLOYMENT:
        return deployment_view(obj, now=now, cluster=cluster, api_version=api_version)
    if kind == apiversion.KUBEADM_CONTROL_PLANE:
        return control_plane_view(obj, now=now, cluster=cluster, api_version=api_version)
    if kind == apiversion.MACHINE_SET:
        return machine_set_view(obj, api_version=api_version)
    if kind == apiversion.MACHINE:
        return machine_view(obj, api_version=api_version)
    raise RolloutError(f"cannot show kind {obj.get('kind')!r}", ref=ref_of(obj),
                       hint="pass a MachineDeployment, KubeadmControlPlane, MachineSet or Machine", reason="invalid_kind")


def _base(obj, kind, version):
    meta = obj.get("metadata") or {}
    generation = meta.get("generation")
    observed = paths.get_path(obj, "status.observedGeneration")
    return {
        "kind": kind,
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "api_version": version,
        "ref": ref_of(dict(obj, kind=kind)),
        "uid": meta.get("uid"),
        "generation": generation,
        "observed_generation": observed,
        # Without a generation (plain dict fixtures) there is nothing to lag behind.
        "observed": generation is None or (observed is not None and observed >= generation),
        "created": meta.get("creationTimestamp"),
        "deleting": bool(meta.get("deletionTimestamp")),
    }


def _labels(obj):
    return paths.get_path(obj, "metadata.labels", {}) or {}


def _annotations(obj):
    return paths.get_path(obj, "metadata.annotations", {}) or {}


def _int_or_none(value):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def revision_of(obj):
    """MachineDeployment/MachineSet revision annotation as int (None when missing/unparsable)."""
    return _int_or_none(_annotations(obj).get(keys.REVISION_ANNOTATION))


def revision_history_of(obj):
    """Revisions a MachineSet had before (revision-history annotation) as ints, in written order."""
    raw = _annotations(obj).get(keys.REVISION_HISTORY_ANNOTATION) or ""
    return [value for value in (_int_or_none(part) for part in raw.split(",")) if value is not None]


def last_rollout_of(obj):
    """This collection's last-action record (annotation JSON) or None."""
    raw = _annotations(obj).get(keys.LAST_ROLLOUT_ANNOTATION)
    if not raw:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return {"raw": raw}
    return record if isinstance(record, dict) else {"raw": raw}


def _owner(obj, kind=None):
    """Controller ownerRef (or first ownerRef of ``kind``) as {kind, name, uid}."""
    owner_refs = paths.get_path(obj, "metadata.ownerReferences", []) or []
    for owner in owner_refs:
        if kind is None and owner.get("controller"):
            return {"kind": owner.get("kind"), "name": owner.get("name"), "uid": owner.get("uid")}
        if kind is not None and owner.get("kind") == kind:
            return {"kind": owner.get("kind"), "name": owner.get("name"), "uid": owner.get("uid")}
    return None


def infrastructure_ref_of(obj, kind, version=None):
    """The infrastructure machine template reference an MD or KCP stores (as stored: a v1beta2 ``templateRef``
    has no apiVersion), read at the path of ``version`` (default: the object's own); None when it has none."""
    return paths.get_path(obj, apiversion.spec_path(kind, version or apiversion.version_of(obj), "infrastructure_ref"))


def cluster_name_of(obj):
    """Cluster of an object: spec.clusterName, else the cluster-name label, else a Cluster ownerRef
    (KCP has no spec.clusterName)."""
    name = paths.get_path(obj, "spec.clusterName") or _labels(obj).get(keys.CLUSTER_NAME_LABEL)
    if name:
        return name
    owner = _owner(obj, kind="Cluster")
    return owner["name"] if owner else None


def pause_reasons(obj, kind, cluster=None, metav1_conditions=None):
    """Every reason the object is paused, in words. MD spec.paused only pauses rollouts (scaling goes
    on); the annotation and Cluster spec.paused stop reconciliation completely."""
    reasons = []
    if kind == apiversion.MACHINE_DEPLOYMENT and paths.get_path(obj, "spec.paused") is True:
        reasons.append("spec.paused is true")
    if keys.PAUSED_ANNOTATION in _annotations(obj):
        reasons.append(f"annotation {keys.PAUSED_ANNOTATION} is set")
    if cluster is not None and paths.get_path(cluster, "spec.paused") is True:
        reasons.append(f"Cluster {paths.get_path(cluster, 'metadata.name')} spec.paused is true")
    elif not reasons:
        # Without the Cluster object, the controller's own Paused condition still tells.
        paused = conds.find(metav1_conditions or [], "Paused")
        if paused and paused["status"] == conds.TRUE:
            detail = conds.first_lines(paused["message"])
            reasons.append(f"condition Paused is True: {detail}" if detail else "condition Paused is True")
    return reasons


def _replicas(obj, kind, version):
    fields = apiversion.status_fields(kind, version)

    def read(name):
        path = fields.get(name)
        return paths.get_path(obj, path) if path else None

    up_to_date, ready, available = read("up_to_date"), read("ready"), read("available")
    updated = read("v1beta1_updated")
    return {
        "desired": paths.get_path(obj, "spec.replicas"),
        "current": read("replicas"),
        # v1beta2 meaning (Machine conditions) when the controller reports it, else the old counters.
        "ready": ready if ready is not None else read("v1beta1_ready"),
        "available": available if available is not None else read("v1beta1_available"),
        "up_to_date": up_to_date if up_to_date is not None else updated,
        "updated": updated,
        "unavailable": read("v1beta1_unavailable"),
    }


def _strategy(obj, kind, version):
    raw = paths.get_path(obj, apiversion.spec_path(kind, version, "strategy"), {}) or {}
    strategy_type = raw.get("type") or "RollingUpdate"
    rolling = raw.get("rollingUpdate") or {}
    if strategy_type != "RollingUpdate":
        return {"type": strategy_type, "max_surge": None, "max_unavailable": None}
    # Webhook defaults: MD maxSurge 1 / maxUnavailable 0; KCP only has maxSurge (0 or 1, default 1).
    max_unavailable = rolling.get("maxUnavailable", 0) if kind == apiversion.MACHINE_DEPLOYMENT else None
    return {"type": strategy_type, "max_surge": rolling.get("maxSurge", 1), "max_unavailable": max_unavailable}


def _rollout(obj, kind, version, now):
    after = paths.get_path(obj, apiversion.spec_path(kind, version, "rollout_after"))
    after_time = timeutil.parse_optional(after)
    pending = None
    if now is not None:
        pending = after_time is not None and after_time > timeutil.to_utc(now)
    return {
        "after": timeutil.format_time(after_time) if after_time else (after or None),
        "pending": pending,
        "strategy": _strategy(obj, kind, version),
    }


def _managed(obj, kind, version, now, cluster):
    """Fields shared by the two rollout kinds."""
    out = _base(obj, kind, version)
    metav1 = conds.metav1_conditions(obj, kind, version)
    legacy = conds.v1beta1_conditions(obj, kind, version)
    # Prefer metav1 conditions; fall back to old-style ones only when those are all there is.
    condition_list, style = (legacy, "v1beta1") if legacy and not metav1 else (metav1, "v1beta2")
    reasons = pause_reasons(obj, kind, cluster=cluster, metav1_conditions=metav1)
    out.update({
        "cluster": cluster_name_of(obj),
        "paused": bool(reasons),
        "paused_reasons": reasons,
        "topology_owned": keys.TOPOLOGY_OWNED_LABEL in _labels(obj),
        "replicas": _replicas(obj, kind, version),
        "rollout": _rollout(obj, kind, version, now),
        "phase": paths.get_path(obj, "status.phase"),
        "conditions": condition_list,
        "conditions_style": style,
        "last_rollout": last_rollout_of(obj),
        "versions": paths.get_path(obj, "status.versions"),
    })
    return out


def deployment_view(obj, now=None, cluster=None, api_version=None):
    kind = apiversion.MACHINE_DEPLOYMENT
    version = apiversion.version_of(obj, api_version)
    out = _managed(obj, kind, version, now, cluster)
    out["template"] = tmpl.identity(paths.get_path(obj, "spec.template.spec", {}))
    out["revision"] = revision_of(obj)
    return out


def control_plane_view(obj, now=None, cluster=None, api_version=None):
    kind = apiversion.KUBEADM_CONTROL_PLANE
    version = apiversion.version_of(obj, api_version)
    out = _managed(obj, kind, version, now, cluster)
    out["template"] = {
        "version": paths.get_path(obj, "spec.version"),
        "infrastructure_ref": apiversion.normalize_ref(paths.get_path(obj, apiversion.spec_path(kind, version, "infrastructure_ref"))),
        "bootstrap_ref": None,
        "data_secret_name": None,
        "failure_domain": None,
    }
    out["revision"] = None
    out["version"] = paths.get_path(obj, "status.version")
    if version == apiversion.V1BETA2:
        out["initialized"] = paths.get_path(obj, "status.initialization.controlPlaneInitialized")
    else:
        out["initialized"] = paths.get_path(obj, "status.initialized")
    return out


def machine_set_view(obj, api_version=None):
    kind = apiversion.MACHINE_SET
    version = apiversion.version_of(obj, api_version)
    out = _base(obj, kind, version)
    replicas = _replicas(obj, kind, version)
    owner = _owner(obj)
    out.update({
        "cluster": cluster_name_of(obj),
        "revision": revision_of(obj),
        "revision_history": revision_history_of(obj),
        "replicas": {key: replicas[key] for key in ("desired", "current", "ready", "available", "up_to_date")},
        "template": tmpl.identity(paths.get_path(obj, "spec.template.spec", {})),
        "owner": owner,
        "owner_uid": owner["uid"] if owner else None,
        "deployment_name": _labels(obj).get(keys.DEPLOYMENT_NAME_LABEL),
    })
    return out


def _condition_bool(condition_list, cond_type):
    status = conds.status_of(condition_list, cond_type)
    if status == conds.TRUE:
        return True
    if status == conds.FALSE:
        return False
    return None


def machine_view(obj, api_version=None):
    kind = apiversion.MACHINE
    version = apiversion.version_of(obj, api_version)
    out = _base(obj, kind, version)
    metav1 = conds.metav1_conditions(obj, kind, version)
    legacy = conds.v1beta1_conditions(obj, kind, version)
    labels = _labels(obj)
    owner = _owner(obj)
    ready = _condition_bool(metav1, "Ready")
    if ready is None:
        ready = _condition_bool(legacy, "Ready")
    spec_identity = tmpl.identity(obj.get("spec") or {})
    out.update({
        "cluster": cluster_name_of(obj),
        "phase": paths.get_path(obj, "status.phase"),
        "node": paths.get_path(obj, "status.nodeRef.name"),
        "version": paths.get_path(obj, "spec.version"),
        "kubelet_version": paths.get_path(obj, "status.nodeInfo.kubeletVersion"),
        "failure_domain": paths.get_path(obj, "spec.failureDomain"),
        "infrastructure_ref": spec_identity["infrastructure_ref"],
        "up_to_date": _condition_bool(metav1, "UpToDate"),
        "ready": ready,
        "available": _condition_bool(metav1, "Available"),
        "machine_set": labels.get(keys.SET_NAME_LABEL) or (owner["name"] if owner and owner["kind"] == "MachineSet" else None),
        "deployment_name": labels.get(keys.DEPLOYMENT_NAME_LABEL),
        "control_plane_name": labels.get(keys.CONTROL_PLANE_NAME_LABEL),
        "owner": owner,
        "conditions": legacy if legacy and not metav1 else metav1,
        "conditions_style": "v1beta1" if legacy and not metav1 else "v1beta2",
        # the drain (core.drains.drain_phase): when it started, whether it succeeded (the v1beta1 condition, also
        # served in status.deprecated.v1beta1 by v1beta2), and the node drain timeout as written
        "drain_started": paths.get_path(obj, "status.deletion.nodeDrainStartTime"),
        "drained": _condition_bool(legacy, "DrainingSucceeded"),
        "node_drain_timeout": paths.get_path(obj, "spec.deletion.nodeDrainTimeoutSeconds" if version == apiversion.V1BETA2
                                             else "spec.nodeDrainTimeout"),
    })
    return out
