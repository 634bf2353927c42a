# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OnDelete pools replaced at a controlled pace (issue 29 point 2): which Machines of a MachineDeployment with the
OnDelete strategy to delete next, and when the pool is done, decided from its Machines.

CAPI replaces a Machine of an OnDelete MachineDeployment only once someone deletes it: the controller then shrinks
the old MachineSets to the Machines that still exist and grows the new one into the freed slots
(internal/controllers/machinedeployment/machinedeployment_rollout_ondelete.go at v1.10.0,
core/reconcilers/machinedeployment/machinedeployment_rollout_ondelete.go at v1.14.0). The strategy has no
maxUnavailable (``rollingUpdate`` is "present only if type = RollingUpdate", api/core/v1beta2/machinedeployment_types.go
v1.14.0), so the pace is the caller's: a Machine is deleted only while the pool then has at most ``max_unavailable``
Machines short of its replicas that are ready (upstream's own OnDelete tests delete with "maxuserunavailable 1").
An old Machine that is not ready costs no availability and goes first; one being deleted is never deleted again.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import resource_info
from ansible_collections.capi.rollout.plugins.module_utils.core import status_machinedeployment
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views

ON_DELETE = "OnDelete"


def is_on_delete(md, api_version=None):
    """Whether MachineDeployment ``md`` rolls out with the OnDelete strategy."""
    view = views.deployment_view(md, api_version=api_version)
    return ((view.get("rollout") or {}).get("strategy") or {}).get("type") == ON_DELETE


def _machine_order(machine):
    # not ready first (deleting it costs no availability), then the oldest, then by name for a stable choice
    return (machine["ready"] is True, machine.get("created") or "", machine.get("name") or "")


def pool_step(md, machine_sets, machines, max_unavailable=1, api_version=None, now=None):
    """What to do next in OnDelete pool ``md``, given the namespace's MachineSets and Machines (raw objects).

    Returns {ref, done, delete, old, deleting, not_ready, unavailable, max_unavailable, message}: ``delete`` the
    names of the Machines to delete now (none while the pool is at its pace), ``old`` those still on an older
    template and not being deleted, ``done`` once every Machine is on the MachineDeployment's template, ready and
    none is being deleted, as many as its replicas. A Machine is on the template when its MachineSet is the one CAPI
    takes as the new one (a restart's rolloutAfter included); ``now`` is the API server's time."""
    md_view = views.deployment_view(md, api_version=api_version)
    pace = max(int(max_unavailable or 1), 1)
    replicas = md_view["replicas"]["desired"]
    replicas = 1 if replicas is None else replicas
    new_sets = status_machinedeployment.new_machine_set_names(md, apiversion.version_of(md, api_version), machine_sets, now=now)
    # the Machines of its own MachineSets only: the namespace's lists hold other pools' too
    own_sets = resource_info.owned_machine_sets(md, machine_sets)
    owned = [views.machine_view(machine, api_version=api_version)
             for machine in resource_info.owned_machines(md, md_view["kind"], machines, machine_sets=own_sets)]

    def current(machine):
        return machine.get("machine_set") in new_sets

    deleting = [m for m in owned if m["deleting"]]
    live = [m for m in owned if not m["deleting"]]
    old = sorted((m for m in live if not current(m)), key=_machine_order)
    not_ready = [m["name"] for m in live if current(m) and m["ready"] is not True]
    unavailable = max(replicas - sum(1 for m in live if m["ready"] is True), 0)
    delete = []
    for machine in old:
        cost = 1 if machine["ready"] is True else 0
        if unavailable + cost > pace:
            break
        delete.append(machine["name"])
        unavailable += cost
    done = not old and not deleting and not not_ready and len(live) == replicas
    on_template = len(live) - len(old)
    if done:
        message = f"all {replicas} Machine(s) on the new template and ready"
    else:
        message = (f"{on_template} of {replicas} Machine(s) on the new template, {len(old)} to replace"
                   + (f"; deleting {', '.join(delete)}" if delete else "")
                   + (f"; waiting for the deletion of {', '.join(sorted(m['name'] for m in deleting))}" if deleting else "")
                   + (f"; waiting for {', '.join(sorted(not_ready))} to be ready" if not_ready else "")
                   + f" (at most {pace} unavailable at a time)")
    return {"ref": md_view["ref"], "done": done, "delete": delete, "old": [m["name"] for m in old],
            "deleting": sorted(m["name"] for m in deleting), "not_ready": sorted(not_ready),
            "unavailable": unavailable, "max_unavailable": pace, "message": message}
