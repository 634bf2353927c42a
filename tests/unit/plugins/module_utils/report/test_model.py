# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decisions of the report model that both renderers and the hardware_refresh role rely on."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.report import model


def objs(*pairs):
    return [{"action": action, "result": result} for action, result in pairs]


@pytest.mark.parametrize("objects, mode, stopped, expected", [
    # the result the run stopped with wins over everything the objects say
    (objs(("switch", "succeeded")), "apply", "stopped_window", "stopped_window"),
    (objs(("switch", "pending")), "apply", "failed", "failed"),
    (objs(("switch", "planned")), "check", "skipped", "skipped"),
    (objs(("switch", "failed"), ("switch", "succeeded")), "apply", None, "failed"),
    (objs(("switch", "undone"), ("switch", "succeeded")), "apply", None, "failed"),
    (objs(("switch", "planned"), ("skip", "skipped")), "check", None, "planned"),
    ([], "check", None, "planned"),
    (objs(("plan", "planned")), "apply", None, "planned"),
    # objects still to do: partial, whether they wait or roll out
    (objs(("switch", "succeeded"), ("switch", "pending")), "apply", None, "partial"),
    (objs(("switch", "pending")), "apply", None, "partial"),
    (objs(("switch", "running")), "apply", None, "partial"),
    (objs(("switch", "succeeded"), ("skip", "skipped")), "apply", None, "partial"),
    (objs(("skip", "skipped"), ("skip", "skipped")), "apply", None, "skipped"),
    ([], "apply", None, "skipped"),
    (objs(("switch", "succeeded"), ("unchanged", "succeeded")), "apply", None, "succeeded"),
])
def test_cluster_result(objects, mode, stopped, expected):
    assert model.cluster_result(objects, mode, stopped=stopped) == expected


def test_cluster_result_is_what_a_report_without_one_gets():
    report = {"management_clusters": [{"name": "m", "objects": [
        {"name": "a", "result": "succeeded"}, {"name": "b", "result": "running"}]}]}
    assert model.normalize(report)["management_clusters"][0]["result"] == "partial"
    report["management_clusters"][0]["result"] = "running"  # a recorded result is kept
    assert model.normalize(report)["management_clusters"][0]["result"] == "running"


@pytest.mark.parametrize("results, expected", [
    (["succeeded", "undone"], "failed"),
    (["succeeded", "running"], "running"),
    (["pending", "pending"], "pending"),
    (["succeeded", "pending"], "partial"),
    (["planned", "skipped"], "planned"),
    (["skipped"], "skipped"),
    (["succeeded", "skipped"], "succeeded"),
])
def test_wave_result(results, expected):
    assert model.wave_result([{"result": r} for r in results]) == expected
