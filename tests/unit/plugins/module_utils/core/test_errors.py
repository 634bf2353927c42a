# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref, ref_of


@pytest.mark.parametrize("kind, namespace, name, expected", [
    ("MachineDeployment", "default", "md-1", "machinedeployment/default/md-1"),
    ("KubeadmControlPlane", "team-a", "kcp", "kubeadmcontrolplane/team-a/kcp"),
    ("MachineDeployment", None, "md-1", "machinedeployment/md-1"),
    (None, "ns", "x", "object/ns/x"),
])
def test_ref(kind, namespace, name, expected):
    assert ref(kind, namespace, name) == expected


def test_ref_of_object():
    obj = {"kind": "MachineDeployment", "metadata": {"name": "md-1", "namespace": "default"}}
    assert ref_of(obj) == "machinedeployment/default/md-1"


@pytest.mark.parametrize("msg, ref_, hint, expected", [
    ("MachineDeployment is paused", "machinedeployment/default/md-1", "run capi_rollout_pause with paused=false first",
     "machinedeployment/default/md-1: MachineDeployment is paused. run capi_rollout_pause with paused=false first."),
    ("already ends.", "kcp/ns/x", "hint ends!", "kcp/ns/x: already ends. hint ends!"),
    ("no ref", None, None, "no ref."),
    ("no hint", "a/b/c", None, "a/b/c: no hint."),
])
def test_message_format(msg, ref_, hint, expected):
    err = RolloutError(msg, ref=ref_, hint=hint)
    assert str(err) == expected
    assert err.message == expected


def test_to_dict_carries_parts():
    err = RolloutError("boom", ref="machinedeployment/ns/md", hint="do x", reason="paused")
    assert err.to_dict() == {"msg": "machinedeployment/ns/md: boom. do x.", "ref": "machinedeployment/ns/md",
                             "hint": "do x", "reason": "paused"}
    assert isinstance(err, Exception)
