"""Applies capisim.controller.topology's desired state of a topology Cluster to the API server.

Order and rules as v1.14.0 core/reconcilers/topology/cluster/reconcile_state.go (same at v1.10.10
internal/controllers/topology/cluster/reconcile_state.go): new templates are created before the object that refers to
them; the KubeadmControlPlane and MachineDeployments are written by server-side apply (field manager capi-topology,
force) only when the apply would change something; the control plane's old machine template is deleted right after
the KubeadmControlPlane moved off it (reconcileControlPlane); a MachineDeployment's old templates once no
MachineSet uses them any more (core/reconcilers/topology/machineset: DeleteTemplateIfUnused when its MachineSet goes);
MachineDeployments no longer in the topology are deleted. Returns the TopologyReconciled condition.
"""

from . import conditions as c
from . import model as m
from . import topology as t


def _current(ctx, cluster):
    ns = m.namespace(cluster)
    cp_ref = m.dig(cluster, "spec", "controlPlaneRef")
    kcp = ctx.store.get("KubeadmControlPlane", ns, cp_ref.get("name")) if cp_ref else None
    kcp_infra = None
    if kcp is not None:
        infra_ref = (m.dig(kcp, "spec", "machineTemplate", "spec", "infrastructureRef") if m.is_v1beta2(kcp)
                     else m.dig(kcp, "spec", "machineTemplate", "infrastructureRef")) or {}
        kcp_infra = ctx.store.get("DockerMachineTemplate", ns, infra_ref.get("name"))
    mds = {}
    for md in _topology_mds(ctx, cluster):
        spec = m.template_spec(md)
        mds[m.labels(md)[t.TOPOLOGY_MD_NAME]] = (
            md, ctx.store.get("KubeadmConfigTemplate", ns, m.dig(spec, "bootstrap", "configRef", "name")),
            ctx.store.get("DockerMachineTemplate", ns, m.dig(spec, "infrastructureRef", "name")))
    return {"control_plane": kcp, "control_plane_infra": kcp_infra, "machine_deployments": mds}


def _topology_mds(ctx, cluster):
    return [md for md in ctx.store.list("MachineDeployment", m.namespace(cluster))
            if m.labels(md).get(m.CLUSTER_NAME) == m.name(cluster) and t.OWNED in m.labels(md)
            and t.TOPOLOGY_MD_NAME in m.labels(md)]


def _create_template(ctx, template):
    if m.uid(template) is None:
        ctx.writer.create(template)
        ctx.log("topology: created %s %s (rotation or new)", template["kind"], m.key_text(template))


def _apply_if_changed(ctx, current, desired):
    if current is not None and t.contains(current, desired):
        return current
    answer = ctx.writer.apply(desired, t.TOPOLOGY_MANAGER)
    ctx.log("topology: applied %s %s", desired["kind"], m.key_text(desired))
    return answer


def _templates_in_use(ctx, md):
    used = set()
    for obj in [md] + ctx.store.controlled_by("MachineSet", md):
        spec = m.template_spec(obj)
        used.add(("KubeadmConfigTemplate", m.dig(spec, "bootstrap", "configRef", "name")))
        used.add(("DockerMachineTemplate", m.dig(spec, "infrastructureRef", "name")))
    return used


def reconcile(ctx, cluster, cclass):
    ns = m.namespace(cluster)

    def get_template(kind, name):
        return ctx.store.get(kind, ns, name)
    current = _current(ctx, cluster)
    try:
        desired = t.desired_state(cluster, cclass, get_template, current, ctx.release.topology_rollout_after, ctx.rng)
    except LookupError as err:
        ctx.log("topology: %s: %s", m.key_text(cluster), err)
        return c.cond("TopologyReconciled", False, "ReconcileFailed", str(err))
    if desired.control_plane is not None:
        if desired.control_plane_infra is not None:
            _create_template(ctx, desired.control_plane_infra)
        kcp = _apply_if_changed(ctx, current["control_plane"], desired.control_plane)
        old_infra = current["control_plane_infra"]
        if old_infra is not None and m.name(old_infra) != m.name(desired.control_plane_infra):
            ctx.writer.delete(old_infra)
            ctx.log("topology: deleted old control plane template %s", m.key_text(old_infra))
        ref = {"apiGroup": m.CONTROLPLANE_GROUP, "kind": "KubeadmControlPlane", "name": m.name(kcp)} if m.is_v1beta2(cluster) \
            else {"apiVersion": kcp["apiVersion"], "kind": "KubeadmControlPlane", "name": m.name(kcp), "namespace": ns}
        if not t.contains(m.dig(cluster, "spec", "controlPlaneRef"), ref):
            ctx.writer.apply({"apiVersion": cluster["apiVersion"], "kind": "Cluster",
                              "metadata": {"name": m.name(cluster), "namespace": ns}, "spec": {"controlPlaneRef": ref}},
                             t.TOPOLOGY_MANAGER)
    for topology_name, want in desired.machine_deployments.items():
        _create_template(ctx, want.bootstrap)
        _create_template(ctx, want.infra)
        current_md = current["machine_deployments"].get(topology_name, (None,))[0]
        md = _apply_if_changed(ctx, current_md, want.md)
        in_use = _templates_in_use(ctx, md)
        for kind in t.TEMPLATE_KINDS:
            for template in ctx.store.list(kind, ns):
                labels = m.labels(template)
                if labels.get(m.CLUSTER_NAME) == m.name(cluster) and labels.get(t.TOPOLOGY_MD_NAME) == topology_name \
                        and t.OWNED in labels and (kind, m.name(template)) not in in_use:
                    ctx.writer.delete(template)
                    ctx.log("topology: deleted unused template %s %s", kind, m.key_text(template))
    for topology_name, (md, _ms, _templates) in current["machine_deployments"].items():
        if topology_name not in desired.machine_deployments and not m.deleting(md):
            ctx.writer.delete(md)
            ctx.log("topology: deleted MachineDeployment %s (no longer in the topology)", m.key_text(md))
    return c.cond("TopologyReconciled", True, "ReconcileSucceeded")
