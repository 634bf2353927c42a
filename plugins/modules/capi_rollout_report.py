#!/usr/bin/python
# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The work is done by the action plugin of the same name, on the controller (plugins/action/capi_rollout_report.py).

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_rollout_report
short_description: Write the files of a fleet rollout report on the Ansible controller
version_added: 0.1.0
description:
  - Writes C(report.json), C(report.md) and C(report.html) of a fleet report (report format 1, the fact the
    C(capi.rollout.rollout_report) role builds from the results of C(capi.rollout.hardware_refresh)) into one
    directory on the Ansible controller, creating the directory when it is missing.
  - Runs in the Ansible process on the controller, whatever host the task is for. It starts no module, so a report
    costs milliseconds, not the seconds of a C(ansible.builtin.copy) task per file.
  - Each file is written to a temporary file in the same directory and renamed over the old one, so a reader never
    sees half a report. A file whose content would not change is not touched, and the task then reports no change.
  - The Markdown and HTML files are those of the filters P(capi.rollout.rollout_report_markdown#filter) and
    P(capi.rollout.rollout_report_html#filter).
author:
  - capi.rollout contributors (@capi-rollout)
options:
  report:
    description:
      - The fleet report (report format 1, see C(docs/report.md)).
    type: dict
    required: true
  dest:
    description:
      - The directory to write the files into, on the controller. A relative path is taken from the directory
        C(ansible-playbook) runs in.
    type: path
    required: true
  formats:
    description:
      - Which files to write.
    type: list
    elements: str
    choices: [json, md, html]
    default: [json, md, html]
  keep_unchanged:
    description:
      - Leave the files as they are when the C(report.json) already in O(dest) still tells the outcome of the run that
        made O(report) - a re-run of a refresh that had succeeded, which changed nothing on any management cluster and
        would otherwise replace the record of the run that did the work with V(unchanged) everywhere. Only the report
        of a whole applied run is kept, never a check run's or a slice's.
      - The result then says so (RV(kept), RV(kept_reason)) and returns that earlier report (RV(report)).
    type: bool
    default: false
attributes:
  action:
    description: Runs on the controller, as an action plugin.
    support: full
  check_mode:
    description: Writes nothing in check mode and says what would change. The roles write the report of a check run
      with C(check_mode=false), since that report is the plan.
    support: full
  diff_mode:
    description: No diff is shown; the files are the report.
    support: none
  platform:
    description: Writes on the Ansible controller.
    support: full
    platforms: posix
seealso:
  - plugin: capi.rollout.rollout_report_markdown
    plugin_type: filter
  - plugin: capi.rollout.rollout_report_html
    plugin_type: filter
  - plugin: capi.rollout.rollout_report_summary
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Write the fleet report next to the playbook run
  capi.rollout.capi_rollout_report:
    report: "{{ rollout_report_data }}"
    dest: "report/{{ refresh_id }}"
  run_once: true
  check_mode: false

- name: Write only the JSON file
  capi.rollout.capi_rollout_report:
    report: "{{ rollout_report_data }}"
    dest: /var/lib/awx/reports/nightly
    formats: [json]
  run_once: true
'''

RETURN = r'''
dest:
  description: The directory the files are in, as an absolute path.
  returned: success
  type: str
  sample: /home/ops/report/refresh-2026-12
files:
  description: For each format written, the file's path and whether its content changed.
  returned: success
  type: dict
  sample:
    json: {path: /home/ops/report/refresh-2026-12/report.json, changed: true}
    md: {path: /home/ops/report/refresh-2026-12/report.md, changed: true}
    html: {path: /home/ops/report/refresh-2026-12/report.html, changed: false}
kept:
  description: Whether the earlier report was kept (O(keep_unchanged)); then no file was written.
  returned: success
  type: bool
kept_reason:
  description: Why the earlier report was kept or not (null without O(keep_unchanged)).
  returned: success
  type: str
  sample: the earlier report has another refresh_id
report:
  description: The earlier report, kept (report format 1).
  returned: when RV(kept)
  type: dict
summary:
  description:
    - The summary of the report that stands (the one written, or the earlier one kept), as
      P(capi.rollout.rollout_report_summary#filter) returns it.
  returned: success
  type: dict
'''
