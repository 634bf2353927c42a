# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_history_table
short_description: Format the rollout history of MachineDeployments and KubeadmControlPlanes as text
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Formats the history that M(capi.rollout.capi_rollout_info) returns with O(capi.rollout.capi_rollout_info#module:history=true)
    as a text table per object, one line per revision, newest first, in the style of C(kubectl rollout history).
  - The columns are the revision (C(*) marks the current one), the time, the action, the cause (like the CHANGE-CAUSE
    of C(kubectl rollout history)), how the Machines changed (C(2 replaced, 1 updated in place), C(none), C(not known)),
    the Kubernetes version, the infrastructure template, what changed from the revision before, the reason and the actor.
  - The cause is C(template), C(trigger), C(in-place update), C(in-place field), C(scale) or C(md-setting).
  - Changes that made no revision (in-place fields, a scale, a setting; made outside this collection or by its pause)
    are lines of their own, C((after N)) in the revision column, with the field diff, the actor (the managedFields
    manager) and the time. See docs/history-and-undo.md.
  - With O(detail=true), each revision is shown in full instead, in the style of C(kubectl rollout history --revision N) -
    its record, its cause, its template, every changed field with its value before and after and the changes made
    after it without a new revision (C(Then:)).
  - Formats only; what changed is decided by the module.
  - Returns the lines as a list so C(ansible.builtin.debug) prints one line per list element.
positional: _input
options:
  _input:
    description:
      - The RV(capi.rollout.capi_rollout_info#module:resources) of M(capi.rollout.capi_rollout_info) (a list), or one of
        them (a dictionary). Objects without C(history) are shown with the line C((no history read)).
    type: raw
    required: true
  detail:
    description:
      - Show every revision in full rather than one line per revision.
    type: bool
    default: false
  width:
    description:
      - Cut the cells of the table to this many characters (the reason and the actor come last and are not cut).
    type: int
    default: 120
'''

EXAMPLES = r'''
- name: Read the history of one MachineDeployment
  capi.rollout.capi_rollout_info:
    namespace: fleet-a
    name: prod-eu-1-md-0
    history: true
  register: info

- name: Print it like kubectl rollout history
  ansible.builtin.debug:
    msg: "{{ info.resources | capi.rollout.rollout_history_table }}"

- name: Read one revision
  capi.rollout.capi_rollout_info:
    namespace: fleet-a
    name: prod-eu-1-md-0
    revision: 3
  register: one

- name: Print it like kubectl rollout history --revision 3
  ansible.builtin.debug:
    msg: "{{ one.resources | capi.rollout.rollout_history_table(detail=true) }}"
'''

RETURN = r'''
_value:
  description:
    - The lines. Per object a title line (C(kind/namespace/name)), then a header, a rule and one line per revision;
      with O(detail=true) a block of lines per revision. An empty line separates objects.
  type: list
  elements: str
'''

import json

from ansible.errors import AnsibleFilterError

COLUMNS = (("REVISION", "revision"), ("TIME", "time"), ("ACTION", "action"), ("CAUSE", "cause"), ("MACHINES", "machines"),
           ("VERSION", "version"),
           ("INFRASTRUCTURE", "infrastructure"), ("CHANGES", "changes"), ("REASON", "reason"), ("ACTOR", "actor"))
_UNCUT = ("reason", "actor")
_SPEC_PREFIXES = ("infrastructure_template.", "bootstrap_template.")


def _text(value):
    if value is None or value == "" or value == []:
        return "-"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return " ".join(str(value).split())


def _cut(text, width):
    return text if len(text) <= width else text[:max(width - 1, 1)] + "~"


def _object_ref_text(object_ref):
    return f"{object_ref.get('kind')}/{object_ref.get('name')}" if isinstance(object_ref, dict) else "-"


def _title(resource):
    return resource.get("ref") or f"{str(resource.get('kind') or '').lower()}/{resource.get('namespace')}/{resource.get('name')}"


def _changes_cell(row):
    changes = row.get("changes") or []
    own = [c for c in changes if not str(c.get("path", "")).startswith(_SPEC_PREFIXES)]
    specs = len(changes) - len(own)
    parts = [f"{c.get('path')} {_text(c.get('before'))} -> {_text(c.get('after'))}" for c in own]
    if specs:
        parts.append(f"{specs} template spec field{'' if specs == 1 else 's'}")
    if parts:
        return "; ".join(parts)
    if row.get("previous_revision") is None:
        return "-"
    return "same template (restart)"


def _machines_cell(row):
    """How the Machines changed; for a change row only the effect, its explanation is in the detail."""
    text = _text(row.get("machines"))
    return text if row.get("revision") is not None else text.split(":")[0].split(" (")[0]


def _revision_text(row):
    """A revision's number (``*``: the current one), or for a change besides revisions the one it came after."""
    if row.get("revision") is None:
        return f"(after {row.get('since_revision')})"
    return f"{row.get('revision')}{'*' if row.get('current') else ''}"


def _cells(row, width):
    template = row.get("template") or {}
    cells = {
        "revision": _revision_text(row),
        "time": _text(row.get("time")),
        "action": _text(row.get("action")),
        "cause": _text(row.get("cause")),
        "machines": _machines_cell(row),
        "version": _text(template.get("version")),
        "infrastructure": _object_ref_text(template.get("infrastructure_ref")),
        "changes": _changes_cell(row),
        "reason": _text(row.get("reason")),
        "actor": _text(row.get("actor")),
    }
    return {key: (value if key in _UNCUT else _cut(value, width)) for key, value in cells.items()}


def _table(rows, width):
    table = [_cells(row, width) for row in rows]
    widths = {key: max([len(title)] + [len(cells[key]) for cells in table]) for title, key in COLUMNS}
    last = COLUMNS[-1][1]

    def line(values):
        return "  ".join(values[key] if key == last else values[key].ljust(widths[key]) for _title, key in COLUMNS).rstrip()

    return [line({key: title for title, key in COLUMNS}), line({key: "-" * widths[key] for _title, key in COLUMNS})] + [
        line(cells) for cells in table]


def _change_detail(title, row, indent=""):
    """A change besides revisions (capi_rollout_info's change rows) in full."""
    lines = [f"{indent}{title} change after revision {row.get('since_revision')}"]
    lines.extend(f"{indent}  {label + ':':<12} {_text(value)}" for label, value in (
        ("Time", row.get("time")), ("Cause", row.get("cause")), ("Actor", row.get("actor")), ("Source", row.get("source")),
        ("MachineSet", row.get("machine_set")), ("Machines", row.get("machines"))))
    lines.extend(f"{indent}    {c.get('path')}: {_text(c.get('before'))} -> {_text(c.get('after'))}" for c in row.get("changes") or [])
    if row.get("note"):
        lines.append(f"{indent}  Note: {row['note']}")
    return lines


def _machines_detail(row):
    """A revision's Machine counts and where they come from (the Machines now, or the record kept when it was left)."""
    source = {"machines": "counted from its Machines now", "record": "recorded when the revision was left"}.get(
        row.get("machines_source"))
    return f"{_text(row.get('machines'))} ({source})" if source else row.get("machines")


def _detail(title, row):
    if row.get("revision") is None:
        return _change_detail(title, row)
    template = row.get("template") or {}
    record = (("Time", row.get("time")), ("Action", row.get("action")), ("Cause", row.get("cause")),
              ("Rollout id", row.get("rollout_id")), ("Reason", row.get("reason")), ("Actor", row.get("actor")),
              ("Source", row.get("source")), ("MachineSet", row.get("machine_set")),
              ("Machines", _machines_detail(row)))
    lines = [f"{title} revision {row.get('revision')}{' (current)' if row.get('current') else ''}"]
    lines.extend(f"  {label + ':':<12} {_text(value)}" for label, value in record)
    lines.append("  Template:")
    for label, value in (("Version", template.get("version")), ("Infrastructure", _object_ref_text(template.get("infrastructure_ref"))),
                         ("Bootstrap", _object_ref_text(template.get("bootstrap_ref")) if template.get("bootstrap_ref")
                          else template.get("data_secret_name")),
                         ("Failure domain", template.get("failure_domain"))):
        lines.append(f"    {label + ':':<16} {_text(value)}")
    previous = row.get("previous_revision")
    changes = row.get("changes") or []
    if previous is not None:
        lines.append(f"  Changes from revision {previous}:" if changes else f"  Changes from revision {previous}: none")
        lines.extend(f"    {c.get('path')}: {_text(c.get('before'))} -> {_text(c.get('after'))}" for c in changes)
    for note in ([row["note"]] if row.get("note") else []) + list(row.get("change_notes") or []):
        lines.append(f"  Note: {note}")
    for change in row.get("changed_since") or []:
        lines.extend(_change_detail("Then:", change, indent="  "))
    return lines


def rollout_history_table(resources, detail=False, width=120):
    if isinstance(resources, dict):
        resources = [resources]
    if resources is None:
        resources = []
    if not isinstance(resources, (list, tuple)) or not all(isinstance(item, dict) for item in resources):
        raise AnsibleFilterError("rollout_history_table: the input must be the resources of capi_rollout_info "
                                 "(a list of dictionaries) or one of them")
    if not resources:
        return ["(no objects)"]
    out = []
    for resource in resources:
        if out:
            out.append("")
        title = _title(resource)
        rows = resource.get("history")
        if rows is None:
            out.extend([title, "(no history read: run capi_rollout_info with history=true)"])
        elif not rows:
            out.extend([title, "(no revisions known)"])
        elif detail:
            for index, row in enumerate(rows):
                if index:
                    out.append("")
                out.extend(_detail(title, row))
        else:
            out.append(title)
            out.extend(_table(rows, int(width)))
    return out


class FilterModule(object):
    def filters(self):
        return {"rollout_history_table": rollout_history_table}
