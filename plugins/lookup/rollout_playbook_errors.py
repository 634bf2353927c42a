# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_playbook_errors
short_description: What is wrong with the variables of playbooks/hardware_refresh.yml
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Checks every variable of C(playbooks/hardware_refresh.yml) (and C(playbooks/restart.yml)) that is set - its type
    (a survey's text of a number or a boolean is taken, anything else is refused, never guessed), its range (the table of
    bounds of the collection, docs/hardware-refresh.md), RFC 3339 times, refresh ids, the mappings given as YAML or JSON
    text, the hooks' task files (they must exist on the Ansible host) - and the variables that are none of the playbook's
    but close to one of their names (a typo such as V(max_inflight)).
  - Returns one sentence per problem, each naming the variable, what was given and what is accepted; the playbook's
    first task fails with them before any management cluster is read.
options:
  _terms:
    description: Nothing; the variables are those of the task.
    required: false
'''

EXAMPLES = r'''
- name: Check the variables of the run
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "{{ problems | join('; ') }}"
  vars:
    problems: "{{ query('capi.rollout.rollout_playbook_errors') }}"
'''

RETURN = r'''
_raw:
  description: One sentence per problem (empty when the variables are fine).
  type: list
  elements: str
'''

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase

from ansible_collections.capi.rollout.plugins.module_utils.core import settings
from ansible_collections.capi.rollout.plugins.plugin_utils import task_files
from ansible_collections.capi.rollout.plugins.plugin_utils.survey_text import parse_text


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        variables = variables or {}
        values = {}
        problems = []
        for name in sorted(settings.PLAYBOOK_VARIABLES):
            if name not in variables:
                continue
            try:
                values[name] = self._templar.template(variables[name])
            except AnsibleError as err:
                problems.append(f"{name} could not be read: {err}")
        hooks = [name for name, kind in settings.PLAYBOOK_VARIABLES.items() if kind == "file"]
        return problems + settings.playbook_errors(values, list(variables), parse_text=parse_text,
                                                   files=task_files.found(values, hooks))
