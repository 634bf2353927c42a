# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read both condition styles into one shape.

metav1.Condition (CAPI "v1beta2 conditions"): {type, status, observedGeneration, reason, message, ...};
found in status.v1beta2.conditions of v1beta1 objects (v1.9+) and status.conditions of v1beta2 objects.
CAPI v1beta1 Condition: {type, status, severity, reason, message, ...}; found in status.conditions of
v1beta1 objects and status.deprecated.v1beta1.conditions of v1beta2 objects.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import paths

TRUE = "True"
FALSE = "False"
UNKNOWN = "Unknown"


def normalize(raw_conditions):
    """List of {type, status, reason, message, observed_generation, severity, last_transition_time}."""
    out = []
    for cond in raw_conditions or []:
        if not isinstance(cond, dict) or not cond.get("type"):
            continue
        out.append({
            "type": cond.get("type"),
            "status": cond.get("status") or UNKNOWN,
            "reason": cond.get("reason") or "",
            "message": cond.get("message") or "",
            "observed_generation": cond.get("observedGeneration"),
            "severity": cond.get("severity") or "",
            "last_transition_time": cond.get("lastTransitionTime"),
        })
    return out


def metav1_conditions(obj, kind, version):
    """Normalized metav1-style conditions of ``obj`` (empty when the controller predates v1.9)."""
    return normalize(paths.get_path(obj, apiversion.status_path(kind, version, "conditions"), []))


def v1beta1_conditions(obj, kind, version):
    """Normalized CAPI v1beta1-style conditions of ``obj``."""
    return normalize(paths.get_path(obj, apiversion.status_path(kind, version, "v1beta1_conditions"), []))


def preferred_conditions(obj, kind, version):
    """metav1-style conditions when the object has any, else the v1beta1-style ones.

    Returns (conditions, style) with style "v1beta2" or "v1beta1".
    """
    conds = metav1_conditions(obj, kind, version)
    if conds:
        return conds, "v1beta2"
    return v1beta1_conditions(obj, kind, version), "v1beta1"


def find(conditions, cond_type):
    """The condition of ``cond_type`` in a normalized list, or None."""
    for cond in conditions or []:
        if cond.get("type") == cond_type:
            return cond
    return None


def status_of(conditions, cond_type):
    """"True"/"False"/"Unknown" of a condition, None when absent."""
    cond = find(conditions, cond_type)
    return cond["status"] if cond else None


def is_true(conditions, cond_type):
    return status_of(conditions, cond_type) == TRUE


def is_false(conditions, cond_type):
    return status_of(conditions, cond_type) == FALSE


def is_current(cond, generation):
    """Whether a metav1 condition was computed for ``generation``.

    Conditions without observedGeneration (v1beta1 style) cannot be checked and count as current.
    """
    if cond is None or cond.get("observed_generation") is None or generation is None:
        return True
    return cond["observed_generation"] >= generation


def summary(cond):
    """One line: ``Type=Status (Reason): first line of message``."""
    if cond is None:
        return ""
    text = f"{cond['type']}={cond['status']}"
    if cond.get("reason"):
        text += f" ({cond['reason']})"
    message = first_lines(cond.get("message"))
    if message:
        text += f": {message}"
    return text


def first_lines(message, limit=3):
    """Message compacted for one-line output: up to ``limit`` non-empty lines joined with '; '."""
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    text = "; ".join(lines[:limit])
    if len(lines) > limit:
        text += f"; ... ({len(lines) - limit} more)"
    return text
