# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The restart verb of flows.change (capi_rollout_restart): a rollout trigger now or at ``after``, or a switch
to another infrastructure template (core.restart decides)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client import targets
from ansible_collections.capi.rollout.plugins.module_utils.client import templates
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import restart as restarts
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views


def refuse_early(params):
    """Nothing to refuse before reading: every refusal of a restart depends on the object."""


def planner(run, selected, clusters, now, actor):
    params = run.module.params
    machine_sets = machines = None
    if restarts.is_past(params.get("after"), now):
        # One LIST tells whether a past time replaces anything (core.restart._rolls_nothing).
        if selected.kind == apiversion.MACHINE_DEPLOYMENT:
            machine_sets = run.machine_sets(selected)
        else:
            machines, _v = targets.list_kind(run.api, run.discovery, apiversion.MACHINE, selected.namespace,
                                             label_selector=keys.CONTROL_PLANE_NAME_LABEL)

    def plan(obj):
        return restarts.plan_restart(obj, now, api_version=selected.version, cluster=clusters.get(views.cluster_name_of(obj)),
                                     after=params.get("after"), infrastructure_ref=params.get("infrastructure_ref"),
                                     force=params.get("force"), rollout_id=params.get("rollout_id"),
                                     reason=params.get("reason"), actor=actor, history_limit=params.get("history_limit"),
                                     machine_sets=machine_sets, machines=machines)
    return plan


def check_plans(run, planned):
    """Every template a planned switch points at must exist (one GET per distinct template)."""
    seen = set()
    for _obj, plan in planned:
        if not plan["changed"]:
            continue
        for item in plan.get("required_templates") or []:
            key = (item["api_group"], item["kind"], item["name"], item.get("namespace") or plan["namespace"])
            if key in seen:
                continue
            seen.add(key)
            templates.template_exists(run.api, run.discovery, key[3],
                                      {"api_group": key[0], "kind": key[1], "name": key[2]}, ref=plan["ref"])
