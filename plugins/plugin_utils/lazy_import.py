# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Modules the filter plugins import only when one of their filters is called.

ansible-core finds a collection's filter by loading every file of its ``plugins/filter/`` (``Jinja2Loader``), in
every worker process, that is once per task and host, and its collection loader compiles ``module_utils`` from
source each time (no bytecode cache). Imported at the top of the filter files, the report and planning code behind
every filter was compiled again for each task that used any one of them: about 50 ms of CPU per task and host on
the 2-core test machine, some 10 % of the controller's CPU in a check-mode plan of 50 management clusters
(docs/performance.md). Behind ``LazyModule``, a task compiles only the code of the filters it calls.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib


class LazyModule(object):
    """A module, imported at the first use of one of its attributes."""

    def __init__(self, name):
        self._lazy_name = name
        self._lazy_module = None

    def __getattr__(self, attribute):
        # only reached for the module's attributes: the two above are found without it
        if self._lazy_module is None:
            self._lazy_module = importlib.import_module(self._lazy_name)
        return getattr(self._lazy_module, attribute)
