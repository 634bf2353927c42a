# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""RFC 3339 parsing/formatting. The current time is always passed in, so callers stay pure."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import re

UTC = datetime.timezone.utc

# Kubernetes writes metav1.Time as second precision with "Z"; users and other tools also write
# offsets ("+02:00", clusterctl uses local time) and fractions. datetime.fromisoformat() in 3.9/3.10
# accepts neither "Z" nor every fraction width, hence a small explicit parser.
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})$"
)


def parse_time(value):
    """Parse an RFC 3339 timestamp into an aware UTC datetime; raise ValueError when it is not one."""
    if isinstance(value, datetime.datetime):
        return to_utc(value)
    if not isinstance(value, str):
        raise ValueError(f"not an RFC 3339 timestamp: {value!r}")
    match = _RFC3339.match(value.strip())
    if not match:
        raise ValueError(f"not an RFC 3339 timestamp: {value!r}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    micro = int((fraction[1:] + "000000")[:6]) if fraction else 0
    if zone in ("Z", "z"):
        tz = UTC
    else:
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        tz = datetime.timezone(sign * datetime.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    try:
        parsed = datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=tz)
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError) as err:  # 2026-02-30, or past year 9999 once in UTC
        raise ValueError(f"not a valid RFC 3339 timestamp: {value!r} ({err})")


def to_utc(value):
    """Aware UTC datetime from a datetime (naive means UTC) or an RFC 3339 string."""
    if isinstance(value, str):
        return parse_time(value)
    if not isinstance(value, datetime.datetime):
        raise ValueError(f"not a datetime: {value!r}")
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_time(value):
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC, second precision (what the API server stores for metav1.Time)."""
    return to_utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_optional(value):
    """Like parse_time, but None/empty and unparsable values give None (for reading objects)."""
    if value in (None, ""):
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def truncate_seconds(value):
    """Drop sub-second precision: the stored value is second precision, comparisons must match it."""
    return to_utc(value).replace(microsecond=0)


def seconds_between(earlier, later):
    """Signed number of seconds from ``earlier`` to ``later`` (both datetimes or RFC 3339 strings)."""
    return (to_utc(later) - to_utc(earlier)).total_seconds()
