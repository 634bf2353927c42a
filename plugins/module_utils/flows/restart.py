# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The restart verb of flows.change (capi_rollout_restart): a rollout trigger now or at ``after``, or a switch
to another infrastructure template, one for every selected object (``infrastructure_ref``) or one per object
(``switches``) (core.restart decides)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client import targets
from ansible_collections.capi.rollout.plugins.module_utils.client import templates
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import plan as plans
from ansible_collections.capi.rollout.plugins.module_utils.core import record as records
from ansible_collections.capi.rollout.plugins.module_utils.core import restart as restarts
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref


def refuse_early(params):
    """An object named twice in ``switches`` (which of its templates?); every other refusal of a restart depends
    on the object."""
    seen = set()
    for item in params.get("switches") or []:
        name = _switch_name(item)
        if name in seen:
            kind = apiversion.rollout_kind(params.get("kind") or apiversion.MACHINE_DEPLOYMENT)
            raise RolloutError(f"switches names {kind} {name} more than once; nothing was changed",
                               ref=make_ref(kind, params.get("namespace"), name), reason="invalid_selection",
                               hint="give each object once, with the one template it is switched to")
        seen.add(name)


def _switch_name(item):
    # as core.selection reads names, so that the object it selects finds its template
    return str(item["name"]).strip()


def _infrastructure_refs(params):
    """{object name: the template it is switched to} of ``switches``; None without them (``infrastructure_ref``,
    if any, is every selected object's)."""
    if params.get("switches") is None:
        return None
    return {_switch_name(item): item["infrastructure_ref"] for item in params["switches"]}


def planner(run, selected, clusters, now, actor):
    params = run.module.params
    per_object = _infrastructure_refs(params)
    recording = records.Recording.from_params(params, actor)
    machine_sets = machines = None
    if restarts.is_past(params.get("after"), now):
        # One LIST tells whether a past time replaces anything (core.restart._rolls_nothing).
        if selected.kind == apiversion.MACHINE_DEPLOYMENT:
            machine_sets = run.machine_sets(selected)
        else:
            machines, _v = targets.list_kind(run.api, run.discovery, apiversion.MACHINE, selected.namespace,
                                             label_selector=keys.CONTROL_PLANE_NAME_LABEL)

    def plan(obj):
        if per_object is None:
            infrastructure_ref = params.get("infrastructure_ref")
        else:
            infrastructure_ref = per_object[obj["metadata"]["name"]]
        observed = plans.Observed(api_version=selected.version, cluster=clusters.get(views.cluster_name_of(obj)),
                                  machine_sets=machine_sets, machines=machines)
        return restarts.plan_restart(obj, now, after=params.get("after"), infrastructure_ref=infrastructure_ref,
                                     force=params.get("force"), recording=recording, observed=observed)
    return plan


def check_plans(run, planned):
    """Every template a planned switch points at must exist and be a machine template, checked before the first
    write (client.templates.check_templates: one GET for one template, one LIST per kind for several)."""
    required = {}
    for _obj, plan in planned:
        if not plan["changed"]:
            continue
        for item in plan.get("required_templates") or []:
            namespace = item.get("namespace") or plan["namespace"]
            key = (namespace, item["api_group"], item["kind"], item["name"])
            # the first object that needs a template is named when it is missing
            required.setdefault(key, (namespace, {"api_group": key[1], "kind": key[2], "name": key[3]}, plan["ref"]))
    if required:
        templates.check_templates(run.api, run.discovery, list(required.values()))
