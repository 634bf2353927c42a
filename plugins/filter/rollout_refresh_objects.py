# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_refresh_objects
short_description: Select the MachineDeployments and control planes a hardware refresh covers
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - From the MachineDeployments (O(_input)) and KubeadmControlPlanes (O(control_planes)) that
    M(capi.rollout.capi_rollout_info) read on one management cluster, keeps those a refresh covers - the control
    planes first (with O(control_plane=true)), then the MachineDeployments.
  - Control planes belong to the selected workload clusters - those in O(clusters), else (when the
    MachineDeployments were narrowed by O(names) or label selectors, O(narrowed)) the workload clusters of the
    selected MachineDeployments, else all.
  - The selection M(capi.rollout.capi_refresh_plan) makes in one module call (the same code); C(playbooks/rollback.yml)
    uses this filter over the results of M(capi.rollout.capi_rollout_info).
positional: _input
options:
  _input:
    description: The MachineDeployments, as RV(capi.rollout.capi_rollout_info#module:resources).
    type: list
    elements: dict
    required: true
  control_planes:
    description: The KubeadmControlPlanes, as RV(capi.rollout.capi_rollout_info#module:resources).
    type: list
    elements: dict
    default: []
  clusters:
    description: Workload cluster names; empty selects every workload cluster.
    type: list
    elements: str
    default: []
  names:
    description: MachineDeployment names, or C(namespace/name); empty selects every MachineDeployment of the clusters.
    type: list
    elements: str
    default: []
  control_plane:
    description: Include the control planes of the selected workload clusters.
    type: bool
    default: false
  workers:
    description: Include the MachineDeployments.
    type: bool
    default: true
  narrowed:
    description: Whether the MachineDeployments were read with label selectors (so that only their clusters' control
      planes are selected).
    type: bool
    default: false
  templates:
    description:
      - How the new templates are made - C(overrides), C(labels), C(annotations) (for every object) and C(objects)
        (per object - keys C(cluster:<workload cluster>), C(<name>) or C(<namespace>/<name>), each
        C({overrides, labels, annotations}) merged over the one before).
      - When given, each selected entry gets C(clone) - its own C({overrides, labels, annotations, warnings});
        C(warnings) says when the overrides name another Kubernetes version than the object's.
    type: dict
'''

EXAMPLES = r'''
- name: Control planes and pools of two workload clusters
  ansible.builtin.set_fact:
    objects: "{{ md_entries | capi.rollout.rollout_refresh_objects(control_planes=kcp_entries, clusters=['prod-1', 'prod-2'],
                                                                   control_plane=true) }}"
'''

RETURN = r'''
_value:
  description: The selected entries, control planes first, in the order they were read (with C(clone) when
    O(templates) is given).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

refresh = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.refresh")


def _entries(value, what):
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, dict) for item in value):
        raise AnsibleFilterError(f"rollout_refresh_objects: {what} must be a list of dictionaries")
    return list(value)


def rollout_refresh_objects(machine_deployments, control_planes=None, clusters=None, names=None, control_plane=False,
                            workers=True, narrowed=False, templates=None):
    selected = refresh.select_objects(_entries(machine_deployments, "the input"), _entries(control_planes, "control_planes"),
                                      clusters=clusters or [], names=names or [], control_plane=bool(control_plane),
                                      workers=bool(workers), narrowed=bool(narrowed))
    if templates is None:
        return selected
    if not isinstance(templates, dict):
        raise AnsibleFilterError("rollout_refresh_objects: templates must be a dictionary")
    return refresh.with_clone_settings(selected, templates)


class FilterModule(object):
    def filters(self):
        return {"rollout_refresh_objects": rollout_refresh_objects}
