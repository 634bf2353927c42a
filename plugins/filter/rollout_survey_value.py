# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_survey_value
short_description: Take a playbook variable that may be an AWX survey answer (text) as the list, dictionary or boolean meant
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - AWX survey answers are text. The playbooks of this collection accept every variable either as the value itself
    (from the command line or a job template's extra variables) or as survey text, and take it with this filter.
  - A value that is already a list (O(kind=list), O(kind=lines)) or a dictionary (O(kind=dict)) is taken as it is; an
    empty or undefined one gives O(default).
positional: _input, kind
options:
  _input:
    description: The variable (V(null) when it is not set).
    type: raw
    required: true
  kind:
    description:
      - V(list) - text is split at commas and white space (V(wa, wb)).
      - V(lines) - text is split into lines, each trimmed, empty ones left out (label selectors, which contain commas).
      - V(dict) - text is read as YAML (or JSON).
      - V(bool) - V(true), V(yes), V(1) and V(on) in any case are true, anything else is false.
    type: str
    choices: [list, lines, dict, bool]
    required: true
  default:
    description: The value of an empty or undefined variable; V([]) for lists, V({}) for dictionaries, V(false) for booleans.
    type: raw
'''

EXAMPLES = r'''
- name: Take the survey answers
  ansible.builtin.set_fact:
    clusters_wanted: "{{ clusters | default(none) | capi.rollout.rollout_survey_value('list') }}"      # "wa, wb" -> ['wa', 'wb']
    selectors: "{{ label_selectors | default(none) | capi.rollout.rollout_survey_value('lines') }}"
    overrides: "{{ template_overrides | default(none) | capi.rollout.rollout_survey_value('dict') }}"  # '{"a": 1}' -> {'a': 1}
    restart_wanted: "{{ restart | default(none) | capi.rollout.rollout_survey_value('bool') }}"       # 'Yes' -> true
'''

RETURN = r'''
_value:
  description: The list, dictionary or boolean.
  type: raw
'''

import re

import yaml

from ansible.errors import AnsibleFilterError

DEFAULTS = {"list": [], "lines": [], "dict": {}, "bool": False}
TRUE = ("true", "yes", "1", "on")


def rollout_survey_value(value, kind=None, default=None):
    if kind not in DEFAULTS:
        raise AnsibleFilterError(f"rollout_survey_value: kind must be one of {', '.join(DEFAULTS)}, got {kind!r}")
    if kind == "bool":
        return str(default if value is None else value).lower() in TRUE
    if not value:
        return DEFAULTS[kind] if default is None else default
    if not isinstance(value, str):
        return value
    if kind == "list":
        return re.findall(r"[^,\s]+", value)
    if kind == "lines":
        return [line.strip() for line in value.split("\n") if line.strip()]
    try:
        return yaml.safe_load(str(value))
    except yaml.YAMLError as err:
        raise AnsibleFilterError(f"rollout_survey_value: not YAML or JSON: {err}")


class FilterModule(object):
    def filters(self):
        return {"rollout_survey_value": rollout_survey_value}
