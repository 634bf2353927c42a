"""Cluster reconcile: phase, control plane initialization and the v1beta2 replica counters (no infrastructure)."""

from . import conditions
from . import model as m
from . import reconcile_topology
from . import status
from . import topology


def control_plane(ctx, cluster):
    ref = m.dig(cluster, "spec", "controlPlaneRef")
    if not ref or ref.get("kind") != "KubeadmControlPlane":
        return None
    return ctx.store.get("KubeadmControlPlane", m.namespace(cluster), ref.get("name"))


def reconcile(ctx, cluster):
    paused = conditions.paused(cluster, cluster)
    if m.is_paused(cluster, cluster):
        ctx.write_status(cluster, status.with_paused(cluster, paused, ctx.now()))
        return
    topology_condition = None
    class_name = topology.class_name(cluster) if ctx.topology else None
    cclass = ctx.store.get("ClusterClass", m.namespace(cluster), class_name) if class_name else None
    # Labels-only topology clusters (fleet spec topology_owned) name a ClusterClass that does not exist: left alone.
    if cclass is not None and not m.deleting(cluster):
        topology_condition = reconcile_topology.reconcile(ctx, cluster, cclass)
        cluster = ctx.store.get("Cluster", m.namespace(cluster), m.name(cluster)) or cluster
    mds = [md for md in ctx.store.list("MachineDeployment", m.namespace(cluster))
           if m.dig(md, "spec", "clusterName") == m.name(cluster)]
    ctx.write_status(cluster, status.cluster_status(cluster, control_plane(ctx, cluster), mds, paused, ctx.now(),
                                                    topology_condition))
