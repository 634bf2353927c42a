# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pause verb of flows.change (capi_rollout_pause): pause or resume a rollout (core.pause decides)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import pause as pauses
from ansible_collections.capi.rollout.plugins.module_utils.core import plan as plans
from ansible_collections.capi.rollout.plugins.module_utils.core import record as records
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views


RESULT_KEYS = ()


def refuse_early(params):
    """Nothing to refuse before reading: every refusal of a pause depends on the object."""


def planner(run, selected, clusters, now, actor):
    params = run.module.params
    # a pause records only when asked to (rollout_id or reason), so its patch equals clusterctl's otherwise
    recording = records.Recording.from_params(
        params, actor, enabled=params.get("rollout_id") is not None or params.get("reason") is not None)

    def plan(obj):
        observed = plans.Observed(api_version=selected.version, cluster=clusters.get(views.cluster_name_of(obj)))
        return pauses.plan_pause(obj, paused=params["paused"], now=now, recording=recording, observed=observed)
    return plan


def check_plans(run, planned):
    """A pause references nothing that must exist."""


def selection_options(params):
    """Its own options select its objects."""
    return params


def write_prerequisites(run, planned):
    """A pause writes nothing but its objects."""
