# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_survey_value import FilterModule

survey = FilterModule().filters()["rollout_survey_value"]


@pytest.mark.parametrize("value, expected", [
    ("wa, wb  wc,,", ["wa", "wb", "wc"]),
    ("wa\nwb", ["wa", "wb"]),
    (["w a", "b"], ["w a", "b"]),
    ("", []),
    (None, []),
    ([], []),
    (" , ", []),
])
def test_lists(value, expected):
    assert survey(value, "list") == expected


def test_an_empty_list_gives_the_default():
    assert survey(None, "list", default=["default"]) == ["default"]
    assert survey("", "list", default=["ns"]) == ["ns"]
    assert survey("a", "list", default=["ns"]) == ["a"]


def test_label_selectors_one_per_line_keep_their_commas():
    assert survey(" pool in (a, b)\r\n\n  tier=gpu  \n", "lines") == ["pool in (a, b)", "tier=gpu"]
    assert survey(["a=b,c=d"], "lines") == ["a=b,c=d"]
    assert survey("", "lines") == []


def test_dictionaries_as_yaml_or_json():
    assert survey('{"instanceType": "m7i.2xlarge"}', "dict") == {"instanceType": "m7i.2xlarge"}
    assert survey("image:\n  tag: v1.31.2\nsize: null\n", "dict") == {"image": {"tag": "v1.31.2"}, "size": None}
    assert survey({"a": 1}, "dict") == {"a": 1}
    assert survey("", "dict") == {} and survey(None, "dict") == {}
    with pytest.raises(AnsibleFilterError, match="not YAML or JSON"):
        survey("a: [", "dict")


@pytest.mark.parametrize("value, expected", [
    (True, True), ("Yes", True), ("ON", True), (1, True), ("1", True), ("true", True),
    (False, False), ("no", False), ("0", False), ("maybe", False), (None, False), ("", False),
])
def test_booleans(value, expected):
    assert survey(value, "bool") is expected


def test_an_unknown_type_is_refused():
    with pytest.raises(AnsibleFilterError, match="kind must be one of list, lines, dict, bool"):
        survey("a", "set")
