# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_version_skew import FilterModule as SkewFilters
from ansible_collections.capi.rollout.plugins.filter.rollout_window import FilterModule as WindowFilters

window = WindowFilters().filters()["rollout_window"]
skew = SkewFilters().filters()["rollout_version_skew"]
NOW = "2026-11-30T06:00:00Z"


def test_no_window_is_always_open():
    got = window({}, now=NOW)
    assert got == {"state": "open", "open": True, "now": NOW, "not_before": None, "not_after": None,
                   "seconds_until_open": 0, "seconds_left": None}
    assert window(None)["open"] is True


def test_open_window_with_offsets():
    got = window({"not_before": "2026-11-30T06:30:00+01:00", "not_after": "2026-11-30T07:00:00Z"}, now=NOW)
    assert got["state"] == "open" and got["not_before"] == "2026-11-30T05:30:00Z" and got["seconds_left"] == 3600


def test_not_open_yet():
    got = window({"not_before": "2026-11-30T06:10:00Z", "not_after": ""}, now=NOW)
    assert got["state"] == "not_open_yet" and got["seconds_until_open"] == 600 and got["open"] is False


def test_closed_at_the_end():
    got = window({"not_after": NOW}, now=NOW)
    assert got["state"] == "closed" and got["seconds_left"] == 0
    assert window({"not_after": "2026-11-30T05:59:00Z"}, now=NOW)["seconds_left"] == -60


@pytest.mark.parametrize("value", [{"not_after": "tomorrow"}, {"not_before": NOW, "not_after": NOW}, "x"])
def test_bad_windows(value):
    with pytest.raises(AnsibleFilterError):
        window(value, now=NOW)


def test_skew():
    assert skew("v1.30.4", "v1.30.1") == []
    assert skew(None, "v1.30.1") == [] and skew("v1.30.1", "") == []
    problems = skew("v1.31.0", "v1.30.1")
    assert len(problems) == 1 and "newer minor" in problems[0]
    assert skew("v1.29.0", "v1.30.1", kubeadm=False) == []
    assert any("control plane minor" in p for p in skew("v1.29.0", "v1.30.1"))
