# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ssl

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client import errors
from ansible_collections.capi.rollout.plugins.module_utils.client.discovery import Discovery
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import Api
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import FakeConnection


def group(name, versions, preferred):
    return {"name": name, "versions": [{"groupVersion": f"{name}/{v}", "version": v} for v in versions],
            "preferredVersion": {"groupVersion": f"{name}/{preferred}", "version": preferred}}


def discovery_with(*groups):
    conn = FakeConnection()
    conn.add("GET", "/apis", body={"kind": "APIGroupList", "groups": list(groups)})
    api = Api(conn, sleep=lambda _s: None)
    return Discovery(api), api


def test_v1beta2_preferred_when_served_and_one_request():
    disc, api = discovery_with(group("cluster.x-k8s.io", ["v1beta2", "v1beta1"], "v1beta2"),
                               group("controlplane.cluster.x-k8s.io", ["v1beta1"], "v1beta1"))
    assert disc.capi_version("MachineDeployment") == "v1beta2"
    assert disc.capi_version("KubeadmControlPlane") == "v1beta1"
    assert disc.capi_version("Cluster") == "v1beta2"
    assert api.count == 1


def test_v1beta2_used_even_if_not_preferred():
    disc, _api = discovery_with(group("cluster.x-k8s.io", ["v1beta1", "v1beta2"], "v1beta1"))
    assert disc.capi_version("MachineDeployment") == "v1beta2"


def test_group_not_served_says_capi_missing():
    disc, _api = discovery_with(group("apps", ["v1"], "v1"))
    with pytest.raises(RolloutError) as err:
        disc.capi_version("MachineDeployment", ref="machinedeployment/default/md-0")
    assert err.value.reason == "api_not_served"
    assert "machinedeployment/default/md-0" in str(err.value) and "not installed" in str(err.value)


def test_only_old_versions_served():
    disc, _api = discovery_with(group("cluster.x-k8s.io", ["v1alpha4"], "v1alpha4"))
    with pytest.raises(RolloutError) as err:
        disc.capi_version("MachineDeployment")
    assert err.value.reason == "api_version_unsupported"


def test_plural_from_group_version_resources():
    disc, api = discovery_with(group("infrastructure.cluster.x-k8s.io", ["v1beta2", "v1beta1"], "v1beta2"))
    api.connection.add("GET", "/apis/infrastructure.cluster.x-k8s.io/v1beta2", body={"resources": [
        {"name": "dockermachinetemplates", "kind": "DockerMachineTemplate"},
        {"name": "dockermachinetemplates/status", "kind": "DockerMachineTemplate"}]})
    version = disc.version_for_group("infrastructure.cluster.x-k8s.io")
    assert disc.plural("infrastructure.cluster.x-k8s.io", version, "DockerMachineTemplate") == "dockermachinetemplates"
    with pytest.raises(RolloutError) as err:
        disc.plural("infrastructure.cluster.x-k8s.io", version, "AWSMachineTemplate")
    assert "DockerMachineTemplate" in str(err.value)


def test_forbidden_names_verb_and_resource():
    err = errors.ApiError(403, {"reason": "Forbidden", "message": 'User "viewer" cannot patch resource "machinedeployments"'},
                          method="PATCH", path="/x")
    out = errors.api_error(err, ref="machinedeployment/ns/md-0", verb="patch",
                           resource={"group": "cluster.x-k8s.io", "plural": "machinedeployments"}, namespace="ns")
    text = str(out)
    assert out.reason == "forbidden"
    assert text.startswith("machinedeployment/ns/md-0: permission denied: cannot patch machinedeployments in API group cluster.x-k8s.io")
    assert "docs/rbac.yml" in text


def test_unauthorized_and_not_found_messages():
    assert errors.api_error(errors.ApiError(401, {}), host="https://h").reason == "unauthorized"
    assert errors.api_error(errors.ApiError(404, {"message": "gone"}), ref="r").reason == "not_found"
    assert errors.api_error(errors.ApiError(500, "<html>"), ref="r").reason == "server_error"


def test_tls_detection_walks_causes():
    inner = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")

    class Wrapper(Exception):
        def __init__(self, reason):
            super(Wrapper, self).__init__("pool")
            self.reason = reason

    assert errors.is_tls_failure(Wrapper(inner))
    assert not errors.is_tls_failure(ConnectionRefusedError(111, "refused"))
    tls = errors.transport_error(errors.TransportError("https://h", "certificate verify failed", tls=True))
    assert tls.reason == "tls" and "ca_cert" in str(tls)
    down = errors.transport_error(errors.TransportError("https://h", "refused"), what="machinedeployment/a/b")
    assert down.reason == "unreachable" and str(down).startswith("machinedeployment/a/b: cannot reach")


def _infra(api):
    api.connection.add("GET", "/apis/infrastructure.cluster.x-k8s.io/v1beta2", body={"resources": [
        {"name": "dockermachinetemplates", "kind": "DockerMachineTemplate"},
        {"name": "dockermachines", "kind": "DockerMachine"}]})


def test_a_template_reference_must_name_a_machine_template():
    from ansible_collections.capi.rollout.plugins.module_utils.client import templates
    disc, api = discovery_with(group("infrastructure.cluster.x-k8s.io", ["v1beta2"], "v1beta2"))
    _infra(api)
    base = "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/ns"
    api.connection.add("GET", base + "/dockermachinetemplates/t1", body={"spec": {"template": {"spec": {"customImage": "x"}}}})
    api.connection.add("GET", base + "/dockermachines/m1", body={"spec": {"customImage": "x"}})
    infra = "infrastructure.cluster.x-k8s.io"
    assert templates.template_exists(api, disc, "ns", {"api_group": infra, "kind": "DockerMachineTemplate", "name": "t1"})
    with pytest.raises(RolloutError) as err:
        templates.template_exists(api, disc, "ns", {"api_group": infra, "kind": "DockerMachine", "name": "m1"},
                                  ref="machinedeployment/ns/md-0")
    assert err.value.reason == "not_a_template" and "has no spec.template.spec" in str(err.value)
