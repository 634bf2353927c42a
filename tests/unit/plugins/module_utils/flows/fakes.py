# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An AnsibleModule stand-in for the flow tests: its params are a module's defaults (``DEFAULTS`` of the subclass)
with a fake connection, exit_json / fail_json raise Exit with the result; a fake monotonic clock."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy


class Exit(Exception):
    def __init__(self, result, failed):
        super(Exit, self).__init__(result.get("msg"))
        self.result = result
        self.failed = failed


class ModuleStandIn(object):
    _name = None
    DEFAULTS = {}

    def __init__(self, check_mode=False, diff=False, **params):
        self.params = dict(copy.deepcopy(self.DEFAULTS), host="https://fake:6443", api_key="t")
        self.params.update(params)
        self.check_mode = check_mode
        self._diff = diff
        self.no_log_values = set()
        self.warnings = []

    def warn(self, text):
        self.warnings.append(text)

    def exit_json(self, **result):
        raise Exit(result, False)

    def fail_json(self, **result):
        raise Exit(result, True)


class Clock(object):
    """Monotonic seconds, moved only by the pauses of the code under test (recorded in ``sleeps``)."""

    def __init__(self):
        self.t = 0.0
        self.sleeps = []

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.t += seconds
