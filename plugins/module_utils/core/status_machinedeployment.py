# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollout status of a MachineDeployment (like kubectl's DeploymentStatusViewer), both API versions.

Completion (reference §3.11, recommended definition):
- observed: status.observedGeneration >= metadata.generation;
- v1beta2: upToDateReplicas == replicas == availableReplicas == spec.replicas;
- v1beta1: updatedReplicas == replicas == availableReplicas == spec.replicas, plus (v1.9+)
  status.v1beta2.upToDateReplicas == spec.replicas;
- and, when the controller reports it, condition RollingOut is False and was computed for the current
  generation (guards CAPI #13738: observedGeneration is bumped before the other status fields).

v1beta2 objects also honour status.deprecated.v1beta1.updatedReplicas (the new MachineSet's replicas,
still computed by v1.11+): right after a restart the up-to-date counter and RollingOut still describe
the old Machines until the Machine controller re-evaluates them, while the new MachineSet has 0.
With ``machine_sets`` (the namespace's MachineSets) the check is exact: a MachineSet with the current
template (created after an expired rolloutAfter) must exist and no other owned MachineSet may keep replicas.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.status_common import (
    counter_wait, result, rolling_out_wait, smallest,
)

get = apiversion.get_path


def deployment_complete(desired, current, updated, available, generation=None, observed_generation=None):
    """CAPI's mdutil.DeploymentComplete: every counter equals spec.replicas and the spec was observed."""
    if generation is not None and (observed_generation is None or observed_generation < generation):
        return False
    return updated == desired and current == desired and available == desired


def machine_set_wait(ref, md, version, machine_sets, now=None):
    """(waiting_for, message) while the MachineSets show the rollout unfinished, else None."""
    prefix = f"Waiting for {ref} rollout to finish: "
    after_path = apiversion.spec_path(apiversion.MACHINE_DEPLOYMENT, version, "rollout_after")
    after = timeutil.parse_optional(get(md, after_path))
    expired = after is not None and now is not None and after <= timeutil.to_utc(now)
    desired = tmpl.identity(get(md, "spec.template.spec", {}))
    has_new = False
    old = []
    for ms in hist.owned_machine_sets(md, machine_sets):
        created = timeutil.parse_optional(get(ms, "metadata.creationTimestamp"))
        # Same rule as CAPI's FindNewMachineSet: template match, and not older than an expired rolloutAfter.
        is_new = tmpl.up_to_date(tmpl.identity(get(ms, "spec.template.spec", {})), desired) and not (
            expired and created is not None and created < after)
        replicas = max(get(ms, "spec.replicas", 0), get(ms, "status.replicas", 0))
        if is_new:
            has_new = True
        elif replicas > 0:
            old.append((get(ms, "metadata.name"), replicas))
    if not has_new:
        since = f" created after {after_path} ({timeutil.format_time(after)})" if expired else ""
        return "new_machine_set", f"{prefix}waiting for a MachineSet with the current template{since}..."
    if old:
        names = ", ".join(name for name, _count in old)
        return "old_replicas", f"{prefix}{sum(count for _name, count in old)} old replicas are pending termination ({names})..."
    return None


def machine_deployment_status(obj, api_version=None, machine_sets=None, now=None):
    """Status result {ref, done, observed, message, waiting_for, replicas, paused_reasons} of an MD.

    ``machine_sets`` (optional, MachineSets of the MD's namespace) and ``now`` make completion exact
    right after a restart (see module docstring)."""
    kind = apiversion.MACHINE_DEPLOYMENT
    version = apiversion.version_of(obj, api_version)
    md = views.deployment_view(obj, api_version=version)
    ref, generation = md["ref"], md["generation"]
    fields = apiversion.status_fields(kind, version)
    desired = md["replicas"]["desired"]
    current = get(obj, fields["replicas"], 0)
    if version == apiversion.V1BETA2:
        updated = smallest(get(obj, fields["up_to_date"], 0), get(obj, fields["v1beta1_updated"]))
        available = get(obj, fields["available"], 0)
    else:
        # Old counters are what this API defines; the v1.9+ up-to-date counter tightens "updated".
        updated = smallest(get(obj, fields["v1beta1_updated"], 0), get(obj, fields["up_to_date"]))
        available = get(obj, fields["v1beta1_available"], 0)
    replicas = {"desired": desired, "current": current, "up_to_date": updated, "available": available,
                "ready": md["replicas"]["ready"]}

    def waiting(what, message, observed=True):
        return result(ref, False, message, what, observed, replicas, md["paused_reasons"])

    if not md["observed"]:
        return waiting("observation", f"Waiting for {ref} spec update to be observed...", observed=False)
    if desired is None:
        return waiting("replicas", f"Waiting for {ref} spec.replicas to be set...")
    wait = counter_wait(ref, desired, current, updated, available)
    if wait:
        return waiting(*wait)
    if machine_sets is not None:
        wait = machine_set_wait(ref, obj, version, machine_sets, now)
        if wait:
            return waiting(*wait)
    wait = rolling_out_wait(ref, conds.metav1_conditions(obj, kind, version), generation)
    if wait:
        return waiting(*wait)
    return result(ref, True, f"{ref} successfully rolled out", None, True, replicas, md["paused_reasons"])
