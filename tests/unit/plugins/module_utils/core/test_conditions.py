# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_both_styles_found_per_version(version):
    md = objs.machine_deployment(version)
    metav1 = conds.metav1_conditions(md, "MachineDeployment", version)
    legacy = conds.v1beta1_conditions(md, "MachineDeployment", version)
    assert conds.find(metav1, "RollingOut")["reason"] == "NotRollingOut"
    assert conds.find(metav1, "RollingOut")["observed_generation"] == 2
    assert conds.find(legacy, "Ready")["status"] == "True"
    assert conds.find(legacy, "RollingOut") is None
    chosen, style = conds.preferred_conditions(md, "MachineDeployment", version)
    assert style == "v1beta2" and chosen == metav1


def test_preferred_falls_back_to_v1beta1():
    md = objs.machine_deployment("v1beta1")
    del md["status"]["v1beta2"]
    chosen, style = conds.preferred_conditions(md, "MachineDeployment", "v1beta1")
    assert style == "v1beta1" and [c["type"] for c in chosen] == ["Ready", "Available", "MachineSetReady"]


def test_normalize_skips_junk_and_defaults():
    out = conds.normalize([{"type": "A"}, {"status": "True"}, "x", None, {"type": "B", "status": "False", "severity": "Warning"}])
    assert out == [
        {"type": "A", "status": "Unknown", "reason": "", "message": "", "observed_generation": None, "severity": "",
         "last_transition_time": None},
        {"type": "B", "status": "False", "reason": "", "message": "", "observed_generation": None, "severity": "Warning",
         "last_transition_time": None},
    ]


@pytest.mark.parametrize("cond, generation, current", [
    ({"observed_generation": 3}, 3, True),
    ({"observed_generation": 4}, 3, True),
    ({"observed_generation": 2}, 3, False),
    ({"observed_generation": None}, 3, True),
    (None, 3, True),
    ({"observed_generation": 2}, None, True),
])
def test_is_current(cond, generation, current):
    assert conds.is_current(cond, generation) is current


def test_status_helpers_and_summary():
    items = conds.normalize([{"type": "Ready", "status": "True"}, {"type": "ScalingUp", "status": "False", "reason": "NotScalingUp"},
                             {"type": "RollingOut", "status": "True", "reason": "RollingOut", "message": "a\n\nb\nc\nd\n"}])
    assert conds.is_true(items, "Ready") and conds.is_false(items, "ScalingUp")
    assert conds.status_of(items, "Missing") is None
    assert conds.summary(conds.find(items, "RollingOut")) == "RollingOut=True (RollingOut): a; b; c; ... (1 more)"
    assert conds.summary(conds.find(items, "Ready")) == "Ready=True"
    assert conds.summary(None) == ""
