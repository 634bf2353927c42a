# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import diff
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet, create_merge_patch, to_yaml_text

yaml = pytest.importorskip("yaml")


def test_records_only_real_changes():
    changes = ChangeSet()
    assert changes.add("spec.replicas", 3, 3) is False
    assert changes.changed is False
    assert changes.merge_patch() is None
    assert changes.add("spec.rollout.after", None, "2026-03-01T12:00:00Z") is True
    assert changes.add(("metadata", "annotations", "cluster.x-k8s.io/paused"), "true", None) is True
    assert changes.changed is True
    assert changes.changes() == [
        {"path": "spec.rollout.after", "before": None, "after": "2026-03-01T12:00:00Z"},
        {"path": "metadata.annotations[cluster.x-k8s.io/paused]", "before": "true", "after": None},
    ]
    assert changes.merge_patch() == {"spec": {"rollout": {"after": "2026-03-01T12:00:00Z"}},
                                     "metadata": {"annotations": {"cluster.x-k8s.io/paused": None}}}
    assert changes.before() == {"metadata": {"annotations": {"cluster.x-k8s.io/paused": "true"}}}
    assert changes.after() == {"spec": {"rollout": {"after": "2026-03-01T12:00:00Z"}}}


def test_re_recording_a_path_keeps_first_before():
    changes = ChangeSet()
    changes.add("spec.paused", False, True)
    changes.add("spec.paused", True, None)
    assert changes.changes() == [{"path": "spec.paused", "before": False, "after": None}]
    changes.add("spec.paused", None, False)  # back to where it started
    assert changes.changed is False


def test_diff_text_is_yaml_of_changed_fields_only():
    changes = ChangeSet()
    changes.add("spec.template.spec.infrastructureRef.name", "md-0-infra-v1", "md-0-infra-v2")
    diff = changes.diff(header="machinedeployment/default/md-0")
    assert diff == {
        "before": 'spec:\n  template:\n    spec:\n      infrastructureRef:\n        name: "md-0-infra-v1"\n',
        "after": 'spec:\n  template:\n    spec:\n      infrastructureRef:\n        name: "md-0-infra-v2"\n',
        "before_header": "machinedeployment/default/md-0 (before)",
        "after_header": "machinedeployment/default/md-0 (after)",
    }
    assert yaml.safe_load(diff["after"]) == changes.after()


@pytest.mark.parametrize("data", [
    {"a": {"b": True, "c": 1, "d": None, "e": "2026-03-01T12:00:00Z", "f": "true", "g": ""}},
    {"metadata": {"annotations": {"cluster.x-k8s.io/paused": "true", "x/last": '{"id":"a\'b","at":"t"}'}}},
    {"list": [1, "two", {"k": "v", "n": {"m": 1}}, [], {}], "empty": {}, "none": []},
    {"yes": "no", "weird key: x": "multi\nline", "back\\slash": "c:\\dir \"q\""},
])
def test_yaml_text_round_trips(data):
    assert yaml.safe_load(to_yaml_text(data)) == data


def test_yaml_text_empty():
    assert to_yaml_text({}) == ""
    assert to_yaml_text(None) == ""


@pytest.mark.parametrize("before, after, patch", [
    ({"a": 1}, {"a": 1}, None),
    ({"a": 1, "b": 2}, {"a": 1}, {"b": None}),
    ({"a": {"x": 1, "y": 2}}, {"a": {"x": 1, "y": 3, "z": 4}}, {"a": {"y": 3, "z": 4}}),
    ({"l": [1, 2]}, {"l": [1]}, {"l": [1]}),
    ({"a": {"x": 1}}, {"a": "s"}, {"a": "s"}),
])
def test_create_merge_patch(before, after, patch):
    assert create_merge_patch(before, after) == patch


def test_display_text_replaces_long_values_but_not_the_patch():
    changes = diff.ChangeSet()
    changes.add(("metadata", "annotations", "k"), "old long value", "new long value", display=("2 entries", "3 entries"))
    changes.add(("metadata", "annotations", "fresh"), None, "v", display=("ignored", "1 entry"))
    assert changes.merge_patch() == {"metadata": {"annotations": {"k": "new long value", "fresh": "v"}}}
    assert changes.before() == {"metadata": {"annotations": {"k": "2 entries"}}}
    assert changes.after() == {"metadata": {"annotations": {"k": "3 entries", "fresh": "1 entry"}}}
    assert changes.changes()[0] == {"path": "metadata.annotations.k", "before": "2 entries", "after": "3 entries"}
    assert "3 entries" in changes.diff()["after"]


@pytest.mark.parametrize("obj, patch, expected", [
    ({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": None, "e": 4}}, {"a": 1, "b": {"d": 3, "e": 4}}),
    ({"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
    ({"a": 1}, {"a": {"b": 1}}, {"a": {"b": 1}}),
    (None, {"a": 1}, {"a": 1}),
])
def test_apply_merge_patch(obj, patch, expected):
    before = copy.deepcopy(obj)
    assert diff.apply_merge_patch(obj, patch) == expected
    assert obj == before
    assert diff.apply_merge_patch(obj, diff.create_merge_patch(obj or {}, expected)) == expected
