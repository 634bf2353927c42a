# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_refresh_calls
short_description: The module calls of one step of a hardware refresh, for all its objects at once
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - The C(capi.rollout.hardware_refresh) role acts per management cluster and step, not per object - one module call
    per kind and namespace makes the target templates of the objects of a wave and switches the objects to them. This
    filter turns the objects of a step into the arguments of those calls.
  - V(clone) - the O(capi.rollout.capi_machine_template#module:objects) of one M(capi.rollout.capi_machine_template)
    call - per object its C(kind), C(namespace), C(name) and its own C(overrides), C(labels) and C(annotations) (its
    C(clone) settings, see P(capi.rollout.rollout_refresh_objects#filter)).
  - V(switch) - the M(capi.rollout.capi_rollout_restart) calls, one per kind and namespace - C(kind), C(namespace),
    C(refs) (the objects' references, for their report entries) and C(switches) (each object with the
    O(capi.rollout.capi_rollout_restart#module:switches[].template) the call makes for it and switches it to, from its
    own C(clone) settings) or, with O(restart=true), C(names). Objects with C(resume) (switched by this refresh already)
    are left out.
  - Used by the C(capi.rollout.hardware_refresh) role.
positional: _input, step
options:
  _input:
    description: The objects - selected entries (V(clone) in the preflight) or plan objects (P(capi.rollout.rollout_refresh_plan#filter)).
    type: list
    elements: dict
    required: true
  step:
    description: The step.
    type: str
    choices: [clone, switch]
    required: true
  restart:
    description: A plain restart, no template switch (V(switch)).
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: Clone the target templates of the wave in one call
  capi.rollout.capi_machine_template:
    objects: "{{ wave_objects | capi.rollout.rollout_refresh_calls('clone') }}"
  register: clones

- name: Or make each object's template and switch the object to it, one call per kind and namespace
  capi.rollout.capi_rollout_restart:
    kind: "{{ item.kind }}"
    namespace: "{{ item.namespace }}"
    switches: "{{ item.switches }}"
    rollout_id: hw-2026-11
  loop: "{{ wave_objects | capi.rollout.rollout_refresh_calls('switch') }}"
'''

RETURN = r'''
_value:
  description: V(clone) - the objects option of one call; V(switch) - one entry per call.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

refresh = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.refresh")


def rollout_refresh_calls(objects, step, restart=False):
    if not isinstance(objects or [], (list, tuple)):
        raise AnsibleFilterError("rollout_refresh_calls: the input must be a list of objects")
    if step == "clone":
        return refresh.clone_requests(objects)
    if step != "switch":
        raise AnsibleFilterError(f"rollout_refresh_calls: step must be clone or switch, got {step!r}")
    return refresh.switch_calls(objects, restart=bool(restart))


class FilterModule(object):
    def filters(self):
        return {"rollout_refresh_calls": rollout_refresh_calls}
