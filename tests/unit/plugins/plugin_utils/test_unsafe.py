# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/unsafe.py: the one wrap_var of the report filters."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

import pytest

from ansible.release import __version__ as ansible_version

from ansible_collections.capi.rollout.plugins.filter import rollout_report_html
from ansible_collections.capi.rollout.plugins.filter import rollout_report_markdown
from ansible_collections.capi.rollout.plugins.filter import rollout_report_merge
from ansible_collections.capi.rollout.plugins.filter import rollout_report_summary
from ansible_collections.capi.rollout.plugins.plugin_utils import unsafe
from ansible_collections.capi.rollout.tests.unit.plugins.filter import report_samples as samples

RE_TEMPLATES = tuple(int(part) for part in ansible_version.split(".")[:2]) < (2, 19)


def test_nested_strings_are_unsafe_on_cores_that_re_template():
    value = unsafe.wrap_var({"name": ["m{{ x }}"], "count": 2})
    assert value == {"name": ["m{{ x }}"], "count": 2}
    if RE_TEMPLATES:
        from ansible.utils.unsafe_proxy import AnsibleUnsafeText  # pylint: disable=import-outside-toplevel
        assert isinstance(value["name"][0], AnsibleUnsafeText)
    assert not isinstance(value["count"], str)


def _calls():
    report = samples.fleet_report()
    slices = [{"source": "/reports/hw/slices/a/report.json", "text": json.dumps(dict(report, slice="a"))}]
    names = [cluster["name"] for cluster in report["management_clusters"]]
    return [
        (rollout_report_html.rollout_report_html, (report,), {}),
        (rollout_report_markdown.rollout_report_markdown, (report,), {}),
        (rollout_report_merge.rollout_report_merge, (slices,), {"expected": names}),
        (rollout_report_summary.rollout_report_summary, (report,), {}),
    ]


@pytest.mark.parametrize("call", _calls(), ids=lambda call: call[0].__name__)
def test_every_report_filter_returns_through_the_shared_helper(monkeypatch, call):
    wrapped = []

    def marker(value):
        wrapped.append(value)
        return "wrapped"

    monkeypatch.setattr(unsafe, "wrap_var", marker)
    function, args, kwargs = call
    assert function(*args, **kwargs) == "wrapped"
    assert len(wrapped) == 1 and wrapped[0]
