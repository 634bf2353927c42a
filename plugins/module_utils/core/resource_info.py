# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-object entry capi_rollout_info returns (and the changing modules return after a wait):
a view (core.view) plus rollout completion (core.status), with owned MachineSets / Machines.

Pure: takes the objects the client listed, decides ownership itself.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core import status as statuses
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views

_CONDITION_KEYS = ("type", "status", "reason", "message")


def _short_conditions(condition_list):
    return [{key: cond.get(key) for key in _CONDITION_KEYS} for cond in condition_list or []]


def _meta(obj, key):
    return (obj.get("metadata") or {}).get(key)


def _controller_uid(obj):
    for owner in _meta(obj, "ownerReferences") or []:
        if owner.get("controller"):
            return owner.get("uid")
    return None


def owned_machine_sets(md, machine_sets):
    """MachineSets controlled by MachineDeployment ``md`` (controller ownerRef uid), newest revision first."""
    uid = _meta(md, "uid")
    owned = [ms for ms in machine_sets or [] if uid and _controller_uid(ms) == uid]
    return sorted(owned, key=lambda ms: (-(views.revision_of(ms) or 0), _meta(ms, "name") or ""))


def owned_machines(obj, kind, machines, machine_sets=None):
    """Machines of an MD (owned by one of its MachineSets, or labelled with its name) or a KCP
    (controlled by it, or labelled with its name)."""
    name = _meta(obj, "name")
    uid = _meta(obj, "uid")
    out = []
    if kind == apiversion.MACHINE_DEPLOYMENT:
        set_uids = {_meta(ms, "uid") for ms in machine_sets or []}
        for machine in machines or []:
            labels = _meta(machine, "labels") or {}
            if _controller_uid(machine) in set_uids or labels.get(keys.DEPLOYMENT_NAME_LABEL) == name:
                out.append(machine)
    else:
        for machine in machines or []:
            labels = _meta(machine, "labels") or {}
            if (uid and _controller_uid(machine) == uid) or labels.get(keys.CONTROL_PLANE_NAME_LABEL) == name:
                out.append(machine)
    return sorted(out, key=lambda machine: _meta(machine, "name") or "")


def machine_set_entry(ms, api_version=None):
    view = views.machine_set_view(ms, api_version=api_version)
    return {
        "name": view["name"],
        "revision": view["revision"],
        "revision_history": view["revision_history"],
        "created": view["created"],
        "replicas": view["replicas"],
        "template": {key: view["template"].get(key) for key in
                     ("version", "infrastructure_ref", "bootstrap_ref", "data_secret_name", "failure_domain")},
    }


def machine_entry(machine, api_version=None):
    view = views.machine_view(machine, api_version=api_version)
    return {
        "name": view["name"],
        "phase": view["phase"],
        "node": view["node"],
        "version": view["version"],
        "machine_set": view["machine_set"],
        "up_to_date": view["up_to_date"],
        "ready": view["ready"],
        "available": view["available"],
        "deleting": view["deleting"],
        "infrastructure_ref": view["infrastructure_ref"],
    }


def resource_entry(obj, now=None, cluster=None, api_version=None, machine_sets=None, machines=None,
                   show_machine_sets=True):
    """Entry for one MD/KCP. ``now``: the API server's time. ``machine_sets``/``machines``: None to
    leave the keys out, else the namespace's MachineSets/Machines (ownership is decided here); the
    MachineSets also make the completion of an MD exact (core.status), and ``show_machine_sets``
    false keeps them out of the entry."""
    kind = apiversion.rollout_kind(obj.get("kind"))
    view = views.view(obj, now=now, cluster=cluster, api_version=api_version)
    status = statuses.rollout_status(obj, api_version=api_version, machine_sets=machine_sets, now=now)
    rollout = dict(view["rollout"])
    rollout["complete"] = bool(status["done"])
    rollout["message"] = status["message"]
    rollout["waiting_for"] = status["waiting_for"]
    rollout["warnings"] = status["warnings"]
    template = view["template"]
    entry = {
        "kind": kind,
        "name": view["name"],
        "namespace": view["namespace"],
        "ref": view["ref"],
        "api_version": apiversion.api_version_string(kind, view["api_version"]),
        "cluster": view["cluster"],
        "paused": view["paused"],
        "paused_reasons": view["paused_reasons"],
        "topology_owned": view["topology_owned"],
        "field_owners": owners.rollout_owners(obj, kind, view["api_version"]),
        "replicas": {key: view["replicas"].get(key) for key in ("desired", "current", "ready", "available", "up_to_date")},
        "rollout": rollout,
        "template": {key: template.get(key) for key in ("version", "infrastructure_ref", "bootstrap_ref", "failure_domain")},
        "revision": view["revision"],
        "generation": view["generation"],
        "observed_generation": view["observed_generation"],
        "phase": view["phase"],
        "conditions": _short_conditions(view["conditions"]),
        "last_rollout": view["last_rollout"],
    }
    owned_sets = None
    if kind == apiversion.MACHINE_DEPLOYMENT and (machine_sets is not None or machines is not None):
        owned_sets = owned_machine_sets(obj, machine_sets)
    if machine_sets is not None and show_machine_sets:
        entry["machine_sets"] = [machine_set_entry(ms, api_version=api_version) for ms in owned_sets or []]
    if machines is not None:
        entry["machines"] = [machine_entry(m, api_version=api_version)
                             for m in owned_machines(obj, kind, machines, owned_sets)]
    return entry
