# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of capi_rollout_report: writes the fleet report's files on the controller, in the Ansible
process (plugins/plugin_utils/report_files.py); the module file only documents it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.capi.rollout.plugins.plugin_utils.report_files import FORMATS, ReportWriteError, write_report

ARGUMENT_SPEC = {
    "report": {"type": "dict", "required": True},
    "dest": {"type": "path", "required": True},
    "formats": {"type": "list", "elements": "str", "choices": list(FORMATS), "default": list(FORMATS)},
    "keep_unchanged": {"type": "bool", "default": False},
}


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        del validation
        try:
            written = write_report(args["dest"], args["report"], args["formats"], check_mode=self._task.check_mode,
                                   keep_unchanged=args["keep_unchanged"])
        except (ReportWriteError, TypeError, ValueError) as err:
            result.update(failed=True, msg=f"capi_rollout_report: {err}")
            return result
        result.update(written)
        return result
