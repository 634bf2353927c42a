# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where each rollout field lives per kind and API version (the paths are read with core/paths.py).

v1beta1 is what CAPI <= v1.10 stores (still served, deprecated, by v1.11+); v1beta2 is stored from
v1.11 on. Everything else in the core asks this module for paths instead of hard-coding them.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError

CORE_GROUP = "cluster.x-k8s.io"
CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io"

V1BETA1 = "v1beta1"
V1BETA2 = "v1beta2"
VERSIONS = (V1BETA1, V1BETA2)

# Groups of Cluster API itself: none of their kinds is an infrastructure machine template.
CAPI_OWN_GROUPS = ("cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io")
MACHINE_DEPLOYMENT = "MachineDeployment"
KUBEADM_CONTROL_PLANE = "KubeadmControlPlane"
MACHINE_SET = "MachineSet"
MACHINE = "Machine"
CLUSTER = "Cluster"
MACHINE_HEALTH_CHECK = "MachineHealthCheck"

# Kinds the rollout verbs act on (like clusterctl's valid resource types).
ROLLOUT_KINDS = (MACHINE_DEPLOYMENT, KUBEADM_CONTROL_PLANE)

RESOURCES = {
    MACHINE_DEPLOYMENT: {"group": CORE_GROUP, "plural": "machinedeployments"},
    KUBEADM_CONTROL_PLANE: {"group": CONTROL_PLANE_GROUP, "plural": "kubeadmcontrolplanes"},
    MACHINE_SET: {"group": CORE_GROUP, "plural": "machinesets"},
    MACHINE: {"group": CORE_GROUP, "plural": "machines"},
    CLUSTER: {"group": CORE_GROUP, "plural": "clusters"},
    MACHINE_HEALTH_CHECK: {"group": CORE_GROUP, "plural": "machinehealthchecks"},
}

_KIND_ALIASES = {
    "machinedeployment": MACHINE_DEPLOYMENT, "machinedeployments": MACHINE_DEPLOYMENT, "md": MACHINE_DEPLOYMENT,
    "kubeadmcontrolplane": KUBEADM_CONTROL_PLANE, "kubeadmcontrolplanes": KUBEADM_CONTROL_PLANE, "kcp": KUBEADM_CONTROL_PLANE,
    "machineset": MACHINE_SET, "machinesets": MACHINE_SET, "ms": MACHINE_SET,
    "machine": MACHINE, "machines": MACHINE,
    "cluster": CLUSTER, "clusters": CLUSTER,
}

# Rollout-relevant spec fields, per (kind, version). None = the kind has no such field.
_MD_COMMON = {
    "replicas": "spec.replicas",
    "paused": "spec.paused",
    "cluster_name": "spec.clusterName",
    "template": "spec.template",
    "version": "spec.template.spec.version",
    "infrastructure_ref": "spec.template.spec.infrastructureRef",
    "bootstrap": "spec.template.spec.bootstrap",
    "failure_domain": "spec.template.spec.failureDomain",
}
_KCP_COMMON = {
    "replicas": "spec.replicas",
    "paused": None,
    "cluster_name": None,
    "template": "spec.machineTemplate",
    "version": "spec.version",
    "bootstrap": None,
    "failure_domain": None,
}
_SPEC_FIELDS = {
    # node_drain_timeout: MachineSpec NodeDrainTimeout (v1beta1, a duration; api/v1beta1/machine_types.go v1.10.10) or
    # deletion.nodeDrainTimeoutSeconds (v1beta2; api/core/v1beta2/machine_types.go v1.14.0), an in-place field
    (MACHINE_DEPLOYMENT, V1BETA1): dict(_MD_COMMON, rollout_after="spec.rolloutAfter", strategy="spec.strategy",
                                        node_drain_timeout="spec.template.spec.nodeDrainTimeout"),
    (MACHINE_DEPLOYMENT, V1BETA2): dict(_MD_COMMON, rollout_after="spec.rollout.after", strategy="spec.rollout.strategy",
                                        node_drain_timeout="spec.template.spec.deletion.nodeDrainTimeoutSeconds"),
    (KUBEADM_CONTROL_PLANE, V1BETA1): dict(
        _KCP_COMMON, rollout_after="spec.rolloutAfter", strategy="spec.rolloutStrategy",
        infrastructure_ref="spec.machineTemplate.infrastructureRef"),
    (KUBEADM_CONTROL_PLANE, V1BETA2): dict(
        _KCP_COMMON, rollout_after="spec.rollout.after", strategy="spec.rollout.strategy",
        infrastructure_ref="spec.machineTemplate.spec.infrastructureRef"),
    (MACHINE_SET, V1BETA1): dict(_MD_COMMON, paused=None, rollout_after=None, strategy=None,
                                 node_drain_timeout="spec.template.spec.nodeDrainTimeout"),
    (MACHINE_SET, V1BETA2): dict(_MD_COMMON, paused=None, rollout_after=None, strategy=None,
                                 node_drain_timeout="spec.template.spec.deletion.nodeDrainTimeoutSeconds"),
}
# A MachineHealthCheck: what it covers and when it may remediate (v1beta1 maxUnhealthy / unhealthyRange; v1beta2
# spec.remediation.triggerIf, api/core/v1beta2/machinehealthcheck_types.go at v1.14.0).
_SPEC_FIELDS[(MACHINE_HEALTH_CHECK, V1BETA1)] = {
    "cluster_name": "spec.clusterName", "selector": "spec.selector",
    "max_unhealthy": "spec.maxUnhealthy", "unhealthy_range": "spec.unhealthyRange",
}
_SPEC_FIELDS[(MACHINE_HEALTH_CHECK, V1BETA2)] = {
    "cluster_name": "spec.clusterName", "selector": "spec.selector",
    "max_unhealthy": "spec.remediation.triggerIf.unhealthyLessThanOrEqualTo",
    "unhealthy_range": "spec.remediation.triggerIf.unhealthyInRange",
}
for _v in VERSIONS:
    # A Machine's spec is what a template's spec is, one level up.
    _SPEC_FIELDS[(MACHINE, _v)] = {
        "replicas": None, "paused": None, "cluster_name": "spec.clusterName", "template": None,
        "version": "spec.version", "infrastructure_ref": "spec.infrastructureRef", "bootstrap": "spec.bootstrap",
        "failure_domain": "spec.failureDomain", "rollout_after": None, "strategy": None,
    }

# Status counters. Plain names carry the v1beta2 meaning (Machine conditions Ready/Available/UpToDate);
# "v1beta1_*" names carry the old meaning (Node ready, updated = new MachineSet's replicas).
# v1beta1 objects keep the new values under status.v1beta2 (v1.9+); v1beta2 objects keep the old ones
# under status.deprecated.v1beta1.
_STATUS_V1BETA1 = {
    "replicas": "status.replicas",
    "observed_generation": "status.observedGeneration",
    "up_to_date": "status.v1beta2.upToDateReplicas",
    "ready": "status.v1beta2.readyReplicas",
    "available": "status.v1beta2.availableReplicas",
    "v1beta1_updated": "status.updatedReplicas",
    "v1beta1_ready": "status.readyReplicas",
    "v1beta1_available": "status.availableReplicas",
    "v1beta1_unavailable": "status.unavailableReplicas",
    "conditions": "status.v1beta2.conditions",
    "v1beta1_conditions": "status.conditions",
}
_STATUS_V1BETA2 = {
    "replicas": "status.replicas",
    "observed_generation": "status.observedGeneration",
    "up_to_date": "status.upToDateReplicas",
    "ready": "status.readyReplicas",
    "available": "status.availableReplicas",
    "v1beta1_updated": "status.deprecated.v1beta1.updatedReplicas",
    "v1beta1_ready": "status.deprecated.v1beta1.readyReplicas",
    "v1beta1_available": "status.deprecated.v1beta1.availableReplicas",
    "v1beta1_unavailable": "status.deprecated.v1beta1.unavailableReplicas",
    "conditions": "status.conditions",
    "v1beta1_conditions": "status.deprecated.v1beta1.conditions",
}
_STATUS_FIELDS = {}
for _kind in RESOURCES:
    _STATUS_FIELDS[(_kind, V1BETA1)] = dict(_STATUS_V1BETA1)
    _STATUS_FIELDS[(_kind, V1BETA2)] = dict(_STATUS_V1BETA2)
# KCP never had an old-style available counter; MachineSets had no updated/unavailable counters.
for _v in VERSIONS:
    _STATUS_FIELDS[(KUBEADM_CONTROL_PLANE, _v)]["v1beta1_available"] = None
    _STATUS_FIELDS[(MACHINE_SET, _v)]["v1beta1_updated"] = None
    _STATUS_FIELDS[(MACHINE_SET, _v)]["v1beta1_unavailable"] = None


def normalize_kind(kind):
    """Canonical kind for a kind name, plural or short name (any case); None when unknown."""
    if not kind:
        return None
    if kind in RESOURCES:
        return kind
    return _KIND_ALIASES.get(str(kind).strip().lower())


def rollout_kind(kind):
    """Canonical rollout kind (MachineDeployment / KubeadmControlPlane) or RolloutError."""
    canonical = normalize_kind(kind)
    if canonical not in ROLLOUT_KINDS:
        raise RolloutError(
            f"invalid resource type {kind!r}, valid values are {list(ROLLOUT_KINDS)}",
            hint="use kind MachineDeployment (md) or KubeadmControlPlane (kcp)", reason="invalid_kind")
    return canonical


def normalize_version(api_version):
    """``v1beta1``/``v1beta2`` from ``v1beta2`` or ``cluster.x-k8s.io/v1beta2``; None for anything else."""
    if not api_version:
        return None
    version = str(api_version).rsplit("/", 1)[-1]
    return version if version in VERSIONS else None


def version_of(obj, api_version=None):
    """API version (v1beta1/v1beta2) to read ``obj`` with: explicit argument first, then obj.apiVersion."""
    version = normalize_version(api_version) or normalize_version(obj.get("apiVersion"))
    if version is None:
        shown = api_version or obj.get("apiVersion")
        raise RolloutError(
            f"unsupported API version {shown!r}", hint=f"use one of {list(VERSIONS)} (Cluster API v1.0 or newer)",
            reason="unsupported_api_version")
    return version


def api_version_string(kind, version):
    """Full ``group/version`` for a kind, e.g. ``cluster.x-k8s.io/v1beta2``."""
    return f"{RESOURCES[kind]['group']}/{version}"


def resource(kind, version):
    """What a client needs to address the kind: group, version, plural, api_version."""
    info = RESOURCES[kind]
    return {"group": info["group"], "version": version, "plural": info["plural"], "api_version": f"{info['group']}/{version}"}


def spec_fields(kind, version):
    """Mapping field name -> dotted path (or None) for rollout-relevant spec fields."""
    return dict(_SPEC_FIELDS[(kind, version)])


def status_fields(kind, version):
    """Mapping counter/condition name -> dotted path (or None)."""
    return dict(_STATUS_FIELDS[(kind, version)])


def spec_path(kind, version, field):
    return _SPEC_FIELDS[(kind, version)].get(field)


def status_path(kind, version, field):
    return _STATUS_FIELDS[(kind, version)].get(field)


# ---------------------------------------------------------------------------------------------
# object references: v1beta1 corev1.ObjectReference {apiVersion, kind, name, namespace, uid, ...}
# vs v1beta2 ContractVersionedObjectReference {apiGroup, kind, name}


def group_of(api_version):
    """API group of ``group/version`` ("" for the core group, e.g. ``v1``)."""
    if not api_version:
        return ""
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def normalize_ref(object_ref):
    """``{api_group, kind, name}`` from either reference shape; None for no reference."""
    if not isinstance(object_ref, dict) or not object_ref:
        return None
    if "apiGroup" in object_ref:
        group = object_ref.get("apiGroup") or ""
    else:
        group = group_of(object_ref.get("apiVersion"))
    return {"api_group": group, "kind": object_ref.get("kind"), "name": object_ref.get("name")}


def ref_for_api(target, version, current=None):
    """The reference dict to write for ``target`` ({api_group, kind, name[, api_version]}).

    v1beta2 writes {apiGroup, kind, name}. v1beta1 needs a full apiVersion: an explicit
    ``target['api_version']`` wins; otherwise the current apiVersion is kept when the group is
    unchanged (CAPI ignores the version part of refs, #2183), else the caller must give one.
    """
    if version == V1BETA2:
        return {"apiGroup": target["api_group"], "kind": target["kind"], "name": target["name"]}
    api_version = target.get("api_version")
    if not api_version:
        cur_api_version = (current or {}).get("apiVersion")
        if cur_api_version and group_of(cur_api_version) == target["api_group"]:
            api_version = cur_api_version
    if not api_version:
        raise ValueError(f"an apiVersion is needed for group {target['api_group']!r} in v1beta1 references")
    return {"apiVersion": api_version, "kind": target["kind"], "name": target["name"]}
