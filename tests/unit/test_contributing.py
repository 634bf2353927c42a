# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CONTRIBUTING.md names real files: every path of the repository it names exists (a moved or renamed home fails)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# a path of this repository in `code`: one of its top-level folders or files, no placeholder (<verb>) or pattern
TOP = ("plugins/", "tests/", "docs/", "roles/", "playbooks/", "meta/", "changelogs/", "scripts/", "requirements/",
       "mypy.ini", ".pre-commit-config.yaml")
CODE = re.compile(r"`([^`\s]+)`")


def named_paths(text):
    """The repository paths in the `code` spans of ``text``."""
    return [span for span in CODE.findall(text) if span.startswith(TOP) and not re.search(r"[<>*]", span)]


def missing(text, root):
    return [path for path in named_paths(text) if not (root / path).exists()]


def decision_table(text):
    """The rows of the table under "## Where each decision lives"."""
    section = text.split("## Where each decision lives", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| decision")]


def test_every_path_contributing_names_exists():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert missing(text, ROOT) == []


def test_every_decision_has_one_home_that_exists():
    rows = decision_table((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    # positive control: the table was found and read
    assert len(rows) >= 40
    for row in rows:
        home = row.rstrip(" |").rsplit(" | ", 1)[1]
        paths = named_paths(home)
        assert paths, f"no home path in: {row}"
        assert missing(home, ROOT) == [], row


def test_a_path_that_does_not_exist_is_named(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "here.py").write_text("", encoding="utf-8")
    text = "| a | `plugins/here.py` |\n| b | `plugins/gone.py` and `core/<verb>.py` and `make test` |\n"
    assert missing(text, tmp_path) == ["plugins/gone.py"]
