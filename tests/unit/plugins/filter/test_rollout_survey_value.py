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
    with pytest.raises(AnsibleFilterError, match="its text is not YAML or JSON"):
        survey("a: [", "dict")
    assert survey("# nothing", "dict") == {}


@pytest.mark.parametrize("value, expected", [
    (True, True), ("Yes", True), ("ON", True), (1, True), ("1", True), ("true", True),
    (False, False), ("no", False), ("0", False), (None, False), ("", False),
])
def test_booleans(value, expected):
    assert survey(value, "bool") is expected


@pytest.mark.parametrize("value", ["maybe", "y", "t", "yes please", 2, ["true"]])
def test_what_is_no_boolean_is_refused_not_taken_for_false(value):
    with pytest.raises(AnsibleFilterError, match=r"^allow_empty must be true or false \(also yes/no, on/off, 1/0\), got "):
        survey(value, "bool", name="allow_empty")


@pytest.mark.parametrize("value, kind, expected", [
    ("- a\n- b", "dict", "template_overrides must be a mapping, or YAML or JSON text of one, got a list ['a', 'b']"),
    ("plain text", "dict", "template_overrides must be a mapping, or YAML or JSON text of one, got text 'plain text'"),
    (["a"], "dict", "template_overrides must be a mapping, or YAML or JSON text of one, got a list ['a']"),
    ({"a": 1}, "list", "template_overrides must be a list, or text of one, got a mapping {'a': 1}"),
    (5, "lines", "template_overrides must be a list, or text of one, got a number 5"),
])
def test_a_value_of_another_kind_is_refused(value, kind, expected):
    with pytest.raises(AnsibleFilterError) as err:
        survey(value, kind, name="template_overrides")
    assert str(err.value).startswith(expected), str(err.value)


def test_an_unknown_type_is_refused():
    with pytest.raises(AnsibleFilterError, match="kind must be one of list, lines, dict, bool"):
        survey("a", "set")
