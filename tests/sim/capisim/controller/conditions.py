"""Condition lists in both CAPI shapes, keeping lastTransitionTime stable across reconciles (reference §1.8).

- metav1 conditions (v1beta2 ``status.conditions``, v1beta1 ``status.v1beta2.conditions``): the time changes only
  when ``status`` changes; ``observedGeneration`` is stamped with the object's generation; Available and Ready
  first, then alphabetical.
- CAPI v1beta1 conditions (``status.conditions`` on v1beta1, ``status.deprecated.v1beta1.conditions`` on v1beta2):
  optional severity (only on False), the time changes whenever the state changes; Ready first, then alphabetical.
"""

from . import model as m


def cond(ctype, status, reason, message="", severity=None):
    """A computed condition; ``status`` may be a bool."""
    if isinstance(status, bool):
        status = "True" if status else "False"
    out = {"type": ctype, "status": status, "reason": reason, "message": message}
    if severity:
        out["severity"] = severity
    return out


# Conditions another controller owns on the same object: the MachineHealthCheck controller's on a Machine
# (HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated; api/core/v1beta2/machine_types.go and
# api/v1beta1/condition_consts.go at v1.14.0 / v1.10.10). Upstream's patch helper writes only the conditions a controller
# owns, so they survive the Machine controller's status writes; tests set them as the MachineHealthCheck controller would.
FOREIGN = ("HealthCheckSucceeded", "OwnerRemediated", "ExternallyRemediated")


def _foreign(existing, computed):
    mine = {item["type"] for item in computed}
    return [item for item in existing or [] if item.get("type") in FOREIGN and item.get("type") not in mine]


def _previous(existing, ctype):
    for item in existing or []:
        if item.get("type") == ctype:
            return item
    return None


def merge_v1beta2(existing, computed, generation, now):
    out = []
    for item in computed:
        prev = _previous(existing, item["type"])
        keep = prev is not None and prev.get("status") == item["status"] and prev.get("lastTransitionTime")
        out.append({
            "type": item["type"], "status": item["status"], "observedGeneration": generation,
            "lastTransitionTime": prev["lastTransitionTime"] if keep else m.format_time(now),
            "reason": item["reason"], "message": item.get("message", ""),
        })
    return ordered_v1beta2(out + _foreign(existing, computed))


def ordered_v1beta2(items):
    first = {"Available": 0, "Ready": 1}
    return sorted(items, key=lambda c: (first.get(c["type"], 2), c["type"]))


def merge_v1beta1(existing, computed, now):
    out = []
    for item in computed:
        new = {"type": item["type"], "status": item["status"]}
        if item["status"] == "False" and item.get("severity"):
            new["severity"] = item["severity"]
        for key in ("reason", "message"):
            if item.get(key):
                new[key] = item[key]
        prev = _previous(existing, item["type"])
        same = prev is not None and all(prev.get(k) == new.get(k) for k in ("status", "severity", "reason", "message"))
        new["lastTransitionTime"] = prev["lastTransitionTime"] if same and prev.get("lastTransitionTime") else m.format_time(now)
        out.append(new)
    return sorted(out + _foreign(existing, computed), key=lambda c: (c["type"] != "Ready", c["type"]))


def paused(obj, cluster):
    """The v1beta2 Paused condition: only Cluster spec.paused and the paused annotation count (util/paused)."""
    reasons = []
    if cluster and m.dig(cluster, "spec", "paused"):
        reasons.append("Cluster spec.paused is set to true")
    if m.PAUSED in m.annotations(obj):
        reasons.append(f"{obj.get('kind')} has the {m.PAUSED} annotation")
    if reasons:
        return cond("Paused", True, "Paused", ", ".join(reasons))
    return cond("Paused", False, "NotPaused")


def aggregate(machines, ctype, true_reason, false_reason, unknown_reason, target):
    """Roll up one condition of several Machines, like conditions.NewAggregateCondition (simplified messages)."""
    if not machines:
        return cond(target, True, "NoReplicas")
    groups = {}
    worst = "True"
    for machine in sorted(machines, key=m.name):
        state = m.condition(machine, ctype)
        status = state.get("status") if state else "Unknown"
        if status == "True":
            continue
        if status == "False" or worst == "True":
            worst = status
        message = (state or {}).get("message") or f"Condition {ctype} not yet reported"
        groups.setdefault(message, []).append(m.name(machine))
    if worst == "True":
        return cond(target, True, true_reason)
    lines = []
    for message, members in groups.items():
        label = "Machine" if len(members) == 1 else "Machines"
        detail = "\n".join("  " + line if line.startswith("* ") else f"  * {line}" for line in message.split("\n"))
        lines.append(f"* {label} {', '.join(members)}:\n{detail}")
    return cond(target, worst, false_reason if worst == "False" else unknown_reason, "\n".join(lines))
