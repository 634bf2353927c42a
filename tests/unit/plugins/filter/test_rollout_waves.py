# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_waves import FilterModule

waves = FilterModule().filters()["rollout_waves"]


def md(cluster, name, namespace="default"):
    return {"cluster": cluster, "namespace": namespace, "name": name, "extra": 1}


def names(result):
    return [[obj["name"] for obj in wave["objects"]] for wave in result]


def test_empty():
    assert waves([]) == [] and waves(None) == []
    assert waves([], canary=True) == []


def test_one_per_wave_by_default():
    result = waves([md("a", "a-0"), md("a", "a-1")])
    assert names(result) == [["a-0"], ["a-1"]]
    assert [w["name"] for w in result] == ["wave-1", "wave-2"] and [w["index"] for w in result] == [0, 1]
    assert result[0]["objects"][0]["extra"] == 1


def test_waves_spread_over_workload_clusters():
    objs = [md("a", "a-0"), md("a", "a-1"), md("a", "a-2"), md("b", "b-0"), md("c", "c-0", "team"), md("c", "c-1", "team")]
    assert names(waves(objs, max_in_flight=3)) == [["a-0", "b-0", "c-0"], ["a-1", "c-1", "a-2"]]


def test_same_cluster_name_in_two_namespaces_are_two_clusters():
    objs = [md("a", "x", "n1"), md("a", "y", "n1"), md("a", "z", "n2")]
    assert names(waves(objs, max_in_flight=2)) == [["x", "z"], ["y"]]


def test_canary_first():
    objs = [md("a", "a-0"), md("b", "b-0"), md("a", "a-1"), md("b", "b-1")]
    result = waves(objs, max_in_flight=2, canary=True, start=2, name="md")
    assert names(result) == [["a-0"], ["b-0", "a-1"], ["b-1"]]
    assert [(w["index"], w["name"]) for w in result] == [(2, "canary"), (3, "md-1"), (4, "md-2")]


@pytest.mark.parametrize("value, size", [("50%", 2), ("10%", 1), ("34%", 2), ("100%", 4), ("3", 3), (3, 3), (10, 4)])
def test_percentages_and_strings(value, size):
    objs = [md("a", f"a-{i}") for i in range(4)]
    assert len(waves(objs, max_in_flight=value)[0]["objects"]) == min(size, 4)


@pytest.mark.parametrize("value", [0, -1, "0%", "x", True, "1.5"])
def test_bad_max_in_flight(value):
    with pytest.raises(AnsibleFilterError):
        waves([md("a", "a-0")], max_in_flight=value)


def test_bad_input():
    with pytest.raises(AnsibleFilterError):
        waves(["x"])
