# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes version skew rules for worker Machines against their control plane (https://kubernetes.io/releases/version-skew-policy/;
cluster-api #4939, #6858).

The rules CAPI's MachineSet preflight checks enforce (and cluster-api #8408 asked undo to check):

- ``newer_than_control_plane``: a worker minor may not be newer than the control plane minor
  (KubernetesVersionSkew);
- ``too_old``: a worker may be at most 3 minors older than a control plane on v1.28 or newer, 2
  minors before v1.28 (the kubelet skew policy; CAPI PR #9222);
- ``kubeadm_minor_mismatch``: with kubeadm bootstrap the worker must be on the control plane minor
  (KubeadmVersionSkew).

A rollout that breaks them stalls halfway: the new MachineSet stays at ScalingUp "preflight check
failed". The control plane version comes from the control plane object: ``spec.version`` (what it
is or will be on) and ``status.version`` (its oldest Machine) when they differ during an upgrade;
"newer" is checked against the older of the two, "too old" against the newer, kubeadm against
``spec.version`` (what CAPI's preflight check compares).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.capi.rollout.plugins.module_utils.core import paths

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")

NEWER_THAN_CONTROL_PLANE = "newer_than_control_plane"
TOO_OLD = "too_old"
KUBEADM_MINOR_MISMATCH = "kubeadm_minor_mismatch"

RULES = {
    NEWER_THAN_CONTROL_PLANE: "a worker minor may not be newer than the control plane minor",
    TOO_OLD: "a worker may be at most 3 minors older than a control plane on v1.28 or newer, 2 minors before v1.28",
    KUBEADM_MINOR_MISMATCH: "kubeadm-bootstrapped workers must run the control plane minor (CAPI KubeadmVersionSkew check)",
}


def minor_of(version):
    """(major, minor) of ``v1.30.2`` / ``1.30``; None when unparsable."""
    match = _VERSION.match(str(version or "").strip())
    if not match:
        return None
    return int(match.group(1)), int(match.group(2))


def allowed_minors_behind(control_plane_minor):
    """How many minors a worker may lag a control plane on ``control_plane_minor`` ((1, 28) -> 3)."""
    return 3 if control_plane_minor >= (1, 28) else 2


def control_plane_versions(control_plane=None, control_plane_version=None):
    """{spec, status} versions of a control plane object (KCP or any provider with spec.version),
    or of a plain version string; values may be None."""
    if control_plane is not None:
        return {"spec": paths.get_path(control_plane, "spec.version"),
                "status": paths.get_path(control_plane, "status.version")}
    return {"spec": control_plane_version, "status": None}


def _cp_text(spec_version, status_version):
    if status_version and status_version != spec_version:
        return f"{spec_version} (spec.version; status.version {status_version})"
    return f"{spec_version}"


def check(worker_version, control_plane_spec_version, control_plane_status_version=None, kubeadm=False):
    """Every rule ``worker_version`` breaks: [{rule, message}] ([] when allowed or unknown).

    Messages show both versions and the rule, e.g. "version v1.31.0 is a newer minor than the
    control plane v1.30.2 (rule: a worker minor may not be newer than the control plane minor)".
    """
    worker = minor_of(worker_version)
    spec_minor = minor_of(control_plane_spec_version)
    status_minor = minor_of(control_plane_status_version)
    cp_minors = [m for m in (spec_minor, status_minor) if m is not None]
    if worker is None or not cp_minors:
        return []
    if spec_minor is not None:
        cp_text = _cp_text(control_plane_spec_version, control_plane_status_version if status_minor else None)
    else:
        cp_text = _cp_text(control_plane_status_version, None)
    oldest, newest = min(cp_minors), max(cp_minors)
    problems = []
    if worker > oldest:
        problems.append({"rule": NEWER_THAN_CONTROL_PLANE,
                         "message": f"version {worker_version} is a newer minor than the control plane {cp_text} "
                                    f"(rule: {RULES[NEWER_THAN_CONTROL_PLANE]})"})
    else:
        allowed = allowed_minors_behind(newest)
        behind = newest[1] - worker[1] if worker[0] == newest[0] else None
        if behind is None or behind > allowed:
            distance = f"{behind} minors" if behind is not None else "a major version"
            problems.append({"rule": TOO_OLD,
                             "message": f"version {worker_version} is {distance} older than the control plane {cp_text}, "
                                        f"at most {allowed} allowed (rule: {RULES[TOO_OLD]})"})
    kubeadm_minor = spec_minor or status_minor
    if kubeadm and worker != kubeadm_minor and not (problems and problems[0]["rule"] == NEWER_THAN_CONTROL_PLANE):
        problems.append({"rule": KUBEADM_MINOR_MISMATCH,
                         "message": f"version {worker_version} is not on the control plane minor "
                                    f"v{kubeadm_minor[0]}.{kubeadm_minor[1]} ({cp_text}) "
                                    f"(rule: {RULES[KUBEADM_MINOR_MISMATCH]})"})
    return problems


def skew_problems(worker_version, control_plane_version, kubeadm=False):
    """Sentences describing every rule ``worker_version`` breaks; [] when it is allowed or unknown."""
    return [problem["message"] for problem in check(worker_version, control_plane_version, kubeadm=kubeadm)]
