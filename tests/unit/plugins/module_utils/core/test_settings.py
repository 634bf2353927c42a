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
