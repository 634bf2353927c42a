# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_report_summary
short_description: Count what a fleet rollout report says
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Reduces the fleet report of a hardware refresh (see O(_input)) to a dictionary of counts.
  - The same counts head the HTML and Markdown reports. They fit C(ansible.builtin.set_stats), which puts them into AWX job
    artifacts, and they can drive a notification or a workflow branch.
  - Each object is counted in exactly one of C(switched), C(unchanged), C(failed), C(undone), C(running),
    C(pending), C(skipped), C(planned) or C(other). C(blocked) and C(reverted) are counted as well, across those
    buckets.
positional: _input
extends_documentation_fragment:
  - capi.rollout.rollout_report
seealso:
  - plugin: capi.rollout.rollout_report_html
    plugin_type: filter
  - plugin: capi.rollout.rollout_report_markdown
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Publish the counts as AWX job artifacts
  ansible.builtin.set_stats:
    data:
      fleet_refresh: "{{ fleet_report | capi.rollout.rollout_report_summary }}"

- name: Fail the job when anything failed
  ansible.builtin.assert:
    that: (fleet_report | capi.rollout.rollout_report_summary).status != 'failed'
    fail_msg: "{{ (fleet_report | capi.rollout.rollout_report_summary).failures | map(attribute='reason') | join('; ') }}"
'''

RETURN = r'''
_value:
  description: Counts and lists derived from the report.
  type: dict
  contains:
    report_version:
      description: Report format.
      type: int
    refresh_id:
      description: The refresh id.
      type: str
    mode:
      description: V(apply) or V(check).
      type: str
    status:
      description:
        - The overall result. It is V(failed), V(stopped_window), V(partial), V(running), V(succeeded), V(planned)
          or V(skipped), taking the first of these that any management cluster has.
      type: str
    started:
      description: Start of the run, RFC 3339 in UTC.
      type: str
    finished:
      description: End of the run, RFC 3339 in UTC.
      type: str
    duration_seconds:
      description: Length of the run in seconds; V(null) when unknown.
      type: int
    management_clusters:
      description:
        - The key V(total) and one count per management cluster result (V(succeeded), V(failed), V(partial),
          V(stopped_window), V(running), V(planned), V(skipped), plus any other result found).
      type: dict
    machine_deployments:
      description:
        - Counts for the MachineDeployments. V(total), V(replicas), one key per bucket (V(switched), V(unchanged),
          V(failed), V(undone), V(running), V(pending), V(skipped), V(planned), V(other)), and V(blocked) (objects
          with blockers) and V(reverted) (objects whose undo finished, whether their own rollout failed or not).
      type: dict
    control_planes:
      description: The same counts for control planes (KubeadmControlPlane).
      type: dict
    objects:
      description: The same counts for all objects.
      type: dict
    machines_replaced:
      description:
        - The Machines the switched objects replaced - counted from the Machines where the wait read them (the role),
          else the sum of the replicas of the switched objects.
      type: int
    machines_updated_in_place:
      description: The Machines of the switched objects that CAPI (v1.12+, InPlaceUpdates) updated in place instead.
      type: int
    machines_to_replace:
      description: Check mode, the sum of the replicas of the objects the plan would switch (blocked ones included).
      type: int
    failures:
      description:
        - One entry per failure, with V(management_cluster), V(object) (C(Kind/namespace/name); V(null) for a failure
          of the management cluster itself), V(result) (V(failed), V(undone) or V(undo_failed)), V(reason) and
          V(next_step).
        - A failure of a management cluster that gives no reason of its own or only repeats the reason of one of
          its failed objects is left out. Its next step goes to the entries of its first failed object (the first
          undone one when none failed) that have no next step of their own; the rendered reports decide the same way.
      type: list
      elements: dict
    attention:
      description:
        - The management clusters whose result is V(failed), V(stopped_window) or V(partial), or that give a reason.
          Each has V(management_cluster), V(result), V(reason) and V(next_step).
        - A different view by design from the "Needs attention" section of the rendered reports, which leaves out
          a management cluster whose failure its objects already tell.
      type: list
      elements: dict
    blocked:
      description: The objects with blockers, as V(management_cluster), V(object) and V(blockers).
      type: list
      elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils import unsafe
from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

model = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.report.model")


def rollout_report_summary(report):
    """Counts for a fleet report (plain types only, ready for set_stats)."""
    try:
        return unsafe.wrap_var(model.summarize(report))
    except TypeError as exc:
        raise AnsibleFilterError("rollout_report_summary: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"rollout_report_summary": rollout_report_summary}
