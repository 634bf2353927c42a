# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each verb of the change flow says which keys its result entries carry (RESULT_KEYS, flows/verb.py), and they are
exactly what its module's RETURN documents under ``objects``: a new key of one verb needs no edit of flows/change.py,
and an undocumented one fails here."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib

import pytest
import yaml

from ansible_collections.capi.rollout.plugins.module_utils.flows import change

# what flows.change adds to every entry itself, and what a verb's own flow adds after the change flow (the wait)
MADE_BY_THE_FLOW = {"api_version", "patch", "owner", "status", "machines"}


@pytest.mark.parametrize("verb", ["restart", "undo", "pause"])
def test_the_result_keys_of_a_verb_are_those_its_module_documents(verb):
    flow = importlib.import_module(f"ansible_collections.capi.rollout.plugins.module_utils.flows.{verb}")
    module = importlib.import_module(f"ansible_collections.capi.rollout.plugins.modules.capi_rollout_{verb}")
    documented = set(yaml.safe_load(module.RETURN)["objects"]["contains"])
    assert set(change._RESULT_KEYS) <= documented
    assert set(flow.RESULT_KEYS) == documented - set(change._RESULT_KEYS) - MADE_BY_THE_FLOW


def test_a_plan_key_no_verb_names_is_left_out_of_the_result():
    plan = {"ref": "machinedeployment/ns/md", "kind": "MachineDeployment", "name": "md", "namespace": "ns", "action": "restarted",
            "changed": True, "message": "m", "patch_type": "json", "changes": [], "warnings": [], "api_version": "v1beta2",
            "patch": [{"op": "add", "path": "/x", "value": 1}], "rollout_after": "2026-12-04T00:00:00Z", "internal": 1}
    entry = change._result_entry(plan, ("rollout_after",))
    assert entry["rollout_after"] == "2026-12-04T00:00:00Z" and "internal" not in entry
    assert "rollout_after" not in change._result_entry(plan, ())
