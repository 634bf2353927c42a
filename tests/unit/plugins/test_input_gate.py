# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The input gate (core.inputs) of every module, through the module's own main() and AnsibleModule: each refused case
fails with the one shape and its reason, naming the option, before any request - the connection is a stub that fails
the test when it is made (a positive control shows that good input reaches it)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib
import json

import pytest

from ansible.module_utils import basic

from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.flows import run as flow_run

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19 (the floor) reads the arguments from basic._ANSIBLE_ARGS
    patch_module_args = None

LOCK = {"holder": "me"}
PLAN = {"namespaces": ["default"], "refresh_id": "hw-1"}
HOLD = {"overrides": {"workerImage": "img:2"}}
SHAPE = {"failed", "msg", "reason", "hint", "ref", "changed", "api_requests", "progress", "server_time", "problems"}

# (module, params, reason, option the first problem names, ending of the message, the module's own empty keys)
CASES = [
    ("capi_rollout_restart", {"names": []}, "invalid_selection", "names", "nothing was changed", {"objects": []}),
    ("capi_rollout_restart", {"switches": []}, "invalid_selection", "switches", "nothing was changed", {"objects": []}),
    ("capi_rollout_restart", {"switches": [{"name": "a", "infrastructure_ref": {"name": "t"}},
                                           {"name": " a ", "infrastructure_ref": {"name": "u"}}]},
     "invalid_selection", "switches", "nothing was changed", {"objects": []}),
    ("capi_rollout_restart", {"kind": "MachinePool", "name": "a"}, "invalid_kind", "kind", "nothing was changed", {}),
    ("capi_rollout_restart", {"name": "a", "history_limit": 0}, "invalid_setting", "history_limit", "nothing was changed", {}),
    ("capi_rollout_restart", {"name": "a", "lease": dict(LOCK, lease_duration_seconds=0)}, "invalid_setting",
     "lease.lease_duration_seconds", "nothing was changed", {}),
    ("capi_rollout_restart", {"name": "a", "after": True}, "invalid_setting", "after", "nothing was changed", {}),
    ("capi_rollout_restart", {"name": "a", "after": "tomorrow"}, "invalid_after", "after", "nothing was changed", {}),
    ("capi_rollout_restart", {"name": "a", "after": "2026-02-30T00:00:00Z"}, "invalid_after", "after", "nothing was changed", {}),
    ("capi_rollout_restart", {"name": "a", "infrastructure_ref": {"name": ""}}, "invalid_infrastructure_ref",
     "infrastructure_ref", "nothing was changed", {}),
    ("capi_rollout_restart", {"switches": [{"name": "a", "infrastructure_ref": {"name": "t"}},
                                           {"name": "b", "infrastructure_ref": {"name": "", "kind": "X"}}]},
     "invalid_infrastructure_ref", "switches", "nothing was changed", {"objects": []}),
    ("capi_rollout_restart", {"name": "a", "infrastructure_ref": {"name": "a", "kind": "MachineDeployment",
                                                                  "api_group": "cluster.x-k8s.io"}},
     "not_a_template", "infrastructure_ref", "nothing was changed", {}),
    ("capi_rollout_pause", {"names": ["a", ""], "paused": True}, "invalid_selection", "names", "nothing was changed",
     {"objects": []}),
    ("capi_rollout_pause", {"name": "a", "paused": True, "rollout_id": "-x"}, "invalid_setting", "rollout_id",
     "nothing was changed", {}),
    ("capi_rollout_undo", {"kind": "MachineSet", "name": "a"}, "invalid_kind", "kind", "nothing was changed", {}),
    ("capi_rollout_undo", {"name": "a", "to_revision": 2, "undo_rollout_id": "r"}, "invalid_revision", "to_revision",
     "nothing was changed", {"objects": []}),
    ("capi_rollout_info", {"kind": "Bogus"}, "invalid_kind", "kind", "nothing was changed", {}),
    ("capi_rollout_info", {"label_selectors": [" "]}, "invalid_selection", "label_selectors", "nothing was changed", {}),
    ("capi_rollout_info", {"name": "a", "wait": True, "wait_timeout": 0}, "invalid_setting", "wait_timeout",
     "nothing was changed", {}),
    ("capi_rollout_lock", {"holder": "  "}, "invalid_holder", "holder", "nothing was changed", {}),
    ("capi_rollout_lock", dict(LOCK, lease_duration_seconds=0), "invalid_duration", "lease_duration_seconds",
     "nothing was changed", {}),
    ("capi_rollout_lock", dict(LOCK, wait_timeout=86401), "invalid_setting", "wait_timeout", "nothing was changed", {}),
    ("capi_machine_template", {"objects": []}, "invalid_input", "objects", "nothing was changed", {"results": []}),
    ("capi_machine_template", {"objects": [{"name": "a"}], "labels": {"a": "b"}}, "invalid_input", "labels",
     "nothing was changed", {"results": []}),
    ("capi_machine_template", {"from_object": {"name": "a"}, "labels": {"team": ["a", "b"]}}, "invalid_input", "labels",
     "nothing was changed", {"results": []}),
    ("capi_machine_template", {"objects": [{"name": "a"}, {"name": "b", "annotations": {"note": {"x": 1}}}]}, "invalid_input",
     "objects[1].annotations", "nothing was changed", {"results": []}),
    ("capi_machine_template", {"from_object": {"name": "a"}, "lease": dict(LOCK, lease_duration_seconds=86401)},
     "invalid_setting", "lease.lease_duration_seconds", "nothing was changed", {"results": []}),
    ("capi_refresh_plan", dict(PLAN, max_in_flight="150%"), "invalid_setting", "max_in_flight", "nothing was read", {}),
    ("capi_refresh_plan", dict(PLAN, lock=dict(LOCK, lease_duration_seconds=0)), "invalid_setting",
     "lock.lease_duration_seconds", "nothing was read", {}),
    ("capi_rollout_wait", {"objects": []}, "invalid_setting", "objects", "nothing was changed", {"tracking": {}}),
    ("capi_rollout_wait", {"objects": [{"name": "a", "switched_at": "yesterday"}]}, "invalid_switched_at", "objects",
     "nothing was changed", {"tracking": {}, "finished_call": True}),
    ("capi_rollout_wait", {"objects": [{"name": "a", "kind": "MachinePool"}]}, "invalid_kind", "objects",
     "nothing was changed", {"tracking": {}}),
    ("capi_rollout_wait", {"objects": [{"name": "a", "infrastructure_ref": {"name": "t"}, "topology": HOLD}]},
     "invalid_input", "objects", "nothing was changed", {"tracking": {}}),
    ("capi_rollout_wait", {"objects": [{"name": "a"}], "poll_interval": 0}, "invalid_setting", "poll_interval",
     "nothing was changed", {"tracking": {}}),
]

# good input of every module: it passes the gate and reaches the connection
GOOD = [
    ("capi_rollout_restart", {"name": "a"}), ("capi_rollout_pause", {"name": "a", "paused": True}),
    ("capi_rollout_restart", {"name": "a", "after": "2026-03-01T12:00:00+01:00", "infrastructure_ref": {"name": "t"}}),
    ("capi_rollout_restart", {"switches": [{"name": "a", "infrastructure_ref": {"name": "t"}},
                                           {"name": "b", "template": {"overrides": {"image": "i"}}}]}),
    ("capi_rollout_undo", {"name": "a"}), ("capi_rollout_info", {"name": "a"}), ("capi_rollout_lock", LOCK),
    ("capi_machine_template", {"objects": [{"name": "a"}]}), ("capi_refresh_plan", PLAN),
    ("capi_rollout_wait", {"objects": [{"name": "a", "switched_at": "2026-03-01T12:00:00Z"}]}),
]


class Connected(Exception):
    """The module made its connection: the gate let it through."""


@pytest.fixture
def no_connection(monkeypatch):
    def connection(*_args, **_kwargs):
        raise Connected()

    monkeypatch.setattr(flow_run, "Connection", connection)


def call(monkeypatch, capsys, module, params):
    """main() of ``module`` with ``params``: its result (exit_json / fail_json), or Connected."""
    main = importlib.import_module(f"ansible_collections.capi.rollout.plugins.modules.{module}").main
    if patch_module_args is None:
        monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": params}).encode())
        with pytest.raises(SystemExit):
            main()
    else:
        with patch_module_args(params), pytest.raises(SystemExit):
            main()
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("module, params, reason, option, ending, empty", CASES,
                         ids=[f"{case[0]}-{index}" for index, case in enumerate(CASES)])
def test_refused_input_fails_with_the_one_shape_before_any_request(monkeypatch, capsys, no_connection, module, params,
                                                                   reason, option, ending, empty):
    out = call(monkeypatch, capsys, module, params)
    assert SHAPE <= set(out), out
    assert out["failed"] and out["reason"] == reason and out["changed"] is False, out
    assert out["api_requests"] == 0 and out["progress"] == [] and out["server_time"] is None, out
    assert out["msg"].endswith(f"; {ending}"), out["msg"]
    first = out["problems"][0]
    assert set(first) == {"option", "value", "reason", "msg"}
    assert (first["option"], first["reason"]) == (option, reason), out["problems"]
    assert first["msg"] in out["msg"] and option.split(".")[-1] in first["msg"], first
    assert all(problem["reason"] in inputs.REASONS for problem in out["problems"]), out["problems"]
    assert {key: out[key] for key in empty} == empty


def test_every_module_has_refused_cases_and_good_input_that_reaches_the_connection():
    assert {case[0] for case in CASES} == {module for module, _params in GOOD}


@pytest.mark.parametrize("module, params", GOOD, ids=[f"{module}-{index}" for index, (module, _params) in enumerate(GOOD)])
def test_good_input_passes_the_gate(monkeypatch, capsys, no_connection, module, params):
    with pytest.raises(Connected):
        call(monkeypatch, capsys, module, params)


def test_every_problem_is_listed_once_per_option_and_the_first_names_the_reason(monkeypatch, capsys, no_connection):
    out = call(monkeypatch, capsys, "capi_rollout_lock", {"holder": " ", "lease_duration_seconds": 0, "poll_interval": 0})
    # lease_duration_seconds=0 is also out of the settings' range: the lock's own check names it, once
    assert [(problem["option"], problem["reason"]) for problem in out["problems"]] == [
        ("holder", "invalid_holder"), ("lease_duration_seconds", "invalid_duration"), ("poll_interval", "invalid_setting")]
    assert out["reason"] == "invalid_holder"
    assert out["msg"] == "; ".join(problem["msg"] for problem in out["problems"]) + "; nothing was changed"
    assert out["problems"][1]["value"] == 0


def test_values_of_secret_options_are_not_shown(monkeypatch, capsys, no_connection):
    out = call(monkeypatch, capsys, "capi_rollout_info", {"api_key": "tok\x00en", "host": "https://127.0.0.1:1"})
    assert out["reason"] == "invalid_setting" and out["problems"][0]["option"] == "api_key"
    assert "tok" not in json.dumps(out)


def test_named_option_is_the_given_option_the_message_names_first():
    params = {"names": ["a"], "name": None, "switches": [], "kind": "MachineDeployment"}
    assert inputs.named_option("machinedeployment/default/a: switches names a twice", params) == "switches"
    assert inputs.named_option("nothing named", params) == ""
    assert inputs.value_at({"lease": {"n": [1, {"x": 2}]}}, "lease.n[1].x") == 2
    assert inputs.value_at({"lease": None}, "lease.n[3]") is None
