# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_server_time
short_description: The API server's time now (or at an earlier moment of the run), from one reading of its clock
version_added: 0.1.0
author:
  - capi.rollout contributors (@capi-rollout)
description:
  - The Ansible host's clock may be minutes or hours off; the API server's clock is the one the management
    cluster's controllers act on. A module's RV(capi.rollout.capi_rollout_info#module:server_time) is one
    reading of it. Taken together with the Ansible host's time of that reading (O(_input.controller)), it
    gives the API server's time at any other moment of the run, using only differences of the Ansible
    host's clock, which stay true however far off that clock is.
  - Without a reading (O(_input.server) empty, because the API server never answered) the Ansible host's clock is
    used as it is.
positional: _input
options:
  _input:
    description: One reading of the API server's clock.
    type: dict
    required: true
    suboptions:
      server:
        description: The API server's time (RFC 3339), for example a module's RV(capi.rollout.capi_rollout_info#module:server_time).
        type: str
      controller:
        description: The Ansible host's time of the same moment, in seconds since the epoch (C(now().timestamp())).
        type: float
  at:
    description:
      - A moment of the run on the Ansible host's clock (seconds since the epoch), for example when the run
        started; the Ansible host's current time when not given.
    type: float
  plus_seconds:
    description: Seconds added to the result (for example the length of a maintenance window).
    type: int
    default: 0
'''

EXAMPLES = r'''
- name: Keep one reading of the API server's clock
  ansible.builtin.set_fact:
    clock: "{{ {'server': info.server_time, 'controller': now().timestamp()} }}"

- name: Stamp a report entry with the API server's time, not the Ansible host's
  ansible.builtin.set_fact:
    finished: "{{ clock | capi.rollout.rollout_server_time }}"

- name: The end of a 90-minute window that began when the run started (by the API server's clock)
  ansible.builtin.set_fact:
    window_end: "{{ clock | capi.rollout.rollout_server_time(at=run_started, plus_seconds=5400) }}"
'''

RETURN = r'''
_value:
  description: The API server's time at that moment, UTC, second precision (RFC 3339).
  type: str
'''

import datetime
import time

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

timeutil = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.core.timeutil")


def _seconds(value, what):
    try:
        return float(value)
    except (TypeError, ValueError):
        raise AnsibleFilterError(f"rollout_server_time: {what} must be seconds since the epoch, got {value!r}")


def rollout_server_time(clock, at=None, plus_seconds=0):
    if not isinstance(clock, dict):
        raise AnsibleFilterError("rollout_server_time: the input must be a dictionary with server and controller")
    moment = time.time() if at in (None, "") else _seconds(at, "at")
    plus = _seconds(plus_seconds, "plus_seconds")
    if clock.get("server"):
        try:
            server = timeutil.parse_time(str(clock["server"])).timestamp()
        except ValueError as err:
            raise AnsibleFilterError(f"rollout_server_time: server: {err}")
        moment = server + (moment - _seconds(clock.get("controller"), "controller"))
    try:
        return timeutil.format_time(datetime.datetime.fromtimestamp(moment + plus, datetime.timezone.utc))
    except (ValueError, OverflowError, OSError) as err:
        raise AnsibleFilterError(f"rollout_server_time: the time is out of range ({err})")


class FilterModule(object):
    def filters(self):
        return {"rollout_server_time": rollout_server_time}
