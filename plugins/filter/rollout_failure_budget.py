# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_failure_budget
short_description: Whether the failure budget of a hardware refresh is spent after the batches so far
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - C(playbooks/hardware_refresh.yml) rolls its management clusters in batches (C(batch_size)). After each batch it asks
    this filter whether more than O(budget_percent) % of the management clusters that ran so far - in every batch,
    not only the last one - failed; the later batches are not started then.
  - V(0) - the first failure spends the budget. V(100) - the budget is never spent, whatever the batch size (one
    management cluster per batch included).
positional: _input
options:
  _input:
    description: The results of the management clusters that ran (their C(hardware_refresh_result), named by C(name)).
    type: list
    elements: dict
    required: true
  budget_percent:
    description: The failure budget, C(failure_budget_percent) - a whole number from 0 to 100 (survey text is accepted).
    type: raw
    required: true
  hosts:
    description: Every management cluster of the run, in order (C(ansible_play_hosts_all)).
    type: list
    elements: str
    required: true
  failed_hosts:
    description: The management clusters that failed without leaving a result (a task of the play outside the role).
    type: list
    elements: str
    default: []
'''

EXAMPLES = r'''
- name: Stop the later batches when the failure budget is spent
  ansible.builtin.meta: end_play
  when: _budget.stop
  vars:
    _budget: >-
      {{ ansible_play_hosts_all | map('extract', hostvars) | selectattr('hardware_refresh_result', 'defined')
         | map(attribute='hardware_refresh_result') | list
         | capi.rollout.rollout_failure_budget(budget_percent=failure_budget_percent, hosts=ansible_play_hosts_all) }}
'''

RETURN = r'''
_value:
  description: The decision.
  type: dict
  contains:
    spent:
      description: Whether more than O(budget_percent) % of the management clusters that ran failed.
      type: bool
    stop:
      description: Whether the budget is spent and management clusters are left that did not run.
      type: bool
    failed:
      description: The management clusters that failed, sorted.
      type: list
      elements: str
    total:
      description: How many management clusters ran.
      type: int
    not_started:
      description: The management clusters that did not run (yet), in order.
      type: list
      elements: str
    message:
      description: What stops and why, naming the failures and the management clusters not started; V(null) unless RV(_value.stop).
      type: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

refresh = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.refresh")


def _percent(value):
    """The budget as a whole number 0-100; survey answers are text."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or int(text) > 100:
        raise AnsibleFilterError(f"failure_budget_percent must be a whole number from 0 to 100 (0: the first failed "
                                 f"management cluster stops the later batches, 100: none does), got {value!r}")
    return int(text)


def rollout_failure_budget(results, budget_percent=None, hosts=None, failed_hosts=None):
    if not isinstance(results, list):
        raise AnsibleFilterError("rollout_failure_budget: the input must be the list of the management clusters' results")
    if hosts is None:
        raise AnsibleFilterError("rollout_failure_budget: hosts is required")
    return refresh.failure_budget(results, _percent(budget_percent), list(hosts), list(failed_hosts or []))


class FilterModule(object):
    def filters(self):
        return {"rollout_failure_budget": rollout_failure_budget}
