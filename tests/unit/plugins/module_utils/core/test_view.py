# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

yaml = pytest.importorskip("yaml")

# A v1.10 MachineDeployment in the middle of a rollout (new MS has 1 of 3), written the way
# `kubectl get md -o yaml` prints it.
MD_V1BETA1_ROLLING = """
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: workers
  namespace: fleet-a
  generation: 3
  uid: 5b0c1d1e-0000-4000-8000-000000000001
  labels:
    cluster.x-k8s.io/cluster-name: edge-1
  annotations:
    machinedeployment.clusters.x-k8s.io/revision: "4"
spec:
  clusterName: edge-1
  replicas: 3
  paused: false
  rolloutAfter: "2026-03-01T11:58:00Z"
  selector:
    matchLabels:
      cluster.x-k8s.io/cluster-name: edge-1
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 1
  template:
    spec:
      clusterName: edge-1
      version: v1.30.2
      failureDomain: fd-1
      bootstrap:
        dataSecretName: workers-bootstrap
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: DockerMachineTemplate
        name: workers-v2
        namespace: fleet-a
status:
  observedGeneration: 3
  phase: ScalingUp
  replicas: 4
  updatedReplicas: 1
  readyReplicas: 3
  availableReplicas: 3
  unavailableReplicas: 1
  conditions:
  - type: Ready
    status: "True"
    lastTransitionTime: "2026-01-10T08:00:00Z"
  v1beta2:
    upToDateReplicas: 1
    readyReplicas: 3
    availableReplicas: 3
    conditions:
    - type: RollingOut
      status: "True"
      reason: RollingOut
      observedGeneration: 3
      lastTransitionTime: "2026-03-01T11:58:05Z"
      message: |-
        Rolling out 3 not up-to-date replicas
        * MachineDeployment spec.rolloutAfter expired
"""


def test_yaml_v1beta1_md_mid_rollout():
    obj = yaml.safe_load(MD_V1BETA1_ROLLING)
    view = views.view(obj, now=objs.NOW)
    assert view["ref"] == "machinedeployment/fleet-a/workers"
    assert view["api_version"] == "v1beta1"
    assert view["cluster"] == "edge-1"
    assert view["replicas"] == {"desired": 3, "current": 4, "ready": 3, "available": 3, "up_to_date": 1, "updated": 1,
                                "unavailable": 1}
    assert view["rollout"] == {"after": "2026-03-01T11:58:00Z", "pending": False,
                               "strategy": {"type": "RollingUpdate", "max_surge": "25%", "max_unavailable": 1}}
    assert view["template"] == {"version": "v1.30.2",
                                "infrastructure_ref": {"api_group": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate",
                                                       "name": "workers-v2"},
                                "bootstrap_ref": None, "data_secret_name": "workers-bootstrap", "failure_domain": "fd-1"}
    assert view["revision"] == 4
    assert view["conditions_style"] == "v1beta2"
    rolling = [c for c in view["conditions"] if c["type"] == "RollingOut"][0]
    assert rolling["status"] == "True" and rolling["observed_generation"] == 3
    assert view["paused"] is False and view["paused_reasons"] == []


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_md_view_both_versions_same_shape(version):
    view = views.view(objs.machine_deployment(version), now=objs.NOW)
    assert view["kind"] == "MachineDeployment"
    assert view["api_version"] == version
    assert view["name"] == "md-0" and view["namespace"] == "default" and view["uid"] == "uid-md-0"
    assert view["cluster"] == "c1"
    assert view["observed"] is True
    assert view["replicas"] == {"desired": 3, "current": 3, "ready": 3, "available": 3, "up_to_date": 3, "updated": 3,
                                "unavailable": 0}
    assert view["rollout"] == {"after": None, "pending": False,
                               "strategy": {"type": "RollingUpdate", "max_surge": 1, "max_unavailable": 0}}
    assert view["template"]["version"] == "v1.30.2"
    assert view["template"]["infrastructure_ref"] == {"api_group": "infrastructure.cluster.x-k8s.io",
                                                      "kind": "DockerMachineTemplate", "name": "md-0-infra-v1"}
    assert view["template"]["bootstrap_ref"] == {"api_group": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate",
                                                 "name": "md-0-bootstrap"}
    assert view["revision"] == 2
    assert view["topology_owned"] is False
    assert view["conditions_style"] == "v1beta2"
    assert {c["type"] for c in view["conditions"]} >= {"Available", "RollingOut", "ScalingUp", "ScalingDown"}


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_kcp_view_both_versions(version):
    view = views.view(objs.kubeadm_control_plane(version), now=objs.NOW)
    assert view["ref"] == "kubeadmcontrolplane/default/c1-cp"
    assert view["cluster"] == "c1"
    assert view["template"]["version"] == "v1.30.2"
    assert view["template"]["infrastructure_ref"]["name"] == "c1-cp-infra-v1"
    assert view["rollout"]["strategy"] == {"type": "RollingUpdate", "max_surge": 1, "max_unavailable": None}
    assert view["replicas"]["up_to_date"] == 3 and view["replicas"]["available"] == 3
    assert view["initialized"] is True
    assert view["version"] == "v1.30.2"
    assert view["revision"] is None


def test_kcp_cluster_from_owner_reference_when_unlabelled():
    kcp = objs.kubeadm_control_plane("v1beta1")
    del kcp["metadata"]["labels"]
    assert views.view(kcp)["cluster"] == "c1"


def test_v1beta1_md_without_v1beta2_status_falls_back_to_old_counters_and_conditions():
    """A CAPI <= v1.8 MachineDeployment: no status.v1beta2 at all."""
    md = objs.machine_deployment("v1beta1")
    del md["status"]["v1beta2"]
    md["status"]["availableReplicas"] = 2
    view = views.view(md)
    assert view["replicas"]["available"] == 2
    assert view["replicas"]["ready"] == 3
    assert view["replicas"]["up_to_date"] == 3  # from updatedReplicas
    assert view["conditions_style"] == "v1beta1"
    assert [c["type"] for c in view["conditions"]] == ["Ready", "Available", "MachineSetReady"]


def test_v1beta1_prefers_v1beta2_counters():
    md = objs.set_counts(objs.machine_deployment("v1beta1"), ready=1, available=1, legacy_ready=3, legacy_available=3)
    view = views.view(md)
    assert view["replicas"]["ready"] == 1 and view["replicas"]["available"] == 1


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("mutate, cluster, expected", [
    (lambda o: o, None, []),
    (lambda o: o["spec"].update(paused=True), None, ["spec.paused is true"]),
    (lambda o: o["metadata"]["annotations"].update({"cluster.x-k8s.io/paused": ""}), None,
     ["annotation cluster.x-k8s.io/paused is set"]),
    (lambda o: (o["spec"].update(paused=True), o["metadata"]["annotations"].update({"cluster.x-k8s.io/paused": "true"})), None,
     ["spec.paused is true", "annotation cluster.x-k8s.io/paused is set"]),
    (lambda o: o, objs.cluster(paused=True), ["Cluster c1 spec.paused is true"]),
    (lambda o: o, objs.cluster(paused=False), []),
])
def test_md_pause_reasons(version, mutate, cluster, expected):
    md = objs.machine_deployment(version)
    mutate(md)
    view = views.view(md, cluster=cluster)
    assert view["paused_reasons"] == expected
    assert view["paused"] is bool(expected)


def test_pause_seen_through_paused_condition_without_cluster_object():
    md = objs.set_condition(objs.machine_deployment("v1beta2"), "Paused", "True", "Paused",
                            message="Cluster spec.paused is set to true")
    assert views.view(md)["paused_reasons"] == ["condition Paused is True: Cluster spec.paused is set to true"]


def test_kcp_spec_paused_is_not_a_thing():
    kcp = objs.kubeadm_control_plane("v1beta2")
    kcp["spec"]["paused"] = True  # not in the KCP schema; must be ignored
    assert views.view(kcp)["paused"] is False
    kcp = objs.annotate(kcp, "cluster.x-k8s.io/paused", "true")
    assert views.view(kcp)["paused_reasons"] == ["annotation cluster.x-k8s.io/paused is set"]


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("after, now, pending, shown", [
    (objs.HOUR_LATER, objs.NOW, True, objs.HOUR_LATER),
    (objs.HOUR_EARLIER, objs.NOW, False, objs.HOUR_EARLIER),
    (objs.NOW_TEXT, objs.NOW, False, objs.NOW_TEXT),
    ("2026-03-01T14:00:00+01:00", objs.NOW, True, objs.HOUR_LATER),
    (objs.HOUR_LATER, None, None, objs.HOUR_LATER),
])
def test_rollout_pending(version, after, now, pending, shown):
    md = objs.set_rollout_after(objs.machine_deployment(version), after)
    rollout = views.view(md, now=now)["rollout"]
    assert rollout["pending"] is pending
    assert rollout["after"] == shown


@pytest.mark.parametrize("strategy, expected", [
    ({"type": "OnDelete"}, {"type": "OnDelete", "max_surge": None, "max_unavailable": None}),
    ({}, {"type": "RollingUpdate", "max_surge": 1, "max_unavailable": 0}),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}},
     {"type": "RollingUpdate", "max_surge": 0, "max_unavailable": "10%"}),
])
def test_md_strategy_defaults(strategy, expected):
    md = objs.machine_deployment("v1beta2")
    md["spec"]["rollout"]["strategy"] = strategy
    assert views.view(md)["rollout"]["strategy"] == expected
    md1 = objs.machine_deployment("v1beta1")
    md1["spec"]["strategy"] = strategy
    assert views.view(md1)["rollout"]["strategy"] == expected


def test_topology_owned_and_last_rollout():
    md = objs.label(objs.machine_deployment(), "topology.cluster.x-k8s.io/owned", "")
    md = objs.annotate(md, "rollout.capi-rollout.dev/last", '{"action":"restarted","at":"2026-03-01T12:00:00Z","id":"r1"}')
    view = views.view(md)
    assert view["topology_owned"] is True
    assert view["last_rollout"] == {"action": "restarted", "at": "2026-03-01T12:00:00Z", "id": "r1"}
    assert views.view(objs.annotate(md, "rollout.capi-rollout.dev/last", "not json"))["last_rollout"] == {"raw": "not json"}


def test_observed_flag_follows_generation():
    md = objs.machine_deployment("v1beta2", generation=5)
    md["status"]["observedGeneration"] = 4
    view = views.view(md)
    assert view["observed"] is False and view["generation"] == 5 and view["observed_generation"] == 4


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_machine_set_view(version):
    ms = objs.machine_set(version, revision="5", revision_history="1,3", replicas=2)
    view = views.view(ms)
    assert view["kind"] == "MachineSet"
    assert view["revision"] == 5
    assert view["revision_history"] == [1, 3]
    assert view["replicas"] == {"desired": 2, "current": 2, "ready": 2, "available": 2, "up_to_date": 2}
    assert view["template"]["infrastructure_ref"]["name"] == "md-0-infra-v1"
    assert view["owner"] == {"kind": "MachineDeployment", "name": "md-0", "uid": "uid-md-0"}
    assert view["owner_uid"] == "uid-md-0"
    assert view["created"] == objs.CREATED
    assert view["deployment_name"] == "md-0"


def test_machine_set_bad_revision_annotations():
    ms = objs.machine_set(revision="x", revision_history="1,,zz,2")
    view = views.view(ms)
    assert view["revision"] is None
    assert view["revision_history"] == [1, 2]


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("ready, up_to_date, available", [(True, True, True), (False, False, False), (True, False, True)])
def test_machine_view(version, ready, up_to_date, available):
    machine = objs.machine(version, ready=ready, up_to_date=up_to_date, available=available)
    view = views.view(machine)
    assert view["phase"] == "Running"
    assert view["node"] == "node-1"
    assert view["ready"] is ready and view["up_to_date"] is up_to_date and view["available"] is available
    assert view["machine_set"] == "md-0-abcde"
    assert view["deployment_name"] == "md-0"
    assert view["version"] == "v1.30.2" and view["kubelet_version"] == "v1.30.2"
    assert view["infrastructure_ref"]["kind"] == "DockerMachine"


def test_machine_view_old_controller_uses_v1beta1_ready():
    machine = objs.machine("v1beta1", ready=False)
    del machine["status"]["v1beta2"]
    view = views.view(machine)
    assert view["ready"] is False
    assert view["up_to_date"] is None and view["available"] is None
    assert view["conditions_style"] == "v1beta1"


def test_machine_without_node_and_deleting():
    view = views.view(objs.machine("v1beta2", node=None, deleting=True, phase="Deleting"))
    assert view["node"] is None and view["deleting"] is True and view["phase"] == "Deleting"


def test_view_rejects_other_kinds():
    with pytest.raises(RolloutError) as exc:
        views.view(objs.cluster())
    assert exc.value.ref == "cluster/default/c1"


def test_view_does_not_modify_input():
    md = objs.machine_deployment("v1beta1")
    before = copy.deepcopy(md)
    views.view(md, now=objs.NOW, cluster=objs.cluster())
    assert md == before


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_infrastructure_ref_of_reads_each_kind_at_its_versions_path(version):
    md = objs.machine_deployment(version=version, infra="md-0-infra-v1")
    kcp = objs.kubeadm_control_plane(version=version, infra="cp-infra-v1")
    assert views.infrastructure_ref_of(md, "MachineDeployment")["name"] == "md-0-infra-v1"
    assert views.infrastructure_ref_of(kcp, "KubeadmControlPlane")["name"] == "cp-infra-v1"
    # an explicit version reads that version's path: a KCP's moved (machineTemplate.spec.infrastructureRef in v1beta2)
    other = "v1beta2" if version == "v1beta1" else "v1beta1"
    assert views.infrastructure_ref_of(kcp, "KubeadmControlPlane", version=other) is None
    assert views.infrastructure_ref_of({"apiVersion": f"cluster.x-k8s.io/{version}", "spec": {}}, "MachineDeployment") is None
