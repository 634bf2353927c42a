# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/report_files.py: the report files the action plugin capi_rollout_report writes on the controller."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import stat

import pytest

from ansible.plugins.filter.core import to_nice_json

from ansible_collections.capi.rollout.plugins.module_utils.report.markdown import render_markdown
from ansible_collections.capi.rollout.plugins.module_utils.report.page import render_html
from ansible_collections.capi.rollout.plugins.plugin_utils import report_files
from ansible_collections.capi.rollout.tests.unit.plugins.filter import report_samples as samples


def test_writes_the_three_files_as_the_renderers_make_them(tmp_path):
    report = samples.fleet_report()
    dest = tmp_path / "report" / "nightly"
    out = report_files.write_report(str(dest), report, ["json", "md", "html"])
    assert out["changed"] is True
    assert out["dest"] == str(dest)
    assert sorted(out["files"]) == ["html", "json", "md"]
    # report.json is byte for byte what the role wrote with to_nice_json(indent=2) before
    assert (dest / "report.json").read_text(encoding="utf-8") == to_nice_json(report, indent=2) + "\n"
    assert (dest / "report.md").read_text(encoding="utf-8") == render_markdown(report)
    assert (dest / "report.html").read_text(encoding="utf-8") == render_html(report)
    assert stat.S_IMODE(os.stat(dest / "report.json").st_mode) == 0o644
    assert sorted(os.listdir(dest)) == ["report.html", "report.json", "report.md"]  # no temporary file left


def test_an_unchanged_file_is_not_touched(tmp_path):
    report = samples.plan_report()
    report_files.write_report(str(tmp_path), report, ["json", "md"])
    os.utime(tmp_path / "report.json", (1, 1))
    md_before = (tmp_path / "report.md").read_text(encoding="utf-8")
    changed_report = dict(report, refresh_id="another-id")
    out = report_files.write_report(str(tmp_path), changed_report, ["json", "md"])
    assert out["files"]["json"]["changed"] is True
    assert os.stat(tmp_path / "report.json").st_mtime > 1
    again = report_files.write_report(str(tmp_path), changed_report, ["json", "md"])
    assert again["changed"] is False
    assert (tmp_path / "report.md").read_text(encoding="utf-8") != md_before


def test_only_the_formats_asked_for(tmp_path):
    out = report_files.write_report(str(tmp_path), samples.plan_report(), ["json"])
    assert list(out["files"]) == ["json"]
    assert os.listdir(tmp_path) == ["report.json"]


def test_check_mode_writes_nothing_and_says_what_would_change(tmp_path):
    dest = tmp_path / "new"
    out = report_files.write_report(str(dest), samples.plan_report(), ["json", "html"], check_mode=True)
    assert out["changed"] is True
    assert not dest.exists()


def test_an_unknown_format_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(report_files.ReportWriteError, match="unknown report format.*pdf.*use json, md, html"):
        report_files.write_report(str(tmp_path / "r"), samples.plan_report(), ["json", "pdf"])
    assert not (tmp_path / "r").exists()


def test_a_file_in_place_of_the_directory_names_the_place_and_what_to_do(tmp_path):
    (tmp_path / "r").write_text("not a directory", encoding="utf-8")
    with pytest.raises(report_files.ReportWriteError, match=f"cannot write the report into {tmp_path}/r: .*report directory"):
        report_files.write_report(str(tmp_path / "r"), samples.plan_report(), ["json"])


def _applied(action, result="succeeded"):
    obj = {"kind": "MachineDeployment", "namespace": "default", "name": "a-md-0", "action": action, "result": result,
           "after": {"infrastructure_ref": {"kind": "DockerMachineTemplate", "name": "a-md-0-new"}}}
    return {"report_version": 1, "refresh_id": "hw-1", "mode": "apply", "started": "2026-12-02T10:00:00Z",
            "management_clusters": [{"name": "mgmt", "result": "succeeded", "objects": [obj]}]}


def test_keep_unchanged_leaves_the_report_of_the_run_that_did_the_work_and_returns_it(tmp_path):
    first = _applied("switch")
    written = report_files.write_report(str(tmp_path), first, ["json", "md"], keep_unchanged=True)
    assert written["kept"] is False and written["changed"] is True
    assert written["summary"]["status"] == "succeeded", written["summary"]
    before = {name: os.stat(tmp_path / name).st_mtime_ns for name in ("report.json", "report.md")}
    rerun = _applied("unchanged")
    out = report_files.write_report(str(tmp_path), rerun, ["json", "md"], keep_unchanged=True)
    assert out["kept"] is True and out["changed"] is False, out
    assert "changed nothing" in out["kept_reason"]
    assert out["report"] == first and out["summary"] == written["summary"]
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8")) == first
    assert {name: os.stat(tmp_path / name).st_mtime_ns for name in before} == before
    # positive control: without keep_unchanged the re-run's report replaces it
    replaced = report_files.write_report(str(tmp_path), rerun, ["json", "md"])
    assert replaced["kept"] is False and replaced["changed"] is True and replaced["kept_reason"] is None
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8")) == rerun


def test_keep_unchanged_writes_a_report_that_tells_something_new(tmp_path):
    report_files.write_report(str(tmp_path), _applied("switch"), ["json"])
    failed = _applied("switch", result="failed")
    out = report_files.write_report(str(tmp_path), failed, ["json"], keep_unchanged=True)
    assert out["kept"] is False and out["changed"] is True and "did something" in out["kept_reason"], out
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8")) == failed
