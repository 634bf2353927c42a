# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_report_merge
short_description: Merge the fleet reports of the slices of a sliced hardware refresh into one
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - AWX job slicing runs C(playbooks/hardware_refresh.yml) as N jobs, each over its own management clusters, and each
    slice writes its own C(report.json). This filter makes one fleet report (report format 1, docs/report.md) from them,
    ready for the M(ansible.builtin.copy) of C(report.json) and for the
    P(capi.rollout.rollout_report_markdown#filter), P(capi.rollout.rollout_report_html#filter) and
    P(capi.rollout.rollout_report_summary#filter) filters.
  - The slices must belong together. They must have one refresh id (the one of O(refresh_id) when given) and one mode,
    and every management cluster must be in one slice only. Otherwise the filter fails and names the reports.
  - Each management cluster of the merged report carries the name of its slice (C(slice)). The report lists the slices
    under C(slices), with their source, C(run_by), times and management clusters.
  - A management cluster of O(expected) that no slice reports shows as C(skipped) with the reason, and the overall
    result is then never V(succeeded).
  - The C(capi.rollout.rollout_report) role uses it (C(tasks_from=merge)), as does C(playbooks/merge_reports.yml).
positional: _input
options:
  _input:
    description:
      - The slice reports, one dict each, with C(source) (the path, for messages) and either C(text) (the content of
        C(report.json); V(null) when the file does not exist) or C(report) (the report as a dict).
    type: list
    elements: dict
    required: true
  expected:
    description: The management clusters of the whole run, in report order (the inventory hosts).
    type: list
    elements: str
  refresh_id:
    description: The refresh id the slices must have; empty accepts the one they share.
    type: str
  where:
    description: Where the slice reports were looked for, for the message when there are none.
    type: str
seealso:
  - plugin: capi.rollout.rollout_report_summary
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Read the slice reports
  ansible.builtin.set_fact:
    slice_reports: "{{ slice_reports | default([]) + [{'source': item, 'text': lookup('ansible.builtin.file', item)}] }}"
  loop: "{{ query('ansible.builtin.fileglob', '/reports/hw-2026-11/slices/*/report.json') | sort }}"

- name: Merge them into one fleet report
  ansible.builtin.set_fact:
    fleet_report: >-
      {{ slice_reports | capi.rollout.rollout_report_merge(refresh_id='hw-2026-11', expected=groups['management_clusters']) }}
'''

RETURN = r'''
_value:
  description:
    - The merged fleet report (report format 1) with the extra keys C(slices) and, per management cluster, C(slice).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils import unsafe
from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

merge = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.report.merge")


def rollout_report_merge(slices, expected=None, refresh_id=None, where=None):
    """One fleet report from the slice reports (see DOCUMENTATION)."""
    if not isinstance(slices, (list, tuple)):
        raise AnsibleFilterError("rollout_report_merge: expected a list of slice reports, got %s" % type(slices).__name__)
    try:
        return unsafe.wrap_var(merge.merge_slices(list(slices), expected=list(expected or []), refresh_id=refresh_id, where=where))
    except merge.MergeError as exc:
        raise AnsibleFilterError("rollout_report_merge: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"rollout_report_merge": rollout_report_merge}
