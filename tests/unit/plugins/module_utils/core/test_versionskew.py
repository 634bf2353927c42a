# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import versionskew
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs


@pytest.mark.parametrize("worker, spec, status, kubeadm, rules", [
    ("v1.30.2", "v1.30.0", None, True, []),
    ("v1.31.0", "v1.30.0", None, True, ["newer_than_control_plane"]),   # kubeadm mismatch not repeated
    ("v1.27.0", "v1.30.0", None, False, []),
    ("v1.26.0", "v1.30.0", None, False, ["too_old"]),
    ("v1.25.0", "v1.28.0", None, False, []),
    ("v1.24.0", "v1.28.0", None, False, ["too_old"]),
    ("v1.25.0", "v1.27.0", None, False, []),
    ("v1.24.0", "v1.27.0", None, False, ["too_old"]),
    ("v2.0.0", "v1.30.0", None, False, ["newer_than_control_plane"]),
    ("v0.30.0", "v1.30.0", None, False, ["too_old"]),
    ("v1.30.0", "v1.31.0", "v1.30.5", True, ["kubeadm_minor_mismatch"]),
    ("v1.30.0", None, "v1.30.5", True, []),
    ("v1.30.0", "garbage", "v1.31.0", True, ["kubeadm_minor_mismatch"]),
    ("garbage", "v1.30.0", None, True, []),
    ("v1.30.0", None, None, True, []),
])
def test_check_rules(worker, spec, status, kubeadm, rules):
    assert [p["rule"] for p in versionskew.check(worker, spec, status, kubeadm=kubeadm)] == rules


def test_messages_name_both_versions_and_the_rule():
    [newer] = versionskew.check("v1.31.0", "v1.30.2")
    assert newer["message"] == ("version v1.31.0 is a newer minor than the control plane v1.30.2 "
                                "(rule: a worker minor may not be newer than the control plane minor)")
    [mismatch] = versionskew.check("v1.30.0", "v1.31.0", "v1.30.5", kubeadm=True)
    assert mismatch["message"] == ("version v1.30.0 is not on the control plane minor v1.31 (v1.31.0 (spec.version; status.version "
                                   "v1.30.5)) (rule: kubeadm-bootstrapped workers must run the control plane minor "
                                   "(CAPI KubeadmVersionSkew check))")
    [major] = versionskew.check("v0.9.0", "v1.30.0")
    assert "is a major version older" in major["message"]


def test_control_plane_versions():
    kcp = objs.kubeadm_control_plane(k8s_version="v1.31.0")
    kcp["status"]["version"] = "v1.30.2"
    assert versionskew.control_plane_versions(kcp) == {"spec": "v1.31.0", "status": "v1.30.2"}
    assert versionskew.control_plane_versions(None, "v1.29.0") == {"spec": "v1.29.0", "status": None}
    assert versionskew.control_plane_versions() == {"spec": None, "status": None}


@pytest.mark.parametrize("minor, allowed", [((1, 27), 2), ((1, 28), 3), ((1, 35), 3), ((1, 20), 2)])
def test_allowed_minors_behind(minor, allowed):
    assert versionskew.allowed_minors_behind(minor) == allowed
