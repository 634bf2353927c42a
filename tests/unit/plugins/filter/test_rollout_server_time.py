# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import time

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_server_time import FilterModule

server_time = FilterModule().filters()["rollout_server_time"]

# the Ansible host read 2026-11-30T07:00:00Z while the API server said 06:00:00Z: an hour ahead
CLOCK = {"server": "2026-11-30T06:00:00Z", "controller": 1796022000.0}


def test_a_moment_of_the_run_by_the_api_servers_clock():
    assert server_time(CLOCK, at=1796022000.0) == "2026-11-30T06:00:00Z"
    # the run started 10 minutes before the reading, by the Ansible host's (wrong) clock
    assert server_time(CLOCK, at=1796022000.0 - 600) == "2026-11-30T05:50:00Z"
    assert server_time(CLOCK, at=1796022000.0 - 600, plus_seconds=5400) == "2026-11-30T07:20:00Z"


def test_now_follows_the_api_servers_clock_not_the_hosts():
    clock = {"server": "2026-11-30T06:00:00Z", "controller": time.time()}
    assert server_time(clock) in ("2026-11-30T06:00:00Z", "2026-11-30T06:00:01Z")


def test_without_a_reading_the_hosts_clock_is_used():
    got = server_time({"server": None, "controller": None}, at=1796022000.0)
    assert got == "2026-11-30T07:00:00Z"


@pytest.mark.parametrize("clock, kwargs, message", [
    ("06:00", {}, "must be a dictionary"),
    ({"server": "yesterday", "controller": 1.0}, {}, "not an RFC 3339 timestamp"),
    ({"server": "2026-11-30T06:00:00Z", "controller": "soon"}, {}, "controller must be seconds"),
    (CLOCK, {"at": "later"}, "at must be seconds"),
    (CLOCK, {"at": 1796022000.0, "plus_seconds": 10 ** 12}, "out of range"),
])
def test_bad_input_is_named(clock, kwargs, message):
    with pytest.raises(AnsibleFilterError, match=message):
        server_time(clock, **kwargs)
