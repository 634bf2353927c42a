# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_refresh_calls import FilterModule

calls = FilterModule().filters()["rollout_refresh_calls"]


def obj(name, namespace="ns-a", kind="MachineDeployment", resume=False, clone=None):
    return {"kind": kind, "namespace": namespace, "name": name, "ref": f"{kind.lower()}/{namespace}/{name}", "resume": resume,
            "clone": clone}


def test_clone_gives_each_object_its_own_settings():
    a = obj("a", clone={"overrides": {"image": "x"}, "labels": {"gen": "2"}, "annotations": None, "warnings": ["w"]})
    assert calls([a, obj("b")], "clone") == [
        {"kind": "MachineDeployment", "namespace": "ns-a", "name": "a", "overrides": {"image": "x"}, "labels": {"gen": "2"},
         "annotations": {}},
        {"kind": "MachineDeployment", "namespace": "ns-a", "name": "b", "overrides": {}, "labels": {}, "annotations": {}}]


def test_switch_is_one_call_per_kind_and_namespace_each_object_with_its_own_template():
    a = obj("a", clone={"overrides": {"image": "x"}, "labels": {"gen": "2"}, "annotations": None, "warnings": ["w"]})
    b, c, done = obj("b", namespace="ns-b"), obj("c"), obj("d", resume=True)
    got = calls([a, b, c, done], "switch")
    assert got == [
        {"kind": "MachineDeployment", "namespace": "ns-a", "refs": [a["ref"], c["ref"]],
         "switches": [{"name": "a", "template": {"overrides": {"image": "x"}, "labels": {"gen": "2"}, "annotations": {}}},
                      {"name": "c", "template": {"overrides": {}, "labels": {}, "annotations": {}}}]},
        {"kind": "MachineDeployment", "namespace": "ns-b", "refs": [b["ref"]],
         "switches": [{"name": "b", "template": {"overrides": {}, "labels": {}, "annotations": {}}}]}]


def test_a_restart_names_the_objects_and_needs_no_clones():
    got = calls([obj("a"), obj("cp", kind="KubeadmControlPlane"), obj("b")], "switch", restart=True)
    assert [(c["kind"], c["names"], "switches" in c) for c in got] == [
        ("MachineDeployment", ["a", "b"], False), ("KubeadmControlPlane", ["cp"], False)]


def test_an_unknown_step_is_refused():
    with pytest.raises(AnsibleFilterError, match="step must be clone or switch"):
        calls([obj("a")], "patch")
