# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The undo verb of flows.change (capi_rollout_undo). What it reads before core.undo.plan_undo can decide, with a constant number of
requests whatever the number of MachineDeployments:

1. the MachineSets of the namespace (one LIST; skipped when every object already records the
   ``rollout_id``, or is a KubeadmControlPlane);
2. a first plan of every object without control plane and templates: every refusal that needs no
   more reading (paused, topology-owned, a KubeadmControlPlane without a recorded topology change, revision not
   found, ...) fails here;
3. for the objects that change only: their control planes (Cluster ``spec.controlPlaneRef``; one
   GET, or one LIST when several KubeadmControlPlanes) for the version skew check, and the
   templates the target revisions reference (one LIST per template kind, with a name field
   selector when only one name is needed);
4. the final plan with all of it. A failed test of its patch (or a 409) on write re-plans with the same context.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client import reading
from ansible_collections.capi.rollout.plugins.module_utils.client import templates as templates_client
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core import plan as plans
from ansible_collections.capi.rollout.plugins.module_utils.core import record as records
from ansible_collections.capi.rollout.plugins.module_utils.core import undo as undos
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import single_ref


RESULT_KEYS = ("revision_before", "history_revision", "from_revision", "to_revision", "target_source", "target_machine_set",
               "target_template", "not_restored", "hold")


def refuse_early(params):
    """Fail before any request for kinds that have no undo (anything but a MachineDeployment or a KubeadmControlPlane),
    with core.undo's message. A KubeadmControlPlane is refused by core.undo.plan_undo after it and its Cluster are read
    (still before any write) unless it is the revert of its recorded topology change."""
    ref = single_ref(params)
    undos.refuse_kind(params.get("kind") or apiversion.MACHINE_DEPLOYMENT, ref)
    if params.get("undo_rollout_id") is not None and params.get("to_revision"):
        raise RolloutError(f"to_revision {params['to_revision']} and undo_rollout_id {params['undo_rollout_id']} both say "
                           "where to go back to", ref=ref, hint="give one of them", reason=inputs.INVALID_REVISION)


def planner(run, selected, clusters, now, actor):
    """plan(obj) -> the final undo plan of ``obj``, after reading what the changing objects need.
    Raises the first refusal (RolloutError) before anything is written."""
    params = run.module.params
    recording = records.Recording.from_params(params, actor)
    rollout_id = params.get("rollout_id")
    objects = selected.objects
    if rollout_id is not None and all(hist.applied_rollout(obj, rollout_id, undos.ACTIONS) for obj in objects) \
            or all(obj.get("kind") == apiversion.KUBEADM_CONTROL_PLANE for obj in objects):
        machine_sets = []  # nothing to undo, or control planes: they have no MachineSets
    else:
        machine_sets, _version = reading.list_kind(run.api, run.discovery, apiversion.MACHINE_SET, selected.namespace)
    machines = None

    def plan_with(obj, control_plane=None, existing=None):
        observed = plans.Observed(api_version=selected.version, cluster=clusters.get(views.cluster_name_of(obj)),
                                  machine_sets=machine_sets, machines=machines, control_plane=control_plane,
                                  existing_templates=existing)
        return undos.plan_undo(obj, now, to_revision=params.get("to_revision"), force=params.get("force"),
                               recording=recording, observed=observed, undo_rollout_id=params.get("undo_rollout_id"))

    changing = [obj for obj in objects if plan_with(obj)["changed"]]
    if not changing:
        return plan_with
    if recording.enabled and any(hist.counts_wanted(obj) for obj in changing):
        # the Machine counts of the revision the undo leaves, kept in its record entry (core.history.with_machine_counts)
        machines, _version = reading.list_kind(run.api, run.discovery, apiversion.MACHINE, selected.namespace)
    cluster_names = {views.cluster_name_of(obj) for obj in changing} - {None}
    found, cp_warnings = reading.control_planes(run.api, run.discovery, clusters, cluster_names)
    required = []
    for obj in changing:
        required.extend(undos.required_templates(plan_with(obj)))
    existing = templates_client.existing_templates(run.api, run.discovery, required)

    def plan(obj):
        cluster_name = views.cluster_name_of(obj)
        result = plan_with(obj, found.get(cluster_name), existing)
        if result["changed"]:
            result["warnings"] = cp_warnings.get(cluster_name, []) + result["warnings"]
        return result

    return plan


def check_plans(run, planned):
    """The templates of the target revisions were read by the planner (core.undo refuses a missing one)."""


def selection_options(params):
    """Its own options select its objects."""
    return params


def write_prerequisites(run, planned):
    """An undo writes nothing but its objects."""
