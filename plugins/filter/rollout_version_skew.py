# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_version_skew
short_description: Check a worker Kubernetes version against its control plane
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Returns one sentence per Kubernetes version skew rule that worker Machines of version O(_input) would break
    against a control plane of version O(control_plane); an empty list when the versions are fine or unknown.
  - The rules are those of Cluster API's MachineSet preflight checks - a worker minor may not be newer than the
    control plane minor, may be at most 3 minors older (2 before v1.28), and with kubeadm bootstrap must be on the
    control plane minor. A rollout that breaks them stalls halfway, with new Machines held by the preflight checks.
positional: _input, control_plane
options:
  _input:
    description: The worker version, for example V(v1.30.4).
    type: str
    required: true
  control_plane:
    description: The control plane version (C(spec.version) of the KubeadmControlPlane).
    type: str
    required: true
  kubeadm:
    description: Whether the workers bootstrap with kubeadm (a C(KubeadmConfigTemplate)).
    type: bool
    default: true
seealso:
  - name: History and undo - version skew rules
    description: The rules in detail.
    link: https://github.com/capi-rollout/capi.rollout/blob/main/docs/history-and-undo.md
'''

EXAMPLES = r'''
- name: Refuse a rollout that CAPI's preflight checks would hold back
  ansible.builtin.assert:
    that: worker_version | capi.rollout.rollout_version_skew(cp_version) | length == 0
'''

RETURN = r'''
_value:
  description: One sentence per broken rule, naming both versions and the rule.
  type: list
  elements: str
'''

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

versionskew = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.versionskew")


def rollout_version_skew(worker_version, control_plane, kubeadm=True):
    if not worker_version or not control_plane:
        return []
    return versionskew.skew_problems(str(worker_version), str(control_plane), kubeadm=bool(kubeadm))


class FilterModule(object):
    def filters(self):
        return {"rollout_version_skew": rollout_version_skew}
