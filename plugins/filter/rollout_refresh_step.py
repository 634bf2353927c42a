# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_refresh_step
short_description: Apply what one step of a hardware refresh did to the report entries of the objects of one management cluster
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - The C(capi.rollout.hardware_refresh) role keeps the objects of its plan (RV(capi.rollout.capi_refresh_plan#module:plan))
    as a dictionary by C(ref); after each step this filter merges what the step found out into them, in one call
    whatever the number of objects, and returns the objects (the step V(wave_failed) returns more, see RV(_value)).
  - V(switched) - when each object of a wave (O(wave_objects)) that the switch calls (O(switches)) switched was switched
    (their C(server_time)), to the template made for it, and the template it must stay on while the wave waits.
  - V(rolled_out) - the objects of a wave that rolled out and soaked (O(resources)), with their templates read back.
  - V(wave_failed) - what failed in the wave O(wave) and why, from the registered results of its tasks (O(wait),
    O(switches)) and of the task that failed (O(failed_task), O(failed_result)); the result of
    the management cluster; the MachineDeployments the undo switches back.
  - V(undo_waits) - the M(capi.rollout.capi_rollout_wait) objects of that undo (O(failure)) - a MachineDeployment the undo
    calls (O(switches)) reverted through its Cluster topology is held to that change (its C(objects[].hold)); returns
    a list.
  - V(undone) - the undo of that wave rolled back (O(undo_wait)); V(undo_failed) - it failed (O(failed_result)).
  - V(end_check) - what the check at the end of the run found (O(wait)). An object of an earlier wave changed or deleted
    since it succeeded fails, naming who changed it; returns C(objects) and C(status) (V(null) when all is well).
positional: _input, step
options:
  _input:
    description: The objects, a dictionary from object reference (C(ref)) to its report entry.
    type: dict
    required: true
  step:
    description: The step that ran.
    type: str
    choices: [switched, rolled_out, wave_failed, undo_waits, undone, undo_failed, end_check]
    required: true
  wave:
    description: The wave (V(wave_failed)) - C(name) and C(kind), as in the plan's C(waves).
    type: dict
  wave_objects:
    description: The report entries of the objects of the wave, as they were when it started (V(switched), V(wave_failed)).
    type: list
    elements: dict
  switches:
    description:
      - The registered loop result of the wave's M(capi.rollout.capi_rollout_restart) calls, one per kind and namespace
        (P(capi.rollout.rollout_refresh_calls#filter) with V(switch); each loop item has the C(refs) of its objects, each
        result the RV(capi.rollout.capi_rollout_restart#module:clones) it made) (V(switched), V(wave_failed)).
      - The registered loop result of the undo's M(capi.rollout.capi_rollout_undo) calls (V(undo_waits)).
    type: dict
  restart:
    description: A plain restart, no template switch (V(switched), V(wave_failed)).
    type: bool
    default: false
  resources:
    description: RV(capi.rollout.capi_rollout_wait#module:resources) of the wave's wait (V(rolled_out)).
    type: list
    elements: dict
  wait:
    description:
      - The registered result of the wave's M(capi.rollout.capi_rollout_wait), C({}) when it did not run (V(wave_failed)).
      - The registered result of the check at the end of the run, a M(capi.rollout.capi_rollout_wait) (V(end_check)).
    type: dict
  failed_task:
    description: The name of the task that failed (V(wave_failed)).
    type: str
    default: a task
  failed_result:
    description: The result of the task that failed, C(ansible_failed_result) (V(wave_failed), V(undo_failed)).
    type: dict
  hook:
    description:
      - The hook that was running when the wave failed (V(wave_failed)), C(point) (V(before_wave) or V(after_wave)) and
        C(file); the failure then names it and its task. None when no hook was running.
    type: dict
  refresh_id:
    description: The refresh id (V(wave_failed), V(end_check)); the next step names it and the undo records C(<refresh_id>-undo).
    type: str
  settings:
    description: C(stall_timeout), C(wait_timeout) and C(soak_seconds), named in the failure reasons (V(wave_failed)).
    type: dict
  undo_on_failure:
    description: Switch the wave's MachineDeployments back (V(wave_failed)).
    type: bool
    default: true
  failure:
    description: What the step V(wave_failed) returned (V(undo_waits), V(undone), V(undo_failed)).
    type: dict
  undo_wait:
    description: The registered result of the undo's M(capi.rollout.capi_rollout_wait) (V(undone)).
    type: dict
  started:
    description:
      - When the undo started (V(undone), V(undo_failed)).
      - V(switched), optional - when the wave started, before its switch calls; the wait then counts each object's
        Machines made since as replaced and the older ones as updated in place (C(wait.switched_at)).
    type: str
  now:
    description: The API server's current time (P(capi.rollout.rollout_server_time#filter)) (V(switched), V(wave_failed), V(undo_failed), V(end_check)).
    type: str
'''

EXAMPLES = r'''
- name: Record when each object was switched
  ansible.builtin.set_fact:
    objects: >-
      {{ objects | capi.rollout.rollout_refresh_step('switched', wave_objects=wave_objects, switches=switches,
                                                       now=clock | capi.rollout.rollout_server_time) }}

- name: Record the objects of the wave as switched
  ansible.builtin.set_fact:
    objects: "{{ objects | capi.rollout.rollout_refresh_step('rolled_out', resources=wait.resources) }}"
'''

RETURN = r'''
_value:
  description:
    - The objects with the step recorded; for V(wave_failed) a dictionary of C(objects), C(status) (the management
      cluster's C(result), C(failure_reason) and C(next_step)), C(failed_refs), C(wave) (its name), C(undo) (the
      MachineDeployments to switch back, as M(capi.rollout.capi_rollout_wait) objects; empty when nothing is undone),
      C(undo_refs), C(undo_calls) (the M(capi.rollout.capi_rollout_undo) calls - C(kind), C(namespace), C(names),
      C(refs) - one per object, one for the MachineDeployments of one Cluster rebased onto a ClusterClass clone) and
      C(undo_rollout_id) (C(<refresh_id>-undo)); for V(end_check) C(objects) and C(status); for
      V(undo_waits) a list of M(capi.rollout.capi_rollout_wait) objects.
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

refresh_steps = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.report.refresh_steps")

STEPS = {
    "switched": ("wave_objects", "now"),
    "rolled_out": ("resources",),
    "wave_failed": ("wave", "wave_objects", "refresh_id", "settings", "now"),
    "undo_waits": ("failure",),
    "undone": ("failure", "undo_wait", "started"),
    "undo_failed": ("failure", "started", "now"),
    "end_check": ("wait", "refresh_id", "now"),
}


def rollout_refresh_step(objects, step, wave=None, wave_objects=None, switches=None, restart=False,
                         resources=None, wait=None, failed_task="a task", failed_result=None, refresh_id=None, settings=None,
                         undo_on_failure=True, failure=None, undo_wait=None, started=None, now=None, hook=None):
    if step not in STEPS:
        raise AnsibleFilterError(f"rollout_refresh_step: step must be one of {', '.join(STEPS)}, got {step!r}")
    if not isinstance(objects, dict):
        raise AnsibleFilterError("rollout_refresh_step: the input must be a dictionary of objects by ref")
    given = {"wave": wave, "wave_objects": wave_objects, "resources": resources, "wait": wait, "refresh_id": refresh_id, "settings": settings,
             "failure": failure, "undo_wait": undo_wait, "started": started, "now": now}
    missing = [name for name in STEPS[step] if given[name] is None]
    if missing:
        raise AnsibleFilterError(f"rollout_refresh_step: step {step} needs {', '.join(missing)}")
    if step == "switched":
        return refresh_steps.switched(objects, wave_objects, switches, bool(restart), now, wave_started=started)
    if step == "rolled_out":
        return refresh_steps.rolled_out(objects, resources, wait=wait)
    if step == "wave_failed":
        return refresh_steps.wave_failed(objects, wave, wave_objects, wait, switches, failed_task, failed_result,
                                         now, refresh_id, settings, undo_on_failure=bool(undo_on_failure), restart=bool(restart),
                                         hook=hook)
    if step == "end_check":
        return refresh_steps.end_check(objects, wait, now, refresh_id)
    if step == "undo_waits":
        return refresh_steps.undo_waits(failure, switches)
    if step == "undone":
        return refresh_steps.undone(objects, failure, undo_wait, started)
    return refresh_steps.undo_failed(objects, failure["undo_refs"], started, now, failed_result)


class FilterModule(object):
    def filters(self):
        return {"rollout_refresh_step": rollout_refresh_step}
