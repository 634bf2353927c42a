# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import settings

KNOWN = ["hardware_refresh_wait_timeout", "hardware_refresh_stall_timeout", "hardware_refresh_soak_seconds"]


@pytest.mark.parametrize("name, value", [
    ("hardware_refresh_stall_timeout", 0), ("hardware_refresh_wait_timeout", -1), ("hardware_refresh_soak_seconds", -5),
    ("hardware_refresh_wait_timeout", "soon"), ("hardware_refresh_wait_timeout", True), ("hardware_refresh_wait_timeout", 1.5),
])
def test_out_of_range_or_not_a_whole_number(name, value):
    (problem,) = settings.errors({name: value}, KNOWN, [])
    assert problem.startswith(f"{name} must be a whole number >= ") and repr(value) in problem


@pytest.mark.parametrize("value", [1, "300", " 30 "])
def test_in_range_and_survey_text(value):
    assert settings.errors({"hardware_refresh_wait_timeout": value, "hardware_refresh_soak_seconds": 0}, KNOWN, []) == []


def test_unknown_variables_are_named_with_the_closest_option():
    problems = settings.errors({}, KNOWN, ["hardware_refresh_soak_second", "hardware_refresh_wait_timeout", "hardware_refresh_zzz"])
    assert problems == ["hardware_refresh_soak_second is not a setting of this role; did you mean hardware_refresh_soak_seconds?",
                        "hardware_refresh_zzz is not a setting of this role"]


@pytest.mark.parametrize("params, expected", [
    ({"wait_timeout": 0}, "wait_timeout must be a whole number >= 1"),
    ({"stall_timeout": "0"}, "stall_timeout must be a whole number >= 1"),
    ({"soak_seconds": -1}, "soak_seconds must be a whole number >= 0"),
    ({"poll_interval": True}, "poll_interval must be a whole number >= 1"),
    ({"objects": []}, "objects is empty"),
    ({"rollout_id": "has spaces"}, "rollout_id must be 1-128 letters"),
    ({"rollout_id": "-starts-with-a-dash"}, "rollout_id must be"),
    ({"rollout_id": "x" * 129}, "rollout_id must be"),
])
def test_module_options_out_of_range(params, expected):
    problems = settings.module_errors(params)
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_module_options_in_range_and_the_lock_s_own_minimums():
    assert settings.module_errors({"wait_timeout": 1, "stall_timeout": "5", "soak_seconds": 0, "poll_interval": None,
                                   "rollout_id": "CHG-1234/hw-2026-12_a:b.c", "objects": [{"name": "md-0"}]}) == []
    assert settings.module_errors({"wait_timeout": 0, "poll_interval": 5}, settings.LOCK_MINIMUMS) == []
    assert settings.module_errors({"wait_timeout": -1}, settings.LOCK_MINIMUMS)[0].startswith("wait_timeout must be")


@pytest.mark.parametrize("refresh_id", ["", " hw-1", "hw 1", "x" * 64, "-hw", None, 7])
def test_refresh_id_must_be_a_short_token(refresh_id):
    (problem,) = settings.errors({"hardware_refresh_id": refresh_id}, KNOWN, [])
    assert problem.startswith("hardware_refresh_id must be 1-63 letters, digits, '.', '_', ':' or '-'")
    assert problem.endswith(f"got {'nothing' if refresh_id is None else refresh_id}")


@pytest.mark.parametrize("refresh_id", ["hw-2026-11", "a", "x" * 63, "run:1_b.c"])
def test_usable_refresh_ids_pass(refresh_id):
    assert settings.errors({"hardware_refresh_id": refresh_id}, KNOWN, []) == []


@pytest.mark.parametrize("restart,overrides,objects,problem", [
    (False, {}, {}, True),
    ("false", {}, {}, True),  # an AWX survey answer
    (None, {}, {}, True),
    (True, {}, {}, False),
    ("yes", {}, {}, False),
    (False, {"instanceType": "m7i.large"}, {}, False),
    (False, {}, {"MachineDeployment/ns/md-0": {"overrides": {"instanceType": "m7i.large"}}}, False),
])
def test_new_templates_must_differ_unless_restarting(restart, overrides, objects, problem):
    values = {"hardware_refresh_restart": restart, "hardware_refresh_template_overrides": overrides,
              "hardware_refresh_object_templates": objects}
    found = settings.errors(values, KNOWN, [])
    assert bool(found) is problem
    if problem:
        assert found[0].startswith("hardware_refresh_template_overrides is empty, so every new template would be a copy")
