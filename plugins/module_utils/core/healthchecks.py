# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MachineHealthChecks of a MachineDeployment: which cover it, their limits, whether remediation is paused, and
whether a remediation is in flight among its Machines - as upstream decides it (v1.14.0
core/reconcilers/machinehealthcheck/machinehealthcheck_controller.go and machinehealthcheck_targets.go; v1.10.10
internal/controllers/machinehealthcheck/, the same rules):

- an MHC targets the Machines of its ``spec.clusterName`` that its ``spec.selector`` matches; a pool is covered when
  the selector matches the labels of the MachineDeployment's Machine template (what its Machines will carry);
- an MHC is paused by the annotation ``cluster.x-k8s.io/paused`` on it (or a paused Cluster: the plan's paused
  blocker); a Machine is left alone when it has ``cluster.x-k8s.io/paused`` or ``cluster.x-k8s.io/skip-remediation``
  (shouldSkipRemediation);
- an unhealthy Machine gets ``OwnerRemediated`` (or, with a remediation template, ``ExternallyRemediated``) False,
  reason WaitingForRemediation, until its owner has replaced it: a remediation in flight (v1beta1 conditions, and
  the metav1 conditions of v1beta2 / status.v1beta2).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import labelselector
from ansible_collections.capi.rollout.plugins.module_utils.core import paths

MHC = apiversion.MACHINE_HEALTH_CHECK
REMEDIATION_CONDITIONS = ("OwnerRemediated", "ExternallyRemediated")
# the limits under upstream's names, per API version
LIMIT_NAMES = {apiversion.V1BETA1: {"max_unhealthy": "maxUnhealthy", "unhealthy_range": "unhealthyRange"},
               apiversion.V1BETA2: {"max_unhealthy": "unhealthyLessThanOrEqualTo", "unhealthy_range": "unhealthyInRange"}}


def _field(obj, kind, version, field):
    return paths.get_path(obj, apiversion.spec_path(kind, version, field))


def _annotations(obj):
    return (obj.get("metadata") or {}).get("annotations") or {}


def _covers(mhc, cluster_name, labels, version):
    return (_field(mhc, MHC, version, "cluster_name") == cluster_name
            and labelselector.matches(_field(mhc, MHC, version, "selector"), labels))


def limits(mhc, version):
    """The remediation limits of ``mhc`` that are set, under upstream's field names of ``version``."""
    return {name: _field(mhc, MHC, version, field) for field, name in LIMIT_NAMES[version].items()
            if _field(mhc, MHC, version, field) is not None}


def remediation(machine, version):
    """The condition that marks ``machine`` as waiting for its remediation (False), or None."""
    for found in conds.metav1_conditions(machine, apiversion.MACHINE, version) + \
            conds.v1beta1_conditions(machine, apiversion.MACHINE, version):
        if found["type"] in REMEDIATION_CONDITIONS and found["status"] == conds.FALSE:
            return found
    return None


def coverage(md, mhcs, machines, version):
    """What the MachineHealthChecks (``mhcs``, of the MachineDeployment's namespace) mean for ``md``:
    {health_checks: [{name, limits, paused}], in_flight: [{machine, condition, reason, message}], skipped: [machine
    names]}; ``machines``: the Machines of the namespace (those of ``md`` are picked by its deployment-name label)."""
    cluster_name = _field(md, apiversion.MACHINE_DEPLOYMENT, version, "cluster_name")
    labels = paths.get_path(md, "spec.template.metadata.labels", {}) or {}
    covering = [mhc for mhc in mhcs or [] if _covers(mhc, cluster_name, labels, version)]
    name = (md.get("metadata") or {}).get("name")
    own = [m for m in machines or [] if ((m.get("metadata") or {}).get("labels") or {}).get(keys.DEPLOYMENT_NAME_LABEL) == name]
    in_flight, skipped = [], []
    for machine in own:
        found = remediation(machine, version)
        if found:
            in_flight.append({"machine": machine["metadata"]["name"], "condition": found["type"], "reason": found["reason"],
                              "message": found["message"]})
        if any(key in _annotations(machine) for key in (keys.PAUSED_ANNOTATION, keys.SKIP_REMEDIATION_ANNOTATION)):
            skipped.append(machine["metadata"]["name"])
    return {"health_checks": [{"name": mhc["metadata"]["name"], "limits": limits(mhc, version),
                               "paused": keys.PAUSED_ANNOTATION in _annotations(mhc)} for mhc in covering],
            "in_flight": in_flight, "skipped": skipped}


def blocker(found):
    """The blocker of a pool with a remediation in flight (``found``: coverage), or None: a wave that replaces Machines
    while a MachineHealthCheck replaces others counts both against maxUnavailable, and a failed rollout could not be
    told from the remediation."""
    if not found or not found["in_flight"]:
        return None
    machines = "; ".join(f"Machine {item['machine']} ({item['condition']} False: {item['reason'] or 'no reason'}"
                         + (f", {item['message']}" if item["message"] else "") + ")" for item in found["in_flight"])
    return (f"remediation in flight: {machines}; wait until its owner has replaced it (the Machine gone or the "
            "condition True), then re-run")


def summary(found):
    """One short line for the plan table: the covering MachineHealthChecks with their limits and pause, '-' for none."""
    if not found or not found["health_checks"]:
        return "-"
    parts = []
    for check in found["health_checks"]:
        shown_limits = ", ".join(f"{key} {value}" for key, value in sorted(check["limits"].items()))
        parts.append(check["name"] + (f" ({shown_limits})" if shown_limits else "") + (" paused" if check["paused"] else ""))
    text = "; ".join(parts)
    if found["skipped"]:
        text += f"; {len(found['skipped'])} Machine(s) skip remediation"
    if found["in_flight"]:
        text += f"; remediating {', '.join(item['machine'] for item in found['in_flight'])}"
    return text
