# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollout history of a MachineDeployment from its MachineSets (reference §3.5, §4.6).

Revisions live in the MachineSet annotation machinedeployment.clusters.x-k8s.io/revision; a reused
MachineSet keeps its earlier numbers in .../revision-history. CAPI v1.11+ deletes old MachineSets
with 0 replicas once a rollout completes, so there the history only reaches back while a rollout
is in flight.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labelselector
from ansible_collections.capi.rollout.plugins.module_utils.core import template as tmpl
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views

get = apiversion.get_path


def is_owned_by(machine_set, md):
    """clusterctl's getMachineSetsForDeployment filter: controlled by the MD (controller ownerRef;
    by uid when both have one, else by kind/name) and matched by the MD's non-empty selector."""
    md_uid = get(md, "metadata.uid")
    md_name = get(md, "metadata.name")
    if get(machine_set, "metadata.namespace") != get(md, "metadata.namespace"):
        return False
    controlled = False
    for owner in get(machine_set, "metadata.ownerReferences", []) or []:
        if not owner.get("controller") or owner.get("kind") != apiversion.MACHINE_DEPLOYMENT:
            continue
        if md_uid and owner.get("uid"):
            controlled = owner["uid"] == md_uid
        else:
            controlled = owner.get("name") == md_name
    if not controlled:
        return False
    return labelselector.matches(get(md, "spec.selector"), get(machine_set, "metadata.labels", {}))


def owned_machine_sets(md, machine_sets):
    return [ms for ms in machine_sets or [] if is_owned_by(ms, md)]


def rollout_history(md, machine_sets, api_version=None):
    """{ref, revision, revisions: [...]} with one entry per owned MachineSet, oldest revision first.

    Entry: {revision, revision_history, machine_set, created, replicas, template, current,
    matches_spec}. ``current`` marks the MachineSet of the MD's revision annotation (or the highest
    revision); ``matches_spec`` marks MachineSets whose template equals the MD's rollout identity.
    """
    md_view = views.deployment_view(md, api_version=api_version)
    entries = []
    for ms in owned_machine_sets(md, machine_sets):
        ms_view = views.machine_set_view(ms)
        entries.append({
            "revision": ms_view["revision"],
            "revision_history": ms_view["revision_history"],
            "machine_set": ms_view["name"],
            "created": ms_view["created"],
            "replicas": ms_view["replicas"],
            "template": ms_view["template"],
            "matches_spec": tmpl.up_to_date(ms_view["template"], md_view["template"]),
            "current": False,
        })
    # MachineSets without a parsable revision sort first (revision 0 like clusterctl).
    entries.sort(key=lambda e: (e["revision"] or 0, e["created"] or "", e["machine_set"]))
    current_revision = md_view["revision"]
    if current_revision is None and entries:
        current_revision = entries[-1]["revision"]
    for entry in entries:
        entry["current"] = entry["revision"] is not None and entry["revision"] == current_revision
    return {"ref": md_view["ref"], "revision": current_revision, "revisions": entries}
