# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes version skew rules for worker Machines against their control plane (reference §4.5.9).

Same rules as CAPI's MachineSet preflight checks: a worker minor may not be newer than the control
plane minor and may be at most 2 minors older (3 when the control plane is >= v1.28); kubeadm
workers must be on the control plane's minor (KubeadmVersionSkew). A rollback that breaks them
would stall with MachineSet ScalingUp "preflight check failed".
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def minor_of(version):
    """(major, minor) of ``v1.30.2`` / ``1.30``; None when unparsable."""
    match = _VERSION.match(str(version or "").strip())
    if not match:
        return None
    return int(match.group(1)), int(match.group(2))


def skew_problems(worker_version, control_plane_version, kubeadm=False):
    """Sentences describing every rule ``worker_version`` breaks; [] when it is allowed or unknown."""
    worker, control_plane = minor_of(worker_version), minor_of(control_plane_version)
    if worker is None or control_plane is None:
        return []
    problems = []
    if worker > control_plane:
        problems.append(f"worker version {worker_version} is newer than the control plane version {control_plane_version}")
    else:
        allowed = 3 if control_plane >= (1, 28) else 2
        if worker[0] == control_plane[0] and control_plane[1] - worker[1] > allowed:
            problems.append(f"worker version {worker_version} is more than {allowed} minor versions older than the control plane "
                            f"version {control_plane_version}")
    if kubeadm and worker != control_plane and worker <= control_plane:
        problems.append(f"kubeadm workers must run the control plane minor version ({control_plane_version}), "
                        f"not {worker_version}")
    return problems
