# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_refresh_stop
short_description: Whether the hardware refresh of a management cluster stops once it is planned
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Decides, from the plan of one management cluster (O(_input)), whether its refresh stops before the first wave,
    and with which result, reason and next step. In this order
  - A blocker of the whole management cluster (O(cluster_blockers), for example an older Cluster API) - V(failed).
  - Blocked objects when O(on_blocked=fail) - V(failed), naming every blocked object and its blockers.
  - Real runs only, when there is a wave to roll - the maintenance window has closed (V(stopped_window)), or has not
    opened yet and O(wait_for_window=false) (V(skipped)). In check mode the window is shown, not enforced, since a dry
    run is usually made before the window opens.
  - A real run with nothing to switch stops too, without a result of its own.
  - Used by the C(capi.rollout.hardware_refresh) role.
positional: _input
options:
  _input:
    description: The plan, as RV(capi.rollout.capi_refresh_plan#module:plan) (or P(capi.rollout.rollout_refresh_plan#filter)) returns it.
    type: dict
    required: true
  cluster_blockers:
    description: What stops the whole management cluster, in words.
    type: list
    elements: str
    default: []
  window:
    description: The maintenance window as P(capi.rollout.rollout_window#filter) returns it.
    type: dict
    default: {}
  refresh_id:
    description: The refresh id, named in the next step.
    type: str
    required: true
  on_blocked:
    description: V(fail) stops the management cluster when any object is blocked; V(skip) refreshes the others.
    type: str
    default: skip
  check_mode:
    description: Whether this is a check-mode run.
    type: bool
    default: false
  wait_for_window:
    description: Whether a real run waits for a window that has not opened yet.
    type: bool
    default: false
  lock_held:
    description:
      - Whether another run holds the lock now. A check run then does not fail on blocked objects (the other run's
        rollouts show as blockers; a real run would wait for the lock and plan again) and notes them instead.
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: Decide whether to stop after the plan
  ansible.builtin.set_fact:
    after_plan: >-
      {{ plan | capi.rollout.rollout_refresh_stop(cluster_blockers=blockers, window=window, refresh_id='hw-2026-11',
                                                  on_blocked='fail', check_mode=ansible_check_mode) }}
'''

RETURN = r'''
_value:
  description: The decision.
  type: dict
  contains:
    stop:
      description: Whether no wave is started.
      type: bool
    status:
      description: The management cluster's C(result), C(failure_reason) and C(next_step) when it stops for a reason;
        V(null) otherwise.
      type: dict
    notes:
      description: Notes for the management cluster's report entry (its blockers).
      type: list
      elements: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

refresh = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.refresh")


def rollout_refresh_stop(plan, cluster_blockers=None, window=None, refresh_id=None, on_blocked="skip", check_mode=False,
                         wait_for_window=False, lock_held=False):
    if not isinstance(plan, dict):
        raise AnsibleFilterError("rollout_refresh_stop: the input must be the plan (a dictionary)")
    if not refresh_id:
        raise AnsibleFilterError("rollout_refresh_stop: refresh_id is required")
    return refresh.stop_after_plan(plan, list(cluster_blockers or []), dict(window or {}), str(refresh_id),
                                   on_blocked=on_blocked, check_mode=bool(check_mode), wait_for_window=bool(wait_for_window),
                                   lock_held=bool(lock_held))


class FilterModule(object):
    def filters(self):
        return {"rollout_refresh_stop": rollout_refresh_stop}
