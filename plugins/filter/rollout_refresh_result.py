# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_refresh_result
short_description: The result of the hardware refresh of one management cluster, as an entry of the fleet report
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Puts what the C(capi.rollout.hardware_refresh) role recorded together into one entry of C(management_clusters) of the
    fleet report (report format 1, docs/report.md) - the fact C(hardware_refresh_result).
  - The result is the one a step decided (O(status), for example a failed wave or a closed window), else V(planned) in
    check mode, else V(partial) when objects are still pending or running or only some were skipped, V(skipped) when
    all were, and V(succeeded).
positional: _input
options:
  _input:
    description: The objects, a dictionary from object reference (C(ref)) to its report entry (P(capi.rollout.rollout_refresh_step#filter)).
    type: dict
    required: true
  order:
    description: The references of the objects in plan order; the report lists them so.
    type: list
    elements: str
    default: []
  status:
    description: C(result), C(failure_reason) and C(next_step) as a step decided them (each V(null) when none did).
    type: dict
    default: {}
  mode:
    description: V(apply) or V(check).
    type: str
    default: apply
  refresh_id:
    description: The refresh id, named in the next step.
    type: str
    required: true
  name:
    description: The management cluster (the inventory host).
    type: str
    required: true
  capi:
    description: C(capi_version) and C(api_version) of the management cluster.
    type: dict
    default: {}
  lock:
    description: The lock's entry (C(holder), C(acquired), C(released), C(taken_over_from)), V(null) when not taken.
    type: dict
  notes:
    description: Notes of the run.
    type: list
    elements: str
    default: []
  waves:
    description: The entries of the waves run (apply mode).
    type: list
    elements: dict
    default: []
  planned_waves:
    description: The plan's waves (check mode; each gets C(result=planned)).
    type: list
    elements: dict
    default: []
  started:
    description: When the run started on this management cluster, by the API server's clock (apply mode only).
    type: str
  finished:
    description: When it finished (apply mode only).
    type: str
'''

EXAMPLES = r'''
- name: Put the result together
  ansible.builtin.set_fact:
    hardware_refresh_result: >-
      {{ objects | capi.rollout.rollout_refresh_result(order=order, status=status, mode='apply', refresh_id='hw-2026-11',
                                                       name=inventory_hostname, waves=wave_entries) }}
'''

RETURN = r'''
_value:
  description:
    - C(name), C(capi_version), C(api_version), C(result), C(failure_reason), C(next_step), C(started), C(finished),
      C(lock), C(notes), C(waves) and C(objects) (in plan order, with the fields of the report only).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

refresh_steps = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.report.refresh_steps")


def rollout_refresh_result(objects, order=None, status=None, mode="apply", refresh_id=None, name=None, capi=None, lock=None,
                           notes=None, waves=None, planned_waves=None, started=None, finished=None):
    if mode not in ("apply", "check"):
        raise AnsibleFilterError(f"rollout_refresh_result: mode must be apply or check, got {mode!r}")
    if not isinstance(objects, dict):
        raise AnsibleFilterError("rollout_refresh_result: the input must be a dictionary of objects by ref")
    unknown = [ref for ref in order or [] if ref not in objects]
    if unknown:
        raise AnsibleFilterError(f"rollout_refresh_result: no record of {', '.join(unknown)}")
    return refresh_steps.result(objects, order or [], status or {}, mode, refresh_id, name, capi or {}, lock, notes or [],
                                waves or [], planned_waves or [], started, finished)


class FilterModule(object):
    def filters(self):
        return {"rollout_refresh_result": rollout_refresh_result}
