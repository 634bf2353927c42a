# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_report_html import FilterModule
from ansible_collections.capi.rollout.tests.unit.plugins.filter import report_samples as samples

render = FilterModule().filters()["rollout_report_html"]

VOID = {"meta", "br", "img", "input", "link", "hr", "col", "wbr", "source", "area", "base", "embed", "track"}
EVIL = "<img src=x onerror=alert(1)>{{ lookup('pipe','id') }}\"'&"


class _Checker(HTMLParser):
    """Fails on unbalanced tags; records tags, attributes and text."""

    def __init__(self):
        HTMLParser.__init__(self, convert_charrefs=True)
        self.stack = []
        self.tags = []
        self.attrs = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_endtag(self, tag):
        assert self.stack, "closing </%s> without an open tag" % tag
        opened = self.stack.pop()
        assert opened == tag, "</%s> closes <%s>" % (tag, opened)

    def handle_data(self, data):
        self.text.append(data)


def parse(page):
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert checker.stack == [], "unclosed tags: %s" % checker.stack
    return checker


def svgs(page):
    return re.findall(r"<svg\b.*?</svg>", page, re.S)


def timeline_of(page, cluster):
    return [s for s in svgs(page) if 'aria-label="Timeline of management cluster %s"' % cluster in s][0]


def test_apply_page_is_well_formed_and_self_contained():
    page = render(samples.fleet_report())
    assert page.startswith("<!DOCTYPE html>")
    doc = parse(page)
    assert "script" not in doc.tags and "link" not in doc.tags and "img" not in doc.tags and "iframe" not in doc.tags
    for name, value in doc.attrs:
        if name in ("src", "href"):
            assert value.startswith("#"), "external reference %s=%s" % (name, value)
    assert "url(http" not in page and "@import" not in page
    # each timeline is valid XML (SVG), one per management cluster plus the fleet timeline
    drawings = svgs(page)
    assert len(drawings) == 4
    for drawing in drawings:
        ET.fromstring(drawing)


def test_header_shows_status_and_counts():
    page = render(samples.fleet_report())
    assert "<title>Hardware refresh hw-2026-11 \u2014 failed</title>" in page
    assert 'class="badge big status-failed"' in page
    text = "".join(parse(page).text)
    assert "1 / 3 ok" in text
    assert "6 / 10 switched" in text
    assert "2 undone" in text
    assert "29" in text
    assert "1h 00m" in text


def test_failed_object_is_red_with_its_reason_and_next_step():
    page = render(samples.fleet_report())
    attention = page[page.index('<section class="panel attention'):page.index("</section>")]
    assert "payments/edge-2-md-1" in attention
    assert "stalled for 300s" in attention
    assert "edge-2-md-1-7f9c-xk2lp" in attention  # which machine is stuck
    assert "Next step:</b> Check the BMC of r760-rack4-u12" in attention
    assert "Undone</span>: switched back to <code>edge-2-md-1-r640</code>" in attention
    # the stopped cluster is listed with its own next step
    assert "mgmt-south" in attention and "Re-run with refresh_id hw-2026-11 in the next window" in attention
    # table row and timeline bar are red
    row = re.search(r'<tr class="is-failed">.*?</tr>', page, re.S).group(0)
    assert "payments/edge-2-md-1" in row and 'class="note red">stalled for 300s' in row
    assert re.search(r'<rect class="bar bar-failed"[^>]*><title>machinedeployment/payments/edge-2-md-1: rollout', page)
    assert 'class="marker-failed"' in page
    # undo is drawn hatched
    assert re.search(r'class="bar bar-undo" [^>]*fill="url\(#tl1-hatch\)"', page)
    assert "failed after 12m 25s \u00b7 undone in 7m 45s" in page


def test_cards_put_failures_first_and_keep_run_order_elsewhere():
    page = render(samples.fleet_report())
    cards = re.findall(r'<section class="card status-[a-z_]+" id="([^"]+)"', page)
    assert cards == ["mc-2-mgmt-west", "mc-3-mgmt-south", "mc-1-mgmt-east"]
    overview = page[page.index('<table class="overview">'):]
    assert overview.index("mgmt-east") < overview.index("mgmt-west") < overview.index("mgmt-south")


def test_timeline_marks_waves_soak_and_window():
    page = render(samples.fleet_report())
    east = timeline_of(page, "mgmt-east")
    assert east.count('class="wave-title"') == 3
    assert "WAVE 1 \u00b7 canary" in east
    assert east.count('class="bar bar-soak"') == 5
    assert "5m 20s + soak 5m" in east
    south = timeline_of(page, "mgmt-south")
    assert 'class="window-end"' in south and "maintenance window ends 07:25" in south
    assert south.count("not started") == 2


def test_escaping_of_user_strings():
    report = {
        "refresh_id": EVIL,
        "run_by": EVIL,
        "management_clusters": [{
            "name": EVIL, "result": "failed", "failure_reason": EVIL, "next_step": EVIL, "notes": [EVIL],
            "lock": {"holder": EVIL},
            "waves": [{"index": 0, "name": EVIL, "started": "2026-11-30T06:00:00Z", "finished": "2026-11-30T06:05:00Z"}],
            "objects": [{
                "kind": EVIL, "namespace": EVIL, "name": EVIL, "cluster": EVIL, "wave": 0, "result": "failed",
                "started": "2026-11-30T06:00:00Z", "finished": "2026-11-30T06:05:00Z",
                "failure_reason": EVIL, "next_step": EVIL, "blockers": [EVIL],
                "stuck_machines": [{"name": EVIL, "node": EVIL, "reason": EVIL}],
                "before": {"infrastructure_ref": {"kind": EVIL, "name": EVIL}, "version": EVIL},
                "after": {"infrastructure_ref": EVIL},
                "undo": {"started": "2026-11-30T06:05:00Z", "result": "failed", "failure_reason": EVIL},
            }],
        }],
    }
    page = render(report)
    doc = parse(page)
    assert "img" not in doc.tags
    assert "<img" not in page
    assert not [a for a in doc.attrs if a[0].startswith("on")]
    for opener in ("{{", "{%", "{#"):
        assert opener not in page
    # the text survives, visibly
    assert "&lt;img src=x onerror=alert(1)&gt;&#123;{ lookup(&#x27;pipe&#x27;,&#x27;id&#x27;) }}&quot;&#x27;&amp;" in page
    for drawing in svgs(page):
        ET.fromstring(drawing)


def test_plan_mode_shows_plan_table_with_blockers_and_no_timeline():
    page = render(samples.plan_report())
    parse(page)
    assert svgs(page) == []
    assert "<title>Plan for hardware refresh hw-2026-11 \u2014 planned</title>" in page
    assert "dry run \u00b7 2 blocked" in page
    assert page.count('<table class="plan">') == 2
    header = re.search(r'<table class="plan"><thead>.*?</thead>', page).group(0)
    for column in ("Workload cluster", "Object", "Replicas", "Current template \u2192 target template", "Action", "Wave",
                   "Blockers"):
        assert column in header
    blocked_row = re.search(r'<tr class="is-blocked">.*?</tr>', page, re.S).group(0)
    assert "prod-1-md-1" in blocked_row and "MachineDeployment is paused" in blocked_row
    assert '<span class="nm">prod-1-md-1-r640</span><span class="arrow">\u2192</span><span class="nm to">prod-1-md-1-r760</span>' in blocked_row
    assert "none (already on target)" in page
    # Kubernetes version change is shown next to the template change
    assert 'v1.30.6<span class="arrow">\u2192</span><span class="to">v1.31.4</span>' in page
    attention = page[page.index('<section class="panel attention'):]
    assert "Check before the window (2)" in attention
    assert "target template Metal3MachineTemplate/edge-2-md-1-r760 not found" in attention


@pytest.mark.parametrize("report", [
    {},
    {"refresh_id": "r", "management_clusters": [{"name": "only-name"}]},
    {"management_clusters": [{"name": "m", "objects": [
        {"name": "x"}, {"name": "y", "result": "running", "started": "2026-11-30T06:00:00Z"}]}]},
    {"management_clusters": [{"name": "m", "result": "skipped", "failure_reason": "lock held by awx-job-1"}]},
    {"mode": "check", "management_clusters": [{"name": "m", "objects": [{"name": "x", "blockers": "one blocker"}]}]},
])
def test_missing_fields_are_tolerated(report):
    page = render(report)
    parse(page)
    for drawing in svgs(page):
        ET.fromstring(drawing)


def test_running_object_is_drawn_striped():
    page = render({"finished": "2026-11-30T06:10:00Z", "management_clusters": [{"name": "m", "objects": [
        {"name": "x", "result": "running", "wave": 0, "started": "2026-11-30T06:00:00Z"}]}]})
    assert 'fill="url(#tl0-stripe)"' in page
    assert "running 10m" in page


def test_non_dict_input_is_a_filter_error():
    with pytest.raises(AnsibleFilterError):
        render(None)


def test_attention_names_the_objects_also_undone_with_their_namespace():
    attention = render(samples.fleet_report())
    attention = attention[attention.index('<section class="panel attention'):]
    assert "also undone: MD payments/edge-2-md-2." in attention


def test_a_deleted_object_is_red_and_deleted():
    page = render(samples.deleted_report())
    parse(page)
    assert '<span class="pill status-deleted">deleted</span>' in page
    assert '<span class="red">1 deleted</span>' in page
    attention = page[page.index('<section class="panel attention'):]
    assert '<span class="badge status-deleted">deleted</span>' in attention and "seen gone at" in attention
    assert "deleted after 2m 50s" in timeline_of(page, "mgmt-del")


def test_objects_updated_in_place_say_so_in_the_html_too():
    report = samples.fleet_report()
    report["management_clusters"][0]["objects"][1]["machines"] = {"replaced": 0, "updated_in_place": 3}
    page = render(report)
    assert "3 updated in place" in page
    assert "updated in place" not in render(samples.fleet_report())
