# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""metav1.LabelSelector matching ({matchLabels, matchExpressions}) and selector strings."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


def matches(selector, labels, empty_matches=False):
    """Whether ``labels`` satisfy ``selector``. An empty selector matches nothing unless
    ``empty_matches`` (clusterctl/CAPI treat an empty MD selector as matching no MachineSet)."""
    selector = selector or {}
    labels = labels or {}
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return empty_matches
    for key, value in match_labels.items():
        if labels.get(key) != value:
            return False
    for expr in expressions:
        key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def to_string(selector):
    """kubectl string form of a metav1.LabelSelector (for list requests)."""
    selector = selector or {}
    parts = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if operator == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif operator == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif operator == "Exists":
            parts.append(key)
        elif operator == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)
