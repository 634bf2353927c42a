# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan pause / resume of an MD or KCP, like clusterctl's ObjectPauser / ObjectResumer.

MachineDeployment: spec.paused true/false (pauses rollouts only; scaling continues).
KubeadmControlPlane: no spec field; add or remove the cluster.x-k8s.io/paused annotation. Like every
write, a JSON patch whose ``test`` operations guard the paused state and the last-rollout record as read
(core.patch). Unlike clusterctl, being in the requested state already is not an error: the plan is
"unchanged" (idempotent for Ansible).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import plan as plans
from ansible_collections.capi.rollout.plugins.module_utils.core import record as records
from ansible_collections.capi.rollout.plugins.module_utils.core.diff import ChangeSet

PAUSED = "paused"
RESUMED = "resumed"


def _warnings(obj, kind, paused, cluster):
    out = []
    annotations = paths.get_path(obj, "metadata.annotations", {}) or {}
    if kind == apiversion.MACHINE_DEPLOYMENT and not paused and keys.PAUSED_ANNOTATION in annotations:
        out.append(f"the annotation {keys.PAUSED_ANNOTATION} is still set: the MachineDeployment stays unreconciled until it is removed")
    if not paused and cluster is not None and paths.get_path(cluster, "spec.paused") is True:
        out.append(f"Cluster {paths.get_path(cluster, 'metadata.name')} has spec.paused true: nothing is reconciled until it is unpaused")
    return out


def plan_pause(obj, paused=True, now=None, recording=None, observed=None):
    """Plan to pause (``paused=True``) or resume (``paused=False``) an MD or KCP.

    ``recording`` (core.record.Recording; default: none, so the changes equal clusterctl's): when given and
    enabled (needs ``now``), the last-rollout annotation is written too. ``observed`` (core.plan.Observed):
    ``api_version`` the object was read through and its ``cluster`` (warnings on resume).

    Returns a plan (core.plan.new_plan) with action paused | resumed | unchanged; KCP resume is a remove
    operation.
    """
    observed = observed or plans.Observed()
    kind = apiversion.rollout_kind(obj.get("kind"))
    version = apiversion.version_of(obj, observed.api_version)
    action = PAUSED if paused else RESUMED
    warnings = _warnings(obj, kind, paused, observed.cluster)
    changes = ChangeSet()
    if kind == apiversion.MACHINE_DEPLOYMENT:
        current = paths.get_path(obj, "spec.paused") is True
        if current != paused:
            changes.add("spec.paused", paths.get_path(obj, "spec.paused"), bool(paused))
        where = "spec.paused"
    else:
        path = ("metadata", "annotations", keys.PAUSED_ANNOTATION)
        current = paths.has_path(obj, path)
        where = f"annotation {keys.PAUSED_ANNOTATION}"
        if current != paused:
            changes.add(path, paths.get_path(obj, path, "") if current else None, "true" if paused else None)
    if not changes.changed:
        state = "already paused" if paused else "not paused"
        return plans.new_plan(obj, kind, version, plans.UNCHANGED, message=f"{kind} is {state} ({where})", warnings=warnings)
    if recording is not None and recording.enabled and now is not None:
        records.record_last_rollout(changes, obj, now, action, recording)
    message = f"{kind} {action} ({where})"
    return plans.new_plan(obj, kind, version, action, changes=changes, message=message,
                          relied_on=patches.paused_fields(kind), warnings=warnings)
