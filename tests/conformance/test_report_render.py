# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report as people see it.

A realistic three-management-cluster report goes through the real filters in ansible-playbook, the
way the hardware_refresh role writes report.json, report.md and report.html. Headless Chromium then
loads the HTML page: it must make a non-empty screenshot, and the rendered DOM must show the
management clusters, the failure with its reason and next step, and the window stop. A second page
full of markup in user strings must render as text.

Needs the Debian package ``chromium`` (scripts/system-deps.sh). Set CAPI_REPORT_SCREENSHOT to a
path to keep the screenshot (docs/images/report-example.png is made this way).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

PLAYBOOK = """
- name: Write the fleet report the way the hardware_refresh role does
  hosts: localhost
  gather_facts: false
  vars:
    fleet_report: "{{ lookup('ansible.builtin.file', report_json) | ansible.builtin.from_json }}"
  tasks:
    - name: Markdown report
      ansible.builtin.copy:
        content: "{{ fleet_report | capi.rollout.rollout_report_markdown }}"
        dest: "{{ out_dir }}/report.md"
        mode: "0644"
    - name: HTML report
      ansible.builtin.copy:
        content: "{{ fleet_report | capi.rollout.rollout_report_html }}"
        dest: "{{ out_dir }}/report.html"
        mode: "0644"
    - name: Summary, as set_stats would publish it
      ansible.builtin.copy:
        content: "{{ fleet_report | capi.rollout.rollout_report_summary | ansible.builtin.to_nice_json }}"
        dest: "{{ out_dir }}/summary.json"
        mode: "0644"
"""


def _chromium():
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is needed for this test: install the Debian package 'chromium' "
                "(scripts/system-deps.sh)")
    return None


def _chromium_run(tmp_path, *args):
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    cmd = [
        _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
        "--force-device-scale-factor=1", "--user-data-dir=%s" % profile,
    ] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False, cwd=str(tmp_path))


@pytest.fixture(scope="module")
def collections_dir(tmp_path_factory):
    """A collections path holding this checkout as capi.rollout; also importable in-process."""
    base = tmp_path_factory.mktemp("collections")
    (base / "ansible_collections" / "capi").mkdir(parents=True)
    os.symlink(str(ROOT), str(base / "ansible_collections" / "capi" / "rollout"))
    if str(base) not in sys.path:
        sys.path.append(str(base))
    return base


@pytest.fixture(scope="module")
def samples(collections_dir):
    # pylint: disable-next=import-outside-toplevel
    from ansible_collections.capi.rollout.tests.unit.plugins.filter import report_samples
    return report_samples


@pytest.fixture(scope="module")
def rendered(collections_dir, samples, tmp_path_factory):
    """report.json, report.md, report.html and summary.json written by ansible-playbook."""
    out = tmp_path_factory.mktemp("report")
    (out / "report.json").write_text(json.dumps(samples.fleet_report(), indent=2))
    (out / "render.yml").write_text(PLAYBOOK)
    (out / "ansible.cfg").write_text("[defaults]\n")
    env = dict(os.environ)
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": str(collections_dir),
        "ANSIBLE_CONFIG": str(out / "ansible.cfg"),
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
        "ANSIBLE_NOCOLOR": "1",
    })
    playbook = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.run(
        [str(playbook), "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=%s" % sys.executable,
         "-e", "report_json=%s" % (out / "report.json"), "-e", "out_dir=%s" % out, str(out / "render.yml")],
        capture_output=True, text=True, timeout=300, check=False, env=env, cwd=str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_playbook_wrote_all_three_reports(rendered):
    html = (rendered / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html and "<link" not in html and "http://" not in html and "https://" not in html
    markdown = (rendered / "report.md").read_text()
    assert markdown.startswith("# Hardware refresh hw-2026-11: \u274c failed")
    summary = json.loads((rendered / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert summary["management_clusters"]["total"] == 3
    assert summary["machine_deployments"]["failed"] == 1


def test_chromium_screenshot_is_a_non_empty_png(rendered, tmp_path):
    shot = tmp_path / "report.png"
    proc = _chromium_run(tmp_path, "--screenshot=%s" % shot, "--window-size=1400,2000",
                         (rendered / "report.html").as_uri())
    assert shot.exists(), proc.stdout + proc.stderr
    data = shot.read_bytes()
    assert data[:8] == PNG_MAGIC
    # a blank 1400x2000 page compresses to a few KB; the report is far more
    assert len(data) > 50000, len(data)
    keep = os.environ.get("CAPI_REPORT_SCREENSHOT")
    if keep:
        shutil.copyfile(str(shot), keep)


def test_rendered_dom_shows_clusters_failure_and_window_stop(rendered, tmp_path):
    proc = _chromium_run(tmp_path, "--dump-dom", (rendered / "report.html").as_uri())
    dom = proc.stdout
    assert "</html>" in dom, proc.stderr
    for name in ("mgmt-east", "mgmt-west", "mgmt-south"):
        assert dom.count(name) >= 3, name  # overview, fleet timeline, card
    assert "stalled for 300s: 3 of 4 new machines ready" in dom
    assert "edge-2-md-1-7f9c-xk2lp" in dom
    assert "Check the BMC of r760-rack4-u12" in dom
    assert "maintenance window ends 07:25" in dom
    assert "Re-run with refresh_id hw-2026-11 in the next window" in dom
    assert 'class="badge big status-failed"' in dom
    assert dom.count("<svg") == 4


def test_markup_in_user_strings_renders_as_text(collections_dir, tmp_path):
    # pylint: disable-next=import-outside-toplevel
    from ansible_collections.capi.rollout.plugins.filter.rollout_report_html import rollout_report_html
    evil = '<img src=x onerror="document.title=1"><b>bold</b></td></tr></table></svg>'
    page = rollout_report_html({
        "refresh_id": evil,
        "management_clusters": [{
            "name": evil, "result": "failed", "failure_reason": evil,
            "objects": [{"name": evil, "namespace": evil, "result": "failed", "failure_reason": evil,
                         "started": "2026-11-30T06:00:00Z", "finished": "2026-11-30T06:05:00Z"}],
        }],
    })
    path = tmp_path / "evil.html"
    path.write_text(page)
    dom = _chromium_run(tmp_path, "--dump-dom", path.as_uri()).stdout
    assert "</html>" in dom
    assert "<img" not in dom and "<b>bold</b>" not in dom
    assert "&lt;img src=x onerror=" in dom
