# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_setting_errors
short_description: What is wrong with the settings of the hardware_refresh role
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Checks what the role's argument spec cannot - the ranges of its timeouts, intervals and counts (the collection's
    table of bounds, docs/hardware-refresh.md), booleans the C(bool) filter would not take (V(y), V(t)), the
    maintenance window's RFC 3339 times, the refresh id, hooks that name no task file on the Ansible host, and
    variables that start with C(hardware_refresh_) but are none of its options (typos) - and returns every problem
    found, in words.
  - Used by the C(capi.rollout.hardware_refresh) role before it reads or writes anything.
positional: _input
options:
  _input:
    description: The settings to check, by variable name.
    type: dict
    required: true
  known:
    description: The role's option names.
    type: list
    elements: str
    required: true
  present:
    description: The names of the variables with the role's prefix that are defined (for example from the
      C(ansible.builtin.varnames) lookup).
    type: list
    elements: str
    default: []
  types:
    description: The type of each option in the role's argument spec (option name -> type); the V(bool) ones are checked.
    type: dict
    default: {}
'''

EXAMPLES = r'''
- name: Check the settings
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "{{ problems | join('; ') }}"
  vars:
    problems: "{{ {'hardware_refresh_wait_timeout': 0} | capi.rollout.rollout_setting_errors(known=['hardware_refresh_wait_timeout']) }}"
'''

RETURN = r'''
_value:
  description: One sentence per problem (empty when the settings are fine).
  type: list
  elements: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

settings = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.settings")
task_files = LazyModule("ansible_collections.capi.rollout.plugins.plugin_utils.task_files")


def rollout_setting_errors(values, known, present=None, types=None):
    if not isinstance(values, dict):
        raise AnsibleFilterError("rollout_setting_errors: the input must be a dictionary of settings")
    return settings.errors(values, list(known or []), list(present or []), types=dict(types or {}),
                           files=task_files.found(values, settings.ROLE_HOOKS))


class FilterModule(object):
    def filters(self):
        return {"rollout_setting_errors": rollout_setting_errors}
