# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_report_markdown
short_description: Render a fleet rollout report as Markdown
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Turns the fleet report of a hardware refresh (see O(_input)) into GitHub-flavoured Markdown for C(report.md),
    pull requests, tickets or chat.
  - "The document has these parts:"
  - A header with the refresh id, the overall result, the times and the counts.
  - A B(Needs attention) section. Each failure shows its reason, the stuck machines, what was undone and the next
    step. Management clusters stopped at the end of the maintenance window and check-mode blockers are listed too.
  - A summary table with one row per management cluster.
  - For each management cluster, a wave table and an object table. The object table shows the template before and
    after, the result, the start time, the rollout and soak durations, and the reason.
  - In check mode, each management cluster gets a plan table instead. Its columns are workload cluster, object,
    replicas, current template to target template, action, wave and blockers.
  - Results carry an icon and a word, so the tables read without colour.
  - Every string from the report is escaped for Markdown.
positional: _input
extends_documentation_fragment:
  - capi.rollout.rollout_report
seealso:
  - plugin: capi.rollout.rollout_report_html
    plugin_type: filter
  - plugin: capi.rollout.rollout_report_summary
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Write the Markdown report
  ansible.builtin.copy:
    content: "{{ fleet_report | capi.rollout.rollout_report_markdown }}"
    dest: "{{ report_dir }}/report.md"
    mode: "0644"
  delegate_to: localhost
  run_once: true
'''

RETURN = r'''
_value:
  description: The Markdown document.
  type: string
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils import unsafe
from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

markdown = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.report.markdown")


def rollout_report_markdown(report):
    """The Markdown document for a fleet report."""
    try:
        return unsafe.wrap_var(markdown.render_markdown(report))
    except TypeError as exc:
        raise AnsibleFilterError("rollout_report_markdown: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"rollout_report_markdown": rollout_report_markdown}
