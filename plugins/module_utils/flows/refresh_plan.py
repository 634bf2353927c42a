# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_refresh_plan: the plan of a hardware refresh of one management cluster, read and made in one call.

Per namespace, the MachineDeployments (narrowed by the label selectors) and the KubeadmControlPlanes are read and
described as capi_rollout_info describes them (one LIST per kind, the Clusters, the MachineSets), with the
MachineHealthChecks that cover each MachineDeployment (core.healthchecks: one LIST, and the Machines when there are
some); the objects the
refresh covers are picked with core.refresh (select_objects, clone_settings); then the target template of each is
planned as capi_machine_template with ``objects`` plans it in check mode (flows/machine_template.check_objects):
read, planned, its create sent as a server-side dry run; a MachineDeployment a Cluster topology manages gets its
change planned in its Cluster instead (plan_topology, core.topology.refresh_outcome), the Cluster write sent as a
server-side dry run; whether the switches replace the Machines or CAPI may update them in place is
core.inplace's (one LIST of ExtensionConfigs). When asked, the lock is looked at first, as capi_rollout_lock
in check mode does. The plan itself (actions, blockers, waves) is core.refresh.refresh_plan's. Nothing is ever
written, in check mode or not.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client import reading
from ansible_collections.capi.rollout.plugins.module_utils.client import templates as templates_client
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import healthchecks
from ansible_collections.capi.rollout.plugins.module_utils.core import inplace
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core import refresh
from ansible_collections.capi.rollout.plugins.module_utils.core import topology as topologies
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref
from ansible_collections.capi.rollout.plugins.module_utils.flows import lock as locks
from ansible_collections.capi.rollout.plugins.module_utils.flows import machine_template
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import Run, resource_entries, warn_status


def _read(run, reads, kind, namespace, label_selectors, topology=None):
    """The info entries of every ``kind`` object of ``namespace`` matching ``label_selectors``; a complete list
    (no selectors) also answers the clones' reads of those objects (``reads``). ``topology`` ({ref: (object, its
    Cluster)}) gets the objects a Cluster topology manages."""
    selected = run.select_kind(kind, namespace, label_selectors)
    objects = selected.objects
    if not label_selectors:
        resource = apiversion.resource(kind, selected.version)
        reads.remember(resource["group"], selected.version, resource["plural"], namespace, objects)
    if not objects and not reading.namespace_exists(run.api, namespace):
        run.module.warn(f"namespace {namespace} does not exist: nothing to refresh there (check the namespace)")
    machine_sets = run.machine_sets(selected) if objects else []
    clusters = run.clusters(selected)
    if topology is not None:
        for obj in objects:
            cluster = clusters.get(views.cluster_name_of(obj))
            if topologies.manages(obj, cluster):
                topology[make_ref(kind, namespace, obj["metadata"]["name"])] = (obj, cluster)
    entries = resource_entries(objects, clusters, selected.version, run.api.server_now(), machine_sets)
    if kind == apiversion.MACHINE_DEPLOYMENT and objects:
        health = health_coverage(run, selected.namespace, objects, selected.version)
        for entry in entries:
            entry["health"] = health.get(entry["name"])
    warn_status(run.module, entries)
    return entries


def health_coverage(run, namespace, machine_deployments, version):
    """{name: core.healthchecks.coverage} of the MachineDeployments of ``namespace``: one LIST of its
    MachineHealthChecks, and one of its Machines when there is one."""
    mhcs = reading.list_kind_at(run.api, run.discovery, apiversion.MACHINE_HEALTH_CHECK, namespace)[0]
    machines = reading.list_kind_at(run.api, run.discovery, apiversion.MACHINE, namespace)[0] if mhcs else []
    return {md["metadata"]["name"]: healthchecks.coverage(md, mhcs, machines, version) for md in machine_deployments}


def read_namespaces(run, reads, namespaces, label_selectors, topology=None):
    """(MachineDeployment entries, control plane entries) of ``namespaces``; ``topology`` as _read."""
    machine_deployments, control_planes = [], []
    for namespace in namespaces:
        machine_deployments.extend(_read(run, reads, apiversion.MACHINE_DEPLOYMENT, namespace, label_selectors, topology))
        control_planes.extend(_read(run, reads, apiversion.KUBEADM_CONTROL_PLANE, namespace, None, topology))
    return machine_deployments, control_planes


def plan_clones(run, reads, covered):
    """capi_machine_template's ``results`` (check mode) for the target template of every covered object a clone is planned
    for (topology-owned objects have none: their ClusterClass decides their templates), and the diff of each new
    template that passed its checks."""
    requests = refresh.clone_requests([entry for entry in covered if not entry.get("topology_owned")])
    if not requests:
        return [], []
    refs = [machine_template.object_ref(entry, entry["namespace"]) for entry in requests]
    todo, failed = machine_template.check_objects(run, [machine_template.object_request(entry) for entry in requests], reads)
    diffs = [clone.plan["diff"] for index, clone in enumerate(todo) if index not in failed and clone.created]
    return machine_template.object_results(run.module, refs, todo, failed), diffs


def plan_topology(run, covered, topology):
    """({ref: outcome} of core.topology.refresh_outcome, the diffs of the Cluster writes) for the covered objects a Cluster
    topology manages (``topology``: {ref: (object, its Cluster)}): new hardware through a per-MD variable override or,
    for a control plane, a Cluster-level variable (path (a) of docs/clusterclass.md), a switch to another worker
    class (path (b)), or a rebase onto a clone of the ClusterClass (path (c): the creates of the clone and its
    template sent as dry runs too), its Cluster write sent as a server-side dry run (the run's requests are dry runs), and
    with --diff the template the topology will generate (core.topology.generated_diff). One GET per ClusterClass, per
    template of another worker class where path (a) does not cover an MD, and with --diff per object its template."""
    classes, read, out, diffs, cloned, new = {}, {}, {}, [], set(), set()
    for entry in covered:
        if entry["ref"] not in topology:
            continue
        obj, cluster = topology[entry["ref"]]
        try:
            cclass = reading.cluster_class(run.api, cluster, classes)
        except RolloutError as err:
            if err.reason != "not_found":
                raise
            continue  # a topology naming no ClusterClass that exists: no path, blocked as managed by a topology
        overrides = (entry.get("clone") or {}).get("overrides") or {}
        # --diff shows the template the topology will generate against the current one: one GET of it then
        current = templates_client.infrastructure_template(run.api, run.discovery, obj, entry["kind"]) \
            if run.module._diff else None
        outcome, owner = topologies.refresh_outcome(
            cclass, cluster, obj, entry["ref"], ((entry.get("template") or {}).get("infrastructure_ref") or {}).get("kind"),
            overrides, kind=entry["kind"], worker_templates=templates_client.worker_class_templates(
                run.api, run.discovery, cclass, cluster, obj, overrides, read, kind=entry["kind"]), template=current)
        clone = (outcome.get("topology") or {}).get("clone") if owner is not None else None
        if clone is not None and clone["name"] not in cloned:
            # path (c): the creates of the ClusterClass clone and its template, as dry runs, once per clone
            try:
                _template_made, class_made = templates_client.create_class_clone(run.api, run.discovery, clone, entry["ref"])
            except machine_template.FAILURES as err:
                owner, outcome = None, dict(outcome, ok=False, msg=f"the dry run of the ClusterClass clone failed: "
                                                                   f"{run.error(err).msg}")
            else:
                cloned.add(clone["name"])
                if class_made:
                    new.add(clone["name"])
                diffs.append(clone["diff"])
        if owner is not None and clone is not None and clone["name"] in new:
            # CAPI's Cluster webhook would refuse a rebase onto a class the dry run did not make: not sent
            outcome["topology"] = dict(outcome["topology"], unchecked=topologies.unchecked_rebase(owner["ref"], clone["name"]))
            diffs.append(owner["diff"])
        elif owner is not None:
            try:
                run.api.patch_json(reading.path_of(owner["kind"], owner["api_version"], owner["namespace"],
                                                   owner["name"]), owner["patch"])
            except ApiError as err:
                failed = api_error(err, ref=owner["ref"], verb="patch", namespace=owner["namespace"], host=run.api.host,
                                   resource=apiversion.resource(owner["kind"], owner["api_version"].rpartition("/")[2]))
                outcome = dict(outcome, ok=False, msg=f"the dry run of the Cluster write failed: {failed.msg}")
            else:
                diffs.append(owner["diff"])
                if outcome["topology"]["generated"]:
                    diffs.append(outcome["topology"]["generated"])
        out[entry["ref"]] = outcome
    return out, diffs


def in_place_mode(run, covered, in_place):
    """What the switches of the ``covered`` objects do with their Machines (core.inplace.mode for the option ``in_place``, as
    capi_rollout_restart decides it): one LIST of ExtensionConfigs on a v1beta2 management cluster with something to
    switch (client.extensions)."""
    if not covered:
        return None

    return inplace.mode(lambda: run.in_place_possible(covered[0]["api_version"].rpartition("/")[2]), in_place)


def _max_in_flight(params):
    try:
        refresh.wave_size(params["max_in_flight"], 1)
    except ValueError as err:
        return [inputs.Problem("max_in_flight", params["max_in_flight"], inputs.INVALID_SETTING, f"{err} (option max_in_flight)")]
    return []


# max_in_flight as a wave's size, the settings' ranges (the lock's duration among them); it only reads (core.inputs)
GATE = inputs.Gate((_max_in_flight, inputs.bounds()), ending=inputs.NOTHING_READ)


def run_refresh_plan(module):
    params = module.params
    run = Run(module, GATE)
    # the creates of the target templates are only ever checked, as server-side dry runs
    run.connect(dry_run=True)
    reads = templates_client.Reads(run.api, by_list=True)
    # the lock first: a change of its Lease after this look (another run's renewal or release) is then seen by
    # the caller when it takes the lock, and the plan made again
    lock = params["lock"]
    probed = locks.probe(run, lock["name"], lock["namespace"], lock["holder"], lock["lease_duration_seconds"]) if lock else None
    topology = {}
    try:
        machine_deployments, control_planes = read_namespaces(run, reads, params["namespaces"], params["label_selectors"],
                                                              topology)
    except machine_template.FAILURES as err:
        run.fail(err)
    selected = refresh.select_objects(machine_deployments, control_planes, clusters=params["clusters"],
                                      names=params["machine_deployments"], control_plane=params["control_plane"],
                                      workers=params["workers"], narrowed=bool(params["label_selectors"]))
    covered = refresh.with_clone_settings(selected, params["templates"])
    clones, diffs = ([], []) if params["restart"] else plan_clones(run, reads, covered)
    outcomes = refresh.clone_outcomes(clones)
    if not params["restart"]:
        try:
            planned, topology_diffs = plan_topology(run, covered, topology)
            outcomes.update(planned)
            diffs = diffs + topology_diffs
        except machine_template.FAILURES as err:
            run.fail(err)
    try:
        switches = None if params["restart"] else in_place_mode(run, covered, params["in_place"])
    except machine_template.FAILURES as err:
        run.fail(err)
    # the plan is returned, not what was read to make it: a result of a few hundred kilobytes costs the Ansible
    # process more than this whole module (docs/performance.md)
    plan = refresh.refresh_plan(covered, outcomes, control_planes=control_planes,
                                refresh_id=params["refresh_id"], mode="check" if module.check_mode else "apply",
                                max_in_flight=params["max_in_flight"], canary=params["canary"], restart=params["restart"],
                                field_owners=params["field_owners"], on_delete=params["on_delete"], in_place=switches)
    out = run.result(changed=False, plan=plan, lock=probed,
                     api_version=next((entry["api_version"] for entry in machine_deployments), None))
    if module._diff:
        out["diff"] = diffs
    module.exit_json(**out)
