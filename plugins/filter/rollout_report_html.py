# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_report_html
short_description: Render a fleet rollout report as one self-contained HTML page
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Turns the fleet report of a hardware refresh (see O(_input)) into a complete HTML document
    for C(report.html).
  - The page is self-contained, with inline CSS and inline SVG. It needs no JavaScript and loads nothing
    from the network, so it can be attached to a ticket or e-mail, archived as an AWX artifact or opened offline.
  - It starts with the refresh id, the mode, an overall status badge and counts of management clusters ok or failed,
    MachineDeployments and control planes switched, failed or undone, machines replaced, and the total duration.
  - A B(Needs attention) panel comes next. It lists every failure with its reason, the stuck machines, what was
    undone and the next step, then management clusters stopped at the end of the maintenance window, then
    blockers found in check mode.
  - Apply runs then show a fleet timeline (one row per management cluster) and an overview table. Each management cluster
    gets a card with a timeline (time axis in UTC; one row per object with the rollout bar, the soak in a lighter
    shade, failures in red with a marker, undo hatched in orange; waves and the end of the maintenance window
    are marked) and a table of objects with their templates before and after, results, durations and reasons.
  - In check mode, each card shows the plan table instead of a timeline. Its columns are workload cluster, object,
    replicas, current template to target template, action, wave and blockers.
  - Every string from the report is HTML-escaped.
positional: _input
extends_documentation_fragment:
  - capi.rollout.rollout_report
seealso:
  - plugin: capi.rollout.rollout_report_markdown
    plugin_type: filter
  - plugin: capi.rollout.rollout_report_summary
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Write the HTML report next to the JSON one
  ansible.builtin.copy:
    content: "{{ fleet_report | capi.rollout.rollout_report_html }}"
    dest: "{{ report_dir }}/report.html"
    mode: "0644"
  delegate_to: localhost
  run_once: true
'''

RETURN = r'''
_value:
  description: The HTML document (UTF-8 text, starting with C(<!DOCTYPE html>)).
  type: string
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils import unsafe
from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

page = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.report.page")


def rollout_report_html(report):
    """The self-contained HTML page for a fleet report."""
    try:
        return unsafe.wrap_var(page.render_html(report))
    except TypeError as exc:
        raise AnsibleFilterError("rollout_report_html: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"rollout_report_html": rollout_report_html}
