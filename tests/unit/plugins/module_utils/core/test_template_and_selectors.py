# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import labelselector
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs


def _spec(api_version="v1beta2", **changes):
    spec = objs.machine_deployment(api_version)["spec"]["template"]["spec"]
    spec.update(changes)
    return spec


def test_identity_is_version_independent():
    assert tmpl.identity(_spec("v1beta1")) == tmpl.identity(_spec("v1beta2"))


@pytest.mark.parametrize("changes, messages", [
    ({}, []),
    # in-place fields never need a rollout
    ({"nodeDrainTimeoutSeconds": 5, "readinessGates": [{"conditionType": "x"}], "minReadySeconds": 9, "providerID": "p"}, []),
    ({"version": "v1.31.0"}, ["spec.version v1.30.2, v1.31.0 required"]),
    ({"failureDomain": "fd-2"}, ["spec.failureDomain None, fd-2 required"]),
    ({"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "v2"}},
     ["spec.infrastructureRef DockerMachineTemplate md-0-infra-v1, DockerMachineTemplate v2 required"]),
    ({"bootstrap": {"dataSecretName": "s"}},
     ["spec.bootstrap.configRef KubeadmConfigTemplate md-0-bootstrap, <none> required"]),
])
def test_differences(changes, messages):
    assert tmpl.differences(tmpl.identity(_spec()), tmpl.identity(_spec(**changes))) == messages
    assert tmpl.up_to_date(tmpl.identity(_spec()), tmpl.identity(_spec(**changes))) is (not messages)


def test_ref_api_version_is_ignored():
    """CAPI compares refs by group/kind/name only (#2183)."""
    old = _spec("v1beta1")
    new = _spec("v1beta1")
    new["infrastructureRef"] = dict(new["infrastructureRef"], apiVersion="infrastructure.cluster.x-k8s.io/v1beta2")
    assert tmpl.up_to_date(tmpl.identity(old), tmpl.identity(new))


def test_data_secret_name_difference():
    a = tmpl.identity({"bootstrap": {"dataSecretName": "a"}})
    b = tmpl.identity({"bootstrap": {"dataSecretName": "b"}})
    assert tmpl.differences(a, b) == ["spec.bootstrap.dataSecretName a, b required"]


SELECTOR = {"matchLabels": {"app": "x"}, "matchExpressions": [
    {"key": "tier", "operator": "In", "values": ["a", "b"]},
    {"key": "legacy", "operator": "DoesNotExist"},
]}


@pytest.mark.parametrize("selector, labels, expected", [
    (SELECTOR, {"app": "x", "tier": "a"}, True),
    (SELECTOR, {"app": "x", "tier": "c"}, False),
    (SELECTOR, {"app": "x", "tier": "a", "legacy": ""}, False),
    (SELECTOR, {"tier": "a"}, False),
    ({"matchExpressions": [{"key": "k", "operator": "Exists"}]}, {"k": ""}, True),
    ({"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["v"]}]}, {}, True),
    ({"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["v"]}]}, {"k": "v"}, False),
    ({"matchExpressions": [{"key": "k", "operator": "Bogus"}]}, {"k": "v"}, False),
    ({}, {"a": "b"}, False),
    (None, {}, False),
])
def test_label_selector_matches(selector, labels, expected):
    assert labelselector.matches(selector, labels) is expected


def test_empty_selector_can_match_everything_when_asked():
    assert labelselector.matches({}, {"a": "b"}, empty_matches=True) is True


def test_label_selector_to_string():
    assert labelselector.to_string(SELECTOR) == "app=x,tier in (a,b),!legacy"
    assert labelselector.to_string({"matchExpressions": [{"key": "k", "operator": "Exists"},
                                                         {"key": "n", "operator": "NotIn", "values": ["1"]}]}) == "k,n notin (1)"
