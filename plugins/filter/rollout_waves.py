# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_waves
short_description: Split the objects of a rolling refresh into waves
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Splits a list of objects (MachineDeployments or control planes) into waves of at most O(max_in_flight)
    objects, in a stable order, for a rolling refresh that switches one wave, waits for it and soaks it before the
    next.
  - The objects are taken from the workload clusters in turn (one from each cluster, then the second of each, and
    so on), so that a wave spreads over as many workload clusters as it can instead of replacing several pools of
    one cluster at once. Within a workload cluster the input order is kept.
  - With O(canary=true) the first wave holds a single object (the canary); the other waves follow.
positional: _input
options:
  _input:
    description:
      - The objects. Each is a dictionary; C(cluster) (the workload cluster) and C(namespace) group them, every
        other key is kept as it is.
    type: list
    elements: dict
    required: true
  max_in_flight:
    description:
      - The most objects in one wave - a number, or a percentage of all objects such as V(25%) (rounded up, at
        least 1).
    type: raw
    default: 1
  canary:
    description:
      - Make the first wave a single object.
    type: bool
    default: false
  name:
    description:
      - Prefix of the wave names; waves are named C(<name>-1), C(<name>-2) and so on, the canary wave C(canary).
    type: str
    default: wave
  start:
    description:
      - Index of the first wave (waves are numbered across a run, for example after the control-plane waves).
    type: int
    default: 0
'''

EXAMPLES = r'''
- name: Waves of at most 3 MachineDeployments, one canary first
  ansible.builtin.set_fact:
    waves: "{{ objects | capi.rollout.rollout_waves(max_in_flight=3, canary=true) }}"

- name: A quarter of the pools at a time, numbered after two control-plane waves
  ansible.builtin.set_fact:
    waves: "{{ objects | capi.rollout.rollout_waves(max_in_flight='25%', start=2) }}"
'''

RETURN = r'''
_value:
  description: The waves, in order.
  type: list
  elements: dict
  contains:
    index:
      description: Wave number (from O(start)).
      type: int
    name:
      description: Wave name, C(canary) or C(<name>-<n>).
      type: str
    objects:
      description: The objects of the wave, as given.
      type: list
      elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

refresh = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.refresh")


def rollout_waves(objects, max_in_flight=1, canary=False, name="wave", start=0):
    if objects is None:
        return []
    if not isinstance(objects, (list, tuple)) or not all(isinstance(obj, dict) for obj in objects):
        raise AnsibleFilterError("rollout_waves: the input must be a list of dictionaries")
    try:
        return refresh.waves(objects, max_in_flight=max_in_flight, canary=canary, name=name, start=start)
    except ValueError as err:
        raise AnsibleFilterError(f"rollout_waves: {err}")


class FilterModule(object):
    def filters(self):
        return {"rollout_waves": rollout_waves}
