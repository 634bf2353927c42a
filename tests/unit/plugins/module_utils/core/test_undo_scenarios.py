# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_rollout_undo's core across CAPI versions: undo from MachineSets (v1.10) and from the history
record (v1.11+, where CAPI deletes old MachineSets), guards, version skew boundaries, missing
templates, idempotence."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import history
from ansible_collections.capi.rollout.plugins.module_utils.core import restart
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.plugins.module_utils.core import undo
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Observed
from ansible_collections.capi.rollout.plugins.module_utils.core.record import Recording
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_revisions as capi

KEY = "rollout.capi-rollout.dev/history"
CP = "v1.30.2"


def _at(minutes):
    return objs.NOW + datetime.timedelta(minutes=minutes)


def _text(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _infra(md):
    return md["spec"]["template"]["spec"]["infrastructureRef"]["name"]


def _apply(md, sets, plan, release, minutes):
    md = objs.apply_merge_patch(md, plan["merge_patch"])
    return capi.complete_rollout(md, sets, release=release, now=_text(_at(minutes)))


def _start(version="v1beta2"):
    """MD on template A at revision 1 with its MachineSet."""
    md = objs.machine_deployment(version, revision="1", infra="infra-a")
    return md, [objs.machine_set(version, suffix="aaaaa", revision="1", infra="infra-a")]


# ---------------------------------------------------------------------------------------------
# v1.14: old MachineSets are gone, undo works from the record


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_v114_switch_undo_from_record_and_undo_again(version):
    md, sets = _start(version)
    plan = restart.plan_restart(md, _at(1), infrastructure_ref="infra-b", recording=Recording(rollout_id="switch"),
                                observed=Observed(machine_sets=sets))
    md, sets = _apply(md, sets, plan, "v1.14", 1)
    assert [ms["spec"]["template"]["spec"]["infrastructureRef"]["name"] for ms in sets] == ["infra-b"]  # A deleted

    back = undo.plan_undo(md, _at(2), recording=Recording(rollout_id="undo-1"),
                          observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert (back["from_revision"], back["to_revision"], back["history_revision"]) == (2, 1, 3)
    assert back["target_source"] == "record" and back["target_machine_set"] is None
    assert back["message"].endswith("spec.template restored from revision 1 (the history record)")
    assert back["merge_patch"]["spec"] == {"template": {"spec": {"infrastructureRef": {"name": "infra-a"}}}}
    md, sets = _apply(md, sets, back, "v1.14", 2)
    assert _infra(md) == "infra-a" and md["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] == "3"

    again = undo.plan_undo(md, _at(3), recording=Recording(rollout_id="undo-2"),
                           observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert (again["from_revision"], again["to_revision"], again["target_source"]) == (3, 2, "record")
    md, sets = _apply(md, sets, again, "v1.14", 3)
    assert _infra(md) == "infra-b"

    rows = history.merged_history(md, sets)
    assert [(r["revision"], r["current"], r["source"], r["template"]["infrastructure_ref"]["name"], r["action"]) for r in rows] == [
        (4, True, "both", "infra-b", "rolled_back"),
        (3, False, "record", "infra-a", "rolled_back"),
        (2, False, "record", "infra-b", "restarted"),
        (1, False, "record", "infra-a", None),
    ]
    assert [e["to_revision"] for e in json.loads(md["metadata"]["annotations"][KEY]) if "to_revision" in e] == [1, 2]


def test_v114_to_revision_only_in_the_record():
    md, sets = _start()
    for minutes, infra in ((1, "infra-b"), (2, "infra-c")):
        plan = restart.plan_restart(md, _at(minutes), infrastructure_ref=infra, observed=Observed(machine_sets=sets))
        md, sets = _apply(md, sets, plan, "v1.14", minutes)
    assert len(sets) == 1
    plan = undo.plan_undo(md, _at(5), to_revision=1, observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert plan["target_source"] == "record" and plan["target_template"]["infrastructure_ref"]["name"] == "infra-a"
    assert plan["history_revision"] == 4


def test_v114_missing_revision_lists_the_ones_that_exist():
    md, sets = _start()
    plan = restart.plan_restart(md, _at(1), infrastructure_ref="infra-b", observed=Observed(machine_sets=sets))
    md, sets = _apply(md, sets, plan, "v1.14", 1)
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, _at(2), to_revision=7, observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert exc.value.reason == "revision_not_found"
    assert "unable to find specified MachineDeployment revision: 7" in str(exc.value)
    assert exc.value.hint.startswith("revisions that exist: 2 (current), 1 (record only).")


def test_v114_without_any_record_there_is_no_history():
    md, sets = _start()
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, _at(1), observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert exc.value.reason == "no_history"
    assert "revisions that exist: 1 (current)" in exc.value.hint and "CAPI v1.11+ deletes old MachineSets" in exc.value.hint


# ---------------------------------------------------------------------------------------------
# v1.10: MachineSets are kept and reused


def test_v110_undo_reuses_the_old_machine_set():
    md, sets = _start("v1beta1")
    plan = restart.plan_restart(md, _at(1), infrastructure_ref="infra-b", observed=Observed(machine_sets=sets))
    md, sets = _apply(md, sets, plan, "v1.10", 1)
    assert len(sets) == 2
    back = undo.plan_undo(md, _at(2), observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert (back["to_revision"], back["target_source"], back["target_machine_set"]) == (1, "machineset", "md-0-aaaaa")
    md, sets = _apply(md, sets, back, "v1.10", 2)
    ms_a = [ms for ms in sets if ms["metadata"]["name"] == "md-0-aaaaa"][0]
    assert ms_a["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] == "3"
    assert ms_a["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision-history"] == "1"
    rows = history.merged_history(md, sets)
    assert [(r["revision"], r["source"], r["machine_set"]) for r in rows] == [
        (3, "both", "md-0-aaaaa"), (2, "both", sets[0]["metadata"]["name"] if sets[0] is not ms_a else sets[1]["metadata"]["name"]),
        (1, "both", "md-0-aaaaa")]
    # the previous revision is 2 again (B), from its kept MachineSet
    again = undo.plan_undo(md, _at(3), observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert (again["to_revision"], again["target_source"]) == (2, "machineset")


def test_machine_set_wins_over_the_record():
    md, sets = _start("v1beta1")
    plan = restart.plan_restart(md, _at(1), infrastructure_ref="infra-b", observed=Observed(machine_sets=sets))
    md, sets = _apply(md, sets, plan, "v1.10", 1)
    record = json.loads(md["metadata"]["annotations"][KEY])
    record[0]["from"]["infrastructureRef"]["name"] = "tampered"
    md = objs.annotate(md, KEY, json.dumps(record))
    plan = undo.plan_undo(md, _at(2), observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert plan["target_template"]["infrastructure_ref"]["name"] == "infra-a"


# ---------------------------------------------------------------------------------------------
# what an undo writes


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_undo_only_touches_the_identity(version):
    md, sets = _start(version)
    md["spec"]["template"]["metadata"]["labels"]["team"] = "blue"
    md["spec"]["template"]["metadata"]["annotations"] = {"note": "kept"}
    md["spec"]["template"]["spec"]["nodeDrainTimeout" if version == "v1beta1" else "readinessGates"] = (
        "10m" if version == "v1beta1" else [{"conditionType": "X"}])
    md["spec"]["template"]["spec"]["failureDomain"] = "fd-2"
    old = objs.machine_set(version, suffix="zzzzz", revision="0", infra="infra-old", k8s_version="v1.29.4", replicas=0)
    old["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] = "1"
    sets[0]["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] = "2"
    md["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] = "2"
    plan = undo.plan_undo(md, objs.NOW, recording=Recording(enabled=False),
                          observed=Observed(machine_sets=[old] + sets, control_plane_version="v1.29.9"))
    assert plan["merge_patch"] == {"spec": {"template": {"spec": {
        "version": "v1.29.4", "infrastructureRef": {"name": "infra-old"}, "failureDomain": None}}}}
    patched = objs.apply_merge_patch(md, plan["merge_patch"])
    assert patched["spec"]["template"]["metadata"] == md["spec"]["template"]["metadata"]
    assert "machine-template-hash" not in patched["spec"]["template"]["metadata"]["labels"]
    assert plan["diff"]["before"] == ('spec:\n  template:\n    spec:\n      version: "v1.30.2"\n      infrastructureRef:\n'
                                      '        name: "infra-a"\n      failureDomain: "fd-2"\n')
    assert plan["diff"]["after"] == ('spec:\n  template:\n    spec:\n      version: "v1.29.4"\n      infrastructureRef:\n'
                                     '        name: "infra-old"\n')


def test_undo_switches_between_config_ref_and_data_secret_name():
    md, sets = _start()
    old = objs.machine_set(suffix="zzzzz", revision="1", infra="infra-a")
    old["spec"]["template"]["spec"]["bootstrap"] = {"dataSecretName": "pre-baked"}
    sets[0]["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] = "2"
    plan = undo.plan_undo(md, objs.NOW, recording=Recording(enabled=False),
                          observed=Observed(machine_sets=sets + [old], control_plane_version=CP))
    assert plan["merge_patch"] == {"spec": {"template": {"spec": {"bootstrap": {"configRef": None, "dataSecretName": "pre-baked"}}}}}
    assert plan["required_templates"] == [{"role": "infrastructure", "api_group": "infrastructure.cluster.x-k8s.io",
                                           "kind": "DockerMachineTemplate", "name": "infra-a", "namespace": "default"}]


def test_v1beta1_record_ref_gets_a_full_api_version():
    """A record written through v1beta2 (apiGroup) restored through v1beta1 needs an apiVersion:
    the current one for the same group, else one seen elsewhere, else a clear refusal."""
    md, sets = _start("v1beta1")
    v2_record = [history.make_entry(2, objs.NOW, "restarted",
                                    {"version": "v1.30.2", "infrastructureRef": {"apiGroup": "infra.other.io", "kind": "OtherTemplate",
                                                                                 "name": "other"}},
                                    history.identity_of(md))]
    md = objs.annotate(md, KEY, history.serialize(v2_record))
    md["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] = "2"
    sets[0]["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"] = "2"
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert exc.value.reason == "invalid_reference" and "OtherTemplate other" in str(exc.value)
    v2_record[0]["from"]["infrastructureRef"] = {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate",
                                                 "name": "infra-z"}
    md = objs.annotate(md, KEY, history.serialize(v2_record))
    plan = undo.plan_undo(md, objs.NOW, recording=Recording(enabled=False),
                          observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert plan["merge_patch"]["spec"]["template"]["spec"]["infrastructureRef"] == {"name": "infra-z"}


# ---------------------------------------------------------------------------------------------
# guards


def _two_revisions(version="v1beta2", k8s_old="v1.30.2", bootstrap_kind=None):
    md = objs.machine_deployment(version, revision="2", infra="infra-new")
    old = objs.machine_set(version, suffix="aaaaa", revision="1", infra="infra-old", k8s_version=k8s_old, replicas=0)
    if bootstrap_kind:
        old["spec"]["template"]["spec"]["bootstrap"]["configRef"]["kind"] = bootstrap_kind
    new = objs.machine_set(version, suffix="bbbbb", revision="2", infra="infra-new")
    return md, [new, old]


@pytest.mark.parametrize("bend, reason, text", [
    (lambda md, c: md["spec"].update(paused=True), "paused", "a rollback would not roll out"),
    (lambda md, c: md["metadata"]["annotations"].update({"cluster.x-k8s.io/paused": ""}), "paused", "is not reconciled"),
    (lambda md, c: c["spec"].update(paused=True), "cluster_paused", "Cluster default/c1 is paused"),
])
def test_paused_is_refused(bend, reason, text):
    md, sets = _two_revisions()
    cluster = objs.cluster()
    bend(md, cluster)
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, objs.NOW, force=True, observed=Observed(cluster=cluster, machine_sets=sets, control_plane_version=CP))
    assert exc.value.reason == reason and text in str(exc.value) and exc.value.hint


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_kcp_is_refused_with_the_reason(version):
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(objs.kubeadm_control_plane(version), objs.NOW, force=True, observed=Observed(machine_sets=[]))
    assert exc.value.reason == "control_plane_undo"
    assert str(exc.value).startswith("kubeadmcontrolplane/default/c1-cp: undo of a KubeadmControlPlane is refused: "
                                     "control-plane and etcd downgrades are unsupported")
    assert "roll the control plane forward" in exc.value.hint


def test_topology_owned_refused_then_allowed_with_force():
    md, sets = _two_revisions()
    md = objs.label(md, "topology.cluster.x-k8s.io/owned", "")
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert exc.value.reason == "topology_owned"
    assert "Cluster topology" in exc.value.hint and "force=true" in exc.value.hint
    plan = undo.plan_undo(md, objs.NOW, force=True, observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert plan["action"] == "rolled_back"
    assert any("topology controller reverts spec.template" in w for w in plan["warnings"])


@pytest.mark.parametrize("value", [-1, "-2", "abc", True, None])
def test_invalid_revisions(value):
    md, sets = _two_revisions()
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, objs.NOW, to_revision=value, observed=Observed(machine_sets=sets))
    assert exc.value.reason == "invalid_revision"


def test_to_revision_as_text_is_accepted():
    md, sets = _two_revisions()
    assert undo.plan_undo(md, objs.NOW, to_revision="1",
                          observed=Observed(machine_sets=sets, control_plane_version=CP))["to_revision"] == 1


# ---------------------------------------------------------------------------------------------
# version skew: exact boundaries


@pytest.mark.parametrize("cp_spec, cp_status, target, bootstrap_kind, rules", [
    # control plane >= v1.28: up to 3 minors older
    ("v1.30.2", "v1.30.2", "v1.30.0", None, []),
    ("v1.30.2", "v1.30.2", "v1.27.9", "TalosConfigTemplate", []),
    ("v1.30.2", "v1.30.2", "v1.26.9", "TalosConfigTemplate", ["too_old"]),
    ("v1.28.0", "v1.28.0", "v1.25.0", "TalosConfigTemplate", []),
    ("v1.28.0", "v1.28.0", "v1.24.0", "TalosConfigTemplate", ["too_old"]),
    # control plane < v1.28: up to 2 minors older
    ("v1.27.5", "v1.27.5", "v1.25.3", "TalosConfigTemplate", []),
    ("v1.27.5", "v1.27.5", "v1.24.3", "TalosConfigTemplate", ["too_old"]),
    # never newer than the control plane
    ("v1.30.2", "v1.30.2", "v1.31.0", "TalosConfigTemplate", ["newer_than_control_plane"]),
    ("v1.30.2", "v1.30.2", "v1.31.0", None, ["newer_than_control_plane"]),
    ("v1.30.2", "v1.30.2", "v1.30.9", None, []),  # patch versions do not matter
    # kubeadm: the control plane minor only
    ("v1.30.2", "v1.30.2", "v1.29.9", None, ["kubeadm_minor_mismatch"]),
    ("v1.30.2", "v1.30.2", "v1.26.0", None, ["too_old", "kubeadm_minor_mismatch"]),
    # control plane mid-upgrade (status = oldest Machine): newer is checked against the older,
    # too old against the newer, kubeadm against spec.version
    ("v1.31.0", "v1.30.2", "v1.31.0", None, ["newer_than_control_plane"]),
    ("v1.31.0", "v1.30.2", "v1.30.2", None, ["kubeadm_minor_mismatch"]),
    ("v1.31.0", "v1.30.2", "v1.28.0", "TalosConfigTemplate", []),
    ("v1.31.0", "v1.30.2", "v1.27.0", "TalosConfigTemplate", ["too_old"]),
    ("v1.30.2", None, "v1.30.1", None, []),
])
def test_version_skew_rules_are_refused_and_forceable(cp_spec, cp_status, target, bootstrap_kind, rules):
    md, sets = _two_revisions(k8s_old=target, bootstrap_kind=bootstrap_kind)
    kcp = objs.kubeadm_control_plane(k8s_version=cp_spec)
    if cp_status is None:
        del kcp["status"]["version"]
    else:
        kcp["status"]["version"] = cp_status
    if not rules:
        assert undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane=kcp))["warnings"] == []
        return
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane=kcp))
    assert exc.value.reason == "version_skew"
    text = str(exc.value)
    assert text.startswith("machinedeployment/default/md-0: revision 1 breaks the Kubernetes version skew policy: ")
    assert f"version {target}" in text and cp_spec in text and "(rule: " in text
    assert "force=true" in exc.value.hint
    plan = undo.plan_undo(md, objs.NOW, force=True, observed=Observed(machine_sets=sets, control_plane=kcp))
    assert plan["action"] == "rolled_back"
    assert len(plan["warnings"]) == len(rules) and all(w.startswith("ignored because force=true: ") for w in plan["warnings"])


def test_version_skew_message_shows_both_versions_and_the_rule():
    md, sets = _two_revisions(k8s_old="v1.26.9", bootstrap_kind="TalosConfigTemplate")
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane_version="v1.30.2"))
    assert exc.value.msg == ("revision 1 breaks the Kubernetes version skew policy: version v1.26.9 is 4 minors older than the "
                             "control plane v1.30.2, at most 3 allowed (rule: a worker may be at most 3 minors older than a "
                             "control plane on v1.28 or newer, 2 minors before v1.28)")


def test_unknown_control_plane_version_is_a_warning():
    md, sets = _two_revisions()
    kcp = objs.kubeadm_control_plane()
    del kcp["spec"]["version"]
    del kcp["status"]["version"]
    assert undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane=kcp))["warnings"] == [
        "control plane version unknown: Kubernetes version skew was not checked"]


# ---------------------------------------------------------------------------------------------
# templates that no longer exist


def _docker(name, namespace="default"):
    return {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate",
            "metadata": {"name": name, "namespace": namespace}}


def _kubeadm(name):
    return {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate",
            "metadata": {"name": name, "namespace": "default"}}


def test_required_templates_and_grouping():
    md, sets = _two_revisions()
    plan = undo.plan_undo(md, objs.NOW, observed=Observed(machine_sets=sets, control_plane_version=CP))
    required = undo.required_templates(plan)
    assert required == [
        {"role": "infrastructure", "api_group": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate",
         "name": "infra-old", "namespace": "default"},
        {"role": "bootstrap", "api_group": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate",
         "name": "md-0-bootstrap", "namespace": "default"}]
    assert tmpl.templates_by_kind(required) == {("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate"): ["infra-old"],
                                                ("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate"): ["md-0-bootstrap"]}
    assert undo.required_templates(None) == []


@pytest.mark.parametrize("existing, missing", [
    ([_docker("infra-old"), _kubeadm("md-0-bootstrap")], None),
    ([_docker("infra-new"), _kubeadm("md-0-bootstrap")], "DockerMachineTemplate default/infra-old"),
    ([_docker("infra-old", namespace="other"), _kubeadm("md-0-bootstrap")], "DockerMachineTemplate default/infra-old"),
    ([_docker("infra-old")], "KubeadmConfigTemplate default/md-0-bootstrap"),
    ([], "DockerMachineTemplate default/infra-old, KubeadmConfigTemplate default/md-0-bootstrap"),
    ({("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate"): ["infra-old"],
      ("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate"): [_kubeadm("md-0-bootstrap")]}, None),
    ({("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate"): [],
      ("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate"): ["md-0-bootstrap"]}, "DockerMachineTemplate default/infra-old"),
    ([("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate", "infra-old"),
      {"api_group": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "md-0-bootstrap"}], None),
])
def test_missing_template_is_refused_and_named(existing, missing):
    md, sets = _two_revisions()
    if missing is None:
        plan = undo.plan_undo(md, objs.NOW,
                              observed=Observed(machine_sets=sets, control_plane_version=CP, existing_templates=existing))
        assert plan["action"] == "rolled_back" and plan["warnings"] == []
        return
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, objs.NOW, force=True,
                       observed=Observed(machine_sets=sets, control_plane_version=CP, existing_templates=existing))
    assert exc.value.reason == "template_missing"
    assert f"revision 1 references {missing}, which no longer exist(s): the rollout could never finish" in str(exc.value)


def test_unchecked_template_kinds_are_a_warning():
    md, sets = _two_revisions()
    existing = {("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate"): ["infra-old"]}
    plan = undo.plan_undo(md, objs.NOW,
                          observed=Observed(machine_sets=sets, control_plane_version=CP, existing_templates=existing))
    assert plan["warnings"] == ["KubeadmConfigTemplate md-0-bootstrap was not checked for existence"]


def test_template_key_forms():
    key = ("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate", "x")
    assert tmpl.template_key(_docker("x")) == key
    assert tmpl.template_key({"apiGroup": key[0], "kind": key[1], "name": "x"}) == key
    assert tmpl.template_key({"apiVersion": key[0] + "/v1beta1", "kind": key[1], "name": "x"}) == key
    assert tmpl.template_key("x", kind_key=key[:2]) == key
    assert tmpl.template_key(42) is None and tmpl.template_key("x") is None


# ---------------------------------------------------------------------------------------------
# check mode, idempotence


def test_planning_writes_nothing():
    md, sets = _start()
    plan = restart.plan_restart(md, _at(1), infrastructure_ref="infra-b", observed=Observed(machine_sets=sets))
    md, sets = _apply(md, sets, plan, "v1.14", 1)
    before = copy.deepcopy((md, sets))
    plan = undo.plan_undo(md, _at(2), observed=Observed(machine_sets=sets, control_plane_version=CP,
                                                        existing_templates=[_docker("infra-a"), _kubeadm("md-0-bootstrap")]))
    assert (md, sets) == before
    assert plan["changed"] and plan["diff"]["before"] and plan["diff"]["after"]
    assert "infra-a" in plan["diff"]["after"] and "new: " in plan["diff"]["after"]


@pytest.mark.parametrize("release", ["v1.10", "v1.14"])
def test_rollout_id_makes_undo_idempotent(release):
    version = "v1beta1" if release == "v1.10" else "v1beta2"
    md, sets = _start(version)
    plan = restart.plan_restart(md, _at(1), infrastructure_ref="infra-b", observed=Observed(machine_sets=sets))
    md, sets = _apply(md, sets, plan, release, 1)
    first = undo.plan_undo(md, _at(2), recording=Recording(rollout_id="undo-42"),
                           observed=Observed(machine_sets=sets, control_plane_version=CP))
    md, sets = _apply(md, sets, first, release, 2)
    again = undo.plan_undo(md, _at(3), recording=Recording(rollout_id="undo-42"),
                           observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert again["action"] == "unchanged" and again["merge_patch"] is None
    assert "rollout_id undo-42 was already applied (rolled_back at 2026-03-01T12:02:00Z)" in again["message"]
    # still idempotent after another change replaced the last-rollout record
    plan = restart.plan_restart(md, _at(4), recording=Recording(rollout_id="other"), observed=Observed(machine_sets=sets))
    md, sets = _apply(md, sets, plan, release, 4)
    assert undo.plan_undo(md, _at(5), recording=Recording(rollout_id="undo-42"),
                          observed=Observed(machine_sets=sets, control_plane_version=CP))["action"] == "unchanged"
    # without a rollout_id undo runs again; after a plain restart the previous revision (3) has the
    # same template (clusterctl semantics), so only an explicit revision goes further back
    same = undo.plan_undo(md, _at(5), observed=Observed(machine_sets=sets, control_plane_version=CP))
    origin = "from the history record" if release == "v1.14" else "md-0-aaaaa"
    assert same["action"] == "unchanged"
    assert same["message"].endswith(f"spec.template already equals revision 3 ({origin})")
    further = undo.plan_undo(md, _at(5), to_revision=2, observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert further["action"] == "rolled_back" and further["target_template"]["infrastructure_ref"]["name"] == "infra-b"


def test_restart_id_does_not_make_an_undo_unchanged():
    md, sets = _start()
    plan = restart.plan_restart(md, _at(1), infrastructure_ref="infra-b", recording=Recording(rollout_id="same"),
                                observed=Observed(machine_sets=sets))
    md, sets = _apply(md, sets, plan, "v1.14", 1)
    assert undo.plan_undo(md, _at(2), recording=Recording(rollout_id="same"),
                          observed=Observed(machine_sets=sets, control_plane_version=CP))["action"] == "rolled_back"


def test_undo_history_respects_history_limit():
    md, sets = _start()
    for minutes in range(1, 8):
        plan = restart.plan_restart(md, _at(minutes), infrastructure_ref=f"infra-{minutes}", recording=Recording(history_limit=4),
                                    observed=Observed(machine_sets=sets))
        md, sets = _apply(md, sets, plan, "v1.14", minutes)
    plan = undo.plan_undo(md, _at(9), recording=Recording(history_limit=4),
                          observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert [e["revision"] for e in json.loads(plan["merge_patch"]["metadata"]["annotations"][KEY])] == [6, 7, 8, 9]
    with pytest.raises(RolloutError) as exc:
        undo.plan_undo(md, _at(9), to_revision=2, observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert exc.value.hint.startswith("revisions that exist: 8 (current), 7 (record only), 6 (record only), 5 (record only), "
                                     "4 (record only).")


# ---------------------------------------------------------------------------------------------
# undo of one rollout (undo_rollout_id): back to what the object was before it, never onto another template


def _hand_edit(md, sets, infra, manager, minutes, version="v1beta2"):
    """Someone else switches the template (a kubectl edit, a reconciler): managedFields name them."""
    md = copy.deepcopy(md)
    md["spec"]["template"]["spec"]["infrastructureRef"]["name"] = infra
    md["metadata"]["managedFields"] = [{"manager": manager, "operation": "Update", "time": _text(_at(minutes)),
                                        "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:infrastructureRef": {"f:name": {}}}}}}}]
    return capi.complete_rollout(md, sets, release="v1.14", now=_text(_at(minutes)))


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_undo_of_a_refresh_returns_to_the_template_before_it(version):
    md, sets = _start(version)
    for minutes, (infra, rollout_id) in enumerate((("infra-b", "hw-0"), ("infra-c", "hw-1")), start=1):
        plan = restart.plan_restart(md, _at(minutes), infrastructure_ref=infra, recording=Recording(rollout_id=rollout_id),
                                    observed=Observed(machine_sets=sets))
        md, sets = _apply(md, sets, plan, "v1.14", minutes)
    back = undo.plan_undo(md, _at(5), recording=Recording(rollout_id="hw-1-undo"), undo_rollout_id="hw-1",
                          observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert back["changed"] and back["target_template"]["infrastructure_ref"]["name"] == "infra-b"
    assert back["to_revision"] == 2 and back["target_source"] == "record"
    # a rollout that changed no template of it: nothing to undo (to_revision=0 would have moved it to infra-b)
    plain = undo.plan_undo(md, _at(5), undo_rollout_id="hw-9", observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert not plain["changed"] and "changed no template" in plain["message"]


def test_undo_of_a_refresh_after_a_hand_edit_stops_and_names_the_editor():
    """The bug of issue 27: to_revision=0 after a mid-wave edit moved the object onto the refresh's own target."""
    md, sets = _start()
    plan = restart.plan_restart(md, _at(1), infrastructure_ref="infra-b", recording=Recording(rollout_id="hw-1"),
                                observed=Observed(machine_sets=sets))
    md, sets = _apply(md, sets, plan, "v1.14", 1)
    md, sets = _hand_edit(md, sets, "infra-x", "kubectl-edit", 2)
    previous = undo.plan_undo(md, _at(3), observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert previous["target_template"]["infrastructure_ref"]["name"] == "infra-b"  # what to_revision=0 does
    with pytest.raises(RolloutError) as err:
        undo.plan_undo(md, _at(3), undo_rollout_id="hw-1", observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert err.value.reason == "changed_since_rollout"
    assert str(err.value).startswith(f"machinedeployment/default/md-0: its template was changed by kubectl-edit at "
                                     f"{_text(_at(2))} after rollout hw-1 switched it (it is on infra-x, not on infra-b)")
    # edited back to the template from before the refresh: nothing to undo
    md, sets = _hand_edit(md, sets, "infra-a", "kubectl-edit", 4)
    done = undo.plan_undo(md, _at(5), undo_rollout_id="hw-1", observed=Observed(machine_sets=sets, control_plane_version=CP))
    assert not done["changed"]


# --- an MD a Cluster topology manages: its topology change reverted in the Cluster --------------------------------

def test_topology_undo_reverts_the_recorded_override_in_the_cluster_and_records_it():
    from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_restart import TOPOLOGY, _topology_md
    from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_topology import CLASS
    md = _topology_md()
    cluster = objs.cluster(topology=TOPOLOGY)
    switch = restart.plan_topology_switch(md, objs.NOW, {"customImage": "img:2"}, CLASS, observed=Observed(cluster=cluster),
                                          recording=Recording(rollout_id="hw-1"))
    md, cluster = objs.apply_json_patch(md, switch["patch"]), objs.apply_json_patch(cluster, switch["owner"]["patch"])
    plan = undo.plan_undo(md, objs.NOW, observed=Observed(cluster=cluster), recording=Recording(rollout_id="hw-1-undo"),
                          undo_rollout_id="hw-1")
    assert plan["changed"] is True and plan["owner"]["ref"] == f"cluster/{cluster['metadata']['namespace']}/c1"
    reverted = objs.apply_json_patch(cluster, plan["owner"]["patch"])
    assert not (reverted["spec"]["topology"]["workers"]["machineDeployments"][0].get("variables") or {}).get("overrides")
    assert plan["hold"]["overrides"] == {"workerImage": None} and plan["hold"]["not_on"]
    assert "reverted through" in plan["message"]
    record = json.loads(objs.apply_json_patch(md, plan["patch"])["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])
    assert record[-1]["action"] == "rolled_back" and "no workerImage" in record[-1]["topology"]
    # reverted already: nothing to do; changed by someone else since: left alone, naming who
    assert undo.plan_undo(md, objs.NOW, observed=Observed(cluster=reverted), undo_rollout_id="hw-1")["changed"] is False
    other = copy.deepcopy(cluster)
    other["spec"]["topology"]["workers"]["machineDeployments"][0]["variables"]["overrides"][0]["value"] = "img:3"
    other["metadata"]["managedFields"] = [{"manager": "argocd", "time": "2099-01-01T00:00:00Z", "operation": "Apply",
                                           "fieldsV1": {"f:spec": {"f:topology": {"f:workers": {"f:machineDeployments": {}}}}}}]
    with pytest.raises(RolloutError) as err:
        undo.plan_undo(md, objs.NOW, observed=Observed(cluster=other), undo_rollout_id="hw-1")
    assert err.value.reason == "changed_since_rollout" and "changed by argocd at 2099-01-01T00:00:00Z" in err.value.msg
    # positive control: without a Cluster topology the same MD is refused as topology-owned, as before
    with pytest.raises(RolloutError) as err:
        undo.plan_undo(md, objs.NOW, observed=Observed(cluster=objs.cluster()), undo_rollout_id="hw-1")
    assert err.value.reason == "topology_owned"


# --- a KubeadmControlPlane a Cluster topology manages: its Cluster variable reverted --------------------------------

@pytest.mark.parametrize("version", objs.VERSIONS)
def test_topology_control_plane_undo_reverts_the_recorded_cluster_variable(version):
    from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_restart import TOPOLOGY
    from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_topology import _cp_class
    kcp = objs.label(objs.kubeadm_control_plane(version), "topology.cluster.x-k8s.io/owned", "")
    cluster = objs.cluster(version, topology=TOPOLOGY)
    switch = restart.plan_topology_switch(kcp, objs.NOW, {"customImage": "img:2"}, _cp_class(),
                                          observed=Observed(cluster=cluster), recording=Recording(rollout_id="hw-1"))
    kcp, cluster = objs.apply_json_patch(kcp, switch["patch"]), objs.apply_json_patch(cluster, switch["owner"]["patch"])
    assert {"name": "controlPlaneImage", "value": "img:2"} in cluster["spec"]["topology"]["variables"]
    plan = undo.plan_undo(kcp, objs.NOW, observed=Observed(cluster=cluster), recording=Recording(rollout_id="hw-1-undo"),
                          undo_rollout_id="hw-1")
    assert plan["changed"] is True and plan["action"] == "rolled_back" and plan["owner"]["ref"] == "cluster/default/c1"
    assert not objs.apply_json_patch(cluster, plan["owner"]["patch"])["spec"]["topology"].get("variables")
    assert plan["hold"]["overrides"] == {"controlPlaneImage": None} and plan["hold"]["not_on"] == "c1-cp-infra-v1"
    assert "spec.topology.variables: no controlPlaneImage" in plan["message"] and "rolls this KubeadmControlPlane" in plan["message"]
    record = json.loads(objs.apply_json_patch(kcp, plan["patch"])["metadata"]["annotations"][KEY])
    assert record[-1]["action"] == "rolled_back" and record[-1]["topology_after"] == {"controlPlaneImage": None}
    # the newest recorded change without undo_rollout_id; a rollout that changed no topology of it: nothing to undo
    assert undo.plan_undo(kcp, objs.NOW, observed=Observed(cluster=cluster))["changed"] is True
    assert undo.plan_undo(kcp, objs.NOW, observed=Observed(cluster=cluster), undo_rollout_id="hw-9")["changed"] is False
    # what a KCP has no undo for: to_revision, force, no Cluster topology
    for kwargs in ({"to_revision": 1}, {"force": True}, {"observed": Observed(cluster=objs.cluster(version))}):
        with pytest.raises(RolloutError) as err:
            undo.plan_undo(kcp, objs.NOW, **dict({"observed": Observed(cluster=cluster)}, **kwargs))
        assert err.value.reason == "control_plane_undo", kwargs
        assert str(err.value).startswith("kubeadmcontrolplane/default/c1-cp: undo of a KubeadmControlPlane is refused")


def test_topology_control_plane_without_a_recorded_change_is_refused_as_every_control_plane():
    from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_restart import TOPOLOGY
    kcp = objs.label(objs.kubeadm_control_plane(), "topology.cluster.x-k8s.io/owned", "")
    with pytest.raises(RolloutError) as err:
        undo.plan_undo(kcp, objs.NOW, observed=Observed(cluster=objs.cluster(topology=TOPOLOGY)))
    assert err.value.reason == "control_plane_undo" and "only the topology change capi_rollout_restart recorded" in err.value.msg
    assert "roll the control plane forward" in err.value.hint


def test_topology_undo_of_a_worker_class_switch_switches_the_class_back():
    from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_restart import TOPOLOGY, _topology_md
    from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_topology import CLASS_B, _template
    md = _topology_md()
    cluster = objs.cluster(topology=TOPOLOGY)
    switch = restart.plan_topology_switch(md, objs.NOW, {"extra": 1}, CLASS_B, observed=Observed(cluster=cluster),
                                          recording=Recording(rollout_id="hw-b"),
                                          worker_templates={"big-worker": _template("t-big", extra=1)})
    assert switch["hold"] == {"overrides": {}, "template": {"extra": 1}, "class": "big-worker"}
    assert "worker class big-worker" in switch["message"]
    md, cluster = objs.apply_json_patch(md, switch["patch"]), objs.apply_json_patch(cluster, switch["owner"]["patch"])
    assert cluster["spec"]["topology"]["workers"]["machineDeployments"][0]["class"] == "big-worker"
    plan = undo.plan_undo(md, objs.NOW, observed=Observed(cluster=cluster), recording=Recording(rollout_id="hw-b-undo"),
                          undo_rollout_id="hw-b")
    assert plan["changed"] is True and plan["hold"]["class"] == "default-worker" and plan["hold"]["not_on"]
    reverted = objs.apply_json_patch(cluster, plan["owner"]["patch"])
    assert reverted["spec"]["topology"]["workers"]["machineDeployments"][0]["class"] == "default-worker"
    record = json.loads(objs.apply_json_patch(md, plan["patch"])["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])
    assert record[-1]["topology_class"] == ["big-worker", "default-worker"]
    assert undo.plan_undo(md, objs.NOW, observed=Observed(cluster=reverted), undo_rollout_id="hw-b")["changed"] is False
    # someone switched it to yet another class since: left alone
    other = copy.deepcopy(cluster)
    other["spec"]["topology"]["workers"]["machineDeployments"][0]["class"] = "bigger-worker"
    with pytest.raises(RolloutError) as err:
        undo.plan_undo(md, objs.NOW, observed=Observed(cluster=other), undo_rollout_id="hw-b")
    assert err.value.reason == "changed_since_rollout" and "class=bigger-worker (not big-worker)" in err.value.msg
