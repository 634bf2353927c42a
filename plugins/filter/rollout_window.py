# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_window
short_description: Where the current time is in a maintenance window
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - Tells whether a maintenance window given by O(_input.not_before) and O(_input.not_after) is open now, not
    open yet or closed, and how many seconds are left. Either end may be left out (open-ended).
  - Times are RFC 3339 (V(2026-11-30T22:00:00Z), V(2026-11-30T23:00:00+01:00)); they are returned in UTC.
  - The current time is read when the filter runs (the controller's clock, in UTC), or taken from O(now).
positional: _input
options:
  _input:
    description: The window.
    type: dict
    required: true
    suboptions:
      not_before:
        description: Start of the window; empty or missing means no start.
        type: str
      not_after:
        description: End of the window; empty or missing means no end.
        type: str
  now:
    description: The current time (RFC 3339), for tests and reports; the controller's clock when not given.
    type: str
'''

EXAMPLES = r'''
- name: Stop starting new waves once the window has closed
  ansible.builtin.set_fact:
    window: "{{ {'not_before': not_before, 'not_after': not_after} | capi.rollout.rollout_window }}"

- name: Stop when it is closed
  ansible.builtin.debug:
    msg: "window closed {{ -window.seconds_left }}s ago"
  when: window.state == 'closed'
'''

RETURN = r'''
_value:
  description: The window and where now is in it.
  type: dict
  contains:
    state:
      description: V(open), V(not_open_yet) or V(closed).
      type: str
    open:
      description: Whether the window is open now.
      type: bool
    now:
      description: The current time (UTC, RFC 3339).
      type: str
    not_before:
      description: Start of the window in UTC; null without a start.
      type: str
    not_after:
      description: End of the window in UTC; null without an end.
      type: str
    seconds_until_open:
      description: Seconds until the window opens; 0 when it is open or closed.
      type: int
    seconds_left:
      description: Seconds until the window closes (negative once closed); null without an end.
      type: int
'''

import datetime

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

timeutil = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.timeutil")


def _parse(value, what):
    if value in (None, ""):
        return None
    try:
        return timeutil.parse_time(str(value))
    except ValueError:
        raise AnsibleFilterError(f"rollout_window: {what} must be an RFC 3339 time such as 2026-11-30T22:00:00Z, got {value!r}")


def rollout_window(window, now=None):
    if window is None:
        window = {}
    if not isinstance(window, dict):
        raise AnsibleFilterError("rollout_window: the input must be a dictionary with not_before and/or not_after")
    start = _parse(window.get("not_before"), "not_before")
    end = _parse(window.get("not_after"), "not_after")
    if start is not None and end is not None and end <= start:
        raise AnsibleFilterError(f"rollout_window: not_after ({timeutil.format_time(end)}) must be later than not_before "
                                 f"({timeutil.format_time(start)})")
    current = _parse(now, "now") if now else datetime.datetime.now(datetime.timezone.utc)
    current = current.replace(microsecond=0)
    if start is not None and current < start:
        state = "not_open_yet"
    elif end is not None and current >= end:
        state = "closed"
    else:
        state = "open"
    return {
        "state": state,
        "open": state == "open",
        "now": timeutil.format_time(current),
        "not_before": timeutil.format_time(start) if start else None,
        "not_after": timeutil.format_time(end) if end else None,
        "seconds_until_open": int((start - current).total_seconds()) if state == "not_open_yet" else 0,
        "seconds_left": int((end - current).total_seconds()) if end is not None else None,
    }


class FilterModule(object):
    def filters(self):
        return {"rollout_window": rollout_window}
