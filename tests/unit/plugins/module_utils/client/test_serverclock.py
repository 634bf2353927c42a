# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import Api
from ansible_collections.capi.rollout.plugins.module_utils.client.serverclock import ServerClock
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import FakeConnection

UTC = datetime.timezone.utc
# The Ansible host's clock, two minutes ahead of the API server's.
HOST_NOW = datetime.datetime(2026, 3, 1, 12, 2, 0, 500000, tzinfo=UTC)


class Monotonic(object):
    def __init__(self):
        self.value = 1000.0

    def __call__(self):
        return self.value


def test_server_time_comes_from_date_headers_not_the_host_clock():
    mono = Monotonic()
    clock = ServerClock(monotonic=mono, host_now=lambda: HOST_NOW)
    assert not clock.known and clock.now() == HOST_NOW and clock.skew_seconds() is None
    clock.observe({"Date": "Sun, 01 Mar 2026 12:00:00 GMT"})
    assert clock.known
    assert clock.now() == datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    mono.value += 2.5  # the monotonic clock measures what passed since
    assert clock.now() == datetime.datetime(2026, 3, 1, 12, 0, 2, 500000, tzinfo=UTC)
    assert clock.skew_seconds() == 118.0


def test_an_older_or_broken_date_does_not_move_the_clock_back():
    mono = Monotonic()
    clock = ServerClock(monotonic=mono, host_now=lambda: HOST_NOW)
    clock.observe({"Date": "Sun, 01 Mar 2026 12:00:05 GMT"})
    mono.value += 1
    clock.observe({"Date": "Sun, 01 Mar 2026 12:00:04 GMT"})  # a slower response, answered earlier
    clock.observe({"Date": "not a date"})
    clock.observe({})
    assert clock.now() == datetime.datetime(2026, 3, 1, 12, 0, 6, tzinfo=UTC)
    clock.observe({"Date": "Sun, 01 Mar 2026 12:00:09 GMT"})
    assert clock.now() == datetime.datetime(2026, 3, 1, 12, 0, 9, tzinfo=UTC)


def test_api_feeds_every_response_into_the_clock_including_errors():
    conn = FakeConnection()
    path = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments/md-0"
    conn.add("GET", path, status=404, body={"message": "not found"}, headers={"Date": "Sun, 01 Mar 2026 09:30:00 GMT"})
    api = Api(conn, sleep=lambda _s: None)
    with pytest.raises(ApiError):
        api.get(path)
    assert api.server_now().replace(microsecond=0) == datetime.datetime(2026, 3, 1, 9, 30, 0, tzinfo=UTC)
