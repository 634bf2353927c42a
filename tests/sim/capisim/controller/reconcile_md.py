"""MachineDeployment reconcile (reference §3.1): ensure ownership, plan MachineSets (mdplan), write them new-first,
record the revision, update status, then delete old MachineSets once the rollout is complete."""

import copy

from . import conditions
from . import mdplan
from . import model as m
from . import status


def machine_sets(ctx, md):
    """MSs controlled by the MD; orphans matching its selector are adopted, as the real controller does."""
    owned = []
    for ms in ctx.store.list("MachineSet", m.namespace(md)):
        if m.is_controlled_by(ms, md):
            owned.append(ms)
        elif m.controller_ref(ms) is None and not m.deleting(ms) and m.selector_matches(m.dig(md, "spec", "selector"), m.labels(ms)):
            adopted = copy.deepcopy(ms)
            adopted["metadata"].setdefault("ownerReferences", []).append(m.owner_reference(md, controller=True))
            owned.append(ctx.writer.update(adopted))
            ctx.log("adopted MachineSet %s into MachineDeployment %s", m.key_text(ms), m.name(md))
    return owned


def _ensure_metadata(ctx, md, cluster):
    """cluster-name label and a (non-controller) ownerReference to the Cluster."""
    wanted = copy.deepcopy(md)
    meta = wanted["metadata"]
    meta.setdefault("labels", {})[m.CLUSTER_NAME] = m.dig(md, "spec", "clusterName")
    refs = meta.setdefault("ownerReferences", [])
    if cluster is not None and not any(r.get("uid") == m.uid(cluster) for r in refs):
        refs.append(m.owner_reference(cluster, controller=False))
    return ctx.writer.update(wanted) if wanted["metadata"] != md["metadata"] else md


def _differs(current, desired):
    return any(current["metadata"].get(k) != desired["metadata"].get(k) for k in ("labels", "annotations", "ownerReferences")) \
        or current.get("spec") != desired.get("spec")


def _apply_plan(ctx, md, plan):
    originals = {m.name(ms): ms for ms in ctx.store.controlled_by("MachineSet", md)}
    for desired in plan.writes():
        current = originals.get(m.name(desired))
        if current is None:
            created = ctx.writer.create(desired)
            ctx.log("created MachineSet %s with %d replicas (%s)", m.key_text(created), m.replicas(created),
                    plan.create_reason or "no MachineSet matches the template")
        elif _differs(current, desired):
            ctx.writer.update(desired)
            before, after = m.replicas(current), m.replicas(desired)
            if before != after:
                ctx.log("scaled MachineSet %s from %d to %d", m.key_text(desired), before, after)
            else:
                ctx.log("updated MachineSet %s in place", m.key_text(desired))


def reconcile(ctx, md):
    cluster = ctx.cluster_of(md)
    paused = conditions.paused(md, cluster)
    if m.is_paused(md, cluster):
        ctx.write_status(md, status.with_paused(md, paused, ctx.now()))
        return
    if m.deleting(md):
        return  # the garbage collector removes the MachineSets (controller ownerReferences)
    md = _ensure_metadata(ctx, md, cluster)
    mss = machine_sets(ctx, md)
    for ms in mss:
        if m.labels(ms).get(m.DEPLOYMENT_NAME) != m.name(md):
            labelled = copy.deepcopy(ms)
            labelled["metadata"].setdefault("labels", {})[m.DEPLOYMENT_NAME] = m.name(md)
            ctx.writer.update(labelled)
    mss = ctx.store.controlled_by("MachineSet", md)
    now = ctx.now()
    live = {m.name(ms): [x for x in ctx.store.controlled_by("Machine", ms) if not m.deleting(x)] for ms in mss}
    infra_ref = m.dig(md, "spec", "template", "spec", "infrastructureRef")
    plan = mdplan.plan_reconcile(md, mss, ctx.logic, now, ctx.rng, live, ctx.template_exists(infra_ref, m.namespace(md)),
                                 ctx.in_place_accepts)
    failed = plan.new is None and plan.create_reason and not m.md_paused(md)
    if failed:
        ctx.log("cannot create a MachineSet for MachineDeployment %s: template %s does not exist",
                m.key_text(md), (infra_ref or {}).get("name"))
    _apply_plan(ctx, md, plan)
    if plan.revision is not None and m.annotations(md).get(m.REVISION) != plan.revision:
        annotated = copy.deepcopy(md)
        annotated["metadata"].setdefault("annotations", {})[m.REVISION] = plan.revision
        md = ctx.writer.update(annotated)

    mss = ctx.store.controlled_by("MachineSet", md)
    new_ms = ctx.store.get("MachineSet", m.namespace(md), m.name(plan.new)) if plan.new is not None else None
    machines = [x for x in ctx.store.list("Machine", m.namespace(md)) if m.selector_matches(m.dig(md, "spec", "selector"), m.labels(x))]
    new_status = status.md_status(md, mss, new_ms, machines, paused, now)
    up_to_date = new_status.get("upToDateReplicas") if m.is_v1beta2(md) else new_status.get("updatedReplicas")
    available = new_status.get("availableReplicas")
    # A paused MD only syncs (upstream sync() never cleans up: v1.10.10 machinedeployment_sync.go,
    # v1.14.0 core/reconcilers/machinedeployment/machinedeployment_sync.go); the rollout paths do.
    if not m.md_paused(md) and mdplan.deployment_complete(m.replicas(md, 1), new_status.get("replicas"), up_to_date,
                                                          available, new_status["observedGeneration"], m.generation(md)):
        for ms in mdplan.machine_sets_to_clean_up(md, [x for x in mss if new_ms is None or m.uid(x) != m.uid(new_ms)]):
            ctx.writer.delete(ms)
            ctx.log("deleted MachineSet %s (cleanup of old MachineSets)", m.key_text(ms))
        mss = ctx.store.controlled_by("MachineSet", md)
        new_status = status.md_status(md, mss, new_ms, machines, paused, now)
    if failed:
        status.keep_observed_generation(new_status, md)
    # A future rolloutAfter is acted on at the next event or periodic resync, as upstream (no requeue at that
    # time: v1.10.10 internal/controllers/machinedeployment/mdutil/util.go, v1.14.0 core/reconcilers/...).
    ctx.write_status(md, new_status)
