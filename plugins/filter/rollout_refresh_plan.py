# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_refresh_plan
short_description: Plan the hardware refresh of one management cluster
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Decides for each selected object (O(_input)) what a hardware refresh does with it, from what the cluster says,
    never from a local file - so that a re-run with the same O(refresh_id) continues where an earlier run stopped.
  - V(switch) - move it to its target template (from O(clones)); with C(resume=true) it was switched by this refresh
    already and its rollout is still running, so the switch is not sent again and the run only waits.
  - V(unchanged) - it is on its target template and its rollout is complete.
  - V(skip) - it has blockers (paused, managed by a ClusterClass topology, not healthy or rolling out, a scheduled
    rollout, strategy OnDelete, a Kubernetes version skew that CAPI's preflight checks would refuse, no target
    template), or this refresh's undo switched it back.
  - Then splits the objects to switch into waves - control planes first, then MachineDeployments with a canary wave
    when O(canary=true) - of at most O(max_in_flight) objects, spread over workload clusters.
  - M(capi.rollout.capi_refresh_plan) makes the same plan (the same code) in the module call that reads the objects;
    this filter makes it from the results of M(capi.rollout.capi_rollout_info) and M(capi.rollout.capi_machine_template)
    of a play of your own.
positional: _input
options:
  _input:
    description:
      - The selected objects, as RV(capi.rollout.capi_rollout_info#module:resources) (see
        P(capi.rollout.rollout_refresh_objects#filter)).
    type: list
    elements: dict
    required: true
  clones:
    description:
      - The results of M(capi.rollout.capi_machine_template) in check mode, one per object - the C(results) of one
        call with O(capi.rollout.capi_machine_template#module:objects), the C(results) of a task looped over the
        objects (each with the object as C(item)), or a dictionary from object reference (C(ref)) to C(ok) (bool),
        C(msg) (why it failed), C(infrastructure_ref) and C(template).
    type: raw
    default: []
  control_planes:
    description: Every control plane of the namespaces read, for the version skew check.
    type: list
    elements: dict
    default: []
  refresh_id:
    description: The refresh id; the rollout id of every switch.
    type: str
    required: true
  mode:
    description: V(apply) or V(check) (objects are then V(planned)).
    type: str
    default: apply
  max_in_flight:
    description: The most objects per wave - a number or a percentage such as V(25%).
    type: raw
    default: 1
  canary:
    description: Make the first MachineDeployment wave a single object.
    type: bool
    default: false
  restart:
    description:
      - Plan a plain restart instead of a template switch - the target is the current template, O(clones) is not
        needed, objects managed by a Cluster topology may be restarted, and an object counts as done once this
        O(refresh_id) restarted it.
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: Plan
  ansible.builtin.set_fact:
    plan: "{{ objects | capi.rollout.rollout_refresh_plan(clones=clone_results, refresh_id='hw-2026-11', max_in_flight=2,
                                                          canary=true) }}"
'''

RETURN = r'''
_value:
  description: The plan.
  type: dict
  contains:
    objects:
      description:
        - One entry per selected object with the fields of the fleet report (C(kind), C(namespace), C(name), C(cluster),
          C(replicas), C(before), C(after), C(action), C(result), C(blockers), C(started), C(wave)) plus C(ref),
          C(target_ref), C(wait) (the M(capi.rollout.capi_rollout_wait) object, with the template it must stay on),
          C(resume), C(notes) and C(wave_name).
      type: list
      elements: dict
    waves:
      description: The waves in order - C(index), C(name), C(kind) and C(objects) (references).
      type: list
      elements: dict
    blocked:
      description: The objects with blockers.
      type: list
      elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

refresh = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.refresh")


def rollout_refresh_plan(candidates, clones=None, control_planes=None, refresh_id=None, mode="apply", max_in_flight=1,
                         canary=False, restart=False):
    if not refresh_id:
        raise AnsibleFilterError("rollout_refresh_plan: refresh_id is required")
    if mode not in ("apply", "check"):
        raise AnsibleFilterError(f"rollout_refresh_plan: mode must be apply or check, got {mode!r}")
    if not isinstance(candidates or [], (list, tuple)) or not isinstance(clones or {}, (dict, list, tuple)):
        raise AnsibleFilterError("rollout_refresh_plan: the input must be a list and clones a list or dictionary")
    if isinstance(clones, (list, tuple)):
        clones = refresh.clone_outcomes(clones)
    try:
        return refresh.refresh_plan(candidates, clones, control_planes=control_planes, refresh_id=refresh_id, mode=mode,
                                    max_in_flight=max_in_flight, canary=canary, restart=restart)
    except ValueError as err:
        raise AnsibleFilterError(f"rollout_refresh_plan: {err}")


class FilterModule(object):
    def filters(self):
        return {"rollout_refresh_plan": rollout_refresh_plan}
