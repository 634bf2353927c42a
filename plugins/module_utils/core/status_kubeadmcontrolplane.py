# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollout status of a KubeadmControlPlane, both API versions (upstream controlplane/kubeadm/internal/controllers/status.go@v1.10.10,
controlplane/kubeadm/reconcilers/kubeadmcontrolplane/status.go@v1.14.0; docs/rollout-completion.md).

Complete when: observedGeneration >= generation; no rolloutAfter in the future by the API server's
clock (pending); replicas == up-to-date (v1beta1: updatedReplicas,
tightened by status.v1beta2.upToDateReplicas when present) == spec.replicas; ready (v1beta1:
status.v1beta2.readyReplicas when present, not the Node-based readyReplicas) and, when reported,
available == spec.replicas; RollingOut False for the current generation (v1beta1-only controllers:
MachinesSpecUpToDate not False); every Machine on spec.version (status.versions has a single entry /
status.version equals spec.version).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.status_common import (
    counter_wait, pending_wait, result, rolling_out_wait,
)


def _version_wait(ref, obj, version):
    want = paths.get_path(obj, "spec.version")
    versions = paths.get_path(obj, "status.versions") if version == apiversion.V1BETA2 else None
    if versions:
        seen = sorted({entry.get("version") for entry in versions if entry.get("version")})
        if seen != [want]:
            return ("version", f"Waiting for {ref} rollout to finish: machines run {', '.join(seen)}, {want} required...")
        return None
    reported = paths.get_path(obj, "status.version")
    if want and reported and reported != want:
        # status.version is the lowest version among the control plane Machines.
        return ("version", f"Waiting for {ref} rollout to finish: lowest machine version {reported}, {want} required...")
    return None


def _legacy_condition_wait(ref, obj, kind, version):
    cond = conds.find(conds.v1beta1_conditions(obj, kind, version), "MachinesSpecUpToDate")
    if cond and cond["status"] == conds.FALSE:
        detail = conds.first_lines(cond["message"]) or "MachinesSpecUpToDate is False"
        return ("rolling_out_condition", f"Waiting for {ref} rollout to finish: {detail}...")
    return None


def control_plane_status(obj, api_version=None, now=None):
    """Status result {ref, done, observed, message, waiting_for, replicas, paused_reasons, warnings} of a
    KCP; ``now`` (the API server's time) reports a rolloutAfter that has not fired yet as pending."""
    kind = apiversion.KUBEADM_CONTROL_PLANE
    version = apiversion.version_of(obj, api_version)
    kcp = views.control_plane_view(obj, api_version=version)
    ref, generation = kcp["ref"], kcp["generation"]
    fields = apiversion.status_fields(kind, version)
    desired = kcp["replicas"]["desired"]
    current = paths.get_path(obj, fields["replicas"], 0)
    if version == apiversion.V1BETA2:
        updated = paths.get_path(obj, fields["up_to_date"], 0)
        ready = paths.get_path(obj, fields["ready"], 0)
        available = paths.get_path(obj, fields["available"], 0)
    else:
        new_up_to_date = paths.get_path(obj, fields["up_to_date"])
        legacy_updated = paths.get_path(obj, fields["v1beta1_updated"], 0)
        updated = legacy_updated if new_up_to_date is None else min(legacy_updated, new_up_to_date)
        # v1.9+ controllers count ready Machines in status.v1beta2 from the Machines' conditions; the
        # legacy readyReplicas comes from the workload cluster's Nodes and is reset to 0 on every
        # reconcile that cannot reach it (v1.10.10 controlplane/kubeadm/internal/controllers/status.go),
        # which would fail a soak over a network blip.
        modern_ready = paths.get_path(obj, fields["ready"])
        ready = paths.get_path(obj, fields["v1beta1_ready"], 0) if modern_ready is None else modern_ready
        # Only v1.9+ controllers report availability for a KCP.
        available = paths.get_path(obj, fields["available"])
    # Where availability is not reported, ready Machines stand in for available ones.
    effective_available = ready if available is None else min(ready, available)
    replicas = {"desired": desired, "current": current, "up_to_date": updated, "ready": ready, "available": available}

    def waiting(what, message, observed=True):
        return result(ref, False, message, what, observed, replicas, kcp["paused_reasons"])

    if not kcp["observed"]:
        return waiting("observation", f"Waiting for {ref} spec update to be observed...", observed=False)
    if desired is None:
        return waiting("replicas", f"Waiting for {ref} spec.replicas to be set...")
    after_path = apiversion.spec_path(kind, version, "rollout_after")
    wait = pending_wait(ref, after_path, timeutil.parse_optional(paths.get_path(obj, after_path)), now)
    if wait:
        return waiting(*wait)
    wait = counter_wait(ref, desired, current, updated, effective_available,
                        available_word="ready" if available is None else "available")
    if wait:
        return waiting(*wait)
    metav1 = conds.metav1_conditions(obj, kind, version)
    wait = rolling_out_wait(ref, metav1, generation) if metav1 else _legacy_condition_wait(ref, obj, kind, version)
    if wait:
        return waiting(*wait)
    wait = _version_wait(ref, obj, version)
    if wait:
        return waiting(*wait)
    return result(ref, True, f"{ref} successfully rolled out", None, True, replicas, kcp["paused_reasons"])
