# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_refresh_status
short_description: What a hardware refresh records about a management cluster itself - its status, notes, waves, counts
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - The C(capi.rollout.hardware_refresh) role writes no status text of its own; this filter writes what it records
    about the management cluster (its objects are P(capi.rollout.rollout_refresh_step#filter)'s). The input is the
    step.
  - V(lock_failed) - the status of a run that could not take the lock (O(message) the lock call's message).
  - V(task_failed) - the status of a run stopped by a task that failed outside a wave (O(task), O(failed_result)).
  - V(window_closed) - the status of a run stopped by the end of the maintenance window (O(window)), before wave
    O(wave) when given.
  - V(lock_not_released) - the note of a lock this run did not release (O(release), the release call's result); V(null)
    when it was released.
  - V(capi_version) - the blockers of a management cluster whose Cluster API release (O(capi_version), the host
    variable) is older than O(min_capi_version) or no release at all; an empty list when it is not set.
  - V(wave) - the report entry of a wave (O(wave)) that ended with O(result), from its wait's registered result (O(wait)).
  - V(stats) - what the role publishes to AWX for the management cluster (O(result), its report entry), its objects
    counted by the report's rules.
  - Every next step names the way on the same way - a re-run with the same O(refresh_id).
positional: _input
options:
  _input:
    description: The step.
    type: str
    choices: [lock_failed, task_failed, window_closed, lock_not_released, capi_version, wave, stats]
    required: true
  refresh_id:
    description: The refresh id (V(lock_failed), V(task_failed), V(window_closed), V(lock_not_released)).
    type: str
  message:
    description: The message of the lock call (V(lock_failed)).
    type: str
  lock_duration:
    description: Seconds after its last renewal that a lock goes stale (V(lock_failed), V(lock_not_released)).
    type: int
  task:
    description: The name of the task that failed (V(task_failed)).
    type: str
  failed_result:
    description: Its result, C(ansible_failed_result) (V(task_failed)).
    type: raw
  window:
    description: The maintenance window as P(capi.rollout.rollout_window#filter) returns it (V(window_closed)).
    type: dict
  wave:
    description:
      - The name of the wave that was not started (V(window_closed)).
      - The wave, as in the plan's C(waves) - C(index), C(name), C(objects) (V(wave)).
    type: raw
  release:
    description: The registered result of the lock's release (V(lock_not_released)).
    type: dict
  capi_version:
    description: The management cluster's Cluster API release, the host variable C(capi_version) (V(capi_version)).
    type: str
  min_capi_version:
    description: The oldest release allowed (V(capi_version)).
    type: str
  started:
    description: When the wave started, the API server's time (V(wave)).
    type: str
  wait:
    description: The registered result of the wave's M(capi.rollout.capi_rollout_wait), C({}) when it did not run (V(wave)).
    type: dict
  result:
    description:
      - How the wave ended, V(succeeded) or V(failed) (V(wave)).
      - The management cluster's entry of the report, the fact C(hardware_refresh_result) (V(stats)).
    type: raw
  soak_seconds:
    description: The soak of the wave (V(wave)); its end is recorded when it is more than 0.
    type: int
    default: 0
  now:
    description: The API server's time now, the end of a wave whose wait did not end (V(wave)).
    type: str
'''

EXAMPLES = r'''
- name: Another run holds the lock
  ansible.builtin.set_fact:
    status: "{{ 'lock_failed' | capi.rollout.rollout_refresh_status(message=lock.msg, refresh_id='hw-2026-12', lock_duration=900) }}"

- name: Publish the counts of this management cluster
  ansible.builtin.set_stats:
    data:
      hardware_refresh_results: "{{ {inventory_hostname: 'stats' | capi.rollout.rollout_refresh_status(result=hardware_refresh_result)} }}"
'''

RETURN = r'''
_value:
  description:
    - V(lock_failed), V(task_failed), V(window_closed) - C(result), C(failure_reason) and C(next_step).
    - V(lock_not_released) - a note (a string) or V(null); V(capi_version) - a list of blockers.
    - V(wave) - C(index), C(name), C(objects), C(started), C(rollout_finished), C(soak_finished) (succeeded waves),
      C(finished), C(result).
    - V(stats) - C(result), C(failure_reason), C(next_step) and the counts C(switched), C(unchanged), C(failed),
      C(deleted), C(undone) (switched back; also counted as failed), C(pending) (not started or still rolling out) and
      C(skipped).
  type: raw
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

statuses = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.refresh_status")
model = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.report.model")

NEEDS = {
    "lock_failed": ("refresh_id", "lock_duration"),
    "task_failed": ("refresh_id",),
    "window_closed": ("refresh_id", "window"),
    "lock_not_released": ("refresh_id", "lock_duration"),
    "capi_version": ("min_capi_version",),
    "wave": ("wave", "result"),
    "stats": ("result",),
}


def rollout_refresh_status(step, refresh_id=None, message=None, lock_duration=None, task=None, failed_result=None, window=None,
                           wave=None, release=None, capi_version=None, min_capi_version=None, started=None, wait=None,
                           result=None, soak_seconds=0, now=None):
    if step not in NEEDS:
        raise AnsibleFilterError(f"rollout_refresh_status: the step must be one of {', '.join(NEEDS)}, got {step!r}")
    given = {"refresh_id": refresh_id, "lock_duration": lock_duration, "window": window, "min_capi_version": min_capi_version,
             "wave": wave, "result": result}
    missing = [name for name in NEEDS[step] if given[name] is None]
    if missing:
        raise AnsibleFilterError(f"rollout_refresh_status: step {step} needs {', '.join(missing)}")
    if step == "lock_failed":
        return statuses.lock_failed(message, refresh_id, lock_duration)
    if step == "task_failed":
        return statuses.task_failed(task, failed_result, refresh_id)
    if step == "window_closed":
        return statuses.window_closed(window.get("not_after"), refresh_id, wave=wave)
    if step == "lock_not_released":
        return statuses.lock_not_released(release, refresh_id, lock_duration)
    if step == "capi_version":
        return statuses.capi_version_blockers(capi_version, min_capi_version)
    if step == "wave":
        return statuses.wave_entry(wave, started, wait, result, soak_seconds, now)
    return model.awx_stats(result)


class FilterModule(object):
    def filters(self):
        return {"rollout_refresh_status": rollout_refresh_status}
