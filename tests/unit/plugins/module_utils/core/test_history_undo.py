# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import history
from ansible_collections.capi.rollout.plugins.module_utils.core import undo
from ansible_collections.capi.rollout.plugins.module_utils.core import versionskew
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Observed
from ansible_collections.capi.rollout.plugins.module_utils.core.record import Recording
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

# ---------------------------------------------------------------------------------------------
# clusterctl Test_ObjectRollbacker (v1.10.10), as objects


def _rollbacker_md():
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
        "metadata": {"name": "test-md-0", "namespace": "default", "uid": "uid-test-md-0",
                     "labels": {"cluster.x-k8s.io/cluster-name": "test"},
                     "annotations": {"machinedeployment.clusters.x-k8s.io/revision": "2"}},
        "spec": {
            "clusterName": "test",
            "selector": {"matchLabels": {"cluster.x-k8s.io/cluster-name": "test"}},
            "template": {
                "metadata": {"labels": {"cluster.x-k8s.io/cluster-name": "test"}},
                "spec": {
                    "clusterName": "test", "version": "v1.19.3",
                    "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "InfrastructureMachineTemplate",
                                          "name": "md-template"},
                    "bootstrap": {"dataSecretName": "data-secret-name"},
                },
            },
        },
    }


def _rollbacker_ms(name, revision, version, infra, secret):
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
        "metadata": {"name": name, "namespace": "default",
                     "labels": {"cluster.x-k8s.io/cluster-name": "test"},
                     "annotations": {"machinedeployment.clusters.x-k8s.io/revision": revision},
                     "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "name": "test-md-0",
                                          "uid": "uid-test-md-0", "controller": True}]},
        "spec": {"clusterName": "test", "template": {
            "metadata": {"labels": {"cluster.x-k8s.io/cluster-name": "test", "machine-template-hash": "123"}},
            "spec": {"clusterName": "test", "version": version,
                     "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                           "kind": "InfrastructureMachineTemplate", "name": infra},
                     "bootstrap": {"dataSecretName": secret}}}},
    }


MS_REV_2 = _rollbacker_ms("ms-rev-2", "2", "v1.19.3", "md-template", "data-secret-name")
MS_REV_1 = _rollbacker_ms("ms-rev-1", "999", "v1.19.1", "md-template-rollback", "data-secret-name-rollback")


def test_rollbacker_to_revision_999():
    md = _rollbacker_md()
    plan = undo.plan_undo(md, objs.NOW, to_revision=999, recording=Recording(enabled=False),
                          observed=Observed(machine_sets=[MS_REV_2, MS_REV_1], control_plane_version="v1.19.3"))
    assert plan["action"] == "rolled_back"
    assert plan["target_revision"] == 999 and plan["target_machine_set"] == "ms-rev-1"
    patched = objs.apply_merge_patch(md, plan["merge_patch"])
    spec = patched["spec"]["template"]["spec"]
    assert spec["version"] == "v1.19.1"
    assert spec["infrastructureRef"]["name"] == "md-template-rollback"
    assert spec["bootstrap"]["dataSecretName"] == "data-secret-name-rollback"
    assert "machine-template-hash" not in patched["spec"]["template"]["metadata"]["labels"]
    assert plan["merge_patch"] == {"spec": {"template": {"spec": {
        "version": "v1.19.1", "infrastructureRef": {"name": "md-template-rollback"},
        "bootstrap": {"dataSecretName": "data-secret-name-rollback"}}}}}


@pytest.mark.parametrize("to_revision, reason, text", [
    (0, "no_history", "no rollout history found for MachineDeployment"),
    (999, "revision_not_found", "unable to find specified MachineDeployment revision: 999"),
    (-1, "invalid_revision", "revision number cannot be negative: -1"),
])
def test_rollbacker_errors(to_revision, reason, text):
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(_rollbacker_md(), objs.NOW, to_revision=to_revision, observed=Observed(machine_sets=[MS_REV_2]))
    assert exc.value.reason == reason
    assert text in str(exc.value)
    assert exc.value.ref == "machinedeployment/default/test-md-0"
    assert exc.value.hint


def test_rollbacker_paused():
    md = _rollbacker_md()
    md["spec"]["paused"] = True
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, objs.NOW, to_revision=999, observed=Observed(machine_sets=[MS_REV_2, MS_REV_1]))
    assert exc.value.reason == "paused" and "a rollback would not roll out" in str(exc.value)


def test_undo_rejects_kcp():
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(objs.kubeadm_control_plane(), objs.NOW, observed=Observed(machine_sets=[]))
    assert exc.value.reason == "control_plane_undo"
    assert "control-plane and etcd downgrades are unsupported" in str(exc.value)


def test_undo_rejects_other_kinds():
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(objs.machine_set(), objs.NOW, observed=Observed(machine_sets=[]))
    assert exc.value.reason == "invalid_kind"


# ---------------------------------------------------------------------------------------------
# realistic MD with several MachineSets, both versions


def _fleet(version):
    md = objs.machine_deployment(version, k8s_version="v1.30.2", infra="md-0-infra-v3", revision="3")
    ms1 = objs.machine_set(version, suffix="aaaaa", revision="1", replicas=0, k8s_version="v1.29.5", infra="md-0-infra-v1",
                           created="2026-01-01T00:00:00Z")
    ms2 = objs.machine_set(version, suffix="bbbbb", revision="2", replicas=0, k8s_version="v1.30.2", infra="md-0-infra-v2",
                           created="2026-02-01T00:00:00Z")
    ms3 = objs.machine_set(version, suffix="ccccc", revision="3", replicas=3, k8s_version="v1.30.2", infra="md-0-infra-v3",
                           created="2026-03-01T00:00:00Z")
    foreign = objs.machine_set(version, suffix="zzzzz", revision="9", owner_uid="uid-someone-else")
    return md, [ms3, foreign, ms1, ms2]


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_history(version):
    md, sets = _fleet(version)
    result = history.rollout_history(md, sets)
    assert result["ref"] == "machinedeployment/default/md-0"
    assert result["revision"] == 3
    assert [(e["revision"], e["machine_set"], e["current"], e["matches_spec"]) for e in result["revisions"]] == [
        (1, "md-0-aaaaa", False, False), (2, "md-0-bbbbb", False, False), (3, "md-0-ccccc", True, True)]
    assert result["revisions"][0]["template"]["version"] == "v1.29.5"
    assert result["revisions"][2]["replicas"]["desired"] == 3


def test_history_current_defaults_to_highest_without_md_annotation():
    md, sets = _fleet("v1beta2")
    del md["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"]
    assert history.rollout_history(md, sets)["revision"] == 3


@pytest.mark.parametrize("mutate", [
    lambda ms: ms["metadata"]["ownerReferences"][0].update(controller=False),
    lambda ms: ms["metadata"]["labels"].update({"cluster.x-k8s.io/deployment-name": "other"}),
    lambda ms: ms["metadata"].update(namespace="elsewhere"),
])
def test_ownership_filter(mutate):
    md = objs.machine_deployment()
    ms = objs.machine_set()
    assert history.is_owned_by(ms, md)
    mutate(ms)
    assert not history.is_owned_by(ms, md)


def test_empty_md_selector_owns_nothing():
    md = objs.machine_deployment()
    md["spec"]["selector"] = {}
    assert not history.is_owned_by(objs.machine_set(), md)


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_undo_previous_revision(version):
    md, sets = _fleet(version)
    plan = undo.plan_undo(md, objs.NOW, recording=Recording(rollout_id="rb-1", actor="ops"),
                          observed=Observed(machine_sets=sets, control_plane_version="v1.30.2"))
    assert plan["action"] == "rolled_back"
    assert plan["target_revision"] == 2 and plan["target_machine_set"] == "md-0-bbbbb"
    assert (plan["from_revision"], plan["to_revision"], plan["history_revision"]) == (3, 2, 4)
    assert plan["target_source"] == "machineset"
    assert plan["revision_before"] == 3
    assert [c["path"] for c in plan["changes"]] == ["spec.template.spec.infrastructureRef.name",
                                                    "metadata.annotations[rollout.capi-rollout.dev/last]",
                                                    "metadata.annotations[rollout.capi-rollout.dev/history]"]
    assert plan["diff"]["before"].startswith('spec:\n  template:\n    spec:\n      infrastructureRef:\n        name: "md-0-infra-v3"\n')
    record = json.loads(plan["merge_patch"]["metadata"]["annotations"]["rollout.capi-rollout.dev/last"])
    assert record == {"action": "rolled_back", "actor": "ops", "at": objs.NOW_TEXT, "id": "rb-1", "to_revision": 2}
    assert plan["warnings"] == []
    patched = objs.apply_merge_patch(md, plan["merge_patch"])
    again = undo.plan_undo(patched, objs.NOW, recording=Recording(rollout_id="rb-1"),
                           observed=Observed(machine_sets=sets, control_plane_version="v1.30.2"))
    assert again["action"] == "unchanged" and again["merge_patch"] is None


def test_undo_to_current_template_is_unchanged():
    md, sets = _fleet("v1beta2")
    plan = undo.plan_undo(md, objs.NOW, to_revision=3, observed=Observed(machine_sets=sets, control_plane_version="v1.30.2"))
    assert plan["action"] == "unchanged"
    assert plan["message"].endswith("spec.template already equals revision 3 (md-0-ccccc)")


def test_undo_finds_revision_through_history():
    md, sets = _fleet("v1beta2")
    sets[2] = objs.machine_set(suffix="aaaaa", revision="4", revision_history="1", replicas=0, k8s_version="v1.30.2",
                               infra="md-0-infra-v1")
    plan = undo.plan_undo(md, objs.NOW, to_revision=1, observed=Observed(machine_sets=sets, control_plane_version="v1.30.2"))
    assert plan["target_machine_set"] == "md-0-aaaaa" and plan["target_revision"] == 1
    assert plan["target_source"] == "machineset"


def test_undo_duplicate_highest_counts_as_previous():
    md, sets = _fleet("v1beta2")
    dup = objs.machine_set(suffix="ddddd", revision="3", replicas=0, infra="md-0-infra-v9")
    plan = undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=[sets[0], dup], control_plane_version="v1.30.2"))
    assert plan["target_revision"] == 3


@pytest.mark.parametrize("cp_version, force, outcome", [
    ("v1.30.2", False, "ok"),
    ("v1.29.0", False, "version_skew"),       # worker v1.30 newer than control plane
    ("v1.29.0", True, "warn"),
    ("v1.31.0", False, "version_skew"),       # kubeadm workers must match the control plane minor
    (None, False, "unknown"),
])
def test_undo_version_skew(cp_version, force, outcome):
    md, sets = _fleet("v1beta2")
    if outcome == "version_skew":
        with pytest.raises(RolloutError) as exc:
            undo.plan_undo(md, objs.NOW, force=force, observed=Observed(machine_sets=sets, control_plane_version=cp_version))
        assert exc.value.reason == "version_skew" and "force=true" in exc.value.hint
        return
    plan = undo.plan_undo(md, objs.NOW, force=force, observed=Observed(machine_sets=sets, control_plane_version=cp_version))
    assert plan["action"] == "rolled_back"
    if outcome == "warn":
        assert plan["warnings"][0].startswith("ignored because force=true: version v1.30.2 is a newer minor than the control "
                                              "plane v1.29.0")
    elif outcome == "unknown":
        assert plan["warnings"] == ["control plane version unknown: Kubernetes version skew was not checked"]
    else:
        assert plan["warnings"] == []


def test_undo_topology_owned_needs_force():
    md, sets = _fleet("v1beta2")
    md = objs.label(md, "topology.cluster.x-k8s.io/owned", "")
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane_version="v1.30.2"))
    assert exc.value.reason == "topology_owned"
    assert undo.plan_undo(md, objs.NOW, force=True,
                          observed=Observed(machine_sets=sets, control_plane_version="v1.30.2"))["action"] == "rolled_back"


def test_undo_warns_when_rollout_after_prevents_reuse():
    md, sets = _fleet("v1beta1")
    md = objs.set_rollout_after(md, "2026-02-15T00:00:00Z")
    plan = undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane_version="v1.30.2"))
    assert "creates a new MachineSet" in plan["warnings"][0]


def test_undo_does_not_modify_inputs():
    md, sets = _fleet("v1beta1")
    before = copy.deepcopy((md, sets))
    undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane_version="v1.30.2"))
    assert (md, sets) == before


@pytest.mark.parametrize("worker, cp, kubeadm, problems", [
    ("v1.30.2", "v1.30.0", True, 0),
    ("v1.31.0", "v1.30.0", False, 1),
    ("v1.27.0", "v1.30.0", False, 0),   # 3 minors allowed for control planes >= v1.28
    ("v1.26.0", "v1.30.0", False, 1),
    ("v1.25.0", "v1.27.0", False, 0),   # 2 minors below v1.28
    ("v1.24.0", "v1.27.0", False, 1),
    ("v1.29.0", "v1.30.0", True, 1),    # kubeadm: same minor only
    ("v1.26.0", "v1.30.0", True, 2),
    ("garbage", "v1.30.0", True, 0),
    ("1.30", "1.30.1", True, 0),
])
def test_version_skew_rules(worker, cp, kubeadm, problems):
    assert len(versionskew.skew_problems(worker, cp, kubeadm=kubeadm)) == problems


def test_minor_of():
    assert versionskew.minor_of("v1.30.2") == (1, 30)
    assert versionskew.minor_of("1.28") == (1, 28)
    assert versionskew.minor_of(None) is None
