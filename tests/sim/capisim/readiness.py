"""Replica counters of MachineDeployments and KubeadmControlPlanes, read from the served version.

"Rollout complete" is CAPI's own DeploymentComplete: observedGeneration >= generation and
status.replicas == up-to-date == available == spec.replicas. Where the counters live differs:

- v1beta1 MD: updatedReplicas, availableReplicas.
- v1beta1 KCP: updatedReplicas, readyReplicas (it has no top-level availableReplicas).
- v1beta2 MD and KCP: upToDateReplicas, availableReplicas.
"""


def counts(obj, api_version):
    """{desired, replicas, up_to_date, available, generation, observed} (status counters None when unset)."""
    status = obj.get("status") or {}
    if api_version == "v1beta2":
        up_to_date, available = status.get("upToDateReplicas"), status.get("availableReplicas")
    elif obj["kind"] == "KubeadmControlPlane":
        up_to_date, available = status.get("updatedReplicas"), status.get("readyReplicas")
    else:
        up_to_date, available = status.get("updatedReplicas"), status.get("availableReplicas")
    return {"desired": obj["spec"].get("replicas"), "replicas": status.get("replicas"), "up_to_date": up_to_date,
            "available": available, "generation": obj["metadata"].get("generation"),
            "observed": status.get("observedGeneration")}


def is_complete(obj, api_version):
    c = counts(obj, api_version)
    return (c["observed"] is not None and c["observed"] >= c["generation"]
            and c["replicas"] == c["up_to_date"] == c["available"] == c["desired"])


def topology_reconciled(cluster, api_version):
    """A topology Cluster's TopologyReconciled condition is True (metav1 conditions: v1beta2 status.conditions,
    v1beta1 status.v1beta2.conditions)."""
    status = cluster.get("status") or {}
    items = status.get("conditions") if api_version == "v1beta2" else (status.get("v1beta2") or {}).get("conditions")
    return any(c.get("type") == "TopologyReconciled" and c.get("status") == "True" for c in items or [])


def describe(obj, api_version):
    """One line: kind namespace/name and its counters, for progress and timeout messages."""
    c = counts(obj, api_version)
    meta = obj["metadata"]
    return (f"{obj['kind']} {meta['namespace']}/{meta['name']}: desired {c['desired']}, replicas {c['replicas']}, "
            f"up-to-date {c['up_to_date']}, available {c['available']}, "
            f"observedGeneration {c['observed']}/{c['generation']}")
