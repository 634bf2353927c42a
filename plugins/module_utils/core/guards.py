# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Refusals shared by the verbs that start a rollout (restart, undo)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError


def refuse_paused(obj, kind, ref, cluster=None, verb="restart"):
    """Raise when the controller would not act on a change: MD spec.paused (rollouts held), the
    paused annotation or Cluster spec.paused (no reconciliation at all)."""
    meta = obj.get("metadata") or {}
    if kind == apiversion.MACHINE_DEPLOYMENT and paths.get_path(obj, "spec.paused") is True:
        raise RolloutError(f"MachineDeployment is paused (spec.paused is true), a {verb} would not roll out", ref=ref,
                           hint="run capi_rollout_pause with paused=false first", reason="paused")
    if keys.PAUSED_ANNOTATION in (meta.get("annotations") or {}):
        if kind == apiversion.KUBEADM_CONTROL_PLANE:
            hint = "run capi_rollout_pause with paused=false first"
        else:
            hint = (f"remove the annotation first (kubectl annotate {kind.lower()} -n {meta.get('namespace')} "
                    f"{meta.get('name')} {keys.PAUSED_ANNOTATION}-)")
        raise RolloutError(f"{kind} has the annotation {keys.PAUSED_ANNOTATION} and is not reconciled", ref=ref,
                           hint=hint, reason="paused")
    if cluster is not None and paths.get_path(cluster, "spec.paused") is True:
        name = f"{paths.get_path(cluster, 'metadata.namespace')}/{paths.get_path(cluster, 'metadata.name')}"
        raise RolloutError(f"Cluster {name} is paused (spec.paused is true), nothing would roll out", ref=ref,
                           hint=f"unpause Cluster {name} first", reason="cluster_paused")


def is_topology_owned(obj):
    return keys.TOPOLOGY_OWNED_LABEL in (paths.get_path(obj, "metadata.labels", {}) or {})


def refuse_topology_owned(obj, kind, ref, what="a template change made here", hint=None):
    """Raise for ClusterClass-managed objects: the topology controller re-applies template fields."""
    if is_topology_owned(obj):
        raise RolloutError(
            f"{kind} is managed by a Cluster topology (label {keys.TOPOLOGY_OWNED_LABEL}); the topology controller "
            f"would revert {what}", ref=ref,
            hint=hint or "change the template in the Cluster topology / ClusterClass instead, or restart without infrastructure_ref",
            reason="topology_owned")
