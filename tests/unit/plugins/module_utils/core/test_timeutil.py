# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil

UTC = datetime.timezone.utc


@pytest.mark.parametrize("text, expected", [
    ("2026-03-01T12:00:00Z", datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)),
    ("2026-03-01t12:00:00z", datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)),
    # clusterctl writes time.Now() in local time with an offset
    ("2025-07-30T09:49:49+02:00", datetime.datetime(2025, 7, 30, 7, 49, 49, tzinfo=UTC)),
    ("2025-07-30T09:49:49-05:30", datetime.datetime(2025, 7, 30, 15, 19, 49, tzinfo=UTC)),
    ("2026-03-01T12:00:00.5Z", datetime.datetime(2026, 3, 1, 12, 0, 0, 500000, tzinfo=UTC)),
    ("2026-03-01T12:00:00.123456789Z", datetime.datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)),
    ("2026-03-01 12:00:00+0000", datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)),
])
def test_parse_time(text, expected):
    parsed = timeutil.parse_time(text)
    assert parsed == expected
    assert parsed.utcoffset() == datetime.timedelta(0)


@pytest.mark.parametrize("text", ["", "now", "2026-03-01", "2026-03-01T12:00:00", "2026-13-01T12:00:00Z", "12:00", None, 5,
                                  "2026-02-30T00:00:00Z", "9999-12-31T23:00:00-05:00"])
def test_parse_time_rejects(text):
    with pytest.raises(ValueError):
        timeutil.parse_time(text)


@pytest.mark.parametrize("value, expected", [
    (datetime.datetime(2026, 3, 1, 12, 0, 0, 999999, tzinfo=UTC), "2026-03-01T12:00:00Z"),
    (datetime.datetime(2026, 3, 1, 14, 0, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2))), "2026-03-01T12:00:00Z"),
    (datetime.datetime(2026, 3, 1, 12, 0, 0), "2026-03-01T12:00:00Z"),  # naive = UTC
    ("2025-07-30T09:49:49+02:00", "2025-07-30T07:49:49Z"),
])
def test_format_time(value, expected):
    assert timeutil.format_time(value) == expected


def test_parse_optional_is_lenient():
    assert timeutil.parse_optional(None) is None
    assert timeutil.parse_optional("") is None
    assert timeutil.parse_optional("garbage") is None
    assert timeutil.parse_optional("2026-03-01T12:00:00Z") == datetime.datetime(2026, 3, 1, 12, tzinfo=UTC)


def test_truncate_and_seconds_between():
    value = datetime.datetime(2026, 3, 1, 12, 0, 0, 700000, tzinfo=UTC)
    assert timeutil.truncate_seconds(value).microsecond == 0
    assert timeutil.seconds_between("2026-03-01T12:00:00Z", "2026-03-01T13:00:00+01:00") == 0
    assert timeutil.seconds_between("2026-03-01T12:00:00Z", "2026-03-01T12:01:30Z") == 90


def test_round_trip():
    text = "2026-03-01T12:00:00Z"
    assert timeutil.format_time(timeutil.parse_time(text)) == text
