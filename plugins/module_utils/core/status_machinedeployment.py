# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollout status of a MachineDeployment (like kubectl's DeploymentStatusViewer), both API versions.

Complete when every rule holds (docs/rollout-completion.md has them per CAPI release, with the
upstream code they follow):
- observed: status.observedGeneration >= metadata.generation;
- not pending: a rolloutAfter in the future by the API server's clock has not fired yet;
- counters: up-to-date == replicas == available == spec.replicas (v1beta2 upToDateReplicas, tightened by
  status.deprecated.v1beta1.updatedReplicas; v1beta1 updatedReplicas, tightened by
  status.v1beta2.upToDateReplicas);
- MachineSets (``machine_sets``, the namespace's MachineSets; every production path passes them): a
  MachineSet with the current template, created at or after an expired rolloutAfter, exists
  (upstream ``mdutil.FindNewMachineSet``), and no other owned MachineSet keeps replicas. The
  up-to-date counters lag a template change until the Machine controller re-evaluates the Machines,
  and ``status.deprecated.v1beta1`` (the new MachineSet's replicas) is marked for removal upstream,
  so without the MachineSets a v1beta2 object lacking it is never reported complete;
- condition RollingOut is False.

Upstream bug #13182 (v1.10.x-v1.12.3): the Machines of a MachineSet created in the rolloutAfter
second stay UpToDate=False while rolloutAfter is set, so the up-to-date counters and RollingOut never
settle although every Machine was replaced. With the MachineSets that state is recognised and
reported complete with a warning that names the bug and the fix.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.status_common import (
    counter_wait, pending_wait, result, rolling_out_wait, smallest,
)


def deployment_complete(desired, current, updated, available, generation=None, observed_generation=None):
    """CAPI's mdutil.DeploymentComplete: every counter equals spec.replicas and the spec was observed."""
    if generation is not None and (observed_generation is None or observed_generation < generation):
        return False
    return updated == desired and current == desired and available == desired


def _new_and_old(md, version, machine_sets, now):
    """(new MachineSets, [(name, replicas)] of old ones with replicas, expired rolloutAfter or None)."""
    after_path = apiversion.spec_path(apiversion.MACHINE_DEPLOYMENT, version, "rollout_after")
    after = timeutil.parse_optional(paths.get_path(md, after_path))
    expired = after if after is not None and now is not None and after <= timeutil.to_utc(now) else None
    desired = tmpl.identity(paths.get_path(md, "spec.template.spec", {}))
    new, old = [], []
    for ms in hist.owned_machine_sets(md, machine_sets):
        created = timeutil.parse_optional(paths.get_path(ms, "metadata.creationTimestamp"))
        # Same rule as CAPI's FindNewMachineSet: template match, and not older than an expired rolloutAfter.
        is_new = tmpl.up_to_date(tmpl.identity(paths.get_path(ms, "spec.template.spec", {})), desired) and not (
            expired is not None and created is not None and created < expired)
        replicas = max(paths.get_path(ms, "spec.replicas", 0) or 0, paths.get_path(ms, "status.replicas", 0) or 0)
        if is_new:
            new.append(ms)
        elif replicas > 0:
            old.append((paths.get_path(ms, "metadata.name"), replicas))
    return new, old, expired


def new_machine_set_names(md, version, machine_sets, now=None):
    """Names of the MachineSets of ``md`` that CAPI takes as its new one (template match, rolloutAfter; _new_and_old)."""
    return [paths.get_path(ms, "metadata.name") for ms in _new_and_old(md, version, machine_sets, now)[0]]


def machine_set_wait(ref, md, version, machine_sets, now=None):
    """(waiting_for, message) while the MachineSets show the rollout unfinished, else None."""
    prefix = f"Waiting for {ref} rollout to finish: "
    new, old, expired = _new_and_old(md, version, machine_sets, now)
    if not new:
        after_path = apiversion.spec_path(apiversion.MACHINE_DEPLOYMENT, version, "rollout_after")
        since = f" created after {after_path} ({timeutil.format_time(expired)})" if expired else ""
        return "new_machine_set", f"{prefix}waiting for a MachineSet with the current template{since}..."
    if old:
        names = ", ".join(name for name, _count in old)
        return "old_replicas", f"{prefix}{sum(count for _name, count in old)} old replicas are pending termination ({names})..."
    return None


def bug_13182_warning(ref, md, version, machine_sets, now, desired, current, available):
    """The warning for upstream bug #13182 when the MD is in that state, else None.

    The state: rolloutAfter set and expired, exactly one new MachineSet, created in the rolloutAfter
    second, holding every replica (all available), and no old MachineSet with replicas. On v1.10.x,
    v1.11.x and v1.12.0-v1.12.3 its Machines stay UpToDate=False ("spec.rolloutAfter expired") as long as
    the field is set: v1.10.10 internal/controllers/machineset/machineset_controller.go and v1.12.0
    internal/controllers/machine/machine_controller_status.go compare ``!creationTimestamp.After(rolloutAfter)``;
    PR #13404 (v1.12.4, v1.13.0) made it ``Before``."""
    if machine_sets is None or not (current == desired == available):
        return None
    new, old, expired = _new_and_old(md, version, machine_sets, now)
    if expired is None or old or len(new) != 1:
        return None
    ms = new[0]
    created = timeutil.parse_optional(paths.get_path(ms, "metadata.creationTimestamp"))
    if created is None or timeutil.truncate_seconds(created) != timeutil.truncate_seconds(expired):
        return None
    if (paths.get_path(ms, "status.replicas", 0) or 0) != desired or (paths.get_path(ms, "spec.replicas", 0) or 0) != desired:
        return None
    after_path = apiversion.spec_path(apiversion.MACHINE_DEPLOYMENT, version, "rollout_after")
    return (f"every Machine runs on MachineSet {paths.get_path(ms, 'metadata.name')}, created in the same second as "
            f"{after_path} ({timeutil.format_time(expired)}); Cluster API v1.10.0-v1.12.3 keep such Machines "
            "UpToDate=False while the field is set (upstream bug kubernetes-sigs/cluster-api#13182), so the "
            "up-to-date counters and RollingOut never settle. The rollout is complete. Clear "
            f"{after_path} or upgrade Cluster API to v1.12.4+ to make the status agree "
            "(capi.rollout writes triggers one second before the server's time, which avoids the bug).")


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
    current = paths.get_path(obj, fields["replicas"], 0)
    if version == apiversion.V1BETA2:
        updated = smallest(paths.get_path(obj, fields["up_to_date"], 0), paths.get_path(obj, fields["v1beta1_updated"]))
        available = paths.get_path(obj, fields["available"], 0)
    else:
        # Old counters are what this API defines; the v1.9+ up-to-date counter tightens "updated".
        updated = smallest(paths.get_path(obj, fields["v1beta1_updated"], 0), paths.get_path(obj, fields["up_to_date"]))
        available = paths.get_path(obj, fields["v1beta1_available"], 0)
    replicas = {"desired": desired, "current": current, "up_to_date": updated, "available": available,
                "ready": md["replicas"]["ready"]}

    def waiting(what, message, observed=True):
        return result(ref, False, message, what, observed, replicas, md["paused_reasons"])

    def complete(warnings=None):
        return result(ref, True, f"{ref} successfully rolled out", None, True, replicas, md["paused_reasons"], warnings)

    if not md["observed"]:
        return waiting("observation", f"Waiting for {ref} spec update to be observed...", observed=False)
    if desired is None:
        return waiting("replicas", f"Waiting for {ref} spec.replicas to be set...")
    after_path = apiversion.spec_path(kind, version, "rollout_after")
    wait = pending_wait(ref, after_path, timeutil.parse_optional(paths.get_path(obj, after_path)), now)
    if wait:
        return waiting(*wait)
    wait = counter_wait(ref, desired, current, updated, available)
    if wait:
        warning = bug_13182_warning(ref, obj, version, machine_sets, now, desired, current, available)
        return complete([warning]) if warning else waiting(*wait)
    if machine_sets is not None:
        wait = machine_set_wait(ref, obj, version, machine_sets, now)
        if wait:
            return waiting(*wait)
    elif version == apiversion.V1BETA2 and paths.get_path(obj, fields["v1beta1_updated"]) is None:
        return waiting("machine_sets", f"Waiting for {ref} rollout to finish: without "
                                       f"{fields['v1beta1_updated']} only its MachineSets tell whether the "
                                       "up-to-date counter is current...")
    wait = rolling_out_wait(ref, conds.metav1_conditions(obj, kind, version), generation)
    if wait:
        return waiting(*wait)
    return complete()
