# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_report_fleet
short_description: The fleet report of a hardware refresh from the results of its management clusters
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Makes the fleet report (report format 1, docs/report.md) of one run from the fact C(hardware_refresh_result) that
    the C(capi.rollout.hardware_refresh) role leaves on each management cluster (inventory host), in one step whatever
    the number of hosts.
  - A host that left no result (its batch had not run yet, or the run stopped before it) is listed as V(skipped) with
    the reason.
  - The run's C(started) and C(finished) are the earliest start and the latest end of its management clusters (their
    API servers' clocks) in an applied run; a check run has none.
  - The C(capi.rollout.rollout_report) role uses it.
positional: _input
options:
  _input:
    description:
      - The C(hardware_refresh_result) of the hosts that have one; each names its host in C(name).
    type: list
    elements: dict
    required: true
  hosts:
    description: The management clusters (inventory hosts) of the run, in report order; a host without a result is listed as not started.
    type: list
    elements: str
    required: true
  refresh_id:
    description: The refresh id of the run.
    type: str
    required: true
  mode:
    description: V(apply) or V(check).
    type: str
    required: true
  run_by:
    description: Who started the run.
    type: str
  window:
    description: The maintenance window (C(start), C(end)); kept when either is set.
    type: dict
  slice:
    description: The slice of a sliced job (AWX job slicing) this run is; empty for a whole run.
    type: str
seealso:
  - plugin: capi.rollout.rollout_report_summary
    plugin_type: filter
'''

EXAMPLES = r'''
- name: The fleet report of this play's management clusters
  ansible.builtin.set_fact:
    fleet_report: >-
      {{ ansible_play_hosts_all | map('extract', hostvars) | selectattr('hardware_refresh_result', 'defined')
         | map(attribute='hardware_refresh_result') | list
         | capi.rollout.rollout_report_fleet(hosts=ansible_play_hosts_all, refresh_id='hw-2026-11', mode='apply',
                                             run_by='ops@example.com') }}
  run_once: true
'''

RETURN = r'''
_value:
  description: The fleet report (report format 1).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

fleet = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.report.fleet")


def rollout_report_fleet(results, hosts, refresh_id, mode, run_by=None, window=None, slice=None):
    """The fleet report of one run (see DOCUMENTATION)."""
    if not isinstance(results, (list, tuple)) or not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("rollout_report_fleet: give the results as a list and hosts as a list")
    if mode not in ("apply", "check"):
        raise AnsibleFilterError(f"rollout_report_fleet: mode must be apply or check, got {mode!r}")
    return fleet.fleet_report(list(results), list(hosts), refresh_id, mode, run_by, window=window, slice_name=slice)


class FilterModule(object):
    def filters(self):
        return {"rollout_report_fleet": rollout_report_fleet}
