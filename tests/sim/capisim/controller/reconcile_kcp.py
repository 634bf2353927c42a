"""KubeadmControlPlane reconcile: at most one Machine created or deleted per reconcile (kcpplan), then status."""

from . import conditions
from . import kcpplan
from . import model as m
from . import reconcile_machine
from . import status


def reconcile(ctx, kcp):
    cluster = ctx.cluster_of(kcp)
    paused = conditions.paused(kcp, cluster)
    if m.is_paused(kcp, cluster):
        ctx.write_status(kcp, status.with_paused(kcp, paused, ctx.now()))
        return
    if m.deleting(kcp):
        return
    now = ctx.now()
    machines = ctx.store.controlled_by("Machine", kcp)
    action, victim, note = kcpplan.plan(kcp, machines, now)
    failed = False
    if action == "create":
        infra_ref = kcpplan.infrastructure_ref(kcp)
        if ctx.template_exists(infra_ref, m.namespace(kcp)):
            cluster_name = m.name(cluster) if cluster is not None else m.labels(kcp).get(m.CLUSTER_NAME)
            created = ctx.writer.create(kcpplan.new_machine(kcp, cluster_name, ctx.rng))
            ctx.provisioning[m.uid(created)] = now
            ctx.log("created control plane Machine %s for KubeadmControlPlane %s (%s)", m.key_text(created), m.name(kcp), note)
        else:
            failed = True
            ctx.log("cannot create control plane Machines for %s: template %s does not exist", m.key_text(kcp), infra_ref.get("name"))
    elif action == "delete":
        answer = ctx.writer.delete(victim)
        ctx.log("deleted control plane Machine %s of KubeadmControlPlane %s (%s)", m.key_text(victim), m.name(kcp), note)
        if answer is not None:
            reconcile_machine.finalize(ctx, answer)
    machines = ctx.store.controlled_by("Machine", kcp)
    current = {m.name(x) for x in machines if not kcpplan.outdated_reasons(kcp, x, now)}
    # A future rolloutAfter is acted on at the next event or periodic resync (no requeue at that time:
    # v1.14.0 controlplane/kubeadm/reconcilers/kubeadmcontrolplane/kubeadmcontrolplane_controller.go).
    new_status = status.kcp_status(kcp, machines, current, paused, now)
    ctx.write_status(kcp, status.keep_observed_generation(new_status, kcp) if failed else new_status)
