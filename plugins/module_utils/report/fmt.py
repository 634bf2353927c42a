# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Formatting helpers for the fleet report: lenient time parsing, durations, clock times, escaping.

Pure functions, no I/O. Used by the report filters on the controller.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import html
import re

from ansible_collections.capi.rollout.plugins.module_utils.core.timeutil import parse_time

UTC = datetime.timezone.utc
DASH = "\u2014"
ARROW = "\u2192"

# "{{", "{%" and "{#" open Jinja2 blocks. Rendered reports end up in Ansible variables (set_fact,
# set_stats); a user-controlled name carrying a delimiter must never be templated again, so every
# "{" that would open one is written as the character reference "&#123;" (renders as "{").
_JINJA_OPEN = re.compile(r"\{(?=[{%#])")


def as_time(value):
    """Aware UTC datetime from an RFC 3339 string, a datetime or epoch seconds; None when absent or unparsable."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return datetime.datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    try:
        return parse_time(value)
    except (ValueError, TypeError, OverflowError):
        return None


def as_int(value, default=None):
    """int from an int or a numeric string; ``default`` otherwise."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return default


def as_text(value):
    """Text for display: None stays None, strings stay as they are, everything else through str()."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return str(value)


def seconds_between(start, end):
    """Seconds from ``start`` to ``end`` (datetimes or None); None when either is missing or end < start."""
    if start is None or end is None:
        return None
    delta = (end - start).total_seconds()
    if delta < 0:
        return None
    return delta


def duration(seconds):
    """Short human duration: ``45s``, ``4m 10s``, ``1h 02m``, ``2d 3h``; an em dash when unknown."""
    if seconds is None:
        return DASH
    total = int(round(seconds))
    if total < 0:
        return DASH
    if total < 60:
        return "%ds" % total
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return "%dm %02ds" % (minutes, secs) if secs else "%dm" % minutes
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return "%dh %02dm" % (hours, minutes)
    days, hours = divmod(hours, 24)
    return "%dd %dh" % (days, hours)


def timestamp(value):
    """``2026-11-30 06:04:10 UTC``; an em dash when unknown."""
    if value is None:
        return DASH
    return value.strftime("%Y-%m-%d %H:%M:%S UTC")


def clock(value, day=None):
    """``06:04:10`` when ``value`` falls on ``day`` (a date) or no day is given, else ``11-30 06:04``."""
    if value is None:
        return DASH
    if day is not None and value.date() != day:
        return value.strftime("%m-%d %H:%M")
    return value.strftime("%H:%M:%S")


def no_jinja(text):
    """Neutralise Jinja2 opening delimiters (see _JINJA_OPEN)."""
    return _JINJA_OPEN.sub("&#123;", text)


def h(value):
    """Escape for HTML/SVG text and attribute values (quotes included); None becomes ''."""
    if value is None:
        return ""
    return no_jinja(html.escape(as_text(value), quote=True))


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def md(value):
    """Escape for inline Markdown (also safe inside a GFM table cell); None becomes ''."""
    if value is None:
        return ""
    text = as_text(value)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = " ".join(text.splitlines())
    return no_jinja(text)


def shorten(text, limit):
    """``text`` cut to ``limit`` characters with an ellipsis (the full text goes in a tooltip)."""
    if text is None:
        return ""
    if len(text) <= limit:
        return text
    return text[:max(limit - 1, 1)] + "\u2026"
