# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's files (report.json, report.md, report.html) written on the controller.

Controller-only: the action plugin of capi_rollout_report calls ``write_report`` in the Ansible process, so writing
a report costs no module start-up (three ``copy`` tasks and a ``file`` task cost about 3 s per run). Each file is
written to a temporary file in the same directory and renamed over the old one, so a reader (a browser, AWX, the
next run's keep check) never sees half a report; a file whose content is unchanged is not touched.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import tempfile

from ansible_collections.capi.rollout.plugins.module_utils.report.keep import still_holds
from ansible_collections.capi.rollout.plugins.module_utils.report.markdown import render_markdown
from ansible_collections.capi.rollout.plugins.module_utils.report.model import summarize
from ansible_collections.capi.rollout.plugins.module_utils.report.page import render_html


def render_json(report):
    """The same text as ``to_nice_json(indent=2)`` plus a newline, which the role wrote before."""
    return json.dumps(report, indent=2, sort_keys=True, separators=(",", ": ")) + "\n"


# format -> (file name, renderer); the order is the order of writing
FORMATS = {
    "json": ("report.json", render_json),
    "md": ("report.md", render_markdown),
    "html": ("report.html", render_html),
}
DIR_MODE = 0o755
FILE_MODE = 0o644


class ReportWriteError(Exception):
    """A report file could not be written; the message names the path."""


def _read(path):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _replace(path, text):
    """Write ``text`` to ``path`` through a temporary file in the same directory and one rename."""
    directory = os.path.dirname(path)
    handle, temporary = tempfile.mkstemp(prefix=".report-", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def plan_files(directory, report, formats):
    """[(format, path, text)] of the files ``formats`` asks for, rendered from ``report``."""
    unknown = [name for name in formats if name not in FORMATS]
    if unknown:
        raise ReportWriteError(f"unknown report format(s) {', '.join(unknown)}: use {', '.join(FORMATS)}")
    return [(name, os.path.join(directory, FORMATS[name][0]), FORMATS[name][1](report))
            for name in FORMATS if name in formats]


def write_report(directory, report, formats, check_mode=False, keep_unchanged=False):
    """Write the report files into ``directory`` (created when missing). Returns {dest, files, changed, kept,
    kept_reason, summary}: ``files`` maps each format to {path, changed}; ``summary`` is report.model.summarize of the
    report that stands. In check mode nothing is written and ``changed`` says what would be.

    ``keep_unchanged``: when the report.json already in ``directory`` still tells the outcome of the run that made
    ``report`` (report/keep.py: a re-run that changed nothing), every file is left as it is; ``kept`` is then True and
    ``report`` (in the result) is that earlier report.
    """
    directory = os.path.abspath(os.path.expanduser(directory))
    existing = _read(os.path.join(directory, FORMATS["json"][0])) if keep_unchanged else None
    kept, reason = still_holds(report, existing) if keep_unchanged else (False, None)
    if kept:
        earlier = json.loads(existing)
        files = {name: {"path": path, "changed": False} for name, path in
                 ((name, os.path.join(directory, FORMATS[name][0])) for name in FORMATS if name in formats)}
        return {"dest": directory, "files": files, "changed": False, "kept": True, "kept_reason": reason,
                "report": earlier, "summary": summarize(earlier)}
    files = {}
    planned = plan_files(directory, report, formats)
    try:
        if not check_mode:
            os.makedirs(directory, mode=DIR_MODE, exist_ok=True)
        for name, path, text in planned:
            changed = _read(path) != text
            if changed and not check_mode:
                _replace(path, text)
            files[name] = {"path": path, "changed": changed}
    except OSError as err:
        raise ReportWriteError(f"cannot write the report into {directory}: {err.strerror or err}; "
                               "choose a report directory the Ansible controller's user can write") from err
    return {"dest": directory, "files": files, "changed": any(entry["changed"] for entry in files.values()),
            "kept": False, "kept_reason": reason, "summary": summarize(report)}
