# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import restart
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Observed
from ansible_collections.capi.rollout.plugins.module_utils.core.record import Recording
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

LAST = "rollout.capi-rollout.dev/last"
RECORD = {"recording": Recording(enabled=False)}  # patches identical to clusterctl's


def _after_path(version):
    return "spec.rolloutAfter" if version == "v1beta1" else "spec.rollout.after"


# ---------------------------------------------------------------------------------------------
# clusterctl Test_ObjectRestarter (rollout_restarter_test.go), both API versions


def _paused_md(version):
    obj = objs.bare("MachineDeployment", "md-1", version)
    obj["spec"] = {"paused": True}
    return obj


def _scheduled(kind, name, version):
    obj = objs.bare(kind, name, version)
    return objs.set_rollout_after(dict(obj, spec={}), objs.HOUR_LATER)


RESTARTER_CASES = [
    ("md no spec", lambda v: objs.bare("MachineDeployment", "md-1", v), None),
    ("md paused", _paused_md, "paused"),
    ("md rolloutAfter in 1h", lambda v: _scheduled("MachineDeployment", "md-1", v), "rollout_scheduled"),
    ("kcp no spec", lambda v: objs.bare("KubeadmControlPlane", "kcp", v), None),
    ("kcp paused annotation", lambda v: objs.annotate(objs.bare("KubeadmControlPlane", "kcp", v), "cluster.x-k8s.io/paused", "true"),
     "paused"),
    ("kcp rolloutAfter in 1h", lambda v: _scheduled("KubeadmControlPlane", "kcp", v), "rollout_scheduled"),
]


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("name, build, error_reason", RESTARTER_CASES, ids=[c[0] for c in RESTARTER_CASES])
def test_object_restarter(version, name, build, error_reason):
    obj = build(version)
    before = copy.deepcopy(obj)
    if error_reason:
        with pytest.raises(RolloutError) as exc:
            restart.plan_restart(obj, objs.NOW, **RECORD)
        assert exc.value.reason == error_reason
        assert exc.value.ref == f"{obj['kind'].lower()}/default/{obj['metadata']['name']}"
        assert exc.value.hint
        assert objs.rollout_after_of(obj) == objs.rollout_after_of(before)
        return
    plan = restart.plan_restart(obj, objs.NOW, **RECORD)
    value = objs.rollout_after_in_patch(version, plan["merge_patch"])
    # non-zero, and exactly the injected now in UTC
    assert value and value != "0001-01-01T00:00:00Z"
    assert value == objs.TRIGGER_TEXT
    assert plan["action"] == "restarted" and plan["changed"] is True
    assert plan["patch_type"] == "json"
    assert objs.apply_json_patch(obj, plan["patch"]) == objs.apply_merge_patch(obj, plan["merge_patch"])
    if version == "v1beta1":
        assert plan["merge_patch"] == {"spec": {"rolloutAfter": objs.TRIGGER_TEXT}}
    else:
        assert plan["merge_patch"] == {"spec": {"rollout": {"after": objs.TRIGGER_TEXT}}}
    patched = objs.apply_merge_patch(obj, plan["merge_patch"])
    assert objs.rollout_after_of(patched) == objs.TRIGGER_TEXT
    assert obj == before


@pytest.mark.parametrize("now", [
    datetime.datetime(2026, 3, 1, 13, 0, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
    "2026-03-01T07:00:00-05:00",
    datetime.datetime(2026, 3, 1, 12, 0, 0, 654321, tzinfo=datetime.timezone.utc),
])
def test_now_is_written_in_utc_seconds(now):
    plan = restart.plan_restart(objs.bare("MachineDeployment", "md-1"), now, **RECORD)
    assert plan["rollout_after"] == objs.TRIGGER_TEXT


# ---------------------------------------------------------------------------------------------
# guards: each raises with the ref and a hint, nothing planned


GUARDS = [
    ("md spec.paused", lambda v: dict(objs.machine_deployment(v), spec=dict(objs.machine_deployment(v)["spec"], paused=True)), {},
     "paused", "capi_rollout_pause with paused=false"),
    ("md paused annotation", lambda v: objs.annotate(objs.machine_deployment(v), "cluster.x-k8s.io/paused", ""), {},
     "paused", "cluster.x-k8s.io/paused-"),
    ("kcp paused annotation", lambda v: objs.annotate(objs.kubeadm_control_plane(v), "cluster.x-k8s.io/paused", "true"), {},
     "paused", "capi_rollout_pause with paused=false"),
    ("cluster paused", objs.machine_deployment, {"observed": Observed(cluster=objs.cluster(paused=True))},
     "cluster_paused", "unpause Cluster default/c1"),
    ("kcp cluster paused", objs.kubeadm_control_plane, {"observed": Observed(cluster=objs.cluster(paused=True))},
     "cluster_paused", "unpause Cluster"),
    ("future trigger", lambda v: objs.set_rollout_after(objs.machine_deployment(v), objs.HOUR_LATER), {},
     "rollout_scheduled", "force=true"),
    ("future trigger vs other future", lambda v: objs.set_rollout_after(objs.machine_deployment(v), objs.HOUR_LATER),
     {"after": "2026-03-02T00:00:00Z"}, "rollout_scheduled", "force=true"),
    ("invalid after", objs.machine_deployment, {"after": "tomorrow"}, "invalid_after", "RFC 3339"),
    ("invalid after date only", objs.machine_deployment, {"after": "2026-03-02"}, "invalid_after", "'now'"),
    ("template switch on topology-owned", lambda v: objs.label(objs.machine_deployment(v), "topology.cluster.x-k8s.io/owned", ""),
     {"infrastructure_ref": {"name": "md-0-infra-v2"}}, "topology_owned", "Cluster topology"),
    ("kcp template switch on topology-owned",
     lambda v: objs.label(objs.kubeadm_control_plane(v), "topology.cluster.x-k8s.io/owned", ""),
     {"infrastructure_ref": "c1-cp-infra-v2"}, "topology_owned", "ClusterClass"),
    ("infrastructure_ref without name", objs.machine_deployment, {"infrastructure_ref": {"kind": "X"}},
     "invalid_infrastructure_ref", "infrastructure_ref.name"),
    ("infrastructure_ref to a MachineDeployment", objs.machine_deployment,
     {"infrastructure_ref": {"api_group": "cluster.x-k8s.io", "kind": "MachineDeployment", "name": "md-1"}},
     "not_a_template", "MachineTemplate"),
]


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("name, build, kwargs, reason, hint_part", GUARDS, ids=[g[0] for g in GUARDS])
def test_guards(version, name, build, kwargs, reason, hint_part):
    obj = build(version)
    before = copy.deepcopy(obj)
    with pytest.raises(RolloutError) as exc:
        restart.plan_restart(obj, objs.NOW, **kwargs)
    err = exc.value
    assert err.reason == reason
    assert err.ref == f"{obj['kind'].lower()}/default/{obj['metadata']['name']}"
    assert str(err).startswith(err.ref + ": ")
    assert hint_part in err.hint
    assert obj == before


def test_invalid_kind():
    with pytest.raises(RolloutError) as exc:
        restart.plan_restart(objs.machine_set(), objs.NOW)
    assert exc.value.reason == "invalid_kind"


# ---------------------------------------------------------------------------------------------
# scheduling


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("current, kwargs, action, written", [
    # fresh object, future after: scheduled
    (None, {"after": objs.HOUR_LATER}, "scheduled", objs.HOUR_LATER),
    # offsets are normalized to UTC
    (None, {"after": "2026-03-01T14:00:00+01:00"}, "scheduled", objs.HOUR_LATER),
    # explicit past time: fires immediately for machines created before it
    (None, {"after": objs.HOUR_EARLIER}, "restarted", objs.HOUR_EARLIER),
    (None, {"after": "now"}, "restarted", objs.TRIGGER_TEXT),
    (None, {"after": "NOW"}, "restarted", objs.TRIGGER_TEXT),
    # a past trigger is simply overwritten (clusterctl)
    (objs.HOUR_EARLIER, {}, "restarted", objs.TRIGGER_TEXT),
    # force replaces a future trigger, with now or with another time
    (objs.HOUR_LATER, {"force": True}, "restarted", objs.TRIGGER_TEXT),
    (objs.HOUR_LATER, {"force": True, "after": "2026-03-02T00:00:00Z"}, "scheduled", "2026-03-02T00:00:00Z"),
    # same future time again: nothing to do (idempotent scheduling)
    (objs.HOUR_LATER, {"after": objs.HOUR_LATER}, "unchanged", None),
    (objs.HOUR_LATER, {"after": "2026-03-01T14:00:00+01:00"}, "unchanged", None),
    # already exactly now (same second)
    (objs.TRIGGER_TEXT, {}, "unchanged", None),
])
def test_after_handling(version, current, kwargs, action, written):
    md = objs.machine_deployment(version)
    if current:
        md = objs.set_rollout_after(md, current)
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(enabled=False), **kwargs)
    assert plan["action"] == action
    assert plan["changed"] is (action != "unchanged")
    if written is None:
        assert plan["merge_patch"] is None
        assert plan["diff"] == {"before": "", "after": "", "before_header": "machinedeployment/default/md-0 (before)",
                                "after_header": "machinedeployment/default/md-0 (after)"}
    else:
        assert objs.rollout_after_in_patch(version, plan["merge_patch"]) == written
        assert plan["rollout_after"] == written
        assert plan["changes"] == [{"path": _after_path(version), "before": current, "after": written}]


def test_scheduled_message_and_record():
    plan = restart.plan_restart(objs.machine_deployment(), objs.NOW, after=objs.HOUR_LATER,
                                recording=Recording(reason="maintenance window"))
    assert plan["message"] == f"machinedeployment/default/md-0: rollout scheduled for {objs.HOUR_LATER} (spec.rollout.after)"
    record = json.loads(plan["merge_patch"]["metadata"]["annotations"][LAST])
    assert record == {"action": "scheduled", "after": objs.HOUR_LATER, "at": objs.NOW_TEXT, "reason": "maintenance window"}


# ---------------------------------------------------------------------------------------------
# rollout_id idempotence


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("kind", ["MachineDeployment", "KubeadmControlPlane"])
def test_rollout_id_idempotence(version, kind):
    obj = objs.machine_deployment(version) if kind == "MachineDeployment" else objs.kubeadm_control_plane(version)
    first = restart.plan_restart(obj, objs.NOW, recording=Recording(rollout_id="change-42", reason="CVE-2026-1", actor="alice"))
    assert first["action"] == "restarted"
    record = json.loads(first["merge_patch"]["metadata"]["annotations"][LAST])
    assert record == {"id": "change-42", "at": objs.NOW_TEXT, "action": "restarted", "reason": "CVE-2026-1", "actor": "alice"}
    patched = objs.apply_merge_patch(obj, first["merge_patch"])
    # a later run (even minutes later, even when the trigger is in the past) changes nothing
    later = objs.NOW + datetime.timedelta(minutes=30)
    again = restart.plan_restart(patched, later, recording=Recording(rollout_id="change-42"))
    assert again["action"] == "unchanged" and again["changed"] is False and again["merge_patch"] is None
    assert "change-42 was already applied" in again["message"]
    # a new id restarts again
    other = restart.plan_restart(patched, later, recording=Recording(rollout_id="change-43"))
    assert other["action"] == "restarted"
    assert objs.rollout_after_in_patch(version, other["merge_patch"]) == "2026-03-01T12:29:59Z"


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_repeated_rollout_id_switches_again_after_a_hand_edit(version):
    """A rollout_id only skips an object still on the template it switched to: after a colleague switched
    it back (or a rerun asks for another target), the same id switches again and says why."""
    md = objs.machine_deployment(version)
    first = restart.plan_restart(md, objs.NOW, infrastructure_ref="md-0-infra-v2", recording=Recording(rollout_id="hw-1"))
    switched = objs.apply_merge_patch(md, first["merge_patch"])
    later = objs.NOW + datetime.timedelta(minutes=5)
    # positive control: still on the target, the id is honoured
    assert restart.plan_restart(switched, later, infrastructure_ref="md-0-infra-v2",
                                recording=Recording(rollout_id="hw-1"))["action"] == "unchanged"
    edited = copy.deepcopy(switched)
    edited["spec"]["template"]["spec"]["infrastructureRef"]["name"] = "md-0-infra"
    again = restart.plan_restart(edited, later, infrastructure_ref="md-0-infra-v2", recording=Recording(rollout_id="hw-1"))
    assert again["action"] == "restarted" and again["changed"] is True
    assert again["merge_patch"]["spec"]["template"]["spec"]["infrastructureRef"]["name"] == "md-0-infra-v2"
    assert any("was changed since (infrastructure template is DockerMachineTemplate md-0-infra, not md-0-infra-v2)" in w
               for w in again["warnings"]), again["warnings"]
    other = restart.plan_restart(switched, later, infrastructure_ref="md-0-infra-v3", recording=Recording(rollout_id="hw-1"))
    assert other["action"] == "restarted"
    assert other["merge_patch"]["spec"]["template"]["spec"]["infrastructureRef"]["name"] == "md-0-infra-v3"


def test_rollout_id_match_wins_over_pause():
    md = objs.annotate(objs.machine_deployment(), LAST, '{"action":"restarted","at":"2026-03-01T11:00:00Z","id":"7"}')
    md["spec"]["paused"] = True
    assert restart.plan_restart(md, objs.NOW, recording=Recording(rollout_id=7))["action"] == "unchanged"


def test_record_replaces_previous_record_and_shows_in_diff():
    md = objs.annotate(objs.machine_deployment(), LAST, '{"action":"restarted","at":"2026-02-01T00:00:00Z","id":"old"}')
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(rollout_id="new"))
    assert plan["before"]["metadata"]["annotations"][LAST] == '{"action":"restarted","at":"2026-02-01T00:00:00Z","id":"old"}'
    assert "rollout.capi-rollout.dev/last: '{\"action\":\"restarted\",\"at\":\"2026-03-01T12:00:00Z\",\"id\":\"new\"}'" in plan["diff"]["after"]


# ---------------------------------------------------------------------------------------------
# template switch


def test_md_v1beta2_template_switch_only_changes_the_ref_name():
    md = objs.machine_deployment("v1beta2")
    plan = restart.plan_restart(md, objs.NOW, infrastructure_ref={"name": "md-0-infra-v2"}, recording=Recording(enabled=False))
    assert plan["action"] == "restarted"
    assert plan["merge_patch"] == {"spec": {"template": {"spec": {"infrastructureRef": {"name": "md-0-infra-v2"}}}}}
    assert plan["rollout_after"] is None  # the template change is the trigger
    assert plan["message"].endswith("infrastructure template switched to DockerMachineTemplate md-0-infra-v2, a rollout follows")
    patched = objs.apply_merge_patch(md, plan["merge_patch"])
    assert patched["spec"]["template"]["spec"]["infrastructureRef"] == {
        "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "md-0-infra-v2"}


@pytest.mark.parametrize("kind", ["md", "kcp"])
def test_a_switch_where_machines_may_be_updated_in_place_also_writes_the_trigger_unless_allowed(kind):
    obj = objs.machine_deployment("v1beta2") if kind == "md" else objs.kubeadm_control_plane("v1beta2")
    observed = Observed(in_place_possible=True)
    plan = restart.plan_restart(obj, objs.NOW, infrastructure_ref="infra-v2", observed=observed, **RECORD)
    assert [c["path"] for c in plan["changes"]][-1] == "spec.rollout.after"
    assert (plan["rollout_after"], plan["in_place"]) == (timeutil.format_time(restart.trigger_for_now(objs.NOW)), "replace")
    allowed = restart.plan_restart(obj, objs.NOW, infrastructure_ref="infra-v2", observed=observed, in_place="allow",
                                   **RECORD)
    assert "spec.rollout.after" not in [c["path"] for c in allowed["changes"]]
    assert (allowed["rollout_after"], allowed["in_place"]) == (None, "allow")
    # control: without in-place updates the switch alone triggers (the patch clusterctl users know)
    plain = restart.plan_restart(obj, objs.NOW, infrastructure_ref="infra-v2", observed=Observed(), **RECORD)
    assert "spec.rollout.after" not in [c["path"] for c in plain["changes"]] and plain["in_place"] is None


def test_md_v1beta1_template_switch_preserves_api_version_and_drops_stale_uid():
    md = objs.machine_deployment("v1beta1")
    md["spec"]["template"]["spec"]["infrastructureRef"]["uid"] = "uid-of-old-template"
    plan = restart.plan_restart(md, objs.NOW, infrastructure_ref="md-0-infra-v2", recording=Recording(enabled=False))
    patched = objs.apply_merge_patch(md, plan["merge_patch"])
    assert patched["spec"]["template"]["spec"]["infrastructureRef"] == {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "md-0-infra-v2",
        "namespace": "default"}
    assert plan["merge_patch"]["spec"]["template"]["spec"]["infrastructureRef"] == {"name": "md-0-infra-v2", "uid": None}


def test_v1beta1_switch_to_other_group_needs_api_version():
    md = objs.machine_deployment("v1beta1")
    target = {"name": "aws-v1", "kind": "AWSMachineTemplate", "api_group": "infrastructure.cluster.x-k8s.io.example"}
    with pytest.raises(RolloutError) as exc:
        restart.plan_restart(md, objs.NOW, infrastructure_ref=target)
    assert exc.value.reason == "invalid_infrastructure_ref" and "api_version" in exc.value.hint
    target["api_version"] = "infrastructure.cluster.x-k8s.io.example/v1beta2"
    plan = restart.plan_restart(md, objs.NOW, infrastructure_ref=target, recording=Recording(enabled=False))
    assert plan["merge_patch"]["spec"]["template"]["spec"]["infrastructureRef"] == {
        "apiVersion": "infrastructure.cluster.x-k8s.io.example/v1beta2", "kind": "AWSMachineTemplate", "name": "aws-v1"}


@pytest.mark.parametrize("version, path", [
    ("v1beta1", ("spec", "machineTemplate", "infrastructureRef")),
    ("v1beta2", ("spec", "machineTemplate", "spec", "infrastructureRef")),
])
def test_kcp_template_switch_paths(version, path):
    kcp = objs.kubeadm_control_plane(version)
    plan = restart.plan_restart(kcp, objs.NOW, infrastructure_ref={"name": "c1-cp-infra-v2"}, recording=Recording(enabled=False))
    patch = plan["merge_patch"]
    for key in path:
        patch = patch[key]
    assert patch == {"name": "c1-cp-infra-v2"}


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_same_infra_ref_still_restarts(version):
    md = objs.machine_deployment(version)
    plan = restart.plan_restart(md, objs.NOW, infrastructure_ref={"name": "md-0-infra-v1", "kind": "DockerMachineTemplate"},
                                recording=Recording(enabled=False))
    assert plan["action"] == "restarted"
    assert objs.rollout_after_in_patch(version, plan["merge_patch"]) == objs.TRIGGER_TEXT
    assert [c["path"] for c in plan["changes"]] == [_after_path(version)]


def test_template_switch_with_explicit_after_sets_both():
    plan = restart.plan_restart(objs.machine_deployment(), objs.NOW, infrastructure_ref="md-0-infra-v2", after="now",
                                recording=Recording(enabled=False))
    assert [c["path"] for c in plan["changes"]] == ["spec.template.spec.infrastructureRef.name", "spec.rollout.after"]


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_plain_restart_of_topology_owned_is_allowed(version):
    md = objs.label(objs.machine_deployment(version), "topology.cluster.x-k8s.io/owned", "")
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(enabled=False))
    assert plan["action"] == "restarted" and plan["warnings"] == []


def test_topology_owned_restart_warns_when_topology_sets_rollout_after():
    md = objs.label(objs.machine_deployment(), "topology.cluster.x-k8s.io/owned", "")
    md = objs.label(md, "topology.cluster.x-k8s.io/deployment-name", "md-0")
    topology = {"workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0",
                                                    "rollout": {"after": "2026-01-01T00:00:00Z"}}]}}
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(enabled=False),
                                observed=Observed(cluster=objs.cluster(topology=topology)))
    assert plan["action"] == "restarted"
    assert len(plan["warnings"]) == 1 and "rollout.after=2026-01-01T00:00:00Z" in plan["warnings"][0]
    kcp = objs.label(objs.kubeadm_control_plane(), "topology.cluster.x-k8s.io/owned", "")
    topology = {"controlPlane": {"rollout": {"after": "2026-01-01T00:00:00Z"}}}
    assert restart.plan_restart(kcp, objs.NOW, observed=Observed(cluster=objs.cluster(topology=topology)))["warnings"]


# ---------------------------------------------------------------------------------------------
# plan contents and diff


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_diff_shows_only_changed_fields(version):
    md = objs.set_rollout_after(objs.machine_deployment(version), objs.HOUR_EARLIER)
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(enabled=False))
    if version == "v1beta1":
        assert plan["diff"]["before"] == f'spec:\n  rolloutAfter: "{objs.HOUR_EARLIER}"\n'
        assert plan["diff"]["after"] == f'spec:\n  rolloutAfter: "{objs.TRIGGER_TEXT}"\n'
    else:
        assert plan["diff"]["before"] == f'spec:\n  rollout:\n    after: "{objs.HOUR_EARLIER}"\n'
        assert plan["diff"]["after"] == f'spec:\n  rollout:\n    after: "{objs.TRIGGER_TEXT}"\n'
    assert plan["diff"]["before_header"] == "machinedeployment/default/md-0 (before)"
    for text in (plan["diff"]["before"], plan["diff"]["after"]):
        assert "replicas" not in text and "template" not in text and "status" not in text


def test_plan_identity_fields():
    plan = restart.plan_restart(objs.machine_deployment("v1beta1"), objs.NOW)
    assert plan["ref"] == "machinedeployment/default/md-0"
    assert plan["kind"] == "MachineDeployment" and plan["name"] == "md-0" and plan["namespace"] == "default"
    assert plan["api_version"] == "v1beta1"
    assert plan["resource_version"] == "4711"
    assert plan["revision_before"] == 2
    assert plan["message"] == "machinedeployment/default/md-0: rollout triggered (spec.rolloutAfter=2026-03-01T11:59:59Z)"
    assert restart.plan_restart(objs.kubeadm_control_plane(), objs.NOW)["revision_before"] is None


def test_explicit_api_version_overrides_object():
    """The client may read with one version and patch through another endpoint."""
    md = objs.bare("MachineDeployment", "md-1", "v1beta1")
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(enabled=False),
                                observed=Observed(api_version="cluster.x-k8s.io/v1beta2"))
    assert plan["merge_patch"] == {"spec": {"rollout": {"after": objs.TRIGGER_TEXT}}}


def test_time_helpers_are_used_consistently():
    plan = restart.plan_restart(objs.bare("KubeadmControlPlane", "kcp"), objs.NOW)
    assert timeutil.parse_time(plan["rollout_after"]) == objs.NOW - datetime.timedelta(seconds=1)


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_past_after_older_than_the_current_machine_set_rolls_nothing(version):
    """CAPI keeps the MachineSet created at or after rolloutAfter (FindNewMachineSet): a past time older
    than it replaces no Machine, so nothing is written, recorded or reported as triggered."""
    md = objs.machine_deployment(version)
    newer = [objs.machine_set(version, suffix="bbbbb", created="2026-03-01T11:30:00Z")]
    plan = restart.plan_restart(md, objs.NOW, after=objs.HOUR_EARLIER, recording=Recording(rollout_id="r1"),
                                observed=Observed(machine_sets=newer))
    assert plan["action"] == "unchanged" and plan["changed"] is False and plan["merge_patch"] is None
    assert plan["history_revision"] is None
    assert "would replace no Machine: MachineSet md-0-bbbbb with the current template was created at " \
           "2026-03-01T11:30:00Z" in plan["message"]
    assert "rollout triggered" not in plan["message"]
    assert any("use after=now" in warning for warning in plan["warnings"])
    # a MachineSet created before the time: it rolls, exactly as without the MachineSets
    older = [objs.machine_set(version, suffix="aaaaa", created=objs.CREATED)]
    rolled = restart.plan_restart(md, objs.NOW, after=objs.HOUR_EARLIER, observed=Observed(machine_sets=older))
    assert rolled["action"] == "restarted" and rolled["message"].endswith(f"={objs.HOUR_EARLIER})")
    # a MachineSet with another template does not count (a template switch creates a new one anyway)
    other = [objs.machine_set(version, suffix="ccccc", created="2026-03-01T11:30:00Z", infra="md-0-infra-v0")]
    assert restart.plan_restart(md, objs.NOW, after=objs.HOUR_EARLIER,
                                observed=Observed(machine_sets=other))["action"] == "restarted"


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_past_after_older_than_every_control_plane_machine_rolls_nothing(version):
    kcp = objs.kubeadm_control_plane(version)
    name = kcp["metadata"]["name"]

    def machine(created):
        return {"kind": "Machine", "metadata": {"name": f"m-{created}", "namespace": "default", "creationTimestamp": created,
                                                "labels": {"cluster.x-k8s.io/control-plane-name": name}}}
    plan = restart.plan_restart(kcp, objs.NOW, after=objs.HOUR_EARLIER,
                                observed=Observed(machines=[machine("2026-03-01T11:10:00Z")]))
    assert plan["action"] == "unchanged" and "all 1 control plane Machines were created" in plan["message"]
    mixed = [machine("2026-03-01T11:10:00Z"), machine(objs.CREATED)]
    assert restart.plan_restart(kcp, objs.NOW, after=objs.HOUR_EARLIER,
                                observed=Observed(machines=mixed))["action"] == "restarted"


def _kept_by_capi(created, after):
    """Upstream's comparison at second precision, the same in every supported release: an MD keeps a MachineSet with
    the current template created at or after the trigger as the new one (FindNewMachineSet, cluster-api v1.10.10
    internal/controllers/machinedeployment/mdutil/util.go ``ms.CreationTimestamp.Sub(after) >= 0``; v1.12.3 there and
    v1.14.0 core/reconcilers/machinedeployment/mdutil/util.go, FindNewAndOldMachineSets), a KCP a Machine created at
    or after it (ShouldRolloutAfter rolls ``machine.CreationTimestamp.Before(after)``, v1.10.10 and v1.14.0
    util/collections/machine_filters.go)."""
    return (created - after).total_seconds() >= 0


def _at(seconds):
    return objs.NOW + datetime.timedelta(seconds=seconds)


@pytest.mark.parametrize("created_at", [-2, -1, 0, 5])
def test_a_restart_now_is_effective_from_two_seconds_after_the_newest_creation(created_at):
    """The trigger of a restart now is one second before the server's second (trigger_for_now); it replaces a
    MachineSet / Machine created at ``created`` only from effective_from on, and not one second earlier."""
    created = _at(created_at)
    md = objs.machine_deployment()
    older = objs.machine_set(suffix="aaaaa", created=objs.CREATED, infra="md-0-infra-v0")
    newest = objs.machine_set(suffix="bbbbb", created=timeutil.format_time(created))
    other_md = objs.machine_set(md_name="md-9", suffix="ccccc", created=timeutil.format_time(_at(60)))
    deleting = objs.machine_set(suffix="ddddd", created=timeutil.format_time(_at(60)))
    deleting["metadata"]["deletionTimestamp"] = timeutil.format_time(_at(61))
    start = restart.effective_from(md, [older, newest, other_md, deleting], None)
    assert start == created + datetime.timedelta(seconds=2)
    for sub_second in (0, 0.999):
        now = start + datetime.timedelta(seconds=sub_second)
        assert not _kept_by_capi(created, restart.trigger_for_now(now))
        assert _kept_by_capi(created, restart.trigger_for_now(now - datetime.timedelta(seconds=1)))

    kcp = objs.kubeadm_control_plane()
    machine = {"kind": "Machine", "metadata": {"name": "cp-1", "namespace": "default",
                                               "creationTimestamp": timeutil.format_time(created),
                                               "labels": {"cluster.x-k8s.io/control-plane-name": "c1-cp"}}}
    assert restart.effective_from(kcp, None, [machine]) == start
    assert restart.effective_from(kcp, None, []) is None and restart.effective_from(md, None, None) is None


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_a_restart_now_that_would_keep_the_newest_machine_set_writes_nothing(version):
    """A restart now within 2 s of the creation of the MachineSet with the current template (the flow waits that out,
    flows.restart._settle, up to a bound): its trigger would keep that MachineSet, so nothing is written or recorded
    and it does not say restarted; once the server's clock is 2 s past the creation it restarts."""
    md = objs.machine_deployment(version)
    fresh = [objs.machine_set(version, suffix="bbbbb", created=timeutil.format_time(_at(-1)))]
    plan = restart.plan_restart(md, objs.NOW, recording=Recording(rollout_id="r1"), observed=Observed(machine_sets=fresh))
    assert (plan["action"], plan["changed"], plan["merge_patch"], plan["history_revision"]) == \
        ("unchanged", False, None, None)
    assert "would replace no Machine: MachineSet md-0-bbbbb with the current template was created at " \
           "2026-03-01T11:59:59Z, not before 2026-03-01T11:59:59Z" in plan["message"]
    assert any("re-run the task" in warning for warning in plan["warnings"])
    later = restart.plan_restart(md, _at(1), recording=Recording(rollout_id="r1"), observed=Observed(machine_sets=fresh))
    assert (later["action"], later["rollout_after"], later["trigger_now"]) == ("restarted", "2026-03-01T12:00:00Z", True)


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_a_restart_now_of_control_plane_machines_created_in_its_second_writes_nothing(version):
    kcp = objs.kubeadm_control_plane(version)
    fresh = {"kind": "Machine", "metadata": {"name": "cp-1", "namespace": "default",
                                             "creationTimestamp": timeutil.format_time(_at(-1)),
                                             "labels": {"cluster.x-k8s.io/control-plane-name": "c1-cp"}}}
    plan = restart.plan_restart(kcp, objs.NOW, observed=Observed(machines=[fresh]))
    assert plan["action"] == "unchanged" and "all 1 control plane Machines were created" in plan["message"]
    assert restart.plan_restart(kcp, _at(1), observed=Observed(machines=[fresh]))["action"] == "restarted"


def test_only_a_trigger_of_a_restart_now_asks_to_be_settled():
    md = objs.machine_deployment()
    assert restart.plan_restart(md, objs.NOW)["trigger_now"] is True
    # already written in this second (another restart a moment before): unchanged, yet it may replace nothing
    same = objs.set_rollout_after(copy.deepcopy(md), timeutil.format_time(restart.trigger_for_now(objs.NOW)))
    assert (restart.plan_restart(same, objs.NOW)["action"], restart.plan_restart(same, objs.NOW)["trigger_now"]) == \
        ("unchanged", True)
    assert restart.plan_restart(same, objs.NOW, recording=Recording(rollout_id="r1"))["trigger_now"] is True
    assert restart.plan_restart(md, objs.NOW, after=objs.HOUR_EARLIER)["trigger_now"] is False
    assert restart.plan_restart(md, objs.NOW, after=objs.HOUR_LATER)["trigger_now"] is False
    # a switch alone triggers the rollout by its new template
    assert restart.plan_restart(md, objs.NOW, infrastructure_ref="md-0-infra-v2")["trigger_now"] is False


def _topology_md():
    md = objs.label(objs.machine_deployment(), "topology.cluster.x-k8s.io/owned", "")
    return objs.label(md, "topology.cluster.x-k8s.io/deployment-name", "md-0")


TOPOLOGY = {"workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0"}]}}


def test_topology_restart_from_v1_13_writes_the_cluster_and_records_it_on_the_md():
    md = _topology_md()
    plan = restart.plan_restart(md, objs.NOW, observed=Observed(cluster=objs.cluster(topology=TOPOLOGY)),
                                topology_rollout=True)
    assert plan["changed"] is True and plan["action"] == "restarted"
    owner = plan["owner"]
    written = objs.apply_json_patch(objs.cluster(topology=TOPOLOGY), owner["patch"])
    assert written["spec"]["topology"]["workers"]["machineDeployments"][0]["rollout"]["after"] == plan["rollout_after"]
    # the MD's own patch only records: its rollout.after and template are neither written nor tested (the topology
    # copies the one and may rotate the other right after the Cluster write)
    assert all(op["path"].startswith("/metadata/") or op["path"] == "/spec/paused" for op in plan["patch"])
    record = json.loads(objs.apply_json_patch(md, plan["patch"])["metadata"]["annotations"][
        "rollout.capi-rollout.dev/history"])
    assert record[-1]["topology"].endswith("machineDeployments[md-0].rollout.after=" + plan["rollout_after"])
    assert "cluster/default/c1 spec.topology.workers.machineDeployments[md-0].rollout.after" in plan["message"]
    # without recording the Cluster write alone is the change
    bare_plan = restart.plan_restart(md, objs.NOW, recording=Recording(enabled=False), topology_rollout=True,
                                     observed=Observed(cluster=objs.cluster(topology=TOPOLOGY)))
    assert bare_plan["changed"] is True and bare_plan["patch"] is None and bare_plan["owner"]["patch"]


def test_topology_restart_before_v1_13_writes_the_md_and_says_why():
    plan = restart.plan_restart(_topology_md(), objs.NOW, recording=Recording(enabled=False),
                                observed=Observed(cluster=objs.cluster(topology=TOPOLOGY)))
    assert "owner" not in plan and objs.rollout_after_in_patch("v1beta2", plan["merge_patch"]) == plan["rollout_after"]
    assert "before v1.13" in plan["message"] and "does not own" in plan["message"]


def test_topology_restart_already_in_the_cluster_is_unchanged():
    topology = {"workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0",
                                                    "rollout": {"after": "2099-01-01T00:00:00Z"}}]}}
    plan = restart.plan_restart(_topology_md(), objs.NOW, after="2099-01-01T00:00:00Z", topology_rollout=True,
                                observed=Observed(cluster=objs.cluster(topology=topology)))
    assert plan["changed"] is False and "is already 2099-01-01T00:00:00Z" in plan["message"]


def test_topology_switch_writes_the_override_and_records_it():
    from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_topology import CLASS
    md = _topology_md()
    cluster = objs.cluster(topology=TOPOLOGY)
    plan = restart.plan_topology_switch(md, objs.NOW, {"customImage": "img:2"}, CLASS, observed=Observed(cluster=cluster),
                                        recording=Recording(rollout_id="hw-1"))
    assert plan["changed"] is True and plan["owner"]["patch"]
    written = objs.apply_json_patch(cluster, plan["owner"]["patch"])
    assert written["spec"]["topology"]["workers"]["machineDeployments"][0]["variables"]["overrides"] == [
        {"name": "workerImage", "value": "img:2"}]
    assert "variable workerImage" in plan["message"]
    # a wait holds it to the change by values: the generated template's name is not known yet
    assert plan["hold"] == {"overrides": {"workerImage": "img:2"}, "template": {"customImage": "img:2"}}
    assert all(op["path"].startswith("/metadata/") or op["path"] == "/spec/paused" for op in plan["patch"])
    recorded = objs.apply_json_patch(md, plan["patch"])
    record = json.loads(recorded["metadata"]["annotations"]["rollout.capi-rollout.dev/history"])
    assert "workerImage=img:2" in record[-1]["topology"]
    # once the topology holds it, nothing more
    again = restart.plan_topology_switch(recorded, objs.NOW, {"customImage": "img:2"}, CLASS,
                                         observed=Observed(cluster=written), recording=Recording(rollout_id="hw-1"))
    assert again["changed"] is False and "already holds workerImage=img:2" in again["message"]
    # no template read (no --diff): no generated diff; with it, the field the variable sets, before and after
    assert "generated" not in plan
    current = {"kind": "DockerMachineTemplate", "metadata": {"name": "md-0-infra-abcde", "namespace": "default"},
               "spec": {"template": {"spec": {"customImage": "img:1"}}}}
    shown = restart.plan_topology_switch(md, objs.NOW, {"customImage": "img:2"}, CLASS, observed=Observed(cluster=cluster),
                                         recording=Recording(rollout_id="hw-1"), template=current)["generated"]
    assert ('customImage: "img:1"' in shown["before"] and 'customImage: "img:2"' in shown["after"]), shown


def _switch_in_place(in_place="replace", topology_rollout=False, possible=True):
    from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_topology import CLASS
    return restart.plan_topology_switch(_topology_md(), objs.NOW, {"customImage": "img:2"}, CLASS, in_place=in_place,
                                        observed=Observed(cluster=objs.cluster(topology=TOPOLOGY), in_place_possible=possible),
                                        recording=Recording(rollout_id="hw-1"), topology_rollout=topology_rollout)


def test_topology_switch_where_in_place_is_possible_writes_the_trigger_in_the_cluster_write_from_v1_13():
    asked = []
    plan = _switch_in_place(topology_rollout=lambda: asked.append(1) or True)
    trigger = timeutil.format_time(restart.trigger_for_now(objs.NOW))  # a restart now's, settled by the flow
    assert plan["in_place"] == "replace" and plan["rollout_after"] == trigger and plan["trigger_now"] and asked == [1]
    entry = objs.apply_json_patch(objs.cluster(topology=TOPOLOGY), plan["owner"]["patch"])[
        "spec"]["topology"]["workers"]["machineDeployments"][0]
    # one write: the topology copies the trigger into the MD together with the new template
    assert entry["variables"]["overrides"] == [{"name": "workerImage", "value": "img:2"}]
    assert entry["rollout"]["after"] == trigger
    assert f"rollout.after={trigger}" in plan["message"]
    assert objs.rollout_after_in_patch("v1beta2", plan["merge_patch"]) is None


def test_topology_switch_where_in_place_is_possible_writes_the_trigger_on_the_md_before_v1_13():
    plan = _switch_in_place()
    assert objs.rollout_after_in_patch("v1beta2", plan["merge_patch"]) == plan["rollout_after"] == \
        timeutil.format_time(restart.trigger_for_now(objs.NOW))
    assert "rollout" not in objs.apply_json_patch(objs.cluster(topology=TOPOLOGY), plan["owner"]["patch"])[
        "spec"]["topology"]["workers"]["machineDeployments"][0]
    assert "before v1.13" in plan["message"] and "does not own" in plan["message"]


def test_topology_switch_with_in_place_allowed_or_impossible_writes_no_trigger():
    asked = []
    for plan, in_place in ((_switch_in_place("allow", topology_rollout=lambda: asked.append(1)), "allow"),
                           (_switch_in_place(possible=lambda: False), None)):
        assert plan["in_place"] == in_place and "rollout_after" not in plan, plan
        assert objs.rollout_after_in_patch("v1beta2", plan["merge_patch"]) is None
        assert "rollout" not in objs.apply_json_patch(objs.cluster(topology=TOPOLOGY), plan["owner"]["patch"])[
            "spec"]["topology"]["workers"]["machineDeployments"][0]
    assert asked == []
    record = json.loads(objs.apply_json_patch(_topology_md(), _switch_in_place("allow")["patch"])["metadata"][
        "annotations"]["rollout.capi-rollout.dev/history"])
    assert record[-1]["in_place"] == "allow"


def test_machine_changes_are_read_from_the_machines_created_after_the_switch_or_kept():
    def machine(name, created, owner="md-0", deleting=False):
        meta = {"name": name, "creationTimestamp": created, "labels": {"cluster.x-k8s.io/deployment-name": owner}}
        if deleting:
            meta["deletionTimestamp"] = objs.NOW_TEXT
        return {"metadata": meta}
    machines = [machine("kept", "2026-03-01T11:00:00Z"), machine("new", objs.NOW_TEXT),
                machine("newer", "2026-03-01T12:05:00Z"), machine("other", "2026-03-01T11:00:00Z", owner="md-1"),
                machine("going", "2026-03-01T11:00:00Z", deleting=True)]
    # the switch was planned at NOW (sub-second part ignored: creation times have whole seconds)
    at = objs.NOW + datetime.timedelta(milliseconds=600)
    assert restart.machine_changes(machines, "MachineDeployment", "md-0", at) == {"replaced": 2, "updated_in_place": 1}
    assert restart.machine_changes(machines, "KubeadmControlPlane", "md-0", at) == {"replaced": 0, "updated_in_place": 0}


# drain_timeout: the pool's node drain timeout set with the switch, recorded so it can be put back

@pytest.mark.parametrize("version, path, value", [
    ("v1beta1", "spec.template.spec.nodeDrainTimeout", "900s"),
    ("v1beta2", "spec.template.spec.deletion.nodeDrainTimeoutSeconds", 900)])
def test_a_switch_with_drain_timeout_sets_it_in_the_same_patch_and_records_the_value_before(version, path, value):
    md = objs.machine_deployment(version)
    plan = restart.plan_restart(md, objs.NOW, infrastructure_ref="md-0-infra-v2", drain_timeout=900,
                                recording=Recording(rollout_id="hw-1"))
    changed = {c["path"]: c for c in plan["changes"]}
    assert changed[path]["after"] == value and "spec.template.spec.infrastructureRef.name" in changed
    assert json.loads(objs.apply_json_patch(md, plan["patch"])["metadata"]["annotations"][
        "rollout.capi-rollout.dev/drain-timeout"]) == {"id": "hw-1", "before": None}
    # control: without drain_timeout the field and the record are not written
    plain = restart.plan_restart(md, objs.NOW, infrastructure_ref="md-0-infra-v2", recording=Recording(rollout_id="hw-1"))
    assert path not in {c["path"] for c in plain["changes"]}
    assert "rollout.capi-rollout.dev/drain-timeout" not in json.dumps(plain["patch"])


def test_drain_timeout_is_not_written_where_a_cluster_topology_owns_it_or_on_a_control_plane():
    md = objs.label(objs.machine_deployment(), "topology.cluster.x-k8s.io/owned", "")
    topology = {"workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0"}]}}
    plan = restart.plan_restart(md, objs.NOW, drain_timeout=900, recording=Recording(enabled=False),
                                observed=Observed(cluster=objs.cluster(topology=topology)))
    assert "nodeDrainTimeoutSeconds" not in json.dumps(plan["patch"])
    assert any("drain_timeout=900s not set" in w and "Cluster topology" in w for w in plan["warnings"])
    kcp = restart.plan_restart(objs.kubeadm_control_plane(), objs.NOW, infrastructure_ref="c1-cp-infra-v2", drain_timeout=900,
                               recording=Recording(enabled=False))
    assert "rain" not in json.dumps(kcp["patch"]) and kcp["warnings"] == []


def test_a_repeated_rollout_id_writes_no_drain_timeout_either():
    md = objs.machine_deployment()
    first = restart.plan_restart(md, objs.NOW, infrastructure_ref="md-0-infra-v2", drain_timeout=900,
                                 recording=Recording(rollout_id="hw-1"))
    again = restart.plan_restart(objs.apply_json_patch(md, first["patch"]), objs.NOW, infrastructure_ref="md-0-infra-v2",
                                 drain_timeout=600, recording=Recording(rollout_id="hw-1"))
    assert again["action"] == "unchanged" and again["patch"] is None
