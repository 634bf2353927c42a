# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_plan_table
short_description: Format the plan of a rolling refresh as a text table
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Formats the plan of a hardware refresh (what a check-mode run would do) as an aligned text table, one line per
    object, in the style of C(kops rolling-update cluster) without C(--yes).
  - The columns are the workload cluster, the object, its replicas, the current and the target template, the
    action, the wave, the MachineHealthChecks that cover a MachineDeployment (their limits under upstream's names, a
    paused one, Machines that skip remediation, those being remediated; C(-) for none) and the blockers (why the object
    cannot be switched).
  - Returns the lines as a list so C(ansible.builtin.debug) prints one table row per line.
positional: _input
options:
  _input:
    description:
      - The plan rows. Each is a dictionary with C(cluster), C(kind), C(namespace), C(name), C(replicas),
        C(current) (template name), C(target) (template name), C(action), C(wave) (name or number) and
        C(blockers) (list of strings), and C(health) (the coverage of capi_refresh_plan's objects). Missing values are
        shown as C(-).
      - The objects of P(capi.rollout.rollout_refresh_plan#filter) work as they are - the template names are taken
        from C(before) and C(after), the wave from C(wave_name), an object with C(restart) shows the action
        V(restart) and one with C(resume) the action V(resume).
    type: list
    elements: dict
    required: true
  width:
    description:
      - Cut cells to this many characters (blockers are never cut, they come last).
    type: int
    default: 100
'''

EXAMPLES = r'''
- name: Show the plan as one block of text (the YAML callback prints it unwrapped)
  ansible.builtin.debug:
    msg: "{{ plan_rows | capi.rollout.rollout_plan_table | join(newline) }}"
  vars:
    newline: "\n"
'''

RETURN = r'''
_value:
  description: The table lines - a header, a rule and one line per row; a single line when there are no rows.
  type: list
  elements: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

healthchecks = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.healthchecks")

COLUMNS = (("CLUSTER", "cluster"), ("OBJECT", "object"), ("REPLICAS", "replicas"), ("CURRENT TEMPLATE -> TARGET", "templates"),
           ("ACTION", "action"), ("WAVE", "wave"), ("HEALTH CHECK", "health"), ("BLOCKERS", "blockers"))


def _text(value):
    if value is None or value == "" or value == []:
        return "-"
    return " ".join(str(value).split())


def _cut(text, width):
    return text if len(text) <= width else text[:max(width - 1, 1)] + "~"


def _cells(row, width):
    kind = str(row.get("kind") or "")
    short = {"MachineDeployment": "md", "KubeadmControlPlane": "kcp"}.get(kind, kind.lower())
    obj = f"{short}/{row.get('namespace')}/{row.get('name')}" if row.get("name") else "-"
    current, target = row.get("current"), row.get("target")
    if current is None and isinstance(row.get("before"), dict):
        current = (row["before"].get("infrastructure_ref") or {}).get("name")
    if target is None and isinstance(row.get("after"), dict):
        target = (row["after"].get("infrastructure_ref") or {}).get("name")
    current, target = _text(current), _text(target)
    action = row.get("action")
    if action == "switch" and row.get("restart"):
        action = "restart"
    if action in ("switch", "restart") and row.get("resume"):
        action = "resume"
    wave = row.get("wave_name") if row.get("wave_name") is not None else row.get("wave")
    templates = current if target in ("-", current) else f"{current} -> {target}"
    blockers = row.get("blockers") or []
    if isinstance(blockers, str):
        blockers = [blockers]
    cells = {"cluster": _text(row.get("cluster")), "object": obj, "replicas": _text(row.get("replicas")),
             "templates": templates, "action": _text(action), "wave": _text(wave),
             "health": _text(healthchecks.summary(row.get("health"))),
             "blockers": "; ".join(_text(item) for item in blockers) or "-"}
    return {key: (value if key == "blockers" else _cut(value, width)) for key, value in cells.items()}


def rollout_plan_table(rows, width=100):
    if rows is None:
        rows = []
    if not isinstance(rows, (list, tuple)) or not all(isinstance(row, dict) for row in rows):
        raise AnsibleFilterError("rollout_plan_table: the input must be a list of dictionaries")
    if not rows:
        return ["(nothing selected)"]
    table = [_cells(row, int(width)) for row in rows]
    widths = {key: max([len(title)] + [len(cells[key]) for cells in table]) for title, key in COLUMNS}
    last = COLUMNS[-1][1]

    def line(values):
        parts = [values[key] if key == last else values[key].ljust(widths[key]) for _title, key in COLUMNS]
        return "  ".join(parts).rstrip()

    header = line({key: title for title, key in COLUMNS})
    rule = line({key: "-" * widths[key] for _title, key in COLUMNS})
    return [header, rule] + [line(cells) for cells in table]


class FilterModule(object):
    def filters(self):
        return {"rollout_plan_table": rollout_plan_table}
