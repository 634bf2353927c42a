# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import pause
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Observed
from ansible_collections.capi.rollout.plugins.module_utils.core.record import Recording
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

PAUSED = "cluster.x-k8s.io/paused"
POINTER = "/metadata/annotations/cluster.x-k8s.io~1paused"


def _md(version, paused=None):
    obj = objs.bare("MachineDeployment", "md-1", version)
    if paused is not None:
        obj["spec"] = {"paused": paused}
    return obj


def _kcp(version, annotated=False):
    obj = objs.bare("KubeadmControlPlane", "kcp", version)
    return objs.annotate(obj, PAUSED, "true") if annotated else obj


# clusterctl Test_ObjectPauser / Test_ObjectResumer; "already in state" is unchanged here, not an error.
CASES = [
    ("pause md", _md, True, "paused", {"spec": {"paused": True}}, "json"),
    ("pause md already paused", lambda v: _md(v, True), True, "unchanged", None, "json"),
    ("pause kcp", _kcp, True, "paused", {"metadata": {"annotations": {PAUSED: "true"}}}, "json"),
    ("pause kcp already annotated", lambda v: _kcp(v, True), True, "unchanged", None, "json"),
    ("resume md", lambda v: _md(v, True), False, "resumed", {"spec": {"paused": False}}, "json"),
    ("resume md paused false", lambda v: _md(v, False), False, "unchanged", None, "json"),
    ("resume md no field", _md, False, "unchanged", None, "json"),
    ("resume kcp", lambda v: _kcp(v, True), False, "resumed", {"metadata": {"annotations": {PAUSED: None}}}, "json"),
    ("resume kcp not annotated", _kcp, False, "unchanged", None, "json"),
]


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("name, build, paused, action, patch, patch_type", CASES, ids=[c[0] for c in CASES])
def test_pauser_resumer(version, name, build, paused, action, patch, patch_type):
    obj = build(version)
    original = copy.deepcopy(obj)
    plan = pause.plan_pause(obj, paused=paused)
    assert plan["action"] == action
    assert plan["changed"] is (action != "unchanged")
    assert plan["merge_patch"] == patch
    assert plan["patch_type"] == "json"
    assert obj == original
    if patch is None:
        assert plan["patch"] is None
        return
    # the JSON patch sent does what the merge patch says, and its tests hold on the object read
    applied = objs.apply_json_patch(obj, plan["patch"])
    assert applied == objs.apply_merge_patch(obj, patch)
    if obj["kind"] == "MachineDeployment":
        assert applied["spec"]["paused"] is paused
    else:
        assert (PAUSED in (applied["metadata"].get("annotations") or {})) is paused
    # idempotent: planning again on the result changes nothing
    assert pause.plan_pause(applied, paused=paused)["action"] == "unchanged"


def test_unchanged_messages():
    assert pause.plan_pause(_md("v1beta2", True))["message"] == \
        "machinedeployment/default/md-1: MachineDeployment is already paused (spec.paused)"
    assert pause.plan_pause(_kcp("v1beta2"), paused=False)["message"] == \
        "kubeadmcontrolplane/default/kcp: KubeadmControlPlane is not paused (annotation cluster.x-k8s.io/paused)"


def test_kcp_annotation_with_empty_value_counts_as_paused():
    kcp = objs.annotate(_kcp("v1beta2"), PAUSED, "")
    assert pause.plan_pause(kcp)["action"] == "unchanged"
    plan = pause.plan_pause(kcp, paused=False)
    assert plan["patch"] == [{"op": "test", "path": POINTER, "value": ""}, {"op": "remove", "path": POINTER}]
    assert plan["changes"] == [{"path": "metadata.annotations[cluster.x-k8s.io/paused]", "before": "", "after": None}]


def test_diff_of_resume_kcp():
    plan = pause.plan_pause(_kcp("v1beta2", True), paused=False)
    assert plan["diff"]["before"] == 'metadata:\n  annotations:\n    cluster.x-k8s.io/paused: "true"\n'
    assert plan["diff"]["after"] == ""


def test_md_resume_warns_about_annotation_and_cluster():
    md = objs.annotate(_md("v1beta2", True), PAUSED, "true")
    plan = pause.plan_pause(md, paused=False, observed=Observed(cluster=objs.cluster(paused=True)))
    assert plan["action"] == "resumed"
    assert len(plan["warnings"]) == 2
    assert "annotation cluster.x-k8s.io/paused is still set" in plan["warnings"][0]
    assert "Cluster c1 has spec.paused true" in plan["warnings"][1]


@pytest.mark.parametrize("build, paused", [(lambda: _md("v1beta2"), True), (lambda: _kcp("v1beta1"), True),
                                           (lambda: _md("v1beta1", True), False)])
def test_record_in_merge_patch(build, paused):
    plan = pause.plan_pause(build(), paused=paused, now=objs.NOW, recording=Recording(rollout_id="w1"))
    record = json.loads(plan["merge_patch"]["metadata"]["annotations"]["rollout.capi-rollout.dev/last"])
    assert record == {"id": "w1", "at": objs.NOW_TEXT, "action": "paused" if paused else "resumed"}


def test_record_in_json_patch_resume_kcp():
    kcp = _kcp("v1beta2", True)
    plan = pause.plan_pause(kcp, paused=False, now=objs.NOW, recording=Recording(actor="bob"))
    assert plan["patch"][:2] == [{"op": "test", "path": POINTER, "value": "true"},
                                 {"op": "test", "path": "/metadata/annotations/rollout.capi-rollout.dev~1last", "value": None}]
    assert plan["patch"][2] == {"op": "remove", "path": POINTER}
    assert plan["patch"][3]["op"] == "add"
    assert plan["patch"][3]["path"] == "/metadata/annotations/rollout.capi-rollout.dev~1last"
    applied = objs.apply_json_patch(kcp, plan["patch"])
    assert PAUSED not in applied["metadata"]["annotations"]
    assert json.loads(applied["metadata"]["annotations"]["rollout.capi-rollout.dev/last"])["actor"] == "bob"


def test_pause_rejects_other_kinds():
    with pytest.raises(RolloutError) as exc:
        pause.plan_pause(objs.machine_set())
    assert exc.value.reason == "invalid_kind"
