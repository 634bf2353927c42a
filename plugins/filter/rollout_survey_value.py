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
      - V(dict) - text is read as YAML (or JSON); it must give a mapping.
      - V(bool) - V(true), V(yes), V(on), V(1) and V(false), V(no), V(off), V(0) in any case (as the C(bool) filter
        takes them); anything else (V(maybe), V(y)) is an error, never guessed.
    type: str
    choices: [list, lines, dict, bool]
    required: true
  default:
    description: The value of an empty or undefined variable; V([]) for lists, V({}) for dictionaries, V(false) for booleans.
    type: raw
  name:
    description: The variable's name, for the error message of a value that is not what O(kind) takes.
    type: str
    default: the value
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

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule
from ansible_collections.capi.rollout.plugins.plugin_utils.survey_text import parse_text

settings = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.settings")

DEFAULTS = {"list": [], "lines": [], "dict": {}, "bool": False}


def rollout_survey_value(value, kind=None, default=None, name="the value"):
    if kind not in DEFAULTS:
        raise AnsibleFilterError(f"rollout_survey_value: kind must be one of {', '.join(DEFAULTS)}, got {kind!r}")
    if kind == "bool":
        if value is None or value == "":
            return bool(default)
        answer = settings.boolean(value)
        if answer is None:
            raise AnsibleFilterError(f"{name} must be {settings.BOOL_ACCEPTED}, got {settings.shown(value)}")
        return answer
    if not value:
        return DEFAULTS[kind] if default is None else default
    if not isinstance(value, str):
        if not isinstance(value, dict if kind == "dict" else list):
            what = "a mapping, or YAML or JSON text of one" if kind == "dict" else "a list, or text of one"
            raise AnsibleFilterError(f"{name} must be {what}, got {settings.kind_of(value)} {settings.shown(value)}")
        return value
    if kind == "list":
        return re.findall(r"[^,\s]+", value)
    if kind == "lines":
        return [line.strip() for line in value.split("\n") if line.strip()]
    try:
        mapping = parse_text(str(value))
    except ValueError as err:
        raise AnsibleFilterError(f"{name} must be a mapping, or YAML or JSON text of one; its text is not YAML or JSON: {err}")
    if mapping in (None, ""):
        return DEFAULTS[kind] if default is None else default
    if not isinstance(mapping, dict):
        raise AnsibleFilterError(f"{name} must be a mapping, or YAML or JSON text of one, got {settings.kind_of(mapping)} {settings.shown(mapping)}")
    return mapping


class FilterModule(object):
    def filters(self):
        return {"rollout_survey_value": rollout_survey_value}
