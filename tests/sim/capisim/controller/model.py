"""Version-aware accessors for CAPI objects held as plain dicts (v1beta1 for CAPI v1.10, v1beta2 for v1.14).

Every reader takes the object as the API server returns it and hides where a field lives in each API version
(reference §1), so the planners above it are written once. No I/O.
"""

import copy
import datetime
import re

CLUSTER_GROUP = "cluster.x-k8s.io"
CONTROLPLANE_GROUP = "controlplane.cluster.x-k8s.io"
BOOTSTRAP_GROUP = "bootstrap.cluster.x-k8s.io"
INFRA_GROUP = "infrastructure.cluster.x-k8s.io"

REVISION = "machinedeployment.clusters.x-k8s.io/revision"
REVISION_HISTORY = "machinedeployment.clusters.x-k8s.io/revision-history"
DESIRED_REPLICAS = "machinedeployment.clusters.x-k8s.io/desired-replicas"
MAX_REPLICAS = "machinedeployment.clusters.x-k8s.io/max-replicas"
DISABLE_MACHINE_CREATE = "cluster.x-k8s.io/disable-machine-create"
DELETE_MACHINE = "cluster.x-k8s.io/delete-machine"
PAUSED = "cluster.x-k8s.io/paused"
CLONED_FROM_NAME = "cluster.x-k8s.io/cloned-from-name"
CLONED_FROM_GROUPKIND = "cluster.x-k8s.io/cloned-from-groupkind"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CONVERSION_DATA = "cluster.x-k8s.io/conversion-data"
# In-place updates (v1.12.3 api/core/v1beta2/machineset_types.go, machine_types.go)
_IN_PLACE = "in-place-updates.internal.cluster.x-k8s.io/"
MOVE_MACHINES_TO = _IN_PLACE + "move-machines-to-machineset"
RECEIVE_MACHINES_FROM = _IN_PLACE + "receive-machines-from-machinesets"
ACKNOWLEDGED_MOVE = _IN_PLACE + "acknowledged-move"
PENDING_ACKNOWLEDGE_MOVE = _IN_PLACE + "pending-acknowledge-move"
UPDATE_IN_PROGRESS = _IN_PLACE + "update-in-progress"

TEMPLATE_HASH = "machine-template-hash"
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"
DEPLOYMENT_NAME = "cluster.x-k8s.io/deployment-name"
SET_NAME = "cluster.x-k8s.io/set-name"
CONTROL_PLANE = "cluster.x-k8s.io/control-plane"
CONTROL_PLANE_NAME = "cluster.x-k8s.io/control-plane-name"

MACHINE_FINALIZER = "machine.cluster.x-k8s.io"

SIM_PROVISION_SECONDS = "sim.capi-rollout.dev/provision-seconds"
SIM_DELETION_SECONDS = "sim.capi-rollout.dev/deletion-seconds"
# The drain of a deleted Machine's Node (controller/drainplan.py): how long it takes, and whether a
# PodDisruptionBudget blocks it (until the Machine's node drain timeout).
SIM_DRAIN_SECONDS = "sim.capi-rollout.dev/drain-seconds"
SIM_DRAIN_BLOCKED_BY_PDB = "sim.capi-rollout.dev/drain-blocked-by-pdb"
SIM_KUBELET_VERSION = "sim.capi-rollout.dev/kubelet-version"
SIM_CERTIFICATES_VALID_DAYS = "sim.capi-rollout.dev/certificates-valid-days"
# The digest of the KCP's kubeadmConfigSpec a control plane Machine was created with (it stands for the
# Machine's KubeadmConfig, which the simulator does not create).
SIM_KUBEADM_CONFIG_SPEC = "sim.capi-rollout.dev/kubeadm-config-spec"
SIM_FAIL_PROVISIONING = "sim.capi-rollout.dev/fail-provisioning"

UTC = datetime.timezone.utc
_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})$")


# --- time ---------------------------------------------------------------------------------------------------------

def parse_time(value):
    """An RFC 3339 string (metav1.Time, or what clusterctl writes with a local offset) as an aware UTC datetime."""
    if not value:
        return None
    if isinstance(value, datetime.datetime):
        return value.astimezone(UTC)
    match = _RFC3339.match(str(value).strip())
    if not match:
        raise ValueError(f"not an RFC 3339 timestamp: {value!r}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    micro = int((fraction[1:] + "000000")[:6]) if fraction else 0
    if zone in ("Z", "z"):
        tzinfo = UTC
    else:
        digits = zone[1:].replace(":", "")
        offset = datetime.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        tzinfo = datetime.timezone(-offset if zone[0] == "-" else offset)
    return datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro,
                             tzinfo=tzinfo).astimezone(UTC)


def format_time(moment):
    """metav1.Time wire format: second precision, UTC, "Z"."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- generic metadata ---------------------------------------------------------------------------------------------

def is_v1beta2(obj):
    return str(obj.get("apiVersion", "")).endswith("/v1beta2")


def meta(obj):
    return obj.get("metadata") or {}


def name(obj):
    return meta(obj).get("name")


def namespace(obj):
    return meta(obj).get("namespace")


def key_text(obj):
    """namespace/name, as logs show objects."""
    return f"{namespace(obj)}/{name(obj)}"


def uid(obj):
    return meta(obj).get("uid")


def labels(obj):
    return meta(obj).get("labels") or {}


def annotations(obj):
    return meta(obj).get("annotations") or {}


def created(obj):
    return parse_time(meta(obj).get("creationTimestamp"))


def deleting(obj):
    return bool(meta(obj).get("deletionTimestamp"))


def generation(obj):
    return meta(obj).get("generation") or 0


def resource_version(obj):
    return meta(obj).get("resourceVersion")


def dig(obj, *path, default=None):
    """obj[path[0]][path[1]]...; default when any step is missing or None."""
    for key in path:
        if not isinstance(obj, dict) or obj.get(key) is None:
            return default
        obj = obj[key]
    return obj


def copy_or_drop(value, target, key):
    """target[key] = a copy of value, or no such key when value is None."""
    if value is None:
        target.pop(key, None)
    else:
        target[key] = copy.deepcopy(value)


def controller_ref(obj):
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj, owner):
    ref = controller_ref(obj)
    return bool(ref) and ref.get("uid") == uid(owner)


def owner_reference(owner, controller):
    """An ownerReference to ``owner``; controller refs also block owner deletion (metav1.NewControllerRef)."""
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": name(owner), "uid": uid(owner)}
    if controller:
        ref.update({"controller": True, "blockOwnerDeletion": True})
    return ref


def is_paused(obj, cluster):
    """Reconciliation stops for the cluster.x-k8s.io/paused annotation (any value) or Cluster spec.paused (§3.1)."""
    return PAUSED in annotations(obj) or bool(cluster and dig(cluster, "spec", "paused"))


# --- label selectors ----------------------------------------------------------------------------------------------

def selector_matches(selector, obj_labels):
    """metav1.LabelSelector semantics; an empty selector matches nothing (as the MD controller treats it)."""
    selector = selector or {}
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return False
    if any(obj_labels.get(k) != v for k, v in match_labels.items()):
        return False
    for expr in expressions:
        key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in obj_labels
        if operator == "In" and not (present and obj_labels[key] in values):
            return False
        if operator == "NotIn" and present and obj_labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def selector_string(selector):
    """labels.Selector.String() of a LabelSelector: requirements sorted by key, as status.selector shows it."""
    selector = selector or {}
    parts = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, operator = expr.get("key"), expr.get("operator")
        values = ",".join(sorted(expr.get("values") or []))
        text = {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key,
                "DoesNotExist": f"!{key}"}.get(operator, key)
        parts.append((key, text))
    return ",".join(pair[1] for pair in sorted(parts))


def selector_with(selector, key, value):
    out = copy.deepcopy(selector or {})
    out.setdefault("matchLabels", {})[key] = value
    return out


# --- references ---------------------------------------------------------------------------------------------------

def ref_group(ref):
    """The API group of an object reference: v1beta1 ObjectReference apiVersion "g/v" or v1beta2 apiGroup."""
    if not ref:
        return None
    if ref.get("apiGroup") is not None:
        return ref["apiGroup"]
    api_version = ref.get("apiVersion") or ""
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def normalized_ref(ref):
    """(group, kind, name): the only parts of a ref that count for rollouts (API version and namespace ignored)."""
    if not ref or not ref.get("name"):
        return None
    return (ref_group(ref), ref.get("kind"), ref.get("name"))


# --- MachineDeployment --------------------------------------------------------------------------------------------

def replicas(obj, default=0):
    value = dig(obj, "spec", "replicas")
    return default if value is None else int(value)


def md_strategy(md):
    """(type, maxSurge, maxUnavailable); a missing strategy is what the webhook would default: RollingUpdate 1/0."""
    strategy = dig(md, "spec", "rollout", "strategy") if is_v1beta2(md) else dig(md, "spec", "strategy")
    strategy = strategy or {}
    rolling = strategy.get("rollingUpdate") or {}
    surge = rolling.get("maxSurge")
    unavailable = rolling.get("maxUnavailable")
    return (strategy.get("type") or "RollingUpdate", 1 if surge is None else surge, 0 if unavailable is None else unavailable)


def md_rollout_after(md):
    return parse_time(dig(md, "spec", "rollout", "after") if is_v1beta2(md) else dig(md, "spec", "rolloutAfter"))


def md_paused(md):
    return bool(dig(md, "spec", "paused"))


def md_deletion_order(md):
    if is_v1beta2(md):
        return dig(md, "spec", "deletion", "order")
    return dig(md, "spec", "strategy", "rollingUpdate", "deletePolicy")


def md_revision_history_limit(md):
    """v1beta1 only; a missing value is the webhook default 1 (v1beta2 has no limit: every old MS goes)."""
    if is_v1beta2(md):
        return None
    value = dig(md, "spec", "revisionHistoryLimit")
    return 1 if value is None else int(value)


def min_ready_seconds(obj):
    """minReadySeconds of an MD/MS (v1beta1 spec.minReadySeconds, v1beta2 spec.template.spec.minReadySeconds)."""
    if is_v1beta2(obj):
        return int(dig(obj, "spec", "template", "spec", "minReadySeconds", default=0))
    return int(dig(obj, "spec", "minReadySeconds", default=0))


def template_spec(obj):
    return dig(obj, "spec", "template", "spec", default={})


def rollout_identity(spec):
    """The four things that decide whether a template needs a rollout (reference §3.2), normalized."""
    spec = spec or {}
    bootstrap = spec.get("bootstrap") or {}
    config_ref = normalized_ref(bootstrap.get("configRef"))
    return {
        "version": spec.get("version") or "",
        "bootstrap": {"configRef": config_ref} if config_ref else {"dataSecretName": bootstrap.get("dataSecretName")},
        "infrastructureRef": normalized_ref(spec.get("infrastructureRef")),
        "failureDomain": spec.get("failureDomain") or "",
    }


# --- status counters (both API versions) --------------------------------------------------------------------------

def status_int(obj, field):
    """A v1beta2-semantics replica counter: status.<field> on v1beta2, status.v1beta2.<field> on v1beta1
    (readyReplicas/availableReplicas/upToDateReplicas); status.replicas is the same path in both."""
    if field == "replicas" or is_v1beta2(obj) or field not in ("readyReplicas", "availableReplicas", "upToDateReplicas"):
        return int(dig(obj, "status", field, default=0))
    return int(dig(obj, "status", "v1beta2", field, default=0))


def ms_available(ms):
    """The availableReplicas the MD rollout maths uses: v1beta1 status.availableReplicas (v1.10), v1beta2 status.availableReplicas."""
    return int(dig(ms, "status", "availableReplicas", default=0))


def conditions(obj):
    """The metav1 conditions list: status.conditions on v1beta2, status.v1beta2.conditions on v1beta1."""
    if is_v1beta2(obj):
        return dig(obj, "status", "conditions", default=[])
    return dig(obj, "status", "v1beta2", "conditions", default=[])


def condition(obj, ctype):
    for cond in conditions(obj):
        if cond.get("type") == ctype:
            return cond
    return None


def condition_true(obj, ctype):
    cond = condition(obj, ctype)
    return bool(cond) and cond.get("status") == "True"
