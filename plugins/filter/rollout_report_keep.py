# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_report_keep
short_description: Whether an earlier fleet report still tells the outcome of a run that changed nothing
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Compares the fleet report of this run (see O(_input)) with the C(report.json) already at the place it would be
    written (O(existing)).
  - A re-run with the same refresh id after the refresh succeeded changes nothing on any management cluster (no
    switch, no wait, no lock taken). Its report would replace the record of the run that did the work with one that
    says V(unchanged) everywhere, and rewrite three files for a run that changed nothing. The
    C(capi.rollout.rollout_report) role keeps the earlier report then.
  - It is kept only when both are of the same refresh id, report format and V(apply) mode, neither is a slice, they
    name the same management clusters and objects, every object of this run is V(unchanged) on the target template
    the earlier report names, no lock was taken, and the earlier report says every object was switched or already
    on target successfully. Anything else is written as before.
positional: _input, existing
extends_documentation_fragment:
  - capi.rollout.rollout_report
options:
  existing:
    description:
      - The text of the C(report.json) found where the report would be written; empty when there is none.
      - Text that is not a report is never kept.
    type: str
    required: true
seealso:
  - plugin: capi.rollout.rollout_report_summary
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Keep the earlier report when this run changed nothing
  ansible.builtin.set_fact:
    keep: "{{ (fleet_report | capi.rollout.rollout_report_keep(lookup('ansible.builtin.file', 'report/hw-2026-11/report.json'))).keep }}"
'''

RETURN = r'''
_value:
  description: Whether to keep the earlier report, and why (or why not).
  type: dict
  contains:
    keep:
      description: V(true) when the earlier report still holds and need not be replaced.
      type: bool
    reason:
      description: Why, in words.
      type: str
'''

from ansible_collections.capi.rollout.plugins.module_utils.report.keep import still_holds


def rollout_report_keep(report, existing):
    keep, reason = still_holds(report, existing)
    return {"keep": keep, "reason": reason}


class FilterModule(object):
    def filters(self):
        return {"rollout_report_keep": rollout_report_keep}
