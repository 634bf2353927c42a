"""Cluster reconcile: phase, control plane initialization and the v1beta2 replica counters (no infrastructure)."""

from . import conditions
from . import model as m
from . import status


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
    mds = [md for md in ctx.store.list("MachineDeployment", m.namespace(cluster))
           if m.dig(md, "spec", "clusterName") == m.name(cluster)]
    ctx.write_status(cluster, status.cluster_status(cluster, control_plane(ctx, cluster), mds, paused, ctx.now()))
