# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pause verb of flows.change (capi_rollout_pause): pause or resume a rollout (core.pause decides)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import pause as pauses
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views


def refuse_early(params):
    """Nothing to refuse before reading: every refusal of a pause depends on the object."""


def planner(run, selected, clusters, now, actor):
    params = run.module.params

    def plan(obj):
        return pauses.plan_pause(obj, paused=params["paused"], api_version=selected.version,
                                 cluster=clusters.get(views.cluster_name_of(obj)), now=now,
                                 rollout_id=params.get("rollout_id"), reason=params.get("reason"), actor=actor,
                                 record=params.get("rollout_id") is not None or params.get("reason") is not None)
    return plan


def check_plans(run, planned):
    """A pause references nothing that must exist."""
