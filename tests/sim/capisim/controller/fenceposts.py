"""maxSurge / maxUnavailable resolution (mdutil.ResolveFenceposts, MaxSurge, MaxUnavailable; reference §3.7).

Values are IntOrString: an int, or a string that must be "N%" (a bare "5" string is an error, as in
intstr.GetScaledValueFromIntOrPercent). Percentages round up for maxSurge and down for maxUnavailable.
"""


def scaled_value(value, total, round_up):
    """An int-or-percent against ``total``; ValueError for anything else."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    if not isinstance(value, str) or not value.endswith("%"):
        raise ValueError(f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}")
    try:
        percent = int(value[:-1])
    except ValueError:
        raise ValueError(f"invalid value for IntOrString: {value!r}") from None
    product = percent * total
    return -(-product // 100) if round_up else product // 100


def resolve_fenceposts(max_surge, max_unavailable, desired):
    """(surge, unavailable) for ``desired`` replicas; both 0 would deadlock a rollout, so unavailable becomes 1."""
    surge = scaled_value(max_surge, desired, True)
    unavailable = scaled_value(max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(strategy_type, surge, unavailable, replicas):
    """Surge a RollingUpdate MD may use; 0 for OnDelete."""
    if strategy_type != "RollingUpdate":
        return 0
    return resolve_fenceposts(surge, unavailable, replicas)[0]


def max_unavailable(strategy_type, surge, unavailable, replicas):
    """Unavailable Machines a RollingUpdate MD tolerates, capped at replicas; 0 for OnDelete or 0 replicas."""
    if strategy_type != "RollingUpdate" or replicas == 0:
        return 0
    return min(resolve_fenceposts(surge, unavailable, replicas)[1], replicas)
