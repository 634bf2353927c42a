# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.report import fmt

UTC = datetime.timezone.utc


@pytest.mark.parametrize("seconds, text", [
    (None, "\u2014"),
    (-5, "\u2014"),
    (0, "0s"),
    (0.4, "0s"),
    (45, "45s"),
    (59.6, "1m"),
    (60, "1m"),
    (250, "4m 10s"),
    (3599, "59m 59s"),
    (3600, "1h 00m"),
    (3725, "1h 02m"),
    (86399, "23h 59m"),
    (90000, "1d 1h"),
])
def test_duration(seconds, text):
    assert fmt.duration(seconds) == text


@pytest.mark.parametrize("value, expected", [
    ("2026-11-30T06:04:10Z", datetime.datetime(2026, 11, 30, 6, 4, 10, tzinfo=UTC)),
    ("2026-11-30T08:04:10+02:00", datetime.datetime(2026, 11, 30, 6, 4, 10, tzinfo=UTC)),
    ("2026-11-30T06:04:10.123456Z", datetime.datetime(2026, 11, 30, 6, 4, 10, 123456, tzinfo=UTC)),
    (0, datetime.datetime(1970, 1, 1, tzinfo=UTC)),
    (datetime.datetime(2026, 11, 30, 6, 0), datetime.datetime(2026, 11, 30, 6, 0, tzinfo=UTC)),
    (None, None),
    ("", None),
    ("yesterday", None),
    (True, None),
    ({"a": 1}, None),
    (1e30, None),
])
def test_as_time_is_lenient(value, expected):
    assert fmt.as_time(value) == expected


def test_seconds_between_refuses_missing_and_negative():
    a = datetime.datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
    b = a + datetime.timedelta(seconds=90)
    assert fmt.seconds_between(a, b) == 90
    assert fmt.seconds_between(b, a) is None
    assert fmt.seconds_between(None, b) is None


def test_clock_shows_the_date_only_when_it_differs():
    when = datetime.datetime(2026, 11, 30, 6, 4, 10, tzinfo=UTC)
    assert fmt.clock(when) == "06:04:10"
    assert fmt.clock(when, when.date()) == "06:04:10"
    assert fmt.clock(when, datetime.date(2026, 11, 29)) == "11-30 06:04"
    assert fmt.clock(None) == "\u2014"
    assert fmt.timestamp(when) == "2026-11-30 06:04:10 UTC"


def test_html_escaping_covers_markup_quotes_and_jinja():
    text = fmt.h("<script>alert('x')</script> & \"q\" {{ lookup('pipe', 'id') }} {% raw %} {# c #}")
    assert "<" not in text and ">" not in text and "'" not in text and '"' not in text
    assert "{{" not in text and "{%" not in text and "{#" not in text
    assert "&lt;script&gt;" in text
    assert "&#123;{ lookup" in text
    assert fmt.h(None) == ""
    assert fmt.h(3) == "3"


def test_markdown_escaping_keeps_tables_intact():
    text = fmt.md("a|b *c* _d_ `e` [f](g) <b>h</b> #i\nsecond line {{ x }}")
    assert "|" not in text.replace("\\|", "")
    assert "\n" not in text
    assert "\\*c\\*" in text and "\\_d\\_" in text and "\\`e\\`" in text and "\\[f\\]" in text
    assert "&lt;b&gt;" in text
    assert "{{" not in text
    assert fmt.md(None) == ""


def test_shorten():
    assert fmt.shorten("abcdef", 10) == "abcdef"
    assert fmt.shorten("abcdefghijkl", 5) == "abcd\u2026"
    assert fmt.shorten(None, 5) == ""


@pytest.mark.parametrize("value, expected", [(3, 3), ("4", 4), (" 5 ", 5), ("-2", -2), (2.9, 2), (True, None),
                                             ("x", None), (None, None)])
def test_as_int(value, expected):
    assert fmt.as_int(value) == expected
