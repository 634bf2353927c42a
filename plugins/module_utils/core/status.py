# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollout status entry points: per-kind completion + progress message, and why a rollout is stuck."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import drains
from ansible_collections.capi.rollout.plugins.module_utils.core.status_kubeadmcontrolplane import control_plane_status
from ansible_collections.capi.rollout.plugins.module_utils.core.status_machinedeployment import (  # noqa: F401 pylint: disable=unused-import
    deployment_complete, machine_deployment_status,
)

# Conditions whose True status means "something is still moving" (and whose message says what).
_MOVING_CONDITIONS = ("RollingOut", "ScalingUp", "ScalingDown", "Remediating", "Deleting")
# Conditions whose False status means "something is unhealthy".
_HEALTH_CONDITIONS = ("Available", "MachinesReady")
_MAX_MACHINE_LINES = 5


def rollout_status(obj, api_version=None, machine_sets=None, now=None):
    """{ref, done, observed, message, waiting_for, replicas, paused_reasons, warnings} for an MD or KCP.

    ``now`` is the API server's time (a future rolloutAfter is pending until then). For MDs pass the
    namespace's ``machine_sets``: completion is then checked against them (exact right after a
    restart, upstream bug #13182 recognised); KCPs ignore them."""
    kind = apiversion.rollout_kind(obj.get("kind"))
    if kind == apiversion.MACHINE_DEPLOYMENT:
        return machine_deployment_status(obj, api_version=api_version, machine_sets=machine_sets, now=now)
    return control_plane_status(obj, api_version=api_version, now=now)


def _condition_line(cond):
    reason = f" ({cond['reason']})" if cond.get("reason") else ""
    message = conds.first_lines(cond.get("message"))
    return f"{cond['type']}{reason}: {message}" if message else f"{cond['type']} is {cond['status']}{reason}"


# the conditions of a Machine that tell why it is not ready, the earliest step of its provisioning first (v1beta1 and
# v1beta2 names); its Ready condition only sums them up
_MACHINE_STEPS = ("InfrastructureReady", "BootstrapConfigReady", "BootstrapReady", "NodeReady", "NodeHealthy")


def _not_ready_detail(machine):
    for cond_type in _MACHINE_STEPS:
        cond = conds.find(machine.get("conditions"), cond_type)
        if cond and cond["status"] != conds.TRUE:
            text = f"{cond_type}={cond['status']}" + (f" ({cond['reason']})" if cond.get("reason") else "")
            return text + (f": {conds.first_lines(cond['message'])}" if cond.get("message") else "")
    ready = conds.find(machine.get("conditions"), "Ready")
    return conds.first_lines(ready["message"]) if ready and ready.get("message") else f"phase {machine.get('phase')}"


def machine_reason(machine):
    """Why a Machine view is not healthy, in one line, or None when it is ready and available: what holds up its
    deletion, else the earliest provisioning step that is not done (with its reason and message), else its Ready
    condition's message or phase. The one wording of the wait's lines and of the stuck Machines of a failure."""
    if machine.get("deleting"):
        # a hook, a drain or volumes holding it up, with what to do, when CAPI's Deleting condition says so
        return drains.describe(machine) or f"being deleted (phase {machine.get('phase')})"
    if machine.get("ready") is not True:
        return f"not ready: {_not_ready_detail(machine)}"
    if machine.get("available") is False:
        return "ready but not yet available"
    return None


def _machine_line(machine):
    reason = machine_reason(machine)
    return f"Machine {machine.get('name')} is {reason}" if reason else None


def stuck_reasons(view, conditions=None, machines=None):
    """Short lines saying what holds a rollout back, for wait timeouts and failures.

    ``view`` is an MD/KCP view (core.view); ``conditions`` overrides its conditions (normalized list);
    ``machines`` is an optional list of Machine views whose unhealthy members are listed (at most 5).
    """
    lines = [f"paused: {reason}" for reason in view.get("paused_reasons") or []]
    if ((view.get("rollout") or {}).get("strategy") or {}).get("type") == "OnDelete":
        lines.append("strategy OnDelete: old Machines are only replaced when someone deletes them")
    cond_list = view.get("conditions") if conditions is None else conditions
    style = view.get("conditions_style", "v1beta2") if conditions is None else "v1beta2"
    if style == "v1beta1":
        # Old-style conditions: False with a severity is the controller telling what is wrong.
        for cond in cond_list or []:
            if cond["status"] == conds.FALSE and cond.get("severity") in ("Error", "Warning") and cond["type"] != "Ready":
                lines.append(_condition_line(cond))
    else:
        for cond_type in _MOVING_CONDITIONS:
            cond = conds.find(cond_list, cond_type)
            if cond and cond["status"] == conds.TRUE:
                lines.append(_condition_line(cond))
        for cond_type in _HEALTH_CONDITIONS:
            cond = conds.find(cond_list, cond_type)
            if cond and cond["status"] != conds.TRUE:
                lines.append(_condition_line(cond))
    machine_lines = [line for line in (_machine_line(m) for m in machines or []) if line]
    if len(machine_lines) > _MAX_MACHINE_LINES:
        extra = len(machine_lines) - _MAX_MACHINE_LINES
        machine_lines = machine_lines[:_MAX_MACHINE_LINES] + [f"... and {extra} more machines"]
    return lines + machine_lines
