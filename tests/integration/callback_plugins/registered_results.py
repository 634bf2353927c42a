"""Test-only callback (tests/integration/playbook.py): at the end of the run, writes the values registered as
``case_0`` ... ``case_<n>`` to the JSON file $CAPI_ROLLOUT_IT_RESULTS, in order, as ``{{ [case_0, ...] | to_json }}``
would. A ``copy`` task did this before: it cost two module processes (stat and copy) per module call of the suite."""

import os
import re

from ansible.plugins.callback import CallbackBase
from ansible.plugins.filter.core import to_json

CASE = re.compile(r"^case_(\d+)$")


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "registered_results"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._variable_manager = None

    def v2_playbook_on_play_start(self, play):
        self._variable_manager = play.get_variable_manager()

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("CAPI_ROLLOUT_IT_RESULTS")
        if not path or self._variable_manager is None:
            return
        # the registered values are the play's non-persistent facts (VariableManager.set_nonpersistent_facts)
        cases = {}
        for values in self._variable_manager._nonpersistent_fact_cache.values():
            for name, value in values.items():
                match = CASE.match(name)
                if match:
                    cases[int(match.group(1))] = value
        with open(path, "w", encoding="utf-8") as out:
            out.write("[" + ", ".join(to_json(cases[index]) for index in sorted(cases)) + "]")
